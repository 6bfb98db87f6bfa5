"""Link tiers (issue 55, item 2): the dated catalogue, the environment's own tiers before the plain
steps, what one stream carries on a tier (measured efficiency or the stated default), and the Mathis
ceiling, on values worked out by hand."""

from __future__ import annotations

import math
from datetime import date
from types import SimpleNamespace
from urllib.parse import urlparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redolab.planning import tiers
from redolab.planning.tiers import (
    CATALOGUE,
    CATALOGUE_READ_ON,
    DEFAULT_EFFICIENCY,
    PLAIN,
    PROVIDERS,
    MonthlyPrice,
    Tier,
    catalogue_tiers,
    mathis_ceiling,
    path_efficiency,
    stream_rate,
)

PAGE_HOSTS = {
    "AWS Direct Connect": "docs.aws.amazon.com",
    "Azure ExpressRoute": "docs.microsoft.com",
    "OCI FastConnect": "www.oracle.com",
    "Google Cloud Interconnect": "cloud.google.com",
}


# -- the catalogue ------------------------------------------------------------------------------
def test_the_catalogue_is_dated_and_every_provider_row_names_its_own_page():
    assert date(2026, 12, 2) == CATALOGUE_READ_ON
    assert {entry.provider for entry in CATALOGUE} == {PLAIN, *PROVIDERS}
    for entry in CATALOGUE:
        if entry.provider == PLAIN:
            assert entry.source_url == ""
            continue
        url = urlparse(entry.source_url)
        assert url.scheme == "https" and url.netloc == PAGE_HOSTS[entry.provider], entry
    for tier in catalogue_tiers(providers=True):
        assert tier.source.startswith("catalogue:") or "(read 2026-12-02)" in tier.source, tier


def test_the_catalogue_rates_are_positive_and_unique_per_provider_and_names_unique():
    assert all(entry.bits_per_second > 0 for entry in CATALOGUE)
    names = [entry.name for entry in CATALOGUE]
    assert len(names) == len(set(names))
    for provider in (PLAIN, *PROVIDERS):
        rows = [(e.source_url, e.bits_per_second) for e in CATALOGUE if e.provider == provider]
        assert len(rows) == len(set(rows)), provider


def test_the_plain_steps_run_from_10_mbit_to_100_gbit_sorted():
    plain = catalogue_tiers()
    rates = [tier.bits_per_second for tier in plain]
    assert rates == sorted(rates) and len(rates) == len(set(rates))
    assert rates[0] == 10 * 10**6 and rates[-1] == 100 * 10**9
    assert {1 * 10**9, 10 * 10**9} <= set(rates)
    assert all(tier.monthly_price is None for tier in plain)


def test_the_providers_speeds_are_those_their_pages_state():
    def rates(prefix: str) -> list[int]:
        return [e.bits_per_second // 10**6 for e in CATALOGUE if e.name.startswith(prefix)]

    assert rates("AWS Direct Connect dedicated") == [1_000, 10_000, 100_000, 400_000]
    assert rates("AWS Direct Connect hosted") == [50, 100, 200, 300, 400, 500, 1_000, 2_000, 5_000, 10_000, 25_000]
    assert rates("Azure ExpressRoute") == [50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000]
    assert rates("OCI FastConnect") == [1_000, 10_000]
    assert rates("Google Dedicated Interconnect") == [10_000, 100_000]


def test_providers_tiers_come_on_request_sorted_by_rate_then_name():
    with_providers = catalogue_tiers(providers=True)
    keys = [(tier.bits_per_second, tier.name) for tier in with_providers]
    assert keys == sorted(keys) and len(keys) == len(set(keys))
    assert len(with_providers) == len(CATALOGUE)
    assert not any("Azure" in tier.name for tier in catalogue_tiers())


def _environment(*own):
    link_tiers = [
        SimpleNamespace(name=name, bits_per_second=rate, monthly_price=price, currency=currency)
        for name, rate, price, currency in own
    ]
    return SimpleNamespace(name="SALES", link_tiers=link_tiers)


def test_an_environment_with_tiers_of_its_own_is_offered_those_with_their_prices():
    environment = _environment(("MPLS 1G", 10**9, 1200.0, "EUR"), ("MPLS 200M", 2 * 10**8, None, None))
    assert catalogue_tiers(environment) == [
        Tier("MPLS 200M", 2 * 10**8, None, "environment 'SALES'"),
        Tier("MPLS 1G", 10**9, MonthlyPrice(1200.0, "EUR"), "environment 'SALES'"),
    ]
    mixed = catalogue_tiers(environment, providers=True)
    assert "MPLS 1G" in [tier.name for tier in mixed] and "10 Mbit/s" not in [tier.name for tier in mixed]
    assert any(tier.name == "OCI FastConnect 10 Gbps" for tier in mixed)


def test_an_environment_without_tiers_gets_the_plain_steps():
    assert catalogue_tiers(_environment()) == catalogue_tiers()


def test_a_tier_is_frozen():
    tier = catalogue_tiers()[0]
    with pytest.raises(AttributeError):
        tier.bits_per_second = 1  # type: ignore[misc]


# -- what one stream carries -------------------------------------------------------------------------
def test_the_default_efficiency_is_tcp_payload_over_the_ethernet_frame_on_the_wire():
    assert pytest.approx(1448 / 1538) == DEFAULT_EFFICIENCY
    assert pytest.approx(0.94148, abs=1e-5) == DEFAULT_EFFICIENCY
    carried = stream_rate(10**9)
    assert carried.bytes_per_second == pytest.approx(10**9 / 8 * 1448 / 1538)  # 117.69 MB/s on 1 Gbit/s
    assert carried.basis.startswith("default for protocol overhead: 94.1 %")


def test_a_measured_path_gives_its_own_efficiency_and_says_so():
    # a run carried 100 MB/s (800 Mbit/s of payload) on a link of 1 Gbit/s nominal: 80 %
    carried = stream_rate(10 * 10**9, measured_bytes_per_second=100e6, nominal_bits_per_second=10**9)
    assert carried.efficiency == pytest.approx(0.8)
    assert carried.bytes_per_second == pytest.approx(10 * 10**9 * 0.8 / 8)  # 1 GB/s on 10 Gbit/s
    assert carried.basis.startswith("measured on this path: 80.0 %")
    assert "800.0 Mbit/s" in carried.basis and "1,000.0 Mbit/s nominal" in carried.basis


def test_a_run_faster_than_the_nominal_rate_caps_the_efficiency_at_one():
    assert path_efficiency(200e6, 10**9) == 1.0


@pytest.mark.parametrize(("carried_bytes", "measured"), [(0.30 * 10**9 / 8, False), (0.50 * 10**9 / 8, True)])
def test_a_run_that_did_not_fill_the_link_leaves_the_default(carried_bytes, measured):
    """One stream on a busy host at 30 % of 1 Gbit/s says nothing of protocol overhead; half the link does."""
    carried = stream_rate(10**9, measured_bytes_per_second=carried_bytes, nominal_bits_per_second=10**9)
    assert (carried.efficiency != DEFAULT_EFFICIENCY) is measured
    assert ("it did not fill it" in carried.basis) is not measured


def test_the_plan_and_the_what_if_use_one_rule():
    """rpo_sizing.path_efficiency (the plan) is tiers.efficiency on the best run over the link."""
    from redolab.planning.rpo_sizing import path_efficiency as plans_efficiency

    for carried in (10e6, 40e6, 62.5e6, 100e6, 200e6):
        run = SimpleNamespace(id=7, loopback=False, bytes_per_second=carried)
        plan = plans_efficiency(SimpleNamespace(best_aggregate=run, link_bytes_per_second=125e6))
        alone = tiers.efficiency(carried, 10**9, run="run #7")
        assert plan == alone
        assert stream_rate(10**9, measured_bytes_per_second=carried, nominal_bits_per_second=10**9).efficiency == (
            alone.ratio
        )
    loopback = SimpleNamespace(id=8, loopback=True, bytes_per_second=100e6)
    assert not plans_efficiency(SimpleNamespace(best_aggregate=loopback, link_bytes_per_second=125e6)).measured


def test_without_a_nominal_rate_the_default_stands():
    carried = stream_rate(10**9, measured_bytes_per_second=100e6, nominal_bits_per_second=None)
    assert carried.efficiency == DEFAULT_EFFICIENCY


@pytest.mark.parametrize("rate", [0, -1])
def test_a_tier_rate_must_be_positive(rate):
    with pytest.raises(ValueError):
        stream_rate(rate)


@given(st.integers(min_value=1, max_value=10**12), st.integers(min_value=1, max_value=10**12))
def test_a_faster_tier_never_carries_less(slower, faster):
    low, high = sorted((slower, faster))
    assert stream_rate(low).bytes_per_second <= stream_rate(high).bytes_per_second
    assert stream_rate(high).bytes_per_second <= high / 8


# -- the Mathis ceiling --------------------------------------------------------------------------------
def test_mathis_on_a_value_worked_by_hand():
    # MSS 1448 B, RTT 100 ms, p = 1e-4: 1448 / 0.1 = 14,480 B/s; x 1.2247 / 0.01 = 1,773,430.6 B/s
    ceiling = mathis_ceiling(1448, 0.1, 1e-4)
    assert ceiling.bytes_per_second == pytest.approx(1_773_430.57, rel=1e-6)
    assert ceiling.basis == "CUBIC, Reno; not BBR"
    assert pytest.approx(1.2247, abs=1e-4) == tiers.MATHIS_C


def test_mathis_scales_as_one_over_rtt_and_one_over_the_root_of_loss():
    base = mathis_ceiling(1448, 0.01, 1e-6).bytes_per_second
    assert mathis_ceiling(1448, 0.02, 1e-6).bytes_per_second == pytest.approx(base / 2)
    assert mathis_ceiling(1448, 0.01, 4e-6).bytes_per_second == pytest.approx(base / 2)
    assert mathis_ceiling(8948, 0.01, 1e-6).bytes_per_second == pytest.approx(base * 8948 / 1448)


@pytest.mark.parametrize("mss, rtt, loss", [(0, 0.1, 1e-4), (1448, 0, 1e-4), (1448, 0.1, 0), (1448, 0.1, 1.5)])
def test_mathis_refuses_what_gives_no_bound(mss, rtt, loss):
    with pytest.raises(ValueError):
        mathis_ceiling(mss, rtt, loss)


def test_mathis_is_finite_at_total_loss():
    assert math.isfinite(mathis_ceiling(1448, 0.001, 1.0).bytes_per_second)
