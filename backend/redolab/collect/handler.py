"""Background work of collection: redo history read from the database over the host's SSH, and the
collection schedules fired when due."""

from __future__ import annotations

from sqlalchemy.orm import Session

from redolab.collect.execution import CollectionExecution
from redolab.collect.service import KIND, fail_orphaned_collection, fire_due_collections
from redolab.jobs.handlers import Duty, JobContext, NothingAfter
from redolab.jobs.models import Job, WorkStatus


class CollectionHandler(NothingAfter):
    kind = KIND

    async def execute(self, job: Job, context: JobContext) -> WorkStatus:
        options = job.options or {}
        outcome = await CollectionExecution(
            context.sessions,
            context.secret_key,
            int(options.get("collection_id", 0)),
            heartbeat=context.heartbeat,
            shutting_down=context.shutting_down,
            upload_dir=options.get("upload_dir"),
        ).execute()
        return WorkStatus(outcome) if outcome in ("succeeded", "cancelled") else WorkStatus.failed

    def orphaned(self, session: Session, job: Job) -> None:
        fail_orphaned_collection(session, job)


DUE_COLLECTIONS = Duty("collection schedules", 5.0, lambda worker: fire_due_collections(worker.sessions))
