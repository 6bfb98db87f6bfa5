"""Build, change, inspect and remove the lab on this machine (root only).

Every host is a network namespace with a management interface on a bridge of this machine (SSH
to its own OpenSSH sshd) and a data interface, a TUN device owned by the delay line. The state
(what was made, and the processes' ids) is kept in <data dir>/lab/state.json so `status`, `set`
and `down` work from any later command. Keys live in <data dir>/lab/keys and survive `down`, so a
host keeps its host key (and its pin in redolab) from one `up` to the next.

Commands run as argument lists, never through a shell; every name and address comes from
topology.py, none from the user.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from redolab.lab.topology import (
    BRIDGE,
    BRIDGE_ADDRESS,
    DATA_DEVICE,
    FIRST_DESTINATION,
    MANAGEMENT_DEVICE,
    NAMESPACE_PREFIX,
    TXQUEUELEN,
    Lab,
    LabError,
    LabHost,
    Shape,
    check_destinations,
)

SOURCE_DIR = Path(__file__).resolve().parent
DEVICE_PREFIX = "rlab"  # BRIDGE, bridge ports rlab-*, TUN devices rlabd-* (topology.py)
DELAYLINE = SOURCE_DIR / "redolab-delayline"
SSHD = Path("/usr/sbin/sshd")


# -- where things are -----------------------------------------------------------------------------
class Paths:
    def __init__(self, data_dir: Path) -> None:
        self.root = (data_dir / "lab").resolve()
        self.keys = self.root / "keys"
        self.run = self.root / "run"
        self.state = self.root / "state.json"
        self.params = self.run / "delayline.params"
        self.stats = self.run / "delayline.stats"
        self.client_key = self.keys / "client_ed25519"

    def host_key(self, host: LabHost) -> Path:
        return self.keys / f"{host.name}_ed25519"


def require_root() -> None:
    if os.geteuid() != 0:
        raise LabError(
            "redolab lab needs root: it makes network namespaces, a bridge and TUN devices and starts "
            "an sshd per host. Run it as root (for example: sudo redolab lab up)."
        )
    missing = [tool for tool in ("ip", "ssh-keygen") if shutil.which(tool) is None]
    if not SSHD.exists():
        missing.append(str(SSHD))
    if missing:
        raise LabError(
            f"redolab lab needs {', '.join(missing)}: install iproute2 and openssh-server (apt-get install ...)"
        )
    if not Path("/dev/net/tun").exists():
        raise LabError("redolab lab needs /dev/net/tun (the tun kernel module): modprobe tun")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise LabError(f"ip {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done


def _in_namespace(namespace: str, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", namespace, *command], capture_output=True, text=True)


def delayline_binary() -> Path:
    """The delay line, built from its source with make when missing or older than the source."""
    source = SOURCE_DIR / "delayline.c"
    if not DELAYLINE.exists() or DELAYLINE.stat().st_mtime < source.stat().st_mtime:
        if shutil.which("make") is None or shutil.which(os.environ.get("CC", "gcc")) is None:
            raise LabError(
                f"the delay line is not built and make or gcc is missing: build it with make -C {SOURCE_DIR}"
            )
        made = subprocess.run(["make", "-s", "-C", str(SOURCE_DIR)], capture_output=True, text=True)
        if made.returncode != 0:
            raise LabError(f"building the delay line failed: {made.stderr.strip()[-400:]}")
    return DELAYLINE


# -- state ------------------------------------------------------------------------------------------
def load(paths: Paths) -> Lab | None:
    if not paths.state.exists():
        return None
    return Lab.from_json(json.loads(paths.state.read_text()))


def _save(paths: Paths, lab: Lab) -> None:
    temporary = paths.state.with_suffix(".tmp")
    temporary.write_text(json.dumps(lab.to_json(), indent=2))
    temporary.replace(paths.state)


def _alive(pid: int | None, marker: str) -> bool:
    """Is `pid` running and is it ours (its command line contains `marker`)?"""
    if not pid:
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return marker in command and state != "Z"


def _stop(pid: int | None, marker: str) -> None:
    if not _alive(pid, marker):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid, marker):
        time.sleep(0.05)
    if _alive(pid, marker):
        os.kill(pid, signal.SIGKILL)


def lab_namespaces() -> list[str]:
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(NAMESPACE_PREFIX)]


def lab_devices() -> list[str]:
    """This machine's own lab devices: the bridge, the bridge ports (veth ends) and the TUN devices."""
    out = _ip("-o", "link", "show", check=False).stdout
    names = (line.split(":", 2)[1].strip().split("@")[0] for line in out.splitlines() if line.count(":") >= 2)
    return [name for name in names if name.startswith(DEVICE_PREFIX)]


# -- keys -------------------------------------------------------------------------------------------
def keygen(path: Path, comment: str) -> None:
    """An ed25519 key pair without passphrase at `path` (kept when it already exists)."""
    if path.exists():
        return
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
    )


def _prepare_keys(paths: Paths, lab: Lab) -> None:
    paths.keys.mkdir(parents=True, exist_ok=True, mode=0o700)
    paths.run.mkdir(parents=True, exist_ok=True, mode=0o700)
    keygen(paths.client_key, "redolab-lab-client")
    (paths.keys / "authorized_keys").write_text(paths.client_key.with_suffix(".pub").read_text())
    for host in lab.hosts:
        keygen(paths.host_key(host), f"redolab-{host.name}")


def host_key_line(paths: Paths, host: LabHost) -> str:
    return " ".join(paths.host_key(host).with_suffix(".pub").read_text().split()[:2])


# -- up ---------------------------------------------------------------------------------------------
def up(paths: Paths, lab: Lab) -> Lab:
    """Build the lab; on any failure remove whatever was made and raise (the machine is left as it was)."""
    require_root()
    current = load(paths)
    if current is not None and _alive(current.delayline_pid, "redolab-delayline"):
        raise LabError("the lab is already up: `redolab lab set` changes it, `redolab lab down` removes it")
    down(paths)  # leftovers of a lab whose processes died (a reboot, a kill)
    binary = delayline_binary()
    _prepare_keys(paths, lab)
    _save(paths, lab)  # from here on, `down` knows what to remove
    try:
        _build(paths, lab, binary)
    except BaseException:
        down(paths)
        raise
    _save(paths, lab)
    return lab


def _build(paths: Paths, lab: Lab, binary: Path) -> None:
    _ip("link", "add", BRIDGE, "type", "bridge")
    _ip("addr", "add", f"{BRIDGE_ADDRESS}/24", "dev", BRIDGE)
    _ip("link", "set", BRIDGE, "up")
    for host in lab.hosts:
        _ip("netns", "add", host.namespace)
        _ip("-n", host.namespace, "link", "set", "lo", "up")
        _ip("link", "add", host.bridge_port, "type", "veth", "peer", "name", MANAGEMENT_DEVICE, "netns", host.namespace)
        _ip("link", "set", host.bridge_port, "master", BRIDGE, "up")
        _ip("-n", host.namespace, "addr", "add", f"{host.management_address}/24", "dev", MANAGEMENT_DEVICE)
        _ip("-n", host.namespace, "link", "set", MANAGEMENT_DEVICE, "up")

    started: dict[str, subprocess.Popen] = {}
    paths.params.write_text(lab.shape.params_line())
    command = [str(binary), "--params", str(paths.params), "--stats", str(paths.stats)]
    command += [part for device in delayline_devices(lab) for part in ("--dev", device)]
    with open(paths.run / "delayline.log", "w") as log:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
    lab.delayline_pid = process.pid
    _save(paths, lab)
    ready, _, _ = select.select([process.stdout], [], [], 10)
    line = process.stdout.readline() if ready else b""
    process.stdout.close()
    if line.strip() != b"ready":
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2)  # let an exiting delay line finish its message; `down` stops a hung one
        raise LabError(f"the delay line did not start: {(paths.run / 'delayline.log').read_text().strip()}")

    for host in lab.hosts:
        _ip("link", "set", host.tun_name, "netns", host.namespace)
        _ip("-n", host.namespace, "link", "set", host.tun_name, "name", DATA_DEVICE)
        _ip("-n", host.namespace, "addr", "add", f"{host.data_address}/24", "dev", DATA_DEVICE)
        _ip(
            "-n",
            host.namespace,
            "link",
            "set",
            DATA_DEVICE,
            "mtu",
            str(lab.shape.mtu_bytes),
            "txqueuelen",
            str(TXQUEUELEN),
            "up",
        )
        started[host.name] = _start_sshd(paths, host)
        host.sshd_pid = started[host.name].pid  # `ip netns exec` execs sshd: the same process
        _save(paths, lab)
    for host in lab.hosts:
        _wait_for_ssh(paths, host, started[host.name])


def delayline_devices(lab: Lab) -> list[str]:
    """The delay line's --dev values: NAME:P|S:IPV4, and :RTT_US for an extra destination's host (its
    own path; the others follow the parameters' RTT, which `lab set --rtt` changes)."""
    devices = []
    for host in lab.hosts:
        own_rtt = f":{round(lab.rtt_of(host) * 1e6)}" if host.destination else ""
        devices.append(f"{host.tun_name}:{host.side}:{host.data_address}{own_rtt}")
    return devices


def sshd_config(*, address: str, port: int, host_key: Path, pid_file: Path, authorized_keys: Path) -> str:
    """An sshd_config for a private sshd: one listen address, public keys only, no PAM."""
    return (
        f"Port {port}\nListenAddress {address}\nHostKey {host_key}\nPidFile {pid_file}\n"
        f"AuthorizedKeysFile {authorized_keys}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
        "Subsystem sftp internal-sftp\nLogLevel ERROR\nMaxStartups 100\nMaxSessions 100\n"
    )


def _start_sshd(paths: Paths, host: LabHost) -> subprocess.Popen:
    config = paths.run / f"{host.name}.sshd_config"
    config.write_text(
        sshd_config(
            address=host.management_address,
            port=22,
            host_key=paths.host_key(host),
            pid_file=paths.run / f"{host.name}.sshd.pid",
            authorized_keys=paths.keys / "authorized_keys",
        )
    )
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    with open(paths.run / f"{host.name}.sshd.log", "w") as log:
        process = subprocess.Popen(
            ["ip", "netns", "exec", host.namespace, str(SSHD), "-D", "-e", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    return process


def _wait_for_ssh(paths: Paths, host: LabHost, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(1)
            if sock.connect_ex((host.management_address, 22)) == 0:
                return
        if process.poll() is not None:
            break
        time.sleep(0.05)
    log = (paths.run / f"{host.name}.sshd.log").read_text().strip()
    code = process.poll()
    how = "is still starting" if code is None else f"exited with status {code}"
    raise LabError(f"{host.name}: sshd on {host.management_address}:22 did not answer ({how}): {log or 'no message'}")


# -- set --------------------------------------------------------------------------------------------
def change(paths: Paths, shape: Shape) -> Lab:
    """Apply a new shape to the running lab: the delay line re-reads its parameters on SIGHUP."""
    require_root()
    lab = running(paths)
    shape.check()
    check_destinations(lab.destinations, shape)  # the jitter against every path's RTT
    if shape.mtu_bytes != lab.shape.mtu_bytes:
        for host in lab.hosts:
            _ip("-n", host.namespace, "link", "set", DATA_DEVICE, "mtu", str(shape.mtu_bytes))
    lab.shape = shape
    paths.params.write_text(shape.params_line())
    os.kill(lab.delayline_pid, signal.SIGHUP)
    _save(paths, lab)
    return lab


def running(paths: Paths) -> Lab:
    lab = load(paths)
    if lab is None or not _alive(lab.delayline_pid, "redolab-delayline"):
        raise LabError("the lab is not up: start it with `redolab lab up`")
    return lab


# -- status -----------------------------------------------------------------------------------------
def status(paths: Paths) -> dict:
    lab = load(paths)
    if lab is None:
        return {"up": False, "namespaces": lab_namespaces()}
    up_now = _alive(lab.delayline_pid, "redolab-delayline")
    if not up_now:
        return {"up": False, "namespaces": lab_namespaces(), "environment": lab.environment_name}
    hosts = []
    for host in lab.hosts:
        done = _in_namespace(host.namespace, "sysctl", "-n", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem")
        lines = [[int(v) for v in line.split()] for line in done.stdout.splitlines()]
        sysctls = dict(zip(("tcp_rmem_bytes", "tcp_wmem_bytes"), lines, strict=False))
        hosts.append(
            {
                "name": host.name,
                "role": host.role,
                "node": host.node,
                "namespace": host.namespace,
                "destination": lab.destination_of(host),
                "rtt_seconds": lab.rtt_of(host),
                "ssh_address": host.management_address,
                "data_address": host.data_address,
                "data_interface": DATA_DEVICE,
                "sshd_running": _alive(host.sshd_pid, "sshd"),
                **sysctls,
            }
        )
    counters = None
    if paths.stats.exists():
        try:
            counters = json.loads(paths.stats.read_text())
        except ValueError:
            counters = None
    return {
        "up": True,
        "environment": lab.environment_name,
        "shape": {
            "rtt_seconds": lab.shape.rtt_seconds,
            "jitter_seconds": lab.shape.jitter_seconds,
            "loss_ratio": lab.shape.loss_ratio,
            "rate_bits_per_second": lab.shape.rate_bits_per_second,
            "mtu_bytes": lab.shape.mtu_bytes,
            "queue_bytes": lab.shape.queue(),
            "description": lab.shape.describe(),
        },
        "destinations": [
            {"name": FIRST_DESTINATION, "kind": "standby", "rtt_seconds": lab.shape.rtt_seconds},
            *({"name": d.name, "kind": d.kind, "rtt_seconds": d.rtt_seconds} for d in lab.destinations),
        ],
        "delayline_running": True,
        "delayline": counters,
        "hosts": hosts,
    }


# -- down -------------------------------------------------------------------------------------------
def down(paths: Paths) -> list[str]:
    """Remove every namespace, process and device of the lab; say what was removed. Keys stay."""
    removed = []
    lab = load(paths)
    if lab is not None:
        for host in lab.hosts:
            if _alive(host.sshd_pid, "sshd"):
                _stop(host.sshd_pid, "sshd")
                removed.append(f"sshd of {host.name} (pid {host.sshd_pid})")
        if _alive(lab.delayline_pid, "redolab-delayline"):
            _stop(lab.delayline_pid, "redolab-delayline")  # its TUN devices go with it
            removed.append(f"delay line (pid {lab.delayline_pid})")
    for namespace in lab_namespaces():
        pids = _ip("netns", "pids", namespace, check=False).stdout.split()
        for pid in pids:  # anything still running there: a probe, a shell
            try:
                os.kill(int(pid), signal.SIGKILL)
                removed.append(f"process {pid} in {namespace}")
            except (ProcessLookupError, ValueError):
                pass
        _ip("netns", "del", namespace, check=False)
        removed.append(f"namespace {namespace}")
    # A deleted namespace takes its veth pairs with it, but the kernel does that later, in a work
    # queue: a CI run saw a bridge port still there after `down` returned. Each host-side end is
    # deleted here (which removes its pair at once), then the devices are waited for.
    for device in lab_devices():
        if _ip("link", "del", device, check=False).returncode == 0:
            removed.append(f"bridge {device}" if device == BRIDGE else f"device {device}")
    deadline = time.monotonic() + 10
    while lab_devices() and time.monotonic() < deadline:
        time.sleep(0.05)
    if left := lab_devices():
        raise LabError(f"devices still present 10 s after removal: {', '.join(left)}; run `redolab lab down` again")
    paths.state.unlink(missing_ok=True)
    for name in ("delayline.params", "delayline.stats"):
        (paths.run / name).unlink(missing_ok=True)
    return removed
