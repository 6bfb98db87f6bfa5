"""The Oracle Net settings follow the database release (issue 56, item 1): the SDU from the release's
default and maximum, TCP.NODELAY=YES, explicit socket buffers only where a run measured them faster than
autotuning; and no line is ever below the host's or the release's current value."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.environments.releases import Release, parse_release
from redolab.planning.oracle_net import sdu_limits
from redolab.planning.settings import HostKernel, recommended_snippets
from redolab.runs.measured import MeasuredRun
from redolab.runs.parsers.redoprobe import RunMetrics

# (release, the larger of its client and server defaults) from the Net Services guides of each release
DEFAULTS = {"11.2": 8192, "12.2": 8192, "19c": 8192, "23ai": 65536}


def oracle_text(**basis) -> str:
    fields = {"platform": "dataguard", "socket_buffer_bytes": 9_375_000, "bdp_bytes": 3_125_000, **basis}
    return "\n".join(s.text for s in recommended_snippets(**fields))


def sdu_set(text: str) -> int | None:
    found = re.findall(r"^DEFAULT_SDU_SIZE=(\d+)$", text, re.MULTILINE)
    return int(found[0]) if found else None


@pytest.mark.parametrize("mode", ["ASYNC", "SYNC", "FASTSYNC"])
@pytest.mark.parametrize("written", sorted(DEFAULTS))
def test_the_sdu_line_is_never_below_the_release_default(written, mode):
    text = oracle_text(release=parse_release(written), transport_mode=mode)
    assert re.search(r"^TCP\.NODELAY=YES$", text, re.MULTILINE)
    assert "32767" not in text  # the 10g/11.1 maximum is nobody's advice on these releases
    sdu = sdu_set(text)
    if mode == "ASYNC":  # bulk transport ignores the SDU: the release's default stays
        assert sdu is None and f"# keep: DEFAULT_SDU_SIZE (the default, {DEFAULTS[written]})" in text
    else:
        assert sdu == max(65535, DEFAULTS[written]), text
        assert f"(SDU={sdu})" in text  # and in the transport's connect descriptor


def test_releases_before_11_2_top_out_at_their_maximum():
    assert sdu_set(oracle_text(release=Release(11, 1), transport_mode="SYNC")) == 32767
    assert sdu_set(oracle_text(release=Release(10, 2), transport_mode="ASYNC")) == 32767
    unknown = oracle_text(release=None, transport_mode="SYNC")
    assert sdu_set(unknown) is None and "release is not known" in unknown


@pytest.mark.parametrize(
    ("written", "release"),
    [("19c", Release(19)), ("19.0.0.0.0", Release(19)), ("11.2.0.4", Release(11, 2)), ("11gR2", Release(11, 2)),
     ("23ai", Release(23)), ("12.2.0.1.0", Release(12, 2)), ("21", Release(21)), ("", None)],
)  # fmt: skip
def test_releases_as_dbas_and_v_instance_write_them(written, release):
    assert parse_release(written) == release


@pytest.mark.parametrize("written", ["12c", "11g", "Oracle 19", "19.x", "99c", "8i"])
def test_an_unreadable_release_is_refused_with_what_works(written):
    with pytest.raises(ValueError, match=r"19c|12\.1|11\.1|knows"):
        parse_release(written)


def single_run(run_id: int, rate: float, sockbuf: int | None) -> MeasuredRun:
    return MeasuredRun(
        id=run_id, label="", client_node=1, server_node=1, mode="async", conns=1, message_bytes=65536,
        bytes_per_second=rate, sync_write=False, loopback=False, mtu_bytes=1500,
        metrics=RunMetrics(None, 0, None, None), created_at=datetime(2026, 11, 2, tzinfo=UTC), sockbuf_bytes=sockbuf,
    )  # fmt: skip


def test_explicit_buffers_only_where_a_run_measured_them_faster():
    from redolab.planning.oracle_net import explicit_gain

    autotuned, explicit = single_run(1, 100e6, None), single_run(2, 112e6, 16 * 2**20)
    gain = explicit_gain([autotuned, explicit])
    assert gain is not None and gain.gain_percent == pytest.approx(12) and gain.explicit_run == 2
    text = oracle_text(release=Release(19), explicit_gain=gain)
    assert f"RECV_BUF_SIZE={16 * 2**20}" in text and f"SEND_BUF_SIZE={16 * 2**20}" in text  # above 3 x BDP
    assert "run #2" in text and "12 %" in text
    assert explicit_gain([autotuned, replace(explicit, bytes_per_second=103e6)]) is None  # within the noise
    assert explicit_gain([replace(explicit, loopback=True), autotuned]) is None  # this machine, not the path
    small = explicit_gain([autotuned, replace(explicit, sockbuf_bytes=1 << 20)])
    assert "RECV_BUF_SIZE=9375000" in oracle_text(release=Release(19), explicit_gain=small)  # never below 3 x BDP


KERNEL_KEYS = {"rmem_max": 1, "wmem_max": 1, "tcp_rmem": 3, "tcp_wmem": 3, "netdev_max_backlog": 1, "txqueuelen": 1}
LINE_KEYS = {
    "net.core.rmem_max": "rmem_max", "net.core.wmem_max": "wmem_max", "net.ipv4.tcp_rmem": "tcp_rmem",
    "net.ipv4.tcp_wmem": "tcp_wmem", "net.core.netdev_max_backlog": "netdev_max_backlog",
}  # fmt: skip
values = st.integers(min_value=1, max_value=2**31)
captured = st.fixed_dictionaries(
    {},
    optional={key: st.lists(values, min_size=n, max_size=n).map(lambda v: v[0] if len(v) == 1 else sorted(v))
              for key, n in KERNEL_KEYS.items()},
)  # fmt: skip
releases = st.sampled_from([None, Release(10, 2), Release(11, 1), Release(11, 2), Release(12, 1), Release(12, 2),
                            Release(18), Release(19), Release(21), Release(23), Release(26)])  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    release=releases,
    mode=st.sampled_from(["ASYNC", "SYNC", "FASTSYNC"]),
    buffer=st.integers(min_value=65536, max_value=2**31),
    hosts=st.lists(captured, max_size=3),
    gain=st.sampled_from([None, 1.1, 1.5]),
)
def test_no_settings_line_is_below_the_host_or_the_release(release, mode, buffer, hosts, gain):
    kernels = tuple(HostKernel(f"host{i}", c, "run #1") for i, c in enumerate(hosts))
    measured = None
    if gain is not None:
        from redolab.planning.oracle_net import explicit_gain

        measured = explicit_gain([single_run(1, 100e6, None), single_run(2, 100e6 * gain, buffer // 2)])
    snippets = recommended_snippets(
        platform="dataguard", socket_buffer_bytes=buffer, bdp_bytes=buffer // 3, release=release,
        transport_mode=mode, hosts=kernels, explicit_gain=measured,
    )  # fmt: skip
    text = "\n".join(s.text for s in snippets)
    for line in (item.line for s in snippets for item in s.lines if not item.keep):
        name, _, value = line.partition(" = ")
        key = LINE_KEYS.get(name)
        if key is None:
            continue
        fields = [int(v) for v in value.split()]
        for host in hosts:
            if key in host:
                current = host[key] if isinstance(host[key], list) else [host[key]]
                assert all(f >= c for f, c in zip(fields, current, strict=True)), (line, host)
    sdu = sdu_set(text)
    if release is not None and sdu is not None:
        limits = sdu_limits(release)
        assert max(limits.client_default, limits.server_default) <= sdu <= limits.maximum
    for size in re.findall(r"^(?:RECV|SEND)_BUF_SIZE=(\d+)$", text, re.MULTILINE):
        assert int(size) >= buffer  # an explicit buffer switches autotuning off: never below 3 x BDP
    assert "TCP.NODELAY=YES" in text
