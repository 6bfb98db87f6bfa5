"""The transport card with measured compressibility: the bytes as written and on the wire, the shipping
process's CPU cap, the licence and the LZO rule once; nothing of compression without a measurement."""

from pathlib import Path

import pytest

from redolab.collect.models import Collection, CollectionStatus, CompressibilitySample
from redolab.core.units import format_bit_rate, format_byte_rate, format_byte_rate_in_mbit
from redolab.planning.compression import LICENCE_RULE, compression_rows, stored_compression
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
    said = [value for _, value in card.rows]
    assert sum(LICENCE_RULE in value for value in said) == 1  # the licence and the LZO rule, once
    assert "not marked as licensed" in rows["Licence"]
    link = plan.rpo_sizing.targets[0].bits_per_second
    assert rows["Link for the RPO, compressed"].startswith(f"{format_bit_rate(link / 4)} line rate for 100 %")


def test_a_thread_above_the_cpu_cap_cannot_ship_compressed(session, environment):
    collected(session, environment, [("worst hour", GIB, GIB // 3, 2_000.0)])  # 2,000 s/GiB: 0.5 MiB/s a core
    fact = stored_compression(session, environment)
    plan = environment_plan(session=session, environment=environment)
    rows = dict(compression_rows(fact, plan.requirement))
    assert any("compression cannot keep up" in value for label, value in rows.items() if label.startswith("Thread"))
