"""Redo transport compression on the plan: the bytes as written and the bytes on the wire, from the
compressibility a collection measured on the primary (collect.compressibility), capped by the CPU of the
shipping process.

Only where a measurement exists: without stored samples the plan says nothing of compression. The ratio
is the worst hour's logs' (bytes read / bytes zlib made of them; the peak the link must carry is in the
worst hour), else every sample's. Oracle compresses in the process that ships a thread's redo, on one
core: it compresses at most 1 GiB / (CPU s/GiB) of redo as written, so a thread whose required rate is
above that cannot ship compressed at its peak. The link for the RPO with compression (CompressedLink) sits
beside the link as written, on the transport card and in the answer strip, in the same words. The Advanced
Compression licence and the rule "LZO not with SYNC or FASTSYNC" are said once, on the transport card.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.collect.compressibility import FAST_CODECS
from redolab.collect.models import Collection, CompressibilitySample
from redolab.core.units import (
    format_bit_rate,
    format_byte_rate,
    format_byte_rate_in_mbit,
    format_bytes,
    format_count,
)
from redolab.environments.models import Environment
from redolab.planning.compressibility import GIB, cpu_capped_rate

LICENCE_RULE = (
    "redo transport compression (COMPRESSION=ENABLE: ZLIB; or LZO) is a feature of the Advanced Compression "
    "option; LZO is not allowed with SYNC or FASTSYNC"
)


@dataclass(frozen=True)
class CompressionFact:
    """The compressibility one collection measured: the logs read, in bytes and CPU seconds."""

    collection_id: int
    measured_at: datetime | None
    hour: str  # whose logs give the ratio: "worst hour" or "every sample"
    logs: int
    bytes_read: int
    zlib_bytes: int
    zlib_level: int
    compress_cpu_seconds: float
    decompress_cpu_seconds: float
    licensed: bool
    standby_bytes: int = 0  # of redo as written the standby decompressed (collect.standby_timing); 0: not timed
    standby_decompress_cpu_seconds: float = 0.0
    host: str = "the primary"  # where the logs were read
    fast_codec: str | None = None  # collect.compressibility.FAST_CODECS key; None: not measured on the host
    fast_bytes: int = 0
    fast_compress_cpu_seconds: float = 0.0
    fast_decompress_cpu_seconds: float = 0.0

    @property
    def fast_words(self) -> str:
        """The LZ-class codec's figures on the primary, or which host could not measure it and what to install."""
        if self.fast_codec is None or not self.fast_bytes:
            return (
                f"not measured on {self.host}: its python3 has no lz4 module and it has no lz4 or zstd command "
                "(install python3-lz4 or lz4 there, or run `redolab plan compressibility` on copied logs)"
            )
        per_gib = GIB / self.bytes_read
        return (
            f"{FAST_CODECS[self.fast_codec]}: {self.bytes_read / self.fast_bytes:,.2f} : 1, "
            f"{self.fast_compress_cpu_seconds * per_gib:,.2f} CPU s/GiB to compress and "
            f"{self.fast_decompress_cpu_seconds * per_gib:,.2f} to decompress on {self.host}'s cores"
        )

    @property
    def standby_seconds_per_gib(self) -> float | None:
        """The standby's CPU s/GiB to decompress, timed on the standby; None where it was not."""
        return self.standby_decompress_cpu_seconds * GIB / self.standby_bytes if self.standby_bytes else None

    @property
    def ratio(self) -> float:
        return self.bytes_read / self.zlib_bytes

    @property
    def compress_seconds_per_gib(self) -> float:
        return self.compress_cpu_seconds * GIB / self.bytes_read

    @property
    def decompress_seconds_per_gib(self) -> float:
        return self.decompress_cpu_seconds * GIB / self.bytes_read

    @property
    def cpu_cap_bytes_per_second(self) -> float | None:
        """Redo as written one shipping process compresses per second on one core (None: too fast to time)."""
        return cpu_capped_rate(self.compress_seconds_per_gib)

    def to_json(self) -> dict:
        return {
            "collection_id": self.collection_id,
            "measured_at": self.measured_at.isoformat() if self.measured_at else None,
            "ratio_of": self.hour,
            "logs": self.logs,
            "bytes_read": self.bytes_read,
            "zlib_level": self.zlib_level,
            "zlib_bytes": self.zlib_bytes,
            "ratio": self.ratio,
            "compress_cpu_seconds_per_gib": self.compress_seconds_per_gib,
            "decompress_cpu_seconds_per_gib": self.decompress_seconds_per_gib,
            "standby_decompress_cpu_seconds_per_gib": self.standby_seconds_per_gib,
            "fast_codec": self.fast_codec,
            "fast_ratio": self.bytes_read / self.fast_bytes if self.fast_bytes else None,
            "cpu_cap_bytes_per_second": self.cpu_cap_bytes_per_second,
            "advanced_compression_licensed": self.licensed,
        }


def stored_compression(session: Session, environment: Environment) -> CompressionFact | None:
    """The latest collection of the environment with logs read: its worst hour's logs (else all)."""
    rows = session.execute(
        select(CompressibilitySample, Collection.finished_at, Collection.host_name)
        .join(Collection, Collection.id == CompressibilitySample.collection_id)
        .where(Collection.environment_id == environment.id, CompressibilitySample.bytes_read > 0)
        .where(CompressibilitySample.zlib_bytes > 0)
        .order_by(Collection.id.desc())
    ).all()
    if not rows:
        return None
    latest = rows[0][0].collection_id
    samples = [sample for sample, *_ in rows if sample.collection_id == latest]
    worst = [sample for sample in samples if sample.hour == "worst hour"]
    chosen = worst or samples
    timed = [s for s in samples if s.standby_bytes]
    fast = {s.fast_codec for s in chosen} if all(s.fast_bytes for s in chosen) else set()
    return CompressionFact(
        collection_id=latest,
        measured_at=rows[0][1],
        hour="worst hour" if worst else "every sample",
        logs=len(chosen),
        bytes_read=sum(s.bytes_read for s in chosen),
        zlib_bytes=sum(s.zlib_bytes for s in chosen),
        zlib_level=chosen[0].zlib_level,
        compress_cpu_seconds=sum(s.compress_cpu_seconds for s in chosen),
        decompress_cpu_seconds=sum(s.decompress_cpu_seconds for s in chosen),
        licensed=environment.advanced_compression_licensed,
        standby_bytes=sum(s.standby_bytes or 0 for s in timed),
        standby_decompress_cpu_seconds=sum(s.standby_decompress_cpu_seconds or 0.0 for s in timed),
        host=rows[0][2],
        fast_codec=fast.pop() if len(fast) == 1 and fast <= FAST_CODECS.keys() else None,
        fast_bytes=sum(s.fast_bytes or 0 for s in chosen),
        fast_compress_cpu_seconds=sum(s.fast_compress_cpu_seconds or 0.0 for s in chosen),
        fast_decompress_cpu_seconds=sum(s.fast_decompress_cpu_seconds or 0.0 for s in chosen),
    )


@dataclass(frozen=True)
class CompressedLink:
    """The link for the RPO (100 % of the time) with compression, beside the link as written: the line rate
    as written divided by the measured ratio (the queue model is linear in bytes, so the lag is the same),
    unless a thread's peak as written is above what its one shipping process compresses (`short_threads`):
    then compression cannot hold its peak and no compressed figure is given."""

    as_written_bits_per_second: float
    ratio: float
    cap_bytes_per_second: float | None
    short_threads: tuple[tuple[int, float], ...]  # (thread, its required bytes per second as written)

    @property
    def bits_per_second(self) -> float | None:
        return None if self.short_threads else self.as_written_bits_per_second / self.ratio

    @property
    def words(self) -> str:
        """The compressed figure, or why there is none (the strip and the transport card say the same)."""
        if self.bits_per_second is not None:
            return (
                f"{format_bit_rate(self.bits_per_second)} with compression ({self.ratio:,.2f} : 1 measured; "
                "each thread's shipping process compresses its peak on one core)"
            )
        threads = ", ".join(str(thread) for thread, _ in self.short_threads)
        cap = format_byte_rate(self.cap_bytes_per_second or 0.0)
        return (
            f"not less with compression: the peak of thread{'s' if len(self.short_threads) > 1 else ''} {threads} "
            f"is above the {cap} of redo as written one shipping process compresses on one core"
        )

    def to_json(self) -> dict:
        return {
            "as_written_bits_per_second": self.as_written_bits_per_second,
            "compressed_bits_per_second": self.bits_per_second,
            "threads_above_cpu_cap": [thread for thread, _ in self.short_threads],
        }


def compressed_link(fact: CompressionFact | None, requirement, rpo_sizing) -> CompressedLink | None:
    """The link for the RPO with compression (None: no measurement, no RPO sizing, or no target)."""
    if fact is None or rpo_sizing is None or not rpo_sizing.targets:
        return None
    cap = fact.cpu_cap_bytes_per_second
    threads = sorted(requirement.threads.values(), key=lambda t: t.thread) if requirement is not None else []
    short = tuple(
        (need.thread, need.required_bytes_per_second)
        for need in threads
        if cap is not None and need.required_bytes_per_second > cap
    )
    return CompressedLink(rpo_sizing.targets[0].bits_per_second, fact.ratio, cap, short)


def compression_rows(fact: CompressionFact, requirement) -> list[tuple[str, str]]:
    """The transport card's rows: as written and on the wire, the CPU cap per thread, and the licence and
    LZO rule (once on the page). The RPO's link with compression goes beside the RPO's (with_compression)."""
    ratio = fact.ratio
    basis = (
        f"zlib level {fact.zlib_level}, {format_count(fact.logs, 'log')} of the {fact.hour}, "
        f"{format_bytes(fact.bytes_read)} read on the primary by collection #{fact.collection_id}"
    )
    rows = [("Measured compressibility", f"{ratio:,.2f} : 1 ({basis})")]
    cap = fact.cpu_cap_bytes_per_second
    if requirement is not None:
        summed = requirement.summed_required_bytes_per_second
        rows.append(
            (
                "All threads, as written and on the wire",
                f"{format_byte_rate(summed)} as written; {format_byte_rate(summed / ratio)} on the wire compressed "
                f"({format_byte_rate_in_mbit(summed / ratio)})",
            )
        )
        for need in sorted(requirement.threads.values(), key=lambda t: t.thread):
            words = _thread_words(need.required_bytes_per_second, ratio, cap)
            rows.append((f"Thread {need.thread} on the wire", words))
    rows.append(
        (
            "Shipping process CPU (one core each)",
            f"{fact.compress_seconds_per_gib:,.2f} CPU s/GiB to compress: at most "
            f"{format_byte_rate(cap) if cap else '– (too fast to time)'} of redo as written per process; "
            f"decompression {fact.decompress_seconds_per_gib:,.2f} CPU s/GiB on the primary's cores; "
            + (
                f"{fact.standby_seconds_per_gib:,.2f} CPU s/GiB on the standby's (timed there)"
                if fact.standby_seconds_per_gib is not None
                else "the standby's were not timed"
            ),
        )
    )
    rows.append(("LZ-class codec (the nearest of LZO)", fact.fast_words))
    licence = "licensed" if fact.licensed else "not marked as licensed for this environment"
    rows.append(("Licence", f"Advanced Compression {licence}: {LICENCE_RULE}"))
    return rows


def _thread_words(required: float, ratio: float, cap: float | None) -> str:
    said = f"{format_byte_rate(required)} as written -> {format_byte_rate(required / ratio)} compressed"
    if cap is not None and required > cap:
        return f"{said}; above the {format_byte_rate(cap)} one process compresses: compression cannot keep up"
    return said


def with_compression(plan, fact: CompressionFact | None) -> None:
    """Add the compression rows and values to the plan's transport card, the link for the RPO with compression
    beside the link as written, and the fact to the plan (the answer strip reads it); nothing without a
    measurement."""
    card = next((c for c in plan.cards if c.key == "transport"), None)
    if fact is None or card is None:
        return
    plan.compression = fact
    card.rows.extend(compression_rows(fact, plan.requirement))
    card.values["compression"] = fact.to_json()
    link = compressed_link(fact, plan.requirement, plan.rpo_sizing)
    if link is None:
        return
    card.values["compression"]["rpo_link"] = link.to_json()
    at = next((n for n, (label, _) in enumerate(card.rows) if label.startswith("Link for the RPO of ")), None)
    card.rows.insert(len(card.rows) if at is None else at + 1, ("Link for the RPO, compressed", link.words))
