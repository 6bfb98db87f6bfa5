"""The share of the link reserved for other traffic (issue 59, item 4): the link for the RPO judges
links and tiers at the rest, says so on the card and in the answer strip; the API keeps it within
0 to 90 %."""

from __future__ import annotations

import html as markup
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning.facts import Capacity
from redolab.planning.rpo_sizing import size_for_rpo
from redolab.planning.tiers import DEFAULT_EFFICIENCY, Efficiency
from redolab.planning.transport import as_pieces
from redolab.runs.measured import Source
from tests.factories import make_environment
from tests.planning.test_rpo import RPO, at
from tests.planning.test_stored import _import

EFFICIENCY = Efficiency(DEFAULT_EFFICIENCY, "default", False)
NOMINAL = Source("environment: nominal link rate (not measured)")
TIERS = tuple((f"{m} Mbit/s", m * 1e6) for m in (10, 20, 40, 60, 100, 200, 400))


def sizing(pieces, share: float, link: float | None = 5e6):
    return size_for_rpo(
        pieces, rpo_seconds=RPO, headroom_ratio=0.3, efficiency=EFFICIENCY, tiers=TIERS,
        link=Capacity(link, NOMINAL) if link else None, reserved_share=share,
    )  # fmt: skip


@settings(max_examples=25, deadline=None)
@given(
    rates=st.lists(st.floats(1e5, 3e7), min_size=1, max_size=6),
    lengths=st.lists(st.integers(10, 900), min_size=6, max_size=6),
    shares=st.tuples(st.integers(0, 90), st.integers(0, 90)).map(sorted),
)
def test_a_larger_reserved_share_never_makes_a_tier_hold_that_did_not(rates, lengths, shares):
    bounds, pieces = 0, []
    for rate, length in zip(rates, lengths, strict=False):
        pieces.append((at(bounds), at(bounds + length), rate))
        bounds += length
    history = as_pieces(pieces)
    less, more = (sizing(history, share / 100) for share in shares)
    for low, high in zip(less.tiers, more.tiers, strict=True):
        if high.at.violation_seconds == 0:
            assert low.at.violation_seconds == 0, (low.name, shares)
        assert high.at.worst_lag_seconds >= low.at.worst_lag_seconds - 1e-6
    assert more.targets[0].bits_per_second >= less.targets[0].bits_per_second * (1 - 1e-9)


def test_the_reserved_share_is_taken_off_every_link_and_said():
    history = as_pieces([(at(0), at(3600), 1e6), (at(3600), at(3660), 10e6), (at(3660), at(7260), 1e6)])
    whole, reserved = sizing(history, 0.0), sizing(history, 0.2)
    assert reserved.targets[0].bits_per_second == pytest.approx(whole.targets[0].bits_per_second / 0.8)
    assert reserved.at_link.bytes_per_second == pytest.approx(4e6)  # 80 % of the 5 MB/s link
    for mine, theirs in zip(reserved.tiers, whole.tiers, strict=True):
        assert mine.at.bytes_per_second == pytest.approx(theirs.at.bytes_per_second * 0.8)
    assert whole.reserved_note is None
    assert reserved.reserved_note == "20 % of the link reserved for other traffic: 32 Mbit/s of 40 Mbit/s for redo"
    assert reserved.to_json()["reserved_share"] == 0.2
    no_link = sizing(history, 0.25, link=None)
    assert no_link.reserved_note.endswith("tiers judged at 75 % of their rate")
    with pytest.raises(ValueError, match="0 to 90"):
        sizing(history, 0.95)


def text(page: str) -> str:
    return " ".join(markup.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_the_card_and_the_strip_say_the_reserved_share(api_client, browser_client, session):
    environment = make_environment(
        session, name="SALES shared link", link_bandwidth_bits_per_second=10**9, rpo_goal_seconds=30
    )
    _import(api_client, environment, "gv_archived_log.csv")
    base = f"/api/v1/environments/{environment.id}"
    assert api_client.patch(base, json={"link_reserved_percent": 91}).status_code == 422
    assert api_client.patch(base, json={"link_reserved_percent": -1}).status_code == 422
    before = api_client.get(f"{base}/plan").json()["rpo_sizing"]
    patched = api_client.patch(base, json={"link_reserved_percent": 20})
    assert patched.status_code == 200 and patched.json()["link_reserved_percent"] == 20
    after = api_client.get(f"{base}/plan").json()["rpo_sizing"]
    assert after["targets"][0]["bits_per_second"] == pytest.approx(before["targets"][0]["bits_per_second"] / 0.8)
    assert after["at_link"]["bytes_per_second"] == pytest.approx(0.8 * 10**9 / 8)
    said = "20 % of the link reserved for other traffic: 800 Mbit/s of 1 Gbit/s for redo"
    assert after["reserved_note"] == said
    page = text(browser_client.get(f"/environments/{environment.id}").text)
    assert f"Reserved for other traffic {said}; the link and the tiers judged at the rest" in page  # the card
    assert f"within the RPO of 30 s; {said})" in page  # the answer strip
    assert "Reserved for other traffic 20 % of the link" in page  # the environment's facts
    form = browser_client.get(f"/environments/{environment.id}/edit").text
    assert 'name="link_reserved_percent"' in form and 'value="20"' in form
