#!/usr/bin/env python3
"""Import large result files into SQLite through redolab's import service, end to end: an iperf3 -J
file of a one-hour test with 8 streams at 1 s intervals (built from the captured test fixture),
an oratcptest log of 200 tests and one oratcptest test of 24 h at 1 s intervals. Prints file size, seconds, MiB/s and the process's peak memory;
asserts nothing.

    python3 -m uv run python bench/result_import.py [--seconds 3600] [--streams 8] [--tests 200]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "runs" / "data"


def iperf3_file(seconds: int, streams: int) -> bytes:
    document = json.loads((DATA / "iperf3_two_streams.json").read_text())
    template = document["intervals"][0]
    stream = template["streams"][0]
    intervals = []
    for second in range(seconds):
        interval = copy.deepcopy(template)
        interval["streams"] = [
            {**stream, "socket": 5 + n, "start": second, "end": second + 1, "seconds": 1} for n in range(streams)
        ]
        interval["sum"] = {**template["sum"], "start": second, "end": second + 1, "seconds": 1}
        intervals.append(interval)
    document["intervals"] = intervals
    document["start"]["test_start"]["num_streams"] = streams
    document["start"]["test_start"]["duration"] = seconds
    return json.dumps(document, indent=2).encode()


def oratcptest_file(tests: int) -> bytes:
    one = (DATA / "oratcptest_async.txt").read_text()
    return "\n".join(one for _ in range(tests)).encode()


def oratcptest_long_test(seconds: int) -> bytes:
    """One oratcptest test of `seconds` one-second intervals (a day by default), past midnight."""
    header = (DATA / "oratcptest_async.txt").read_text().split("(11:39:16) The server is ready.")[0]
    header = header.replace("= 20 seconds", "= 1 seconds").replace("= 2 minutes", f"= {seconds} seconds")
    lines = ["(00:00:00) The server is ready."]
    for second in range(1, seconds + 1):
        clock = second % 86400
        lines.append(f"({clock // 3600:02d}:{clock % 3600 // 60:02d}:{clock % 60:02d})         71.322 Mbytes/s")
    lines += ["(00:00:00) Test finished.", "                  Avg. throughput = 71.322 Mbytes/s"]
    return (header + "\n".join(lines) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3600)
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--tests", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        env = {**os.environ, "REDOLAB_DATA_DIR": directory}
        subprocess.run([str(Path(sys.executable).parent / "redolab"), "db", "upgrade"], env=env, check=True, cwd=ROOT)
        os.environ["REDOLAB_DATA_DIR"] = directory
        from redolab.core.db import make_engine, make_sessionmaker
        from redolab.environments.schemas import EnvironmentCreate, HostCreate
        from redolab.environments.service import create_environment, create_host
        from redolab.runs import service
        from redolab.runs.schemas import ResultImport

        engine = make_engine(f"sqlite:///{directory}/redolab.db")
        with make_sessionmaker(engine)() as session:
            environment = create_environment(session=session, env_in=EnvironmentCreate(name="bench"))
            hosts = [
                create_host(
                    session=session,
                    environment=environment,
                    host_in=HostCreate(role=role, name=role, transport="local"),
                )
                for role in ("primary", "standby")
            ]
            import_in = ResultImport(client_host_id=hosts[0].id, server_host_id=hosts[1].id, test_date="2026-03-04")
            for name, data in (
                (f"iperf3, {args.seconds} s x {args.streams} streams", iperf3_file(args.seconds, args.streams)),
                (f"oratcptest, {args.tests} tests", oratcptest_file(args.tests)),
                ("oratcptest, one 24 h test at 1 s intervals", oratcptest_long_test(86400)),
            ):
                started = time.perf_counter()
                runs = service.import_results(
                    session=session,
                    environment=environment,
                    import_in=import_in,
                    files=[(name, data)],
                    requested_by="bench",
                )
                elapsed = time.perf_counter() - started
                mib = len(data) / 2**20
                print(
                    f"{name}: {mib:.1f} MiB, {len(runs)} run(s), {elapsed:.2f} s, {mib / elapsed:.1f} MiB/s, "
                    f"{sum(len(service.run_lines(session=session, run=r)) for r in runs)} intervals stored"
                )
        engine.dispose()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of the importing process: {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
