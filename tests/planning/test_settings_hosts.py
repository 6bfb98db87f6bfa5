"""Settings never lower what a host has (issue 32, item 5): each recommended kernel value next to the
value each host's latest run captured (remote.hostinfo's keys), per field of tcp_rmem/tcp_wmem, and
"keep" where every host already has the recommendation or more."""

from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning.host_facts import host_kernels
from redolab.planning.plan import build_plan
from redolab.planning.service import environment_plan
from redolab.planning.settings import HostKernel, recommended_snippets
from tests.factories import make_environment, make_host, make_measured_run
from tests.planning.test_plan import facts

LINUX_RMEM = [4096, 131072, 33554432]  # a host tuned for 10 Gbit/s: above 4096 87380 9375000 everywhere
BASIS = dict(platform="dataguard", socket_buffer_bytes=9_375_000, bdp_bytes=3_125_000)


def kernel_lines(hosts):
    snippets = recommended_snippets(**BASIS, hosts=tuple(hosts))
    return {line.line.split(" = ")[0].removeprefix("# keep: "): line for line in snippets[0].lines}


def test_a_host_above_the_recommendation_keeps_its_value():
    hosts = [
        HostKernel("p1 (primary 1)", {"tcp_rmem": LINUX_RMEM, "tcp_wmem": [4096, 16384, 4194304]}, "run #3"),
        HostKernel("s1 (standby 1)", {"tcp_rmem": LINUX_RMEM, "tcp_wmem": [4096, 65536, 4194304]}, "run #3"),
    ]
    lines = kernel_lines(hosts)
    rmem = lines["net.ipv4.tcp_rmem"]
    assert rmem.keep and rmem.line.startswith("# keep: net.ipv4.tcp_rmem")
    assert "9375000" not in rmem.line.split("(")[0]  # nothing to paste that would lower the maximum
    assert [(h.host, h.current, h.action) for h in rmem.hosts] == [
        ("p1 (primary 1)", "4096 131072 33554432", "keep"),
        ("s1 (standby 1)", "4096 131072 33554432", "keep"),
    ]
    assert (
        "recommended 4096 87380 9375000" in rmem.why
        and "p1 (primary 1): 4096 131072 33554432 (keep; run #3)" in rmem.why
    )
    wmem = lines["net.ipv4.tcp_wmem"]  # the maximum is raised; s1's default of 65536 is kept, not lowered
    assert not wmem.keep and wmem.line == "net.ipv4.tcp_wmem = 4096 65536 9375000"
    assert [h.action for h in wmem.hosts] == ["raise", "raise"]  # both maxima raised to 9375000
    assert "rmem_max" in " ".join(lines) and "not captured" in lines["net.core.rmem_max"].why


def test_without_captures_the_recommendation_stands_and_says_so():
    line = kernel_lines([])["net.ipv4.tcp_rmem"]
    assert line.line == "net.ipv4.tcp_rmem = 4096 87380 9375000" and not line.keep
    assert "no host's current value captured yet" in line.why


triples = st.lists(st.integers(0, 2**31 - 1), min_size=3, max_size=3)
captures = st.fixed_dictionaries(
    {},
    optional={
        "tcp_rmem": st.one_of(triples, st.none()),
        "tcp_wmem": triples,
        "rmem_max": st.integers(0, 2**31 - 1),
        "wmem_max": st.integers(0, 2**31 - 1),
        "netdev_max_backlog": st.integers(0, 10**6),
        "txqueuelen": st.integers(0, 10**5),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(captures, max_size=4), st.integers(1, 2**30))
def test_no_line_ever_lowers_a_field_a_host_has(captured, buffer):
    hosts = tuple(HostKernel(f"h{n}", c, "run #1") for n, c in enumerate(captured))
    snippets = recommended_snippets(**{**BASIS, "socket_buffer_bytes": buffer}, hosts=hosts)
    for line in (line for s in snippets[:2] for line in s.lines):
        recommended = [int(v) for v in line.recommended.split()]
        if line.keep:
            assert line.line.startswith("# keep: ") and hosts
            for value in line.hosts:  # every host has every field at or above the recommendation
                assert value.current is not None
                assert all(int(v) >= r for v, r in zip(value.current.split(), recommended, strict=True))
            continue
        written = [int(v) for v in line.line.split()[-len(recommended) :]]
        assert all(w >= r for w, r in zip(written, recommended, strict=True))
        for value in line.hosts:
            if value.current is not None:
                assert all(w >= int(c) for w, c in zip(written, value.current.split(), strict=True)), line
                assert value.action == ("keep" if [int(c) for c in value.current.split()] == written else "raise")
            else:
                assert value.action == "set"


def test_the_plan_json_gives_each_line_with_the_hosts_values():
    hosts = (HostKernel("p1 (primary 1)", {"tcp_rmem": LINUX_RMEM}, "run #3"),)
    plan = build_plan(
        facts=facts(link_bits_per_second=1e9, link_rtt_seconds=0.025, host_kernels=hosts), requirement=None, runs=[]
    )
    lines = {line["line"]: line for s in plan.to_json()["settings"] for line in s["lines"]}
    rmem = next(line for text, line in lines.items() if "tcp_rmem" in text)
    assert rmem["keep"] is True and rmem["recommended"] == "4096 87380 9375000"
    assert rmem["hosts"] == [{"host": "p1 (primary 1)", "current": "4096 131072 33554432", "action": "keep"}]


def test_host_kernels_come_from_each_hosts_latest_run_not_a_kernel_sweep(session):
    environment = make_environment(session, link_bandwidth_bits_per_second=1e9, link_rtt_seconds=0.025)
    primary = make_host(session, environment, name="p1", role="primary", ssh_address="10.0.0.1")
    standby = make_host(session, environment, name="s1", role="standby", ssh_address="10.0.0.2")
    make_host(session, environment, name="s2", role="standby", node_number=2, ssh_address="10.0.0.3")
    older = {"tcp_rmem": [4096, 87380, 6291456]}
    make_measured_run(session, environment.id, primary, standby, client_settings=older, server_settings=older)
    latest = make_measured_run(
        session,
        environment.id,
        primary,
        standby,
        client_settings={"tcp_rmem": LINUX_RMEM},
        server_settings={"tcp_rmem": LINUX_RMEM},
    )
    swept = {"tcp_rmem": [4096, 87380, 1048576]}  # set by a kernel-maximum sweep for its test
    make_measured_run(
        session,
        environment.id,
        primary,
        standby,
        client_settings=swept,
        server_settings=swept,
        kernel_max_bytes=1048576,
    )
    session.refresh(environment)
    found = {k.host: k for k in host_kernels(session=session, environment=environment)}
    assert found["p1 (primary 1)"].captured["tcp_rmem"] == LINUX_RMEM
    assert found["s1 (standby 1)"].captured["tcp_rmem"] == LINUX_RMEM
    assert found["p1 (primary 1)"].where.startswith(f"run #{latest.id}, ")
    assert found["s2 (standby 2)"].captured == {}
    assert found["s2 (standby 2)"].where == "no run has captured its settings yet"
    plan = environment_plan(session=session, environment=environment)
    rmem = next(line for s in plan.snippets for line in s.lines if "tcp_rmem" in line.line)
    assert not rmem.keep and rmem.line == "net.ipv4.tcp_rmem = 4096 131072 33554432"  # s2 unknown: never lowered
    assert [h.action for h in rmem.hosts] == ["keep", "keep", "set"]


def test_the_plan_api_sends_each_hosts_value_and_the_capacity_marks(api_client, session):
    environment = make_environment(session, link_bandwidth_bits_per_second=1e9, link_rtt_seconds=0.025)
    primary = make_host(session, environment, name="p1", role="primary", transport="local")
    standby = make_host(session, environment, name="s1", role="standby", transport="local")
    loopback = make_measured_run(
        session, environment.id, primary, standby, 4e9, client_settings={"tcp_rmem": LINUX_RMEM}
    )
    response = api_client.get(f"/api/v1/environments/{environment.id}/plan?chosen=1&run={loopback.id}")
    assert response.status_code == 200, response.text
    body = response.json()
    rmem = next(line for s in body["settings"] for line in s["lines"] if "tcp_rmem" in line["line"])
    assert rmem["recommended"] == "4096 87380 9375000" and rmem["keep"] is False  # s1 never captured
    assert rmem["hosts"] == [
        {"host": "p1 (primary 1)", "current": "4096 131072 33554432", "action": "keep"},
        {"host": "s1 (standby 1)", "current": None, "action": "set"},
    ]
    buffers = body["cards"]["buffers"]
    assert buffers["loopback"] is True and buffers["badge"] == "info (loopback)"
    assert buffers["values"]["window_capacity"]["origin"] == "loopback"
    assert buffers["values"]["window_capacity"]["bytes_per_second"] == 1e9 / 8  # capped at the nominal link
