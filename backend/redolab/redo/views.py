"""Redo history in the environment page: upload, preview with an editable mapping, import."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from redolab.charts.redo import distribution_figure, heatmap_figure, profile_figure, rate_figure
from redolab.core.deps import OperatorUser, SessionDep, current_html_user
from redolab.core.errors import FieldError
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.environments.service import get_environment
from redolab.redo import service
from redolab.redo.mapping import FIELDS
from redolab.redo.parsers import RedoInputError
from redolab.redo.reader import FORMATS

router = APIRouter(dependencies=[Depends(current_html_user)])


def upload_dir(request: Request):
    return request.app.state.settings.data_dir / "uploads"


def history_context(session, environment) -> dict:
    """What the environment page's Redo history section shows: the requirement every plan card uses
    (all imports), its basis, the peak windows, and the charts in the database's time zone."""
    from redolab.planning.service import default_requirement

    imports = service.list_imports(session=session, environment=environment)
    context = {"imports": imports, "formats": FORMATS, "zone": environment.time_zone or "UTC"}
    requirement = default_requirement(session=session, environment=environment, imports=imports)
    if requirement is None:
        return {**context, "redo": None, "requirement": None}
    result = service.environment_analysis(session=session, environment=environment)
    summary = redo_summary(result[1] if result else {}, requirement)
    zone = context["zone"]
    return {
        **context,
        "redo": summary,
        "requirement": requirement,
        "redo_rate_figure": rate_figure(requirement, zone),
        "redo_heatmap_figure": heatmap_figure(requirement.analysis, zone),
        "redo_distribution_figure": distribution_figure(requirement.analysis),
        "redo_profile_figure": profile_figure(requirement.analysis),
    }


def redo_summary(summary: dict, requirement) -> dict:
    """The analytics summary with the requirement model's figures: one answer to "what must the link
    carry" on the page, in the API and in every plan card."""
    if requirement is None:
        return summary
    required = requirement.summed_required_bytes_per_second
    volumes = {t["thread"]: t.get("bytes") for t in summary.get("threads", [])}
    peak_at = requirement.summed_peak_at
    return {
        **summary,
        "threads": [
            {
                "thread": t.thread,
                "peak_bytes_per_second": t.peak_bytes_per_second,
                "peak_at": t.peak_at.isoformat() if t.peak_at else None,
                "required_bytes_per_second": t.required_bytes_per_second,
                "bytes": volumes.get(t.thread),
                "basis": t.basis.to_json(),
            }
            for t in sorted(requirement.threads.values(), key=lambda t: t.thread)
        ],
        "summed": {
            "peak_bytes_per_second": requirement.summed_peak_bytes_per_second,
            "peak_at": peak_at.isoformat() if peak_at else None,
            "p95_bytes_per_second": requirement.summed_percentile(95),
            "p99_bytes_per_second": requirement.summed_percentile(99),
            "how": requirement.summed_how,
            "peak_windows": requirement.to_json()["peak_windows"],
        },
        "required_bytes_per_second": required,
        "required_mbit_per_second": required * 8 / 1e6,
        "requirement": requirement.to_json(),
    }


def _preview_response(request, session, environment, token, fmt, mapping, status_code=200):
    path, filename = service.upload_path(upload_dir(request), token)
    try:
        result = service.preview(
            session=session, environment=environment, path=path, filename=filename, fmt=fmt, mapping=mapping
        )
    except RedoInputError as error:
        context = {
            "environment": environment,
            "token": token,
            "fmt": fmt,
            "error": str(error),
            "fields": FIELDS,
            "formats": FORMATS,
            "headers": None,
            "mapping": mapping or {},
        }
        return render(request, "redo/_preview.html", context, status_code=422)
    context = {
        "environment": environment,
        "token": token,
        "fmt": fmt,
        "preview": result,
        "fields": FIELDS,
        "formats": FORMATS,
        "headers": result.headers,
        "mapping": result.mapping,
        "error": None,
    }
    return render(request, "redo/_preview.html", context, status_code=status_code)


def _mapping_from(form) -> dict:
    mapping = {field: str(form.get(f"map_{field}", "")) for field in FIELDS if form.get(f"map_{field}")}
    if str(form.get(service.LOG_FILE_PAGES) or "").strip():  # Db2's LOGFILSIZ, for a listing without sizes
        mapping[service.LOG_FILE_PAGES] = str(form.get(service.LOG_FILE_PAGES)).strip()
    return mapping


@router.post("/environments/{environment_id}/redo/preview")
async def preview_upload(request: Request, session: SessionDep, user: OperatorUser, environment_id: int) -> Response:
    """Read an uploaded export and show what would be imported (nothing is stored yet)."""
    environment = get_environment(session=session, environment_id=environment_id)
    form = await request.form()
    fmt = str(form.get("format") or "auto")
    token = str(form.get("upload_token") or "")
    upload = form.get("file")
    pasted = str(form.get("pasted") or "")
    if upload is not None and hasattr(upload, "read") and getattr(upload, "filename", ""):
        token = service.store_upload(upload_dir(request), upload.file, upload.filename)
    elif pasted.strip():
        token = service.store_pasted(upload_dir(request), pasted)
    elif not token:
        context = {
            "environment": environment,
            "error": "Choose a file to upload, or paste the output into the text box.",
            "token": "",
            "fmt": fmt,
            "fields": FIELDS,
            "formats": FORMATS,
            "headers": None,
            "mapping": {},
        }
        return render(request, "redo/_preview.html", context, status_code=422)
    return _preview_response(request, session, environment, token, fmt, _mapping_from(form) or None)


@router.post("/environments/{environment_id}/redo/imports")
async def import_upload(request: Request, session: SessionDep, user: OperatorUser, environment_id: int) -> Response:
    """Import the previewed upload with the (possibly edited) mapping: every row or none."""
    environment = get_environment(session=session, environment_id=environment_id)
    form = await request.form()
    token, fmt = str(form.get("upload_token") or ""), str(form.get("format") or "auto")
    try:
        path, filename = service.upload_path(upload_dir(request), token)
        service.import_file(
            session=session,
            environment=environment,
            path=path,
            filename=filename,
            fmt=fmt,
            mapping=_mapping_from(form) or None,
            imported_by=user.username,
        )
    except (RedoInputError, FieldError) as error:
        message = error.message if isinstance(error, FieldError) else str(error)
        context = {
            "environment": environment,
            "token": token,
            "fmt": fmt,
            "error": message,
            "fields": FIELDS,
            "formats": FORMATS,
            "headers": None,
            "mapping": {},
        }
        return render(request, "redo/_preview.html", context, status_code=422)
    service.discard_upload(upload_dir(request), token)
    if is_htmx(request):  # the whole page changes (numbers, charts, imports): reload it
        return Response(status_code=200, headers={"HX-Refresh": "true"})
    return redirect(request, f"/environments/{environment.id}#history")


@router.delete("/environments/{environment_id}/redo/imports/{import_id}")
def delete_import(request: Request, session: SessionDep, user: OperatorUser, environment_id: int, import_id: int):
    """Delete an import and its rows."""
    environment = get_environment(session=session, environment_id=environment_id)
    service.delete_import(
        session=session, record=service.get_import(session=session, environment=environment, import_id=import_id)
    )
    return Response(status_code=200, headers={"HX-Refresh": "true"})
