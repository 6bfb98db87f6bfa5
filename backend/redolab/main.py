"""create_app(): routers, templates, static files, middleware, error handlers."""

from __future__ import annotations

import gc
import logging
import os
import re
from contextlib import asynccontextmanager

import anyio
from fastapi import Depends, FastAPI, Request, status
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import JSONResponse
from sqlalchemy import text
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware
from starlette.responses import Response
from starlette_csrf import CSRFMiddleware

from redolab import __version__
from redolab.auth import api as auth_api
from redolab.auth.audit import AuditMiddleware
from redolab.auth.deps import LoginRequired, current_api_user, current_html_user
from redolab.auth.guard import DatabaseCounts, LoginGuard, LoginThrottleMiddleware
from redolab.collect import api as collect_api
from redolab.core.config import Settings, get_settings
from redolab.core.db import make_engine, make_sessionmaker
from redolab.core.deps import SessionDep
from redolab.core.errors import FieldError, NotFound
from redolab.core.limits import LimitReached, SlotsFullMiddleware
from redolab.core.middleware import (
    SMALL_BODY_BYTES,
    BodyLimitMiddleware,
    IdBoundsMiddleware,
    SameOriginMiddleware,
    SecurityHeadersMiddleware,
    UploadSpaceMiddleware,
    csp_allowing_inline_scripts,
)
from redolab.core.migrate import upgrade
from redolab.core.openapi import declare_error_statuses
from redolab.core.static import Assets, HashedStaticFiles
from redolab.core.templating import FRONTEND_DIR, is_htmx, render, templates
from redolab.core.units import MIB, format_count
from redolab.environments import api as environments_api
from redolab.environments import destinations_api, tiers_api
from redolab.environments.host_checks import HostChecks
from redolab.hadr import api as hadr_api
from redolab.hadr.service import MAX_CAPTURE_BYTES
from redolab.planning import api as planning_api
from redolab.preflight import api as preflight_api
from redolab.redo import api as redo_api
from redolab.redo.uploads import StagingLimits, make_room, preview_slots, prune_uploads
from redolab.rehearsals import api as rehearsals_api
from redolab.runs import api as runs_api
from redolab.runs.service import MAX_RESULT_IMPORT_BYTES
from redolab.sweeps import api as sweeps_api
from redolab.sweeps import clusters_api
from redolab.watches import api as watches_api
from redolab.watches import receivers_api
from redolab.web import auth as auth_pages
from redolab.web import collect as collect_pages
from redolab.web import destinations as destination_pages
from redolab.web import environments as environment_pages
from redolab.web import hadr as hadr_pages
from redolab.web import manual as manual_pages
from redolab.web import metrics as metrics_page
from redolab.web import paths as path_pages
from redolab.web import planning as planning_pages
from redolab.web import preflight as preflight_pages
from redolab.web import receivers as receiver_pages
from redolab.web import redo as redo_pages
from redolab.web import rehearsals as rehearsal_pages
from redolab.web import runs as run_pages
from redolab.web import sweeps as sweep_pages
from redolab.web import tiers as tier_pages
from redolab.web import watches as watch_pages
from redolab.web import workspace
from redolab.worker import Worker, fail_orphans

log = logging.getLogger("redolab")

SESSION_COOKIE = "redolab_session"
# Routes that answer without a login. Everything else requires a user; tests/test_auth_routes.py
# walks the app's routes and proves it.
PUBLIC_PATHS = frozenset({"/login", "/setup", "/healthz", "/api/v1/auth/token"})
_HADR_UPLOAD = re.compile(r"/environments/\d+/hadr/captures$")
_REDO_UPLOAD = re.compile(r"/redo/(preview|imports)")
_REDO_PREVIEW = re.compile(r"^(/api/v1)?/environments/\d+/redo/preview$")
_RESULT_UPLOAD = re.compile(r"/runs/import")
# Query parameters that name rows by id (tests/security/test_id_bounds.py finds every integer one).
ID_QUERY_PARAMETERS = frozenset({"edit", "import", "run", "sweep"})


def _is_upload(path: str) -> bool:
    return bool(_REDO_UPLOAD.search(path) or _RESULT_UPLOAD.search(path) or _HADR_UPLOAD.search(path))


def body_limit(settings: Settings):
    """The largest request body per route class: redo history uploads take REDOLAB_MAX_UPLOAD_BYTES,
    result imports their 64 MiB (plus the multipart framing), everything else 1 MiB."""

    def limit_for(path: str) -> int:
        if _REDO_UPLOAD.search(path):
            return settings.max_upload_bytes
        if _RESULT_UPLOAD.search(path):
            return MAX_RESULT_IMPORT_BYTES + MIB
        if _HADR_UPLOAD.search(path):
            return MAX_CAPTURE_BYTES + MIB
        return SMALL_BODY_BYTES

    return limit_for


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(LoginRequired)
    async def _login_required(request: Request, exc: LoginRequired) -> Response:
        target = f"/login?next={exc.next_path}"
        if is_htmx(request):
            return Response(status_code=status.HTTP_401_UNAUTHORIZED, headers={"HX-Redirect": target})
        return Response(status_code=status.HTTP_303_SEE_OTHER, headers={"Location": target})

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400 and exc.detail == "There was an error parsing the body":  # FastAPI's words
            exc = StarletteHTTPException(
                400,
                "The request body could not be read: send one JSON document (nested at most a few hundred "
                "levels deep) or form fields, as the route's documentation at /api/docs shows.",
            )
        if _is_api(request) or exc.status_code < 400:
            return await http_exception_handler(request, exc)
        headers = getattr(exc, "headers", None)  # Retry-After of a 503
        if is_htmx(request):  # shown in the page's error box by app.js
            return Response(str(exc.detail), status_code=exc.status_code, media_type="text/plain", headers=headers)
        page = render(
            request, "error.html", {"message": exc.detail, "code": exc.status_code}, status_code=exc.status_code
        )
        page.headers.update(headers or {})
        return page

    @app.exception_handler(NotFound)
    async def _not_found(request: Request, exc: NotFound) -> Response:
        # answered as any 404: JSON for the API, text for htmx's error box, else the error page
        return await _http_error(request, StarletteHTTPException(status.HTTP_404_NOT_FOUND, str(exc)))

    @app.exception_handler(LimitReached)
    async def _limit_reached(request: Request, exc: LimitReached) -> Response:
        # 503 busy (Retry-After), 429 the user's share, 507 the disk: JSON, htmx text or the error page
        return await _http_error(request, StarletteHTTPException(exc.status_code, exc.message, headers=exc.headers))

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(request: Request, exc: RequestValidationError) -> Response:
        """422 with each error's place and message. The submitted value is not echoed: it may be a
        password, or a NaN that JSON cannot carry."""
        detail = [
            {"loc": list(error.get("loc", ())), "msg": error.get("msg", ""), "type": error.get("type", "")}
            for error in exc.errors()
        ]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(FieldError)
    async def _field_error(request: Request, exc: FieldError) -> Response:
        kind = "conflict" if exc.status_code == status.HTTP_409_CONFLICT else "invalid"
        detail = [{"loc": ["body", exc.field], "msg": exc.message, "type": kind}]
        return JSONResponse({"detail": detail}, status_code=exc.status_code)


def _install_docs(app: FastAPI) -> None:
    """OpenAPI docs behind login, with Swagger UI served from our own static files (no CDN)."""

    @app.get("/api/v1/openapi.json", include_in_schema=False, dependencies=[Depends(current_api_user)])
    def read_openapi(request: Request) -> JSONResponse:
        # request.app, not a closure over app: FastAPI caches endpoint callables process-wide, and a
        # closure would keep every app a test process builds alive
        return JSONResponse(request.app.openapi())

    @app.get("/api/docs", include_in_schema=False, dependencies=[Depends(current_html_user)])
    def show_api_docs() -> Response:
        page = get_swagger_ui_html(
            openapi_url="/api/v1/openapi.json",
            title="redolab API",
            swagger_js_url="/static/vendor/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url="/static/vendor/swagger-ui/swagger-ui.css",
            swagger_favicon_url="/static/favicon.svg",
        )
        page.headers["Content-Security-Policy"] = csp_allowing_inline_scripts(page.body)
        return page


def _start_worker(app: FastAPI, engine):
    """The in-process worker of `redolab serve`. With SQLite it is the only worker, so a job
    still marked running was orphaned by a restart; with PostgreSQL only stale ones are."""
    sqlite = engine.dialect.name == "sqlite"
    orphans = fail_orphans(app.state.sessionmaker, older_than_seconds=None if sqlite else 30)
    if orphans:
        log.warning("failed %s that a previous redolab process left running", format_count(orphans, "run"))
    worker = Worker(app.state.sessionmaker, secret_key=app.state.secret_key)
    app.state.worker = worker
    app.state.worker_thread = worker.start_thread()
    return worker


async def _prune_uploads_every(settings: Settings, period_seconds: float) -> None:
    """Previews that were never imported are removed on a timer, not only on the next upload (and
    early when the disk is short of its floor)."""
    while True:
        await anyio.to_thread.run_sync(
            prune_uploads, settings.upload_dir, settings.upload_max_age_seconds, StagingLimits.of(settings)
        )
        await anyio.sleep(period_seconds)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application; the engine and secret come from `settings`."""
    settings = settings or get_settings()
    secret_key = settings.resolve_secret_key()
    engine = make_engine(settings.resolved_database_url)
    app = FastAPI(
        title="redolab",
        version=__version__,
        lifespan=_lifespan(settings, engine),
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.settings = settings
    app.state.secret_key = secret_key
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    # `serve --workers N` hands its one-time setup link to each process it starts
    app.state.setup_token = os.environ.get("REDOLAB_SETUP_TOKEN") or None
    # counted in the database: every web process behind one proxy sees the same attempts
    app.state.login_guard = LoginGuard(workers=settings.login_workers, counts=DatabaseCounts(app.state.sessionmaker))
    app.state.preview_slots = preview_slots(settings)  # uploads read at once, per process and per user
    app.state.host_checks = HostChecks(settings)  # SSH checks of hosts at once: per process, user and host
    _add_middleware(app, settings, secret_key)
    _install_error_handlers(app)
    _install_docs(app)

    @app.get("/healthz", include_in_schema=False)
    def read_health(session: SessionDep) -> dict[str, str]:
        session.execute(text("SELECT 1"))
        return {"status": "ok", "version": __version__}

    _include_routers(app)
    declare_error_statuses(app)
    assets = Assets(FRONTEND_DIR / "static", settings.data_dir / "static-cache")
    templates.env.globals["static_url"] = assets.url
    templates.env.globals["manual_url"] = manual_pages.manual_url
    app.state.manual_dir = settings.manual_dir or manual_pages.MANUAL_DIR
    app.mount("/static", HashedStaticFiles(assets=assets), name="static")
    return app


def _lifespan(settings: Settings, engine):
    """Start: migrate, start the worker, size the thread pool, prune uploads on a timer. Stop: the
    worker (waiting up to 30 s for it), then the engine."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if settings.auto_migrate:
            upgrade(engine)
        worker = None
        if settings.worker_enabled:
            worker = _start_worker(app, engine)
        # Pages and API calls run in threads; Python runs one at a time per process, so more threads
        # only share the CPU: with 40, a heavy page's p95 under 20 clients was 2.3x that with 4 (bench/load.py).
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.web_threads
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_prune_uploads_every, settings, 600)
            yield
            tasks.cancel_scope.cancel()
        if worker is not None:
            worker.stopping.set()
            app.state.worker_thread.join(timeout=30)
        engine.dispose()

    return lifespan


# A page's objects are alive while the young generations are collected hundreds of times per request
# (every 700 allocations), so its cyclic garbage (ORM objects, plan cards) reached the oldest generation
# and a full collection (25-45 ms on the environment page) ran every ~20 requests: its p95. Collected
# every 20,000 allocations, a request's garbage mostly dies young; the oldest generation is looked at
# every 40 middle collections (still only once it grew by a quarter). One served process, bench/load.py
# --watches's data, 400 requests of the environment page at 300 runs from one client: full collections
# 19 -> 0, p95 50.2 -> 41.0 ms. (bench/load.py's own p95, 3 pages in turn, is noisier than that gain.)
GC_THRESHOLDS = (20_000, 20, 40)


def tune_garbage_collector() -> None:
    """A served process's collector (`redolab serve`, not the tests' apps): the thresholds above, and
    what start-up built (modules, routes, templates' globals: alive for the whole process) frozen out
    of every collection."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def create_served_app() -> FastAPI:
    """`redolab serve --workers N`'s factory: each web process's app, its collector tuned."""
    application = create_app()
    tune_garbage_collector()
    return application


def _add_middleware(app: FastAPI, settings: Settings, secret_key: str) -> None:
    # Order matters: the last added runs first. Headers, ids beyond the database's integers, then the
    # body limit, the uploads' free-space floor and the login form's origin check (before anything
    # reads the body or the session), then the audit log, then the CSRF check, which runs before the
    # session is read.
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret_key,
        session_cookie=SESSION_COOKIE,
        max_age=settings.session_max_age_seconds,
        same_site="lax",
        https_only=settings.cookie_secure,
    )
    app.add_middleware(
        CSRFMiddleware,
        secret=secret_key,
        sensitive_cookies={SESSION_COOKIE},
        cookie_secure=settings.cookie_secure,
        exempt_urls=[re.compile(r"^/api/v1/auth/token$")],
    )
    app.add_middleware(AuditMiddleware, sessions=app.state.sessionmaker)
    app.add_middleware(
        SameOriginMiddleware, paths=frozenset({"/login", "/setup"}), trusted=tuple(settings.trusted_origins)
    )
    app.add_middleware(
        UploadSpaceMiddleware,
        applies=_is_upload,
        directory=settings.data_dir,
        floor_bytes=settings.upload_free_space_floor_bytes,
        make_room=lambda needed: make_room(settings.upload_dir, needed, StagingLimits.of(settings)),
    )
    # previews while every slot is held: 503 before the body is read (the route takes the slot)
    app.add_middleware(SlotsFullMiddleware, applies=_REDO_PREVIEW.search, slots=app.state.preview_slots)
    app.add_middleware(BodyLimitMiddleware, limit_for=body_limit(settings))
    app.add_middleware(LoginThrottleMiddleware)
    app.add_middleware(IdBoundsMiddleware, query_ids=ID_QUERY_PARAMETERS)
    app.add_middleware(SecurityHeadersMiddleware)


def _include_routers(app: FastAPI) -> None:
    """Pages and the JSON API. Order matters where paths overlap: the workspace's
    /environments/{id} after /environments/new."""
    app.include_router(auth_pages.public_router, include_in_schema=False)
    app.include_router(auth_pages.router, include_in_schema=False)
    app.include_router(auth_api.public_router)
    app.include_router(auth_api.router)
    app.include_router(environment_pages.router, include_in_schema=False)
    app.include_router(workspace.router, include_in_schema=False)  # after /environments/new
    app.include_router(environments_api.router)
    app.include_router(destinations_api.router)
    app.include_router(destination_pages.router, include_in_schema=False)
    app.include_router(tiers_api.router)
    app.include_router(preflight_api.router)
    app.include_router(tier_pages.router, include_in_schema=False)
    app.include_router(collect_api.router)
    app.include_router(collect_pages.router, include_in_schema=False)
    app.include_router(runs_api.router)
    app.include_router(rehearsals_api.router)
    app.include_router(sweeps_api.router)
    app.include_router(clusters_api.router)
    app.include_router(run_pages.router, include_in_schema=False)
    app.include_router(rehearsal_pages.router, include_in_schema=False)
    app.include_router(watches_api.router)
    app.include_router(path_pages.router, include_in_schema=False)
    app.include_router(receivers_api.router)
    app.include_router(watch_pages.router, include_in_schema=False)
    app.include_router(receiver_pages.router, include_in_schema=False)
    app.include_router(sweep_pages.router, include_in_schema=False)
    app.include_router(redo_pages.router, include_in_schema=False)
    app.include_router(redo_api.router)
    app.include_router(planning_api.router)
    app.include_router(hadr_pages.router, include_in_schema=False)
    app.include_router(hadr_api.router)
    app.include_router(planning_pages.router, include_in_schema=False)
    app.include_router(preflight_pages.router, include_in_schema=False)
    app.include_router(manual_pages.router, include_in_schema=False)
    app.include_router(metrics_page.router, include_in_schema=False)  # its own bearer token, no login
