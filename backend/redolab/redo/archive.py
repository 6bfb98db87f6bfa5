"""Collection archives (.zip, .tar, .tar.gz/.tgz, .tar.bz2, a single .gz) dropped as one upload.

Read safely: members are counted and sized before and while they are written, a member that
inflates far beyond its compressed size stops the read (a compression bomb), only regular files are
taken, and no path from inside the archive is ever used on disk: each member is written under a
generated name in a directory the caller owns and removes.
"""

from __future__ import annotations

import bz2
import gzip
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from redolab.redo.parsers import RedoInputError

MAX_MEMBERS = 500
MAX_MEMBER_BYTES = 256 * 1024 * 1024
# Unpacked in all: past REDOLAB_PREVIEW_CPU_SECONDS (60 s) a preview stops after on the order of
# 100 MiB of text anyway; 512 MiB bounds what a doomed upload unpacks onto the data disk (4 at once: 2 GiB).
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_RATIO = 200  # uncompressed / compressed, past a small floor: text compresses 5-20x, bombs 1000x
RATIO_FLOOR_BYTES = 16 * 1024 * 1024
_BLOCK = 1 << 20


@dataclass
class Source:
    """One file to read: where it is, and the name the user knows it by."""

    path: Path
    name: str


def kind_of(path: Path) -> str | None:
    """'zip', 'tar', 'gzip', 'bzip2' by the file's first bytes, or None for a plain file."""
    with open(path, "rb") as handle:
        magic = handle.read(262)
    if magic.startswith(b"PK\x03\x04") or magic.startswith(b"PK\x05\x06"):
        return "zip"
    if magic.startswith(b"\x1f\x8b"):
        return "gzip"
    if magic.startswith(b"BZh"):
        return "bzip2"
    if len(magic) >= 262 and magic[257:262] == b"ustar":
        return "tar"
    return None


def expand(path: Path, name: str, workdir: Path) -> list[Source] | None:
    """The archive's regular files as Sources under `workdir`, or None when `path` is no archive."""
    kind = kind_of(path)
    if kind is None:
        return None
    compressed = path.stat().st_size
    budget = _Budget(name, compressed)
    if kind == "zip":
        return _zip(path, name, workdir, budget)
    opener = {"gzip": gzip.open, "bzip2": bz2.open}.get(kind)
    if kind in ("gzip", "bzip2"):
        try:
            with opener(path, "rb") as probe:
                head = probe.read(262)
        except (OSError, EOFError, zlib.error) as error:
            raise RedoInputError(f"{name}: the {kind} file is damaged ({error}): compress it again") from None
        if not (len(head) >= 262 and head[257:262] == b"ustar"):  # one compressed file, not a tar
            inner = name[: -len(".gz")] if name.endswith(".gz") else name.rsplit(".", 1)[0]
            target = workdir / "member-0"
            try:
                with opener(path, "rb") as source:
                    budget.copy(source, target, inner)
            except (OSError, EOFError, zlib.error) as error:
                raise RedoInputError(f"{name}: the {kind} file is damaged ({error}): compress it again") from None
            return [Source(target, f"{name}/{inner}")]
    return _tar(path, name, workdir, budget)


class _Budget:
    def __init__(self, archive: str, compressed: int) -> None:
        self.archive, self.compressed, self.total, self.members = archive, max(compressed, 1), 0, 0

    def member(self, inner: str, size: int | None = None) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise RedoInputError(
                f"{self.archive}: more than {MAX_MEMBERS} files in the archive; nothing was read. Upload an "
                "archive of the redo files only (opdb__archlogs__, opdb__awrhistsysmetrichist__, awr-hist-*.out)"
            )
        if size is not None and size > MAX_MEMBER_BYTES:
            raise RedoInputError(
                f"{self.archive}: {inner} is {size / 1048576:,.0f} MiB, over the {MAX_MEMBER_BYTES >> 20} MiB "
                "limit for one file in an archive"
            )

    def copy(self, source: IO[bytes], target: Path, inner: str) -> None:
        written = 0
        with open(target, "wb") as out:
            for block in iter(lambda: source.read(_BLOCK), b""):
                written += len(block)
                self.total += len(block)
                if written > MAX_MEMBER_BYTES:
                    raise RedoInputError(
                        f"{self.archive}: {inner} unpacks to more than {MAX_MEMBER_BYTES >> 20} MiB, the limit for "
                        "one file in an archive"
                    )
                if self.total > MAX_TOTAL_BYTES:
                    raise RedoInputError(
                        f"{self.archive}: the archive unpacks to more than {MAX_TOTAL_BYTES >> 20} MiB; "
                        "nothing was read"
                    )
                if self.total > RATIO_FLOOR_BYTES and self.total > MAX_RATIO * self.compressed:
                    raise RedoInputError(
                        f"{self.archive}: {inner} inflates more than {MAX_RATIO} times its compressed size "
                        "(a compression bomb?); nothing was read. Unpack it yourself and upload the export files"
                    )
                out.write(block)


def _display(name: str, inner: str) -> str:
    return f"{name}/{PurePosixPath(inner).as_posix().lstrip('/')}"


def _zip(path: Path, name: str, workdir: Path, budget: _Budget) -> list[Source]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        raise RedoInputError(f"{name}: not a readable zip archive ({error})") from None
    sources = []
    with archive:
        for number, info in enumerate(archive.infolist()):
            if info.is_dir():
                continue
            budget.member(info.filename, info.file_size)
            target = workdir / f"member-{number}"
            try:
                with archive.open(info) as source:
                    budget.copy(source, target, info.filename)
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError, zlib.error) as error:
                raise RedoInputError(f"{name}: {info.filename} cannot be unpacked ({error})") from None
            sources.append(Source(target, _display(name, info.filename)))
    return sources


def _tar(path: Path, name: str, workdir: Path, budget: _Budget) -> list[Source]:
    sources = []
    try:
        with tarfile.open(path, "r:*") as archive:
            for number, info in enumerate(archive):
                if not info.isfile():
                    continue  # directories, links, devices: nothing to read, nothing followed
                budget.member(info.name, info.size)
                source = archive.extractfile(info)
                if source is None:
                    continue
                target = workdir / f"member-{number}"
                budget.copy(source, target, info.name)
                sources.append(Source(target, _display(name, info.name)))
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise RedoInputError(f"{name}: not a readable tar archive ({error})") from None
    return sources
