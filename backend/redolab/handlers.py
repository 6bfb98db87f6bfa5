"""The registry of background work: every kind of job and the handler that runs it, and the duties
a worker repeats. A new kind of job is a handler in its feature's `handler.py` and one line here."""

from __future__ import annotations

from redolab.collect.handler import DUE_COLLECTIONS, CollectionHandler
from redolab.disktest.handler import DiskHandler
from redolab.jobs.handlers import by_kind
from redolab.redo.handler import ABANDONED_IMPORTS, ImportHandler, PreviewHandler
from redolab.rehearsals.handler import RECORD_RESULT
from redolab.runs.handler import RunHandler
from redolab.sweeps.handler import CLUSTER_SUM, DUE_SCHEDULES, SweepHandler
from redolab.watches.handler import DELIVERIES, DUE_WATCHES, JUDGE_CHECK

AFTER_RUN = (RECORD_RESULT, JUDGE_CHECK, CLUSTER_SUM)  # as each run ends, in this order

HANDLERS = by_kind(
    [
        RunHandler(AFTER_RUN),
        SweepHandler(AFTER_RUN),
        DiskHandler(),
        ImportHandler(),
        PreviewHandler(),
        CollectionHandler(),
    ]
)
DUTIES = (ABANDONED_IMPORTS, DUE_SCHEDULES, DUE_COLLECTIONS, DUE_WATCHES, DELIVERIES)
