"""Google's DMA collector for Oracle (issue 32.3): the SYSMETRIC spool of collector 2.0.x whose
select-expression heading SQL*Plus cut (fewer names than fields), read in that version's column
order, and collector 1.x's percentile pivot (REDO_GEN_PER_SEC_PERC90/PERC95 per hour and instance),
read as an hour-of-day p95 profile and said to be one, never a peak.

Fixtures (tests/redo/make_dma_fixtures.py) follow the collector's SQL for each version
(GoogleCloudPlatform/database-assessment: `SELECT pkey ||' , '|| dbid ||' , '|| ...` up to 2.0.3,
`'&&colspr'` after it) and the shape of its published 2.0.1 sample: a blank first line, the heading
cut after 199 characters, ' , ' or ';' between fields, CRLF when spooled on Windows.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.redo.analytics import analyze
from redolab.redo.archive import Source
from redolab.redo.ingest.pipeline import Reading, prepare, read_sources, summarise
from redolab.redo.parsers import RedoInputError
from redolab.redo.parsers.dma import SYSMETRIC_2_0, collector_file, complete_heading

COLLECTORS = Path(__file__).parents[1] / "fixtures" / "redo" / "collectors"
V201 = COLLECTORS / "opdb__awrhistsysmetrichist__190_2.0.1_dbhost02.ORCL.ORCL1.091021164353.log"
V205 = COLLECTORS / "opdb__awrhistsysmetrichist__122_2.0.5_dbhost03.ORCL.ORCL1.061022120000.log"
PIVOT = COLLECTORS / "opdbt__awrhistsysmetrichist_rs__dbhost04.ORCL.ORCL1.132841.log"


def redo_rate(instance: int, hour: int) -> float:
    """The fixtures' 'Redo Generated Per Sec' average (bytes/s), as make_dma_fixtures.py wrote it."""
    return (2_000_000 + 150_000 * hour) * (1.0 if instance == 1 else 0.5)


def _read(name: str, data: bytes, tmp_path: Path):
    path = tmp_path / "upload"
    path.write_bytes(data)
    reading = Reading()
    intervals = list(read_sources([Source(path, name)], reading=reading))
    return intervals, reading


@pytest.mark.parametrize("path", [V201, V205], ids=["2.0.1 ' , '", "2.0.5 ';' CRLF"])
def test_a_cut_sysmetric_heading_is_read_in_the_collectors_column_order(path, tmp_path):
    lines = path.read_text().splitlines()
    assert lines[0] == "" and len(lines[1]) == 199 and lines[1].count("||") < 2 * (len(SYSMETRIC_2_0) - 1)
    intervals, reading = _read(path.name, path.read_bytes(), tmp_path)
    version = collector_file(path.name)[1]
    assert any(f"column order for collector {version}" in note and "PERC95" in note for note in reading.notes)
    assert reading.kinds == ["awr-profile"]
    by_hour = {(i.thread, i.hour): i for i in intervals}
    assert len(by_hour) == 48  # two instances, 24 hours, the other metrics left out
    for (instance, hour), interval in by_hour.items():
        average = redo_rate(instance, hour) + 0.364774366698229
        assert interval.rate == pytest.approx(average)  # AVG_VALUE (bytes/s), not MODE_VALUE or MEDIAN_VALUE
        assert interval.peak_bytes_per_second == pytest.approx(redo_rate(instance, hour) * 2.5)  # MAX_VALUE
        assert interval.percentile_bytes_per_second == pytest.approx(redo_rate(instance, hour) * 1.8)  # PERC95


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from([V201, V205]), keep=st.integers(16, 400), crlf=st.booleans())
def test_any_cut_of_the_heading_reads_the_same(path, keep, crlf, tmp_path):
    """Wherever SQL*Plus cut the heading (after the first two names, inside a name or a separator,
    or not at all), the rows read the same."""
    separator = ";" if "2.0.5" in path.name else ","
    full = f"PKEY||'{separator}'||" + f"||'{separator}'||".join(SYSMETRIC_2_0[1:])
    lines = path.read_text().splitlines()
    expected, _ = _read(path.name, path.read_bytes(), tmp_path)
    lines[1] = full[: max(keep, len("PKEY||'.'||DBID"))]
    data = (("\r\n" if crlf else "\n").join(lines) + "\n").encode()
    intervals, _ = _read(path.name, data, tmp_path)
    assert [(i.thread, i.hour, i.rate, i.peak_bytes_per_second) for i in intervals] == [
        (i.thread, i.hour, i.rate, i.peak_bytes_per_second) for i in expected
    ]


def test_a_pasted_cut_heading_is_matched_by_its_names_and_width(tmp_path):
    intervals, reading = _read("pasted text", V201.read_bytes(), tmp_path)
    assert len(intervals) == 48
    assert any("collector 2.0.1 to 2.0.6" in note for note in reading.notes)


def test_a_cut_heading_of_a_version_without_a_known_order_is_refused_naming_it(tmp_path):
    name = V201.name.replace("2.0.1", "2.0.9")
    with pytest.raises(RedoInputError) as error:
        _read(name, V201.read_bytes(), tmp_path)
    message = str(error.value)
    assert message.startswith(f"{name}: line 2: the heading names 13 columns but the rows have 17")
    assert "collector 2.0.9" in message and "2.0.1, 2.0.2" in message


def test_a_heading_that_disagrees_with_the_order_is_not_completed():
    assert complete_heading(V201.name, ["PKEY", "DBID", "HOUR"], 17) is None  # INSTANCE_NUMBER missing
    assert complete_heading(V201.name, ["PKEY", "DBID", "INST"], 17) is not None  # cut inside a name
    assert complete_heading(V201.name, ["PKEY", "DBID"], 18) is None  # another width


def test_the_percentile_pivot_is_an_hour_of_day_p95_profile_never_a_peak(tmp_path):
    lines = PIVOT.read_text().splitlines()
    assert lines[0] == '""' and "REDO_GEN_PER_SEC_PERC95" in lines[1] and "MAX" not in lines[1]
    path = tmp_path / "upload"
    path.write_bytes(PIVOT.read_bytes())
    reading = Reading()
    analysis = analyze(read_sources([Source(path, PIVOT.name)], reading=reading))
    summary = summarise(analysis, fmt="delimited", reading=reading)
    assert reading.kinds == ["awr-profile"]
    assert reading.mapping == {"thread": "_INSTANCE_NUMBER", "hour": "_HO", "percentile": "REDO_GEN_PER_SEC_PERC95"}
    for entry in summary["profile"]:
        p95 = round(redo_rate(entry["thread"], entry["hour"]) * 1.8)
        assert entry["percentile_bytes_per_second"] == p95
        assert entry["max_bytes_per_second"] is None  # no maximum was exported: none is made up
    assert any(
        note.startswith("Hour-of-day p95 profile: REDO_GEN_PER_SEC_PERC95 is the p95") for note in summary["notes"]
    )
    assert any("p95 values per hour, not peaks" in warning for warning in summary["warnings"])
    assert not any("the peaks are the metric's maxima" in warning for warning in summary["warnings"])


def test_an_archive_with_the_history_and_its_pivot_uses_the_history(tmp_path):
    archive = tmp_path / "dma.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(V201, V201.name)
        bundle.write(PIVOT, PIVOT.name)
    (tmp_path / "work").mkdir()
    used, skipped = prepare(archive, "dma.zip", tmp_path / "work")
    assert [source.name for source in used] == [f"dma.zip/{V201.name}"]
    assert skipped == [
        (f"dma.zip/{PIVOT.name}", "the hourly percentiles of the awrhistsysmetrichist file, which is used")
    ]


def test_the_pivot_alone_in_an_archive_is_used(tmp_path):
    archive = tmp_path / "dma1.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(PIVOT, PIVOT.name)
    (tmp_path / "work").mkdir()
    used, _ = prepare(archive, "dma1.zip", tmp_path / "work")
    assert [source.name for source in used] == [f"dma1.zip/{PIVOT.name}"]


def test_collector_2_0_1_under_a_decimal_comma_splits_at_its_spaced_separator(tmp_path):
    """Collector 2.0.1 to 2.0.3 wrote ' , ' between fields; under NLS_NUMERIC_CHARACTERS ',.' a
    value's own comma has no spaces ('30,3647 , 0 , 27,0'), so the fields are split at ' , ' only."""
    from tests.redo.nls import render_comma_decimals

    rendered = render_comma_decimals(V201.read_bytes(), None)
    assert b" , 2832815016 , 1 , 00 , Average Active Sessions , Active Sessions , 30,3647" in rendered
    expected, _ = _read(V201.name, V201.read_bytes(), tmp_path)
    intervals, reading = _read(V201.name, rendered, tmp_path)
    assert [(i.thread, i.hour, i.rate, i.peak_bytes_per_second) for i in intervals] == [
        (i.thread, i.hour, i.rate, i.peak_bytes_per_second) for i in expected
    ]
    assert reading.numbers[V201.name] == "decimal comma, as NLS_NUMERIC_CHARACTERS ',.' (seen in the file)"
