"""The Apply card's words (part of planning.writer): whether the standby applies what the link delivers,
the apply lag, the failover time against the RTO goal and FastStartFailoverLagLimit, written from
planning.apply's typed result. Transport and apply are judged apart: the link can keep up while apply
falls behind."""

from __future__ import annotations

from redolab.core.units import format_byte_rate, format_bytes, format_duration
from redolab.planning.apply import ApplySide, fsfo_lag_limit, lags
from redolab.planning.card import Card, settle
from redolab.planning.facts import Facts, Measurements
from redolab.planning.rpo_sizing import summed_pieces

Written = tuple[Card, list[str]]
DONE = {"apply": "applied", "replay": "replayed"}
NO_RATE = (
    "no apply rate: enter the standby's (V$RECOVERY_PROGRESS 'Active Apply Rate', KB/sec there) on the "
    "environment, or paste that view's output on the Pre-flight card"
)


def apply_side(facts: Facts, requirement, measured: Measurements) -> ApplySide | None:
    """The apply side from the environment's apply rate and the history (None: either is missing)."""
    rate = facts.apply_rate_bytes_per_second
    if not rate or requirement is None:
        return None
    link = measured.aggregate()
    pieces = summed_pieces(requirement)
    found = None
    if link is not None and pieces is not None:
        found = lags(pieces, link_bytes_per_second=link.bytes_per_second, apply_bytes_per_second=rate)
    return ApplySide(
        apply_bytes_per_second=rate,
        apply_source=facts.apply_rate_source,
        peak_bytes_per_second=requirement.summed_peak_bytes_per_second,
        required_bytes_per_second=requirement.summed_required_bytes_per_second,
        link_bytes_per_second=link.bytes_per_second if link else None,
        transport_lag_seconds=found.transport_seconds if found else None,
        apply_lag_seconds=found.apply_seconds if found else None,
        apply_backlog_seconds=found.apply_backlog_seconds if found else None,
        rto_goal_seconds=facts.rto_goal_seconds,
        rpo_goal_seconds=facts.rpo_goal_seconds,
    )


def apply_card(facts: Facts, result: ApplySide | None, *, transport_ok: bool | None, has_history: bool) -> Written:
    hadr = facts.platform == "hadr"
    card = Card("apply", "Replay (standby)" if hadr else "Apply (standby)", result=result)
    if result is None:
        card.missing.append(
            NO_RATE.replace("V$RECOVERY_PROGRESS 'Active Apply Rate', KB/sec there", "db2pd -hadr replay")
            if hadr
            else NO_RATE
        )
        if not has_history:
            card.missing.append("no redo history: import archived-log or AWR history")
        if facts.apply_rate_bytes_per_second:
            card.missing = card.missing[1:]  # the rate is known; the history is what is missing
            rate = format_byte_rate(facts.apply_rate_bytes_per_second)
            card.rows = [("Apply rate" if not hadr else "Replay rate", f"{rate} ({facts.apply_rate_source})")]
            card.values = {"apply_bytes_per_second": facts.apply_rate_bytes_per_second,
                           "apply_source": facts.apply_rate_source}  # fmt: skip
        settle(card, failed=False, judged=False)
        return card, []
    verb = "replay" if hadr else "apply"
    card.values = result.to_json()
    card.rows = _rows(facts, result, verb)
    card.working += _working(facts, result, verb)
    risks = []
    takeover = _takeover_seconds(facts, result)
    rto_short = result.rto_met is False or (
        takeover is not None and result.rto_goal_seconds is not None and takeover > result.rto_goal_seconds
    )
    if not result.keeps_up:
        head = {
            True: f"Transport keeps up; {verb} does not",
            False: f"Transport and {verb} both fall behind",
            None: f"{verb.capitalize()} falls behind",
        }[transport_ok]
        card.headline = (
            f"{head}: {format_byte_rate(result.apply_bytes_per_second)} {DONE[verb]} against a "
            f"{format_byte_rate(result.peak_bytes_per_second)} peak"
        )
        rate = format_byte_rate(result.apply_bytes_per_second)
        risks.append(f"The standby's {verb} ({rate}) is below the peak redo.")
    elif rto_short:
        card.headline = (
            f"A failover at the worst moment {verb}s {format_duration(result.apply_backlog_seconds)} of redo first, "
            f"over the {format_duration(result.rto_goal_seconds)} RTO goal"
        )
    else:
        card.headline = f"{verb.capitalize()} keeps up with the peak redo"
    if rto_short:
        risks.append("The failover time the apply backlog takes is over the RTO goal.")
    if result.rto_goal_seconds is None:
        card.missing.append("no RTO goal on the environment: the failover time is not judged")
    warned = result.keeps_up and not result.within_headroom
    if warned:
        card.working.append(f"{verb} keeps up with the peak but not with the plan's headroom above it")
    warned = warned or _fsfo_late(facts, result)
    settle(card, failed=not result.keeps_up or rto_short, judged=True, warned=warned)
    return card, risks


def _takeover_seconds(facts: Facts, result: ApplySide) -> float | None:
    """Db2: the largest receive-replay gap db2pd captured, replayed at the replay rate."""
    if facts.takeover_gap is None:
        return None
    return facts.takeover_gap[0] / result.apply_bytes_per_second


def _fsfo_late(facts: Facts, result: ApplySide) -> bool:
    limit = fsfo_lag_limit(facts.rpo_goal_seconds)
    used = facts.fast_start_failover and facts.transport_mode == "ASYNC"
    return bool(used and limit and (result.apply_lag_seconds or 0) > limit)


def _rows(facts: Facts, result: ApplySide, verb: str) -> list[tuple[str, str]]:
    def lag(seconds: float | None) -> str:
        return format_duration(seconds) if seconds is not None else "not known (no link rate)"

    rows = [
        (f"{verb.capitalize()} rate", f"{format_byte_rate(result.apply_bytes_per_second)} ({result.apply_source})"),
        ("Summed peak redo", format_byte_rate(result.peak_bytes_per_second)),
        ("Link delivers", format_byte_rate(result.link_bytes_per_second) if result.link_bytes_per_second else "–"),
        ("Worst transport lag", lag(result.transport_lag_seconds)),
        (f"Worst {verb} lag", lag(result.apply_lag_seconds)),
        (f"Failover {verb}s first", lag(result.apply_backlog_seconds)),
        ("RTO goal", format_duration(result.rto_goal_seconds) if result.rto_goal_seconds else "not set"),
    ]
    takeover = _takeover_seconds(facts, result)
    if takeover is not None:
        gap, when = facts.takeover_gap
        rows.append(("Largest captured receive-replay gap", f"{format_bytes(gap)} at {when}"))
        rows.append(("A takeover then replays", format_duration(takeover)))
    limit = fsfo_lag_limit(facts.rpo_goal_seconds)
    if facts.fast_start_failover and facts.platform != "hadr":
        shown = f"{limit} s (the RPO goal)" if limit else "set an RPO goal first"
        rows.append(("FastStartFailoverLagLimit", shown))
    return rows


def _working(facts: Facts, result: ApplySide, verb: str) -> list[str]:
    said = [
        f"every thread's redo is {DONE[verb]} by the standby: its rate is judged against the summed peak, "
        "transport against the link on the Transport card",
        f"{verb} lag: the summed history replayed through the link, then {verb} (a single queue at the smaller "
        f"rate), so it is never below the transport lag; a failover {verb}s what waits after the link first",
    ]
    if facts.platform == "hadr":
        said.append(
            "Db2 HADR: what waits for replay sits in the standby's receive buffer and spool "
            "(HADR_SPOOL_LIMIT); a takeover replays it before the standby opens: the largest receive-replay gap "
            "db2pd captured, at the replay rate, is judged against the RTO goal too"
        )
    elif facts.standby_nodes > 1:
        said.append(
            "a RAC standby with multi-instance redo apply (MIRA, 12.2 and later) applies on every instance: "
            "enter their summed rate"
        )
    limit = fsfo_lag_limit(facts.rpo_goal_seconds)
    if facts.fast_start_failover and limit:
        said.append(
            f"Fast-Start Failover: EDIT CONFIGURATION SET PROPERTY FastStartFailoverLagLimit = {limit}; the "
            "observer does not fail over to a standby that lags more (Maximum Performance), so the RPO goal "
            "lands there"
            + (
                f"; at the history's worst moment the lag is {format_duration(result.apply_lag_seconds)}"
                if result.apply_lag_seconds is not None
                else ""
            )
        )
    return said
