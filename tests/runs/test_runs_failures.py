"""Failure is a normal outcome: each ends failed (or cancelled) with a message a DBA can act on,
the samples received so far kept, and no redoprobe left running (checked after every test)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from redolab.core.db import make_sessionmaker
from redolab.environments.credentials import CredentialCreate, create_credential
from redolab.runs import service
from redolab.runs.models import RunEvent, RunStatus
from redolab.worker import fail_orphans
from tests import services
from tests.execution import (
    descendants,
    execute_in_background,
    execute_next,
    reload,
    request_run,
    wait_for_intervals,
)
from tests.factories import make_ssh_environment
from tests.margins import measured_within
from tests.services import REDOLAB, free_port, redolab_env


def _kept_intervals(session, run) -> int:
    return sum(1 for e in reload(session, run).events if e.role == "client" and e.event == "interval")


def test_authentication_refused(session, engine, secret_key, ssh_env, tmp_path):
    environment, primary, standby = ssh_env
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    unknown = CredentialCreate(name="unknown key", kind="uploaded_key", private_key=(tmp_path / "other").read_text())
    stranger = create_credential(session=session, environment=environment, secret_key=secret_key, credential_in=unknown)
    primary.credential_id = stranger.id
    session.commit()
    run = request_run(session, environment, primary, standby)
    execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.failed
    assert "SSH authentication to db1 as" in run.failure_reason and "was refused" in run.failure_reason


def test_host_key_changed(session, engine, secret_key, ssh_env, tmp_path):
    environment, primary, standby = ssh_env
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "old")], check=True)
    old_line = " ".join((tmp_path / "old.pub").read_text().split()[:2])
    old_fp = subprocess.run(
        ["ssh-keygen", "-lf", str(tmp_path / "old.pub")], capture_output=True, text=True
    ).stdout.split()[1]
    standby.host_key, standby.host_key_fingerprint = old_line, old_fp
    session.commit()
    run = request_run(session, environment, primary, standby)
    execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.failed
    reason = run.failure_reason
    assert "host key of sb1 changed" in reason
    assert old_fp in reason and primary.host_key_fingerprint in reason  # old and new fingerprints
    assert run.client_command is None  # nothing was run


def test_unverified_host_refuses_to_run(session, engine, secret_key, sshd):
    environment, primary, standby = make_ssh_environment(session, sshd, secret_key=secret_key, pinned=False)
    run = request_run(session, environment, primary, standby)
    execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.failed
    assert "is not verified yet: use Verify host" in run.failure_reason


def test_host_unreachable(session, engine, secret_key, ssh_env):
    environment, primary, standby = ssh_env
    standby.ssh_port = free_port()  # nothing listens there
    session.commit()
    run = request_run(session, environment, primary, standby)
    execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.failed
    assert f"cannot reach 127.0.0.1:{standby.ssh_port} over SSH" in run.failure_reason


def test_cancel_keeps_samples(session, engine, secret_key, ssh_env):
    environment, primary, standby = ssh_env

    def cancelled() -> float:
        run = request_run(session, environment, primary, standby, duration_seconds=30)
        thread = execute_in_background(engine, secret_key)
        wait_for_intervals(session, run, 2)
        service.cancel_run(session=session, run=reload(session, run))
        started = time.monotonic()
        thread.join(timeout=30)
        assert not thread.is_alive(), "the worker did not finish the cancelled run"  # its 30 s: not stopped
        seconds = time.monotonic() - started
        run = reload(session, run)
        assert run.status is RunStatus.cancelled
        assert "cancelled by the user" in run.failure_reason
        assert _kept_intervals(session, run) >= 2
        return seconds

    # a second or two on this machine; a busy one may take longer: cancelled once more before that fails
    measured_within(
        cancelled,
        lambda seconds: [f"cancel to done {seconds:.2f} s (< 10 s)"] * (seconds >= 10),
        "a cancelled 30 s run over SSH",
    )


def test_cancel_queued_run(session, ssh_env):
    environment, primary, standby = ssh_env
    run = request_run(session, environment, primary, standby)
    run = service.cancel_run(session=session, run=run)
    assert run.status is RunStatus.cancelled
    assert "before it started" in run.failure_reason


@pytest.mark.parametrize("side", ["client", "server"])
def test_probe_killed_mid_run(session, engine, secret_key, ssh_env, side):
    environment, primary, standby = ssh_env
    run = request_run(session, environment, primary, standby, duration_seconds=30)
    thread = execute_in_background(engine, secret_key)
    wait_for_intervals(session, run, 2)
    assert services.kill_probes(rf"redoprobe[^ ]* {side} ") > 0  # this test's probe, not another worker's
    thread.join(timeout=30)
    run = reload(session, run)
    assert run.status is RunStatus.failed
    if side == "client":
        assert "redoprobe client on db1 stopped without a result (was it killed?)" in run.failure_reason
    else:
        assert "connection to the server 127.0.0.1" in run.failure_reason and "lost" in run.failure_reason
    assert _kept_intervals(session, run) >= 2


def test_ssh_connection_dropped_mid_run(session, engine, secret_key, ssh_env, sshd):
    environment, primary, standby = ssh_env
    run = request_run(session, environment, primary, standby, duration_seconds=30)
    thread = execute_in_background(engine, secret_key)
    wait_for_intervals(session, run, 2)
    sessions = [pid for pid in descendants(sshd.process.pid) if "sshd" in Path(f"/proc/{pid}/comm").read_text()]
    assert sessions
    for pid in sessions:  # the sshd session processes: the connections drop, sshd keeps listening
        os.kill(pid, signal.SIGKILL)
    thread.join(timeout=40)
    run = reload(session, run)
    assert run.status is RunStatus.failed
    assert "dropped mid-run" in run.failure_reason or "stopped without a result" in run.failure_reason
    assert _kept_intervals(session, run) >= 2


def test_redolab_restarted_mid_run(session, engine, secret_key, ssh_env, database_url, tmp_path):
    """A worker process dies mid-run: on start-up the job is failed, and the probes end by their caps."""
    environment, primary, standby = ssh_env
    run = request_run(session, environment, primary, standby, duration_seconds=4, interval_seconds=0.5)
    worker = subprocess.Popen(
        [str(REDOLAB), "worker"],
        env=redolab_env(tmp_path, REDOLAB_DATABASE_URL=database_url, REDOLAB_SECRET_KEY=secret_key),
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for_intervals(session, run, 1)
    finally:
        worker.kill()
        worker.wait()
    assert fail_orphans(make_sessionmaker(engine), older_than_seconds=None) == 1
    run = reload(session, run)
    assert run.status is RunStatus.failed
    assert "stopped, e.g. redolab was restarted mid-run" in run.failure_reason
    assert _kept_intervals(session, run) >= 1
    # the probes were not killed by anyone: they end by themselves (client duration, server --once)


def test_worker_killed_during_a_cancel_ends_the_run_cancelled(
    session, engine, secret_key, ssh_env, database_url, tmp_path
):
    """kill -9 of the worker right after the user pressed Cancel, before it could stop the probes: on
    start-up the run ends cancelled (not failed: a cancel is never turned into a failure), with the
    measurements so far kept, and no probe is left behind once its own caps run out."""
    environment, primary, standby = ssh_env
    run = request_run(session, environment, primary, standby, duration_seconds=4, interval_seconds=0.5)
    worker = subprocess.Popen(
        [str(REDOLAB), "worker"],
        env=redolab_env(tmp_path, REDOLAB_DATABASE_URL=database_url, REDOLAB_SECRET_KEY=secret_key),
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for_intervals(session, run, 1)
        service.cancel_run(session=session, run=reload(session, run))
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.kill()
        worker.wait()
    orphans = fail_orphans(make_sessionmaker(engine), older_than_seconds=None)
    run = reload(session, run)
    assert run.status is RunStatus.cancelled
    if orphans:  # killed before it acted (almost always: the kill follows the commit at once)
        assert orphans == 1 and run.failure_reason.startswith("cancelled; the worker running it")
    assert _kept_intervals(session, run) >= 1
    deadline = time.monotonic() + 20  # the client's --max-duration and the server's idle timeout
    while services.leftover_probes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert services.leftover_probes() == []


def test_two_runs_never_share_a_host(session, engine, secret_key, ssh_env):
    from redolab.jobs.claims import claim_next

    environment, primary, standby = ssh_env
    first = request_run(session, environment, primary, standby)
    second = request_run(session, environment, standby, primary)
    sessions = make_sessionmaker(engine)
    claimed = claim_next(sessions, "w1")
    assert claimed.run_id == first.id
    assert claim_next(sessions, "w2") is None  # same hosts busy: the second waits, visibly queued
    assert reload(session, second).status is RunStatus.queued
    assert service.queue_position(session=session, run=reload(session, second)) == 0


def test_label_and_write_dir_cannot_inject(session, engine, secret_key, ssh_env, tmp_path):
    environment, primary, standby = ssh_env
    marker = Path(f"/tmp/rl-pwned-{os.getpid()}")
    label = f"x'; touch {marker}; echo '$(touch {marker})`touch {marker}`"
    write_dir = tmp_path / "redo"
    write_dir.mkdir()
    run = request_run(
        session,
        environment,
        primary,
        standby,
        label=label,
        write_dir=str(write_dir),
        sync_write=True,
        mode="sync",
        message_bytes="64K",
        duration_seconds=1,
    )
    execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.succeeded, run.failure_reason
    assert run.label == label
    assert not marker.exists()  # nothing in the label reached a shell
    assert f"--write-dir {write_dir} --sync-write" in run.server_command
    assert list(write_dir.iterdir()) == []  # the server removed its file
    assert session.query(RunEvent).filter_by(run_id=run.id, role="server", event="end").count() == 1
