"""Mutated import files through the HTTP API, and the rules every answer must keep.

Shared by tests/security/test_fuzz_imports.py (hypothesis, bounded to about a minute) and
bench/fuzz_imports.py (tens of thousands of inputs, printing counts). The seeds are the real-format
files of the test suite (collectors' output, SQL*Plus spools, AWR reports, oratcptest and iperf3
output, db2pd captures); the mutations are the classes a fuzzer found 500s and absurd values with:
numbers replaced by NaN, Infinity, negatives, 1e27 or integers over 2^63; dates before 1970, after
2100 or impossible; the two times of a row swapped; fields over 128 KiB; deep JSON nesting; JSON
values of the wrong type; a tiny divisor with a huge dividend (an iperf3 window over a segment size
of 1e-300 overflowed a float); lines duplicated, dropped, swapped or cut; bytes flipped; CRLF and
BOMs; numbers re-written with a decimal comma (NLS_NUMERIC_CHARACTERS ',.' or ', ') and headings
cut as SQL*Plus cuts them. Result files are imported with a test date from TEST_DATES (the end of year 9999 overflowed
the calendar of an oratcptest -freq file).

The rules (`Fuzzer.submit` checks them and returns the broken ones):
- no answer is a server error (5xx);
- a refused import stores nothing (every table's row count is unchanged);
- an accepted import stores only finite values within the physical bounds (also each stream's
  congestion window, round-trip times, path MTU and retransmits), and the environment's pages
  still answer.
"""

from __future__ import annotations

import csv
import json
import math
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import BigInteger, Float, Integer, func, select
from sqlalchemy.types import JSON

from tests.redo.nls import GROUPS, cut_heading, render_comma_decimals

ROOT = Path(__file__).resolve().parent
KINDS = ("redo", "runs", "hadr")


@dataclass(frozen=True)
class Seed:
    kind: str  # redo, runs, hadr: the import it goes to
    name: str
    data: bytes


def seeds() -> list[Seed]:
    found = []
    for path in sorted((ROOT / "fixtures" / "redo").rglob("*")):
        if path.is_file() and "bad" not in path.name:
            found.append(Seed("redo", path.name, path.read_bytes()))
    for path in sorted((ROOT / "fixtures" / "db2").glob("*")):
        found.append(Seed("hadr" if path.name.startswith("db2pd_hadr") else "redo", path.name, path.read_bytes()))
    for path in sorted((ROOT / "runs" / "data").glob("*")):
        found.append(Seed("runs", path.name, path.read_bytes()))
    return found


# -- mutations ------------------------------------------------------------------------------------
EXTREME_NUMBERS = [
    "-1", "-0.5", "0", "0.0", "-0", "NaN", "nan", "Infinity", "-Infinity", "inf", "1e27", "1e308", "1e400",
    "99999999999999999999999999", "18446744073709551616", "9223372036854775808", "29366", "4097", "65536",
    "1e-300", "0.0000001", "-99999999999999", "2147483648", "1,234,567,890,123,456", "١٢٣", "0x10", "1e",
]  # fmt: skip
EXTREME_YEARS = ["1900", "0001", "1969", "2101", "9999", "1970", "2100", "0000"]
EXTREME_TIMES = ["99:99:99", "24:00:00", "23:59:60", "-1:00:00", "00:00"]
EXTREME_JSON = [
    -1, -1e-9, 0, 2**63, 2**64, 2**100, -(2**63) - 1, 1e308, 1e27, 1e-300, 29366, "12", "", "NaN", None, True,
    [], {}, [1, 2], {"a": 1},
]  # fmt: skip
TINY_JSON = [1e-300, 5e-324, 1e-9, 0.5]  # divisors
HUGE_JSON = [2**60, 2**63 - 1, 1e300]  # dividends
# the day an oratcptest file is dated by (the form's Date field): an ordinary one and the calendar's edges
TEST_DATES = ["2026-03-04", "9999-12-31", "2100-12-31", "2100-12-30", "1970-01-01", "1969-12-31", "0001-01-01"]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_YEAR = re.compile(rb"(?<!\d)(?:19|20)\d\d(?!\d)")
_CLOCK = re.compile(rb"\d\d:\d\d:\d\d")
_DATE = re.compile(rb"\d{1,2}-[A-Z]{3}-\d{2,4}(?: \d\d:\d\d:\d\d)?|\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d:\d\d)?")


def _replace_match(rng: random.Random, data: bytes, pattern: re.Pattern, replacement: bytes) -> bytes:
    matches = list(pattern.finditer(data, 0, 200_000))
    if not matches:
        return data
    match = rng.choice(matches)
    return data[: match.start()] + replacement + data[match.end() :]


def _number(rng, data, seed):
    return _replace_match(rng, data, _NUMBER, rng.choice(EXTREME_NUMBERS).encode())


def _year(rng, data, seed):
    return _replace_match(rng, data, _YEAR, rng.choice(EXTREME_YEARS).encode())


def _clock(rng, data, seed):
    return _replace_match(rng, data, _CLOCK, rng.choice(EXTREME_TIMES).encode())


def _swap_dates(rng, data, seed):
    """The two times of one line swapped: END before BEGIN, NEXT_TIME before FIRST_TIME."""
    lines = data.split(b"\n")
    candidates = [i for i, line in enumerate(lines[:5000]) if len(_DATE.findall(line)) >= 2]
    if not candidates:
        return data
    i = rng.choice(candidates)
    first, second = list(_DATE.finditer(lines[i]))[:2]
    line = lines[i]
    lines[i] = (
        line[: first.start()]
        + second.group()
        + line[first.end() : second.start()]
        + first.group()
        + line[second.end() :]
    )
    return b"\n".join(lines)


def _huge_field(rng, data, seed):
    """A field over 128 KiB (the csv module's default limit)."""
    filler = rng.choice([b"9", b"A", b'"', b" "]) * rng.randint(129 * 1024, 200 * 1024)
    position = rng.randint(0, len(data))
    return data[:position] + filler + data[position:]


def _lines(rng, data, seed):
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    operation = rng.choice(["duplicate", "delete", "swap", "blank", "cut"])
    if operation == "duplicate":
        lines.insert(j, lines[i])
    elif operation == "delete":
        del lines[i]
    elif operation == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif operation == "blank":
        lines.insert(i, b"")
    else:
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    return b"\n".join(lines)


def _bytes(rng, data, seed):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        position = rng.randrange(len(data) + 1)
        operation = rng.random()
        value = rng.choice([0, 0xFF, ord('"'), ord(","), ord("\n"), ord("|"), ord("{"), rng.randrange(256)])
        if operation < 0.4 and position < len(data):
            data[position] = value
        elif operation < 0.7:
            data.insert(position, value)
        elif position < len(data):
            del data[position]
    return bytes(data)


def _truncate(rng, data, seed):
    return data[: rng.randrange(len(data) + 1)]


def _encoding(rng, data, seed):
    choice = rng.choice(["crlf", "bom", "utf16", "cr"])
    if choice == "crlf":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if choice == "bom":
        return b"\xef\xbb\xbf" + data
    if choice == "utf16":
        return data.decode("utf-8", "replace").encode("utf-16")
    return data.replace(b"\n", b"\r")


def _splice(rng, data, seed):
    """Lines of another file of the same kind, or of any kind, pasted in."""
    others = [s for s in _SEEDS if s.kind == seed.kind or rng.random() < 0.2]
    other = rng.choice(others).data.split(b"\n")
    start = rng.randrange(len(other))
    piece = other[start : start + rng.randint(1, 20)]
    lines = data.split(b"\n")
    at = rng.randrange(len(lines) + 1)
    return b"\n".join(lines[:at] + piece + lines[at:])


def _json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _json_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:50]):
            yield from _json_paths(item, (*path, index))


def _json(rng, data, seed):
    """A JSON value replaced by a wrong type, an extreme number or deep nesting, or a key removed."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return _number(rng, data, seed)
    paths = [p for p in _json_paths(document) if p]
    if not paths:
        return data
    path = rng.choice(paths)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    choice = rng.random()
    if choice < 0.15:
        del parent[path[-1]]
        return json.dumps(document).encode()
    marker = "\x00MARK\x00"
    if choice < 0.25:
        parent[path[-1]] = marker
        text = json.dumps(document)
        depth = rng.choice([100, 1000, 5000, 50_000])
        return text.replace(json.dumps(marker), "[" * depth + "]" * depth).encode()
    if choice < 0.35:
        parent[path[-1]] = marker
        return json.dumps(document).replace(json.dumps(marker), rng.choice(["NaN", "Infinity", "-Infinity"])).encode()
    parent[path[-1]] = rng.choice(EXTREME_JSON)
    return json.dumps(document).encode()


def _json_ratio(rng, data, seed):
    """A tiny number among a test's own scalars (what a reader divides by: a segment size, a block
    size, a duration), and a huge one anywhere (a window, a byte count): their quotient overflows a
    float unless the reader bounds the divisor."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return _number(rng, data, seed)
    numbers = [p for p in _json_paths(document) if p and _is_number(_json_at(document, p))]
    if not numbers:
        return data
    scalars = [p for p in numbers if not any(isinstance(key, int) for key in p)] or numbers
    divisors = [p for p in scalars if _DIVISOR.search(str(p[-1]))] or scalars
    _json_set(document, rng.choice(divisors), rng.choice(TINY_JSON))
    _json_set(document, rng.choice(numbers), rng.choice(HUGE_JSON))
    return json.dumps(document).encode()


_DIVISOR = re.compile(r"(?i)mss|size|len|seconds|duration|interval|streams")


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json_at(document, path):
    for key in path:
        document = document[key]
    return document


def _json_set(document, path, value) -> None:
    _json_at(document, path[:-1])[path[-1]] = value


def _comma_decimal(rng, data, seed):
    """The file as a database under NLS_NUMERIC_CHARACTERS ',.' or ', ' writes it (issue 32)."""
    try:
        rendered = render_comma_decimals(data, rng.choice(GROUPS), semicolons=rng.random() < 0.5)
    except (UnicodeDecodeError, csv.Error):
        return data
    return data if rendered is None else rendered


def _cut_heading(rng, data, seed):
    """The heading cut as SQL*Plus cuts one longer than its line or column (issue 32)."""
    try:
        return cut_heading(data, rng.uniform(0.05, 1.0))
    except csv.Error:
        return data


MUTATIONS = {
    "comma-decimal": _comma_decimal, "cut-heading": _cut_heading,
    "number": _number, "year": _year, "clock": _clock, "swap-dates": _swap_dates, "huge-field": _huge_field,
    "lines": _lines, "bytes": _bytes, "truncate": _truncate, "encoding": _encoding, "splice": _splice,
    "json": _json, "json-ratio": _json_ratio,
}  # fmt: skip
_WEIGHTS = {"comma-decimal": 3, "cut-heading": 2,
            "number": 6, "year": 3, "clock": 2, "swap-dates": 3, "huge-field": 1, "lines": 3, "bytes": 2,
            "truncate": 1, "encoding": 1, "splice": 1, "json": 0, "json-ratio": 0}  # fmt: skip
_SEEDS = seeds()


def _structural(rng: random.Random) -> str:
    return "json-ratio" if rng.random() < 0.25 else "json"


def _weighted(rng: random.Random) -> str:
    return rng.choices(list(_WEIGHTS), list(_WEIGHTS.values()))[0]


def mutate(rng: random.Random, seed: Seed, names: list[str] | None = None) -> tuple[list[str], bytes]:
    """The named mutations of a seed, or one to three chosen by weight (JSON seeds mostly get
    structural ones); their names and the bytes."""
    if names is None:
        is_json = seed.data.lstrip()[:1] == b"{"
        names = [
            _structural(rng) if is_json and rng.random() < 0.6 else _weighted(rng)
            for _ in range(rng.choice([1, 1, 2, 3]))
        ]
    data = seed.data
    for name in names:
        data = MUTATIONS[name](rng, data, seed)
    return names, data


# -- the rules ------------------------------------------------------------------------------------
MAX_BYTES_PER_SECOND = 1e12  # 1 TB/s
MAX_BYTES = 2.0**60
MAX_SECONDS = 10 * 365 * 86400
MAX_MTU_BYTES = 65536
MAX_COUNT = 2**63 - 1
FIRST_EPOCH, LAST_EPOCH = 0.0, datetime(2101, 1, 1, tzinfo=UTC).timestamp()
TABLES = ("redo_imports", "redo_rows", "redo_analyses", "jobs", "hadr_imports", "hadr_samples", "runs",
          "run_events", "run_summaries")  # fmt: skip


def _bound(column: str) -> tuple[float, float] | None:
    """The physical range of a stored number, from its column's (or JSON key's) name. A required
    rate is a measured one plus headroom, so it may exceed the measured bound: it is only finite."""
    name = column.lower()
    if name.startswith("required"):
        return 0.0, math.inf
    if name in ("pmtu", "mtu_bytes"):
        return 0.0, MAX_MTU_BYTES
    if name == "snd_cwnd":  # segments: never more than the bytes
        return 0.0, MAX_BYTES
    if name.endswith("_us"):  # rtt_us, rttvar_us, delay_us
        return 0.0, MAX_SECONDS * 1e6
    if name in ("retransmits", "wait_count", "heartbeats_missed", "heartbeats_expected"):  # counts since start
        return 0.0, MAX_COUNT
    if "epoch" in name:
        return FIRST_EPOCH, LAST_EPOCH
    if name.endswith("bytes_per_second"):
        return 0.0, MAX_BYTES_PER_SECOND
    if name.endswith("bits_per_second"):
        return 0.0, 8 * MAX_BYTES_PER_SECOND
    if name in ("thread", "inst_id", "instance", "dest_id", "member", "conns"):
        return 0.0, 4096.0
    if name == "hour_of_day" or name == "hour":
        return 0.0, 23.0
    if name.endswith("seconds") or name == "seconds":
        return 0.0, MAX_SECONDS
    if name.endswith("bytes") or name == "bytes":
        return 0.0, MAX_BYTES
    return None


def check_number(where: str, key: str, value, broken: list[str]) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    if isinstance(value, float) and not math.isfinite(value):
        broken.append(f"{where}: {key} = {value} is not finite")
        return
    bound = _bound(key)
    if bound and not bound[0] <= value <= bound[1]:
        broken.append(f"{where}: {key} = {value!r} is outside {bound[0]:g} to {bound[1]:g}")


def _walk_json(where: str, key: str, value, broken: list[str], depth: int = 0) -> None:
    if depth > 40:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _walk_json(where, str(k), v, broken, depth + 1)
    elif isinstance(value, list):
        for v in value[:10_000]:
            _walk_json(where, key, v, broken, depth + 1)
    else:
        check_number(where, key, value, broken)


def stored_violations(connection, tables, after: dict[str, int]) -> list[str]:
    """Every out-of-bound or non-finite value in rows added after the given ids (`after`: table ->
    the largest id before), and every redo row that ends before it starts or is faster than 1 TB/s."""
    broken: list[str] = []
    for name in TABLES:
        table = tables[name]
        key = _id_column(table)
        rows = connection.execute(select(table).where(key > after.get(name, 0))).mappings()
        for row in rows:
            where = f"{name} {row[key.name]}"
            for column in table.columns:
                value = row[column.name]
                if value is None:
                    continue
                if isinstance(column.type, JSON):
                    _walk_json(where, column.name, value, broken)
                elif isinstance(column.type, Float | Integer | BigInteger) and not column.foreign_keys:
                    if column.primary_key:
                        continue
                    check_number(where, column.name, value, broken)
                elif isinstance(value, datetime) and not 1970 <= value.year <= 2100:
                    broken.append(f"{where}: {column.name} = {value} is outside the years 1970 to 2100")
            if name == "redo_rows":
                start, end = row["start_epoch_seconds"], row["end_epoch_seconds"]
                duration = end - start if start is not None and end is not None else row["seconds"]
                if duration is not None and duration < 0:
                    broken.append(f"{where}: {row['bytes']} bytes in {duration} s (ends before it starts)")
                elif duration and row["bytes"] / duration > MAX_BYTES_PER_SECOND:
                    broken.append(f"{where}: {row['bytes'] / duration:.3g} B/s is over 1 TB/s")
    return broken


def _id_column(table):
    return table.c.id if "id" in table.c else table.c[table.primary_key.columns.keys()[0]]


def high_water(connection, tables) -> dict[str, int]:
    return {
        name: connection.execute(select(func.coalesce(func.max(_id_column(tables[name])), 0))).scalar_one()
        for name in TABLES
    }


def counts(connection, tables) -> dict[str, int]:
    return {name: connection.execute(select(func.count()).select_from(tables[name])).scalar_one() for name in TABLES}


# -- the driver -----------------------------------------------------------------------------------
@dataclass
class Outcome:
    kind: str
    status: int  # the last answer's status
    accepted: bool
    broken: list[str] = field(default_factory=list)
    message: str = ""


class Fuzzer:
    """Submits files through the JSON API as an operator would, and checks the rules after each."""

    def __init__(self, client, engine, environment_id: int, client_host_id: int, server_host_id: int) -> None:
        from redolab.core.db import Base

        self.client, self.engine = client, engine
        self.environment_id, self.hosts = environment_id, (client_host_id, server_host_id)
        self.tables = Base.metadata.tables

    def submit(self, kind: str, name: str, data: bytes, *, test_date: str = TEST_DATES[0]) -> Outcome:
        """`test_date`: the day result files are dated by (runs only)."""
        with self.engine.connect() as connection:
            before, marks = counts(connection, self.tables), high_water(connection, self.tables)
        if kind == "runs":
            response, accepted = self._runs(name, data, test_date)
        else:
            response, accepted = getattr(self, f"_{kind}")(name, data)
        outcome = Outcome(kind, response.status_code, accepted, message=response.text[:300])
        if response.status_code >= 500:
            outcome.broken.append(f"HTTP {response.status_code}: {response.text[:200]}")
        with self.engine.connect() as connection:
            if not accepted:
                after = counts(connection, self.tables)
                changed = {t: (before[t], after[t]) for t in TABLES if before[t] != after[t]}
                if changed:
                    outcome.broken.append(f"refused with HTTP {response.status_code}, yet stored rows: {changed}")
            else:
                outcome.broken.extend(stored_violations(connection, self.tables, marks))
        if accepted:
            outcome.broken.extend(self._pages_answer())
            self._remove(kind, response.json())
        return outcome

    def _redo(self, name: str, data: bytes):
        base = f"/api/v1/environments/{self.environment_id}/redo"
        preview = self.client.post(f"{base}/preview", files={"file": (name, data, "application/octet-stream")})
        if preview.status_code != 200:
            return preview, False
        response = self.client.post(f"{base}/imports", json={"upload_token": preview.json()["upload_token"]})
        return response, response.status_code == 201

    def _runs(self, name: str, data: bytes, test_date: str):
        response = self.client.post(
            f"/api/v1/environments/{self.environment_id}/runs/import",
            data={"client_host_id": self.hosts[0], "server_host_id": self.hosts[1], "test_date": test_date},
            files=[("files", (name, data, "application/octet-stream"))],
        )
        return response, response.status_code == 201

    def _hadr(self, name: str, data: bytes):
        response = self.client.post(
            f"/api/v1/environments/{self.environment_id}/hadr/captures",
            files={"file": (name, data, "application/octet-stream")},
        )
        return response, response.status_code == 201

    def _pages_answer(self) -> list[str]:
        broken = []
        for url in (f"/environments/{self.environment_id}", f"/api/v1/environments/{self.environment_id}/plan",
                    f"/api/v1/environments/{self.environment_id}/redo/analytics",
                    f"/api/v1/environments/{self.environment_id}/hadr-calculator"):  # fmt: skip
            response = self.client.get(url)
            if response.status_code >= 500:
                broken.append(f"GET {url} after the import: HTTP {response.status_code}")
        return broken

    def _remove(self, kind: str, body: dict) -> None:
        """Delete what was accepted, so the environment stays small and the next input starts clean."""
        base = f"/api/v1/environments/{self.environment_id}"
        if kind == "redo":
            urls = [f"{base}/redo/imports/{body['id']}"]
        elif kind == "hadr":
            urls = [f"{base}/hadr/imports/{body['id']}"]
        else:
            urls = [f"/api/v1/runs/{run['id']}" for run in body["data"]]
        for url in urls:
            response = self.client.delete(url)
            assert response.status_code == 204, (url, response.status_code, response.text[:200])
