"""Large previews are jobs (issue 33): an upload staged above REDOLAB_PREVIEW_JOB_BYTES is not read in
the request; a worker reads it under the same child-process bounds as a preview in the request
(redo/uploads.py `read_isolated`) and keeps the Preview it returns as a pickle beside the staged upload
(`{token}.preview`, written only here, never from a user's bytes). The page and the API poll the job;
once it is done the preview is shown as any other, and imported from there as today. A refused
preview job says why and removes the upload it staged, as a refused preview in the request does.

One user has at most one preview job queued or running (429 beyond); the job also counts, by its
`requested_by`, among the user's queued jobs of the fair-queue caps (jobs/admission.py)."""

from __future__ import annotations

import logging
import os
import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from redolab.core.config import get_settings
from redolab.core.db import get_or_404, utcnow
from redolab.core.errors import FieldError
from redolab.core.isolate import ChildLimits
from redolab.core.limits import LimitReached
from redolab.core.units import format_bytes
from redolab.environments.models import Environment
from redolab.jobs.admission import hold_queue_lock
from redolab.jobs.models import Job, JobStatus
from redolab.redo import uploads
from redolab.redo.parsers import RedoInputError
from redolab.redo.previews import Preview

log = logging.getLogger("redolab.preview_jobs")

KIND = "preview"
_ACTIVE = (JobStatus.queued, JobStatus.running)
_WAIT_SECONDS = 1.0  # the worker's thread heartbeats this often while the child reads


def result_path(upload: Path) -> Path:
    """Where a preview job keeps its result: beside the staged upload (removed with it)."""
    return upload.with_suffix(".preview")


def is_large(path: Path, job_bytes: int) -> bool:
    """Whether the staged upload at `path` is previewed by a worker rather than in the request."""
    try:
        return path.stat().st_size > job_bytes
    except FileNotFoundError:  # imported, discarded or pruned by another request meanwhile
        raise FieldError("upload_token", uploads.EXPIRED, 422) from None


def stage_and_preview(
    *,
    upload_dir: Path,
    source,
    filename: str,
    owner: str,
    requested_by: str,
    limits: uploads.StagingLimits,
    job_bytes: int,
    session: Session,
    environment: Environment,
    fmt: str = "auto",
    mapping: dict | None = None,
) -> tuple[str, Preview | Job]:
    """Stage an upload within the caps: (its token, its preview) when it is `job_bytes` or smaller,
    else (its token, the queued preview job). A refused preview or job removes the upload at once."""
    token = uploads.store_upload(upload_dir, source, filename, owner=owner, limits=limits)
    path, name = uploads.upload_path(upload_dir, token)
    try:
        if is_large(path, job_bytes):
            job = queue_preview(
                session=session,
                environment=environment,
                path=path,
                filename=name,
                fmt=fmt,
                mapping=mapping,
                requested_by=requested_by,
                new=True,
            )
            return token, job
        return token, uploads.preview(
            session=session,
            environment=environment,
            path=path,
            filename=name,
            fmt=fmt,
            mapping=mapping,
            limits=limits.reading,
        )
    except BaseException:
        uploads.discard_upload(upload_dir, token)
        raise


def queue_preview(
    *,
    session: Session,
    environment: Environment,
    path: Path,
    filename: str,
    fmt: str,
    mapping: dict | None,
    requested_by: str,
    new: bool,
) -> Job:
    """Queue the preview of the staged upload at `path` (`new`: staged by this request, removed if
    the preview is refused; else a previewed upload read again with an edited mapping, kept).
    LimitReached (429) when `requested_by` has a preview job queued or running already."""
    hold_queue_lock(session)
    waiting = session.scalar(
        select(func.count(Job.id)).where(Job.kind == KIND, Job.requested_by == requested_by, Job.status.in_(_ACTIVE))
    )
    if waiting:
        session.rollback()
        raise LimitReached(
            f"{filename} ({format_bytes(path.stat().st_size)}) is refused: a large file of yours is being "
            "previewed already, and one user may have one large preview waiting at a time. Wait for it to "
            "finish (its block on the page, or GET .../redo/previews/{job_id}), then upload this one again.",
            status_code=429,
            retry_after=30,
        )
    job = Job(
        kind=KIND,
        environment_id=environment.id,
        label=filename,
        source_path=str(path),
        requested_by=requested_by,
        options={"format": fmt, "mapping": mapping, "new": new},
    )
    # before the commit: a worker may claim the job, and finish it, at once
    result_path(path).unlink(missing_ok=True)  # an older preview of this upload no longer holds
    uploads.mark_queued(path)  # the worker reads it: never removed early to make room
    session.add(job)
    session.commit()
    return job


def execute_preview(
    sessions: sessionmaker, job_id: int, heartbeat=lambda: None, limits: ChildLimits | None = None
) -> bool:
    """A worker's part (in a thread): read the upload in a child process under `limits` (default: the
    REDOLAB_PREVIEW_* settings), heartbeating while it waits, and keep the Preview beside the upload.
    A refusal fails the job with the refusal's text and removes a new upload. True when done."""
    limits = limits or uploads.reading_limits(get_settings())
    with sessions() as session:
        job = session.get(Job, job_id)
        if job is None:  # deleted with its environment before it started
            return False
        environment = session.get(Environment, job.environment_id)
        path, options = Path(job.source_path or ""), job.options or {}
        try:
            if environment is None or not path.is_file():
                raise FileNotFoundError(path)
            result = _waiting(
                lambda: uploads.read_isolated(
                    environment=environment,
                    path=path,
                    filename=job.label or "upload",
                    fmt=options.get("format", "auto"),
                    mapping=options.get("mapping"),
                    limits=limits,
                ),
                heartbeat,
            )
            _keep(path, result)
        except FileNotFoundError:
            return _refused(session, job, uploads.EXPIRED, path)
        except (RedoInputError, FieldError) as error:
            message = error.message if isinstance(error, FieldError) else uploads.refusal(error)
            return _refused(session, job, message, path)
        except Exception as error:  # a bug: the job says so, the upload goes as a refused one does
            session.rollback()
            log.exception("preview job %s crashed", job_id)
            return _refused(session, job, f"internal error in redolab: {type(error).__name__}: {error}", path)
    uploads.mark_queued(path, queued=False)
    os.utime(path)  # unused from now on: pruned early (or for its age) counting from here
    return True


def _waiting(read, heartbeat):
    """`read()` in a thread of its own while this one heartbeats, so a long preview is never taken
    for an orphan (the child's wall-clock bound ends the wait)."""
    with ThreadPoolExecutor(1, thread_name_prefix="redolab-preview") as pool:
        future = pool.submit(read)
        while True:
            try:
                return future.result(timeout=_WAIT_SECONDS)
            except TimeoutError:
                heartbeat()


def _keep(path: Path, result: Preview) -> None:
    """Write the result atomically beside the upload (a reader sees all of it or none)."""
    target = result_path(path)
    partial = target.with_name(f".{target.name}.partial")
    partial.write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    partial.replace(target)


def _refused(session: Session, job: Job, message: str, path: Path) -> bool:
    job.error, job.status, job.finished_at = message, JobStatus.failed, utcnow()
    session.commit()
    _let_go(job, path)
    return False


def _let_go(job: Job, path: Path) -> None:
    """A preview job that did not finish: its new upload is removed, an older one kept as it was."""
    if (job.options or {}).get("new", True):
        uploads.discard_upload(path.parent, path.stem)
    else:
        uploads.mark_queued(path, queued=False)


def discard_orphan(job: Job) -> None:
    """A preview job whose worker stopped: its upload goes, the job says why."""
    job.error = (
        f"the worker previewing {job.label} ({job.worker_id}) stopped, e.g. redolab was restarted; "
        "nothing was kept: upload the file again"
    )
    if job.source_path:
        _let_go(job, Path(job.source_path))


def get_preview_job(*, session: Session, environment: Environment, job_id: int) -> Job:
    return get_or_404(
        session, Job, job_id, what="Preview job", environment=environment, only=lambda job: job.kind == KIND
    )


def preview_of(*, session: Session, environment: Environment, job: Job) -> Preview:
    """The Preview a done job kept, with the import of the same file if any (422 when the upload was
    imported, discarded or pruned since)."""
    try:
        data = result_path(Path(job.source_path or "")).read_bytes()
    except FileNotFoundError:
        raise FieldError("upload_token", uploads.EXPIRED, 422) from None
    return uploads.with_duplicate(session, environment, pickle.loads(data))  # noqa: S301 (written by execute_preview)


def token_of(job: Job) -> str:
    return Path(job.source_path or "").stem
