"""Measure a host's encryption ceiling (remote.crypto) and keep it on the host: an operator's action,
about two seconds of one core on the host, like Test connection run while the page waits."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.orm import Session

from redolab.environments.connect import connect_host
from redolab.environments.models import Host
from redolab.remote.crypto import CryptoSpeed, measure_speed


async def measure_host_crypto(*, session: Session, host: Host, secret_key: str, message_bytes: int) -> CryptoSpeed:
    """Run `openssl speed` on the host at message_bytes and store what it says (a host without openssl
    is stored as such: that is a finding, not an error). A TransportError (unreachable, key refused)
    stores nothing and reaches the caller."""
    transport = await connect_host(host, secret_key=secret_key)
    try:
        speed = await measure_speed(transport, message_bytes=message_bytes)
    finally:
        await transport.close()
    host.crypto_speed, host.crypto_measured_at = speed.to_json(), datetime.now(UTC)
    session.commit()
    return speed


def stored_crypto(host: Host) -> CryptoSpeed | None:
    """The host's last measurement, or None (never measured, or stored in a form this version cannot read)."""
    if not host.crypto_speed:
        return None
    try:
        return CryptoSpeed.from_json(host.crypto_speed)
    except (KeyError, TypeError, ValueError):
        return None
