"""The Pre-flight card of an environment: the latest Oracle collection's configuration judged
(preflight.checks), then every pasted Broker VALIDATE output's rows, each with where and when it was
read; and the pasted outputs themselves (stored all or nothing, at most MAX_EVIDENCE per environment)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redolab.collect.models import Collection, CollectionStatus
from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.core.units import wall_clock
from redolab.environments.models import DestinationKind, Environment
from redolab.preflight.checks import Basis, Check, judge, not_collected, worst
from redolab.preflight.errors import EvidenceError
from redolab.preflight.models import Evidence
from redolab.preflight.recovery import parse_recovery_progress
from redolab.preflight.validate import parse_validate
from redolab.runs.service import measured_runs

MAX_EVIDENCE = 50  # pasted outputs kept per environment: delete one to paste another
MAX_TEXT_CHARACTERS = 256 * 1024  # a VALIDATE output is a few KiB; V$RECOVERY_PROGRESS less
KINDS = ("broker", "recovery_progress")
TITLES = {
    "validate_database": "VALIDATE DATABASE",
    "validate_database_strict": "VALIDATE DATABASE ... STRICT",
    "validate_database_spfile": "VALIDATE DATABASE ... SPFILE",
    "validate_network": "VALIDATE NETWORK CONFIGURATION",
    "validate_connect_identifier": "VALIDATE DGConnectIdentifier",
    "validate_static_connect": "VALIDATE STATIC CONNECT IDENTIFIER",
    "recovery_progress": "V$RECOVERY_PROGRESS",
}


@dataclass(frozen=True)
class Preflight:
    checks: tuple[Check, ...]
    collected: str | None  # the collection the configuration rows come from (None: none yet)
    evidence: tuple[Evidence, ...]

    @property
    def status(self) -> str:
        return worst(self.checks)

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "collected": self.collected,
            "checks": [c.to_json() for c in self.checks],
            "evidence": [evidence_json(e) for e in self.evidence],
        }


def evidence_json(evidence: Evidence) -> dict:
    return {
        "id": evidence.id,
        "kind": evidence.kind,
        "title": TITLES.get(evidence.kind, evidence.kind),
        "member": evidence.member,
        "label": evidence.label,
        "pasted_by": evidence.pasted_by,
        "pasted_at": evidence.created_at.isoformat() if evidence.created_at else None,
        "rows": evidence.rows,
        "figures": evidence.figures,
    }


def latest_oracle_collection(session: Session, environment: Environment) -> Collection | None:
    return session.scalars(
        select(Collection)
        .where(
            Collection.environment_id == environment.id,
            Collection.database_kind == "oracle",
            Collection.status == CollectionStatus.succeeded,
        )
        .order_by(Collection.id.desc())
        .limit(1)
    ).first()


def list_evidence(session: Session, environment: Environment) -> list[Evidence]:
    return list(
        session.scalars(select(Evidence).where(Evidence.environment_id == environment.id).order_by(Evidence.id.desc()))
    )


def basis_of(environment: Environment, gap_shipping=None) -> Basis:
    destinations = environment.destinations
    return Basis(
        transport_mode=environment.transport_mode.value,
        protection_mode=environment.protection_mode.value if environment.protection_mode else None,
        compression_licensed=environment.advanced_compression_licensed,
        far_sync=any(d.kind is DestinationKind.far_sync for d in destinations),
        standby_destinations=max(1, sum(1 for d in destinations if d.feeds_from_id is None)),
        gap_shipping=gap_shipping,
    )


def gap_shipping(runs) -> tuple[int, float, int, int] | None:
    """(connections, gain %, single run, multi run): the best ASYNC run over the link with more than one
    connection against the best with one (runs.measured.MeasuredRun), when both exist."""
    over = [r for r in runs if r.mode == "async" and not r.loopback and r.bytes_per_second > 0]
    single = max((r for r in over if r.conns == 1), key=lambda r: r.bytes_per_second, default=None)
    multi = max((r for r in over if r.conns > 1), key=lambda r: r.bytes_per_second, default=None)
    if single is None or multi is None:
        return None
    return multi.conns, (multi.bytes_per_second / single.bytes_per_second - 1) * 100, single.id, multi.id


def preflight(session: Session, environment: Environment) -> Preflight:
    """The card: the configuration rows from the latest Oracle collection (UNKNOWN rows saying what would
    tell without one), then the pasted outputs' rows, newest first."""
    zone = environment.time_zone or "UTC"
    collection = latest_oracle_collection(session, environment)
    if collection is None or not collection.facts:
        label, checks = None, not_collected("no collection yet")
    else:
        at = collection.finished_at or collection.started_at or collection.created_at
        label = f"collection #{collection.id}, {wall_clock(at, zone):%Y-%m-%d %H:%M} {zone}"
        runs = measured_runs(session=session, environment=environment)
        checks = judge(collection.facts, basis_of(environment, gap_shipping(runs)), label)
    evidence = list_evidence(session, environment)
    for item in evidence:
        when = f"{wall_clock(item.created_at, zone):%Y-%m-%d %H:%M} {zone}"
        said = f"{item.label}: {TITLES.get(item.kind, item.kind)}, pasted {when} by {item.pasted_by}"
        checks += [
            Check(
                row["member"],
                row["check"].replace("_", " "),
                row["status"],
                row["detail"],
                f"{said}, line {row['line']}",
            )
            for row in item.rows
        ]
    return Preflight(tuple(checks), label, tuple(evidence))


def add_evidence(
    session: Session, environment: Environment, *, kind: str, label: str, text: str, user: str
) -> Evidence:
    """Parse and keep one pasted output; a malformed one is a 422 naming the label and the line, and
    nothing is stored."""
    count = session.scalar(select(func.count(Evidence.id)).where(Evidence.environment_id == environment.id))
    if count >= MAX_EVIDENCE:
        raise FieldError(
            "text", f"{environment.name} keeps {MAX_EVIDENCE} pasted outputs: delete an older one first.", 409
        )
    try:
        if kind == "recovery_progress":
            progress = parse_recovery_progress(text, source=label)
            member, rows, figures = "", [], _figures(progress)
            if not any(figures.get(key) for key in ("active_apply_bytes_per_second", "average_apply_bytes_per_second")):
                raise EvidenceError(label, 0, "an 'Active Apply Rate' or 'Average Apply Rate' row (KB/sec)")
        else:
            found = parse_validate(text, source=label)
            kind, member, figures = found.kind, found.member, {}
            rows = [
                dict(check=r.check, member=r.member, status=r.status, detail=r.detail, line=r.line) for r in found.rows
            ]
    except EvidenceError as error:
        raise FieldError("text", str(error), 422) from None
    evidence = Evidence(
        environment_id=environment.id, kind=kind, member=member[:200], label=label, text=text, rows=rows,
        figures=figures, pasted_by=user,
    )  # fmt: skip
    session.add(evidence)
    session.commit()
    return evidence


def _figures(progress) -> dict:
    names = ("active_apply_bytes_per_second", "average_apply_bytes_per_second", "maximum_apply_bytes_per_second",
             "redo_applied_bytes", "apply_lag_seconds")  # fmt: skip
    found = {}
    for name in names:
        figure = getattr(progress, name, None)
        if figure is not None:
            found[name] = figure.value
            found[f"{name}_line"] = figure.line
    return found


def get_evidence(session: Session, evidence_id: int, environment: Environment) -> Evidence:
    return get_or_404(session, Evidence, evidence_id, what="Pasted output", environment=environment)


def delete_evidence(session: Session, evidence: Evidence) -> None:
    session.delete(evidence)
    session.commit()


def pasted_apply_rate(session: Session, environment: Environment) -> tuple[float, str] | None:
    """The newest pasted V$RECOVERY_PROGRESS's apply rate (active, else average) and where it is from."""
    zone = environment.time_zone or "UTC"
    for item in list_evidence(session, environment):
        if item.kind != "recovery_progress":
            continue
        for name, said in (("active_apply_bytes_per_second", "Active"), ("average_apply_bytes_per_second", "Average")):
            rate = (item.figures or {}).get(name)
            if rate:
                when = f"{wall_clock(item.created_at, zone):%Y-%m-%d %H:%M} {zone}"
                return rate, f"{said} Apply Rate, pasted V$RECOVERY_PROGRESS '{item.label}', {when}"
    return None
