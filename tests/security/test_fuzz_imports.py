"""Mutated import files through the HTTP API (issue 20): no server error, a refused import stores
nothing, an accepted one stores only finite values within the physical bounds. The property runs
a bounded number of inputs here; bench/fuzz_imports.py runs tens of thousands."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import log_in, migrated_sqlite
from tests.factories import make_environment, make_host
from tests.fuzzing import MUTATIONS, Fuzzer, mutate, seeds
from tests.redo.nls import cut_heading, render_comma_decimals

SEEDS = seeds()
FIXTURES = Path(__file__).parents[1] / "fixtures"
RUNS = Path(__file__).parents[1] / "runs" / "data"


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """HTTP behaviour, the same on either database: these run once, on SQLite."""
    return migrated_sqlite(tmp_path_factory)


@pytest.fixture
def fuzzer(app, user, session, engine):
    environment = make_environment(session, name="fuzz")
    primary = make_host(session, environment, role="primary", name="p1", transport="local")
    standby = make_host(session, environment, role="standby", name="s1", transport="local")
    with TestClient(app, follow_redirects=False, raise_server_exceptions=False) as client:
        assert log_in(client, user.username).status_code == 303
        yield Fuzzer(client, engine, environment.id, primary.id, standby.id)


def test_the_seeds_cover_every_import_and_are_accepted_unmutated(fuzzer):
    """The rules can only be broken by the mutations: every seed as written is accepted (the few
    that are not redo history alone are the known exceptions)."""
    assert {seed.kind for seed in SEEDS} == {"redo", "runs", "hadr"}
    refused = {}
    for seed in SEEDS:
        outcome = fuzzer.submit(seed.kind, seed.name, seed.data)
        assert outcome.broken == [], (seed.name, outcome.broken)
        if not outcome.accepted:
            refused[seed.name] = outcome.status
    # the server side's oratcptest output measures nothing; a `find -printf` listing has no file
    # sizes, so it needs LOGFILSIZ given with it
    assert refused == {"oratcptest_server.txt": 422, "archive_listing_find_printf.txt": 422}, refused


# 150 examples here (54 s of CPU at 400, a tenth of the suite's heavy tail); bench/fuzz_imports.py
# runs 20,000 mutated inputs through the same rules.
@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.sampled_from(SEEDS),
    names=st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=1, max_size=3),
    randomness=st.integers(0, 2**32 - 1),
)
def test_no_mutated_file_breaks_a_rule(fuzzer, seed, names, randomness):
    names, data = mutate(random.Random(randomness), seed, names)
    outcome = fuzzer.submit(seed.kind, f"mutated-{seed.name}", data)
    assert outcome.broken == [], (seed.name, names, outcome.status, outcome.broken)
    if not outcome.accepted:
        assert 400 <= outcome.status < 500
        assert f"mutated-{seed.name}" in outcome.message or outcome.status in (409, 413), outcome.message


def _submit(fuzzer, kind, name, data: bytes):
    outcome = fuzzer.submit(kind, name, data)
    assert outcome.broken == [], outcome.broken
    return outcome


ARCHIVED = (FIXTURES / "redo" / "gv_archived_log.csv").read_text()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda lines: [lines[0], lines[1].replace("1 ; 1 ; 100", "1 ; 29366 ; 100", 1), *lines[2:]],
         "thread 29,366 is outside 0 to 4,096"),
        (lambda lines: [lines[0], lines[1].replace("15-JAN-22 08:00", "15-JAN-1900 08:00", 1), *lines[2:]],
         "1970 to 2100"),
        (lambda lines: [lines[0], lines[1] + "9" * (140 * 1024), *lines[2:]], None),
    ],
    ids=["thread", "year", "huge-field"],
)  # fmt: skip
def test_redo_values_beyond_bounds_are_refused_naming_line_and_bound(fuzzer, change, expected):
    lines = ARCHIVED.splitlines()
    data = "\n".join(change(lines)).encode()
    outcome = _submit(fuzzer, "redo", "archived.csv", data)
    assert outcome.status == 422 and not outcome.accepted, outcome.message
    assert "archived.csv" in outcome.message and "line 2" in outcome.message, outcome.message
    if expected:
        assert expected in outcome.message, outcome.message


def test_a_log_that_ends_before_it_starts_is_refused(fuzzer):
    text = (
        "THREAD#,SEQUENCE#,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE\n"
        "1,10,2026-03-01 10:00:00,2026-03-01 10:20:00,2048000,512\n"
        "1,11,2026-03-01 10:40:00,2026-03-01 10:20:00,2048000,512\n"
    )
    outcome = _submit(fuzzer, "redo", "swapped.csv", text.encode())
    assert outcome.status == 422
    assert "line 3: it ends (2026-03-01 10:20:00) before it starts (2026-03-01 10:40:00)" in outcome.message


def test_a_rate_over_a_terabyte_per_second_is_refused(fuzzer):
    text = (
        "THREAD#,SEQUENCE#,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE\n"
        "1,10,2026-03-01 10:00:00,2026-03-01 10:00:01,2000000000000000,512\n"
    )
    outcome = _submit(fuzzer, "redo", "fast.csv", text.encode())
    assert outcome.status == 422 and "over 1 TB/s" in outcome.message and "line 2" in outcome.message


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (("end",), 5, "end is 5, not an object"),
        (("intervals",), "many", 'intervals is \\"many\\", not an array'),
        (("intervals", 0, "streams", 0, "rtt"), 2**70, "intervals[0].streams[0].rtt is"),
        (("start", "timestamp", "timesecs"), 1e300, "start.timestamp.timesecs is"),
        (("start", "test_start", "num_streams"), 100_000, "num_streams"),
        (("intervals", 0, "sum", "start"), 5.0, "intervals[0].sum ends"),
    ],
    ids=["end-number", "intervals-object", "rtt-2^70", "timestamp-1e300", "streams-100000", "interval-backwards"],
)
def test_iperf3_values_of_the_wrong_type_or_beyond_bounds_are_refused_naming_the_path(fuzzer, path, value, expected):
    document = json.loads((RUNS / "iperf3_two_streams.json").read_text())
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    outcome = _submit(fuzzer, "runs", "iperf3.json", json.dumps(document).encode())
    assert outcome.status == 422 and not outcome.accepted, outcome.message
    assert "iperf3.json" in outcome.message and expected in outcome.message, outcome.message


def test_oratcptest_throughput_beyond_a_terabyte_per_second_is_refused(fuzzer):
    text = (RUNS / "oratcptest_async.txt").read_text()
    changed = text.replace("Avg. throughput = 73.209 Mbytes/s", "Avg. throughput = 73209000000 Mbytes/s")
    assert changed != text
    outcome = _submit(fuzzer, "runs", "oratcptest.txt", changed.encode())
    assert outcome.status == 422 and "1 TB/s" in outcome.message, outcome.message


def test_db2pd_captures_after_2100_or_with_member_numbers_beyond_4096_are_refused(fuzzer):
    text = (FIXTURES / "db2" / "db2pd_hadr_101.txt").read_text()
    year = text.replace("2026", "9999").replace("2012", "9999").replace("2013", "9999")
    outcome = _submit(fuzzer, "hadr", "db2pd.txt", year.encode())
    assert outcome.status == 422 and "1970 to 2100" in outcome.message, outcome.message
    member = text.replace("Database Member 0", "Database Member 29366", 1)
    outcome = _submit(fuzzer, "hadr", "db2pd.txt", member.encode())
    assert outcome.status == 422 and "over 4,096" in outcome.message, outcome.message


def test_a_db2_listing_with_a_200_kib_token_is_refused_not_scanned_for_minutes(fuzzer):
    """The archived-log listing's file-name pattern once searched a 200 KiB token from every
    position (minutes of CPU for one upload); now the token is read once, the line refused."""
    text = (FIXTURES / "db2" / "archive_listing_find_printf.txt").read_text()
    lines = text.splitlines()
    lines.insert(1, "x" * (200 * 1024))
    outcome = _submit(fuzzer, "redo", "listing.txt", "\n".join(lines).encode())
    assert outcome.status == 422 and "line 2 is 204,800 characters long" in outcome.message, outcome.message


def test_a_heading_with_a_200_kib_run_of_spaces_is_read_once_not_for_minutes(fuzzer):
    """The select-expression heading pattern once started a scan at every space of such a run
    (167 s for one DMA archlogs upload in the fuzz bench); padding is only padding."""
    path = FIXTURES / "redo" / "collectors" / "opdb__archlogs__122_2.0.4_dbhost01.ORCL.ORCL1.031522120000.log"
    lines = path.read_text().splitlines()
    heading = next(i for i, line in enumerate(lines) if "||" in line or "," in line)
    lines[heading] = lines[heading] + " " * (200 * 1024)
    outcome = _submit(fuzzer, "redo", path.name, "\n".join(lines).encode())
    assert outcome.accepted, outcome.message


@pytest.mark.parametrize("group", [".", " ", None], ids=["dot-groups", "space-groups", "no-groups"])
def test_every_redo_seed_with_decimal_commas_keeps_the_rules(fuzzer, group):
    """Issue 32: each redo seed as a database under NLS_NUMERIC_CHARACTERS ',.' (or ', ') writes it:
    read or refused with a 4xx, never a server error, never an absurd value stored."""
    statuses = {}
    for seed in (s for s in SEEDS if s.kind == "redo"):
        rendered = render_comma_decimals(seed.data, group, semicolons=group == " ")
        if rendered is None or rendered == seed.data:
            continue
        outcome = fuzzer.submit("redo", seed.name, rendered)
        assert outcome.broken == [], (seed.name, outcome.broken)
        statuses[seed.name] = outcome.status
    assert len(statuses) >= 8
    assert all(status < 500 for status in statuses.values()), statuses


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_every_redo_seed_with_its_heading_cut_keeps_the_rules(fuzzer, fraction):
    """Issue 32: a heading cut as SQL*Plus cuts one longer than its line: read (a DMA 2.0.x
    SYSMETRIC file, by its collector's column order) or refused with a 4xx, never a server error."""
    for seed in (s for s in SEEDS if s.kind == "redo"):
        outcome = fuzzer.submit("redo", seed.name, cut_heading(seed.data, fraction))
        assert outcome.broken == [], (seed.name, outcome.broken)
        if "awrhistsysmetrichist__" in seed.name and "2.0." in seed.name and "2.0.6" not in seed.name:
            assert outcome.accepted, (seed.name, fraction, outcome.status)
