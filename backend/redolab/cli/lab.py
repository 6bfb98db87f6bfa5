"""`redolab lab`: the WAN lab, primary and standby hosts in network namespaces (root)."""

from __future__ import annotations

import typer

from redolab.cli.database import database_session
from redolab.cli.output import emit, fail, parse_option
from redolab.core.config import get_settings

lab_app = typer.Typer(
    help="The WAN lab: primary and standby hosts in network namespaces with a real RTT, rate and MTU (root).",
    no_args_is_help=True,
)


def _lab_paths():
    from redolab.lab.control import Paths

    return Paths(get_settings().data_dir)


def _shape_from_options(base, rtt, jitter, loss, rate, mtu, queue):
    """A Shape from the options given (None: keep `base`'s value)."""
    from dataclasses import replace

    from redolab.core.units import parse_bit_rate, parse_duration, parse_percent, parse_size

    changes = {}
    if rtt is not None:
        changes["rtt_seconds"] = parse_option(parse_duration, rtt, "--rtt")
    if jitter is not None:
        changes["jitter_seconds"] = parse_option(parse_duration, jitter, "--jitter")
    if loss is not None:
        changes["loss_ratio"] = parse_option(parse_percent, loss, "--loss")
    if rate is not None:
        changes["rate_bits_per_second"] = int(parse_option(parse_bit_rate, rate, "--rate"))
    if mtu is not None:
        changes["mtu_bytes"] = mtu
    if queue is not None:
        changes["queue_bytes"] = parse_option(parse_size, queue, "--queue")
    return replace(base, **changes)


def _lab_session():
    """A session on the database, upgraded first when REDOLAB_AUTO_MIGRATE is on."""
    return database_session(migrate=get_settings().auto_migrate)


_RTT = typer.Option(None, "--rtt", help="Round-trip time, e.g. 20ms (default 20 ms).")
_JITTER = typer.Option(None, "--jitter", help="RTT varies by up to this much, e.g. 2ms (default 0 ms).")
_LOSS = typer.Option(None, "--loss", help="Random packet loss each way, e.g. 0.1% (default 0 %).")
_RATE = typer.Option(None, "--rate", help="Link rate each way, e.g. 1Gbit/s; 0 for none (default 1 Gbit/s).")
_MTU = typer.Option(None, "--mtu", help="MTU of the data path in bytes, 1280-9000 (default 1500).")
_QUEUE = typer.Option(None, "--queue", help="Bottleneck buffer, e.g. 256KiB (default 1 ms at the rate).")
_DESTINATION = typer.Option(
    None,
    "--destination",
    metavar="NAME=RTT[:KIND]",
    help="One more destination: NAME=RTT[:KIND], e.g. remote=40ms or farsync=2ms:far_sync (KIND standby or "
    "far_sync); a host with its own RTT behind the same rate. Repeat for more (at most 4).",
)


@lab_app.command("up")
def lab_up(
    rtt: str | None = _RTT,
    jitter: str | None = _JITTER,
    loss: str | None = _LOSS,
    rate: str | None = _RATE,
    mtu: int | None = _MTU,
    queue: str | None = _QUEUE,
    primary_nodes: int = typer.Option(1, "--primary-nodes", help="Primary hosts (RAC nodes), 1-8."),
    standby_nodes: int = typer.Option(1, "--standby-nodes", help="Standby hosts (RAC nodes), 1-8."),
    env_name: str = typer.Option("lab", "--env", help="The redolab environment the lab registers as."),
    destination: list[str] | None = _DESTINATION,
) -> None:
    """Build the lab and register it as an environment (hosts, key, pinned host keys, destinations)."""
    from redolab.lab import control
    from redolab.lab.register import register
    from redolab.lab.topology import LabError, Shape, parse_destination, plan_lab

    paths = _lab_paths()
    try:
        destinations = [parse_destination(text) for text in destination or []]
        lab = plan_lab(
            _shape_from_options(Shape(), rtt, jitter, loss, rate, mtu, queue),
            primary_nodes,
            standby_nodes,
            env_name,
            destinations,
        )
        control.up(paths, lab)
    except LabError as error:
        fail(str(error))
    with _lab_session() as session:
        try:
            environment = register(
                session=session, lab=lab, paths=paths, secret_key=get_settings().resolve_secret_key()
            )
            typer.echo(f"lab up: {lab.describe()}; environment '{environment.name}' (#{environment.id})")
        except LabError as error:
            control.down(paths)
            fail(f"{error}; the lab was taken down again")
        except Exception:
            control.down(paths)  # never leave a lab redolab does not know about
            raise
    for host in lab.hosts:
        typer.echo(f"  {host.name}: ssh root@{host.management_address}, data {host.data_address} ({host.namespace})")
    typer.echo("next: open the environment and start a new experiment, or `redolab lab status`")


@lab_app.command("set")
def lab_set(
    rtt: str | None = _RTT,
    jitter: str | None = _JITTER,
    loss: str | None = _LOSS,
    rate: str | None = _RATE,
    mtu: int | None = _MTU,
    queue: str | None = _QUEUE,
) -> None:
    """Change the running lab's RTT, jitter, loss, rate, MTU or queue; the rest stays."""
    from redolab.lab import control
    from redolab.lab.register import update_link
    from redolab.lab.topology import LabError

    paths = _lab_paths()
    try:
        lab = control.running(paths)
        lab = control.change(paths, _shape_from_options(lab.shape, rtt, jitter, loss, rate, mtu, queue))
    except LabError as error:
        fail(str(error))
    with _lab_session() as session:
        update_link(session=session, lab=lab)
    typer.echo(f"lab set: {lab.describe()}")


@lab_app.command("status")
def lab_status(as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys).")) -> None:
    """Is the lab up, with which shape, destinations, hosts, kernel buffer limits and delay-line counters."""
    from redolab.lab import control

    report = control.status(_lab_paths())
    emit(as_json, lambda: report, _status_lines(report))


def _status_lines(report: dict):
    """The text form of `lab status`."""
    from redolab.core.units import format_bytes, format_duration

    if not report["up"]:
        leftovers = report.get("namespaces") or []
        yield "lab: down" + (f" (namespaces left: {', '.join(leftovers)}; `redolab lab down`)" if leftovers else "")
        return
    yield f"lab: up, {report['shape']['description']}, queue {format_bytes(report['shape']['queue_bytes'])}"
    yield f"environment: {report['environment']}"
    for host in report["hosts"]:
        rmem = host.get("tcp_rmem_bytes") or []
        wmem = host.get("tcp_wmem_bytes") or []
        where = "primary" if host["role"] == "primary" else host.get("destination") or "standby"
        if host.get("rtt_seconds") is not None:
            where += f", RTT {format_duration(host['rtt_seconds'])}"
        yield (
            f"  {host['name']} ({where}): ssh {host['ssh_address']} "
            f"({'sshd running' if host['sshd_running'] else 'sshd DOWN'}), "
            f"data {host['data_address']}, tcp_rmem max {format_bytes(rmem[-1]) if rmem else '?'}, "
            f"tcp_wmem max {format_bytes(wmem[-1]) if wmem else '?'}"
        )
    counters = report.get("delayline") or {}
    for direction, numbers in (counters.get("directions") or {}).items():
        yield (
            f"  {direction.replace('_', ' ')}: {numbers['packets']:,} packets, {format_bytes(numbers['bytes'])}, "
            f"{numbers['lost']:,} lost, {numbers['queue_drops']:,} dropped at the bottleneck"
        )


@lab_app.command("down")
def lab_down() -> None:
    """Remove the lab's namespaces, processes and devices (the environment and its runs stay)."""
    from redolab.lab import control
    from redolab.lab.topology import LabError

    try:
        control.require_root()
        removed = control.down(_lab_paths())
    except LabError as error:
        fail(str(error))
    typer.echo("lab down: " + ("removed " + "; ".join(removed) if removed else "nothing was up"))
