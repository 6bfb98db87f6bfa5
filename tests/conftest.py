"""Shared fixtures: a migrated database on SQLite and on a real PostgreSQL, the app, clients."""

from __future__ import annotations

import secrets
import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from redolab.core.config import Settings
from redolab.core.db import Base, make_engine, make_sessionmaker
from redolab.core.migrate import upgrade
from redolab.main import create_app
from tests import services
from tests.factories import PASSWORD, make_user

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session", autouse=True)
def cheap_password_hashing():
    """argon2 with its cheapest parameters inside the test process. Every test user is hashed and
    every login verified, at about 160 ms each with the defaults on a 2-core machine (two minutes of
    the suite). The algorithm, the code paths and the stored format stay the same. Subprocesses
    (the CLI, `redolab serve` in the browser tests) and bench/login_flood.py keep the defaults."""
    from argon2 import PasswordHasher

    from redolab.core import security

    saved = security._hasher, security._DUMMY_HASH
    security._hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    security._DUMMY_HASH = security._hasher.hash("redolab-no-such-user")  # unknown names cost the same
    yield
    security._hasher, security._DUMMY_HASH = saved


@pytest.fixture(scope="session")
def postgres_server():
    import os

    if url := os.environ.get("REDOLAB_TEST_POSTGRES_URL"):
        yield url
        return
    server = services.start_postgres()
    if server is None:
        services.missing("PostgreSQL", "install Debian's postgresql package (make test does)")
    yield server.url
    server.stop()


def _fresh_postgres_database(server_url: str) -> str:
    name = f"redolab_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def migrated(url: str) -> str:
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def migrated_sqlite(tmp_path_factory) -> str:
    """A migrated SQLite database, for a module whose tests are the same on either database
    (it overrides `database_url`)."""
    return migrated(f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'redolab.db'}")


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request, tmp_path_factory) -> str:
    """A migrated, empty database, once per backend."""
    if request.param == "sqlite":
        return migrated_sqlite(tmp_path_factory)
    return migrated(_fresh_postgres_database(request.getfixturevalue("postgres_server")))


@pytest.fixture
def engine(database_url):
    engine = make_engine(database_url)
    yield engine
    with engine.begin() as connection:  # every test starts from empty tables
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())
    engine.dispose()


@pytest.fixture
def session(engine):
    with make_sessionmaker(engine)() as session:
        yield session


@pytest.fixture
def settings(database_url, tmp_path) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=tmp_path / "var",
        secret_key=secrets.token_urlsafe(48),
        worker_enabled=False,  # tests run jobs themselves, or start a worker explicitly
        _env_file=None,
    )


@pytest.fixture
def app(settings, engine):
    return create_app(settings)


@pytest.fixture
def anonymous(app):
    with TestClient(app, follow_redirects=False) as client:
        yield client


@pytest.fixture
def user(session):
    return make_user(session, "alice")


def log_in(client: TestClient, username: str, password: str = PASSWORD):
    """Log in through the HTML form; afterwards the client sends the CSRF header like app.js."""
    client.get("/login")
    response = client.post("/login", data={"username": username, "password": password})
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
    return response


@pytest.fixture
def browser_client(app, user):
    """A client with a logged-in session cookie, as the browser has."""
    with TestClient(app, follow_redirects=False) as client:
        response = log_in(client, user.username)
        assert response.status_code == 303
        yield client


@pytest.fixture
def api_client(app, user):
    """A client authenticated with a bearer token only (no cookies)."""
    with TestClient(app, follow_redirects=False) as client:
        response = client.post("/api/v1/auth/token", data={"username": user.username, "password": PASSWORD})
        assert response.status_code == 200, response.text
        client.headers["Authorization"] = f"Bearer {response.json()['access_token']}"
        yield client


@pytest.fixture(scope="session")
def sshd():
    server = services.start_sshd()
    if server is None:
        services.missing("OpenSSH server", "install Debian's openssh-server package (make test does)")
    yield server
    server.stop()


@pytest.fixture
def secret_key(app) -> str:
    return app.state.secret_key
