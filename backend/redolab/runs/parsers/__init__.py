"""Parsers of probe output: redoprobe JSON lines, oratcptest text and iperf3 JSON."""

from __future__ import annotations

import re
from datetime import date

from redolab.runs.models import RunSource
from redolab.runs.parsers.iperf3 import read_iperf3
from redolab.runs.parsers.oratcptest import read_oratcptest
from redolab.runs.parsers.results import ImportedRun, ResultFileError, check_bounds

FORMATS = ("auto", "oratcptest", "iperf3")


def detect_format(text: str) -> RunSource:
    """iperf3 -J is a JSON object; oratcptest prints its parameters and "Mbytes/s" lines."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{"):
        return RunSource.iperf3
    if re.search(r"(?i)Message payload|Mbytes/s|oratcptest|The server is ready|Avg\. (?:aggregate )?throughput", text):
        return RunSource.oratcptest
    raise ResultFileError(
        "neither oratcptest client output (a header with 'Message payload = …' and 'Avg. throughput = … "
        "Mbytes/s') nor iperf3 JSON (iperf3 -J, which starts with '{'); choose the format by hand if it is one"
    )


def read_results(
    text: str, fmt: str = "auto", *, test_date: date | None = None, message_bytes: int | None = None
) -> list[ImportedRun]:
    """Every test in one file. `test_date` dates oratcptest's clock-only times (UTC); `message_bytes`
    stands for an oratcptest "Message payload" line the output was trimmed of."""
    if fmt not in FORMATS:
        raise ResultFileError(f"unknown format '{fmt}': use one of {', '.join(FORMATS)}")
    text = text.replace("\xa0", " ").replace("\r\n", "\n")
    source = detect_format(text) if fmt == "auto" else RunSource(fmt)
    if source is RunSource.iperf3:
        return [check_bounds(read_iperf3(text))]
    if test_date is None:
        raise ResultFileError(
            "oratcptest prints clock times only, no date: give the day the tests ran (the form's Date field, "
            "`--date YYYY-MM-DD` on the command line, `test_date` in the API)",
            field="test_date",
        )
    return [check_bounds(run) for run in read_oratcptest(text, test_date=test_date, message_bytes=message_bytes)]
