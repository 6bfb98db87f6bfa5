"""Large previews are jobs (issue 33): an upload staged above REDOLAB_PREVIEW_JOB_BYTES is read by a
real worker under the preview's bounds, never in a page thread; the page polls the job and then shows
the same preview panel, the API answers 202 and then the preview JSON; a refused one says why and
keeps nothing; small uploads are previewed in the request as before. The threshold is set low here
(2 KiB) so that collector CSVs of a few hundred lines are "large"."""

from pathlib import Path

import pytest
from sqlalchemy import func, select

from redolab.core.config import Settings
from redolab.core.db import make_sessionmaker
from redolab.jobs.models import Job, JobStatus
from tests.execution import execute_next
from tests.factories import make_environment
from tests.redo.test_import_jobs import archived_logs

JOB_BYTES = 2048
SECRET = "no credential is read"


@pytest.fixture
def settings(settings) -> Settings:
    return Settings(**{**settings.model_dump(), "preview_job_bytes": JOB_BYTES}, _env_file=None)


def post_file(client, url: str, path: Path, **data):
    with open(path, "rb") as file:
        return client.post(url, files={"file": (path.name, file, "text/csv")}, data=data)


def staged(settings, suffix: str = "upload") -> list[Path]:
    return sorted(settings.upload_dir.glob(f"*.{suffix}"))


def jobs(session) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(Job).where(Job.kind == "preview"))


def test_api_a_large_preview_is_a_job_whose_answer_is_the_preview(app, settings, api_client, session, engine, tmp_path):
    environment = make_environment(session)
    path = archived_logs(tmp_path / "gv_archived_log.csv", 400)
    assert path.stat().st_size > JOB_BYTES
    url = f"/api/v1/environments/{environment.id}/redo/preview"
    queued = post_file(api_client, url, path)
    assert queued.status_code == 202, queued.text
    answer = queued.json()
    assert answer["status"] == "queued" and isinstance(answer["job_id"], int) and "upload_token" not in answer
    [upload] = staged(settings)
    assert upload.with_suffix(".queued").exists()  # the worker will read it: never pruned early
    waiting = api_client.get(answer["status_url"]).json()
    assert waiting["status"] == "queued" and "analysis" not in waiting

    assert execute_next(engine, SECRET)  # a real worker claims it and reads it in a limited child
    done = api_client.get(answer["status_url"]).json()
    assert done["status"] == "done" and done["error"] is None
    assert done["upload_token"] == upload.stem and not upload.with_suffix(".queued").exists()
    assert done["analysis"]["rows_read"] == 400 and done["already_imported_as"] is None
    assert "BLOCKS" in done["headers"] and done["mapping"]

    imported = api_client.post(
        f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": done["upload_token"]}
    )
    assert imported.status_code == 201, imported.text
    assert imported.json()["rows_read"] == 400
    assert staged(settings) == [] and staged(settings, "preview") == []  # imported: nothing left behind
    gone = api_client.get(answer["status_url"])
    assert gone.status_code == 422 and "expired or was already imported" in gone.text


def test_page_a_large_preview_is_polled_then_shown_and_imported(
    app, settings, browser_client, session, engine, tmp_path
):
    environment = make_environment(session)
    path = archived_logs(tmp_path / "gv_archived_log.csv", 300)
    queued = post_file(browser_client, f"/environments/{environment.id}/redo/preview", path)
    assert queued.status_code == 202, queued.text
    job_id = session.scalar(select(Job.id).where(Job.kind == "preview"))
    live = f"/environments/{environment.id}/redo/previews/{job_id}/live"
    assert f'hx-get="{live}"' in queued.text and "waiting for a worker" in queued.text
    assert 'id="redo-preview"' in queued.text  # takes the panel's place: the panel replaces it

    assert execute_next(engine, SECRET)
    shown = browser_client.get(live)
    assert shown.status_code == 200
    assert "Preview of gv_archived_log.csv" in shown.text and 'id="preview-rows"' in shown.text
    assert live not in shown.text  # polling stopped: the panel replaced the block
    [upload] = staged(settings)
    assert f'name="upload_token" value="{upload.stem}"' in shown.text

    imported = browser_client.post(
        f"/environments/{environment.id}/redo/imports", data={"upload_token": upload.stem, "format": "auto"}
    )
    assert imported.status_code in (200, 303), imported.text
    assert staged(settings) == []
    page = browser_client.get(f"/environments/{environment.id}").text
    assert "gv_archived_log.csv" in page


def test_a_refused_large_preview_says_why_and_keeps_nothing(
    app, settings, api_client, browser_client, session, engine, tmp_path
):
    environment = make_environment(session)
    path = archived_logs(tmp_path / "gv_archived_log.csv", 300, bad_line=250)
    answer = post_file(api_client, f"/api/v1/environments/{environment.id}/redo/preview", path).json()
    assert execute_next(engine, SECRET)
    failed = api_client.get(answer["status_url"]).json()
    assert failed["status"] == "failed" and "upload_token" not in failed
    assert failed["error"].startswith("gv_archived_log.csv") and "line 250" in failed["error"]
    assert staged(settings) == [] and list(settings.upload_dir.glob("*.owner")) == []  # removed at once
    block = browser_client.get(f"/environments/{environment.id}/redo/previews/{answer['job_id']}/live")
    assert "Preview of gv_archived_log.csv refused" in block.text and "line 250" in block.text
    assert "hx-trigger" not in block.text  # polling stops


def test_a_large_binary_file_is_refused_by_the_job_without_quoting_it(
    app, settings, api_client, session, engine, tmp_path
):
    environment = make_environment(session)
    path = tmp_path / "awr.dbf"
    path.write_bytes(bytes(range(256)) * 40)
    answer = post_file(api_client, f"/api/v1/environments/{environment.id}/redo/preview", path).json()
    assert answer["status"] == "queued"
    assert execute_next(engine, SECRET)
    failed = api_client.get(answer["status_url"]).json()
    assert failed["status"] == "failed" and failed["error"].startswith("awr.dbf")
    assert "binary data" in failed["error"] and "\x03" not in failed["error"]
    assert staged(settings) == []


def test_one_large_preview_waits_per_user_and_a_second_is_refused_429(app, settings, api_client, session, tmp_path):
    environment = make_environment(session)
    url = f"/api/v1/environments/{environment.id}/redo/preview"
    first = post_file(api_client, url, archived_logs(tmp_path / "a.csv", 300))
    second = post_file(api_client, url, archived_logs(tmp_path / "b.csv", 300))
    assert first.status_code == 202 and second.status_code == 429, second.text
    assert "b.csv" in second.text and "one large preview waiting at a time" in second.text
    assert len(staged(settings)) == 1 and jobs(session) == 1  # the refused upload was not kept
    small = post_file(api_client, url, archived_logs(tmp_path / "small.csv", 10))  # small ones are not held up
    assert small.status_code == 200, small.text


def test_a_small_upload_is_still_previewed_in_the_request(app, settings, api_client, browser_client, session, tmp_path):
    environment = make_environment(session)
    path = archived_logs(tmp_path / "gv.csv", 12)
    assert path.stat().st_size <= JOB_BYTES
    answer = post_file(api_client, f"/api/v1/environments/{environment.id}/redo/preview", path)
    assert answer.status_code == 200 and answer.json()["analysis"]["rows_read"] == 12
    page = post_file(browser_client, f"/environments/{environment.id}/redo/preview", path)
    assert page.status_code == 200 and "Preview of gv.csv" in page.text
    assert jobs(session) == 0


def test_a_large_preview_orphaned_by_its_worker_is_failed_and_removed(
    app, settings, api_client, session, engine, tmp_path
):
    from redolab.worker import fail_orphans

    environment = make_environment(session)
    answer = post_file(
        api_client, f"/api/v1/environments/{environment.id}/redo/preview", archived_logs(tmp_path / "gv.csv", 300)
    ).json()
    with make_sessionmaker(engine)() as other:
        row = other.get(Job, answer["job_id"])
        row.status, row.worker_id = JobStatus.running, "gone:1"
        other.commit()
    assert fail_orphans(make_sessionmaker(engine), older_than_seconds=None) == 1
    state = api_client.get(answer["status_url"]).json()
    assert state["status"] == "failed" and "stopped" in state["error"] and "upload the file again" in state["error"]
    assert staged(settings) == []


def test_a_large_upload_read_again_with_an_edited_mapping_is_a_job_and_kept_if_refused(
    app, settings, browser_client, session, engine, tmp_path
):
    environment = make_environment(session)
    url = f"/environments/{environment.id}/redo/preview"
    post_file(browser_client, url, archived_logs(tmp_path / "gv.csv", 300))
    assert execute_next(engine, SECRET)
    [upload] = staged(settings)
    again = browser_client.post(url, data={"upload_token": upload.stem, "format": "auto", "map_blocks": "FIRST_TIME"})
    assert again.status_code == 202 and "waiting for a worker" in again.text
    assert execute_next(engine, SECRET)
    job_id = session.scalar(select(func.max(Job.id)).where(Job.kind == "preview"))
    block = browser_client.get(f"/environments/{environment.id}/redo/previews/{job_id}/live")
    assert "Preview of gv.csv refused" in block.text and "gv.csv" in block.text
    assert staged(settings) == [upload]  # read again and refused: the upload stays for another mapping
    assert not upload.with_suffix(".queued").exists()
