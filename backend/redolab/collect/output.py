"""Read what SQL*Plus, the Db2 CLP and db2pd print for the shipped scripts into typed rows, or one
CollectionError saying what went wrong.

SQL*Plus (one run, several steps, each after its `PROMPT redolab-step: name` line):
- SET MARKUP CSV ON QUOTE ON (12.2+): a quoted heading line, text and dates quoted (a quote inside
  doubled), numbers bare, NULL empty; blank lines before the heading; "N rows selected." (FEEDBACK ON
  counts every result, "1 row selected." included) or "no rows selected" without a heading.
- SET COLSEP '|' (before 12.2): the heading (a character column's heading cut at its width), its
  dashed underline, values padded to the column width, the heading again after PAGESIZE lines.
Db2 CLP with -x: no heading and no "record(s) selected", columns padded and separated by blanks, NULL
as '-'; exit code 1 with nothing printed is an empty result.

The reader knows each step's columns (the scripts are fixed): it checks the heading against them,
counts the rows against the feedback line (a cut output is refused, not half-imported) and converts
every value, so that anything else is a CollectionError, never another exception. Patterns are anchored
and bounded; lines are capped before any pattern reads them.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from datetime import datetime

from redolab.collect.errors import CollectionError, command_missing, first_error, not_installed, timed_out
from redolab.collect.rows import STEP_COLUMNS, Columns
from redolab.collect.scripts import STEP_PROMPT

MAX_LINE = 65_536  # LINESIZE 32767 and Db2's widest -x row (a 254-character path and the rest) fit
# Rows of one step: a year of 32 RAC threads, one log switch every 15 minutes each, is 1,121,280
# V$ARCHIVED_LOG rows; a third more for busier databases (the manual, "Collect from the database").
MAX_ROWS = 1_500_000
_FEEDBACK = re.compile(r"^(\d{1,12}) rows? selected\.$")
_NO_ROWS = "no rows selected"
_UNDERLINE = re.compile(r"^-{1,4000}(\|-{1,4000}){0,200}$")
_INT = re.compile(r"^-?\d{1,38}$")
_FLOAT = re.compile(r"^-?(\d{1,40}(\.\d{0,40})?|\.\d{1,40})([Ee][+-]?\d{1,3})?$")
_DECIMAL_COMMA = re.compile(r"^-?\d{0,40},\d{1,40}$")
_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[ T-](\d{2})[:.](\d{2})[:.](\d{2})(?:[.,](\d{1,9}))?$"  # Oracle (NLS set), Db2 TIMESTAMP
    r"|^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$"  # Db2 history: YYYYMMDDHHMMSS
)
_NLS_HINT = (
    "Numbers came with a decimal comma: the session's NLS_NUMERIC_CHARACTERS was not '.,' when the query ran "
    "(the preamble's ALTER SESSION did not take effect); for Db2, the client's territory writes decimal commas."
)


@dataclass
class Collected:
    """One SQL*Plus run read: its layout ('csv' or 'colsep') and each step's typed rows."""

    layout: str
    steps: dict[str, list] = field(default_factory=dict)


def _garbage(step: str, message: str) -> CollectionError:
    return CollectionError(
        "garbage",
        step,
        message,
        "The output fits none of the shapes SQL*Plus or the Db2 CLP "
        "print for these scripts: is a login script printing text, or is another tool on the PATH?",
    )


def _lines(text: str | list[str], step: str) -> list[str]:
    """`text`'s lines (a list: split already, by collect.reading.lines_of)."""
    lines = text if isinstance(text, list) else text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            raise _garbage(step, f"line {number} is {len(line):,} characters long, more than the tools write")
    return lines


# -- values ------------------------------------------------------------------------------------------
def value(kind: str, text: str, where: str, step: str):
    """One value of a column of `kind` (int, float, text, time; '?': NULL allowed)."""
    optional, kind = kind.endswith("?"), kind.rstrip("?")
    text = text.strip()
    if text == "":
        if optional:
            return None
        raise _garbage(step, f"{where}: no value")
    if kind == "text":
        return text
    if _DECIMAL_COMMA.match(text):
        raise CollectionError("nls", step, f"{where}: '{text}' has a decimal comma", _NLS_HINT)
    if kind == "int" and _INT.match(text):
        return int(text)
    if kind == "float" and _FLOAT.match(text) and math.isfinite(float(text)):
        return float(text)  # 1e999 is inf, which JSON (the stored facts) cannot hold
    if kind == "time":
        moment = _time(text)
        if moment is not None:
            return moment
    raise _garbage(step, f"{where}: '{text[:60]}' is not a {kind}")


def _time(text: str) -> datetime | None:
    match = _TIME.match(text)
    if not match:
        return None
    parts = [p for p in match.groups() if p is not None]
    fraction = (parts[6] if len(parts) > 6 else "0")[:6].ljust(6, "0")
    try:
        return datetime(*(int(p) for p in parts[:6]), int(fraction))
    except ValueError:
        return None


def _add(rows: list, step: str, fields: list[str], number: int) -> None:
    """The row of `fields` added to `rows`, which may not pass MAX_ROWS."""
    if len(rows) >= MAX_ROWS:
        raise CollectionError(
            "too_large",
            step,
            f"line {number}: more than {MAX_ROWS:,} rows, the cap on one step's rows (a year of 32 threads' "
            "archived logs is about 1.1 million)",
            "Is a login script printing, or is the database's history far longer than a year?",
        )
    rows.append(_row(step, fields, number))


def _row(step: str, fields: list[str], number: int):
    row_type, columns = STEP_COLUMNS[step]
    if len(fields) != len(columns):
        if any(kind.startswith("float") for _, kind in columns) and len(fields) > len(columns):
            raise CollectionError(
                "nls", step, f"line {number}: {len(fields)} values for {len(columns)} columns", _NLS_HINT
            )
        raise _garbage(step, f"line {number}: {len(fields)} values where the script selects {len(columns)}")
    return row_type(
        *(value(kind, text, f"line {number}, {name}", step) for (name, kind), text in zip(columns, fields, strict=True))
    )


# -- SQL*Plus --------------------------------------------------------------------------------------
def read_sqlplus(
    stdout: str | list[str],
    *,
    stderr: str = "",
    exit_code: int = 0,
    expected: tuple[str, ...] = (),
    timeout: float | None = None,
    was_stopped: bool = False,
) -> Collected:
    """The steps of one SQL*Plus run. `expected`: the steps the session ran (each must be there);
    `was_stopped`: the caller stopped it after `timeout` seconds."""
    if was_stopped:
        raise timed_out("sqlplus", "session", timeout)
    if command_missing(stdout, stderr, exit_code, "sqlplus"):
        raise not_installed("sqlplus", "connect", stderr.strip()[-300:])
    lines = _lines(stdout, "session")
    markers = _markers(lines)
    error = first_error(lines + _lines(stderr, "session"), "sqlplus", markers)
    if error is not None:
        raise error
    if exit_code != 0:
        raise CollectionError(
            "exit",
            markers[-1] if markers else "session",
            f"sqlplus exited with {exit_code} without an error message",
            "Look at the host: a signal, or a WHENEVER OSERROR exit.",
        )
    collected = Collected("")
    for step, start, end in _sections(lines):
        if step in collected.steps:
            raise _garbage(step, f"line {start}: the step's output is there twice")
        layout, rows = _read_step(step, lines, start, end)
        collected.layout = collected.layout or layout
        collected.steps[step] = rows
    missing = [step for step in expected if step not in collected.steps]
    if missing:
        raise CollectionError(
            "truncated",
            missing[0],
            f"no output for {', '.join(missing)}",
            "The session ended early: was it stopped, or is a login script calling EXIT?",
        )
    if not collected.steps:
        raise _garbage("session", "no step's output was found (no 'redolab-step:' line)")
    return collected


def _markers(lines: list[str]) -> list[str]:
    """The step each line belongs to: the last step marker before it ('connect' before the first)."""
    current, found = "connect", []
    for line in lines:
        if line.startswith(STEP_PROMPT):
            current = line[len(STEP_PROMPT) :].strip() or "session"  # a cut marker names no step
        found.append(current)
    return found


def _sections(lines: list[str]) -> list[tuple[str, int, int]]:
    """(step, first line index after its marker, end index) of every known step; text before the
    first marker must be blank."""
    starts = [(i, line[len(STEP_PROMPT) :].strip()) for i, line in enumerate(lines) if line.startswith(STEP_PROMPT)]
    before = next((i for i in range(starts[0][0] if starts else len(lines)) if lines[i].strip()), None)
    if before is not None:
        raise _garbage("session", f"line {before + 1}: '{lines[before][:60]}' before the first step")
    sections = []
    for n, (index, step) in enumerate(starts):
        if step not in STEP_COLUMNS:
            raise _garbage("session", f"line {index + 1}: unknown step '{step[:40]}'")
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        sections.append((step, index + 1, end))
    return sections


def _read_step(step: str, lines: list[str], start: int, end: int) -> tuple[str, list]:
    at = next((i for i in range(start, end) if lines[i].strip()), None)
    if at is None:
        raise CollectionError(
            "truncated",
            step,
            "the step printed nothing, not even 'no rows selected'",
            "The session ended early, or FEEDBACK was turned off by a login script.",
        )
    first = lines[at].strip()
    if first == _NO_ROWS:
        _only_blank(step, lines, at + 1, end)
        return "", []
    if first.startswith('"'):
        return "csv", _read_csv(step, lines, at, end)
    if "|" in first:
        return "colsep", _read_colsep(step, lines, at, end)
    raise _garbage(step, f"line {at + 1}: '{first[:60]}' is neither a CSV nor a '|' heading")


def _only_blank(step: str, lines: list[str], start: int, end: int) -> None:
    extra = next((i for i in range(start, end) if lines[i].strip()), None)
    if extra is not None:
        raise _garbage(step, f"line {extra + 1}: '{lines[extra][:60]}' after the step's feedback line")


def _heading(step: str, names: list[str], number: int, *, cut: bool) -> None:
    """The heading names the step's columns in order (`cut`: SQL*Plus cuts a character column's
    heading at the column's width, so a heading may be the start of the name)."""
    columns: Columns = STEP_COLUMNS[step][1]
    expected = [name for name, _ in columns]
    names = [name.strip().upper() for name in names]
    fits = len(names) == len(expected) and all(
        name == want or (cut and name and want.startswith(name)) for name, want in zip(names, expected, strict=False)
    )
    if not fits:
        raise _garbage(
            step, f"line {number}: the heading {', '.join(n[:30] for n in names[:12])} is not {', '.join(expected)}"
        )


def _feedback(step: str, text: str, rows: int, number: int) -> bool:
    """True at the feedback line, whose count must be the rows read."""
    match = _FEEDBACK.match(text.strip())
    if not match:
        return False
    if int(match.group(1)) != rows:
        raise CollectionError(
            "truncated",
            step,
            f"line {number}: SQL*Plus counted {match.group(1)} rows, {rows} were read",
            "Lines of the output were lost: collect again.",
        )
    return True


def _read_csv(step: str, lines: list[str], at: int, end: int) -> list:
    records = csv.reader((line + "\n" for line in lines[at:end]), strict=True)
    rows: list = []
    try:
        _heading(step, next(records), at + 1, cut=False)
        for fields in records:
            number = at + records.line_num
            if not fields or fields == [""]:
                continue
            if len(fields) == 1 and _feedback(step, fields[0], len(rows), number):
                _only_blank(step, lines, at + records.line_num, end)
                return rows
            _add(rows, step, fields, number)
    except csv.Error as error:
        raise _garbage(step, f"line {at + records.line_num}: not CSV as SQL*Plus writes it ({error})") from None
    raise CollectionError(
        "truncated",
        step,
        f"{len(rows)} rows and no 'rows selected' line after them",
        "The output was cut: collect again.",
    )


def _read_colsep(step: str, lines: list[str], at: int, end: int) -> list:
    heading = lines[at]
    _heading(step, heading.split("|"), at + 1, cut=True)
    under = next((i for i in range(at + 1, end) if lines[i].strip()), None)
    if under is None or not _UNDERLINE.match(lines[under].strip()):
        raise _garbage(step, f"line {at + 2}: no dashed underline under the heading")
    rows: list = []
    index = under + 1
    while index < end:
        line, number = lines[index], index + 1
        index += 1
        if not line.strip():
            continue
        if _feedback(step, line, len(rows), number):
            _only_blank(step, lines, index, end)
            return rows
        if line == heading or (line.strip() and _UNDERLINE.match(line.strip())):
            continue  # the heading again at a page break, and its underline
        _add(rows, step, line.split("|"), number)
    raise CollectionError(
        "truncated",
        step,
        f"{len(rows)} rows and no 'rows selected' line after them",
        "The output was cut: collect again.",
    )


# -- Db2 CLP ---------------------------------------------------------------------------------------
def read_db2(
    step: str,
    stdout: str | list[str],
    *,
    stderr: str = "",
    exit_code: int = 0,
    timeout: float | None = None,
    was_stopped: bool = False,
) -> list:
    """The rows `db2 -x` printed for the script of `step`. CLP exit codes: 0 rows, 1 no rows, 2 a
    warning, 4 a Db2 or SQL error, 8 a CLP system error."""
    if was_stopped:
        raise timed_out("db2", step, timeout)
    if command_missing(stdout, stderr, exit_code, "db2"):
        raise not_installed("db2", step, stderr.strip()[-300:])
    lines = _lines(stdout, step)
    error = first_error(lines + _lines(stderr, step), "db2", [step] * (len(lines) + 1))
    if error is not None:
        raise error
    if exit_code not in (0, 1):
        raise CollectionError(
            "exit",
            step,
            f"db2 exited with {exit_code} without an SQL message",
            "Run the script by hand on the host as the instance owner.",
        )
    width = len(STEP_COLUMNS[step][1])
    last_optional = STEP_COLUMNS[step][1][-1][1].endswith("?")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.strip().startswith("SQL0100W"):
            continue
        fields = line.split(None, width - 1)
        if len(fields) == width - 1 and last_optional:
            fields.append("")  # an empty string in the last column: blanks, where NULL would be '-'
        fields = [_db2_null(field, kind) for field, (_, kind) in zip(fields, STEP_COLUMNS[step][1], strict=False)]
        _add(rows, step, fields, number)
    if exit_code == 1 and rows:
        raise CollectionError("exit", step, "db2 exited with 1 (no rows) yet printed rows", "Collect again.")
    return rows


def _db2_null(field: str, kind: str) -> str:
    """The CLP shows NULL as '-' (in a column that may be null, '-' is NULL)."""
    return "" if kind.endswith("?") and field.strip() == "-" else field


def read_db2pd(
    stdout: str, *, stderr: str = "", exit_code: int = 0, timeout: float | None = None, was_stopped: bool = False
) -> str:
    """db2pd -db NAME -hadr's text, for the HADR reader, once it is known to be that text."""
    if was_stopped:
        raise timed_out("db2pd", "hadr", timeout)
    if command_missing(stdout, stderr, exit_code, "db2pd"):
        raise not_installed("db2pd", "hadr", stderr.strip()[-300:])
    said = stdout + "\n" + stderr
    if "Unable to attach to database manager" in said:
        raise CollectionError(
            "instance_down",
            "hadr",
            "db2pd: unable to attach to the database manager",
            "The instance is not started, or db2pd runs as another instance's owner.",
        )
    if "not activated" in said:
        raise CollectionError(
            "instance_down",
            "hadr",
            "db2pd: the database is not activated",
            "Activate the database (or connect to it) before collecting HADR status.",
        )
    _lines(stdout, "hadr")
    if "HADR_ROLE" not in stdout and "HADR is not active" not in stdout:
        raise _garbage("hadr", "no HADR_ROLE line: this is not `db2pd -db NAME -hadr` output")
    if exit_code != 0:
        raise CollectionError("exit", "hadr", f"db2pd exited with {exit_code}", "Run db2pd by hand on the host.")
    return stdout


# -- into the redo import ----------------------------------------------------------------------------
_IMPORT_STEPS = {
    "ArchivedLog": "archived_log",
    "AwrMetric": "awr_sysmetric",
    "AwrStat": "awr_sysstat",
    "Db2LogCapture": "db2_transaction_log",
}


def to_import_csv(rows: list, step: str = "archived_log") -> str:
    """The rows as the CSV an upload of the same query would be (its heading, ISO times of the host's
    clock, plain numbers), for the redo import pipeline: V$ARCHIVED_LOG by default; AWR SYSMETRIC and
    SYSSTAT and MON_GET_TRANSACTION_LOG captures as well (the step named by the rows' type)."""
    if rows:
        step = _IMPORT_STEPS.get(type(rows[0]).__name__, "")
    if step not in _IMPORT_STEPS.values() or any(_IMPORT_STEPS.get(type(row).__name__) != step for row in rows):
        raise ValueError("to_import_csv takes rows of one of: " + ", ".join(_IMPORT_STEPS.values()))
    columns = STEP_COLUMNS[step][1]
    lines = [",".join(name for name, _ in columns)]
    for row in rows:
        lines.append(",".join(_cell(getattr(row, name)) for name in row.__dataclass_fields__))
    return "\r\n".join(lines) + "\r\n"


def _cell(item) -> str:
    if item is None:
        return ""
    if isinstance(item, datetime):
        return item.strftime("%Y-%m-%d %H:%M:%S.%f") if item.microsecond else item.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(item, float):
        return repr(item)
    text = str(item)
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def db2_history_listing(rows: list) -> str:
    """The recovery history's archived logs as the archived log listing the redo import reads (`find
    -printf '%TY-%Tm-%Td %TT %p'`): each file's archive end time, then LOGSTREAMnnnn/Snnnnnnn.LOG with
    the partition as its stream. Sizes are not in the history: the import takes LOGFILSIZ (db2_config).
    A log archived by two methods (LOGARCHMETH1 and 2) is listed once."""
    seen, lines = set(), []
    for row in sorted(rows, key=lambda r: (r.dbpartitionnum, r.first_log, r.end_time)):
        key = (row.dbpartitionnum, row.first_log)
        if key in seen or not re.fullmatch(r"S\d{7}\.LOG", row.first_log):
            continue
        seen.add(key)
        lines.append(f"{row.end_time:%Y-%m-%d %H:%M:%S} LOGSTREAM{row.dbpartitionnum:04d}/{row.first_log}")
    return "".join(line + "\n" for line in lines)


_RELEASE = re.compile(r"^SQL\*Plus: Release (\d{1,3})\.(\d{1,3})\.(\d{1,3})")


def sqlplus_release(version_output: str) -> tuple[int, int, int] | None:
    """The release `sqlplus -V` prints ("SQL*Plus: Release 19.0.0.0.0 - Production"), or None."""
    for line in version_output.splitlines()[:20]:
        match = _RELEASE.match(line.strip())
        if match:
            return int(match.group(1)), int(match.group(2)), int(match.group(3))
    return None


def csv_markup_supported(version_output: str) -> bool:
    """SET MARKUP CSV came with SQL*Plus 12.2; an unknown release is tried with CSV (the SP2 error then
    says old_version, and the '|' session follows)."""
    release = sqlplus_release(version_output)
    return release is None or release[:2] >= (12, 2)
