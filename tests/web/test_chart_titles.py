"""The title blocks the pages give their charts (web/titles.py): what, environment, hosts, period and
settings, read from the stored rows (here their plain stand-ins: the builders read attributes only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from redolab.core.units import MIB
from redolab.web.titles import history_title, run_title, sweep_title, watch_title

AT = datetime(2026, 3, 3, 9, 15, 2, tzinfo=UTC)
ENVIRONMENT = SimpleNamespace(name="ERP prod", time_zone="Europe/Berlin")


def _run(**fields):
    values = {
        "id": 12, "label": "after the MTU change", "started_at": AT, "finished_at": AT + timedelta(seconds=12),
        "seconds": 12.0, "status": SimpleNamespace(value="succeeded"), "created_at": AT,
        "client_host_name": "p1", "server_host_name": "s1", "reverse": False,
        "mode": SimpleNamespace(value="async"), "conns": 4, "message_bytes": MIB, "sockbuf_bytes": None,
    }  # fmt: skip
    return SimpleNamespace(**{**values, **fields})


def test_a_run_title_names_the_run_its_path_period_and_settings():
    block = run_title(_run(), ENVIRONMENT, what="Throughput received", loopback=False)
    assert block.lines() == [
        "Throughput received, run #12 after the MTU change",
        "ERP prod · p1 → s1",
        "measured 2026-03-03 09:15:02–09:15:14 UTC (12 s)",
        "ASYNC · 4 connections · 1 MiB messages · buffer autotuned",
    ]
    reverse = run_title(_run(reverse=True), ENVIRONMENT, what="x", loopback=True)
    assert reverse.lines()[1:3] == ["ERP prod · s1 → p1", "This machine (loopback): the probe, not the link"]
    queued = run_title(
        _run(started_at=None, status=SimpleNamespace(value="queued")), ENVIRONMENT, what="x", loopback=False
    )
    assert "not measured yet" in queued.lines()[2]


def test_sweep_watch_and_history_titles():
    runs = [_run(started_at=AT), _run(started_at=AT + timedelta(minutes=1), finished_at=AT + timedelta(minutes=2))]
    sweep = SimpleNamespace(
        id=3, label="ladder", kind=SimpleNamespace(label="Connection sweep"), runs=runs, repetitions=2,
        client_host_name="p1", server_host_name="s1",
        parameters={"mode": "async", "message_bytes": MIB, "duration_seconds": 3.0},
    )  # fmt: skip
    assert sweep_title(sweep, ENVIRONMENT, loopback=False).lines() == [
        "Connection sweep #3: ladder",
        "ERP prod · p1 → s1",
        "measured 2026-03-03 09:15:02–09:17:02 UTC",
        "ASYNC · 1 MiB messages · 3 s per run · 2 repetitions a point",
    ]
    watch = SimpleNamespace(name="DG link", path_label="p1 -> s1", every_seconds=900.0)
    checks = [SimpleNamespace(at=AT - timedelta(days=2)), SimpleNamespace(at=AT)]
    assert watch_title(watch, ENVIRONMENT, checks, loopback=False).lines() == [
        "Watch: DG link, measured against required",
        "ERP prod · p1 → s1",
        "checks 2026-03-01 09:15 – 2026-03-03 09:15 UTC",
        "every 15 min · last check 2026-03-03 09:15 UTC",
    ]
    imports = [SimpleNamespace(filename=f"awr{n}.csv", created_at=AT + timedelta(hours=n)) for n in range(3)]
    history = history_title("Redo rate over time", ENVIRONMENT, imports, AT, AT + timedelta(days=6))
    assert history.lines() == [
        "Redo rate over time",
        "ERP prod · redo history from awr0.csv, awr1.csv and 1 more",
        "2026-03-03 09:15 – 2026-03-09 09:15 Europe/Berlin",
        "imported 2026-03-03 11:15 UTC",
    ]


def test_the_plan_and_hadr_charts_carry_a_title_block_in_their_figure():
    """The plan's lag and SYNC CDF charts and the Db2 HADR charts are saved with their title block too."""
    import json

    from redolab.charts.hadr import calculator_figure
    from redolab.charts.plan import ack_cdf_figure, lag_figure
    from redolab.web.titles import plan_chart_title

    roles = (("p1", "primary"), ("p2", "primary"), ("p3", "primary"), ("s1", "standby"))
    hosts = [SimpleNamespace(name=name, role=SimpleNamespace(value=role)) for name, role in roles]
    environment = SimpleNamespace(name="ERP prod", time_zone="UTC", hosts=hosts)
    block = plan_chart_title("ASYNC transport lag", environment, first=AT, last=AT + timedelta(days=2))
    assert block.lines() == [
        "ASYNC transport lag",
        "ERP prod · p1, p2 and 1 more → s1",
        "2026-03-03 09:15 – 2026-03-05 09:15 UTC",
    ]
    lag = json.loads(lag_figure({1: [(AT, 0.0), (AT + timedelta(minutes=1), 2.5)]}, "UTC", None, block))
    assert (
        "ASYNC transport lag" in lag["layout"]["title"]["text"]
        and "p1, p2 and 1 more" in lag["layout"]["title"]["text"]
    )
    histogram = [{"from_us": 0, "to_us": 1000, "count": 3}, {"from_us": 1000, "to_us": 2000, "count": 1}]
    cdf = json.loads(
        ack_cdf_figure([("idle, run #1", histogram)], plan_chart_title("SYNC acknowledgements", environment))
    )
    assert "SYNC acknowledgements" in cdf["layout"]["title"]["text"]
    row = SimpleNamespace(start=AT, rate_bytes_per_second=MIB, limits={"SYNC": 2 * MIB, "NEARSYNC": 3 * MIB,
                          "ASYNC": 4 * MIB, "SUPERASYNC": 5 * MIB})  # fmt: skip
    calculator = SimpleNamespace(rows=[row])
    hadr = calculator_figure(calculator, "UTC", plan_chart_title("hadrCalculator", environment))
    assert hadr is not None and "hadrCalculator" in json.loads(hadr)["layout"]["title"]["text"]
