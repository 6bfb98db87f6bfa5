"""DGMGRL VALIDATE outputs, read into rows.

Where each fixture's layout comes from (tests/fixtures/preflight/):
- validate_database_19c_standby_verbose.txt, validate_database_19c_primary.txt: the VALIDATE DATABASE
  [VERBOSE] layout of Oracle Data Guard Broker 19c (examples 7-6 to 7-9, "VALIDATE DATABASE Output in
  Brief/Verbose Format for a Primary/Physical Standby", listed at
  https://docs.oracle.com/en/database/oracle/oracle-database/19/dgbkr/loe.html), as 19.3 to 19.15 print it
  in outputs captured in public runbooks (sections, two-space indents, padded "NO             " values,
  "Insufficient SRLs" with "Warning: standby redo logs not configured for thread 1 on ...": also
  https://christian-gohmann.de/2019/07/19/insufficient-srls-reported-by-dgmgrl). Names and counts are ours.
- validate_database_19c_not_ready.txt: a 19c standby whose primary is unreachable, as captured by
  `dgmgrl -silent -echo ... 'validate database mars'` (tab indents, "Unknown" values, "Ready for
  Failover: Yes (Primary Not Running)").
- validate_database_23ai_strict_all.txt: VALIDATE DATABASE VERBOSE name STRICT ALL, format and STRICT
  options of https://docs.oracle.com/en/database/oracle/oracle-database/26/dgbkr/validate-database.html
  (23ai/26ai). No 23ai STRICT output was found captured: the sections are the VERBOSE ones above; what
  STRICT changes here is the verdict (a difference it checks is a FAIL, not a WARN).
- validate_network_23ai_all.txt: example 2 of
  https://docs.oracle.com/en/database/oracle/oracle-database/26/dgbkr/validate-network-configuration.html
  (with the final "Network configuration for all members validated successfully" line);
  validate_network_19c_failed.txt: the 19c layout of the same command (captured 19.3/19.15 outputs:
  "Connected to" lines, static connect checks), with one connection and one static service failing.
- validate_static_connect_all.txt: the examples of
  https://docs.oracle.com/en/database/oracle/oracle-database/26/dgbkr/validate-static-connect-identifier.html
- validate_dgconnectidentifier.txt: example 1 of
  https://docs.oracle.com/en/database/oracle/oracle-database/26/dgbkr/validate-dgconnectidentifier.html
  plus a third member whose instance cannot resolve the identifier (ORA-12154).
- validate_database_spfile*.txt: https://docs.oracle.com/en/database/oracle/oracle-database/26/dgbkr/
  validate-database-spfile.html documents "No parameter differences found" and "a list of the parameters
  with their differing values on the primary and the specified standby"; the list's layout is not shown
  there, so the table is modelled on the property settings tables of VALIDATE DATABASE VERBOSE.
"""

from __future__ import annotations

import pytest

from redolab.preflight.errors import EvidenceError
from redolab.preflight.evidence import FAIL, PASS, UNKNOWN, WARN
from redolab.preflight.text import read_text
from redolab.preflight.validate import parse_validate
from tests.preflight.helpers import bom, crlf, essence, fixture, tabbed, without_prompts, wrapped


def _rows(evidence, check, member=None):
    return [r for r in evidence.rows if r.check == check and (member is None or r.member == member)]


def test_a_19c_standby_verbose():
    evidence = parse_validate(fixture("validate_database_19c_standby_verbose.txt"), source="orclstby validate")
    assert (evidence.kind, evidence.member, evidence.prompt_line) == ("validate_database", "orclstby", 1)
    assert [(r.status, r.line) for r in _rows(evidence, "ready_for_switchover")] == [(PASS, 6)]
    assert _rows(evidence, "ready_for_failover")[0].status == PASS  # Yes (Primary Running)
    assert {r.member: r.status for r in _rows(evidence, "flashback")} == {"orcl": PASS, "orclstby": WARN}
    insufficient = _rows(evidence, "standby_redo_log_groups_current")[0]
    assert insufficient.status == FAIL and insufficient.line == 51
    assert insufficient.detail == (
        "current configuration, thread 1: 3 online redo log groups on orcl, 2 standby redo log groups on "
        "orclstby (Insufficient SRLs)"
    )
    assert [r.status for r in _rows(evidence, "standby_redo_log_groups_future")] == [FAIL, FAIL]
    assert [r.status for r in _rows(evidence, "standby_redo_log_size_current")] == [FAIL, PASS]
    warning = _rows(evidence, "broker_message")[0]
    assert (warning.status, warning.line) == (WARN, 59)
    assert warning.detail == "Warning: standby redo logs not configured for thread 1 on orcl"
    assert [r.detail for r in _rows(evidence, "transport_property")] == [
        "LogXptMode is ASYNC on orcl but SYNC on orclstby"
    ]
    assert _rows(evidence, "capacity", "orclstby")[0].status == WARN  # one instance against the primary's two
    assert _rows(evidence, "log_files_cleared", "orclstby")[0].status == WARN  # Not Cleared
    assert [r.line for r in evidence.rows] == sorted(r.line for r in evidence.rows)


def test_a_19c_primary_without_its_prompt_is_named_from_its_sections():
    evidence = parse_validate(fixture("validate_database_19c_primary.txt"), source="primary")
    assert (evidence.kind, evidence.member, evidence.prompt_line) == ("validate_database", "orcl", None)
    assert {r.status for r in evidence.rows} == {PASS}
    assert _rows(evidence, "static_connect_identifier")[0].line == 12


def test_a_standby_whose_primary_is_unreachable():
    evidence = parse_validate(fixture("validate_database_19c_not_ready.txt"), source="mars")
    assert evidence.member == "mars"  # the database beside the primary venus
    assert _rows(evidence, "ready_for_switchover")[0].status == FAIL
    assert _rows(evidence, "ready_for_failover")[0].status == WARN  # Yes (Primary Not Running)
    assert _rows(evidence, "broker_message")[0].detail == "Warning: primary database was not reachable"
    assert _rows(evidence, "transport_on")[0].status == FAIL
    assert {r.status for r in _rows(evidence, "log_files_cleared")} == {UNKNOWN}
    assert _rows(evidence, "temp_files", "venus")[0].status == UNKNOWN


def test_strict_all_fails_what_it_checks():
    evidence = parse_validate(fixture("validate_database_23ai_strict_all.txt"), source="23ai strict")
    assert (evidence.kind, evidence.member) == ("validate_database_strict", "South_Sales")
    assert _rows(evidence, "flashback", "South_Sales")[0].status == FAIL  # WARN without STRICT
    assert _rows(evidence, "log_files_cleared", "South_Sales")[0].status == FAIL
    assert _rows(evidence, "transport_property")[0].detail == "NetTimeout is 30 on North_Sales but 15 on South_Sales"
    assert _rows(evidence, "apply_state")[0].status == FAIL
    error = _rows(evidence, "broker_message")[0]
    assert (error.status, error.detail) == (FAIL, "Error: ORA-16766: Redo Apply is stopped.")


def test_the_same_output_without_strict_warns():
    text = fixture("validate_database_23ai_strict_all.txt").replace(" STRICT ALL;", ";")
    evidence = parse_validate(text, source="23ai")
    assert evidence.kind == "validate_database"
    assert _rows(evidence, "flashback", "South_Sales")[0].status == WARN
    assert _rows(evidence, "transport_property")[0].status == WARN


def test_network_configuration_for_all_23ai():
    evidence = parse_validate(fixture("validate_network_23ai_all.txt"), source="network")
    assert (evidence.kind, evidence.member) == ("validate_network", "ALL")
    checks = _rows(evidence, "connectivity")
    assert [(r.member, r.status, r.line) for r in checks] == [
        ("North_Sales", PASS, 5), ("North_Sales", PASS, 11), ("South_Sales", PASS, 17), ("South_Sales", PASS, 21),
    ]  # fmt: skip
    assert checks[0].detail == (
        'from instance "north_sales1" on database "North_Sales" to instance "south_sales1" on database '
        '"South_Sales": Succeeded'
    )
    assert [r.member for r in _rows(evidence, "clusterware_restart")] == ["North_Sales", "South_Sales"]
    assert _rows(evidence, "network_configuration")[0].status == PASS


def test_a_failed_connection_names_both_ends_and_its_error():
    evidence = parse_validate(fixture("validate_network_19c_failed.txt"), source="network 19c")
    failed = _rows(evidence, "connectivity")[0]
    assert (failed.status, failed.member, failed.line) == (FAIL, "orcl", 4)
    assert 'instance "orcl" on database "orcl"' in failed.detail
    assert 'instance "orclstby" on database "orclstby"' in failed.detail
    error = _rows(evidence, "broker_message", "orcl")[0]
    assert error.status == FAIL and "ORA-12514" in error.detail
    static = {r.member: r.status for r in _rows(evidence, "static_connect_identifier")}
    assert static == {"orcl": PASS, "orclstby": FAIL}


def test_static_connect_identifier_for_all():
    evidence = parse_validate(fixture("validate_static_connect_all.txt"), source="static")
    assert (evidence.kind, evidence.member) == ("validate_static_connect", "ALL")
    assert [(r.check, r.member, r.status) for r in evidence.rows] == [
        ("clusterware_restart", "North_Sales", PASS),
        ("clusterware_restart", "South_Sales", PASS),
        ("static_connect_identifier", "South_Sales", PASS),
    ]


def test_dg_connect_identifier():
    evidence = parse_validate(fixture("validate_dgconnectidentifier.txt"), source="identifier")
    assert (evidence.kind, evidence.member) == ("validate_connect_identifier", "north_sales")
    rows = _rows(evidence, "dg_connect_identifier")
    assert [(r.member, r.status) for r in rows] == [("South_Sales", PASS), ("North_Sales", PASS), ("West_Sales", FAIL)]
    assert "ORA-12154" in rows[2].detail


def test_spfile_differences_and_none():
    evidence = parse_validate(fixture("validate_database_spfile.txt"), source="spfile")
    assert (evidence.kind, evidence.member) == ("validate_database_spfile", "South_Sales")
    assert [(r.status, r.detail) for r in evidence.rows] == [
        (WARN, "sga_target is 16G on North_Sales but 8G on South_Sales"),
        (WARN, "parallel_max_servers is 160 on North_Sales but 80 on South_Sales"),
    ]
    none = parse_validate(fixture("validate_database_spfile_none.txt"), source="spfile")
    assert [(r.check, r.status, r.line) for r in none.rows] == [("spfile", PASS, 6)]


ALL = [
    "validate_database_19c_standby_verbose.txt", "validate_database_19c_primary.txt",
    "validate_database_19c_not_ready.txt", "validate_database_23ai_strict_all.txt", "validate_network_23ai_all.txt",
    "validate_network_19c_failed.txt", "validate_static_connect_all.txt", "validate_dgconnectidentifier.txt",
    "validate_database_spfile.txt", "validate_database_spfile_none.txt",
]  # fmt: skip


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("variant", [crlf, bom, lambda t: bom(crlf(t)), lambda t: t.replace("\n", "\r")])
def test_line_ends_and_byte_order_marks_change_nothing(name, variant):
    plain = parse_validate(fixture(name), source=name)
    assert parse_validate(variant(fixture(name)), source=name) == plain


@pytest.mark.parametrize("name", ALL)
def test_utf16_and_utf8_bytes_read_alike(name):
    text = fixture(name)
    for data in (text.encode("utf-16"), b"\xef\xbb\xbf" + text.encode(), crlf(text).encode("utf-16")):
        assert parse_validate(read_text(data, source=name), source=name) == parse_validate(text, source=name)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("validate_database_19c_standby_verbose.txt", "validate_database"),
        ("validate_database_23ai_strict_all.txt", "validate_database"),  # STRICT is only in the command
        ("validate_network_23ai_all.txt", "validate_network"),
        ("validate_network_19c_failed.txt", "validate_network"),
        ("validate_static_connect_all.txt", "validate_static_connect"),
        ("validate_dgconnectidentifier.txt", "validate_connect_identifier"),
    ],
)
def test_without_the_prompt_line_the_output_names_the_command(name, kind):
    with_prompt = parse_validate(fixture(name), source=name)
    alone = parse_validate(without_prompts(fixture(name)), source=name)
    assert (alone.kind, alone.member, alone.prompt_line) == (kind, with_prompt.member, None)
    if kind == with_prompt.kind:
        assert essence(alone.rows) == essence(with_prompt.rows)


def test_an_spfile_comparison_without_its_prompt_asks_for_it():
    with pytest.raises(EvidenceError, match=r"spfile paste, line 1: expected the database's name"):
        parse_validate(without_prompts(fixture("validate_database_spfile_none.txt")), source="spfile paste")


@pytest.mark.parametrize(
    "name",
    ["validate_network_23ai_all.txt", "validate_network_19c_failed.txt", "validate_static_connect_all.txt",
     "validate_dgconnectidentifier.txt"],
)  # fmt: skip
@pytest.mark.parametrize("columns", [80, 100, 132])
def test_lines_a_terminal_wrapped_read_as_one(name, columns):
    assert essence(parse_validate(wrapped(fixture(name), columns), source=name).rows) == essence(
        parse_validate(fixture(name), source=name).rows
    )


@pytest.mark.parametrize("name", ["validate_database_19c_standby_verbose.txt", "validate_database_23ai_strict_all.txt"])
def test_tab_indents_read_as_spaces(name):
    assert essence(parse_validate(tabbed(fixture(name)), source=name).rows) == essence(
        parse_validate(fixture(name), source=name).rows
    )


def test_other_commands_around_the_validate_are_passed_over():
    text = (
        "DGMGRL> show configuration\n\nConfiguration - dg\n\n  Members:\n  orcl - Primary database\n"
        "    Warning: ORA-16809: multiple warnings detected for the member\n\n"
        + fixture("validate_database_19c_primary.txt").replace("\n", "\n", 1)
    )
    text = text.replace("\n\n  Database Role:", "\nDGMGRL> validate database orcl;\n\n  Database Role:", 1)
    evidence = parse_validate(text, source="session")
    assert (evidence.kind, evidence.member, evidence.prompt_line) == ("validate_database", "orcl", 9)
    assert not _rows(evidence, "broker_message")  # the ORA-16809 belongs to SHOW CONFIGURATION


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("hello\nworld\n", 1, "the output of DGMGRL's VALIDATE DATABASE"),
        ("\n\nDGMGRL> validate fast_start failover\n  Fast-Start Failover:  Disabled\n", 3, "VALIDATE DATABASE"),
        ("DGMGRL> validate database orcl\n  Ready for Switchover:  Yes\n"
         "DGMGRL> validate database orclstby\n  Ready for Switchover:  Yes\n", 3, "one VALIDATE command"),
        ("DGMGRL> validate database orcl\n\nDGMGRL> \n", 1, "at least one checked item"),
        ("  Database Role:     Physical standby database\n  Ready for Switchover:  Yes\n", 1, "the database's name"),
        ("", 1, "the output of DGMGRL's"),
    ],
)  # fmt: skip
def test_what_is_not_a_validate_output_is_refused_with_its_line(text, line, expected):
    with pytest.raises(EvidenceError) as caught:
        parse_validate(text, source="my paste")
    assert caught.value.line == line and caught.value.source == "my paste"
    assert str(caught.value).startswith(f"my paste, line {line}: expected ")
    assert expected in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_limits_name_the_line():
    long_line = "  Ready for Switchover:  Yes\n" + "x" * 4001 + "\n"
    with pytest.raises(EvidenceError, match=r"^p, line 2: expected a line of at most 4,000 characters"):
        parse_validate(long_line, source="p")
    with pytest.raises(EvidenceError, match=r"^p, the text: expected at most 1024 KiB"):
        parse_validate("  Ready for Switchover:  Yes\n" * 40_000, source="p")
    with pytest.raises(EvidenceError, match="UTF-16"):
        parse_validate("  Ready for Switchover:  Yes\n".encode("utf-16-le").decode("latin-1"), source="p")
    with pytest.raises(EvidenceError, match="UTF-8 or UTF-16"):
        read_text(b"\xff\xfe"[1:] + b"\x80abc", source="p")


def test_control_characters_never_come_back():
    text = "DGMGRL> validate database orcl\n  Ready for Switchover:  Yes\n  Warning: disk\x1b[31m full\x07\n"
    evidence = parse_validate(text, source="label\x1b[2J")
    assert evidence.rows[1].detail == "Warning: disk[31m full"
    with pytest.raises(EvidenceError) as caught:
        parse_validate("nothing", source="label\x1b[2J")
    assert "\x1b" not in str(caught.value)
