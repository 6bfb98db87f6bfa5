"""Db2 log history in the shapes Db2 writes it: MON_GET_TRANSACTION_LOG captures (CLP output, CSV),
`db2 get snapshot for database`, archived log listings (ls -lR of a pureScale archive, find -printf)
and db2logscan rate lines. Rates are hand-computed from the fixtures' numbers."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from redolab.redo import service
from redolab.redo.archive import Source
from redolab.redo.ingest.pipeline import Reading, read_sources
from redolab.redo.models import RedoImport, RedoRow
from redolab.redo.parsers import RedoInputError, normalise
from redolab.redo.parsers.db2_columns import DOCUMENTED
from tests.factories import make_environment

FIXTURES = Path(__file__).parents[1] / "fixtures" / "db2"
MIB = 1024 * 1024


def read(path: Path, mapping: dict | None = None, name: str | None = None):
    reading = Reading()
    intervals = list(read_sources([Source(path, name or path.name)], reading=reading, mapping=mapping))
    return intervals, reading


def by_member(intervals):
    found: dict[int, list] = {}
    for interval in sorted(intervals, key=lambda i: (i.thread, i.start)):
        found.setdefault(interval.thread, []).append(interval)
    return found


def test_mon_get_transaction_log_clp_output_two_members_and_a_restart():
    """CLP output (CRLF, a heading and '2 record(s) selected.' per capture) of a 2-member pureScale
    database; member 1 restarted between 10:10 and 10:15: that interval is named and left out."""
    intervals, reading = read(FIXTURES / "mon_get_transaction_log_clp.txt")
    members = by_member(intervals)
    # member 0: 76,800 pages (4 KiB) in 300 s = 1 MiB/s; then 153,600 pages = 2 MiB/s
    assert [i.rate for i in members[0]] == [MIB, 2 * MIB, MIB, MIB]
    assert [i.bytes / i.writes for i in members[0]] == [16 * 4096, 32 * 4096, 16 * 4096, 16 * 4096]  # flush size
    # member 1: 38,400 pages in 300 s = 0.5 MiB/s twice; the reset interval is not a rate; then 1 MiB/s
    assert [i.rate for i in members[1]] == [MIB / 2, MIB / 2, MIB]
    assert [i.start.strftime("%H:%M") for i in members[1]] == ["10:00", "10:05", "10:15"]
    assert reading.kinds == ["db2-log-counters"]
    assert any("member 1: the counters went down between line 21 and line 29" in n for n in reading.notes)
    # LOG_WRITE_TIME / NUM_LOG_WRITE_IO: (143,000 - 120,000) ms over 19,200 writes
    assert any("Member 0: 1.198 ms per log write" in n for n in reading.notes)


def test_mon_get_transaction_log_as_csv_with_other_columns_named():
    text = (
        '"SNAPSHOT_TIME","MEMBER","TOTAL_LOG_USED","LOG_WRITES","NUM_LOG_WRITE_IO"\n'
        '"2026-11-20-10.00.00.000000",0,1000,500000,1000\n'
        '"2026-11-20-10.01.00.000000",0,2000,515360,1960\n'
    )
    path = Path(__import__("tempfile").mkdtemp()) / "mon.csv"
    path.write_text(text)
    intervals, reading = read(path)
    assert [i.rate for i in intervals] == [15_360 * 4096 / 60]  # 1 MiB/s
    assert reading.ignored == {"mon.csv": ["TOTAL_LOG_USED"]}


def test_database_snapshots_give_rates_and_write_time():
    intervals, reading = read(FIXTURES / "db2_snapshot_database.txt")
    assert [i.rate for i in intervals] == [MIB, MIB]  # 15,360 pages a minute
    assert [i.writes for i in intervals] == [960, 960]
    assert reading.formats == ["db2-snapshot"]
    assert any("1.200 ms per log write" in n for n in reading.notes)  # 1.152 s over 960 writes


def test_purescale_archive_listing_gives_a_rate_per_file_per_stream():
    intervals, reading = read(FIXTURES / "archive_listing_purescale_ls_lR.txt")
    members = by_member(intervals)
    size = 314_580_992  # (76,800 + 2) pages, as listed
    assert [i.sequence for i in members[0]] == [121, 122, 123]
    assert [i.rate for i in members[0]] == [size / 300, size / 150, 157_294_592 / 300]
    assert [i.rate for i in members[1]] == [size / 600, size / 600]
    assert members[0][0].start.utcoffset().total_seconds() == 3600  # --time-style=full-iso's +0100 is kept
    assert any("7 archived log files of members 0, 1" in n for n in reading.notes)


def test_listing_without_sizes_needs_logfilsiz():
    with pytest.raises(RedoInputError, match=r"archive_listing_find_printf.txt: line 1: the listing has no file sizes"):
        read(FIXTURES / "archive_listing_find_printf.txt")
    intervals, reading = read(FIXTURES / "archive_listing_find_printf.txt", {"log_file_pages": "76800"})
    assert [i.rate for i in intervals] == [76_800 * 4096 / 300] * 2
    assert any("1 log file follows a gap in the sequence" in w for w in reading.warnings)  # S0000123.LOG is missing


def test_db2logscan_rate_lines():
    intervals, _ = read(FIXTURES / "db2logscan_rate.txt")
    assert [i.rate for i in intervals] == [7.307e6, 12e6, 2.048e6]  # MB = 10^6 bytes in IBM's HADR tools
    assert [round(i.bytes / i.writes) for i in intervals] == [round(17.6 * 4096), 32 * 4096, 8 * 4096]
    assert intervals[0].start.strftime("%H:%M") == "10:00" and intervals[0].end.strftime("%H:%M") == "10:01"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "SNAPSHOT_TIME,MEMBER,LOG_WRITES\n2026-11-20-10.00.00,0,5\n2026-31-20-10.05.00,0,9\n",
            r"line 3, SNAPSHOT_TIME: '2026-31-20-10.05.00' is not a time Db2 writes",
        ),
        (
            "SNAPSHOT_TIME,MEMBER,LOG_WRITES\n2026-11-20-10.00.00,0,5\n2026-11-20-10.00.00,0,9\n",
            r"line 3: member 0's capture at 2026-11-20 10:00:00 is not later than the one on line 2",
        ),
        (
            "SNAPSHOT_TIME,MEMBER,LOG_WRITES\n2026-11-20-10.00.00,0,5\n2026-11-20-10.00.01,0,500000000000\n",
            r"line 3: .* is more than 1 TB/s",
        ),
        ("SNAPSHOT_TIME,MEMBER,LOG_WRITES\n2026-11-20-10.00.00,0,5\n", r"only one capture per member"),
        (
            "SNAPSHOT_TIME,MEMBER,LOG_WRITES\n1969-12-31-23.59.00,0,5\n2026-11-20-10.00.00,0,9\n",
            r"line 2, SNAPSHOT_TIME: '1969-12-31-23.59.00' is outside the years 1970 to 2100",
        ),
        ("MEMBER,LOG_WRITES\n0,5\n0,9\n", r"MON_GET_TRANSACTION_LOG rows without a capture time"),
    ],
)
def test_bad_counter_files_name_the_line(tmp_path, text, message):
    path = tmp_path / "mon.csv"
    path.write_text(text)
    with pytest.raises(RedoInputError, match=message):
        read(path)


def test_db2pd_output_given_as_history_says_where_it_goes(tmp_path):
    with pytest.raises(RedoInputError, match=r"db2pd -db DBNAME -hadr.*import it under HADR monitoring"):
        read(FIXTURES / "db2pd_hadr_101.txt")


def test_a_db2_import_is_stored_all_or_nothing(session, tmp_path):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC")
    record = service.import_file(
        session=session,
        environment=environment,
        path=FIXTURES / "mon_get_transaction_log_clp.txt",
        filename="mon.txt",
        imported_by="alice",
    )
    assert (record.kind, record.rows_kept, record.threads) == ("db2-log-counters", 7, [0, 1])
    bad = tmp_path / "bad.txt"
    bad.write_text((FIXTURES / "db2_snapshot_database.txt").read_text().replace("= 2030720", "= 20x30720"))
    with pytest.raises(RedoInputError, match=r"bad.txt: line \d+, Log pages written: '20x30720' is not a number"):
        service.import_file(session=session, environment=environment, path=bad, filename="bad.txt", imported_by="a")
    assert session.scalar(select(func.count()).select_from(RedoImport)) == 1
    assert session.scalar(select(func.count()).select_from(RedoRow)) == 7


_FILES = sorted(p for p in FIXTURES.iterdir() if not p.name.startswith("db2pd"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    index=st.integers(0, len(_FILES) - 1),
    cut=st.integers(0, 4000),
    junk=st.text(alphabet=st.sampled_from("0123456789-.:,= SLOG/\n#x%"), max_size=40),
)
def test_no_db2_reader_raises_anything_but_an_input_error(tmp_path, index, cut, junk):
    """Property: a Db2 file cut short or with junk spliced in either reads or is refused with a
    message (RedoInputError), never another exception."""
    text = _FILES[index].read_text()
    cut = cut % (len(text) + 1)
    path = tmp_path / f"mutated-{index}.txt"
    path.write_text(text[:cut] + junk + text[cut:])
    try:
        intervals, _ = read(path, {"log_file_pages": "76800"})
    except RedoInputError as error:
        assert str(error)
        return
    assert intervals  # a file that reads gives at least one interval (an empty one is refused)
    for interval in intervals:
        assert interval.bytes >= 0 and (interval.rate is None or interval.rate <= 1e12)


# -- MON_GET_TRANSACTION_LOG columns under the DBA's aliases (IBM's documented column names) ----------
def _mon_csv(path: Path, headings: list[str], order: list[int] | None = None) -> Path:
    """Two members, three captures, IBM's columns in the test's numbers: member 0 writes 15,360 pages a
    minute (1 MiB/s), member 1 7,680 (0.5 MiB/s); TOTAL_LOG_USED is a gauge (up and down)."""
    rows = []
    for minute in range(3):
        for member, pages in ((0, 15_360), (1, 7_680)):
            used = 900_000 - 5_000 * minute * (member + 1)
            counters = (1_000_000 + minute * pages, 50_000 + minute * pages // 16, 7_000 + minute * 960, 2_000 + minute)
            rows.append([f"2026-11-20-10.0{minute}.00.000000", str(member), str(used), *map(str, counters)])
    order = order or list(range(len(headings)))
    lines = [",".join(headings[i] for i in order)] + [",".join(row[i] for i in order) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


IBM = ["SNAPSHOT_TIME", "MEMBER", "TOTAL_LOG_USED", "LOG_WRITES", "NUM_LOG_WRITE_IO", "LOG_WRITE_TIME", "LOG_READS"]


def test_time_and_member_under_aliases_are_found_by_their_values(tmp_path):
    named, _ = read(_mon_csv(tmp_path / "named.csv", IBM))
    aliased, reading = read(_mon_csv(tmp_path / "aliased.csv", ["CAPTURED_AT", "MBR", *IBM[2:]]))
    assert [(i.thread, i.rate, i.writes) for i in aliased] == [(i.thread, i.rate, i.writes) for i in named]
    assert sorted({i.rate for i in aliased}) == [MIB / 2, MIB]
    assert any("CAPTURED_AT read as the capture time: its values are Db2 timestamps" in n for n in reading.notes)
    assert any("MBR read as the member" in n for n in reading.notes)
    assert reading.ignored == {"aliased.csv": ["TOTAL_LOG_USED", "LOG_READS"]}


def test_log_writes_under_an_alias_is_the_counter_that_grows(tmp_path):
    headings = ["WHEN_TAKEN", "M", "TOTAL_LOG_USED", "PAGES_WRITTEN", "NUM_LOG_WRITE_IO", "LOG_WRITE_TIME", "LOG_READS"]
    intervals, reading = read(_mon_csv(tmp_path / "pages.csv", headings, order=[6, 3, 2, 0, 5, 1, 4]))
    assert sorted({i.rate for i in intervals}) == [MIB / 2, MIB]
    assert any("PAGES_WRITTEN read as LOG_WRITES" in n for n in reading.notes)


def test_the_clp_capture_with_an_aliased_time_column(tmp_path):
    """CLP output of `SELECT CURRENT TIMESTAMP AS CAPTURE_TS, MEMBER AS MEMBER_NO, ...`: the headings differ."""
    text = (FIXTURES / "mon_get_transaction_log_clp.txt").read_text()
    path = tmp_path / "mon_alias.txt"
    path.write_text(text.replace("SNAPSHOT_TIME", "CAPTURE_TS   ").replace("MEMBER LOG_", "MBRNO  LOG_"))
    intervals, reading = read(path)
    named, _ = read(FIXTURES / "mon_get_transaction_log_clp.txt")
    assert [(i.thread, i.rate) for i in intervals] == [(i.thread, i.rate) for i in named]
    assert any("CAPTURE_TS read as the capture time" in n for n in reading.notes)


@pytest.mark.parametrize(
    ("headings", "message"),
    [
        (["T1", "MEMBER", "TOTAL_LOG_USED", "LOG_WRITES", "NUM_LOG_WRITE_IO", "LOG_WRITE_TIME", "T2"], None),
        (["T", "M", "TOTAL_LOG_USED", "A", "NUM_LOG_WRITE_IO", "LOG_WRITE_TIME", "B"],
         r"without LOG_WRITES by name, and the columns A, B all grow like counters"),
        (["SNAPSHOT_TIME", "X", "TOTAL_LOG_USED", "LOG_WRITES", "NUM_LOG_WRITE_IO", "LOG_WRITE_TIME", "LOG_READS"],
         r"2 rows share one capture time but no column tells their members apart"),
    ],
)  # fmt: skip
def test_columns_that_cannot_be_told_apart_are_refused_by_name(tmp_path, headings, message):
    path = _mon_csv(tmp_path / "mon.csv", headings)
    if headings[-1] == "T2":  # a second time column
        text = path.read_text()
        for minute in range(3):
            text = text.replace(f",{2000 + minute}\n", f",2026-11-20-11.0{minute}.00\n")
        path.write_text(text)
        message = r"several time columns \(T1, T2\): name the capture time SNAPSHOT_TIME"
    if headings[1] == "X":  # the member column holds counters: rows of one capture cannot be told apart
        path.write_text(path.read_text().replace(",0,", ",70000,").replace(",1,", ",70000,"))
    with pytest.raises(RedoInputError, match=message):
        read(path)


_ALIAS = st.from_regex(r"[A-Z][A-Z0-9_]{0,14}", fullmatch=True).filter(
    lambda name: (
        normalise(name) not in {"LOGWRITES", "TS", "TIME", "TIMESTAMP", "MEMBER", "MEMBERID", "1"}
        and normalise(name) not in DOCUMENTED
        and not normalise(name).endswith("TIME")
        and "TIMESTAMP" not in name
    )
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(time_alias=_ALIAS, member_alias=_ALIAS, order=st.permutations(range(7)))
def test_any_alias_and_column_order_reads_the_same_rates(tmp_path, time_alias, member_alias, order):
    """Property: whatever the capture time and member are called and wherever they stand, the rates are
    those of the file with IBM's names."""
    if normalise(time_alias) == normalise(member_alias):
        return
    named, _ = read(_mon_csv(tmp_path / "named.csv", IBM))
    aliased, reading = read(_mon_csv(tmp_path / "aliased.csv", [time_alias, member_alias, *IBM[2:]], list(order)))
    assert sorted((i.thread, i.start, i.rate) for i in aliased) == sorted((i.thread, i.start, i.rate) for i in named)
    assert set(reading.ignored["aliased.csv"]) == {"TOTAL_LOG_USED", "LOG_READS"}
