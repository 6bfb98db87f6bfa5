"""`redolab plan`: the planning maths (BDP, TCP window, instantiation time) and an environment's plan."""

from __future__ import annotations

from pathlib import Path

import typer

from redolab.cli.database import environment_named
from redolab.cli.output import emit, fail, parse_option
from redolab.core.sources import MAA_TRANSPORT_PAPER, ORACLE_NETWORK_NOTE
from redolab.core.units import format_count
from redolab.planning.network import SOCKET_BUFFER_RULE

plan_app = typer.Typer(
    help="Planning maths: BDP, TCP window, instantiation time, and an environment's plan.", no_args_is_help=True
)


@plan_app.command(
    "bdp",
    help=f"Bandwidth-delay product and the recommended socket buffers ({SOCKET_BUFFER_RULE}, {MAA_TRANSPORT_PAPER}).",
)
def plan_bdp(
    bandwidth: str = typer.Option(..., "--bandwidth", help="Link rate, e.g. 1Gbit/s or 10 Gbit/s."),
    rtt: str = typer.Option(..., "--rtt", help="Round-trip time, e.g. 25ms."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys)."),
) -> None:
    from redolab.core.units import format_bytes, parse_bit_rate, parse_duration
    from redolab.planning.network import bandwidth_delay

    bits = parse_option(parse_bit_rate, bandwidth, "--bandwidth")
    seconds = parse_option(parse_duration, rtt, "--rtt")
    try:
        result = bandwidth_delay(bandwidth_bits_per_second=bits, rtt_seconds=seconds)
    except ValueError as error:
        fail(str(error))
    emit(
        as_json,
        lambda: {
            "bandwidth_bits_per_second": bits,
            "rtt_seconds": seconds,
            "bdp_bytes": result.bdp_bytes,
            "socket_buffer_bytes": result.socket_buffer_bytes,
        },
        (
            f"bandwidth-delay product: {result.bdp_bytes:,} bytes ({format_bytes(result.bdp_bytes)})",
            f"socket buffers ({SOCKET_BUFFER_RULE}): {result.socket_buffer_bytes:,} bytes "
            f"({format_bytes(result.socket_buffer_bytes)})",
        ),
    )


@plan_app.command("window")
def plan_window(
    send_rate: str = typer.Option(..., "--send-rate", help="Measured send rate, e.g. 2.02MiB/s (MB/s means MiB/s)."),
    rtt: str = typer.Option(..., "--rtt", help="Round-trip time, e.g. 27.7ms."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys)."),
) -> None:
    """TCP window = send rate x round-trip time (seed 001)."""
    from redolab.core.units import parse_byte_rate, parse_duration
    from redolab.planning.network import tcp_window_bytes

    rate = parse_option(parse_byte_rate, send_rate, "--send-rate")
    seconds = parse_option(parse_duration, rtt, "--rtt")
    try:
        window = tcp_window_bytes(send_bytes_per_second=rate, rtt_seconds=seconds)
    except ValueError as error:
        fail(str(error))
    emit(
        as_json,
        lambda: {"send_bytes_per_second": rate, "rtt_seconds": seconds, "window_bytes": window},
        (f"TCP window: {window:,} bytes",),
    )


@plan_app.command("instantiation")
def plan_instantiation(
    db_size: str = typer.Option(..., "--db-size", help="Database size, e.g. 100TiB (TB means TiB)."),
    throughput: str = typer.Option(..., "--throughput", help="Aggregate throughput of one node pair, e.g. 300MiB/s."),
    nodes: int = typer.Option(1, "--nodes", min=1, help="Node pairs copying in parallel."),
    overhead: float = typer.Option(
        30.0, "--overhead", min=0, max=1000, help=f"Apply overhead, percent ({ORACLE_NETWORK_NOTE}: ~30)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys)."),
) -> None:
    """Instantiation time = size / (throughput per node pair x pairs), plus the apply overhead (seed 000)."""
    from redolab.core.units import format_duration, parse_byte_rate, parse_size
    from redolab.planning.instantiation import instantiation_estimate

    size = parse_option(parse_size, db_size, "--db-size")
    rate = parse_option(parse_byte_rate, throughput, "--throughput")
    try:
        result = instantiation_estimate(
            database_bytes=size, throughput_per_pair_bytes_per_second=rate, node_pairs=nodes, overhead_percent=overhead
        )
    except ValueError as error:
        fail(str(error))
    emit(
        as_json,
        lambda: {
            "database_bytes": size,
            "throughput_per_pair_bytes_per_second": rate,
            "node_pairs": nodes,
            "overhead_percent": overhead,
            "copy_seconds": result.copy_seconds,
            "copy_hours": result.copy_seconds / 3600,
            "total_seconds": result.total_seconds,
            "total_hours": result.total_hours,
        },
        (
            f"copy: {format_duration(result.copy_seconds)}",
            f"with {overhead:g} % apply overhead: {format_duration(result.total_seconds)}",
        ),
    )


@plan_app.command("compressibility")
def plan_compressibility(
    files: list[Path] = typer.Argument(..., help="Archived logs (or any files) copied from the primary."),
    level: int = typer.Option(6, "--level", min=1, max=9, help="zlib level (default 6: zlib's own default)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys)."),
) -> None:
    """Redo transport compression measured on archived logs: per file, the zlib and LZ4 ratio and the
    CPU seconds per GiB to compress (the primary's shipping process) and decompress (the standby)."""
    from redolab.planning.compressibility import LZ4, ZLIB, measure_file, overall

    samples = []
    for path in files:
        try:
            samples.append(measure_file(path, zlib_level=level))
        except OSError as error:
            fail(f"{path}: {error.strerror or error}")
    totals = [figures for codec in (ZLIB, LZ4) if (figures := overall(samples, codec))]
    emit(
        as_json,
        lambda: {"samples": [s.to_json() for s in samples], "overall": [t.to_json() for t in totals]},
        _compressibility_lines(samples, totals),
    )


def _compressibility_lines(samples, totals):
    """One block per file, then every file together (weighted by size)."""
    from redolab.core.units import format_bytes

    for sample in samples:
        yield f"{sample.name}: {format_bytes(sample.size_bytes)} ({sample.size_bytes:,} bytes)"
        yield from (f"   {line}" for line in _codec_lines(sample.codecs))
    if len(samples) > 1:
        yield f"all {len(samples):,} files together:"
        yield from (f"   {line}" for line in _codec_lines(totals))
    yield "CPU seconds are this machine's cores': the primary's (compress) and the standby's (decompress) may differ."


def _codec_lines(codecs):
    from redolab.core.units import format_byte_rate, format_bytes
    from redolab.planning.compressibility import cpu_capped_rate

    for c in codecs:
        ratio = f"{c.ratio:,.2f} : 1" if c.ratio else "–"
        cap = cpu_capped_rate(c.compress_seconds_per_gib)
        yield (
            f"{c.label}: ratio {ratio}, {format_bytes(c.compressed_bytes)} ({c.compressed_bytes:,} bytes) on the wire; "
            f"compress {_per_gib(c.compress_seconds_per_gib)}, decompress {_per_gib(c.decompress_seconds_per_gib)}; "
            f"one core compresses at most {format_byte_rate(cap) if cap else '– (too fast to time)'}"
        )


def _per_gib(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds:,.2f} CPU s/GiB"


@plan_app.command("show")
def plan_show(
    env: str = typer.Option(..., "--env", help="Environment name."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON (units in the keys)."),
    imports: list[int] = typer.Option(
        [], "--import", help="Use only these redo imports (repeat); default: every import."
    ),
    runs: list[int] = typer.Option(
        [],
        "--run",
        help="Use only these runs (repeat; a loopback run only when named); default: every run over the link.",
    ),
    exclude_tags: list[str] = typer.Option(
        [], "--exclude-tag", help="Leave out runs with this tag (repeat); runs tagged load always are."
    ),
    pdf: Path | None = typer.Option(None, "--pdf", help="Also write the plan report as PDF to this file."),
    author: str = typer.Option("redolab CLI", "--author", help="The author named on the PDF report."),
) -> None:
    """The environment's plan: verdicts, estimate, lag replay, commit impact, risks and settings."""
    from redolab.planning.report import ReportError, plan_report, render_pdf, report_html
    from redolab.planning.service import Selection

    selection = Selection.parse(chosen=False, imports=imports, runs=runs, exclude_tags=exclude_tags)
    with environment_named(env) as (session, environment):
        report = plan_report(session=session, environment=environment, selection=selection, author=author)
        html = report_html(report) if pdf else None
    if pdf:
        try:
            pdf.write_bytes(render_pdf(html))
        except (ReportError, OSError) as error:
            fail(f"--pdf {pdf}: {error}")
    emit(as_json, report.to_json, _plan_lines(report.plan, pdf))


def _plan_lines(plan, pdf: Path | None):
    """The text form of `plan show`: evidence, requirement, each card, the risks and the settings."""
    if pdf:
        yield f"report written to {pdf}"
    yield from _requirement_lines(plan)
    for card in plan.cards:
        yield f"== {card.title} [{card.badge}]"
        if card.headline:
            yield f"   {card.headline}"
        for label, value in card.rows:
            yield f"   {label}: {value}"
        for item in card.missing:
            yield f"   missing: {item}"
        for line in card.working:
            yield f"   ({line})"
    yield "== Risks"
    for risk in plan.risks or ["none found in the data so far"]:
        yield f"   - {risk}"
    for snippet in plan.snippets:
        yield f"== {snippet.title} -> {snippet.target}"
        yield snippet.text


def _requirement_lines(plan):
    """The evidence and what the link must carry, each figure with its basis."""
    from redolab.core.units import format_byte_rate

    yield "== Evidence"
    for item in plan.evidence or []:
        yield f"   [{'x' if item.chosen else ' '}] {item.label}, {item.when}: {item.note}"
    if not plan.evidence:
        yield "   none yet: import redo history and run (or import) tests"
    req = plan.requirement
    if req is None:
        return
    yield f"== What the link must carry (peak + {req.headroom_ratio * 100:g} %)"
    for need in sorted(req.threads.values(), key=lambda t: t.thread):
        yield (
            f"   thread {need.thread}: {format_byte_rate(need.required_bytes_per_second)} "
            f"(peak {format_byte_rate(need.peak_bytes_per_second)}; {plan.describe(need.basis)})"
        )
    yield (
        f"   all threads: {format_byte_rate(req.summed_required_bytes_per_second)} "
        f"(peak {format_byte_rate(req.summed_peak_bytes_per_second)}; {req.summed_how})"
    )
    for window in req.windows:
        figure = format_byte_rate(window.bytes_per_second) if window.bytes_per_second is not None else window.reason
        yield f"   highest {window.minutes}-minute average: {figure}"


@plan_app.command("rpo")
def plan_rpo(
    env: str = typer.Option(..., "--env", help="Environment name."),
    rpo: str | None = typer.Option(None, "--rpo", help="RPO, e.g. 30s (default: the environment's RPO goal)."),
    archive_free: str | None = typer.Option(
        None, "--archive-free", help="Free space of the primary's archive destination, e.g. 2TiB (TB means TiB)."
    ),
    outage: str = typer.Option("1h", "--outage", help="Outage length whose catch-up time is shown, e.g. 1h."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys)."),
) -> None:
    """The link for the RPO: the least rate holding it 100 / 99.9 / 99 % of the time, the lag at the link
    judged, the what-if over link tiers and the outage budget, from the stored redo series."""
    from redolab.core.units import parse_duration, parse_size
    from redolab.planning.service import environment_rpo_sizing

    goal = parse_option(parse_duration, rpo, "--rpo") if rpo is not None else None
    if goal is not None and goal <= 0:
        fail("--rpo must be greater than zero")
    free = parse_option(parse_size, archive_free, "--archive-free") if archive_free is not None else None
    outage_seconds = parse_option(parse_duration, outage, "--outage")
    if outage_seconds <= 0:
        fail("--outage must be greater than zero")
    with environment_named(env) as (session, environment):
        sizing, why = environment_rpo_sizing(
            session=session,
            environment=environment,
            rpo_seconds=goal,
            archive_free_bytes=free,
            outage_seconds=outage_seconds,
        )
        zone = environment.time_zone or "UTC"
    if sizing is None:
        fail(why)
    emit(as_json, sizing.to_json, _rpo_lines(sizing, zone))


def _rpo_lines(sizing, zone: str):
    """The text form of `plan rpo`: the card's rows, then one line per tier."""
    from redolab.core.units import format_bit_rate, format_duration
    from redolab.planning.card import show_time
    from redolab.planning.rpo_card import rpo_rows

    for label, value in rpo_rows(sizing, lambda moment: show_time(moment, zone)):
        yield f"{label}: {value}"
    yield f"Tiers ({sizing.efficiency.basis}):"
    for tier in sizing.tiers:
        yield (
            f"   {tier.name} ({format_bit_rate(tier.bits_per_second)}): "
            f"{tier.at.share_of_time_within_rpo * 100:.3f} % within the RPO, worst lag "
            f"{format_duration(tier.at.worst_lag_seconds)}, "
            f"{format_count(tier.days_with_violations, 'day')} with violations"
        )


@plan_app.command("hadr")
def plan_hadr(
    env: str = typer.Option(..., "--env", help="Environment name (a Db2 HADR environment)."),
    as_json: bool = typer.Option(False, "--json", help="Every interval, as JSON (units in the keys)."),
    rows: int = typer.Option(20, "--rows", min=1, help="Intervals to print: those nearest their SYNC limit."),
) -> None:
    """The hadrCalculator view: every interval of the log history against each sync mode's limit with
    the measured network and log disks, and the HADR_SYNCMODE that keeps up."""
    import itertools

    from redolab.hadr.hops import environment_calculators
    from redolab.hadr.service import environment_calculator

    with environment_named(env) as (session, environment):
        calculator, inputs = environment_calculator(session=session, environment=environment)
        body, hops = environment_calculators(session=session, environment=environment)
        verdicts = [f"{hop.title}: {hop.verdict} ({hop.inputs.network_basis or 'no network yet'})" for hop in hops]
    lines = _hadr_lines(calculator, inputs, rows)
    emit(as_json, lambda: body, itertools.chain(verdicts, lines) if len(verdicts) > 1 else lines)


def _hadr_lines(calculator, inputs, rows: int):
    """The text form of `plan hadr`: what is missing (exit code 1), or the measured inputs, the advice,
    and the `rows` intervals nearest their SYNC limit."""
    from redolab.core.units import DB2_PAGE_BYTES, format_byte_rate, format_duration
    from redolab.hadr.calculator import MODES

    if calculator is None:
        yield from (f"missing: {item}" for item in inputs.missing)
        raise typer.Exit(1)
    c = calculator
    yield (
        f"network: {format_byte_rate(c.network.rate_bytes_per_second)}, RTT "
        f"{format_duration(c.network.rtt_seconds)} ({inputs.network_basis})"
    )
    for name, disk, basis in (
        ("primary", c.primary, inputs.primary_basis),
        ("standby", c.standby, inputs.standby_basis),
    ):
        yield (
            f"{name} disk: {format_byte_rate(disk.rate_bytes_per_second)} + "
            f"{format_duration(disk.overhead_seconds, 6)} per write ({basis})"
        )
    mode, why = c.advice()
    yield f"HADR_SYNCMODE {mode}: {why}"
    for name in MODES:
        yield f"  {name}: {c.exceeded[name]:,} of {len(c.rows):,} intervals above its limit"
    worst = sorted(c.rows, key=lambda r: r.rate_bytes_per_second / r.limits["SYNC"], reverse=True)[:rows]
    for row in sorted(worst, key=lambda r: (r.start, r.member)):
        marks = {m: (" " + row.levels[m][1]) if row.levels[m][1] else "" for m in MODES}
        limits = "  ".join(f"{m} {format_byte_rate(row.limits[m])}{marks[m]}" for m in MODES)
        rate = format_byte_rate(row.rate_bytes_per_second)
        yield (
            f"{row.start:%Y-%m-%d %H:%M:%S} UTC member {row.member}: {rate}, "
            f"flush {row.flush_bytes / DB2_PAGE_BYTES:,.1f} pages | {limits}"
        )
