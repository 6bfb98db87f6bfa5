"""/metrics: the links against their requirement in the Prometheus text format (issue 37).

Read in a handful of aggregate queries whatever the number of runs (no loop over runs, no query per
environment), then written by prometheus_client from a registry made for the one scrape. Base units
only (bytes, seconds); every label value is bounded by the environments, their hosts and watches
(never a run id).

Per path, with labels `environment` (its name) and `path` ("sender -> receiver" host names in the
redo direction, or a watch's label such as "all node pairs"):

  redolab_path_throughput_bytes_per_second          the last measured ASYNC run (receiver's count)
  redolab_path_throughput_p5_24h_bytes_per_second   5th percentile of the ASYNC runs that ended in the last 24 h
  redolab_path_required_bytes_per_second            what the path must carry (see below)
  redolab_path_headroom_ratio                       last throughput / required - 1 (negative: falls behind)
  redolab_path_sync_ack_p99_seconds                 99th percentile acknowledgement of the last SYNC run
  redolab_path_last_run_age_seconds                 seconds since the last measured run ended (all node
                                                    pairs: since the watch's last judged check began)

Per watch (labels `environment`, `path`, `watch` = its name, `watch_id` = its id: two watches may share
a name and a path, never an id, so every watch's label set is its own):

  redolab_watch_state{state="unknown|ok|at_risk|failing"}   1 for the watch's state, 0 for the others
  redolab_watch_interval_seconds                             how often the watch checks its path
  redolab_watch_silenced                                     1 while silenced for maintenance

Per environment (label `environment`):

  redolab_environment_redo_peak_bytes_per_second      peak redo rate, all threads summed (stored analysis)
  redolab_environment_redo_required_bytes_per_second  that peak with the environment's headroom
  redolab_environment_last_import_age_seconds         seconds since the last redo history import

Measured runs are those the plan counts (succeeded, a throughput, not a rehearsal's paced replay;
imported results count at their own end time), between two hosts that still exist. A path watched
"all node pairs" at once is measured by its watch's checks (each the pairs' runs summed). The
requirement of a path is the one its watch judged the last check against (the environment's current
requirement or the watch's threshold); without a judged check, the one the watch would judge against
now (watches.judge.required_for: the busiest thread's peak with headroom for one pair, the summed one
for all node pairs), and for a path no watch measures, the busiest thread's from a primary to a
standby. The stored analysis is read as stored: a scrape never analyses imports.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector
from sqlalchemy import JSON, case, func, select, type_coerce
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session

from redolab.core.db import utcnow
from redolab.environments.models import Environment, Host, HostRole
from redolab.redo.models import ImportStatus, RedoImport, StoredAnalysis
from redolab.runs.models import ProbeMode, Run, RunStatus, RunSummary
from redolab.watches.judge import required_for
from redolab.watches.metrics_delivery import DeliveryCollector, DeliveryFigures, delivery_figures
from redolab.watches.models import CheckStatus, Watch, WatchCheck, WatchState

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # the text format Prometheus 2.x and 3.x both read
P5_WINDOW = timedelta(hours=24)
P5 = 0.05


@dataclass
class PathFigures:
    """One path's series; None where there is nothing to say (no run yet, no requirement)."""

    environment: str
    path: str
    throughput_bytes_per_second: float | None = None
    p5_24h_bytes_per_second: float | None = None
    required_bytes_per_second: float | None = None
    sync_ack_p99_seconds: float | None = None
    last_run_age_seconds: float | None = None
    required_at: datetime | None = field(default=None, repr=False)  # the judged check that set `required`

    @property
    def headroom_ratio(self) -> float | None:
        measured, required = self.throughput_bytes_per_second, self.required_bytes_per_second
        if measured is None or not required:
            return None
        return measured / required - 1


@dataclass(frozen=True)
class WatchFigures:
    environment: str
    path: str
    watch_id: int  # a label: the one thing two watches never share (their names may be alike)
    watch: str
    state: WatchState
    interval_seconds: float
    silenced: bool


@dataclass(frozen=True)
class EnvironmentFigures:
    environment: str
    redo_peak_bytes_per_second: float | None
    redo_required_bytes_per_second: float | None
    last_import_age_seconds: float | None


@dataclass(frozen=True)
class Snapshot:
    """Everything one scrape says, read before a line is written."""

    paths: tuple[PathFigures, ...]
    watches: tuple[WatchFigures, ...]
    environments: tuple[EnvironmentFigures, ...]


def percentile_cont(values: Sequence[float], fraction: float) -> float:
    """PostgreSQL's percentile_cont: linear between the two nearest ranks of the sorted values."""
    ordered = sorted(values)
    rank = fraction * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _p5_by(session: Session, keys: tuple, value, where: tuple) -> dict[tuple, float]:
    """The 5th percentile of `value` per `keys` over the rows `where` selects: in SQL on PostgreSQL,
    else from just those rows' values."""
    if session.get_bind().dialect.name == "postgresql":
        p5 = func.percentile_cont(P5).within_group(value)
        return {tuple(row[:-1]): row[-1] for row in session.execute(select(*keys, p5).where(*where).group_by(*keys))}
    values: dict[tuple, list[float]] = defaultdict(list)
    for *key, number in session.execute(select(*keys, value).where(*where)):
        values[tuple(key)].append(number)
    return {key: percentile_cont(numbers, P5) for key, numbers in values.items()}


def _age(now: datetime, moment: datetime | None) -> float | None:
    return max(0.0, (now - moment).total_seconds()) if moment is not None else None


@dataclass(frozen=True)
class _Host:
    environment_id: int
    name: str
    role: HostRole
    node_number: int


@dataclass(frozen=True)
class _Environment:
    name: str
    # from the stored analysis: (thread, its peak with headroom) and the summed peak with headroom
    threads: tuple[tuple[int, float], ...]
    summed_required: float | None

    def required(self, *, all_node_pairs: bool = False, threshold: float | None = None) -> float | None:
        """What a watch of this environment judges against now (bytes per second)."""
        found = required_for(
            thread_required=self.threads,
            summed_required=self.summed_required,
            all_node_pairs=all_node_pairs,
            threshold=threshold,
        )
        return found.bytes_per_second if found is not None else None


_FIGURES = ("peak_bytes_per_second", "required_bytes_per_second", "threads")


def _summary_figures(session: Session):
    """[peak, required, threads] of the stored summary as one JSON array: on SQLite one json_extract of the
    three paths parses the summary (some KiB per environment) once instead of three times."""
    summary = StoredAnalysis.summary
    if session.get_bind().dialect.name == "sqlite":
        return type_coerce(func.json_extract(summary, *(f"$.{key}" for key in _FIGURES)), JSON)
    return func.json_build_array(*(summary[key] for key in _FIGURES), type_=JSON)


def _environments(session: Session, now: datetime) -> tuple[dict[int, _Environment], list[EnvironmentFigures]]:
    """Every environment with its stored analysis's figures and its last import, in one query."""
    last_import = (
        select(RedoImport.environment_id, func.max(RedoImport.created_at).label("at"))
        .where(RedoImport.status == ImportStatus.ready)
        .group_by(RedoImport.environment_id)
        .subquery()
    )
    rows = session.execute(
        select(Environment.id, Environment.name, _summary_figures(session).label("figures"), last_import.c.at)
        .outerjoin(StoredAnalysis, StoredAnalysis.environment_id == Environment.id)
        .outerjoin(last_import, last_import.c.environment_id == Environment.id)
    ).all()
    known, figures = {}, []
    for row in rows:
        peak, required, threads = row.figures or (None, None, None)
        needs = tuple(
            (t["thread"], t["required_bytes_per_second"])
            for t in threads or ()
            if isinstance(t, dict) and t.get("required_bytes_per_second") is not None
        )
        known[row.id] = _Environment(row.name, needs, required)
        figures.append(EnvironmentFigures(row.name, peak, required, _age(now, row.at)))
    return known, figures


def _newest_per(session: Session, group: tuple, moment, columns: tuple, where: tuple):
    """A query of the newest row (by `moment`, as "moment") of each `group`, with `columns`, in one pass:
    DISTINCT ON on PostgreSQL; on SQLite the bare columns of max(), which SQLite documents to come from
    the row that holds the maximum (a window function sorted the 10,000 runs twice: 5 times slower)."""
    if session.get_bind().dialect.name == "postgresql":
        ordered = (*group, moment.desc(), *(c.desc() for c in columns[:1]))
        query = select(*group, *columns, moment.label("moment")).where(*where)
        return query.ext(distinct_on(*group)).order_by(*ordered)
    return select(*group, *columns, func.max(moment).label("moment")).where(*where).group_by(*group)


def _measured_runs(session: Session, now: datetime) -> tuple[list, dict[tuple, float]]:
    """Per path (environment, sending host, receiving host) and mode: the newest measured run (a SYNC
    one with its acknowledgement p99); per path the 5th percentile of the last 24 hours."""
    # the redo direction: a reverse run's server host sent
    sender = case((Run.reverse, Run.server_host_id), else_=Run.client_host_id).label("sender")
    receiver = case((Run.reverse, Run.client_host_id), else_=Run.server_host_id).label("receiver")
    ended = func.coalesce(Run.finished_at, Run.started_at, Run.created_at)
    measured = (  # as runs.service._measured, for every environment at once
        Run.status == RunStatus.succeeded,
        Run.bytes_per_second > 0,
        Run.rehearsal_id.is_(None),
        Run.client_host_id.is_not(None),
        Run.server_host_id.is_not(None),
    )
    path = (Run.environment_id, sender, receiver)
    newest = _newest_per(session, (*path, Run.mode), ended, (Run.id, Run.bytes_per_second), measured).subquery()
    latest = session.execute(
        select(newest, RunSummary.ack_p99_seconds).outerjoin(RunSummary, RunSummary.run_id == newest.c.id)
    ).all()
    p5 = _p5_by(session, path, Run.bytes_per_second, (*measured, Run.mode != ProbeMode.sync, ended >= now - P5_WINDOW))
    return latest, p5


def _watches(session: Session, now: datetime) -> tuple[list, dict[int, object], dict[tuple, float]]:
    """The active watches, each one's newest judged check, and the 5th percentile of the last 24 hours
    of the checks of those that watch all node pairs at once (the others' runs give theirs)."""
    watches = session.execute(
        select(
            Watch.id,
            Watch.environment_id,
            Watch.name,
            Watch.client_host_id,
            Watch.server_host_id,
            Watch.all_node_pairs,
            Watch.path_label,
            Watch.state,
            Watch.every_seconds,
            Watch.silenced_until,
            Watch.threshold_bytes_per_second,
        )
        .where(Watch.active)
        .order_by(Watch.id)
    ).all()
    judged = (WatchCheck.status == CheckStatus.judged, WatchCheck.measured_bytes_per_second.is_not(None))
    active = WatchCheck.watch_id.in_(select(Watch.id).where(Watch.active))
    newest = _newest_per(
        session,
        (WatchCheck.watch_id,),
        WatchCheck.at,
        (
            WatchCheck.id,
            WatchCheck.measured_bytes_per_second,
            WatchCheck.required_bytes_per_second,
            WatchCheck.sync_p99_seconds,
        ),
        (*judged, active),
    )
    checks = {row.watch_id: row for row in session.execute(newest)}
    every_pair = select(Watch.id).where(Watch.active, Watch.all_node_pairs)
    p5 = _p5_by(
        session,
        (WatchCheck.watch_id,),
        WatchCheck.measured_bytes_per_second,
        (*judged, WatchCheck.watch_id.in_(every_pair), WatchCheck.at >= now - P5_WINDOW),
    )
    return watches, checks, p5


class _Paths:
    """The paths of one scrape, filled from the runs and then the watches."""

    def __init__(self, environments: dict[int, _Environment], hosts: dict[int, _Host], now: datetime) -> None:
        self.environments, self.hosts, self.now = environments, hosts, now
        self.paths: dict[tuple[int, str], PathFigures] = {}

    def figures(self, environment_id: int, label: str) -> PathFigures:
        key = (environment_id, label)
        if key not in self.paths:
            self.paths[key] = PathFigures(self.environments[environment_id].name, label)
        return self.paths[key]

    def pair_label(self, sender_id: int | None, receiver_id: int | None) -> str | None:
        sender, receiver = self.hosts.get(sender_id), self.hosts.get(receiver_id)
        return f"{sender.name} -> {receiver.name}" if sender and receiver else None

    def pair_requirement(self, environment_id: int, sender_id: int, receiver_id: int) -> float | None:
        sender, receiver = self.hosts[sender_id], self.hosts[receiver_id]
        if sender.role is not HostRole.primary or receiver.role is not HostRole.standby:
            return None  # the requirement is for redo shipped from a primary to a standby
        return self.environments[environment_id].required()

    def add_runs(self, latest_runs: list, p5: dict[tuple, float]) -> None:
        """Each path's newest ASYNC run (its throughput: what a SYNC run measures is commit-sized writes
        waiting for their acknowledgements, not what the link carries), the age of its newest run of
        either mode, and its newest SYNC run's acknowledgement p99."""
        newest: dict[tuple, object] = {}
        newest_async: dict[tuple, object] = {}
        for row in latest_runs:
            key = (row.environment_id, row.sender, row.receiver)
            if key not in newest or (row.moment, row.id) > (newest[key].moment, newest[key].id):
                newest[key] = row
            if row.mode is not ProbeMode.sync:
                newest_async[key] = row  # one row per path and mode: the newest ASYNC one
            label = self.pair_label(row.sender, row.receiver)
            if row.mode is ProbeMode.sync and label is not None and row.environment_id in self.environments:
                self.figures(row.environment_id, label).sync_ack_p99_seconds = row.ack_p99_seconds
        for key, row in newest.items():
            label = self.pair_label(row.sender, row.receiver)
            if label is None or row.environment_id not in self.environments:
                continue  # a host removed since (its runs keep their names, not their place in a path)
            path = self.figures(row.environment_id, label)
            measured = newest_async.get(key)
            path.throughput_bytes_per_second = measured.bytes_per_second if measured is not None else None
            path.last_run_age_seconds = _age(self.now, row.moment)
            path.p5_24h_bytes_per_second = p5.get(key)
            path.required_bytes_per_second = self.pair_requirement(*key)

    def add_watches(self, watches: list, checks: dict[int, object], p5: dict[tuple, float]) -> list[WatchFigures]:
        """Each watch's state, and what its last judged check says of its path."""
        found = []
        for watch in watches:
            if watch.environment_id not in self.environments:
                continue
            pair = None if watch.all_node_pairs else self.pair_label(watch.client_host_id, watch.server_host_id)
            path = self.figures(watch.environment_id, pair or watch.path_label)
            if path.required_at is None:  # no judged check yet: what the watch would judge against now
                path.required_bytes_per_second = self.environments[watch.environment_id].required(
                    all_node_pairs=watch.all_node_pairs, threshold=watch.threshold_bytes_per_second
                )
            check = checks.get(watch.id)
            if check is not None:
                self._add_check(path, check, measured=pair is None, p5=p5.get((watch.id,)))
            silenced = watch.silenced_until is not None and watch.silenced_until > self.now
            found.append(
                WatchFigures(
                    path.environment, path.path, watch.id, watch.name, watch.state, watch.every_seconds, silenced
                )
            )
        return found

    def _add_check(self, path: PathFigures, check, *, measured: bool, p5: float | None) -> None:
        """The newest judged check's requirement; and its measurement when the checks measure the path
        (all node pairs at once: each check is the pairs' runs summed)."""
        if check.required_bytes_per_second is not None and (
            path.required_at is None or check.moment > path.required_at
        ):
            path.required_bytes_per_second, path.required_at = check.required_bytes_per_second, check.moment
        if measured:
            path.throughput_bytes_per_second = check.measured_bytes_per_second
            path.last_run_age_seconds = _age(self.now, check.moment)
            path.sync_ack_p99_seconds = check.sync_p99_seconds
            path.p5_24h_bytes_per_second = p5


def read_snapshot(*, session: Session, now: datetime | None = None) -> Snapshot:
    """What a scrape says now: seven queries whatever the number of environments, runs and checks."""
    now = now or utcnow()
    environments, environment_figures = _environments(session, now)
    hosts = {
        row.id: _Host(row.environment_id, row.name, row.role, row.node_number)
        for row in session.execute(select(Host.id, Host.environment_id, Host.name, Host.role, Host.node_number))
    }
    paths = _Paths(environments, hosts, now)
    paths.add_runs(*_measured_runs(session, now))
    watch_figures = paths.add_watches(*_watches(session, now))
    ordered = sorted(paths.paths.values(), key=lambda p: (p.environment, p.path))
    return Snapshot(tuple(ordered), tuple(watch_figures), tuple(environment_figures))


_PATH_SERIES = (
    ("redolab_path_throughput_bytes_per_second", "throughput_bytes_per_second",
     "Throughput of the path's last measured ASYNC run, as the receiver counted it (bytes per second)."),
    ("redolab_path_throughput_p5_24h_bytes_per_second", "p5_24h_bytes_per_second",
     "5th percentile of the throughput of the path's ASYNC runs that ended in the last 24 hours (bytes per second)."),
    ("redolab_path_required_bytes_per_second", "required_bytes_per_second",
     "What the path must carry: what its watch judged the last check against, else the busiest thread's "
     "peak with headroom (all threads summed for all node pairs) from the stored redo analysis (bytes per second)."),
    ("redolab_path_headroom_ratio", "headroom_ratio",
     "Last throughput / required - 1: 0.25 is 25 % to spare, negative falls behind at peak."),
    ("redolab_path_sync_ack_p99_seconds", "sync_ack_p99_seconds",
     "99th percentile of the acknowledgement time of the path's last SYNC run (seconds)."),
    ("redolab_path_last_run_age_seconds", "last_run_age_seconds",
     "Seconds since the path's last measured run ended (all node pairs: since its watch's last judged check)."),
)  # fmt: skip


class SnapshotCollector(Collector):
    """Writes a Snapshot as gauges (prometheus_client calls collect() once per exposition)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterator[GaugeMetricFamily]:
        snapshot = self.snapshot
        for name, attribute, documentation in _PATH_SERIES:
            family = GaugeMetricFamily(name, documentation, labels=("environment", "path"))
            for path in snapshot.paths:
                value = getattr(path, attribute)
                if value is not None:
                    family.add_metric((path.environment, path.path), value)
            yield family
        yield from self._watches()
        yield from self._environments()

    def _watches(self) -> Iterator[GaugeMetricFamily]:
        labels = ("environment", "path", "watch", "watch_id")
        state = GaugeMetricFamily(
            "redolab_watch_state",
            "The watch's state: 1 for the one it is in, 0 for the others (unknown: fewer than M judged checks; "
            "at_risk: keeps up with less headroom than the margin; failing: carries less than the requirement).",
            labels=(*labels, "state"),
        )
        interval = GaugeMetricFamily(
            "redolab_watch_interval_seconds", "How often the watch checks its path (seconds).", labels=labels
        )
        silenced = GaugeMetricFamily(
            "redolab_watch_silenced", "1 while the watch is silenced for maintenance.", labels=labels
        )
        for watch in self.snapshot.watches:
            key = (watch.environment, watch.path, watch.watch, str(watch.watch_id))
            for each in WatchState:
                state.add_metric((*key, each.value), 1.0 if watch.state is each else 0.0)
            interval.add_metric(key, watch.interval_seconds)
            silenced.add_metric(key, 1.0 if watch.silenced else 0.0)
        yield from (state, interval, silenced)

    def _environments(self) -> Iterator[GaugeMetricFamily]:
        peak = GaugeMetricFamily(
            "redolab_environment_redo_peak_bytes_per_second",
            "Peak redo rate, every thread summed, from the stored analysis of the imports (bytes per second).",
            labels=("environment",),
        )
        required = GaugeMetricFamily(
            "redolab_environment_redo_required_bytes_per_second",
            "The summed peak redo rate with the environment's headroom (bytes per second).",
            labels=("environment",),
        )
        age = GaugeMetricFamily(
            "redolab_environment_last_import_age_seconds",
            "Seconds since the environment's last redo history import.",
            labels=("environment",),
        )
        for environment in self.snapshot.environments:
            for family, value in (
                (peak, environment.redo_peak_bytes_per_second),
                (required, environment.redo_required_bytes_per_second),
                (age, environment.last_import_age_seconds),
            ):
                if value is not None:
                    family.add_metric((environment.environment,), value)
        yield from (peak, required, age)


def exposition(snapshot: Snapshot, delivery: DeliveryFigures | None = None) -> bytes:
    """The snapshot in the Prometheus text format (CONTENT_TYPE), from a registry of this scrape only."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(snapshot))
    if delivery is not None:
        registry.register(DeliveryCollector(delivery))
    return generate_latest(registry)


def render_metrics(*, session: Session, now: datetime | None = None) -> bytes:
    """The /metrics body now: the paths, watches and environments, and the notifications' delivery."""
    now = now or utcnow()
    return exposition(read_snapshot(session=session, now=now), delivery_figures(session, now))
