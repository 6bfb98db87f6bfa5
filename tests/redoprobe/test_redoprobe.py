"""redoprobe on loopback: events, totals, modes, buffers, caps and errors."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.margins import measured_within
from tests.redoprobe.conftest import (
    events,
    run_client,
    start_client,
    start_server,
    wait_for_shut_streams,
    wait_for_streaming,
)
from tests.services import leftover_probes


def by_event(items, name):
    return [item["data"] for item in items if item["event"] == name]


def test_async_stream_totals_match(redoprobe, server):
    srv = server("--once")
    client = run_client(redoprobe, srv.port, "--duration", "2", "--interval", "0.5")
    assert client.returncode == 0, client.stderr
    names = [item["event"] for item in client.events]
    assert names[0] == "start" and names[-1] == "end"
    assert 3 <= names.count("interval") <= 5
    start = by_event(client.events, "start")[0]
    assert start["role"] == "client" and start["mode"] == "async"
    assert start["message_bytes"] == 1024 * 1024
    assert start["sockbuf_requested_bytes"] is None
    assert len(start["kernel"]["tcp_rmem_bytes"]) == 3
    end = by_event(client.events, "end")[0]
    assert end["bytes_sent"] > 0
    assert end["bytes_sent"] == end["bytes_received"]
    assert end["bytes_per_second"] == pytest.approx(end["bytes_received"] / end["seconds"], rel=1e-6)
    interval = by_event(client.events, "interval")[0]
    assert interval["streams"][0]["rtt_us"] > 0
    assert {"rttvar_us", "snd_cwnd", "retransmits", "pmtu"} <= set(interval["streams"][0])
    status, server_events = srv.finish()
    assert status == 0, srv.stderr
    server_end = by_event(server_events, "end")[0]
    assert server_end["bytes_received"] == end["bytes_received"]
    assert server_end["role"] == "server"


def test_many_connections(redoprobe, server):
    srv = server("--once")
    client = run_client(redoprobe, srv.port, "--duration", "1.5", "--conns", "4")
    assert client.returncode == 0, client.stderr
    intervals = by_event(client.events, "interval")
    assert [s["id"] for s in intervals[0]["streams"]] == [0, 1, 2, 3]
    assert all(s["bytes"] > 0 for s in intervals[0]["streams"])
    assert intervals[0]["bytes"] == sum(s["bytes"] for s in intervals[0]["streams"])
    end = by_event(client.events, "end")[0]
    assert end["bytes_sent"] == end["bytes_received"]
    assert by_event(srv.finish()[1], "end")[0]["conns"] == 4


def test_sync_mode_reports_ack_latency(redoprobe, server):
    srv = server("--once")
    client = run_client(redoprobe, srv.port, "--mode", "sync", "--message-size", "64K", "--duration", "1.5")
    assert client.returncode == 0, client.stderr
    interval = by_event(client.events, "interval")[0]
    latency = interval["ack_latency_us"]
    assert latency["count"] > 10 and latency["exact"] is True  # past 2^20 in an interval: within 1/128
    assert latency["min"] <= latency["p50"] <= latency["p99"] <= latency["max"]
    end = by_event(client.events, "end")[0]
    histogram = end["ack_latency_us"]["histogram"]
    assert sum(bucket["count"] for bucket in histogram) == end["ack_latency_us"]["count"]
    for bucket in histogram:  # power-of-two buckets
        assert bucket["to_us"] + 1 == 2 * max(bucket["from_us"], 1) or bucket["from_us"] == 0
    # every message waited for its acknowledgement: bytes are whole messages
    assert end["bytes_received"] % (64 * 1024) == 0
    assert end["bytes_sent"] == end["bytes_received"]


def test_explicit_socket_buffers_are_reported_as_granted(redoprobe, server):
    wmem_max = int(Path("/proc/sys/net/core/wmem_max").read_text())
    rmem_max = int(Path("/proc/sys/net/core/rmem_max").read_text())
    srv = server("--once")
    client = run_client(redoprobe, srv.port, "--sockbuf", "128K", "--duration", "1")
    assert client.returncode == 0, client.stderr
    start = by_event(client.events, "start")[0]
    assert start["sockbuf_requested_bytes"] == 128 * 1024
    # Linux doubles the request (capped by wmem_max/rmem_max) and reports the doubled value.
    assert start["sndbuf_granted_bytes"] == 2 * min(128 * 1024, wmem_max)
    assert start["rcvbuf_granted_bytes"] == 2 * min(128 * 1024, rmem_max)
    server_end = by_event(srv.finish()[1], "end")[0]
    assert server_end["sockbuf_requested_bytes"] == 128 * 1024
    assert server_end["rcvbuf_granted_bytes"] == 2 * min(128 * 1024, rmem_max)


def test_reverse_the_server_sends_and_the_client_counts_what_arrived(redoprobe, server):
    srv = server("--once")
    client = run_client(redoprobe, srv.port, "--reverse", "--conns", "2", "--duration", "1.5", "--interval", "0.5")
    assert client.returncode == 0, client.stderr
    start = by_event(client.events, "start")[0]
    assert start["reverse"] is True and start["zerocopy"] is False
    end = by_event(client.events, "end")[0]
    assert end["bytes_received"] > 0
    assert end["bytes_sent"] == end["bytes_received"]  # every byte the server sent arrived
    intervals = by_event(client.events, "interval")
    assert sum(i["bytes"] for i in intervals) <= end["bytes_received"]
    status, server_events = srv.finish()
    server_end = by_event(server_events, "end")[0]
    assert status == 0 and server_end["reverse"] is True
    assert server_end["bytes_received"] == end["bytes_received"]  # in reverse: what the server sent


@pytest.mark.parametrize("extra", [[], ["--reverse"]], ids=["forward", "reverse"])
def test_zerocopy_moves_the_same_totals(redoprobe, server, extra):
    srv = server("--once")
    client = run_client(redoprobe, srv.port, "--zerocopy", "--message-size", "3M", "--duration", "1", *extra)
    assert client.returncode == 0, client.stderr
    assert by_event(client.events, "start")[0]["zerocopy"] is True
    end = by_event(client.events, "end")[0]
    assert end["bytes_sent"] == end["bytes_received"] > 0
    assert srv.finish()[0] == 0


def test_congestion_fq_rate_bind_and_cport_are_applied_and_reported(redoprobe, server):
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    # local ports outside the kernel's ephemeral range (above it, or below it when it reaches the top),
    # which no other test's connection is given (one in it was taken by another worker's connection
    # once); another pair when these are in use
    lowest, highest = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    first, spare = (highest + 1, 65534 - highest) if 65534 - highest >= 2 else (1024, lowest - 1024)
    for attempt in range(3):
        srv = server("--once")
        port = first + (os.getpid() * 7 + attempt * 211) % (spare - 1)
        client = run_client(
            redoprobe,
            srv.port,
            "--congestion",
            available[0],
            "--fq-rate",
            "200M",
            "--bind",
            "127.0.0.1",
            "--cport",
            str(port),
            "--conns",
            "2",
            "--message-size",
            "64K",
            "--duration",
            "2",
        )
        if "Address in use" not in client.stdout:
            break
        srv.process.kill()
    assert client.returncode == 0, client.stderr + client.stdout
    start = by_event(client.events, "start")[0]
    assert start["congestion"] == available[0]
    assert start["fq_rate_bits_per_second"] == 200e6
    assert start["bind"] == "127.0.0.1" and start["cport"] == port
    end = by_event(client.events, "end")[0]
    assert end["bytes_per_second"] <= 2 * 200e6 / 8 * 1.15  # two connections, each paced to 200 Mbit/s
    assert srv.finish()[0] == 0


def test_an_unavailable_congestion_control_is_named(redoprobe, server):
    srv = server("--once")
    client = run_client(redoprobe, srv.port, "--congestion", "nosuchcc", "--duration", "1")
    assert client.returncode == 1
    error = by_event(client.events, "error")[0]
    assert "congestion control 'nosuchcc' is not available" in error["message"]
    srv.process.kill()


def test_start_event_keys_are_a_superset_of_the_contract(redoprobe, server):
    srv = server("--once")
    client = run_client(redoprobe, srv.port, "--duration", "0.5")
    start = by_event(client.events, "start")[0]
    contract = {
        "version", "protocol", "role", "mode", "host", "port", "conns", "message_bytes", "sockbuf_requested_bytes",
        "sndbuf_granted_bytes", "rcvbuf_granted_bytes", "duration_seconds", "interval_seconds", "delay_us",
        "rate_bits_per_second", "kernel",
    }  # fmt: skip
    assert contract <= set(start)
    assert {"congestion", "fq_rate_bits_per_second", "bind", "cport", "zerocopy", "reverse"} <= set(start)
    assert start["fq_rate_bits_per_second"] is None and start["bind"] is None and start["cport"] is None
    assert srv.finish()[0] == 0


def test_rate_paces_the_stream(redoprobe, server):
    pace = 80e6 / 8

    def paced() -> float:
        srv = server("--once")
        client = run_client(redoprobe, srv.port, "--rate", "80M", "--message-size", "64K", "--duration", "2")
        assert client.returncode == 0, client.stderr
        rate = by_event(client.events, "end")[0]["bytes_per_second"]
        assert rate <= 1.15 * pace, f"{rate / 1e6:.2f} MB/s paced to {pace / 1e6:g} MB/s"  # never faster
        return rate

    # a client starved of CPU falls behind its pace: measured once more before that fails
    measured_within(
        paced,
        lambda rate: [f"{rate / 1e6:.2f} MB/s < 0.85 x {pace / 1e6:g} MB/s"] * (rate < 0.85 * pace),
        "the paced rate",
    )


def test_delay_between_messages(redoprobe, server):
    def messages() -> float:
        srv = server("--once")
        client = run_client(redoprobe, srv.port, "--delay", "20000", "--message-size", "64K", "--duration", "1")
        assert client.returncode == 0, client.stderr
        sent = by_event(client.events, "end")[0]["bytes_received"] / (64 * 1024)
        assert sent <= 55, sent  # ~50 per second at most with a 20 ms pause
        return sent

    # a busy machine sends fewer (its pauses run late): measured once more before that fails
    measured_within(messages, lambda sent: [f"{sent:g} messages in 1 s < 25"] * (sent < 25), "messages paused 20 ms")


def test_server_write_dir_with_sync_write(redoprobe, server, tmp_path):
    srv = server("--once", "--write-dir", str(tmp_path), "--sync-write")
    client = run_client(redoprobe, srv.port, "--mode", "sync", "--message-size", "16K", "--duration", "1")
    assert client.returncode == 0, client.stderr
    end = by_event(client.events, "end")[0]
    assert end["server_write_seconds"] > 0
    status, server_events = srv.finish()
    assert status == 0
    assert by_event(server_events, "end")[0]["write_seconds"] > 0
    assert list(tmp_path.iterdir()) == []  # its file is removed


def test_server_refuses_missing_write_dir(redoprobe, tmp_path):
    result = subprocess.run(
        [redoprobe, "server", "--json", "--write-dir", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert result.returncode == 1
    error = by_event(events(result.stdout), "error")[0]
    assert "is not a usable directory" in error["message"]


def test_server_max_duration_cap(redoprobe, server):
    """A client that stops talking mid-test (stopped, gone) is cut at the server's --max-duration."""
    srv = server("--once", "--max-duration", "2")
    client = start_client(redoprobe, srv.port, "--duration", "2", "--rate", "10M")
    assert '"event":"start"' in client.stdout.readline()  # the test is under way on the server
    client.send_signal(signal.SIGSTOP)
    try:
        status, server_events = srv.finish(timeout=15)
    finally:
        client.kill()
        client.communicate(timeout=10)
    assert status == 1
    assert "--max-duration" in by_event(server_events, "error")[0]["message"]


def test_a_test_longer_than_the_servers_cap_is_refused_at_once(redoprobe, server):
    """A test asking for longer than the server's --max-duration is refused at the handshake, naming the
    option (it ran, and lost its connection at the cap: 'Broken pipe')."""
    srv = server("--max-duration", "1")  # serves client after client

    def refused() -> float:
        client = run_client(redoprobe, srv.port, "--duration", "10", "--rate", "10M")
        assert client.returncode == 1
        error = by_event(client.events, "error")[0]
        assert "stops tests before this one's 10 s" in error["message"] and "--max-duration" in error["message"], error
        return client.elapsed

    measured_within(
        refused,
        lambda seconds: [f"refused after {seconds:.2f} s (margin 3 s)"] * (seconds >= 3),
        "the refusal at the handshake",
    )
    srv.kill(signal.SIGTERM)
    _, server_events = srv.finish(timeout=15)
    assert "over this server's --max-duration 1 s" in srv.stderr + str(server_events)


def test_server_idle_timeout(redoprobe):
    def idle() -> float:
        started = time.monotonic()
        result = subprocess.run(
            [redoprobe, "server", "--json", "--port", "0", "--idle-timeout", "0.5"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert result.returncode == 1
        assert "no client connected within" in by_event(events(result.stdout), "error")[0]["message"]
        return time.monotonic() - started

    measured_within(
        idle,
        lambda seconds: [f"ended after {seconds:.2f} s (margin 3 s)"] * (seconds >= 3),
        "the idle timeout of 0.5 s",
    )


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused(redoprobe):
    client = run_client(redoprobe, _closed_port(), "--duration", "1")
    assert client.returncode == 1
    message = by_event(client.events, "error")[0]["message"]
    assert "cannot connect to 127.0.0.1" in message and "Connection refused" in message


class FakePeer:
    """A TCP listener that answers like something else (or says nothing)."""

    def __init__(self, reply: bytes | None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        connection, _ = self.sock.accept()
        if self.reply is not None:
            connection.sendall(self.reply)
        time.sleep(5)
        connection.close()


def test_non_redoprobe_peer_is_named(redoprobe):
    peer = FakePeer(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n" + b"\x00" * 64)
    client = run_client(redoprobe, peer.port, "--duration", "1")
    assert client.returncode == 1
    assert "is not a redoprobe server" in by_event(client.events, "error")[0]["message"]


def test_silent_peer_times_out_instead_of_hanging(redoprobe):
    def timed_out() -> float:
        peer = FakePeer(None)
        client = run_client(redoprobe, peer.port, "--duration", "1", "--connect-timeout", "1")
        assert client.returncode == 1
        assert "did not answer the handshake" in by_event(client.events, "error")[0]["message"]
        return client.elapsed

    measured_within(
        timed_out,
        lambda seconds: [f"ended after {seconds:.2f} s (margin 4 s)"] * (seconds >= 4),
        "the connect timeout of 1 s",
    )


def test_version_mismatch_is_clear(redoprobe):
    ack = b"RDPB" + (99).to_bytes(2, "big") + (1).to_bytes(2, "big") + b"\x00" * 24
    peer = FakePeer(ack)
    client = run_client(redoprobe, peer.port, "--duration", "1")
    assert client.returncode == 1
    message = by_event(client.events, "error")[0]["message"]
    assert "protocol version mismatch" in message and "speaks 99" in message


def test_server_ignores_garbage_and_serves_the_next_client(redoprobe, server):
    srv = server("--once")
    with socket.create_connection(("127.0.0.1", srv.port)) as stray:
        stray.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"x" * 32)
        stray.settimeout(30)
        # the server read a handshake it could not decode and closed the connection (a reset: the
        # bytes past its handshake unread)
        with contextlib.suppress(ConnectionResetError):
            assert stray.recv(1) == b""
    client = run_client(redoprobe, srv.port, "--duration", "0.5")
    assert client.returncode == 0, client.stderr
    status, _ = srv.finish()
    assert status == 0
    assert "not a redoprobe client" in srv.stderr


def test_server_killed_mid_run(redoprobe, server):
    srv = server("--once")
    process = start_client(redoprobe, srv.port, "--duration", "30")
    wait_for_streaming(srv.port)
    srv.kill(signal.SIGKILL)
    out, _ = process.communicate(timeout=15)
    assert process.returncode == 1
    error = by_event(events(out), "error")[0]
    assert "connection to the server 127.0.0.1" in error["message"] and "lost" in error["message"]


def test_client_killed_mid_run(redoprobe, server):
    srv = server("--once")
    process = subprocess.Popen(
        [redoprobe, "client", "127.0.0.1", "--json", "--port", str(srv.port), "--duration", "30"],
        stdout=subprocess.DEVNULL,
    )
    wait_for_streaming(srv.port)
    process.kill()
    process.wait()
    status, server_events = srv.finish(timeout=15)
    assert status == 1
    assert "the client went away" in by_event(server_events, "error")[0]["message"]


def test_sigint_ends_with_what_it_has(redoprobe, server):
    srv = server("--once")
    process = start_client(redoprobe, srv.port, "--duration", "30")
    wait_for_streaming(srv.port)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=15)
    assert process.returncode == 0, err
    end = by_event(events(out), "end")[0]
    assert end["interrupted"] is True
    assert end["bytes_received"] == end["bytes_sent"] > 0
    assert srv.finish()[0] == 0


def test_human_readable_output(redoprobe):
    srv = start_server(redoprobe, "--once")
    result = subprocess.run(
        [redoprobe, "client", "127.0.0.1", "--port", str(srv.port), "--duration", "1"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    srv.finish()
    assert result.returncode == 0
    assert "MiB/s" in result.stdout and "Mbit/s" in result.stdout
    assert "{" not in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["client", "127.0.0.1", "--conns", "0"], "--conns must be 1..1024"),
        (["client", "127.0.0.1", "--mode", "fast"], "--mode must be async or sync"),
        (["client", "127.0.0.1", "--message-size", "1X"], "--message-size"),
        (["client", "127.0.0.1", "--bogus"], "unknown option"),
        (["client"], "client needs the server's HOST"),
        (["server", "--port", "70000"], "--port must be 0..65535"),
        (["server", "--sync-write"], "--sync-write needs --write-dir"),
        (["disk", "/tmp", "--sync", "maybe"], "--sync must be"),
        (["frobnicate"], "unknown command"),
        (["client", "127.0.0.1", "--reverse", "--mode", "sync"], "works with --mode async only"),
        (["client", "127.0.0.1", "--reverse", "--rate", "1G"], "--rate and --delay pace the client"),
        (["client", "127.0.0.1", "--congestion", "bbr;reboot"], "--congestion must be"),
        (["client", "127.0.0.1", "--fq-rate", "1MB/s"], "--fq-rate must be"),
        (["client", "127.0.0.1", "--cport", "65535", "--conns", "2"], "within 65535"),
    ],
)
def test_bad_usage_exits_2(redoprobe, args, message):
    result = subprocess.run([redoprobe, *args], capture_output=True, text=True, timeout=10)
    assert result.returncode == 2
    assert message in result.stderr


def test_help_lists_every_option_with_default(redoprobe):
    result = subprocess.run([redoprobe, "--help"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 0
    for option in (
        "--bind",
        "--port",
        "--once",
        "--max-duration",
        "--idle-timeout",
        "--write-dir",
        "--sync-write",
        "--mode",
        "--conns",
        "--message-size",
        "--sockbuf",
        "--duration",
        "--interval",
        "--delay",
        "--rate",
        "--connect-timeout",
        "--write-size",
        "--writes",
        "--sync",
        "--json",
        "--zerocopy",
        "--congestion",
        "--fq-rate",
        "--cport",
        "--reverse",
    ):
        assert option in result.stdout, option
    assert "Linux grants double the request" in result.stdout
    assert result.stdout.count("default") >= 15
    version = subprocess.run([redoprobe, "--version"], capture_output=True, text=True, timeout=10)
    assert version.stdout.startswith("redoprobe 0.1.0")


def test_disk_write_test(redoprobe, tmp_path):
    result = subprocess.run(
        [redoprobe, "disk", str(tmp_path), "--json", "--write-size", "4K", "--writes", "20"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    end = by_event(events(result.stdout), "end")[0]
    assert end["writes"] == 20
    assert end["bytes"] == 20 * 4096
    latency = end["write_latency_us"]
    assert latency["min"] <= latency["avg"] <= latency["max"]
    assert sum(bucket["count"] for bucket in latency["histogram"]) == 20
    assert list(tmp_path.iterdir()) == []


def test_disk_never_overwrites(redoprobe, tmp_path):
    target = tmp_path / "precious"
    target.write_text("redo")
    result = subprocess.run(
        [redoprobe, "disk", str(target), "--json", "--writes", "1"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert result.returncode == 1
    assert "will not overwrite" in by_event(events(result.stdout), "error")[0]["message"]
    assert target.read_text() == "redo"


def test_disk_duration_and_fdatasync(redoprobe, tmp_path):
    def written() -> float:
        result = subprocess.run(
            [
                redoprobe,
                "disk",
                str(tmp_path / "new.dat"),
                "--json",
                "--write-size",
                "1M",
                "--duration",
                "0.5",
                "--sync",
                "fdatasync",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        end = by_event(events(result.stdout), "end")[0]
        assert end["writes"] >= 1
        assert end["seconds"] > 0.4  # it wrote for its duration
        assert not (tmp_path / "new.dat").exists()
        return end["seconds"]

    # the last fdatasync of a busy disk can run past the duration: measured once more before that fails
    measured_within(written, lambda seconds: [f"{seconds:.2f} s (margin 5 s)"] * (seconds >= 5), "a 0.5 s disk test")


def test_no_probe_left_running(redoprobe):
    deadline = time.monotonic() + 10  # a probe killed by its test may take a moment to be gone
    while leftover_probes(f"^{redoprobe} ") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert leftover_probes(f"^{redoprobe} ") == [], "a redoprobe process outlived its test"


@pytest.mark.skipif(os.environ.get("REDOLAB_SKIP_ASAN") == "1", reason="asked to skip")
def test_under_address_sanitizer(tmp_path):
    from redolab import redoprobe as probe_package

    asan = str(probe_package.build("redoprobe-asan"))
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:exitcode=23"}
    for client_args in (["--conns", "2"], ["--mode", "sync", "--message-size", "32K"], ["--reverse", "--zerocopy"]):
        server = subprocess.Popen(
            [asan, "server", "--json", "--port", "0", "--once", "--write-dir", str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        port = events(server.stdout.readline())[0]["data"]["port"]
        client = subprocess.run(
            [
                asan,
                "client",
                "127.0.0.1",
                "--json",
                "--port",
                str(port),
                "--duration",
                "1",
                *client_args,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        _, server_err = server.communicate(timeout=30)
        assert client.returncode == 0, client.stderr
        assert server.returncode == 0, server_err
        assert "Sanitizer" not in client.stderr + server_err
    disk = subprocess.run(
        [asan, "disk", str(tmp_path), "--writes", "5", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert disk.returncode == 0, disk.stderr
    bad = subprocess.run(
        [asan, "client", "127.0.0.1", "--port", str(_closed_port()), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert bad.returncode == 1 and "Sanitizer" not in bad.stderr


def _has_interpreter(path: str) -> bool:
    """True when the ELF file asks for a dynamic loader (PT_INTERP), i.e. is not static."""
    import struct

    with open(path, "rb") as f:
        header = f.read(64)
        assert header[:4] == b"\x7fELF" and header[4] == 2  # 64-bit ELF
        (phoff,) = struct.unpack_from("<Q", header, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", header, 0x36)
        for index in range(phnum):
            f.seek(phoff + index * phentsize)
            (p_type,) = struct.unpack("<I", f.read(4))
            if p_type == 3:  # PT_INTERP
                return True
    return False


def test_binary_is_static_when_musl_is_available(redoprobe):
    import shutil

    if shutil.which("musl-gcc") is None:
        from tests import services

        services.missing("musl-gcc", "install Debian's musl-tools package (make test does)")
    assert not _has_interpreter(redoprobe), "redoprobe should be statically linked"
    result = subprocess.run([redoprobe, "--version"], env={}, capture_output=True, text=True, timeout=10)
    assert result.returncode == 0


def test_server_without_once_serves_until_stopped(redoprobe, server):
    srv = server()
    for _ in range(2):
        client = run_client(redoprobe, srv.port, "--duration", "0.5")
        assert client.returncode == 0, client.stderr
    srv.kill(signal.SIGTERM)
    status, server_events = srv.finish()
    assert status == 0
    assert len(by_event(server_events, "end")) == 2


def test_server_sigterm_mid_run_reports_what_it_has(redoprobe, server):
    srv = server("--once")
    process = start_client(redoprobe, srv.port, "--duration", "30")
    wait_for_streaming(srv.port)
    srv.kill(signal.SIGTERM)
    status, server_events = srv.finish(timeout=15)
    assert status == 0
    end = by_event(server_events, "end")[0]
    assert end["interrupted"] is True and end["bytes_received"] > 0
    out, _ = process.communicate(timeout=15)
    assert process.returncode == 1
    assert by_event(events(out), "error")


def test_term_while_the_client_waits_for_the_servers_count_ends_it(redoprobe, server):
    """At the end of a test the client waits for the server's count (as long as the test took: queued
    bytes may take that long on a slow link); a TERM then ends the wait at once, not at its timeout."""

    def stopped_waiting() -> float:
        srv = server("--once")
        client = start_client(redoprobe, srv.port, "--duration", "3")
        assert '"event":"start"' in client.stdout.readline()  # the test is under way on the server
        srv.process.send_signal(signal.SIGSTOP)  # the server goes silent: its count never comes
        try:
            # the test's 3 s are over when the client shuts its streams: then it waits for the count
            # (up to 10 + 3 s)
            wait_for_shut_streams(srv.port, client)
            client.send_signal(signal.SIGTERM)
            stopped = time.monotonic()
            out, _ = client.communicate(timeout=30)
            waited = time.monotonic() - stopped
        finally:
            srv.process.send_signal(signal.SIGCONT)
        error = by_event(events(out), "error")[0]
        assert error["code"] == "peer_lost" and "while waiting for the count" in error["message"], error
        assert by_event(events(out), "interval"), "the intervals before the stop are reported"
        return waited

    measured_within(
        stopped_waiting,
        lambda waited: [f"the client ended {waited:.2f} s after TERM (margin 3 s)"] * (waited >= 3),
        "TERM during the wait for the count",
    )
