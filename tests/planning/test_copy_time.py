"""The instantiation copy as RMAN runs it (planning.copy_time): hand computations, the catch-up
against the RPO model's drain, and the properties that hold for every input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.collect.models import Collection
from redolab.core.units import format_duration
from redolab.planning import rpo
from redolab.planning.copy_time import (
    ChannelRates,
    CopySettings,
    Datafile,
    makespan,
    pieces_of_files,
    pile_up,
    plan_copy,
)
from redolab.planning.plan import PASS, WARN, build_plan
from redolab.planning.rpo_sizing import summed_pieces
from redolab.planning.transport import as_pieces
from redolab.redo.requirement import ImportSeries, requirement
from tests.factories import make_environment
from tests.planning.test_plan import facts, log, run

GIB, TIB, MIB = 2**30, 2**40, 2**20
SMALL = 20 * TIB // 2000  # 2,000 smallfiles of 10.24 GiB (rounded down to the byte)


def forty_tib() -> list[Datafile]:
    """10 bigfiles of 2 TiB and 2,000 smallfiles: 40 TiB."""
    big = [Datafile(i + 1, f"BIG{i}", 2 * TIB, True) for i in range(10)]
    small = [Datafile(100 + i, f"DATA{i // 100}", SMALL, False) for i in range(2000)]
    return big + small


PER_CHANNEL = 100 * MIB  # a cluster run at 4 connections per node pair carried 400 MiB/s: 100 MiB/s each
MEASURED = ChannelRates(PER_CHANNEL, pair_aggregate_bytes_per_second=4 * PER_CHANNEL)


@pytest.mark.parametrize("section", [None, 64 * GIB])
def test_8_channels_on_2_nodes_match_the_hand_computation(section):
    """8 channels (4 per node): the bigfiles take 8 channels, two of them a second bigfile (4 TiB);
    the smallfiles fill the 6 others to 4 TiB (1,200 files), the last 800 go 100 to each channel: every
    channel carries 4 TiB + 100 smallfiles, about 5 TiB, at 100 MiB/s. Sections change nothing here."""
    copy = plan_copy(forty_tib(), channels_per_node=4, nodes=2, rates=MEASURED, section_bytes=section)
    by_hand = (4 * TIB + 100 * SMALL) / PER_CHANNEL  # 52,428.8 s = 14.6 h
    assert copy.copy_seconds == pytest.approx(by_hand, rel=0.01)
    assert copy.whole_files_seconds == pytest.approx(by_hand, rel=0.01)
    assert not copy.capped_by_largest_file
    assert copy.channels == 8


def test_32_channels_are_capped_by_a_bigfile_and_sections_lift_it():
    """16 channels on each of 2 nodes: the even share is 1.25 TiB a channel, but a 2 TiB bigfile is one
    piece on one channel: 2 TiB / 100 MiB/s. With 64 GiB sections: 320 sections of 64 GiB, 10 to each
    channel (640 GiB), then 2,000 smallfiles, 63 on the first 16 channels to come free: 640 GiB + 63 x
    10.24 GiB."""
    rates = ChannelRates(PER_CHANNEL, pair_aggregate_bytes_per_second=16 * PER_CHANNEL)
    whole = plan_copy(forty_tib(), channels_per_node=16, nodes=2, rates=rates)
    assert whole.copy_seconds == pytest.approx(2 * TIB / PER_CHANNEL, rel=0.01)  # 5.8 h
    assert whole.capped_by_largest_file
    sections = plan_copy(forty_tib(), channels_per_node=16, nodes=2, rates=rates, section_bytes=64 * GIB)
    assert sections.copy_seconds == pytest.approx((640 * GIB + 63 * SMALL) / PER_CHANNEL, rel=0.01)
    assert sections.whole_files_seconds == whole.copy_seconds
    assert sections.lifting_section_bytes is not None
    assert sections.lifted_seconds <= sections.even_share_seconds * 1.05


def test_the_node_aggregate_is_shared_by_its_busy_channels():
    """4 channels on one node whose pair carries 200 MiB/s in all: 4 equal files take 4 x size / 200 MiB/s;
    one file alone copies at the channel's own 100 MiB/s."""
    rates = ChannelRates(PER_CHANNEL, pair_aggregate_bytes_per_second=200 * MIB)
    assert makespan([GIB] * 4, channels_per_node=4, nodes=1, rates=rates) == pytest.approx(4 * GIB / (200 * MIB))
    assert makespan([GIB], channels_per_node=4, nodes=1, rates=rates) == pytest.approx(GIB / PER_CHANNEL)


def test_a_file_has_at_most_256_sections():
    """RMAN raises the section size so that no file has more than 256 sections."""
    pieces = pieces_of_files([Datafile(1, "BIG", 2 * TIB, True)], GIB)
    assert len(pieces) == 256 and pieces[0] == 8 * GIB
    assert pieces_of_files([Datafile(1, "T", 10 * GIB + 5, False)], 4 * GIB) == [4 * GIB, 4 * GIB, 2 * GIB + 5]


def _history(rates_per_hour: list[float]):
    start = datetime(2026, 3, 3, tzinfo=UTC)
    hour = timedelta(hours=1)
    return as_pieces((start + k * hour, start + (k + 1) * hour, rate) for k, rate in enumerate(rates_per_hour))


def test_the_catch_up_is_the_rpo_models_drain():
    """A 3-hour copy over a history of 48 hours at 10 MiB/s with a 3-hour burst at 40 MiB/s: the worst
    window is the burst (3 h x 40 MiB/s); at a 50 MiB/s link it drains at 40 MiB/s above the 10 MiB/s
    that follows, which is what the RPO model's outage catch-up says."""
    history = _history([10 * MIB] * 20 + [40 * MIB] * 3 + [10 * MIB] * 25)
    copy = 3 * 3600.0
    piled = pile_up(history, copy, link_bytes_per_second=50 * MIB, archive_free_bytes=500 * GIB)
    backlog = 3 * 3600 * 40 * MIB
    assert piled.redo_bytes == pytest.approx(backlog)
    assert piled.catch_up_seconds == pytest.approx(backlog / (40 * MIB))
    assert (piled.redo_bytes, piled.catch_up_seconds) == rpo.catch_up_seconds(history, 50 * MIB, copy)
    assert piled.fits is True
    assert pile_up(history, copy, link_bytes_per_second=None, archive_free_bytes=400 * GIB).fits is False


def test_a_copy_longer_than_the_history_says_so():
    history = _history([10 * MIB] * 4)
    piled = pile_up(history, 5 * 3600.0, link_bytes_per_second=50 * MIB, archive_free_bytes=None)
    assert piled.history_shorter and piled.catch_up_seconds is None and piled.fits is None
    assert piled.redo_bytes == pytest.approx(4 * 3600 * 10 * MIB)


files_strategy = st.lists(
    st.builds(
        Datafile,
        st.integers(1, 10_000),
        st.just("T"),
        st.integers(1, 64).map(lambda g: g * GIB),
        st.booleans(),
    ),
    min_size=1,
    max_size=30,
)
rates_strategy = st.builds(
    ChannelRates,
    st.floats(10 * MIB, 500 * MIB),
    st.one_of(st.none(), st.floats(50 * MIB, 4000 * MIB)),
    st.one_of(st.none(), st.floats(50 * MIB, 4000 * MIB)),
    st.one_of(st.none(), st.floats(100 * MIB, 8000 * MIB)),
)


def _piece_seconds(copy, rates: ChannelRates, largest: int) -> float:
    """One piece of `largest` bytes on a channel at its share with every channel busy (the slowest it runs)."""
    speed = rates.node_rate(copy.channels_per_node) / copy.channels_per_node
    if rates.link_bytes_per_second is not None:
        speed = min(speed, rates.link_bytes_per_second / copy.channels)
    return largest / speed


# A queue that hands the next piece to the first free channel is a list schedule, and list schedules
# have Graham's anomalies: one more channel, or a file cut into sections, can end a few percent later
# (found: 5,632 s with 16 GiB sections against 5,529.6 s whole). What holds for every input: the copy
# never beats the even share, and it never ends more than one piece later than the better choice.
@settings(max_examples=60, deadline=None)
@given(files_strategy, rates_strategy, st.integers(1, 8), st.integers(1, 4))
def test_more_channels_never_make_the_copy_slower_by_more_than_a_piece(files, rates, per_node, nodes):
    fewer = plan_copy(files, channels_per_node=per_node, nodes=nodes, rates=rates)
    largest = max(f.bytes for f in files)
    for more in (
        plan_copy(files, channels_per_node=per_node + 1, nodes=nodes, rates=rates),
        plan_copy(files, channels_per_node=per_node, nodes=nodes + 1, rates=rates),
    ):
        assert more.even_share_seconds <= fewer.even_share_seconds * (1 + 1e-9)
        assert more.copy_seconds >= more.even_share_seconds * (1 - 1e-9)
        assert more.copy_seconds <= fewer.copy_seconds + _piece_seconds(more, rates, largest) * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(files_strategy, rates_strategy, st.integers(1, 8), st.integers(1, 4), st.sampled_from([GIB, 4 * GIB, 16 * GIB]))
def test_a_section_size_never_makes_the_copy_slower_by_more_than_a_section(files, rates, per_node, nodes, section):
    copy = plan_copy(files, channels_per_node=per_node, nodes=nodes, rates=rates, section_bytes=section)
    largest = max(pieces_of_files(files, section))
    assert copy.copy_seconds <= copy.whole_files_seconds + _piece_seconds(copy, rates, largest) * (1 + 1e-9)
    assert copy.copy_seconds >= copy.even_share_seconds * (1 - 1e-9)
    assert np.isfinite(copy.copy_seconds)


# -- the card ---------------------------------------------------------------------------------------
def _hourly_history():
    """48 hours of hourly logs on one thread: 10 MiB/s, with 40 MiB/s from hour 20 to 23."""
    logs = [
        log(1, k + 1, k * 3600, 3600, (40 if 20 <= k < 23 else 10) * 3600)
        for k in range(48)  # MiB per hour-long log
    ]
    return requirement([ImportSeries(1, "arch.csv", logs)], headroom_ratio=0.3)


def test_the_card_states_channels_nodes_section_and_the_finish_against_the_goal():
    """4 channels on each of 2 nodes; each pair measured at 400 MiB/s over 4 connections (100 MiB/s a
    channel); 2 bigfiles of 2 TiB and 600 files of 10 GiB: 5,770 GiB over 8 channels."""
    files = tuple([Datafile(k + 1, "BIG", 2 * TIB, True) for k in range(2)])
    files += tuple(Datafile(10 + k, "DATA", 10 * GIB, False) for k in range(600))
    copy = CopySettings(4, 2, 64 * GIB, 2 * TIB, files)
    runs = [run(k, node=k, conns=4, rate_mib=400) for k in (1, 2)]
    plan = build_plan(facts=facts(copy=copy, database_bytes=10 * TIB), requirement=_hourly_history(), runs=runs)
    card = plan.card("instantiation")
    values = card.values["copy"]
    assert values["per_channel_bytes_per_second"] == pytest.approx(100 * MIB)
    by_hand = (4 * TIB + 6000 * GIB) / 8 / (100 * MIB)  # the even share: 8 equal channels, sections balance
    assert values["copy_seconds"] == pytest.approx(by_hand, rel=0.01)
    history = summed_pieces(_hourly_history())
    link = values["redo"]["link_bytes_per_second"]
    redo, catch_up = rpo.catch_up_seconds(history, link, values["copy_seconds"])
    assert (values["redo"]["redo_bytes"], values["redo"]["catch_up_seconds"]) == (redo, catch_up)
    assert card.headline.startswith(f"Finishes in {format_duration(values['copy_seconds'])} with 8 channels")
    assert "of redo piles up" in card.headline and "to catch up" in card.headline and "24 h goal" in card.headline
    assert ("SECTION SIZE", "64 GiB") in card.rows
    assert card.values["total_seconds"] == pytest.approx(values["copy_seconds"] + catch_up)
    assert card.status == PASS
    small = CopySettings(4, 2, 64 * GIB, GIB, files)  # 1 GiB free on the archive destination
    tight = build_plan(facts=facts(copy=small, database_bytes=10 * TIB), requirement=_hourly_history(), runs=runs)
    assert (
        tight.card("instantiation").status == WARN
        and "archive destination is at risk" in tight.card("instantiation").headline
    )
    assert any("does not fit" in r for r in tight.risks)
    plain = build_plan(facts=facts(), requirement=None, runs=runs).card("instantiation")
    assert plain.title == "Instantiation estimate" and "copy" not in plain.values  # no channels: the seed's estimate


def test_the_card_on_the_page(session, browser_client):
    """Without a run the nominal link shared by the node pairs stands in; without a datafile list the
    even share does, and the card says so."""
    environment = make_environment(
        session,
        database_size_bytes=40 * TIB,
        standby_rac_nodes=2,
        primary_rac_nodes=2,
        link_bandwidth_bits_per_second=10**10,
        instantiation_goal_seconds=48 * 3600,
        copy_channels_per_node=4,
        copy_section_bytes=64 * GIB,
    )
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    text = page.text
    assert "Instantiation as it will run" in text and "with 8 channels (4 per node) on 2 nodes" in text
    assert "4 per node x 2 nodes = 8" in text and "64 GiB" in text and "no datafile list yet" in text
    assert "4 RMAN channels per node on 2 nodes, SECTION SIZE 64 GiB" in text  # the environment's facts
    files = [[1, "SYSTEM", GIB, False], [5, "SALES_BIG", 20 * TIB, True], [6, "GONE", None, False]]
    files += [[10 + k, "DATA", 10 * GIB, False] for k in range(2048)]  # 20 TiB
    session.add(
        Collection(
            environment_id=environment.id,
            host_name="primary1",
            database_kind="oracle",
            requested_by="alice",
            facts={"datafiles": files},
        )
    )
    session.commit()
    text = browser_client.get(f"/environments/{environment.id}").text
    assert "no datafile list yet" not in text and "20 TiB (SALES_BIG, bigfile)" in text
