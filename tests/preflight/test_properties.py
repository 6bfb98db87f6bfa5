"""Rules every input keeps: only an EvidenceError or a result, rows and figures within bounds, and time
linear in the input (LESSONS.md, Inputs: long runs of spaces, newlines, dashes and separators at N and 4N).

The inputs are the fixtures mutated two ways: line edits (lines deleted, duplicated, swapped, cut, random
Unicode and DGMGRL-like text inserted) and the project's import fuzzer's byte mutations (tests/fuzzing.py:
numbers replaced by extremes, bytes flipped, UTF-16, CR line ends, decimal commas, headings cut)."""

from __future__ import annotations

import math
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.preflight.errors import EvidenceError
from redolab.preflight.evidence import STATUSES
from redolab.preflight.recovery import MAX_BYTES, MAX_BYTES_PER_SECOND, MAX_SECONDS, parse_recovery_progress
from redolab.preflight.text import read_text
from redolab.preflight.validate import KINDS, parse_validate
from tests.fuzzing import MUTATIONS, Seed, mutate
from tests.preflight.helpers import FIXTURES

NAMES = sorted(path.name for path in FIXTURES.glob("*.txt"))
SNIPPETS = [
    "DGMGRL> validate database orcl", "DGMGRL> VALIDATE NETWORK CONFIGURATION FOR ALL;", "DGMGRL>",
    'Checking connectivity from instance "a" on database "b to instance "c" on database "d"...', "Failed.",
    "Succeeded.", "  Ready for Switchover:  Maybe", "Warning:", "Error: ORA-",
    "  Current Log File Groups Configuration:",
    "    1  x  y  Insufficient SRLs", "At instance 'a' of member 'b'", "  Connected to instance 'a' at member 'b'",
    '"14-OCT-25","Media Recovery","Active Apply Rate","KB/sec",-1,0,', "Parameter    a Value   b Value", "\x00",
    "\r", "\ufeff", "\u2028", "\x1b[2J", " " * 5000, "-" * 300, ",;" * 50, '"' * 99, "a" * 4001,
]  # fmt: skip
EDITS = st.lists(
    st.tuples(
        st.sampled_from(["delete", "duplicate", "swap", "truncate", "insert", "snippet"]),
        st.integers(0, 10_000),
        st.integers(0, 10_000),
        st.text(max_size=40),
        st.sampled_from(SNIPPETS),
    ),
    max_size=6,
)


def _edit(text: str, edits) -> str:
    lines = text.split("\n")
    for operation, i, j, unicode_text, snippet in edits:
        i, j = i % len(lines), j % len(lines)
        if operation == "delete" and len(lines) > 1:
            del lines[i]
        elif operation == "duplicate":
            lines.insert(j, lines[i])
        elif operation == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif operation == "truncate":
            lines[i] = lines[i][: j % (len(lines[i]) + 1)]
        elif operation == "insert":
            lines[i] = lines[i][:j] + unicode_text + lines[i][j:]
        else:
            lines.insert(i, snippet)
    return "\n".join(lines)


def _parse(name: str, text: str):
    if name.startswith("recovery"):  # a fixture's name, or a kind of the timing test
        return parse_recovery_progress(text, source=name)
    return parse_validate(text, source=name)


def _check(result, text: str) -> None:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    if hasattr(result, "rows"):
        assert result.kind in KINDS and result.member and result.rows
        for item in result.rows:
            assert item.status in STATUSES and 1 <= item.line <= lines
            assert not any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in item.detail + item.member + result.member)
        return
    bounds = {
        "active_apply_bytes_per_second": MAX_BYTES_PER_SECOND, "average_apply_bytes_per_second": MAX_BYTES_PER_SECOND,
        "maximum_apply_bytes_per_second": MAX_BYTES_PER_SECOND, "redo_applied_bytes": MAX_BYTES,
        "apply_lag_seconds": MAX_SECONDS,
    }  # fmt: skip
    for field, bound in bounds.items():
        figure = getattr(result, field)
        if figure is not None:
            assert math.isfinite(figure.value) and 0 <= figure.value <= bound and 1 <= figure.line <= lines


def _survives(name: str, text: str) -> None:
    try:
        result = _parse(name, text)
    except EvidenceError as error:
        assert error.source == name and str(error).startswith(f"{name}, ")
        return
    _check(result, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), edits=EDITS)
def test_edited_fixtures_give_a_result_or_an_evidence_error(name, edits):
    _survives(name, _edit((FIXTURES / name).read_text(encoding="utf-8"), edits))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NAMES),
    seed=st.integers(0, 2**32 - 1),
    names=st.one_of(st.none(), st.lists(st.sampled_from(sorted(set(MUTATIONS) - {"json", "json-ratio"})), max_size=3)),
)
def test_the_import_fuzzers_mutations_give_a_result_or_an_evidence_error(name, seed, names):
    data = (FIXTURES / name).read_bytes()
    _, mutated = mutate(random.Random(seed), Seed("preflight", name, data), names)
    try:
        text = read_text(mutated, source=name)
    except EvidenceError:
        return
    _survives(name, text)


PROMPTS = {
    "database": "DGMGRL> validate database verbose orclstby\n  Database Role:  Physical standby database\n",
    "strict": "DGMGRL> validate database orclstby strict all\n  Ready for Switchover:  Yes\n",
    "network": "DGMGRL> validate network configuration for all\n",
    "identifier": "DGMGRL> validate dgconnectidentifier orcl\nAt instance a of member 'b'\n",
    "spfile": "DGMGRL> validate database orclstby spfile\n  Parameter   orcl Value   orclstby Value\n",
    "recovery": '"START_TIME","TYPE","ITEM","UNITS","SOFAR","TOTAL","TIMESTAMP"\n',
}
FILLERS = [
    " ", "-", '"', ",", ";", ":", "x:", "Checking connectivity from instance \"a\" on database \"", "(",
    "Error: ", "    1   ", "ab ", "'", "..."
]  # fmt: skip


def _filler(kind: str, count: int, width: int) -> str:
    lines = []
    for i in range(count):
        piece = FILLERS[i % len(FILLERS)]
        lines.append((piece * (width // len(piece) + 1))[:width])
    tail = '\n"14-OCT-25","Media Recovery","Active Apply Rate","KB/sec",1,0,\n' if kind == "recovery" else "\n"
    return PROMPTS[kind] + "\n".join(lines) + tail


def _seconds(kind: str, text: str) -> float:
    """The least CPU time of three reads (process time: a busy machine's other processes do not count)."""
    best = math.inf
    for _ in range(3):
        started = time.process_time()
        _survives(kind, text)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("kind", PROMPTS)
@pytest.mark.parametrize(("count", "width"), [(60, 1000), (6000, 40)])  # long runs in a line; many lines
def test_time_is_linear_in_the_input(kind, count, width):
    """4N of input takes about 4 times N, never 16 (quadratic): the bound leaves room for a busy machine."""
    small = _seconds(kind, _filler(kind, count, width))
    large_text = _filler(kind, count * 4 if width == 40 else count, width * 4 if width == 1000 else width)
    assert len(large_text.encode()) <= 1024 * 1024
    large = _seconds(kind, large_text)
    assert large <= 10 * small + 0.25, (small, large)
