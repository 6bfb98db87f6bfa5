"""Static files under content-hashed names, cached for a year and sent gzip-compressed.

Templates ask `static_url("vendor/plotly.min.js")` and get `/static/vendor/plotly.min.1a2b3c4d.js`:
the hash changes when the file does, so a browser may keep every hashed file forever
(Cache-Control: immutable) and still never runs an old app.js. A request for the plain name is
answered too (the API docs' Swagger files, bookmarks), revalidated on every use. Compressed copies
are made once per file version in the data directory (not in the source tree), in a background
thread: until a copy is ready the file goes out uncompressed, so no request ever waits for gzip
(plotly.js is 4.8 MB; compressing it takes seconds on a small machine).
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import re
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import anyio
from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
COMPRESSIBLE = frozenset({".js", ".css", ".svg", ".json", ".map", ".html"})
_HASHED = re.compile(r"^(?P<stem>.+)\.(?P<hash>[0-9a-f]{12})(?P<suffix>\.[A-Za-z0-9]+)$")


@dataclass(frozen=True)
class _Version:
    mtime_ns: int
    size: int
    digest: str  # the first 12 hex digits of the SHA-256 of the content


class Assets:
    """The hashed name of each static file, computed when first asked and again when the file changes."""

    def __init__(self, root: Path, cache_dir: Path) -> None:
        self.root = root.resolve()
        self.cache_dir = cache_dir
        self._versions: dict[str, _Version] = {}
        self._lock = threading.Lock()
        self._compressing: set[Path] = set()
        self._compressor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="redolab-gzip")

    def _version(self, name: str) -> _Version | None:
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            return None
        stat = path.stat()
        with self._lock:
            known = self._versions.get(name)
            if known and (known.mtime_ns, known.size) == (stat.st_mtime_ns, stat.st_size):
                return known
        with open(path, "rb") as source:
            digest = hashlib.file_digest(source, "sha256").hexdigest()[:12]
        version = _Version(stat.st_mtime_ns, stat.st_size, digest)
        with self._lock:
            self._versions[name] = version
        return version

    def url(self, name: str) -> str:
        """/static/<name with its content hash>; the plain name when there is no such file."""
        version = self._version(name)
        if version is None:
            return f"/static/{name}"
        stem, dot, suffix = name.rpartition(".")
        return f"/static/{stem}.{version.digest}.{suffix}" if dot else f"/static/{name}.{version.digest}"

    def resolve(self, requested: str) -> str | None:
        """The real name behind a hashed one, if the hash is the file's current one."""
        match = _HASHED.match(requested)
        if not match:
            return None
        name = match["stem"] + match["suffix"]
        version = self._version(name)
        return name if version is not None and version.digest == match["hash"] else None

    def gzipped(self, name: str, *, wait: bool = False) -> Path | None:
        """The gzip copy of the current version, or None: a type not worth compressing, or a copy not
        made yet (then it is started in the background; `wait` makes it now)."""
        version = self._version(name)
        if version is None or Path(name).suffix not in COMPRESSIBLE:
            return None
        target = self.cache_dir / f"{name.replace('/', '_')}.{version.digest}.gz"
        if target.is_file():
            return target
        if wait:
            self._compress(name, target)
            return target
        with self._lock:
            if target not in self._compressing:
                self._compressing.add(target)
                self._compressor.submit(self._compress, name, target)
        return None

    def _compress(self, name: str, target: Path) -> None:
        partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            with open(self.root / name, "rb") as source, gzip.open(partial, "wb", compresslevel=6) as out:
                shutil.copyfileobj(source, out)
            partial.replace(target)  # atomic: a concurrent request sees no copy or the whole copy
        finally:
            partial.unlink(missing_ok=True)  # a copy that failed midway (disk full) is not left behind
            with self._lock:
                self._compressing.discard(target)


class HashedStaticFiles(StaticFiles):
    """StaticFiles that answers hashed names with long cache lifetimes and gzip when accepted."""

    def __init__(self, *, assets: Assets) -> None:
        super().__init__(directory=assets.root)
        self.assets = assets

    async def get_response(self, path: str, scope: Scope) -> Response:
        real = self.assets.resolve(path)
        if real is None:
            response = await super().get_response(path, scope)
            response.headers.setdefault("Cache-Control", REVALIDATE)
            return response
        if "gzip" in Headers(scope=scope).get("accept-encoding", ""):
            compressed = await anyio.to_thread.run_sync(self.assets.gzipped, real)
            if compressed is not None:
                media_type = mimetypes.guess_type(real)[0] or "application/octet-stream"
                headers = {"Content-Encoding": "gzip", "Cache-Control": IMMUTABLE, "Vary": "Accept-Encoding"}
                return FileResponse(compressed, media_type=media_type, headers=headers)
        response = await super().get_response(real, scope)
        response.headers["Cache-Control"] = IMMUTABLE
        response.headers["Vary"] = "Accept-Encoding"
        return response
