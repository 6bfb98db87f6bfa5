"""Per-test CPU time, for finding what the suite spends its cores on: with REDOLAB_CPU_PROFILE set.

Each test's user + system CPU of the test process and of the children it reaped (servers, the CLI,
Chromium stopped at teardown) is appended to the file $REDOLAB_CPU_PROFILE names, one line
per test and phase: seconds of CPU, seconds of wall, node id, start (epoch seconds), xdist worker. Sum it with
`sort -t$'\\t' -k1 -rn cpu-profile.tsv | head`."""

from __future__ import annotations

import os
import resource
import time

import pytest


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall, start = _cpu(), time.monotonic(), time.time()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "-")
    line = f"{_cpu() - cpu:.2f}\t{time.monotonic() - wall:.2f}\t{item.nodeid}\t{start:.2f}\t{worker}\n"
    with open(os.environ["REDOLAB_CPU_PROFILE"], "a") as profile:
        profile.write(line)
