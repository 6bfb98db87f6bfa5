"""Background work of redo history: large imports and large previews, each read in a worker's
thread (blocking database and file work stays off the worker's event loop)."""

from __future__ import annotations

import asyncio

from sqlalchemy.orm import Session

from redolab.jobs.handlers import Duty, JobContext, NothingAfter
from redolab.jobs.models import Job, WorkStatus
from redolab.redo import imports, preview_jobs


def _ended(done: bool) -> WorkStatus:
    return WorkStatus.succeeded if done else WorkStatus.failed


class ImportHandler(NothingAfter):
    """Writes a staged import's rows with progress; made visible with its analysis, or removed."""

    kind = imports.KIND

    async def execute(self, job: Job, context: JobContext) -> WorkStatus:
        return _ended(await asyncio.to_thread(imports.execute_import, context.sessions, job.id, context.heartbeat))

    def orphaned(self, session: Session, job: Job) -> None:
        imports.discard_orphan(session, job)


class PreviewHandler(NothingAfter):
    """Reads a large upload in a child process and keeps the preview for the page to poll."""

    kind = preview_jobs.KIND

    async def execute(self, job: Job, context: JobContext) -> WorkStatus:
        # waits on the preview's child process: in a thread
        done = await asyncio.to_thread(preview_jobs.execute_preview, context.sessions, job.id, context.heartbeat)
        return _ended(done)

    def orphaned(self, session: Session, job: Job) -> None:
        preview_jobs.discard_orphan(job)


# An import staged in a request whose process stopped (a job's import ends with its job, above).
ABANDONED_IMPORTS = Duty("abandoned imports", 10.0, lambda worker: imports.discard_abandoned(worker.sessions))
