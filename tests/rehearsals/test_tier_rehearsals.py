"""Rehearse at a tier (issue 55, item 6): a rehearsal capped at a link tier paces each of its
connections at the tier's share (cap / threads), says so in its notes, is refused with the field named
on bad input; the environment page's what-if over tiers starts two capped rehearsals (the tier and the
one below, queued behind each other), as does the JSON API; replayed by the real probe on this machine,
the card and the report show measured beside predicted and whether the RPO held."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from redolab.auth.models import Role
from redolab.core.units import format_bit_rate
from redolab.rehearsals.models import Rehearsal
from redolab.runs.command import ProbeParameters, client_argv
from redolab.runs.models import RunStatus
from tests.factories import PASSWORD, make_user
from tests.rehearsals.test_rehearsal_runs import archived_log_csv, count, import_history, local_env, run_until_done
from tests.services import leftover_probes

MBIT = 10**6


def two_thread_csv() -> str:
    return archived_log_csv(threads=2)


@pytest.mark.parametrize("nodes", [1, 2])
def test_a_capped_rehearsal_paces_each_connection_at_its_share(api_client, session, nodes):
    """One pair carrying both threads (one run, two connections) or a pair per thread (two runs, one
    connection each): every connection is paced at the tier shared by the two threads."""
    environment = local_env(session, nodes=nodes)
    import_history(api_client, environment, two_thread_csv())
    created = api_client.post(
        f"/api/v1/environments/{environment.id}/rehearsals",
        json={"cap_bits_per_second": "500 Mbit/s", "cap_label": "MPLS 500"},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["cap_bits_per_second"] == 500 * MBIT and body["cap_label"] == "MPLS 500"
    assert body["threads"] == [1, 2]
    share = 500 * MBIT * 1500 // 1538 // 2  # the tier's IP rate (Ethernet: 1538 wire bytes a packet), halved
    assert (
        f"paced at {format_bit_rate(share)} of IP packets per connection: the MPLS 500 tier's 500 Mbit/s line rate, "
        "1500 bytes of IP in every 1538 on the wire, shared by 2 threads; a shaper on the link would share it first "
        "in, first out"
    ) in body["notes"]
    rehearsal = session.get(Rehearsal, body["id"])
    assert sum(run.conns for run in rehearsal.runs) == 2 and len(rehearsal.runs) == (1 if nodes == 1 else 2)
    for run in rehearsal.runs:
        assert run.fq_rate_bits_per_second == share == 243_823_146
        argv = client_argv("redoprobe", ProbeParameters.of_run(run), server_address="127.0.0.1", port=5001)
        assert argv[argv.index("--fq-rate") + 1] == "243823146"  # one item of a list, never a shell's text


def test_one_thread_gets_the_whole_tier(api_client, session):
    environment = local_env(session)
    import_history(api_client, environment, archived_log_csv())
    created = api_client.post(f"/api/v1/environments/{environment.id}/rehearsals", json={"cap_bits_per_second": 10**9})
    assert created.status_code == 201, created.text
    (run,) = session.get(Rehearsal, created.json()["id"]).runs
    assert run.fq_rate_bits_per_second == 10**9 * 1500 // 1538
    assert created.json()["notes"][-1] == (
        f"paced at {format_bit_rate(10**9 * 1500 // 1538)} of IP packets: the tier's 1 Gbit/s line rate, 1500 bytes "
        "of IP in every 1538 on the wire, for its one thread"
    )


@pytest.mark.parametrize(
    ("payload", "field", "said"),
    [
        ({"cap_bits_per_second": -5}, "cap_bits_per_second", "negative"),
        ({"cap_bits_per_second": 0}, "cap_bits_per_second", "more than zero"),
        ({"cap_bits_per_second": "fast"}, "cap_bits_per_second", ""),
        ({"cap_bits_per_second": "9 Tbit/s"}, "cap_bits_per_second", ""),
        ({"cap_label": "gold"}, "cap_label", "needs its rate"),
        ({"cap_bits_per_second": 10**9, "cap_label": "x" * 201}, "cap_label", ""),
        ({"cap_bits_per_second": 10**9, "cap_label": "two\nlines"}, "cap_label", ""),
        ({"cap_bits_per_second": 12_000}, "cap_bits_per_second", "under the 8 kbit/s the probe can pace"),
    ],
)
def test_bad_caps_are_refused_naming_the_field_and_write_nothing(api_client, session, payload, field, said):
    environment = local_env(session)
    import_history(api_client, environment, two_thread_csv())
    refused = api_client.post(f"/api/v1/environments/{environment.id}/rehearsals", json=payload)
    assert refused.status_code == 422, refused.text
    assert field in refused.text and said in refused.text
    assert count(session, Rehearsal) == 0


def test_a_tier_is_one_link_not_every_destination_at_once(api_client, session):
    environment = local_env(session)
    import_history(api_client, environment, archived_log_csv())
    refused = api_client.post(
        f"/api/v1/environments/{environment.id}/rehearsals", json={"cap_bits_per_second": 10**9, "across_hops": True}
    )
    assert refused.status_code == 422 and "cap_bits_per_second" in refused.text, refused.text


def caps_of(session, environment) -> list[tuple[int | None, str]]:
    rows = session.scalars(select(Rehearsal).where(Rehearsal.environment_id == environment.id).order_by(Rehearsal.id))
    return [(r.cap_bits_per_second, r.cap_label) for r in rows]


@pytest.mark.both_backends
def test_the_what_if_button_starts_the_tier_and_the_tier_below(api_client, browser_client, session):
    environment = local_env(session, rpo_goal_seconds=30)
    import_history(api_client, environment, archived_log_csv())
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    table = page.text.split('id="tier-what-if-table"')[1].split("</table>")[0]
    assert 'data-rehearse-tier="100 Mbit/s"' in table and 'data-rehearse-tier="10 Mbit/s"' in table
    assert f'hx-post="/environments/{environment.id}/rehearsals/tier"' in table
    url = f"/environments/{environment.id}/rehearsals/tier"
    started = browser_client.post(url, data={"tier": "100 Mbit/s"}, headers={"HX-Request": "true"})
    assert started.status_code == 200 and started.headers["HX-Redirect"] == f"/environments/{environment.id}#rehearsals"
    # the tier below first, the tier asked for behind it (the newest: the one the card judges)
    assert caps_of(session, environment) == [(50 * MBIT, "50 Mbit/s"), (100 * MBIT, "100 Mbit/s")]
    below, tier = session.scalars(select(Rehearsal).order_by(Rehearsal.id)).all()
    assert [run.fq_rate_bits_per_second for run in below.runs] == [50 * MBIT * 1500 // 1538]
    assert [run.fq_rate_bits_per_second for run in tier.runs] == [100 * MBIT * 1500 // 1538]
    assert tier.label == "at 100 Mbit/s" and below.window_start == tier.window_start
    assert all(run.status is RunStatus.queued for run in [*below.runs, *tier.runs])


def test_a_tier_refused_after_the_tier_below_leaves_nothing_queued(api_client, session):
    """A cap of one queued run a user: the tier below is admitted, the tier asked for is refused (429), and
    the tier below is cancelled with it rather than left to run alone."""
    from redolab.core.limits import LimitReached
    from redolab.jobs.admission import QueueCaps
    from redolab.planning.rehearse_tiers import rehearse_at_tier
    from redolab.rehearsals.service import RehearsalRequest

    environment = local_env(session, rpo_goal_seconds=30)
    import_history(api_client, environment, archived_log_csv())
    with pytest.raises(LimitReached):
        rehearse_at_tier(
            session=session,
            environment=environment,
            tier="100 Mbit/s",
            request=RehearsalRequest(),
            requested_by="alice",
            caps=QueueCaps(per_user=1),
        )
    session.expire_all()
    (below,) = session.scalars(select(Rehearsal).where(Rehearsal.environment_id == environment.id)).all()
    assert below.cap_label == "50 Mbit/s"
    assert [run.status for run in below.runs] == [RunStatus.cancelled]


def test_the_slowest_tier_has_none_below_and_unknown_tiers_are_refused(api_client, browser_client, session):
    environment = local_env(session, rpo_goal_seconds=30)
    import_history(api_client, environment, archived_log_csv())
    url = f"/environments/{environment.id}/rehearsals/tier"
    unknown = browser_client.post(url, data={"tier": "3 Mbit/s"}, headers={"HX-Request": "true"})
    assert unknown.status_code == 422 and "is not a tier the what-if lists" in unknown.text
    assert 'id="rehearsal-error"' in unknown.text
    missing = browser_client.post(url, data={}, headers={"HX-Request": "true"})
    assert missing.status_code == 422 and count(session, Rehearsal) == 0
    started = browser_client.post(url, data={"tier": "10 Mbit/s"})
    assert started.status_code == 303
    assert caps_of(session, environment) == [(10 * MBIT, "10 Mbit/s")]


def test_the_environments_own_tiers_are_the_ones_offered(api_client, browser_client, session):
    environment = local_env(session, rpo_goal_seconds=30)
    import_history(api_client, environment, archived_log_csv())
    for name, rate in (("Bronze", "200 Mbit/s"), ("Silver", "1 Gbit/s")):
        made = api_client.post(
            f"/api/v1/environments/{environment.id}/link-tiers", json={"name": name, "bits_per_second": rate}
        )
        assert made.status_code == 201, made.text
    started = api_client.post(f"/api/v1/environments/{environment.id}/rehearsals/tiers", json={"tier": "Silver"})
    assert started.status_code == 201, started.text
    assert [(r["cap_label"], r["cap_bits_per_second"]) for r in started.json()] == [
        ("Bronze", 200 * MBIT),
        ("Silver", 10**9),
    ]
    refused = api_client.post(f"/api/v1/environments/{environment.id}/rehearsals/tiers", json={"tier": "100 Mbit/s"})
    assert refused.status_code == 422 and "tier" in refused.text


def test_viewers_see_the_what_if_but_cannot_rehearse(app, api_client, session):
    environment = local_env(session, rpo_goal_seconds=30)
    import_history(api_client, environment, archived_log_csv())
    make_user(session, "vera", role=Role.viewer)
    with TestClient(app, follow_redirects=False) as client:
        client.get("/login")
        client.post("/login", data={"username": "vera", "password": PASSWORD})
        client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
        page = client.get(f"/environments/{environment.id}").text
        assert 'id="tier-what-if-table"' in page and "data-rehearse-tier" not in page
        refused = client.post(f"/environments/{environment.id}/rehearsals/tier", data={"tier": "100 Mbit/s"})
        assert refused.status_code == 403
    with TestClient(app, follow_redirects=False) as anonymous:
        assert anonymous.post(f"/environments/{environment.id}/rehearsals/tier", data={"tier": "x"}).status_code in (
            401,
            403,
            303,
        )
        api = anonymous.post(f"/api/v1/environments/{environment.id}/rehearsals/tiers", json={"tier": "x"})
        assert api.status_code == 401
    assert count(session, Rehearsal) == 0


def test_rehearsed_at_two_tiers_through_the_probe_the_card_and_report_show_measured_beside_predicted(
    api_client, browser_client, session, engine, secret_key
):
    """The worst hour compressed 720x (0.5 MiB/s of redo becomes 360 MiB/s) through the real probe on
    this machine, paced at 2 Gbit/s and at 1 Gbit/s (the catalogue's tier below): both queue, the slower
    tier more; the card lists both tiers with the model's lag beside the measured one."""
    environment = local_env(session, rpo_goal_seconds=30)
    import_history(api_client, environment, archived_log_csv(burst_mib=300))
    made = []
    for tier in ("1 Gbit/s", "2 Gbit/s"):  # one at a time: the second would wait behind the first anyway
        created = api_client.post(
            f"/api/v1/environments/{environment.id}/rehearsals",
            json={"speedup": 720, "cap_bits_per_second": tier, "cap_label": tier},
        )
        assert created.status_code == 201, created.text
        rehearsal = run_until_done(engine, secret_key, session, created.json()["id"], timeout=90)
        assert all(run.status is RunStatus.succeeded for run in rehearsal.runs), rehearsal.runs[0].failure_reason
        assert "--fq-rate" in rehearsal.runs[0].client_command
        made.append(rehearsal)
    assert leftover_probes() == []
    lags = [r.result["max_lag_seconds"] for r in made]
    assert lags[0] > lags[1] > 1, lags  # paced: the replay's 360 MiB/s queues on both, more on the slower
    query = "&".join(f"rehearsal={r.id}" for r in made)
    report = browser_client.get(f"/environments/{environment.id}/plan/report?{query}")
    assert report.status_code == 200
    section = report.text.split('id="report-rehearsal"')[1] if 'id="report-rehearsal"' in report.text else report.text
    for rehearsal, tier in zip(made, ("1 Gbit/s", "2 Gbit/s"), strict=True):
        assert f"At the {tier} tier (rehearsal #{rehearsal.id})" in section
    card = browser_client.get(f"/environments/{environment.id}?{query}").text.split('id="plan-rehearsal"')[1]
    card = card.split("</article>")[0]
    assert "At the 2 Gbit/s tier" in card and "At the 1 Gbit/s tier" in card and "predicted" in card
    page = browser_client.get(f"/rehearsals/{made[0].id}").text
    assert (
        f"paced at {format_bit_rate(10**9 * 1500 // 1538)} of IP packets" in page
        and "the 1 Gbit/s tier, one connection" in page
    )
    plan = api_client.get(f"/api/v1/environments/{environment.id}/plan?{query}").json()
    tiers = {t["rehearsal_id"]: t for t in plan["cards"]["rehearsal"]["values"]["tiers"]}
    for rehearsal in made:
        shown = tiers[rehearsal.id]
        assert shown["measured_worst_lag_seconds"] == rehearsal.result["max_lag_seconds"]
        assert shown["rpo_held"] is None  # time compressed: a quick look, not a verdict
        print(
            f"tier {shown['cap_label']}: measured {shown['measured_worst_lag_seconds']:.2f} s, "
            f"predicted {shown['predicted_worst_lag_seconds']:.2f} s"
        )
        # loopback's 64 KiB segments carry ~6 % more payload per paced bit than a 1500-byte link (the
        # model's 94.1 %): the measured lag sits below the model's, within a quarter of it
        assert shown["measured_worst_lag_seconds"] == pytest.approx(shown["predicted_worst_lag_seconds"], rel=0.25)


@pytest.mark.parametrize(
    "body",
    [
        '{"cap_bits_per_second": NaN}',
        '{"cap_bits_per_second": Infinity}',
        '{"cap_bits_per_second": 1e30}',
        '{"cap_bits_per_second": true}',
        '{"cap_bits_per_second": []}',
        '{"cap_bits_per_second": "1e999 bit/s"}',
        '{"cap_label": ["a"], "cap_bits_per_second": 1000000}',
    ],
)
def test_malformed_caps_are_4xx_never_a_server_error(api_client, session, body):
    environment = local_env(session)
    refused = api_client.post(
        f"/api/v1/environments/{environment.id}/rehearsals",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert refused.status_code == 422, refused.text
    assert count(session, Rehearsal) == 0


@pytest.mark.parametrize(
    "body",
    ['{"tier": ""}', '{"tier": ["x"]}', '{"tier": "x", "window": "worst-999m"}', '{"tier": "' + "x" * 300 + '"}'],
)
def test_malformed_tier_requests_are_4xx_naming_the_field(api_client, browser_client, session, body):
    environment = local_env(session, rpo_goal_seconds=30)
    import_history(api_client, environment, archived_log_csv())
    refused = api_client.post(
        f"/api/v1/environments/{environment.id}/rehearsals/tiers",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert refused.status_code == 422, refused.text
    assert "tier" in refused.text or "window" in refused.text
    long = browser_client.post(f"/environments/{environment.id}/rehearsals/tier", data={"tier": "x" * 5000})
    assert long.status_code == 422 and count(session, Rehearsal) == 0
