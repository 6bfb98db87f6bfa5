"""The instantiation copy as RMAN will run it (pure): RESTORE ... FROM SERVICE over N channels on each
of M standby nodes, file by file (or section by section with SECTION SIZE), then the redo that piled
up meanwhile and the catch-up. Units: bytes, seconds, bytes per second.

The schedule. Every file is one piece of work; with SECTION SIZE a file larger than the section is cut
into sections of that size (RMAN raises the size so that no file has more than 256 sections: Oracle's
Backup and Recovery Reference, BACKUP, SECTION SIZE, stated for backups and assumed for the backup sets
a restore from service builds on the source: User's Guide, "About Restoring Files Over the Network").
The pieces, largest first, form one queue; a channel that is free takes the next piece (channels
interleaved over the nodes, so the largest pieces spread over them). That is the longest-processing-time
schedule: with channels of one speed, the copy time is the largest channel's load / the channel's rate,
and a file larger than the even share (total / channels) caps it: nothing can copy it faster than one
channel.

The rates. On a node, `a` busy channels carry min(a x per-channel rate, the node pair's measured
aggregate, the standby node's write rate) together, shared evenly; all nodes together at most the
link's payload rate. A channel left alone after the others finish speeds up to its own per-channel
rate (TCP hands it the freed share), so the model is a fluid one, recomputed at every piece's end.

The section size that lifts the cap: the largest power of two from 1 GiB to 1 TiB at which the copy
takes at most 5 % more than the even share (total bytes / every channel's rate together): coarse
sections cost fewer round trips, fine ones balance better; None when no candidate gets that close
(the node's aggregate or the link caps it, not the files).

After the copy: the redo generated during a copy of that length is the worst window of that length
in the stored history (planning.rpo.worst_window), it waits on the primary's archive destination, and
the catch-up is the RPO model's drain of that backlog at the chosen link while the later redo keeps
coming (planning.rpo.catch_up_seconds), the same as after an outage of the copy's length.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from redolab.planning import rpo
from redolab.planning.network import require_positive
from redolab.planning.transport import Pieces

GIB = 2**30
MAX_SECTIONS = 256  # per file: RMAN raises the section size above this count
SECTION_CANDIDATES = tuple(GIB * 2**k for k in range(11))  # 1 GiB .. 1 TiB
LIFTED_WITHIN = 0.05  # a section size lifts the cap when the copy is within 5 % of the even share


@dataclass(frozen=True)
class Datafile:
    file_id: int
    tablespace: str
    bytes: int
    bigfile: bool


@dataclass(frozen=True)
class CopySettings:
    """How the team will run the copy (the environment's settings) and the datafiles it copies."""

    channels_per_node: int
    nodes: int | None = None  # None: every RAC node of the standby
    section_bytes: int | None = None  # SECTION SIZE; None: whole files
    archive_free_bytes: int | None = None  # the primary's archive destination free space
    datafiles: tuple[Datafile, ...] = ()  # () until a collection lists them (DBA_DATA_FILES)


@dataclass(frozen=True)
class ChannelRates:
    """What the channels of one node pair carry (bytes/s): one channel alone, the pair's aggregate at
    its best measured connection count, the standby node's write rate; the link for every node."""

    per_channel_bytes_per_second: float
    pair_aggregate_bytes_per_second: float | None = None
    standby_write_bytes_per_second: float | None = None  # per standby node (a disk test)
    link_bytes_per_second: float | None = None  # payload, all nodes together

    def node_rate(self, busy: int) -> float:
        """All `busy` channels of one node together."""
        rate = busy * self.per_channel_bytes_per_second
        for cap in (self.pair_aggregate_bytes_per_second, self.standby_write_bytes_per_second):
            if cap is not None:
                rate = min(rate, cap)
        return rate


def pieces_of_files(files: list[Datafile], section_bytes: int | None) -> list[int]:
    """Each file's pieces in bytes, largest first: the file whole, or its sections (the last one shorter)."""
    pieces: list[int] = []
    for file in files:
        if section_bytes is None or file.bytes <= section_bytes:
            pieces.append(file.bytes)
            continue
        size = max(section_bytes, -(-file.bytes // MAX_SECTIONS))
        whole, rest = divmod(file.bytes, size)
        pieces.extend([size] * whole + ([rest] if rest else []))
    return sorted(pieces, reverse=True)


def makespan(pieces: list[int], *, channels_per_node: int, nodes: int, rates: ChannelRates) -> float:
    """Seconds until the last piece is copied: a queue of `pieces` (largest first) over the channels,
    each node's busy channels sharing its rate, all nodes at most the link (the fluid model above)."""
    require_positive(rates.per_channel_bytes_per_second, "per-channel rate")
    if channels_per_node < 1 or nodes < 1:
        raise ValueError("at least one channel on one node")
    if _steady(channels_per_node=channels_per_node, nodes=nodes, rates=rates):
        return _steady_makespan(pieces, channels_per_node * nodes, rates.per_channel_bytes_per_second)
    channel_node = [k % nodes for k in range(channels_per_node * nodes)]  # interleaved: big pieces spread
    left = [0.0] * len(channel_node)  # bytes left of each channel's current piece (0: idle)
    queue, now = iter(pieces), 0.0
    for k in range(len(left)):
        left[k] = float(next(queue, 0))
    while True:
        busy = [0] * nodes
        for k, remaining in enumerate(left):
            busy[channel_node[k]] += remaining > 0
        if not any(busy):
            return now
        speed = [rates.node_rate(b) / b if b else 0.0 for b in busy]
        total = sum(speed[n] * busy[n] for n in range(nodes))
        if rates.link_bytes_per_second is not None and total > rates.link_bytes_per_second:
            speed = [s * rates.link_bytes_per_second / total for s in speed]
        step = min(remaining / speed[channel_node[k]] for k, remaining in enumerate(left) if remaining > 0)
        now += step
        for k, remaining in enumerate(left):
            if remaining > 0:
                remaining -= step * speed[channel_node[k]]
                left[k] = remaining if remaining > 1e-6 * step * speed[channel_node[k]] else float(next(queue, 0))


def _steady(*, channels_per_node: int, nodes: int, rates: ChannelRates) -> bool:
    """No cap binds even with every channel busy: each channel runs at its own rate throughout."""
    full = rates.node_rate(channels_per_node)
    link = rates.link_bytes_per_second
    return full >= channels_per_node * rates.per_channel_bytes_per_second and (link is None or full * nodes <= link)


def _steady_makespan(pieces: list[int], channels: int, rate: float) -> float:
    """The same queue with every channel at `rate`: the channel free first (the lowest-numbered on a
    tie) takes the next piece."""
    free = [(0.0, k) for k in range(channels)]
    for piece in pieces:
        load, k = heapq.heappop(free)
        heapq.heappush(free, (load + piece, k))
    return max(load for load, _ in free) / rate


def even_share_seconds(total_bytes: int, *, channels_per_node: int, nodes: int, rates: ChannelRates) -> float:
    """The copy with every channel busy to the end: the total over all channels' rate together."""
    aggregate = nodes * rates.node_rate(channels_per_node)
    if rates.link_bytes_per_second is not None:
        aggregate = min(aggregate, rates.link_bytes_per_second)
    return total_bytes / aggregate


@dataclass(frozen=True)
class CopyPlan:
    channels_per_node: int
    nodes: int
    section_bytes: int | None
    total_bytes: int
    largest_file: Datafile
    copy_seconds: float  # with `section_bytes` (None: whole files)
    whole_files_seconds: float  # without SECTION SIZE
    even_share_seconds: float
    largest_file_seconds: float  # the largest file on one channel alone
    lifting_section_bytes: int | None  # the section size that lifts the cap (None: none does)
    lifted_seconds: float | None  # the copy at that section size

    @property
    def channels(self) -> int:
        return self.channels_per_node * self.nodes

    @property
    def capped_by_largest_file(self) -> bool:
        """Without SECTION SIZE the copy takes over 5 % more than the even share: no schedule of these
        rates beats the even share, so the excess is the whole files' granularity, the largest first."""
        return self.whole_files_seconds > self.even_share_seconds * (1 + LIFTED_WITHIN)

    def to_json(self) -> dict:
        return {
            "channels_per_node": self.channels_per_node,
            "nodes": self.nodes,
            "channels": self.channels,
            "section_bytes": self.section_bytes,
            "total_bytes": self.total_bytes,
            "largest_file_bytes": self.largest_file.bytes,
            "largest_file_tablespace": self.largest_file.tablespace,
            "largest_file_bigfile": self.largest_file.bigfile,
            "copy_seconds": self.copy_seconds,
            "whole_files_seconds": self.whole_files_seconds,
            "even_share_seconds": self.even_share_seconds,
            "largest_file_seconds": self.largest_file_seconds,
            "capped_by_largest_file": self.capped_by_largest_file,
            "lifting_section_bytes": self.lifting_section_bytes,
            "lifted_seconds": self.lifted_seconds,
        }


def lifting_section(
    files: list[Datafile], *, channels_per_node: int, nodes: int, rates: ChannelRates
) -> tuple[int | None, float | None]:
    """The largest candidate section size whose copy is within 5 % of the even share, and that copy."""
    shape = {"channels_per_node": channels_per_node, "nodes": nodes, "rates": rates}
    even = even_share_seconds(sum(f.bytes for f in files), **shape)
    for size in reversed(SECTION_CANDIDATES):
        seconds = makespan(pieces_of_files(files, size), **shape)
        if seconds <= even * (1 + LIFTED_WITHIN):
            return size, seconds
    return None, None


def plan_copy(
    files: list[Datafile],
    *,
    channels_per_node: int,
    nodes: int,
    rates: ChannelRates,
    section_bytes: int | None = None,
) -> CopyPlan:
    """The copy of `files` with and without SECTION SIZE, and the section size that lifts the cap."""
    if not files:
        raise ValueError("no datafiles")
    if section_bytes is not None:
        require_positive(section_bytes, "section size")
    shape = {"channels_per_node": channels_per_node, "nodes": nodes, "rates": rates}
    whole = makespan(pieces_of_files(files, None), **shape)
    copy = whole if section_bytes is None else makespan(pieces_of_files(files, section_bytes), **shape)
    largest = max(files, key=lambda f: (f.bytes, -f.file_id))
    alone = largest.bytes / min(rates.node_rate(1), rates.link_bytes_per_second or float("inf"))
    lifting, lifted = lifting_section(files, **shape)
    total = sum(f.bytes for f in files)
    return CopyPlan(
        channels_per_node,
        nodes,
        section_bytes,
        total,
        largest,
        copy,
        whole,
        even_share_seconds(total, **shape),
        alone,
        lifting,
        lifted,
    )


@dataclass(frozen=True)
class PileUp:
    """The redo generated during the copy, whether it fits the archive destination, and the catch-up."""

    copy_seconds: float
    redo_bytes: float  # the worst window of the copy's length in the history
    history_seconds: float
    archive_free_bytes: float | None
    link_bytes_per_second: float | None
    catch_up_seconds: float | None  # None: no link, or the link does not catch up before the history ends

    @property
    def history_shorter(self) -> bool:
        """The copy outlasts the history: the redo counted is the whole history's, a lower bound."""
        return self.copy_seconds > self.history_seconds

    @property
    def fits(self) -> bool | None:
        if self.archive_free_bytes is None:
            return None
        return self.redo_bytes <= self.archive_free_bytes

    def to_json(self) -> dict:
        return {
            "copy_seconds": self.copy_seconds,
            "redo_bytes": self.redo_bytes,
            "history_seconds": self.history_seconds,
            "history_shorter": self.history_shorter,
            "archive_free_bytes": self.archive_free_bytes,
            "fits_archive": self.fits,
            "link_bytes_per_second": self.link_bytes_per_second,
            "catch_up_seconds": self.catch_up_seconds,
        }


def pile_up(
    history: Pieces, copy_seconds: float, *, link_bytes_per_second: float | None, archive_free_bytes: float | None
) -> PileUp:
    """The redo of the worst window of the copy's length and its catch-up at the link (the RPO model's drain)."""
    span = float(history.bounds[-1] - history.bounds[0])
    redo, catch_up = rpo.worst_window(history, copy_seconds)[0], None
    if link_bytes_per_second is not None:
        redo, catch_up = rpo.catch_up_seconds(history, link_bytes_per_second, copy_seconds)
    if copy_seconds > span:
        catch_up = None  # the history cannot say what follows a copy longer than itself
    return PileUp(copy_seconds, redo, span, archive_free_bytes, link_bytes_per_second, catch_up)
