"""The plan report for change approval: title, environment, date, author, redolab version, hosts, the
evidence used with its dates and every verdict with its formula. The same HTML is printed, saved as
PDF by headless Chromium (already the UI tests' browser) and given as JSON."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from redolab import __version__
from redolab.core import units
from redolab.core.config import get_settings
from redolab.core.templating import templates
from redolab.planning.card import show_time
from redolab.planning.plan import Plan
from redolab.planning.service import Selection, environment_plan

PDF_TIMEOUT_SECONDS = 90
MAX_PRINTING = 2  # Chromium processes at once: a burst of PDF requests must not take the server down
_printing = threading.BoundedSemaphore(MAX_PRINTING)


class ReportError(Exception):
    """The PDF could not be made; the message says what to install or set."""


@dataclass
class Report:
    title: str
    environment: str
    environment_id: int
    platform: str
    generated_at: datetime
    author: str
    version: str
    time_zone: str
    hosts: list[dict]
    facts: list[tuple[str, str]]
    plan: Plan
    selection: Selection

    @property
    def generated(self) -> str:
        return f"{self.generated_at:%Y-%m-%d %H:%M} UTC"

    def to_json(self) -> dict:
        return {
            "title": self.title,
            "environment": {"id": self.environment_id, "name": self.environment, "platform": self.platform},
            "generated_at": self.generated_at.isoformat(),
            "author": self.author,
            "redolab_version": self.version,
            "time_zone": self.time_zone,
            "hosts": self.hosts,
            "facts": [{"name": k, "value": v} for k, v in self.facts],
            "selection": self.selection.query,
            **self.plan.to_json(),
        }


def plan_report(*, session, environment, selection: Selection, author: str) -> Report:
    plan = environment_plan(session=session, environment=environment, selection=selection)
    hosts = [
        {
            "role": h.role.value,
            "node": h.node_number,
            "name": h.name,
            "address": h.data_address or h.ssh_address,
            "interface": h.data_interface,
        }
        for h in sorted(environment.hosts, key=lambda h: (h.role.value, h.node_number, h.name))
    ]
    facts = [
        ("Platform", environment.platform.label),
        ("Transport mode", environment.transport_mode.value),
        ("Database size", units.format_bytes(environment.database_size_bytes)),
        ("RAC nodes (primary / standby)", f"{environment.primary_rac_nodes} / {environment.standby_rac_nodes}"),
        ("Nominal link", f"{units.format_bit_rate(environment.link_bandwidth_bits_per_second)}, RTT "
                         f"{units.format_duration(environment.link_rtt_seconds)}"),
        ("Headroom on peak redo", f"{environment.headroom_percent:g} %"),
        ("Apply overhead", f"{environment.apply_overhead_percent:g} %"),
        ("Instantiation goal", units.format_duration(environment.instantiation_goal_seconds)),
        ("Database time zone", environment.time_zone or "UTC"),
    ]  # fmt: skip
    return Report(
        title=f"Standby build plan: {environment.name}",
        environment=environment.name,
        environment_id=environment.id,
        platform=environment.platform.label,
        generated_at=datetime.now(UTC),
        author=author,
        version=__version__,
        time_zone=environment.time_zone or "UTC",
        hosts=hosts,
        facts=facts,
        plan=plan,
        selection=selection,
    )


def report_html(report: Report) -> str:
    """The report page as a standalone document (inline styles, no scripts, nothing fetched)."""
    return templates.env.get_template("planning/report.html").render(
        report=report, standalone=True, show_time=show_time
    )


def chromium_path() -> str | None:
    configured = os.environ.get("REDOLAB_CHROMIUM") or get_settings().chromium
    if configured:
        return configured
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def render_pdf(html: str) -> bytes:
    """Print `html` to PDF with headless Chromium: no network (a dead proxy; the page's own CSP allows
    inline styles only, so no script runs), a throwaway profile."""
    browser = chromium_path()
    if browser is None:
        raise ReportError(
            "PDF reports need Chromium: install it (Debian: apt-get install chromium) or set REDOLAB_CHROMIUM "
            "to its path. The printable report (Print plan) and the JSON report work without it."
        )
    if not _printing.acquire(blocking=False):
        raise ReportError(f"{MAX_PRINTING} PDF reports are being printed already: try again in a few seconds")
    try:
        return _print(browser, html)
    finally:
        _printing.release()


def _print(browser: str, html: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="redolab-report-") as workdir:
        page, pdf = Path(workdir) / "report.html", Path(workdir) / "report.pdf"
        page.write_text(html, encoding="utf-8")
        command = [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--disable-extensions", "--disable-background-networking", "--no-first-run",
            "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={workdir}/profile", "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
            page.as_uri(),
        ]  # fmt: skip
        try:
            result = subprocess.run(  # noqa: S603  (a fixed argument list: our own file, no shell)
                command, capture_output=True, timeout=PDF_TIMEOUT_SECONDS, check=False, cwd=workdir
            )
        except subprocess.TimeoutExpired:
            raise ReportError(f"Chromium did not print the report within {PDF_TIMEOUT_SECONDS} s") from None
        except OSError as error:
            raise ReportError(
                f"Chromium could not be started ({browser}: {error.strerror}): install it (Debian: apt-get install "
                "chromium) or set REDOLAB_CHROMIUM to its path"
            ) from None
        if not pdf.exists() or pdf.stat().st_size == 0:
            tail = result.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise ReportError(f"Chromium did not print the report (exit {result.returncode}): {tail[0][:300]}")
        return pdf.read_bytes()
