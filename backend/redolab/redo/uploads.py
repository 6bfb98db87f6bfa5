"""Uploads: a file (or pasted text) kept under the data directory between its preview and its import,
and the preview, which reads the whole upload as the import would (same checks) and stores nothing.

A staged upload is `{token}.upload` with small files beside it: `.name` (the file name the user
knows), `.owner` (who uploaded it, for the per-user cap) and, while an import job will read it,
`.queued`. The bytes staged are capped per user and in all, and an upload must leave a floor free on
the disk: each upload counts and reserves its bytes under a lock every process shares before a byte
of it is written, so uploads arriving together cannot pass a cap together. When space is short,
previews unused for a while are removed first, oldest first; an upload whose preview is refused is
removed at once.
"""

from __future__ import annotations

import codecs
import errno
import fcntl
import io
import logging
import os
import secrets
import shutil
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.config import Settings
from redolab.core.errors import FieldError
from redolab.core.limits import LimitReached, Slots
from redolab.core.security import file_sha256
from redolab.core.units import format_bytes, format_duration
from redolab.environments.models import Environment
from redolab.redo.analytics import Analysis, analyze
from redolab.redo.archive import Source
from redolab.redo.ingest.mapping import clean_mapping
from redolab.redo.ingest.pipeline import Reading, in_zone, prepare, read_sources, reading_kind, summarise
from redolab.redo.models import RedoImport
from redolab.redo.parsers import RedoInputError
from redolab.redo.schemas import RedoInterval

log = logging.getLogger("redolab.uploads")

SAMPLE_ROWS = 8
PASTED_NAME = "pasted text"  # the name a paste-box upload goes by in previews, errors and the import list
EXPIRED = "This upload has expired or was already imported: upload the file again."
SIDECARS = (".name", ".owner", ".queued")
_LOCK_FILE = ".staging.lock"


def preview_slots(settings: Settings) -> Slots:
    """The process's pool of upload reads (previews, and imports read in the request)."""
    return Slots(
        total=settings.max_concurrent_previews,
        per_user=settings.max_previews_per_user,
        noun="upload",
        settings=("REDOLAB_MAX_CONCURRENT_PREVIEWS", "REDOLAB_MAX_PREVIEWS_PER_USER"),
    )


@dataclass(frozen=True)
class StagingLimits:
    """The caps on staged uploads, in bytes; previews unused `early_prune_seconds` may go early."""

    per_user_bytes: int
    total_bytes: int
    free_space_floor_bytes: int
    early_prune_seconds: float

    @classmethod
    def of(cls, settings: Settings) -> StagingLimits:
        return cls(
            per_user_bytes=settings.upload_quota_per_user_bytes,
            total_bytes=settings.upload_quota_total_bytes,
            free_space_floor_bytes=settings.upload_free_space_floor_bytes,
            early_prune_seconds=settings.upload_early_prune_seconds,
        )


@dataclass
class _Stage:
    token: str
    bytes: int  # what it takes on disk (reserved blocks count)
    owner: str
    modified: float
    queued: bool


# -- uploads: kept between preview and import, under the data directory ------------------------
def prune_uploads(upload_dir: Path, max_age_seconds: float, limits: StagingLimits | None = None) -> int:
    """Remove uploads older than `max_age_seconds` (previews never imported); safe while other
    requests store or discard theirs. With `limits`, when the disk has less free than their floor
    (whatever filled it), previews unused a while are removed early too. Returns the number removed
    for their age."""
    if limits is not None and upload_dir.is_dir():
        short = limits.free_space_floor_bytes - shutil.disk_usage(upload_dir).free
        make_room(upload_dir, short, limits, all_or_nothing=False)
    removed = 0
    for old in upload_dir.glob("*.upload") if upload_dir.is_dir() else ():
        try:
            if time.time() - old.stat().st_mtime <= max_age_seconds:
                continue
        except FileNotFoundError:  # imported or discarded meanwhile
            continue
        discard_upload(upload_dir, old.stem)
        removed += 1
    return removed


def printable(text: str) -> str:
    """`text` with every character that is not printable (control, format, unassigned, a byte
    that was not text) shown as '?', a line break or tab as a space: what a message may quote of a
    user's file or its name."""
    return "".join(ch if ch.isprintable() else " " if ch.isspace() else "?" for ch in text)


def store_upload(
    upload_dir: Path, source, filename: str, *, owner: str = "", limits: StagingLimits | None = None
) -> str:
    """Save an uploaded file in chunks (never whole in memory); returns its token. With `limits`,
    its bytes are counted against the caps and reserved on disk first: beyond a cap it is refused
    (LimitReached: 429 for the user's share, 507 for the server's) before a byte is written."""
    name = printable(Path(filename or "upload").name[:200]).strip() or "upload"
    size = _remaining_length(source)
    token = secrets.token_urlsafe(18)
    with _staging_lock(upload_dir):
        if limits is not None:
            _check_room(upload_dir, name, size, owner, limits)
        target = None
        try:
            (upload_dir / f"{token}.name").write_text(name)
            (upload_dir / f"{token}.owner").write_text(owner)
            target = open(upload_dir / f"{token}.upload", "wb")  # noqa: SIM115  (written after the lock)
            _reserve(target, size)
        except OSError as error:
            if target is not None:
                target.close()
            discard_upload(upload_dir, token)
            raise _disk_full(name, size, error) from None
    try:
        with target:
            for block in iter(lambda: source.read(1 << 20), b""):
                target.write(block)
            target.truncate()  # a source shorter than it said: the rest of the reservation goes
    except OSError as error:
        discard_upload(upload_dir, token)
        raise _disk_full(name, size, error) from None
    except BaseException:
        discard_upload(upload_dir, token)
        raise
    return token


def store_pasted(upload_dir: Path, text: str, *, owner: str = "", limits: StagingLimits | None = None) -> str:
    """Save text pasted into the paste box (or sent as `text`) as an upload named PASTED_NAME."""
    source, name = pasted(text)
    return store_upload(upload_dir, source, name, owner=owner, limits=limits)


def upload_path(upload_dir: Path, token: str) -> tuple[Path, str]:
    if not token or not token.replace("-", "").replace("_", "").isalnum():
        raise FieldError("upload_token", "This upload is unknown: upload the file again.", 422)
    path = upload_dir / f"{token}.upload"
    try:  # another request may import, discard or prune it at any moment: no exists-then-read
        name = (upload_dir / f"{token}.name").read_text()
    except FileNotFoundError:
        name = "upload"
    if not path.is_file():
        raise FieldError("upload_token", EXPIRED, 422)
    return path, name


def discard_upload(upload_dir: Path, token: str) -> None:
    (upload_dir / f"{token}.upload").unlink(missing_ok=True)
    for suffix in SIDECARS:
        (upload_dir / f"{token}{suffix}").unlink(missing_ok=True)


def mark_queued(path: Path, queued: bool = True) -> None:
    """An import job will read the upload at `path` (never pruned early), or no longer will."""
    if not path.name:
        return
    marker = path.with_suffix(".queued")
    marker.touch() if queued else marker.unlink(missing_ok=True)


def make_room(upload_dir: Path, needed_bytes: int, limits: StagingLimits, *, all_or_nothing: bool = True) -> int:
    """Remove previews unused for `limits.early_prune_seconds`, oldest first, until `needed_bytes`
    are freed; nothing when they cannot free that much (unless not `all_or_nothing`: then as much
    as they can). Returns the bytes freed."""
    if needed_bytes <= 0 or not upload_dir.is_dir():
        return 0
    with _staging_lock(upload_dir):
        stages = _stages(upload_dir)
        before = sum(stage.bytes for stage in stages)
        _free_up(upload_dir, stages, needed_bytes, limits, all_or_nothing=all_or_nothing)
        return before - sum(stage.bytes for stage in stages)


@contextmanager
def _staging_lock(upload_dir: Path) -> Iterator[None]:
    """Held while an upload's bytes are counted and reserved, by every thread and process that
    stores into `upload_dir` (an flock on a file of its own there)."""
    upload_dir.mkdir(parents=True, exist_ok=True)
    with open(upload_dir / _LOCK_FILE, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # closing the file releases the lock


def _remaining_length(source) -> int:
    """Bytes left to read in `source` (a spooled upload or a buffer); 0 when it cannot seek."""
    try:
        start = source.tell()
        end = source.seek(0, os.SEEK_END)
        source.seek(start)
    except (AttributeError, OSError, ValueError):
        return 0
    return max(end - start, 0)


def _reserve(target, size: int) -> None:
    """Claim the blocks now, so the next upload's free-space check already sees them taken; a
    filesystem without fallocate gets the length only."""
    if size <= 0:
        return
    try:
        os.posix_fallocate(target.fileno(), 0, size)
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise
        os.ftruncate(target.fileno(), size)


def _stages(upload_dir: Path) -> list[_Stage]:
    stages = []
    for path in upload_dir.glob("*.upload"):
        try:
            info = path.stat()
            owner = (upload_dir / f"{path.stem}.owner").read_text()
        except FileNotFoundError:  # discarded meanwhile, or stored before owners were kept
            if not path.exists():
                continue
            info, owner = path.stat(), ""
        queued = (upload_dir / f"{path.stem}.queued").exists()
        stages.append(_Stage(path.stem, max(info.st_size, info.st_blocks * 512), owner, info.st_mtime, queued))
    return stages


def _free_up(
    upload_dir: Path, stages: list[_Stage], needed: int, limits: StagingLimits, owner=None, all_or_nothing=True
) -> bool:
    """Make `needed` bytes of room among `stages` (`owner`'s only, when given) by removing previews
    unused for a while, oldest first; True when there is room. Nothing is removed in vain, unless
    not `all_or_nothing`."""
    if needed <= 0:
        return True
    cutoff = time.time() - limits.early_prune_seconds
    unused = sorted(
        (s for s in stages if not s.queued and s.modified <= cutoff and owner in (None, s.owner)),
        key=lambda s: s.modified,
    )
    if all_or_nothing and sum(s.bytes for s in unused) < needed:
        return False
    freed = 0
    for stage in unused:
        if freed >= needed:
            break
        discard_upload(upload_dir, stage.token)
        stages.remove(stage)
        freed += stage.bytes
    if freed:
        log.info("space short: removed unused previews (%s) early", format_bytes(freed))
    return freed >= needed


def _check_room(upload_dir: Path, name: str, size: int, owner: str, limits: StagingLimits) -> None:
    stages = _stages(upload_dir)
    mine = sum(s.bytes for s in stages if s.owner == owner)
    wait = format_duration(max(limits.early_prune_seconds, 60))
    shown = f"{name} ({format_bytes(size)})"
    if not _free_up(upload_dir, stages, mine + size - limits.per_user_bytes, limits, owner=owner):
        raise LimitReached(
            f"{shown} is refused: your previews not yet imported take {format_bytes(mine)}, and with this file "
            f"they would pass the {format_bytes(limits.per_user_bytes)} one user may keep staged "
            f"(REDOLAB_UPLOAD_QUOTA_PER_USER_BYTES). Import the files you previewed, or try again later: a "
            f"preview unused for {wait} makes room for a new upload.",
            status_code=429,
            retry_after=int(max(limits.early_prune_seconds, 60)),
        )
    staged = sum(s.bytes for s in stages)
    if not _free_up(upload_dir, stages, staged + size - limits.total_bytes, limits):
        raise LimitReached(
            f"{shown} is refused: previews not yet imported take {format_bytes(staged)} on this server, and with "
            f"this file they would pass the {format_bytes(limits.total_bytes)} kept for them in all "
            f"(REDOLAB_UPLOAD_QUOTA_TOTAL_BYTES). Try again in {wait} (unused previews then make room), or ask "
            "the administrator to raise the cap.",
            status_code=507,
            retry_after=int(max(limits.early_prune_seconds, 60)),
        )
    free = shutil.disk_usage(upload_dir).free
    if not _free_up(upload_dir, stages, limits.free_space_floor_bytes - (free - size), limits):
        raise LimitReached(
            f"{shown} is refused: storing it would leave less than the {format_bytes(limits.free_space_floor_bytes)} "
            f"kept free on the disk of redolab's data directory (REDOLAB_UPLOAD_FREE_SPACE_FLOOR_BYTES; "
            f"{format_bytes(free)} free now). Ask the administrator to free space, then upload it again.",
            status_code=507,
        )


def _disk_full(name: str, size: int, error: OSError) -> Exception:
    if error.errno != errno.ENOSPC:
        return error
    return LimitReached(
        f"{name} ({format_bytes(size)}) is refused: the disk of redolab's data directory is full. Nothing was "
        "stored: ask the administrator to free space, then upload it again.",
        status_code=507,
    )


# -- preview ------------------------------------------------------------------------------------
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


def preview(
    *,
    session: Session,
    environment: Environment,
    path: Path,
    filename: str,
    fmt: str = "auto",
    mapping: dict | None = None,
) -> Preview:
    """Read the whole upload as the import would (same checks), without storing anything. A refusal
    (RedoInputError) names the file and quotes nothing of it that is not printable text."""
    try:
        return _preview(
            session=session, environment=environment, path=path, filename=filename, fmt=fmt, mapping=mapping
        )
    except FileNotFoundError:  # pruned or imported by another request meanwhile
        raise FieldError("upload_token", EXPIRED, 422) from None
    except RedoInputError as error:
        raise RedoInputError(refusal(error)) from None


def stage_and_preview(
    *,
    upload_dir: Path,
    source,
    filename: str,
    owner: str,
    limits: StagingLimits,
    session: Session,
    environment: Environment,
    fmt: str = "auto",
    mapping: dict | None = None,
) -> tuple[str, Preview]:
    """Stage an upload within the caps and preview it: (its token, the preview). An upload whose
    preview is refused is removed at once (the user sends it again, e.g. with another format)."""
    token = store_upload(upload_dir, source, filename, owner=owner, limits=limits)
    path, name = upload_path(upload_dir, token)
    try:
        return token, preview(session=session, environment=environment, path=path, filename=name, fmt=fmt,
                              mapping=mapping)  # fmt: skip
    except BaseException:
        discard_upload(upload_dir, token)
        raise


def pasted(text: str) -> tuple[io.BytesIO, str]:
    """Text pasted into the paste box (or sent as `text`) as an upload's (source, file name)."""
    return io.BytesIO(text.encode()), PASTED_NAME


def refusal(error: Exception) -> str:
    """The message of a refused upload as it may be shown: one that would quote bytes which were
    never text says so instead of quoting them; any other unprintable character is shown as '?'."""
    message = str(error)
    if _quotes_binary(message):
        name = message.split(": ", 1)[0]  # the readers begin their messages with the file's name
        return f"{printable(name)}: it holds binary data where text was expected. {_EXPORT_AS_TEXT}"
    return printable(message)


def _quotes_binary(message: str) -> bool:
    return "\ufffd" in message or any(unicodedata.category(ch) == "Cc" and not ch.isspace() for ch in message)


_EXPORT_AS_TEXT = (
    "Export the query's rows as CSV or text (a SQL*Plus spool), or upload the collection archive (.zip, "
    ".tar.gz) as it is"
)
_SNIFF_BYTES = 8192


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


def _preview(*, session, environment, path, filename, fmt, mapping) -> Preview:
    reading = Reading()
    sample: list[RedoInterval] = []

    def sampled(intervals):
        for interval in intervals:
            if len(sample) < SAMPLE_ROWS:
                sample.append(interval)
            yield interval

    with tempfile.TemporaryDirectory(prefix="redolab-preview-") as workdir:
        sources, skipped = prepare(path, filename, Path(workdir), fmt=fmt)
        reading.skipped = [
            (name, "binary data, not text" if _quotes_binary(why) else printable(why)) for name, why in skipped
        ]
        for source in sources:
            _refuse_binary(source)
        single = sources[0].path == path
        analysis = analyze(
            sampled(
                in_zone(
                    read_sources(sources, fmt=fmt, mapping=clean_mapping(mapping) if single else None, reading=reading),
                    environment.time_zone,
                )
            ),
            headroom_ratio=environment.headroom_percent / 100,
            keep_points=False,
        )
        mapping, headers = (reading.mapping, reading.headers) if single else ({}, [])
    fmt_label = ", ".join(sorted(set(reading.formats)))
    summary = summarise(analysis, fmt=fmt_label, reading=reading)
    duplicate = session.scalar(
        select(RedoImport).where(RedoImport.environment_id == environment.id, RedoImport.sha256 == file_sha256(path))
    )
    return Preview(filename, fmt_label, reading_kind(reading), headers, mapping, sample, summary, analysis, duplicate)
