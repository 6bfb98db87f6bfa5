"""The plan report for change approval. Page 1 is the answer: one line per question with its badge
and its figure (planning.answer); then the environment, the evidence used, every verdict with its
formula, the settings, and the evidence not used as one compact table. Every printed page carries
the document id, the redolab version, the author, the date and its page number (CSS page-margin
boxes, which headless Chromium's --print-to-pdf draws). The same HTML is printed, saved as PDF by
headless Chromium (already the UI tests' browser) and given as JSON."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from markupsafe import Markup

from redolab import __version__
from redolab.core import units
from redolab.core.config import get_settings
from redolab.core.templating import templates
from redolab.planning.answer import Answer, Strip, answer_strip, answers
from redolab.planning.card import show_time
from redolab.planning.facts import Facts
from redolab.planning.plan import EvidenceItem, Plan
from redolab.planning.rehearsal_svg import lag_svg
from redolab.planning.service import Selection, environment_facts, environment_plan

PDF_TIMEOUT_SECONDS = 90
MAX_PRINTING = 2  # Chromium processes at once: a burst of PDF requests must not take the server down
_printing = threading.BoundedSemaphore(MAX_PRINTING)


class ReportError(Exception):
    """The PDF could not be made; the message says what to install or set."""


PAPER_SIZES = {"a4": "A4", "letter": "Letter"}
# Territories whose locales print on Letter (glibc's LC_PAPER copies en_US there); A4 everywhere else.
LETTER_TERRITORIES = frozenset({"US", "CA", "MX", "PR", "PH", "BO", "CL", "CO", "CR", "GT", "NI", "PA", "SV", "VE"})


def server_territory(environ=os.environ) -> str | None:
    """The territory of the locale that sets the paper size (LC_ALL, then LC_PAPER, then LANG):
    "en_US.UTF-8" -> "US"; "C.UTF-8" or nothing -> None."""
    name = next((environ[key] for key in ("LC_ALL", "LC_PAPER", "LANG") if environ.get(key)), "")
    found = re.match(r"[A-Za-z]{2,3}_([A-Za-z]{2})(?:[.@]|$)", name)
    return found.group(1).upper() if found else None


def report_paper(configured: str | None = None, environ=os.environ) -> str:
    """The paper the PDF is printed on: REDOLAB_REPORT_PAPER (A4 or Letter, any case), else Letter
    where the server's locale prints on Letter (US, Canada, ...) and A4 elsewhere."""
    if configured is None:
        # the setting is read like REDOLAB_CHROMIUM: the variable first, then Settings (and .env)
        configured = environ.get("REDOLAB_REPORT_PAPER") or getattr(get_settings(), "report_paper", None)
    if configured:
        paper = PAPER_SIZES.get(str(configured).strip().lower())
        if paper is None:
            raise ReportError(f"REDOLAB_REPORT_PAPER is {str(configured)[:40]!r}: set A4 or Letter")
        return paper
    return "Letter" if server_territory(environ) in LETTER_TERRITORIES else "A4"


def document_id(facts: Facts, plan: Plan) -> str:
    """A short hash of what the report says: the environment's facts, the evidence used (kind, id, name,
    period) and every verdict, figure, risk and setting, the destinations and shared links with theirs
    (the plan's JSON). A different answer is a different id; the same plan, the same id. The date, the
    author and the evidence not used do not enter it."""
    said = {key: value for key, value in plan.to_json().items() if key != "evidence"}
    inputs = {
        "facts": dataclasses.asdict(facts),
        "evidence": sorted((e.kind, e.id, e.label, e.when) for e in plan.evidence if e.chosen),
        "says": said,
    }
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()
    return "-".join(digest[i : i + 4] for i in range(0, 12, 4))


_CSS_PLAIN = re.compile(r"[A-Za-z0-9 .,:_()/+#@-]")


def css_string(text: object) -> Markup:
    """`text` as a quoted CSS string for the page-margin boxes: every character but plain ones as a
    CSS escape, so no name can end the string or the style element."""
    escaped = "".join(c if _CSS_PLAIN.fullmatch(c) else f"\\{ord(c):06x} " for c in str(text))
    return Markup(f'"{escaped}"')  # noqa: S704  (every character outside _CSS_PLAIN is escaped above)


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
    document_id: str = ""
    paper: str = "A4"
    rpo_goal_seconds: float | None = None  # what the link for the RPO is sized against, when set

    @property
    def generated(self) -> str:
        return f"{self.generated_at:%Y-%m-%d %H:%M} UTC"

    @property
    def page_style(self) -> Markup:
        """The printed page: its paper, and the margin boxes every page carries (names as CSS strings)."""
        box = "font: 7.5pt 'DejaVu Sans', Arial, sans-serif; color: #4a5462;"
        signed = f"redolab {self.version} · {self.author} · {self.generated}"
        return Markup(  # noqa: S704  (user text enters only through css_string)
            f"@page {{ size: {report_paper(self.paper)}; margin: 16mm 14mm 15mm;\n"
            f"  @top-left {{ content: {css_string(self.title)}; {box} }}\n"
            f"  @top-right {{ content: {css_string('Document ' + (self.document_id or '-'))}; {box} }}\n"
            f"  @bottom-left {{ content: {css_string(signed)}; {box} }}\n"
            f'  @bottom-right {{ content: "Page " counter(page) " of " counter(pages); {box} }}\n}}'
        )

    @property
    def rehearsal_svg(self) -> Markup:
        """The Rehearsal card's lag chart (measured, the model's, the RPO goal), drawn without script."""
        result = self.plan.card("rehearsal").result
        if result is None or not result.measured.get("series"):
            return Markup("")
        series = result.measured["series"]
        measured = list(zip(series["end_seconds"], series["lag_seconds"], strict=True))
        predicted = list(result.prediction.lag_series) if result.prediction else None
        return lag_svg(measured, predicted, result.rpo_goal_seconds)

    @property
    def answers(self) -> list[Answer]:
        return answers(self.plan, partial(show_time, zone=self.time_zone))

    @property
    def strip(self) -> Strip:
        """Page 1's lead: the environment page's answer strip, with every question."""
        show = partial(show_time, zone=self.time_zone)
        return answer_strip(self.plan, show, rpo_goal_seconds=self.rpo_goal_seconds, keys=None)

    @property
    def used_evidence(self) -> list[EvidenceItem]:
        return [item for item in self.plan.evidence if item.chosen]

    @property
    def unused_evidence(self) -> list[tuple[str, list[EvidenceItem]]]:
        """The evidence not used, grouped by why (one reason, said once, for many runs)."""
        groups: dict[str, list[EvidenceItem]] = {}
        for item in self.plan.evidence:
            if not item.chosen:
                groups.setdefault(item.note, []).append(item)
        return list(groups.items())

    def to_json(self) -> dict:
        return {
            "title": self.title,
            "environment": {"id": self.environment_id, "name": self.environment, "platform": self.platform},
            "generated_at": self.generated_at.isoformat(),
            "author": self.author,
            "redolab_version": self.version,
            "document_id": self.document_id,
            "paper": self.paper,
            "answers": [dataclasses.asdict(answer) for answer in self.answers],
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
        *([("Protection mode", environment.protection_mode.label)] if environment.protection_mode else []),
        ("Transport mode", environment.transport_mode.value),
        *([("Database release", environment.database_release)] if environment.database_release else []),
        ("Database size", units.format_bytes(environment.database_size_bytes)),
        ("RAC nodes (primary / standby)", f"{environment.primary_rac_nodes} / {environment.standby_rac_nodes}"),
        ("Nominal link", f"{units.format_bit_rate(environment.link_bandwidth_bits_per_second)}, RTT "
                         f"{units.format_duration(environment.link_rtt_seconds)}"),
        *([("Reserved for other traffic", f"{environment.link_reserved_percent:g} % of the link")]
          if environment.link_reserved_percent else []),
        ("Headroom on peak redo", f"{environment.headroom_percent:g} %"),
        ("Apply overhead", f"{environment.apply_overhead_percent:g} %"),
        ("Instantiation goal", units.format_duration(environment.instantiation_goal_seconds)),
        ("RPO goal", units.format_duration(environment.rpo_goal_seconds) if environment.rpo_goal_seconds
         else "not set: the link for the RPO is sized against it"),
        ("RTO goal", units.format_duration(environment.rto_goal_seconds) if environment.rto_goal_seconds
         else "not set: the failover time is judged against it"),
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
        document_id=document_id(environment_facts(environment), plan),
        paper=report_paper(),
        rpo_goal_seconds=environment.rpo_goal_seconds,
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
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-extensions",
            "--disable-background-networking",
            "--no-first-run",
            "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={workdir}/profile",
            "--no-pdf-header-footer",
            f"--print-to-pdf={pdf}",
            page.as_uri(),
        ]
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
