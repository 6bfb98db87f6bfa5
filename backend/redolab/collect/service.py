"""Collections: queue one (a job of kind "collect"), cancel it, run it (CollectionExecution), read what
it found, apply the facts it read, and the environment's collection schedule.

Nothing is stored on a failure: every step runs and is read before the import, which is all or nothing
(redo.imports.import_now); the Collection row records the failure (host, step, what to do)."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from pydantic import ValidationError
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from redolab.collect import scripts
from redolab.collect.models import Collection, CollectionStatus
from redolab.core.db import get_or_404, memo, utcnow
from redolab.core.errors import FieldError
from redolab.core.fields import field_label
from redolab.core.forms import field_errors
from redolab.core.limits import LimitReached
from redolab.environments.models import TRANSPORT_MODES, Environment, Host, HostRole
from redolab.environments.releases import parse_release
from redolab.environments.schemas import DAILY_SECONDS, EnvironmentUpdate
from redolab.environments.service import update_environment
from redolab.jobs.admission import check_queue_caps, current_caps, hold_queue_lock
from redolab.jobs.models import Job, JobStatus
from redolab.redo.models import ImportStatus, RedoImport, RedoRow
from redolab.redo.previews import printable
from redolab.redo.uploads import upload_path

log = logging.getLogger("redolab.collect")

KIND = "collect"


# -- requests ---------------------------------------------------------------------------------------
def collection_host(environment: Environment) -> Host:
    """The primary host whose database is collected from (the first primary with database access)."""
    for host in environment.hosts:
        if host.role is HostRole.primary and host.db_kind:
            return host
    raise FieldError(
        "host",
        "No primary host of this environment has database access set up: an admin sets it "
        "under the host's 'Collect from the database' settings.",
        422,
    )


def queue_collection(
    *,
    session: Session,
    environment: Environment,
    requested_by: str,
    scheduled: bool = False,
    review_upload_dir: Path | None = None,
    compressibility: bool = False,
) -> Collection:
    """A queued collection and its job (the worker runs it). `review_upload_dir`: its rows are kept there
    as uploads of the requester's, to preview and import as a file is, instead of being imported at once.
    `compressibility`: also sample archived logs' compressibility on the host (Oracle; costs CPU there)."""
    host = collection_host(environment)
    if compressibility and host.db_kind != "oracle":
        raise FieldError(
            "compressibility", "Compressibility is measured on Oracle archived logs: this host's database is Db2.", 422
        )
    _admit(session, environment, host, requested_by=requested_by)
    collection = Collection(
        environment_id=environment.id,
        host_id=host.id,
        host_name=host.name,
        database_kind=host.db_kind,
        requested_by=requested_by,
        scheduled=scheduled,
        review=review_upload_dir is not None,
        compressibility=compressibility,
        scripts=[],
        row_counts={},
        notes=[],
    )
    session.add(collection)
    session.flush()
    review = review_upload_dir is not None
    job = Job(
        kind=KIND,
        environment_id=environment.id,
        label=f"collection #{collection.id} on {host.name}",
        options={"collection_id": collection.id} | ({"upload_dir": str(review_upload_dir)} if review else {}),
        client_host_id=host.id,
        server_host_id=host.id,
        requested_by=requested_by,
    )
    session.add(job)
    session.flush()
    collection.job_id = job.id
    session.commit()
    return collection


def _admit(session: Session, environment: Environment, host: Host, *, requested_by: str) -> None:
    """Under the queue lock (held until the caller's commit; a refusal rolls back): no other collection of
    the environment queued or running (409), and the requester and the host within their queue caps (429).
    The checks and the rows written after them are one step (jobs.admission)."""
    hold_queue_lock(session)
    busy = session.scalar(
        select(Collection.id).where(
            Collection.environment_id == environment.id,
            Collection.status.in_((CollectionStatus.queued, CollectionStatus.running)),
        )
    )
    if busy is not None:
        session.rollback()
        raise FieldError(
            "collection", f"Collection #{busy} of this environment has not ended yet: wait for it, or cancel it.", 409
        )
    try:
        check_queue_caps(
            session,
            owner=requested_by,
            client_host_id=host.id,
            server_host_id=host.id,
            pair_name=host.name,
            caps=current_caps(),
        )
    except LimitReached:
        session.rollback()
        raise


def get_collection(*, session: Session, collection_id: int) -> Collection:
    return get_or_404(session, Collection, collection_id, what="Collection")


def list_collections(*, session: Session, environment: Environment, limit: int = 10) -> list[Collection]:
    query = select(Collection).where(Collection.environment_id == environment.id)
    return list(session.scalars(query.order_by(Collection.id.desc()).limit(limit)))


def cancel_collection(*, session: Session, collection: Collection) -> Collection:
    """A queued collection ends as cancelled at once (one conditional update: a worker's claim and this
    cannot both win); a running one is asked to stop (its command is stopped within a second)."""
    ended = session.execute(
        update(Collection)
        .where(Collection.id == collection.id, Collection.status == CollectionStatus.queued)
        .values(
            status=CollectionStatus.cancelled,
            cancel_requested=True,
            finished_at=utcnow(),
            failure_message="cancelled before it started; nothing was run",
        )
        .execution_options(synchronize_session=False)
    )
    if ended.rowcount == 1 and collection.job_id is not None:
        session.execute(
            update(Job)
            .where(Job.id == collection.job_id, Job.status == JobStatus.queued)
            .values(status=JobStatus.cancelled, finished_at=utcnow())
        )
    elif ended.rowcount == 0:
        session.execute(
            update(Collection)
            .where(Collection.id == collection.id, Collection.status == CollectionStatus.running)
            .values(cancel_requested=True)
        )
    session.commit()
    session.refresh(collection)
    return collection


@dataclass(frozen=True)
class StagedPiece:
    """One import a reviewed collection would make, and where it stands: waiting for its preview and
    import, imported (as import #N: the import of the file it was kept as), or gone (discarded, or pruned
    as previews are)."""

    name: str
    token: str
    filename: str
    format: str
    log_file_pages: int | None
    rows: int
    state: str  # waiting, imported, gone
    import_id: int | None = None


def staged_pieces(*, session: Session, collection: Collection, upload_dir: Path) -> list[StagedPiece]:
    """Each staged piece: waiting (its upload is still there), imported (as import #N) or gone. The
    environment's import names are read once per transaction, not once per piece."""
    imported = memo(
        session,
        ("import ids by name", collection.environment_id),
        lambda: dict(
            session.execute(
                select(RedoImport.filename, RedoImport.id)
                .where(RedoImport.environment_id == collection.environment_id, RedoImport.status == ImportStatus.ready)
                .order_by(RedoImport.id.desc())
            ).all()
        ),
    )
    pieces = []
    for piece in collection.staged or []:
        try:
            upload_path(upload_dir, str(piece.get("token") or ""))
            state, import_id = "waiting", None
        except FieldError:
            import_id = imported.get(piece.get("filename"))
            state = "imported" if import_id is not None else "gone"
        pages = (piece.get("mapping") or {}).get("log_file_pages")
        pieces.append(
            StagedPiece(
                str(piece.get("name")),
                str(piece.get("token")),
                str(piece.get("filename")),
                str(piece.get("format") or "auto"),
                int(pages) if pages else None,
                int(piece.get("rows") or 0),
                state,
                import_id,
            )
        )
    return pieces


# -- the watermark --------------------------------------------------------------------------------
def watermarks(session: Session, environment_id: int) -> tuple[int, dict[int, int]]:
    """(resetlogs id, thread -> last sequence) of the newest incarnation in the stored imports."""
    ready = select(RedoImport.id).where(
        RedoImport.environment_id == environment_id, RedoImport.status == ImportStatus.ready
    )
    base = select(RedoRow).where(RedoRow.import_id.in_(ready), RedoRow.sequence.is_not(None))
    resetlogs = session.scalar(
        select(func.max(RedoRow.resetlogs)).where(
            RedoRow.import_id.in_(ready), RedoRow.sequence.is_not(None), RedoRow.resetlogs.is_not(None)
        )
    )
    if resetlogs is None or resetlogs > scripts.MAX_SEQUENCE:
        return 0, {}
    rows = session.execute(
        select(RedoRow.thread, func.max(RedoRow.sequence))
        .where(RedoRow.import_id.in_(ready), RedoRow.sequence.is_not(None), RedoRow.resetlogs == resetlogs)
        .group_by(RedoRow.thread)
    ).all()
    del base
    found = {int(t): int(s) for t, s in rows if 1 <= t <= scripts.MAX_THREAD and 0 <= s <= scripts.MAX_SEQUENCE}
    return int(resetlogs), dict(sorted(found.items())[-scripts.THREAD_SLOTS :])


def last_log_end(session: Session, environment_id: int) -> datetime | None:
    ready = select(RedoImport.id).where(
        RedoImport.environment_id == environment_id, RedoImport.status == ImportStatus.ready
    )
    seconds = session.scalar(select(func.max(RedoRow.end_epoch_seconds)).where(RedoRow.import_id.in_(ready)))
    return datetime.fromtimestamp(seconds, UTC) if seconds is not None else None


def new_awr_rows(session: Session, environment: Environment, metrics: list) -> list:
    """The AWR SYSMETRIC snapshots not imported before: a snapshot that ends at or before the last stored
    AWR row of its instance is the same measurement (AWR keeps 8 days; a daily collection reads most again).
    Times are the host's clock, read in the environment's time zone as the import reads them."""
    if not metrics:
        return []
    ready = select(RedoImport.id).where(
        RedoImport.environment_id == environment.id, RedoImport.status == ImportStatus.ready
    )
    last = dict(
        session.execute(
            select(RedoRow.thread, func.max(RedoRow.end_epoch_seconds))
            .where(RedoRow.import_id.in_(ready), RedoRow.kind == "rate")
            .group_by(RedoRow.thread)
        ).all()
    )
    zone = ZoneInfo(environment.time_zone or "UTC")
    return [
        row
        for row in metrics
        if last.get(row.instance_number) is None
        or row.end_time.replace(tzinfo=zone).timestamp() > last[row.instance_number]
    ]


# -- facts ----------------------------------------------------------------------------------------
def _zone_of_offset(offset: str | None) -> str | None:
    """An IANA zone for a whole-hour UTC offset ("+01:00" -> Etc/GMT-1: POSIX signs are inverted)."""
    if not offset or len(offset) != 6 or offset[3] != ":" or offset[4:] != "00":
        return None
    try:
        hours = int(offset[:3])
    except ValueError:
        return None
    return "UTC" if hours == 0 else f"Etc/GMT{-hours:+d}"


def oracle_facts(steps: dict[str, list]) -> dict:
    database, size = steps["database"][0], steps["size"][0]
    dests = steps["archive_dests"]
    facts = {
        "database": asdict(database),
        "instances": [asdict(i) for i in steps["instances"]],
        "size": asdict(size),
        "redo_logs": [asdict(r) for r in steps["redo_logs"]],
        "archive_dests": [asdict(d) for d in dests],
        # [file id, tablespace, bytes, bigfile] per file (lists: 65,533 files at most, kept compact)
        "datafiles": [[f.file_id, f.tablespace_name, f.bytes, f.bigfile == "YES"] for f in steps.get("datafiles", [])],
    }
    offered: dict = {
        "database_size_bytes": size.controlfile_datafile_bytes,
        "primary_rac_nodes": max(1, len(steps["instances"])),
    }
    standby = [d for d in dests if (d.target or "").upper() == "STANDBY" and d.status == "VALID"]
    modes = {"SYNCHRONOUS": "SYNC", "ASYNCHRONOUS": "ASYNC", "PARALLELSYNC": "SYNC"}
    if standby and (standby[0].transmit_mode or "").upper() in modes:
        mode = modes[standby[0].transmit_mode.upper()]
        offered["transport_mode"] = "FASTSYNC" if mode == "SYNC" and standby[0].affirm == "NO" else mode
    try:  # V$INSTANCE.VERSION, "19.0.0.0.0": the release the Oracle Net settings start from
        if parse_release(database.version or ""):
            offered["database_release"] = database.version.strip()
    except ValueError:
        pass  # a version redolab does not read is not offered (the facts keep it)
    zone = _zone_of_offset(database.host_utc_offset)
    if zone:
        offered["time_zone"] = zone
    facts["offered"] = offered
    if steps.get("awr_sysmetric"):  # the largest 'Redo Generated Per Sec' sample per instance (bytes/s)
        peaks: dict[str, float] = {}
        for row in steps["awr_sysmetric"]:
            key = str(row.instance_number)
            peaks[key] = max(peaks.get(key, 0.0), row.maxval)
        facts["awr_peak_bytes_per_second"] = peaks
    return facts


def checked_offers(offered: dict, notes: list[str]) -> dict:
    """The offered facts that validate as an edit of the environment would (its bounds: a size up to
    1 EiB, a number of nodes, a known transport mode, an IANA zone); each refused one is named in
    `notes`, with what the host said (cut, printable), and not offered."""
    kept = {}
    for field, value in offered.items():
        refusal = _refusal(field, value)
        if refusal is None:
            kept[field] = value
        else:
            said = printable(repr(value))
            notes.append(f"Not offered: {field_label(field)} read as {said[:60]}: {refusal}")
    return kept


def _refusal(field: str, value) -> str | None:
    """Why `value` is not a value of the environment's `field`, or None when it is."""
    if field not in EnvironmentUpdate.model_fields:
        return "not a setting of the environment"
    try:
        EnvironmentUpdate.model_validate({field: value})
    except ValidationError as error:
        return next(iter(field_errors(error).values()), "not a valid value")
    return None


def json_safe(value):
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def offered_changes(environment: Environment, collection: Collection) -> dict[str, tuple]:
    """field -> (current, read) for every offered fact that differs from the environment's value. A
    time zone differs when its offset differed when the host said it (the collection's end): Europe/Paris
    and Etc/GMT-1 agree in winter, and a collection of January still agrees when looked at in July."""
    changes = {}
    said_at = collection.finished_at or collection.started_at or datetime.now(UTC)
    for field, read in ((collection.facts or {}).get("offered") or {}).items():
        if _refusal(field, read) is not None:
            continue  # stored before the facts were checked when read (checked_offers): never offered
        current = getattr(environment, field, None)
        current = current.value if hasattr(current, "value") else current
        if field == "time_zone":
            try:
                if said_at.astimezone(ZoneInfo(current)).utcoffset() == said_at.astimezone(ZoneInfo(read)).utcoffset():
                    continue
            except (KeyError, ValueError):
                pass
        if field == "transport_mode" and read not in {mode.value for mode in TRANSPORT_MODES[environment.platform]}:
            continue  # not a mode of this platform (a Data Guard setting read for a Db2 environment)
        if current != read:
            changes[field] = (current, read)
    return changes


def apply_facts(*, session: Session, collection: Collection, fields: list[str] | None = None) -> Environment:
    """Write the facts the collection read (all offered ones, or `fields`) into its environment,
    validated as an edit of the environment is: a fact that no longer fits it (the environment changed
    since, a rule across fields) is a FieldError (409) naming it, never another exception."""
    environment = session.get(Environment, collection.environment_id)
    if collection.status is not CollectionStatus.succeeded or not collection.facts:
        raise FieldError("collection", "Only a collection that succeeded has facts to apply.", 409)
    changes = offered_changes(environment, collection)
    chosen = {f: read for f, (_, read) in changes.items() if fields is None or f in fields}
    if chosen:
        try:
            update_environment(session=session, environment=environment, env_in=EnvironmentUpdate(**chosen))
        except ValidationError as error:
            session.rollback()
            field, message = next(iter(field_errors(error).items()), ("collection", "it does not validate"))
            raise FieldError(
                field if field in chosen else "collection",
                f"The collected {field_label(field)} cannot be applied to the environment as it is now: {message}",
                409,
            ) from None
    collection.facts_applied = True
    session.commit()
    return environment


# -- schedule -------------------------------------------------------------------------------------
def fire_due_collections(sessions: sessionmaker, now: datetime | None = None) -> int:
    """Queue a collection for every environment whose collection schedule is due (one worker fires an
    occurrence: a conditional update of its next time); skipped while one is still queued or running."""
    now = now or utcnow()
    started = 0
    with sessions() as session:
        due = session.scalars(
            select(Environment).where(
                Environment.collect_every_seconds.is_not(None),
                (Environment.collect_next_at.is_(None)) | (Environment.collect_next_at <= now),
            )
        ).all()
        for environment in due:
            following = now + timedelta(seconds=environment.collect_every_seconds or DAILY_SECONDS)
            claimed = session.execute(
                update(Environment)
                .where(
                    Environment.id == environment.id,
                    Environment.collect_next_at.is_(environment.collect_next_at)
                    if environment.collect_next_at is None
                    else Environment.collect_next_at == environment.collect_next_at,
                )
                .values(collect_next_at=following)
                .execution_options(synchronize_session=False)
            )
            session.commit()
            if claimed.rowcount != 1:
                continue
            busy = session.scalar(
                select(func.count(Collection.id)).where(
                    Collection.environment_id == environment.id,
                    Collection.status.in_((CollectionStatus.queued, CollectionStatus.running)),
                )
            )
            if busy:
                continue
            try:
                queue_collection(session=session, environment=environment, requested_by="schedule", scheduled=True)
                started += 1
            except FieldError:  # no host set up: nothing to collect from
                session.rollback()
    return started


def fail_orphaned_collection(session: Session, job: Job) -> None:
    """A collection whose worker stopped: failed (nothing was stored: its import had not begun, or was
    discarded with the staged rows)."""
    collection_id = (job.options or {}).get("collection_id")
    collection = session.get(Collection, collection_id) if collection_id else None
    if collection is not None and not collection.status.finished:
        collection.status, collection.finished_at = CollectionStatus.failed, utcnow()
        collection.failure_kind, collection.failure_step = "shutdown", "worker"
        collection.failure_message = f"{collection.host_name}: the worker running it ({job.worker_id}) stopped"
        collection.failure_hint = "Collect again."
