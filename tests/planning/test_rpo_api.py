"""The link for the RPO in the plan's JSON (issue 55, item 7), on the transport card and from the CLI
(`redolab plan rpo`): the figures the pure model gives for the stored series, units in the keys."""

from __future__ import annotations

import json
import re

import pytest

from redolab.planning import rpo
from redolab.planning.rpo_sizing import summed_pieces
from redolab.redo.analysis import stored_analysis
from tests.cli_runner import invoke
from tests.factories import make_environment
from tests.planning.test_stored import _import

TARGET_KEYS = {"share_of_time", "bytes_per_second", "with_headroom_bytes_per_second", "bits_per_second"}
TIER_KEYS = {"name", "bits_per_second", "share_of_time_within_rpo", "worst_lag_seconds", "days_with_violations"}
AT_LINK_KEYS = {"bytes_per_second", "worst_lag_seconds", "worst_at", "share_of_time_within_rpo"}


@pytest.fixture
def sized(api_client, session):
    environment = make_environment(
        session, name="SALES rpo", link_bandwidth_bits_per_second=10**9, rpo_goal_seconds=30, headroom_percent=30
    )
    _import(api_client, environment, "gv_archived_log.csv")
    return environment


def test_the_plan_json_carries_the_link_for_the_rpo(api_client, session, sized):
    response = api_client.get(f"/api/v1/environments/{sized.id}/plan")
    assert response.status_code == 200
    sizing = response.json()["rpo_sizing"]
    assert sizing["rpo_seconds"] == 30
    assert [t["share_of_time"] for t in sizing["targets"]] == [1.0, 0.999, 0.99]
    for target in sizing["targets"]:
        assert set(target) == TARGET_KEYS
        assert target["with_headroom_bytes_per_second"] == pytest.approx(target["bytes_per_second"] * 1.3)
        assert target["bits_per_second"] > target["with_headroom_bytes_per_second"] * 8  # after efficiency
    shares = [t["bytes_per_second"] for t in sizing["targets"]]
    assert shares == sorted(shares, reverse=True)  # a smaller share never needs more
    assert set(sizing["at_link"]) >= AT_LINK_KEYS
    assert sizing["at_link"]["bytes_per_second"] == pytest.approx(10**9 / 8)  # the nominal link the plan judges
    assert sizing["tiers"] and all(set(t) >= TIER_KEYS for t in sizing["tiers"])
    assert {"rpo_lost_after_seconds", "archive_full_after_seconds", "catch_up_seconds"} <= set(sizing["outage"])
    assert sizing["outage"]["archive_full_after_seconds"] is None and "unknown" in sizing["outage"]["archive_note"]
    assert sizing["granularity_seconds"] > 0

    # the figure is the pure model's for the stored series: one model, one source
    history = stored_analysis(session=session, environment=sized)
    pieces = summed_pieces(history.requirement)
    assert sizing["targets"][0]["bytes_per_second"] == pytest.approx(rpo.least_for_every_moment(pieces, 30))
    card = response.json()["cards"]["transport"]
    assert any("link for the RPO" in line for line in card["working"])


def test_without_an_rpo_goal_there_is_no_sizing_and_the_card_says_what_to_set(api_client, session):
    environment = make_environment(session, name="no goal", link_bandwidth_bits_per_second=10**9)
    _import(api_client, environment, "gv_archived_log.csv")
    body = api_client.get(f"/api/v1/environments/{environment.id}/plan").json()
    assert body["rpo_sizing"] is None


def cli(tmp_path, database_url, *args):
    return invoke(tmp_path, "plan", "rpo", *args, REDOLAB_DATABASE_URL=database_url)


def test_the_cli_gives_the_same_figures_and_takes_another_rpo(api_client, sized, tmp_path, database_url):
    planned = api_client.get(f"/api/v1/environments/{sized.id}/plan").json()["rpo_sizing"]
    result = cli(tmp_path, database_url, "--env", sized.name, "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    for mine, theirs in zip(document["targets"], planned["targets"], strict=True):
        assert mine == pytest.approx(theirs)
    looser = cli(tmp_path, database_url, "--env", sized.name, "--rpo", "10min", "--archive-free", "1GiB", "--json")
    assert looser.returncode == 0, looser.stderr
    loose = json.loads(looser.stdout)
    assert loose["rpo_seconds"] == 600
    assert loose["targets"][0]["bytes_per_second"] <= document["targets"][0]["bytes_per_second"]
    assert loose["outage"]["archive_free_bytes"] == 2**30
    text = cli(tmp_path, database_url, "--env", sized.name, "--rpo", "45s")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Link for the RPO of 45 s: ")
    assert "Outage budget: " in text.stdout and "Tiers (" in text.stdout
    bad = cli(tmp_path, database_url, "--env", sized.name, "--rpo", "0s")
    assert bad.returncode == 1 and "--rpo" in bad.stderr


def test_the_reports_environment_table_names_the_rpo_goal(browser_client, session, sized):
    unset = make_environment(session, name="no goal", link_bandwidth_bits_per_second=10**9)
    facts = {}
    for environment in (sized, unset):
        response = browser_client.get(f"/environments/{environment.id}/plan/report.json")
        assert response.status_code == 200
        facts[environment.name] = {f["name"]: f["value"] for f in response.json()["facts"]}
    assert facts["SALES rpo"]["RPO goal"] == "30 s"
    assert facts["no goal"]["RPO goal"].startswith("not set")


def test_every_link_inside_the_report_reaches_its_section(browser_client, session, sized):
    """The answer strip links each question to its section (#report-<key>), risks included when none
    were found, with history and without."""
    bare = make_environment(session, name="bare", link_bandwidth_bits_per_second=10**9)
    for environment in (sized, bare):
        page = browser_client.get(f"/environments/{environment.id}/plan/report").text
        targets = set(re.findall(r'href="#([^"]+)"', page))
        assert "report-risks" in targets
        missing = targets - set(re.findall(r'id="([^"]+)"', page))
        assert not missing, f"{environment.name}: links to {sorted(missing)} reach nothing"


SEED_HISTORIES = [
    "gv_archived_log.csv",
    "sysmetric.tsv",
    "twelve_hour.csv",
    "collectors/opdb__archlogs__193_4.3.30_dbhost01.ORCL.ORCL1.112225120000.log",
    "collectors/awr-hist-1234567890-ORCL-1000-1003.out",
]


@pytest.mark.parametrize("name", SEED_HISTORIES)
def test_the_rate_for_every_moment_on_the_seeds_histories_is_exact(session, name):
    """Issue 55's bar: on the seeds' histories the bandwidth for 100 % is within 1 % of the exact value,
    the maximum over every stretch between two bounds of its volume over its length plus the RPO. (The
    hour-of-day profiles, e.g. opdb's awrhistsysmetrichist, and rate-only exports carry no times: no
    series, no sizing.)"""
    from tests.planning.test_stored import _import_now

    environment = make_environment(session, name=f"seed {name}")
    _import_now(session, environment, name)
    pieces = summed_pieces(stored_analysis(session=session, environment=environment).requirement)
    bounds, generated = pieces.bounds, pieces.generated
    assert 2 < len(bounds) < 3000, f"{name}: {len(bounds)} bounds"
    for goal in (30.0, 300.0):
        exact = max(
            (generated[j] - generated[i]) / (bounds[j] - bounds[i] + goal)
            for i in range(len(bounds))
            for j in range(i + 1, len(bounds))
        )
        solved = rpo.least_for_every_moment(pieces, goal)
        assert solved == pytest.approx(exact, rel=0.01)
        assert rpo.at_rate(pieces, solved, goal).worst_lag_seconds <= goal * (1 + 1e-9)
        assert rpo.at_rate(pieces, solved * 0.99, goal).worst_lag_seconds > goal
