"""The lab's shape: which namespaces, devices and addresses a lab of N primary and M standby nodes
(and up to four extra destinations of one host each) has, and the delay line's parameters. Pure:
nothing here touches the machine.

Addresses: management 10.78.0.0/24 (this machine is 10.78.0.1 on a bridge; SSH goes there), data
10.77.0.0/24 (through the delay line). Primary node n is .10+n on both, standby node n .40+n, the
host of extra destination i (in the order given) .70+i.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from redolab.core.units import UnitError, format_bit_rate, format_bytes, format_duration, parse_duration

MAX_NODES = 8
MAX_DESTINATIONS = 4  # extra destinations, besides the first ("standby")
DESTINATION_KINDS = ("standby", "far_sync")
FIRST_DESTINATION = "standby"  # the name every environment's first destination has
MAX_RTT_SECONDS = 2.0
_DESTINATION_NAME = re.compile(r"[a-z][a-z0-9_-]{0,19}")  # it names a namespace and hosts: no surprises
BRIDGE = "rlab-br0"
BRIDGE_ADDRESS = "10.78.0.1"
MANAGEMENT_PREFIX = "10.78.0"
DATA_PREFIX = "10.77.0"
MANAGEMENT_DEVICE = "mgmt0"  # names inside each namespace
DATA_DEVICE = "wan0"
NAMESPACE_PREFIX = "redolab-"  # every namespace the lab makes starts with this
TXQUEUELEN = 1000  # a TUN device has 500; more packets only queue (latency) when the delay line is the bottleneck
MIN_MTU, MAX_MTU = 1280, 9000


class LabError(RuntimeError):
    """Something the user can act on: the message says what and how."""


@dataclass
class Shape:
    """The WAN between primary and standby. Units: seconds, bits/s (0: no limit), bytes."""

    rtt_seconds: float = 0.020
    jitter_seconds: float = 0.0
    loss_ratio: float = 0.0
    rate_bits_per_second: int = 1_000_000_000
    mtu_bytes: int = 1500
    queue_bytes: int | None = None  # the bottleneck's buffer; None: 1 ms at the rate (see queue())

    def check(self) -> Shape:
        if not 0 <= self.rtt_seconds <= MAX_RTT_SECONDS:
            raise LabError(f"--rtt {format_duration(self.rtt_seconds)}: give 0 to 2 s")
        if not 0 <= self.jitter_seconds <= self.rtt_seconds:
            raise LabError(
                f"--jitter {format_duration(self.jitter_seconds)}: give at most the RTT "
                f"({format_duration(self.rtt_seconds)}); each way is half the RTT plus or minus half the jitter"
            )
        if not 0 <= self.loss_ratio <= 0.5:
            raise LabError(f"--loss {self.loss_ratio * 100:g} %: give 0 % to 50 %")
        if self.rate_bits_per_second < 0 or 0 < self.rate_bits_per_second < 64_000:
            raise LabError(
                f"--rate {format_bit_rate(self.rate_bits_per_second)}: give at least 64 kbit/s, or 0 for none"
            )
        if not MIN_MTU <= self.mtu_bytes <= MAX_MTU:
            raise LabError(f"--mtu {self.mtu_bytes}: give {MIN_MTU} to {MAX_MTU} bytes")
        if self.queue_bytes is not None and self.queue_bytes < 2 * self.mtu_bytes:
            raise LabError(f"--queue {format_bytes(self.queue_bytes)}: give at least two packets (2 x MTU)")
        return self

    def queue(self) -> int:
        """The bottleneck buffer in bytes: as given, else 1 ms at the rate (at least two packets).
        A shallow buffer keeps the RTT at its setting under full load; seed 000's knee needs the
        window, not a queue."""
        if self.queue_bytes is not None:
            return self.queue_bytes
        return max(self.rate_bits_per_second // 8 // 1000, 2 * self.mtu_bytes)

    def params_line(self) -> str:
        """The delay line's parameter file: rtt_us jitter_us loss_ppm rate_bps queue_bytes."""
        return (
            f"{round(self.rtt_seconds * 1e6)} {round(self.jitter_seconds * 1e6)} {round(self.loss_ratio * 1e6)} "
            f"{self.rate_bits_per_second} {self.queue() if self.rate_bits_per_second else 0}\n"
        )

    def describe(self) -> str:
        rate = format_bit_rate(self.rate_bits_per_second) if self.rate_bits_per_second else "no rate limit"
        jitter = f" ± {format_duration(self.jitter_seconds)}" if self.jitter_seconds else ""
        loss = f", {self.loss_ratio * 100:g} % loss" if self.loss_ratio else ""
        return f"RTT {format_duration(self.rtt_seconds)}{jitter}, {rate}, MTU {self.mtu_bytes} bytes{loss}"


@dataclass
class LabDestination:
    """A destination besides the first: one standby-side host with its own RTT to the primary side.
    Units: seconds."""

    name: str
    rtt_seconds: float
    kind: str = "standby"  # standby | far_sync

    @property
    def option(self) -> str:
        """How --destination gives it, for messages."""
        kind = f":{self.kind}" if self.kind != "standby" else ""
        return f"--destination {self.name}={format_duration(self.rtt_seconds)}{kind}"


def parse_destination(text: str) -> LabDestination:
    """`NAME=RTT[:KIND]` as --destination takes it ("remote=40ms", "farsync=2ms:far_sync"); checked
    whole by check_destinations."""
    name, equals, rest = text.partition("=")
    rtt_text, _, kind = rest.partition(":")
    if not equals or not name.strip() or not rtt_text.strip():
        raise LabError(f"--destination '{text}': give NAME=RTT[:KIND], e.g. remote=40ms or farsync=2ms:far_sync")
    try:
        rtt = parse_duration(rtt_text.strip())
    except UnitError as error:
        raise LabError(f"--destination '{text}': {error}") from None
    return LabDestination(name=name.strip(), rtt_seconds=rtt, kind=kind.strip() or "standby")


def check_destinations(destinations: list[LabDestination], shape: Shape) -> None:
    """Names unique and usable, at most MAX_DESTINATIONS, RTT 0-2 s, a known kind, and the jitter
    at most each path's RTT (each way is half the RTT plus or minus half the jitter)."""
    if len(destinations) > MAX_DESTINATIONS:
        raise LabError(f"--destination given {len(destinations)} times: the lab has at most {MAX_DESTINATIONS} extra")
    seen: set[str] = set()
    for destination in destinations:
        option = f"--destination {destination.name}"
        if not _DESTINATION_NAME.fullmatch(destination.name):
            raise LabError(
                f"{option}: give a name of lowercase letters, digits, - or _, starting with a letter, at most 20 "
                "characters (e.g. remote)"
            )
        if destination.name in (FIRST_DESTINATION, "primary"):
            raise LabError(
                f"{option}: '{FIRST_DESTINATION}' is the first destination (--rtt, --standby-nodes) and 'primary' "
                "the primary hosts: pick another name (e.g. remote)"
            )
        if destination.name in seen:
            raise LabError(f"{option}: given twice; each destination needs a name of its own")
        seen.add(destination.name)
        if not 0 <= destination.rtt_seconds <= MAX_RTT_SECONDS:
            raise LabError(f"{destination.option}: give an RTT of 0 to 2 s")
        if destination.kind not in DESTINATION_KINDS:
            raise LabError(f"{option}: kind '{destination.kind}': give {' or '.join(DESTINATION_KINDS)}")
        if shape.jitter_seconds > destination.rtt_seconds:
            raise LabError(
                f"--jitter {format_duration(shape.jitter_seconds)}: give at most every path's RTT "
                f"({destination.option} has {format_duration(destination.rtt_seconds)})"
            )


@dataclass
class LabHost:
    role: str  # primary | standby
    node: int
    namespace: str
    management_address: str
    data_address: str
    bridge_port: str  # the veth end on this machine's bridge
    tun_name: str  # the TUN device's name before it moves into the namespace
    sshd_pid: int | None = None
    destination: str | None = None  # an extra destination's name; None: a primary, or the first destination

    @property
    def name(self) -> str:
        return f"lab-{self.destination or self.role}-{self.node}"

    @property
    def side(self) -> str:
        return "P" if self.role == "primary" else "S"


@dataclass
class Lab:
    shape: Shape
    primary_nodes: int = 1
    standby_nodes: int = 1
    hosts: list[LabHost] = field(default_factory=list)
    delayline_pid: int | None = None
    environment_name: str = "lab"
    destinations: list[LabDestination] = field(default_factory=list)  # besides the first

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Lab:
        return cls(
            shape=Shape(**data["shape"]),
            primary_nodes=data["primary_nodes"],
            standby_nodes=data["standby_nodes"],
            hosts=[LabHost(**host) for host in data["hosts"]],
            delayline_pid=data.get("delayline_pid"),
            environment_name=data.get("environment_name", "lab"),
            destinations=[LabDestination(**d) for d in data.get("destinations", [])],  # absent before them
        )

    def destination_of(self, host: LabHost) -> str | None:
        """The destination a host belongs to (None: a primary)."""
        return None if host.role == "primary" else host.destination or FIRST_DESTINATION

    def rtt_of(self, host: LabHost) -> float | None:
        """The RTT in seconds between the primary side and this standby-side host (None: a primary)."""
        if host.role == "primary":
            return None
        own = next((d.rtt_seconds for d in self.destinations if d.name == host.destination), None)
        return self.shape.rtt_seconds if own is None else own

    def describe(self) -> str:
        """The shape, and each extra destination's RTT (the rate is the primary's uplink, shared)."""
        if not self.destinations:
            return self.shape.describe()
        kinds = {"standby": "", "far_sync": " (far sync)"}
        extra = "; ".join(
            f"{d.name}{kinds.get(d.kind, '')}: RTT {format_duration(d.rtt_seconds)}" for d in self.destinations
        )
        return f"{self.shape.describe()}; {extra}; the rate is one uplink every destination shares"


def _host(role: str, node: int, number: int, short: str, destination: str | None = None) -> LabHost:
    """A host at .`number` on both networks; `short` makes its device names (at most 15 characters)."""
    return LabHost(
        role=role,
        node=node,
        namespace=f"{NAMESPACE_PREFIX}{destination or role}-{node}",
        management_address=f"{MANAGEMENT_PREFIX}.{number}",
        data_address=f"{DATA_PREFIX}.{number}",
        bridge_port=f"rlab-{short}",
        tun_name=f"rlabd-{short}",
        destination=destination,
    )


def plan_lab(
    shape: Shape,
    primary_nodes: int = 1,
    standby_nodes: int = 1,
    environment_name: str = "lab",
    destinations: list[LabDestination] | None = None,
) -> Lab:
    for option, count in (("--primary-nodes", primary_nodes), ("--standby-nodes", standby_nodes)):
        if not 1 <= count <= MAX_NODES:
            raise LabError(f"{option} {count}: give 1 to {MAX_NODES}")
    destinations = list(destinations or [])
    shape.check()
    check_destinations(destinations, shape)
    hosts = []
    for role, count, base in (("primary", primary_nodes, 10), ("standby", standby_nodes, 40)):
        hosts += [_host(role, node, base + node, f"{role[0]}{node}") for node in range(1, count + 1)]
    for index, destination in enumerate(destinations, start=1):
        hosts.append(_host("standby", 1, 70 + index, f"x{index}", destination.name))
    return Lab(shape, primary_nodes, standby_nodes, hosts, environment_name=environment_name, destinations=destinations)
