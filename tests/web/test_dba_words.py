"""Issue 58.5: pages in the words a DBA uses. The AWR Miner preview offers no column the capture
does not have and says once how its numbers are written; a preview and an import say what was read in
words ("AWR Miner output"), not the reader's names; formulas cite the published document by name."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from tests.factories import make_environment, make_host
from tests.redo.test_preview_page import HTMX, parse

AWR_MINER = Path(__file__).parents[1] / "fixtures" / "redo" / "collectors" / "awr-hist-1234567890-ORCL-1000-1003.out"


def miner_preview(client, environment) -> str:
    response = client.post(
        f"/environments/{environment.id}/redo/preview",
        files={"file": (AWR_MINER.name, AWR_MINER.read_bytes())},
        data={"format": "auto"},
        headers=HTMX,
    )
    assert response.status_code == 200, response.text
    return response.text


def test_the_awr_miner_preview_offers_only_the_captures_columns_and_says_its_numbers_once(browser_client, session):
    environment = make_environment(session)
    html = miner_preview(browser_client, environment)
    page = parse(html)
    offered = {option.attrs.get("value") for select in page.find("select") for option in select.find("option")}
    assert not offered & {"INSTANCE_NUMBER", "BEGIN_TIME", "METRIC_NAME", "SNAP_ID", "END_TIME", "AVERAGE"}
    text = page.by_id("redo-preview").text()
    numbers = page.by_id("preview-numbers").text()
    assert numbers and text.count(numbers) == 1, (numbers, text)
    assert page.by_id("preview-format").text() == "AWR Miner output, one row per AWR statistic and snapshot"
    assert "awr-miner" not in text and "awr-stat" not in text


PROJECT_WORDS = re.compile(r"\bseed\s*0\d\d|\bseed's\b|seed practice|\bthe seed\b", re.IGNORECASE)
ROOT = Path(__file__).parents[2]


def test_no_page_or_formula_cites_the_projects_own_files():
    """ "(seed 000)" and "Seed practice" name the project's sources, not a document a DBA can look up:
    every template, and every string the code shows (docstrings and comments aside), cites by name."""
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in [*(ROOT / "frontend" / "templates").rglob("*.html"), *(ROOT / "docs").rglob("*.md")]
        for match in PROJECT_WORDS.finditer(path.read_text())
    ]  # the manual too: it is served to the same users
    for path in (ROOT / "backend" / "redolab").rglob("*.py"):
        found += [
            f"{path.relative_to(ROOT)}:{line}: {value[:60]}"
            for line, value in shown_strings(path)
            if PROJECT_WORDS.search(value)
        ]
    assert found == []


def test_a_new_environment_offers_each_transport_mode_for_its_own_platform(browser_client):
    """NEARSYNC and SUPERASYNC are Db2's: app.js offers an option only for the platforms it names."""
    page = parse(browser_client.get("/environments/new").text)
    (select,) = page.find("select", id="f-transport_mode")
    platforms = {option.attrs["value"]: option.attrs.get("data-platform") for option in select.find("option")}
    assert platforms == {
        "ASYNC": "dataguard hadr",
        "SYNC": "dataguard hadr",
        "FASTSYNC": "dataguard",
        "NEARSYNC": "hadr",
        "SUPERASYNC": "hadr",
    }


def test_host_fields_fit_the_role_and_the_transport(browser_client, session):
    """The SSH fields show only for a host reached over SSH, the destination only for a standby."""
    environment = make_environment(session)
    page = parse(browser_client.get(f"/environments/{environment.id}/hosts", headers=HTMX).text)
    when = {
        node.find(tag)[0].attrs["id"]: node.attrs["data-when"]
        for node in page.find("div")
        if "data-when" in node.attrs
        for tag in ("input", "select")
        if node.find(tag)
    }
    assert when == {
        "f-destination_id": "role=standby",
        "f-ssh_address": "transport=ssh",
        "f-ssh_port": "transport=ssh",
        "f-ssh_user": "transport=ssh",
        "f-credential_id": "transport=ssh",
    }


def test_deleting_an_empty_environment_says_so_in_a_sentence(browser_client, session):
    environment = make_environment(session, name="empty one")
    text = " ".join(browser_client.get(f"/environments/{environment.id}/delete").text.split())
    assert "also deletes" not in text and "nothing but its settings" not in text
    expected = "its settings and its one destination, standby</strong>: it holds nothing else."
    assert f'deletes <strong id="delete-contents">{expected}' in text


def test_a_rehearsal_note_ends_where_the_page_puts_its_full_stop(session):
    """The page joins the notes with "; " and ends them with ".": a note of its own full stop said "node.."."""
    from redolab.rehearsals.carriers import carrier_notes

    environment = make_environment(session)
    primary = make_host(session, environment, role="primary", node_number=1)
    standby = make_host(session, environment, role="standby", node_number=1)
    notes = carrier_notes(environment, [(primary, standby, [1, 2])], [1, 2])
    assert notes and not any(note.endswith(".") for note in notes), notes


def test_no_answer_says_yet_twice():
    """A card waiting for its first rehearsal or history said "no figure yet: no rehearsal yet: ..."."""
    from redolab.planning.answer import answers
    from redolab.planning.plan import build_plan
    from tests.planning.test_plan import facts, history

    plans = (
        build_plan(facts=facts(), requirement=history(), runs=[]),
        build_plan(facts=facts(), requirement=None, runs=[]),
    )
    said = [answer.number for plan in plans for answer in answers(plan, str)]
    assert "no figure yet: no redo history: a rehearsal replays the history's worst hour" in said
    assert not [number for number in said if number.count("yet") > 1]


# Classes of broken wording a reader trips over, each found on a page once (issue 58's "every sentence read
# once"): a plural written as "(s)" ("3 capture(s)", "on 2 node(s)"), a doubled word, two full stops.
# "http(s)" names two schemes, not a plural.
WORDING_DEFECTS = re.compile(
    r"\b(?!http\(s\))[a-z]+\(s\)|\b(the|a|an|of|to|in|is|and|on|for|it|at|by)\s+\1\b|[a-z)]\.\.(?![.\w/])",
    re.IGNORECASE,
)


C_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


@functools.cache
def shown_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that can reach a page, a message or a log (docstrings aside)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_page_or_message_writes_a_plural_as_s_a_doubled_word_or_two_full_stops():
    """The templates and the strings of every package under backend/redolab: the pages, the plan's cards
    and the report, and the parsers', the CLI's, the HADR cards', the schedules' and the notifications'
    messages (a count says "1 log", "3 logs" through core.units.format_count), and the probe's."""
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in (ROOT / "frontend" / "templates").rglob("*.html")
        for match in WORDING_DEFECTS.finditer(re.sub(r"\{#.*?#\}", "", path.read_text(), flags=re.DOTALL))
    ]
    found += [
        f"{path.relative_to(ROOT)}:{line}: {match.group(0)}"
        for path in (ROOT / "backend" / "redolab").rglob("*.py")
        for line, text in shown_strings(path)
        for match in WORDING_DEFECTS.finditer(text)
    ]
    found += [  # the probe's messages reach the run page as its error
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in (ROOT / "backend" / "redolab" / "redoprobe").glob("*.c")
        for literal in C_STRING.findall(path.read_text())
        for match in WORDING_DEFECTS.finditer(literal)
    ]
    assert found == []
