"""The lab's shape and names, without touching the machine."""

import re

import pytest

from redolab.core.units import UnitError, parse_percent
from redolab.lab import control
from redolab.lab.topology import Lab, LabDestination, LabError, Shape, parse_destination, plan_lab


def test_two_by_two_lab_names_and_addresses():
    lab = plan_lab(Shape(), primary_nodes=2, standby_nodes=2)
    assert [(h.name, h.namespace, h.management_address, h.data_address, h.side) for h in lab.hosts] == [
        ("lab-primary-1", "redolab-primary-1", "10.78.0.11", "10.77.0.11", "P"),
        ("lab-primary-2", "redolab-primary-2", "10.78.0.12", "10.77.0.12", "P"),
        ("lab-standby-1", "redolab-standby-1", "10.78.0.41", "10.77.0.41", "S"),
        ("lab-standby-2", "redolab-standby-2", "10.78.0.42", "10.77.0.42", "S"),
    ]
    assert all(len(h.bridge_port) <= 15 and len(h.tun_name) <= 15 for h in lab.hosts)  # IFNAMSIZ
    assert lab.from_json(lab.to_json()) == lab


def test_extra_destinations_get_a_host_each_with_its_own_rtt():
    destinations = [parse_destination("remote=40ms"), parse_destination("farsync=2ms:far_sync")]
    assert destinations == [LabDestination("remote", 0.040), LabDestination("farsync", 0.002, "far_sync")]
    lab = plan_lab(Shape(rtt_seconds=0.005, rate_bits_per_second=200_000_000), destinations=destinations)
    planned = [(h.name, h.namespace, h.data_address, lab.destination_of(h), lab.rtt_of(h)) for h in lab.hosts]
    assert planned == [
        ("lab-primary-1", "redolab-primary-1", "10.77.0.11", None, None),
        ("lab-standby-1", "redolab-standby-1", "10.77.0.41", "standby", 0.005),
        ("lab-remote-1", "redolab-remote-1", "10.77.0.71", "remote", 0.040),
        ("lab-farsync-1", "redolab-farsync-1", "10.77.0.72", "farsync", 0.002),
    ]
    assert lab.hosts[2].management_address == "10.78.0.71"
    assert all(len(h.bridge_port) <= 15 and len(h.tun_name) <= 15 for h in lab.hosts)  # IFNAMSIZ
    # the delay line: the first destination follows the parameters' RTT (`lab set --rtt`), the others their own
    assert control.delayline_devices(lab) == [
        "rlabd-p1:P:10.77.0.11",
        "rlabd-s1:S:10.77.0.41",
        "rlabd-x1:S:10.77.0.71:40000",
        "rlabd-x2:S:10.77.0.72:2000",
    ]
    assert "remote: RTT 40 ms; farsync (far sync): RTT 2 ms" in lab.describe()
    assert Lab.from_json(lab.to_json()) == lab


def test_a_state_file_from_before_destinations_still_loads():
    state = plan_lab(Shape()).to_json()
    del state["destinations"]
    for host in state["hosts"]:
        del host["destination"]
    lab = Lab.from_json(state)
    assert lab.destinations == [] and [h.name for h in lab.hosts] == ["lab-primary-1", "lab-standby-1"]
    assert control.delayline_devices(lab) == ["rlabd-p1:P:10.77.0.11", "rlabd-s1:S:10.77.0.41"]


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["remote"], "--destination 'remote': give NAME=RTT[:KIND], e.g. remote=40ms"),
        (["remote=40"], "--destination 'remote=40':"),
        (["Remote=40ms"], "--destination Remote: give a name of lowercase letters"),
        (["standby=2ms"], "'standby' is the first destination"),
        (["remote=40ms", "remote=30ms"], "--destination remote: given twice"),
        (["remote=3s"], "--destination remote=3 s: give an RTT of 0 to 2 s"),
        (["remote=40ms:cascaded"], "--destination remote: kind 'cascaded': give standby or far_sync"),
        ([f"d{n}=1ms" for n in range(5)], "--destination given 5 times: the lab has at most 4 extra"),
    ],
)
def test_bad_destinations_are_refused_naming_the_option(options, fragment):
    with pytest.raises(LabError, match=re.escape(fragment)):
        plan_lab(Shape(), destinations=[parse_destination(option) for option in options])


def test_the_jitter_is_at_most_every_paths_rtt():
    with pytest.raises(LabError, match=re.escape("--jitter 5 ms: give at most every path's RTT (--destination")):
        plan_lab(Shape(rtt_seconds=0.040, jitter_seconds=0.005), destinations=[parse_destination("near=2ms")])
    assert plan_lab(Shape(rtt_seconds=0.040, jitter_seconds=0.002), destinations=[parse_destination("near=2ms")])


def test_params_line_is_microseconds_ppm_bits_and_bytes():
    shape = Shape(rtt_seconds=0.02, jitter_seconds=0.002, loss_ratio=0.001, rate_bits_per_second=1_000_000_000)
    # the default queue is 1 ms at the rate: 1e9 / 8 / 1000 = 125,000 bytes
    assert shape.params_line() == "20000 2000 1000 1000000000 125000\n"
    assert Shape(rate_bits_per_second=10_000_000, mtu_bytes=9000).queue() == 18_000  # at least two packets
    assert Shape(rate_bits_per_second=0).params_line().endswith(" 0 0\n")  # no rate, no queue
    assert Shape(queue_bytes=1 << 20).queue() == 1 << 20


@pytest.mark.parametrize(
    ("shape", "fragment"),
    [
        (Shape(rtt_seconds=3), "--rtt 3 s: give 0 to 2 s"),
        (Shape(rtt_seconds=0.01, jitter_seconds=0.02), "--jitter 20 ms: give at most the RTT (10 ms)"),
        (Shape(loss_ratio=0.6), "--loss 60 %"),
        (Shape(rate_bits_per_second=1000), "give at least 64 kbit/s"),
        (Shape(mtu_bytes=576), "--mtu 576: give 1280 to 9000 bytes"),
        (Shape(queue_bytes=100), "at least two packets"),
    ],
)
def test_bad_shapes_are_refused_naming_the_option(shape, fragment):
    with pytest.raises(LabError, match=re.escape(fragment)):
        shape.check()


def test_node_counts_are_limited():
    with pytest.raises(LabError, match="--standby-nodes 9: give 1 to 8"):
        plan_lab(Shape(), standby_nodes=9)


def test_percent_parser():
    assert parse_percent("0.1%") == pytest.approx(0.001)
    assert parse_percent("2 %") == pytest.approx(0.02)
    with pytest.raises(UnitError, match="not a percentage"):
        parse_percent("3 ms")


def test_not_root_is_told_plainly(monkeypatch):
    monkeypatch.setattr(control.os, "geteuid", lambda: 1000)
    with pytest.raises(LabError, match=r"redolab lab needs root.*sudo redolab lab up"):
        control.require_root()
