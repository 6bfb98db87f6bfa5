"""The schedule a rehearsal replays (pure): per connection, the bytes each slot of the window generates,
written in the probe's format (`redoprobe client --schedule FILE`).

The format is a fixed contract with the probe: text, one slot per line, `CONNECTION OFFSET_SECONDS
BYTES` separated by blanks; connections numbered from 0 (connection i replays the i-th thread by
thread number), the offset from the start of the replay (non-decreasing per connection), `#` starts
a comment. A line's bytes are generated evenly over [offset, offset + w), w = min(the connection's
next offset - offset, its smallest positive offset gap; 0.1 s without one), as the probe replays it.
Each connection ends with a zero-byte line where its last slot ends: an offset, not a slot, which gives
the last slot its width (read back, zero-byte lines are not slots).

Each piece of a thread's replay series (start, end, bytes/s) is spread evenly over the slots it
covers; the bytes are whole numbers, the rounding carried from slot to slot, so a thread's total is
round(its bytes in the window x scale). The speedup is the probe's to apply: the text is real time.
Units: seconds, bytes, bytes per second.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property

import numpy as np

from redolab.core.units import format_byte_rate, format_count, format_duration
from redolab.redo.requirement import Requirement
from redolab.redo.windows import Segment
from redolab.rehearsals.window import MAX_WINDOW_SECONDS, RehearsalRefused, Window, clipped

MAX_THREADS = 1024
MAX_LINES = 2_000_000  # ~40 MB of text: what the probe reads before it starts
MAX_BYTES_PER_SECOND = 1e12  # one slot's rate after scale: 8 Tbit/s is no link's
MIN_SLOT_SECONDS = 0.1
SLOT_STEPS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0)  # coarser slots, tried in turn
MAX_SCALE = 1000.0
SPEEDUP_RANGE = (1.0, 3600.0)
NOTES_SEPARATOR = " | "  # the header's notes line: what is left out of the replay, or thin
FORMAT_LINE = "# redolab rehearsal schedule: CONNECTION OFFSET_SECONDS BYTES (bytes generated over the slot)"

Slot = tuple[float, int]  # (offset seconds from the start of the replay, bytes)


class ScheduleFormatError(ValueError):
    """A schedule text that breaks the format; the message starts with the line number."""


@dataclass(frozen=True)
class Schedule:
    """Per connection, the slots to replay, and the text the probe reads."""

    text: str
    threads: tuple[int, ...]  # connection i replays thread threads[i]
    connections: tuple[tuple[Slot, ...], ...]  # per connection, offsets non-decreasing
    seconds: float  # the window's length (real time)
    slot_seconds: float | None  # None when a schedule read back does not say
    scale: float  # every byte of the history x scale
    speedup: float  # applied by the probe (the text is real time)
    label: str = ""  # the window, in words
    granularity: str = ""
    notes: tuple[str, ...] = ()  # threads left out of the replay and why, thin data: in words

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def connection_bytes(self) -> tuple[int, ...]:
        return tuple(sum(b for _, b in slots) for slots in self.connections)

    @property
    def total_bytes(self) -> int:
        return sum(self.connection_bytes)

    @property
    def line_count(self) -> int:
        return sum(len(slots) for slots in self.connections)

    @property
    def thread_bytes(self) -> dict[int, int]:
        return dict(zip(self.threads, self.connection_bytes, strict=True))


def build_schedule(
    requirement: Requirement,
    window: Window,
    *,
    slot_seconds: float | None = None,
    scale: float = 1.0,
    speedup: float = 1.0,
) -> Schedule:
    """The window's redo of every thread in `window.threads`, slot by slot. `slot_seconds` None: 1 s
    for windows over 10 minutes, else 0.1 s; made coarser (SLOT_STEPS) when the schedule would have
    more than MAX_LINES lines. Raises RehearsalRefused naming the limit it breaks."""
    _check_arguments(window, scale, speedup)
    slot = _slot(window, slot_seconds)
    pieces = []
    for thread in window.threads:
        need = requirement.threads.get(thread)
        if need is None:
            raise RehearsalRefused(f"thread {thread} of the window is not in the redo history")
        pieces.append(clipped(need.replay, window.start, window.end))
    _check_rates(pieces, window, scale)
    every = tuple(_slots(p, window.start, window.seconds, slot, scale) for p in pieces)
    if not any(every):  # a slot holds whole bytes only: a tiny scale rounds every one to nothing
        raise RehearsalRefused(
            f"scale: the window's redo x {scale:g} is not one whole byte; nothing to replay "
            "(1 replays the redo as recorded)",
            field="scale",
        )
    # a thread with no whole byte in the window has nothing to send: no connection (the probe counts its
    # connections from the lines, and a node pair would run for nothing), said in the notes
    kept = [(thread, slots) for thread, slots in zip(window.threads, every, strict=True) if slots]
    quiet = [
        f"thread {t} has no redo in the window{_after_scale(scale)}: not in the replay"
        for t, slots in zip(window.threads, every, strict=True)
        if not slots
    ]
    threads, connections = tuple(t for t, _ in kept), tuple(slots for _, slots in kept)
    window = replace(window, threads=threads, notes=(*window.notes, *quiet))
    return Schedule(
        text=render(_header(window, slot, scale), connections, slot),
        threads=threads,
        connections=connections,
        seconds=window.seconds,
        slot_seconds=slot,
        scale=scale,
        speedup=speedup,
        label=window.label,
        granularity=window.granularity,
        notes=window.notes,
    )


def _after_scale(scale: float) -> str:
    return "" if scale == 1 else f" after scale {scale:g}"


def _check_arguments(window: Window, scale: float, speedup: float) -> None:
    if not (math.isfinite(scale) and 0 < scale <= MAX_SCALE):
        raise RehearsalRefused(
            f"scale: {scale:g} is outside (0, {MAX_SCALE:g}]; 1 replays the redo as recorded", field="scale"
        )
    low, high = SPEEDUP_RANGE
    if not (math.isfinite(speedup) and low <= speedup <= high):
        raise RehearsalRefused(
            f"speedup: {speedup:g} is outside [{low:g}, {high:g}]; 1 replays in real time", field="speedup"
        )
    if len(window.threads) > MAX_THREADS:
        raise RehearsalRefused(
            f"threads: {len(window.threads):,} threads, over the {MAX_THREADS:,} connections a rehearsal opens "
            "(one per thread)"
        )
    if not window.threads:
        raise RehearsalRefused("threads: the window has no thread to replay")
    if window.seconds > MAX_WINDOW_SECONDS:
        raise RehearsalRefused(
            f"window: {format_duration(window.seconds)} is longer than {format_duration(MAX_WINDOW_SECONDS)}"
        )


def _slot(window: Window, requested: float | None) -> float:
    """The slot length: as asked (or the default), then coarser until the lines fit."""
    slot = requested if requested is not None else (1.0 if window.seconds > 600 else MIN_SLOT_SECONDS)
    if not (math.isfinite(slot) and slot >= MIN_SLOT_SECONDS - 1e-12):
        raise RehearsalRefused(f"slot: {slot:g} s is under the {MIN_SLOT_SECONDS:g} s the probe keeps to")
    threads = len(window.threads)
    for candidate in (slot, *(s for s in SLOT_STEPS if s > slot)):
        if threads * (math.ceil(window.seconds / candidate - 1e-9) + 1) <= MAX_LINES:  # + each one's end line
            return candidate
    raise RehearsalRefused(
        f"lines: {threads} threads over {format_duration(window.seconds)} need more than {MAX_LINES:,} lines "
        f"even in {SLOT_STEPS[-1]:g} s slots; choose a shorter window"
    )


def _check_rates(pieces: list[list[Segment]], window: Window, scale: float) -> None:
    for thread, segments in zip(window.threads, pieces, strict=True):
        fastest = max(segments, key=lambda s: s[2], default=None)
        if fastest is not None and fastest[2] * scale > MAX_BYTES_PER_SECOND:
            raise RehearsalRefused(
                f"rate: thread {thread} at {fastest[0].isoformat()} replays at {format_byte_rate(fastest[2] * scale)} "
                f"after scale {scale:g}, over the 1 TB/s (10^12 bytes per second) a slot may carry; "
                "choose a smaller scale",
                field="scale",
            )


def _slots(pieces: list[Segment], start: datetime, seconds: float, slot: float, scale: float) -> tuple[Slot, ...]:
    """One thread's pieces (clipped to the window) as whole bytes per slot, the rounding carried."""
    if not pieces:
        return ()
    count = math.ceil(seconds / slot - 1e-9)
    edges = np.minimum(np.arange(count + 1) * slot, seconds)
    offsets = np.array([[(s - start).total_seconds(), (e - start).total_seconds()] for s, e, _ in pieces]).ravel()
    sizes = np.array([rate * (e - s).total_seconds() for s, e, rate in pieces])
    cumulative = np.repeat(np.concatenate(([0.0], np.cumsum(sizes))), 2)[1:-1]  # at each piece's start and end
    total = float(sum(sizes)) * scale
    exact = np.interp(edges, offsets, cumulative, left=0.0, right=cumulative[-1]) * scale
    exact[-1] = total  # the carried rounding ends exactly on the thread's total
    whole = np.maximum.accumulate(np.round(np.minimum(exact, total)))
    whole[-1] = round(total)
    sent = np.diff(whole).astype(np.int64)
    slots = np.flatnonzero(sent)
    # k x slot as the decimal the text writes (0.1 x 3 is 0.3, not 0.30000000000000004): whole steps of
    # 10^-decimals, divided once, give the same float as reading the written offset back
    steps = 10 ** _decimals(slot)
    offsets = (slots * round(slot * steps)) / steps
    return tuple(zip(offsets.tolist(), sent[slots].tolist(), strict=True))


def _decimals(slot: float) -> int:
    """Decimals that write every multiple of the slot exactly (0.1 -> 1, 0.25 -> 2, 1 -> 0)."""
    return next((d for d in range(7) if abs(slot * 10**d - round(slot * 10**d)) < 1e-9), 6)


def _number(value: float) -> str:
    """A float as text that reads back as the same float ('3600', '0.1', '2.5')."""
    return repr(float(value)).removesuffix(".0")


def _header(window: Window, slot: float, scale: float) -> list[str]:
    pairs = ", ".join(f"{i} = thread {t}" for i, t in enumerate(window.threads))
    return [
        FORMAT_LINE,
        f"# window: {window.label}",
        f"# seconds: {_number(window.seconds)}",
        f"# threads: {' '.join(map(str, window.threads))}",
        f"# connections: {pairs}",
        f"# slot_seconds: {_number(slot)}",
        f"# scale: {_number(scale)}",
        f"# granularity: {window.granularity}",
        *([f"# notes: {NOTES_SEPARATOR.join(window.notes)}"] if window.notes else []),
    ]


def render(header: list[str], connections: tuple[tuple[Slot, ...], ...], slot: float | None) -> str:
    """The header, then one line per non-empty slot in time order (connection order within a slot), and
    per connection a zero-byte line where its last slot ends: without a next offset the probe would take
    the last slot for 0.1 s long, generate its bytes that fast and hold them to 1 TB/s as such."""
    decimals = _decimals(slot) if slot else 6
    slots = sorted((offset, c, size) for c, items in enumerate(connections) for offset, size in items if size)
    if slot:
        ends = [(items[-1][0] + slot, c, 0) for c, items in enumerate(connections) if items]
        slots = sorted([*slots, *ends])
    lines = [*header, *(f"{c} {offset:.{decimals}f} {size}" for offset, c, size in slots)]
    return "\n".join(lines) + "\n"


def parse_schedule(text: str, *, speedup: float = 1.0) -> Schedule:
    """A schedule read back from its text (the header's comments when it has them). Raises
    ScheduleFormatError starting with the line number where the text breaks the format."""
    header: dict[str, str] = {}
    found: dict[int, list[Slot]] = {}
    last: dict[int, tuple[float, int]] = {}  # connection -> (offset, line)
    count = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# ") and ": " in line:
            key, _, value = line[2:].partition(": ")
            header.setdefault(key.strip(), value.strip())
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        count += 1
        if count > MAX_LINES:
            raise ScheduleFormatError(f"line {number}: more than {MAX_LINES:,} slots")
        connection, offset, size = _fields(fields, number)
        if connection in last and offset < last[connection][0]:
            before, where = last[connection]
            raise ScheduleFormatError(
                f"line {number}: connection {connection} goes back in time: offset {offset:g} after {before:g} "
                f"(line {where})"
            )
        last[connection] = (offset, number)
        found.setdefault(connection, [])
        if size:  # a zero-byte line only marks an offset (the end of the slot before it)
            found[connection].append((offset, size))
    return _read_back(text, header, found, max((o for o, _ in last.values()), default=0.0), speedup)


def _fields(fields: list[str], number: int) -> tuple[int, float, int]:
    if len(fields) != 3:
        raise ScheduleFormatError(
            f"line {number}: expected CONNECTION OFFSET_SECONDS BYTES, found {format_count(len(fields), 'field')}"
        )
    connection, offset, size = fields
    if not connection.isdigit() or int(connection) >= MAX_THREADS:
        raise ScheduleFormatError(
            f"line {number}: connection {connection!r} is not a whole number from 0 to {MAX_THREADS - 1}"
        )
    try:
        seconds = float(offset)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 <= seconds <= MAX_WINDOW_SECONDS):
        raise ScheduleFormatError(
            f"line {number}: offset {offset!r} is not a number of seconds from 0 to {MAX_WINDOW_SECONDS:g}"
        )
    if not size.isdigit():
        raise ScheduleFormatError(f"line {number}: bytes {size!r} is not a whole number of bytes")
    return int(connection), seconds, int(size)


def _read_back(
    text: str, header: dict[str, str], found: dict[int, list[Slot]], latest: float, speedup: float
) -> Schedule:
    try:
        threads = tuple(int(t) for t in header.get("threads", "").split())
        seconds = float(header["seconds"]) if "seconds" in header else None
        slot = float(header["slot_seconds"]) if "slot_seconds" in header else None
        scale = float(header.get("scale", "1"))
    except ValueError as error:
        raise ScheduleFormatError(f"header: {error}") from None
    width = max(len(threads), max(found, default=-1) + 1)
    if threads and len(threads) < width:
        raise ScheduleFormatError(
            f"header: {format_count(len(threads), 'thread')} named, but connection {width - 1} is used"
        )
    if seconds is None:
        seconds = latest + (slot or 0.0)
    return Schedule(
        text=text,
        threads=threads or tuple(range(width)),
        connections=tuple(tuple(found.get(c, ())) for c in range(width)),
        seconds=seconds,
        slot_seconds=slot,
        scale=scale,
        speedup=speedup,
        label=header.get("window", ""),
        granularity=header.get("granularity", ""),
        notes=tuple(header["notes"].split(NOTES_SEPARATOR)) if header.get("notes") else (),
    )
