"""DGMGRL's VALIDATE DATABASE [VERBOSE] name [STRICT ...] output as rows, in the layouts of 19c to 26ai.

The output is a summary ("Database Role:", "Primary Database:", "Ready for Switchover:", "Ready for
Failover:") followed by sections: a title line ending in a colon ("Flashback Database Status:") and, under
it, either one "name: value" line per database or a small table (the log file groups per thread, the
smallest log file sizes, the property settings). VALIDATE DATABASE lists only what it found wrong;
VERBOSE lists every section. Lines this reader does not know are passed over; the Broker's "Warning:" and
"Error:" lines and ORA- codes become rows wherever they stand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from redolab.preflight.errors import printable
from redolab.preflight.evidence import FAIL, PASS, UNKNOWN, WARN, EvidenceRow, broker_message, row

_STATIC_ALLOWS = re.compile(r'^The static connect identifier allows for a connection to database "([^"]*)"')
_SIZE = re.compile(r"^(\d+(?:[.,]\d+)?)\s*([KMGT]?)(?:Bytes|B)?$", re.IGNORECASE)
_SCALE = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
# the sections whose lines are "database: value", each read by the function named
_PER_DATABASE = {
    "flashback database status": "flashback",
    "managed by clusterware": "clusterware",
    "temporary tablespace file information": "temp_files",
    "data file online move in progress": "datafile_move",
    "log files cleared": "log_files_cleared",
}
_TABLES = ("log file groups configuration", "configuration log file sizes", "property settings", "capacity information")


@dataclass
class _State:
    strict: bool
    section: str = ""
    table: list[tuple[int, str]] = field(default_factory=list)  # the current table's lines
    role: str = ""
    primary: str = ""
    names: list[str] = field(default_factory=list)  # databases named in the sections, in order
    rows: list[EvidenceRow] = field(default_factory=list)

    def add(self, check: str, member: str, status: str, detail: str, line: int) -> None:
        if member and member not in self.names:
            self.names.append(member)
        self.rows.append(row(check, member, status, detail, line))


def database_rows(lines: list[tuple[int, str]], member: str, *, strict: bool) -> tuple[str, list[EvidenceRow]]:
    """(the validated database's name, its rows) from the numbered lines of one VALIDATE DATABASE output.
    `member`: the name from the DGMGRL> prompt, or "" to find it in the output (a primary's own name; for a
    standby, the database listed beside the primary). Summary rows get the member; "" when none is found."""
    state = _State(strict)
    for number, text in lines:
        _read_line(state, number, text)
    _close_table(state)
    found = printable(member or _member_of(state), 128)
    rows = [replace(item, member=found) if not item.member else item for item in state.rows]
    return found, rows


def _member_of(state: _State) -> str:
    if state.role.lower().startswith("primary"):
        return state.names[0] if state.names else ""
    others = [name for name in state.names if name.lower() != state.primary.lower()]
    return others[0] if others else ""


def _read_line(state: _State, number: int, text: str) -> None:
    stripped = text.strip()
    if not stripped:
        return
    message = broker_message(stripped, "", number)
    if message is not None:
        state.rows.append(message)
        return
    static = _STATIC_ALLOWS.match(stripped)
    if static:
        state.add("static_connect_identifier", static[1], PASS, stripped, number)
        return
    key, colon, value = stripped.partition(":")
    key, value = key.strip(), value.strip()
    if colon and not value and not any(ch.isdigit() for ch in key):
        _close_table(state)
        state.section = key.lower()
        return
    if any(name in state.section for name in _TABLES):
        state.table.append((number, text))
    elif colon and _summary(state, key.lower(), value, number):
        state.section = ""
    elif colon and state.section:
        _section_line(state, key, value, number)


def _yes_no(value: str, no: str) -> str:
    word = value.split(" ")[0].lower()
    return {"yes": PASS, "no": no}.get(word, UNKNOWN)


def _summary(state: _State, key: str, value: str, number: int) -> bool:
    """Reads a summary line ("Ready for Switchover:  No"); False for any other key."""
    if key == "database role":
        state.role = value
    elif key == "primary database":
        state.primary = value
    elif key == "ready for switchover":
        state.add("ready_for_switchover", "", _yes_no(value, FAIL), f"Ready for Switchover: {value}", number)
    elif key == "ready for failover":
        status = _yes_no(value, FAIL)
        if status == PASS and "not running" in value.lower():
            status = WARN  # ready for a failover because the primary is down: a pre-flight finds it down
        state.add("ready_for_failover", "", status, f"Ready for Failover: {value}", number)
    else:
        return False
    return True


def _section_line(state: _State, key: str, value: str, number: int) -> None:
    section = state.section
    if section in _PER_DATABASE:
        _per_database(state, _PER_DATABASE[section], key, value, number)
    elif section == "standby apply-related information":
        _apply(state, key.lower(), value, number)
    elif section == "transport-related information":
        _transport(state, key.lower(), value, number)
    elif "force logging" in section:
        status = _yes_no(value, FAIL if state.strict else WARN)
        state.add("force_logging", key, status, f"{key}: force logging {value}", number)


def _per_database(state: _State, check: str, key: str, value: str, number: int) -> None:
    word = value.lower()
    strict_fail = FAIL if state.strict else WARN
    if check == "flashback":
        status = {"on": PASS, "off": strict_fail}.get(word, UNKNOWN)
        detail = f"Flashback Database {value}" + (": a failed primary cannot be reinstated" if word == "off" else "")
        state.add(check, key, status, detail, number)
    elif check == "clusterware":
        state.add(check, key, {"yes": PASS, "no": PASS}.get(word, UNKNOWN), f"managed by Clusterware: {value}", number)
    elif check == "temp_files":
        name = key[: -len(" TEMP Files")] if key.upper().endswith(" TEMP FILES") else key
        state.add(check, name, PASS if value.isdigit() else UNKNOWN, f"{value} temporary files", number)
    elif check == "datafile_move":
        status = {"no": PASS, "yes": WARN}.get(word, UNKNOWN)
        state.add(check, key, status, f"data file move in progress: {value}", number)
    else:
        name, _, kind = key.partition(" ")
        status = {"cleared": PASS, "available": PASS, "not cleared": strict_fail}.get(word, UNKNOWN)
        state.add(check, name, status, f"{kind}: {value}", number)


def _apply(state: _State, key: str, value: str, number: int) -> None:
    word = value.lower()
    if key == "apply state":
        status = PASS if word == "running" else UNKNOWN if word == "unknown" else FAIL
        state.add("apply_state", "", status, f"Apply State: {value}", number)
    elif key in ("apply lag", "apply delay"):
        digits = value.split(" ")[0]
        status = UNKNOWN if not digits.isdigit() else WARN if key == "apply delay" and int(digits) > 0 else PASS
        state.add(key.replace(" ", "_"), "", status, f"{key.title()}: {value}", number)


def _transport(state: _State, key: str, value: str, number: int) -> None:
    word = value.lower()
    expected = {"transport on": "yes", "gap status": "no gap", "transport status": "success"}
    if key in expected:
        status = PASS if word == expected[key] else UNKNOWN if word == "unknown" else FAIL
        state.add(key.replace(" ", "_"), "", status, f"{key.title()}: {value}", number)
    elif key == "transport lag":
        status = PASS if value.split(" ")[0].isdigit() else UNKNOWN
        state.add("transport_lag", "", status, f"Transport Lag: {value}", number)


def _close_table(state: _State) -> None:
    table, section = state.table, state.section
    state.table = []
    if not table:
        return
    if "log file groups configuration" in section:
        _log_groups(state, section.split(" ")[0], table)
    elif "configuration log file sizes" in section:
        _log_sizes(state, section.split(" ")[0], table)
    elif "property settings" in section:
        _properties(state, section, table)
    elif "capacity information" in section:
        _capacity(state, table)


def _names(table: list[tuple[int, str]]) -> list[str]:
    """The databases a table's heading names in parentheses, "(orcl)  (orclstby)": the online logs' side first."""
    for _, text in table:
        parts = text.split()
        if parts and all(p.startswith("(") and p.endswith(")") and len(p) > 2 for p in parts):
            return [p[1:-1] for p in parts]
    return []


def _log_groups(state: _State, when: str, table: list[tuple[int, str]]) -> None:
    """Per thread: online redo log groups on one side, standby redo log groups on the other, and the Broker's
    verdict ("Sufficient SRLs", "Insufficient SRLs": a standby needs one more SRL group than the ORL groups)."""
    names = _names(table) or ["the primary", "the standby"]
    online, standby = names[0], names[-1]
    for number, text in table:
        parts = text.split()
        if len(parts) < 4 or not all(p.isdigit() for p in parts[:3]):
            continue
        thread, orls, srls, verdict = parts[0], parts[1], parts[2], " ".join(parts[3:])
        status = {"sufficient srls": PASS, "insufficient srls": FAIL}.get(verdict.lower(), UNKNOWN)
        detail = (
            f"{when} configuration, thread {thread}: {orls} online redo log groups on {online}, "
            f"{srls} standby redo log groups on {standby} ({verdict})"
        )
        state.add(f"standby_redo_log_groups_{when}", standby, status, detail, number)


def _bytes(text: str) -> int | None:
    match = _SIZE.match(text)
    return None if match is None else int(float(match[1].replace(",", ".")) * _SCALE[match[2].upper()])


def _log_sizes(state: _State, when: str, table: list[tuple[int, str]]) -> None:
    """Per thread: the smallest online redo log and the smallest standby redo log ("200 MBytes"); an SRL
    smaller than the ORLs it must hold is never used for them."""
    names = _names(table) or ["the primary", "the standby"]
    for number, text in table:
        parts = text.split()
        if len(parts) != 5 or not parts[0].isdigit():
            continue
        online, standby = _bytes(" ".join(parts[1:3])), _bytes(" ".join(parts[3:5]))
        status = UNKNOWN if online is None or standby is None else PASS if standby >= online else FAIL
        detail = (
            f"{when} configuration, thread {parts[0]}: smallest online redo log {parts[1]} {parts[2]} on "
            f"{names[0]}, smallest standby redo log {parts[3]} {parts[4]} on {names[-1]}"
        )
        state.add(f"standby_redo_log_size_{when}", names[-1], status, detail, number)


def _properties(state: _State, section: str, table: list[tuple[int, str]]) -> None:
    """A property whose values differ between the two databases: WARN (FAIL under STRICT, which checks them)."""
    heading = next((text for _, text in table if text.strip().lower().startswith("property")), "")
    sides = [part.strip() for part in heading.split("Value") if part.strip()]
    first = sides[0].split()[-1] if sides else "the primary"
    second = sides[1] if len(sides) > 1 else "the standby"
    check = section.split(" ")[0].replace("-related", "") + "_property"
    for number, text in table:
        parts = text.split()
        if len(parts) != 3 or text == heading or parts[1] == parts[2]:
            continue
        detail = f"{parts[0]} is {parts[1]} on {first} but {parts[2]} on {second}"
        state.add(check, second, FAIL if state.strict else WARN, detail, number)


def _capacity(state: _State, table: list[tuple[int, str]]) -> None:
    """Instances and threads per database: a standby with fewer instances applies the same redo with less."""
    found = [(n, t.split()) for n, t in table if len(t.split()) == 3 and t.split()[1].isdigit()]
    if not found:
        return
    _, (first, instances, threads) = found[0]
    for number, (name, count, thread_count) in found:
        same = (count, thread_count) == (instances, threads)
        detail = f"{count} instances, {thread_count} threads" + ("" if same else f" ({first}: {instances}, {threads})")
        state.add("capacity", name, PASS if same else WARN, detail, number)
