"""Runs over a real OpenSSH sshd on 127.0.0.1: the happy path and every failure mode.

After each, no redoprobe may be left running (pgrep)."""

from __future__ import annotations

import json
import subprocess

from redolab import redoprobe
from redolab.runs.models import RunStatus
from tests.execution import execute_next, reload, request_run


def test_happy_path_over_ssh(session, engine, secret_key, ssh_env):
    environment, primary, standby = ssh_env
    run = request_run(session, environment, primary, standby, conns=2)
    assert run.status is RunStatus.queued
    assert execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.succeeded, run.failure_reason
    assert run.bytes_received == run.bytes_sent > 0
    assert run.bytes_per_second > 0
    # The version recorded is the one the deployed binary reports (its start event), as --version prints it.
    printed = subprocess.run([str(redoprobe.BINARY), "--version"], capture_output=True, text=True).stdout.split()
    start = next(json.loads(e.line)["data"] for e in run.events if e.role == "client" and e.event == "start")
    assert run.probe_sha256 and run.probe_version == start["version"] == printed[1] == redoprobe.VERSION
    assert f"redoprobe-{printed[1]}-" in run.client_command and " client 127.0.0.1 " in run.client_command
    assert "--once" in run.server_command
    for settings in (run.client_settings, run.server_settings):
        assert settings["kernel"].startswith("Linux")
        assert len(settings["tcp_rmem"]) == 3
        assert settings["interface"] == "lo" and settings["mtu_bytes"] == 65536
        assert settings["tcp_congestion_control"]
    roles = {(e.role, e.event) for e in run.events}
    assert {
        ("client", "start"),
        ("client", "interval"),
        ("client", "end"),
        ("server", "start"),
        ("server", "end"),
    } <= roles
    intervals = [json.loads(e.line)["data"] for e in run.events if e.role == "client" and e.event == "interval"]
    assert len(intervals) >= 3
    assert len(intervals[0]["streams"]) == 2


def test_second_run_reuses_the_deployed_probe(session, engine, secret_key, ssh_env):
    environment, primary, standby = ssh_env
    first = request_run(session, environment, primary, standby, duration_seconds=1)
    second = request_run(session, environment, primary, standby, duration_seconds=1, mode="sync", message_bytes="64K")
    assert execute_next(engine, secret_key) and execute_next(engine, secret_key)
    first, second = reload(session, first), reload(session, second)
    assert first.status is second.status is RunStatus.succeeded, (
        first.failure_reason,
        second.failure_reason,
    )
    assert first.client_settings["probe_path"] == second.client_settings["probe_path"]
    end = next(json.loads(e.line)["data"] for e in second.events if e.role == "client" and e.event == "end")
    assert end["ack_latency_us"]["count"] > 0


def test_other_architecture_builds_from_source(session, engine, secret_key, ssh_env, monkeypatch):
    """A host whose architecture has no bundled binary gets the C source, built with its compiler."""
    from redolab.remote import deploy

    monkeypatch.setattr(deploy.platform, "machine", lambda: "sparc64")  # our binary is "for" another arch
    environment, primary, standby = ssh_env
    run = request_run(session, environment, primary, standby, duration_seconds=1)
    assert execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.succeeded, run.failure_reason
    assert "/.cache/redolab/redoprobe-src-0.1.0-" in run.client_settings["probe_path"]
    assert run.client_settings["probe_path"].endswith("/redoprobe")


def test_source_build_failure_is_explained(session, engine, secret_key, ssh_env, monkeypatch, tmp_path):
    from redolab.remote import deploy

    monkeypatch.setattr(deploy.platform, "machine", lambda: "sparc64")
    broken = tmp_path / "probe"
    broken.mkdir()
    (broken / "Makefile").write_text("redoprobe:\n\t@echo 'cc: error: no compiler here' >&2; exit 1\n")
    (broken / "main.c").write_text("/* broken on purpose */\n")
    monkeypatch.setattr(deploy, "PROBE_DIR", broken)
    environment, primary, standby = ssh_env
    run = request_run(session, environment, primary, standby, duration_seconds=1)
    execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.failed
    assert "for which redolab has no binary, and building redoprobe there failed" in run.failure_reason
    assert "no compiler here" in run.failure_reason
