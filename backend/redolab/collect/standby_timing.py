"""The standby's decompression cost, timed on the standby: the logs are on the primary, so one log's
first STANDBY_SAMPLE_BYTES are compressed there (zlib, the step's level) and the compressed bytes travel
through redolab, base64 text over the two SSH sessions, to a program on the standby that decompresses
them and times only its decompression calls. Nothing is written on either host.

1. On the primary, as the collection's user: `nice -n 19 python3 - LEVEL LIMIT PATH` with PACK_PROGRAM
   on standard input, which prints the log's compressed first LIMIT bytes as base64 lines (each line
   decodes by itself: base64.encodebytes makes 76-character lines of whole 3-byte groups).
2. On the standby, as its SSH user: `nice -n 19 python3 -c UNPACK_PROGRAM LIMIT` with those lines on
   standard input (the program is an argument, quoted by the transport, so that stdin is data): it decodes
   each line, decompresses it, and prints one JSON line (bytes in and out, CPU seconds of the
   decompression calls), stopping at LIMIT bytes out whatever the lines hold (they come from the primary:
   hostile input to the standby, bounded).

The figure is per GiB of redo as written, as the primary's is. A standby that cannot be reached, or a
step that fails, is a note: the primary's figures stay, labelled as the primary's.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial

from redolab.collect.commands import absolute_path, run_as
from redolab.collect.compressibility import (
    GIB,
    MAX_LINE_CHARS,
    MIB,
    ZLIB_LEVEL,
    HostSample,
    Outcome,
    host_figure,
    sample_in_collection,
)
from redolab.collect.errors import CollectionError
from redolab.collect.models import Collection
from redolab.collect.steps import SMALL_OUTPUT_CAPS, Cancelled, OutputCaps
from redolab.environments.connect import connect_host
from redolab.environments.models import Environment, Host, HostRole
from redolab.remote.transport import TransportError

STANDBY_SAMPLE_BYTES = 32 * MIB  # of one log: at most 32 MiB x 4/3 of base64 text through redolab
# What the primary may print for it: zlib adds at most 0.1 % to incompressible bytes, base64 4/3, a newline
# per 76 characters; 48 MiB and 700,000 lines of 77 bytes hold that (a primary printing more is refused)
PACK_CAPS = OutputCaps(total_bytes=48 * MIB, lines=700_000, line_bytes=128)
PACK_PROGRAM = """\
import base64, sys, zlib
level, limit, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
packer, read = zlib.compressobj(level), 0
with open(path, "rb") as log:
    while read < limit:
        chunk = log.read(min(1048576, limit - read))
        if not chunk:
            break
        read += len(chunk)
        sys.stdout.write(base64.encodebytes(packer.compress(chunk)).decode())
sys.stdout.write(base64.encodebytes(packer.flush()).decode())
"""
UNPACK_PROGRAM = """\
import binascii, json, sys, time, zlib
limit = int(sys.argv[1])
unpacker, clock = zlib.decompressobj(), time.process_time
packed = restored = 0
seconds = 0.0
try:
    for line in sys.stdin:
        piece = binascii.a2b_base64(line)
        packed += len(piece)
        began = clock()
        restored += len(unpacker.decompress(piece))
        seconds += clock() - began
        if restored > limit:
            break
    print(json.dumps({"compressed_bytes": packed, "bytes": restored, "decompress_cpu_seconds": seconds}))
except (binascii.Error, zlib.error) as error:
    print(json.dumps({"error": type(error).__name__}))
"""


@dataclass(frozen=True)
class StandbyTiming:
    """The standby's CPU seconds to decompress `restored_bytes` of redo as written (one log's sample)."""

    host: str
    log: str
    restored_bytes: int
    decompress_cpu_seconds: float

    @property
    def seconds_per_gib(self) -> float:
        return self.decompress_cpu_seconds * GIB / self.restored_bytes


def pack_argv(path: str, *, prefix: Sequence[str] = ()) -> list[str]:
    checked = absolute_path(path, "an archived log's name")
    return [*prefix, "nice", "-n", "19", "python3", "-", str(ZLIB_LEVEL), str(STANDBY_SAMPLE_BYTES), checked]


def unpack_argv() -> list[str]:
    """The program is an argument (`python3 -c`): standard input carries the data."""
    return ["nice", "-n", "19", "python3", "-c", UNPACK_PROGRAM, str(STANDBY_SAMPLE_BYTES)]


def read_standby_output(text: str, host: str, log: str, sent_bytes: int) -> StandbyTiming | str:
    """The standby's one JSON line, validated (remote output is hostile): a timing, or why not."""
    line = next((line for line in text.splitlines()[:4] if line.startswith("{")), "")
    try:
        item = json.loads(line) if len(line) <= MAX_LINE_CHARS else None
    except ValueError:
        item = None
    if not isinstance(item, dict):
        return "the standby printed no result"
    if "error" in item:
        return "the standby could not decompress what the primary sent"
    restored = host_figure(item.get("bytes"), int, STANDBY_SAMPLE_BYTES + 2 * MIB)
    seconds = host_figure(item.get("decompress_cpu_seconds"), float, 86_400.0)
    if not restored or seconds is None or item.get("compressed_bytes") != sent_bytes:
        return "the standby's figures did not validate"
    return StandbyTiming(host, log, restored, float(seconds))


def chosen_log(samples: Sequence[HostSample]) -> HostSample | None:
    """The log to time on the standby: the largest one read of the worst hour (else of any hour)."""
    read = [s for s in samples if s.bytes_read and s.error is None]
    worst = [s for s in read if s.hour == "worst hour"] or read
    return max(worst, key=lambda s: s.bytes_read, default=None)


@asynccontextmanager
async def standby_transport(sessions, secret_key: str, collection_id: int):
    """A connection to the environment's first standby host (None: there is none), closed afterwards."""
    with sessions() as session:
        collection = session.get(Collection, collection_id)
        environment = session.get(Environment, collection.environment_id)
        host: Host | None = next((h for h in environment.hosts if h.role is HostRole.standby), None)
        if host is not None:
            _ = host.credential
            session.expunge(host)
    if host is None:
        yield None, None
        return
    transport = None
    try:
        transport = await connect_host(host, secret_key=secret_key)
    except TransportError as error:
        yield None, f"{host.name} could not be reached ({error})"
        return
    try:
        yield transport, host.name
    finally:
        await transport.close()


async def sampled_with_standby(run_sql, run_primary, run_on, standby, *, access, notes) -> Outcome | None:
    """The compressibility step on the primary (collect.compressibility), then the standby's decompression
    of one log's sample. `run_primary(argv, step, input=, caps=)`: a step on the primary; `run_on(transport,
    argv, step, input=, caps=)`: on another host; `standby()`: standby_transport's context."""
    run = partial(run_primary, caps=SMALL_OUTPUT_CAPS)
    outcome = await sample_in_collection(run_sql, run, access=access, notes=notes)
    if outcome is None or chosen_log(outcome.samples) is None:
        return outcome
    async with standby() as (transport, host):
        on_standby = partial(run_on, transport) if transport is not None else None
        await time_on_standby(outcome, run_primary, on_standby, host=host, prefix=run_as(access), notes=notes)
    return outcome


async def time_on_standby(outcome: Outcome | None, run_primary, run_standby, *, host: str | None, prefix, notes):
    """Time the standby's decompression of one log's sample and put it on that log's sample; every failure
    is a note naming it, and the primary's figure stays the only one. `run_primary(argv, step, input=)` and
    `run_standby(argv, step, input=, caps=)` run a step (collect.steps.run_step); `run_standby` is None
    when no standby could be reached (`host` then says why, or is None when there is no standby)."""
    sample = chosen_log(outcome.samples) if outcome is not None else None
    if sample is None:
        return
    if run_standby is None:
        why = host or "the environment has no standby host"
        notes.append(f"Decompression not timed on the standby: {why}; the figures are the primary's.")
        return
    try:
        argv = pack_argv(sample.name, prefix=prefix)
        packed = await run_primary(argv, "compressibility", input=PACK_PROGRAM, caps=PACK_CAPS)
        text = packed.path.read_text(errors="replace") if packed.exit_code == 0 else ""
        found = "the primary sent nothing"
        if text:  # no SSH round trip to the standby for nothing
            sent = sum(len(binascii.a2b_base64(line)) for line in text.splitlines())
            said = await run_standby(unpack_argv(), "standby_decompress", input=text, caps=SMALL_OUTPUT_CAPS)
            found = read_standby_output(said.text(), host, sample.name, sent)
    except Cancelled:
        raise
    except (CollectionError, TransportError, OSError, ValueError) as error:
        found = f"the step failed ({type(error).__name__})"
    if isinstance(found, str):
        notes.append(f"Decompression not timed on the standby {host}: {found}; the figures are the primary's.")
        return
    outcome.samples[outcome.samples.index(sample)] = replace(
        sample, standby_bytes=found.restored_bytes, standby_decompress_cpu_seconds=found.decompress_cpu_seconds
    )
    notes.append(
        f"Decompression timed on the standby {host} too: {found.seconds_per_gib:,.2f} CPU s/GiB "
        f"({found.restored_bytes / MIB:,.1f} MiB of {sample.name}, compressed on the primary, sent through redolab)."
    )
