"""`redolab plan compressibility`: the zlib ratio matches Python's zlib at the same level on the same bytes
(within 1 %), on files the test makes: text-like, random, zeros and a redo-like layout of 512-byte blocks."""

import io
import json
import random
import struct
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning.compressibility import (
    CHUNK_BYTES,
    GIB,
    LZ4,
    ZLIB,
    cpu_capped_rate,
    measure_chunks,
    read_chunks,
)
from tests.cli_runner import invoke

SIZE = 1_536 * 1024  # over one chunk, so the streaming path is crossed


def text_like(rng: random.Random) -> bytes:
    words = [b"INSERT", b"UPDATE", b"ORDERS", b"CUSTOMER", b"status", b"SHIPPED", b"2026-12-02", b"amount"]
    out = bytearray()
    while len(out) < SIZE:
        out += b" ".join(rng.choice(words) for _ in range(8)) + f" {rng.randrange(10**6)}\n".encode()
    return bytes(out[:SIZE])


def redo_like(rng: random.Random) -> bytes:
    """512-byte blocks: a 16-byte header (block number, sequence, offset, checksum) and row images, each a
    repeated template with a few changed bytes, some blocks of random (already compressed) column data."""
    template = b"ROWID AAAR3sAAEAAAACXAAA COL1 'ACTIVE' COL2 00042 COL3 'EUR' " * 9
    blocks = []
    for number in range(SIZE // 512):
        header = struct.pack("<IIII", number, 4711, number * 512, rng.getrandbits(32))
        if number % 5 == 0:
            body = rng.randbytes(496)
        else:
            row = bytearray(template[:496])
            for _ in range(6):
                row[rng.randrange(496)] = rng.randrange(256)
            body = bytes(row)
        blocks.append(header + body)
    return b"".join(blocks)


def made_files(tmp_path) -> dict[str, tuple]:
    rng = random.Random(59)
    contents = {
        "text.log": text_like(rng),
        "random.bin": rng.randbytes(SIZE),
        "zeros.bin": bytes(SIZE),
        "redo_1_42.arc": redo_like(rng),
    }
    files = {}
    for name, data in contents.items():
        path = tmp_path / name
        path.write_bytes(data)
        files[name] = (path, data)
    return files


def test_zlib_ratio_matches_python_zlib_and_cpu_is_reported(tmp_path):
    files = made_files(tmp_path)
    for level in (6, 1):
        result = invoke(
            tmp_path, "plan", "compressibility", *(str(p) for p, _ in files.values()), "--level", str(level), "--json"
        )
        assert result.returncode == 0, result.stderr
        document = json.loads(result.stdout)
        assert len(document["samples"]) == 4
        for sample, (path, data) in zip(document["samples"], files.values(), strict=True):
            assert sample["name"] == str(path) and sample["bytes"] == len(data)
            figures = {c["codec"]: c for c in sample["codecs"]}
            expected = len(data) / len(zlib.compress(data, level))
            assert abs(figures[ZLIB]["ratio"] / expected - 1) <= 0.01, (path.name, level)
            assert figures[ZLIB]["level"] == level
            for codec in (ZLIB, LZ4):
                assert figures[codec]["compress_cpu_seconds_per_gib"] >= 0
                assert figures[codec]["decompress_cpu_seconds_per_gib"] >= 0
                assert figures[codec]["compressed_bytes"] > 0
        ratios = {s["name"].rsplit("/", 1)[-1]: s["codecs"][0]["ratio"] for s in document["samples"]}
        assert ratios["random.bin"] < 1.01 < ratios["redo_1_42.arc"] < ratios["text.log"] < ratios["zeros.bin"]
        total = document["overall"][0]
        assert total["input_bytes"] == 4 * SIZE


def test_text_output_carries_units(tmp_path):
    path = tmp_path / "zeros.bin"
    path.write_bytes(bytes(SIZE))
    result = invoke(tmp_path, "plan", "compressibility", str(path), str(path))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "1.5 MiB (1,572,864 bytes)" in text
    assert "zlib level 6: ratio" in text and "CPU s/GiB" in text and "MiB/s" in text
    assert "all 2 files together" in text
    assert text.rstrip().endswith("the standby's (decompress) may differ.")  # whose cores the CPU is


def test_a_missing_file_is_an_error(tmp_path):
    result = invoke(tmp_path, "plan", "compressibility", str(tmp_path / "absent.arc"))
    assert result.returncode == 1
    assert "absent.arc" in result.stderr


def test_files_are_read_in_bounded_chunks():
    pieces = list(read_chunks(io.BytesIO(bytes(2 * CHUNK_BYTES + 5))))
    assert [len(p) for p in pieces] == [CHUNK_BYTES, CHUNK_BYTES, 5]


def test_an_empty_file_has_no_ratio():
    sample = measure_chunks([], name="empty")
    assert sample.size_bytes == 0
    assert sample.codec(ZLIB).ratio is None and sample.codec(ZLIB).compress_seconds_per_gib is None


def test_cpu_cap_is_one_gib_over_the_cost():
    assert cpu_capped_rate(4.0) == GIB / 4
    assert cpu_capped_rate(None) is None and cpu_capped_rate(0.0) is None


@settings(max_examples=25, deadline=None)
@given(st.lists(st.binary(max_size=3000), max_size=6), st.integers(1, 9))
def test_streamed_zlib_is_python_zlib_on_the_joined_bytes(chunks, level):
    """However the stream is cut, the bytes on the wire are zlib.compress's on the whole."""
    sample = measure_chunks(chunks, name="s", zlib_level=level)
    joined = b"".join(chunks)
    assert sample.size_bytes == len(joined)
    assert sample.codec(ZLIB).compressed_bytes == len(zlib.compress(joined, level))
