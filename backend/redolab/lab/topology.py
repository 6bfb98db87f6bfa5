"""The lab's shape: which namespaces, devices and addresses a lab of N primary and M standby nodes
has, and the delay line's parameters. Pure: nothing here touches the machine.

Addresses: management 10.78.0.0/24 (this machine is 10.78.0.1 on a bridge; SSH goes there), data
10.77.0.0/24 (through the delay line). Primary node n is .10+n on both, standby node n .40+n.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from redolab.core.units import format_bit_rate, format_bytes, format_duration

MAX_NODES = 8
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
        if not 0 <= self.rtt_seconds <= 2:
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
class LabHost:
    role: str  # primary | standby
    node: int
    namespace: str
    management_address: str
    data_address: str
    bridge_port: str  # the veth end on this machine's bridge
    tun_name: str  # the TUN device's name before it moves into the namespace
    sshd_pid: int | None = None

    @property
    def name(self) -> str:
        return f"lab-{self.role}-{self.node}"

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
        )


def plan_lab(shape: Shape, primary_nodes: int = 1, standby_nodes: int = 1, environment_name: str = "lab") -> Lab:
    for option, count in (("--primary-nodes", primary_nodes), ("--standby-nodes", standby_nodes)):
        if not 1 <= count <= MAX_NODES:
            raise LabError(f"{option} {count}: give 1 to {MAX_NODES}")
    hosts = []
    for role, count, base in (("primary", primary_nodes, 10), ("standby", standby_nodes, 40)):
        for node in range(1, count + 1):
            short = f"{role[0]}{node}"
            hosts.append(
                LabHost(
                    role=role,
                    node=node,
                    namespace=f"{NAMESPACE_PREFIX}{role}-{node}",
                    management_address=f"{MANAGEMENT_PREFIX}.{base + node}",
                    data_address=f"{DATA_PREFIX}.{base + node}",
                    bridge_port=f"rlab-{short}",
                    tun_name=f"rlabd-{short}",
                )
            )
    return Lab(shape.check(), primary_nodes, standby_nodes, hosts, environment_name=environment_name)
