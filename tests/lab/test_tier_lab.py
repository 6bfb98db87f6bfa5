"""Rehearse at the tier through the lab (issue 55, item 6): a history holding a 10 s burst at 1.75
times the 200 Mbit/s tier's redo payload, an RPO goal of 10 s. The what-if says the 200 Mbit/s tier is
the least that holds it (7.5 s worst lag) and the 100 Mbit/s tier below breaks it (25 s). The minute
from just before the burst is replayed (a period window, the shortest a rehearsal takes), so the two
rehearsals take about two minutes.
Rehearsed over the lab's SSH hosts and its 20 ms delay line, each connection paced at the tier's IP rate
(SO_MAX_PACING_RATE): the tier holds the RPO with its measured worst lag within 10 % of the model's, the
tier below breaks it.

Runs with the CPU first (tests/conftest.py MEASURING): it measures lag to a tenth through a userspace
delay line, which a parallel loopback run distorts."""

from __future__ import annotations

from redolab.core.db import make_sessionmaker
from redolab.environments import tiers as tier_service
from redolab.environments.models import Environment
from redolab.environments.schemas_tiers import LinkTierCreate
from redolab.planning.rehearse_tiers import rehearse_at_tier
from redolab.planning.service import Selection, environment_plan, environment_rpo_sizing
from redolab.redo import imports
from redolab.rehearsals.models import Rehearsal
from redolab.rehearsals.service import RehearsalRequest
from redolab.runs.models import RunStatus
from tests.execution import execute_next
from tests.lab.test_lab import lab, needs_root  # noqa: F401  (the module's lab, made for this file)
from tests.services import leftover_probes

MBIT = 10**6
MIB = 1024 * 1024
RPO = 10.0
BURST_MIB = 196.5  # a 5-second log: 41.2 MB/s, 1.75 x the 200 Mbit/s tier's 23.5 MB/s of redo
WINDOW = "2025-03-04 12:00:55..2025-03-04 12:01:55"  # the burst (1:00 to 1:10) and its drain: the least, 60 s


def history_csv() -> str:
    """V$ARCHIVED_LOG rows of 5-second logs for 3 minutes: 1 MiB/s, and two logs of BURST_MIB at 1:00."""
    lines = ["THREAD#,SEQUENCE#,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE"]
    for n in range(36):
        start, end = n * 5, n * 5 + 5
        size = BURST_MIB if n in (12, 13) else 5
        lines.append(f"1,{100 + n},2025-03-04 12:{start // 60:02d}:{start % 60:02d},"
                     f"2025-03-04 12:{end // 60:02d}:{end % 60:02d},{round(size * 2048)},512")  # fmt: skip
    return "\n".join(lines) + "\n"


def test_the_tier_holds_the_rpo_as_predicted_and_the_tier_below_breaks_it(lab, tmp_path):  # noqa: F811
    engine, environment_id, _ = lab
    path = tmp_path / "arch.csv"
    path.write_text(history_csv())
    with make_sessionmaker(engine)() as session:
        environment = session.get(Environment, environment_id)
        environment.rpo_goal_seconds = RPO
        session.commit()
        for name, rate in (("Copper", "100 Mbit/s"), ("Bronze", "200 Mbit/s"), ("Silver", "400 Mbit/s")):
            tier_in = LinkTierCreate(name=name, bits_per_second=rate)
            tier_service.create_tier(session=session, environment=environment, tier_in=tier_in)
        imports.import_now(session=session, environment=environment, path=path, filename="arch.csv", imported_by="a")
        session.refresh(environment)

        sizing, why = environment_rpo_sizing(session=session, environment=environment)
        assert sizing is not None, why
        solved = next(t for t in sizing.tiers if t.at.worst_lag_seconds <= RPO)
        assert (solved.name, round(solved.at.worst_lag_seconds, 1)) == ("Bronze", 7.5)
        assert sizing.tiers[0].name == "Copper" and sizing.tiers[0].at.worst_lag_seconds > RPO

        made = rehearse_at_tier(
            session=session,
            environment=environment,
            tier=solved.name,
            request=RehearsalRequest(window=WINDOW),
            requested_by="alice",
        )
        assert [(r.cap_label, r.cap_bits_per_second) for r in made] == [("Copper", 100 * MBIT), ("Bronze", 200 * MBIT)]
        ids = [r.id for r in made]
        for _ in ids:  # the tier below, then the tier waiting behind it on the same hosts
            assert execute_next(engine, "lab-tests")
        session.expire_all()
        done = [session.get(Rehearsal, i) for i in ids]
        for rehearsal in done:
            assert [run.status for run in rehearsal.runs] == [RunStatus.succeeded], rehearsal.runs[0].failure_reason
            assert rehearsal.result is not None and rehearsal.result["drained"] is True
        assert leftover_probes() == []

        plan = environment_plan(session=session, environment=environment, selection=Selection.parse(
            chosen=False, imports=(), runs=(), rehearsals=ids))  # fmt: skip
        card = plan.card("rehearsal")
        tiers = {t["cap_label"]: t for t in card.values["tiers"]}
    below, tier = tiers["Copper"], tiers["Bronze"]
    print(
        f"Bronze 200 Mbit/s: measured {tier['measured_worst_lag_seconds']:.2f} s, predicted "
        f"{tier['predicted_worst_lag_seconds']:.2f} s; Copper 100 Mbit/s: measured "
        f"{below['measured_worst_lag_seconds']:.2f} s, predicted {below['predicted_worst_lag_seconds']:.2f} s"
    )
    assert tier["rpo_held"] is True and tier["rpo_held_predicted"] is True
    # the model is a lower bound (each piece's redo spread evenly; no CPU wait): a busy machine only adds lag
    # (8.40 and 8.64 s against 7.51 s predicted in full suites on 2 cores), so the bound is one-sided
    assert tier["measured_worst_lag_seconds"] >= 0.9 * tier["predicted_worst_lag_seconds"]
    assert below["rpo_held"] is False and below["rpo_held_predicted"] is False
    assert dict(card.rows)[f"At the Bronze (200 Mbit/s) tier (rehearsal #{ids[1]})"].endswith("the 10 s RPO held")
