"""The answer first (issue 55, item 5), in a real browser (headless Chromium): on the environment page the
answer strip's badges are inside the first screen at 1440x900 and at 390x844, each visible, each row
linking to its card, and axe finds nothing serious. One environment serves both viewports."""

from __future__ import annotations

import pytest

from tests import test_browser
from tests.test_browser import axe_violations, screenshot, server_screenshot_dir
from tests.test_rehearsal_browser import import_history

pytestmark = pytest.mark.browser
# fixtures, found by name (browser: tests/conftest.py): the shared `redolab serve`, its first user logged in
shared_server, admin_context = test_browser.shared_server, test_browser.admin_context
admin_page = test_browser.admin_page

VIEWPORTS = {"desktop": (1440, 900), "phone": (390, 844)}
QUESTIONS = 6  # keep up, apply, instantiation, lag at risk, SYNC cost, rehearsal


JS_BUDGET_BYTES = 1.5 * 1024 * 1024  # issue 58: a first visit to the environment page, all its scripts


def script_bytes(browser, env_url: str) -> tuple[float, float]:
    """A cold visit (a new context: nothing cached) to the page: the scripts' bytes as transferred (gzip)
    and as decoded, from the browser's resource timing entries once the charts are drawn."""
    context = browser.new_context(storage_state=test_browser._shared["state"])
    try:
        page = context.new_page()
        page.goto(env_url)
        page.wait_for_function("() => window.Plotly !== undefined")
        entries = page.evaluate(
            """() => performance.getEntriesByType('resource').filter(e => e.initiatorType === 'script')
                .map(e => [e.name, e.transferSize, e.encodedBodySize, e.decodedBodySize])"""
        )
    finally:
        context.close()
    assert any("plotly" in name for name, *_ in entries), entries
    return sum(e[1] for e in entries), sum(e[3] for e in entries)


def test_the_answer_strips_badges_are_on_the_first_screen(admin_page, browser):
    from playwright.sync_api import expect

    page = admin_page  # logged in as the shared server's first user

    page.click("text=New environment")
    page.fill("#f-name", "SALES prod → DR, Frankfurt to Dublin")  # a name that wraps on a phone
    page.fill("#f-database_size_bytes", "2 TiB")
    page.fill("#f-link_bandwidth_bits_per_second", "1 Gbit/s")
    page.fill("#f-link_rtt_seconds", "25 ms")
    page.fill("#f-instantiation_goal_seconds", "48 h")
    page.fill("#f-rpo_goal_seconds", "30 s")
    page.click("text=Create environment")
    expect(page.locator("h1")).to_contain_text("SALES prod")
    import_history(page)
    env_url = page.url.split("#")[0]

    shots = server_screenshot_dir()
    off_screen: dict[str, list] = {}
    violations: dict[str, list[str]] = {}
    for name, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto(env_url)
        rows = page.locator("#answer-strip tbody tr")
        expect(rows).to_have_count(QUESTIONS)
        expect(page.locator("#answer-rpo-link")).to_contain_text("Link for the RPO:")
        expect(page.locator("#answer-rpo-link")).to_be_in_viewport()
        badges = page.locator("#answer-strip .status")
        expect(badges).to_have_count(QUESTIONS)
        for index, badge in enumerate(badges.all()):
            expect(badge).to_be_visible()
            box = badge.bounding_box()
            if box["y"] < 0 or box["y"] + box["height"] > height or box["x"] + box["width"] > width:
                off_screen.setdefault(name, []).append((index, box))
        for row in rows.all():  # each row links to its card lower on the page
            card = row.locator("td.question a").get_attribute("href")
            expect(page.locator(card)).to_have_attribute("data-status", row.get_attribute("data-status"))
        screenshot(page, path=str(shots / f"answer-strip-{name}.png"))  # the first screen
        violations[name] = axe_violations(page)  # target sizes of the row links, contrast of the badges
    assert off_screen == {}
    assert violations == {name: [] for name in VIEWPORTS}
    transferred, decoded = script_bytes(browser, env_url)
    print(f"environment page, first visit: scripts {transferred:,.0f} bytes transferred, {decoded:,.0f} decoded")
    assert 0 < transferred <= JS_BUDGET_BYTES and decoded <= 1.6e6  # plotly.js's cartesian bundle, not 4.8 MB
