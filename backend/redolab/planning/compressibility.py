"""How much redo transport compression would shrink archived redo, and what it costs in CPU.

Oracle's redo transport compression (Advanced Compression option, `COMPRESSION=ENABLE`, ZLIB or LZO)
divides the bytes on the wire by the redo's compressibility. Oracle documents the algorithms (ENABLE
means ZLIB) but not the zlib level: redolab measures at zlib's own default, level 6 (ZLIB_LEVEL), the
level `gzip` uses when a DBA estimates the ratio by hand as MOS 729551.1 suggests, and says so beside
every figure. The LZ-class fast codec is LZ4 (the `lz4` package, frame format, its fastest level), the
nearest well-kept relative of LZO.

A file is read in CHUNK_BYTES pieces (memory stays bounded for a 4 GiB archived log) and compressed as
one stream per codec, as `gzip` and `zlib.compress` would; each compressed piece is decompressed at
once by a streaming decompressor, so the decompression cost (the standby's) is measured too. CPU is
this process's time (user + system, `time.process_time`) spent inside the codec calls only: reading
the file is not counted. Figures cross this module's boundary in bytes and CPU seconds.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import lz4.frame

ZLIB_LEVEL = 6  # zlib's default (Z_DEFAULT_COMPRESSION); Oracle does not document the level its ZLIB uses
CHUNK_BYTES = 1024 * 1024
GIB = 1024**3
ZLIB = "zlib"
LZ4 = "lz4"


@dataclass(frozen=True)
class CodecFigures:
    """One codec over one sample: bytes in and out and the CPU seconds each way."""

    codec: str  # "zlib" or "lz4"
    level: int
    input_bytes: int
    compressed_bytes: int
    compress_cpu_seconds: float
    decompress_cpu_seconds: float

    @property
    def label(self) -> str:
        return f"zlib level {self.level}" if self.codec == ZLIB else f"LZ4 (level {self.level}, frame)"

    @property
    def ratio(self) -> float | None:
        """Bytes as written / bytes on the wire (3.0 means a third of the bytes travel); None when empty."""
        return self.input_bytes / self.compressed_bytes if self.input_bytes and self.compressed_bytes else None

    @property
    def compress_seconds_per_gib(self) -> float | None:
        return self.compress_cpu_seconds * GIB / self.input_bytes if self.input_bytes else None

    @property
    def decompress_seconds_per_gib(self) -> float | None:
        """CPU seconds per GiB of redo as written (what the standby rebuilds), not per GiB received."""
        return self.decompress_cpu_seconds * GIB / self.input_bytes if self.input_bytes else None

    def to_json(self) -> dict:
        return {
            "codec": self.codec,
            "level": self.level,
            "input_bytes": self.input_bytes,
            "compressed_bytes": self.compressed_bytes,
            "ratio": self.ratio,
            "compress_cpu_seconds": self.compress_cpu_seconds,
            "decompress_cpu_seconds": self.decompress_cpu_seconds,
            "compress_cpu_seconds_per_gib": self.compress_seconds_per_gib,
            "decompress_cpu_seconds_per_gib": self.decompress_seconds_per_gib,
        }


@dataclass(frozen=True)
class Sample:
    """One measured file (an archived log, or any byte stream): its size and each codec's figures."""

    name: str
    size_bytes: int
    codecs: tuple[CodecFigures, ...]

    def codec(self, name: str) -> CodecFigures:
        return next(figures for figures in self.codecs if figures.codec == name)

    def to_json(self) -> dict:
        return {"name": self.name, "bytes": self.size_bytes, "codecs": [c.to_json() for c in self.codecs]}


class _Meter:
    """One codec's streaming compressor and decompressor with their byte and CPU counters."""

    def __init__(self, codec: str, level: int) -> None:
        self.codec, self.level = codec, level
        if codec == ZLIB:
            self._compressor = zlib.compressobj(level)
            self._decompressor = zlib.decompressobj()
        else:
            self._compressor = lz4.frame.LZ4FrameCompressor(compression_level=level)
            self._decompressor = lz4.frame.LZ4FrameDecompressor()
        self.input_bytes = self.compressed_bytes = self.restored_bytes = 0
        self.compress_cpu = self.decompress_cpu = 0.0
        if codec == LZ4:
            self._decompress(self._timed_compress(self._compressor.begin))

    def _timed_compress(self, call, *args) -> bytes:
        started = time.process_time()
        out = call(*args)
        self.compress_cpu += time.process_time() - started
        self.compressed_bytes += len(out)
        return out

    def _decompress(self, piece: bytes) -> None:
        if not piece:
            return
        started = time.process_time()
        restored = self._decompressor.decompress(piece)
        self.decompress_cpu += time.process_time() - started
        self.restored_bytes += len(restored)

    def feed(self, chunk: bytes) -> None:
        self.input_bytes += len(chunk)
        self._decompress(self._timed_compress(self._compressor.compress, chunk))

    def finish(self) -> CodecFigures:
        closing = self._compressor.flush()
        self.compressed_bytes += len(closing)
        self._decompress(closing)
        if self.restored_bytes != self.input_bytes:  # a codec that does not round-trip measures nothing
            raise ValueError(f"{self.codec}: {self.restored_bytes:,} bytes restored of {self.input_bytes:,}")
        return CodecFigures(
            codec=self.codec,
            level=self.level,
            input_bytes=self.input_bytes,
            compressed_bytes=self.compressed_bytes,
            compress_cpu_seconds=self.compress_cpu,
            decompress_cpu_seconds=self.decompress_cpu,
        )


def measure_chunks(chunks: Iterable[bytes], *, name: str, zlib_level: int = ZLIB_LEVEL) -> Sample:
    """Compress and decompress a stream of byte chunks with zlib at `zlib_level` and LZ4 at its fastest."""
    if not 1 <= zlib_level <= 9:
        raise ValueError("the zlib level must be 1 to 9")
    meters = (_Meter(ZLIB, zlib_level), _Meter(LZ4, 0))
    size = 0
    for chunk in chunks:
        size += len(chunk)
        for meter in meters:
            meter.feed(chunk)
    return Sample(name=name, size_bytes=size, codecs=tuple(meter.finish() for meter in meters))


def read_chunks(stream: BinaryIO, chunk_bytes: int = CHUNK_BYTES) -> Iterable[bytes]:
    """The stream in pieces of at most `chunk_bytes`: never the whole file in memory."""
    while chunk := stream.read(chunk_bytes):
        yield chunk


def measure_file(path: Path, *, zlib_level: int = ZLIB_LEVEL) -> Sample:
    """One file a DBA copied (an archived log): read in chunks, measured with both codecs."""
    with path.open("rb") as stream:
        return measure_chunks(read_chunks(stream), name=str(path), zlib_level=zlib_level)


def overall(samples: Iterable[Sample], codec: str) -> CodecFigures | None:
    """The samples together for one codec: bytes and CPU summed, so a large log weighs by its size."""
    chosen = [sample.codec(codec) for sample in samples]
    if not chosen:
        return None
    return CodecFigures(
        codec=codec,
        level=chosen[0].level,
        input_bytes=sum(c.input_bytes for c in chosen),
        compressed_bytes=sum(c.compressed_bytes for c in chosen),
        compress_cpu_seconds=sum(c.compress_cpu_seconds for c in chosen),
        decompress_cpu_seconds=sum(c.decompress_cpu_seconds for c in chosen),
    )


def cpu_capped_rate(seconds_per_gib: float | None) -> float | None:
    """The most bytes per second (as written) one shipping process can compress on one core:
    1 GiB / (CPU s/GiB). None when the CPU cost is unknown or too small to measure."""
    if not seconds_per_gib or seconds_per_gib <= 0:
        return None
    return GIB / seconds_per_gib
