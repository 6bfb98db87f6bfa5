"""`redolab redo analyze` and `redolab redo import`, run in this process (tests/cli_runner.py); an
error kept off stdout runs as a real process, as a shell sees it."""

import json
from pathlib import Path

import pytest

from tests.cli_runner import invoke, run_process
from tests.conftest import migrated

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
MIB = 1024 * 1024


def test_analyze_json_has_the_promised_keys(tmp_path):
    result = invoke(
        tmp_path,
        "redo",
        "analyze",
        str(FIXTURES / "gv_archived_log.csv"),
        str(FIXTURES / "awr_sysstat.csv"),
        "--headroom",
        "40",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    for key in (
        "format",
        "rows_read",
        "unique_logs",
        "dropped",
        "threads",
        "summed",
        "headroom_ratio",
        "required_bytes_per_second",
        "required_mbit_per_second",
        "avg_redo_write_bytes",
        "warnings",
    ):
        assert key in summary, key
    assert summary["headroom_ratio"] == 0.4
    assert {"thread", "peak_bytes_per_second", "peak_at", "required_bytes_per_second"} <= set(summary["threads"][0])
    assert {"peak_bytes_per_second", "peak_at", "p95_bytes_per_second"} <= set(summary["summed"])
    assert summary["required_mbit_per_second"] == summary["required_bytes_per_second"] * 8 / 1e6
    # one number, one source: the preview's Peak tile reads this peak, and required is it plus headroom
    assert summary["required_bytes_per_second"] == pytest.approx(summary["peak_bytes_per_second"] * 1.4)
    assert summary["peak_bytes_per_second"] >= max(t["peak_bytes_per_second"] for t in summary["threads"])


def test_analyze_text_for_the_seed(tmp_path):
    result = invoke(tmp_path, "redo", "analyze", str(FIXTURES / "seed000.csv"))
    assert result.returncode == 0
    assert "thread 2: peak 54.67 MiB/s" in result.stdout
    assert "must carry 71.07 MiB/s" in result.stdout and "Mbit/s" in result.stdout


def test_analyze_error_goes_to_stderr(tmp_path):
    result = run_process(tmp_path, "redo", "analyze", str(FIXTURES / "bad_date.csv"))
    assert result.returncode == 1
    assert "line 4, NEXT_TIME: '31-FEB-22 10:30:00' is not a date in DD-MON-YY HH24:MI:SS" in result.stderr
    assert result.stdout == ""


def test_import_into_an_environment(tmp_path):
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.environments.schemas import EnvironmentCreate
    from redolab.environments.service import create_environment

    # the schema `redolab db upgrade` creates (tests/test_cli.py runs that command), copied from a template
    engine = make_engine(migrated(f"sqlite:///{tmp_path / 'redolab.db'}"))
    with make_sessionmaker(engine)() as session:
        create_environment(session=session, env_in=EnvironmentCreate(name="sales"))
    engine.dispose()
    ok = invoke(tmp_path, "redo", "import", "--env", "sales", str(FIXTURES / "gv_archived_log.csv"))
    assert ok.returncode == 0, ok.stderr
    assert "7 rows read, 3 kept" in ok.stdout
    again = invoke(tmp_path, "redo", "import", "--env", "sales", str(FIXTURES / "gv_archived_log.csv"))
    assert again.returncode == 1 and "already imported" in again.stderr


def test_analyze_a_collection_archive_and_a_refusal_named_once(tmp_path):
    from tests.redo.test_collectors import collection, write_zip

    archive = write_zip(tmp_path / "dma.zip", collection())
    result = invoke(tmp_path, "redo", "analyze", str(archive))
    assert result.returncode == 0, result.stderr
    assert "read: dma.zip/dma_output/opdb__archlogs__" in result.stdout
    users = "dma.zip/dma_output/opdb__users__193_4.3.30_dbhost01.log"
    assert f"not used: {users}: collector output 'users'" in result.stdout
    assert "1 h periods, 3 of them (the hour in HO)." in result.stdout
    refused = tmp_path / "cpu.csv"
    refused.write_text("HOST,CPU_PCT\nh1,40\n")
    result = invoke(tmp_path, "redo", "analyze", str(refused))
    assert result.returncode == 1 and result.stderr.count("cpu.csv") == 1
    assert "a table with columns HOST, CPU_PCT" in result.stderr
