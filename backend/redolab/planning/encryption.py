"""The encryption ceiling on the transport card (pure): what each host's crypto library encrypts per core
(one transport stream) and per host (x its online cores), measured by `openssl speed` at the transport's
message size (remote.crypto), against the requirement per thread. Units: bytes, bytes per second.

Native Network Encryption and TLS encrypt a connection's data in the process that ships it, so one
redo transport stream (one thread's) cannot go faster than one core encrypts (on the primary) or
decrypts (on the standby: AES-GCM and ChaCha20-Poly1305 cost about the same both ways). A host's
ceiling multiplies by its cores, not measured in parallel: an upper bound, and the database's own load
takes its share. Nothing here assumes the transport is encrypted: the card says what it would cost.
"""

from __future__ import annotations

from dataclasses import dataclass

from redolab.core.units import format_byte_rate, format_bytes
from redolab.environments.releases import Release
from redolab.planning.card import INFO, PARTIAL, PASS, Card, bare_headline, settle
from redolab.planning.oracle_net import SYNC_SDU_BYTES, sdu_limits, sdu_value
from redolab.redo.requirement import Requirement
from redolab.remote.crypto import CryptoSpeed

TLS_RECORD_BYTES = 16384  # RFC 8446 5.1: a TLS record's plaintext is at most 2^14 bytes
CIPHER_NAMES = {"aes-256-gcm": "AES-256-GCM", "chacha20-poly1305": "ChaCha20-Poly1305"}
HOW = (
    "encryption ceiling: openssl speed -evp on each host, at the transport's message size, divided by CPU "
    "time (one core: one stream; Native Network Encryption or TLS encrypts a stream in the process that "
    "ships it); per host = per core x online cores, not measured in parallel (an upper bound)"
)


def crypto_message_bytes(release: Release | None, transport_mode: str, platform: str = "dataguard") -> tuple[int, str]:
    """The message size to time the ciphers at (bytes), and why. Data Guard: Oracle Net encrypts each
    packet, at most one SDU: the SDU the plan sets for this transport (planning.oracle_net.sdu_value), else
    the release's server default, else 65535 (the SDU MOS 2064368.1 sets for synchronous transport). Db2
    HADR encrypts with TLS (HADR_SSL_LABEL): a TLS record carries at most 2^14 bytes (RFC 8446, 5.1)."""
    if platform == "hadr":
        return TLS_RECORD_BYTES, f"the largest TLS record, which HADR's SSL sends ({TLS_RECORD_BYTES} bytes)"
    sdu, _ = sdu_value(release, transport_mode)
    if sdu is not None:
        return sdu, f"the SDU the plan sets for {transport_mode} ({sdu} bytes)"
    if release is not None:
        default = sdu_limits(release).server_default
        return default, f"the SDU {release.label} uses by default ({default} bytes)"
    return SYNC_SDU_BYTES, f"the SDU for synchronous transport, MOS 2064368.1 ({SYNC_SDU_BYTES} bytes)"


@dataclass(frozen=True)
class HostCeiling:
    """One host's stored measurement as the plan reads it."""

    label: str  # "dg1 (primary 1)"
    speed: CryptoSpeed | None  # None: not measured yet
    measured: str = ""  # when, on the database's clock

    def per_stream(self) -> list[tuple[str, float]]:
        """(cipher's name, bytes per second of one core) for each measured cipher."""
        if self.speed is None:
            return []
        return [
            (CIPHER_NAMES.get(c.cipher, c.cipher), c.bytes_per_second) for c in self.speed.ciphers if c.bytes_per_second
        ]

    def per_host(self, bytes_per_second: float) -> float | None:
        return bytes_per_second * self.speed.cores if self.speed and self.speed.cores else None

    @property
    def said(self) -> str:
        """The card's row: each cipher per stream and per host, or why there is no figure."""
        if self.speed is None:
            return "not measured yet (Measure encryption, under Hosts)"
        figures = self.per_stream()
        if not figures:
            return self.speed.note
        parts = []
        for name, rate in figures:
            host = self.per_host(rate)
            cores = f", {format_byte_rate(host)} per host ({self.speed.cores} cores)" if host else ""
            parts.append(f"{name} {format_byte_rate(rate)} per stream{cores}")
        return "; ".join(parts)

    @property
    def basis(self) -> str:
        """The working line: library, message size, when, AES instructions."""
        if self.speed is None or self.speed.library is None:
            return f"{self.label}: {self.said}"
        aes = {True: "; the CPU has AES instructions", False: "; the CPU has no AES instructions"}
        return (
            f"{self.label}: {self.speed.library}, {format_bytes(self.speed.message_bytes)} messages "
            f"({self.speed.message_bytes} bytes), {self.speed.seconds_per_cipher} s per cipher, measured "
            f"{self.measured}{aes.get(self.speed.aes_instructions, '')}"
        )


def shortfalls(ceilings: tuple[HostCeiling, ...], requirement: Requirement) -> list[str]:
    """Where a host's ceiling per stream is below the requirement per thread (the largest thread's), or its
    ceiling per host below the summed requirement: one sentence each, with both numbers."""
    needs = sorted(requirement.threads.values(), key=lambda t: t.required_bytes_per_second)
    if not needs:
        return []
    thread, summed = needs[-1], requirement.summed_required_bytes_per_second
    found = []
    for ceiling in ceilings:
        for name, rate in ceiling.per_stream():
            if rate < thread.required_bytes_per_second:
                found.append(
                    f"{ceiling.label}: one core encrypts {format_byte_rate(rate)} with {name}, below thread "
                    f"{thread.thread}'s {format_byte_rate(thread.required_bytes_per_second)}: an encrypted "
                    f"redo stream with {name} cannot keep up there"
                )
            host = ceiling.per_host(rate)
            if host is not None and host < summed:
                found.append(
                    f"{ceiling.label}: all its cores encrypt at most {format_byte_rate(host)} with {name}, "
                    f"below all threads' {format_byte_rate(summed)}"
                )
    return found


def add_encryption(card: Card, ceilings: tuple[HostCeiling, ...], requirement: Requirement | None) -> list[str]:
    """Rows and working for each host on the transport card once any host was measured; WARN (and the
    risks returned) where a ceiling is below the requirement."""
    if not any(c.speed is not None for c in ceilings):
        return []
    for ceiling in ceilings:
        card.rows.append((f"Encryption ceiling, {ceiling.label}", ceiling.said))
        card.working.append(ceiling.basis)
    card.working.append(HOW)
    card.values["encryption"] = [
        {"host": c.label, "measured": c.measured, **(c.speed.to_json() if c.speed else {"library": None})}
        for c in ceilings
    ]
    found = shortfalls(ceilings, requirement) if requirement is not None else []
    if found and card.status in (PASS, PARTIAL, INFO):
        card.headline = bare_headline(card) + "; encryption would cap it (see the encryption ceiling)"
        settle(card, failed=False, judged=True, warned=True)
    return found
