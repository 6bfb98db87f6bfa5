"""Every ORM model, imported in one place for Alembic and create_app."""

from redolab.auth.models import ApiToken, User
from redolab.core.db import Base
from redolab.environments.models import Credential, Environment, Host
from redolab.jobs.models import Job
from redolab.probes.models import Run, RunEvent

__all__ = [
    "ApiToken",
    "Base",
    "Credential",
    "Environment",
    "Host",
    "Job",
    "Run",
    "RunEvent",
    "User",
]
