"""BDP, socket buffers, TCP window and instantiation time: the seeds' worked examples."""

import pytest

from redolab.core.units import parse_bit_rate, parse_byte_rate, parse_duration, parse_size
from redolab.planning.instantiation import instantiation_estimate
from redolab.planning.network import bandwidth_delay, packets_in_flight, tcp_window_bytes


def test_seed_003_bdp_and_socket_buffers():
    # 1 Gbit/s and 25 ms: BDP 3,125,000 bytes; buffers 3 x BDP = 9,375,000 bytes.
    result = bandwidth_delay(bandwidth_bits_per_second=parse_bit_rate("1 Gbit/s"), rtt_seconds=parse_duration("25 ms"))
    assert result.bdp_bytes == 3_125_000
    assert result.socket_buffer_bytes == 9_375_000


def test_bdp_scales_with_rtt_and_rate():
    base = bandwidth_delay(bandwidth_bits_per_second=1e9, rtt_seconds=0.010)
    assert bandwidth_delay(bandwidth_bits_per_second=1e9, rtt_seconds=0.020).bdp_bytes == 2 * base.bdp_bytes
    assert bandwidth_delay(bandwidth_bits_per_second=1e10, rtt_seconds=0.010).bdp_bytes == 10 * base.bdp_bytes


def test_seed_001_window_from_send_rate_and_rtt():
    # 2.02 MB/s (Oracle/IBM MB = MiB) x 27.7 ms ~ 58,672 bytes.
    window = tcp_window_bytes(send_bytes_per_second=parse_byte_rate("2.02 MB/s"), rtt_seconds=parse_duration("27.7ms"))
    assert abs(window - 58_672) <= 1


def test_seed_000_instantiation_example():
    # 100 TB on 2 nodes at 300 MB/s each: "about 50 hours" (the seed rounds 2.16 TB/h to 2 TB/h).
    estimate = instantiation_estimate(
        database_bytes=parse_size("100 TB"),
        throughput_per_pair_bytes_per_second=parse_byte_rate("300 MB/s"),
        node_pairs=2,
        overhead_percent=30,
    )
    assert 46 <= estimate.copy_seconds / 3600 <= 51
    assert estimate.total_seconds == pytest.approx(estimate.copy_seconds * 1.3)
    assert estimate.total_hours == pytest.approx(estimate.total_seconds / 3600)
    assert estimate.aggregate_bytes_per_second == 2 * parse_byte_rate("300 MB/s")


def test_more_pairs_take_less_time():
    one = instantiation_estimate(database_bytes=10**12, throughput_per_pair_bytes_per_second=1e8, node_pairs=1)
    four = instantiation_estimate(database_bytes=10**12, throughput_per_pair_bytes_per_second=1e8, node_pairs=4)
    assert four.copy_seconds == pytest.approx(one.copy_seconds / 4)
    assert one.copy_seconds == pytest.approx(10_000)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: bandwidth_delay(bandwidth_bits_per_second=0, rtt_seconds=0.01), "bandwidth"),
        (lambda: bandwidth_delay(bandwidth_bits_per_second=1e9, rtt_seconds=0), "round-trip time"),
        (lambda: tcp_window_bytes(send_bytes_per_second=-1, rtt_seconds=0.01), "send rate"),
        (
            lambda: instantiation_estimate(database_bytes=1, throughput_per_pair_bytes_per_second=1, node_pairs=0),
            "node pairs",
        ),
        (lambda: instantiation_estimate(database_bytes=0, throughput_per_pair_bytes_per_second=1), "database size"),
    ],
)
def test_impossible_inputs_are_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_packets_in_flight():
    assert packets_in_flight(bdp_bytes=3_125_000, mtu_bytes=1500) == 2084
    assert packets_in_flight(bdp_bytes=3_125_000, mtu_bytes=9000) == 348
