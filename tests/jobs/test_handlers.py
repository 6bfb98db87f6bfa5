"""One interface for background work: every kind of job the services queue has a handler in the
registry, a new kind plugs in with a handler and nothing else, a job of a kind no handler knows is
failed with the reason (never left running), and the worker knows no feature's internals."""

from __future__ import annotations

import ast
import asyncio
import time
from pathlib import Path

from redolab import collect, disktest, redo, runs, sweeps, worker
from redolab.core.db import make_sessionmaker
from redolab.handlers import AFTER_RUN, DUTIES, HANDLERS
from redolab.jobs import claims
from redolab.jobs.handlers import Duty, JobContext, NothingAfter, WorkerIdentity, by_kind
from redolab.jobs.models import Job, JobStatus, WorkStatus
from redolab.worker import Worker

PACKAGE = Path(worker.__file__).resolve().parent


def _queued_kinds() -> set[str]:
    """The kinds the services write into Job(kind=...): read from the source, so a kind added
    without a handler is found here, not on a team server."""
    kinds = set()
    for package in (collect, disktest, redo, runs, sweeps):
        for path in Path(package.__file__).parent.rglob("*.py"):
            tree = ast.parse(path.read_text())
            constants = {
                target.id: node.value.value
                for node in tree.body
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                for target in node.targets
                if isinstance(target, ast.Name)
            }
            for call in ast.walk(tree):
                if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Job":
                    kind = next((k.value for k in call.keywords if k.arg == "kind"), None)
                    if kind is None:
                        kinds.add(Job.kind.default.arg)  # the column's default: a run
                    elif isinstance(kind, ast.Constant):
                        kinds.add(kind.value)
                    elif isinstance(kind, ast.Name):
                        kinds.add(constants[kind.id])
    return kinds


def test_every_kind_the_services_queue_has_a_handler():
    kinds = _queued_kinds()
    assert kinds >= {"run", "sweep", "disk", "import", "preview", "collect"}, kinds
    assert kinds <= set(HANDLERS), kinds - set(HANDLERS)
    assert all(handler.kind == kind for kind, handler in HANDLERS.items())


def test_the_worker_knows_no_feature():
    """worker.py claims, heartbeats and dispatches: it imports the registry and the job table only."""
    source = (PACKAGE / "worker.py").read_text()
    imported = {
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("redolab")
    }
    assert imported <= {
        "redolab.core.db",
        "redolab.handlers",
        "redolab.jobs",
        "redolab.jobs.handlers",
        "redolab.jobs.models",
    }, imported
    assert len(source.splitlines()) <= 150
    assert [step.what for step in AFTER_RUN] == ["rehearsal", "watch check", "cluster sum"]
    assert len({duty.name for duty in DUTIES}) == len(DUTIES)


def test_two_handlers_of_one_kind_are_refused():
    class Twin(NothingAfter):
        kind = "run"

    try:
        by_kind([*HANDLERS.values(), Twin()])
    except ValueError as error:
        assert "'run'" in str(error)
    else:
        raise AssertionError("a second handler of one kind was accepted")


class Echo(NothingAfter):
    """A new kind of job: one class, one registry entry."""

    kind = "echo"

    def __init__(self):
        self.seen: list[tuple[int, str]] = []
        self.orphans: list[int] = []

    async def execute(self, job: Job, context: JobContext) -> WorkStatus:
        context.heartbeat()
        self.seen.append((job.id, (job.options or {})["say"]))
        return WorkStatus.succeeded if job.options["say"] != "cancel" else WorkStatus.cancelled

    def orphaned(self, session, job: Job) -> None:
        self.orphans.append(job.id)
        job.error = "echo stopped"


def _queue(session, kind: str, **options) -> int:
    job = Job(kind=kind, options=options)
    session.add(job)
    session.commit()
    return job.id


def test_a_new_kind_is_one_handler_and_runs_like_any_other(session, engine):
    echo = Echo()
    sessions = make_sessionmaker(engine)
    work = Worker(sessions, secret_key="k", handlers={**HANDLERS, "echo": echo})
    said, cancelled = _queue(session, "echo", say="hello"), _queue(session, "echo", say="cancel")
    assert asyncio.run(work.run_once()) and asyncio.run(work.run_once())
    assert echo.seen == [(said, "hello"), (cancelled, "cancel")]
    session.expire_all()
    assert session.get(Job, said).status is JobStatus.done
    assert session.get(Job, cancelled).status is JobStatus.cancelled

    orphan = _queue(session, "echo", say="lost")
    with sessions() as other:
        other.get(Job, orphan).status = JobStatus.running
        other.commit()
    assert claims.fail_orphans(sessions, handlers={"echo": echo}, older_than_seconds=None) == 1
    session.expire_all()
    row = session.get(Job, orphan)
    assert echo.orphans == [orphan] and row.status is JobStatus.failed and row.error == "echo stopped"


def test_a_kind_no_handler_knows_is_failed_with_the_reason(session, engine):
    sessions = make_sessionmaker(engine)
    job_id = _queue(session, "from-a-newer-redolab")
    assert asyncio.run(Worker(sessions, secret_key="k").run_once())
    session.expire_all()
    row = session.get(Job, job_id)
    assert row.status is JobStatus.failed and "from-a-newer-redolab" in row.error
    orphan = _queue(session, "from-a-newer-redolab")
    with sessions() as other:
        other.get(Job, orphan).status = JobStatus.running
        other.commit()
    assert worker.fail_orphans(sessions, older_than_seconds=None) == 1
    session.expire_all()
    assert session.get(Job, orphan).status is JobStatus.failed and "no handler" in session.get(Job, orphan).error


def test_a_failing_duty_never_stops_the_worker_and_a_threaded_one_runs_one_at_a_time(engine):
    rounds = {"broken": 0, "slow": 0, "running": 0, "most": 0}

    def broken(_: WorkerIdentity) -> None:
        rounds["broken"] += 1
        raise RuntimeError("a schedule's bug")

    def slow(identity: WorkerIdentity) -> None:
        assert identity.worker_id == "w-duties"
        rounds["running"] += 1
        rounds["most"] = max(rounds["most"], rounds["running"])
        rounds["slow"] += 1
        time.sleep(0.3)  # longer than its period: the next round waits for this one
        rounds["running"] -= 1

    duties = [Duty("broken", 0.05, broken), Duty("slow", 0.05, slow, own_thread=True)]
    work = Worker(make_sessionmaker(engine), secret_key="k", worker_id="w-duties", handlers={}, duties=duties)

    async def until_both_came_round_again():
        task = asyncio.create_task(work.run_forever(poll_seconds=0.05))
        for _ in range(400):  # 20 s at most, on a loaded machine
            if rounds["broken"] >= 3 and rounds["slow"] >= 3:
                break
            await asyncio.sleep(0.05)
        work.stopping.set()
        await task

    asyncio.run(until_both_came_round_again())
    assert rounds["broken"] >= 3, rounds  # it kept being called after it raised
    assert rounds["slow"] >= 3 and rounds["most"] == 1, rounds  # never two rounds of one threaded duty at once
