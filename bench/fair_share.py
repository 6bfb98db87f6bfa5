#!/usr/bin/env python3
"""/healthz while a team floods the previews, and staged bytes while it sends refused uploads.

Starts `redolab serve` (SQLite, a fresh data directory, four users), then:

  quiet     /healthz alone for a few seconds (the baseline)
  previews  20 previews of a 50 MiB archived-log CSV and four worst-case archives (a .tar.gz of four
            members as large as redo/archive.py allows: its total unpacked bound), all sent at once by
            four users; a preview answered 503 (the preview slots are full) is sent again after its
            Retry-After. Meanwhile /healthz is polled every 50 ms and the resident memory of the server
            and all its processes (forkserver, preview children) is sampled every 100 ms.
  refused   the bytes staged in the uploads directory, then 20 uploads of just under 256 MiB that the
            preview refuses (binary data), then the bytes staged again: they must not grow.

    python3 -m uv run python bench/fair_share.py [--previews 20] [--size-mib 50] [--archives 4]

Targets (issue 33): /healthz p95 < 200 ms and max < 1 s during the previews; no growth of staged
bytes. The generated files are kept in --cache between runs. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import multiprocessing
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "backend"))

from redo_import import generate  # noqa: E402  (bench/redo_import.py: the archived-log CSV generator)

from redolab.redo.archive import MAX_MEMBER_BYTES, MAX_TOTAL_BYTES  # noqa: E402

PASSWORD = "violet tractor sonnet"
USERS = ("alice", "bob", "carol", "dave")
MIB = 1024 * 1024
ROW_BYTES = 66  # about one generated archived-log line


# -- the files ------------------------------------------------------------------------------------
def csv_of(path: Path, size: int) -> Path:
    if not path.exists() or abs(path.stat().st_size - size) > size // 10:
        generate(path, size // ROW_BYTES)
    return path


def worst_archive(cache: Path) -> Path:
    """Four members of min(the per-member bound, the total bound / 4) each: the most unpacking and
    parsing one archive may ask for within redo/archive.py's bounds (.tar.gz)."""
    member_bytes = min(MAX_MEMBER_BYTES, MAX_TOTAL_BYTES // 4) - MIB
    target = cache / f"worst-{member_bytes // MIB}MiBx4.tar.gz"
    if target.exists():
        return target
    member = csv_of(cache / f"member-{member_bytes // MIB}.csv", member_bytes)
    with gzip.open(target, "wb", compresslevel=6) as packed, tarfile.open(fileobj=packed, mode="w") as archive:
        for index in range(4):
            archive.add(member, arcname=f"collect/opdb__archlogs__{index}.csv")
    return target


def refused_file(cache: Path) -> Path:
    """Just under the 256 MiB upload limit (with the multipart framing), binary: the preview refuses it."""
    target = cache / "refused-binary.bin"
    size = 256 * MIB - 64 * 1024
    if not target.exists() or target.stat().st_size != size:
        block = os.urandom(MIB)
        with open(target, "wb") as out:
            for _ in range(size // MIB):
                out.write(block)
            out.write(block[: size % MIB])
    return target


# -- the server -----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(data_dir: Path) -> tuple[subprocess.Popen, int]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env |= {"REDOLAB_DATA_DIR": str(data_dir), "REDOLAB_WORKER_ENABLED": "false"}
    found = os.environ.get("UV") or shutil.which("uv")  # `uv run` names itself in $UV
    command = [*([found] if found else ["python3", "-m", "uv"]), "run", "--project", str(ROOT), "redolab"]
    for name in USERS:
        subprocess.run(
            [*command, "user", "create", name, "--password-stdin", "--role", "operator"],
            input=PASSWORD + "\n",
            text=True,
            env=env,
            check=True,
            capture_output=True,
        )
    port = free_port()
    log = open(data_dir / "serve.log", "wb")  # noqa: SIM115  (the server's, for as long as it runs)
    server = subprocess.Popen([*command, "serve", "--port", str(port)], env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if request(port, "GET", "/healthz", timeout=5)[0] == 200:
                return server, port
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit(f"redolab serve did not start:\n{(data_dir / 'serve.log').read_text()[-3000:]}")


def request(port: int, method: str, path: str, body: bytes = b"", headers=None, timeout=60) -> tuple[int, bytes, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request(method, path, body, headers or {})
    answer = connection.getresponse()
    return answer.status, answer.read(), dict(answer.getheaders())


def log_in(port: int, name: str) -> dict[str, str]:
    body = f"username={name}&password={PASSWORD.replace(' ', '+')}".encode()
    status, answer, _ = request(
        port, "POST", "/api/v1/auth/token", body, {"Content-Type": "application/x-www-form-urlencoded"}
    )
    if status != 200:
        raise SystemExit(f"log-in of {name} failed: {status} {answer[:200]!r}")
    return {"Authorization": f"Bearer {json.loads(answer)['access_token']}"}


def make_environment(port: int, auth: dict[str, str]) -> int:
    body = json.dumps({"name": f"fair share {secrets.token_hex(3)}"}).encode()
    status, answer, _ = request(
        port, "POST", "/api/v1/environments", body, {**auth, "Content-Type": "application/json"}
    )
    if status != 201:
        raise SystemExit(f"creating the environment failed: {status} {answer[:300]!r}")
    return json.loads(answer)["id"]


def send_file(port: int, auth: dict[str, str], environment_id: int, path: Path) -> tuple[int, dict]:
    """POST the file as multipart, streamed from disk; (status, Retry-After header or {})."""
    boundary = secrets.token_hex(16)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    connection.putrequest("POST", f"/api/v1/environments/{environment_id}/redo/preview")
    for key, value in {**auth, "Content-Type": f"multipart/form-data; boundary={boundary}",
                       "Content-Length": str(len(head) + path.stat().st_size + len(tail))}.items():  # fmt: skip
        connection.putheader(key, value)
    connection.endheaders()
    connection.send(head)
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(MIB), b""):
            connection.send(block)
    connection.send(tail)
    answer = connection.getresponse()
    answer.read()
    return answer.status, {"retry_after": answer.getheader("Retry-After")}


# -- measuring ------------------------------------------------------------------------------------
def tree_rss_bytes(pid: int) -> int:
    """Resident bytes of `pid` and every process below it (the server, its forkserver, the children)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += rss.get(current, 0)
        todo.extend(children.get(current, ()))
    return total


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def poll_health(port: int, stop, results) -> None:
    """In a process of its own (the senders' threads would delay its timing in this one): poll
    /healthz every 50 ms until `stop`, then put the latencies (inf: failed) on `results`."""
    latencies = []
    while not stop.is_set():
        started = time.perf_counter()
        try:
            status = request(port, "GET", "/healthz", timeout=60)[0]
            latencies.append(time.perf_counter() - started if status == 200 else float("inf"))
        except OSError:
            latencies.append(float("inf"))
        time.sleep(0.05)
    results.put(latencies)


def sample_rss(pid: int, stop, results) -> None:
    """In a process of its own: the peak resident bytes of `pid` and its descendants, every 100 ms."""
    peak = 0
    while not stop.is_set():
        peak = max(peak, tree_rss_bytes(pid))
        time.sleep(0.1)
    results.put(peak)


class Watch:
    """/healthz latencies and the server's peak RSS, measured by two processes while a phase runs."""

    def __init__(self, port: int, server_pid: int) -> None:
        context = multiprocessing.get_context("fork")
        self.stop, self.health, self.rss = context.Event(), context.Queue(), context.Queue()
        self.processes = [context.Process(target=poll_health, args=(port, self.stop, self.health)),
                          context.Process(target=sample_rss, args=(server_pid, self.stop, self.rss))]  # fmt: skip
        for process in self.processes:
            process.start()

    def finish(self) -> tuple[list[float], int]:
        self.stop.set()
        latencies, peak = self.health.get(timeout=120), self.rss.get(timeout=120)
        for process in self.processes:
            process.join(timeout=30)
        return latencies, peak


def staged_bytes(upload_dir: Path) -> int:
    """Every byte under the uploads directory (staged files, their sidecars, unpacking directories)."""
    return sum(p.stat().st_size for p in upload_dir.rglob("*") if p.is_file()) if upload_dir.is_dir() else 0


def health_line(name: str, latencies: list[float]) -> str:
    finite = [x for x in latencies if x != float("inf")] or [float("nan")]
    ms = {
        k: 1000 * v
        for k, v in (("p50", statistics.median(finite)), ("p95", percentile(finite, 0.95)), ("max", max(finite)))
    }
    return (
        f"{name:8} /healthz n={len(latencies):,} p50 {ms['p50']:.1f} ms  p95 {ms['p95']:.1f} ms  "
        f"max {ms['max']:.1f} ms  failed {len(latencies) - len(finite)}"
    )


def send_until_answered(port, auth, environment_id, path, answers: Counter, lock, times: list[float]) -> None:
    started, busy = time.perf_counter(), 0
    while True:
        status, headers = send_file(port, auth, environment_id, path)
        if status != 503:
            break
        busy += 1
        time.sleep(float(headers["retry_after"] or 5))
    with lock:
        answers[f"{path.name}: {status}"] += 1
        answers[f"{path.name}: 503 then sent again"] += busy
        times.append(time.perf_counter() - started)


def flood(port: int, server_pid: int, senders: list[tuple[dict, Path]], environment_id: int, name: str) -> None:
    lock, answers, times = threading.Lock(), Counter(), []
    watch = Watch(port, server_pid)
    started = time.perf_counter()
    threads = [
        threading.Thread(target=send_until_answered, args=(port, auth, environment_id, path, answers, lock, times))
        for auth, path in senders
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies, peak = watch.finish()
    print(health_line(name, latencies))
    print(
        f"{'':8} {len(senders)} uploads answered in {elapsed:.1f} s (each {min(times):.1f} to {max(times):.1f} s); "
        f"peak RSS of the server and its processes {peak / MIB:,.0f} MiB"
    )
    for key, count in sorted(answers.items()):
        if count:
            print(f"{'':8}   {key} x {count}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--previews", type=int, default=20)
    parser.add_argument("--size-mib", type=int, default=50)
    parser.add_argument("--archives", type=int, default=4)
    parser.add_argument("--refused", type=int, default=20)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "redolab-fair-share")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    csv = csv_of(args.cache / f"archived-logs-{args.size_mib}MiB.csv", args.size_mib * MIB)
    archive = worst_archive(args.cache)
    refused = refused_file(args.cache)
    print(
        f"files: {csv.name} {csv.stat().st_size / MIB:.1f} MiB; {archive.name} {archive.stat().st_size / MIB:.1f} MiB "
        f"(unpacks to {4 * (min(MAX_MEMBER_BYTES, MAX_TOTAL_BYTES // 4) - MIB) / MIB:,.0f} MiB); "
        f"{refused.name} {refused.stat().st_size / MIB:.2f} MiB; {os.cpu_count()} CPUs"
    )
    with tempfile.TemporaryDirectory() as data_dir:
        server, port = start(Path(data_dir))
        try:
            auths = [log_in(port, name) for name in USERS]
            environment_id = make_environment(port, auths[0])
            watch = Watch(port, server.pid)
            time.sleep(5)
            latencies, _ = watch.finish()
            print(health_line("quiet", latencies), f" RSS {tree_rss_bytes(server.pid) / MIB:,.0f} MiB")
            files = [csv] * args.previews + [archive] * args.archives
            senders = [(auths[index % len(auths)], path) for index, path in enumerate(files)]
            flood(port, server.pid, senders, environment_id, "previews")
            upload_dir = Path(data_dir) / "uploads"
            before = staged_bytes(upload_dir)
            flood(
                port,
                server.pid,
                [(auths[i % len(auths)], refused) for i in range(args.refused)],
                environment_id,
                "refused",
            )
            after = staged_bytes(upload_dir)
            print(
                f"staged bytes before the {args.refused} refused uploads {before / MIB:,.1f} MiB, after "
                f"{after / MIB:,.1f} MiB (growth {(after - before) / MIB:+,.1f} MiB)"
            )
        finally:
            server.terminate()
            server.wait(timeout=60)
            log = args.cache / "serve.log"
            shutil.copyfile(Path(data_dir) / "serve.log", log)
            errors = log.read_text(errors="replace").count("Traceback")
            print(f"server log: {log} ({errors} traceback(s))")


if __name__ == "__main__":
    main()
