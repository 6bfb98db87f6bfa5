"""The transport card with measured compressibility: the bytes as written and on the wire, the shipping
process's CPU cap, the licence and the LZO rule once; nothing of compression without a measurement."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.collect.models import Collection, CollectionStatus, CompressibilitySample
from redolab.core.units import format_bit_rate, format_byte_rate, format_byte_rate_in_mbit
from redolab.planning.answer import rpo_link
from redolab.planning.compression import (
    LICENCE_RULE,
    CompressionFact,
    compressed_link,
    compression_rows,
    stored_compression,
)
from redolab.planning.service import environment_plan
from redolab.redo import service as redo_service
from tests.factories import make_environment, make_host

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
GIB = 1024**3


def collected(session, environment, samples) -> Collection:
    collection = Collection(
        environment_id=environment.id,
        host_name="db1",
        database_kind="oracle",
        requested_by="alice",
        status=CollectionStatus.succeeded,
        compressibility=True,
        scripts=[],
        row_counts={},
        notes=[],
    )
    session.add(collection)
    session.flush()
    for n, (hour, read, packed, seconds) in enumerate(samples):
        session.add(
            CompressibilitySample(
                collection_id=collection.id, name=f"/arch/1_{n}.arc", hour=hour, thread=1, sequence=n,
                log_bytes=read, bytes_read=read, zlib_level=6, zlib_bytes=packed, compress_cpu_seconds=seconds,
                decompress_cpu_seconds=seconds / 5,
            )
        )  # fmt: skip
    session.commit()
    return collection


@pytest.fixture
def environment(session):
    environment = make_environment(session, platform="dataguard", transport_mode="SYNC", rpo_goal_seconds=30.0)
    make_host(session, environment, role="primary", name="p", transport="local")
    make_host(session, environment, role="standby", name="s", transport="local")
    redo_service.import_file(
        session=session,
        environment=environment,
        path=FIXTURES / "gv_archived_log.csv",
        filename="gv_archived_log.csv",
        imported_by="alice",
    )
    return environment


def test_the_transport_card_shows_both_rates_only_with_a_measurement(session, environment):
    assert "compression" not in environment_plan(session=session, environment=environment).card("transport").values
    # the worst hour's logs give the ratio: 2 GiB read, 0.5 GiB on the wire; 20 CPU s for 2 GiB = 10 s/GiB
    collected(session, environment, [("worst hour", GIB, GIB // 4, 10.0), ("worst hour", GIB, GIB // 4, 10.0),
                                     ("typical hour", GIB, GIB // 2, 10.0)])  # fmt: skip
    plan = environment_plan(session=session, environment=environment)
    card = plan.card("transport")
    values = card.values["compression"]
    assert values["ratio"] == 4.0 and values["ratio_of"] == "worst hour" and values["logs"] == 2
    assert values["compress_cpu_seconds_per_gib"] == 10.0
    assert values["cpu_cap_bytes_per_second"] == GIB / 10
    rows = dict(card.rows)
    summed = plan.requirement.summed_required_bytes_per_second
    assert rows["All threads, as written and on the wire"] == (
        f"{format_byte_rate(summed)} as written; {format_byte_rate(summed / 4)} on the wire compressed "
        f"({format_byte_rate_in_mbit(summed / 4)})"
    )
    assert rows["Measured compressibility"].startswith("4.00 : 1 (zlib level 6, 2 logs of the worst hour")
    assert "102.4 MiB/s of redo as written per process" in rows["Shipping process CPU (one core each)"]
    assert rows["Shipping process CPU (one core each)"].endswith(
        "decompression 2.00 CPU s/GiB on the primary's cores; the standby's were not timed"
    )
    assert rows["LZ-class codec (the nearest of LZO)"].startswith(
        "not measured on db1: its python3 has no lz4 module and it has no lz4 or zstd command (install"
    )
    said = [value for _, value in card.rows]
    assert sum(LICENCE_RULE in value for value in said) == 1  # the licence and the LZO rule, once
    assert "not marked as licensed" in rows["Licence"]
    link = plan.rpo_sizing.targets[0].bits_per_second
    compressed = f"{format_bit_rate(link / 4)} with compression (4.00 : 1 measured"
    assert rows["Link for the RPO, compressed"].startswith(compressed)
    labels = [label for label, _ in card.rows]
    assert labels[labels.index("Link for the RPO, compressed") - 1].startswith("Link for the RPO of 30 s")
    # the answer strip's first line: the link as written and with compression, the licence not repeated
    line = rpo_link(plan, 30.0).text
    assert (
        line.startswith(f"Link for the RPO: {format_bit_rate(link)} as written (100 % of the time")
        and compressed in line
    )
    assert "LZO" not in line and "Advanced Compression" not in line
    assert card.values["compression"]["rpo_link"]["compressed_bits_per_second"] == pytest.approx(link / 4)


def test_the_licence_and_the_lzo_rule_are_said_once_on_the_page(session, environment, browser_client):
    collected(session, environment, [("worst hour", GIB, GIB // 4, 10.0)])
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    assert page.text.count("LZO is not allowed with SYNC") == 1
    assert "with compression (4.00 : 1 measured" in page.text


def test_a_thread_above_the_cpu_cap_cannot_ship_compressed(session, environment):
    collected(session, environment, [("worst hour", GIB, GIB // 3, 2_000.0)])  # 2,000 s/GiB: 0.5 MiB/s a core
    fact = stored_compression(session, environment)
    plan = environment_plan(session=session, environment=environment)
    rows = dict(compression_rows(fact, plan.requirement))
    assert any("compression cannot keep up" in value for label, value in rows.items() if label.startswith("Thread"))
    # the link for the RPO gives no compressed figure then: neither on the card nor in the strip
    said = dict(plan.card("transport").rows)["Link for the RPO, compressed"]
    assert said.startswith("not less with compression: the peak of thread") and said in rpo_link(plan, 30.0).text
    assert plan.card("transport").values["compression"]["rpo_link"]["compressed_bits_per_second"] is None


@settings(max_examples=60, deadline=None)
@given(
    ratio=st.floats(1.0, 8.0),
    seconds_per_gib=st.sampled_from([0.0, 2.0, 10.0, 200.0, 2_000.0]),
    needs=st.lists(st.floats(1e3, 5e8), min_size=1, max_size=4),
)
def test_the_rpo_link_and_the_thread_rows_never_contradict(ratio, seconds_per_gib, needs):
    """A compressed link for the RPO is given exactly when no thread row says compression cannot keep up."""
    fact = CompressionFact(1, None, "worst hour", 1, GIB, round(GIB / ratio), 6, seconds_per_gib, 0.0, False)
    threads = {n + 1: SimpleNamespace(thread=n + 1, required_bytes_per_second=need) for n, need in enumerate(needs)}
    requirement = SimpleNamespace(summed_required_bytes_per_second=sum(needs), threads=threads)
    sizing = SimpleNamespace(targets=[SimpleNamespace(bits_per_second=sum(needs) * 8)])
    link = compressed_link(fact, requirement, sizing)
    rows = compression_rows(fact, requirement)
    cannot = any("cannot keep up" in value for label, value in rows if label.startswith("Thread"))
    assert (link.bits_per_second is None) == cannot
    if link.bits_per_second is not None:
        assert link.bits_per_second == pytest.approx(sum(needs) * 8 * fact.zlib_bytes / GIB)


def test_the_standby_and_the_fast_codec_are_shown_where_measured(session, environment):
    collection = collected(session, environment, [("worst hour", GIB, GIB // 4, 10.0)])
    sample = session.query(CompressibilitySample).filter_by(collection_id=collection.id).one()
    sample.standby_bytes, sample.standby_decompress_cpu_seconds = GIB // 32, 0.1  # 32 MiB in 0.1 s: 3.2 s/GiB
    sample.fast_codec, sample.fast_bytes = "lz4 command", GIB // 2  # LZ4 by the host's lz4 command: 2 : 1
    sample.fast_compress_cpu_seconds, sample.fast_decompress_cpu_seconds = 1.5, 0.5
    session.commit()
    card = environment_plan(session=session, environment=environment).card("transport")
    assert dict(card.rows)["Shipping process CPU (one core each)"].endswith(
        "decompression 2.00 CPU s/GiB on the primary's cores; 3.20 CPU s/GiB on the standby's (timed there)"
    )
    assert card.values["compression"]["standby_decompress_cpu_seconds_per_gib"] == pytest.approx(3.2)
    assert dict(card.rows)["LZ-class codec (the nearest of LZO)"] == (
        "LZ4 (the lz4 command, -1; the nearest of LZO): 2.00 : 1, 1.50 CPU s/GiB to compress and 0.50 to "
        "decompress on db1's cores"
    )
