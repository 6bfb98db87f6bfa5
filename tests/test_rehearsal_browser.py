"""Rehearse the worst hour in a real browser (headless Chromium): a history with times, "This
machine" hosts, a window dragged on the History chart, Rehearse this window, the live page until the
replay ends, its chart on screen, then the plan's Rehearsal card."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import test_browser
from tests.test_browser import (
    add_this_machine_hosts,
    axe_violations,
    drawn,
    open_panel,
    screenshot,
    server_screenshot_dir,
)

pytestmark = pytest.mark.browser
# fixtures, found by name (browser: tests/conftest.py): the shared `redolab serve`, its first user logged in
shared_server, admin_context = test_browser.shared_server, test_browser.admin_context
admin_page = test_browser.admin_page

HISTORY = Path(__file__).parent / "fixtures" / "redo" / "gv_archived_log.csv"  # 08:00 to 08:20, two threads


def import_history(page) -> None:
    from playwright.sync_api import expect

    open_panel(page, "redo-upload-panel")
    page.set_input_files("#u-file", str(HISTORY))
    page.click("#redo-preview-button")
    page.click("#redo-import")
    expect(page.locator("#redo-numbers")).to_be_visible(timeout=15_000)
    drawn(page, "#redo-rate-chart", 3)


def drag_across(page, selector: str, start: float, end: float) -> None:
    """Drag sideways across a plotly chart's plot area, from `start` to `end` (fractions of its
    width), as a user selects a period: plotly zooms the x axis and fires plotly_relayout."""
    plot_area = page.locator(f"{selector} .nsewdrag").first
    plot_area.scroll_into_view_if_needed()
    area = plot_area.bounding_box()
    y = area["y"] + area["height"] / 2
    page.mouse.move(area["x"] + area["width"] * start, y)
    page.mouse.down()
    page.mouse.move(area["x"] + area["width"] * end, y + 2, steps=12)
    page.mouse.up()


def test_rehearse_a_window_dragged_on_the_history_chart(admin_page):
    from playwright.sync_api import expect

    page = admin_page  # logged in as the shared server's first user

    page.click("text=New environment")
    page.fill("#f-name", "rehearsal env")
    page.click("text=Create environment")
    expect(page.locator("h1")).to_have_text("rehearsal env")
    add_this_machine_hosts(page)
    import_history(page)
    env_url = page.url.split("#")[0]
    page.goto(env_url)  # the Rehearsal form appears once the history is in
    drawn(page, "#redo-rate-chart", 3)
    expect(page.locator("#rehearsal-form")).to_be_attached()
    expect(page.locator("#rehearse-window-button")).to_have_count(0)  # nothing selected yet

    drag_across(page, "#redo-rate-chart", 0.3, 0.8)
    button = page.locator("#rehearse-window-button")
    expect(button).to_be_visible()
    expect(button).to_contain_text("Rehearse this window (2022-01-15 08:")
    expect(button).to_contain_text(" to 2022-01-15 08:")
    expect(button).to_contain_text("UTC)")  # the database's clock, as the chart shows it
    chosen_from, chosen_to = button.get_attribute("data-from"), button.get_attribute("data-to")
    screenshot(page, path=str(server_screenshot_dir() / "rehearse-this-window.png"))
    button.click()
    expect(page.locator("#rehearsal-panel")).to_have_attribute("open", "")
    expect(page.locator("#rh-window")).to_have_value("period")
    expect(page.locator("#rh-window_from")).to_have_value(chosen_from)
    expect(page.locator("#rh-window_to")).to_have_value(chosen_to)
    expect(page.locator("#rh-window_from")).to_be_in_viewport()
    screenshot(page, path=str(server_screenshot_dir() / "rehearsal-form.png"))
    page.fill("#rh-speedup", "60")  # about 10 minutes of redo in about 10 s
    page.fill("#rh-label", "dragged window")
    page.click("#rehearsal-button")

    expect(page.locator("h1")).to_contain_text("dragged window")
    expect(page.locator("#replayed-window")).to_contain_text(f"{chosen_from} to ")
    expect(page.locator("#replayed-granularity")).to_contain_text("spread evenly")
    expect(page.locator("#rehearsal-compressed")).to_contain_text("Time compressed 60×: a quick look, not evidence")
    # live until the replay ends; a probe without --schedule fails here with its usage error
    status = page.locator("#rehearsal-status")
    expect(status).not_to_have_text("queued", timeout=30_000)
    expect(status).to_have_text("succeeded", timeout=90_000)
    drawn(page, "#rehearsal-chart", 2, timeout=15_000)
    expect(page.locator("#summary-max-lag")).to_contain_text("s")
    expect(page.locator("#summary-max-backlog")).to_contain_text("B")
    expect(page.locator("#summary-drain")).to_be_visible()
    expect(page.locator("#summary-threads tbody tr")).to_have_count(2)  # the fixture's threads 1 and 2
    assert page.locator("#rehearsal-live").get_attribute("hx-trigger") is None  # polling stopped
    screenshot(page, path=str(server_screenshot_dir() / "rehearsal.png"), full_page=True)
    assert axe_violations(page) == []

    page.goto(env_url)
    expect(page.locator("#rehearsals-table")).to_contain_text("succeeded")
    expect(page.locator("#rehearsals-table")).to_contain_text("dragged window")
    screenshot(page.locator("#rehearsals"), path=str(server_screenshot_dir() / "rehearsals-section.png"))
    assert axe_violations(page) == []
    expect(page.locator("#plan-rehearsal")).to_be_visible()  # the plan's Rehearsal card
