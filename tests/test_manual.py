"""The manual (issue 60): `mkdocs build --strict` passes (no broken link or anchor, no page left out of the
navigation); every link from the app's templates into /manual/ names a built page and anchor; the API and
CLI references list exactly what the running code has; redolab serves it to logged-in users only, says
how to build it when it is not built, and a card's "How is this computed?" link lands on its section in a
browser. The manual is built once per test process (services.built_manual: about 6 CPU-s)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from redolab.core.config import PROJECT_ROOT
from redolab.core.templating import FRONTEND_DIR
from redolab.web.manual import NOT_BUILT, SECTIONS
from tests import services, test_browser

# fixtures, found by name (browser: tests/conftest.py): the shared `redolab serve`, its first user logged in
shared_server, admin_context = test_browser.shared_server, test_browser.admin_context
admin_page = test_browser.admin_page

_MANUAL_LINK = re.compile(r"""/manual/[^"'\s<>{}()]*""")
README = PROJECT_ROOT / "README.md"
_EXTERNAL = re.compile(r"""<(?:script|link|img)[^>]+(?:src|href)="(?:https?:)?//""")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return services.built_manual(tmp_path_factory)


def _template_links() -> set[str]:
    """Every /manual/ address the app can link to: written in a template, or a card's section."""
    links = {f"/manual/{target}" for target in SECTIONS.values()}
    for template in (FRONTEND_DIR / "templates").rglob("*.html"):
        links.update(_MANUAL_LINK.findall(template.read_text()))
    return links


def _anchors(page: Path) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', page.read_text()))


def test_the_manual_builds_strictly_and_loads_nothing_from_outside(site):
    pages = list(site.rglob("*.html"))
    assert (site / "index.html").is_file() and len(pages) > 25
    assert (site / "search" / "search_index.json").is_file()  # the search runs in the browser, offline
    for page in pages:
        assert not _EXTERNAL.search(page.read_text()), page  # no CDN, no web font


def test_every_link_from_the_app_into_the_manual_resolves(site):
    links = _template_links()
    assert {"/manual/reference/plan-models/#redo-transport", "/manual/guides/preflight/"} <= links
    for link in sorted(links):
        path, _, anchor = link.removeprefix("/manual/").partition("#")
        page = site / path / "index.html" if path.endswith("/") or not path else site / path
        assert page.is_file(), f"{link}: no such page in the built manual"
        if anchor:
            assert anchor in _anchors(page), f"{link}: no such anchor on the page"


def test_the_api_reference_lists_exactly_the_apps_endpoints(site, app):
    document = app.openapi()
    expected = {
        f"{method.upper()} {path}"
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }
    text = html.unescape((site / "reference" / "api-endpoints" / "index.html").read_text())
    listed = set(re.findall(r"<h3[^>]*><code>([A-Z]+ /[^<]+)</code>", text))
    assert listed == expected
    for name, schema in document["components"]["schemas"].items():
        assert f'id="{name.lower()}"' in text, name
        for field in schema.get("properties", {}):
            assert f"<code>{field}</code>" in text, (name, field)


def test_the_api_paths_the_manual_writes_exist(app):
    """The hand-written pages and the README: every /api/v1/... they name is a path of the app."""
    paths = [*app.openapi()["paths"], "/api/v1/openapi.json"]  # the document itself is left out of itself
    patterns = [re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$") for path in paths]
    texts = [path.read_text() for path in (PROJECT_ROOT / "docs").rglob("*.md")]
    named = {ref.rstrip(".") for ref in re.findall(r"/api/v1/[\w{}/.-]+", "\n".join([*texts, README.read_text()]))}
    assert len(named) > 20
    assert [ref for ref in sorted(named) if not any(pattern.match(ref) for pattern in patterns)] == []


def _cli_options() -> dict[str, set[str]]:
    """Every `redolab` command (words joined) with its options, from typer's command tree."""
    import typer

    from redolab.cli import app as cli

    found: dict[str, set[str]] = {}

    def walk(command, context, words):
        found[" ".join(words)] = {opt for param in command.params for opt in [*param.opts, *param.secondary_opts]}
        if hasattr(command, "list_commands"):  # a group (typer ships its own click)
            for name in command.list_commands(context):
                child = command.get_command(context, name)
                if child is not None and not child.hidden:
                    walk(child, child.context_class(child, info_name=name, parent=context), [*words, name])

    root = typer.main.get_command(cli)
    walk(root, root.context_class(root, info_name="redolab"), ["redolab"])
    return found


def test_the_cli_reference_lists_exactly_the_commands_and_their_options(site):
    expected = _cli_options()
    expected.pop("redolab")
    text = html.unescape((site / "reference" / "cli-commands" / "index.html").read_text())
    sections = re.split(r"<h2[^>]*><code>", text)[1:]
    listed = {section.split("</code>", 1)[0]: section for section in sections}
    assert set(listed) == set(expected)
    for command, options in expected.items():
        for option in options:
            assert option in listed[command], (command, option)


def test_the_commands_the_manual_writes_exist_with_their_options():
    """The hand-written pages too: every `redolab ...` code span names a command and options it has."""
    commands = _cli_options()
    texts = [path.read_text() for path in (PROJECT_ROOT / "docs").rglob("*.md")]
    wrong = []
    for span in re.findall(
        r"`([^`\n]*\bredolab [a-z][^`\n]*)`", "\n".join([*texts, (PROJECT_ROOT / "README.md").read_text()])
    ):
        words = ["redolab", *re.match(r".*?redolab((?: [a-z][a-z-]*)*)", span).group(1).split()]
        command = next((" ".join(words[:n]) for n in range(len(words), 0, -1) if " ".join(words[:n]) in commands), "")
        wrong += [
            (span, option)
            for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span)
            if option not in commands[command] | {"--help"}
        ]
    assert wrong == []


def test_the_manual_is_served_to_logged_in_users_only(site, app, anonymous, browser_client, tmp_path):
    app.state.manual_dir = site
    refused = anonymous.get("/manual/reference/plan-models/")
    assert refused.status_code == 303
    assert refused.headers["location"] == "/login?next=/manual/reference/plan-models/"
    page = browser_client.get("/manual/reference/plan-models/")
    assert page.status_code == 200
    assert 'id="redo-transport"' in page.text
    assert "'sha256-" in page.headers["content-security-policy"]  # Material's inline start-up script
    assert page.headers["cache-control"] == "no-store"
    assert browser_client.get("/manual", follow_redirects=False).headers["location"] == "/manual/"
    css = next((site / "assets" / "stylesheets").glob("main.*.min.css")).name
    asset = browser_client.get(f"/manual/assets/stylesheets/{css}")
    assert asset.status_code == 200 and asset.headers["content-type"].startswith("text/css")
    assert browser_client.get("/manual/no-such-page/").status_code == 404
    assert browser_client.get("/manual/%2e%2e/%2e%2e/pyproject.toml").status_code == 404
    app.state.manual_dir = tmp_path / "not-built"
    missing = browser_client.get("/manual/")
    assert missing.status_code == 503
    assert NOT_BUILT in html.unescape(missing.text)  # what to run, not a 500


def test_the_readme_is_one_screen_and_points_to_the_manual():
    readme = (PROJECT_ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 120
    for must in ("make run", "make test", "REDOLAB_PORT", "/setup?token=", "redolab user create", "/manual/"):
        assert must in readme, must
    assert "make test" in (PROJECT_ROOT / ".ci" / "run").read_text()
    makefile = (PROJECT_ROOT / "Makefile").read_text()  # what `make run` installs includes the manual
    assert "manual" in next(line for line in makefile.splitlines() if line.startswith("run:")).split()
    dockerfile = (PROJECT_ROOT / "Dockerfile").read_text()  # the image serves the manual too
    assert "mkdocs build --strict" in dockerfile and "COPY --from=manual /src/frontend/manual" in dockerfile


def test_every_setting_is_in_the_manual():
    from redolab.core.config import Settings

    docs = PROJECT_ROOT / "docs" / "reference"
    text = (docs / "configuration.md").read_text() + (docs / "limits.md").read_text()
    assert [name for name in Settings.model_fields if f"REDOLAB_{name.upper()}" not in text] == []


def test_every_benchmark_script_is_in_the_manual():
    text = (PROJECT_ROOT / "docs" / "development" / "benchmarks.md").read_text()
    assert [path.name for path in (PROJECT_ROOT / "bench").glob("*.py") if f"`{path.name}`" not in text] == []


@pytest.mark.browser
def test_a_cards_how_is_this_computed_link_opens_its_section(site, admin_page):
    from playwright.sync_api import expect

    page = admin_page  # logged in as the shared server's first user, which serves `site`
    page.click("text=New environment")
    page.fill("#f-name", "manual link env")
    page.fill("#f-link_bandwidth_bits_per_second", "1 Gbit/s")
    page.fill("#f-link_rtt_seconds", "25 ms")
    page.click("text=Create environment")
    link = page.locator("#plan-transport .how-computed a")
    expect(link).to_have_text("How is this computed?")
    link.click()
    expect(page).to_have_url(re.compile(r"/manual/reference/plan-models/#redo-transport$"))
    heading = page.locator("h2#redo-transport")
    expect(heading).to_contain_text("Redo transport")
    expect(heading).to_be_in_viewport()
    # the offline search reads the index the manual is built with, served behind the login like its pages
    index = page.request.get(page.url.split("/manual/")[0] + "/manual/search/search_index.json")
    assert index.status == 200 and "hadrCalculator" in index.text()


def test_forms_and_a_refused_upload_link_to_their_guides(browser_client, session, user):
    """Each form that needs explaining links to the guide that explains it, and a refused upload to the
    formats redolab reads (issue 60: cards, forms and errors)."""
    from tests.factories import make_environment, make_host

    environment = make_environment(session, name="guided")
    make_host(session, environment, role="primary", name="p1", transport="local")
    make_host(session, environment, role="standby", name="s1", transport="local")
    assert f'href="/manual/{SECTIONS["environment-form"]}"' in browser_client.get("/environments/new").text
    page = browser_client.get(f"/environments/{environment.id}").text
    for form in ("redo-upload", "experiment-form", "watch-form"):
        assert f'href="/manual/{SECTIONS[form]}"' in page, form
    destinations = browser_client.get(f"/environments/{environment.id}/destinations").text
    assert f'href="/manual/{SECTIONS["destinations"]}"' in destinations
    refused = browser_client.post(
        f"/environments/{environment.id}/redo/preview",
        files={"file": ("notes.txt", b"nothing a database wrote\n", "text/plain")},
    )
    assert 'id="redo-error"' in refused.text and "notes.txt" in refused.text, refused.text[:300]
    assert f'href="/manual/{SECTIONS["redo-formats"]}"' in refused.text
