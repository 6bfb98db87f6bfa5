"""Imports of oratcptest client output and iperf3 -J files: the pure parsers on captured output,
then the upload (form and API), all-or-nothing, and the imported runs on the pages and in compare."""

import copy
import json
import shutil
import socket
import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from redolab.auth.models import Role
from redolab.runs.models import ProbeMode, Run, RunEvent, RunSource, RunStatus
from redolab.runs.parsers import read_results
from redolab.runs.parsers.iperf3 import read_iperf3
from redolab.runs.parsers.results import ResultFileError
from tests.conftest import log_in
from tests.factories import make_user
from tests.figures import values
from tests.services import missing
from tests.web.test_runs import HTMX, local_env
from tests.web.test_sweeps import figure_in

DATA = Path(__file__).parent / "data"
MIB = 1024 * 1024
DAY = date(2026, 3, 4)


def text_of(name: str) -> str:
    return (DATA / name).read_text()


# -- oratcptest ---------------------------------------------------------------------------------
def test_oratcptest_single_test_as_printed():
    (run,) = read_results(text_of("oratcptest_async.txt"), test_date=DAY)
    assert run.source is RunSource.oratcptest and run.mode is ProbeMode.async_
    assert (run.conns, run.message_bytes, run.sockbuf_bytes) == (1, MIB, None)
    assert (run.duration_seconds, run.interval_seconds) == (120.0, 20.0)
    assert run.bytes_per_second == pytest.approx(73.209 * MIB, abs=1)
    assert run.sndbuf_granted_bytes == 2 * 4194304  # oratcptest prints half of the allocation
    assert run.started_at == datetime(2026, 3, 4, 11, 39, 16, tzinfo=UTC)
    assert run.finished_at == datetime(2026, 3, 4, 11, 41, 16, tzinfo=UTC)
    assert [i["end_seconds"] for i in run.intervals] == [20.0, 40.0, 60.0, 80.0, 100.0, 120.0]
    assert [i["start_seconds"] for i in run.intervals][:2] == [0.0, 20.0]
    assert run.intervals[3]["bytes_per_second"] == pytest.approx(79.332 * MIB, abs=1)
    assert run.intervals[3]["bytes"] == pytest.approx(79.332 * MIB * 20, abs=20)  # rates are read to the byte/s
    assert run.text.startswith("$ java -jar oratcptest.jar") and run.text.endswith("73.209 Mbytes/s")


def test_oratcptest_pasted_into_one_line_across_midnight():
    """Output pasted from a web page arrives as one line (seed 000 shows it so); it ran past midnight."""
    (run,) = read_results(text_of("oratcptest_pasted.txt"), test_date=DAY)
    assert (run.conns, run.sockbuf_bytes, run.sndbuf_granted_bytes) == (2, 2 * MIB, 2 * 2097152)
    assert run.bytes_per_second == pytest.approx(27.454 * MIB, abs=1)
    assert run.started_at == datetime(2026, 3, 4, 23, 59, 22, tzinfo=UTC)
    assert [i["end_seconds"] for i in run.intervals] == [20.0, 40.0, 60.0, 80.0, 100.0, 120.0]
    assert run.intervals[0]["bytes_per_second"] == pytest.approx(44.894 * MIB, abs=1)


def test_oratcptest_several_tests_in_one_file():
    sync, async_ = read_results(text_of("oratcptest_two_tests.txt"), test_date=DAY)
    assert sync.mode is ProbeMode.sync and async_.mode is ProbeMode.async_
    assert (sync.message_bytes, sync.duration_seconds, sync.sndbuf_granted_bytes) == (512 * 1024, 60.0, 2 * MIB)
    assert "Disk write = YES" in sync.notes and async_.notes == ""
    assert sync.first_line == 1 and async_.first_line == 27  # its command line
    assert (
        async_.text.startswith("$ java -jar oratcptest.jar stby1-vip -port=5555 -mode=async")
        and "Number of connections  = 1" not in async_.text
    )
    assert (async_.conns, async_.interval_seconds, async_.duration_seconds) == (4, 10.0, 40.0)
    assert async_.bytes_per_second == pytest.approx(195 * MIB)
    assert async_.sndbuf_granted_bytes == 16 * MIB
    assert async_.started_at == datetime(2026, 3, 4, 9, 5, tzinfo=UTC)
    assert len(sync.intervals) == 3 and len(async_.intervals) == 4


def test_oratcptest_repeated_test_gives_a_run_per_repetition():
    """-freq repeats the test under one header: each repetition is a run, dated across midnight."""
    runs = read_results(text_of("oratcptest_freq.txt"), test_date=DAY)
    assert [run.started_at for run in runs] == [
        datetime(2026, 3, 4, 22, 30, tzinfo=UTC),
        datetime(2026, 3, 4, 23, 30, tzinfo=UTC),
        datetime(2026, 3, 5, 0, 30, tzinfo=UTC),
    ]
    assert [run.bytes_per_second / MIB for run in runs] == [61.0, 42.0, 81.0]
    assert [run.sndbuf_granted_bytes for run in runs] == [4 * MIB, 4 * MIB, 8 * MIB]
    assert [[i["end_seconds"] for i in run.intervals] for run in runs] == [[10.0, 20.0]] * 3
    assert [run.first_line for run in runs] == [1, 24, 32]
    assert runs[2].notes == "Repetition 3 of 3 of a repeated test (-freq)."
    assert runs[2].text.startswith("$ java -jar") and "(00:30:00) The server is ready." in runs[2].text
    assert "(22:30:10)" not in runs[2].text and all(run.conns == 1 for run in runs)


def _error(text: str, fmt: str = "auto") -> str:
    with pytest.raises(ResultFileError) as caught:
        read_results(text, fmt, test_date=DAY)
    return str(caught.value)


def test_oratcptest_errors_name_the_test_and_line():
    two = text_of("oratcptest_two_tests.txt")
    cut = two[: two.index("(09:05:40) Test finished.")]
    assert _error(cut) == (
        "line 27: test 2 (from line 27) has no 'Avg. throughput = … Mbytes/s' line: "
        "the output is cut short, or the test failed"
    )
    assert "oratcptest server output" in _error(text_of("oratcptest_server.txt"))
    no_conns = text_of("oratcptest_async.txt").replace("Number of connections  = 1\n", "")
    assert "has no 'Number of connections = …' line before its first measurement" in _error(no_conns)
    bad_clock = text_of("oratcptest_async.txt").replace("(11:40:16)         72.104", "(11:70:16)         72.104")
    assert _error(bad_clock) == "line 20: '(11:70:16)' is not a time of day"
    bad_mode = text_of("oratcptest_async.txt").replace("= ASYNC", "= FASTSYNC")
    assert _error(bad_mode) == "line 8: Transport mode 'FASTSYNC' is neither ASYNC nor SYNC"
    assert "neither oratcptest client output" in _error("hello\nworld\n")
    assert "unknown format 'csv'" in _error("x", "csv")


def test_oratcptest_trimmed_of_its_payload_line_takes_the_given_message_size():
    """Output pasted without its "Message payload" line: refused beside the form's Message size
    field, then read with the size given there (and the run says where its size came from); a
    missing date is the Date field's error, not the file's."""
    full = text_of("oratcptest_async.txt")
    trimmed = "".join(line for line in full.splitlines(True) if "Message payload" not in line)
    with pytest.raises(ResultFileError) as caught:
        read_results(trimmed, test_date=DAY)
    assert caught.value.field == "message_bytes" and "no 'Message payload = …' line" in str(caught.value)
    [run] = read_results(trimmed, test_date=DAY, message_bytes=512 * 1024)
    assert run.message_bytes == 524_288 and "524,288 bytes per message, as given on import" in run.notes
    [as_printed] = read_results(full, test_date=DAY, message_bytes=512 * 1024)  # the file's own line wins
    assert as_printed.message_bytes == 1024 * 1024 and "as given on import" not in as_printed.notes
    with pytest.raises(ResultFileError) as undated:
        read_results(full)
    assert undated.value.field == "test_date"


# -- iperf3 -J ----------------------------------------------------------------------------------
def iperf3_document() -> dict:
    """A real iperf3 3.12 -J capture: two streams for 1 s over loopback, intervals of 0.5 s."""
    return json.loads(text_of("iperf3_two_streams.json"))


def test_iperf3_json_maps_to_a_run():
    document = iperf3_document()
    run = read_iperf3(json.dumps(document))
    received = document["end"]["sum_received"]
    assert run.source is RunSource.iperf3 and run.mode is ProbeMode.async_
    assert (run.conns, run.message_bytes, run.duration_seconds) == (2, 131072, 1.0)
    assert run.bytes_per_second == pytest.approx(received["bytes"] / received["seconds"])
    assert run.bytes_received == received["bytes"] and run.bytes_sent == document["end"]["sum_sent"]["bytes"]
    assert run.retransmits == document["end"]["sum_sent"]["retransmits"]
    assert run.started_at == datetime.fromtimestamp(document["start"]["timestamp"]["timesecs"], UTC)
    assert run.probe_version == "iperf 3.12"
    assert run.client_settings["kernel"] == "6.18.44-fc-v769"
    assert run.client_settings["tcp_congestion_control"] == document["end"]["sender_tcp_congestion"]
    assert run.client_settings["mtu_bytes"] == 65535 and "kernel" not in run.server_settings
    first = run.intervals[0]
    stream = document["intervals"][0]["streams"][0]
    assert first["bytes"] == document["intervals"][0]["sum"]["bytes"]
    assert first["bytes_per_second"] == pytest.approx(document["intervals"][0]["sum"]["bits_per_second"] / 8)
    assert first["streams"][0]["rtt_us"] == stream["rtt"]
    assert first["streams"][0]["snd_cwnd"] == round(stream["snd_cwnd"] / 32768)  # bytes to segments (MSS)
    assert run.interval_seconds == pytest.approx(0.5, abs=0.01)


def test_iperf3_reversed_omitted_and_refused():
    document = iperf3_document()
    document["start"]["test_start"]["reverse"] = 1
    document["start"]["sock_bufsize"] = 4 * MIB
    document["intervals"][0]["sum"]["omitted"] = True
    run = read_iperf3(json.dumps(document))
    assert run.server_settings["kernel"] == "6.18.44-fc-v769" and "kernel" not in run.client_settings
    assert run.sndbuf_granted_bytes is None and "Reversed" in run.notes
    assert run.sockbuf_bytes == 4 * MIB
    assert len(run.intervals) == 1 and run.intervals[0]["start_seconds"] > 0  # the omitted warm-up is left out

    server_file = iperf3_document()  # iperf3 -s -J: the receiver's view
    server_file["start"]["accepted_connection"] = {"host": "127.0.0.1", "port": 40000}
    server_file["end"]["sum_sent"]["bytes"] = 0
    run = read_iperf3(json.dumps(server_file))
    assert run.server_settings["kernel"] == "6.18.44-fc-v769" and run.bytes_sent is None
    assert run.bytes_received == server_file["end"]["sum_received"]["bytes"] and "server's output" in run.notes
    server_file["start"]["test_start"]["reverse"] = 1  # the server's file of a reversed test: it sent
    assert read_iperf3(json.dumps(server_file)).client_settings["kernel"] == "6.18.44-fc-v769"

    udp = copy.deepcopy(iperf3_document())
    udp["start"]["test_start"]["protocol"] = "UDP"
    assert "only TCP tests are imported" in _error(json.dumps(udp))
    assert _error('{"start": {}, "error": "unable to connect to server: Connection refused"}') == (
        "iperf3 reported an error and measured nothing: unable to connect to server: Connection refused"
    )
    no_end = iperf3_document()
    del no_end["end"]["sum_received"]
    assert "has no 'end.sum_received'" in _error(json.dumps(no_end))
    assert _error('{\n "start": {\n  "x": 1,\n }\n}').startswith("line 4: not JSON")


# -- upload: form, API, all-or-nothing ----------------------------------------------------------
def _files(*names: str) -> list:
    return [("files", (name, (DATA / name).read_bytes(), "text/plain")) for name in names]


def test_form_imports_every_test_and_shows_the_source(browser_client, session):
    environment, primary, standby = local_env(session)
    page = browser_client.get(f"/environments/{environment.id}")
    assert 'id="import-form"' in page.text
    assert '<input id="i-test_date" name="test_date" type="date" value=""' in page.text  # no date made up (today's)
    data = {"client_host_id": primary.id, "server_host_id": standby.id, "test_date": "2026-03-04", "tags": "before"}
    response = browser_client.post(
        f"/environments/{environment.id}/runs/import",
        data=data,
        files=_files("oratcptest_two_tests.txt", "iperf3_two_streams.json"),
        headers=HTMX,
    )
    assert (
        response.status_code == 200
        and response.headers["HX-Redirect"] == f"/environments/{environment.id}?imported=3#runs"
    )
    runs = session.query(Run).order_by(Run.id).all()
    assert [(r.source, r.source_name, r.conns) for r in runs] == [
        (RunSource.oratcptest, "oratcptest_two_tests.txt", 1),
        (RunSource.oratcptest, "oratcptest_two_tests.txt", 4),
        (RunSource.iperf3, "iperf3_two_streams.json", 2),
    ]
    assert all(r.status is RunStatus.succeeded and r.tags == ["before"] and r.requested_by for r in runs)
    assert [session.query(RunEvent).filter_by(run_id=r.id).count() for r in runs] == [3, 4, 2]

    page = browser_client.get(f"/environments/{environment.id}").text
    listing = page[page.index('id="runs-table"') :]  # the plan's evidence list names them too
    listing = listing[: listing.index("</table>")]
    assert listing.count("imported: oratcptest") == 2 and listing.count("imported: iperf3") == 1
    assert "2026-03-04 09:05 UTC" in listing  # when the test ran, not when it was imported

    run_page = browser_client.get(f"/runs/{runs[1].id}").text
    assert "Imported from oratcptest output" in run_page and "oratcptest_two_tests.txt" in run_page
    assert "imported by" in run_page and "Exact probe commands" not in run_page
    assert "195 MiB/s" in run_page and 'id="tcp-chart"' not in run_page  # oratcptest gives throughput only
    assert 'id="tcp-chart"' in browser_client.get(f"/runs/{runs[2].id}").text  # iperf3 gives RTT and cwnd
    figure = figure_in(run_page, "throughput-chart")
    assert values(figure["data"][0]["x"]) == [10.0, 20.0, 30.0, 40.0]
    assert [round(y) for y in values(figure["data"][0]["y"])] == [180, 200, 210, 190]  # MiB/s
    original = browser_client.get(f"/runs/{runs[1].id}/source")
    assert original.status_code == 200 and original.text.startswith(
        "$ java -jar oratcptest.jar stby1-vip -port=5555 -mode=async"
    )
    assert "attachment" in original.headers["content-disposition"]
    assert browser_client.get(f"/runs/{runs[2].id}/source").json()["start"]["version"] == "iperf 3.12"

    export = browser_client.get(f"/environments/{environment.id}/runs/export.csv").text
    header, *rows = export.splitlines()
    assert "source" in header.split(",") and sum(",oratcptest," in row for row in rows) == 2

    assert 'id="delete-run"' in run_page
    deleted = browser_client.delete(f"/runs/{runs[1].id}", headers=HTMX)
    assert deleted.headers["HX-Redirect"] == f"/environments/{environment.id}#runs"
    assert session.query(Run).count() == 2 and session.query(RunEvent).filter_by(run_id=runs[1].id).count() == 0


def test_one_bad_file_imports_nothing(browser_client, api_client, session):
    environment, primary, standby = local_env(session)
    data = {"client_host_id": primary.id, "server_host_id": standby.id, "test_date": "2026-03-04"}
    response = browser_client.post(
        f"/environments/{environment.id}/runs/import",
        data={**data, "tags": "x"},
        files=[
            *_files("oratcptest_async.txt"),
            ("files", ("cut.txt", b"[Requesting a test]\nMessage payload = 1 Mbyte\n")),
        ],
        headers=HTMX,
    )
    assert response.status_code == 422
    assert "cut.txt: line 1: the test has no &#39;Avg. throughput" in response.text
    assert 'id="import-results" open' in response.text and 'value="x"' in response.text
    assert session.query(Run).count() == 0

    binary = browser_client.post(
        f"/environments/{environment.id}/runs/import", data=data, files=[("files", ("x.bin", b"ok\n\xff\xfe"))]
    )
    assert binary.status_code == 422 and "x.bin: line 2: not UTF-8 text" in binary.text
    no_file = browser_client.post(f"/environments/{environment.id}/runs/import", data=data)
    assert no_file.status_code == 422 and "Choose one or more files" in no_file.text
    bad_date = api_client.post(
        f"/api/v1/environments/{environment.id}/runs/import",
        data={**data, "test_date": "04/03/2026"},
        files=_files("oratcptest_async.txt"),
    )
    assert bad_date.status_code == 422 and bad_date.json()["detail"][0]["loc"][-1] == "test_date"
    assert session.query(Run).count() == 0


def test_api_import_and_roles(api_client, anonymous, session):
    environment, primary, standby = local_env(session)
    url = f"/api/v1/environments/{environment.id}/runs/import"
    data = {"client_host_id": primary.id, "server_host_id": standby.id, "format": "oratcptest", "label": "mar"}
    assert anonymous.post(url, data=data, files=_files("oratcptest_async.txt")).status_code == 401
    response = api_client.post(url, data={**data, "test_date": "2026-03-04"}, files=_files("oratcptest_async.txt"))
    assert response.status_code == 201, response.text
    (run,) = response.json()["data"]
    assert (run["source"], run["source_name"], run["label"], run["status"]) == (
        "oratcptest", "oratcptest_async.txt", "mar", "succeeded"
    )  # fmt: skip
    assert run["started_at"].startswith("2026-03-04T11:39:16")
    wrong = api_client.post(url, data={**data, "format": "iperf3"}, files=_files("oratcptest_async.txt"))
    assert wrong.status_code == 422 and "oratcptest_async.txt: line 1: not JSON" in wrong.json()["detail"][0]["msg"]

    measured = Run(
        **{c.name: getattr(session.get(Run, run["id"]), c.name) for c in Run.__table__.columns if c.name != "id"}
    )
    measured.source = RunSource.redoprobe
    session.add(measured)
    session.commit()
    refused = api_client.delete(f"/api/v1/runs/{measured.id}")
    assert refused.status_code == 409 and "only imported runs can be deleted" in refused.json()["detail"][0]["msg"]

    make_user(session, "vic", role=Role.viewer)
    log_in(anonymous, "vic")
    denied = anonymous.post(url.removeprefix("/api/v1"), data=data, files=_files("oratcptest_async.txt"))
    assert denied.status_code == 403
    assert anonymous.delete(f"/runs/{run['id']}").status_code == 403
    assert 'id="delete-run"' not in anonymous.get(f"/runs/{run['id']}").text
    assert session.query(Run).count() == 2
    assert api_client.delete(f"/api/v1/runs/{run['id']}").status_code == 204
    assert session.query(Run).count() == 1


def test_compare_names_the_source(browser_client, session):
    environment, primary, standby = local_env(session)
    common = {"client_host_id": primary.id, "server_host_id": standby.id, "test_date": "2026-11-23"}
    for name in ("oratcptest_async.txt", "iperf3_two_streams.json"):
        response = browser_client.post(f"/environments/{environment.id}/runs/import", data=common, files=_files(name))
        assert response.status_code == 303
    first, second = (run.id for run in session.query(Run).order_by(Run.id))
    page = browser_client.get(f"/compare?run={first}&run={second}").text
    table = page.split('id="differences"')[1].split("</table>")[0]
    assert "source" in table and "oratcptest output" in table and "iperf3 JSON" in table
    over_time = figure_in(page.split("<h2>Runs over time</h2>")[1])
    # In time order: the iperf3 file's own timestamp, then oratcptest's clock on the date given.
    assert over_time["data"][0]["x"] == ["2026-11-22T08:24:03+00:00", "2026-11-23T11:39:16+00:00"]
    assert [round(y, 3) for y in over_time["data"][0]["y"]] == [
        round(session.get(Run, second).bytes_per_second / MIB, 3), 73.209
    ]  # fmt: skip


# -- a real iperf3 on 127.0.0.1 -----------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_real_iperf3_output_imports_with_its_own_numbers(api_client, session, tmp_path):
    if shutil.which("iperf3") is None:
        missing("iperf3", "apt-get install iperf3")
    environment, primary, standby = local_env(session)
    port = str(_free_port())
    server = subprocess.Popen(["iperf3", "-s", "-1", "-p", port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            client = subprocess.run(
                ["iperf3", "-c", "127.0.0.1", "-p", port, "-t", "1", "-i", "0.25", "-P", "3", "-J"],
                capture_output=True,
                timeout=30,
            )
            if b"Connection refused" not in client.stdout:
                break
        assert client.returncode == 0, client.stdout[-500:]
    finally:
        server.kill()
        server.wait()
    response = api_client.post(
        f"/api/v1/environments/{environment.id}/runs/import",
        data={"client_host_id": primary.id, "server_host_id": standby.id},
        files=[("files", ("loopback.json", client.stdout, "application/json"))],
    )
    assert response.status_code == 201, response.text
    document = json.loads(client.stdout)
    received = document["end"]["sum_received"]
    (run,) = response.json()["data"]
    assert run["source"] == "iperf3" and run["conns"] == 3
    assert run["bytes_per_second"] == pytest.approx(received["bytes"] / received["seconds"])
    events = api_client.get(f"/api/v1/runs/{run['id']}/events").json()
    assert len(events) == len([i for i in document["intervals"] if not i["sum"].get("omitted")]) >= 4
    assert all(len(event["data"]["streams"]) == 3 for event in events)


def test_size_limits_name_the_file(api_client, session, monkeypatch):
    from redolab.runs import service

    monkeypatch.setattr(service, "MAX_RESULT_FILE_BYTES", 1000)
    monkeypatch.setattr(service, "MAX_RESULT_IMPORT_BYTES", 3000)
    environment, primary, standby = local_env(session)
    url = f"/api/v1/environments/{environment.id}/runs/import"
    data = {"client_host_id": primary.id, "server_host_id": standby.id}
    big = api_client.post(url, data=data, files=[("files", ("big.txt", b"x" * 1500))])
    assert big.status_code == 422 and big.json()["detail"][0]["msg"] == (
        "big.txt is larger than 1,000 B, the most a result file may be."
    )
    many = api_client.post(url, data=data, files=[("files", (f"{n}.txt", b"x" * 900)) for n in range(4)])
    assert (
        many.status_code == 422
        and "The files come to more than 3 KiB: import them in parts." in many.json()["detail"][0]["msg"]
    )
    assert session.query(Run).count() == 0


def test_oratcptest_without_a_date_is_refused_not_dated_today(api_client, session):
    environment, primary, standby = local_env(session)
    url = f"/api/v1/environments/{environment.id}/runs/import"
    data = {"client_host_id": primary.id, "server_host_id": standby.id}
    response = api_client.post(url, data=data, files=_files("oratcptest_async.txt"))
    assert response.status_code == 422
    message = response.json()["detail"][0]["msg"]
    assert message.startswith("oratcptest_async.txt: oratcptest prints clock times only, no date")
    assert "--date YYYY-MM-DD" in message and "Date field" in message
    assert session.query(Run).count() == 0


def test_iperf3_with_nothing_received_is_refused():
    document = json.loads(text_of("iperf3_two_streams.json"))
    document["end"]["sum_received"]["bytes"] = 0
    with pytest.raises(ResultFileError, match=r"end\.sum_received\.bytes is 0: the receiver counted no data"):
        read_results(json.dumps(document))
