"""The compressibility step of an Oracle collection: a few archived logs of the worst hour and of a
typical hour, compressed on the primary itself with zlib (read-only), their ratio and CPU per GiB.

1. The shipped script oracle_archived_log_names lists the logs still on disk at the local destinations
   over the last NAMES_DAYS days, with their names (its own SQL*Plus session).
2. choose_logs picks the hours: the worst (most bytes archived in logs that began in it) and a typical
   one (the median hour by bytes), and up to LOGS_PER_HOUR logs of each, spread over the hour.
3. One command on the host, `nice -n 19 python3 - LEVEL SAMPLE_BYTES PATH...` (as the collection's
   operating-system user), whose program (HOST_PROGRAM, on standard input) opens each log read-only,
   compresses its first SAMPLE_BYTES with zlib at LEVEL and decompresses the result as it goes, and
   prints one JSON line per log: bytes read, bytes compressed and the CPU seconds of each (its own
   process time). It writes nothing but its standard output. Paths reach the host as arguments, quoted by
   the transport (remote.transport.shell_join), never as shell text.
4. A log in ASM (a name starting with '+') is not a file the host's python3 can open: the step names
   what to run instead (`asmcmd cp` to a scratch directory, then `redolab plan compressibility`).

The zlib level is zlib's default, 6 (planning.compressibility says why). An LZ-class fast codec (the nearest
of LZO) is measured on the same bytes: LZ4 by the host's python3 lz4 module, else by the lz4 command through
pipes, else zstd -1 by the zstd command (FAST_CODECS); with none of them the step's note names the host and
what to install (or `redolab plan compressibility` on copied logs). Both codecs' figures are stored per log
and summed in the step's first note. Decompression is timed here on the primary's CPU, and the figures say
so; collect.standby_timing then times it on the standby as well.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from redolab.collect.commands import DatabaseAccess, absolute_path, run_as
from redolab.collect.errors import CollectionError
from redolab.collect.models import CompressibilitySample
from redolab.collect.rows import ArchivedLogName
from redolab.core.terminal import neutralised
from redolab.core.units import format_count

NAMES_SCRIPT = "oracle_archived_log_names"
NAMES_DAYS = 8
LOGS_PER_HOUR = 4
MIB = 1024 * 1024
GIB = 1024 * MIB
SAMPLE_BYTES = 256 * MIB  # at most this much of each log is read (an 8 GiB log costs what 256 MiB does)
ZLIB_LEVEL = 6
MAX_LINE_CHARS = 8192
FAST_CODECS = {  # what the host program names the fast codec it used, and how the note says it
    "lz4 module": "LZ4 (python3's lz4 module: frame, fastest level; the nearest of LZO)",
    "lz4 command": "LZ4 (the lz4 command, -1; the nearest of LZO)",
    "zstd command": "zstd -1 (the zstd command: no LZ4 on the host; faster than zlib, slower than LZ4)",
}
HOST_PROGRAM = """\
import itertools, json, resource, shutil, subprocess, sys, threading, time, zlib
try:
    import lz4.frame as lz4f
except ImportError:
    lz4f = None
level, limit = int(sys.argv[1]), int(sys.argv[2])
clock = time.process_time
TOOLS = (("lz4 command", ["lz4", "-1", "-c", "-q"], ["lz4", "-d", "-c", "-q"]),
         ("zstd command", ["zstd", "-1", "-c", "-q"], ["zstd", "-d", "-c", "-q"]))
tool = None if lz4f else next((t for t in TOOLS if shutil.which(t[1][0])), None)


class Meter:
    def __init__(self, packer, unpacker, begin=None):
        self.packer, self.unpacker = packer, unpacker
        self.bytes, self.packing, self.unpacking = 0, 0.0, 0.0
        if begin is not None:
            self.passed(begin)

    def passed(self, call, *args):
        began = clock()
        piece = call(*args)
        self.packing += clock() - began
        self.bytes += len(piece)
        began = clock()
        if piece:
            self.unpacker.decompress(piece)
        self.unpacking += clock() - began

    def feed(self, chunk):
        self.passed(self.packer.compress, chunk) if chunk else self.passed(self.packer.flush)


def chunks(log):
    read = 0
    while read < limit:
        chunk = log.read(min(1048576, limit - read))
        if not chunk:
            return
        read += len(chunk)
        yield chunk


def children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def by_command(path):
    # the tool compresses the same first bytes through pipes, and its output goes on to the tool decompressing
    # it into /dev/null; its CPU is its processes' own (nothing is written but to pipes and /dev/null)
    started = children()
    pack = subprocess.Popen(tool[1], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    unpack = subprocess.Popen(tool[2], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def feed():
        try:
            with open(path, "rb") as log:
                for chunk in chunks(log):
                    pack.stdin.write(chunk)
        finally:
            pack.stdin.close()

    feeder = threading.Thread(target=feed)
    feeder.start()
    packed = 0
    while piece := pack.stdout.read(1048576):
        packed += len(piece)
        unpack.stdin.write(piece)
    feeder.join()
    failed = pack.wait()
    packing = children() - started
    unpack.stdin.close()
    failed = failed or unpack.wait()
    unpacking = children() - started - packing
    if failed:
        return {}
    return {"fast_codec": tool[0], "fast_bytes": packed, "fast_compress_cpu_seconds": packing,
            "fast_decompress_cpu_seconds": unpacking}


for path in sys.argv[3:]:
    try:
        with open(path, "rb") as log:
            slow = Meter(zlib.compressobj(level), zlib.decompressobj())
            fast = None
            if lz4f is not None:
                packer = lz4f.LZ4FrameCompressor(compression_level=0)
                fast = Meter(packer, lz4f.LZ4FrameDecompressor(), packer.begin)
            read = 0
            for chunk in itertools.chain(chunks(log), [b""]):
                read += len(chunk)
                for meter in (slow, fast):
                    if meter is not None:
                        meter.feed(chunk)
        said = {"path": path, "bytes": read, "zlib_bytes": slow.bytes, "compress_cpu_seconds": slow.packing,
                "decompress_cpu_seconds": slow.unpacking}
        if fast is not None:
            said.update(fast_codec="lz4 module", fast_bytes=fast.bytes, fast_compress_cpu_seconds=fast.packing,
                        fast_decompress_cpu_seconds=fast.unpacking)
        elif tool is not None:
            try:
                said.update(by_command(path))
            except OSError:
                pass
        print(json.dumps(said))
    except OSError as error:
        print(json.dumps({"path": path, "error": error.strerror or type(error).__name__}))
    sys.stdout.flush()
"""


@dataclass(frozen=True)
class Choice:
    """The logs to read: (hour label, hour start, the logs chosen), worst hour first."""

    hours: tuple[tuple[str, datetime, tuple[ArchivedLogName, ...]], ...]

    @property
    def logs(self) -> list[tuple[str, ArchivedLogName]]:
        return [(label, log) for label, _, logs in self.hours for log in logs]


def _spread(logs: Sequence[ArchivedLogName], count: int) -> tuple[ArchivedLogName, ...]:
    """`count` logs spread evenly over the hour's (first, last and between), in time order."""
    if len(logs) <= count:
        return tuple(logs)
    picks = sorted({round(i * (len(logs) - 1) / (count - 1)) for i in range(count)}) if count > 1 else [0]
    return tuple(logs[i] for i in picks)


def choose_logs(rows: Sequence[ArchivedLogName], per_hour: int = LOGS_PER_HOUR) -> Choice | None:
    """The worst hour (most bytes in logs that began in it) and the median hour by bytes (a typical hour;
    the same hour when there is only one), up to `per_hour` logs of each. None when there is no log."""
    if not rows or per_hour < 1:
        return None
    by_hour: dict[datetime, list[ArchivedLogName]] = {}
    for row in sorted(rows, key=lambda r: (r.first_time, r.thread, r.sequence)):
        by_hour.setdefault(row.first_time.replace(minute=0, second=0, microsecond=0), []).append(row)
    ranked = sorted(by_hour, key=lambda hour: (sum(r.bytes for r in by_hour[hour]), hour))
    worst = ranked[-1]
    others = ranked[:-1]
    hours = [("worst hour", worst, _spread(by_hour[worst], per_hour))]
    if others:
        typical = others[len(others) // 2]
        hours.append(("typical hour", typical, _spread(by_hour[typical], per_hour)))
    return Choice(tuple(hours))


def in_asm(name: str) -> bool:
    return name.startswith("+")


def host_argv(paths: Sequence[str], *, prefix: Sequence[str] = (), level: int = ZLIB_LEVEL) -> list[str]:
    """The read-only command that measures `paths` on the host (its program goes on standard input).
    `prefix`: the collection's sudo prefix. A path that is not absolute plain text is a ValueError."""
    checked = [absolute_path(path, "an archived log's name") for path in paths]
    return [*prefix, "nice", "-n", "19", "python3", "-", str(level), str(SAMPLE_BYTES), *checked]


def asm_advice(names: Sequence[str]) -> str:
    """What to run for logs in ASM: asmcmd cp (read-only on the disk group) to a scratch directory."""
    copies = "; ".join(f"asmcmd cp {name} /scratch/redolab/" for name in names[:8])
    return (
        f"{format_count(len(names), 'log')} {'is' if len(names) == 1 else 'are'} in ASM and cannot be read as files. "
        "As the Grid Infrastructure owner, "
        f"run: {copies}; then copy them to a workstation and run `redolab plan compressibility` on them."
    )


@dataclass(frozen=True)
class HostSample:
    """One log measured on the host: bytes read (its first SAMPLE_BYTES at most), bytes zlib made of them,
    CPU seconds to compress and to decompress. `error`: why it could not be read (then no figures)."""

    name: str
    hour: str
    thread: int
    sequence: int
    log_bytes: int
    bytes_read: int = 0
    zlib_bytes: int = 0
    compress_cpu_seconds: float = 0.0
    decompress_cpu_seconds: float = 0.0
    error: str | None = None
    # the LZ-class fast codec on the same bytes (FAST_CODECS: LZ4 by the python3 module or the lz4 command, else
    # the zstd command at level 1): None when the host has none of them
    fast_codec: str | None = None
    fast_bytes: int | None = None
    fast_compress_cpu_seconds: float | None = None
    fast_decompress_cpu_seconds: float | None = None
    # the standby decompressing this log's first bytes, compressed on the primary (collect.standby_timing)
    standby_bytes: int | None = None
    standby_decompress_cpu_seconds: float | None = None

    @property
    def ratio(self) -> float | None:
        return self.bytes_read / self.zlib_bytes if self.bytes_read and self.zlib_bytes else None

    @property
    def fast_ratio(self) -> float | None:
        return self.bytes_read / self.fast_bytes if self.bytes_read and self.fast_bytes else None

    def per_gib(self, seconds: float) -> float | None:
        return seconds * GIB / self.bytes_read if self.bytes_read else None

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "hour": self.hour,
            "thread": self.thread,
            "sequence": self.sequence,
            "log_bytes": self.log_bytes,
            "bytes_read": self.bytes_read,
            "zlib_level": ZLIB_LEVEL,
            "zlib_bytes": self.zlib_bytes,
            "ratio": self.ratio,
            "compress_cpu_seconds_per_gib": self.per_gib(self.compress_cpu_seconds),
            "decompress_cpu_seconds_per_gib": self.per_gib(self.decompress_cpu_seconds),
            "fast_codec": self.fast_codec,
            "fast_bytes": self.fast_bytes,
            "fast_ratio": self.fast_ratio,
            "fast_compress_cpu_seconds_per_gib": self.per_gib(self.fast_compress_cpu_seconds or 0.0)
            if self.fast_bytes
            else None,
            "fast_decompress_cpu_seconds_per_gib": self.per_gib(self.fast_decompress_cpu_seconds or 0.0)
            if self.fast_bytes
            else None,
            "error": self.error,
        }


def host_figure(value, kind: type, high: float):
    """A figure the host printed, checked: of `kind` (never bool), finite, 0 to `high`; else None."""
    if type(value) is not kind and not (kind is float and type(value) is int):
        return None
    if not (math.isfinite(value) and 0 <= value <= high):
        return None
    return value


def read_host_output(text: str, asked: Sequence[tuple[str, ArchivedLogName]]) -> list[HostSample]:
    """The host's JSON lines, one per log asked for; a line that is not one of them, or a figure out of
    range, is left out (a log without a line says so). Remote output is hostile: nothing else is kept."""
    wanted = {log.name: (hour, log) for hour, log in asked}
    said: dict[str, dict] = {}
    for line in text.splitlines()[: 4 * len(asked) + 4]:
        if len(line) > MAX_LINE_CHARS:
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("path"), str) and item["path"] in wanted:
            said.setdefault(item["path"], item)
    return [_sample(hour, log, said.get(log.name)) for hour, log in asked]


def _sample(hour: str, log: ArchivedLogName, item: dict | None) -> HostSample:
    base = {"name": log.name, "hour": hour, "thread": log.thread, "sequence": log.sequence, "log_bytes": log.bytes}
    if item is None:
        return HostSample(**base, error="the host printed no result for it")
    if "error" in item:
        error = item["error"] if isinstance(item["error"], str) else "unreadable"
        return HostSample(**base, error=" ".join(error.split())[:120] or "unreadable")
    read = host_figure(item.get("bytes"), int, SAMPLE_BYTES)
    packed = host_figure(item.get("zlib_bytes"), int, SAMPLE_BYTES * 2 + MIB)
    packing = host_figure(item.get("compress_cpu_seconds"), float, 86_400.0)
    unpacking = host_figure(item.get("decompress_cpu_seconds"), float, 86_400.0)
    if None in (read, packed, packing, unpacking):
        return HostSample(**base, error="the host's figures for it did not validate")
    return HostSample(
        **base,
        bytes_read=read,
        zlib_bytes=packed,
        compress_cpu_seconds=float(packing),
        decompress_cpu_seconds=float(unpacking),
        **_fast_figures(item),
    )


def _fast_figures(item: dict) -> dict:
    """The LZ4 figures of a host line, when the host measured them and all three validate; else none."""
    figures = {
        "fast_bytes": host_figure(item.get("fast_bytes"), int, SAMPLE_BYTES * 2 + MIB),
        "fast_compress_cpu_seconds": host_figure(item.get("fast_compress_cpu_seconds"), float, 86_400.0),
        "fast_decompress_cpu_seconds": host_figure(item.get("fast_decompress_cpu_seconds"), float, 86_400.0),
    }
    if None in figures.values() or item.get("fast_codec") not in FAST_CODECS:
        return {}
    figures = {key: float(value) if "seconds" in key else value for key, value in figures.items()}
    return {"fast_codec": item["fast_codec"], **figures}


def summary_note(host: str, samples: Sequence[HostSample]) -> str | None:
    """The step's figures in one line for the collection's notes (and `redolab collect --wait`): zlib and
    LZ4 over every log read, or which codec could not be measured on `host` and what to install; both timed
    on the primary's cores (the standby's decompression: collect.standby_timing). None when no log was read."""
    read = [sample for sample in samples if sample.bytes_read and sample.zlib_bytes]
    if not read:
        return None
    total = sum(sample.bytes_read for sample in read)

    def per_gib(seconds: float) -> str:
        return f"{seconds * GIB / total:,.2f}"

    zlib_said = (
        f"zlib level {ZLIB_LEVEL} {total / sum(s.zlib_bytes for s in read):,.2f} : 1, "
        f"{per_gib(sum(s.compress_cpu_seconds for s in read))} CPU s/GiB to compress and "
        f"{per_gib(sum(s.decompress_cpu_seconds for s in read))} to decompress"
    )
    codecs = {sample.fast_codec for sample in read}
    if all(sample.fast_bytes for sample in read) and len(codecs) == 1:
        fast = (
            f"{FAST_CODECS[codecs.pop() or '']} {total / sum(s.fast_bytes or 0 for s in read):,.2f} : 1, "
            f"{per_gib(sum(s.fast_compress_cpu_seconds or 0.0 for s in read))} CPU s/GiB to compress and "
            f"{per_gib(sum(s.fast_decompress_cpu_seconds or 0.0 for s in read))} to decompress"
        )
    else:
        fast = (
            f"LZ4 not measured on {host}: its python3 has no lz4 module and it has no lz4 or zstd command (install "
            "the python3-lz4 or the lz4 package there, or copy a few logs to a workstation and run "
            "`redolab plan compressibility` on them)"
        )
    return (
        f"Compressibility on {host} ({format_count(len(read), 'log')}, {total / MIB:,.1f} MiB read): "
        f"{zlib_said}; {fast}. "
        "Decompression here was timed on the primary's cores (the standby's, where timed, follows)."
    )


@dataclass
class Outcome:
    """What the step found: a sample per log chosen (read, or why not) and the notes to show."""

    samples: list[HostSample]
    notes: list[str]

    def to_json(self) -> dict:
        return {
            "zlib_level": ZLIB_LEVEL,
            "sample_bytes": SAMPLE_BYTES,
            "samples": [sample.to_json() for sample in self.samples],
            "notes": self.notes,
        }


def _plain(name: str) -> bool:
    try:
        absolute_path(name, "an archived log's name")
    except ValueError:
        return False
    return True


async def compressibility_step(run_sql, run_command, *, run_as: Sequence[str] = (), host: str = "the host") -> Outcome:
    """List the logs (`run_sql(steps, expected=)` -> output.Collected), choose them, and measure the
    readable ones on the host (`run_command(argv, step, input=)` -> steps.StepOutput, small caps)."""
    collected = await run_sql([(NAMES_SCRIPT, {"names_days": NAMES_DAYS})], expected=("archived_log_names",))
    choice = choose_logs(collected.steps.get("archived_log_names", []))
    if choice is None:
        return Outcome([], [f"Compressibility: no archived log on disk in the last {NAMES_DAYS} days to sample."])
    readable = [(hour, log) for hour, log in choice.logs if not in_asm(log.name) and _plain(log.name)]
    notes, samples = [], []
    if readable:
        argv = host_argv([log.name for _, log in readable], prefix=run_as)
        said = await run_command(argv, "compressibility", input=HOST_PROGRAM)
        if said.exit_code == 127 or ("python3: " in said.stderr and "not found" in said.stderr):
            notes.append(
                "Compressibility: python3 is not on the host's PATH. Copy a few logs of the worst and a "
                "typical hour to a workstation and run `redolab plan compressibility` on them."
            )
            samples = [_sample(hour, log, {"error": "python3 not found on the host"}) for hour, log in readable]
        else:
            samples = read_host_output(said.text(), readable)
            if said.exit_code != 0 and not any(sample.bytes_read for sample in samples):
                notes.append(f"Compressibility: the host command exited with {said.exit_code}: nothing measured.")
    asm = [(hour, log) for hour, log in choice.logs if in_asm(log.name)]
    if asm:
        notes.append("Compressibility: " + asm_advice([log.name for _, log in asm]))
    samples += [_sample(hour, log, {"error": "stored in ASM (see the note)"}) for hour, log in asm]
    odd = [(h, log) for h, log in choice.logs if not in_asm(log.name) and not _plain(log.name)]
    samples += [_sample(hour, log, {"error": "a name redolab does not pass to a shell"}) for hour, log in odd]
    summary = summary_note(host, samples)
    return Outcome(samples, [*([summary] if summary else []), *notes])


async def sample_in_collection(run_sql, run_command, *, access: DatabaseAccess, notes: list[str]) -> Outcome | None:
    """The step as a collection runs it (as the access's operating-system user): its notes added to `notes`;
    a failure is a note too, never the collection's failure (the history it read stays good)."""
    try:
        outcome = await compressibility_step(run_sql, run_command, run_as=run_as(access), host=access.host_name)
    except CollectionError as error:
        notes.append(f"Compressibility not measured: {error.message}. {error.hint}".strip())
        return None
    notes.extend(outcome.notes)
    return outcome


def sample_rows(collection_id: int, outcome: Outcome | None) -> list[CompressibilitySample]:
    """The rows a collection stores for the step's samples (none when it did not run)."""
    if outcome is None:
        return []
    return [
        CompressibilitySample(
            collection_id=collection_id,
            name=sample.name[:513],
            hour=sample.hour,
            thread=sample.thread,
            sequence=sample.sequence,
            log_bytes=sample.log_bytes,
            bytes_read=sample.bytes_read,
            zlib_level=ZLIB_LEVEL,
            zlib_bytes=sample.zlib_bytes,
            compress_cpu_seconds=sample.compress_cpu_seconds,
            decompress_cpu_seconds=sample.decompress_cpu_seconds,
            fast_codec=sample.fast_codec,
            fast_bytes=sample.fast_bytes,
            fast_compress_cpu_seconds=sample.fast_compress_cpu_seconds,
            fast_decompress_cpu_seconds=sample.fast_decompress_cpu_seconds,
            standby_bytes=sample.standby_bytes,
            standby_decompress_cpu_seconds=sample.standby_decompress_cpu_seconds,
            error=neutralised(sample.error)[:200] if sample.error else None,
        )
        for sample in outcome.samples
    ]
