"""Db2 HADR settings recommended from what the captures show (pure). Units: seconds, bytes, 4 KiB pages.

Every recommendation starts from the value the pair runs with (db2pd -hadr: HADR_TIMEOUT,
PEER_WINDOW, SOCK_SEND_BUF / SOCK_RECV_BUF requested and granted, STANDBY_RECV_BUF_SIZE) and never
proposes less without saying why. Without captures the fixed rules apply (seed 001, IBM's defaults).
"""

from __future__ import annotations

from dataclasses import dataclass

from redolab.core.units import format_count
from redolab.hadr.pairs import PairView

DEFAULT_TIMEOUT_SECONDS = 120
DEFAULT_PEER_WINDOW_SECONDS = 120
PEER_WINDOW_MODES = ("SYNC", "NEARSYNC")


@dataclass(frozen=True)
class Recommendation:
    setting: str  # HADR_TIMEOUT, HADR_PEER_WINDOW, DB2_HADR_BUF_SIZE, DB2_HADR_SOSNDBUF, DB2_HADR_SORCVBUF
    line: str  # what to run
    value: int | None  # seconds, pages or bytes; None: keep it as it is
    captured: str | None  # what the captures show, with the side
    why: str


def captured_values(views: list[PairView], name: str, unit: str) -> tuple[list, str | None]:
    """Every value of a setting the captures show, and how to say it ('120 s on both sides')."""
    by_side: dict[str, set] = {}
    for view in views:
        for side, values in view.settings.items():
            if values.get(name) is not None:
                by_side.setdefault(side.lower(), set()).add(values[name])
    values = sorted({value for found in by_side.values() for value in found})
    if not values:
        return [], None
    if len(values) == 1:
        sides = " and ".join(sorted(by_side))
        where = "both sides" if len(by_side) == 2 else f"the {sides} side"
        return values, f"{values[0]:,} {unit} on {where}"
    parts = [
        f"{', '.join(f'{v:,}' for v in sorted(found))} {unit} on the {side} side" for side, found in by_side.items()
    ]
    return values, "; ".join(parts)


def timeout(views: list[PairView]) -> Recommendation:
    values, captured = captured_values(views, "hadr_timeout_seconds", "s")
    missed = sum(view.settings.get(side, {}).get("heartbeats_missed") or 0 for view in views for side in view.settings)
    line = "db2 update db cfg for <DBNAME> using HADR_TIMEOUT {}"
    same = "the same on both databases (Db2 refuses to connect a pair whose HADR_TIMEOUT differs)"
    if not values:
        return Recommendation(
            "HADR_TIMEOUT",
            line.format(DEFAULT_TIMEOUT_SECONDS),
            DEFAULT_TIMEOUT_SECONDS,
            None,
            "seconds without a message before the pair is disconnected: long enough for a WAN "
            f"hiccup, {same}; no capture shows the value in use",
        )
    top = max(values)
    missed_said = f"{format_count(missed, 'heartbeat')} {'was' if missed == 1 else 'were'} missed"
    if missed and top < DEFAULT_TIMEOUT_SECONDS:
        return Recommendation(
            "HADR_TIMEOUT",
            line.format(DEFAULT_TIMEOUT_SECONDS),
            DEFAULT_TIMEOUT_SECONDS,
            captured,
            f"raised from {top:,} s: {missed_said}, so the link has pauses; a "
            f"longer timeout rides them out instead of disconnecting; {same}",
        )
    why = f"the value in use ({captured}), kept: {same}"
    if len(values) > 1:
        why = f"the larger of the values in use ({captured}): {same}"
    if missed:
        why += f"; {missed_said}: if the pair disconnects, raise it"
    return Recommendation("HADR_TIMEOUT", line.format(top), top, captured, why)


def peer_window(views: list[PairView], sync_mode: str | None) -> Recommendation:
    values, captured = captured_values(views, "peer_window_seconds", "s")
    line = "db2 update db cfg for <DBNAME> using HADR_PEER_WINDOW {}"
    top = max(values) if values else None
    if sync_mode is not None and sync_mode not in PEER_WINDOW_MODES:
        kept = top if top is not None else 0
        kept_why = f"the value in use ({captured}) is kept" if captured else "0 (none) is enough"
        why = f"applies to SYNC and NEARSYNC only; in {sync_mode or 'this mode'} it has no effect, so {kept_why}"
        return Recommendation("HADR_PEER_WINDOW", line.format(kept), kept, captured, why)
    what = (
        "how long the primary, having lost the standby, keeps waiting for it as if in peer state before "
        "committing alone (no committed transaction is lost in that time; commits wait)"
    )
    if top:
        why = f"the value in use ({captured}), kept: {what}"
        if len(values) > 1:
            why = f"the larger of the values in use ({captured}), on both databases: {what}"
        return Recommendation("HADR_PEER_WINDOW", line.format(top), top, captured, why)
    why = f"{what}; {DEFAULT_PEER_WINDOW_SECONDS} s is a common start"
    if captured:
        why = f"the captures show {captured} (no peer window: the primary commits alone at once); " + why
    return Recommendation(
        "HADR_PEER_WINDOW", line.format(DEFAULT_PEER_WINDOW_SECONDS), DEFAULT_PEER_WINDOW_SECONDS, captured, why
    )


def socket_buffers(views: list[PairView], socket_buffer_bytes: int | None) -> list[Recommendation]:
    """DB2_HADR_SOSNDBUF / SORCVBUF from the bandwidth-delay rule (the plan's socket buffer), never below
    what is set; the granted sizes (Linux grants twice the request) are shown beside."""
    found = []
    for variable, asked, granted, what in (
        ("DB2_HADR_SOSNDBUF", "sock_send_requested_bytes", "sock_send_actual_bytes", "send"),
        ("DB2_HADR_SORCVBUF", "sock_recv_requested_bytes", "sock_recv_actual_bytes", "receive"),
    ):
        requested, requested_text = captured_values(views, asked, "bytes")
        _, granted_text = captured_values(views, granted, "bytes")
        captured = (
            "; ".join(
                part
                for part in (
                    f"requested {requested_text}" if requested_text else "",
                    f"granted {granted_text}" if granted_text else "",
                )
                if part
            )
            or None
        )
        set_to = max(requested) if requested else 0
        if socket_buffer_bytes is None:
            why = f"HADR socket {what} buffer: size it from the plan's bandwidth-delay product"
            found.append(
                Recommendation(variable, f"db2set {variable}=<socket buffer from the plan>", None, captured, why)
            )
        elif set_to > socket_buffer_bytes:
            found.append(
                Recommendation(
                    variable,
                    f"db2set {variable}={set_to}",
                    set_to,
                    captured,
                    f"HADR socket {what} buffer: the value set ({set_to:,} bytes) is above the "
                    f"bandwidth-delay rule's {socket_buffer_bytes:,} bytes: kept",
                )
            )
        else:
            found.append(
                Recommendation(
                    variable,
                    f"db2set {variable}={socket_buffer_bytes}",
                    socket_buffer_bytes,
                    captured,
                    f"HADR socket {what} buffer: the bandwidth-delay rule"
                    + (" (0 requested: not set, the kernel's default is used)" if requested and not set_to else ""),
                )
            )
    return found


def recommendations(
    views: list[PairView], *, sync_mode: str | None, buffer: tuple[int, str] | None, socket_buffer_bytes: int | None
) -> list[Recommendation]:
    """The Db2 HADR settings in the order a DBA applies them."""
    found = socket_buffers(views, socket_buffer_bytes)
    if buffer is not None:
        pages, why = buffer
        _, captured = captured_values(views, "recv_buf_pages", "pages")
        found.append(Recommendation("DB2_HADR_BUF_SIZE", f"db2set DB2_HADR_BUF_SIZE={pages}", pages, captured, why))
    found.append(timeout(views))
    found.append(peer_window(views, sync_mode))
    return found


def captured_sync_mode(views: list[PairView]) -> str | None:
    """The mode the pair runs in, as its primary side reports it."""
    for view in views:
        mode = view.side_value("sync_mode")
        if mode:
            return str(mode)
    return None
