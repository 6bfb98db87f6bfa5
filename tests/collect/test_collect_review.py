"""A collection previewed before it is imported (its rows kept as the requester's uploads, then the same
preview and import as a file), and AWR snapshots imported as their own import, never twice."""

from __future__ import annotations

from sqlalchemy import func, select

from redolab.collect import service
from redolab.collect.models import Collection, CollectionStatus
from redolab.redo.models import RedoImport, RedoRow
from tests.execution import execute_next


def stored(session) -> tuple[int, int]:
    return session.scalar(select(func.count(RedoImport.id))), session.scalar(select(func.count(RedoRow.id)))


def test_a_reviewed_collection_stores_nothing_until_its_preview_is_imported(
    session, engine, secret_key, oracle_env, database, api_client, app, browser_client
):
    environment, _ = oracle_env
    created = api_client.post(f"/api/v1/environments/{environment.id}/collections", json={"review": True})
    assert created.status_code == 201, created.text
    assert created.json()["review"] is True
    assert execute_next(engine, secret_key)
    body = api_client.get(f"/api/v1/collections/{created.json()['id']}").json()
    assert body["status"] == "succeeded", body["failure_message"]
    assert body["import_id"] is None and stored(session) == (0, 0)  # nothing until the user imports
    (piece,) = body["staged"]
    assert piece["name"] == "archived_log" and piece["rows"] == 11
    assert piece["filename"] == f"collection-{body['id']}-archived_log.csv"
    upload_dir = app.state.settings.upload_dir
    assert (upload_dir / f"{piece['token']}.upload").is_file()
    owner = (upload_dir / f"{piece['token']}.owner").read_text()
    assert owner.isdigit()  # counted against the requester's staging cap, as an upload of theirs

    # the page offers the preview; the preview is the one a file gets
    page = browser_client.get(f"/environments/{environment.id}")
    assert f'id="staged-preview-{body["id"]}-archived_log"' in page.text and "waiting for its preview" in page.text
    preview = browser_client.post(
        f"/environments/{environment.id}/redo/preview", data={"upload_token": piece["token"], "format": piece["format"]}
    )
    assert preview.status_code == 200 and 'id="preview-rows">11 / 11' in preview.text, preview.text[:2000]
    assert stored(session) == (0, 0)
    done = api_client.post(f"/api/v1/environments/{environment.id}/redo/imports", json={"upload_token": piece["token"]})
    assert done.status_code == 201, done.text
    assert stored(session) == (1, 11)
    session.expire_all()
    collection = session.get(Collection, body["id"])
    (state,) = service.staged_pieces(session=session, collection=collection, upload_dir=upload_dir)
    assert (state.state, state.import_id) == ("imported", done.json()["id"])
    page = browser_client.get(f"/environments/{environment.id}")
    assert f"imported as import #{done.json()['id']}" in page.text

    # the next collection starts after the imported logs: nothing new, nothing staged
    again = service.queue_collection(
        session=session, environment=environment, requested_by="alice", review_upload_dir=upload_dir
    )
    assert execute_next(engine, secret_key)
    session.expire_all()
    again = session.get(Collection, again.id)
    assert again.status is CollectionStatus.succeeded and not again.staged
    assert any(note.startswith("No new logs since") for note in again.notes), again.notes


def test_a_discarded_review_says_so_and_stores_nothing(session, engine, secret_key, oracle_env, database, app):
    environment, _ = oracle_env
    upload_dir = app.state.settings.upload_dir
    collection = service.queue_collection(
        session=session, environment=environment, requested_by="alice", review_upload_dir=upload_dir
    )
    assert execute_next(engine, secret_key)
    session.expire_all()
    collection = session.get(Collection, collection.id)
    (piece,) = collection.staged
    (upload_dir / f"{piece['token']}.upload").unlink()  # pruned, as previews never imported are
    (state,) = service.staged_pieces(session=session, collection=collection, upload_dir=upload_dir)
    assert state.state == "gone" and stored(session) == (0, 0)


def test_awr_snapshots_are_their_own_import_and_never_counted_twice(session, engine, secret_key, oracle_env, database):
    environment, _ = oracle_env
    environment.diagnostics_pack_licensed = True
    session.commit()
    first = service.queue_collection(session=session, environment=environment, requested_by="alice")
    assert execute_next(engine, secret_key)
    session.expire_all()
    first = session.get(Collection, first.id)
    assert first.status is CollectionStatus.succeeded, first.failure_message
    awr_id = first.facts["awr_sysmetric_import_id"]
    awr = session.get(RedoImport, awr_id)
    assert awr.filename == f"collection-{first.id}-awr_sysmetric.csv" and awr.kind == "awr-stat"
    rows = session.scalars(select(RedoRow).where(RedoRow.import_id == awr_id)).all()
    assert len(rows) == 2 and {row.kind for row in rows} == {"rate"}
    assert max(row.peak_bytes_per_second for row in rows) == 5242880.25  # the snapshot's MAXVAL, kept
    assert first.import_id != awr_id and session.get(RedoImport, first.import_id).kind != "awr-stat"
    # AWR keeps 8 days: the next collection reads the same snapshots again and imports none of them
    second = service.queue_collection(session=session, environment=environment, requested_by="alice")
    assert execute_next(engine, secret_key)
    session.expire_all()
    second = session.get(Collection, second.id)
    assert second.status is CollectionStatus.succeeded, second.failure_message
    assert "awr_sysmetric_import_id" not in second.facts
    assert "2 AWR snapshots were imported before: not again." in second.notes
    assert session.scalar(select(func.count(RedoImport.id)).where(RedoImport.kind == "awr-stat")) == 1
