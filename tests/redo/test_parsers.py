"""Every input family, with the traps DBAs' exports contain."""

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from redolab.redo import dedupe
from redolab.redo.ingest.pipeline import Reading, analyze_files, read_files
from redolab.redo.ingest.values import DateColumn
from redolab.redo.parsers import RedoInputError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
MIB = 1024 * 1024


def intervals(name, **kwargs):
    reading = Reading()
    return list(read_files([FIXTURES / name], reading=reading, **kwargs)), reading


@pytest.mark.parametrize("name", ["seed000_sqlplus.txt", "seed000.csv"])
def test_seed_000_example(name):
    """Seed 000: per-log peak 54.67 MiB/s on thread 2; 71.07 MiB/s with 30 % headroom."""
    _, summary = analyze_files([FIXTURES / name])
    assert summary["rows_read"] == 11 and summary["unique_logs"] == 11
    thread2 = next(t for t in summary["threads"] if t["thread"] == 2)
    assert round(thread2["peak_bytes_per_second"] / MIB, 2) == 54.67
    assert round(thread2["required_bytes_per_second"] / MIB, 2) == 71.07
    assert round(summary["required_bytes_per_second"] / MIB, 2) == 71.07
    assert summary["summed"] is None  # no FIRST_TIME: concurrency unknown, said so
    assert any("No FIRST_TIME" in w for w in summary["warnings"])
    assert summary["format"].endswith("archived-log")


def test_gv_view_destinations_and_rearchive_counted_once():
    rows, reading = intervals("gv_archived_log.csv")
    assert reading.formats == ["delimited"]
    assert reading.rows_read == 7
    assert [(r.thread, r.sequence) for r in rows] == [(1, 100), (2, 50), (1, 101)]
    assert reading.dropped == Counter({dedupe.DESTINATION: 1, dedupe.INSTANCE: 2, dedupe.REARCHIVED: 1})
    assert rows[0].bytes == 1_228_800 * 512  # thousands separators, BLOCKS x BLOCK_SIZE


def test_rac_threads_sum_where_they_overlap():
    _, summary = analyze_files([FIXTURES / "gv_archived_log.csv"])
    t1 = 1_228_800 * 512 / 600  # thread 1, 08:00-08:10
    t2 = 2_457_600 * 512 / 600  # thread 2, 08:05-08:15
    summed = summary["summed"]
    assert summed["peak_bytes_per_second"] == pytest.approx(t1 + t2)
    assert summed["peak_at"].startswith("2022-01-15T08:05:00")
    # the largest single log is not the cluster peak
    assert max(t["peak_bytes_per_second"] for t in summary["threads"]) < summed["peak_bytes_per_second"]
    assert summary["required_bytes_per_second"] == pytest.approx((t1 + t2) * 1.3)
    assert len(summed["top_windows"]) >= 3


def test_sqlplus_pages_prompts_wrapped_values_and_tabs():
    rows, reading = intervals("sqlplus_pages.txt")
    assert reading.formats == ["sqlplus"]
    assert [(r.thread, r.sequence) for r in rows] == [(1, 200), (2, 300), (1, 201)]
    assert rows[0].bytes == 3_686_400 * 512
    assert rows[0].duration == 1800


def test_bad_date_names_line_column_and_format():
    with pytest.raises(RedoInputError) as error:
        analyze_files([FIXTURES / "bad_date.csv"])
    assert str(error.value) == (
        "bad_date.csv: line 4, NEXT_TIME: '31-FEB-22 10:30:00' is not a date in DD-MON-YY HH24:MI:SS"
    )


def test_hourly_volume_with_separate_date_and_hour_and_destinations():
    rows, reading = intervals("volume_hourly.psv")
    assert reading.kinds == ["volume"]
    assert reading.dropped == Counter({dedupe.DESTINATION: 2})
    assert [(r.thread, r.start.hour, r.duration) for r in rows] == [(1, 8, 3600), (1, 9, 3600), (2, 9, 3600)]
    assert any("Only volumes per period" in w for w in reading.warnings)
    _, summary = analyze_files([FIXTURES / "volume_hourly.psv"])
    assert summary["summed"]["peak_bytes_per_second"] == pytest.approx((7200 + 1800) * MIB / 3600)


def test_awr_sysstat_deltas_write_size_and_warnings():
    _, summary = analyze_files([FIXTURES / "awr_sysstat.csv"])
    assert summary["format"] == "delimited/awr-stat"
    assert {t["thread"] for t in summary["threads"]} == {1, 2}  # the thread is the instance number
    assert summary["threads"][0]["peak_bytes_per_second"] == pytest.approx(7_549_747_200 / 3600)
    assert summary["avg_redo_write_bytes"] == pytest.approx(
        (7_549_747_200 + 3_774_873_600 + 1_887_436_800) / (1_843_200 + 921_600 + 460_800)
    )
    assert any("60 minutes apart" in w for w in summary["warnings"])
    assert any("jumbo frames" in w for w in summary["warnings"])  # 4096-byte writes > 1500


def test_sysmetric_rate_uses_its_maximum():
    _, summary = analyze_files([FIXTURES / "sysmetric.tsv"])
    assert summary["format"] == "delimited/awr-stat"
    assert summary["threads"][0]["peak_bytes_per_second"] == pytest.approx(5_242_880.5)
    assert summary["unique_logs"] == 2  # 'User Commits Per Sec' is ignored


def _profile_rows():
    """The hour-of-day fixture read with the csv module: (instance, hour) -> (avg, max, p95)."""
    import csv

    with open(FIXTURES / "sysmetric_hourly_profile.csv") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter=";") if r["METRIC_NAME"] == "Redo Generated Per Sec"]
    number = lambda text: float(text.replace(",", ""))  # noqa: E731
    return {
        (int(r["INSTANCE_NUMBER"]), int(r["HOUR"])): tuple(
            number(r[c]) for c in ("AVG_REDO_PER_SEC", "MAX_REDO_PER_SEC", "P95_REDO_PER_SEC")
        )
        for r in rows
    }


def test_hour_of_day_profile_per_instance():
    expected = _profile_rows()
    _, summary = analyze_files([FIXTURES / "sysmetric_hourly_profile.csv"], headroom_ratio=0.3)
    assert summary["format"] == "delimited/awr-profile"
    assert summary["unique_logs"] == len(expected) == 48  # 'User Commits Per Sec' rows are ignored
    for thread in summary["threads"]:
        peak = max(v[1] for (inst, _), v in expected.items() if inst == thread["thread"])
        assert thread["peak_bytes_per_second"] == pytest.approx(peak)
    # no dates: the instances' maxima are added per hour of day, an upper bound, and said so
    summed = max(sum(v[1] for (_, h), v in expected.items() if h == hour) for hour in range(24))
    assert summary["required_bytes_per_second"] == pytest.approx(summed * 1.3)
    assert summary["summed"] is None
    assert any("upper bound" in w for w in summary["warnings"])
    assert any("no time series" in w for w in summary["warnings"])
    profile = {(p["thread"], p["hour"]): p for p in summary["profile"]}
    assert profile[1, 14]["percentile_bytes_per_second"] == pytest.approx(expected[1, 14][2])
    assert profile[2, 3]["average_bytes_per_second"] == pytest.approx(expected[2, 3][0])


def test_profile_hour_out_of_range_names_line_and_column(tmp_path):
    path = tmp_path / "profile.csv"
    path.write_text("HOUR,AVERAGE,MAXVAL\n23,100,200\n24,100,200\n")
    with pytest.raises(RedoInputError, match="line 3, HOUR: '24' is not an hour of the day"):
        list(read_files([path], reading=Reading()))


def test_profile_hour_listed_twice_counts_once(tmp_path):
    path = tmp_path / "profile.csv"
    path.write_text("INSTANCE_NUMBER,HOUR,AVERAGE,MAXVAL\n1,8,100,200\n1,8,100,200\n2,8,100,300\n")
    _, summary = analyze_files([path])
    assert summary["unique_logs"] == 2
    assert summary["dropped"] == {dedupe.REPEATED_HOUR: 1}


def test_twelve_hour_clock_fractions_iso_and_leading_dot():
    rows, _ = intervals("twelve_hour.csv")
    assert rows[0].start.hour == 11 and rows[0].end.hour == 12 and rows[0].start.microsecond == 123456
    assert rows[1].end.hour == 13 and rows[1].bytes == 0.5
    assert rows[2].duration == 60 and rows[2].bytes == 104_857_600


@pytest.mark.parametrize(("name", "instance", "seconds", "size"), [
    ("awr_report.txt", 2, 1800, 3_774_873_600),
    ("awr_report.html", 1, 3600, 1_887_436_800),
])  # fmt: skip
def test_awr_reports(name, instance, seconds, size):
    rows, reading = intervals(name)
    assert reading.formats == ["awr-report"]
    (row,) = rows
    assert (row.thread, row.duration, row.bytes) == (instance, seconds, size)
    assert row.writes in (600_000, 1_000_000)


def test_format_override_and_mapping_by_hand(tmp_path):
    path = tmp_path / "odd.txt"
    path.write_text("T|S|A|B|SIZE_IN_MB\n1|5|2022-01-15 08:00:00|2022-01-15 08:01:00|60\n")
    with pytest.raises(RedoInputError, match="do not look like redo history"):
        list(read_files([path], reading=Reading()))
    mapping = {"thread": "T", "sequence": "S", "first_time": "A", "next_time": "B", "mb": "SIZE_IN_MB"}
    rows = list(read_files([path], fmt="pipe", mapping=mapping, reading=Reading()))
    assert rows[0].rate == pytest.approx(MIB)


def test_logs_without_any_duration_are_refused(tmp_path):
    path = tmp_path / "nodur.csv"
    path.write_text("THREAD#,SEQUENCE#,FIRST_TIME,BLOCKS,BLOCK_SIZE\n1,1,2022-01-15 08:00:00,10,512\n")
    with pytest.raises(RedoInputError, match="no NEXT_TIME and no duration"):
        list(read_files([path], reading=Reading()))


def test_unrecognised_file_is_refused(tmp_path):
    path = tmp_path / "prose.txt"
    path.write_text("Dear DBA,\nplease find the numbers attached.\n")
    with pytest.raises(RedoInputError) as refused:
        list(read_files([path], reading=Reading()))
    message = str(refused.value)
    assert message.startswith("prose.txt: no table was found: the first line with text is 'Dear DBA,'")
    assert "Export V$ARCHIVED_LOG (THREAD#, SEQUENCE#, FIRST_TIME, NEXT_TIME" in message


def test_ragged_row_names_its_line(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("THREAD#,SEQUENCE#,MB,SEC\n1,1,10,5\n1,2,10\n")
    with pytest.raises(RedoInputError, match="line 3: 3 fields where the heading on line 1 has 4"):
        list(read_files([path], reading=Reading()))


def test_volume_row_without_a_date_names_its_line(tmp_path):
    path = tmp_path / "vol.csv"
    path.write_text("DAY,THREAD#,MB\n2022-01-15,1,100\n,1,200\n")
    with pytest.raises(RedoInputError, match="line 3, DAY: no date on this row"):
        list(read_files([path], reading=Reading()))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("01-JAN-22 03:04:05", datetime(2022, 1, 1, 3, 4, 5, tzinfo=UTC)),
        ("15-Mar-49 23:59:59", datetime(2049, 3, 15, 23, 59, 59, tzinfo=UTC)),  # RR: 00-49 -> 20xx
        ("15-mar-50 00:00:00", datetime(1950, 3, 15, tzinfo=UTC)),  # RR: 50-99 -> 19xx
        ("2024-02-29 12:00:00", datetime(2024, 2, 29, 12, tzinfo=UTC)),
    ],
)
def test_fast_date_path_agrees_with_the_regular_parser(text, expected):
    column = DateColumn("FIRST_TIME")
    assert column.parse(text, 1) == expected
    assert column._parse(text, 1) == expected


@pytest.mark.parametrize(
    "text", ["31-FEB-22 10:30:00", "29-FEB-23 00:00:00", "2023-02-29 12:00:00", "01-XYZ-22 00:00:00"]
)
def test_impossible_dates_are_refused_by_both_paths(text):
    with pytest.raises(RedoInputError, match=rf"line 9, FIRST_TIME: '{text}' is not a date"):
        DateColumn("FIRST_TIME").parse(text, 9)


@pytest.mark.parametrize("name", ["seed000_sqlplus.txt", "gv_archived_log.csv", "awr_report.txt"])
def test_pasted_output_with_non_breaking_spaces(tmp_path, name):
    """Every space made a non-breaking one (as output pasted from a web page or mail arrives)."""
    path = tmp_path / name
    path.write_text((FIXTURES / name).read_text().replace(" ", "\u00a0"))
    _, pasted = analyze_files([path])
    _, original = analyze_files([FIXTURES / name])
    assert pasted["required_bytes_per_second"] == pytest.approx(original["required_bytes_per_second"])
    assert pasted["unique_logs"] == original["unique_logs"]


def test_sqlplus_numbers_with_thousands_separators_stay_sqlplus():
    """Commas in SQL*Plus numbers (COLUMN ... FORMAT 999,999,999) split every row alike: still SQL*Plus."""
    rows, reading = intervals("sqlplus_thousands.txt")
    assert reading.formats == ["sqlplus"]
    assert [r.bytes for r in rows] == [1_887_436_800, 943_718_400, 471_859_200]
