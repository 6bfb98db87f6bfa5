"""Every ORM model, imported in one place for Alembic and create_app."""

from redolab.auth.models import ApiToken, User
from redolab.collect.models import Collection, CompressibilitySample
from redolab.core.db import Base
from redolab.disktest.models import DiskTest
from redolab.environments.models import Credential, Destination, Environment, Host, LinkTier, SharedLink
from redolab.hadr.models import HadrImport, HadrSample
from redolab.jobs.models import Job
from redolab.preflight.models import Evidence
from redolab.redo.models import RedoImport, RedoRow, StoredAnalysis
from redolab.rehearsals.models import Rehearsal
from redolab.runs.models import Run, RunEvent, RunSummary
from redolab.sweeps.models import Cluster, Schedule, Sweep
from redolab.watches.models import Notification, NotificationReceiver, Watch, WatchCheck

__all__ = [
    "ApiToken",
    "Base",
    "Cluster",
    "Collection",
    "CompressibilitySample",
    "Credential",
    "Destination",
    "DiskTest",
    "Environment",
    "Evidence",
    "HadrImport",
    "HadrSample",
    "Host",
    "Job",
    "LinkTier",
    "Notification",
    "NotificationReceiver",
    "RedoImport",
    "RedoRow",
    "Rehearsal",
    "Run",
    "RunEvent",
    "RunSummary",
    "Schedule",
    "SharedLink",
    "StoredAnalysis",
    "Sweep",
    "User",
    "Watch",
    "WatchCheck",
]
