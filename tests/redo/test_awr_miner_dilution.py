"""Issue 56.4: an AWR Miner capture of snapshot averages carries a *warning* (not only a note) that its
averages hide the peaks shorter than the snapshot, with the snapshot's length in minutes, through
the preview and the import a user makes, and on the environment's page.

AWR Miner's MAIN-METRICS `redo_mb_s` is each snapshot's average of 'Redo Generated Per Sec' (its
script exports no maximum); `dur_m` is the snapshot's length in minutes. The capture is the shipped
fixture re-rendered with the snapshot length an AWR_SNAPSHOT interval of 15 or 60 minutes writes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from redolab.redo.analytics import analyze
from redolab.redo.ingest.pipeline import analyze_files
from redolab.redo.schemas import RedoInterval
from tests.factories import make_environment
from tests.variants import encoded

AT = datetime(2026, 11, 20, 10, tzinfo=UTC)
AWR_MINER = Path(__file__).parents[1] / "fixtures" / "redo" / "collectors" / "awr-hist-1234567890-ORCL-1000-1003.out"


def capture(minutes: int) -> str:
    """The fixture with snapshots `minutes` long, ending `minutes` apart (10:00, 10:15, 10:30 for 15)."""
    text = AWR_MINER.read_text()
    ends = {"10:00": 0, "11:00": 1, "12:00": 2}
    lines = []
    for line in text.splitlines(keepends=True):
        for end, index in ends.items():
            if f"25/11/20 {end}" in line and line.split()[1] == "60":
                total = 10 * 60 + index * minutes
                line = line.replace(f"25/11/20 {end}", f"25/11/20 {total // 60:02d}:{total % 60:02d}")
                line = line.replace("        60 ", f"{minutes:>10} ", 1)
        lines.append(line)
    return "".join(lines)


def warned(warnings: list[str], minutes: int) -> list[str]:
    said = (f"average over its {minutes} minutes", f"shorter than {minutes} minutes")
    return [w for w in warnings if all(words in w for words in said)]


@pytest.mark.parametrize("how", ["lf", "crlf", "bom", "utf-16"])
@pytest.mark.parametrize("minutes", [15, 60])
def test_a_snapshot_average_capture_warns_with_its_minutes(tmp_path, minutes, how):
    path = tmp_path / AWR_MINER.name
    path.write_bytes(encoded(capture(minutes), how))
    _, summary = analyze_files([path])
    assert summary["format"] == "awr-miner/awr-stat"
    assert warned(summary["warnings"], minutes), summary["warnings"]
    assert not any(f"average over its {minutes} minutes" in note for note in summary["notes"])


def test_one_minute_samples_and_averages_with_their_maximum_do_not_warn():
    """A minute's average hides no peak worth the name; a snapshot with its maximum shows the peak."""
    at = AT
    minute = [
        RedoInterval(line=i, thread=1, start=at + timedelta(minutes=i), end=at + timedelta(minutes=i + 1),
                     seconds=60, bytes=60e6, kind="rate")
        for i in range(10)
    ]  # fmt: skip
    with_maximum = [
        RedoInterval(line=i, thread=1, start=at + timedelta(hours=i), end=at + timedelta(hours=i + 1),
                     seconds=3600, bytes=3600e6, kind="rate", peak_bytes_per_second=5e6)
        for i in range(3)
    ]  # fmt: skip
    assert not any("averaged away" in w for w in analyze(minute).warnings)
    assert not any("averaged away" in w for w in analyze(with_maximum).warnings)
    hourly = [
        RedoInterval(line=i, thread=1, start=at + timedelta(hours=i), end=at + timedelta(hours=i + 1),
                     seconds=3600, bytes=3600e6, kind="rate")
        for i in range(3)
    ]  # fmt: skip
    assert warned(analyze(hourly).warnings, 60)


def test_the_warning_stays_beside_per_log_rows(tmp_path):
    """Logs imported beside the snapshots do not silence it: they show peaks only where they cover."""
    at, step = AT, timedelta
    rows = [
        RedoInterval(line=1, thread=1, start=at, end=at + step(minutes=5), seconds=300, bytes=3e9, kind="log"),
        *(
            RedoInterval(line=2 + i, thread=1, start=at + step(hours=i), end=at + step(hours=i + 1),
                         seconds=3600, bytes=3600e6, kind="rate")
            for i in range(3)
        ),
    ]  # fmt: skip
    (warning,) = warned(analyze(rows).warnings, 60)
    assert "cover the same time" in warning


def test_preview_import_and_page_carry_the_warning(api_client, browser_client, session):
    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/redo"
    text = capture(15).encode()
    preview = api_client.post(f"{base}/preview", files={"file": (AWR_MINER.name, text, "text/plain")})
    assert preview.status_code == 200, preview.text
    body = preview.json()
    assert warned(body["analysis"]["warnings"], 15), body["analysis"]["warnings"]
    imported = api_client.post(f"{base}/imports", json={"upload_token": body["upload_token"]})
    assert imported.status_code == 201, imported.text
    analytics = api_client.get(f"{base}/analytics").json()
    assert warned(analytics["warnings"], 15), analytics["warnings"]
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    assert "a peak shorter than 15 minutes is averaged away" in page.text
