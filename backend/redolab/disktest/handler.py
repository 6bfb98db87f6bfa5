"""Background work of disk tests: one `redoprobe disk` per write size on the standby's host."""

from __future__ import annotations

from sqlalchemy.orm import Session

from redolab.core.db import utcnow
from redolab.disktest.models import DiskTest
from redolab.disktest.service import KIND, DiskExecution
from redolab.jobs.handlers import JobContext, NothingAfter
from redolab.jobs.models import Job, WorkStatus


class DiskHandler(NothingAfter):
    kind = KIND

    async def execute(self, job: Job, context: JobContext) -> WorkStatus:
        execution = DiskExecution(context.sessions, context.secret_key, job.disk_test_id, context.heartbeat)
        return WorkStatus.succeeded if await execution.execute() else WorkStatus.failed

    def orphaned(self, session: Session, job: Job) -> None:
        """The sizes measured so far are kept; the test says why it stopped."""
        test = session.get(DiskTest, job.disk_test_id) if job.disk_test_id is not None else None
        if test is not None and test.status in ("queued", "running"):
            test.status, test.finished_at = "failed", utcnow()
            test.error = f"the worker running it ({job.worker_id}) stopped; the sizes measured so far are kept"
