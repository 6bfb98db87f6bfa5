"""File(s) -> table -> intervals -> de-duplicated intervals, with counts and warnings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from redolab.redo.analytics import Analysis, analyze, summary_json
from redolab.redo.dedupe import unique
from redolab.redo.mapping import RedoInterval, map_table
from redolab.redo.parsers import RedoInputError
from redolab.redo.reader import open_table


@dataclass
class Reading:
    formats: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    rows_read: int = 0
    dropped: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)


def read_files(
    paths: list[Path], *, fmt: str = "auto", mapping: dict | None = None, reading: Reading
) -> Iterator[RedoInterval]:
    """Stream unique intervals from every file; the first bad line stops everything (all or nothing)."""
    for path in paths:
        table, handle = open_table(path, fmt)
        try:
            mapped = map_table(table, mapping)
            reading.formats.append(table.format)
            reading.kinds.append(mapped.kind)
            reading.warnings.extend(table.notes)

            counts: Counter = Counter()
            yield from unique(mapped.intervals, counts)
            reading.rows_read += counts.pop("", 0)
            reading.dropped.update(counts)
            for warning in mapped.warnings:
                if warning not in reading.warnings:
                    reading.warnings.append(warning)
        except RedoInputError as error:
            raise RedoInputError(f"{path.name}: {error}") from None
        finally:
            handle.close()


def analyze_files(paths: list[Path], *, fmt: str = "auto", headroom_ratio: float = 0.30) -> tuple[Analysis, dict]:
    reading = Reading()
    analysis = analyze(read_files(paths, fmt=fmt, reading=reading), headroom_ratio=headroom_ratio, keep_points=False)
    label = ", ".join(sorted({f"{f}/{k}" for f, k in zip(reading.formats, reading.kinds, strict=True)}))
    return analysis, summary_json(
        analysis, fmt=label, rows_read=reading.rows_read, dropped=reading.dropped, warnings=reading.warnings
    )
