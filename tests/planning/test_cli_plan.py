"""`redolab plan bdp|window|instantiation|show`: the seeds' worked examples. The commands run in this
process (tests/cli_runner.py); the text output runs as a real process, the installed entry point."""

import json

import pytest

from tests.cli_runner import invoke, run_process
from tests.conftest import migrated


def plan(tmp_path, *args):
    return invoke(tmp_path, "plan", *args)


def plan_json(tmp_path, *args) -> dict:
    result = plan(tmp_path, *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_bdp_seed_003(tmp_path):
    document = plan_json(tmp_path, "bdp", "--bandwidth", "1Gbit/s", "--rtt", "25ms")
    assert document["bdp_bytes"] == 3_125_000
    assert document["socket_buffer_bytes"] == 9_375_000


def test_window_seed_001(tmp_path):
    document = plan_json(tmp_path, "window", "--send-rate", "2.02MiB/s", "--rtt", "27.7ms")
    assert abs(document["window_bytes"] - 58_672) <= 1


def test_instantiation_seed_000(tmp_path):
    document = plan_json(
        tmp_path, "instantiation", "--db-size", "100TiB", "--throughput", "300MiB/s", "--nodes", "2", "--overhead", "30"
    )
    assert 46 <= document["copy_seconds"] / 3600 <= 51  # "about 50 hours"
    assert document["total_seconds"] == pytest.approx(document["copy_seconds"] * 1.3)
    assert document["total_hours"] == pytest.approx(document["total_seconds"] / 3600)


def test_text_output_carries_units(tmp_path):
    result = run_process(tmp_path, "plan", "bdp", "--bandwidth", "10 Gbit/s", "--rtt", "2 ms")
    assert result.returncode == 0, result.stderr
    assert "2,500,000 bytes" in result.stdout and "7,500,000 bytes" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bdp", "--bandwidth", "1Gbit/s", "--rtt", "25"], "--rtt: '25' has no unit"),
        (["bdp", "--bandwidth", "fast", "--rtt", "25ms"], "--bandwidth"),
        (["window", "--send-rate", "0MiB/s", "--rtt", "25ms"], "send rate must be greater than zero"),
        (["instantiation", "--db-size", "100Tbit", "--throughput", "300MiB/s"], "--db-size"),
    ],
)
def test_bad_values_name_the_option(tmp_path, args, message):
    result = plan(tmp_path, *args)
    assert result.returncode != 0
    assert message in result.stderr


def test_show_on_a_new_database_then_an_unknown_environment(tmp_path):
    result = plan(tmp_path, "show", "--env", "nope")
    assert result.returncode == 1
    assert "no redolab tables yet: run `redolab db upgrade`" in result.stderr
    # the schema `redolab db upgrade` creates (tests/test_cli.py runs that command), copied from a template
    migrated(f"sqlite:///{tmp_path / 'redolab.db'}")
    result = plan(tmp_path, "show", "--env", "nope")
    assert result.returncode == 1
    assert "no environment named 'nope'" in result.stderr
