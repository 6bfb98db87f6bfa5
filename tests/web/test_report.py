"""The plan report a change board reads: page 1 carries every question's badge and figure (read back
from the printed PDF with pdftotext), every page its document id, version, author, date and page
number, on the paper the setting or the server's locale asks for; the HTML reads on a phone."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning.answer import QUESTIONS
from redolab.planning.plan import EvidenceItem, build_plan
from redolab.planning.report import (
    Report,
    ReportError,
    chromium_path,
    css_string,
    document_id,
    render_pdf,
    report_html,
    report_paper,
    server_territory,
)
from redolab.planning.service import Selection
from tests import services
from tests.factories import make_environment
from tests.planning.test_plan import facts, history, run

LOOPBACK = "not the link: both ends on this machine (loopback); tick it to use it anyway"
A4_POINTS, LETTER_POINTS = "594.96 x 841.92 pts (A4)", "612 x 792 pts (letter)"


def evidence(runs, unused: int = 12) -> list[EvidenceItem]:
    items = [EvidenceItem("import", 1, "import #1 (arch.csv)", "2026-03-02 09:00 UTC to 09:21 UTC", True, "used")]
    items += [
        EvidenceItem("run", r.id, f"run #{r.id} (ASYNC, {r.conns} conn)", "2026-03-03 09:01 UTC", True, "used")
        for r in runs
    ]
    items += [
        EvidenceItem(
            "run", 100 + i, f"run #{100 + i} (ASYNC, 1 conn, loopback check)", "2026-03-01 10:00 UTC", False, LOOPBACK
        )
        for i in range(unused)
    ]
    return items


def make_report(
    *, nominal: bool = False, paper: str = "A4", author: str = "alice", title: str = "Plan: SALES"
) -> Report:
    """A plan with a short thread and a queueing SYNC (or, `nominal`, no run: the nominal link), 12
    loopback runs not used."""
    runs = [] if nominal else [run(1, node=1, rate_mib=60), run(2, node=2, rate_mib=12), run(3, conns=4, rate_mib=70)]
    chosen = evidence(runs)
    environment = facts(transport_mode="SYNC")
    plan = build_plan(facts=environment, requirement=history(), runs=runs, evidence=chosen)
    return Report(
        title=title,
        environment="SALES",
        environment_id=1,
        platform="Oracle Data Guard",
        generated_at=datetime(2026, 11, 25, 12, 0, tzinfo=UTC),
        author=author,
        version="9.8.7",
        time_zone="UTC",
        hosts=[{"role": "primary", "node": 1, "name": "dc1-db1", "address": "10.20.0.11", "interface": "ens3"}],
        facts=[("Database size", "10 TiB")],
        plan=plan,
        selection=Selection(),
        document_id=document_id(environment, plan),
        paper=paper,
    )


def pdf_tools() -> None:
    if chromium_path() is None:
        services.missing("Chromium", "install Debian's chromium package (make test does)")
    if shutil.which("pdftotext") is None or shutil.which("pdfinfo") is None:
        services.missing("pdftotext", "install poppler-utils (scripts/system-deps.sh does)")


def printed(tmp_path, report: Report) -> tuple:
    """The PDF of `report` (tmp_path / report.pdf): its pages' text (pdftotext -layout, page by page)
    and pdfinfo's lines."""
    path = tmp_path / "report.pdf"
    path.write_bytes(render_pdf(report_html(report)))
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    count = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    pages = [
        subprocess.run(
            ["pdftotext", "-layout", "-f", str(n), "-l", str(n), str(path), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for n in range(1, count + 1)
    ]
    return pages, info


def squeeze(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def a4_printed(tmp_path_factory) -> tuple:
    """make_report() printed once for the tests that only read it (a Chromium run each costs seconds of
    CPU): the report, its pages (pdftotext -layout), pdfinfo's lines, and its whole text in reading
    order (pdftotext without -layout: cells in reading order, not side by side)."""
    pdf_tools()
    directory, report = tmp_path_factory.mktemp("a4-report"), make_report()
    pages, info = printed(directory, report)
    text = subprocess.run(["pdftotext", str(directory / "report.pdf"), "-"], capture_output=True, text=True).stdout
    return report, pages, info, text


NASTY_AUTHOR, NASTY_TITLE = 'ops "night" \\ team </style><h1>x</h1>\nnext', "Plan: ünïcode ‘SALES’ & co"


@pytest.fixture(scope="module")
def letter_printed(tmp_path_factory) -> tuple:
    """A report printed with REDOLAB_REPORT_PAPER=letter, its title and author full of what could end a
    CSS string or the style element: its pages and pdfinfo's lines (one Chromium run for two tests)."""
    pdf_tools()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("REDOLAB_REPORT_PAPER", "letter")
        report = make_report(paper=report_paper(), author=NASTY_AUTHOR, title=NASTY_TITLE)
    return printed(tmp_path_factory.mktemp("letter-report"), report)


@pytest.mark.parametrize("nominal", [False, True], ids=["measured", "nominal"])
def test_page_one_carries_every_question_with_its_badge_and_figure(tmp_path, nominal, request):
    pdf_tools()
    if nominal:
        report = make_report(nominal=nominal)
        pages, _ = printed(tmp_path, report)
    else:  # make_report(), printed once for the module
        report, pages, _, _ = request.getfixturevalue("a4_printed")
    first = pages[0]
    lines = first.splitlines()
    assert len(report.answers) == len(QUESTIONS) == 8
    for answer in report.answers:
        opening = " ".join(answer.question.split()[:2])  # a question cell may wrap after its first words
        line = next((line for line in lines if opening in line), None)
        assert line is not None, f"{answer.question!r} not on page 1"
        assert answer.badge.upper() in line.upper(), (answer.question, answer.badge, line)
        assert squeeze(answer.number)[:30] in squeeze(first), answer.number  # the figure, with its unit
    flat = squeeze(first)
    if nominal:
        assert "PASS (NOMINAL)" in flat.upper()
        assert "Nominal, not measured: a single-connection ASYNC run from primary nodes 1, 2" in flat
    else:
        assert "FAIL" in first and "margin -7.7 %" in flat  # thread 2 needs 13 MiB/s, its stream carries 12
        assert "Nominal, not measured" not in flat
    assert "Evidence not used" not in first and "Verdicts" not in first  # the details follow on later pages


def test_nothing_measured_says_what_each_answer_misses():
    empty = facts(link_bits_per_second=None, link_rtt_seconds=None, database_bytes=None)
    report = replace(make_report(), plan=build_plan(facts=empty, requirement=None, runs=[]))
    assert {answer.status for answer in report.answers} == {"missing"}
    for answer in report.answers[:-1]:
        assert answer.number.startswith("no figure yet: no "), answer  # names what to import, set or run
    assert report.answers[-1].number == "none found yet: nothing could be judged so far"  # not a PASS
    assert not any(answer.to_measure for answer in report.answers)


def test_a_partly_measured_answer_says_what_it_still_misses():
    plan = build_plan(facts=facts(link_bits_per_second=None), requirement=history(), runs=[run(1, rate_mib=80)])
    transport = replace(make_report(), plan=plan).answers[0]
    assert transport.status == "partial" and transport.badge == "partial"
    assert transport.number.startswith("All threads together over the link: margin +23.1 %")  # 80 against 65 MiB/s
    assert "still missing: no single-connection ASYNC run from primary node 2" in transport.number


RUNS = st.lists(
    st.builds(
        lambda i, node, mode, conns, rate, loopback, sync_write: run(
            i, node=node, mode=mode, conns=conns, rate_mib=rate, loopback=loopback, sync_write=sync_write
        ),
        st.integers(1, 50),
        st.integers(1, 2),
        st.sampled_from(["async", "sync"]),
        st.sampled_from([1, 4]),
        st.floats(0.5, 500),
        st.booleans(),
        st.booleans(),
    ),
    max_size=4,
    unique_by=lambda r: r.id,
)


@settings(max_examples=60, deadline=None)
@given(
    runs=RUNS,
    link=st.sampled_from([None, 1e8, 10e9]),
    rtt=st.sampled_from([None, 0.001, 0.05]),
    size=st.sampled_from([None, 10 * 1024**4]),
    mode=st.sampled_from(["ASYNC", "SYNC", "FASTSYNC"]),
    with_history=st.booleans(),
)
def test_each_answer_is_its_cards_badge_with_a_figure(runs, link, rtt, size, mode, with_history):
    """For every choice of link, RTT, size, mode, history and runs (loopback ones too): each answer
    carries its card's badge, a figure or what is missing, and a way to measure exactly when nominal."""
    environment = facts(link_bits_per_second=link, link_rtt_seconds=rtt, database_bytes=size, transport_mode=mode)
    plan = build_plan(facts=environment, requirement=history() if with_history else None, runs=runs)
    report = replace(make_report(), plan=plan)
    found = report.answers
    assert [a.key for a in found] == list(QUESTIONS)
    for answer in found[:-1]:
        card = plan.card(answer.key)
        assert (answer.status, answer.badge) == (card.status, card.badge)
        assert answer.number
        nominal = card.nominal and answer.key != "buffers"
        loopback = card.loopback and not card.nominal  # a run over the link replaces the loopback stand-in
        assert bool(answer.to_measure) == ((nominal or loopback) and card.status != "missing")
        if card.status == "missing":
            assert answer.number.startswith("no figure yet: ")
    assert found[-1].status in ("pass", "warn", "missing") and (found[-1].status == "warn") == bool(plan.risks)


def test_every_page_names_document_version_author_date_and_number(a4_printed):
    report, pages, info, _ = a4_printed
    assert A4_POINTS in info and len(pages) > 1
    for number, text in enumerate(pages, start=1):
        flat = squeeze(text)
        assert f"Page {number} of {len(pages)}" in flat
        assert f"Document {report.document_id}" in flat
        assert "redolab 9.8.7 · alice · 2026-11-25 12:00 UTC" in flat


def test_evidence_not_used_is_one_compact_table_at_the_end(a4_printed):
    _, pages, _, reading_order = a4_printed
    everything = squeeze(reading_order)  # cells in reading order, not side by side
    assert everything.count("tick it to use it anyway") == 1  # said once for the 12 loopback runs
    assert "Evidence not used" in squeeze(pages[-1])
    assert all(f"run #{100 + i}" in everything for i in range(12))
    assert everything.index("Evidence used") < everything.index("Verdicts") < everything.index("Evidence not used")


def test_every_verdict_with_its_formula_sources_and_evidence_follows(a4_printed):
    """What the change board checks after page 1: each card's headline, working and sources, and each
    piece of evidence with how it is (or is not) used."""
    report, _, _, text = a4_printed

    def solid(words: str) -> str:  # table cells wrap, and pdftotext joins 'single-' + 'stream'
        return "".join(words.split()).replace("-", "")

    flat = solid(text)
    for card in report.plan.to_json()["cards"].values():
        assert solid(card["headline"]) in flat, card["headline"]
        assert all(solid(line) in flat for line in card["working"]), card["working"]
        assert all(solid(source["label"]) in flat for source in card["sources"]), card["sources"]
    for item in report.plan.evidence:
        assert solid(item.label) in flat and solid(item.note) in flat, item


def test_letter_paper_when_asked(letter_printed):
    _, info = letter_printed
    assert LETTER_POINTS in info


def test_names_in_the_page_margins_are_text(letter_printed):
    """A title or author with quotes, backslashes, a newline or '</style>' is printed as typed and
    breaks neither the CSS string nor the style element."""
    pages, _ = letter_printed
    flat = squeeze(pages[1])
    assert "Plan: ünïcode ‘SALES’ & co" in flat and 'ops "night" \\ team </style><h1>x</h1>' in flat


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_css_string_escapes_everything_that_could_end_it(text):
    quoted = str(css_string(text))
    inner = quoted[1:-1]
    assert quoted[0] == quoted[-1] == '"'
    assert not set(inner) & set("\"'<>\n\r\f;{}")  # nothing ends the string, the rule or the element
    decoded = re.sub(r"\\([0-9a-f]{6}) ", lambda m: chr(int(m.group(1), 16)), inner)
    assert decoded == text


def test_document_id_is_a_hash_of_what_the_report_says():
    runs = [run(1, rate_mib=60)]
    chosen = evidence(runs)

    def said(environment=None, runs=runs, chosen=chosen) -> str:
        environment = environment or facts()
        return document_id(
            environment, build_plan(facts=environment, requirement=history(), runs=runs, evidence=chosen)
        )

    same = said()
    assert same == said(chosen=list(chosen)) and re.fullmatch(r"[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}", same)
    assert said(facts(link_rtt_seconds=0.011)) != same  # an edited fact
    more = [*runs, run(2, rate_mib=60)]
    assert said(runs=more, chosen=evidence(more)) != same  # one more run used
    assert said(runs=[run(1, rate_mib=6)]) != same  # the same evidence measuring less: another verdict
    unused_changed = [replace(e, period="another day", at=None) if not e.chosen else e for e in chosen]
    assert said(chosen=unused_changed) == same  # evidence not used is not an input


@pytest.mark.parametrize(
    ("environ", "paper"),
    [
        ({"LANG": "en_US.UTF-8"}, "Letter"),
        ({"LANG": "de_DE.UTF-8"}, "A4"),
        ({"LANG": "en_GB.UTF-8", "LC_PAPER": "en_CA.UTF-8"}, "Letter"),
        ({"LC_ALL": "fr_FR.UTF-8", "LC_PAPER": "en_US.UTF-8"}, "A4"),  # LC_ALL wins
        ({"LANG": "C.UTF-8"}, "A4"),
        ({}, "A4"),
        ({"LANG": "en_US.UTF-8", "REDOLAB_REPORT_PAPER": "A4"}, "A4"),
        ({"LANG": "de_DE", "REDOLAB_REPORT_PAPER": " LETTER "}, "Letter"),
    ],
)
def test_paper_from_the_setting_or_the_locale(environ, paper):
    assert report_paper(environ=environ) == paper


def test_an_unknown_paper_is_refused_by_name():
    with pytest.raises(ReportError, match=r"REDOLAB_REPORT_PAPER is 'A5': set A4 or Letter"):
        report_paper(environ={"REDOLAB_REPORT_PAPER": "A5"})
    assert server_territory({"LANG": "sr_RS@latin"}) == "RS"


@pytest.fixture
def browser():
    """Headless Chromium through Playwright as tests/conftest.py's `browser` starts it, but for the one
    test here that uses it: the module-scoped one lived on, idle, until the module's last test (in
    random order, through the PDF tests after it), its CPU counted when it was reaped at the end."""
    path = services.chromium_path()
    if path is None:
        services.missing("Chromium", "install Debian's chromium package (make test does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, headless=True, args=services.CHROMIUM_ARGS)
        yield browser
        browser.close()


def test_the_report_reads_on_a_phone(browser):
    """At 390 px the page does not scroll sideways and the answer table's cells stack."""
    pdf_tools()
    html = report_html(make_report(title="Standby build plan: " + "SALES_" * 12))
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.set_content(html)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        verdict = page.locator("#answer-transport td.verdict").bounding_box()
        question = page.locator("#answer-transport td.question").bounding_box()
        assert verdict["y"] > question["y"]  # stacked, not side by side
    finally:
        context.close()


def test_the_pdf_through_the_web_route(tmp_path, session, browser_client, monkeypatch):
    pdf_tools()
    monkeypatch.setenv("REDOLAB_REPORT_PAPER", "A4")
    environment = make_environment(session, link_bandwidth_bits_per_second=10**9, link_rtt_seconds=0.025)
    response = browser_client.get(f"/environments/{environment.id}/plan/report.pdf")
    assert response.status_code == 200 and response.headers["content-type"] == "application/pdf"
    path = tmp_path / "route.pdf"
    path.write_bytes(response.content)
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    first = subprocess.run(["pdftotext", "-f", "1", "-l", "1", str(path), "-"], capture_output=True, text=True).stdout
    report = browser_client.get(f"/environments/{environment.id}/plan/report.json").json()
    assert A4_POINTS in info and report["paper"] == "A4"
    assert f"Document {report['document_id']}" in first and "Page 1 of" in first
    solid = "".join(first.split())
    for answer in report["answers"]:
        assert answer["badge"].upper() in first.upper(), answer
        assert "".join(answer["number"].split()) in solid, answer  # the JSON's figure is the PDF's
    again = browser_client.get(f"/environments/{environment.id}/plan/report.json").json()
    assert again["document_id"] == report["document_id"]  # the same inputs, the same id


def test_the_reports_environment_table_carries_the_goals_a_verdict_is_judged_against(session, browser_client):
    """Issue 58: the protection mode, the RPO and RTO goals (and the release the settings start from)."""
    environment = make_environment(
        session, protection_mode="max_availability", transport_mode="SYNC", rpo_goal_seconds=30,
        rto_goal_seconds=900, database_release="19c",
    )  # fmt: skip
    report = browser_client.get(f"/environments/{environment.id}/plan/report.json").json()
    facts = {fact["name"]: fact["value"] for fact in report["facts"]}
    assert facts["Protection mode"] == "Maximum Availability" and facts["Database release"] == "19c"
    assert facts["RPO goal"] == "30 s" and facts["RTO goal"] == "15 min"
    page = browser_client.get(f"/environments/{environment.id}/plan/report")
    assert "<th>RTO goal</th><td>15 min</td>" in page.text
