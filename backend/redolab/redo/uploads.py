"""Uploads: a file (or pasted text) kept under the data directory between its preview and its import,
and the preview, which reads the whole upload as the import would (same checks) and stores nothing."""

from __future__ import annotations

import io
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.errors import FieldError
from redolab.core.security import file_sha256
from redolab.environments.models import Environment
from redolab.redo.analytics import Analysis, analyze
from redolab.redo.ingest.mapping import clean_mapping
from redolab.redo.ingest.pipeline import Reading, in_zone, prepare, read_sources, reading_kind, summarise
from redolab.redo.models import RedoImport
from redolab.redo.schemas import RedoInterval

SAMPLE_ROWS = 8
PASTED_NAME = "pasted text"  # the name a paste-box upload goes by in previews, errors and the import list
EXPIRED = "This upload has expired or was already imported: upload the file again."


# -- uploads: kept between preview and import, under the data directory ------------------------
def prune_uploads(upload_dir: Path, max_age_seconds: float) -> int:
    """Remove uploads older than `max_age_seconds` (previews never imported); safe while other
    requests store or discard theirs. Returns the number removed."""
    removed = 0
    for old in upload_dir.glob("*.upload") if upload_dir.is_dir() else ():
        try:
            if time.time() - old.stat().st_mtime <= max_age_seconds:
                continue
        except FileNotFoundError:  # imported or discarded meanwhile
            continue
        old.unlink(missing_ok=True)
        old.with_suffix(".name").unlink(missing_ok=True)
        removed += 1
    return removed


def store_upload(upload_dir: Path, source, filename: str) -> str:
    """Save an uploaded file in chunks (never whole in memory); returns its token."""
    upload_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(18)
    with open(upload_dir / f"{token}.upload", "wb") as target:
        for block in iter(lambda: source.read(1 << 20), b""):
            target.write(block)
    (upload_dir / f"{token}.name").write_text(Path(filename or "upload").name[:200])
    return token


def store_pasted(upload_dir: Path, text: str) -> str:
    """Save text pasted into the paste box (or sent as `text`) as an upload named PASTED_NAME."""
    return store_upload(upload_dir, io.BytesIO(text.encode()), PASTED_NAME)


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
    (upload_dir / f"{token}.name").unlink(missing_ok=True)


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
    """Read the whole upload as the import would (same checks), without storing anything."""
    try:
        return _preview(
            session=session, environment=environment, path=path, filename=filename, fmt=fmt, mapping=mapping
        )
    except FileNotFoundError:  # pruned or imported by another request meanwhile
        raise FieldError("upload_token", EXPIRED, 422) from None


def _preview(*, session, environment, path, filename, fmt, mapping) -> Preview:
    reading = Reading()
    sample: list[RedoInterval] = []

    def sampled(intervals):
        for interval in intervals:
            if len(sample) < SAMPLE_ROWS:
                sample.append(interval)
            yield interval

    with tempfile.TemporaryDirectory(prefix="redolab-preview-") as workdir:
        sources, reading.skipped = prepare(path, filename, Path(workdir), fmt=fmt)
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
