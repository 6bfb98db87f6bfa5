"""The destinations as a diagram (pure, inline SVG, so the printed report draws it too): the primary on
the left, each destination one column further right than what feeds it, and each hop an arrow with
its transport, its round trip and its verdict's badge. Each shared link is drawn with its verdict: a
numbered mark in the verdict's colour on the box every hop crossing it delivers into (its top edge, clear
of the arrows' labels), and a line under the diagram with that number, what its copies need, what it
carries and its badge (a shared uplink can fail while each hop passes)."""

from __future__ import annotations

from markupsafe import Markup, escape

from redolab.core.units import format_byte_rate, format_byte_rate_in_mbit, format_count, format_duration
from redolab.planning.topology import SharedLinkVerdict, Topology

COLUMN, ROW, BOX_W, BOX_H, MARGIN = 210, 70, 150, 40, 10
LANE, MARK_R = 22, 8  # a shared link's line under the diagram; the radius of its mark on a hop's box
COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "missing": "#8a6d00", "warn": "#b35c00", "info": "#1f5fa8"}
KIND_LABELS = {"standby": "standby", "far_sync": "far sync", "cascaded": "cascaded standby"}


def _depths(topology: Topology) -> dict[int, int]:
    """Each destination's column: 1 when the primary feeds it, one more than its source's (a cycle or
    an unknown source puts it in column 1: the topology's problems name it)."""
    feeds = {v.hop.id: v.hop.feeds_from for v in topology.hops}
    depths: dict[int, int] = {}
    for hop in feeds:
        depth, node, seen = 1, feeds[hop], {hop}
        while node is not None and node in feeds and node not in seen:
            seen.add(node)
            depth, node = depth + 1, feeds[node]
        depths[hop] = depth if node is None else 1
    return depths


def topology_svg(topology: Topology | None) -> Markup:
    """The diagram; nothing for no destination."""
    if topology is None or not topology.hops:
        return Markup("")
    depths = _depths(topology)
    rows: dict[int, int] = {}
    place: dict[int, tuple[float, float]] = {}
    for verdict in topology.hops:
        column = depths[verdict.hop.id]
        rows[column] = rows.get(column, 0) + 1
        place[verdict.hop.id] = (MARGIN + column * COLUMN, MARGIN + (rows[column] - 1) * ROW)
    links = topology.shared_links
    height = MARGIN * 2 + max(rows.values()) * ROW - (ROW - BOX_H) + len(links) * LANE
    width = max(MARGIN * 2 + (max(depths.values()) + 1) * COLUMN - (COLUMN - BOX_W), 640 * bool(links))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="{escape(_described(topology))}" class="topology-svg" id="topology-diagram">',
        '<defs><marker id="topology-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
        _box(MARGIN, MARGIN, "primary", "", "primary"),
    ]
    for verdict in topology.hops:
        x, y = place[verdict.hop.id]
        source = place.get(verdict.hop.feeds_from, (MARGIN, MARGIN)) if verdict.hop.feeds_from else (MARGIN, MARGIN)
        parts.append(_arrow(source, (x, y), verdict))
        parts.append(_box(x, y, verdict.name, KIND_LABELS.get(verdict.hop.kind, verdict.hop.kind), "destination"))
    lanes_top, marked = height - MARGIN - len(links) * LANE, {}
    for number, link in enumerate(links, start=1):
        parts.append(_shared_link(number, link, place, marked, lanes_top + (number - 1) * LANE))
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704  (numbers formatted here; every text is escaped)


def _box(x: float, y: float, name: str, kind: str, css: str) -> str:
    label = f'<text x="{x + BOX_W / 2}" y="{y + 17}" text-anchor="middle" font-size="12">{escape(name[:24])}</text>'
    if kind:
        label += f'<text x="{x + BOX_W / 2}" y="{y + 32}" text-anchor="middle" font-size="10">{escape(kind)}</text>'
    return (
        f'<g class="topology-{css}"><rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="#f6f8fa" '
        f'stroke="#555"/>{label}</g>'
    )


def _arrow(start: tuple[float, float], end: tuple[float, float], verdict) -> str:
    x1, y1 = start[0] + BOX_W, start[1] + BOX_H / 2
    x2, y2 = end[0], end[1] + BOX_H / 2
    colour = COLOURS.get(verdict.status, "#555")
    rtt = f", {format_duration(verdict.hop.rtt_seconds)}" if verdict.hop.rtt_seconds is not None else ""
    mid_x, mid_y = (x1 + x2) / 2, (y1 + y2) / 2
    return (
        f'<g class="topology-hop" data-status="{escape(verdict.status)}">'
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" stroke-width="2" '
        'marker-end="url(#topology-arrow)"/>'
        f'<text x="{mid_x}" y="{mid_y - 5}" text-anchor="middle" font-size="10">{escape(verdict.hop.transport + rtt)}'
        f'</text><text x="{mid_x}" y="{mid_y + 12}" text-anchor="middle" font-size="10" font-weight="bold" '
        f'fill="{colour}">{escape(verdict.status.upper())}</text></g>'
    )


def _shared_link(number: int, verdict: SharedLinkVerdict, place: dict, marked: dict, top: float) -> str:
    """A shared link: its numbered mark on the top edge of each box a hop crossing it delivers into (`place`:
    each box's corner; `marked`: the marks each box has already, so the next sits left of them) and its
    line under the diagram, in its verdict's colour."""
    colour = COLOURS.get(verdict.status, "#555")
    marks = []
    for hop in verdict.hops:
        x, y = place[hop.hop.id]
        nth = marked[hop.hop.id] = marked.get(hop.hop.id, 0) + 1
        marks.append(_mark(x + BOX_W - MARK_R - 4 - (nth - 1) * (2 * MARK_R + 2), y, number, colour))
    copies = len(verdict.hops)
    needs = verdict.required_bytes_per_second
    said = f"{copies} cop{'y' if copies == 1 else 'ies'}"
    said += f", needs {format_byte_rate(needs)}" if needs is not None else ""
    capacity = verdict.capacity_bytes_per_second
    if capacity is not None:
        said += f", carries {format_byte_rate(capacity)} ({format_byte_rate_in_mbit(capacity)}, {verdict.basis})"
    y = top + LANE / 2
    return (
        f'<g class="topology-shared-link" data-status="{escape(verdict.status)}" '
        f'data-shared-link="{verdict.link.id}">{"".join(marks)}{_mark(MARGIN + MARK_R, y, number, colour)}'
        f'<text x="{MARGIN + 2 * MARK_R + 6}" y="{y + 4}" font-size="11">shared link {escape(verdict.name[:40])}: '
        f'{escape(said)}: <tspan font-weight="bold" fill="{colour}">{escape(verdict.status.upper())}</tspan>'
        "</text></g>"
    )


def _mark(x: float, y: float, number: int, colour: str) -> str:
    return (
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{MARK_R}" fill="{colour}"/><text x="{x:.1f}" y="{y + 4:.1f}" '
        f'text-anchor="middle" font-size="10" font-weight="bold" fill="#fff">{number}</text>'
    )


def _described(topology: Topology) -> str:
    """The diagram in words, for a screen reader."""
    hops = "; ".join(f"{v.path}: {v.hop.transport}, {v.status.upper()}" for v in topology.hops)
    links = "".join(
        f"; shared link {v.name} ({', '.join(v.hop_names)}): {v.status.upper()}" for v in topology.shared_links
    )
    return f"Redo from the primary to {format_count(len(topology.hops), 'destination')}: {hops}{links}"
