"""A rehearsal as the JSON API returns it (the rehearsals' and the plan's routes share it)."""

from __future__ import annotations

from redolab.rehearsals import service
from redolab.rehearsals.models import Rehearsal
from redolab.rehearsals.schemas import RehearsalPublic


def rehearsal_public(session, rehearsal: Rehearsal) -> RehearsalPublic:
    return RehearsalPublic(
        id=rehearsal.id,
        environment_id=rehearsal.environment_id,
        status=service.status(rehearsal),
        failure_reason=service.failure(rehearsal),
        window_kind=rehearsal.window_kind,
        window_start=rehearsal.window_start,
        window_end=rehearsal.window_end,
        window_label=rehearsal.window_label,
        granularity_seconds=rehearsal.granularity_seconds,
        granularity=rehearsal.granularity,
        imports=rehearsal.imports,
        notes=list(rehearsal.notes or []),
        threads=rehearsal.threads,
        mode=rehearsal.mode,
        message_bytes=rehearsal.message_bytes,
        scale=rehearsal.scale,
        speedup=rehearsal.speedup,
        compressed=rehearsal.speedup > 1,
        slot_seconds=rehearsal.slot_seconds,
        across_hops=rehearsal.across_hops,
        cap_bits_per_second=rehearsal.cap_bits_per_second,
        cap_label=rehearsal.cap_label or "",
        schedule_sha256=rehearsal.schedule_sha256,
        schedule_bytes=rehearsal.schedule_bytes,
        schedule_seconds=rehearsal.schedule_seconds,
        run_ids=[run.id for run in rehearsal.runs],
        result=service.current_result(session=session, rehearsal=rehearsal),
        label=rehearsal.label,
        requested_by=rehearsal.requested_by,
        created_at=rehearsal.created_at,
        status_url=f"/api/v1/rehearsals/{rehearsal.id}",
        schedule_url=f"/api/v1/rehearsals/{rehearsal.id}/schedule",
    )
