"""The shipped scripts: fixed text, known hashes, read-only SQL, and the only text redolab adds (DEFINE
lines of validated ints, EXIT) made so that nothing else can get in."""

import hashlib
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.collect import scripts
from redolab.collect.scripts import (
    DEFINE_LINE,
    HEADER,
    SCRIPTS,
    THREAD_SLOTS,
    VARIABLES,
    archived_log_variables,
    db2_database_name,
    db2pd_hadr_arguments,
    define_lines,
    oracle_session,
    script_text,
)
from tests.collect.standin import STANDINS

sys.path.insert(0, str(STANDINS))
import standin_common

EXPECTED = {
    "oracle_session_csv", "oracle_session_colsep", "oracle_database", "oracle_instances", "oracle_size",
    "oracle_redo_logs", "oracle_archive_dests", "oracle_archived_log", "oracle_awr", "oracle_archived_log_names",
    "db2_transaction_log",
    "db2_config", "db2_archived_logs",
}  # fmt: skip
WRITES = re.compile(
    r"\b(INSERT|UPDATE|DELETE|MERGE|DROP|CREATE|GRANT|REVOKE|TRUNCATE|EXEC(UTE)?|BEGIN|DECLARE|CALL|SPOOL|HOST|"
    r"ALTER\s+(SYSTEM|DATABASE|TABLE|USER))\b|^\s*[@!$]",
    re.IGNORECASE | re.MULTILINE,
)


def test_every_script_is_shipped_with_its_sha256():
    assert set(SCRIPTS) == EXPECTED
    for name, (path, digest, text) in SCRIPTS.items():
        assert path.parent == scripts.SQL_DIR and path.stem == name
        assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
        assert text.startswith(f"{HEADER}{name}\n") and text.endswith("\n")


def test_the_package_data_is_in_the_wheel_selection():
    """hatchling ships every file under backend/redolab that git does not ignore: no rule may ignore sql/."""
    root = Path(__file__).resolve().parents[2]
    assert 'packages = ["backend/redolab"]' in (root / "pyproject.toml").read_text()
    ignored = (root / ".gitignore").read_text().split()
    assert not any(rule in ignored for rule in ("*.sql", "sql/", "backend/redolab/collect/sql"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scripts_are_read_only(name):
    text = SCRIPTS[name].text
    sql = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    assert WRITES.search(sql) is None
    if "session" not in name:
        assert re.search(r"\bALTER\b", sql.upper()) is None  # the word: V$ARCHIVE_DEST has an ALTERNATE column


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_shipped_line_looks_like_a_generated_one(name):
    """The stand-ins and the evidence tell redolab's DEFINE and EXIT lines from the script by their shape."""
    for line in SCRIPTS[name].text.splitlines():
        assert not DEFINE_LINE.match(line) and line.strip().upper() != "EXIT"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_variable_a_script_uses_is_defined_by_redolab(name):
    used = {v.lower() for v in re.findall(r"&([A-Za-z_][A-Za-z0-9_]*)", SCRIPTS[name].text)}
    assert used == {variable.name for variable in VARIABLES.get(name, ())}
    defined = {line.split()[1] for line in define_lines(name, {})}
    assert used <= defined  # an undefined one would make SQL*Plus prompt on standard input


def test_oracle_steps_print_their_marker():
    for name, steps in scripts.ORACLE_STEPS.items():
        assert [
            line.removeprefix("PROMPT ") for line in SCRIPTS[name].text.splitlines() if line.startswith("PROMPT")
        ] == [f"redolab-step: {step}" for step in steps]


def test_script_text_is_define_lines_then_the_script_unchanged():
    text = script_text("oracle_archived_log", **archived_log_variables({1: 120, 2: 88}, resetlogs_id=1088))
    defines, _, body = text.partition(HEADER)
    assert HEADER + body == SCRIPTS["oracle_archived_log"].text
    assert "DEFINE thread_01 = 1\nDEFINE after_01 = 120\nDEFINE thread_02 = 2\nDEFINE after_02 = 88\n" in defines
    assert "DEFINE resetlogs_id = 1088\n" in defines and "DEFINE thread_32 = 0\n" in defines
    assert script_text("oracle_database") == SCRIPTS["oracle_database"].text


@pytest.mark.parametrize(
    "values",
    [
        {"after_01": "120"},  # text, even digits
        {"after_01": "1; DROP TABLE x"},
        {"after_01": True},
        {"after_01": 1.0},
        {"after_01": -1},
        {"after_01": 2**32},
        {"since_days": 0},
        {"thread_01": 65_536},
        {"nonsense": 1},
    ],
)
def test_script_text_takes_only_ints_within_bounds(values):
    with pytest.raises(ValueError):
        script_text("oracle_archived_log", **values)


def test_watermarks_fit_the_slots():
    assert len(archived_log_variables({t: 1 for t in range(1, THREAD_SLOTS + 1)})) == 2 + 2 * THREAD_SLOTS
    with pytest.raises(ValueError, match="at most"):
        archived_log_variables({t: 1 for t in range(1, THREAD_SLOTS + 2)})
    with pytest.raises(ValueError, match="redo thread"):
        archived_log_variables({0: 5})
    with pytest.raises(ValueError):
        script_text("oracle_database", since_days=3)  # a script without variables takes none


def test_a_session_is_preamble_steps_and_exit():
    text = oracle_session([("oracle_database", {}), ("oracle_awr", {"awr_days": 3})], csv_markup=False)
    assert text.startswith(SCRIPTS["oracle_session_colsep"].text) and text.endswith("\nEXIT\n")
    assert "DEFINE awr_days = 3\n" + SCRIPTS["oracle_awr"].text in text
    with pytest.raises(ValueError):
        oracle_session([("db2_config", {})])
    assert scripts.db2_script("db2_config") == SCRIPTS["db2_config"].text


@settings(max_examples=50, deadline=None, database=None)
@given(st.dictionaries(st.integers(1, 65_535), st.integers(0, 2**32 - 1), max_size=THREAD_SLOTS),
       st.integers(0, 2**32 - 1), st.integers(1, 36_600))  # fmt: skip
def test_every_valid_watermark_makes_a_session_the_standin_accepts(watermarks, resetlogs_id, since_days):
    variables = archived_log_variables(watermarks, resetlogs_id=resetlogs_id, since_days=since_days)
    text = oracle_session([("oracle_archived_log", variables)])
    found, exited = standin_common.split_session(text, {name: s.text for name, s in SCRIPTS.items()})
    assert exited and [name for name, _ in found] == ["oracle_session_csv", "oracle_archived_log"]
    sent = {line.split()[1]: int(line.split()[3]) for line in define_lines("oracle_archived_log", variables)}
    assert found[1][1] == sent and sent["since_days"] == since_days and sent["resetlogs_id"] == resetlogs_id


@pytest.mark.parametrize("name", ["SALESDB", "s1", "A@#$1234"])
def test_db2_names(name):
    assert db2pd_hadr_arguments(name) == ("-db", name.upper(), "-hadr")


@pytest.mark.parametrize("name", ["", "1SALES", "SALESDB99", "SALES DB", "x;rm", "SALES\n"])
def test_db2_names_refused(name):
    with pytest.raises(ValueError):
        db2_database_name(name)


@pytest.mark.parametrize("sid", ["ORCL1", "orcl_1", "A$#"])
def test_oracle_sids(sid):
    assert scripts.oracle_sid(sid) == sid


@pytest.mark.parametrize("sid", ["", "1ORCL", "OR CL", "ORCL;id", "ORCL\n", "$ORACLE"])
def test_oracle_sids_refused(sid):
    with pytest.raises(ValueError):
        scripts.oracle_sid(sid)
