"""Level 5: figures, pure functions from stored data to plotly figure JSON (no I/O). Imports core and
redo (the stored chart data); only pages (web/) draw them."""

import html
import json
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


def figure_json(figure) -> str:
    """The figure as the JSON the page's plotly.js draws, its text escaped, with the plotly_white theme."""
    return document_json(json.loads(figure.to_json()))


def document_json(document: dict) -> str:
    """A figure written as plain data (JSON types only; plotly's own checks skipped, for figures drawn on
    every refresh of a busy page), escaped and themed as figure_json does."""
    document = as_text(document)
    document["layout"]["template"] = _theme()
    return json.dumps(document, separators=(",", ":"))
