"""Copy plotly.js from the plotly Python package into the static files: a build step (make assets,
the Dockerfile), so the browser gets the plotly.js that matches the figures plotly.py writes.

python scripts/vendor_plotly.py frontend/static/vendor
"""

from __future__ import annotations

import shutil
import sys
from importlib.resources import files
from pathlib import Path


def install_plotly_js(target: Path) -> Path:
    source = files("plotly") / "package_data" / "plotly.min.js"
    target.mkdir(parents=True, exist_ok=True)
    destination = target / "plotly.min.js"
    with source.open("rb") as reader, open(destination, "wb") as writer:
        shutil.copyfileobj(reader, writer)
    return destination


if __name__ == "__main__":
    print(
        f"plotly.js copied to {install_plotly_js(Path(sys.argv[1] if len(sys.argv) > 1 else 'frontend/static/vendor'))}"
    )
