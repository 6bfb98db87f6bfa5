"""DGMGRL's network VALIDATE outputs as rows: VALIDATE NETWORK CONFIGURATION, VALIDATE STATIC CONNECT
IDENTIFIER, VALIDATE DGConnectIdentifier, and VALIDATE DATABASE ... SPFILE (which connects to both sides).

Each check is a line that starts it ("Checking connectivity from instance ... to instance ...",
"Connecting to database "x" using static connect identifier ...", "At instance a of member 'b'") and a
line that ends it ("Succeeded.", "Failed.", "Connected to instance ..."); a check left open when the next
begins or the output ends is UNKNOWN. A line the terminal wrapped is joined again before it is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from redolab.preflight.evidence import FAIL, PASS, UNKNOWN, WARN, EvidenceRow, broker_message, join_wrapped, row

# DGMGRL 19c to 26ai leave out the quote after the first database's name: on database "North_Sales to instance
_CHECKING = re.compile(
    r'^Checking connectivity from instance "([^"]*)" on database "?([^"\s]*)"? to instance "([^"]*)" '
    r'on database "([^"]*)"'
)
# the same without spaces, for a line a terminal cut and a copy stripped of the blank at the cut
_CHECKING_TIGHT = re.compile(
    r'^Checkingconnectivityfrominstance"([^"]*)"ondatabase"?([^"]*?)"?toinstance"([^"]*)"ondatabase"([^"]*)"'
)
_CONNECTING_INSTANCE = re.compile(r'^Connecting to instance "([^"]*)" on database "([^"]*)"')
_CLUSTERWARE_ON = re.compile(r'^Oracle Clusterware on database "([^"]*)" is available for database restart')
_CLUSTERWARE_OFF = re.compile(r'^Oracle Clusterware is not configured on database "([^"]*)"')
_STATIC_CONNECTING = re.compile(r'^Connecting to database "([^"]*)" using static connect identifier')
_STATIC_ALLOWS = re.compile(r'^The static connect identifier allows for a connection to database "([^"]*)"')
_STATIC_DOES_NOT = re.compile(r'^The static connect identifier does not allow for a connection to database "([^"]*)"')
_SUMMARY = re.compile(r"^Network configuration for (?:all members|member|database)\b.*\bvalidated successfully")
_SUMMARY_FAILED = re.compile(r"^Network configuration\b.*\b(?:failed|errors?|not validated)\b", re.IGNORECASE)
_AT_INSTANCE = re.compile(r"^At instance '?([^'\s]+)'? of member '?([^'\s]+)'?$")
_TRANSLATES = re.compile(r"^(\S+) translates to:$")
_CONNECTED = re.compile(r"^Connected to instance '?([^'\s]+)'? at member '?([^'\s]+)'?$")
_NO_DIFFERENCES = re.compile(r"^No parameter differences found", re.IGNORECASE)
_STARTS = ("Checking connectivity", "Connecting to", "Oracle Clusterware", "The static connect", "Error:", "Warning:")
_NEVER_CONTINUED = (*_STARTS, "Succeeded.", "Failed.", "Connected to", "DGMGRL>", "ORA-", "At instance")


def _checking(text: str) -> tuple[str, str, str, str] | None:
    """(instance, database, instance, database) of a connectivity check line, or None."""
    match = _CHECKING.match(text) or _CHECKING_TIGHT.match(text.replace(" ", ""))
    return None if match is None else (match[1], match[2], match[3], match[4])


def _complete(text: str) -> bool:
    """A check's first line is whole once its pattern matches (a connectivity check) or it reaches its
    closing dots; a message, once its line is shorter than a terminal (join_wrapped)."""
    if text.startswith("Checking connectivity"):
        return _checking(text) is not None
    return text.endswith(".") and not text.startswith(("Error:", "Warning:"))


@dataclass
class _Open:
    check: str
    member: str
    detail: str
    line: int


@dataclass
class _State:
    rows: list[EvidenceRow] = field(default_factory=list)
    open: _Open | None = None
    databases: list[str] = field(default_factory=list)
    last_error: str = ""
    last_member: str = ""  # the member of the check last started: an error printed after "Failed." is its

    def add(self, check: str, member: str, status: str, detail: str, line: int) -> None:
        if member and member not in self.databases:
            self.databases.append(member)
        self.rows.append(row(check, member, status, detail, line))

    def start(self, check: str, member: str, detail: str, line: int) -> None:
        self.close()
        self.open, self.last_error, self.last_member = _Open(check, member, detail, line), "", member

    def close(self, status: str = UNKNOWN, result: str = "no result printed") -> None:
        if self.open is not None:
            detail = f"{self.open.detail}: {result}"
            if status == FAIL and self.last_error:
                detail += f" ({self.last_error})"
            self.add(self.open.check, self.open.member, status, detail, self.open.line)
            self.open = None


def network_rows(lines: list[tuple[int, str]]) -> tuple[list[str], list[EvidenceRow]]:
    """(the databases named, in order; the rows) of VALIDATE NETWORK CONFIGURATION or VALIDATE STATIC
    CONNECT IDENTIFIER output: one row per connectivity check, Clusterware line and static connect check."""
    state, texts, index = _State(), [text for _, text in lines], 0
    while index < len(lines):
        number, stripped = lines[index][0], texts[index].strip()
        if stripped.startswith(_STARTS):
            stripped, index = join_wrapped(texts, index, _complete, _NEVER_CONTINUED)
        index += 1
        if stripped:
            _network_line(state, number, stripped)
    state.close()
    return state.databases, state.rows


def _network_line(state: _State, number: int, stripped: str) -> None:
    if stripped in ("Succeeded.", "Failed."):
        status = PASS if stripped == "Succeeded." else FAIL
        if state.open is not None and state.open.check == "static_connect_identifier" and status == PASS:
            state.open = None  # "The static connect identifier allows ..." follows and makes the row
        else:
            state.close(status, stripped.rstrip("."))
    elif ends := _checking(stripped):
        source = f'instance "{ends[0]}" on database "{ends[1]}"'
        target = f'instance "{ends[2]}" on database "{ends[3]}"'
        for name in (ends[1], ends[3]):
            if name not in state.databases:
                state.databases.append(name)
        state.start("connectivity", ends[1], f"from {source} to {target}", number)
    elif match := _STATIC_CONNECTING.match(stripped):
        state.start("static_connect_identifier", match[1], f'connection to "{match[1]}" by its static service', number)
    elif match := _CLUSTERWARE_ON.match(stripped):
        state.add("clusterware_restart", match[1], PASS, "Oracle Clusterware is available for database restart", number)
    elif match := _CLUSTERWARE_OFF.match(stripped):
        detail = "Oracle Clusterware is not configured: the Broker restarts it through its static connect identifier"
        state.add("clusterware_restart", match[1], PASS, detail, number)
    elif match := _STATIC_ALLOWS.match(stripped):
        state.open = None
        state.add("static_connect_identifier", match[1], PASS, stripped, number)
    elif match := _STATIC_DOES_NOT.match(stripped):
        state.close(FAIL, "Failed")
        state.add("static_connect_identifier", match[1], FAIL, stripped, number)
    elif _SUMMARY.match(stripped):
        state.add("network_configuration", "ALL", PASS, stripped, number)
    elif _SUMMARY_FAILED.match(stripped):
        state.add("network_configuration", "ALL", FAIL, stripped, number)
    elif match := _CONNECTING_INSTANCE.match(stripped):
        if match[2] not in state.databases:
            state.databases.append(match[2])
    else:
        _message(state, number, stripped)


def _message(state: _State, number: int, stripped: str) -> None:
    member = state.open.member if state.open is not None else state.last_member
    message = broker_message(stripped, member, number)
    if message is not None:
        state.rows.append(message)
        state.last_error = message.detail


def connect_identifier_rows(lines: list[tuple[int, str]]) -> tuple[str, list[EvidenceRow]]:
    """(the connect identifier; the rows) of VALIDATE DGConnectIdentifier output (19c and later): one row per
    member instance, PASS when it printed "Connected to instance ... at member ...", FAIL when it printed an
    error instead. The identifier is read from its "<identifier> translates to:" line."""
    state, identifier = _State(), ""
    for number, text in lines:
        stripped = text.strip()
        if match := _AT_INSTANCE.match(stripped):
            state.start("dg_connect_identifier", match[2], f"from instance {match[1]} of member {match[2]}", number)
        elif match := _TRANSLATES.match(stripped):
            identifier = identifier or match[1]
        elif (match := _CONNECTED.match(stripped)) and state.open is not None:
            state.close(PASS, f"connected to instance {match[1]} at member {match[2]}")
        elif stripped:
            _message(state, number, stripped)
            if state.last_error and state.open is not None:
                state.close(FAIL, "no connection")
    state.close()
    return identifier, state.rows


def spfile_rows(lines: list[tuple[int, str]], member: str) -> list[EvidenceRow]:
    """VALIDATE DATABASE [VERBOSE] name SPFILE (23ai and later): "No parameter differences found", or a table
    of parameters with their value on the primary and on the standby (VERBOSE: every parameter compared)."""
    state, sides = _State(), None
    for number, text in lines:
        stripped = text.strip()
        if not stripped:
            continue
        if _NO_DIFFERENCES.match(stripped):
            state.add("spfile", member, PASS, stripped, number)
        elif stripped.lower().startswith("parameter") and "value" in stripped.lower():
            sides = _columns(text)
        elif sides is not None and not stripped.startswith("-"):
            _parameter(state, member, sides, text, number)
        else:
            _message(state, number, stripped)
    return state.rows


def _columns(heading: str) -> list[tuple[int, str]]:
    """Where each value column of a "Parameter  North_Sales Value  South_Sales Value" heading starts."""
    columns, position = [], 0
    for word in heading.split():
        start = heading.index(word, position)
        position = start + len(word)
        if word.lower() != "value" and word.lower() != "parameter" and heading[position:].lstrip().startswith("Value"):
            columns.append((start, word))
    return columns


def _parameter(state: _State, member: str, sides: list[tuple[int, str]], text: str, number: int) -> None:
    if len(sides) != 2:
        _message(state, number, text.strip())
        return
    (first_at, first), (second_at, second) = sides
    name, primary, standby = text[:first_at].strip(), text[first_at:second_at].strip(), text[second_at:].strip()
    if not name or " " in name:
        _message(state, number, text.strip())
        return
    if primary != standby:
        detail = f"{name} is {primary or '(not set)'} on {first} but {standby or '(not set)'} on {second}"
        state.add("spfile_parameter", second or member, WARN, detail, number)
