"""Browser checks of issue 58's charts, run inside an existing browser test on its page (no new server,
no new browser): the title block drawn as SVG text in the figure and kept in the SVG the toolbar saves,
and the Paths grid's cells drawn, folding into the width of a 390 px phone."""

from __future__ import annotations

PHONE = {"width": 390, "height": 844}


def check_title_block_and_download(page, selector: str, title: str) -> None:
    """The title block is SVG text of the figure (not HTML around it), and the toolbar's SVG keeps it."""
    from playwright.sync_api import expect

    expect(page.locator(f"{selector} .gtitle")).to_contain_text(title)
    button = page.locator(f'{selector} .modebar-btn[data-title="Download as SVG (with its title block)"]')
    expect(page.locator(f'{selector} .modebar-btn[data-title="Download plot as a PNG"]')).to_have_count(1)
    with page.expect_download() as download:
        button.click()
    saved = download.value
    assert saved.suggested_filename.endswith(".svg"), saved.suggested_filename
    with open(saved.path(), encoding="utf-8") as svg:
        assert title in svg.read()


def check_paths_grid(page, watch_name: str, shots=None) -> None:
    """The Paths page from the navigation: the watch's cell drawn in its state's colour, with its rule;
    on a 390 px phone the grid folds and nothing is wider than the screen (screenshots of both in
    `shots`, a directory, when given)."""
    from playwright.sync_api import expect

    page.locator("header nav").get_by_role("link", name="Paths", exact=True).click()
    expect(page.locator("h1")).to_have_text("Paths")
    cell = page.locator(".path-cell", has_text=watch_name).first
    expect(cell).to_be_visible()
    expect(cell).to_contain_text("required")
    expect(cell.locator(".path-rule")).to_contain_text("MiB/s")
    box = cell.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 30, box
    colour = cell.evaluate("(e) => getComputedStyle(e).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent"), colour
    if shots is not None:
        page.screenshot(path=str(shots / "paths.png"), full_page=True)
    size = page.viewport_size
    page.set_viewport_size(PHONE)
    try:
        widest = page.evaluate("() => document.documentElement.scrollWidth")
        assert widest <= PHONE["width"], widest
        expect(cell).to_be_visible()
        if shots is not None:
            page.screenshot(path=str(shots / "paths-phone.png"), full_page=True)
    finally:
        page.set_viewport_size(size)
