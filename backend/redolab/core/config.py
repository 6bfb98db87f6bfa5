"""Settings, read once from REDOLAB_* environment variables (and ./.env)."""

from __future__ import annotations

import secrets
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from redolab.core.units import MIB

# Root of the source tree: backend/redolab/core/config.py -> parents[3].
PROJECT_ROOT = Path(__file__).resolve().parents[3]

GIB = 1024 * MIB

# Secrets that show up in tutorials and .env.example files; never accepted in production.
WEAK_SECRETS = frozenset({"changeme", "change-me", "secret", "redolab", "password", "dev"})
MIN_SECRET_LENGTH = 32


class RuntimeEnv(StrEnum):
    development = "development"
    production = "production"


class ConfigError(RuntimeError):
    """A setting is missing or unsafe; the message names the variable."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="REDOLAB_", env_file=".env", env_file_encoding="utf-8", extra="ignore")

    env: RuntimeEnv = RuntimeEnv.development
    data_dir: Path = Path("var")
    database_url: str | None = None
    secret_key: SecretStr | None = None
    bind: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    cookie_secure: bool = False
    session_max_age_seconds: int = Field(default=12 * 3600, ge=60)  # absolute: a login lasts at most this
    session_idle_seconds: int = Field(default=2 * 3600, ge=60)  # a session unused this long ends
    token_max_age_seconds: int = Field(default=3600, ge=60)
    max_upload_bytes: int = Field(default=256 * MIB, ge=MIB)  # one redo history upload
    upload_max_age_seconds: int = Field(default=6 * 3600, ge=60)  # previews never imported are removed after this
    # Staged uploads (previewed, not yet imported) on the data directory's disk: per user, in all, and the
    # space an upload must leave free. When space is short, previews unused this long are removed early.
    upload_quota_per_user_bytes: int = Field(default=2 * GIB, ge=MIB)
    upload_quota_total_bytes: int = Field(default=10 * GIB, ge=MIB)
    upload_free_space_floor_bytes: int = Field(default=1 * GIB, ge=0)
    upload_early_prune_seconds: int = Field(default=15 * 60, ge=0)
    # Uploads read at once (previews, and imports small enough to be read in the request) per web
    # process and per user; beyond them the answer is 503 with Retry-After, never a wait for a page thread.
    max_concurrent_previews: int = Field(default=2, ge=1, le=64)
    max_previews_per_user: int = Field(default=1, ge=1, le=64)
    # Test connection, the host-key scan and Measure encryption hold an SSH session while the page waits:
    # at most this many at once per web process and per user (503 with Retry-After beyond), one per host.
    max_concurrent_host_checks: int = Field(default=4, ge=1, le=64)
    max_host_checks_per_user: int = Field(default=1, ge=1, le=64)
    # Reading an upload for its preview (unpacking, parsing) runs in a child process under these bounds:
    # CPU seconds (the kernel stops it), address space in bytes (an allocation beyond fails), and wall-clock
    # seconds (waiting on a disk, say). With the defaults, four worst-case previews stay under 8 GiB. Import
    # jobs read their files under the same CPU bound.
    preview_cpu_seconds: int = Field(default=60, ge=1, le=24 * 3600)
    preview_memory_bytes: int = Field(default=2 * GIB, ge=256 * MIB)
    preview_wall_seconds: int = Field(default=300, ge=10, le=24 * 3600)
    preview_job_bytes: int = Field(default=64 * MIB, ge=0)  # uploads above this: previewed by a worker (a job)
    # Fair queues (issue 33): queued runs and sweeps per user and per host pair, a user's active
    # schedules, and a sweep's planned time (points x repetitions x (duration + set-up)), each
    # refused before anything is written. "This machine" writes a run's write_dir only under
    # local_write_root (default: <data_dir>/probe-writes), and only when connections x the probe's
    # wrap size fit its free space.
    max_queued_per_user: int = Field(default=20, ge=1, le=100_000)
    max_queued_per_host_pair: int = Field(default=20, ge=1, le=100_000)
    max_active_schedules_per_user: int = Field(default=10, ge=1, le=10_000)
    max_sweep_seconds: int = Field(default=24 * 3600, ge=60, le=366 * 86400)
    # The schedules a user's rehearsals keep (one stored copy each; a day of two threads in 100 ms
    # slots is some 40 MB): past it a rehearsal is refused (413) until an admin deletes old ones.
    rehearsal_schedules_per_user_bytes: int = Field(default=1 * GIB, ge=MIB)
    local_write_root: Path | None = None
    login_workers: int = Field(default=2, ge=1, le=32)  # threads that check passwords (argon2: ~64 MiB each)
    # threads per web process answering pages and API calls (requests beyond them wait their turn)
    web_threads: int = Field(default=4, ge=1, le=64)
    # origins besides the request's own Host that may post the login form (a reverse proxy's public URL)
    trusted_origins: list[str] = []
    # addresses of reverse proxies whose X-Forwarded-For/-Proto are believed (uvicorn's forwarded_allow_ips);
    # empty: the socket's peer is the client, as without a proxy
    forwarded_allow_ips: str = ""
    auto_migrate: bool = True
    worker_enabled: bool = True
    chromium: str | None = None  # prints the plan report as PDF; default: chromium on the PATH
    # the plan report's paper: A4 or Letter; empty: Letter where the server's locale prints on Letter, else A4
    report_paper: str | None = None
    # the built manual served at /manual/ (`make manual` builds it); empty: frontend/manual in the source tree
    manual_dir: Path | None = None
    # Link watches (issue 37). /metrics answers only with `Authorization: Bearer <metrics_token>`; empty:
    # /metrics is off (404). public_url: how links in notifications reach redolab (behind its proxy).
    metrics_token: SecretStr | None = None
    public_url: str = "http://127.0.0.1:8000"
    # Notification mail: the SMTP server (STARTTLS when smtp_starttls), its login, the sender address
    smtp_host: str | None = None
    smtp_port: int = Field(default=587, ge=1, le=65535)
    smtp_starttls: bool = True
    smtp_user: str | None = None
    smtp_password: SecretStr | None = None
    smtp_from: str = "redolab@localhost"
    # Webhook, Slack and Teams receivers admins may add: URLs (e.g. https://hooks.slack.com/services/),
    # compared by scheme, host, port and normalised path (watches.targets). Empty: any http(s) URL whose
    # host is a public address; loopback, private and link-local ones only when an entry names them.
    webhook_allow: list[str] = []
    notification_timeout_seconds: float = Field(default=5.0, ge=0.5, le=60)  # one delivery attempt

    @field_validator("report_paper")
    @classmethod
    def _known_paper(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if value.strip().lower() not in ("a4", "letter"):
            raise ValueError(f"REDOLAB_REPORT_PAPER is {value[:40]!r}: set A4 or Letter")
        return value.strip()

    @field_validator("webhook_allow")
    @classmethod
    def _allow_entries_are_urls(cls, value: list[str]) -> list[str]:
        for entry in value:
            parts = urlsplit(entry.strip())
            if parts.scheme.lower() not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
                raise ValueError(
                    f"REDOLAB_WEBHOOK_ALLOW entry {entry[:100]!r}: give an http(s) URL such as https://host/path/"
                )
            if parts.query or parts.fragment:
                raise ValueError(f"REDOLAB_WEBHOOK_ALLOW entry {entry[:100]!r}: leave out the query and fragment")
            try:
                parts.port  # noqa: B018  (raises ValueError on a port that is not a number in range)
            except ValueError:
                raise ValueError(f"REDOLAB_WEBHOOK_ALLOW entry {entry[:100]!r}: the port is not a number") from None
        return [entry.strip() for entry in value]

    @property
    def upload_dir(self) -> Path:
        """Uploaded history files between preview and import."""
        return self.data_dir / "uploads"

    @property
    def resolved_local_write_root(self) -> Path:
        """Where runs on "This machine" may write (their write_dir must be inside)."""
        return (self.local_write_root or self.data_dir / "probe-writes").resolve()

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'redolab.db').resolve()}"

    def resolve_secret_key(self) -> str:
        """Return the secret key, generating one into data_dir in development.

        In production the key must come from REDOLAB_SECRET_KEY and be strong.
        """
        if self.secret_key is not None:
            value = self.secret_key.get_secret_value()
            if self.env is RuntimeEnv.production:
                check_secret_strength(value)
            return value
        if self.env is RuntimeEnv.production:
            raise ConfigError(
                "REDOLAB_SECRET_KEY is required when REDOLAB_ENV=production: "
                'generate one with: python3 -c "import secrets; print(secrets.token_urlsafe(48))"'
            )
        path = self.data_dir / "secret_key"
        if path.exists():
            return path.read_text().strip()
        path.parent.mkdir(parents=True, exist_ok=True)
        value = secrets.token_urlsafe(48)
        path.touch(mode=0o600)
        path.write_text(value + "\n")
        return value


def check_secret_strength(value: str) -> None:
    if len(value) < MIN_SECRET_LENGTH or value.lower() in WEAK_SECRETS or len(set(value)) < 10:
        raise ConfigError(
            f"REDOLAB_SECRET_KEY is too weak for production: use at least {MIN_SECRET_LENGTH} "
            'random characters (python3 -c "import secrets; print(secrets.token_urlsafe(48))")'
        )


@lru_cache
def get_settings() -> Settings:
    return Settings()
