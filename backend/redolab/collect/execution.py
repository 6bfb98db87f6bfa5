"""Running one collection on its host: connect, run the shipped scripts (each under a time limit and
caps on its output's bytes and lines, watched for a cancel), read their output in a child process under
limits (collect.reading), then import, all or nothing, and record the evidence. Any failure ends the
Collection row as failed, naming the host, the step and what to do, and stores nothing."""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import sessionmaker

from redolab.auth.models import User
from redolab.collect import output, reading, scripts
from redolab.collect.commands import (
    ORATAB,
    DatabaseAccess,
    access_of,
    db2_argv,
    db2pd_argv,
    oratab_home,
    sqlplus_argv,
    sqlplus_input,
    sqlplus_version_argv,
    validate,
)
from redolab.collect.compressibility import NAMES_DAYS, NAMES_SCRIPT, sample_rows
from redolab.collect.errors import CollectionError
from redolab.collect.models import Collection, CollectionStatus
from redolab.collect.pieces import Piece, pieces_of, stage_pieces
from redolab.collect.service import json_safe, last_log_end, watermarks
from redolab.collect.standby_timing import sampled_with_standby, standby_transport
from redolab.collect.steps import OUTPUT_CAPS, SMALL_OUTPUT_CAPS, STEP_SECONDS, Cancelled, run_step
from redolab.core.config import get_settings
from redolab.core.db import utcnow
from redolab.core.errors import FieldError
from redolab.core.terminal import neutralised
from redolab.environments.connect import connect_host
from redolab.environments.models import Environment, Host
from redolab.redo.imports import delete_import, import_now
from redolab.redo.uploads import discard_upload, reading_limits
from redolab.remote.transport import Transport, TransportError

log = logging.getLogger("redolab.collect")

ORACLE_STEPS = (
    "oracle_database",
    "oracle_instances",
    "oracle_size",
    "oracle_redo_logs",
    "oracle_archive_dests",
    "oracle_archived_log",
)
AWR_DAYS = 8
AWR = [("oracle_awr", {"awr_days": AWR_DAYS})]  # the AWR session's one step
REFUSED = "The rows were read but the import refused them: nothing was stored."
SHUTDOWN_MESSAGE = "redolab was stopped during the collection; nothing was stored"
CANCELLED = "cancelled by the user; the command under way was stopped and nothing was stored"


class CollectionExecution:
    """Run one collection on its host: connect, run the scripts, read them, import, record."""

    output_caps = OUTPUT_CAPS

    def __init__(
        self,
        sessions: sessionmaker,
        secret_key: str,
        collection_id: int,
        *,
        heartbeat: Callable[[], None] = lambda: None,
        shutting_down: Callable[[], bool] = lambda: False,
        step_seconds: float = STEP_SECONDS,
        upload_dir: str | None = None,
    ) -> None:
        self.sessions, self.secret_key, self.collection_id = sessions, secret_key, collection_id
        self.upload_dir = Path(upload_dir) if upload_dir else get_settings().upload_dir  # a review's uploads
        self.heartbeat, self.shutting_down, self.step_seconds = heartbeat, shutting_down, step_seconds
        self.scripts_run: list[dict] = []
        self.row_counts: dict[str, int] = {}
        self.notes: list[str] = []
        self.step = "connect"
        self.spool: Path | None = None  # the directory the commands' output is written to, while it runs
        self.compressibility = False  # the collection asks for the compressibility step (read in _target)

    def _stop(self) -> bool:
        if self.shutting_down():
            return True
        with self.sessions() as session:
            row = session.execute(
                select(Collection.cancel_requested).where(Collection.id == self.collection_id)
            ).first()
        return row is None or bool(row[0])

    def _begin(self) -> bool:
        with self.sessions() as session:
            begun = session.execute(
                update(Collection)
                .where(
                    Collection.id == self.collection_id,
                    Collection.status == CollectionStatus.queued,
                    Collection.cancel_requested.is_(False),
                )
                .values(status=CollectionStatus.running, started_at=utcnow())
            )
            session.commit()
            return begun.rowcount == 1

    async def execute(self) -> str:
        """Run it; returns the Collection's final status (succeeded, failed or cancelled)."""
        if not self._begin():
            return self._not_begun()
        transport: Transport | None = None
        spool = tempfile.TemporaryDirectory(prefix="redolab-collect-")
        self.spool = Path(spool.name)
        try:
            host, access, licensed, resetlogs, marks, since = self._target()
            validate(access)  # before anything runs
            transport = await self._watched(connect_host(host, secret_key=self.secret_key))
            if access.kind == "oracle":
                result = await self._oracle(transport, access, licensed=licensed, resetlogs=resetlogs, marks=marks)
            else:
                result = await self._db2(transport, access)
            await self._store(result, since)
            return CollectionStatus.succeeded.value
        except Cancelled:
            return self._end(CollectionStatus.cancelled, CollectionError("cancelled", self.step, CANCELLED, ""))
        except CollectionError as error:
            return self._end(CollectionStatus.failed, error)
        except TransportError as error:
            return self._end(
                CollectionStatus.failed,
                CollectionError(
                    "ssh",
                    self.step,
                    str(error),
                    "Check the host's SSH settings (Test connection on the environment page).",
                ),
            )
        except ValueError as error:  # a setting that does not validate, a password that no longer decrypts
            return self._end(
                CollectionStatus.failed,
                CollectionError("environment", self.step, str(error), "Correct the host's database access settings."),
            )
        except Exception as error:  # a bug must still end the collection
            log.exception("collection %s crashed", self.collection_id)
            told = f"internal error in redolab: {type(error).__name__}: {error}"
            return self._end(CollectionStatus.failed, CollectionError("internal", self.step, told, ""))
        finally:
            spool.cleanup()
            if transport is not None:
                try:
                    await transport.close()
                except Exception:  # closing must never hide the outcome
                    log.debug("closing the transport failed", exc_info=True)

    def _not_begun(self) -> str:
        """A collection cancelled (or removed) before it began: ended as cancelled unless it had ended."""
        with self.sessions() as session:
            row = session.get(Collection, self.collection_id)
            if row is not None and not row.status.finished:
                row.status, row.finished_at = CollectionStatus.cancelled, utcnow()
                session.commit()
            return row.status.value if row is not None else "cancelled"

    def _target(self) -> tuple[Host, DatabaseAccess, bool, int, dict[int, int], datetime | None]:
        """What the collection needs before anything runs: the host (detached, its credential loaded) and
        its database access; whether AWR may be read (the Diagnostics Pack licence); the stored history's
        watermarks (resetlogs id, thread -> last sequence); and the end of its last stored log."""
        with self.sessions() as session:
            collection = session.get(Collection, self.collection_id)
            host = session.get(Host, collection.host_id) if collection.host_id else None
            if host is None or not host.db_kind:
                raise CollectionError(
                    "environment",
                    "connect",
                    "the host was removed, or its database access was cleared",
                    "Set up the host's database access again.",
                )
            _ = host.credential
            access = access_of(host, self.secret_key)
            environment = session.get(Environment, collection.environment_id)
            licensed = environment.diagnostics_pack_licensed
            self.compressibility = collection.compressibility
            resetlogs, marks = watermarks(session, environment.id)
            since = last_log_end(session, environment.id)
            session.expunge(host)
        return host, access, licensed, resetlogs, marks, since

    async def _watched(self, awaitable, *, cancellable: bool = True):
        """`awaitable`'s result, the job's heartbeat kept meanwhile (an import of a year of logs takes
        longer than the worker's STALE_SECONDS); `cancellable`: a cancel stops the wait (not an import's
        thread, whose commit must not happen after the collection ended: imports are not cancellable)."""
        task = asyncio.ensure_future(awaitable)
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=0.25)
                self.heartbeat()
                if cancellable and not task.done() and self._stop():
                    raise Cancelled
            return task.result()
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task})

    def _end(self, status: CollectionStatus, error: CollectionError) -> str:
        if self.shutting_down() and status is CollectionStatus.cancelled:
            status, error = CollectionStatus.failed, CollectionError("shutdown", self.step, SHUTDOWN_MESSAGE, "")
        with self.sessions() as session:
            row = session.get(Collection, self.collection_id)
            if row is None:
                return status.value
            row.status, row.finished_at = status, utcnow()
            row.failure_kind, row.failure_step = error.kind[:20], (error.step or "")[:40]
            where = f"{row.host_name}, step {error.step}"
            row.failure_message = neutralised(f"{where}: {error.message}")[:4000]  # it quotes the host
            row.failure_hint = neutralised(error.hint) or None
            row.scripts, row.row_counts, row.notes = self.scripts_run, self.row_counts, self._notes()
            session.commit()
        return status.value

    def _notes(self) -> list[str]:
        """The notes as stored: some quote what the host said (an AWR refusal, an import's)."""
        return [neutralised(note) for note in self.notes]

    async def _run(self, transport: Transport, argv: list[str], step: str, input: str | None = None, caps=None):
        """`caps`: SMALL_OUTPUT_CAPS for a command whose output the web process reads itself."""
        self.step = step
        assert self.spool is not None
        return await run_step(
            transport,
            argv,
            step=step,
            spool=self.spool / f"{len(list(self.spool.iterdir())):02d}-{step}.out",
            input=input,
            caps=caps or self.output_caps,
            timeout=self.step_seconds,
            should_stop=self._stop,
            heartbeat=self.heartbeat,
        )

    def _evidence(self, name: str, defines: dict | None = None) -> None:
        """A script as sent: its sha256 and every DEFINE value it got (the neutral defaults included)."""
        given = defines or {}
        values = {v.name: given.get(v.name, v.default) for v in scripts.VARIABLES.get(name, ())}
        self.scripts_run.append({"name": name, "sha256": scripts.SCRIPTS[name].sha256, "defines": values})

    # -- Oracle -----------------------------------------------------------------------------------
    async def _oracle_home(self, transport: Transport, access: DatabaseAccess) -> str:
        if access.oracle_home:
            return access.oracle_home
        if not access.oracle_sid:
            raise CollectionError(
                "environment",
                "oratab",
                "no ORACLE_HOME and no ORACLE_SID to look it up",
                "Set ORACLE_HOME or ORACLE_SID in the host's database access.",
            )
        said = await self._run(transport, ["cat", ORATAB], "oratab", caps=SMALL_OUTPUT_CAPS)
        home = oratab_home(said.text(), access.oracle_sid) if said.exit_code == 0 else None
        if home is None:
            raise CollectionError(
                "environment",
                "oratab",
                f"{ORATAB} has no line for {access.oracle_sid}"
                + (f" ({said.stderr.strip()[:200]})" if said.stderr.strip() else ""),
                "Type ORACLE_HOME in the host's database access.",
            )
        return home

    async def _sqlplus(self, transport, access, home, steps, *, csv_markup: bool, expected: tuple[str, ...]):
        session_text = scripts.oracle_session(steps, csv_markup=csv_markup)
        said = await self._run(
            transport, sqlplus_argv(access, home), "session", input=sqlplus_input(access, session_text)
        )
        return await self._read(
            reading.sqlplus_file,
            str(said.path),
            step="session",
            stderr=said.stderr,
            exit_code=said.exit_code,
            expected=expected,
            timeout=self.step_seconds,
            was_stopped=said.was_stopped,
        )

    async def _read(self, reader, *args, step: str, **said):
        """The output read in a child process (collect.reading), watched for a cancel."""
        limits = reading_limits(get_settings())
        return await self._watched(
            asyncio.to_thread(reading.read_isolated, reader, *args, step=step, limits=limits, **said)
        )

    async def _oracle(self, transport, access, *, licensed: bool, resetlogs: int, marks: dict[int, int]) -> dict:
        home = await self._oracle_home(transport, access)
        said = await self._run(transport, sqlplus_version_argv(access, home), "version", caps=SMALL_OUTPUT_CAPS)
        said_text = said.text()
        if said.was_stopped:
            raise CollectionError("timeout", "version", "sqlplus -V did not finish", "Look at the host.")
        if said.exit_code == 127 or (said.exit_code != 0 and "not found" in said.stderr + said_text):
            raise output.not_installed("sqlplus", "version", (said.stderr or said_text).strip()[-300:])
        if said.exit_code != 0:
            told = (said.stderr or said_text).strip()[-300:] or "nothing"
            if "sudo" in said.stderr:
                raise CollectionError(
                    "environment",
                    "version",
                    f"sudo refused: {told}",
                    f"Let {access.host_name}'s SSH user run commands as {access.os_user} without a "
                    "password (sudoers NOPASSWD), or clear 'Run as'.",
                )
            raise CollectionError(
                "exit",
                "version",
                f"sqlplus -V exited with {said.exit_code} and said {told}",
                "Run it by hand on the host as the collection's user.",
            )
        csv_markup = output.csv_markup_supported(said_text)
        release = output.sqlplus_release(said_text)
        variables = scripts.archived_log_variables(marks, resetlogs_id=resetlogs)
        steps = [(name, variables if name == "oracle_archived_log" else {}) for name in ORACLE_STEPS]
        expected = tuple(step for name in ORACLE_STEPS for step in scripts.ORACLE_STEPS[name])
        try:
            collected = await self._sqlplus(transport, access, home, steps, csv_markup=csv_markup, expected=expected)
        except CollectionError as error:
            if error.kind != "old_version" or not csv_markup:
                raise
            csv_markup = False
            self.notes.append("SQL*Plus has no SET MARKUP CSV (before 12.2): collected with '|' columns.")
            collected = await self._sqlplus(transport, access, home, steps, csv_markup=False, expected=expected)
        self._evidence(scripts.ORACLE_SESSIONS[0] if csv_markup else scripts.ORACLE_SESSIONS[1])
        for name, values in steps:
            self._evidence(name, values)
        found = dict(collected.steps)
        if licensed:
            try:
                got = await self._sqlplus(
                    transport, access, home, AWR, csv_markup=csv_markup, expected=scripts.ORACLE_STEPS["oracle_awr"]
                )
                found.update(got.steps)
                self._evidence("oracle_awr", {"awr_days": AWR_DAYS})
            except CollectionError as error:
                if error.kind != "no_awr":
                    raise
                self.notes.append(f"No AWR: {error.message}. {error.hint}")
        else:
            self.notes.append("AWR not read: the environment is not marked as licensed for the Diagnostics Pack.")
        self.row_counts = {step: len(rows) for step, rows in found.items()}
        version = found["database"][0].version if found.get("database") else None
        if release and not version:
            version = ".".join(map(str, release))
        sampled = await self._sampled(transport, access, home, csv_markup) if self.compressibility else None  # opt-in
        return {"kind": "oracle", "steps": found, "version": version, "compressibility": sampled}

    async def _sampled(self, transport, access, home: str, csv_markup: bool):
        """The compressibility step (collect.compressibility), then the standby's decompression (standby_timing)."""
        self._evidence(NAMES_SCRIPT, {"names_days": NAMES_DAYS})
        run_sql = partial(self._sqlplus, transport, access, home, csv_markup=csv_markup)
        standby = partial(standby_transport, self.sessions, self.secret_key, self.collection_id)
        run = partial(self._run, transport)
        return await sampled_with_standby(run_sql, run, self._run, standby, access=access, notes=self.notes)

    # -- Db2 --------------------------------------------------------------------------------------
    async def _db2(self, transport, access) -> dict:
        found: dict[str, list] = {}
        for name in scripts.DB2_SCRIPTS:
            said = await self._run(transport, db2_argv(access), name, input=scripts.db2_script(name))
            found[name] = await self._read(
                reading.db2_file,
                name,
                str(said.path),
                step=name,
                stderr=said.stderr,
                exit_code=said.exit_code,
                timeout=self.step_seconds,
                was_stopped=said.was_stopped,
            )
            self._evidence(name)
        said = await self._run(transport, db2pd_argv(access), "hadr", caps=SMALL_OUTPUT_CAPS)
        hadr = await self._read(
            reading.db2pd_file,
            str(said.path),
            step="hadr",
            stderr=said.stderr,
            exit_code=said.exit_code,
            timeout=self.step_seconds,
            was_stopped=said.was_stopped,
        )
        self.row_counts = {step: len(rows) for step, rows in found.items()}
        return {"kind": "db2", "steps": found, "hadr": hadr, "version": None}

    # -- storing ----------------------------------------------------------------------------------
    async def _store(self, result: dict, since: datetime | None) -> None:
        self.step = "import"
        with self.sessions() as session:
            collection = session.get(Collection, self.collection_id)
            environment = session.get(Environment, collection.environment_id)
            facts, pieces = pieces_of(session, environment, result, self.notes)
            review, requested_by = collection.review, collection.requested_by
        if review:
            self.step = "preview"
            staged = await self._watched(asyncio.to_thread(self._stage_all, pieces, requested_by), cancellable=False)
            imported: dict[str, int] = {}
        else:
            staged, imported = [], await self._import_all(collection, pieces)
        if not pieces or (not review and not imported):
            when = f"{since:%Y-%m-%d %H:%M} UTC" if since else "the last collection"
            self.notes.append(f"No new logs since {when}: nothing was imported.")
        with self.sessions() as session:
            collection = session.get(Collection, self.collection_id)
            if collection is None:
                for piece in staged:
                    discard_upload(self.upload_dir, piece["token"])
                return
            main = next((name for name in ("archived_log", "db2_archived_logs") if name in imported), None)
            facts |= {f"{name}_import_id": import_id for name, import_id in imported.items() if name != main}
            if "db2_transaction_log" in imported:  # the name earlier collections kept it under
                facts["capture_import_id"] = imported["db2_transaction_log"]
            collection.status, collection.finished_at = CollectionStatus.succeeded, utcnow()
            collection.facts = json_safe(facts)
            collection.database_version = neutralised(result.get("version") or "")[:64] or None
            collection.scripts, collection.row_counts = self.scripts_run, self.row_counts
            collection.notes = self._notes()
            session.add_all(sample_rows(self.collection_id, result.get("compressibility")))
            collection.import_id = imported.get(main) if main else next(iter(imported.values()), None)
            collection.staged = staged or None
            session.commit()

    async def _import_all(self, collection: Collection, pieces: list[Piece]) -> dict[str, int]:
        """Every piece imported, or none: a refusal removes the imports made before it."""
        imported: dict[str, int] = {}
        try:
            for piece in pieces:
                import_id = await self._watched(asyncio.to_thread(self._import, collection, piece), cancellable=False)
                if import_id is not None:
                    imported[piece.name] = import_id
        except BaseException:
            for import_id in imported.values():
                await asyncio.to_thread(self._discard, collection.environment_id, import_id)
            raise
        return imported

    def _stage_all(self, pieces: list[Piece], requested_by: str) -> list[dict]:
        """Every piece kept as an upload of its requester's, for the same preview and import as a file; all
        or none (pieces.stage_pieces)."""
        owner = self._owner(requested_by)
        return stage_pieces(pieces, collection_id=self.collection_id, owner=owner, upload_dir=self.upload_dir)

    def _owner(self, requested_by: str) -> str:
        """Staged uploads count against a user's cap by user id (as uploads from the page do)."""
        with self.sessions() as session:
            user_id = session.scalar(select(User.id).where(User.username == requested_by))
        return str(user_id) if user_id is not None else requested_by

    def _discard(self, environment_id: int, import_id: int) -> None:
        with self.sessions() as session:
            environment = session.get(Environment, environment_id)
            delete_import(session=session, environment=environment, import_id=import_id)

    def _import(self, collection: Collection, piece: Piece) -> int | None:
        with self.sessions() as session, tempfile.TemporaryDirectory(prefix="redolab-collect-") as workdir:
            environment = session.get(Environment, collection.environment_id)
            path = Path(workdir) / piece.filename(collection.id)
            if piece.source:
                shutil.copyfile(piece.source, path)
            else:
                path.write_text(piece.text, encoding="utf-8")
            try:
                record = import_now(
                    session=session,
                    environment=environment,
                    path=path,
                    filename=path.name,
                    fmt=piece.fmt,
                    mapping=piece.mapping,
                    imported_by=collection.requested_by,
                )
            except FieldError as error:
                if "already imported" in error.message:  # the same rows as an earlier import: nothing new
                    self.notes.append(f"No new rows in {piece.name}: {error.message}")
                    return None
                raise CollectionError("import", "import", f"{piece.name}: {error.message}", REFUSED) from None
            except Exception as error:  # a RedoInputError names the line
                raise CollectionError("import", "import", f"{piece.name}: {error}", REFUSED) from None
            record.notes = [
                *(record.notes or []),
                f"Collected by redolab (collection #{collection.id}) on "
                f"{collection.host_name}: " + ", ".join(f"{s['name']} {s['sha256'][:12]}" for s in self.scripts_run),
            ]
            session.commit()
            return record.id
