"""A Db2 standby's replay from db2pd captures (issue 56, item 3): the rate replay sustains while log waits
for it, the largest receive-replay gap a takeover replays first, and both on the Replay card."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from redolab.hadr import service
from redolab.planning.plan import FAIL, build_plan
from redolab.planning.service import environment_facts
from tests.factories import make_environment
from tests.hadr.db2pd_writer import Side, render
from tests.planning.test_plan import MIB, facts, history, run

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def standby(at_s: int, received_mib: int, replayed_mib: int, **fields) -> list[Side]:
    received, replayed = 40_000 * MIB + received_mib * MIB, 40_000 * MIB + replayed_mib * MIB
    side = Side("STANDBY", T0 + timedelta(seconds=at_s), primary_pos=received, standby_pos=received,
                replay_pos=replayed, recv_replay_gap=received - replayed, spool_limit=-1, **fields)  # fmt: skip
    return [side]


def import_file(session, tmp_path, environment, captures):
    path = tmp_path / "standby_hadr.txt"
    path.write_text(render(captures))
    return service.import_captures(
        session=session, environment=environment, path=path, filename=path.name, imported_by="alice"
    )


def test_replay_rate_where_log_waited_and_the_takeover_gap(session, tmp_path):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC")
    # received 100 MiB every 10 s; replay 40 MiB per 10 s while behind, then nothing waits
    captures = [standby(0, 0, 0), standby(10, 100, 40), standby(20, 200, 80), standby(30, 300, 300)]
    record = import_file(session, tmp_path, environment, captures)
    assert record.captures == 4
    from redolab.planning.host_facts import hadr_replay

    replay = hadr_replay(session=session, environment=environment)
    assert replay.busy_rate_bytes_per_second == pytest.approx(4 * MIB)  # 10 -> 20 s: waited at both ends
    assert replay.seen_rate_bytes_per_second == pytest.approx(22 * MIB)  # 20 -> 30 s caught up: a lower bound
    assert replay.largest_gap_bytes == 120 * MIB and replay.spool_limit_pages == -1
    from redolab.planning.service import _plan_facts

    planned = _plan_facts(session, environment, None)
    assert planned.apply_rate_bytes_per_second == pytest.approx(4 * MIB)
    assert planned.apply_rate_source.startswith("db2pd captures while replay had log waiting")
    assert planned.takeover_gap[0] == 120 * MIB
    # an entered rate wins over the captures'
    environment.apply_rate_bytes_per_second = 50 * MIB
    session.commit()
    assert _plan_facts(session, environment, None).apply_rate_bytes_per_second == 50 * MIB
    assert environment_facts(environment).apply_rate_source == "entered on the environment"


def test_replay_never_behind_gives_no_rate():
    from redolab.hadr.db2pd import parse
    from redolab.hadr.replay import replay_of

    parsed = parse(render([standby(0, 0, 0), standby(10, 100, 100)]).splitlines())
    found = replay_of([(sample.at, sample) for sample in parsed.samples])
    assert found.busy_rate_bytes_per_second is None and found.seen_rate_bytes_per_second == pytest.approx(10 * MIB)


def test_the_replay_card_judges_the_takeover_against_the_rto_goal():
    hadr = dict(platform="hadr", transport_mode="NEARSYNC", apply_rate_bytes_per_second=200 * MIB)
    plan = build_plan(facts=facts(**hadr, takeover_gap=(12_000 * MIB, "2026-11-20 09:10 UTC"), rto_goal_seconds=30),
                      requirement=history(), runs=[run(1, rate_mib=100)])  # fmt: skip
    card = plan.card("apply")
    rows = dict(card.rows)
    assert card.title == "Replay (standby)" and rows["A takeover then replays"] == "60 s"  # 12,000 MiB at 200 MiB/s
    assert rows["Largest captured receive-replay gap"].startswith("11.72 GiB at 2026-11-20 09:10 UTC")
    assert card.status == FAIL  # replay keeps up with the 50 MiB/s peak, but the takeover is over 30 s
