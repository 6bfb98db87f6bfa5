"""The configuration judged before go-live (pure): a collection's V$DATABASE, V$LOG, V$STANDBY_LOG and
V$ARCHIVE_DEST rows against the environment's protection and transport, one row per check.

Sources: Oracle Data Guard Concepts and Administration (19c, 23ai), "Managing Standby Redo Logs": each
standby redo log at least as large as the largest online redo log of its thread, and at least one more
standby redo log group per thread than online groups; on the primary too, for a role reversal.
"LOG_ARCHIVE_DEST_n Parameter Attributes": NET_TIMEOUT (seconds a SYNC commit waits on an unresponsive
destination; default 30 since 11.2, 180 in 10g), REOPEN (default 300; 0 never retries), MAX_FAILURE (0:
no limit), MAX_CONNECTIONS (1 to 20 network connections for archived-log gap resolution, not the
real-time stream), DELAY, COMPRESSION (Advanced Compression option; LZO not with SYNC or FASTSYNC),
ALTERNATE. DATA_GUARD_SYNC_LATENCY (Database Reference): with two or more SYNC destinations, how long
the primary waits for the others after the first acknowledges (0: up to NET_TIMEOUT). FORCE LOGGING:
without it, NOLOGGING operations leave blocks the standby cannot recover.
"""

from __future__ import annotations

from dataclasses import dataclass

from redolab.core.units import format_count
from redolab.preflight.evidence import FAIL, PASS, UNKNOWN, WARN

ORDER = {PASS: 0, UNKNOWN: 1, WARN: 2, FAIL: 3}
NET_TIMEOUT_DEFAULT_SECONDS = 30  # Oracle's default since 11.2: a SYNC commit stalls this long at most
NET_TIMEOUT_MOST_SECONDS = 60  # beyond, a standby that goes away stalls commits for minutes
MULTI_CONNECTION_GAIN_PERCENT = 20.0  # more connections measured this much faster: gap shipping gains
SYNC_MODES = ("SYNC", "FASTSYNC")


@dataclass(frozen=True)
class Check:
    member: str  # "primary ORCL_PRIM", "LOG_ARCHIVE_DEST_2 (ORCL_STBY)"
    name: str  # what is checked
    status: str  # PASS | WARN | FAIL | UNKNOWN
    detail: str  # what was found, and what would pass (or what would tell, for UNKNOWN)
    source: str  # where it was read: "collection #4, 2026-12-02 16:20 UTC", a pasted output and its line

    def to_json(self) -> dict:
        return {"member": self.member, "check": self.name, "status": self.status, "detail": self.detail,
                "source": self.source}  # fmt: skip


@dataclass(frozen=True)
class Basis:
    """The environment's side of the judgement."""

    transport_mode: str  # ASYNC | SYNC | FASTSYNC
    protection_mode: str | None  # max_performance | max_availability | max_protection
    compression_licensed: bool
    far_sync: bool  # a destination is a far sync instance
    standby_destinations: int
    gap_shipping: tuple[int, float, float, int] | None = None  # (conns, gain %, single run, multi run)


def worst(checks) -> str:
    return max((c.status for c in checks), key=ORDER.__getitem__, default=UNKNOWN)


def not_collected(source: str) -> list[Check]:
    """The rows a collection would fill, each saying what would tell."""
    tell = "collect from the primary (the Collect card), or paste the Broker's VALIDATE DATABASE output below"
    return [
        Check("primary", name, UNKNOWN, tell, source)
        for name in ("Archive log mode", "Force logging", "Standby redo logs", "Redo transport destinations")
    ]


def judge(facts: dict, basis: Basis, source: str) -> list[Check]:
    """Every check of a collection's facts (collect.service.oracle_facts), in the card's order."""
    database = facts.get("database") or {}
    member = f"{(database.get('database_role') or 'primary').lower()} {database.get('db_unique_name') or ''}".strip()
    checks = [
        _log_mode(member, database, source),
        _force_logging(member, database, source),
        *_protection(member, database, basis, source),
        *_standby_logs(member, facts.get("redo_logs") or [], source),
    ]
    remote = [d for d in facts.get("archive_dests") or [] if (d.get("target") or "").upper() == "STANDBY"]
    checks += _destinations(remote, basis, source)
    checks += _sync_latency(remote, database, source)
    return checks


def _log_mode(member: str, database: dict, source: str) -> Check:
    mode = database.get("log_mode") or "not read"
    ok = mode == "ARCHIVELOG"
    detail = mode if ok else f"{mode}: redo transport needs ARCHIVELOG (ALTER DATABASE ARCHIVELOG, mounted)"
    return Check(member, "Archive log mode", PASS if ok else FAIL, detail, source)


def _force_logging(member: str, database: dict, source: str) -> Check:
    value = (database.get("force_logging") or "").upper()
    if value == "YES":
        return Check(member, "Force logging", PASS, "YES", source)
    if value.startswith("STANDBY NOLOGGING"):
        return Check(member, "Force logging", WARN, f"{value}: standby nologging instead of force logging", source)
    said = (
        f"{value or 'not read'}: NOLOGGING operations (direct-path loads, index builds) write no redo and leave "
        "blocks the standby cannot recover; ALTER DATABASE FORCE LOGGING"
    )
    return Check(member, "Force logging", FAIL, said, source)


def _protection(member: str, database: dict, basis: Basis, source: str) -> list[Check]:
    collected = (database.get("protection_mode") or "").upper()
    if not collected or basis.protection_mode is None:
        return []
    expected = basis.protection_mode.replace("max_", "MAXIMUM ").upper()
    if collected == expected:
        return [Check(member, "Protection mode", PASS, collected, source)]
    said = f"the database is in {collected}; the environment plans {expected}: one of them is out of date"
    return [Check(member, "Protection mode", WARN, said, source)]


def _standby_logs(member: str, logs: list[dict], source: str) -> list[Check]:
    online: dict[int, list[int]] = {}
    standby: dict[int, list[int]] = {}
    for log in logs:
        kind = online if (log.get("log_type") or "").upper() == "ONLINE" else standby
        kind.setdefault(int(log["thread"]), []).append(int(log["bytes"]))
    if not online:
        return [Check(member, "Standby redo logs", UNKNOWN, "no online redo logs were read (V$LOG)", source)]
    checks = []
    for thread in sorted(online):
        groups, largest, have = len(online[thread]), max(online[thread]), standby.get(thread, [])
        name = f"Standby redo logs, thread {thread}"
        small = [size for size in have if size < largest]
        if not have:
            status, said = (
                FAIL,
                (
                    f"none for {groups} online groups: without them real-time transport cannot write on this side "
                    f"and redo arrives as archived logs; add {groups + 1} of {largest:,} bytes"
                ),
            )
        elif small:
            status = FAIL
            said = f"{len(small)} of {len(have)} below the {largest:,}-byte online logs: each must be at least that"
        elif len(have) < groups:
            status, said = FAIL, f"{len(have)} for {groups} online groups: add {groups + 1 - len(have)}"
        elif len(have) == groups:
            status, said = WARN, f"{len(have)} for {groups} online groups: the usual rule is one more ({groups + 1})"
        else:
            status, said = PASS, f"{len(have)} for {groups} online groups, {largest:,} bytes"
        checks.append(Check(member, name, status, said, source))
    return checks


def _mode_of(dest: dict) -> str:
    mode = (dest.get("transmit_mode") or "").upper()
    if mode in ("SYNCHRONOUS", "PARALLELSYNC"):
        return "FASTSYNC" if (dest.get("affirm") or "").upper() == "NO" else "SYNC"
    return "ASYNC"


def _destinations(remote: list[dict], basis: Basis, source: str) -> list[Check]:
    if not remote:
        said = "no LOG_ARCHIVE_DEST_n with a standby target: redo goes nowhere yet"
        return [Check("primary", "Redo transport destinations", FAIL, said, source)]
    checks = []
    valid = [d for d in remote if d.get("status") == "VALID"]
    if len(valid) < basis.standby_destinations:
        found = format_count(len(valid), "VALID standby destination")
        said = f"{found} for the {basis.standby_destinations} the environment plans"
        checks.append(Check("primary", "Redo transport destinations", WARN, said, source))
    for dest in remote:
        checks += _destination(dest, basis, source)
    if basis.far_sync and all((d.get("alternate") or "NONE").upper() == "NONE" for d in remote):
        said = (
            "every destination has ALTERNATE=NONE: one far sync instance carries all redo; give it an alternate "
            "(RedoRoutes with ALTERNATE, a second far sync or the standby directly)"
        )
        checks.append(Check("primary", "Far sync alternate", WARN, said, source))
    return checks


def _destination(dest: dict, basis: Basis, source: str) -> list[Check]:
    name = f"{dest.get('dest_name') or 'LOG_ARCHIVE_DEST_' + str(dest.get('dest_id'))}"
    member = f"{name} ({dest.get('db_unique_name') or dest.get('destination') or '?'})"
    status = dest.get("status") or "?"
    if status != "VALID":
        return [Check(member, "Destination status", FAIL, f"{status}: redo is not shipped to it", source)]
    mode = _mode_of(dest)
    checks = [_transport(member, mode, basis, source)]
    if mode in SYNC_MODES:
        checks.append(_net_timeout(member, dest.get("net_timeout"), source))
    checks.append(_compression(member, (dest.get("compression") or "DISABLE").upper(), mode, basis, source))
    checks += _failure_attributes(member, dest, source)
    checks.append(_max_connections(member, dest.get("max_connections"), basis, source))
    return checks


def _transport(member: str, mode: str, basis: Basis, source: str) -> Check:
    if basis.protection_mode in ("max_availability", "max_protection") and mode == "ASYNC":
        said = f"ASYNC under {basis.protection_mode.replace('_', ' ')}: that mode needs SYNC (or FASTSYNC)"
        return Check(member, "Transport mode", FAIL, said, source)
    if mode != basis.transport_mode:
        said = f"{mode} on the database; the environment plans {basis.transport_mode}: the plan judges the wrong mode"
        return Check(member, "Transport mode", WARN, said, source)
    return Check(member, "Transport mode", PASS, mode, source)


def _net_timeout(member: str, value, source: str) -> Check:
    if value is None:
        return Check(member, "NET_TIMEOUT", UNKNOWN, "not read", source)
    said = f"{value} s: a commit stalls up to {value} s when the standby goes away"
    if value > NET_TIMEOUT_MOST_SECONDS:
        return Check(member, "NET_TIMEOUT", FAIL, f"{said}; {NET_TIMEOUT_DEFAULT_SECONDS} s is the default", source)
    if value > NET_TIMEOUT_DEFAULT_SECONDS:
        return Check(member, "NET_TIMEOUT", WARN, f"{said}, above the {NET_TIMEOUT_DEFAULT_SECONDS} s default", source)
    return Check(member, "NET_TIMEOUT", PASS, said, source)


def _compression(member: str, value: str, mode: str, basis: Basis, source: str) -> Check:
    if value in ("DISABLE", ""):
        return Check(member, "COMPRESSION", PASS, "DISABLE", source)
    if value == "LZO" and mode in SYNC_MODES:
        return Check(member, "COMPRESSION", FAIL, f"LZO with {mode}: Oracle allows LZO only with ASYNC", source)
    if not basis.compression_licensed:
        said = (
            f"{value} needs the Advanced Compression option, which the environment does not record as licensed "
            "(tick it on the environment if it is)"
        )
        return Check(member, "COMPRESSION", FAIL, said, source)
    return Check(member, "COMPRESSION", PASS, f"{value} (Advanced Compression licensed)", source)


def _failure_attributes(member: str, dest: dict, source: str) -> list[Check]:
    checks = []
    reopen, failures = dest.get("reopen_secs"), dest.get("max_failure")
    alternate, delay = (dest.get("alternate") or "NONE").upper(), dest.get("delay_mins")
    if reopen is not None:
        status = WARN if reopen == 0 else PASS
        said = "0: a failed destination is never tried again" if reopen == 0 else f"{reopen} s between tries"
        checks.append(Check(member, "REOPEN", status, said, source))
    if failures:
        status = WARN if alternate == "NONE" else PASS
        said = f"given up after {failures} failed tries" + (" with no ALTERNATE" if alternate == "NONE" else "")
        checks.append(Check(member, "MAX_FAILURE", status, said, source))
    if delay:
        said = f"apply delayed {delay} min: a failover first applies that much redo (see the RTO on the Apply card)"
        checks.append(Check(member, "DELAY", WARN, said, source))
    return checks


def _max_connections(member: str, value, basis: Basis, source: str) -> Check:
    current = value or 1
    if basis.gap_shipping is None:
        said = f"{current}: a multi-connection run on this path would tell whether more speeds gap resolution"
        return Check(member, "MAX_CONNECTIONS", PASS, said, source)
    conns, gain, single, multi = basis.gap_shipping
    if current == 1 and gain > MULTI_CONNECTION_GAIN_PERCENT:
        said = (
            f"1: archived logs of a gap ship over one connection; run #{multi} carried {gain:.0f} % more with "
            f"{conns} connections than run #{single} with one: MAX_CONNECTIONS={min(conns, 20)}"
        )
        return Check(member, "MAX_CONNECTIONS", WARN, said, source)
    return Check(member, "MAX_CONNECTIONS", PASS, f"{current}", source)


def _sync_latency(remote: list[dict], database: dict, source: str) -> list[Check]:
    sync = [d for d in remote if d.get("status") == "VALID" and _mode_of(d) in SYNC_MODES]
    if len(sync) < 2:
        return []
    value = database.get("data_guard_sync_latency")
    if value in (None, "", "0"):
        said = (
            f"{value or 'not set'} with {len(sync)} SYNC destinations: each commit waits for the slowest, up to "
            "NET_TIMEOUT; DATA_GUARD_SYNC_LATENCY bounds the wait after the first acknowledges"
        )
        return [Check("primary", "DATA_GUARD_SYNC_LATENCY", WARN, said, source)]
    return [Check("primary", "DATA_GUARD_SYNC_LATENCY", PASS, f"{value} s", source)]
