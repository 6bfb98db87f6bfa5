"""Level 5: figures, pure functions from stored data to plotly figure JSON (no I/O). Imports core and
redo (the stored chart data); only pages (web/) draw them."""

import html
import json
from dataclasses import dataclass
from datetime import datetime
from functools import cache

import plotly.io as pio

# One look for every figure; a figure overrides what it must (height, legend position). The theme
# (plotly_white) is added to the JSON by figure_json: set through plotly, it is copied and checked
# again for every figure (about 40 ms each).
LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 30, "b": 45},
    "height": 320,
    "template": "none",
    "legend": {"orientation": "h", "y": -0.25},
}


@cache
def _theme() -> dict:
    return pio.templates["plotly_white"].to_plotly_json()


# Templates are ours and carry markup (<extra>); user text reaches them only through the values they
# name (%{x}, %{customdata}, %{fullData.name}), which are escaped with everything else.
_TEMPLATES = frozenset({"hovertemplate", "texttemplate"})


def as_text(node, key: str | None = None):
    """Every string of a figure escaped: plotly.js reads names, labels, categories, annotations and
    hover text as pseudo-HTML (<a href>, <b>, <br>), so a run's label '<a href="x">y</a>' would be
    drawn as a link. Escaped, it is drawn as the text it is (plotly turns &lt; back into <)."""
    if isinstance(node, str):
        return node if key in _TEMPLATES else html.escape(node, quote=False)
    if isinstance(node, list):
        return [as_text(item, key) for item in node]
    if isinstance(node, dict):
        return {name: as_text(value, name) for name, value in node.items()}
    return node


TITLE_LINE_PIXELS = 16  # one line of the title block at its 11 px font, with the line's spacing


@dataclass(frozen=True)
class TitleBlock:
    """What a figure shows, of which environment and hosts, over which period and when it was measured,
    drawn inside the figure (plotly's layout title), so a PNG or SVG saved from its toolbar and pasted
    into a change document still says what it is, as flent's plots do. Empty parts are left out."""

    what: str
    environment: str = ""
    hosts: str = ""
    period: str = ""
    measured: str = ""
    loopback: bool = False  # both ends on this machine: the figure measures the probe, not the link

    def lines(self) -> list[str]:
        """The block's lines as plain text (first the what, then where, then when)."""
        where = " · ".join(part for part in (self.environment, self.hosts) if part)
        loopback = "This machine (loopback): the probe, not the link" if self.loopback else ""
        return [line for line in (self.what, where, loopback, self.period, self.measured) if line]

    @property
    def height(self) -> int:
        """The top margin that holds the block, pixels."""
        return 32 + TITLE_LINE_PIXELS * (len(self.lines()) - 1)

    def title(self) -> dict:
        """The layout's title (plotly does not wrap a title: keep lines short). Each line is escaped
        here; the <b>, <br> and <span> around them are ours."""
        first, *rest = [html.escape(line, quote=False) for line in self.lines()]
        text = "<b>" + first + "</b>" + "".join(f'<br><span style="font-size:11px">{line}</span>' for line in rest)
        return {
            "text": text,
            "x": 0,
            "xref": "container",
            "xanchor": "left",
            # above the plot, the top margin grown to hold it (anchored at the figure's top, plotly cut
            # the first line of a block of lines in two)
            "y": 1,
            "yref": "paper",
            "yanchor": "bottom",
            "automargin": True,
            "pad": {"l": 8, "b": 12},
            "font": {"size": 14},
        }


def when(moment: datetime | None, zone: str = "UTC") -> str:
    """A time as a title block writes it: to the minute, with its zone (the caller's clock)."""
    return f"{moment:%Y-%m-%d %H:%M} {zone}" if moment is not None else ""


def span(first: datetime | None, last: datetime | None, zone: str = "UTC") -> str:
    """A period as a title block writes it: the day once when both ends fall on it, to the second
    when it is shorter than an hour (a 12 s run is not 19:50 to 19:50), one time when it is one."""
    if first is None or last is None or first == last:
        return when(first or last, zone)
    if first.date() == last.date():
        clock = "%H:%M:%S" if (last - first).total_seconds() < 3600 else "%H:%M"
        return f"{first:%Y-%m-%d} {first.strftime(clock)}–{last.strftime(clock)} {zone}"
    return f"{first:%Y-%m-%d %H:%M} – {last:%Y-%m-%d %H:%M} {zone}"


def figure_json(figure, title: TitleBlock | None = None) -> str:
    """The figure as the JSON the page's plotly.js draws, its text escaped, with the plotly_white theme
    and, when given, its title block."""
    return document_json(json.loads(figure.to_json()), title)


def document_json(document: dict, title: TitleBlock | None = None) -> str:
    """A figure written as plain data (JSON types only; plotly's own checks skipped, for figures drawn on
    every refresh of a busy page), escaped and themed as figure_json does. The title block is added
    after the escaping (it escapes its own lines): the figure grows by the block's height."""
    document = as_text(document)
    layout = document["layout"]
    layout["template"] = _theme()
    if title is not None:
        layout["title"] = title.title()
        margin = layout.setdefault("margin", {})
        added = max(0, title.height - margin.get("t", 0))
        margin["t"] = margin.get("t", 0) + added
        if "height" in layout:
            layout["height"] += added
    return json.dumps(document, separators=(",", ":"))
