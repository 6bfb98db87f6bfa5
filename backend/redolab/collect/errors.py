"""What went wrong in a collection, in the DBA's words: one error type with a kind the job and the page
can act on, the step it happened in, the tool's own message and what to do.

Messages are matched as the tools print them (Oracle Database Error Messages; SQL*Plus User's Guide,
"SQL*Plus Error Messages" and EXIT/WHENEVER SQLERROR; IBM Db2 "SQL messages" and "Command line
processor return codes"): an ORA- or SP2- line at the start of a line, a Db2 SQLnnnnN/W/C message.
"""

from __future__ import annotations

import re

_ORA = re.compile(r"^(ORA-\d{5}): ?(.{0,300})")
_SP2 = re.compile(r"^(SP2-\d{4}): ?(.{0,300})")
_DB2 = re.compile(r"^(SQL\d{4,5}[NCW])\s{1,8}(.{0,300})")
_NOT_FOUND = re.compile(r"(command not found|No such file or directory|not found)$")

KINDS = (
    "not_installed",
    "authentication",
    "privilege",
    "missing_view",
    "no_awr",
    "instance_down",
    "environment",
    "old_version",
    "sqlplus",
    "oracle",
    "db2",
    "nls",
    "garbage",
    "truncated",
    "too_large",
    "timeout",
    "exit",
)


class CollectionError(Exception):
    """kind: one of KINDS; step: the collection step (or 'connect', 'session'); message: what the tool
    said (or what was seen); hint: what the DBA can do."""

    def __init__(self, kind: str, step: str, message: str, hint: str = "") -> None:
        super().__init__(f"{step}: {message}")
        self.kind, self.step, self.message, self.hint = kind, step, message, hint

    def __reduce__(self):  # raised in the child that reads the output, raised again in the caller
        return type(self), (self.kind, self.step, self.message, self.hint)

    def __repr__(self) -> str:
        return f"CollectionError({self.kind!r}, {self.step!r}, {self.message!r}, {self.hint!r})"


_ORACLE_HINTS = {
    "ORA-01017": ("authentication", "Operating-system authentication (/ as sysdba) was refused: run SQL*Plus as the "
                  "Oracle software owner (the host's 'sudo -n -u oracle' setting), or add the SSH user to the OSDBA "
                  "group (dba); check ORACLE_SID and ORACLE_HOME name this database."),
    "ORA-01031": ("privilege", "The user is not in the OSDBA group (/ as sysdba), or lacks SELECT on the V$ views: run "
                  "as the Oracle software owner, or grant SELECT_CATALOG_ROLE."),
    "ORA-01034": ("instance_down", "The instance is not running (or ORACLE_SID names another one): start it, or set "
                  "ORACLE_SID to the running instance."),
    "ORA-27101": ("instance_down", "No instance with this ORACLE_SID and ORACLE_HOME is running on the host: check "
                  "both against `ps -ef | grep pmon`."),
    "ORA-12162": ("environment", "ORACLE_SID is not set for the session: set it on the host's collection settings."),
    "ORA-01012": ("instance_down", "The session is not logged on (the instance went down): try again later."),
}  # fmt: skip
_DB2_HINTS = {
    "SQL30082N": ("authentication", "Db2 refused the user or password: check the instance owner the collection "
                  "runs as."),
    "SQL0551N": ("privilege", "The user lacks EXECUTE on MON_GET_TRANSACTION_LOG or SELECT on the SYSIBMADM view: "
                 "grant SQLADM or DATAACCESS, or run as the instance owner."),
    "SQL1092N": ("privilege", "The user lacks the authority for this command: run as the instance owner."),
    "SQL0204N": ("missing_view", "The view or function does not exist at this Db2 level: MON_GET_TRANSACTION_LOG needs "
                 "Db2 10.1 or later."),
    "SQL1032N": ("instance_down", "The Db2 instance is not started (db2start), or DB2INSTANCE names another one."),
    "SQL1013N": ("environment", "The database name is not in the database directory: check the environment's Db2 "
                 "database name."),
    "SQL1024N": ("environment", "No database connection: the CONNECT TO before the query failed or ran in another "
                 "shell."),
    "SQL1031N": ("environment", "The database directory cannot be found: source the instance's db2profile."),
}  # fmt: skip


def oracle_error(code: str, text: str, step: str) -> CollectionError:
    """The error for an ORA- line: ORA-00942 is 'no AWR' in an AWR step (no Diagnostics Pack grant or
    licence), a missing grant on a V$ view elsewhere."""
    message = f"{code}: {text}".strip()
    if code == "ORA-00942":
        if step.startswith("awr"):
            return CollectionError(
                "no_awr",
                step,
                message,
                "The AWR views (DBA_HIST_*) cannot be read: the user "
                "lacks SELECT_CATALOG_ROLE, or they are hidden where the Diagnostics Pack is not "
                "licensed. Collect without AWR (archived logs give the same redo volumes).",
            )
        return CollectionError(
            "missing_view",
            step,
            message,
            "A dictionary view cannot be read: grant SELECT_CATALOG_ROLE, or run as SYSDBA.",
        )
    kind, hint = _ORACLE_HINTS.get(code, ("oracle", "See the Oracle error's documentation."))
    return CollectionError(kind, step, message, hint)


def sqlplus_error(code: str, text: str, step: str) -> CollectionError:
    message = f"{code}: {text}".strip()
    # SET MARKUP CSV before 12.2: "unknown SET option" (SP2-0158, SP2-0735) or a MARKUP usage error,
    # in the preamble, before the first step
    before_steps = step == "connect" and code in ("SP2-0158", "SP2-0735", "SP2-0281")
    if "MARKUP" in text.upper() or "CSV" in text.upper() or before_steps:
        return CollectionError(
            "old_version",
            step,
            message,
            "This SQL*Plus is older than 12.2 (no SET MARKUP CSV): "
            "collect with the '|'-separated session (oracle_session_colsep).",
        )
    if code == "SP2-0750":
        return CollectionError(
            "environment",
            step,
            message,
            "ORACLE_HOME is not set, or is not an Oracle home: set it in the host's collection settings.",
        )
    return CollectionError(
        "sqlplus",
        step,
        message,
        "SQL*Plus refused a command of the script: is the stand-in, the "
        "script or the SQL*Plus version the expected one?",
    )


def db2_error(code: str, text: str, step: str) -> CollectionError:
    message = f"{code}  {text}".strip()
    kind, hint = _DB2_HINTS.get(code, ("db2", "See the Db2 message's documentation (db2 ? " + code + ")."))
    return CollectionError(kind, step, message, hint)


def not_installed(tool: str, step: str, said: str) -> CollectionError:
    return CollectionError(
        "not_installed",
        step,
        said or f"{tool}: command not found (exit 127)",
        f"{tool} is not on the PATH of the SSH session: set ORACLE_HOME (its bin) or source the "
        "instance's db2profile in the host's collection settings.",
    )


def timed_out(tool: str, step: str, seconds: float | None) -> CollectionError:
    after = f" after {seconds:g} s" if seconds else ""
    return CollectionError(
        "timeout",
        step,
        f"{tool} did not finish{after} and was stopped",
        "The database may be hung, or waiting on a lock or a prompt: look at the host, and at "
        "V$SESSION for the collection's session.",
    )


def first_error(lines: list[str], tool: str, steps: list[str]) -> CollectionError | None:
    """The first error message in `lines` (stdout then stderr), named for the step whose marker came
    last before it (`steps[i]` for line i)."""
    for index, line in enumerate(lines):
        step = steps[index] if index < len(steps) else steps[-1] if steps else "session"
        if tool == "db2":
            match = _DB2.match(line)
            if match and not match.group(1).startswith("SQL0100"):  # SQL0100W: no rows, not an error
                return db2_error(match.group(1), _more(lines, index, match.group(2)), step)
            continue
        match = _ORA.match(line)
        if match:
            return oracle_error(match.group(1), match.group(2), step)
        match = _SP2.match(line)
        if match:
            return sqlplus_error(match.group(1), match.group(2), step)
    return None


def _more(lines: list[str], index: int, text: str) -> str:
    """A Db2 message wraps onto the following lines until a blank one; joined, with its SQLSTATE."""
    parts = [text.strip()]
    for line in lines[index + 1 : index + 6]:
        if not line.strip():
            break
        parts.append(line.strip())
    return " ".join(parts)


def command_missing(stdout: str | list[str], stderr: str, exit_code: int, tool: str) -> bool:
    """The shell could not run the tool: exit 127, or its message about the command (`stdout`: the
    text, or its lines)."""
    if isinstance(stdout, list):
        stdout = next((line for line in reversed(stdout) if line.strip()), "")
    said = (stderr or stdout).strip().splitlines()
    return exit_code == 127 or bool(said and tool in said[-1] and _NOT_FOUND.search(said[-1]))
