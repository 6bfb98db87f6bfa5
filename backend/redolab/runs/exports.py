"""Runs as files: CSV with base units in the column names, and JSON documents; SYNC runs carry their
acknowledgement latency and standby write time from the stored end events."""

from __future__ import annotations

import csv
import io

from sqlalchemy import select

from redolab.core.responses import csv_cell
from redolab.core.units import byte_rate_to_mbit
from redolab.runs.models import ProbeMode, Run, RunEvent
from redolab.runs.parsers.redoprobe import ProbeOutputError, run_metrics
from redolab.runs.schemas import RunPublic

# SYNC runs: the acknowledgement latency (p50/p95/p99 from the probe's histogram) and the standby's
# write time per message (with a write directory): what the plan's SYNC card uses.
SYNC_COLUMNS = [
    "ack_count",
    "ack_avg_seconds",
    "ack_p50_seconds",
    "ack_p95_seconds",
    "ack_p99_seconds",
    "standby_write_seconds_per_message",
]


def sync_numbers(session, runs: list[Run]) -> dict[int, dict]:
    """Run id -> SYNC numbers, for the SYNC runs among `runs` (from their stored end events)."""
    ids = [r.id for r in runs if r.mode is ProbeMode.sync]
    if not ids:
        return {}
    query = select(RunEvent.run_id, RunEvent.line).where(
        RunEvent.run_id.in_(ids), RunEvent.role == "client", RunEvent.event == "end"
    )
    numbers = {}
    for run_id, line in session.execute(query):
        try:
            metrics = run_metrics([line])
        except ProbeOutputError:
            continue
        numbers[run_id] = {
            "ack_count": metrics.ack_count,
            "ack_avg_seconds": metrics.ack_avg_seconds,
            "ack_p50_seconds": metrics.ack_p50_seconds,
            "ack_p95_seconds": metrics.ack_p95_seconds,
            "ack_p99_seconds": metrics.ack_p99_seconds,
            "standby_write_seconds_per_message": metrics.write_seconds_per_message,
        }
    return numbers


RUN_COLUMNS = [
    "id",
    "environment_id",
    "sweep_id",
    "sweep_point",
    "repetition",
    "label",
    "tags",
    "status",
    "client_host_name",
    "server_host_name",
    "mode",
    "conns",
    "message_bytes",
    "sockbuf_bytes",
    "kernel_max_bytes",
    "duration_seconds",
    "rate_bits_per_second",
    "bytes_per_second",
    "mbit_per_second",
    "bytes_received",
    "seconds",
    "retransmits",
    "sndbuf_granted_bytes",
    "rcvbuf_granted_bytes",
    "client_mtu_bytes",
    "server_mtu_bytes",
    "client_tcp_rmem",
    "client_tcp_wmem",
    "server_tcp_rmem",
    "server_tcp_wmem",
    "client_congestion_control",
    "probe_version",
    "source",
    "source_name",
    "created_at",
    "started_at",
    "failure_reason",
    *SYNC_COLUMNS,
]


def csv_row(run: Run, sync: dict[int, dict]) -> list:
    client, server = run.client_settings or {}, run.server_settings or {}
    derived = {
        **{column: sync.get(run.id, {}).get(column) for column in SYNC_COLUMNS},
        "tags": " ".join(run.tags or []),
        "mbit_per_second": round(byte_rate_to_mbit(run.bytes_per_second), 3) if run.bytes_per_second else None,
        "client_mtu_bytes": client.get("mtu_bytes"),
        "server_mtu_bytes": server.get("mtu_bytes"),
        "client_tcp_rmem": " ".join(map(str, client.get("tcp_rmem") or [])),
        "client_tcp_wmem": " ".join(map(str, client.get("tcp_wmem") or [])),
        "server_tcp_rmem": " ".join(map(str, server.get("tcp_rmem") or [])),
        "server_tcp_wmem": " ".join(map(str, server.get("tcp_wmem") or [])),
        "client_congestion_control": client.get("tcp_congestion_control"),
        "created_at": run.created_at.isoformat(),
        "started_at": run.started_at.isoformat() if run.started_at else None,
    }
    row = []
    for column in RUN_COLUMNS:
        value = derived[column] if column in derived else getattr(run, column)
        row.append(csv_cell(value.value if hasattr(value, "value") else value))
    return row


def runs_csv(runs: list[Run], sync: dict[int, dict]) -> str:
    """Runs as CSV: base units in the column names (bytes, seconds, bit/s), one run per row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(RUN_COLUMNS)
    writer.writerows(csv_row(run, sync) for run in runs)
    return buffer.getvalue()


def run_documents(runs: list[Run], sync: dict[int, dict]) -> list[dict]:
    """Runs for a JSON export, each SYNC run with its `sync` numbers (seconds)."""
    return [{**RunPublic.model_validate(run).model_dump(mode="json"), "sync": sync.get(run.id)} for run in runs]
