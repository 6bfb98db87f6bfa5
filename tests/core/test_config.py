import stat

import pydantic
import pytest

from redolab.core.config import ConfigError, Settings


def make(tmp_path, **kwargs):
    return Settings(data_dir=tmp_path, _env_file=None, **kwargs)


def test_development_generates_and_keeps_a_secret(tmp_path):
    first = make(tmp_path).resolve_secret_key()
    second = make(tmp_path).resolve_secret_key()
    assert first == second
    assert len(first) >= 32
    assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600


def test_production_requires_a_secret(tmp_path):
    with pytest.raises(ConfigError, match="REDOLAB_SECRET_KEY is required"):
        make(tmp_path, env="production").resolve_secret_key()
    assert not (tmp_path / "secret_key").exists()


@pytest.mark.parametrize("weak", ["changeme", "short-key", "a" * 40, "abcabcabcabcabcabcabcabcabcabcabcabc"])
def test_production_refuses_weak_secrets(tmp_path, weak):
    with pytest.raises(ConfigError, match="too weak"):
        make(tmp_path, env="production", secret_key=weak).resolve_secret_key()


def test_production_accepts_strong_secret(tmp_path):
    strong = "Zq3v9LwR7xT1mKp4Hs8Nc2Bf6Yd0Ue5Gj"
    assert make(tmp_path, env="production", secret_key=strong).resolve_secret_key() == strong


def test_default_database_is_sqlite_under_data_dir(tmp_path):
    assert make(tmp_path).resolved_database_url == f"sqlite:///{tmp_path.resolve() / 'redolab.db'}"


def test_environment_variables_are_read(tmp_path, monkeypatch):
    monkeypatch.setenv("REDOLAB_PORT", "9001")
    monkeypatch.setenv("REDOLAB_DATABASE_URL", "postgresql+psycopg://u@h/db")
    settings = make(tmp_path)
    assert settings.port == 9001
    assert settings.resolved_database_url == "postgresql+psycopg://u@h/db"


def test_env_example_documents_every_setting():
    from redolab.core.config import PROJECT_ROOT

    text = (PROJECT_ROOT / ".env.example").read_text()
    for field in Settings.model_fields:
        assert f"REDOLAB_{field.upper()}=" in text, field


def test_web_threads_bound_the_threads_answering_requests(settings, engine):
    """REDOLAB_WEB_THREADS sets how many requests run at once in a process (the rest wait their turn)."""
    import anyio.to_thread
    from fastapi.testclient import TestClient

    from redolab.main import create_app

    assert Settings().web_threads == 4
    for threads in (1, 6):
        app = create_app(settings.model_copy(update={"web_threads": threads}))
        with TestClient(app) as client:
            tokens = client.portal.call(lambda: anyio.to_thread.current_default_thread_limiter().total_tokens)
            assert tokens == threads
            assert client.get("/healthz").status_code == 200
    with pytest.raises(pydantic.ValidationError):
        Settings(web_threads=0)
