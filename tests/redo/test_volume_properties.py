"""Properties of volume exports (hourly and daily), for every generated file: shuffling the rows,
listing them again per archive destination and renaming the columns never changes the computed
peak, and an hourly export whose hour column is not recognised is refused, never read as days."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.redo.ingest.pipeline import analyze_files
from redolab.redo.parsers import RedoInputError

MIB = 1024 * 1024
DAY_NAMES = ["DAY", "LOG_START_DATE", "DATE", "REDO_DAY", "LOG_DATE"]
HOUR_NAMES = ["HOUR", "HO", "HH24"]
THREAD_NAMES = ["THREAD#", "THREAD_NUM", "INSTANCE_NUMBER"]
MB_NAMES = ["MB", "MBYTES", "REDO_MB", "SIZE_MB"]

# (thread, day index, hour) -> MiB; at least two hours per thread and day, as an hourly export has
volumes = st.dictionaries(
    st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(0, 23)), st.integers(1, 50_000), min_size=2, max_size=40
).filter(lambda v: all(sum(1 for t, d, _ in v if (t, d) == (t0, d0)) >= 2 for t0, d0, _ in v))


def expected_peaks(rows: dict[tuple[int, int, int], int], hourly: bool) -> tuple[dict[int, float], float]:
    """By hand: each row is a period of an hour (or a day); threads add up within a period."""
    seconds = 3600 if hourly else 86400
    per_period: dict[tuple, dict[int, int]] = {}
    for (thread, day, hour), mib in rows.items():
        period = (day, hour if hourly else 0)
        per_period.setdefault(period, {}).setdefault(thread, 0)
        per_period[period][thread] += mib
    threads: dict[int, float] = {}
    for by_thread in per_period.values():
        for thread, mib in by_thread.items():
            threads[thread] = max(threads.get(thread, 0.0), mib * MIB / seconds)
    summed = max(sum(by_thread.values()) * MIB / seconds for by_thread in per_period.values())
    return threads, summed


def export(rows, *, hourly, names, delimiter, order, standby_share) -> str:
    day_name, hour_name, thread_name, mb_name = names
    heading = [day_name, *([hour_name] if hourly else []), thread_name, "DEST_ID", mb_name]
    lines = []
    for (thread, day, hour), mib in rows.items():
        stamp = (date(2024, 3, 1) + timedelta(days=day)).isoformat()
        for dest, value in ((1, mib), (2, int(mib * standby_share))):  # the standby may have missed logs
            fields = [stamp, *([f"{hour:02d}"] if hourly else []), str(thread), str(dest), str(value)]
            lines.append(delimiter.join(fields))
    order.shuffle(lines)
    return "\n".join([delimiter.join(heading), *lines]) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    rows=volumes,
    hourly=st.booleans(),
    names=st.tuples(*(st.sampled_from(n) for n in (DAY_NAMES, HOUR_NAMES, THREAD_NAMES, MB_NAMES))),
    delimiter=st.sampled_from([",", ";", "|", "\t"]),
    seed=st.integers(0, 2**32 - 1),
    standby_share=st.sampled_from([1.0, 0.5, 0.0]),
)
def test_shuffles_destinations_and_names_never_change_the_peak(rows, hourly, names, delimiter, seed, standby_share):
    if not hourly:  # one row per thread and day in a daily export
        rows = {(t, d, 0): v for (t, d, _), v in rows.items()}
    threads, summed = expected_peaks(rows, hourly)
    with TemporaryDirectory() as directory:
        path = Path(directory) / "volumes.txt"
        path.write_text(
            export(
                rows,
                hourly=hourly,
                names=names,
                delimiter=delimiter,
                order=random.Random(seed),
                standby_share=standby_share,
            )
        )
        _, summary = analyze_files([path])
    assert {t["thread"]: t["peak_bytes_per_second"] for t in summary["threads"]} == pytest.approx(threads)
    assert summary["summed"]["peak_bytes_per_second"] == pytest.approx(summed)
    assert summary["unique_logs"] == len(rows)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rows=volumes, seed=st.integers(0, 2**32 - 1), unknown=st.sampled_from(["HR_OF_DAY", "X", "BUCKET"]))
def test_an_unrecognised_hour_column_is_refused_not_read_as_days(rows, seed, unknown):
    text = export(
        rows,
        hourly=True,
        names=("DAY", unknown, "THREAD#", "MB"),
        delimiter=",",
        order=random.Random(seed),
        standby_share=1.0,
    )
    with TemporaryDirectory() as directory:
        path = Path(directory) / "hourly.csv"
        path.write_text(text)
        with pytest.raises(RedoInputError) as refused:
            analyze_files([path])
    message = str(refused.value)
    assert message.startswith("hourly.csv: lines ")
    assert f"differ in {unknown} (" in message and f"Map {unknown} (as the hour" in message
