"""Host keys (pinned after the user accepts the fingerprint) and "Test connection"."""

from __future__ import annotations

from sqlalchemy.orm import Session

from redolab.core.errors import FieldError
from redolab.environments.connect import connect_host
from redolab.environments.models import Host, HostTransport
from redolab.remote.deploy import local_binary, probe_digest, probe_file_name
from redolab.remote.hostinfo import capture_settings
from redolab.remote.ssh import fetch_host_key
from redolab.remote.transport import HostAnswered, NotAttempted, TransportError


async def scan_host_key(host: Host) -> dict:
    """What the host offers now; nothing is pinned until the user accepts it."""
    key, fingerprint = await fetch_host_key(host.ssh_address, host.ssh_port)
    return {
        "fingerprint": fingerprint,
        "key_type": key.split()[0],
        "pinned": host.host_key_fingerprint,
    }


async def accept_host_key(*, session: Session, host: Host, fingerprint: str) -> Host:
    """Pin the host's key if, and only if, it has the fingerprint the user saw or was given."""
    fingerprint = fingerprint.strip()
    if not fingerprint.startswith("SHA256:"):
        raise FieldError("fingerprint", "Give the SHA256 fingerprint as ssh-keygen -lf shows it (SHA256:...).", 422)
    key, offered = await fetch_host_key(host.ssh_address, host.ssh_port)
    if offered != fingerprint:
        raise FieldError(
            "fingerprint",
            f"{host.name} offers {offered}, not {fingerprint}: nothing was pinned. Check with the "
            "host's administrator (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub).",
            422,
        )
    host.host_key, host.host_key_fingerprint = key, offered
    session.commit()
    return host


def forget_host_key(*, session: Session, host: Host) -> Host:
    host.host_key = host.host_key_fingerprint = None
    session.commit()
    return host


async def test_connection(host: Host, *, secret_key: str, peer_address: str | None = None) -> dict:
    """Reachable? Authenticated? What system, is the probe there and current, MTU, buffers."""
    report: dict = {"host": host.name, "reachable": False, "authenticated": False}
    try:
        transport = await connect_host(host, secret_key=secret_key)
    except TransportError as error:
        # HostAnswered: SSH answered but refused us; NotAttempted: not tried yet (None: unknown)
        report["reachable"] = (
            True if isinstance(error, HostAnswered) else None if isinstance(error, NotAttempted) else False
        )
        report["error"] = str(error)
        return report
    report["reachable"] = report["authenticated"] = True
    try:
        uname = await transport.run(["uname", "-srm"])
        report["uname"] = uname.stdout.strip()
        report["architecture"] = report["uname"].split()[-1] if report["uname"] else None
        settings = await capture_settings(
            transport,
            peer_address=peer_address or host.probe_address,
            interface=host.data_interface,
            probe_name=probe_file_name(),
        )
        home, cached = settings.pop("home", None), settings.pop("probe_sha256", None)
        if host.transport is HostTransport.local:
            report["probe"] = {"present": True, "current": True, "path": str(local_binary())}
        else:
            report["probe"] = {
                "present": bool(cached),
                "current": cached == probe_digest(),
                "path": f"{home}/.cache/redolab/{probe_file_name()}",
            }
        report["settings"] = settings
    except TransportError as error:
        report["error"] = str(error)
    finally:
        await transport.close()
    return report
