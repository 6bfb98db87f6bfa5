"""The upload preview says what it shows (issue 34.4): one tile per number, "first 8 of 11 rows"
above the sample, a mapping panel of the file's own columns labelled in the exports' words, and
one time range shown the same way, in the database's zone, in the preview and the imports list.

The uploads are V$ARCHIVED_LOG exports as SQL*Plus writes them with SET MARKUP CSV ON (a header
line of the column names, strings and dates quoted, NLS_DATE_FORMAT 'DD-MON-RR HH24:MI:SS'), the
columns as Oracle's reference names them (THREAD#, SEQUENCE#, FIRST_TIME, NEXT_TIME, BLOCKS,
BLOCK_SIZE; the size of a log is BLOCKS * BLOCK_SIZE bytes).
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.core.units import format_byte_rate
from redolab.redo import service
from redolab.redo.ingest.aliases import FIELDS, LABELS
from redolab.redo.previews import SAMPLE_ROWS, read_preview
from tests.factories import make_environment

HEADERS = ["THREAD#", "SEQUENCE#", "FIRST_TIME", "NEXT_TIME", "BLOCKS", "BLOCK_SIZE"]
HTMX = {"HX-Request": "true"}
BLOCK = 512
START = datetime(2022, 1, 15, 8, 0)


def oracle_date(moment: datetime) -> str:
    return moment.strftime("%d-%b-%y %H:%M:%S").upper()  # DD-MON-RR HH24:MI:SS


def archived_log_csv(logs: list[tuple[int, int, datetime, datetime, int]]) -> bytes:
    """SET MARKUP CSV ON output of THREAD#, SEQUENCE#, FIRST_TIME, NEXT_TIME, BLOCKS, BLOCK_SIZE."""
    lines = [",".join(f'"{h}"' for h in HEADERS)]
    for thread, sequence, first, nxt, blocks in logs:
        lines.append(f'{thread},{sequence},"{oracle_date(first)}","{oracle_date(nxt)}",{blocks},{BLOCK}')
    return ("\n".join(lines) + "\n").encode()


def eleven_logs() -> list[tuple[int, int, datetime, datetime, int]]:
    """One thread, a log every 10 minutes from 08:00, the i-th holding (i + 1) * 10 MiB."""
    return [
        (1, 100 + i, START + timedelta(minutes=10 * i), START + timedelta(minutes=10 * (i + 1)), (i + 1) * 20_480)
        for i in range(11)
    ]


class Node:
    def __init__(self, tag: str, attrs: dict, parent: Node | None):
        self.tag, self.attrs, self.parent, self.children, self.parts = tag, attrs, parent, [], []

    def text(self) -> str:
        return " ".join("".join(p if isinstance(p, str) else p.text() for p in self.parts).split())

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def find(self, tag: str | None = None, **attrs) -> list[Node]:
        wanted = attrs.items()
        return [n for n in self.walk() if (tag is None or n.tag == tag) and all(n.attrs.get(k) == v for k, v in wanted)]

    def by_id(self, id_: str) -> Node:
        (node,) = self.find(id=id_)
        return node


class _Tree(HTMLParser):
    VOID = {"input", "br", "meta", "link", "img", "hr", "col", "source"}

    def __init__(self):
        super().__init__()
        self.root = self.current = Node("root", {}, None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v if v is not None else "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        self.current.parts.append(node)
        if tag not in self.VOID:
            self.current = node

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.parts.append(data)


def parse(html: str) -> Node:
    tree = _Tree()
    tree.feed(html)
    return tree.root


def preview(client, environment, name: str, data: bytes):
    response = client.post(
        f"/environments/{environment.id}/redo/preview",
        files={"file": (name, data)},
        data={"format": "auto"},
        headers=HTMX,
    )
    assert response.status_code == 200, response.text
    return response


def test_tiles_are_named_for_their_number(browser_client, session):
    environment = make_environment(session)
    page = parse(preview(browser_client, environment, "arch.csv", archived_log_csv(eleven_logs())).text)
    tiles = {dd.parent.find("dt")[0].text(): dd for dd in page.by_id("redo-preview").find("dd")}
    peak = 110 * 1024 * 1024 / 600  # the largest log, 110 MiB over 10 minutes
    assert tiles["Peak redo rate"].attrs["id"] == "preview-peak"
    assert tiles["Peak redo rate"].text().startswith(format_byte_rate(peak))
    required = tiles["Required (peak + 30 % headroom)"]
    assert required.attrs["id"] == "preview-required"
    assert required.text().startswith(format_byte_rate(peak * 1.3)) and "Mbit/s" in required.text()
    assert not any("=" in label for label in tiles)  # no tile names two numbers and shows one


def test_the_sample_says_how_many_rows_it_shows(browser_client, session):
    environment = make_environment(session)
    page = parse(preview(browser_client, environment, "arch.csv", archived_log_csv(eleven_logs())).text)
    assert page.by_id("preview-sample-count").text() == f"First {SAMPLE_ROWS} of 11 rows counted, in the order read:"
    assert len(page.by_id("preview-sample").find("tbody")[0].find("tr")) == SAMPLE_ROWS
    few = parse(preview(browser_client, environment, "few.csv", archived_log_csv(eleven_logs()[:3])).text)
    assert few.by_id("preview-sample-count").text() == "All 3 rows counted, in the order read:"


def test_the_mapping_offers_only_the_files_columns_in_the_domains_words(browser_client, session):
    environment = make_environment(session)
    page = parse(preview(browser_client, environment, "arch.csv", archived_log_csv(eleven_logs())).text)
    panel = page.by_id("redo-mapping-fields")
    selects = panel.find("select")
    assert {s.attrs["id"] for s in selects} == {f"m-{field}" for field in FIELDS}
    for select in selects:  # every select offers the file's columns and "not in the file", nothing else
        assert [o.attrs["value"] for o in select.find("option")] == ["", *HEADERS]
    detected = {"thread": "THREAD#", "sequence": "SEQUENCE#", "first_time": "FIRST_TIME",
                "next_time": "NEXT_TIME", "blocks": "BLOCKS", "block_size": "BLOCK_SIZE"}  # fmt: skip
    first_grid = panel.find("div", **{"class": "mapping-grid"})[0]
    assert [s.attrs["name"] for s in first_grid.find("select")] == [f"map_{f}" for f in FIELDS if f in detected]
    for field, column in detected.items():  # pre-filled with what was detected, shown first
        chosen = [o.attrs["value"] for o in panel.by_id(f"m-{field}").find("option") if "selected" in o.attrs]
        assert chosen == [column]
    for field in FIELDS:  # the domain's words, the field's own name only as a hint
        (label,) = panel.find("label", **{"for": f"m-{field}"})
        assert label.text() == f"{LABELS[field]} {field}" and label.find("code")[0].text() == field
    assert panel.find("label", **{"for": "m-first_time"})[0].text().startswith("Log start time")
    assert page.by_id("m-decimal").attrs["name"] == "decimal"  # the decimal separator stays


def test_every_field_has_a_label_in_words():
    assert set(LABELS) == set(FIELDS)
    assert all(label and label != field for field, label in LABELS.items())


def test_preview_and_imports_list_show_the_same_range_in_the_database_zone(browser_client, session):
    environment = make_environment(session, time_zone="Europe/Berlin")
    page = preview(browser_client, environment, "arch.csv", archived_log_csv(eleven_logs()))
    shown = parse(page.text).by_id("preview-range").text()
    # the file's wall clock is the database's: 08:00 to 09:50 in Berlin, 07:00 to 08:50 UTC
    assert shown == "2022-01-15 08:00 – 2022-01-15 09:50"
    token = page.text.split('name="upload_token" value="')[1].split('"')[0]
    imported = browser_client.post(
        f"/environments/{environment.id}/redo/imports", data={"upload_token": token}, headers=HTMX
    )
    assert imported.status_code < 400, imported.text
    environment_page = parse(browser_client.get(f"/environments/{environment.id}").text)
    imports = environment_page.by_id("redo-imports")
    (cell,) = imports.find("span", **{"class": "time-range"})
    assert cell.text() == shown
    assert "From – to (Europe/Berlin)" in imports.text()


logs_strategy = st.lists(
    st.tuples(
        st.integers(1, 2),  # thread
        st.integers(0, 60 * 24 * 40),  # start, minutes after 2022-03-01 (across the March clock change)
        st.integers(1, 180),  # minutes until NEXT_TIME
        st.integers(1, 400_000),  # blocks
    ),
    min_size=1,
    max_size=15,
)


@settings(max_examples=12, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(logs=logs_strategy, zone=st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"]))
def test_the_preview_range_is_the_imports_range(session, tmp_path, logs, zone):
    """For any archived-log export, the preview's first start and last end (what _range.html shows
    for it) are the import's stored first_time and last_time."""
    base = datetime(2022, 3, 1)
    rows = [
        (thread, 1000 + i, base + timedelta(minutes=start), base + timedelta(minutes=start + length), blocks)
        for i, (thread, start, length, blocks) in enumerate(logs)
    ]
    path = Path(tempfile.mkstemp(dir=tmp_path, suffix=".csv")[1])
    path.write_bytes(archived_log_csv(rows))
    with tempfile.TemporaryDirectory(dir=tmp_path) as workdir:
        shown = read_preview(str(path), path.name, "auto", None, zone, 30, workdir)
    threads = shown.analysis.threads.values()
    environment = make_environment(session, time_zone=zone)
    record = service.import_file(
        session=session, environment=environment, path=path, filename=path.name, imported_by="alice"
    )
    assert min(t.first for t in threads if t.first) == record.first_time
    assert max(t.last for t in threads if t.last) == record.last_time


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kolkata"])
def test_a_range_is_shown_in_the_environments_zone(browser_client, session, zone):
    environment = make_environment(session, time_zone=zone)
    shown = parse(preview(browser_client, environment, "arch.csv", archived_log_csv(eleven_logs())).text)
    assert shown.by_id("preview-range").text() == "2022-01-15 08:00 – 2022-01-15 09:50"
    assert f"From – to ({zone})" in shown.by_id("redo-preview").text()
