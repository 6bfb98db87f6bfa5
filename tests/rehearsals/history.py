"""Generated per-log redo histories for the rehearsal tests, built into a Requirement the way the plan
builds one (redo.requirement.requirement over ImportSeries of RedoInterval rows)."""

from datetime import timedelta

from hypothesis import strategies as st

from redolab.redo.requirement import ImportSeries, requirement
from tests.planning.test_requirement import MIB, T0, row

__all__ = ["MIB", "T0", "bytes_between", "histories", "logs", "requirement_of", "row"]


def requirement_of(rows, filename="arch.csv"):
    return requirement([ImportSeries(1, filename, rows)], headroom_ratio=0.3)


def bytes_between(rows, thread, start, end):
    """A thread's bytes inside [start, end), each log's spread evenly (from the rows, not the model)."""
    total = 0.0
    for r in rows:
        if r.thread == thread:
            overlap = (min(r.end, end) - max(r.start, start)).total_seconds()
            total += r.bytes * max(0.0, overlap) / (r.end - r.start).total_seconds()
    return total


@st.composite
def logs(draw, thread: int, max_logs: int = 6):
    """One thread's archived logs: lengths 30 s to 10 min, gaps up to 2 min, whole MiB."""
    rows, clock = [], draw(st.integers(0, 120))
    for _ in range(draw(st.integers(1, max_logs))):
        seconds = draw(st.integers(30, 600))
        rows.append(row(thread, clock, seconds, draw(st.integers(1, 500))))
        clock += seconds + draw(st.integers(0, 120))
    return rows


@st.composite
def histories(draw, max_threads: int = 2):
    """Per-log histories of 1 to `max_threads` threads (RAC instances) over the same stretch."""
    count = draw(st.integers(1, max_threads))
    return [r for thread in range(1, count + 1) for r in draw(logs(thread))]


def seconds_after_t0(moment) -> float:
    return (moment - T0) / timedelta(seconds=1)
