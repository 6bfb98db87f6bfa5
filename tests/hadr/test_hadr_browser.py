"""Drawn, not sent: captures of two databases months apart are drawn side by side, each span with its
own time axis, under the production security policy (the browser fixtures of tests/test_browser.py)."""

from pathlib import Path

from tests.test_browser import admin_context, admin_page, drawn, shared_server  # noqa: F401 (fixtures)


def test_two_databases_months_apart_are_drawn_with_their_times(admin_page):  # noqa: F811
    from playwright.sync_api import expect

    page = admin_page  # logged in as the shared server's first user (tests/test_browser.py)

    fixtures = Path(__file__).parents[1] / "fixtures" / "db2"
    page.click("text=New environment")
    page.fill("#f-name", "db2 months apart")
    page.select_option("#f-platform", "hadr")
    page.select_option("#f-protection_mode", "")
    page.select_option("#f-transport_mode", "NEARSYNC")
    page.fill("#f-link_rtt_seconds", "1 ms")
    page.click("text=Create environment")
    expect(page.locator("h1")).to_have_text("db2 months apart")
    page.set_input_files("#hadr-file", str(fixtures / "db2pd_hadr_111_both_sides.txt"))
    page.click("#hadr-upload-button")
    expect(page.locator("#hadr-numbers")).to_contain_text("8 MiB", timeout=15_000)
    page.set_input_files("#hadr-file", str(fixtures / "db2pd_hadr_97_loop.txt"))  # RAKI, April 2012
    page.click("#hadr-upload-button")
    expect(page.locator("#hadr-capture-count")).to_contain_text("2 HADR pairs", timeout=15_000)
    drawn(page, "#hadr-monitoring-chart", points=8)
    ticks = page.locator("#hadr-monitoring-chart .xaxislayer-above text").all_text_contents()
    assert any("2012" in tick for tick in ticks) and any("2026" in tick for tick in ticks), ticks
    expect(page.locator("#hadr-pairs")).to_contain_text("standby 4 of 480 expected")
    expect(page.locator("#hadr-warnings")).to_contain_text("PEER_WINDOW differs: 300 s on the primary side")
