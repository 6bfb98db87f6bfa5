"""The answer first (issue 55, item 5): the environment page opens with the answer strip, the link for the
RPO and then one row per question with its badge (a word, not a colour alone) and its figure with its
unit, each row linking to its card; the report's page 1 leads with the same include. The strip's place
on the first screen is checked in a browser (tests/test_answer_strip_browser.py)."""

from __future__ import annotations

import html as markup
import re
from dataclasses import dataclass

import pytest

from redolab.planning.answer import FIRST_SCREEN, QUESTIONS, rpo_link
from redolab.planning.plan import build_plan
from redolab.planning.report import report_html
from tests.factories import make_environment
from tests.planning.test_plan import facts, history
from tests.planning.test_stored import _import
from tests.web.test_report import make_report

# a number with the unit the figure is in: a rate, a size, a duration or a share
FIGURE = re.compile(r"\d[\d,.]*\s?(MiB/s|[KMG]bit/s|[KMGT]iB|µs|ms|s|min|h|%)(?![\w/])")
SECTIONS = ('class="sections"', 'id="first-steps"', 'id="facts-fold"', 'id="plan"', 'id="history"', 'id="hosts"')


def text(fragment: str) -> str:
    return " ".join(markup.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def strip_rows(page: str) -> list[tuple[str, ...]]:
    """Each row of the strip as (key, data-status, link, question, badge class, badge word, figure)."""
    rows = re.findall(
        r'<tr id="answer-(\w+)" data-status="(\w+)"><td class="question"><a href="([^"]+)">(.*?)</a></td>\s*'
        r'<td class="verdict"[^>]*><span class="status (\w+)">([^<]*)</span></td>\s*<td class="figure">(.*?)</td></tr>',
        page,
        re.S,
    )
    return [(key, status, href, text(q), badge, word.strip(), text(f)) for key, status, href, q, badge, word, f in rows]


def rpo_line(page: str) -> str:
    found = re.search(r'<p class="rpo-link" id="answer-rpo-link"[^>]*>(.*?)</p>', page, re.S)
    assert found is not None, "no link for the RPO"
    return found.group(1)


@pytest.fixture
def measured_environment(api_client, session):
    """An environment with a link, a size, goals and an imported history: three answers carry figures."""
    environment = make_environment(
        session,
        name="SALES prod",
        link_bandwidth_bits_per_second=10**9,
        link_rtt_seconds=0.025,
        database_size_bytes=2 * 2**40,
        instantiation_goal_seconds=48 * 3600,
        rpo_goal_seconds=30,
    )
    _import(api_client, environment, "gv_archived_log.csv")
    return environment


def test_the_strip_is_the_first_content_after_the_title(browser_client, measured_environment):
    page = browser_client.get(f"/environments/{measured_environment.id}")
    assert page.status_code == 200
    body = page.text
    title_ends, strip_starts = body.index("</h1>"), body.index('<section class="answer-strip" id="answer-strip"')
    assert text(body[title_ends:strip_starts]) == "Edit Delete"  # only the title's own buttons come between
    assert all(strip_starts < body.index(section) for section in SECTIONS)  # above facts, plan, history, hosts
    strip = body[strip_starts : body.index("</section>", strip_starts)]
    assert strip.index('id="answer-rpo-link"') < strip.index("<tbody>")  # the link for the RPO first

    rows = strip_rows(strip)
    assert [row[0] for row in rows] == list(FIRST_SCREEN)
    for key, status, href, question, badge, word, figure in rows:
        assert question == QUESTIONS[key]
        assert href == f"#plan-{key}" and f'id="plan-{key}" data-status="{status}"' in body  # its card, same verdict
        assert badge == status and word.lower().startswith(status), (key, badge, word)  # the word says it
        if status == "missing":
            assert figure.startswith("no figure yet: "), (key, figure)
        else:
            assert FIGURE.search(figure), (key, figure)
    assert {row[1] for row in rows} >= {"pass", "missing"}
    figures = {row[0] for row in rows if FIGURE.search(row[6])}
    assert {"transport", "instantiation", "lag"} <= figures


@pytest.mark.parametrize(
    ("with_history", "rpo_goal", "needs"),
    [
        (False, None, [("#history", "import redo history"), ("/edit", "set an RPO goal")]),
        (False, 30, [("#history", "import redo history")]),
        (True, None, [("/edit", "set an RPO goal")]),
    ],
    ids=["neither", "no-history", "no-goal"],
)
def test_the_link_for_the_rpo_says_what_it_waits_for(
    api_client, browser_client, session, with_history, rpo_goal, needs
):
    environment = make_environment(session, rpo_goal_seconds=rpo_goal)
    if with_history:
        _import(api_client, environment, "gv_archived_log.csv")
    line = rpo_line(browser_client.get(f"/environments/{environment.id}").text)
    links = [(href, text(words)) for href, words in re.findall(r'<a href="([^"]+)">(.*?)</a>', line)]
    assert [(href.removeprefix(f"/environments/{environment.id}"), words) for href, words in links] == needs
    assert text(line) == "Link for the RPO: " + " and ".join(words for _, words in needs)


@dataclass(frozen=True)
class Target:  # the fields of planning.rpo_sizing's that the strip reads
    share_of_time: float
    bits_per_second: float


@dataclass(frozen=True)
class Short:
    thread: int


@dataclass(frozen=True)
class Sizing:
    rpo_seconds: float
    targets: tuple[Target, ...]
    streams_short: tuple[Short, ...] = ()
    reserved_note: str | None = None


SIZED = Sizing(30.0, (Target(1.0, 123.4e6), Target(0.999, 100e6), Target(0.99, 90e6)))


def test_the_link_for_the_rpo_is_the_plans_rpo_sizing():
    plan = build_plan(facts=facts(), requirement=history(), runs=[])
    plan.rpo_sizing = None  # no RPO goal, or a history without times: nothing sized
    assert rpo_link(plan, None).text == "Link for the RPO: set an RPO goal"
    assert rpo_link(plan, 30.0).text == "Link for the RPO: no figure yet: the redo history has no times to replay"
    plan.rpo_sizing = SIZED
    assert rpo_link(plan, 30.0).text == "Link for the RPO: 123.4 Mbit/s (100 % of the time within the RPO of 30 s)"
    plan.rpo_sizing = Sizing(45.0, SIZED.targets, (Short(2), Short(3)))
    assert rpo_link(plan, 45.0).text == (
        "Link for the RPO: no link size holds the RPO of 45 s: the single stream of threads 2, 3 is too slow"
    )


def test_a_sized_link_shows_on_the_page_linked_to_its_card(browser_client, measured_environment, monkeypatch):
    from redolab.web import planning as web_planning

    plain = web_planning.environment_plan

    def sized(**arguments):
        plan = plain(**arguments)
        plan.rpo_sizing = Sizing(30.0, (Target(1.0, 2.5e9),))
        return plan

    monkeypatch.setattr(web_planning, "environment_plan", sized)
    line = rpo_line(browser_client.get(f"/environments/{measured_environment.id}").text)
    assert '<a href="#plan-transport">2.5 Gbit/s (100 % of the time within the RPO of 30 s)</a>' in line


def test_the_reports_page_one_leads_with_the_same_strip():
    page = report_html(make_report())
    answer = page[page.index('<section id="report-answer">') : page.index('<section class="details">')]
    assert text(answer[: answer.index("<table")]) == "The answer Link for the RPO: set an RPO goal"
    rows = strip_rows(answer)
    assert [row[0] for row in rows] == list(QUESTIONS)  # every question, in the page's order
    for key, status, href, question, badge, word, _figure in rows:
        assert href == f"#report-{key}" and question == QUESTIONS[key] and badge == status and word
        if key != "risks":
            assert f'id="report-{key}"' in page  # the row's card on a later page
