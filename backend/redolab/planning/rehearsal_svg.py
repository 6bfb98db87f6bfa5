"""The rehearsal's lag chart as inline SVG for the printed report (pure; no script runs in a PDF):
the measured transport lag over the replay, the model's predicted lag for the same window and the
RPO goal, on one time axis in seconds from the start of the replay."""

from __future__ import annotations

from markupsafe import Markup, escape

from redolab.core.units import format_duration

WIDTH, HEIGHT, LEFT, BOTTOM, TOP, RIGHT = 640, 220, 56, 34, 12, 12
MAX_POINTS = 600


def _thin(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """At most MAX_POINTS, keeping each stretch's largest lag (the peak must stay on the chart)."""
    if len(points) <= MAX_POINTS:
        return points
    step = len(points) / MAX_POINTS
    kept = []
    for i in range(MAX_POINTS):
        chunk = points[int(i * step) : int((i + 1) * step)] or points[-1:]
        kept.append(max(chunk, key=lambda p: p[1]))
    return kept


def lag_svg(
    measured: list[tuple[float, float]], predicted: list[tuple[float, float]] | None, goal_seconds: float | None
) -> Markup:
    """(offset s, lag s) series; an empty measured series gives no chart."""
    if not measured:
        return Markup("")
    measured, predicted = _thin(measured), _thin(predicted or [])
    span = max(p[0] for p in measured + predicted) or 1.0
    top = max([p[1] for p in measured + predicted] + [goal_seconds or 0.0]) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def xy(t: float, lag: float) -> str:
        return f"{LEFT + plot_w * t / span:.1f},{TOP + plot_h * (1 - lag / (top * 1.05)):.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" '
        'aria-label="Transport lag over the replay: measured, predicted by the model, and the RPO goal" '
        'class="rehearsal-svg">',
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_h}" stroke="#555"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#555"/>',
        f'<text x="{LEFT - 4}" y="{TOP + 8}" text-anchor="end" font-size="10">{escape(format_duration(top))}</text>',
        f'<text x="{LEFT - 4}" y="{TOP + plot_h}" text-anchor="end" font-size="10">0 s</text>',
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 18}" text-anchor="end" font-size="10">'
        f"{escape(format_duration(span))} after the start</text>",
        f'<text x="{LEFT}" y="{HEIGHT - 4}" font-size="10">transport lag (s): measured (solid), '
        "model (dashed), RPO goal (dotted)</text>",
    ]
    if goal_seconds is not None:
        y = xy(0, goal_seconds).split(",")[1]
        parts.append(f'<line x1="{LEFT}" y1="{y}" x2="{WIDTH - RIGHT}" y2="{y}" stroke="#b00" stroke-dasharray="2,3"/>')
    if predicted:
        line = " ".join(xy(t, lag) for t, lag in predicted)
        parts.append(f'<polyline points="{line}" fill="none" stroke="#888" stroke-dasharray="6,4"/>')
    line = " ".join(xy(t, lag) for t, lag in measured)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#1f5fa8" stroke-width="1.8"/>')
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704  (numbers formatted here; the only text is escaped)
