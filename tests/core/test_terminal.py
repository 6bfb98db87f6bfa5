"""Text a remote source wrote, made safe for a terminal and a stored message."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from redolab.cli.output import emit
from redolab.core.terminal import neutralised

UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_escape_sequences_are_removed_and_controls_shown():
    said = "ORA-01017: invalid \x1b[2J\x1b]0;owned\x07username\x9b31m\x00\x08; logon\x1b[1A denied\r\n\tok"
    assert neutralised(said) == "ORA-01017: invalid username??; logon denied?\n\tok"


def test_plain_text_is_unchanged():
    text = "db1, step session: ORA-00942: table or view does not exist\n\tline 2 – ümlaut 😀"
    assert neutralised(text) == text


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_nothing_a_terminal_acts_on_is_left(text):
    assert not UNSAFE.search(neutralised(text))


def test_long_runs_are_linear():
    for unit in ("\x1b[", "\x1b]", "\x9b0;", "\x1b", "\x1b[0000000000", "\x1b]P"):
        for size in (10_000, 40_000):
            assert not UNSAFE.search(neutralised(unit * size + "x"))


def test_cli_text_lines_are_neutralised(capsys):
    emit(False, lambda: {}, ["collection 3: failed", "  db1: \x1b]0;owned\x07ORA-01017 \x1b[2J"])
    assert capsys.readouterr().out == "collection 3: failed\n  db1: ORA-01017 \n"
