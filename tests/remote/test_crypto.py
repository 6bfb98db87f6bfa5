"""The encryption ceiling's script and parser: `openssl speed -mr` output as OpenSSL 3.0 printed it here
and as 1.1.1 formats it, a host without openssl, an openssl too old for -bytes, hostile output; the
script run for real on this machine (one cipher, 1 s)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.remote.crypto import (
    CIPHERS,
    NO_OPENSSL,
    SCRIPT,
    TOO_OLD,
    CryptoSpeed,
    measure_speed,
    parse_speed,
    speed_figure,
)
from redolab.remote.local import LocalTransport

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openssl_speed"


def test_openssl_3_output_captured_here():
    speed = parse_speed((FIXTURES / "openssl-3.0-debian.txt").read_text(), message_bytes=65535)
    assert speed.library == "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)"
    assert (speed.cores, speed.aes_instructions, speed.note) == (2, True, "")
    by_name = {c.cipher: c for c in speed.ciphers}
    assert by_name["aes-256-gcm"].bytes_per_second == 4461185900.00
    assert by_name["chacha20-poly1305"].bytes_per_second == 3427844583.33
    unknown = by_name["nosuch-cipher"]
    assert unknown.bytes_per_second is None and "does not offer nosuch-cipher" in unknown.note
    assert CryptoSpeed.from_json(speed.to_json()) == speed  # as stored on the host


def test_openssl_1_1_1_format():
    speed = parse_speed((FIXTURES / "openssl-1.1.1-format.txt").read_text(), message_bytes=65536)
    assert speed.library.startswith("OpenSSL 1.1.1k") and speed.cores == 8 and speed.aes_instructions is False
    assert [(c.cipher, c.bytes_per_second) for c in speed.ciphers] == [
        ("aes-256-gcm", 412876543.21),
        ("chacha20-poly1305", 987654321.0),
    ]


def test_no_openssl_and_an_old_one_say_so():
    missing = parse_speed("cores=4\naes_instructions=yes\nopenssl=missing\n", message_bytes=8192)
    assert missing.library is None and missing.ciphers == () and missing.note == NO_OPENSSL
    # OpenSSL 1.0.2 refuses -seconds/-bytes: exit 1 and no +F line for each cipher
    old = parse_speed(
        "cores=4\nversion=OpenSSL 1.0.2k-fips  26 Jan 2017\nstatus=aes-256-gcm:1\nstatus=chacha20-poly1305:1\n",
        message_bytes=8192,
    )
    assert old.library.startswith("OpenSSL 1.0.2k") and TOO_OLD in old.note
    assert all(c.bytes_per_second is None for c in old.ciphers)


def test_hostile_output_is_cut_and_cleaned():
    text = "version=\x1b[31mEvil\x07 " + "x" * 5000 + "\n+F:25:AES:1e300\nstatus=aes-256-gcm:0\ncores=99999999999\n"
    speed = parse_speed(text + "+F:1:A:5\n" * 100_000, message_bytes=1)
    assert "\x1b" not in speed.library and "\x07" not in speed.library and len(speed.library) <= 200
    assert speed.ciphers[0].bytes_per_second is None  # 1e300 B/s is not a measurement
    assert speed.cores is None


@settings(max_examples=25, deadline=None)
@given(st.text(max_size=80))
def test_any_speed_line_gives_a_finite_positive_figure_or_none(line):
    figure = speed_figure(line)
    assert figure is None or 0 < figure < 1e13


def test_measured_here_with_the_real_openssl():
    """One cipher for 1 s on this machine, through the script (about 1 s of CPU)."""
    speed = asyncio.run(measure_speed(LocalTransport(), message_bytes=65535, ciphers=("aes-256-gcm",)))
    assert speed.library and speed.library.startswith("OpenSSL")
    assert speed.cores == os.cpu_count()
    assert speed.ciphers[0].cipher == "aes-256-gcm" and speed.ciphers[0].bytes_per_second > 1e6  # 1 MB/s at least


def test_a_host_whose_path_has_no_openssl(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "getconf", "grep", "head", "cut"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(bin_dir))
    speed = asyncio.run(measure_speed(LocalTransport(), message_bytes=65535))
    assert speed.library is None and speed.note == NO_OPENSSL and speed.cores == os.cpu_count()


def test_a_flooding_openssl_reaches_redolab_cut(tmp_path, monkeypatch):
    """An `openssl` that prints a megabyte per call: the script passes on 20 lines of 200 bytes per cipher."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "getconf", "grep", "head", "cut", "yes"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    fake = bin_dir / "openssl"
    fake.write_text('#!/bin/sh\nyes "+F:1:x:$(printf "%01000d" 5)" | head -c 1000000\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    argv = ["sh", "-c", SCRIPT, "sh", "1", "65535", *CIPHERS]
    answer = asyncio.run(LocalTransport().run(argv))
    assert len(answer.stdout.encode()) < 2 * 21 * 201 + 400
    speed = parse_speed(answer.stdout, message_bytes=65535)
    assert len(speed.library) <= 200 and all(c.bytes_per_second is None for c in speed.ciphers)
