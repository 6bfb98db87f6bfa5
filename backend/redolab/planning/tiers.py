"""Link tiers a buyer can choose, and what one stream carries on one (issue 55, item 2). Pure.

- The catalogue: common port speeds kept as data, each with its source and the date it was read:
  plain steps from 10 Mbit/s to 100 Gbit/s, and the port speeds the providers' own pages list for AWS
  Direct Connect, Azure ExpressRoute, OCI FastConnect and Google Cloud Interconnect.
  `catalogue_tiers()` gives the environment's own tiers (with their monthly prices) when it names
  any, else the plain steps; the providers' tiers on request.
- Efficiency: a nominal tier (line rate, bit/s) turned into the redo payload one stream carries
  (bytes/s): by the efficiency measured on this path, else a stated default for protocol overhead.
- The Mathis formula: a single stream's ceiling under loss-based congestion control.

Units: rates in bit/s where they are line rates (tiers), bytes/s where they are payload (redo)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from redolab.core.units import ETHERNET_WIRE_BYTES
from redolab.environments.models import Environment

CATALOGUE_READ_ON = date(2026, 12, 2)  # the day the providers' pages below were read

PLAIN = "plain"
AWS = "AWS Direct Connect"
AZURE = "Azure ExpressRoute"
OCI = "OCI FastConnect"
GOOGLE = "Google Cloud Interconnect"
PROVIDERS = (AWS, AZURE, OCI, GOOGLE)

PLAIN_SOURCE = "round steps (1-2-5 series) and the Ethernet rates 25 and 40 Gbit/s (IEEE 802.3)"
AWS_DEDICATED_URL = "https://docs.aws.amazon.com/directconnect/latest/UserGuide/WorkingWithConnections.html"
AWS_HOSTED_URL = (
    "https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/directconnect/"
    "aws.sdk.kotlin.services.directconnect.model/-allocate-hosted-connection-request/bandwidth.html"
)
AZURE_URL = "https://docs.microsoft.com/en-us/azure/expressroute/expressroute-faqs"
OCI_URL = "https://www.oracle.com/in/cloud/networking/fastconnect/faq/"
GOOGLE_URL = "https://cloud.google.com/network-connectivity/docs/interconnect/concepts/dedicated-overview"

M, G = 10**6, 10**9


@dataclass(frozen=True)
class CatalogueEntry:
    """One row of the catalogue: a port speed as its provider names it, and the page that says so."""

    name: str
    bits_per_second: int
    provider: str  # PLAIN for the plain steps
    source_url: str  # "" for the plain steps: no page lists them


# Written from the pages themselves (read on CATALOGUE_READ_ON), only the speeds each page states:
# AWS: dedicated ports "1 Gbps, 10 Gbps, 100 Gbps, and 400 Gbps"; hosted connections 50 Mbps to 25 Gbps.
# Azure: ExpressRoute FAQ, "supported bandwidth offers" 50 Mbps to 10 Gbps (circuits via a provider).
# OCI: FastConnect FAQ, port speeds of 1 Gbps and 10 Gbps. Google: Dedicated Interconnect's 10-Gbps
# and 100-Gbps circuits.
# fmt: off
CATALOGUE: tuple[CatalogueEntry, ...] = (
    *(CatalogueEntry(name, rate, PLAIN, "") for name, rate in (
        ("10 Mbit/s", 10 * M), ("20 Mbit/s", 20 * M), ("50 Mbit/s", 50 * M), ("100 Mbit/s", 100 * M),
        ("200 Mbit/s", 200 * M), ("500 Mbit/s", 500 * M), ("1 Gbit/s", 1 * G), ("2 Gbit/s", 2 * G),
        ("5 Gbit/s", 5 * G), ("10 Gbit/s", 10 * G), ("20 Gbit/s", 20 * G), ("25 Gbit/s", 25 * G),
        ("40 Gbit/s", 40 * G), ("50 Gbit/s", 50 * G), ("100 Gbit/s", 100 * G),
    )),
    *(CatalogueEntry(f"AWS Direct Connect dedicated {name}", rate, AWS, AWS_DEDICATED_URL) for name, rate in (
        ("1 Gbps", 1 * G), ("10 Gbps", 10 * G), ("100 Gbps", 100 * G), ("400 Gbps", 400 * G),
    )),
    *(CatalogueEntry(f"AWS Direct Connect hosted {name}", rate, AWS, AWS_HOSTED_URL) for name, rate in (
        ("50 Mbps", 50 * M), ("100 Mbps", 100 * M), ("200 Mbps", 200 * M), ("300 Mbps", 300 * M),
        ("400 Mbps", 400 * M), ("500 Mbps", 500 * M), ("1 Gbps", 1 * G), ("2 Gbps", 2 * G),
        ("5 Gbps", 5 * G), ("10 Gbps", 10 * G), ("25 Gbps", 25 * G),
    )),
    *(CatalogueEntry(f"Azure ExpressRoute {name}", rate, AZURE, AZURE_URL) for name, rate in (
        ("50 Mbps", 50 * M), ("100 Mbps", 100 * M), ("200 Mbps", 200 * M), ("500 Mbps", 500 * M),
        ("1 Gbps", 1 * G), ("2 Gbps", 2 * G), ("5 Gbps", 5 * G), ("10 Gbps", 10 * G),
    )),
    *(CatalogueEntry(f"OCI FastConnect {name}", rate, OCI, OCI_URL) for name, rate in (
        ("1 Gbps", 1 * G), ("10 Gbps", 10 * G),
    )),
    *(CatalogueEntry(f"Google Dedicated Interconnect {name}", rate, GOOGLE, GOOGLE_URL) for name, rate in (
        ("10 Gbps", 10 * G), ("100 Gbps", 100 * G),
    )),
)
# fmt: on


@dataclass(frozen=True)
class MonthlyPrice:
    amount: float
    currency: str  # ISO 4217 code


@dataclass(frozen=True)
class Tier:
    """A link the buyer can choose: its nominal (line) rate in bit/s, its monthly price when known, and
    where it comes from (the environment, or a catalogue row with its page and the date it was read)."""

    name: str
    bits_per_second: int
    monthly_price: MonthlyPrice | None
    source: str


def entry_source(entry: CatalogueEntry) -> str:
    """A catalogue row's source as one line: the provider's page and the date it was read."""
    if entry.provider == PLAIN:
        return f"catalogue: {PLAIN_SOURCE}"
    return f"{entry.provider}: {entry.source_url} (read {CATALOGUE_READ_ON.isoformat()})"


def _catalogue(*, plain: bool, providers: bool) -> list[Tier]:
    wanted = (entry for entry in CATALOGUE if (plain if entry.provider == PLAIN else providers))
    return [Tier(entry.name, entry.bits_per_second, None, entry_source(entry)) for entry in wanted]


def _own(environment: Environment) -> list[Tier]:
    found = []
    for tier in environment.link_tiers:
        price = MonthlyPrice(tier.monthly_price, tier.currency) if tier.monthly_price is not None else None
        found.append(Tier(tier.name, tier.bits_per_second, price, f"environment '{environment.name}'"))
    return found


def catalogue_tiers(environment: Environment | None = None, *, providers: bool = False) -> list[Tier]:
    """The tiers a what-if weighs, slowest first (then by name): the environment's own tiers when it
    names any, else the catalogue's plain steps; with `providers`, the providers' port speeds as well."""
    own = _own(environment) if environment is not None else []
    chosen = own or _catalogue(plain=True, providers=False)
    if providers:
        chosen = chosen + _catalogue(plain=False, providers=True)
    return sorted(chosen, key=lambda tier: (tier.bits_per_second, tier.name))


# -- what one stream carries ----------------------------------------------------------------------
TCP_PAYLOAD_BYTES = 1448  # 1500 - 20 IPv4 - 20 TCP - 12 TCP timestamps (on by default on Linux)
DEFAULT_EFFICIENCY = TCP_PAYLOAD_BYTES / ETHERNET_WIRE_BYTES  # 0.9415: payload share of the line rate
DEFAULT_BASIS = (
    "default for protocol overhead: 94.1 % of the line rate (1448 bytes of TCP payload per 1538-byte "
    "Ethernet frame on the wire at a 1500-byte MTU: IPv4, TCP and timestamp headers, Ethernet header, "
    "FCS, preamble and inter-frame gap); no run measured this path"
)


# A run carrying less than this share of the nominal rate did not fill the link (one stream, a busy
# host): its ratio says nothing of protocol overhead, so the default stands.
FILLED_LINK = 0.5


@dataclass(frozen=True)
class Efficiency:
    """Line rate -> redo payload: measured on this path (a run's throughput over the nominal rate),
    else the default for protocol overhead; `basis` says which and why."""

    ratio: float  # payload bits over line-rate bits, 0 < ratio <= 1
    basis: str
    measured: bool


def path_efficiency(measured_bytes_per_second: float, nominal_bits_per_second: float) -> float:
    """A run's throughput (receiver-confirmed payload, bytes/s) over the link's nominal rate (bit/s),
    capped at 1: a run faster than the nominal rate says the nominal figure is wrong, not the link."""
    if measured_bytes_per_second <= 0 or nominal_bits_per_second <= 0:
        raise ValueError("efficiency needs a positive measured throughput and a positive nominal rate")
    return min(1.0, measured_bytes_per_second * 8 / nominal_bits_per_second)


def efficiency(
    measured_bytes_per_second: float | None, nominal_bits_per_second: float | None, *, run: str = "a run"
) -> Efficiency:
    """The one rule: the measured ratio when a run (`run` names it) filled at least FILLED_LINK of a
    known nominal rate, else DEFAULT_EFFICIENCY."""
    if not measured_bytes_per_second or not nominal_bits_per_second or measured_bytes_per_second <= 0:
        return Efficiency(DEFAULT_EFFICIENCY, DEFAULT_BASIS, False)
    ratio = path_efficiency(measured_bytes_per_second, nominal_bits_per_second)
    if ratio < FILLED_LINK:
        said = f"{DEFAULT_BASIS}; {run} carried {ratio * 100:.1f} % of the nominal link: it did not fill it"
        return Efficiency(DEFAULT_EFFICIENCY, said, False)
    said = (
        f"measured on this path: {ratio * 100:.1f} % of the nominal rate ({run}'s "
        f"{measured_bytes_per_second * 8 / 1e6:,.1f} Mbit/s of payload over {nominal_bits_per_second / 1e6:,.1f} "
        "Mbit/s nominal)"
    )
    return Efficiency(ratio, said, True)


@dataclass(frozen=True)
class StreamRate:
    """What a nominal tier carries as redo payload: bytes/s, the ratio used and how it was chosen."""

    bytes_per_second: float
    efficiency: float  # payload bits over line-rate bits, 0 < efficiency <= 1
    basis: str


def stream_rate(
    tier_bits_per_second: float,
    *,
    measured_bytes_per_second: float | None = None,
    nominal_bits_per_second: float | None = None,
) -> StreamRate:
    """The redo payload (bytes/s) a tier of `tier_bits_per_second` carries, scaled by efficiency()."""
    if tier_bits_per_second <= 0:
        raise ValueError("a tier's rate must be positive")
    found = efficiency(measured_bytes_per_second, nominal_bits_per_second)
    return StreamRate(tier_bits_per_second * found.ratio / 8, found.ratio, found.basis)


# -- one stream's ceiling under loss ----------------------------------------------------------------
MATHIS_C = math.sqrt(3 / 2)  # ~1.22: periodic loss, an ACK per segment (Mathis et al. 1997)
MATHIS_BASIS = "CUBIC, Reno; not BBR"


@dataclass(frozen=True)
class StreamCeiling:
    bytes_per_second: float
    basis: str


def mathis_ceiling(mss_bytes: float, rtt_seconds: float, loss_ratio: float) -> StreamCeiling:
    """One TCP stream's throughput ceiling (bytes/s) under loss-based congestion control:

        rate <= (MSS / RTT) * (C / sqrt(p)),  C = sqrt(3/2) ~ 1.22

    M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The Macroscopic Behavior of the TCP Congestion Avoidance
    Algorithm", ACM SIGCOMM Computer Communication Review 27(3), July 1997. It holds for Reno and,
    roughly, CUBIC (loss halves or cuts the window); BBR paces by measured bandwidth and RTT and is
    not bound by it. Data Guard ships one stream per redo thread, so this bounds each thread.
    `loss_ratio` is the share of segments lost (0 < p <= 1): with no loss the formula gives no bound."""
    if mss_bytes <= 0 or rtt_seconds <= 0:
        raise ValueError("MSS and RTT must be positive")
    if not 0 < loss_ratio <= 1:
        raise ValueError("the loss ratio must be in (0, 1]: with no loss the formula gives no bound")
    return StreamCeiling(mss_bytes / rtt_seconds * MATHIS_C / math.sqrt(loss_ratio), MATHIS_BASIS)
