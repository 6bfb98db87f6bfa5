"""Redo history in the environment page: upload, preview with an editable mapping, import."""

from __future__ import annotations

import threading
import weakref

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from redolab.auth.deps import OperatorUser, current_html_user
from redolab.charts.redo import distribution_figure, heatmap_figure, profile_figure, rate_figure
from redolab.core.deps import FormDep, SessionDep
from redolab.core.errors import FieldError
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.core.units import wall_clock
from redolab.environments.service import get_environment
from redolab.jobs.models import Job, JobStatus
from redolab.jobs.queue import wake_local_worker
from redolab.redo import imports as redo_imports
from redolab.redo import preview_jobs, service, uploads
from redolab.redo.analysis import RedoAnalysis
from redolab.redo.imports import import_jobs
from redolab.redo.ingest.aliases import FIELDS, LABELS
from redolab.redo.ingest.mapping import DECIMAL, LOG_FILE_PAGES
from redolab.redo.ingest.reader import FORMATS
from redolab.redo.parsers import RedoInputError
from redolab.redo.source_words import format_words, source_words
from redolab.web.titles import history_title

router = APIRouter(dependencies=[Depends(current_html_user)])


# The figures of each analysis the cache of redo.analysis holds, gone with it: a new import, headroom
# or zone is a new analysis, so no page draws old ones.
_figures: weakref.WeakKeyDictionary[RedoAnalysis, dict] = weakref.WeakKeyDictionary()
_figures_lock = threading.Lock()
FORMAT_CHOICES = [(name, "detect automatically" if name == "auto" else format_words(name)) for name in FORMATS]


def history_context(session, environment, *, history: RedoAnalysis | None) -> dict:
    """What the environment page's Redo history section shows: the requirement every plan card uses
    (all imports), its basis, the peak windows, and the charts in the database's time zone, all from
    `history`, the stored analysis the page read (no row is read here). The figures are drawn once
    per process and analysis."""
    imports = service.list_imports(session=session, environment=environment)
    context = {
        "imports": imports,
        "read_as": {i.id: source_words(i.format, i.kind) for i in imports},  # what each file was read as
        "formats": FORMAT_CHOICES,
        "zone": environment.time_zone or "UTC",
        "import_jobs": import_jobs(session=session, environment=environment),
    }
    summary = history.summary if history is not None else None
    if summary is None:
        return {**context, "redo": None, "requirement": None}
    with _figures_lock:
        figures = _figures.get(history)
    if figures is None:
        charts, zone = history.charts, context["zone"]
        title = _history_titles(environment, imports, charts)
        analysis = summary.requirement.analysis
        kinds = dict(analysis.kinds) if analysis is not None else {}
        figures = {
            "redo_rate_figure": rate_figure(charts, summary.requirement, zone, title("Redo rate over time")),
            "redo_heatmap_figure": heatmap_figure(charts, zone, title("Highest redo rate by weekday and hour")),
            "redo_distribution_figure": distribution_figure(charts, kinds, title("Distribution of redo rates")),
            "redo_profile_figure": profile_figure(charts, title("Redo rate by hour of day")),
        }
        with _figures_lock:
            _figures[history] = figures
    return {**context, "redo": summary, "requirement": summary.requirement, **figures}


def _history_titles(environment, imports, charts):
    """The History charts' title blocks: the imports drawn and the period they cover (the database's
    clock, as the charts draw it)."""
    zone = environment.time_zone or "UTC"
    moments = [moment for points in charts.points.values() for moment, _ in points]
    moments += [moment for span in charts.spans for moment in (span.start, span.end)]
    first = wall_clock(min(moments), zone) if moments else None
    last = wall_clock(max(moments), zone) if moments else None
    return lambda what: history_title(what, environment, imports, first, last)


def _render_preview(request, environment, *, token, fmt, result=None, error=None, mapping=None, status_code=None):
    """The preview fragment: what would be imported (`result`), or why it cannot be (`error`, 422)."""
    context = _preview_context(environment, token=token, fmt=fmt, result=result, error=error, mapping=mapping)
    return render(request, "redo/_preview.html", context, status_code=status_code or (422 if error else 200))


def _preview_context(environment, *, token, fmt, result=None, error=None, mapping=None) -> dict:
    return {
        "environment": environment,
        "token": token,
        "fmt": fmt,
        "preview": result,
        "error": error,
        "fields": FIELDS,
        "field_labels": LABELS,
        "formats": FORMAT_CHOICES,
        "headers": result.headers if result else None,
        "mapping": result.mapping if result else (mapping or {}),
    }


def _render_preview_job(request, session, environment, job, status_code=200):
    """A preview job's block: polled while it waits or runs; once done, the preview panel itself."""
    context = {"environment": environment, "job": job}
    if job.status == JobStatus.done:
        token, fmt = preview_jobs.token_of(job), (job.options or {}).get("format", "auto")
        try:
            result = preview_jobs.preview_of(session=session, environment=environment, job=job)
        except FieldError as error:
            return _render_preview(request, environment, token="", fmt=fmt, error=error.message, status_code=200)
        context |= _preview_context(environment, token=token, fmt=fmt, result=result)
    return render(request, "redo/_preview_job.html", context, status_code=status_code)


def _preview_response(request, session, user, environment, token, fmt, mapping):
    settings = request.app.state.settings
    path, filename = uploads.upload_path(settings.upload_dir, token)
    if preview_jobs.is_large(path, settings.preview_job_bytes):  # read again by a worker, as the first time
        job = preview_jobs.queue_preview(
            session=session,
            environment=environment,
            path=path,
            filename=filename,
            fmt=fmt,
            mapping=mapping,
            requested_by=user.username,
            new=False,
        )
        wake_local_worker(request.app)
        return _render_preview_job(request, session, environment, job, status_code=202)
    try:
        result = uploads.preview(
            session=session,
            environment=environment,
            path=path,
            filename=filename,
            fmt=fmt,
            mapping=mapping,
            limits=uploads.reading_limits(settings),
        )
    except RedoInputError as error:
        return _render_preview(request, environment, token=token, fmt=fmt, error=str(error), mapping=mapping)
    return _render_preview(request, environment, token=token, fmt=fmt, result=result)


def _mapping_from(form) -> dict:
    mapping = {field: str(form.get(f"map_{field}", "")) for field in FIELDS if form.get(f"map_{field}")}
    if str(form.get(LOG_FILE_PAGES) or "").strip():  # Db2's LOGFILSIZ, for a listing without sizes
        mapping[LOG_FILE_PAGES] = str(form.get(LOG_FILE_PAGES)).strip()
    if str(form.get(DECIMAL) or "auto").strip() != "auto":  # the user's decimal character: checked by the reader
        mapping[DECIMAL] = str(form.get(DECIMAL)).strip()
    return mapping


@router.post("/environments/{environment_id}/redo/preview")
def preview_upload(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Read an uploaded export and show what would be imported (nothing is stored yet); a new upload
    whose preview is refused is not kept, a previewed one is checked again with the edited mapping."""
    environment = get_environment(session=session, environment_id=environment_id)
    fmt, mapping = str(form.get("format") or "auto"), _mapping_from(form) or None
    token = str(form.get("upload_token") or "")
    upload = form.get("file")
    pasted = str(form.get("pasted") or "")
    if upload is not None and hasattr(upload, "read") and getattr(upload, "filename", ""):
        source, filename = upload.file, upload.filename
    elif pasted.strip():
        source, filename = uploads.pasted(pasted)
    elif token:
        source, filename = None, ""
    else:
        error = "Choose a file to upload, or paste the output into the text box."
        return _render_preview(request, environment, token="", fmt=fmt, error=error)
    settings = request.app.state.settings
    with request.app.state.preview_slots.taken(user.id):
        if source is None:
            return _preview_response(request, session, user, environment, token, fmt, mapping)
        try:
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
                fmt=fmt,
                mapping=mapping,
            )
        except RedoInputError as error:
            return _render_preview(request, environment, token="", fmt=fmt, error=str(error), mapping=mapping)
    if isinstance(result, Job):  # a large upload: a worker reads it, the page polls its block
        wake_local_worker(request.app)
        return _render_preview_job(request, session, environment, result, status_code=202)
    return _render_preview(request, environment, token=token, fmt=fmt, result=result)


@router.get("/environments/{environment_id}/redo/previews/{job_id}/live")
def show_preview_job(request: Request, session: SessionDep, environment_id: int, job_id: int) -> Response:
    """A preview job's block: waiting or reading while it runs; the preview panel once it is done (the
    user imports from there); a failed one says why, without a trigger, so polling stops."""
    environment = get_environment(session=session, environment_id=environment_id)
    job = preview_jobs.get_preview_job(session=session, environment=environment, job_id=job_id)
    return _render_preview_job(request, session, environment, job)


@router.post("/environments/{environment_id}/redo/imports")
def import_upload(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Import the previewed upload with the (possibly edited) mapping: every row or none. A large
    file is imported by a worker: the answer is its live progress block."""
    environment = get_environment(session=session, environment_id=environment_id)
    token, fmt = str(form.get("upload_token") or ""), str(form.get("format") or "auto")
    upload_dir = request.app.state.settings.upload_dir
    arguments = {"session": session, "environment": environment, "fmt": fmt, "imported_by": user.username}
    try:
        path, filename = uploads.upload_path(upload_dir, token)
        arguments |= {"path": path, "filename": filename, "mapping": _mapping_from(form) or None}
        if path.stat().st_size >= redo_imports.JOB_MIN_BYTES:
            job = redo_imports.queue_import(**arguments)
            wake_local_worker(request.app)
            return render(request, "redo/_import_job.html", {"environment": environment, "job": job}, status_code=202)
        with request.app.state.preview_slots.taken(user.id):  # read here: an archive may unpack large
            redo_imports.import_now(**arguments)
    except (RedoInputError, FieldError) as error:
        message = error.message if isinstance(error, FieldError) else uploads.refusal(error)
        return _render_preview(request, environment, token=token, fmt=fmt, error=message)
    uploads.discard_upload(upload_dir, token)
    if is_htmx(request):  # the whole page changes (numbers, charts, imports): reload it
        return Response(status_code=200, headers={"HX-Refresh": "true"})
    return redirect(request, f"/environments/{environment.id}#history")


@router.get("/environments/{environment_id}/redo/jobs/{job_id}/live")
def show_import_job(request: Request, session: SessionDep, environment_id: int, job_id: int) -> Response:
    """An import job's live block: rows written so far while it runs; once it is done the page
    reloads (numbers, charts and the imports list all change); a failed one says why, without a
    trigger, so polling stops."""
    environment = get_environment(session=session, environment_id=environment_id)
    job = redo_imports.get_import_job(session=session, environment=environment, job_id=job_id)
    if job.status == JobStatus.done and is_htmx(request):
        return Response(status_code=200, headers={"HX-Refresh": "true"})
    return render(request, "redo/_import_job.html", {"environment": environment, "job": job})


@router.delete("/environments/{environment_id}/redo/imports/{import_id}")
def delete_import(request: Request, session: SessionDep, user: OperatorUser, environment_id: int, import_id: int):
    """Delete an import and its rows; the analysis of the rest is stored again."""
    environment = get_environment(session=session, environment_id=environment_id)
    redo_imports.delete_import(session=session, environment=environment, import_id=import_id)
    return Response(status_code=200, headers={"HX-Refresh": "true"})
