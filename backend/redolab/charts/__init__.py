"""Figures: pure functions from stored data to plotly figure JSON (no I/O)."""

# One look for every figure; a figure overrides what it must (height, legend position).
LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 30, "b": 45},
    "height": 320,
    "template": "plotly_white",
    "legend": {"orientation": "h", "y": -0.25},
}
