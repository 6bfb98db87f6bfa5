"""Text into plotly (issue 33): plotly.js reads names, labels, categories, annotations and hover
text as pseudo-HTML, so every string a user typed reaches the figure JSON escaped; the hover
templates, which are ours, keep their markup."""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from redolab.charts import as_text
from redolab.charts.sweeps import buffer_figure, connections_figure, over_time_figure, runs_figure
from tests.factories import make_measured_run
from tests.web.test_runs import local_env

LABEL = '<a href="x">y</a>'
ESCAPED = '&lt;a href="x"&gt;y&lt;/a&gt;'


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key not in ("hovertemplate", "template"):
                yield from _strings(value)


def _series(name: str) -> dict:
    points = [{"x": x, "median": 1e6 * x, "low": 1e6 * x, "high": 1e6 * x, "rates": [1e6 * x]} for x in (1, 2)]
    return {"name": name, "points": points}


def test_a_label_reaches_every_figure_escaped():
    figures = [
        runs_figure([f"#1 {LABEL}", "#2 <b>bold</b>"], [1e6, None]),
        connections_figure([_series(LABEL)], plateau=2, required_bytes_per_second=1e6),
        buffer_figure([_series(LABEL)], axis_title=f"socket buffer {LABEL}"),
        over_time_figure([datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)], [1e6, 2e6], name=LABEL),
    ]
    for figure in figures:
        document = json.loads(figure)
        texts = list(_strings(document))
        assert any(ESCAPED in text for text in texts)
        assert not any("<" in text or ">" in text for text in texts), [t for t in texts if "<" in t]
        hover = [trace.get("hovertemplate", "") for trace in document["data"]]
        assert any("<extra>" in template for template in hover)  # our own markup is kept


def test_the_compare_page_draws_a_run_label_as_text(browser_client, session):
    environment, primary, standby = local_env(session)
    runs = [make_measured_run(session, environment.id, primary, standby, label=LABEL) for _ in range(2)]
    page = browser_client.get(f"/compare?run={runs[0].id}&run={runs[1].id}")
    assert page.status_code == 200, page.text
    figure = json.loads(html.unescape(page.text.split("data-figure='")[1].split("'")[0]))
    assert figure["data"][0]["x"] == [f"#{runs[0].id} {ESCAPED}", f"#{runs[1].id} {ESCAPED}"]
    assert LABEL not in html.unescape(page.text.split("data-figure='")[1].split("'")[0])


@given(st.text())
def test_escaped_text_reads_back_as_the_same_text(text):
    """Escaping is lossless: plotly shows &lt; &gt; &amp; as < > &, so the text drawn is the text typed."""
    escaped = as_text({"name": text, "hovertemplate": text})
    assert html.unescape(escaped["name"]) == text and "<" not in escaped["name"]
    assert escaped["hovertemplate"] == text
