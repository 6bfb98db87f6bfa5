"""Import into the database (SQLite and PostgreSQL): all or nothing, never twice, never double-counted."""

from pathlib import Path

import pytest
from sqlalchemy import func, select

from redolab.core.errors import FieldError
from redolab.redo import service
from redolab.redo.ingest import pipeline
from redolab.redo.models import RedoImport, RedoRow
from redolab.redo.parsers import RedoInputError
from tests.factories import make_environment

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
MIB = 1024 * 1024


def count(session, model):
    return session.scalar(select(func.count()).select_from(model))


def test_import_stores_unique_rows_and_summary(session):
    environment = make_environment(session)
    record = service.import_file(
        session=session,
        environment=environment,
        path=FIXTURES / "gv_archived_log.csv",
        filename="gv.csv",
        imported_by="alice",
    )
    assert (record.rows_read, record.rows_kept) == (7, 3)
    assert record.kind == "archived-log" and record.threads == [1, 2]
    assert record.first_time.isoformat().startswith("2022-01-15T08:00")
    assert count(session, RedoRow) == 3
    _, summary = service.environment_analysis(session=session, environment=environment)
    assert summary["summed"]["peak_bytes_per_second"] == pytest.approx((1_228_800 + 2_457_600) * 512 / 600)
    assert not any("more than one import" in w for w in summary["warnings"])  # one import: nothing repeated
    assert summary["dropped"] == {
        "listed once per archive destination": 1,
        "listed once per instance (GV$ view)": 2,
        "archived again (same thread, sequence and resetlogs)": 1,
    }


@pytest.mark.parametrize("second_process", [False, True])
def test_bad_line_imports_nothing(session, monkeypatch, second_process):
    """A bad date stops the import with its line, also when a second process parses the file."""
    if second_process:
        monkeypatch.setattr(service, "PIPELINE_MIN_BYTES", 0)
    environment = make_environment(session)
    with pytest.raises(RedoInputError, match=r"line 4, NEXT_TIME: '31-FEB-22 10:30:00' is not a date"):
        service.import_file(
            session=session,
            environment=environment,
            path=FIXTURES / "bad_date.csv",
            filename="bad.csv",
            imported_by="alice",
        )
    assert count(session, RedoImport) == 0 and count(session, RedoRow) == 0


def test_same_file_twice_is_refused(session):
    environment = make_environment(session)
    service.import_file(
        session=session, environment=environment, path=FIXTURES / "seed000.csv", filename="a.csv", imported_by="alice"
    )
    with pytest.raises(FieldError, match="already imported as import #"):
        service.import_file(
            session=session,
            environment=environment,
            path=FIXTURES / "seed000.csv",
            filename="again.csv",
            imported_by="alice",
        )
    assert count(session, RedoImport) == 1


def test_overlapping_imports_count_once(session, tmp_path):
    environment = make_environment(session)
    service.import_file(
        session=session, environment=environment, path=FIXTURES / "seed000.csv", filename="a.csv", imported_by="alice"
    )
    overlap = tmp_path / "overlap.txt"
    overlap.write_bytes((FIXTURES / "seed000_sqlplus.txt").read_bytes())  # the same 11 logs, another format
    service.import_file(session=session, environment=environment, path=overlap, filename="b.txt", imported_by="alice")
    _, summary = service.environment_analysis(session=session, environment=environment)
    assert summary["unique_logs"] == 11
    assert any("more than one import" in w for w in summary["warnings"])
    thread2 = next(t for t in summary["threads"] if t["thread"] == 2)
    assert round(thread2["required_bytes_per_second"] / MIB, 2) == 71.07


def test_delete_import_removes_rows(session):
    environment = make_environment(session)
    record = service.import_file(
        session=session, environment=environment, path=FIXTURES / "seed000.csv", filename="a.csv", imported_by="alice"
    )
    service.delete_import(session=session, record=record)
    assert count(session, RedoRow) == 0
    assert service.environment_analysis(session=session, environment=environment) is None


def test_api_preview_then_import(api_client, session):
    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/redo"
    with open(FIXTURES / "gv_archived_log.csv", "rb") as handle:
        preview = api_client.post(f"{base}/preview", files={"file": ("gv.csv", handle, "text/csv")})
    assert preview.status_code == 200, preview.text
    body = preview.json()
    assert body["kind"] == "archived-log" and body["mapping"]["thread"] == "THREAD#"
    assert body["analysis"]["dropped"]["listed once per archive destination"] == 1
    assert api_client.get(f"{base}/imports").json() == {"data": [], "count": 0}  # a preview stores nothing
    imported = api_client.post(f"{base}/imports", json={"upload_token": body["upload_token"]})
    assert imported.status_code == 201 and imported.json()["rows_kept"] == 3
    analytics = api_client.get(f"{base}/analytics").json()
    assert analytics["required_mbit_per_second"] > 0
    again = api_client.post(f"{base}/imports", json={"upload_token": body["upload_token"]})
    assert again.status_code == 422 and "upload the file again" in again.text
    assert api_client.delete(f"{base}/imports/{imported.json()['id']}").status_code == 204


def test_api_unreadable_file_is_422(api_client, session):
    environment = make_environment(session)
    with open(FIXTURES / "bad_date.csv", "rb") as handle:
        response = api_client.post(
            f"/api/v1/environments/{environment.id}/redo/preview", files={"file": ("bad.csv", handle)}
        )
    assert response.status_code == 422
    assert "line 4, NEXT_TIME: '31-FEB-22 10:30:00' is not a date" in response.json()["detail"][0]["msg"]


def test_page_preview_and_import(browser_client, session):
    environment = make_environment(session)
    htmx = {"HX-Request": "true"}
    with open(FIXTURES / "seed000_sqlplus.txt", "rb") as handle:
        preview = browser_client.post(
            f"/environments/{environment.id}/redo/preview",
            files={"file": ("seed.txt", handle)},
            data={"format": "auto"},
            headers=htmx,
        )
    assert preview.status_code == 200, preview.text
    assert "SQL*Plus output, one row per archived log" in preview.text and "71.07 MiB/s" in preview.text
    token = preview.text.split('name="upload_token" value="')[1].split('"')[0]
    imported = browser_client.post(
        f"/environments/{environment.id}/redo/imports", data={"upload_token": token, "format": "auto"}, headers=htmx
    )
    assert imported.headers.get("HX-Refresh") == "true"
    page = browser_client.get(f"/environments/{environment.id}")
    assert "71.07 MiB/s" in page.text and "54.67 MiB/s" in page.text
    assert 'id="redo-rate-chart"' not in page.text  # the seed's query has no FIRST_TIME: no time axis to draw


def test_large_files_parse_in_a_second_process(session, monkeypatch):
    """The two-process path (used above PIPELINE_MIN_BYTES) stores the same rows..."""
    monkeypatch.setattr(service, "PIPELINE_MIN_BYTES", 0)
    environment = make_environment(session)
    record = service.import_file(
        session=session,
        environment=environment,
        path=FIXTURES / "gv_archived_log.csv",
        filename="gv.csv",
        imported_by="alice",
    )
    assert (record.rows_read, record.rows_kept, record.threads) == (7, 3, [1, 2])
    assert record.dropped["listed once per instance (GV$ view)"] == 2
    assert count(session, RedoRow) == 3


def test_hour_of_day_profile_survives_the_database(session, browser_client):
    """Stored profile rows give the same analysis as the file, and the page draws the profile."""
    from redolab.redo.ingest.pipeline import analyze_files

    environment = make_environment(session)
    path = FIXTURES / "sysmetric_hourly_profile.csv"
    record = service.import_file(
        session=session, environment=environment, path=path, filename=path.name, imported_by="alice"
    )
    assert record.kind == "awr-profile" and record.threads == [1, 2]
    _, stored = service.environment_analysis(session=session, environment=environment)
    _, direct = analyze_files([path], headroom_ratio=environment.headroom_percent / 100)
    assert stored["required_bytes_per_second"] == pytest.approx(direct["required_bytes_per_second"])
    assert stored["profile"] == direct["profile"] and len(stored["profile"]) == 48
    page = browser_client.get(f"/environments/{environment.id}")
    assert 'id="redo-profile"' in page.text and 'id="redo-rate-chart"' not in page.text


def _preview(browser_client, environment, **kwargs):
    return browser_client.post(f"/environments/{environment.id}/redo/preview", headers={"HX-Request": "true"}, **kwargs)


def test_archive_upload_previews_members_and_imports_all_or_nothing(browser_client, session, tmp_path):
    """A DMA collection zip: the members with redo are read and named, the rest listed as not used,
    the import stores every member's rows as one import; a bad member stores nothing at all."""
    from tests.redo.test_collectors import collection, write_zip

    environment = make_environment(session)
    archive = write_zip(tmp_path / "dma_collection.zip", collection())
    with open(archive, "rb") as handle:
        preview = _preview(browser_client, environment, files={"file": ("dma_collection.zip", handle)})
    assert preview.status_code == 200, preview.text
    assert 'id="preview-files"' in preview.text and "dma_collection.zip/dma_output/opdb__archlogs__" in preview.text
    assert "9 files of the archive not used" in preview.text
    assert "collector output &#39;users&#39;, no redo history" in preview.text
    assert "Ignored (present, not read)" in preview.text
    token = preview.text.split('name="upload_token" value="')[1].split('"')[0]
    imported = browser_client.post(
        f"/environments/{environment.id}/redo/imports", data={"upload_token": token}, headers={"HX-Request": "true"}
    )
    assert imported.status_code == 200, imported.text
    (record,) = service.list_imports(session=session, environment=environment)
    assert record.filename == "dma_collection.zip" and record.kind == "mixed"
    assert record.rows_kept == 6 + 48 + 6  # hourly volumes, profile hours, AWR Miner snapshots
    assert any("Read from the archive:" in w and "awr-hist-" in w for w in record.warnings)
    assert any(n.endswith("112225120000.log: 1 h periods, 3 of them (the hour in HO).") for n in record.notes)
    assert any(n.startswith("Ignored (present, not read) in dma_collection.zip/") for n in record.notes)
    page = browser_client.get(f"/environments/{environment.id}")
    assert "how it was read" in page.text and "1 h periods, 3 of them (the hour in HO)." in page.text

    broken = collection()
    broken["dma_output/awr-hist-1234567890-ORCL-1000-1003.out"] = (
        b"~~BEGIN-MAIN-METRICS~~\nnothing\n~~END-MAIN-METRICS~~\n"
    )
    path = write_zip(tmp_path / "broken.zip", broken)
    with pytest.raises(RedoInputError, match=r"^broken.zip/dma_output/awr-hist-1234567890-ORCL-1000-1003.out: "):
        service.import_file(
            session=session, environment=environment, path=path, filename="broken.zip", imported_by="alice"
        )
    assert count(session, RedoImport) == 1 and count(session, RedoRow) == 60


def test_errors_name_the_users_file_never_the_upload_token(browser_client, session):
    environment = make_environment(session)
    with open(FIXTURES / "bad_date.csv", "rb") as handle:
        preview = _preview(browser_client, environment, files={"file": ("my export.csv", handle)})
    assert preview.status_code == 422
    assert "my export.csv: line 4, NEXT_TIME: &#39;31-FEB-22 10:30:00&#39; is not a date" in preview.text
    assert ".upload" not in preview.text
    unknown = _preview(
        browser_client, environment, files={"file": ("notes from Bob.txt", b"Dear DBA,\nsee attached\n")}
    )
    assert unknown.status_code == 422
    assert "notes from Bob.txt: no table was found: the first line with text is &#39;Dear DBA,&#39;" in unknown.text


def test_paste_box_previews_and_imports_pasted_sqlplus(browser_client, session):
    environment = make_environment(session)
    pasted = (FIXTURES / "seed000_sqlplus.txt").read_text()
    preview = _preview(browser_client, environment, data={"pasted": pasted, "format": "auto"})
    assert preview.status_code == 200, preview.text
    assert "Preview of pasted text" in preview.text and "71.07 MiB/s" in preview.text
    empty = _preview(browser_client, environment, data={"pasted": "  ", "format": "auto"})
    assert empty.status_code == 422 and "paste the output into the text box" in empty.text


def test_api_preview_of_text_and_of_nothing(api_client, session):
    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/redo"
    text = (FIXTURES / "collectors" / "redo_per_day.csv").read_text()
    preview = api_client.post(f"{base}/preview", data={"text": text})
    assert preview.status_code == 200, preview.text
    analysis = preview.json()["analysis"]
    assert analysis["ignored_columns"] == {"pasted text": ["LOGS"]}
    imported = api_client.post(f"{base}/imports", json={"upload_token": preview.json()["upload_token"]})
    assert imported.status_code == 201, imported.text
    assert "Ignored (present, not read): LOGS." in imported.json()["notes"]
    assert "REDO_DAY read as the period start: its values are dates." in imported.json()["notes"]
    assert any(n.startswith("1 d periods, 2 of them") for n in analysis["notes"])
    nothing = api_client.post(f"{base}/preview", data={"format": "auto"})
    assert nothing.status_code == 422 and "as `text`" in nothing.text


def test_times_are_read_in_the_database_time_zone_and_stored_in_utc(session):
    """V$ARCHIVED_LOG and SYSMETRIC times are the database's wall clock: 08:00 in Berlin in January is
    07:00 UTC; in July (summer time) 08:00 is 06:00 UTC. The import keeps the zone it was read in."""
    from datetime import UTC, datetime

    environment = make_environment(session, time_zone="Europe/Berlin")
    record = service.import_file(
        session=session,
        environment=environment,
        path=FIXTURES / "gv_archived_log.csv",
        filename="gv.csv",
        imported_by="alice",
    )
    assert record.time_zone == "Europe/Berlin"
    assert record.first_time == datetime(2022, 1, 15, 7, 0, tzinfo=UTC)
    summer = list(pipeline.in_zone([_interval(datetime(2022, 7, 15, 8, 0, tzinfo=UTC))], "Europe/Berlin"))
    assert summer[0].start == datetime(2022, 7, 15, 6, 0, tzinfo=UTC)
    utc = make_environment(session, name="utc env")
    again = service.import_file(
        session=session, environment=utc, path=FIXTURES / "gv_archived_log.csv", filename="gv.csv", imported_by="alice"
    )
    assert again.first_time == datetime(2022, 1, 15, 8, 0, tzinfo=UTC)  # UTC by default: unchanged


def _interval(start):
    from datetime import timedelta

    from redolab.redo.schemas import RedoInterval

    return RedoInterval(
        line=1, thread=1, start=start, end=start + timedelta(minutes=10), seconds=None, bytes=1.0, kind="log"
    )


def test_times_written_with_their_own_zone_keep_it():
    """'2022-01-15 08:00:00 +02:00' is 06:00 UTC whatever the database's zone; a time without a zone
    is the database's wall clock (08:00 in Berlin is 07:00 UTC)."""
    from datetime import UTC, datetime

    from redolab.redo.ingest.values import DateColumn

    column = DateColumn("FIRST_TIME")
    written = [
        column.parse(text, 1) for text in ("2022-01-15 08:00:00 +02:00", "2022-01-15T08:00:00Z", "2022-01-15 08:00:00")
    ]
    read = [i.start for i in pipeline.in_zone([_interval(moment) for moment in written], "Europe/Berlin")]
    assert read == [
        datetime(2022, 1, 15, 6, 0, tzinfo=UTC),
        datetime(2022, 1, 15, 8, 0, tzinfo=UTC),
        datetime(2022, 1, 15, 7, 0, tzinfo=UTC),
    ]
    assert [i.start.timestamp() for i in pipeline.in_zone([_interval(written[0])], "UTC")] == [read[0].timestamp()]
