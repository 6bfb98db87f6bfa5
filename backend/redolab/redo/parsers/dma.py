"""Google's Database Migration Assessment (DMA) collector for Oracle: what its file names and its
SQL*Plus spools tell about the columns.

Collector 2.0.x (2021-2022) wrote each query as one concatenated select expression
(`pkey || ',' || dbid || ...`, separator ' , ' up to 2.0.3, then '&&colspr': ',' in 2.0.4, ';' in
2.0.5 and 2.0.6). SQL*Plus heads such a column with the expression's text, without its spaces, cut
after 199 characters: a long query's heading names only its first columns
(`PKEY||','||DBID||...||PERC50||`) while every row carries all of them. The column order is the
collector's SQL for that version, kept here; the file name says the version
(`opdb__<query>__<db version>_<collector version>_<host>...`).
"""

from __future__ import annotations

import re

from redolab.redo.parsers import normalise

# awrhistsysmetrichist, collector 2.0.1 to 2.0.6: DBA_HIST_SYSMETRIC_HISTORY grouped by instance, hour
# of day and metric; PERCnn are PERCENTILE_CONT(1 - nn/100) WITHIN GROUP (ORDER BY value DESC): PERC95 is the p95
SYSMETRIC_2_0 = (
    "PKEY",
    "DBID",
    "INSTANCE_NUMBER",
    "HOUR",
    "METRIC_NAME",
    "METRIC_UNIT",
    "AVG_VALUE",
    "MODE_VALUE",
    "MEDIAN_VALUE",
    "MIN_VALUE",
    "MAX_VALUE",
    "SUM_VALUE",
    "PERC50",
    "PERC75",
    "PERC90",
    "PERC95",
    "PERC100",
)
# (query, collector versions) -> the select expression's column order
ORDERS: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {
    ("awrhistsysmetrichist", ("2.0.1", "2.0.2", "2.0.3", "2.0.4", "2.0.5", "2.0.6")): SYSMETRIC_2_0,
}
_NAME = re.compile(r"(?:^|/)(?:opdb|opdbt|manual)__(?P<query>[a-z0-9_]+?)__(?P<db>\d+)_(?P<version>\d+\.\d+\.\d+)_")


def collector_file(name: str) -> tuple[str, str] | None:
    """(query, collector version) from a DMA file name, else None."""
    match = _NAME.search(name or "")
    return (match["query"].lower(), match["version"]) if match else None


def complete_heading(name: str, heading: list[str], width: int) -> tuple[list[str], str] | None:
    """The whole column list for an expression heading cut short (`heading` names, the last maybe
    cut inside its name; `width` fields in each row), with a note saying where it came from; None
    when no known collector order fits."""
    known = collector_file(name)
    if known is not None:
        candidates = [
            (query, versions, order)
            for (query, versions), order in ORDERS.items()
            if query == known[0] and known[1] in versions
        ]
    else:  # a pasted or renamed file: any known order that the heading starts and the rows fill
        candidates = [(query, versions, order) for (query, versions), order in ORDERS.items()]
    for query, versions, order in candidates:
        if len(order) == width and _starts(order, heading):
            which = f"collector {known[1]}" if known else f"collector {versions[0]} to {versions[-1]}"
            note = (
                f"the heading names {len(heading)} of the {width} columns (SQL*Plus cut the select expression's "
                f"text): read in the DMA {query} query's column order for {which}: {', '.join(order)}"
            )
            return list(order), note
    return None


def _starts(order: tuple[str, ...], heading: list[str]) -> bool:
    if not heading or len(heading) > len(order):
        return False
    names = [normalise(name) for name in heading]
    whole = all(normalise(column) == name for column, name in zip(order, names[:-1], strict=False))
    return whole and bool(names[-1]) and normalise(order[len(names) - 1]).startswith(names[-1])


def refusal(name: str, heading: list[str], width: int) -> str | None:
    """Why a DMA file with a cut heading cannot be read, naming its version, or None if it is not one."""
    known = collector_file(name)
    if known is None:
        return None
    versions = sorted({v for (query, vs) in ORDERS if query == known[0] for v in vs})
    if not versions:
        return None
    return (
        f"the heading names {len(heading)} columns but the rows have {width}: this is the DMA {known[0]} query of "
        f"collector {known[1]}, and the column orders known are those of collector {', '.join(versions)} "
        f"({len(ORDERS[next(k for k in ORDERS if k[0] == known[0])])} columns); export the file with the full "
        "heading (collector 3.0 or later writes it with PROMPT)"
    )
