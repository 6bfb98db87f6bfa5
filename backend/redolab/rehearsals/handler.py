"""Background work of rehearsals: they are runs (queued together over node pairs); what is their own
is storing the measured figures once the last run has ended."""

from __future__ import annotations

from redolab.rehearsals.service import record_result
from redolab.runs.handler import AfterRun

RECORD_RESULT = AfterRun(
    "rehearsal", lambda session, run: record_result(session=session, rehearsal_id=run.rehearsal_id)
)
