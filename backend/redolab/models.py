"""Every ORM model, imported in one place for Alembic and create_app."""

from redolab.auth.models import User
from redolab.core.db import Base
from redolab.environments.models import Environment, Host

__all__ = ["Base", "Environment", "Host", "User"]
