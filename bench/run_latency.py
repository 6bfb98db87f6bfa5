#!/usr/bin/env python3
"""Time from Run to the first interval, over real SSH on loopback, and the worker's cost.

Starts a real OpenSSH sshd on 127.0.0.1 and `redolab serve` (SQLite, in-process worker), sets up
an environment through the API (credential, hosts, pinned host keys), deploys the probe with one
warm-up run, then measures:

  1. API: POST /runs -> first client interval stored (polled every 20 ms), median of N.
  2. Browser: click Run in headless Chromium -> first point drawn on the live chart, median of N.
  3. Worker overhead: CPU time of the redolab process per stored probe event, on a run with a
     0.1 s interval (client and server events both stored).

    python3 bench/run_latency.py [--repetitions 5]

Prints figures; asserts nothing. Needs sshd, Chromium and a built redoprobe (make test installs them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2 as httpx  # noqa: E402  (the maintained httpx fork starlette uses)
from tests import services  # noqa: E402

PASSWORD = "bench password 123"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_finished(client: httpx.Client, run_id: int, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get(f"/api/v1/runs/{run_id}").json()
        if run["status"] in ("succeeded", "failed", "cancelled"):
            return run
        time.sleep(0.1)
    raise RuntimeError(f"run {run_id} did not finish")


def set_up(client: httpx.Client, sshd: services.SshServer) -> tuple[int, int, int]:
    env = client.post("/api/v1/environments", json={"name": "bench"}).json()
    base = f"/api/v1/environments/{env['id']}"
    credential = client.post(
        f"{base}/credentials", json={"name": "k", "kind": "uploaded_key", "private_key": sshd.client_key}
    ).json()
    ids = []
    for role, name in (("primary", "p1"), ("standby", "s1")):
        host = client.post(
            f"{base}/hosts",
            json={
                "role": role,
                "name": name,
                "ssh_address": "127.0.0.1",
                "ssh_port": sshd.port,
                "ssh_user": sshd.user,
                "credential_id": credential["id"],
            },
        ).json()
        client.put(f"{base}/hosts/{host['id']}/host-key", json={"fingerprint": sshd.host_key_fingerprint})
        ids.append(host["id"])
    return env["id"], ids[0], ids[1]


def api_latency(client, env_id, client_id, server_id, repetitions) -> list[float]:
    samples = []
    for _ in range(repetitions):
        started = time.monotonic()
        run = client.post(
            f"/api/v1/environments/{env_id}/runs",
            json={
                "client_host_id": client_id,
                "server_host_id": server_id,
                "duration_seconds": 2,
                "interval_seconds": 0.5,
            },
        ).json()
        while True:
            events = client.get(f"/api/v1/runs/{run['id']}/events").json()
            if any(e["role"] == "client" and e["event"] == "interval" for e in events):
                samples.append(time.monotonic() - started)
                break
            time.sleep(0.02)
        wait_finished(client, run["id"])
    return samples


def browser_latency(url, env_id, repetitions) -> list[float]:
    from playwright.sync_api import sync_playwright
    from tests.test_browser import CHROMIUM_ARGS, chromium_path

    samples = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"{url}/login")
        page.fill("#f-username", "admin")
        page.fill("#f-password", PASSWORD)
        page.click("button:has-text('Log in')")
        page.wait_for_url(f"{url}/environments")
        for _ in range(repetitions):
            page.goto(f"{url}/environments/{env_id}")
            page.fill("#r-duration_seconds", "2 s")
            page.fill("#r-interval_seconds", "0.5 s")
            started = time.monotonic()
            page.click("#run-button")
            try:
                page.wait_for_function(
                    "() => { const e = document.querySelector('#throughput-chart');"
                    " return e && Number(e.dataset.drawn) >= 1; }",
                    timeout=30_000,
                )
            except Exception:
                page.screenshot(path=str(Path(tempfile.gettempdir()) / "bench-timeout.png"), full_page=True)
                raise
            samples.append(time.monotonic() - started)
            page.wait_for_selector("#summary", timeout=60_000)
        browser.close()
    return samples


def worker_overhead(client, server, env_id, client_id, server_id) -> tuple[float, int, float]:
    before = cpu_seconds(server.process.pid)
    run = client.post(
        f"/api/v1/environments/{env_id}/runs",
        json={
            "client_host_id": client_id,
            "server_host_id": server_id,
            "duration_seconds": 10,
            "interval_seconds": 0.1,
        },
    ).json()
    finished = wait_finished(client, run["id"])
    used = cpu_seconds(server.process.pid) - before
    events = client.get(f"/api/v1/runs/{run['id']}/events").json()
    return used, len(events), finished["bytes_per_second"] or 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    sshd = services.start_sshd()
    if sshd is None:
        print("sshd is not installed (apt-get install openssh-server)", file=sys.stderr)
        return 1
    data = Path(tempfile.mkdtemp(prefix="redolab-bench-"))
    subprocess.run(
        [str(services.REDOLAB), "user", "create", "admin", "--role", "admin", "--password-stdin"],
        input=PASSWORD + "\n",
        text=True,
        env=services.redolab_env(data),
        cwd=data,
        check=True,
        capture_output=True,
    )
    server = services.start_redolab(data)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            token = client.post("/api/v1/auth/token", data={"username": "admin", "password": PASSWORD}).json()
            client.headers["Authorization"] = f"Bearer {token['access_token']}"
            env_id, client_id, server_id = set_up(client, sshd)
            warm = client.post(
                f"/api/v1/environments/{env_id}/runs",
                json={
                    "client_host_id": client_id,
                    "server_host_id": server_id,
                    "duration_seconds": 1,
                    "interval_seconds": 0.5,
                },
            )
            if warm.status_code != 201:
                raise RuntimeError(f"cannot start a run: {warm.status_code} {warm.text}")
            warm = warm.json()
            warmed = wait_finished(client, warm["id"])
            print(f"# warm-up run (deploys the probe over SFTP): {warmed['status']}")
            api = api_latency(client, env_id, client_id, server_id, args.repetitions)
            print(
                f"API: POST /runs -> first interval stored: median {statistics.median(api):.2f} s, "
                f"max {max(api):.2f} s over {len(api)} runs (interval 0.5 s, so >= 0.5 s by design)"
            )
            screen = browser_latency(server.url, env_id, args.repetitions)
            print(
                f"Browser: click Run -> first point on the live chart: median {statistics.median(screen):.2f} s, "
                f"max {max(screen):.2f} s over {len(screen)} runs (page polls every 0.25 s until the first interval)"
            )
            used, events, rate = worker_overhead(client, server, env_id, client_id, server_id)
            print(
                f"Worker: {used:.2f} CPU s for {events} stored events at 0.1 s interval = "
                f"{1000 * used / max(events, 1):.2f} CPU ms per event (run moved {rate / 2**20:.0f} MiB/s)"
            )
    finally:
        server.stop()
        sshd.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
