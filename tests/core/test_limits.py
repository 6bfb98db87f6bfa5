"""The guards of issue 33 in core: slots taken without waiting, the uploads' free-space floor
answered before a byte of the body is read, and numbers beyond the databases' ids refused at the edge."""

from __future__ import annotations

import json
import shutil
import threading
import time

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from redolab.core.db import MAX_ROW_ID
from redolab.core.limits import LimitReached, Slots
from redolab.core.middleware import IdBoundsMiddleware, UploadSpaceMiddleware, _beyond_row_ids

GIB = 1024**3


def _slots(total=2, per_user=1) -> Slots:
    return Slots(total=total, per_user=per_user, noun="upload", settings=("TOTAL_SETTING", "USER_SETTING"))


def test_slots_refuse_at_once_beyond_the_caps_and_come_back():
    slots = _slots()
    with slots.taken("alice"):
        with pytest.raises(LimitReached) as mine, slots.taken("alice"):
            pass
        assert mine.value.status_code == 503 and "USER_SETTING" in mine.value.message
        with slots.taken("bob"):
            with pytest.raises(LimitReached) as full, slots.taken("carol"):
                pass
            assert "TOTAL_SETTING" in full.value.message and full.value.headers == {"Retry-After": "5"}
    assert slots.in_use == 0
    with pytest.raises(RuntimeError), slots.taken("alice"):
        raise RuntimeError("a failing read gives its slot back")
    assert slots.in_use == 0


def test_slots_hold_under_simultaneous_takers():
    slots, start, held, refused = _slots(total=3, per_user=3), threading.Barrier(12), [], []
    leave = threading.Event()

    def take(n: int) -> None:
        start.wait()
        try:
            with slots.taken(n % 4):
                held.append(n)
                leave.wait(timeout=10)
        except LimitReached:
            refused.append(n)

    threads = [threading.Thread(target=take, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while len(refused) < 9 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(held) == 3 and slots.in_use == 3
    leave.set()
    for thread in threads:
        thread.join(timeout=10)
    assert len(refused) == 9 and slots.in_use == 0


async def _call(app, *, path="/api/v1/environments/1/redo/preview", length=1024, query=b""):
    """Run one request through `app`; returns (status, body, whether the body was read)."""
    sent, read = [], []

    async def receive():
        read.append(True)
        return {"type": "http.request", "body": b"x" * length, "more_body": False}

    async def send(message):
        sent.append(message)

    headers = [(b"content-length", str(length).encode()), (b"content-type", b"multipart/form-data; boundary=x")]
    scope = {"type": "http", "method": "POST", "path": path, "headers": headers, "query_string": query}
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, bool(read)


async def _inner(scope, receive, send):
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"stored"})


def test_the_floor_refuses_an_upload_before_its_body_is_read(tmp_path):
    floor = shutil.disk_usage(tmp_path).free + 1024 * GIB
    asked = []

    def make_room(needed: int) -> int:
        asked.append(needed)
        return 0  # nothing unused to remove

    guarded = UploadSpaceMiddleware(
        _inner, applies=lambda path: "/redo/" in path, directory=tmp_path, floor_bytes=floor, make_room=make_room
    )
    status, body, read = anyio.run(_call, guarded)
    assert (status, read) == (507, False)
    assert "REDOLAB_UPLOAD_FREE_SPACE_FLOOR_BYTES" in json.loads(body)["detail"] and asked and asked[0] > 0
    assert anyio.run(lambda: _call(guarded, path="/api/v1/environments"))[0] == 200  # not an upload route
    roomy = UploadSpaceMiddleware(_inner, applies=lambda path: True, directory=tmp_path, floor_bytes=0)
    assert anyio.run(_call, roomy)[:2] == (200, b"stored")


def test_the_floor_first_removes_unused_previews(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    guarded = UploadSpaceMiddleware(
        _inner, applies=lambda path: True, directory=tmp_path, floor_bytes=free, make_room=lambda needed: needed
    )
    assert anyio.run(_call, guarded)[0] == 200  # room was made: the upload goes on


def test_numbers_beyond_the_ids_are_refused_in_the_path_and_the_query():
    guarded = IdBoundsMiddleware(_inner, query_ids=frozenset({"run", "sweep"}))
    status, body, read = anyio.run(lambda: _call(guarded, path=f"/api/v1/runs/{MAX_ROW_ID + 1}"))
    assert (status, read) == (404, False) and str(MAX_ROW_ID) in json.loads(body)["detail"]
    status, body, _ = anyio.run(lambda: _call(guarded, path="/api/v1/x", query=f"run=1&run={10**30}".encode()))
    assert status == 422 and json.loads(body)["detail"][0]["loc"] == ["query", "run"]
    status, body, _ = anyio.run(lambda: _call(guarded, path="/compare", query=f"sweep=-{2**64}".encode()))
    assert status == 422 and body.startswith(b"sweep: ")
    assert anyio.run(lambda: _call(guarded, path=f"/api/v1/runs/{MAX_ROW_ID}", query=b"q=abc"))[0] == 200
    assert anyio.run(lambda: _call(guarded, path="/api/v1/x", query=f"tag={10**30}".encode()))[0] == 200  # not an id


@given(st.integers())
def test_beyond_row_ids_is_exactly_outside_the_ids_either_way(number):
    assert _beyond_row_ids(str(number)) == (abs(number) > MAX_ROW_ID)
    assert _beyond_row_ids(f"+{number}" if number >= 0 else str(number)) == (abs(number) > MAX_ROW_ID)


@pytest.mark.parametrize("text", ["", "abc", "1.5", "0x10", "١٢٣", "1e30", "-", "+", "12a"])
def test_beyond_row_ids_reads_whole_ascii_numbers_only(text):
    assert not _beyond_row_ids(text)


def test_beyond_row_ids_never_parses_a_huge_number():
    assert _beyond_row_ids("9" * 100_000) and _beyond_row_ids("0" * 50 + "1" * 20)
    assert not _beyond_row_ids("0" * 5000 + "7")
