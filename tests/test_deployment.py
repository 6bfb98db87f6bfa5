"""Deployment files: the compose file is valid and refuses to start without its secrets."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from redolab.core.config import PROJECT_ROOT
from tests import services


def _compose(env: dict[str, str]):
    tool = shutil.which("docker-compose")
    if tool is None:
        services.missing("docker-compose", "install Debian's docker-compose package (make test does)")
    clean = {k: v for k, v in os.environ.items() if k not in ("POSTGRES_PASSWORD", "REDOLAB_SECRET_KEY")}
    return subprocess.run(
        [tool, "-f", str(PROJECT_ROOT / "docker-compose.yml"), "config"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        cwd="/",
        timeout=60,
    )


def test_compose_config_is_valid_with_secrets():
    result = _compose(
        {
            "POSTGRES_PASSWORD": "pw-for-test",
            "REDOLAB_SECRET_KEY": "k" * 8 + "Zq3v9LwR7xT1mKp4Hs8Nc2Bf6Yd0",
        }
    )
    assert result.returncode == 0, result.stderr
    assert "postgresql+psycopg://redolab:pw-for-test@db:5432/redolab" in result.stdout
    assert "service_healthy" in result.stdout
    services = yaml.safe_load(result.stdout)["services"]
    web = [name for name, s in services.items() if s.get("command", [])[1:2] == ["serve"]]
    workers = [name for name, s in services.items() if s.get("command", [])[1:2] == ["worker"]]
    assert len(web) == 2 and len(workers) == 2  # two web processes, two job workers, one database
    for name in web + workers:
        assert services[name]["environment"]["REDOLAB_DATABASE_URL"].startswith("postgresql+psycopg://")
        assert any(
            v.startswith("redolab-data:/data") or v.get("target") == "/data"
            if isinstance(v, dict)
            else v.startswith("redolab-data:/data")
            for v in services[name]["volumes"]
        )
    for name in web:  # the workers run the jobs; the web processes only serve
        assert services[name]["environment"]["REDOLAB_WORKER_ENABLED"] == "false"
        assert "ports" not in services[name]  # reached through the proxy only
    nginx = (PROJECT_ROOT / "deploy" / "nginx.conf").read_text()
    assert all(f"server {name}:8000" in nginx for name in web) and "client_max_body_size 0" in nginx


@pytest.mark.parametrize("missing", ["POSTGRES_PASSWORD", "REDOLAB_SECRET_KEY"])
def test_compose_refuses_missing_secret(missing):
    env = {"POSTGRES_PASSWORD": "pw", "REDOLAB_SECRET_KEY": "s" * 40}
    del env[missing]
    result = _compose(env)
    assert result.returncode != 0
    assert missing in result.stderr


def test_dockerfile_runs_as_non_root_and_builds_assets():
    text = Path(PROJECT_ROOT / "Dockerfile").read_text()
    assert "USER redolab" in text
    assert "npm ci" in text
    assert "HEALTHCHECK" in text
    assert "musl-tools" in text and "make check" in text  # the static probe is built and tested
    assert "npm run --silent build" in text  # plotly.js, htmx from the npm registry at build time, no CDN


def test_plotly_js_is_the_version_plotly_py_writes_figures_for():
    """The browser's plotly.js (the npm registry's cartesian bundle, 1.5 MB instead of the full 4.8) is the
    release plotly.py bundles: figures from the server use its attributes."""
    import json
    import re
    from importlib.resources import files

    full = (files("plotly") / "package_data" / "plotly.min.js").read_text(errors="ignore")[:4000]
    bundled = re.search(r"plotly\.js v(\d+\.\d+\.\d+)", full).group(1)
    package = json.loads((PROJECT_ROOT / "frontend" / "package.json").read_text())
    assert package["dependencies"]["plotly.js-cartesian-dist-min"] == bundled
    served = (PROJECT_ROOT / "frontend" / "static" / "vendor" / "plotly.min.js").read_text(errors="ignore")[:4000]
    assert f"plotly.js (cartesian - minified) v{bundled}" in served


def test_no_cdn_and_no_committed_vendor_files():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert not [path for path in tracked if "/vendor/" in path or "node_modules" in path]
    for path in tracked:
        if path.startswith(("frontend/", "backend/")) and Path(PROJECT_ROOT / path).is_file():
            text = Path(PROJECT_ROOT / path).read_text(errors="ignore")
            for cdn in ("cdn.jsdelivr", "unpkg.com", "cdnjs.", "//cdn."):
                assert cdn not in text, (path, cdn)
