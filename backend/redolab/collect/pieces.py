"""What a collection read, made into what it stores: the facts it records and its pieces, the imports
it makes, each the file an upload of the same query would be (imported at once, or kept as uploads of
the requester's for a review, all or none)."""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.collect import output
from redolab.collect.errors import CollectionError
from redolab.collect.models import Collection, CollectionStatus
from redolab.collect.reading import SpooledRows
from redolab.collect.rows import Db2LogCapture
from redolab.collect.service import checked_offers, new_awr_rows, oracle_facts
from redolab.core.config import get_settings
from redolab.core.limits import LimitReached
from redolab.environments.models import Environment
from redolab.redo.uploads import StagingLimits, discard_upload, store_upload


@dataclass(frozen=True)
class Piece:
    """One import a collection makes: its rows as the file an upload of the same query would be."""

    name: str  # the step: archived_log, awr_sysmetric, db2_transaction_log, db2_archived_logs
    text: str  # the file's text, or "" when it is in `source`
    fmt: str
    mapping: dict | None
    rows: int
    source: Path | None = None  # the file, written by the child that read the output (reading.SpooledRows)

    def opened(self) -> BinaryIO:
        """The file's bytes as a stream (from `source` as they are on disk, never all in memory)."""
        return open(self.source, "rb") if self.source else io.BytesIO(self.text.encode())

    @classmethod
    def of(cls, name: str, rows, text_of, fmt: str, mapping: dict | None = None) -> Piece:
        """The piece of a step's `rows`: spooled by the child already, or `text_of(rows)` here."""
        if isinstance(rows, SpooledRows):
            return cls(name, "", fmt, mapping, len(rows), Path(rows.path))
        return cls(name, text_of(rows), fmt, mapping, len(rows))

    def filename(self, collection_id: int) -> str:
        return f"collection-{collection_id}-{self.name}.{'csv' if self.fmt == 'csv' else 'txt'}"


def pieces_of(session: Session, environment: Environment, result: dict, notes: list[str]) -> tuple[dict, list[Piece]]:
    """The facts read and the imports the collection makes, in order (each a file the import reads);
    what is left out and why goes to `notes`."""
    steps = result["steps"]
    if result["kind"] == "oracle":
        facts = oracle_facts(steps)
        facts["offered"] = checked_offers(facts["offered"], notes)
        logs = steps.get("archived_log") or []
        pieces = [Piece.of("archived_log", logs, output.to_import_csv, "csv")] if logs else []
        metrics = steps.get("awr_sysmetric") or []
        fresh = new_awr_rows(session, environment, metrics)
        if len(fresh) < len(metrics):
            notes.append(f"{len(metrics) - len(fresh):,} AWR snapshots were imported before: not again.")
        if fresh:
            pieces.append(Piece("awr_sysmetric", output.to_import_csv(fresh), "csv", None, len(fresh)))
        return facts, pieces
    facts = db2_facts(steps, result.get("hadr") or "")
    facts["offered"] = checked_offers(facts["offered"], notes)
    config = {row.name: row.value for row in steps["db2_config"]}
    pieces = []
    captures = capture_pair(session, environment.id, steps.get("db2_transaction_log") or [])
    if captures:  # the deltas since the previous collection's capture: a rate per member
        pieces.append(Piece("db2_transaction_log", output.to_import_csv(captures), "csv", None, len(captures)))
    else:
        notes.append(
            "One MON_GET_TRANSACTION_LOG capture: the rate needs the next collection's capture as "
            "well (a schedule makes them); it is imported then."
        )
    listing = steps["db2_archived_logs"]
    if listing:
        pages = config.get("logfilsiz") or ""
        mapping = {"log_file_pages": int(pages)} if pages.isdigit() else None
        pieces.append(
            Piece.of("db2_archived_logs", listing, output.db2_history_listing, "db2-archive-listing", mapping)
        )
    return facts, pieces


def capture_pair(session: Session, environment_id: int, current: list) -> list:
    """The previous Db2 collection's captures and these, when every member has two distinct times."""
    earlier = session.scalars(
        select(Collection)
        .where(
            Collection.environment_id == environment_id,
            Collection.database_kind == "db2",
            Collection.status == CollectionStatus.succeeded,
        )
        .order_by(Collection.id.desc())
    ).first()
    previous = []
    for row in ((earlier.facts or {}).get("log_captures") or []) if earlier is not None else []:
        try:
            previous.append(
                Db2LogCapture(
                    datetime.fromisoformat(row["snapshot_time"]),
                    int(row["member"]),
                    int(row["log_writes"]),
                    int(row["num_log_write_io"]),
                    int(row["log_write_time"]),
                )
            )
        except (KeyError, TypeError, ValueError):
            return []
    pairs = {(row.snapshot_time, row.member): row for row in [*previous, *current]}
    members = {row.member for row in current}
    if not members or any(len({t for t, m in pairs if m == member}) < 2 for member in members):
        return []
    return sorted(pairs.values(), key=lambda row: (row.snapshot_time, row.member))


def db2_facts(steps: dict[str, list], hadr: str) -> dict:
    config = {row.name: row.value for row in steps.get("db2_config", [])}
    captures = [asdict(row) for row in steps.get("db2_transaction_log", [])]
    return {
        "config": config,
        "log_captures": captures,
        "hadr": hadr[:20000],
        "archived_logs": len(steps.get("db2_archived_logs", [])),
        "offered": {"transport_mode": config["hadr_syncmode"].upper()} if config.get("hadr_syncmode") else {},
    }


def stage_pieces(pieces: list[Piece], *, collection_id: int, owner: str, upload_dir: Path) -> list[dict]:
    """Every piece kept as an upload of `owner`'s (a user id, as uploads from the page count), for the same
    preview and import as a file (under the same staging caps); all or none."""
    settings = get_settings()
    staged: list[dict] = []
    try:
        for piece in pieces:
            name = piece.filename(collection_id)
            with piece.opened() as stream:
                token = store_upload(upload_dir, stream, name, owner=owner, limits=StagingLimits.of(settings))
            staged.append(
                {
                    "name": piece.name,
                    "token": token,
                    "filename": name,
                    "format": piece.fmt,
                    "mapping": piece.mapping,
                    "rows": piece.rows,
                }
            )
    except BaseException as error:
        for done in staged:
            discard_upload(upload_dir, done["token"])
        if isinstance(error, LimitReached):
            raise CollectionError(
                "preview",
                "preview",
                str(error),
                "Import or discard your other previews, or collect without a preview.",
            ) from None
        raise
    return staged
