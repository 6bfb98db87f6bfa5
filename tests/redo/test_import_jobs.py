"""Large imports are jobs: staged out of sight, shown with their analysis in one short transaction,
progress while they run, a named error and nothing left behind when they fail; other writes go on
meanwhile (a small results import during a long redo import)."""

import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from redolab.core.db import make_sessionmaker
from redolab.jobs.models import Job, JobStatus
from redolab.redo.imports import JOB_MIN_BYTES
from redolab.redo.models import RedoImport, RedoRow, StoredAnalysis
from redolab.redo.service import BATCH_ROWS, PIPELINE_MIN_BYTES
from redolab.redo.uploads import store_upload
from tests.execution import execute_in_background, execute_next
from tests.web.test_runs import local_env

RUNS_DATA = Path(__file__).parents[1] / "runs" / "data"
HEADING = "INST_ID,THREAD#,SEQUENCE#,RESETLOGS_ID,DEST_ID,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE"
# The files are only as large as the point needs: just over JOB_MIN_BYTES (a job) or PIPELINE_MIN_BYTES
# (read in a child process), their lines made as long as that takes by the log's NAME (a column the
# import ignores), so that as few rows as possible are parsed, written and analysed.
# A job the live block counts up: three batches (20,000, 40,000, then 41,000 rows written), 4.5 MB.
JOB_ROWS, JOB_LINE_BYTES = 2 * BATCH_ROWS + 1000, 110
# A job, no more: one batch written before the last line, 4.3 MB.
SMALL_JOB_ROWS, SMALL_JOB_LINE_BYTES = BATCH_ROWS + 1000, 205
# The redo import a results import goes beside: 3 batches, 8.6 MB (read in a child process, as files
# over PIPELINE_MIN_BYTES are); the results import comes once a batch is in, the second being written,
# and the import is held after its second batch until what it proves is measured (it cannot end before).
LONG_IMPORT_ROWS, LONG_IMPORT_LINE_BYTES = 2 * BATCH_ROWS + 1000, 210
UNDER_WAY_ROWS = BATCH_ROWS
HELD_AT_ROWS = 2 * BATCH_ROWS


def archived_logs(path: Path, rows: int, *, line_bytes: int | None = None, bad_line: int | None = None) -> Path:
    """GV$ARCHIVED_LOG as a collector's CSV: two threads of 4-6 minute logs, one after the other; with
    `line_bytes`, each line that long (at least) through a NAME column (the log's path)."""
    clock = {1: datetime(2022, 1, 1), 2: datetime(2022, 1, 1, 0, 1, 37)}
    with open(path, "w") as out:
        out.write(HEADING + (",NAME\n" if line_bytes else "\n"))
        for n in range(rows):
            thread, sequence = 1 + n % 2, 1 + n // 2
            first = clock[thread]
            nxt = clock[thread] = first + timedelta(seconds=240 + (sequence * 7 + thread) % 120)
            blocks = "many" if n + 2 == bad_line else 400_000 + (sequence * 7919) % 600_000
            line = f"{thread},{thread},{sequence},1088,1,{first:%d-%b-%y %H:%M:%S},{nxt:%d-%b-%y %H:%M:%S},{blocks},512"
            if line_bytes:
                name = f"/{thread}_{sequence}_1088.arc"
                line += ",/u01/" + "fra/" * max(0, (line_bytes - len(line) - len(name) - 6) // 4 + 1) + name[1:]
            out.write(line + "\n")
    return path


def preview(api_client, environment, path: Path) -> str:
    with open(path, "rb") as file:
        response = api_client.post(
            f"/api/v1/environments/{environment.id}/redo/preview", files={"file": (path.name, file, "text/csv")}
        )
    assert response.status_code == 200, response.text
    return response.json()["upload_token"]


def count(session, model) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(model))


def test_a_large_import_is_a_job_with_progress_shown_with_its_analysis(
    app, api_client, browser_client, session, engine, tmp_path
):
    environment, _, _ = local_env(session)
    path = archived_logs(tmp_path / "gv_archived_log.csv", JOB_ROWS, line_bytes=JOB_LINE_BYTES)
    assert JOB_MIN_BYTES <= path.stat().st_size < PIPELINE_MIN_BYTES  # a job, read in this process
    token = preview(api_client, environment, path)
    upload_dir = app.state.settings.upload_dir
    assert (upload_dir / f"{token}.upload").exists()
    response = api_client.post(f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": token})
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["status"] == "queued" and job["estimated_rows"] == JOB_ROWS + 1  # lines, with the heading
    staged = session.get(RedoImport, job["import_id"])
    assert staged.status == "importing"
    assert api_client.get(f"/api/v1/environments/{environment.id}/redo/imports").json()["data"] == []  # out of sight

    thread = execute_in_background(engine, "no credential is read")  # a real worker claims and runs it
    page_progress = set()
    while thread.is_alive() and len(page_progress) < 2:  # until it has counted up (each poll costs CPU)
        block = browser_client.get(f"/environments/{environment.id}/redo/jobs/{job['id']}/live")
        if "rows written" in block.text:
            page_progress.add(block.text.split("importing, ")[1].split(" rows")[0])
        time.sleep(0.05)
    thread.join()
    state = api_client.get(job["status_url"]).json()
    assert state["status"] == "done"
    assert state["progress_rows"] == JOB_ROWS and state["error"] is None
    assert len(page_progress) >= 2  # the live block counted up while the rows went in
    listed = api_client.get(f"/api/v1/environments/{environment.id}/redo/imports").json()["data"]
    assert [(i["id"], i["rows_read"]) for i in listed] == [(job["import_id"], JOB_ROWS)]
    stored = session.get(StoredAnalysis, environment.id)
    assert stored is not None and stored.summary["rows_read"] == JOB_ROWS  # visible together with its analysis
    assert not (upload_dir / f"{token}.upload").exists()  # the upload is removed once imported


def test_a_bad_line_fails_the_job_names_it_and_leaves_nothing(app, api_client, browser_client, session, tmp_path):
    """The preview reads the whole file and would name the line first; here the upload changes after
    its preview (what a worker can meet that the request did not), so the job finds the bad line."""
    environment, _, _ = local_env(session)
    rows, bad_line = SMALL_JOB_ROWS, SMALL_JOB_ROWS - 10  # after the first batch is written
    path = archived_logs(tmp_path / "gv_archived_log.csv", rows, line_bytes=SMALL_JOB_LINE_BYTES)
    assert path.stat().st_size >= JOB_MIN_BYTES
    token = preview(api_client, environment, path)
    archived_logs(
        app.state.settings.upload_dir / f"{token}.upload", rows, line_bytes=SMALL_JOB_LINE_BYTES, bad_line=bad_line
    )
    response = api_client.post(f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": token})
    assert response.status_code == 202
    job = response.json()
    assert execute_next(app.state.engine, "no credential is read")
    state = api_client.get(job["status_url"]).json()
    assert (
        state["status"] == "failed" and f"line {bad_line}" in state["error"] and "gv_archived_log.csv" in state["error"]
    )
    assert "nothing was imported" in state["error"]
    assert count(session, RedoRow) == 0 and count(session, RedoImport) == 0  # the staged rows are gone
    page = browser_client.get(f"/environments/{environment.id}").text
    assert "Import of gv_archived_log.csv failed" in page and f"line {bad_line}" in page  # said on the page too


def timed_results_import(api_client, environment, primary, standby):
    """A small results import (an iperf3 JSON): (its answer, the seconds it took)."""
    started = time.monotonic()
    with open(RUNS_DATA / "iperf3_two_streams.json", "rb") as file:
        answer = api_client.post(
            f"/api/v1/environments/{environment.id}/runs/import",
            data={"client_host_id": primary.id, "server_host_id": standby.id},
            files=[("files", ("iperf3_two_streams.json", file, "application/json"))],
        )
    return answer, time.monotonic() - started


def test_a_results_import_succeeds_during_a_long_redo_import(app, api_client, session, engine, tmp_path, monkeypatch):
    """SQLite's one writer: the redo import holds the write lock one batch at a time, never for the
    whole file, so a small import beside it waits a moment, not until a timeout. The redo import need
    not be a million rows for that, only still writing its batches when the small import comes: it
    comes once the first batch is in, and the import is held after its second (its lock let go, as after
    every batch) until the small import has answered, so it is still under way then (`during`)."""
    if engine.dialect.name != "sqlite":
        pytest.skip("the write-lock contention is SQLite's; PostgreSQL writers do not block each other here")
    from redolab.redo import service as redo_service

    measured, original = threading.Event(), redo_service.fill_import

    def held_fill(*, progress, **kwargs):
        def held_progress(rows: int) -> None:
            progress(rows)
            if rows >= HELD_AT_ROWS:
                measured.wait(timeout=60)

        return original(progress=held_progress, **kwargs)

    monkeypatch.setattr(redo_service, "fill_import", held_fill)
    environment, primary, standby = local_env(session)
    path = archived_logs(tmp_path / "year.csv", LONG_IMPORT_ROWS, line_bytes=LONG_IMPORT_LINE_BYTES)
    assert path.stat().st_size >= PIPELINE_MIN_BYTES
    with open(path, "rb") as file:  # stored as an upload is (the preview would read every row first)
        token = store_upload(app.state.settings.upload_dir, file, "year.csv")
    job = api_client.post(f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": token}).json()
    thread = execute_in_background(engine, "no credential is read")
    try:
        while api_client.get(job["status_url"]).json()["progress_rows"] < UNDER_WAY_ROWS:  # under way
            assert thread.is_alive(), api_client.get(job["status_url"]).json()
            time.sleep(0.05)
        small, waited = timed_results_import(api_client, environment, primary, standby)
        health = api_client.get("/healthz")
        during = api_client.get(job["status_url"]).json()
    finally:
        measured.set()
    thread.join()
    assert small.status_code == 201, small.text
    assert health.status_code == 200
    assert during["progress_rows"] < LONG_IMPORT_ROWS, "the redo import had written every row: the test proved nothing"
    assert waited < 5, f"the results import waited {waited:.1f} s for the redo import"
    assert api_client.get(job["status_url"]).json()["progress_rows"] == LONG_IMPORT_ROWS
    assert count(session, RedoRow) == LONG_IMPORT_ROWS


def test_a_results_import_succeeds_while_a_redo_import_is_analysed(
    app, api_client, session, engine, tmp_path, monkeypatch
):
    """Every row written, the import's analysis runs (53 s for a million rows) in the transaction that
    shows it: it reads and computes, and holds no write lock meanwhile (it held one: the record's new
    fields were flushed by the analysis's first query, and every other write failed "database is locked"
    after the 5 s busy timeout). The analysis is held here until the results import beside it returns."""
    if engine.dialect.name != "sqlite":
        pytest.skip("the write-lock contention is SQLite's; PostgreSQL writers do not block each other here")
    from redolab.redo import imports

    analysing, beside_done, original = threading.Event(), threading.Event(), imports.refresh_analysis

    def held_analysis(**kwargs):
        analysing.set()
        beside_done.wait(timeout=30)
        return original(**kwargs)

    monkeypatch.setattr(imports, "refresh_analysis", held_analysis)
    environment, primary, standby = local_env(session)
    path = archived_logs(tmp_path / "gv.csv", SMALL_JOB_ROWS, line_bytes=SMALL_JOB_LINE_BYTES)
    assert path.stat().st_size >= JOB_MIN_BYTES
    token = preview(api_client, environment, path)
    job = api_client.post(f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": token}).json()
    thread = execute_in_background(engine, "no credential is read")
    assert analysing.wait(timeout=60), "the import never reached its analysis"
    small, waited = timed_results_import(api_client, environment, primary, standby)
    beside_done.set()
    thread.join(timeout=60)
    assert small.status_code == 201, small.text
    assert waited < 2, f"the results import waited {waited:.1f} s for the redo import's analysis"
    state = api_client.get(job["status_url"]).json()
    assert state["status"] == "done" and state["progress_rows"] == SMALL_JOB_ROWS, state
    assert count(session, RedoRow) == SMALL_JOB_ROWS and session.get(StoredAnalysis, environment.id) is not None


def test_an_import_orphaned_by_its_worker_is_removed(session, engine, tmp_path, api_client):
    from redolab.worker import fail_orphans

    environment, _, _ = local_env(session)
    path = archived_logs(tmp_path / "gv.csv", SMALL_JOB_ROWS, line_bytes=SMALL_JOB_LINE_BYTES)
    assert path.stat().st_size >= JOB_MIN_BYTES
    token = preview(api_client, environment, path)
    job = api_client.post(f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": token}).json()
    with make_sessionmaker(engine)() as other:
        row = other.get(Job, job["id"])
        row.status, row.worker_id = JobStatus.running, "gone:1"
        other.add(RedoRow(import_id=job["import_id"], kind="log", thread=1, bytes=1.0))  # a batch it wrote
        other.commit()
    assert fail_orphans(make_sessionmaker(engine), older_than_seconds=None) == 1
    state = api_client.get(f"/api/v1/environments/{environment.id}/redo/jobs/{job['id']}").json()
    assert state["status"] == "failed" and "stopped" in state["error"] and "import the file again" in state["error"]
    assert count(session, RedoRow) == 0 and count(session, RedoImport) == 0
