"""Importing redo history with its analysis: an import becomes visible in the same transaction as
the stored analysis that includes it, so no page ever reads rows to catch up. Small uploads are
imported in the request; large ones are jobs (the job table, run by a worker) with progress."""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from pathlib import Path

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from redolab.core.config import get_settings
from redolab.core.db import get_or_404, utcnow
from redolab.core.errors import FieldError
from redolab.core.isolate import ChildLimits
from redolab.environments.models import Environment
from redolab.jobs.models import Job, JobStatus
from redolab.redo import service as redo_service
from redolab.redo import uploads
from redolab.redo.analysis import refresh_analysis
from redolab.redo.models import ImportStatus, RedoImport
from redolab.redo.parsers import RedoInputError

log = logging.getLogger("redolab.imports")

KIND = "import"
# Uploads from this size on are imported by a worker, with progress; smaller ones in the request.
JOB_MIN_BYTES = 4 * 1024 * 1024
# An import staged in a request is long finished after this (large ones are jobs, failed as orphans).
STAGED_IMPORT_SECONDS = 3600.0


def _with_analysis(environment_id: int):
    def before_visible(session: Session, record: RedoImport) -> None:
        environment = session.get(Environment, environment_id)
        imports = [*redo_service.list_imports(session=session, environment=environment), record]
        refresh_analysis(session=session, environment=environment, imports=imports, commit=False)

    return before_visible


def import_now(
    *,
    session: Session,
    environment: Environment,
    path: Path,
    filename: str,
    fmt: str = "auto",
    mapping: dict | None = None,
    imported_by: str,
) -> RedoImport:
    """Import here and now (all rows or none), visible together with its analysis."""
    return redo_service.import_file(
        session=session,
        environment=environment,
        path=path,
        filename=filename,
        fmt=fmt,
        mapping=mapping,
        imported_by=imported_by,
        before_visible=_with_analysis(environment.id),
    )


def queue_import(
    *,
    session: Session,
    environment: Environment,
    path: Path,
    filename: str,
    fmt: str = "auto",
    mapping: dict | None = None,
    imported_by: str,
) -> Job:
    """Stage the import's record and queue its job (a worker writes the rows and reports progress)."""
    record = redo_service.begin_import(
        session=session,
        environment=environment,
        path=path,
        filename=filename,
        mapping=mapping,
        imported_by=imported_by,
    )
    job = Job(
        kind=KIND,
        import_id=record.id,
        environment_id=environment.id,
        label=record.filename,
        source_path=str(path),
        options={"format": fmt},
        estimated_rows=redo_service.estimate_rows(path),
    )
    session.add(job)
    session.commit()
    uploads.mark_queued(path)  # the worker reads it: never removed early to make room
    return job


def execute_import(
    sessions: sessionmaker, job_id: int, heartbeat=lambda: None, limits: ChildLimits | None = None
) -> bool:
    """A worker's part (in a thread: blocking database work stays off any event loop): write the
    staged import's rows, reporting progress, then show it with its analysis. A bad line fails the job
    with the line named, and removes what was staged; so does reading past the CPU bound of `limits`
    (default: REDOLAB_PREVIEW_CPU_SECONDS), counted on this thread at each batch. True when the import
    is visible."""
    limits = limits or uploads.reading_limits(get_settings())
    with sessions() as session:
        job = session.get(Job, job_id)
        if job is None:  # deleted with its environment before it started
            return False
        record = session.get(RedoImport, job.import_id) if job.import_id else None
        if record is None:
            _fail(session, job, "the staged import was removed before it was read; nothing was imported")
            return False
        path = Path(job.source_path or "")
        progress = _progress(session, job, heartbeat, limits)
        try:
            if not path.is_file():
                raise RedoInputError(f"the upload {job.label} is gone (removed after hours unused): upload it again")
            redo_service.fill_import(
                session=session,
                record=record,
                path=path,
                fmt=(job.options or {}).get("format", "auto"),
                progress=progress,
                before_visible=_with_analysis(record.environment_id),
                limits=limits,
            )
        except (RedoInputError, FieldError) as error:
            message = error.message if isinstance(error, FieldError) else uploads.refusal(error)
            _fail(session, job, f"{job.label}: {message}; nothing was imported")
            uploads.mark_queued(path, queued=False)
            return False
        except Exception as error:  # a bug: the staged rows are gone (fill_import), the job says so
            session.rollback()
            if session.get(Job, job_id) is None:  # its environment was deleted meanwhile: no bug
                log.warning("import job %s: deleted with its environment while it ran", job_id)
                uploads.mark_queued(path, queued=False)
                return False
            log.exception("import job %s crashed", job_id)
            _fail(session, job, f"internal error in redolab: {type(error).__name__}: {error}; nothing was imported")
            uploads.mark_queued(path, queued=False)
            return False
        job.progress_rows = record.rows_read
        session.commit()
    uploads.discard_upload(path.parent, path.stem)
    return True


def _progress(session: Session, job: Job, heartbeat, limits: ChildLimits):
    """The callback fill_import calls after each batch: the rows so far into `jobs` (the live block
    reads them), a heartbeat, and the CPU bound: the CPU this thread spent on the import (reading a
    file read here, writing the rows) past `limits.cpu_seconds` stops it (RedoInputError)."""
    started = time.thread_time()

    def progress(rows: int) -> None:
        spent = time.thread_time() - started
        if spent > limits.cpu_seconds:
            raise RedoInputError(
                f"the import used more than {limits.cpu_seconds} s of CPU (REDOLAB_PREVIEW_CPU_SECONDS), the most "
                f"one import may use on this server, after {rows:,} rows. Split the file into smaller ones (a "
                "month or an instance each) and import them one by one, or ask the administrator to raise the limit"
            )
        job.progress_rows = rows
        session.commit()
        heartbeat()

    return progress


def _fail(session: Session, job: Job, error: str) -> None:
    job.error, job.status, job.finished_at = error, JobStatus.failed, utcnow()
    session.commit()


def discard_orphan(session: Session, job: Job) -> None:
    """An import whose worker stopped: remove what it staged (the job says why)."""
    if job.import_id is not None:
        redo_service.discard_staged(session=session, import_id=job.import_id)
    job.error = (
        f"the worker importing {job.label} ({job.worker_id}) stopped, e.g. redolab was restarted; "
        "nothing was imported: import the file again"
    )


def discard_abandoned(sessions: sessionmaker, *, older_than_seconds: float = STAGED_IMPORT_SECONDS) -> int:
    """Remove imports staged in a request whose process stopped before they became visible (an import
    queued as a job is its job's to end); returns how many went."""
    with sessions() as session:
        cutoff = utcnow() - timedelta(seconds=older_than_seconds)
        active = (JobStatus.queued, JobStatus.running)
        queued = select(Job.import_id).where(Job.import_id.is_not(None), Job.status.in_(active))
        abandoned = session.scalars(
            select(RedoImport.id).where(
                RedoImport.status == ImportStatus.importing,
                RedoImport.created_at < cutoff,
                RedoImport.id.not_in(queued),
            )
        ).all()
        for import_id in abandoned:
            redo_service.discard_staged(session=session, import_id=import_id)
        return len(abandoned)


def get_import_job(*, session: Session, environment: Environment, job_id: int) -> Job:
    return get_or_404(
        session, Job, job_id, what="Import job", environment=environment, only=lambda job: job.kind == KIND
    )


RECENT_FAILURES_SECONDS = 24 * 3600.0


def import_jobs(*, session: Session, environment: Environment) -> list[Job]:
    """Imports being written, and those that failed in the last day (with why), newest first."""
    since = utcnow() - timedelta(seconds=RECENT_FAILURES_SECONDS)
    query = (
        select(Job)
        .where(
            Job.kind == KIND,
            Job.environment_id == environment.id,
            or_(
                Job.status.in_((JobStatus.queued, JobStatus.running)),
                and_(Job.status == JobStatus.failed, Job.created_at >= since),
            ),
        )
        .order_by(Job.id.desc())
    )
    return list(session.scalars(query))


def page_of_imports(*, session: Session, environment: Environment, limit: int, offset: int) -> tuple[list, int]:
    """The environment's visible imports, oldest first: `limit` of them from `offset`, and how many
    there are in all."""
    visible = (RedoImport.environment_id == environment.id, RedoImport.status == ImportStatus.ready)
    page = select(RedoImport).where(*visible).order_by(RedoImport.id).limit(limit).offset(offset)
    count = session.scalar(select(func.count()).select_from(RedoImport).where(*visible)) or 0
    return list(session.scalars(page)), count


def delete_import(*, session: Session, environment: Environment, import_id: int) -> None:
    """Delete an import with its rows and store the analysis of the others."""
    redo_service.delete_import(
        session=session, record=redo_service.get_import(session=session, environment=environment, import_id=import_id)
    )
    refresh_analysis(session=session, environment=environment)
