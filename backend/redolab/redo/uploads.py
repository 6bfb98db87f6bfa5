"""Uploads: a file (or pasted text) kept under the data directory between its preview and its import,
and the preview, which reads the whole upload as the import would (same checks) and stores nothing.

A staged upload is `{token}.upload` with small files beside it: `.name` (the file name the user
knows), `.owner` (who uploaded it, for the per-user cap) and, while an import job will read it,
`.queued`. The bytes staged are capped per user and in all, and an upload must leave a floor free on
the disk: each upload counts and reserves its bytes under a lock every process shares before a byte
of it is written, so uploads arriving together cannot pass a cap together. When space is short,
previews unused for a while are removed first, oldest first; an upload whose preview is refused is
removed at once.

The preview is read in a child process under CPU, memory and wall-clock bounds (core/isolate.py,
redo/previews.py): the request's thread only waits, then looks the file up among the imports.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import io
import logging
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.config import Settings
from redolab.core.errors import FieldError
from redolab.core.isolate import ChildLimitReached, ChildLimits, run_limited
from redolab.core.limits import LimitReached, Slots
from redolab.core.units import format_bytes, format_duration
from redolab.environments.models import Environment
from redolab.redo.models import RedoImport
from redolab.redo.parsers import RedoInputError
from redolab.redo.previews import Preview, over_limit, printable, read_preview, refusal

log = logging.getLogger("redolab.uploads")

PASTED_NAME = "pasted text"  # the name a paste-box upload goes by in previews, errors and the import list
EXPIRED = "This upload has expired or was already imported: upload the file again."
SIDECARS = (".name", ".owner", ".queued", ".preview")  # .preview: a preview job's result
_LOCK_FILE = ".staging.lock"


def preview_slots(settings: Settings) -> Slots:
    """The process's pool of upload reads (previews, and imports read in the request)."""
    return Slots(
        total=settings.max_concurrent_previews,
        per_user=settings.max_previews_per_user,
        noun="upload",
        settings=("REDOLAB_MAX_CONCURRENT_PREVIEWS", "REDOLAB_MAX_PREVIEWS_PER_USER"),
    )


def reading_limits(settings: Settings) -> ChildLimits:
    """The bounds on the process that reads one upload (REDOLAB_PREVIEW_*)."""
    return ChildLimits(
        cpu_seconds=settings.preview_cpu_seconds,
        memory_bytes=settings.preview_memory_bytes,
        wall_seconds=settings.preview_wall_seconds,
    )


def _default_reading_limits() -> ChildLimits:
    fields = Settings.model_fields
    return ChildLimits(
        cpu_seconds=fields["preview_cpu_seconds"].default,
        memory_bytes=fields["preview_memory_bytes"].default,
        wall_seconds=fields["preview_wall_seconds"].default,
    )


@dataclass(frozen=True)
class StagingLimits:
    """The caps on staged uploads, in bytes; previews unused `early_prune_seconds` may go early.
    `reading`: the bounds on the child process that reads one for its preview."""

    per_user_bytes: int
    total_bytes: int
    free_space_floor_bytes: int
    early_prune_seconds: float
    reading: ChildLimits = field(default_factory=_default_reading_limits)

    @classmethod
    def of(cls, settings: Settings) -> StagingLimits:
        return cls(
            per_user_bytes=settings.upload_quota_per_user_bytes,
            total_bytes=settings.upload_quota_total_bytes,
            free_space_floor_bytes=settings.upload_free_space_floor_bytes,
            early_prune_seconds=settings.upload_early_prune_seconds,
            reading=reading_limits(settings),
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


# -- preview: read in a child process (redo/previews.py), the duplicate looked up here --------------
def preview(
    *,
    session: Session,
    environment: Environment,
    path: Path,
    filename: str,
    fmt: str = "auto",
    mapping: dict | None = None,
    limits: ChildLimits | None = None,
) -> Preview:
    """Read the whole upload as the import would (same checks), without storing anything, in a child
    process under `limits` (default: the settings' defaults). A refusal (RedoInputError) names the
    file and quotes nothing of it that is not printable text; so does a limit that stopped the read."""
    try:
        return _preview(
            session=session,
            environment=environment,
            path=path,
            filename=filename,
            fmt=fmt,
            mapping=mapping,
            limits=limits or _default_reading_limits(),
        )
    except FileNotFoundError:  # pruned or imported by another request meanwhile
        raise FieldError("upload_token", EXPIRED, 422) from None
    except RedoInputError as error:
        raise RedoInputError(refusal(error)) from None


def pasted(text: str) -> tuple[io.BytesIO, str]:
    """Text pasted into the paste box (or sent as `text`) as an upload's (source, file name)."""
    return io.BytesIO(text.encode()), PASTED_NAME


def _preview(*, session, environment, path, filename, fmt, mapping, limits: ChildLimits) -> Preview:
    """The child reads; the parent only waits, then looks the file up among the imports."""
    result = read_isolated(
        environment=environment, path=path, filename=filename, fmt=fmt, mapping=mapping, limits=limits
    )
    return with_duplicate(session, environment, result)


def read_isolated(*, environment, path: Path, filename: str, fmt: str, mapping, limits: ChildLimits) -> Preview:
    """Read the upload in a child process under `limits` (an archive unpacked in a directory under the
    uploads, removed here even when a limit killed the child): a Preview without `duplicate_of`. A
    limit that stopped the child is a refusal (RedoInputError) naming the file and the limit."""
    with tempfile.TemporaryDirectory(prefix=".preview-", dir=path.parent) as workdir:
        try:
            return run_limited(
                read_preview,
                str(path),
                filename,
                fmt,
                mapping,
                environment.time_zone,
                environment.headroom_percent,
                workdir,
                limits=limits,
                preload=(read_preview.__module__,),
            )
        except ChildLimitReached as stopped:
            raise over_limit(filename, stopped) from None


def with_duplicate(session: Session, environment: Environment, result: Preview) -> Preview:
    """`result` with the import of the same file (by its sha256) in `environment`, if there is one."""
    duplicate = session.scalar(
        select(RedoImport).where(RedoImport.environment_id == environment.id, RedoImport.sha256 == result.sha256)
    )
    return dataclasses.replace(result, duplicate_of=duplicate)
