#!/usr/bin/env python3
"""How faithfully and how cheaply redoprobe replays a schedule (--schedule), on loopback.

For constant schedules at 10, 100 and 1,000 MiB/s (a slot every 0.1 s on whole tenths, so slots fall
on the interval boundaries as recorded profiles' do) the replay runs for `--seconds`; the table prints
for each rate:
  - the median, over the whole 1-second intervals, of |scheduled - received| / scheduled, in percent
    (scheduled: the schedule's bytes generated in the interval, each slot spread over its 0.1 s, so a
    whole second holds ten whole slots; received: the interval's bytes_received, the server's
    count); target under 1 %;
  - the sender's CPU seconds per GiB (the client process, user + system, from wait4's rusage; the
    replay with --warmup 0: the default 1 s of filler at full speed before time zero is not the
    replay's bytes). Pacing must not cost more than streaming the same bytes. Like with like is the
    same bytes in the same sends (message size, connections) over the same time: streaming at the
    replay's average rate for as long as it lasts, as every peer measures a link with constant traffic.
    Two such senders run beside each replay: redoprobe --rate, and the peer, iperf3 -b with the same
    -l, -P and -t (its client process, the same rusage). The replay / --rate and replay / iperf3 -b
    ratios are each repetition's own (the three run back to back, their order turned each repetition:
    the machine's state drifts over minutes and the same run's figure moves by a fifth), their median
    and range printed, and from 6 repetitions a 95 % interval for the median (median_interval);
  - unpaced streaming of the same bytes (no --schedule, no --rate), for what pacing itself costs: it
    sends them in a fiftieth of the time and never sleeps, so it never pays the wake from idle that
    every paced sender pays on each send (on a 2-vCPU VM a 1 MiB memcpy after 10 ms asleep took 107 us,
    back to back 24 us, and the wake itself some 50 us: about 0.13 s/GiB at 100 MiB/s in 1 MiB
    sends). It streams for the replay's bytes / its rate (measured by a run of AS_LONG_SECONDS, whose
    rate is shown too), rescaled until its bytes are within 5 % of the replay's;
  - the kernel's softirq threads' CPU seconds per GiB (ksoftirqd, machine-wide) during the replay and
    the same-bytes streaming: on loopback the sender runs the receiving side's TCP in softirq, inline
    (in the client's rusage) while it keeps up, deferred to ksoftirqd (in nobody's) when it does not,
    as in unpaced streaming; a sender figure that moved there would only look cheaper;
  - the server's CPU seconds per GiB, replay next to streaming of the same bytes: the replay's server
    takes counts (a message's worth, or 1 ms after the oldest uncounted byte) while bytes arrive and
    sends them back, those taken within 5 ms of the last packet together (wire.h; streaming sends
    none), which must not show.

Where the sender's CPU goes, replay next to --rate, is bench/replay_profile.py's (a profile of each).

With --repeat N every run is made N times (interleaved) and each figure is the median of the N.

    python3 bench/rehearsal_pacing.py [--seconds 60] [--rates 10 100 1000] [--conns 1] [--message-size 1M]
                                      [--repeat 1] [--zerocopy] [--pin] [--binary PATH]

--pin runs every client (the replay, --rate, iperf3 -b, unpaced) on CPU 0 and every server on CPU 1
(taskset): where the scheduler puts the two otherwise (the same CPU or not) moves one run's sender
CPU per GiB by a third on a 2-vCPU VM, more than the differences compared here.

--zerocopy sends every run (replay, streaming, --rate) with sendfile() from a memfd: the same send path
on both sides of each comparison, without the copy from user space a paused sender finds cold (no
iperf3 column then: its -Z is another path).

Needs a built redoprobe (make probe), and iperf3 for the peer's column (Debian package; without it
the column says so). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
from redolab.core.units import parse_size  # noqa: E402

REDOPROBE = ROOT / "backend" / "redolab" / "redoprobe" / "redoprobe"
GIB = 1024**3
MIB = 1024**2
SLOTS_PER_SECOND = 10
# --pin: the client on CPU 0 and the server on CPU 1 (taskset), else where the scheduler puts them
PIN = False


@dataclass
class Run:
    end: dict
    intervals: list[dict]
    client_cpu_seconds: float
    server_cpu_seconds: float
    softirq_seconds: float  # ksoftirqd, machine-wide, while the client ran

    @property
    def cpu_per_gib(self) -> float:
        return self.client_cpu_seconds / (self.end["bytes_sent"] / GIB)

    @property
    def server_cpu_per_gib(self) -> float:
        return self.server_cpu_seconds / (self.end["bytes_sent"] / GIB)

    @property
    def softirq_per_gib(self) -> float:
        return self.softirq_seconds / (self.end["bytes_sent"] / GIB)


def softirq_seconds() -> float:
    """CPU seconds the kernel's softirq threads (ksoftirqd/N) ran so far, from schedstat (nanoseconds)."""
    total = 0
    for task in Path("/proc").iterdir():
        try:
            if task.name.isdigit() and (task / "comm").read_text().startswith("ksoftirqd/"):
                total += int((task / "schedstat").read_text().split()[0])
        except OSError:  # gone, or no schedstat: counts as nothing
            continue
    return total / 1e9


def pinned(cpu: int) -> list[str]:
    """taskset's prefix that runs a process on `cpu` (it execs the command: wait4 sees the probe)."""
    return ["taskset", "--cpu-list", str(cpu)] if PIN else []


def run_pair(client_args: list[str], client_prefix: list[str] | None = None) -> Run:
    """One server (--once) and one client; the client's events and both CPU seconds (wait4). The
    client runs under `client_prefix` (pinned() by default; a profiler, which execs the probe)."""
    server = subprocess.Popen(
        [*pinned(1), str(REDOPROBE), "server", "--once", "--json", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    port = json.loads(server.stdout.readline())["data"]["port"]
    softirq_before = softirq_seconds()
    prefix = pinned(0) if client_prefix is None else client_prefix
    client = subprocess.Popen(
        [*prefix, str(REDOPROBE), "client", "127.0.0.1", "--json", "--port", str(port), *client_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = client.stdout.read()
    err = client.stderr.read()
    _, status, usage = os.wait4(client.pid, 0)
    softirq = softirq_seconds() - softirq_before
    client.returncode = os.waitstatus_to_exitcode(status)
    server.stdout.read()
    _, server_status, server_usage = os.wait4(server.pid, 0)
    server.returncode = os.waitstatus_to_exitcode(server_status)  # reaped here: Popen must not wait again
    if client.returncode != 0:
        raise RuntimeError(f"redoprobe client exited {client.returncode}: {err.strip()} {out[-500:]}")
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    end = next(e["data"] for e in events if e["event"] == "end")
    intervals = [e["data"] for e in events if e["event"] == "interval"]
    return Run(end, intervals, usage.ru_utime + usage.ru_stime, server_usage.ru_utime + server_usage.ru_stime, softirq)


def constant_schedule(path: Path, mib_per_second: float, seconds: int, conns: int) -> list[tuple[int, float, int]]:
    per_slot = round(mib_per_second * MIB / SLOTS_PER_SECOND / conns)
    slots = [(conn, k / SLOTS_PER_SECOND, per_slot) for k in range(seconds * SLOTS_PER_SECOND) for conn in range(conns)]
    path.write_text("".join(f"{conn} {offset:.1f} {size}\n" for conn, offset, size in slots))
    return slots


def scheduled_in(slots, start: float, end: float) -> int:
    return sum(size for _, offset, size in slots if start <= offset < end)


@dataclass
class Repetition:
    """One rate's runs: the replay, streaming for as long and for as many bytes, and --rate pacing."""

    replay: Run
    streaming_as_long: Run
    streaming: Run  # the same bytes
    paced: Run
    peer: PeerRun | None  # iperf3 -b, when installed
    median_error: float  # percent
    worst_error: float
    whole_intervals: int


# How far streaming's bytes may be from the replay's, and how many runs may try to get there.
SAME_BYTES_TOLERANCE = 0.05
SAME_BYTES_TRIES = 4


def streaming_same_bytes(replay_bytes: int, bytes_per_second: float, common: list[str]) -> Run:
    """Plain streaming of the replay's bytes. A short run's rate is not a long one's (slow start, its
    start-up, the scheduler), so replay bytes / the long run's rate streamed 64 to 86 % of the bytes
    at 10 MiB/s and 52 to 143 % at 100, and fixed costs weigh per GiB as the bytes are fewer. Each try
    rescales the duration by its own miss; the run whose bytes came closest counts, the first within
    SAME_BYTES_TOLERANCE ends the tries."""
    seconds, closest = replay_bytes / bytes_per_second, None
    for _ in range(SAME_BYTES_TRIES):
        run = run_pair(["--duration", f"{seconds:.6f}", *common])
        ratio = replay_bytes / run.end["bytes_sent"]
        if closest is None or abs(ratio - 1) < abs(replay_bytes / closest.end["bytes_sent"] - 1):
            closest = run
        if abs(ratio - 1) <= SAME_BYTES_TOLERANCE:
            break
        seconds *= ratio
    return closest


@dataclass
class PeerRun:
    """iperf3 -b: the peers' constant-rate streaming, its client's CPU from wait4's rusage."""

    bytes_sent: int
    client_cpu_seconds: float

    @property
    def cpu_per_gib(self) -> float:
        return self.client_cpu_seconds / (self.bytes_sent / GIB)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_iperf3(bits_per_second: str, seconds: int, conns: int, message_size: str) -> PeerRun:
    """iperf3 -c -b RATE -l SIZE -P CONNS -t SECONDS: the same bytes in the same sends over the same
    time as the replay, paced by iperf3 (its --pacing-timer, 1 ms by default)."""
    port = free_port()
    server = subprocess.Popen(
        [*pinned(1), "iperf3", "-s", "-1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(0.3)  # listening by then; a connection to find out would be its one client (-1)
    # redoprobe reads a bare number as bytes; parse_size wants a unit (and reads K, M as 1024-based, as both tools do)
    size = message_size if message_size.isdigit() else str(parse_size(message_size))
    client = subprocess.Popen(
        [
            *pinned(0),
            "iperf3",
            "-c",
            "127.0.0.1",
            "-p",
            str(port),
            "-b",
            bits_per_second,
            "-l",
            size,
            "-P",
            str(conns),
            "-t",
            str(seconds),
            "-J",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    out = client.stdout.read()
    _, status, usage = os.wait4(client.pid, 0)
    client.returncode = os.waitstatus_to_exitcode(status)
    server.wait()
    if client.returncode != 0:
        raise RuntimeError(f"iperf3 exited {client.returncode}: {out[-500:]}")
    sent = int(json.loads(out)["end"]["sum_sent"]["bytes"])
    return PeerRun(sent, usage.ru_utime + usage.ru_stime)


# Streaming at full speed runs this long to learn its rate (then streams the replay's bytes).
AS_LONG_SECONDS = 10


def repetition(path: Path, slots, rate: float, seconds: int, common: list[str], turn: int, peer: bool) -> Repetition:
    # --warmup 0: the default warm-up streams filler at full speed for 1 s before time zero (its bytes
    # are not the replay's), which would charge a second of streaming to the paced bytes
    bits_per_second = str(round(rate * MIB * 8))
    paced_runs = {
        "replay": lambda: run_pair(["--schedule", str(path), "--warmup", "0", *common]),
        "paced": lambda: run_pair(["--duration", str(seconds), "--rate", bits_per_second, *common]),
    }
    if peer:
        paced_runs["peer"] = lambda: run_iperf3(bits_per_second, seconds, int(common[1]), common[3])
    # the paced runs back to back, their order turned each repetition: the machine's state drifts over
    # minutes (the same run's CPU per GiB moves by a fifth), which a fixed order would charge to one
    names = list(paced_runs)
    names = names[turn % len(names) :] + names[: turn % len(names)]
    done = {name: paced_runs[name]() for name in names}
    replay, paced = done["replay"], done["paced"]
    as_long = run_pair(["--duration", str(min(seconds, AS_LONG_SECONDS)), *common])
    streaming = streaming_same_bytes(replay.end["bytes_sent"], as_long.end["bytes_per_second"], common)
    whole = [i for i in replay.intervals if i["end_seconds"] - i["start_seconds"] == 1.0]
    errors = []
    for interval in whole:
        expected = scheduled_in(slots, interval["start_seconds"], interval["end_seconds"])
        errors.append(abs(interval["bytes_received"] - expected) / expected * 100)
    return Repetition(
        replay, as_long, streaming, paced, done.get("peer"), statistics.median(errors), max(errors), len(whole)
    )


def median_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free interval for the median: the k-th smallest and k-th largest of n values,
    k the largest with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2 (order statistics; no
    assumption about how the runs spread). None when n is too small for any (n < 6 at 95 %)."""
    n, ordered = len(values), sorted(values)
    tail, below, k = (1 - confidence) / 2, 0.0, 0
    while below + math.comb(n, k) / 2**n <= tail:
        below += math.comb(n, k) / 2**n
        k += 1
    return None if k == 0 else (ordered[k - 1], ordered[n - k])


def ratio_text(ratios: list[float]) -> str:
    interval = median_interval(ratios)
    shown = f" (95 % {interval[0]:.2f} - {interval[1]:.2f})" if interval else ""
    return f"{statistics.median(ratios):.2f} [{min(ratios):.2f} - {max(ratios):.2f}]{shown}"


def median_of(repetitions: list[Repetition], figure) -> float:
    return statistics.median(figure(r) for r in repetitions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=60, help="schedule length and streaming duration (default 60)")
    parser.add_argument("--rates", type=float, nargs="+", default=[10, 100, 1000], help="MiB/s (default 10 100 1000)")
    parser.add_argument("--conns", type=int, default=1, help="connections, both runs (default 1)")
    parser.add_argument("--message-size", default="1M", help="bytes per send, both runs (default 1M)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each kind; figures are medians (default 1)")
    parser.add_argument("--zerocopy", action="store_true", help="every run sends with --zerocopy (sendfile)")
    parser.add_argument("--binary", type=Path, default=None, help="another redoprobe build (before/after)")
    parser.add_argument("--pin", action="store_true", help="every client on CPU 0, every server on CPU 1 (taskset)")
    args = parser.parse_args()
    global PIN
    PIN = args.pin
    if args.binary is not None:
        global REDOPROBE
        REDOPROBE = args.binary.resolve()
    if not REDOPROBE.exists():
        print(f"{REDOPROBE} is missing: run make probe", file=sys.stderr)
        return 1
    version = subprocess.run([REDOPROBE, "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"# {version}; loopback, {os.cpu_count()} CPUs; {args.seconds} s per run, {args.conns} connection(s), "
        f"--message-size {args.message_size}{' --zerocopy' if args.zerocopy else ''}{' --pin' if args.pin else ''}; constant schedules, a slot every {1 / SLOTS_PER_SECOND:g} s; "
        f"medians of {args.repeat} run(s) each"
    )
    peer = shutil.which("iperf3") is not None and not args.zerocopy
    if not peer:
        print(
            "# no iperf3 column: "
            + ("--zerocopy (iperf3 -Z is another path)" if args.zerocopy else "iperf3 is not installed")
        )
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for rate in args.rates:
            path = Path(directory) / f"constant-{rate:g}.txt"
            slots = constant_schedule(path, rate, args.seconds, args.conns)
            common = ["--conns", str(args.conns), "--message-size", args.message_size]
            common += ["--zerocopy"] if args.zerocopy else []
            repetitions = []
            for turn in range(args.repeat):
                r = repetition(path, slots, rate, args.seconds, common, turn, peer)
                repetitions.append(r)
                print(
                    f"  {rate:g} MiB/s: replay {r.replay.end['bytes_received'] / MIB:.0f} MiB in "
                    f"{r.replay.end['seconds']:.2f} s, max lag {r.replay.end['max_lag_seconds']:.3f} s, drained "
                    f"{r.replay.end['drained']}; sender CPU s/GiB: replay {r.replay.cpu_per_gib:.3f}, --rate "
                    f"{r.paced.cpu_per_gib:.3f}"
                    + (f", iperf3 -b {r.peer.cpu_per_gib:.3f}" if r.peer else "")
                    + f"; unpaced, the same {r.streaming.end['bytes_sent'] / MIB:.0f} MiB in "
                    f"{r.streaming.end['seconds']:.2f} s, {r.streaming.cpu_per_gib:.3f}",
                    flush=True,
                )
            rows.append((rate, repetitions))
    print()
    print("Pacing fidelity (the replay's whole 1 s intervals):")
    print(f"{'schedule':>12}  {'intervals':>9}  {'median |sched-recv|':>19}  {'worst':>7}  {'max lag s':>9}")
    for rate, reps in rows:
        print(
            f"{rate:>6g} MiB/s  {median_of(reps, lambda r: r.whole_intervals):>9.0f}  "
            f"{median_of(reps, lambda r: r.median_error):>18.3f}%  {median_of(reps, lambda r: r.worst_error):>6.2f}%  "
            f"{median_of(reps, lambda r: r.replay.end['max_lag_seconds']):>9.3f}"
        )
    print()
    print(
        f"Sender CPU, s/GiB (medians of {args.repeat}); ratios are the median of each repetition's own, "
        "[min - max] (with 6 runs or more, a 95 % interval for that median):"
    )
    print(
        f"{'schedule':>12}  {'replay':>7}  {'--rate':>7}  {'replay/--rate':>22}  {'iperf3 -b':>9}  "
        f"{'replay/iperf3':>22}  {'unpaced':>7}  {'replay/unpaced':>22}  {'unpaced MiB/s':>13}  {'softirq: replay':>15}  {'unpaced':>7}  "
        f"{'server: replay':>14}  {'unpaced':>7}"
    )
    for rate, reps in rows:
        print(
            f"{rate:>6g} MiB/s  {median_of(reps, lambda r: r.replay.cpu_per_gib):>7.3f}  "
            f"{median_of(reps, lambda r: r.paced.cpu_per_gib):>7.3f}  "
            f"{ratio_text([r.replay.cpu_per_gib / r.paced.cpu_per_gib for r in reps]):>22}  "
            + (
                f"{median_of(reps, lambda r: r.peer.cpu_per_gib):>9.3f}  "
                f"{ratio_text([r.replay.cpu_per_gib / r.peer.cpu_per_gib for r in reps]):>22}  "
                if peer
                else f"{'-':>9}  {'-':>22}  "
            )
            + f"{median_of(reps, lambda r: r.streaming.cpu_per_gib):>7.3f}  "
            f"{ratio_text([r.replay.cpu_per_gib / r.streaming.cpu_per_gib for r in reps]):>22}  "
            f"{median_of(reps, lambda r: r.streaming_as_long.end['bytes_per_second'] / MIB):>13.0f}  "
            f"{median_of(reps, lambda r: r.replay.softirq_per_gib):>15.3f}  "
            f"{median_of(reps, lambda r: r.streaming.softirq_per_gib):>7.3f}  "
            f"{median_of(reps, lambda r: r.replay.server_cpu_per_gib):>14.3f}  "
            f"{median_of(reps, lambda r: r.streaming.server_cpu_per_gib):>7.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
