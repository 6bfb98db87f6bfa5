"""db2pd -hadr captures (both layouts), monitoring with the seed's diagnosis, the disk fit and the
hadrCalculator limits from seed 001's own numbers."""

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.disktest.fit import Disk, DiskPoint, fit_disk
from redolab.hadr import db2pd, service
from redolab.hadr.calculator import MODES, Network, calculate, level, mode_limit
from redolab.redo.parsers import RedoInputError
from redolab.redo.schemas import RedoInterval
from tests.factories import make_environment

FIXTURES = Path(__file__).parents[1] / "fixtures" / "db2"
MIB = 1024 * 1024
MB = 1e6  # simhadr's MBytes


def test_the_seeds_db2pd_output_before_10_1_parses():
    """The two captures seed 001 prints (primary and standby, indented as in the article)."""
    parsed = db2pd.parse((FIXTURES / "db2pd_hadr_seed001.txt").read_text().splitlines())
    primary, standby = parsed.samples
    assert (primary.role, primary.state, primary.sync_mode, primary.connect_status) == (
        "PRIMARY",
        "PEER",
        "ASYNC",
        "CONNECTED",
    )
    assert primary.primary_position == 0x0A329BF2 and primary.at.isoformat().startswith("2012-04-13T14:45:17.920125")
    assert (standby.role, standby.recv_buf_percent) == ("STANDBY", 0.0)


def test_seed_loop_file_monitoring_rates_and_diagnosis(session, tmp_path):
    environment = make_environment(session, platform="hadr", transport_mode="ASYNC")
    record = service.import_captures(
        session=session,
        environment=environment,
        path=FIXTURES / "db2pd_hadr_97_loop.txt",
        filename="kk_hadr",
        imported_by="alice",
    )
    assert record.captures == 6 and record.layouts == ["before 10.1"]
    monitoring = service.monitoring(session=session, environment=environment)
    # the primary's LSN: +10,485,760 bytes in 5 s, then +5,242,880 in 5 s
    assert [rate for *_, rate in monitoring.rates] == [2 * MIB, MIB]
    # LogGapRunAvg is Db2's running average (10 MiB at most); the positions give the gap at each capture
    assert monitoring.largest_running_average_gap_bytes == 10 * MIB
    assert [view.largest_current_gap[0] for view in monitoring.pairs] == [0x2EA00000 - 0x2E000000]  # 10 MiB
    assert len(monitoring.pairs) == 1 and monitoring.pairs[0].sides == {"PRIMARY", "STANDBY"}
    assert record.notes[0].startswith("1 HADR pair: RAKI: ")
    assert "(primary and standby sides, 6 captures)" in record.notes[0]
    flags = [(f.what, f.diagnosis) for f in monitoring.flags]
    assert flags[0] == ("congested", service.SLOW_REPLAY)  # the standby's buffer 1.5 s later: 100 %
    assert ("receive buffer 100 % full", service.SLOW_REPLAY) in flags
    assert ("congested", service.NETWORK) in flags  # 45 % at 20:56:41.5: room in the buffer
    assert len(flags) == 3


def test_10_1_layout_with_two_standbys(session):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC")
    service.import_captures(
        session=session,
        environment=environment,
        path=FIXTURES / "db2pd_hadr_101.txt",
        filename="pd.txt",
        imported_by="alice",
    )
    monitoring = service.monitoring(session=session, environment=environment)
    assert [rate for *_, rate in monitoring.rates] == [3 * MIB, 3 * MIB]  # one per standby, 30 MiB in 10 s
    assert {s.sync_mode for _, s, _ in monitoring.samples} == {"NEARSYNC", "SUPERASYNC"}
    assert monitoring.receive_buffer_pages == 2048
    # HADR_LOG_GAP 132,242,668 is the running average; the positions differ by 3,685,322,855 - 3,553,080,187
    assert monitoring.largest_running_average_gap_bytes == 132_242_668
    assert monitoring.largest_current_gap_bytes == 3_685_322_855 - 3_553_080_187
    assert [view.label for view in monitoring.pairs] == [
        "HADRDB: db2inst@hostp.example.com member 0 → db2inst@hosts1.example.com member 0",
        "HADRDB: db2inst@hostp.example.com member 0 → db2inst@hosts2.example.com member 0",
    ]
    assert [(f.what, f.diagnosis) for f in monitoring.flags] == [("congested", service.SLOW_REPLAY)]  # its own 97 %


def test_a_bad_capture_imports_nothing_and_names_the_line(session, tmp_path):
    environment = make_environment(session, platform="hadr", transport_mode="ASYNC")
    bad = tmp_path / "pd.txt"
    text = (
        (FIXTURES / "db2pd_hadr_101.txt")
        .read_text()
        .replace("STANDBY_RECV_BUF_PERCENT = 97", "STANDBY_RECV_BUF_PERCENT = 970")
    )
    bad.write_text(text)
    from redolab.core.errors import FieldError

    with pytest.raises(FieldError, match=r"pd.txt: line \d+, STANDBY_RECV_BUF_PERCENT: '970' is not a percentage"):
        service.import_captures(session=session, environment=environment, path=bad, filename="pd.txt", imported_by="a")
    assert service.list_hadr_imports(session=session, environment=environment) == []
    with pytest.raises(RedoInputError, match="no db2pd -hadr capture"):
        db2pd.parse(["hello", "world"])


def test_the_seeds_disk_fit_reproduces_simhadr_disk():
    """Seed 001: 1-page writes take 0.001117 s; 4096-page writes run at 53.069551 MB/s."""
    fit = fit_disk([DiskPoint(4096, 0.001117), DiskPoint(4096 * 4096, 0.316136)])
    assert fit.simhadr.rate_bytes_per_second / MB == pytest.approx(53.069551, rel=0.02)
    assert fit.simhadr.overhead_seconds == pytest.approx(0.001117, rel=0.02)
    # the least-squares line through both: rate within 2 % (0.33 %); the overhead is the intercept
    assert fit.fitted.rate_bytes_per_second / MB == pytest.approx(53.069551, rel=0.02)
    assert fit.fitted.overhead_seconds == pytest.approx(0.001117 - 4096 / fit.fitted.rate_bytes_per_second, rel=1e-6)
    with pytest.raises(ValueError, match="at least two sizes"):
        fit_disk([DiskPoint(4096, 0.001)])


def test_per_mode_limits_from_the_seeds_numbers():
    """Seed 001: 2.02 MB/s over 27.704 ms, flushes of 32 pages, primary disk 53.069551 MB/s + 0.001117 s,
    standby 63.122727 MB/s + 0.024283 s. By hand:
    primary write 131072/53.069551e6 + 0.001117 = 0.0035868 s; send 131072/2.02e6 = 0.0648871 s;
    standby write 131072/63.122727e6 + 0.024283 = 0.0263595 s."""
    network = Network(2.02 * MB, 0.027704)
    primary, standby = Disk(53.069551 * MB, 0.001117), Disk(63.122727 * MB, 0.024283)
    flush = 32 * 4096
    limits = {mode: mode_limit(mode, flush, network, primary, standby) / MB for mode in MODES}
    assert limits["SYNC"] == pytest.approx(131072 / (0.0035868 + 0.0648871 + 0.0263595 + 0.027704) / MB, rel=1e-4)
    assert limits["NEARSYNC"] == pytest.approx(131072 / (0.0648871 + 0.027704) / MB, rel=1e-4)
    assert limits["ASYNC"] == pytest.approx(2.02, rel=1e-9)
    assert limits["SUPERASYNC"] == pytest.approx(2.02, rel=1e-9)
    # simhadr measured 2.158299 MB/s in ASYNC and 0.730557 MB/s in SYNC (with 58,672-byte socket buffers)
    assert limits["SYNC"] < limits["NEARSYNC"] < limits["ASYNC"]


def test_levels_and_advice():
    assert level(1.0, 1.0) == ("keeps up", "")
    assert level(1.4, 1.0) == ("slows the primary", "?")
    assert level(2.9, 1.0) == ("much slower", "??")
    assert level(3.1, 1.0) == ("far beyond", "???")
    network, disk = Network(100 * MB, 0.01), Disk(200 * MB, 0.001)
    from datetime import UTC, datetime, timedelta

    start = datetime(2026, 11, 20, tzinfo=UTC)
    intervals = [
        RedoInterval(
            line=1,
            thread=0,
            start=start,
            end=start + timedelta(seconds=60),
            seconds=None,
            bytes=rate * 60,
            kind="snapshot",
            writes=rate * 60 / 65536,
        )
        for rate in (1 * MB, 5 * MB)
    ]
    calculator = calculate(intervals, network=network, primary=disk, standby=disk)
    # 64 KiB flushes: SYNC 65536 / (0.0013277 + 0.00065536 + 0.0013277 + 0.01) = 4.93 MB/s: the 5 MB/s interval is above
    assert calculator.exceeded["SYNC"] == 1 and calculator.exceeded["NEARSYNC"] == 0
    assert calculator.advice()[0] == "NEARSYNC"


@settings(max_examples=200, deadline=None)
@given(
    flush=st.floats(512, 64 * MIB),
    rate=st.floats(1e4, 1e10),
    rtt=st.floats(0, 0.5),
    disk_rate=st.floats(1e6, 1e10),
    overhead=st.floats(0, 0.05),
    standby_rate=st.floats(1e6, 1e10),
    standby_overhead=st.floats(0, 0.05),
)
def test_stricter_modes_never_sustain_more(flush, rate, rtt, disk_rate, overhead, standby_rate, standby_overhead):
    """Property: SYNC <= NEARSYNC <= ASYNC for every input, so the advice can never name a stricter mode
    that keeps up while a looser one does not."""
    network, primary, standby = Network(rate, rtt), Disk(disk_rate, overhead), Disk(standby_rate, standby_overhead)
    limits = [mode_limit(mode, flush, network, primary, standby) for mode in ("SYNC", "NEARSYNC", "ASYNC")]
    assert all(math.isfinite(limit) and limit > 0 for limit in limits)
    assert limits[0] <= limits[1] * (1 + 1e-12) and limits[1] <= limits[2] * (1 + 1e-12)
