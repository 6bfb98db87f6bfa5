"""HADR monitoring as the JSON API sends it (units in the keys)."""

from __future__ import annotations

from datetime import datetime

from redolab.hadr.models import HadrSample
from redolab.hadr.pairs import PairView


def pair_json(view: PairView) -> dict:
    largest = view.largest_current_gap
    return {
        "pair": view.label,
        "sides": sorted(side.lower() for side in view.sides),
        "captures": len(view.samples),
        "largest_current_log_gap_bytes": largest[0] if largest else None,
        "largest_current_log_gap_at": largest[1].isoformat() if largest else None,
        "largest_current_log_gap_side": largest[2] if largest else None,
        "latest_current_log_gap_bytes": view.latest_current_gap_bytes,
        "largest_running_average_log_gap_bytes": view.largest_running_average_bytes,
        "latest_running_average_log_gap_bytes": view.latest_running_average_bytes,
        "hadr_wait_per_log_write": [
            {
                "basis": w.basis,
                "seconds_per_write": w.seconds_per_write,
                "log_writes": w.writes,
                "explanation": w.explanation,
            }
            for w in view.waits
        ],
        "settings": {side.lower(): values for side, values in view.settings.items()},
        "mismatches": [
            {"setting": m.setting, "primary": m.primary, "standby": m.standby, "why": m.why} for m in view.mismatches
        ],
        "warnings": view.warnings,
    }


def sample_json(at: datetime, s: HadrSample, name: str) -> dict:
    return {
        "at": at.isoformat(),
        "file": name,
        "line": s.line,
        "member": s.member,
        "database": s.database,
        "role": s.role,
        "state": s.state,
        "sync_mode": s.sync_mode,
        "connect_status": s.connect_status,
        "current_log_gap_bytes": s.current_gap_bytes,
        "running_average_log_gap_bytes": s.log_gap_bytes,
        "standby_recv_buf_percent": s.recv_buf_percent,
        "primary_log_file": s.primary_file,
        "primary_log_position": s.primary_position,
        "standby_log_file": s.standby_file,
        "standby_log_position": s.standby_position,
    }
