"""Issue 58: the page that confirms an environment's deletion names every kind of row the deletion
removes, each with its count (rehearsals, destinations, shared links, link tiers and cluster runs went
unnamed, though the database's ON DELETE CASCADE removes them too)."""

from __future__ import annotations

from sqlalchemy import select

from redolab.core.db import Base
from redolab.environments import destinations, tiers
from redolab.environments.schemas_destinations import DestinationCreate, SharedLinkCreate
from redolab.environments.schemas_tiers import LinkTierCreate
from redolab.environments.service import Contents, Kind
from redolab.rehearsals.models import Rehearsal
from redolab.sweeps.models import Cluster
from tests.factories import make_environment, make_host, make_measured_run


def _environment_with_one_of_each(session):
    environment = make_environment(session, name="full one")
    remote = destinations.create_destination(
        session=session, environment=environment, destination_in=DestinationCreate(name="remote")
    )
    destinations.create_shared_link(
        session=session,
        environment=environment,
        link_in=SharedLinkCreate(name="uplink", destination_ids=[environment.first_destination.id, remote.id]),
    )
    tier_in = LinkTierCreate(name="1G", bits_per_second=10**9)
    tiers.create_tier(session=session, environment=environment, tier_in=tier_in)
    primary = make_host(session, environment, role="primary", name="p1", transport="local")
    standby = make_host(session, environment, role="standby", name="s1", transport="local")
    rehearsal = Rehearsal(
        environment_id=environment.id, window_kind="worst-60m", window_start=environment.created_at,
        window_end=environment.created_at, message_bytes=2**20, slot_seconds=0.1, schedule_sha256="0" * 64,
        schedule_bytes=2**20, schedule_seconds=60, requested_by="alice",
    )  # fmt: skip
    cluster = Cluster(environment_id=environment.id, template={}, requested_by="alice")
    session.add_all([rehearsal, cluster])
    session.flush()
    make_measured_run(session, environment.id, primary, standby, rehearsal_id=rehearsal.id)
    make_measured_run(session, environment.id, primary, standby, cluster_id=cluster.id)
    return environment


def test_the_delete_page_names_every_kind_of_row_with_its_count(browser_client, session):
    environment = _environment_with_one_of_each(session)
    environment_id = environment.id
    page = browser_client.get(f"/environments/{environment_id}/delete")
    assert page.status_code == 200
    text = " ".join(page.text.split())
    assert (
        '<strong id="delete-contents">2 destinations, 2 hosts, 1 link tier, 1 shared link, 2 runs, '
        "1 cluster run and 1 rehearsal</strong>" in text
    ), text
    deleted = browser_client.post(
        f"/environments/{environment_id}/delete", data={"confirm": "full one"}, headers={"HX-Request": "true"}
    )
    assert deleted.status_code == 200 and deleted.headers["HX-Redirect"] == "/environments"
    session.expire_all()
    left = {
        table.name: session.scalar(select(table.c.environment_id).where(table.c.environment_id == environment_id))
        for table in Base.metadata.sorted_tables
        if "environment_id" in table.c
    }
    assert {name: row for name, row in left.items() if row is not None} == {}  # all of it went, as the page said


def test_every_table_of_an_environments_rows_is_named_on_the_delete_page():
    """A table with an environment's rows either names them (`contents`) or says which named kind they
    belong to (`deleted_with`): a new feature's table cannot be deleted unnamed."""
    named = {table.info["contents"][1] for table in Base.metadata.sorted_tables if "contents" in table.info}
    unnamed = [
        table.name
        for table in Base.metadata.sorted_tables
        if "environment_id" in table.c
        and "contents" not in table.info
        and not set(table.info.get("deleted_with", ())) & named
    ]
    assert unnamed == []
    belonging = {noun for table in Base.metadata.sorted_tables for noun in table.info.get("deleted_with", ())}
    assert belonging <= named, belonging - named


def test_counts_carry_thousands_separators_and_each_noun_its_number():
    held = Contents(
        (Kind("destination", 1, False, 1), Kind("host", 1_200, False), Kind("run", 1, True), Kind("watch", 0, False))
    )
    assert held.describe() == "1 destination, 1,200 hosts and 1 run"
    assert held.needs_admin and not held.empty
    assert Contents((Kind("destination", 1, False, 1), Kind("run", 0, True))).empty
    assert not Contents((Kind("destination", 2, False, 1),)).empty
