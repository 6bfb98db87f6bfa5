"""Collector outputs as their SQL*Plus settings write them (Google's DMA collector across its
versions, AWR Miner captures, a DBA's daily script), whole collection archives, and the rules that
keep a reading from being silently wrong. Expected numbers are worked out by hand in each test."""

from __future__ import annotations

import bz2
import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from redolab.redo import dedupe
from redolab.redo.archive import MAX_MEMBERS
from redolab.redo.ingest.pipeline import analyze_files
from redolab.redo.parsers import RedoInputError

COLLECTORS = Path(__file__).parents[1] / "fixtures" / "redo" / "collectors"
DMA_4 = COLLECTORS / "opdb__archlogs__193_4.3.30_dbhost01.ORCL.ORCL1.112225120000.log"
DMA_2 = COLLECTORS / "opdb__archlogs__122_2.0.4_dbhost01.ORCL.ORCL1.031522120000.log"
DMA_PROFILE = COLLECTORS / "opdb__awrhistsysmetrichist__122_2.0.6_dbhost01.ORCL.ORCL1.061522120000.log"
AWR_MINER = COLLECTORS / "awr-hist-1234567890-ORCL-1000-1003.out"
DAILY = COLLECTORS / "redo_per_day.csv"
MIB = 1024 * 1024


def thread_peaks(summary) -> dict[int, float]:
    return {t["thread"]: t["peak_bytes_per_second"] for t in summary["threads"]}


@pytest.mark.parametrize("path", [DMA_4, DMA_2], ids=["dma-4.x-prompt-heading-padded", "dma-2.0-expression-crlf"])
def test_dma_hourly_volumes_with_hour_column_and_two_destinations(path):
    """Thread 1 wrote 3,072 MiB in hour 01 (destination 2 received only 2,560 of it); thread 2 wrote
    2,048 MiB in hour 00 and 1,024 in hour 01: each hour is its own period, never a day."""
    _, summary = analyze_files([path])
    peaks = thread_peaks(summary)
    assert peaks[1] == pytest.approx(3072 * MIB / 3600)
    assert peaks[2] == pytest.approx(2048 * MIB / 3600)
    assert summary["summed"]["peak_bytes_per_second"] == pytest.approx((3072 + 1024) * MIB / 3600)
    assert summary["summed"]["peak_at"].startswith(("2025-11-15T01:00", "2022-03-15T01:00"))
    assert summary["rows_read"] == 12 and summary["unique_logs"] == 6
    assert summary["dropped"] == {dedupe.DESTINATION: 5, dedupe.DESTINATION_SMALLER: 1}
    assert "1 h periods, 3 of them (the hour in HO)." in summary["notes"]
    assert any(w.startswith("This DMA archlogs file sums GV$ARCHIVED_LOG without INST_ID") for w in summary["warnings"])
    (ignored,) = summary["ignored_columns"].values()
    assert "PKEY" in ignored and "CNT" in ignored and "HO" not in ignored


def test_dma_expression_heading_is_split_and_named():
    _, summary = analyze_files([DMA_2])
    assert any("select expression, read as: PKEY, LOG_START_DATE, HO, THREAD_NUM" in n for n in summary["notes"])
    assert "line 1 before the heading was passed over (titles, prompts, blank lines)" in summary["notes"]


def test_dma_hour_of_day_profile_two_instances_from_padded_truncated_headings():
    """2.0.6 profile: instance 2, hour 14: average 2,700,000 B/s, maximum 3 x 2,700,000 + 4,000,000
    = 12,100,000 B/s, 95th percentile 5,400,000 B/s; the CPU rows of the same file are not redo."""
    _, summary = analyze_files([DMA_PROFILE])
    profile = {(p["thread"], p["hour"]): p for p in summary["profile"]}
    assert len(profile) == 48
    assert profile[2, 14]["average_bytes_per_second"] == pytest.approx(2_700_000)
    assert profile[2, 14]["max_bytes_per_second"] == pytest.approx(12_100_000)
    assert profile[2, 14]["percentile_bytes_per_second"] == pytest.approx(5_400_000)
    assert thread_peaks(summary)[2] == pytest.approx(12_100_000)
    # instance 1 peaks at hour 23: 3 x (1,000,000 + 23 x 50,000)
    assert thread_peaks(summary)[1] == pytest.approx(3 * 2_150_000)
    assert any("percentile from PERC95" in n for n in summary["notes"])


def test_awr_miner_capture_of_two_instances():
    """MAIN-METRICS redo_mb_s per snapshot and instance: snapshot 1002 (10:00-11:00) has 40.1 + 22.7."""
    _, summary = analyze_files([AWR_MINER])
    peaks = thread_peaks(summary)
    assert peaks[1] == pytest.approx(40.1 * MIB) and peaks[2] == pytest.approx(30.3 * MIB)
    assert summary["summed"]["peak_bytes_per_second"] == pytest.approx((40.1 + 22.7) * MIB)
    assert summary["summed"]["peak_at"].startswith("2025-11-20T10:00")
    unused = "sections not used (no redo rate in them): MEMORY, OS-INFORMATION, SYSSTAT"
    assert any(unused in n for n in summary["notes"])
    assert any("columns not used: os_cpu, read_mb_s, exec_s" in n for n in summary["notes"])


def test_daily_volumes_with_a_date_column_of_any_name():
    """172.8 GiB on 2024-03-02 is 2.048 MiB/s over the day, not 24x that."""
    _, summary = analyze_files([DAILY])
    assert thread_peaks(summary)[1] == pytest.approx(172.8 * 1024 * MIB / 86400)
    assert summary["summed"]["peak_bytes_per_second"] == pytest.approx((172.8 + 21.6) * 1024 * MIB / 86400)
    assert "REDO_DAY read as the period start: its values are dates." in summary["notes"]
    assert any(n.startswith("1 d periods, 2 of them") for n in summary["notes"])
    assert summary["ignored_columns"] == {"redo_per_day.csv": ["LOGS"]}


def test_hourly_timestamps_are_hours_whatever_the_column_is_called(tmp_path):
    path = tmp_path / "per_hour.csv"
    path.write_text("SNAP_HOUR_BEGIN,MB\n2024-03-01 00:00,360\n2024-03-01 01:00,720\n2024-03-01 03:00,36\n")
    _, summary = analyze_files([path])
    assert thread_peaks(summary)[1] == pytest.approx(720 * MIB / 3600)
    assert any(n.startswith("1 h periods, 3 of them (the usual spacing") for n in summary["notes"])


# -- collection archives ------------------------------------------------------------------------
FILLERS = {
    "opdb__users__193_4.3.30_dbhost01.log": "PKEY|CON_ID|USERNAME\nx|1|SCOTT\n",
    "opdb__dbsummary__193_4.3.30_dbhost01.log": "PKEY|DBID|DB_NAME\nx|1|ORCL\n",
    "opdb__dbparameters__193_4.3.30_dbhost01.log": "PKEY|NAME|VALUE\nx|db_block_size|8192\n",
    "opdb__dbinstances__193_4.3.30_dbhost01.log": "PKEY|INST_ID|INSTANCE_NAME\nx|1|ORCL1\nx|2|ORCL2\n",
    "opdb__awrhistsysmetricsumm__193_4.3.30_dbhost01.log": DMA_PROFILE.read_text(),
    "opdb__dbahistsysstat__193_4.3.30_dbhost01.log": (
        "PKEY|DBID|INSTANCE_NUMBER|HOUR|STAT_NAME|CNT|AVG_VALUE|MAX_VALUE\nx|1|1|00|physical reads|4|10|20\n"
    ),
    "manual__alertlog__193_4.3.30_dbhost01.log": "Thu Nov 13 10:00:00 2025\nStarting ORACLE instance\n",
    "opdb__defines__193_4.3.30_dbhost01.log": "START TIME 2025/11/15 12:00:00\n",
    "README.txt": "Collected with the DMA collector.\n",
}


def collection() -> dict[str, bytes]:
    members = {f"dma_output/{name}": text.encode() for name, text in FILLERS.items()}
    for path in (DMA_4, DMA_PROFILE, AWR_MINER):
        members[f"dma_output/{path.name}"] = path.read_bytes()
    return members


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def write_tar(path: Path, members: dict[str, bytes], mode: str) -> Path:
    with tarfile.open(path, mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("kind", ["zip", "tgz", "tar.bz2"])
def test_collector_archive_of_a_dozen_members(tmp_path, kind):
    members = collection()
    assert len(members) == 12
    if kind == "zip":
        path = write_zip(tmp_path / "dma_collection.zip", members)
    else:
        path = write_tar(tmp_path / f"dma_collection.{kind}", members, "w:gz" if kind == "tgz" else "w:bz2")
    _, summary = analyze_files([path])
    used = sorted(name.rsplit("/", 1)[1] for name in summary["files_used"])
    assert used == sorted([DMA_4.name, DMA_PROFILE.name, AWR_MINER.name])
    assert all(name.startswith(f"{path.name}/dma_output/") for name in summary["files_used"])
    skipped = {entry["file"].rsplit("/", 1)[1]: entry["reason"] for entry in summary["files_skipped"]}
    assert len(skipped) == 9
    assert "used" in skipped["opdb__awrhistsysmetricsumm__193_4.3.30_dbhost01.log"]
    assert "no 'Redo Generated Per Sec'" in skipped["opdb__dbahistsysstat__193_4.3.30_dbhost01.log"]
    assert skipped["opdb__users__193_4.3.30_dbhost01.log"] == "collector output 'users', no redo history"
    assert "no table was found" in skipped["README.txt"]
    # the DMA hourly volumes (2025-11-15) and AWR Miner snapshots (2025-11-20) are disjoint; the
    # profile's maxima add to the per-thread peaks: thread 1's largest is AWR Miner's 40.1 MiB/s
    assert thread_peaks(summary)[1] == pytest.approx(40.1 * MIB)


def test_single_gzipped_capture(tmp_path):
    path = tmp_path / f"{AWR_MINER.name}.gz"
    path.write_bytes(gzip.compress(AWR_MINER.read_bytes()))
    _, summary = analyze_files([path])
    assert summary["files_used"] == [f"{path.name}/{AWR_MINER.name}"]
    assert thread_peaks(summary)[1] == pytest.approx(40.1 * MIB)


def test_a_bad_redo_member_stops_the_whole_archive_naming_it(tmp_path):
    members = collection()
    members[f"dma_output/{DMA_4.name}"] += b"dbhost01|15-NOV-25|25|1|1|1|5|x|y\n"
    path = write_zip(tmp_path / "broken.zip", members)
    with pytest.raises(RedoInputError) as refused:
        analyze_files([path])
    message = str(refused.value)
    assert message.startswith(f"broken.zip/dma_output/{DMA_4.name}: line 14")
    assert "HO" in message and "(0 to 23)" in message


def test_an_archive_without_redo_says_what_it_held(tmp_path):
    path = write_zip(tmp_path / "no_redo.zip", {"a/opdb__users__x.log": b"A|B\n1|2\n", "notes.txt": b"hello\n"})
    with pytest.raises(RedoInputError) as refused:
        analyze_files([path])
    message = str(refused.value)
    assert message.startswith("no_redo.zip: none of its 2 files carries redo history")
    assert "collector output 'users'" in message and "opdb__archlogs__" in message


def test_archive_paths_never_reach_the_disk(tmp_path):
    members = {"../../escape.csv": DAILY.read_bytes(), "/abs/daily.csv": DAILY.read_bytes()}
    path = write_tar(tmp_path / "evil.tar", members, "w")
    _, summary = analyze_files([path])
    assert not (tmp_path.parent / "escape.csv").exists() and not Path("/abs/daily.csv").exists()
    assert summary["files_used"] == ["evil.tar/../../escape.csv", "evil.tar/abs/daily.csv"]


def test_compression_bomb_and_member_count_are_refused(tmp_path):
    bomb = tmp_path / "bomb.csv.bz2"
    bomb.write_bytes(bz2.compress(b"0" * (64 * 1024 * 1024)))
    with pytest.raises(RedoInputError, match=r"inflates more than 200 times its compressed size.*upload the export"):
        analyze_files([bomb])
    many = write_zip(tmp_path / "many.zip", {f"f{i}.csv": b"x" for i in range(MAX_MEMBERS + 1)})
    with pytest.raises(RedoInputError, match=rf"more than {MAX_MEMBERS} files in the archive.*redo files only"):
        analyze_files([many])


def refusal(tmp_path: Path, name: str, text: str) -> str:
    """The message a file with `text` is refused with."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(RedoInputError) as refused:
        analyze_files([path])
    return str(refused.value)


# -- no silent reinterpretation -------------------------------------------------------------------
def test_a_dropped_hour_column_is_refused_naming_it(tmp_path):
    """The hourly export with its hour column renamed to something unknown: the rows of one day
    would collapse into one, so the import is refused, naming the column and what to do."""
    message = refusal(tmp_path, "renamed.log", DMA_4.read_text().replace("|HO|", "|HX|", 1))
    assert message.startswith("renamed.log: lines 2 and 3 both give thread 1, destination 1 and the period")
    assert "differ in HX ('00' and '01'), a column that is not read" in message
    assert "Map HX (as the hour" in message


def test_same_period_with_two_values_names_both_lines(tmp_path):
    message = refusal(tmp_path, "twice.csv", "DAY,THREAD#,MB\n2024-03-01,1,100\n2024-03-01,2,50\n2024-03-01,1,120\n")
    assert message.startswith("twice.csv: lines 2 and 4 both give thread 1 and the period 2024-03-01 00:00")
    assert "different values" in message and "Remove the repeated row" in message


def test_same_log_with_two_sizes_names_both_lines(tmp_path):
    heading = "THREAD#,SEQUENCE#,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE\n"
    log = "1,7,2024-03-01 00:00:00,2024-03-01 00:10:00,{},512\n"
    message = refusal(tmp_path, "logs.csv", heading + log.format(100) + log.format(200))
    assert message.startswith("logs.csv: lines 2 and 3 are the same log (thread 1, sequence 7) with two sizes")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[Requesting a test]\nMessage payload = 1 Mbyte\n", "this is oratcptest output"),
        ('{\n  "start": {"connected": []},\n  "intervals": []\n}\n', "this is an iperf3 JSON result"),
        ("", "the file is empty"),
    ],
)
def test_results_and_empty_files_are_pointed_elsewhere(tmp_path, text, expected):
    message = refusal(tmp_path, "result.txt", text)
    assert message.startswith(f"result.txt: {expected}")
    if text:
        assert "redolab import-results" in message


def test_columns_that_are_not_redo_are_listed_with_what_would_work(tmp_path):
    message = refusal(tmp_path, "cpu.csv", "HOST,CPU_PCT,LOAD\nh1,40,2.5\n")
    assert "cpu.csv: the columns do not look like redo history: a table with columns HOST, CPU_PCT, LOAD" in message
    assert "no time column and no size or rate column" in message and "What works: V$ARCHIVED_LOG" in message


def test_headings_after_quotes_titles_and_prompts(tmp_path):
    path = tmp_path / "spool.lst"
    path.write_text(
        '""\n\nSQL> select ...\nRedo log switches\n'
        "THREAD#;SEQUENCE#;FIRST_TIME;NEXT_TIME;MB\n"
        "1;1;2024-03-01 00:00:00;2024-03-01 00:10:00;600\n\n2 rows selected.\n"
    )
    _, summary = analyze_files([path])
    assert thread_peaks(summary)[1] == pytest.approx(MIB)
    assert "lines 1 to 4 before the heading were passed over (titles, prompts, blank lines)" in summary["notes"]


@pytest.mark.parametrize("suffix", [".gz", ".tgz"])
def test_a_damaged_archive_is_refused_naming_it(tmp_path, suffix):
    data = gzip.compress(DAILY.read_bytes() * 50)
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(RedoInputError) as refused:
        analyze_files([path])
    message = str(refused.value)
    assert message.startswith(f"{path.name}: the gzip file is damaged (") and message.endswith("compress it again")
