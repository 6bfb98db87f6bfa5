#!/usr/bin/env python3
"""Import a generated 1,000,000-row archived-log CSV into SQLite, end to end; print rows/s and
the peak memory of the importing process and of its parsing process (large files are parsed in a
second process). Prints figures; asserts nothing.

    python3 bench/redo_import.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generate(path: Path, rows: int) -> None:
    """Two RAC threads of 4-6 minute logs (each log starts when the previous one ended), GV$-style
    columns; every 50th log is listed for a second archive destination too."""
    clock = {1: datetime(2022, 1, 1, 0, 0, 0), 2: datetime(2022, 1, 1, 0, 1, 37)}
    with open(path, "w") as out:
        out.write("INST_ID,THREAD#,SEQUENCE#,RESETLOGS_ID,DEST_ID,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE\n")
        written, sequence = 0, 0
        while written < rows:
            sequence += 1
            for thread in (1, 2):
                first = clock[thread]
                nxt = clock[thread] = first + timedelta(seconds=240 + (sequence * 7 + thread) % 120)
                blocks = 400_000 + (sequence * 7919 + thread * 104729) % 600_000
                for dest in (1, 2) if sequence % 50 == 0 else (1,):
                    if written >= rows:
                        break
                    out.write(
                        f"{thread},{thread},{sequence},1088,{dest},{first:%d-%b-%y %H:%M:%S},"
                        f"{nxt:%d-%b-%y %H:%M:%S},{blocks},512\n"
                    )
                    written += 1


def child(path: str, database: str) -> None:
    sys.path.insert(0, str(ROOT / "backend"))
    from redolab.core.db import make_engine, make_sessionmaker
    from redolab.core.migrate import upgrade
    from redolab.environments.schemas import EnvironmentCreate
    from redolab.environments.service import create_environment
    from redolab.redo import service

    engine = make_engine(f"sqlite:///{database}")
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        environment = create_environment(session=session, env_in=EnvironmentCreate(name="bench"))
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        record = service.import_file(
            session=session, environment=environment, path=Path(path), filename="bench.csv", imported_by="bench"
        )
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
    mine = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    theirs = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    parser = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the parsing process, if any
    print(
        f"{record.rows_read} {record.rows_kept} {elapsed:.3f} {own:.0f} {parser:.0f} {mine:.2f} "
        f"{theirs.ru_utime + theirs.ru_stime:.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        csv_path, database = Path(scratch) / "archived_logs.csv", Path(scratch) / "redolab.db"
        generate(csv_path, args.rows)
        size = csv_path.stat().st_size
        process = subprocess.Popen(
            [sys.executable, __file__, "--child", str(csv_path), str(database)], stdout=subprocess.PIPE, text=True
        )
        out = process.stdout.read()
        _, status, _usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            print("import failed", file=sys.stderr)
            return 1
        rows_read, rows_kept, seconds, own, parser, own_cpu, parser_cpu = out.split()
        print(
            f"file: {int(rows_read):,} rows, {size / 2**20:.1f} MiB; kept {int(rows_kept):,} (the rest: 2nd destination)"
        )
        print(f"import into SQLite: {float(seconds):.2f} s = {int(rows_read) / float(seconds):,.0f} rows/s")
        print(f"CPU time: importing process {own_cpu} s, parsing process {parser_cpu} s ({os.cpu_count()} CPUs)")
        print(
            f"peak memory: importing process {own} MiB, parsing process {parser} MiB "
            f"(together at most {int(own) + int(parser)} MiB)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
