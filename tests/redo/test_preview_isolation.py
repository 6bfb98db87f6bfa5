"""Previews are read in a child process under CPU, memory and wall-clock bounds (issue 33.2, issue
32.7): the page threads only wait; a preview stopped by a bound answers 422 naming the file, the bound
and its setting, and leaves no file behind; import jobs stop at the same CPU bound."""

from __future__ import annotations

import dataclasses
import pickle
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from redolab.core.config import Settings
from redolab.core.db import make_sessionmaker
from redolab.core.isolate import ChildLimitReached, ChildLimits
from redolab.jobs.models import Job
from redolab.main import create_app
from redolab.redo import uploads
from redolab.redo.imports import execute_import
from redolab.redo.models import RedoImport, RedoRow
from redolab.redo.previews import Preview, over_limit, read_preview
from tests.conftest import migrated_sqlite
from tests.factories import make_environment
from tests.redo.test_import_jobs import archived_logs
from tests.redo.test_upload_caps import _api_client
from tests.web.test_runs import local_env

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
GIB = 1024 * 1024 * 1024


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """Processes and files; the database only holds the user: SQLite."""
    return migrated_sqlite(tmp_path_factory)


def test_a_preview_is_read_in_another_process_and_pickles_whole(tmp_path):
    """What the child returns is the Preview the pages use, every field there, the digest for the
    parent's duplicate lookup; the sample and summary match a read of the same file."""
    source = FIXTURES / "gv_archived_log.csv"
    result = read_preview(str(source), "gv.csv", "auto", None, "UTC", 30.0, str(tmp_path))
    again = pickle.loads(pickle.dumps(result))  # noqa: S301  (our own bytes)
    assert [f.name for f in dataclasses.fields(Preview)][:9] == [
        "filename",
        "format",
        "kind",
        "headers",
        "mapping",
        "sample",
        "summary",
        "analysis",
        "duplicate_of",
    ]
    assert again.filename == "gv.csv" and again.kind == result.kind and again.summary == result.summary
    assert again.duplicate_of is None and len(again.sha256) == 64
    assert again.sample == result.sample and 0 < len(again.sample) <= 8
    assert again.analysis.segments == result.analysis.segments  # the time range the preview shows


def test_a_preview_in_the_api_reads_in_a_child_and_finds_the_duplicate(settings, session, user, tmp_path):
    environment = make_environment(session)
    app = create_app(settings)
    content = (FIXTURES / "gv_archived_log.csv").read_bytes()
    with _api_client(app, user.username) as client:
        url = f"/api/v1/environments/{environment.id}/redo/preview"
        first = client.post(url, files={"file": ("gv.csv", content, "text/csv")})
        assert first.status_code == 200, first.text
        imported = client.post(
            f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": first.json()["upload_token"]}
        )
        assert imported.status_code == 201, imported.text
        second = client.post(url, files={"file": ("again.csv", content, "text/csv")})
    assert second.status_code == 200 and second.json()["already_imported_as"] == imported.json()["id"]


@pytest.mark.parametrize(
    ("limit", "words"),
    [
        ("cpu", ["more than 60 s of CPU", "REDOLAB_PREVIEW_CPU_SECONDS"]),
        ("memory", ["more than 2 GiB of memory", "REDOLAB_PREVIEW_MEMORY_BYTES"]),
        ("time", ["took longer than 5 min", "REDOLAB_PREVIEW_WALL_SECONDS"]),
    ],
)
def test_a_limit_reached_is_a_refusal_naming_the_file_the_limit_and_its_setting(limit, words):
    limits = ChildLimits(cpu_seconds=60, memory_bytes=2 * GIB, wall_seconds=300)
    message = str(over_limit("awr\x00hist.csv", ChildLimitReached(limit, limits)))
    assert message.startswith("awr?hist.csv: the preview of this file ")  # named, nothing unprintable
    assert all(word in message for word in words), message
    assert "Split it into smaller files" in message


def test_a_preview_past_its_cpu_bound_answers_422_and_healthz_answers_meanwhile(settings, session, user, tmp_path):
    """A 1 s CPU bound and a file that takes several: 422 naming the file and the bound, the upload
    removed, and /healthz answered while the child reads (the request thread only waits)."""
    environment = make_environment(session)
    path = archived_logs(tmp_path / "big.csv", 150_000)
    app = create_app(Settings(**{**settings.model_dump(), "preview_cpu_seconds": 1}, _env_file=None))
    answers: dict[str, object] = {}
    with _api_client(app, user.username) as client:
        url = f"/api/v1/environments/{environment.id}/redo/preview"

        def send() -> None:
            with open(path, "rb") as file:
                answers["preview"] = client.post(url, files={"file": ("big.csv", file, "text/csv")})

        sender = threading.Thread(target=send)
        sender.start()
        health = []
        while sender.is_alive():
            started = time.monotonic()
            assert client.get("/healthz").status_code == 200
            health.append(time.monotonic() - started)
            time.sleep(0.05)
        sender.join()
    refused = answers["preview"]
    assert refused.status_code == 422, refused.text
    detail = refused.json()["detail"][0]["msg"]
    assert detail.startswith("big.csv: the preview of this file used more than 1 s of CPU")
    assert "REDOLAB_PREVIEW_CPU_SECONDS" in detail
    assert list(settings.upload_dir.glob("*.upload")) == [] and list(settings.upload_dir.glob(".preview-*")) == []
    assert health and max(health) < 5  # answered while the preview ran (no timed target: bench/fair_share.py)


def test_an_import_job_past_the_cpu_bound_fails_naming_it_and_leaves_nothing(
    app, api_client, session, engine, tmp_path
):
    environment, _, _ = local_env(session)
    path = archived_logs(tmp_path / "gv_archived_log.csv", 70_000)
    with open(path, "rb") as file:
        preview = api_client.post(
            f"/api/v1/environments/{environment.id}/redo/preview", files={"file": (path.name, file, "text/csv")}
        )
    token = preview.json()["upload_token"]
    queued = api_client.post(f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": token})
    assert queued.status_code == 202, queued.text
    done = execute_import(make_sessionmaker(engine), queued.json()["id"], limits=ChildLimits(0, 0, 60))
    assert done is False
    session.expire_all()
    job = session.get(Job, queued.json()["id"])
    assert job.status == "failed" and "gv_archived_log.csv" in job.error
    assert "more than 0 s of CPU (REDOLAB_PREVIEW_CPU_SECONDS)" in job.error and "nothing was imported" in job.error
    assert session.scalar(select(func.count()).select_from(RedoRow)) == 0
    assert session.scalar(select(func.count()).select_from(RedoImport)) == 0


def test_the_staging_limits_carry_the_reading_bounds_from_the_settings(settings):
    changed = Settings(
        **{**settings.model_dump(), "preview_cpu_seconds": 7, "preview_memory_bytes": GIB}, _env_file=None
    )
    limits = uploads.StagingLimits.of(changed)
    assert limits.reading == ChildLimits(cpu_seconds=7, memory_bytes=GIB, wall_seconds=changed.preview_wall_seconds)
    assert uploads.StagingLimits(1, 1, 0, 0).reading.cpu_seconds == 60  # the defaults, when not given
