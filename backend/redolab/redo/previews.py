"""The preview of an upload: the whole file read as the import would read it (same checks), nothing
stored. `read_preview` is what runs in the preview's child process (core/isolate.py): it takes plain
values and returns a picklable Preview; the duplicate lookup, which needs the database, is the
parent's (redo/uploads.py). A refusal names the file and quotes nothing of it that is not text."""

from __future__ import annotations

import codecs
import dataclasses
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from redolab.core.isolate import ChildLimitReached
from redolab.core.security import file_sha256
from redolab.core.units import format_bytes, format_duration
from redolab.redo.analytics import Analysis, analyze
from redolab.redo.archive import Source
from redolab.redo.ingest.mapping import clean_mapping, options_of
from redolab.redo.ingest.pipeline import Reading, in_zone, prepare, read_sources, reading_kind, summarise
from redolab.redo.models import RedoImport
from redolab.redo.parsers import RedoInputError
from redolab.redo.schemas import RedoInterval
from redolab.redo.source_words import source_words

SAMPLE_ROWS = 8
_SNIFF_BYTES = 8192
_EXPORT_AS_TEXT = (
    "Export the query's rows as CSV or text (a SQL*Plus spool), or upload the collection archive (.zip, "
    ".tar.gz) as it is"
)


@dataclass
class Preview:
    filename: str
    format: str
    kind: str
    headers: list[str]  # for the mapping form; empty for an archive (its members map themselves)
    mapping: dict[str, str]
    sample: list[RedoInterval]
    summary: dict
    analysis: Analysis
    duplicate_of: RedoImport | None
    sha256: str = ""  # the upload's digest: the parent looks up `duplicate_of` by it

    @property
    def read_as(self) -> str:
        """What the file was read as, in a DBA's words."""
        return source_words(self.format, self.kind)


def printable(text: str) -> str:
    """`text` with every character that is not printable (control, format, unassigned, a byte
    that was not text) shown as '?', a line break or tab as a space: what a message may quote of a
    user's file or its name."""
    return "".join(ch if ch.isprintable() else " " if ch.isspace() else "?" for ch in text)


def refusal(error: Exception) -> str:
    """The message of a refused upload as it may be shown: one that would quote bytes which were
    never text says so instead of quoting them; any other unprintable character is shown as '?'."""
    message = str(error)
    if _quotes_binary(message):
        name = message.split(": ", 1)[0]  # the readers begin their messages with the file's name
        return f"{printable(name)}: it holds binary data where text was expected. {_EXPORT_AS_TEXT}"
    return printable(message)


def over_limit(filename: str, stopped: ChildLimitReached) -> RedoInputError:
    """The refusal of a preview that a limit of its process stopped: the file, the limit, its setting."""
    limits = stopped.limits
    if stopped.limit == "cpu":
        spent = f"used more than {limits.cpu_seconds} s of CPU (REDOLAB_PREVIEW_CPU_SECONDS)"
    elif stopped.limit == "memory":
        spent = f"needed more than {format_bytes(limits.memory_bytes)} of memory (REDOLAB_PREVIEW_MEMORY_BYTES)"
    else:
        spent = f"took longer than {format_duration(limits.wall_seconds)} (REDOLAB_PREVIEW_WALL_SECONDS)"
    return RedoInputError(
        f"{printable(filename)}: the preview of this file {spent}, the most one preview may take on this "
        "server; it was stopped and nothing was kept. Split it into smaller files (a month or an instance "
        "each) and upload them one by one, or ask the administrator to raise the limit."
    )


def read_preview(
    path: str,
    filename: str,
    fmt: str,
    mapping: dict | None,
    time_zone: str | None,
    headroom_percent: float,
    workdir: str,
) -> Preview:
    """Read the whole upload at `path` (an archive unpacked under `workdir`, which the caller owns and
    removes): a Preview without `duplicate_of`, with the upload's sha256."""
    reading = Reading()
    sample: list[RedoInterval] = []

    def sampled(intervals):
        for interval in intervals:
            if len(sample) < SAMPLE_ROWS:
                sample.append(interval)
            yield interval

    upload = Path(path)
    sources, skipped = prepare(upload, filename, Path(workdir), fmt=fmt, mapping=clean_mapping(mapping))
    reading.skipped = [
        (name, "binary data, not text" if _quotes_binary(why) else printable(why)) for name, why in skipped
    ]
    for source in sources:
        _refuse_binary(source)
    single = sources[0].path == upload
    chosen = clean_mapping(mapping)  # an archive's members take only its options (the decimal separator)
    intervals = read_sources(sources, fmt=fmt, mapping=chosen if single else options_of(chosen), reading=reading)
    analysis = analyze(sampled(in_zone(intervals, time_zone)), headroom_ratio=headroom_percent / 100, keep_points=False)
    mapping, headers = (reading.mapping, reading.headers) if single else ({}, [])
    fmt_label = ", ".join(sorted(set(reading.formats)))
    summary = summarise(analysis, fmt=fmt_label, reading=reading)
    kind = reading_kind(reading)
    shown = _as_shown(analysis)
    return Preview(filename, fmt_label, kind, headers, mapping, sample, summary, shown, None, file_sha256(upload))


def _as_shown(analysis: Analysis) -> Analysis:
    """The analysis cut to what the preview shows beside its summary (the time range): a million
    intervals' series would cost the waiting web process seconds to unpickle, holding its GIL."""
    ends = [analysis.segments[0], analysis.segments[-1]] if analysis.segments else []
    return dataclasses.replace(analysis, segments=ends, points={}, thread_segments={}, durations=[])


def _quotes_binary(message: str) -> bool:
    return "\ufffd" in message or any(unicodedata.category(ch) == "Cc" and not ch.isspace() for ch in message)


def _refuse_binary(source: Source) -> None:
    """Refuse a file that is binary data (a spreadsheet, a database file, random bytes) as such,
    before a reader quotes its first line back: NUL or other control bytes, or bytes that are not
    UTF-8, in more than a tenth of its first 8 KiB. UTF-16 text is left to the readers."""
    with open(source.path, "rb") as handle:
        sample = handle.read(_SNIFF_BYTES)
    half = len(sample) // 2
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or (
        half >= 8 and max(sample[0::2].count(0), sample[1::2].count(0)) > half * 0.75
    ):
        return
    text = sample.decode("utf-8", errors="replace")
    odd = sum(ch == "\ufffd" or (unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\f\v") for ch in text)
    if odd * 10 > len(text):
        raise RedoInputError(f"{source.name}: this is not a text export (it holds binary data). {_EXPORT_AS_TEXT}")
