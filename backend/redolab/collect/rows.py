"""The typed rows each collection step gives, and the columns its script selects, in order.

Times are the database host's wall clock as the database wrote it (Oracle DATE has no zone; Db2's
CURRENT TIMESTAMP and history times are local): naive datetimes, read in the environment's zone later,
as uploads are. Sizes are bytes, Db2 log sizes 4 KiB pages, rates bytes per second.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class DatabaseFacts:
    dbid: int
    name: str
    db_unique_name: str | None
    database_role: str
    platform_name: str | None
    log_mode: str
    force_logging: str
    version: str
    db_time_zone: str | None
    host_utc_offset: str | None  # SYSTIMESTAMP's offset when collected: the clock of V$ARCHIVED_LOG's dates
    protection_mode: str | None  # MAXIMUM PERFORMANCE | MAXIMUM AVAILABILITY | MAXIMUM PROTECTION | UNPROTECTED
    data_guard_sync_latency: str | None  # seconds, as V$PARAMETER has it ("0": wait up to NET_TIMEOUT)


@dataclass(frozen=True)
class Instance:
    inst_id: int
    instance_number: int
    instance_name: str
    host_name: str | None
    thread: int
    status: str | None
    version: str | None


@dataclass(frozen=True)
class DatabaseSize:
    datafile_bytes: int
    tempfile_bytes: int
    controlfile_datafile_bytes: int  # V$DATAFILE: every container's files, as an instantiation copies them


@dataclass(frozen=True)
class DatafileRow:
    file_id: int
    tablespace_name: str
    bytes: int | None  # DBA_DATA_FILES.BYTES: NULL when the file is not available
    bigfile: str  # DBA_TABLESPACES.BIGFILE: YES or NO


@dataclass(frozen=True)
class RedoLogGroup:
    log_type: str  # ONLINE or STANDBY
    thread: int
    group: int
    bytes: int
    members: int | None
    status: str | None


@dataclass(frozen=True)
class ArchiveDest:
    dest_id: int
    dest_name: str | None
    status: str
    target: str | None
    destination: str | None
    transmit_mode: str | None
    affirm: str | None
    valid_role: str | None
    db_unique_name: str | None
    net_timeout: int | None  # seconds a SYNC commit waits on the destination before it is abandoned
    compression: str | None  # ENABLE | DISABLE | ZLIB | LZO
    reopen_secs: int | None  # seconds before a failed destination is tried again (0: never)
    max_failure: int | None  # retries before the destination is given up (0: no limit)
    max_connections: int | None  # parallel connections for archived-log (gap) shipping
    delay_mins: int | None  # apply delay on the standby
    alternate: str | None  # the destination that takes over when this one fails ("NONE")


@dataclass(frozen=True)
class ArchivedLog:
    thread: int
    sequence: int
    resetlogs_id: int
    dest_id: int
    first_time: datetime
    next_time: datetime
    blocks: int
    block_size: int

    @property
    def bytes(self) -> int:
        return self.blocks * self.block_size


@dataclass(frozen=True)
class ArchivedLogName:
    """An archived log still on disk, with its name (a path, or an ASM name starting with '+')."""

    thread: int
    sequence: int
    first_time: datetime
    next_time: datetime
    blocks: int
    block_size: int
    name: str

    @property
    def bytes(self) -> int:
        return self.blocks * self.block_size


@dataclass(frozen=True)
class AwrMetric:
    begin_time: datetime
    end_time: datetime
    instance_number: int
    metric_name: str
    average: float  # bytes per second, the snapshot's average
    maxval: float  # bytes per second, the largest sample in the snapshot


@dataclass(frozen=True)
class AwrStat:
    snap_id: int
    instance_number: int
    begin_interval_time: datetime
    end_interval_time: datetime
    stat_name: str
    value: int  # the counter's delta over the snapshot: bytes ('redo size') or a count ('redo writes')


@dataclass(frozen=True)
class Db2LogCapture:
    snapshot_time: datetime
    member: int
    log_writes: int  # 4 KiB pages written since activation
    num_log_write_io: int
    log_write_time: int  # milliseconds


@dataclass(frozen=True)
class Db2Config:
    dbpartitionnum: int
    name: str
    value: str | None


@dataclass(frozen=True)
class Db2ArchivedLog:
    dbpartitionnum: int
    start_time: datetime
    end_time: datetime
    operation_type: str | None
    first_log: str
    location: str | None


# Column kinds: int, float, text, time (optional ones end with '?': NULL allowed)
Columns = tuple[tuple[str, str], ...]

STEP_COLUMNS: dict[str, tuple[type, Columns]] = {
    "database": (DatabaseFacts, (
        ("DBID", "int"), ("NAME", "text"), ("DB_UNIQUE_NAME", "text?"), ("DATABASE_ROLE", "text"),
        ("PLATFORM_NAME", "text?"), ("LOG_MODE", "text"), ("FORCE_LOGGING", "text"), ("VERSION", "text"),
        ("DB_TIME_ZONE", "text?"), ("HOST_UTC_OFFSET", "text?"), ("PROTECTION_MODE", "text?"),
        ("DATA_GUARD_SYNC_LATENCY", "text?"),
    )),
    "instances": (Instance, (
        ("INST_ID", "int"), ("INSTANCE_NUMBER", "int"), ("INSTANCE_NAME", "text"), ("HOST_NAME", "text?"),
        ("THREAD#", "int"), ("STATUS", "text?"), ("VERSION", "text?"),
    )),
    "size": (DatabaseSize, (
        ("DATAFILE_BYTES", "int"), ("TEMPFILE_BYTES", "int"), ("CONTROLFILE_DATAFILE_BYTES", "int"),
    )),
    "datafiles": (DatafileRow, (
        ("FILE_ID", "int"), ("TABLESPACE_NAME", "text"), ("BYTES", "int?"), ("BIGFILE", "text"),
    )),
    "redo_logs": (RedoLogGroup, (
        ("LOG_TYPE", "text"), ("THREAD#", "int"), ("GROUP#", "int"), ("BYTES", "int"), ("MEMBERS", "int?"),
        ("STATUS", "text?"),
    )),
    "archive_dests": (ArchiveDest, (
        ("DEST_ID", "int"), ("DEST_NAME", "text?"), ("STATUS", "text"), ("TARGET", "text?"),
        ("DESTINATION", "text?"), ("TRANSMIT_MODE", "text?"), ("AFFIRM", "text?"), ("VALID_ROLE", "text?"),
        ("DB_UNIQUE_NAME", "text?"), ("NET_TIMEOUT", "int?"), ("COMPRESSION", "text?"), ("REOPEN_SECS", "int?"),
        ("MAX_FAILURE", "int?"), ("MAX_CONNECTIONS", "int?"), ("DELAY_MINS", "int?"), ("ALTERNATE", "text?"),
    )),
    "archived_log": (ArchivedLog, (
        ("THREAD#", "int"), ("SEQUENCE#", "int"), ("RESETLOGS_ID", "int"), ("DEST_ID", "int"),
        ("FIRST_TIME", "time"), ("NEXT_TIME", "time"), ("BLOCKS", "int"), ("BLOCK_SIZE", "int"),
    )),
    "archived_log_names": (ArchivedLogName, (
        ("THREAD#", "int"), ("SEQUENCE#", "int"), ("FIRST_TIME", "time"), ("NEXT_TIME", "time"), ("BLOCKS", "int"),
        ("BLOCK_SIZE", "int"), ("NAME", "text"),
    )),
    "awr_sysmetric": (AwrMetric, (
        ("BEGIN_TIME", "time"), ("END_TIME", "time"), ("INSTANCE_NUMBER", "int"), ("METRIC_NAME", "text"),
        ("AVERAGE", "float"), ("MAXVAL", "float"),
    )),
    "awr_sysstat": (AwrStat, (
        ("SNAP_ID", "int"), ("INSTANCE_NUMBER", "int"), ("BEGIN_INTERVAL_TIME", "time"),
        ("END_INTERVAL_TIME", "time"), ("STAT_NAME", "text"), ("VALUE", "int"),
    )),
    "db2_transaction_log": (Db2LogCapture, (
        ("SNAPSHOT_TIME", "time"), ("MEMBER", "int"), ("LOG_WRITES", "int"), ("NUM_LOG_WRITE_IO", "int"),
        ("LOG_WRITE_TIME", "int"),
    )),
    "db2_config": (Db2Config, (("DBPARTITIONNUM", "int"), ("NAME", "text"), ("VALUE", "text?"))),
    "db2_archived_logs": (Db2ArchivedLog, (
        ("DBPARTITIONNUM", "int"), ("START_TIME", "time"), ("END_TIME", "time"), ("OPERATIONTYPE", "text?"),
        ("FIRSTLOG", "text"), ("LOCATION", "text?"),
    )),
}  # fmt: skip
