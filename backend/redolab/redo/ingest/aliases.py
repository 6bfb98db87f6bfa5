"""The column names each field of a redo row goes by in the exports seen in the wild (collectors'
SQL, AWR extracts, SQL*Plus spools, Db2 listings), normalised: upper case, letters and digits only."""

from __future__ import annotations

# Target field -> column names seen in the wild (normalised: upper case, letters and digits only).
ALIASES: dict[str, tuple[str, ...]] = {
    "thread": ("THREAD", "THREADNUM", "THREADNO", "INSTANCENUMBER", "INSTNUM", "INSTANCE"),
    "sequence": ("SEQUENCE", "SEQ", "SEQUENCENUM", "LOGSEQUENCE"),
    "resetlogs": ("RESETLOGSID", "RESETLOGSCHANGE", "RESETLOGS"),
    "dest_id": ("DESTID", "DEST"),
    "inst_id": ("INSTID",),
    "first_time": (
        "FIRSTTIME",
        "LOGSTART",
        "BEGINTIME",
        "STARTTIME",
        "BEGININTERVALTIME",
        "SNAPBEGIN",
        "PERIOD",
        "PERIODSTART",
        "DAY",
        "DATE",
        "TIME",
        "HOURSTART",
        "LOGSTARTDATE",
        "LOGDATE",
        "SNAPTIME",
    ),
    "next_time": ("NEXTTIME", "LOGEND", "ENDTIME", "ENDINTERVALTIME", "SNAPEND", "PERIODEND"),
    "hour": ("HOUR", "HR", "HH", "HH24", "HO", "HOUROFDAY"),
    "bytes": ("BYTES", "REDOBYTES", "SIZEBYTES", "REDOSIZE", "REDOSIZEBYTES"),
    "mb": ("MB", "MBYTES", "SIZEMB", "REDOMB", "MBGENERATED"),
    "gb": ("GB", "GBYTES", "SIZEGB", "REDOGB"),
    "blocks": ("BLOCKS",),
    "block_size": ("BLOCKSIZE",),
    "seconds": ("SEC", "SECS", "SECONDS", "DURATION", "ELAPSED"),
    "writes": ("REDOWRITES", "WRITES"),
    "stat_name": ("STATNAME", "METRICNAME", "NAME"),
    "value": (
        "VALUE",
        "DELTA",
        "AVERAGE",
        "AVG",
        "AVERAGEVALUE",
        "AVGVALUE",
        "AVGREDOPERSEC",
        "AVERAGEREDOPERSEC",
        "AVGREDOBYTESPERSEC",
        "AVGBYTESPERSEC",
    ),
    "max_value": (
        "MAXVAL",
        "MAXVALUE",
        "MAX",
        "MAXIMUM",
        "MAXREDOPERSEC",
        "MAXREDOBYTESPERSEC",
        "MAXBYTESPERSEC",
        "PEAKREDOPERSEC",
    ),
    # a percentile column of an hour-of-day profile (PERCENTILE_CONT(0.95) ... AS P95)
    "percentile": (
        "REDOGENPERSECPERC95",  # the DMA collector's percentile pivot (awrhistsysmetrichist_rs), bytes/s
        "P95",
        "PERC95",
        "PCT95",
        "PERCENTILE95",
        "P99",
        "PERC99",
        "PCT99",
        "PERCENTILE99",
        "P90",
        "PERC90",
        "PERCENTILE",
        "P95REDOPERSEC",
        "P99REDOPERSEC",
    ),
    "snap_id": ("SNAPID",),
}

FIELDS = tuple(ALIASES)

# Each field in the words of the exports' own documentation (V$ARCHIVED_LOG, DBA_HIST_SYSSTAT,
# DBA_HIST_SYSMETRIC_SUMMARY, Db2 log listings): what the mapping form shows; the field's name is
# only a hint beside it. Sizes name their unit (an Oracle MB is 1,048,576 bytes).
LABELS: dict[str, str] = {
    "thread": "Thread (redo thread or instance)",
    "sequence": "Log sequence number",
    "resetlogs": "Resetlogs id (incarnation)",
    "dest_id": "Archive destination",
    "inst_id": "Instance that listed the row (GV$ views)",
    "first_time": "Log start time",
    "next_time": "Log end time",
    "hour": "Hour of day (0–23)",
    "bytes": "Size in bytes",
    "mb": "Size in MiB (Oracle MB)",
    "gb": "Size in GiB (Oracle GB)",
    "blocks": "Size in redo blocks",
    "block_size": "Redo block size (bytes)",
    "seconds": "Duration (seconds)",
    "writes": "Redo writes (count)",
    "stat_name": "Statistic or metric name",
    "value": "Value (delta or average rate)",
    "max_value": "Maximum rate",
    "percentile": "Percentile rate (p90, p95, p99)",
    "snap_id": "AWR snapshot id",
}
