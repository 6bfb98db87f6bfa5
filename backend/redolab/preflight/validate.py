"""Which DGMGRL VALIDATE command a pasted output is, about which member, and its rows.

The command is read from its prompt line ("DGMGRL> validate database verbose 'orclstby';") when the paste
has one, else from the output's own lines. A paste may hold other commands around it (SHOW CONFIGURATION
before, an empty "DGMGRL>" after): only the VALIDATE command's output is read, and a paste of two VALIDATE
commands is refused (one Pre-flight item is one command). Layouts follow the Broker guides of 19c and
23ai/26ai (see tests/preflight/test_validate.py for the pages and the captured outputs each fixture follows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from redolab.preflight.errors import EvidenceError, printable
from redolab.preflight.evidence import EvidenceRow
from redolab.preflight.text import split_lines
from redolab.preflight.validate_database import database_rows
from redolab.preflight.validate_network import connect_identifier_rows, network_rows, spfile_rows

KINDS = (
    "validate_database",
    "validate_database_strict",
    "validate_database_spfile",
    "validate_network",
    "validate_connect_identifier",
    "validate_static_connect",
)
SUPPORTED = (
    "the output of DGMGRL's VALIDATE DATABASE [VERBOSE] name [STRICT ...|SPFILE], VALIDATE NETWORK "
    "CONFIGURATION FOR {ALL|name}, VALIDATE DGConnectIdentifier identifier or VALIDATE STATIC CONNECT "
    "IDENTIFIER FOR {ALL|name}"
)
_PROMPT = re.compile(r"^\s*DGMGRL>[ ]?(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class ValidateEvidence:
    """`kind`: one of KINDS; `member`: the database (or, for VALIDATE DGConnectIdentifier, the connect
    identifier) the command is about, "ALL" for FOR ALL; `rows`: what it checked, in the output's order;
    `prompt_line`: the DGMGRL> line the command was read from, None when read from the output."""

    kind: str
    member: str
    rows: tuple[EvidenceRow, ...]
    prompt_line: int | None = None


def parse_validate(text: str, *, source: str) -> ValidateEvidence:
    """The rows of one pasted VALIDATE output. `source`: the user's label for the paste, named in errors.
    Raises EvidenceError (and nothing else) for anything that is not one of the supported commands' output."""
    lines = split_lines(text, source=source)
    command = _command(lines, source)
    if command is None:
        numbered = [(i + 1, line) for i, line in enumerate(lines)]
        kind, member, prompt_line = _kind_of(numbered, source), "", None
    else:
        kind, member, prompt_line, block = command
        numbered = [(i + 1, lines[i]) for i in block]
    member, rows = _rows(kind, member, numbered)
    where = prompt_line or next((n for n, line in numbered if line.strip()), 1)
    if not member:
        raise EvidenceError(source, where, f"the database's name: paste the DGMGRL> prompt line of the {_title(kind)}")
    if not rows:
        raise EvidenceError(source, where, f"at least one checked item in the {_title(kind)} output")
    ordered = sorted(rows, key=lambda item: item.line)  # a table's rows are made when the table ends
    return ValidateEvidence(kind, printable(member, 128), tuple(ordered), prompt_line)


def _title(kind: str) -> str:
    return kind.replace("_", " ").replace("validate", "VALIDATE").replace("connect identifier", "DGConnectIdentifier")


def _command(lines: list[str], source: str) -> tuple[str, str, int, range] | None:
    """(kind, member, prompt line number, the output's line indexes) of the one VALIDATE prompt, or None."""
    found = None
    prompts = [(i, m[1]) for i, line in enumerate(lines) if (m := _PROMPT.match(line))]
    for position, (index, command) in enumerate(prompts):
        words = command.strip().rstrip(";").split()
        if not words or words[0].lower() != "validate":
            continue
        if found is not None:
            raise EvidenceError(source, index + 1, "one VALIDATE command's output per paste (a second one starts here)")
        kind, member = _parse_command(words, source, index + 1)
        end = prompts[position + 1][0] if position + 1 < len(prompts) else len(lines)
        found = (kind, member, index + 1, range(index + 1, end))
    return found


def _parse_command(words: list[str], source: str, line: int) -> tuple[str, str]:
    lower = [word.lower() for word in words]
    kind, name = "", ""
    if lower[1:2] == ["database"]:
        rest = words[3:] if lower[2:3] == ["verbose"] else words[2:]
        option = rest[1].lower() if len(rest) > 1 else ""
        if rest and option not in ("datafile", "all"):
            kind = {"spfile": "validate_database_spfile", "strict": "validate_database_strict"}.get(
                option, "validate_database"
            )
            name = rest[0]
    elif lower[1:4] == ["network", "configuration", "for"] and len(words) > 4:
        kind, name = "validate_network", words[4]
    elif lower[1:2] == ["dgconnectidentifier"] and len(words) > 2:
        kind, name = "validate_connect_identifier", words[2]
    elif lower[1:5] == ["static", "connect", "identifier", "for"] and len(words) > 5:
        kind, name = "validate_static_connect", words[5]
    name = name.strip("'\"")
    if not name:
        raise EvidenceError(source, line, SUPPORTED)
    return kind, "ALL" if name.lower() == "all" else name


def _kind_of(numbered: list[tuple[int, str]], source: str) -> str:
    """The command, from the first line only its output prints."""
    for _, line in numbered:
        stripped = line.strip()
        key = stripped.partition(":")[0].strip().lower()
        if key in ("database role", "ready for switchover", "ready for failover", "primary database"):
            return "validate_database"
        if stripped.startswith(("Checking connectivity from instance", "Connecting to instance")):
            return "validate_network"
        if stripped.startswith("At instance") or stripped.endswith(" translates to:"):
            return "validate_connect_identifier"
        if stripped.lower().startswith("no parameter differences found"):
            return "validate_database_spfile"
    for _, line in numbered:
        if line.strip().startswith(("Oracle Clusterware", "Connecting to database", "The static connect identifier")):
            return "validate_static_connect"
    first = next((number for number, line in numbered if line.strip()), 1)
    raise EvidenceError(source, first, f"{SUPPORTED} (none of their lines was found)")


def _rows(kind: str, member: str, numbered: list[tuple[int, str]]) -> tuple[str, list[EvidenceRow]]:
    if kind in ("validate_database", "validate_database_strict"):
        return database_rows(numbered, member, strict=kind == "validate_database_strict")
    if kind == "validate_database_spfile":
        return member, spfile_rows(numbered, member)
    if kind == "validate_connect_identifier":
        identifier, rows = connect_identifier_rows(numbered)
        return member or identifier, rows
    databases, rows = network_rows(numbered)
    return member or ("ALL" if len(databases) > 1 else databases[0] if databases else ""), rows
