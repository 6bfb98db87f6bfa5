"""What an import's reader and row kind are, in the words a DBA uses for the export (the reader's own
names, "awr-miner" or "awr-stat", stay in the database and the JSON API)."""

from __future__ import annotations

# fmt: off
FORMAT_WORDS = {
    "auto": "as detected",
    "csv": "comma-separated (CSV)",
    "semicolon": "semicolon-separated",
    "pipe": "separated by |",
    "tab": "tab-separated",
    "delimited": "a delimited export (CSV)",
    "sqlplus": "SQL*Plus output",
    "awr-report": "an AWR report",
    "awr-miner": "AWR Miner output",
    "db2-snapshot": "a Db2 database snapshot",
    "db2-archive-listing": "a Db2 archived log listing",
    "db2logscan": "db2logscan output",
}
KIND_WORDS = {
    "archived-log": "one row per archived log",
    "volume": "redo volume per period",
    "awr-snapshot": "redo size per AWR snapshot",
    "awr-stat": "one row per AWR statistic and snapshot",
    "awr-profile": "redo per hour of the day",
    "db2-log-counters": "Db2 log counters per interval",
    "db2-archive-listing": "one row per archived log",
    "db2logscan": "log records per interval",
    "mixed": "several kinds of rows",
}
# fmt: on


def format_words(fmt: str) -> str:
    """A reader's name (or several, comma-joined) in words; an unknown name as it is."""
    return ", ".join(FORMAT_WORDS.get(name.strip(), name.strip()) for name in fmt.split(",") if name.strip())


def source_words(fmt: str, kind: str) -> str:
    """'SQL*Plus output, one row per archived log': what a preview or an import was read as."""
    return f"{format_words(fmt)}, {KIND_WORDS.get(kind, kind)}"
