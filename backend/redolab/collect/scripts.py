"""The fixed, read-only scripts redolab runs on a database host, with their sha256, and the only text
redolab ever adds to them: SQL*Plus DEFINE lines made from integers it validated, and EXIT.

No user text reaches SQL. The V$ARCHIVED_LOG watermark (incarnation, and the last sequence imported per
thread) arrives as SQL*Plus substitution variables: `DEFINE after_01 = 120` lines generated here from
ints checked against their bounds, so that the script's text, and its sha256, never change. (Bind
variables would need a VARIABLE and an EXEC per value, 66 PL/SQL calls, for the same guarantee.)
Every variable a script uses is defined, with its neutral value when the caller gives none: an
undefined one would make SQL*Plus prompt for it on standard input.

A session is one SQL*Plus run: a session preamble (CSV markup from SQL*Plus 12.2, '|' columns before),
the step scripts with their DEFINE lines, and EXIT. Db2 runs one script per CLP call after CONNECT TO.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

SQL_DIR = Path(__file__).resolve().parent / "sql"
HEADER = "-- redolab-script: "  # the first line of every shipped script (the stand-ins split sessions at it)
STEP_PROMPT = "redolab-step: "  # what each Oracle step's PROMPT prints before its rows

THREAD_SLOTS = 32  # pairs THREAD_nn / AFTER_nn in oracle_archived_log.sql
MAX_THREAD = 65_535  # Oracle redo thread numbers (MAXINSTANCES is far below)
MAX_SEQUENCE = 4_294_967_295  # log sequence numbers and RESETLOGS_ID are unsigned 32-bit in the control file
MAX_DAYS = 36_600


class ShippedScript(NamedTuple):
    path: Path
    sha256: str
    text: str


@dataclass(frozen=True)
class Variable:
    name: str
    low: int
    high: int
    default: int


def _archived_log_variables() -> tuple[Variable, ...]:
    pairs = []
    for slot in range(1, THREAD_SLOTS + 1):
        pairs += [Variable(f"thread_{slot:02d}", 0, MAX_THREAD, 0), Variable(f"after_{slot:02d}", 0, MAX_SEQUENCE, 0)]
    return (Variable("since_days", 1, MAX_DAYS, MAX_DAYS), Variable("resetlogs_id", 0, MAX_SEQUENCE, 0), *pairs)


# The variables each script uses; a script not listed uses none.
VARIABLES: dict[str, tuple[Variable, ...]] = {
    "oracle_archived_log": _archived_log_variables(),
    "oracle_awr": (Variable("awr_days", 1, 3_660, 8),),
    "oracle_archived_log_names": (Variable("names_days", 1, 3_660, 8),),
}
ORACLE_SESSIONS = ("oracle_session_csv", "oracle_session_colsep")
ORACLE_STEPS = {  # script -> the steps (PROMPT markers) it prints, in order
    "oracle_database": ("database",),
    "oracle_instances": ("instances",),
    "oracle_size": ("size", "datafiles"),
    "oracle_redo_logs": ("redo_logs",),
    "oracle_archive_dests": ("archive_dests",),
    "oracle_archived_log": ("archived_log",),
    "oracle_awr": ("awr_sysmetric", "awr_sysstat"),
    "oracle_archived_log_names": ("archived_log_names",),  # the compressibility step's own session
}
OPTIONAL_STEPS = ("oracle_awr", "oracle_archived_log_names")  # not in every collection's session
DB2_SCRIPTS = ("db2_transaction_log", "db2_config", "db2_archived_logs")  # one statement each; step = name
DEFINE_LINE = re.compile(r"^DEFINE ([a-z][a-z0-9_]{0,29}) = (\d{1,10})$")  # what define_lines writes, and nothing else
EXIT_LINE = "EXIT"


def _load() -> dict[str, ShippedScript]:
    found = {}
    for path in sorted(SQL_DIR.glob("*.sql")):
        data = path.read_bytes()
        found[path.stem] = ShippedScript(path, hashlib.sha256(data).hexdigest(), data.decode("utf-8"))
    return found


SCRIPTS: dict[str, ShippedScript] = _load()


def define_lines(name: str, values: Mapping[str, int]) -> list[str]:
    """`DEFINE name = n` for every variable of script `name`: the caller's validated int, else the neutral
    default. Anything but an int within the variable's bounds, or a name the script does not use, is a
    ValueError (no text is ever turned into a DEFINE)."""
    variables = VARIABLES.get(name, ())
    known = {variable.name for variable in variables}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"{name} uses no variable {', '.join(unknown)}")
    lines = []
    for variable in variables:
        value = values.get(variable.name, variable.default)
        if type(value) is not int:  # bool is an int subclass, and text is never a value here
            raise ValueError(f"{name}: {variable.name} must be an int, not {type(value).__name__}")
        if not variable.low <= value <= variable.high:
            raise ValueError(f"{name}: {variable.name} = {value} is outside {variable.low} to {variable.high}")
        lines.append(f"DEFINE {variable.name} = {value}")
    return lines


def script_text(name: str, **validated_ints: int) -> str:
    """One shipped script as sent: its DEFINE lines, then its text unchanged (sha256 as in SCRIPTS)."""
    if name not in SCRIPTS:
        raise ValueError(f"no shipped script '{name}'")
    lines = define_lines(name, validated_ints)
    return "".join(line + "\n" for line in lines) + SCRIPTS[name].text


def archived_log_variables(
    watermarks: Mapping[int, int], *, resetlogs_id: int = 0, since_days: int = MAX_DAYS
) -> dict[str, int]:
    """The variables of oracle_archived_log for `watermarks` (thread -> last sequence imported, in
    incarnation `resetlogs_id`): at most THREAD_SLOTS threads, each once, thread 0 excluded."""
    if len(watermarks) > THREAD_SLOTS:
        raise ValueError(f"{len(watermarks)} threads: the script takes watermarks for {THREAD_SLOTS} at most")
    values = {"resetlogs_id": resetlogs_id, "since_days": since_days}
    for slot, (thread, sequence) in enumerate(sorted(watermarks.items()), 1):
        if type(thread) is not int or thread < 1:
            raise ValueError(f"thread {thread!r} is not a redo thread number (1 or more)")
        values[f"thread_{slot:02d}"], values[f"after_{slot:02d}"] = thread, sequence
    return values


def oracle_session(steps: Iterable[tuple[str, Mapping[str, int]]], *, csv_markup: bool = True) -> str:
    """The whole standard input of one SQL*Plus run: the session preamble, each (script, variables) step
    with its DEFINE lines, and EXIT. `csv_markup` False: the '|' preamble for SQL*Plus before 12.2."""
    parts = [SCRIPTS[ORACLE_SESSIONS[0] if csv_markup else ORACLE_SESSIONS[1]].text]
    for name, values in steps:
        if name not in ORACLE_STEPS:
            raise ValueError(f"'{name}' is not an Oracle step script")
        parts.append(script_text(name, **values))
    return "".join(parts) + EXIT_LINE + "\n"


def db2_script(name: str) -> str:
    """A Db2 script as sent to `db2 -x` (it has no variables)."""
    if name not in DB2_SCRIPTS:
        raise ValueError(f"'{name}' is not a Db2 script")
    return SCRIPTS[name].text


# -- commands ----------------------------------------------------------------------------------------
# Db2 database names: 1 to 8 characters, letters, digits, @, # and $, not starting with a digit.
_DB2_NAME = re.compile(r"[A-Za-z@#$][A-Za-z0-9@#$]{0,7}")
_ORACLE_SID = re.compile(r"[A-Za-z][A-Za-z0-9_$#]{0,63}")
SQLPLUS_ARGUMENTS = ("-S", "-L", "/", "as", "sysdba")
SQLPLUS_VERSION_ARGUMENTS = ("-V",)


def db2_database_name(name: str) -> str:
    if not _DB2_NAME.fullmatch(name):
        raise ValueError(f"'{name}' is not a Db2 database name (1 to 8 letters, digits, @, # or $)")
    return name.upper()


def oracle_sid(sid: str) -> str:
    if not _ORACLE_SID.fullmatch(sid):
        raise ValueError(f"'{sid}' is not an ORACLE_SID (a letter, then letters, digits, _, $ or #)")
    return sid


def db2pd_hadr_arguments(database: str) -> tuple[str, ...]:
    """db2pd's arguments for the HADR status of `database` (db2pd takes no SQL: its arguments are fixed)."""
    return ("-db", db2_database_name(database), "-hadr")
