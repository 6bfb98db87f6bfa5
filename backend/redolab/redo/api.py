"""JSON API: redo history (preview, import, list, delete, analytics)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Depends, Form, Request, UploadFile, status
from pydantic import BaseModel, ConfigDict, model_validator
from starlette.responses import JSONResponse

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import PageDep, SessionDep
from redolab.core.errors import FieldError
from redolab.core.openapi import error_responses
from redolab.environments.service import get_environment
from redolab.jobs.models import Job, JobStatus
from redolab.jobs.queue import wake_local_worker
from redolab.redo import imports, preview_jobs, uploads
from redolab.redo.analysis import stored_analysis
from redolab.redo.ingest.mapping import DECIMAL
from redolab.redo.parsers import RedoInputError

router = APIRouter(prefix="/api/v1/environments", tags=["redo"], dependencies=[Depends(current_api_user)])


class RedoImportPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    filename: str
    sha256: str
    format: str
    kind: str
    mapping: dict
    rows_read: int
    rows_kept: int
    dropped: dict
    warnings: list
    notes: list | None
    first_time: datetime | None
    last_time: datetime | None
    threads: list
    imported_by: str
    created_at: datetime


def _unreadable(error: RedoInputError) -> FieldError:
    return FieldError("file", uploads.refusal(error), 422)


@router.post(
    "/{environment_id}/redo/preview",
    responses={
        202: {"description": "A large upload: previewed by a worker; poll GET .../redo/previews/{job_id}."},
        429: {"description": "Your staged uploads would pass the per-user cap, or a large preview of yours waits."},
        503: {"description": "Uploads are being read up to the cap already: try again after Retry-After."},
        507: {"description": "The caps of staged uploads in all, or the data disk's free-space floor."},
    },
)
def preview_upload(
    request: Request,
    session: SessionDep,
    user: ApiOperator,
    environment_id: int,
    file: UploadFile | None = None,
    text: str | None = Form(None),
    format: str = Form("auto"),
    decimal: str = Form("auto"),
) -> dict:
    """What an import of this file (or of `text`, pasted output) would store (format, mapping,
    counts, peaks, ignored columns, an archive's members, how its numbers are written); nothing is
    stored. `decimal`: auto (the file tells; a file that could be read either way is refused), point
    or comma. The upload_token imports it later without sending it again; a refused file (422) is
    not kept. An upload above REDOLAB_PREVIEW_JOB_BYTES is read by a worker: the answer is 202 with
    `job_id` and `status_url`, which answers this same preview once done."""
    environment = get_environment(session=session, environment_id=environment_id)
    if file is not None and file.filename:
        source, filename = file.file, file.filename
    elif text and text.strip():
        source, filename = uploads.pasted(text)
    else:
        raise FieldError("file", "Send the export as `file` (multipart) or its text as `text`.", 422)
    settings = request.app.state.settings
    try:
        with request.app.state.preview_slots.taken(user.id):
            token, result = preview_jobs.stage_and_preview(
                upload_dir=settings.upload_dir,
                source=source,
                filename=filename,
                owner=str(user.id),
                requested_by=user.username,
                limits=uploads.StagingLimits.of(settings),
                job_bytes=settings.preview_job_bytes,
                session=session,
                environment=environment,
                fmt=format,
                mapping={DECIMAL: decimal},
            )
    except RedoInputError as error:
        raise _unreadable(error) from None
    if isinstance(result, Job):
        wake_local_worker(request.app)
        return JSONResponse(_preview_job_public(environment.id, result), status_code=202)
    return _preview_public(token, result)


def _preview_job_public(environment_id: int, job: Job) -> dict:
    return {
        "job_id": job.id,
        "status": job.status.value,
        "label": job.label,
        "error": job.error,
        "status_url": f"/api/v1/environments/{environment_id}/redo/previews/{job.id}",
    }


@router.get("/{environment_id}/redo/previews/{job_id}")
def read_preview_job(session: SessionDep, environment_id: int, job_id: int) -> dict:
    """A large upload's preview job: `status` queued or running; done, with the preview (as `POST
    .../redo/preview` answers it, its `upload_token` to import); or failed, with why in `error` (the
    upload is then removed: send it again)."""
    environment = get_environment(session=session, environment_id=environment_id)
    job = preview_jobs.get_preview_job(session=session, environment=environment, job_id=job_id)
    answer = _preview_job_public(environment.id, job)
    if job.status == JobStatus.done:
        result = preview_jobs.preview_of(session=session, environment=environment, job=job)
        answer |= _preview_public(preview_jobs.token_of(job), result)
    return answer


def _preview_public(token: str, result) -> dict:
    return {
        "numbers": result.summary.get("numbers", {}),
        "upload_token": token,
        "format": result.format,
        "kind": result.kind,
        "headers": result.headers,
        "mapping": result.mapping,
        "analysis": result.summary,
        "already_imported_as": result.duplicate_of.id if result.duplicate_of else None,
    }


class ImportRequest(BaseModel):
    upload_token: str
    format: str = "auto"
    mapping: dict[str, str] | None = None
    decimal: str = "auto"  # auto (the file tells), point or comma: carried to the readers inside `mapping`

    @model_validator(mode="after")
    def _decimal_in_mapping(self) -> ImportRequest:
        if self.decimal != "auto":
            self.mapping = {**(self.mapping or {}), DECIMAL: self.decimal}
        return self


class ImportJobPublic(BaseModel):
    """A large import, written by a worker: poll `status_url` until `status` is done or failed."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    status: str
    label: str | None
    import_id: int | None
    progress_rows: int
    estimated_rows: int | None
    error: str | None
    created_at: datetime
    finished_at: datetime | None
    status_url: str = ""


def _job_public(environment_id: int, job) -> ImportJobPublic:
    public = ImportJobPublic.model_validate(job)
    public.status_url = f"/api/v1/environments/{environment_id}/redo/jobs/{job.id}"
    return public


@router.post(
    "/{environment_id}/redo/imports",
    status_code=status.HTTP_201_CREATED,
    responses={
        202: {"model": ImportJobPublic, "description": "A large file: imported by a worker (a job)."},
        **error_responses(429, 507),
    },
)
def import_upload(
    request: Request, session: SessionDep, user: ApiOperator, environment_id: int, body: ImportRequest
) -> RedoImportPublic:
    """Import a previewed upload (all rows or none). From 4 MiB on the file is imported by a worker:
    the answer is 202 with the job, whose status_url reports progress and, if it fails, why."""
    environment = get_environment(session=session, environment_id=environment_id)
    upload_dir = request.app.state.settings.upload_dir
    path, filename = uploads.upload_path(upload_dir, body.upload_token)
    arguments = {
        "session": session,
        "environment": environment,
        "path": path,
        "filename": filename,
        "fmt": body.format,
        "mapping": body.mapping,
        "imported_by": user.username,
    }
    try:
        if path.stat().st_size >= imports.JOB_MIN_BYTES:
            job = imports.queue_import(**arguments)
            wake_local_worker(request.app)
            return JSONResponse(_job_public(environment.id, job).model_dump(mode="json"), status_code=202)
        with request.app.state.preview_slots.taken(user.id):  # read here: an archive may unpack large
            record = imports.import_now(**arguments)
    except RedoInputError as error:
        raise _unreadable(error) from None
    uploads.discard_upload(upload_dir, body.upload_token)
    return RedoImportPublic.model_validate(record)


@router.get("/{environment_id}/redo/jobs/{job_id}")
def read_import_job(session: SessionDep, environment_id: int, job_id: int) -> ImportJobPublic:
    """A large import's progress (rows written), its import once done, or why it failed."""
    environment = get_environment(session=session, environment_id=environment_id)
    return _job_public(environment.id, imports.get_import_job(session=session, environment=environment, job_id=job_id))


class RedoImportsPublic(BaseModel):
    data: list[RedoImportPublic]
    count: int  # imports in all, beyond this page too


@router.get("/{environment_id}/redo/imports")
def list_imports(
    session: SessionDep,
    environment_id: int,
    page: PageDep,
) -> RedoImportsPublic:
    """The environment's imports, oldest first, a page at a time; `count` is how many there are in all."""
    environment = get_environment(session=session, environment_id=environment_id)
    page, count = imports.page_of_imports(
        session=session, environment=environment, limit=page.limit, offset=page.offset
    )
    return RedoImportsPublic(data=[RedoImportPublic.model_validate(r) for r in page], count=count)


@router.delete("/{environment_id}/redo/imports/{import_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_import(session: SessionDep, user: ApiOperator, environment_id: int, import_id: int) -> None:
    """Delete an import with its rows."""
    environment = get_environment(session=session, environment_id=environment_id)
    imports.delete_import(session=session, environment=environment, import_id=import_id)


@router.get("/{environment_id}/redo/analytics")
def read_analytics(session: SessionDep, environment_id: int) -> dict:
    """Peaks per thread and summed, the required link rate and warnings, over all imports (the
    stored analysis: computed when the imports change)."""
    environment = get_environment(session=session, environment_id=environment_id)
    analysis = stored_analysis(session=session, environment=environment)
    if analysis is None or not analysis.document:
        return {"threads": [], "summed": None, "required_bytes_per_second": None, "warnings": [], "requirement": None}
    return analysis.document
