"""Issue 56.4: `db2pd -hadr` in the layout before 10.1 of the first fix packs (Db2 9.5, 9.7 of 2010),
whose database line has no "-- Date": it was refused although the capture carries epoch seconds.

The layout is the one IBM's xCAT documentation prints for `db2pd -d xcatdb -hadr` on Db2 9.7 (the
database line ends at "Up 0 days 01:17:11"; "ConnectStatus ConnectTime Timeout" and "PeerWindowEnd
PeerWindow" each followed by a line of values, the dates as "Thu Aug  5 21:52:07 2010 (1281016327)"),
aligned as db2pd aligns its columns; the values are this test's own. The fixture is what
`db2pd -db SALESDB -hadr -repeat 5 3` writes: three captures, 5 s apart.

IBM's hadr_peer_window_end monitor element: the time until which the primary promises to stay in
peer state, updated with each heartbeat it sends; out of peer state the last value is kept. So in
Peer state PeerWindowEnd minus PeerWindow is the last heartbeat before db2pd ran, and ConnectTime
(when the connection status began) dates no capture.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from redolab.core.errors import FieldError
from redolab.hadr import db2pd, service
from redolab.redo.parsers import RedoInputError
from tests.factories import make_environment
from tests.variants import encoded

FIXTURES = Path(__file__).parents[1] / "fixtures" / "db2"
REPEAT = FIXTURES / "db2pd_hadr_97_no_date_repeat.txt"
MIB = 1024 * 1024
FIRST = 1276601647 - 300  # the first capture's PeerWindowEnd minus its PeerWindow: 2010-06-15 11:29:07 UTC


def test_a_capture_without_date_is_dated_by_its_peer_window_end():
    parsed = db2pd.parse(REPEAT.read_text().splitlines())
    assert parsed.layouts == {"before 10.1"}
    times = [sample.at for sample in parsed.samples]
    assert [at.timestamp() for at in times] == [FIRST, FIRST + 5, FIRST + 10]
    assert times[0] == datetime(2010, 6, 15, 11, 29, 7, tzinfo=UTC)
    assert times[0].tzinfo is not UTC  # an instant: not re-read as the database's wall clock
    first = parsed.samples[0]
    assert (first.dated_by, first.peer_window_seconds, first.hadr_timeout_seconds) == (
        "PeerWindowEnd - PeerWindow",
        300,
        120,
    )
    (note,) = parsed.notes
    assert note.startswith("3 captures without '-- Date'") and "PeerWindowEnd minus PeerWindow" in note


def test_a_capture_with_its_date_keeps_it_and_says_nothing():
    parsed = db2pd.parse((FIXTURES / "db2pd_hadr_97_loop.txt").read_text().splitlines())
    assert all(sample.dated_by == "Date" for sample in parsed.samples) and parsed.notes == []


@pytest.mark.parametrize("how", ["lf", "crlf", "bom", "utf-16"])
def test_the_repeat_loop_imports_with_its_epoch_times_and_rates(session, tmp_path, how):
    """Through the import a user makes: three captures, the primary's LSN +10 MiB every 5 s: 2 MiB/s."""
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC", time_zone="Europe/Berlin")
    path = tmp_path / "hadr_salesdb.txt"
    path.write_bytes(encoded(REPEAT.read_text(), how))
    record = service.import_captures(
        session=session, environment=environment, path=path, filename="hadr_salesdb.txt", imported_by="alice"
    )
    assert record.captures == 3 and record.layouts == ["before 10.1"]
    assert any("PeerWindowEnd" in note for note in record.notes), record.notes  # the user is told how
    # epoch seconds are an instant: the environment's zone does not move them
    assert record.first_time.replace(tzinfo=UTC).timestamp() == FIRST
    assert record.last_time.replace(tzinfo=UTC).timestamp() == FIRST + 10
    monitoring = service.monitoring(session=session, environment=environment)
    assert [rate for *_, rate in monitoring.rates] == [2 * MIB, 2 * MIB]
    assert [view.largest_current_gap[0] for view in monitoring.pairs] == [MIB]


def refused(text: str) -> str:
    with pytest.raises(RedoInputError) as error:
        db2pd.parse(text.splitlines())
    return str(error.value)


def test_a_capture_out_of_peer_state_is_refused_naming_its_line():
    """The second capture left Peer state: its PeerWindowEnd is the last one kept, no capture time."""
    text = REPEAT.read_text()
    second = text.index("Primary Peer", text.index("Up 0 days 02:01:45"))
    text = text[:second] + "Primary RemoteCatchupPending" + text[second + len("Primary Peer") :]
    message = refused(text)
    line = text[: text.index("Up 0 days 02:01:45")].count("\n") + 1
    assert message.startswith(f"line {line}: the capture has no '-- Date ...' after its database line")
    assert "REMOTECATCHUPPENDING, not Peer" in message and "ConnectTime is when the connection status began" in message


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda t: t.replace(") 300\n", ") 0\n"), "PeerWindow 0 (HADR_PEER_WINDOW not set"),
        (lambda t: t.replace("(1276601647) 300", "(0) 300"), "PeerWindowEnd (0) not a time: never in Peer state"),
    ],
)
def test_a_capture_without_a_peer_window_time_is_refused(change, said):
    message = refused(change(REPEAT.read_text()))
    assert message.startswith("line 2: the capture has no '-- Date ...'") and said in message


def test_the_seed_loop_without_its_dates_is_refused_not_dated_by_connect_time():
    """The 9.7 loop in ASYNC (no peer window) with its "-- Date" cut off: ConnectTime alone is when the
    connection began, so the captures cannot be placed in time."""
    text = "\n".join(
        line.split(" -- Date ")[0] for line in (FIXTURES / "db2pd_hadr_97_loop.txt").read_text().splitlines()
    )
    message = refused(text)
    assert message.startswith("line 4: ") and "no 'PeerWindowEnd PeerWindow' lines" in message


def test_an_epoch_past_the_year_9999_is_refused_naming_its_line():
    message = refused(REPEAT.read_text().replace("(1276601647)", "(999999999999)"))
    assert message.startswith("line 12, PeerWindowEnd: '(999999999999)'")


def test_the_import_refuses_an_undated_capture_naming_the_file(session, tmp_path):
    environment = make_environment(session, platform="hadr")
    path = tmp_path / "old.txt"
    path.write_text(REPEAT.read_text().replace(") 300\n", ") 0\n"))
    with pytest.raises(FieldError) as error:
        service.import_captures(
            session=session, environment=environment, path=path, filename="old.txt", imported_by="alice"
        )
    assert error.value.message.startswith("old.txt: line 2: the capture has no '-- Date ...'")
