"""Db2 HADR with several standbys: the hadrCalculator per hop. A principal on 1 Gbit/s, 1 ms and an
auxiliary on 10 Mbit/s, 80 ms against the MON_GET_TRANSACTION_LOG fixture (member 0 writes 2 MiB/s,
16.8 Mbit/s, from 10:05 to 10:10): the principal keeps up in NEARSYNC, the auxiliary falls behind in
SUPERASYNC until a run measured on its hop replaces its nominal link."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.environments.destinations import create_destination, delete_destination, update_destination
from redolab.environments.schemas_destinations import DestinationCreate, DestinationUpdate
from redolab.hadr import service
from redolab.hadr.hops import hop_calculators
from redolab.redo import service as redo_service
from tests.cli_runner import invoke
from tests.conftest import migrated_sqlite
from tests.factories import make_environment, make_host
from tests.planning.test_plan_service import stored_run

FIXTURES = Path(__file__).parents[1] / "fixtures" / "db2"
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """The pages and the API on SQLite (the services read the same on either database)."""
    return migrated_sqlite(tmp_path_factory)


@pytest.fixture
def two_standbys(session):
    """(environment, primary host, principal standby host, auxiliary destination, auxiliary host) with the
    log history imported and a disk test on the principal standby only."""
    environment = make_environment(
        session,
        platform="hadr",
        transport_mode="NEARSYNC",
        link_rtt_seconds=0.001,
        link_bandwidth_bits_per_second=10**9,
    )
    auxiliary = create_destination(
        session=session,
        environment=environment,
        destination_in=DestinationCreate(name="dr", link_bandwidth_bits_per_second=10**7, link_rtt_seconds=0.08),
    )
    primary = make_host(session, environment, name="p", role="primary")
    standby = make_host(session, environment, name="s", role="standby")
    far = make_host(session, environment, name="dr1", role="standby", destination_id=auxiliary.id)
    standby.disk_rate_bytes_per_second, standby.disk_overhead_seconds, standby.disk_path = 200 * MIB, 0.001, "/u02"
    session.commit()
    redo_service.import_file(
        session=session,
        environment=environment,
        filename="mon.txt",
        imported_by="alice",
        path=FIXTURES / "mon_get_transaction_log_clp.txt",
    )
    return environment, primary, standby, auxiliary, far


def test_each_standby_gets_its_own_calculator_from_its_nominal_link(session, two_standbys):
    environment, *_ = two_standbys
    principal, auxiliary = hop_calculators(session=session, environment=environment)
    assert (principal.name, principal.role, principal.sync_mode) == ("standby", "principal", "NEARSYNC")
    assert (auxiliary.name, auxiliary.role, auxiliary.sync_mode) == ("dr", "auxiliary", "SUPERASYNC")
    assert principal.network_kind == auxiliary.network_kind == "nominal link"
    assert principal.inputs.network.rate_bytes_per_second == 10**9 / 8 and principal.inputs.network.rtt_seconds == 0.001
    assert auxiliary.inputs.network.rate_bytes_per_second == 10**7 / 8 and auxiliary.inputs.network.rtt_seconds == 0.08
    assert "the principal standby's: no disk test on a host of 'dr'" in auxiliary.inputs.standby_basis
    # the principal keeps up in NEARSYNC; the auxiliary falls behind wherever the log goes above 10 Mbit/s
    assert principal.keeps_up is True and "keeps up" in principal.verdict
    above = [r for r in auxiliary.rows if r.row.rate_bytes_per_second * 8 > 10**7]
    assert above and all(r.marks and r.words != "keeps up" for r in above)
    assert all(r.words == "keeps up" for r in auxiliary.rows if r not in above)
    assert auxiliary.keeps_up is False and auxiliary.exceeded == len(above)
    assert f"cannot keep up: in SUPERASYNC the standby falls behind in {len(above)} of " in auxiliary.verdict
    assert auxiliary.peak.row.rate_bytes_per_second == 2 * MIB  # member 0, 10:05-10:10
    assert auxiliary.peak.limit_bytes_per_second == pytest.approx(10**7 / 8)  # the link, not the disk


def test_a_run_on_the_auxiliarys_hop_replaces_its_nominal_link(session, two_standbys):
    environment, primary, _, _, far = two_standbys
    run = stored_run(session, environment, primary, far, conns=1, bytes_per_second=8 * MIB)
    principal, auxiliary = hop_calculators(session=session, environment=environment)
    assert auxiliary.network_kind == "measured run" and auxiliary.network_source == f"measured run #{run.id}"
    assert auxiliary.inputs.network.rate_bytes_per_second == 8 * MIB
    assert auxiliary.inputs.network.rtt_seconds == 0.08  # the run reported none: the hop's own RTT
    assert auxiliary.keeps_up is True and principal.network_kind == "nominal link"  # the run is not the principal's
    # a disk test on the auxiliary's own host replaces the principal's
    far.disk_rate_bytes_per_second, far.disk_overhead_seconds, far.disk_path = 1 * MIB, 0.0, "/dr/log"
    session.commit()
    _, auxiliary = hop_calculators(session=session, environment=environment)
    assert auxiliary.inputs.standby_basis == "disk test on dr1 in /dr/log"
    assert auxiliary.keeps_up is False and auxiliary.peak.limit_bytes_per_second == pytest.approx(1 * MIB)


def test_the_api_the_page_and_the_cli_show_one_calculator_per_standby(
    session, api_client, browser_client, two_standbys, tmp_path, database_url
):
    environment, *_ = two_standbys
    response = api_client.get(f"/api/v1/environments/{environment.id}/hadr-calculator")
    assert response.status_code == 200
    body = response.json()
    principal, auxiliary = body["destinations"]
    # the top level is the principal's hop: the same nominal network, the same rows (they never disagree)
    assert body["complete"] is True and body["network"] == principal["network"]
    assert (principal["name"], principal["role"], principal["sync_mode"]) == ("standby", "principal", "NEARSYNC")
    assert principal["complete"] is True and principal["keeps_up"] is True
    assert auxiliary["sync_mode"] == "SUPERASYNC" and auxiliary["hadr_syncmode"]["value"] == "SUPERASYNC"
    assert auxiliary["network_source"]["kind"] == "nominal link" and auxiliary["network"]["rtt_seconds"] == 0.08
    assert auxiliary["keeps_up"] is False and auxiliary["intervals_above_sync_mode_limit"] >= 1
    levels = [i["sync_mode_level"]["words"] for i in auxiliary["intervals"] if i["log_bytes_per_second"] == 2 * MIB]
    assert levels == ["falls far behind"]  # 2 MiB/s over 1.19 MiB/s: up to 3 x
    page = browser_client.get(f"/environments/{environment.id}").text
    hops = {d.name: d.id for d in environment.destinations}
    assert f'id="hadr-hop-{hops["standby"]}"' in page and f'id="hadr-hop-{hops["dr"]}"' in page
    assert "standby (principal, NEARSYNC)" in page and "dr (auxiliary, SUPERASYNC)" in page
    assert f'id="hadr-hop-table-{hops["dr"]}"' in page and 'id="hadr-calculator"' in page
    assert page.count("Network numbers from the nominal link") == 2
    assert "dr cannot keep up: in SUPERASYNC the standby falls behind" in page
    worst = (
        "furthest beyond its limit: 2 MiB/s (16.8 Mbit/s) of log against a SUPERASYNC limit of 1.19 MiB/s (10 Mbit/s)"
    )
    assert worst in page
    # `redolab plan hadr` says the same: the API's document, and each hop's verdict first in text
    command = ["plan", "hadr", "--env", environment.name]
    printed = invoke(tmp_path, *command, "--json", REDOLAB_DATABASE_URL=database_url)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["destinations"] == body["destinations"]
    text = invoke(tmp_path, *command, REDOLAB_DATABASE_URL=database_url)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("standby (principal, NEARSYNC): standby keeps up")
    assert "dr (auxiliary, SUPERASYNC): dr cannot keep up" in text.stdout
    assert "<strong>??</strong> falls far behind" in page and "NEARSYNC sustains every interval" in page


def test_one_standby_keeps_the_single_calculator(session, browser_client, two_standbys):
    environment, *_, auxiliary, far = two_standbys
    session.delete(far)
    session.commit()
    delete_destination(session=session, destination=auxiliary)
    page = browser_client.get(f"/environments/{environment.id}").text
    # no run: the nominal link stands in, said so, in the one calculator
    assert 'id="hadr-hops"' not in page and 'id="hadr-calculator"' in page and "nominal link" in page


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    principal_bits=st.integers(10**5, 10**11),
    principal_rtt=st.floats(1e-5, 0.5),
    auxiliary_bits=st.integers(10**5, 10**11),
    auxiliary_rtt=st.floats(1e-5, 2.0),
)
def test_hops_never_exceed_their_link_and_the_principal_matches(
    session, two_standbys, principal_bits, principal_rtt, auxiliary_bits, auxiliary_rtt
):
    """Property: an auxiliary's limit never exceeds what its link carries, and with a run on its hop the
    principal's rows are those of the single-destination calculator. (One environment for every
    example: each sets both links before it reads.)"""
    environment, primary, standby, auxiliary, _ = two_standbys
    if not service.calculator_inputs(session=session, environment=environment).network:
        stored_run(session, environment, primary, standby, conns=1, bytes_per_second=4 * MIB)
    principal_destination = environment.first_destination
    for destination, bits, rtt in ((principal_destination, principal_bits, principal_rtt),
                                   (auxiliary, auxiliary_bits, auxiliary_rtt)):  # fmt: skip
        update_destination(
            session=session,
            destination=destination,
            destination_in=DestinationUpdate(link_bandwidth_bits_per_second=bits, link_rtt_seconds=rtt),
        )
    principal, far = hop_calculators(session=session, environment=environment)
    single, _ = service.environment_calculator(session=session, environment=environment)
    assert principal.calculator.rows == single.rows and principal.calculator.network == single.network
    assert principal.calculator.exceeded == single.exceeded and principal.calculator.advice() == single.advice()
    assert far.sync_mode == "SUPERASYNC" and far.network_kind == "nominal link"
    assert all(row.limit_bytes_per_second <= auxiliary_bits / 8 * (1 + 1e-9) for row in far.rows)
    assert far.keeps_up == all(r.row.rate_bytes_per_second <= r.limit_bytes_per_second for r in far.rows)
