"""Reading what SQL*Plus and the Db2 CLP print for the shipped scripts, in every layout they write, and
every failure named; the archived logs read go through the upload's own import pipeline."""

import contextlib
import time
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.collect.errors import CollectionError
from redolab.collect.output import (
    csv_markup_supported,
    db2_history_listing,
    read_db2,
    read_db2pd,
    read_sqlplus,
    sqlplus_release,
    to_import_csv,
)
from redolab.collect.rows import ArchivedLog, Db2ArchivedLog, Db2LogCapture
from redolab.redo.ingest.pipeline import Reading, read_files
from tests.margins import measured_within

ARCHIVED_CSV = """redolab-step: archived_log

"THREAD#","SEQUENCE#","RESETLOGS_ID","DEST_ID","FIRST_TIME","NEXT_TIME","BLOCKS","BLOCK_SIZE"
1,121,1088,1,"2026-11-20 08:30:00","2026-11-20 08:40:00",1228800,512
2,89,1088,1,"2026-11-20 08:35:00","2026-11-20 08:45:00",2457600,512

2 rows selected.

"""
DESTS_CSV = """redolab-step: archive_dests

"DEST_ID","DEST_NAME","STATUS","TARGET","DESTINATION","TRANSMIT_MODE","AFFIRM","VALID_ROLE","DB_UNIQUE_NAME","NET_TIMEOUT","COMPRESSION","REOPEN_SECS","MAX_FAILURE","MAX_CONNECTIONS","DELAY_MINS","ALTERNATE"
2,"LOG_ARCHIVE_DEST_2","VALID","STANDBY","service=""stby"", ASYNC","ASYNCHRONOUS","NO","ALL_ROLES",,30,"DISABLE",300,0,1,0,"NONE"

1 row selected.
"""  # noqa: E501  (the whole heading on one line, as SQL*Plus writes it)
ARCHIVED_COLSEP = """redolab-step: archived_log

                               THREAD#|                             SEQUENCE#|                          RESETLOGS_ID|                               DEST_ID|FIRST_TIME         |NEXT_TIME          |                                BLOCKS|                            BLOCK_SIZE
--------------------------------------|--------------------------------------|--------------------------------------|--------------------------------------|-------------------|-------------------|--------------------------------------|--------------------------------------
                                     1|                                   121|                                  1088|                                     1|2026-11-20 08:30:00|2026-11-20 08:40:00|                               1228800|                                   512

                               THREAD#|                             SEQUENCE#|                          RESETLOGS_ID|                               DEST_ID|FIRST_TIME         |NEXT_TIME          |                                BLOCKS|                            BLOCK_SIZE
--------------------------------------|--------------------------------------|--------------------------------------|--------------------------------------|-------------------|-------------------|--------------------------------------|--------------------------------------
                                     2|                                    89|                                  1088|                                     1|2026-11-20 08:35:00|2026-11-20 08:45:00|                               2457600|                                   512

2 rows selected.
"""  # noqa: E501  (SQL*Plus's own widths: NUMWIDTH 38)
DESTS_COLSEP = """redolab-step: archive_dests

   DEST_ID|DEST_NAME         |STATUS   |TARGET |DESTINATION|TRANSMIT_MOD|AFF|VALID_ROLE  |DB_UNIQUE_NAME|NET_TIMEOUT|COMPRES|REOPEN_SECS|MAX_FAILURE|MAX_CONNECTIONS|DELAY_MINS|ALTERNATE
----------|------------------|---------|-------|-----------|------------|---|------------|--------------|-----------|-------|-----------|-----------|---------------|----------|---------
         2|LOG_ARCHIVE_DEST_2|VALID    |STANDBY|stby       |ASYNCHRONOUS|NO |ALL_ROLES   |              |         30|DISABLE|        300|          0|              1|         0|NONE

1 row selected.
"""  # noqa: E501  (SQL*Plus's own widths)
AWR_CSV = """redolab-step: awr_sysmetric

"BEGIN_TIME","END_TIME","INSTANCE_NUMBER","METRIC_NAME","AVERAGE","MAXVAL"
"2026-11-20 08:00:00","2026-11-20 09:00:00",1,"Redo Generated Per Sec",1048576.5,5242880.25
"2026-11-20 09:00:00","2026-11-20 10:00:00",1,"Redo Generated Per Sec",.5,2.5E+06

2 rows selected.
"""


def test_csv_markup_rows_quotes_doubled_quotes_and_nulls():
    collected = read_sqlplus(ARCHIVED_CSV + DESTS_CSV, expected=("archived_log", "archive_dests"))
    assert collected.layout == "csv"
    logs = collected.steps["archived_log"]
    assert logs[0] == ArchivedLog(
        1, 121, 1088, 1, datetime(2026, 11, 20, 8, 30), datetime(2026, 11, 20, 8, 40), 1_228_800, 512
    )
    assert logs[1].bytes == 2_457_600 * 512
    dest = collected.steps["archive_dests"][0]
    assert dest.destination == 'service="stby", ASYNC' and dest.db_unique_name is None and dest.net_timeout == 30


def test_crlf_and_no_rows_selected():
    text = ARCHIVED_CSV.replace("\n", "\r\n") + "redolab-step: awr_sysstat\r\n\r\nno rows selected\r\n"
    collected = read_sqlplus(text)
    assert len(collected.steps["archived_log"]) == 2 and collected.steps["awr_sysstat"] == []


def test_numbers_as_sqlplus_shows_them():
    metrics = read_sqlplus(AWR_CSV).steps["awr_sysmetric"]
    assert [(m.average, m.maxval) for m in metrics] == [(1048576.5, 5242880.25), (0.5, 2_500_000.0)]


def test_colsep_layout_with_cut_headings_and_a_page_break():
    collected = read_sqlplus(ARCHIVED_COLSEP + DESTS_COLSEP)
    assert collected.layout == "colsep"
    assert [(log.thread, log.sequence) for log in collected.steps["archived_log"]] == [(1, 121), (2, 89)]
    dest = collected.steps["archive_dests"][0]
    assert (dest.transmit_mode, dest.affirm, dest.db_unique_name) == ("ASYNCHRONOUS", "NO", None)


def test_the_same_rows_in_both_layouts():
    assert read_sqlplus(ARCHIVED_CSV).steps == read_sqlplus(ARCHIVED_COLSEP).steps


@pytest.mark.parametrize(
    ("text", "kind", "step"),
    [
        ("ERROR:\nORA-01017: invalid username/password; logon denied\n\n\nSP2-0751: Unable to connect to Oracle.  "
         "Exiting SQL*Plus\n", "authentication", "connect"),
        ("ERROR:\nORA-01017: invalid credential or not authorized; logon denied\n", "authentication", "connect"),
        ("ERROR:\nORA-01031: insufficient privileges\n\n\nSP2-0751: Unable to connect to Oracle.\n", "privilege",
         "connect"),
        ("ERROR at line 1:\nORA-01034: ORACLE not available\nProcess ID: 0\nSession ID: 0 Serial number: 0\n",
         "instance_down", "connect"),
        ("ERROR:\nORA-27101: shared memory realm does not exist\nLinux-x86_64 Error: 2: No such file or directory\n",
         "instance_down", "connect"),
        ("redolab-step: awr_sysmetric\n  FROM dba_hist_sysmetric_summary s\n       *\nERROR at line 2:\n"
         "ORA-00942: table or view does not exist\n", "no_awr", "awr_sysmetric"),
        (ARCHIVED_CSV + "redolab-step: archive_dests\nERROR at line 1:\nORA-00942: table or view does not exist\n",
         "missing_view", "archive_dests"),
        ('SP2-0158: unknown SET option "CSV"\n' + ARCHIVED_COLSEP, "old_version", "connect"),
        ('SP2-0735: unknown SET option beginning "MARKUP CSV..."\n', "old_version", "connect"),
        ("SP2-0310: unable to open file \"collect.sql\"\n", "sqlplus", "connect"),
        ("SP2-0750: You may need to set ORACLE_HOME to your Oracle software directory\n", "environment", "connect"),
        ("ERROR:\nORA-12162: TNS:net service name is incorrectly specified\n", "environment", "connect"),
        ("ORA-00600: internal error code, arguments: [kcbz]\n", "oracle", "connect"),
    ],
)  # fmt: skip
def test_oracle_failures_are_named(text, kind, step):
    with pytest.raises(CollectionError) as caught:
        read_sqlplus(text, exit_code=1)
    assert (caught.value.kind, caught.value.step) == (kind, step)
    assert caught.value.message.split(":")[0] in text and caught.value.hint


@pytest.mark.parametrize(
    ("kwargs", "kind"),
    [
        ({"stdout": "", "stderr": "bash: line 1: sqlplus: command not found\n", "exit_code": 127}, "not_installed"),
        ({"stdout": "", "stderr": "sh: 1: sqlplus: not found\n", "exit_code": 127}, "not_installed"),
        ({"stdout": ARCHIVED_CSV, "exit_code": 1}, "exit"),
        ({"stdout": "", "was_stopped": True, "timeout": 30}, "timeout"),
        ({"stdout": "Last login: today\n" + ARCHIVED_CSV}, "garbage"),
        ({"stdout": "Oracle Database 19c Enterprise Edition\n"}, "garbage"),
        ({"stdout": ""}, "garbage"),
        ({"stdout": ARCHIVED_CSV.replace("2 rows selected.", "3 rows selected.")}, "truncated"),
        ({"stdout": ARCHIVED_CSV.replace("2 rows selected.", "")}, "truncated"),
        ({"stdout": ARCHIVED_COLSEP.replace("2 rows selected.", "")}, "truncated"),
        ({"stdout": "redolab-step: archived_log\n\n"}, "truncated"),
        ({"stdout": ARCHIVED_CSV.replace("1228800", "1228800,5")}, "garbage"),
        ({"stdout": ARCHIVED_CSV.replace('"2026-11-20 08:30:00"', '"20-NOV-26"')}, "garbage"),
        ({"stdout": ARCHIVED_CSV.replace('"SEQUENCE#"', '"SEQ"')}, "garbage"),
        ({"stdout": ARCHIVED_CSV + ARCHIVED_CSV}, "garbage"),
        ({"stdout": AWR_CSV.replace("1048576.5", "1048576,5")}, "nls"),
        ({"stdout": ARCHIVED_COLSEP.replace("1228800|", "1228800,5|")}, "nls"),
        ({"stdout": ARCHIVED_CSV.replace("1,121,1088", '1,121,"1088')}, "garbage"),
        ({"stdout": "redolab-step: v$nonsense\n\nno rows selected\n"}, "garbage"),
    ],
)  # fmt: skip
def test_sqlplus_output_that_is_not_a_result_is_named(kwargs, kind):
    stdout = kwargs.pop("stdout")
    with pytest.raises(CollectionError) as caught:
        read_sqlplus(stdout, **kwargs)
    assert caught.value.kind == kind, caught.value


def test_an_expected_step_missing_is_truncated():
    with pytest.raises(CollectionError) as caught:
        read_sqlplus(ARCHIVED_CSV, expected=("archived_log", "awr_sysmetric"))
    assert (caught.value.kind, caught.value.step) == ("truncated", "awr_sysmetric")


# -- Db2 --------------------------------------------------------------------------------------------
TRANSACTION_LOG = """2026-11-20-10.00.00.000000      0              1000000                50000               120000
2026-11-20-10.00.00.000000      1               500000                30000                90000
"""
CONFIG = """     0 hadr_peer_window                 300
     0 hadr_syncmode                    NEARSYNC
     0 hadr_spool_limit
     0 logarchmeth1                     DISK:/db2arch/my archive/
"""
HISTORY = """     0 20261120100000 20261120100002 1 S0000120.LOG   /db2arch/my archive/
     0 20261120100500 20261120100501 1 S0000121.LOG   -
     0 20261120100500 20261120100503 2 S0000121.LOG   /mirror/
"""


def test_db2_x_rows():
    captures = read_db2("db2_transaction_log", TRANSACTION_LOG)
    assert captures[1] == Db2LogCapture(datetime(2026, 11, 20, 10), 1, 500_000, 30_000, 90_000)
    config = {row.name: row.value for row in read_db2("db2_config", CONFIG)}
    assert config == {
        "hadr_peer_window": "300",
        "hadr_syncmode": "NEARSYNC",
        "hadr_spool_limit": None,
        "logarchmeth1": "DISK:/db2arch/my archive/",
    }
    history = read_db2("db2_archived_logs", HISTORY)
    assert history[0].location == "/db2arch/my archive/" and history[1].location is None
    assert history[0].end_time == datetime(2026, 11, 20, 10, 0, 2)


def test_db2_no_rows_is_return_code_1():
    assert read_db2("db2_archived_logs", "", exit_code=1) == []


@pytest.mark.parametrize(
    ("stdout", "exit_code", "kind"),
    [
        ('SQL0204N  "SYSIBMADM.DB_HISTORY" is an undefined name.  SQLSTATE=42704\n', 4, "missing_view"),
        ('SQL0551N  The statement failed because the authorization ID does not have the\nrequired authorization '
         'or privilege to perform the operation.\nAuthorization ID: "DB2INST1".  SQLSTATE=42501\n', 4, "privilege"),
        ('SQL30082N  Security processing failed with reason "24" ("USERNAME AND/OR PASSWORD\nINVALID").  '
         "SQLSTATE=08001\n", 4, "authentication"),
        ("SQL1032N  No start database manager command was issued.  SQLSTATE=57019\n", 4, "instance_down"),
        ("SQL1024N  A database connection does not exist.  SQLSTATE=08003\n", 4, "environment"),
        ("SQL0805N  Package \"NULLID.SQLC2P31\" was not found.  SQLSTATE=51002\n", 4, "db2"),
        ("", 4, "exit"),
        ("", 8, "exit"),
        ("abc def\n", 0, "garbage"),
        (TRANSACTION_LOG, 1, "exit"),
        (TRANSACTION_LOG.replace("1000000", "1000000,5"), 0, "nls"),
    ],
)  # fmt: skip
def test_db2_failures_are_named(stdout, exit_code, kind):
    with pytest.raises(CollectionError) as caught:
        read_db2("db2_transaction_log", stdout, exit_code=exit_code)
    assert caught.value.kind == kind, caught.value


def test_db2_message_keeps_its_continuation_lines():
    with pytest.raises(CollectionError) as caught:
        read_db2(
            "db2_transaction_log",
            'SQL0551N  The statement failed\nObject: "SYSPROC.MON_GET_TRANSACTION_LOG".  SQLSTATE=42501\n',
            exit_code=4,
        )
    assert "SYSPROC.MON_GET_TRANSACTION_LOG" in caught.value.message


def test_db2_and_db2pd_not_installed():
    with pytest.raises(CollectionError, match="db2") as caught:
        read_db2("db2_config", "", stderr="bash: db2: command not found\n", exit_code=127)
    assert caught.value.kind == "not_installed"
    with pytest.raises(CollectionError) as caught:
        read_db2pd("", stderr="sh: 1: db2pd: not found\n", exit_code=127)
    assert caught.value.kind == "not_installed"


# -- into the import pipeline ------------------------------------------------------------------------
def _import(tmp_path, text, name="collected.csv", mapping=None):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    reading = Reading()
    return list(read_files([path], mapping=mapping, reading=reading)), reading


def test_archived_logs_go_through_the_upload_pipeline(tmp_path):
    logs = read_sqlplus(ARCHIVED_CSV).steps["archived_log"]
    intervals, reading = _import(tmp_path, to_import_csv(logs))
    assert reading.formats == ["delimited"] and reading.kinds == ["archived-log"]
    assert [(i.thread, i.sequence, i.resetlogs, i.dest_id) for i in intervals] == [(1, 121, 1088, 1), (2, 89, 1088, 1)]
    first = intervals[0]
    assert first.bytes == 1_228_800 * 512
    assert (first.start.replace(tzinfo=None), first.end.replace(tzinfo=None)) == (
        datetime(2026, 11, 20, 8, 30),
        datetime(2026, 11, 20, 8, 40),
    )  # the host's clock, read in its zone later
    assert first.rate == pytest.approx(1_228_800 * 512 / 600)


def test_awr_rows_go_through_the_upload_pipeline(tmp_path):
    metrics = read_sqlplus(AWR_CSV).steps["awr_sysmetric"]
    intervals, reading = _import(tmp_path, to_import_csv(metrics))
    assert reading.kinds == ["awr-stat"] and len(intervals) == 2
    assert intervals[0].peak_bytes_per_second == 5242880.25
    assert intervals[0].bytes == pytest.approx(1048576.5 * 3600)


def test_db2_captures_go_through_the_upload_pipeline(tmp_path):
    later = TRANSACTION_LOG.replace("10.00.00", "10.05.00").replace("1000000", "1076800").replace(" 500000", " 538400")
    captures = read_db2("db2_transaction_log", TRANSACTION_LOG) + read_db2("db2_transaction_log", later)
    intervals, reading = _import(tmp_path, to_import_csv(captures))
    assert reading.kinds == ["db2-log-counters"]
    member0 = next(i for i in intervals if i.thread == 0)
    assert member0.bytes == 76_800 * 4096 and member0.duration == 300


def test_db2_history_goes_through_the_listing_import(tmp_path):
    rows = read_db2("db2_archived_logs", HISTORY + "     0 20261120101000 20261120101003 1 S0000122.LOG   -\n")
    listing = db2_history_listing(rows)
    assert listing.count("S0000121.LOG") == 1  # archived by two methods, listed once
    intervals, reading = _import(tmp_path, listing, "history.txt", {"log_file_pages": "76800"})
    assert reading.formats == ["db2-archive-listing"]
    assert [(i.sequence, i.bytes) for i in intervals] == [(121, 76_800 * 4096), (122, 76_800 * 4096)]


def test_to_import_csv_refuses_mixed_or_unknown_rows():
    with pytest.raises(ValueError):
        to_import_csv([Db2ArchivedLog(0, datetime(2026, 1, 1), datetime(2026, 1, 1), "1", "S0000001.LOG", None)])
    assert to_import_csv([]).startswith("THREAD#,SEQUENCE#")


# -- every output: a result or a CollectionError -----------------------------------------------------
SAMPLES = [ARCHIVED_CSV + DESTS_CSV + AWR_CSV, ARCHIVED_COLSEP + DESTS_COLSEP]
PIECES = st.sampled_from(
    [
        '"',
        ",",
        "|",
        "\n",
        "\r",
        " ",
        "-",
        ".",
        "0",
        "9",
        "ORA-01017: x\n",
        "SP2-0158: CSV\n",
        "2 rows selected.",
        "no rows selected",
        "redolab-step: size\n",
        "redolab-step: x\n",
        "\x00",
        "é",
        "1e999",
        "2026-02-30 25:61:00",
        "-" * 70,
    ]
)


@settings(max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 40), PIECES), max_size=6),
       st.integers(-1, 255))  # fmt: skip
def test_mutated_sqlplus_output_gives_rows_or_a_collection_error(sample, edits, exit_code):
    text = sample
    for at, cut, piece in edits:
        at %= len(text) + 1
        text = text[:at] + piece + text[at + cut :]
    try:
        read_sqlplus(text, exit_code=exit_code)
    except CollectionError as error:
        assert error.kind and error.step and error.message


@settings(max_examples=50, deadline=None, database=None)
@given(st.sampled_from([("db2_transaction_log", TRANSACTION_LOG), ("db2_config", CONFIG),
                        ("db2_archived_logs", HISTORY)]),
       st.lists(st.tuples(st.integers(0, 400), st.integers(0, 20), PIECES), max_size=6), st.integers(0, 8))  # fmt: skip
def test_mutated_db2_output_gives_rows_or_a_collection_error(sample, edits, exit_code):
    step, text = sample
    for at, cut, piece in edits:
        at %= len(text) + 1
        text = text[:at] + piece + text[at + cut :]
    try:
        read_db2(step, text, exit_code=exit_code)
    except CollectionError as error:
        assert error.kind


@pytest.mark.parametrize("filler", [" ", "-", "|", ",", '"', "\n", "-|"])
def test_long_runs_are_read_in_linear_time(filler):
    """A run of one character at N and 4N: refused (or read) in time that grows with N, not N squared."""

    def timed() -> list[float]:
        """The CPU seconds of this process reading each size (the other test workers' share of the
        machine left out)."""
        spent = []
        for size in (15_000, 60_000):
            text = ARCHIVED_CSV.replace("1228800", "1228800" + filler * size)
            started = time.process_time()
            for output in (text, "redolab-step: archived_log\n" + filler * size + "\n"):
                with contextlib.suppress(CollectionError):
                    read_sqlplus(output)
            spent.append(time.process_time() - started)
        return spent

    def misses(spent: list[float]) -> list[str]:  # a busy machine's caches and clocks: timed once more first
        if spent[1] < 1.0 and spent[1] < 20 * spent[0] + 0.05:
            return []
        return [f"{spent[0] * 1000:.1f} ms at 15,000, {spent[1] * 1000:.1f} ms at 60,000 (< 1 s and < 20 x + 50 ms)"]

    measured_within(timed, misses, f"a run of {filler!r}")


def test_a_quoted_value_over_two_lines():
    text = DESTS_CSV.replace('"service=""stby"", ASYNC"', '"service=""stby""\nASYNC"')
    assert read_sqlplus(text).steps["archive_dests"][0].destination == 'service="stby"\nASYNC'


@pytest.mark.parametrize(
    ("said", "release", "csv"),
    [
        ("\nSQL*Plus: Release 19.0.0.0.0 - Production\nVersion 19.3.0.0.0\n", (19, 0, 0), True),
        ("SQL*Plus: Release 12.2.0.1.0 Production\n", (12, 2, 0), True),
        ("SQL*Plus: Release 12.1.0.2.0 Production\n", (12, 1, 0), False),
        ("\nSQL*Plus: Release 11.2.0.4.0 Production\n", (11, 2, 0), False),
        ("bash: sqlplus: command not found\n", None, True),
    ],
)
def test_the_release_chooses_the_session(said, release, csv):
    assert sqlplus_release(said) == release and csv_markup_supported(said) is csv
