"""Db2 HADR with several standbys: the hadrCalculator per hop (the principal and each auxiliary).

Every standby receives its own copy of the log from the primary, over its own link, so each hop gets
its own calculator: the network from the one-stream runs measured on that hop (runs.service's
`hop`), else its nominal link (bandwidth, RTT); the standby disk from a disk test on one of the
destination's hosts, else the principal's (said so); the primary's disk and the log history are the
environment's. The principal's hop is judged in its HADR_SYNCMODE, an auxiliary's in SUPERASYNC, its
only mode: there the primary never waits, and a hop that cannot carry the log leaves the standby
behind. With runs measured on it, the principal's hop reads exactly as `service.environment_calculator`.
Units: bytes, seconds, bytes per second.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from redolab.disktest.service import host_disk
from redolab.environments.models import Destination, Environment, HadrRole, Platform
from redolab.hadr.calculator import PAGE_BYTES, Calculator, CalculatorRow, calculate
from redolab.hadr.network import NOMINAL, measured_network, nominal_network
from redolab.hadr.service import (
    NEEDS_DISK,
    NEEDS_HISTORY,
    CalculatorInputs,
    calculator_inputs,
    calculator_json,
    environment_calculator,
)
from redolab.redo.service import environment_intervals
from redolab.runs.service import measured_runs

# SUPERASYNC never slows the primary: above its limit the standby falls behind (the calculator's marks)
BEHIND = {"": "keeps up", "?": "falls behind", "??": "falls far behind", "???": "cannot catch up"}
AUXILIARY_MODE = "SUPERASYNC"  # an auxiliary's only mode (destination_rules)
AUXILIARY_WHY = "an auxiliary standby always receives in SUPERASYNC mode, whatever the principal's HADR_SYNCMODE"


@dataclass(frozen=True)
class HopRow:
    """One interval of the history against the hop's own sync mode."""

    row: CalculatorRow
    limit_bytes_per_second: float
    words: str
    marks: str

    @property
    def flush_pages(self) -> float:
        return self.row.flush_bytes / PAGE_BYTES


@dataclass
class HopCalculator:
    destination_id: int
    name: str
    role: str  # principal | auxiliary
    sync_mode: str  # the principal's HADR_SYNCMODE; SUPERASYNC for an auxiliary
    network_source: str  # "measured run #N", NOMINAL, or "" (no network yet)
    inputs: CalculatorInputs
    calculator: Calculator | None
    rows: list[HopRow]  # every interval against sync_mode's limit, in time
    exceeded: int = 0  # intervals above sync_mode's limit
    peak: HopRow | None = None  # the interval furthest above (or nearest) its limit

    @property
    def title(self) -> str:
        return f"{self.name} ({self.role}, {self.sync_mode})"

    @property
    def network_kind(self) -> str | None:
        """Where the network came from: "measured run", "nominal link", or None (no network yet)."""
        if not self.network_source:
            return None
        return "nominal link" if self.network_source == NOMINAL else "measured run"

    @property
    def keeps_up(self) -> bool | None:
        return None if self.calculator is None else self.exceeded == 0

    @property
    def verdict(self) -> str:
        """The hop in words: whether its sync mode kept up with every interval, and what happens if not."""
        if self.calculator is None:
            return f"{self.name} cannot be computed yet"
        intervals = f"{self.exceeded:,} of {len(self.rows):,} intervals"
        if self.sync_mode == AUXILIARY_MODE:
            if self.keeps_up:
                return (
                    f"{self.name} keeps up: in SUPERASYNC it receives every interval of the log history as fast as "
                    "the primary writes it"
                )
            return (
                f"{self.name} cannot keep up: in SUPERASYNC the standby falls behind in {intervals} (its link "
                "or its log disk carries less than the primary writes), and its log gap grows until the rate "
                "drops"
            )
        if self.keeps_up:
            return f"{self.name} keeps up: {self.sync_mode} sustains every interval of the log history"
        return f"{self.name} does not keep up: {self.sync_mode} would have slowed the primary in {intervals}"


def hop_calculators(*, session: Session, environment: Environment) -> list[HopCalculator]:
    """One calculator per destination of a Db2 HADR environment, by position (the principal first);
    none for Data Guard."""
    if environment.platform is not Platform.hadr:
        return []
    principal = calculator_inputs(session=session, environment=environment)
    intervals = environment_intervals(session=session, environment=environment)
    hops = []
    for destination in environment.destinations:
        inputs, source = hop_inputs(
            session=session, environment=environment, destination=destination, principal=principal
        )
        hops.append(hop_calculator(destination=destination, inputs=inputs, source=source, intervals=intervals))
    return hops


def hop_inputs(
    *, session: Session, environment: Environment, destination: Destination, principal: CalculatorInputs
) -> tuple[CalculatorInputs, str]:
    """(the calculator's inputs for the hop into `destination`, where its network came from)."""
    runs = [
        run for run in measured_runs(session=session, environment=environment, hop=destination.id) if run.conns == 1
    ]
    network, basis, needs, run_id = measured_network(
        runs, link_rtt_seconds=destination.link_rtt_seconds, rtt_owner=f"the destination '{destination.name}'"
    )
    source = f"measured run #{run_id}" if network is not None else ""
    if network is None and not runs:
        network, basis, needs = nominal_network(destination)
        source = NOMINAL if network is not None else ""
    missing = [needs] if needs else []
    first = environment.first_destination is not None and environment.first_destination.id == destination.id
    if first:  # the principal's own disks, exactly as calculator_inputs finds them
        disks = (principal.primary, principal.primary_basis, principal.standby, principal.standby_basis)
    else:
        disks = _hop_disks(destination, principal)
    primary, primary_basis, standby, standby_basis = disks
    if standby is None:
        own = f"a log disk: run a disk test on a host of '{destination.name}' or of the principal standby"
        missing.append(NEEDS_DISK if first else own)
    inputs = CalculatorInputs(network, basis, primary, primary_basis, standby, standby_basis, missing, run_id)
    return inputs, source


def _hop_disks(destination: Destination, principal: CalculatorInputs) -> tuple:
    """(primary disk, basis, standby disk, basis) for a destination after the first: the latest disk test
    on one of its hosts, else the principal standby's (said so)."""
    hosts = [host for host in destination.environment.standby_hosts(destination) if host_disk(host) is not None]
    if hosts:
        host = max(hosts, key=lambda h: h.disk_measured_at.timestamp() if h.disk_measured_at else 0.0)
        standby, standby_basis = host_disk(host), f"disk test on {host.name} in {host.disk_path}"
    elif principal.standby is not None:
        standby = principal.standby
        standby_basis = f"{principal.standby_basis} (the principal standby's: no disk test on a host of "
        standby_basis += f"'{destination.name}')"
    else:
        return principal.primary, principal.primary_basis, None, ""
    if principal.primary is not None:
        return principal.primary, principal.primary_basis, standby, standby_basis
    taken = f"{standby_basis} (the primary's disk taken as this standby's, as hadrCalculator does)"
    return standby, taken, standby, standby_basis


def hop_calculator(*, destination: Destination, inputs: CalculatorInputs, source: str, intervals) -> HopCalculator:
    """The hop's calculator from its inputs, every interval judged against the hop's own sync mode."""
    auxiliary = destination.hadr_role is HadrRole.auxiliary
    mode = AUXILIARY_MODE if auxiliary else destination.transport.value
    role = (destination.hadr_role or HadrRole.principal).value
    if not intervals:
        inputs.missing.insert(0, NEEDS_HISTORY)
    hop = HopCalculator(destination.id, destination.name, role, mode, source, inputs, None, [])
    if inputs.missing:
        return hop
    hop.calculator = calculate(intervals, network=inputs.network, primary=inputs.primary, standby=inputs.standby)
    hop.rows = [_hop_row(row, mode) for row in hop.calculator.rows]
    hop.exceeded = sum(1 for row in hop.rows if row.row.rate_bytes_per_second > row.limit_bytes_per_second)
    hop.peak = max(hop.rows, key=lambda row: row.row.rate_bytes_per_second / row.limit_bytes_per_second, default=None)
    return hop


def _hop_row(row: CalculatorRow, mode: str) -> HopRow:
    words, marks = row.levels[mode]
    if mode == AUXILIARY_MODE:
        words = BEHIND[marks]
    return HopRow(row, row.limits[mode], words, marks)


def hop_json(hop: HopCalculator) -> dict:
    """One hop's calculator as the API sends it: calculator_json's fields with the hop's name, role, sync
    mode, network source and verdict; each interval with its level in the hop's own mode."""
    body = calculator_json(hop.calculator, hop.inputs)
    body = {
        "destination_id": hop.destination_id,
        "name": hop.name,
        "role": hop.role,
        "sync_mode": hop.sync_mode,
        "network_source": {
            "kind": hop.network_kind,
            "run_id": hop.inputs.network_run_id,
            "basis": hop.inputs.network_basis,
        },
        **body,
    }
    if hop.calculator is None:
        return body
    if hop.role == HadrRole.auxiliary.value:
        body["hadr_syncmode"] = {"value": AUXILIARY_MODE, "why": AUXILIARY_WHY}
    body.update(keeps_up=hop.keeps_up, intervals_above_sync_mode_limit=hop.exceeded, verdict=hop.verdict)
    for interval, row in zip(body["intervals"], hop.rows, strict=True):
        interval["sync_mode_level"] = {
            "limit_bytes_per_second": row.limit_bytes_per_second,
            "words": row.words,
            "marks": row.marks,
        }
    return body


def nearest_limit(hop: HopCalculator, count: int) -> list[HopRow]:
    """The `count` intervals nearest (or furthest beyond) the hop's own limit, in time (for a page's table)."""
    worst = sorted(hop.rows, key=lambda r: r.row.rate_bytes_per_second / r.limit_bytes_per_second, reverse=True)
    return sorted(worst[:count], key=lambda r: (r.row.start or datetime.min, r.row.member))


def environment_calculators(*, session: Session, environment: Environment) -> tuple[dict, list[HopCalculator]]:
    """The calculator as the API and `redolab plan hadr --json` send it, `destinations` holding each hop's
    (the principal in its sync mode, each auxiliary in SUPERASYNC); and the hops themselves."""
    calculator, inputs = environment_calculator(session=session, environment=environment)
    hops = hop_calculators(session=session, environment=environment)
    return {**calculator_json(calculator, inputs), "destinations": [hop_json(hop) for hop in hops]}, hops
