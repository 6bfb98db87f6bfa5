"""The fuzz rules on result files' new fields (issue 32, item 9): each stream's congestion window,
round-trip times and path MTU are within bounds when stored; a tiny divisor with a huge dividend
(the ratio mutation) and a test date at the calendar's edges answer no 500 and store nothing
absurd. The general property over every import is tests/security/test_fuzz_imports.py."""

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
from tests.fuzzing import MUTATIONS, TEST_DATES, Fuzzer, check_number, mutate, seeds

RESULT_SEEDS = [seed for seed in seeds() if seed.kind == "runs"]
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


@pytest.mark.parametrize(
    ("key", "value", "out_of_bounds"),
    [
        ("snd_cwnd", 1e305, True),  # what a window of 1e5 bytes over an MSS of 1e-300 stored before
        ("snd_cwnd", 2**60, False),
        ("rtt_us", 1e18, True),
        ("rttvar_us", 25_000, False),
        ("pmtu", 70_000, True),
        ("mtu_bytes", 9000, False),
        ("retransmits", 2**64, True),
    ],
)
def test_the_rules_bound_each_streams_fields(key, value, out_of_bounds):
    broken: list[str] = []
    check_number("run_events 1", key, value, broken)
    assert bool(broken) is out_of_bounds, broken


def test_the_ratio_mutation_puts_a_tiny_divisor_and_a_huge_dividend_in_the_json():
    iperf3 = next(seed for seed in RESULT_SEEDS if seed.name.endswith(".json"))
    found = set()
    for number in range(200):
        _names, data = mutate(random.Random(number), iperf3, ["json-ratio"])
        document = json.loads(data)
        found.add(document["start"].get("tcp_mss_default"))
    assert found & {1e-300, 5e-324, 1e-9, 0.5}, found  # the segment size is among the divisors it picks


def _iperf3_over_a_tiny_segment() -> bytes:
    document = json.loads((RUNS / "iperf3_two_streams.json").read_text())
    document["start"]["tcp_mss_default"] = 1e-300
    document["intervals"][0]["streams"][0]["snd_cwnd"] = 2**60
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("name", "data", "test_date", "expected"),
    [
        ("cwnd.json", _iperf3_over_a_tiny_segment(), "2026-03-04", "start.tcp_mss_default is 1e-300"),
        ("freq.txt", (RUNS / "oratcptest_freq.txt").read_bytes(), "9999-12-31", "the test date 9999-12-31"),
        ("freq.txt", (RUNS / "oratcptest_freq.txt").read_bytes(), "2100-12-31", "started_at is 2101-01-01"),
    ],
    ids=["iperf3-cwnd-over-1e-300", "oratcptest-freq-9999-12-31", "oratcptest-freq-into-2101"],
)
def test_the_hostile_result_files_break_no_rule(fuzzer, name, data, test_date, expected):
    outcome = fuzzer.submit("runs", name, data, test_date=test_date)
    assert outcome.broken == [], outcome.broken
    assert outcome.status == 422 and not outcome.accepted, outcome.message
    assert name in outcome.message and expected in outcome.message, outcome.message


@settings(
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.sampled_from(RESULT_SEEDS),
    names=st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=0, max_size=2),
    test_date=st.sampled_from(TEST_DATES),
    randomness=st.integers(0, 2**32 - 1),
)
def test_no_result_file_on_any_test_date_breaks_a_rule(fuzzer, seed, names, test_date, randomness):
    names, data = mutate(
        random.Random(randomness), seed, [*names, "json-ratio"] if seed.name.endswith(".json") else names
    )
    outcome = fuzzer.submit("runs", f"mutated-{seed.name}", data, test_date=test_date)
    assert outcome.broken == [], (seed.name, names, test_date, outcome.status, outcome.broken)
    if not outcome.accepted:
        assert 400 <= outcome.status < 500
        assert f"mutated-{seed.name}" in outcome.message or outcome.status in (409, 413), outcome.message
