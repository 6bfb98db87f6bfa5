#!/usr/bin/env python3
"""Where the sender's CPU goes, replay next to `--rate`: a cpu-clock profile of each (perf record),
its samples sorted by the system call they were taken in.

The same bytes in the same sends (--message-size, 1 MiB by default) over the same time, once paced
by the schedule and once by `--rate`, each profiled at --frequency samples per CPU second (a
software timer: no hardware counters needed; a frequency whose period is not a whole fraction of
the send period, such as 3917, keeps a periodic sender from being sampled at one phase of its cycle
only). A sample is counted under the first of these its call chain holds, printed as CPU seconds
per GiB:

  send          sendto()/sendfile(): the bytes themselves, and on loopback the receiver's TCP in softirq
  sleep         nanosleep()/clock_nanosleep()/ppoll()/poll(): pacing's wait, and the wake from it
  count reads   recvmsg(): the replay reading the server's counts (the lag's measurement)
  probe code    user space: the probe's own code (the schedule's arithmetic, the reports)
  other         anything else in the kernel (timer interrupts, page faults, other calls)

The sender's CPU seconds per GiB move by a third between runs on a VM (replay_cost_ab.py), so compare
each run's split more than its total: what pacing adds beyond streaming the same bytes is the replay's
sleep, count reads and probe code against --rate's. Each run is made --repeat times (interleaved, the
order turned). perf's own sampling costs the profiled sender some CPU in both runs alike.

    python3 bench/replay_profile.py [--rate 1000] [--seconds 15] [--repeat 2] [--frequency 3917]
                                    [--message-size 1M] [--binary PATH]

Needs perf (Debian linux-perf) and root or kernel.perf_event_paranoid <= 1; a built redoprobe (make
probe). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rehearsal_pacing as pacing

CATEGORIES = {
    "send": ("__sys_sendto", "__x64_sys_sendto", "__x64_sys_sendfile64", "do_sendfile"),
    "sleep": ("__x64_sys_nanosleep", "__x64_sys_clock_nanosleep", "__x64_sys_ppoll", "__x64_sys_poll"),
    "count reads": ("__sys_recvmsg", "__x64_sys_recvmsg"),
}
KERNEL_FROM = 0xFFFF800000000000  # x86-64: addresses above are the kernel's


def categorize(block: str) -> str:
    frames = [line.split(None, 1) for line in block.strip().splitlines()]
    symbols = [f[1] if len(f) > 1 else "" for f in frames]
    for name, entries in CATEGORIES.items():
        if any(s in entries for s in symbols):
            return name
    leaf = int(frames[0][0], 16) if frames and frames[0] else 0
    return "probe code" if leaf < KERNEL_FROM else "other"


def profile(kind: str, schedule: Path, seconds: int, bits: str, frequency: int, size: str) -> dict:
    common = ["--conns", "1", "--message-size", size]
    if kind == "replay":
        args = ["--schedule", str(schedule), "--warmup", "0", *common]
    else:
        args = ["--duration", str(seconds), "--rate", bits, *common]
    with tempfile.TemporaryDirectory() as work:
        data = Path(work) / "perf.data"
        perf = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(frequency), "-g", "-o", str(data), "--"]
        run = pacing.run_pair(args, client_prefix=perf)
        script = subprocess.run(
            ["perf", "script", "-i", str(data), "-F", "ip,sym"], capture_output=True, text=True, check=True
        ).stdout
    counts = dict.fromkeys([*CATEGORIES, "probe code", "other"], 0)
    for block in script.split("\n\n"):
        if block.strip():
            counts[categorize(block)] += 1
    gib = (run.end.get("bytes_received") or run.end["bytes_sent"]) / 2**30
    return {"counts": counts, "gib": gib}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=1000, help="MiB/s")
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--frequency", type=int, default=3917, help="samples per CPU second")
    parser.add_argument("--binary", type=Path, default=pacing.REDOPROBE, help="the redoprobe build to profile")
    parser.add_argument("--message-size", default="1M", help="bytes per send, both runs (default 1M)")
    args = parser.parse_args()
    pacing.REDOPROBE = args.binary.resolve()
    if shutil.which("perf") is None:
        print("perf is not installed (Debian: linux-perf): no profile", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as work:
        return profile_all(args, Path(work) / "constant.txt")


def profile_all(args: argparse.Namespace, schedule: Path) -> int:
    """Each run of each kind, interleaved (the order turned every repetition), a line each."""
    pacing.constant_schedule(schedule, args.rate, args.seconds, 1)
    bits = str(round(args.rate * pacing.MIB * 8))
    names = [*CATEGORIES, "probe code", "other"]
    print(
        f"# {args.rate:g} MiB/s, {args.seconds} s runs, {args.message_size} sends, cpu-clock at {args.frequency} "
        f"Hz; each run's CPU s/GiB by where its samples fell, and in all"
    )
    print(f"{'run':>10} " + " ".join(f"{n:>12}" for n in names) + f" {'CPU s/GiB':>10}")
    kinds = ["replay", "rate"]
    for k in range(args.repeat):
        for kind in kinds[k % 2 :] + kinds[: k % 2]:
            run = profile(kind, schedule, args.seconds, bits, args.frequency, args.message_size)
            total = sum(run["counts"].values())
            shares = " ".join(f"{run['counts'][n] / args.frequency / run['gib']:>12.4f}" for n in names)
            print(f"{kind + ' ' + str(k + 1):>10} {shares} {total / args.frequency / run['gib']:>10.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
