"""The exact probe command lines for a run (pure: argv lists, never shell text)."""

from __future__ import annotations

from dataclasses import dataclass

# The server may outlive the test by this much before its own cap stops it, and waits this
# long for the client before giving up: if redolab dies mid-run, the probe still ends.
SERVER_GRACE_SECONDS = 30
SERVER_IDLE_SECONDS = 60
# `sh -c` prints the client's PID before exec-ing the probe, so it can be ended by PID later.
PID_PREFIX = ["sh", "-c", 'echo "$$"; exec "$0" "$@"']


@dataclass(frozen=True)
class ProbeParameters:
    mode: str
    conns: int
    message_bytes: int
    sockbuf_bytes: int | None
    duration_seconds: float
    interval_seconds: float
    delay_us: int = 0
    rate_bits_per_second: int | None = None
    write_dir: str | None = None
    sync_write: bool = False
    congestion: str | None = None
    fq_rate_bits_per_second: int | None = None
    zerocopy: bool = False
    reverse: bool = False
    # a rehearsal: the schedule file on the client host, the volume scale and the time compression
    schedule_path: str | None = None
    scale: float = 1.0
    speedup: float = 1.0

    @classmethod
    def of_run(cls, run) -> ProbeParameters:
        """A run's (runs.models.Run) parameters."""
        return cls(
            mode=run.mode.value,
            conns=run.conns,
            message_bytes=run.message_bytes,
            sockbuf_bytes=run.sockbuf_bytes,
            duration_seconds=run.duration_seconds,
            interval_seconds=run.interval_seconds,
            delay_us=run.delay_us,
            rate_bits_per_second=run.rate_bits_per_second,
            write_dir=run.write_dir,
            sync_write=run.sync_write,
            congestion=run.congestion,
            fq_rate_bits_per_second=run.fq_rate_bits_per_second,
            zerocopy=run.zerocopy,
            reverse=run.reverse,
            scale=run.replay_scale or 1.0,
            speedup=run.replay_speedup or 1.0,
        )


def _number(value: float) -> str:
    return f"{value:g}"


def server_argv(probe: str, p: ProbeParameters) -> list[str]:
    argv = [
        probe,
        "server",
        "--json",
        "--once",
        "--port",
        "0",
        "--max-duration",
        _number(p.duration_seconds + SERVER_GRACE_SECONDS),
        "--idle-timeout",
        str(SERVER_IDLE_SECONDS),
        "--interval",
        _number(p.interval_seconds),
    ]
    if p.write_dir:
        argv += ["--write-dir", p.write_dir]
        if p.sync_write:
            argv.append("--sync-write")
    return argv


def client_argv(probe: str, p: ProbeParameters, *, server_address: str, port: int) -> list[str]:
    argv = [
        probe,
        "client",
        server_address,
        "--json",
        "--port",
        str(port),
        "--mode",
        p.mode,
        "--conns",
        str(p.conns),
        "--message-size",
        str(p.message_bytes),
        "--duration",
        _number(p.duration_seconds),
        "--interval",
        _number(p.interval_seconds),
        "--connect-timeout",
        "10",
    ]
    if p.sockbuf_bytes:
        argv += ["--sockbuf", str(p.sockbuf_bytes)]
    if p.delay_us:
        argv += ["--delay", str(p.delay_us)]
    if p.rate_bits_per_second:
        argv += ["--rate", str(p.rate_bits_per_second)]
    if p.congestion:
        argv += ["--congestion", p.congestion]
    if p.fq_rate_bits_per_second:
        argv += ["--fq-rate", str(p.fq_rate_bits_per_second)]
    if p.zerocopy:
        argv.append("--zerocopy")
    if p.reverse:
        argv.append("--reverse")
    if p.schedule_path:
        argv += ["--schedule", p.schedule_path]
        if p.scale != 1:
            argv += ["--scale", _number(p.scale)]
        if p.speedup != 1:
            argv += ["--speedup", _number(p.speedup)]
    return argv
