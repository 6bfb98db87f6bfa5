"""Staged uploads are bounded (issue 33): a refused preview is removed at once, previews not yet
imported are capped per user and in all, an upload must leave a free-space floor on the data disk,
unused previews make room early when space is short, and uploads are read a few at a time per
process and per user (503 with Retry-After beyond). Refusals name the file and never quote its bytes."""

from __future__ import annotations

import os
import shutil
import threading
import time
from io import BytesIO
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from redolab.core.config import Settings
from redolab.core.limits import LimitReached
from redolab.main import create_app
from redolab.redo import uploads
from redolab.redo.uploads import StagingLimits, store_upload
from tests.conftest import log_in, migrated_sqlite
from tests.factories import PASSWORD, make_environment, make_user
from tests.redo.test_import_jobs import archived_logs

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
KIB, MIB, GIB = 1024, 1024 * 1024, 1024 * 1024 * 1024
MARKER = "SECRET-CONTENT-7f3a"  # in the refused files: never in an answer


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """Files on disk and HTTP answers, the same on either database: these tests run on SQLite."""
    return migrated_sqlite(tmp_path_factory)


def _app(settings: Settings, **changes):
    return create_app(Settings(**{**settings.model_dump(), **changes}, _env_file=None))


def _api_client(app, username: str) -> TestClient:
    client = TestClient(app, follow_redirects=False)
    token = client.post("/api/v1/auth/token", data={"username": username, "password": PASSWORD})
    assert token.status_code == 200, token.text
    client.headers["Authorization"] = f"Bearer {token.json()['access_token']}"
    return client


def _stages(settings: Settings) -> list[Path]:
    return sorted(settings.upload_dir.glob("*.upload")) if settings.upload_dir.is_dir() else []


def _dated_now(settings: Settings) -> None:
    """The staged previews made just now, on this process's clock, the one the pruning reads: the file
    system stamps the kernel's time, which a moved test clock (tests/frozen_date.py) is not."""
    now = time.time()
    for path in _stages(settings):
        os.utime(path, (now, now))


def _preview(client, environment, name: str, content: bytes):
    return client.post(
        f"/api/v1/environments/{environment.id}/redo/preview", files={"file": (name, BytesIO(content), "text/csv")}
    )


@pytest.fixture
def history(tmp_path) -> bytes:
    """A readable GV$ARCHIVED_LOG export of about 630 KiB: two pass a cap of 1 MiB, three one of 2 MiB."""
    return archived_logs(tmp_path / "gv.csv", 10_000).read_bytes()


# -- a refused preview leaves nothing ------------------------------------------------------------


def test_a_refused_preview_leaves_no_file_behind(api_client, browser_client, session, settings):
    environment = make_environment(session)
    bad = (FIXTURES / "bad_date.csv").read_bytes()
    api = _preview(api_client, environment, "bad.csv", bad)
    assert api.status_code == 422 and "bad.csv: line 4" in api.text
    page = browser_client.post(
        f"/environments/{environment.id}/redo/preview",
        files={"file": ("bad.csv", bad)},
        headers={"HX-Request": "true"},
    )
    assert page.status_code == 422 and "bad.csv: line 4" in page.text
    assert 'name="upload_token"' not in page.text  # nothing left to check again: upload it again
    pasted = api_client.post(f"/api/v1/environments/{environment.id}/redo/preview", data={"text": "Dear DBA,\n"})
    assert pasted.status_code == 422
    assert _stages(settings) == [] and sorted(p.name for p in settings.upload_dir.iterdir()) == [".staging.lock"]
    good = _preview(api_client, environment, "gv.csv", (FIXTURES / "gv_archived_log.csv").read_bytes())
    assert good.status_code == 200 and len(_stages(settings)) == 1  # a readable one is kept for its import


def test_a_binary_file_is_refused_by_name_without_its_bytes(api_client, browser_client, session, settings):
    environment = make_environment(session)
    blob = os.urandom(48 * KIB) + MARKER.encode() + b"\x00\x1b[31m" + os.urandom(16 * KIB)
    for attempt in range(3):  # random bytes: whichever reader tries, the answer is the same kind
        response = _preview(api_client, environment, f"blob{attempt}.bin", blob)
        assert response.status_code == 422
        message = response.json()["detail"][0]["msg"]
        assert message.startswith(f"blob{attempt}.bin: ") and "binary data" in message
        assert MARKER not in message and "\ufffd" not in message and message.isprintable()
    page = browser_client.post(
        f"/environments/{environment.id}/redo/preview",
        files={"file": ("blob.bin", blob)},
        headers={"HX-Request": "true"},
    )
    assert page.status_code == 422 and "blob.bin: this is not a text export" in page.text
    assert MARKER not in page.text and "\ufffd" not in page.text
    assert _stages(settings) == []


def test_text_that_is_not_utf8_is_still_read_as_text(api_client, session):
    """Latin-1 exports (an accented heading) are text: the binary check leaves them to the readers."""
    environment = make_environment(session)
    latin = b"-- Redo-Verlauf f\xfcr die Pr\xfcfung\n" + (FIXTURES / "gv_archived_log.csv").read_bytes()
    response = _preview(api_client, environment, "latin1.csv", latin)
    assert response.status_code == 200, response.text


# -- the caps on staged bytes --------------------------------------------------------------------


def test_the_per_user_cap_refuses_with_429_naming_the_cap_and_the_file(settings, engine, session, user, history):
    environment = make_environment(session)
    make_user(session, "bob")
    app = _app(settings, upload_quota_per_user_bytes=1 * MIB)
    with _api_client(app, user.username) as alice, _api_client(app, "bob") as bob:
        assert _preview(alice, environment, "first.csv", history).status_code == 200
        _dated_now(settings)  # too recent to make room early
        refused = _preview(alice, environment, "second.csv", history + MARKER.encode())
        assert refused.status_code == 429, refused.text
        message = refused.json()["detail"]
        assert message.startswith("second.csv (") and "REDOLAB_UPLOAD_QUOTA_PER_USER_BYTES" in message
        assert "1 MiB one user may keep staged" in message and "Import the files you previewed" in message
        assert MARKER not in refused.text
        assert refused.headers["Retry-After"].isdigit()
        assert len(_stages(settings)) == 1  # nothing of the refused one was written
        assert _preview(bob, environment, "bobs.csv", history).status_code == 200  # another user's share
        assert len(_stages(settings)) == 2


def test_the_total_cap_refuses_with_507_naming_the_cap_and_the_file(settings, engine, session, user, history):
    environment = make_environment(session)
    make_user(session, "bob")
    app = _app(settings, upload_quota_total_bytes=1 * MIB)
    with _api_client(app, user.username) as alice, _api_client(app, "bob") as bob:
        assert _preview(alice, environment, "first.csv", history).status_code == 200
        _dated_now(settings)  # too recent to make room early
        refused = _preview(bob, environment, "bobs.csv", history + MARKER.encode())
        assert refused.status_code == 507, refused.text
        message = refused.json()["detail"]
        assert message.startswith("bobs.csv (") and "REDOLAB_UPLOAD_QUOTA_TOTAL_BYTES" in message
        assert "1 MiB kept for them in all" in message and MARKER not in refused.text
        page_client = TestClient(app, follow_redirects=False)
        with page_client:
            log_in(page_client, "bob")
            page = page_client.post(
                f"/environments/{environment.id}/redo/preview",
                files={"file": ("bobs.csv", history)},
                headers={"HX-Request": "true"},
            )
        assert page.status_code == 507 and page.text.startswith("bobs.csv (")  # app.js shows it in the error box
        assert len(_stages(settings)) == 1


def test_unused_previews_make_room_early_oldest_first(settings, engine, session, user, history):
    environment = make_environment(session)
    app = _app(settings, upload_quota_per_user_bytes=2 * MIB, upload_early_prune_seconds=60)
    with _api_client(app, user.username) as alice:
        tokens = [_preview(alice, environment, f"f{n}.csv", history).json()["upload_token"] for n in range(3)]
        # the first two were previewed two minutes ago, the third just now: on this process's clock, which
        # the pruning reads (the file system stamps the real time, a frozen clock's day is another)
        now = time.time()
        for token, at in zip(tokens, (now - 120, now - 120, now), strict=True):
            os.utime(settings.upload_dir / f"{token}.upload", (at, at))
        uploads.mark_queued(settings.upload_dir / f"{tokens[0]}.upload")  # an import job will read the oldest
        again = _preview(alice, environment, "f3.csv", history)
        assert again.status_code == 200, again.text
    left = {path.stem for path in _stages(settings)}
    assert left == {tokens[0], tokens[2], again.json()["upload_token"]}  # the unused, unqueued one went
    assert not (settings.upload_dir / f"{tokens[1]}.owner").exists()


def test_the_pruning_timer_removes_unused_previews_early_when_the_disk_is_short(tmp_path):
    upload_dir = tmp_path / "uploads"
    unused, queued = (store_upload(upload_dir, BytesIO(b"x" * KIB), f"{n}.csv", owner="1") for n in range(2))
    uploads.mark_queued(upload_dir / f"{queued}.upload")
    stored = time.time() - 1  # both a second ago, on the clock the pruning reads (not the file system's)
    for token in (unused, queued):
        os.utime(upload_dir / f"{token}.upload", (stored, stored))
    roomy = StagingLimits(per_user_bytes=GIB, total_bytes=GIB, free_space_floor_bytes=0, early_prune_seconds=0)
    assert uploads.prune_uploads(upload_dir, 3600, roomy) == 0 and len(list(upload_dir.glob("*.upload"))) == 2
    short = StagingLimits(per_user_bytes=GIB, total_bytes=GIB, free_space_floor_bytes=1024**5, early_prune_seconds=0)
    uploads.prune_uploads(upload_dir, 3600, short)  # short of the floor: what can go, goes (not the queued one)
    assert [path.stem for path in upload_dir.glob("*.upload")] == [queued]
    assert not (upload_dir / f"{unused}.name").exists()


def test_concurrent_uploads_cannot_pass_a_cap_together(tmp_path):
    """Each upload counts and reserves its bytes under one lock: 8 uploads of 300 KiB at once against
    a cap of 1 MiB store exactly 3 (a check-then-write race would store more)."""
    upload_dir = tmp_path / "uploads"
    # none goes early to make room: the files are written now, on the kernel's clock, and a moved test
    # clock (tests/frozen_date.py) may be weeks ahead of it
    limits = StagingLimits(per_user_bytes=1 * MIB, total_bytes=10 * GIB, free_space_floor_bytes=0,
                           early_prune_seconds=10 * 365 * 86400)  # fmt: skip
    start, results = threading.Barrier(8), []

    def upload(n: int) -> None:
        start.wait()
        try:
            results.append(store_upload(upload_dir, BytesIO(b"x" * 300 * KIB), f"f{n}.csv", owner="7", limits=limits))
        except LimitReached as refused:
            results.append(refused)

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    stored = [r for r in results if isinstance(r, str)]
    assert len(results) == 8 and len(stored) == 3
    assert all(r.status_code == 429 for r in results if isinstance(r, LimitReached))
    assert sum(p.stat().st_size for p in upload_dir.glob("*.upload")) == 3 * 300 * KIB
    assert {(upload_dir / f"{t}.owner").read_text() for t in stored} == {"7"}


# -- the free-space floor ------------------------------------------------------------------------


def test_the_free_space_floor_refuses_before_the_body_is_written(settings, engine, session, user, history):
    environment = make_environment(session)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    floor = shutil.disk_usage(settings.data_dir).free + 1024 * GIB  # more than this disk will ever have free
    app = _app(settings, upload_free_space_floor_bytes=floor)
    with _api_client(app, user.username) as alice:
        refused = _preview(alice, environment, "gv.csv", history + MARKER.encode())
        assert refused.status_code == 507, refused.text
        message = refused.json()["detail"]
        assert "REDOLAB_UPLOAD_FREE_SPACE_FLOOR_BYTES" in message and "kept free" in message
        assert "Nothing was stored" in message and MARKER not in refused.text
        results = alice.post(f"/api/v1/environments/{environment.id}/runs/import", files={"files": ("r.txt", b"x")})
        assert results.status_code == 507  # every upload route keeps the floor
        assert alice.get("/healthz").status_code == 200
    assert _stages(settings) == []


def test_the_floor_is_kept_where_the_file_is_stored_too(tmp_path):
    """A body without a declared length passes the first check: storing it checks again, by name."""
    limits = StagingLimits(per_user_bytes=GIB, total_bytes=GIB, free_space_floor_bytes=1024 * GIB * 1024,
                           early_prune_seconds=0)  # fmt: skip
    with pytest.raises(LimitReached) as refused:
        store_upload(tmp_path / "uploads", BytesIO(MARKER.encode() * 100), "awr.csv", owner="1", limits=limits)
    assert refused.value.status_code == 507
    assert refused.value.message.startswith("awr.csv (") and MARKER not in refused.value.message
    assert list((tmp_path / "uploads").glob("*.upload")) == []


# -- uploads read a few at a time ----------------------------------------------------------------


def _while_two_previews_are_held(settings, session, user, monkeypatch, total: int, probe):
    """Hold the previews of the user and bob (their child processes not yet started), run
    `probe(preview)` meanwhile (preview(name, filename) sends one more), and return what it returned."""
    environment = make_environment(session)
    for name in ("bob", "carol"):
        make_user(session, name)
    release, reading = threading.Event(), threading.Semaphore(0)
    original = uploads._preview

    def held(**arguments):
        reading.release()
        release.wait(timeout=30)
        return original(**arguments)

    monkeypatch.setattr(uploads, "_preview", held)
    content = (FIXTURES / "gv_archived_log.csv").read_bytes()
    app = _app(settings, max_concurrent_previews=total, max_previews_per_user=1)
    answers: dict[str, object] = {}
    # One client (one event loop, as in a server process) for every user: each request names its user.
    with TestClient(app, follow_redirects=False) as client:
        tokens = {
            name: client.post("/api/v1/auth/token", data={"username": name, "password": PASSWORD}).json()[
                "access_token"
            ]
            for name in (user.username, "bob", "carol")
        }

        def preview(name: str, filename: str):
            url = f"/api/v1/environments/{environment.id}/redo/preview"
            return client.post(url, files={"file": (filename, BytesIO(content), "text/csv")},
                               headers={"Authorization": f"Bearer {tokens[name]}"})  # fmt: skip

        def held_preview(name: str) -> None:
            answers[name] = preview(name, f"{name}.csv")

        threads = [threading.Thread(target=held_preview, args=(name,)) for name in (user.username, "bob")]
        for thread in threads:
            thread.start()
            assert reading.acquire(timeout=30)  # its preview is being read (holding a slot)
        try:
            probed = probe(preview)
            started = time.monotonic()
            health = client.get("/healthz")
            assert health.status_code == 200 and time.monotonic() - started < 5
        finally:
            release.set()
            for thread in threads:
                thread.join(timeout=30)
        assert [answers[name].status_code for name in (user.username, "bob")] == [200, 200]
        assert len(_stages(settings)) == 2  # the refused ones stored nothing
        assert app.state.preview_slots.in_use == 0
        assert preview("carol", "carol.csv").status_code == 200
    return probed


def test_previews_beyond_the_cap_are_answered_503_with_retry_after(settings, session, user, monkeypatch):
    """Two previews per process: while two are held, a third user's is refused at once (503,
    Retry-After), before its body is read, as is a second one of a user whose first is being read;
    /healthz answers."""
    busy, again = _while_two_previews_are_held(
        settings,
        session,
        user,
        monkeypatch,
        2,
        lambda preview: (preview("carol", "carol.csv"), preview("bob", "b.csv")),
    )
    for refused in (busy, again):
        assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
        assert "REDOLAB_MAX_CONCURRENT_PREVIEWS" in refused.json()["detail"]


def test_a_second_preview_of_one_user_is_answered_503_naming_the_per_user_cap(settings, session, user, monkeypatch):
    """Three slots, two held: bob's second preview finds a free slot but not a free share of his."""
    again = _while_two_previews_are_held(settings, session, user, monkeypatch, 3, lambda p: p("bob", "bob2.csv"))
    assert again.status_code == 503 and again.headers["Retry-After"] == "5"
    assert "REDOLAB_MAX_PREVIEWS_PER_USER" in again.json()["detail"]


def test_a_full_pool_refuses_before_the_body_is_read(settings, session, user):
    """The hint in front of the route: every slot held, a preview is answered 503 without reading a
    byte of its body (a client retrying a 256 MiB upload costs nothing); a free slot lets it through."""
    environment = make_environment(session)
    app = _app(settings, max_concurrent_previews=1)
    with _api_client(app, user.username) as client, app.state.preview_slots.taken("someone else"):
        url = f"/api/v1/environments/{environment.id}/redo/preview"
        refused = client.post(url, content=b"x" * 1024, headers={"Content-Type": "multipart/form-data; boundary=b"})
        assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
        assert "REDOLAB_MAX_CONCURRENT_PREVIEWS" in refused.json()["detail"]
        page = client.post(f"/environments/{environment.id}/redo/preview", content=b"")
        assert page.status_code == 503 and "REDOLAB_MAX_CONCURRENT_PREVIEWS" in page.text
    with _api_client(app, user.username) as client:
        content = (FIXTURES / "gv_archived_log.csv").read_bytes()
        answered = client.post(url, files={"file": ("gv.csv", BytesIO(content), "text/csv")})
        assert answered.status_code == 200, answered.text
