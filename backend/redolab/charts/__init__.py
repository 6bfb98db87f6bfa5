"""Level 5: figures, pure functions from stored data to plotly figure JSON (no I/O). Imports core and
redo (the stored chart data); only pages (web/) draw them."""

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


def figure_json(figure) -> str:
    """The figure as the JSON the page's plotly.js draws, with the plotly_white theme."""
    document = json.loads(figure.to_json())
    document["layout"]["template"] = _theme()
    return json.dumps(document, separators=(",", ":"))
