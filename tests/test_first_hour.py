"""A new user's first hour, walked as the README tells it, at a desktop (1440 px) and a phone (390 px).

`redolab serve`'s setup link and the first user (an admin, and the page says so), an environment from
its form, redo history pasted into the paste box (a SQL*Plus spool with times, so the History chart
draws), two "This machine" hosts, a short run watched live until it succeeds, the plan's verdicts, then
the PDF report: page 1 read back with pdftotext and drawn with pdftoppm. Each step leaves a full-page
screenshot in `<REDOLAB_SCREENSHOTS>/first-hour/<width>/NN-step.png` for a person to look at (in CI only
when REDOLAB_SCREENSHOTS is set); on the
phone every page must fit the width and pass axe-core (no serious or critical violation).

What a person reads but the walk can go on without (a wrong hint, a page too wide, an axe violation)
is collected and asserted at the end, so one such finding does not hide the steps after it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

import pytest
from playwright.sync_api import Page, expect

from redolab.core.security import MIN_PASSWORD_LENGTH
from redolab.planning.answer import QUESTIONS
from tests import services
from tests.test_browser import (  # noqa: F401  (server, page: fixtures pytest finds by name here)
    add_this_machine_hosts,
    axe_violations,
    drawn,
    marks_on_screen,
    open_panel,
    page,
    screenshot,
    server,
    server_screenshot_dir,
)

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).parent / "fixtures" / "redo"
# A real SQL*Plus spool of V$ARCHIVED_LOG: prompts, a page break with its repeated heading, a wrapped
# NAME, tabs, "3 rows selected.". It has FIRST_TIME and NEXT_TIME, so the rate over time is charted
# (seed000_sqlplus.txt has MB and SEC only: no times, no chart over time).
PASTED = FIXTURES / "sqlplus_pages.txt"
USERNAME, PASSWORD = "alice", "violet tractor sonnet"  # the README's example passphrase
# A figure as a person reads it: a number and its unit ("71.07 MiB/s", "10 Gbit/s", "2 h 3 min", "+23.1 %").
FIGURE = re.compile(r"\d(?:[\d,.]*\d)?\s?(?:[KMGT]iB(?:/s)?|[kMG]bit/s|bytes|ms|µs|s|min|h|d|%)(?![A-Za-z])")


# The page's width against the window's, and the innermost elements that reach past its right edge
# (its box, or what overflows it visibly), leaving out those inside a box that scrolls or clips them.
WIDER_THAN_THE_WINDOW = """() => {
  const root = document.documentElement, width = window.innerWidth;
  if (root.scrollWidth <= width + 1) return null;
  const reach = (e) => Math.max(e.getBoundingClientRect().right,
    getComputedStyle(e).overflowX === 'visible' ? e.getBoundingClientRect().left + e.scrollWidth : 0);
  const clipped = (e) => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
    if (getComputedStyle(a).overflowX !== 'visible') return true; return false; };
  const past = [...document.querySelectorAll('body *')].filter((e) => reach(e) > width + 1 && !clipped(e));
  const innermost = past.filter((e) => !past.some((other) => other !== e && e.contains(other)));
  return {scrollWidth: root.scrollWidth, innerWidth: width,
          elements: innermost.slice(0, 4).map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
            + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().replace(/ +/g, '.') : '')
            + ' reaches ' + Math.round(reach(e)) + ' px: "' + e.textContent.trim().slice(0, 60) + '"')};
}"""


# Words drawn on top of each other in a plotly chart: an axis title, the tick labels and the legend's
# entries, each pair of groups compared box by box (4 px of slack: a text box is taller than its letters).
CHART_TEXT_OVERLAPS = """(selector) => {
  const chart = document.querySelector(selector);
  const boxes = (css) => [...chart.querySelectorAll(css)]
    .map((e) => [e.textContent.trim(), e.getBoundingClientRect()])
    .filter(([text, r]) => text && r.width > 0 && r.height > 0);
  const groups = {'axis title': boxes('.g-xtitle text, .g-ytitle text'),
                  'tick label': boxes('.xtick text, .ytick text'),
                  'legend entry': boxes('.legend .legendtext')};
  const apart = (a, b) => a.right - 4 <= b.left || b.right - 4 <= a.left
                          || a.bottom - 4 <= b.top || b.bottom - 4 <= a.top;
  const span = (r) => `x ${Math.round(r.left)}-${Math.round(r.right)}, y ${Math.round(r.top)}-${Math.round(r.bottom)}`;
  const names = Object.keys(groups), found = [];
  names.forEach((first, i) => names.slice(i + 1).forEach((second) =>
    groups[first].forEach(([a, ra]) => groups[second].forEach(([b, rb]) => {
      if (!apart(ra, rb)) found.push(`${first} '${a}' (${span(ra)}) over ${second} '${b}' (${span(rb)})`);
    }))));
  return found;
}"""


@dataclass
class Walk:
    """The pages one user sees, in order: a screenshot of each, and at phone width the width and
    axe-core checks, collected (not raised) so that the walk goes on to the next step."""

    page: Page
    width: int
    shots: Path
    problems: dict[str, object] = field(default_factory=dict)
    taken: list[Path] = field(default_factory=list)

    def seen(self, step: str) -> Path:
        path = self.shots / f"{len(self.taken) + 1:02d}-{step}.png"
        self.page.evaluate("() => window.scrollTo(0, 0)")  # the sticky section bar at the top, where it is read
        screenshot(self.page, path=str(path), full_page=True)
        self.taken.append(path)
        if self.width <= 640:
            wide = self.page.evaluate(WIDER_THAN_THE_WINDOW)
            if wide:
                self.problems[f"{path.name}: wider than the window"] = wide
            found = axe_violations(self.page)
            if found:
                self.problems[f"{path.name}: axe"] = found
        return path

    def check(self, what: str, ok: bool, detail: object = "") -> None:
        if not ok:
            self.problems[what] = detail

    def legible(self, chart: str) -> None:
        """The chart's axis titles, tick labels and legend do not cover one another."""
        overlaps = self.page.evaluate(CHART_TEXT_OVERLAPS, chart)
        self.check(f"{chart} at {self.width} px: words drawn over one another", not overlaps, overlaps)


def first_hour_dir(width: int) -> Path:
    directory = server_screenshot_dir() / "first-hour" / str(width)
    shutil.rmtree(directory, ignore_errors=True)  # only this walk's pictures, in order
    directory.mkdir(parents=True)
    return directory


@pytest.mark.parametrize("width", [1440, 390], ids=["desktop-1440", "phone-390"])
def test_first_hour_as_the_readme_tells_it(server, page, tmp_path, width):  # noqa: F811 (the fixtures)
    if shutil.which("pdftotext") is None or shutil.which("pdftoppm") is None:
        services.missing("pdftotext", "install poppler-utils (make test does)")
    page.set_viewport_size({"width": width, "height": 900 if width > 640 else 844})
    walk = Walk(page, width, first_hour_dir(width))

    # 1. `redolab serve` prints the one-time setup link; it makes the first user, an admin.
    printed = "".join(server.output)
    assert "No user exists yet. Create the first one with this one-time link:" in printed, printed
    assert server.setup_url and server.setup_url.startswith(server.url + "/setup?token="), printed
    page.goto(server.setup_url)
    expect(page.locator("h1")).to_have_text("Create the first user")
    hint = page.locator(".field", has=page.locator("#f-password")).inner_text()
    walk.check(
        f"setup page: the password hint states the real minimum ({MIN_PASSWORD_LENGTH} characters)",
        f"at least {MIN_PASSWORD_LENGTH} characters" in hint.lower(),
        hint,
    )
    walk.seen("setup-link")
    page.fill("#f-username", USERNAME)
    page.fill("#f-password", PASSWORD)
    page.fill("#f-password_again", PASSWORD)
    page.click("text=Create user and log in")
    expect(page.locator("h1")).to_have_text("Environments")
    expect(page.locator(".who")).to_contain_text(f"{USERNAME} (admin)")  # the first user is an admin, said so
    expect(page.locator(".topbar")).to_contain_text("Users")  # and has the admin's menu
    assert page.request.get(server.setup_url).status == 404  # the link stops working once a user exists
    walk.seen("logged-in-admin")

    # 2. An environment, from its form, with quantities typed with their units.
    page.click("text=New environment")
    expect(page.locator("h1")).to_have_text("New environment")
    page.fill("#f-name", "SALES prod")
    page.fill("#f-database_size_bytes", "2 TiB")
    page.fill("#f-link_bandwidth_bits_per_second", "10 Gbit/s")
    page.fill("#f-link_rtt_seconds", "25 ms")
    page.fill("#f-instantiation_goal_seconds", "48 h")
    walk.seen("environment-form")
    page.click("text=Create environment")
    expect(page.locator("h1")).to_have_text("SALES prod")
    env_url = page.url.split("#")[0].split("?")[0]
    expect(page.locator("#facts-fold > summary")).to_contain_text("2 TiB · 10 Gbit/s, RTT 25 ms")
    steps = page.locator("#first-steps li")
    expect(steps).to_have_count(5)  # import history, add hosts, verify keys, run, read the plan
    expect(page.locator("#first-steps li[data-done=yes]")).to_have_count(0)
    expect(page.locator("#redo-upload-panel")).to_have_attribute("open", "")  # open while nothing is imported
    walk.seen("environment-created")

    # 3. Redo history pasted into the box: preview, import, the chart over time is drawn.
    page.fill("#u-pasted", PASTED.read_text())
    page.click("#redo-preview-button")
    preview = page.locator("#redo-preview")
    expect(preview).to_contain_text("Preview of pasted text", timeout=15_000)  # the first preview starts its forkserver
    expect(page.locator("#preview-rows")).to_contain_text("3")
    expect(page.locator("#preview-required")).to_contain_text("MiB/s")
    # V$ARCHIVED_LOG's NAME is each log's file name: present and not read, so listed as ignored, never
    # offered as the statistic name (that column means something only in AWR's long form)
    walk.check(
        "preview of an archived-log spool: NAME (the log's file name) listed as ignored, not as a statistic name",
        page.locator("#m-stat_name").count() == 0 or page.locator("#m-stat_name").input_value() != "NAME",
        " ".join(page.locator("#redo-mapping-fields").inner_text().split())[:300],
    )
    walk.seen("history-preview")
    page.click("#redo-import")
    expect(page.locator("#redo-numbers")).to_be_visible(timeout=15_000)
    expect(page.locator("#redo-required")).to_contain_text("MiB/s")
    expect(page.locator("#redo-required")).to_contain_text("Mbit/s")
    expect(page.locator("#redo-imports")).to_contain_text("pasted")
    page.locator("#redo-rate-chart").scroll_into_view_if_needed()
    drawn(page, "#redo-rate-chart", 2, timeout=15_000)
    assert marks_on_screen(page, "#redo-rate-chart") >= 2
    walk.legible("#redo-rate-chart")
    expect(page.locator("#first-steps li[data-step=history]")).to_have_attribute("data-done", "yes")
    walk.seen("history-imported")

    # 4. The hosts: a primary and a standby on "This machine"; no key to verify, and the list says so.
    add_this_machine_hosts(page)
    expect(page.locator("#hosts-table tbody tr")).to_have_count(2)
    for row in page.locator("#hosts-table tbody tr").all():
        expect(row).to_contain_text("This machine")
        expect(row).to_contain_text("not needed")  # the host key column: nothing to verify here
    expect(page.locator("#hosts-table")).not_to_contain_text("Verify host")
    keys = page.locator("#first-steps li[data-step=keys]")
    expect(keys).to_contain_text("not needed on this machine")
    expect(keys).to_have_attribute("data-done", "yes")
    expect(page.locator("#first-steps li[data-step=hosts]")).to_have_attribute("data-done", "yes")
    walk.seen("hosts-added")

    # 5. A short run from the New experiment form, watched live until it succeeds.
    open_panel(page, "run-panel")  # open while there is no run yet
    expect(page.locator("#r-client_host_id option:checked")).to_contain_text("here-primary")
    expect(page.locator("#r-server_host_id option:checked")).to_contain_text("here-standby")
    page.fill("#r-duration_seconds", "3 s")
    page.fill("#r-interval_seconds", "1 s")
    page.fill("#r-label", "first run")
    page.click("#run-button")
    expect(page.locator("h1")).to_contain_text("first run")
    expect(page.locator("#run-status")).to_have_text(re.compile("queued|starting|running|succeeded"))
    walk.seen("run-started")
    drawn(page, "#throughput-chart", 1, timeout=15_000)  # the first interval, drawn as it arrives
    walk.seen("run-live")
    expect(page.locator("#run-status")).to_have_text("succeeded", timeout=45_000)
    expect(page.locator("#summary")).to_be_visible(timeout=15_000)
    expect(page.locator("#summary-rate")).to_contain_text("MiB/s")
    expect(page.locator("#summary-rate")).to_contain_text("Mbit/s")
    drawn(page, "#throughput-chart", 2, timeout=15_000)
    assert marks_on_screen(page, "#throughput-chart") >= 2
    walk.legible("#throughput-chart")
    walk.seen("run-succeeded")

    # 6. The plan: each verdict with its badge and its figure with a unit; then the report's answer.
    page.goto(env_url)
    page.click("nav.sections >> text=Plan")
    expect(page.locator("#plan")).to_be_in_viewport()
    expect(page.locator("#first-steps")).to_have_count(0)  # every step done: the checklist steps aside
    cards = page.locator("#plan .cards article")
    expect(cards.first).to_be_visible()
    assert cards.count() >= 5
    for card in cards.all():
        badge = card.locator("header .status")
        expect(badge).to_be_visible()
        status = card.get_attribute("data-status")
        assert badge.inner_text().strip().lower().startswith(status), (card.get_attribute("id"), status)
        if status != "missing":  # a missing card says what to import or run instead of a figure
            shown = card.locator(".headline, .card-rows").all_inner_texts()
            assert FIGURE.search(" ".join(shown)), (card.get_attribute("id"), shown)
        else:
            expect(card.locator(".headline")).to_contain_text("Missing:")
    # the loopback run is listed, but not taken for the link until ticked
    expect(page.locator("#plan-evidence tr", has_text="first run")).to_contain_text("not the link")
    walk.seen("plan")

    page.click("#plan-report")
    expect(page.locator("#report-title")).to_have_text("Standby build plan: SALES prod")
    rows = page.locator("#report-answers tbody tr")
    expect(rows).to_have_count(len(QUESTIONS))  # one line per question a change board asks
    expect(rows.locator("td.question")).to_have_text(list(QUESTIONS.values()))
    answers: list[tuple[str, str, str]] = []
    for row in rows.all():
        expect(row).to_be_visible()
        question = row.locator("td.question").inner_text().strip()
        badge = row.locator(".status")
        expect(badge).to_be_visible()
        figure = row.locator("td").nth(2).inner_text().strip()
        status = row.get_attribute("data-status")
        answers.append((question, badge.inner_text().strip(), status))
        if status == "missing":
            assert figure.startswith(("no figure yet: ", "none found yet")), (question, figure)
        elif row.get_attribute("id") != "answer-risks":  # risks: a count of findings, not a quantity
            assert FIGURE.search(figure), (question, figure)
    walk.seen("report")

    # 7. The PDF, from the link the report shows: page 1 carries every question with its badge.
    href = page.get_by_role("link", name="PDF", exact=True).get_attribute("href")
    response = page.request.get(urljoin(page.url, href), timeout=90_000)
    assert response.status == 200, response.text()[:500]
    assert response.headers["content-type"] == "application/pdf"
    pdf = tmp_path / "plan.pdf"
    pdf.write_bytes(response.body())
    first = subprocess.run(
        ["pdftotext", "-layout", "-f", "1", "-l", "1", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    lines = first.splitlines()
    flat = " ".join(first.split())
    assert "Standby build plan: SALES prod" in flat and USERNAME in flat, flat[:400]
    for question, badge, _ in answers:
        opening = " ".join(question.split()[:2])  # a question cell may wrap after its first words
        line = next((line for line in lines if opening in line), None)
        assert line is not None, f"{question!r} not on page 1:\n{first}"
        assert badge.upper() in line.upper(), (question, badge, line)
    subprocess.run(["pdftoppm", "-r", "60", "-f", "1", "-l", "1", "-png", str(pdf), str(tmp_path / "page")], check=True)
    (drawn_page,) = tmp_path.glob("page*.png")
    picture = walk.shots / f"{len(walk.taken) + 1:02d}-report-pdf-page1.png"
    shutil.copyfile(drawn_page, picture)
    walk.taken.append(picture)

    assert walk.problems == {}, walk.problems
