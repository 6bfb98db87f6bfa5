"""The one place that parses and formats units.

Storage is in bytes, seconds, bytes per second and bits per second (link rates).
Data volumes and redo rates are shown in binary units (KiB, MiB, GiB, TiB), because Oracle tools
mean 1024 x 1024 bytes by "MB": the parser therefore reads "MB" as MiB. Link rates are decimal bits
(kbit/s, Mbit/s, Gbit/s). 1 MiB/s = 8.388608 Mbit/s.

Text needs its unit: "20" is refused in every quantity (20 bytes? 20 GiB?), a number passed as a
number is base units (JSON). A unit that reads two ways under this convention ("20 GB" is 20 GiB,
"1 GB/s" for a link is 8,589.93 Mbit/s, "25 m" is minutes) is accepted and `reading` says how it was
read, for the form and the API answer to echo. A capital B is a byte everywhere ("GBps" is GB/s).
"""

from __future__ import annotations

import math
import re

MIB = 1024 * 1024
DB2_PAGE_BYTES = 4096  # a Db2 log page
MBIT_PER_MIB_PER_SECOND = MIB * 8 / 1e6  # 8.388608
# Ethernet at a 1500-byte MTU: a packet of IP_PACKET_BYTES is ETHERNET_WIRE_BYTES on the wire (+ 14 header,
# 4 FCS, 8 preamble, 12 inter-frame gap). A link's line rate counts wire bytes; the kernel's pacing, IP bytes.
IP_PACKET_BYTES = 1500
ETHERNET_WIRE_BYTES = 1538

_BINARY_PREFIX = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_DECIMAL_PREFIX = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_SIZE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_BIT_RATE_UNITS = (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3))
_DURATION_UNITS = {
    "us": 1e-6,
    "µs": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
}

_NUMBER = r"(?P<num>[0-9][0-9,_]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]+))?"
_QUANTITY = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>[^\s0-9.,][^\s]*)?\s*$")


# A bit is a small b ("Mbps", "Mb/s") or written out ("Mbit/s", "MBit/s"); a capital B is a byte
# ("MBps", "MB/s"), as in parse_byte_rate: "1 GBps" is never read as 1 Gbit/s.
_BITS = re.compile(r"([kKmMgGtT]?)(?:[bB]its?(?:/s)?|bps|b/s)")


class UnitError(ValueError):
    """The text is not a quantity of the expected kind; the message says what would be."""


def _split(text: str, kind: str, example: str) -> tuple[float, str]:
    match = _QUANTITY.match(str(text))
    if not match:
        raise UnitError(f"'{text}' is not {kind}: write a number and a unit, e.g. {example}")
    number = float(match["num"].replace(",", "").replace("_", ""))
    if match["exp"]:
        number *= 10 ** int(match["exp"])
    if not math.isfinite(number):
        raise UnitError(f"'{text}' is not {kind}: the number is too large")
    return number, (match["unit"] or "")


def parse_size(text: str | int | float) -> int:
    """Parse a data size such as "2 TiB", "500G" or "1.5 GB" into bytes.

    K, M, G, T, P are 1024-based whether or not an "i" is written (Oracle's MB is MiB).
    A number given as a number is bytes; text needs a unit, so that "20" typed into a database size
    is not silently read as 20 bytes. "32 pages" is 32 Db2 log pages of 4 KiB (simhadr's -flushSize).
    """
    if isinstance(text, float) and text.is_integer():
        text = int(text)  # JSON's 424160.0 is the integer 424160, to JSON Schema as well
    if isinstance(text, int):
        return _non_negative(text, text, "a size")
    number, unit = _split(text, "a size", "500 GiB or 2 TiB")
    if not unit and number != 0:  # zero is zero in every unit ("--rate 0": none)
        raise UnitError(_no_unit(text, number, ("GiB", "TiB", "MiB")))
    if unit.lower() in ("page", "pages", "pg"):
        return _non_negative(round(number * DB2_PAGE_BYTES), text, "a size")
    match = re.fullmatch(r"([kmgtpeKMGTPE]?)(iB|B|bytes?)?", unit)
    if not match:
        if re.fullmatch(r"(?i)[kmgtpe]?(b|bits?)", unit):
            raise UnitError(f"'{text}' looks like bits: a size is in bytes, e.g. 500 GiB")
        raise UnitError(f"'{text}' has an unknown size unit '{unit}': use B, KiB, MiB, GiB, TiB or pages (4 KiB)")
    exponent = _BINARY_PREFIX[match[1].lower()]
    return _non_negative(round(number * 1024**exponent), text, "a size")


def parse_bit_rate(text: str | float) -> float:
    """Parse a link rate such as "10 Gbit/s", "1Gbps" or "100 MiB/s" into bits per second.

    Bit units are decimal (1 Mbit/s = 10^6 bit/s); byte units are binary and converted ("1 GB/s" is
    1 GiB/s, 8,589.93 Mbit/s: `reading` says so). A number given as a number is bits per second;
    text needs a unit.
    """
    if isinstance(text, int | float):
        return float(_non_negative(text, text, "a rate"))
    number, unit = _split(text, "a rate", "10 Gbit/s or 100 MiB/s")
    if not unit and number != 0:  # zero is zero in every unit ("--rate 0": none)
        raise UnitError(_no_unit(text, number, ("Gbit/s", "Mbit/s", "MiB/s")))
    if not unit:
        return 0.0
    bits = _BITS.fullmatch(unit)
    if bits:
        return float(_non_negative(number * _DECIMAL_PREFIX[bits[1].lower()], text, "a rate"))
    return parse_byte_rate(text) * 8


def parse_byte_rate(text: str | float) -> float:
    """Parse a data rate such as "54.67 MiB/s", "300 MB/s" (MiB/s) or "1 Gbit/s" into bytes/s."""
    if isinstance(text, int | float):
        return float(_non_negative(text, text, "a rate"))
    number, unit = _split(text, "a rate", "300 MiB/s or 1 Gbit/s")
    if not unit and number != 0:  # zero is zero in every unit ("--rate 0": none)
        raise UnitError(_no_unit(text, number, ("MiB/s", "GiB/s", "Mbit/s")))
    if not unit:
        return 0.0
    byte_unit = re.fullmatch(r"([kKmMgGtT]?)(?:i?B/s|iB/sec|B/sec|Bps)", unit)
    if byte_unit:
        prefix = byte_unit[1].lower()
        return float(_non_negative(number * 1024 ** _BINARY_PREFIX[prefix], text, "a rate"))
    bits = _BITS.fullmatch(unit)
    if bits:
        return float(_non_negative(number * _DECIMAL_PREFIX[bits[1].lower()] / 8, text, "a rate"))
    raise UnitError(f"'{text}' has an unknown rate unit '{unit}': use MiB/s, GiB/s, Mbit/s or Gbit/s")


def parse_duration(text: str | float) -> float:
    """Parse a duration such as "25 ms", "0.5s", "90 min" or "48 h" into seconds.

    A bare number is seconds only when given as a number; text needs a unit, so that "25" typed
    into a round-trip-time field is not silently read as 25 seconds.
    """
    if isinstance(text, int | float):
        return float(_non_negative(text, text, "a duration"))
    number, unit = _split(text, "a duration", "25 ms or 48 h")
    if not unit and number != 0:  # zero is zero in every unit ("--rate 0": none)
        raise UnitError(_no_unit(text, number, ("ms", "s", "h")))
    if not unit:
        return 0.0
    factor = _DURATION_UNITS.get(unit) or _DURATION_UNITS.get(unit.lower())
    if factor is None:
        raise UnitError(f"'{text}' has an unknown time unit '{unit}': use us, ms, s, min, h or d")
    return float(_non_negative(number * factor, text, "a duration"))


# The units the API document names for each kind of quantity, with their size in base units. The
# parsers read more spellings (MB, Gbps, minutes, 1,024, 2e3); the document lists these.
SCHEMA_UNITS = {
    "size": (("B", 1), ("KiB", 1024), ("MiB", 1024**2), ("GiB", 1024**3), ("TiB", 1024**4), ("PiB", 1024**5)),
    "bit_rate": (("bit/s", 1), ("kbit/s", 1e3), ("Mbit/s", 1e6), ("Gbit/s", 1e9), ("Tbit/s", 1e12)),
    "byte_rate": (("B/s", 1), ("KiB/s", 1024), ("MiB/s", 1024**2), ("GiB/s", 1024**3), ("TiB/s", 1024**4)),
    "duration": (("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("min", 60.0), ("h", 3600.0), ("d", 86400.0)),
}
_SCHEMA_NUMBER, _SCHEMA_NUMBER_MAX = r"[1-9][0-9]{0,2}(\.[0-9]{1,2})?", 999.99  # 1 to 999.99


def quantity_pattern(kind: str, minimum: float, maximum: float) -> str | None:
    """A JSON-schema pattern for text every value of which the parser of `kind` reads within
    [minimum, maximum] (a minimum of 0 is taken as above zero): a number from 1 to 999.99 and a unit
    whose range fits. Narrower than the parser on purpose: what matches is accepted. None when no
    unit fits."""
    units = [
        re.escape(unit)
        for unit, factor in SCHEMA_UNITS[kind]
        if factor >= minimum and _SCHEMA_NUMBER_MAX * factor <= maximum
    ]
    return f"^{_SCHEMA_NUMBER} ?({'|'.join(units)})$" if units else None


def ascii_digits(text: str) -> bool:
    """A whole number written in ASCII digits only ('²'.isdigit() is true, int('²') fails)."""
    return text.isascii() and text.isdigit()


def parse_percent(text: str | float) -> float:
    """Parse a percentage such as "0.1%", "2 %" or "0" into a ratio (0.001, 0.02, 0.0)."""
    if isinstance(text, int | float):
        return float(_non_negative(text, text, "a percentage")) / 100
    number, unit = _split(text, "a percentage", "0.1 %")
    if unit not in ("", "%"):
        raise UnitError(f"'{text}' is not a percentage: write e.g. {number:g} %")
    return float(_non_negative(number, text, "a percentage")) / 100


def _no_unit(text, number: float, examples: tuple[str, ...]) -> str:
    typed = str(text).strip()[:40] if len(str(text).strip()) <= 40 else f"{number:g}"
    shown = [f"{typed} {unit}" for unit in examples]
    return f"'{text}' has no unit: write e.g. {', '.join(shown[:-1])} or {shown[-1]}"


def _non_negative(value, text, kind):
    if value < 0:
        raise UnitError(f"'{text}' is negative: {kind} must be zero or more")
    return value


def _trim(value: float, decimals: int) -> str:
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_bytes(n: float | None, decimals: int = 2) -> str:
    """Format a byte count with a binary unit: 2199023255552 -> "2 TiB"."""
    if n is None:
        return "–"
    value = float(n)
    index = 0
    while abs(value) >= 1024 and index < len(_SIZE_UNITS) - 1:
        value /= 1024
        index += 1
    return f"{_trim(value, decimals if index else 0)} {_SIZE_UNITS[index]}"


def format_byte_rate(bytes_per_second: float | None, decimals: int = 2) -> str:
    """Format a data or redo rate, always in MiB/s so rates compare at a glance:
    57325568 -> "54.67 MiB/s", 4.6e9 -> "4,386.9 MiB/s"."""
    if bytes_per_second is None:
        return "–"
    return f"{_trim(bytes_per_second / MIB, decimals)} MiB/s"


def format_mbit(bits_per_second: float | None, decimals: int = 1) -> str:
    """Format a measured link rate, always in Mbit/s: 3.7e10 -> "37,180.4 Mbit/s"."""
    if bits_per_second is None:
        return "–"
    return f"{_trim(bits_per_second / 1e6, decimals)} Mbit/s"


def format_byte_rate_in_mbit(bytes_per_second: float | None, decimals: int = 1) -> str:
    """A byte rate on a link's scale, in Mbit/s: 125e6 B/s -> "1,000.0 Mbit/s" (templates never multiply)."""
    return format_mbit(None if bytes_per_second is None else bytes_per_second * 8, decimals)


def ratio_as_percent(ratio: float | None) -> str:
    """0.3 -> "30" (the template writes the " %")."""
    return "–" if ratio is None else f"{ratio * 100:.0f}"


def format_count(count: int | None, noun: str, nouns: str | None = None) -> str:
    """1 -> "1 day", 1234 -> "1,234 days" (`nouns` when the plural is not noun + "s"): never "day(s)"."""
    if count is None:
        return "–"
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def format_named(noun: str, names, nouns: str | None = None) -> str:
    """("member", [1]) -> "member 1", ("member", [1, 2]) -> "members 1, 2": never "member(s) 1, 2"."""
    names = [str(name) for name in names]
    return f"{noun if len(names) == 1 else (nouns or noun + 's')} {', '.join(names)}"


def format_microseconds(microseconds: float | None, decimals: int = 2) -> str:
    """A latency the probe reports in µs, as a duration: 1500 -> "1.5 ms"."""
    return format_duration(None if microseconds is None else microseconds / 1e6, decimals)


def format_bit_rate(bits_per_second: float | None, decimals: int = 2) -> str:
    """Format a link rate with a decimal bit unit: 1e10 -> "10 Gbit/s"."""
    if bits_per_second is None:
        return "–"
    for unit, factor in _BIT_RATE_UNITS:
        if abs(bits_per_second) >= factor:
            return f"{_trim(bits_per_second / factor, decimals)} {unit}"
    return f"{_trim(bits_per_second, decimals)} bit/s"


def format_duration(seconds: float | None, decimals: int = 2) -> str:
    """Format a duration with the unit that reads best: 0.025 -> "25 ms", 172800 -> "48 h"."""
    if seconds is None:
        return "–"
    value = abs(seconds)
    if value == 0:
        return "0 s"
    if value < 1e-3:
        return f"{_trim(seconds * 1e6, decimals)} µs"
    if value < 1:
        return f"{_trim(seconds * 1e3, decimals)} ms"
    if value < 120:
        return f"{_trim(seconds, decimals)} s"
    if value < 7200:
        return f"{_trim(seconds / 60, decimals)} min"
    return f"{_trim(seconds / 3600, decimals)} h"


def byte_rate_to_mbit(bytes_per_second: float) -> float:
    """bytes/s -> Mbit/s (decimal bits)."""
    return bytes_per_second * 8 / 1e6


def size_for_input(n: int | None) -> str:
    """A size as it round-trips through a form field without drift: the largest exact unit."""
    if n is None:
        return ""
    for index in range(len(_SIZE_UNITS) - 1, 0, -1):
        factor = 1024**index
        if n >= factor and n % factor == 0:
            return f"{n // factor} {_SIZE_UNITS[index]}"
    return f"{n} B"


def bit_rate_for_input(bits_per_second: int | None) -> str:
    """A link rate for a form field, exact: 10000000000 -> "10 Gbit/s"."""
    if bits_per_second is None:
        return ""
    for unit, factor in _BIT_RATE_UNITS:
        if bits_per_second >= factor and bits_per_second % factor == 0:
            return f"{int(bits_per_second // factor)} {unit}"
    return f"{bits_per_second} bit/s"


def byte_rate_for_input(bytes_per_second: float | None) -> str:
    """A redo or data rate for a form field, to 12 significant digits of MiB/s."""
    if bytes_per_second is None:
        return ""
    return f"{bytes_per_second / MIB:.12g} MiB/s"


def duration_for_input(seconds: float | None) -> str:
    """A duration for a form field, to 12 significant digits: 0.025 -> "25 ms"."""
    if seconds is None:
        return ""
    for unit, factor in (("h", 3600), ("min", 60), ("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= factor or unit == "us":
            return f"{seconds / factor:.12g} {unit}"
    return ""  # unreachable: the loop ends on "us"


def wall_clock(moment, zone: str):
    """A stored UTC time on the database's clock in `zone` (an IANA name), without its zone: what a
    DBA's exports and screens show. The callers name the zone beside it."""
    from zoneinfo import ZoneInfo

    return moment.astimezone(ZoneInfo(zone)).replace(tzinfo=None)


def reading(text: str, kind: str) -> str | None:
    """How text with a unit that can be read two ways was read, to echo it back; None when the unit
    says it all. `kind`: "size", "bit_rate" (a link, in bits), "byte_rate" or "duration".

    One convention everywhere (DESIGN.md, Units): K, M, G, T without an "i" are binary, as Oracle
    tools mean them, so "1 GB/s" is 1 GiB/s; a link's byte rate is converted to bits (x 8)."""
    if not isinstance(text, str):
        return None
    try:
        number, unit = _split(text, kind, "")
    except UnitError:
        return None
    binary = re.fullmatch(r"([kKmMgGtTpPeE])(?:B|bytes?)?(/s|ps|/sec)?", unit) if unit[:1] != "B" else None
    given = text.strip()
    if kind == "duration" and unit == "m":
        return f"{given} read as {_trim(number, 6)} min (m is minutes, not metres nor ms)"
    if kind == "size" and binary and not binary[2]:
        name = f"{binary[1].upper()}iB"
        return f"{given} read as {_trim(number, 6)} {name} ({parse_size(text):,} bytes): {_BINARY_NOTE}"
    if kind == "byte_rate" and binary and binary[2]:
        return f"{given} read as {_trim(number, 6)} {binary[1].upper()}iB/s: {_BINARY_NOTE}"
    if kind == "bit_rate" and not _BITS.fullmatch(unit):
        bits = parse_bit_rate(text)
        base = f"{given} read as {format_mbit(bits, 2)}"
        if binary and binary[2]:
            decimal = number * _DECIMAL_PREFIX.get(binary[1].lower(), 1e15) * 8
            return (
                f"{base} ({_trim(number, 6)} {binary[1].upper()}iB/s, binary {binary[1].upper()}B as Oracle tools "
                f"mean it; a decimal {given} would be {format_mbit(decimal, 2)}): a link is rated in bits, "
                "write e.g. 10 Gbit/s"
            )
        return f"{base} (bytes x 8): a link is rated in bits, write e.g. 10 Gbit/s"
    return None


_BINARY_NOTE = "K, M, G, T without an i are read as binary (KiB, MiB, GiB, TiB), as Oracle tools mean them"
