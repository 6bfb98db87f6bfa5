import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.core import units
from redolab.core.units import UnitError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 TiB", 2 * 1024**4),
        ("2TB", 2 * 1024**4),  # Oracle's TB is TiB
        ("500G", 500 * 1024**3),
        ("1.5 GiB", 1536 * 1024**2),
        ("1,024 MB", 1024**3),
        (".5 KiB", 512),
        ("4096 bytes", 4096),
        (123, 123),
        (424160.0, 424160),  # JSON's 424160.0 is an integer (to JSON Schema too): Schemathesis sent it
    ],
)
def test_parse_size(text, expected):
    assert units.parse_size(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("2 Tb", "looks like bits"),
        ("2 Tbit", "looks like bits"),
        ("lots", "is not a size"),
        ("2 parsecs", "unknown size unit 'parsecs'"),
        ("", "is not a size"),
        (1.5, "has no unit"),  # a number of bytes is whole
    ],
)
def test_parse_size_refuses(text, fragment):
    with pytest.raises(UnitError, match=fragment):
        units.parse_size(text)


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("10 Gbit/s", 10e9),
        ("1Gbps", 1e9),
        ("10 Gb/s", 10e9),
        ("100 Mbit/s", 100e6),
        ("100 MiB/s", 100 * 1024**2 * 8),
        ("100 MB/s", 100 * 1024**2 * 8),  # bytes, binary
        ("1e9 bit/s", 1e9),
        ("1 GBit/s", 1e9),
        ("1 GBps", 1024**3 * 8),  # a capital B is a byte, as in parse_byte_rate
        (1e9, 1e9),
    ],
)
def test_parse_bit_rate(text, bits):
    assert units.parse_bit_rate(text) == pytest.approx(bits)


@pytest.mark.parametrize(
    ("text", "bytes_per_second"),
    [("54.67 MiB/s", 54.67 * 1024**2), ("300MB/s", 300 * 1024**2), ("1 Gbit/s", 125e6)],
)
def test_parse_byte_rate(text, bytes_per_second):
    assert units.parse_byte_rate(text) == pytest.approx(bytes_per_second)


def test_parse_byte_rate_refuses_unknown_unit():
    with pytest.raises(UnitError, match="unknown rate unit 'furlongs/s'"):
        units.parse_byte_rate("3 furlongs/s")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("25 ms", 0.025),
        ("0.5s", 0.5),
        ("90 min", 5400),
        ("48 h", 172800),
        ("500 us", 5e-4),
        ("2 days", 172800),
    ],
)
def test_parse_duration(text, seconds):
    assert units.parse_duration(text) == pytest.approx(seconds)


def test_parse_duration_needs_a_unit_in_text():
    with pytest.raises(UnitError, match=r"has no unit: write e\.g\. 25 ms"):
        units.parse_duration("25")
    assert units.parse_duration(25) == 25.0


@pytest.mark.parametrize(
    ("parse", "examples"),
    [
        (units.parse_size, "20 GiB, 20 TiB or 20 MiB"),
        (units.parse_bit_rate, "20 Gbit/s, 20 Mbit/s or 20 MiB/s"),
        (units.parse_byte_rate, "20 MiB/s, 20 GiB/s or 20 Mbit/s"),
        (units.parse_duration, "20 ms, 20 s or 20 h"),
    ],
)
def test_text_without_a_unit_is_refused_in_every_quantity(parse, examples):
    """Issue 32.6: "20" typed as a database size was 20 bytes; now every quantity's text needs a
    unit, as RTT's did, and the message says what would work. A number (JSON) stays base units."""
    for text in ("20", " 20 ", "2e1", "20.0"):
        with pytest.raises(UnitError, match=r"has no unit: write e\.g\. "):
            parse(text)
    with pytest.raises(UnitError, match=re.escape(examples)):
        parse("20")
    assert parse(20) == 20


@given(st.floats(min_value=1e-6, max_value=1e12, allow_nan=False), st.sampled_from(["", " ", "  "]))
@settings(max_examples=200, deadline=None)
def test_no_number_text_without_a_unit_is_ever_read(number, space):
    text = f"{space}{number!r}{space}"
    for parse in (units.parse_size, units.parse_bit_rate, units.parse_byte_rate, units.parse_duration):
        with pytest.raises(UnitError, match="has no unit"):
            parse(text)


def test_zero_needs_no_unit():
    """0 is 0 in every unit: `redolab lab up --rate 0` (no rate limit) still reads."""
    for parse in (units.parse_size, units.parse_bit_rate, units.parse_byte_rate, units.parse_duration):
        assert parse("0") == 0 and parse(" 0.0 ") == 0


@pytest.mark.parametrize(
    ("text", "kind", "said"),
    [
        ("1 GB/s", "bit_rate", "1 GB/s read as 8,589.93 Mbit/s (1 GiB/s, binary GB as Oracle tools mean it; "
         "a decimal 1 GB/s would be 8,000 Mbit/s)"),
        ("1 GiB/s", "bit_rate", "1 GiB/s read as 8,589.93 Mbit/s (bytes x 8)"),
        ("20 GB", "size", "20 GB read as 20 GiB (21,474,836,480 bytes)"),
        ("500G", "size", "500G read as 500 GiB (536,870,912,000 bytes)"),
        ("300 MB/s", "byte_rate", "300 MB/s read as 300 MiB/s"),
        ("25 m", "duration", "25 m read as 25 min"),
    ],
)  # fmt: skip
def test_a_unit_that_reads_two_ways_is_echoed_with_how_it_was_read(text, kind, said):
    assert units.reading(text, kind).startswith(said)


@pytest.mark.parametrize(
    ("text", "kind"),
    [("10 Gbit/s", "bit_rate"), ("1 Gbps", "bit_rate"), ("20 GiB", "size"), ("4096 bytes", "size"),
     ("300 MiB/s", "byte_rate"), ("25 ms", "duration"), ("nonsense", "size"), (20, "size")],
)  # fmt: skip
def test_a_unit_that_says_it_all_is_not_echoed(text, kind):
    assert units.reading(text, kind) is None


@given(st.floats(min_value=0.001, max_value=1e6, allow_nan=False), st.sampled_from(["K", "M", "G", "T"]))
@settings(max_examples=200, deadline=None)
def test_the_echo_states_the_value_that_was_stored(number, prefix):
    """The echoed bits per second are the parsed ones: what is said is what is stored."""
    text = f"{number:g} {prefix}B/s"
    said = units.reading(text, "bit_rate")
    assert said is not None and units.format_mbit(units.parse_bit_rate(text), 2) in said


def test_negative_refused():
    with pytest.raises(UnitError, match="negative"):
        units.parse_size(-1)


def test_formatting_carries_units():
    assert units.format_bytes(2 * 1024**4) == "2 TiB"
    assert units.format_bytes(512) == "512 B"
    assert units.format_byte_rate(57_325_568) == "54.67 MiB/s"
    assert units.format_byte_rate(4.6e9) == "4,386.9 MiB/s"  # never GiB/s: rates compare in one unit
    assert units.format_mbit(3.718e10) == "37,180 Mbit/s"
    assert units.format_bit_rate(1e10) == "10 Gbit/s"
    assert units.format_bit_rate(458.6e6) == "458.6 Mbit/s"
    assert units.format_duration(0.025) == "25 ms"
    assert units.format_duration(172800) == "48 h"
    assert units.format_duration(None) == "–"


def test_mib_per_second_in_mbit():
    assert units.byte_rate_to_mbit(1024**2) == pytest.approx(units.MBIT_PER_MIB_PER_SECOND)
    assert pytest.approx(8.388608) == units.MBIT_PER_MIB_PER_SECOND


@pytest.mark.parametrize("n", [0, 1, 123_456_789, 2 * 1024**4, 3 * 1024**3 + 1, 10**15])
def test_size_for_input_round_trips(n):
    assert units.parse_size(units.size_for_input(n)) == n


@pytest.mark.parametrize("bits", [1_000_000_000, 10_000_000_000, 1_234_567, 7])
def test_bit_rate_for_input_round_trips(bits):
    assert units.parse_bit_rate(units.bit_rate_for_input(bits)) == bits


@pytest.mark.parametrize("seconds", [0.025, 0.0277, 172800, 5400, 1.5, 1e-5])
def test_duration_for_input_round_trips(seconds):
    assert units.parse_duration(units.duration_for_input(seconds)) == pytest.approx(seconds, rel=1e-11)


def test_db2_log_pages_are_4_kib():
    """simhadr's -flushSize counts 4 KiB log pages: the run form takes '32 pages' as a message size."""
    from redolab.core.units import parse_size

    assert parse_size("32 pages") == 131_072 and parse_size("1 page") == 4096 and parse_size("16 pg") == 65_536


def test_a_count_carries_its_noun_in_the_number_it_has():
    """Never "1 day(s)": one noun for one, the plural (given, or noun + s) for any other count."""
    assert units.format_count(1, "day") == "1 day" and units.format_count(0, "day") == "0 days"
    assert units.format_count(1234, "run or sweep", "runs or sweeps") == "1,234 runs or sweeps"
    assert units.format_count(None, "day") == "–"
    assert units.format_named("member", [3]) == "member 3" and units.format_named("member", (1, 2)) == "members 1, 2"
