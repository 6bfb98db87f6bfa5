"""Static files: content-hashed names cached for a year, gzip when asked, plotly.js only where charts are."""

import gzip
import re
import time

from redolab.core.static import IMMUTABLE, REVALIDATE, Assets
from redolab.core.templating import FRONTEND_DIR
from tests.factories import make_environment


def test_a_hashed_name_follows_the_content(tmp_path):
    root = tmp_path / "static"
    root.mkdir()
    (root / "app.css").write_text("body { color: red; }")
    assets = Assets(root, tmp_path / "cache")
    first = assets.url("app.css")
    assert re.fullmatch(r"/static/app\.[0-9a-f]{12}\.css", first)
    assert assets.resolve(first.removeprefix("/static/")) == "app.css"
    (root / "app.css").write_text("body { color: blue; } /* changed */")
    second = assets.url("app.css")
    assert second != first
    assert assets.resolve(first.removeprefix("/static/")) is None  # an old hash is not served as new content
    assert assets.url("missing.js") == "/static/missing.js"
    assert assets.resolve("../secret.aaaaaaaaaaaa.txt") is None
    assert gzip.decompress(assets.gzipped("app.css", wait=True).read_bytes()) == (root / "app.css").read_bytes()


def test_pages_link_hashed_assets_served_compressed_with_long_lifetimes(browser_client, anonymous):
    page = browser_client.get("/environments")
    css = re.search(r'href="(/static/app\.[0-9a-f]{12}\.css)"', page.text)[1]
    htmx = re.search(r'src="(/static/vendor/htmx\.min\.[0-9a-f]{12}\.js)"', page.text)[1]
    assert "plotly" not in page.text  # no chart on this page, so no 4.8 MB download

    # Compressed copies are made in the background (no request waits for gzip): at most a few tries.
    for _ in range(50):
        response = anonymous.get(htmx, headers={"Accept-Encoding": "gzip"})
        if response.headers.get("content-encoding") == "gzip":
            break
        time.sleep(0.1)
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["cache-control"] == IMMUTABLE
    assert int(response.headers["content-length"]) < len(response.content)  # what was sent was smaller
    assert response.content == (FRONTEND_DIR / "static" / "vendor" / "htmx.min.js").read_bytes()

    plain = anonymous.get(css, headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    assert plain.headers["cache-control"] == IMMUTABLE and "text/css" in plain.headers["content-type"]

    unhashed = anonymous.get("/static/app.css")
    assert unhashed.status_code == 200 and unhashed.headers["cache-control"] == REVALIDATE
    assert anonymous.get("/static/app.000000000000.css").status_code == 404


def test_plotly_is_loaded_on_pages_with_charts(browser_client, session):
    environment = make_environment(session)
    page = browser_client.get(f"/environments/{environment.id}")
    assert re.search(r'src="/static/vendor/plotly\.min\.[0-9a-f]{12}\.js"', page.text)
