"""The lab's shape and names, without touching the machine."""

import re

import pytest

from redolab.core.units import UnitError, parse_percent
from redolab.lab import control
from redolab.lab.topology import LabError, Shape, plan_lab


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
