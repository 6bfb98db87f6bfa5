"""The Db2 readers' patterns are linear in their input: each pathological line (long runs of spaces,
newlines, dashes, parentheses) costs at most about four times as much at 4N as at N. A ratio of CPU
times, never a time limit: a quadratic pattern gives about 16."""

import contextlib
import time

import pytest

from redolab.hadr import db2pd
from redolab.redo.parsers import RedoInputError, db2
from redolab.redo.parsers.db2_common import db2_time

N = 1000  # characters: 4N stays under db2pd's 4,096-character line limit
LINES = 60


def _cost(read, text) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(5):
            with contextlib.suppress(RedoInputError):
                read(text)
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


def _db2pd(text: str):
    return db2pd.parse(text.splitlines())


def _times(text: str):
    for line in text.splitlines():
        with contextlib.suppress(RedoInputError):
            db2_time(line, "x")


DATABASE = "Database Member 0 -- Database X -- Active"
DATED = DATABASE + " -- Date 11/20/2026 10:00:00\n"
CASES = {
    "database line with spaces": (_db2pd, lambda n: (DATABASE + " " * n + "x\n") * LINES),
    "database line with dashes": (_db2pd, lambda n: (DATABASE[:-6] + "- " * (n // 2) + "\n") * LINES),
    "date line with spaces": (_db2pd, lambda n: DATABASE + "\n" + ("-- Date 1" + " " * n + "x\n") * LINES),
    "key with parentheses": (_db2pd, lambda n: DATED + ("A" + "(" * n + "\n") * LINES),
    "time with spaces": (_times, lambda n: ("2026-11-20 10:00:00" + " " * n + "x\n") * LINES),
    "time of spaces and signs": (_times, lambda n: (" +" * (n // 2) + "\n") * LINES),
    "detection over blank lines": (db2.detect, lambda n: "HADR_ROLE" + "\n" * (n * 20) + " \t" * (n * 10)),
    "detection over spaces": (db2.detect, lambda n: ("2026-11-20 10:00:00" + " " * n + "\n") * LINES),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_patterns_cost_grows_linearly(case):
    read, make = CASES[case]
    small, large = _cost(read, make(N)), _cost(read, make(4 * N))
    assert large / small < 10, f"{case}: {small:.4f} s at N, {large:.4f} s at 4N"
