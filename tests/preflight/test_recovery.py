"""V$RECOVERY_PROGRESS as SQL*Plus prints it, read into apply rates, redo applied and apply lag.

The columns and items are those of the Oracle Database Reference, V$RECOVERY_PROGRESS
(https://docs.oracle.com/en/database/oracle/oracle-database/26/refrn/V-RECOVERY_PROGRESS.html, and the
19c/12.1/11.2 pages, e.g. https://docs.oracle.com/database/121/REFRN/GUID-B200FEC9-574F-4636-8DA6-2A560369760E.htm):
START_TIME DATE, TYPE VARCHAR2(64), ITEM VARCHAR2(32), UNITS VARCHAR2(32), SOFAR and TOTAL NUMBER,
TIMESTAMP DATE; MEDIA RECOVERY items with their units as a standby prints them ("KB/sec", "Megabytes",
"Seconds", "SCN+Time", "Files"; values of a captured 19c standby as published at
https://www.cnblogs.com/abclife/p/5377353.html). The fixtures (tests/fixtures/preflight/recovery_*) render
them in SQL*Plus's default layout (column widths from the datatypes: 9 for a DD-MON-RR date, 19 under
NLS_DATE_FORMAT 'YYYY-MM-DD HH24:MI:SS', 64 and 32 for the VARCHAR2s, 10 for NUMBER; right-aligned numbers),
in SET MARKUP CSV ON, and with SET NUMFORMAT 999G999G999D99 under NLS_NUMERIC_CHARACTERS ',.'.
"""

from __future__ import annotations

import pytest

from redolab.preflight.errors import EvidenceError
from redolab.preflight.recovery import parse_recovery_progress
from tests.preflight.helpers import bom, crlf, fixture

KB = 1024
EXPECTED = {
    "active_apply_bytes_per_second": 55082 * KB,
    "average_apply_bytes_per_second": 9 * KB,
    "maximum_apply_bytes_per_second": 71678 * KB,
    "redo_applied_bytes": 145134 * KB * KB,
    "apply_lag_seconds": 11,
}
FIXTURES = {
    "recovery_progress_sqlplus_dd_mon_rr.txt": ("sqlplus", 7),
    "recovery_progress_sqlplus_iso_two_sessions.txt": ("sqlplus", 17),  # the later session's rows
    "recovery_progress_csv.txt": ("csv", 3),
    "recovery_progress_sqlplus_decimal_comma.txt": ("sqlplus", 6),
}


def _values(progress) -> dict[str, float]:
    return {name: getattr(progress, name).value for name in EXPECTED}


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("variant", [lambda t: t, crlf, bom, lambda t: bom(crlf(t))])
def test_each_layout_reads_the_same_figures(name, variant):
    progress = parse_recovery_progress(variant(fixture(name)), source=name)
    layout, first = FIXTURES[name]
    assert progress.layout == layout
    assert _values(progress) == EXPECTED
    assert progress.active_apply_bytes_per_second.line == first
    assert progress.average_apply_bytes_per_second.line == first + 1
    assert progress.apply_lag_seconds.line == first + 9


def test_the_decimal_comma_is_seen_and_said():
    progress = parse_recovery_progress(fixture("recovery_progress_sqlplus_decimal_comma.txt"), source="nls")
    assert progress.numbers.startswith("decimal comma")
    assert "NLS_NUMERIC_CHARACTERS ',.'" in progress.numbers


def test_csv_with_semicolons_and_a_decimal_comma():
    text = fixture("recovery_progress_csv.txt").replace(",", ";").replace(";55082;", ";55082,5;")
    progress = parse_recovery_progress(text, source="csv")
    assert progress.active_apply_bytes_per_second.value == 55082.5 * KB
    assert progress.numbers.startswith("decimal comma")


def test_columns_are_found_by_their_values_under_any_heading():
    text = fixture("recovery_progress_sqlplus_dd_mon_rr.txt")
    heading = next(line for line in text.split("\n") if line.startswith("START_TIM"))
    names = ["STARTED", "KIND", "WHAT", "UNIT", "DONE", "ALL", "AT"]  # the user's aliases
    widths = [9, 64, 32, 32, 10, 10, 9]
    aliased = text.replace(heading, " ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)).rstrip())
    assert _values(parse_recovery_progress(aliased, source="aliased")) == EXPECTED


def test_absent_items_are_none():
    text = "\n".join(
        line
        for line in fixture("recovery_progress_csv.txt").split("\n")
        if "Apply Lag" not in line and "Maximum" not in line
    )
    progress = parse_recovery_progress(text, source="csv")
    assert progress.apply_lag_seconds is None and progress.maximum_apply_bytes_per_second is None
    assert progress.average_apply_bytes_per_second.value == 9 * KB


@pytest.mark.parametrize(
    ("change", "line", "expected"),
    [
        (("55082,0", "-55082,0"), 3, "a non-negative number"),
        (("55082,0", "2000000000,0"), 3, "an apply rate of at most 1 TB/s"),
        (("55082,0", "NaN,0"), 3, "a non-negative number"),
        (('"Active Apply Rate","KB/sec"', '"Active Apply Rate","MB/sec"'), 3, "the unit kb/sec in UNITS"),
        (("145134,0", "9999999999999,0"), 6, "at most 2^60 bytes"),
        (('"Standby Apply Lag","Seconds",11', '"Standby Apply Lag","Seconds",999999999999'), 12, "ten years"),
    ],
)
def test_impossible_values_are_refused_naming_their_line(change, line, expected):
    text = fixture("recovery_progress_csv.txt").replace(*change)
    with pytest.raises(EvidenceError) as caught:
        parse_recovery_progress(text, source="standby paste")
    assert caught.value.line == line and expected in str(caught.value)
    assert str(caught.value).startswith(f"standby paste, line {line}: expected ")


def test_a_value_that_could_be_either_separator_asks_which():
    text = fixture("recovery_progress_csv.txt").replace("55082,0", '"55,082",0').replace(",9,0", ',"9",0')
    text = "\n".join(line for line in text.split("\n") if "Rate" in line or "START" in line)
    text = text.replace("71678,0", '"71,678",0')
    with pytest.raises(EvidenceError, match="could be a number with a group separator"):
        parse_recovery_progress(text, source="csv")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "no heading with a dashed underline"),
        ("ITEM\n----\nActive Apply Rate\n", "no ITEM and UNITS values were found"),
        ("SQL> select * from v$recovery_progress;\n\nno rows selected\n", "no heading"),
        (
            "START_TIM TYPE           ITEM              UNITS      SOFAR\n"
            "--------- -------------- ----------------- ------ ---------\n"
            "14-OCT-25 Crash Recovery Log Files         Files          3\n",
            "at least one MEDIA RECOVERY row",
        ),
    ],
)
def test_what_is_not_recovery_progress_is_refused(text, expected):
    with pytest.raises(EvidenceError, match=expected):
        parse_recovery_progress(text, source="paste")


def test_a_row_split_over_lines_by_a_short_linesize_asks_for_a_wider_one():
    """SQL*Plus's default LINESIZE 80 prints each row of this query over three lines."""
    text = (
        "START_TIM TYPE\n--------- " + "-" * 64 + "\n"
        "ITEM                             UNITS\n" + "-" * 32 + " " + "-" * 32 + "\n"
        "     SOFAR      TOTAL TIMESTAMP\n---------- ---------- ---------\n"
        "14-OCT-25 Media Recovery\nActive Apply Rate                KB/sec\n     55082          0\n"
    )
    with pytest.raises(EvidenceError, match="SET LINESIZE 200"):
        parse_recovery_progress(text, source="narrow")
