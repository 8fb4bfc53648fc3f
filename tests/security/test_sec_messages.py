"""Messages stay readable whatever a hostile input quotes (issue 11).

A mistake may be a name of a million characters; the located error must still be one short
line that says where, what, and how long the quoted text was.
"""

from __future__ import annotations

from pathlib import Path

from hostile import assert_refused, edited_base, run_ludus

from interpreter.diagnostics import MESSAGE_MAX, QUOTE_MAX, Diagnostic, Loc, shorten


def test_a_long_quoted_name_keeps_its_start_and_says_its_length() -> None:
    text = shorten("unknown zone '" + "z" * 100_000 + "'")
    assert text.startswith("unknown zone 'zzz")
    assert text.endswith("…' (100,000 characters)")
    assert len(text) < 2 * QUOTE_MAX


def test_short_messages_are_untouched() -> None:
    message = "unknown zone 'bagg' (did you mean 'bag'?)"
    assert shorten(message) == message
    assert str(Diagnostic(Loc("x.yaml", 3, 4), "unknown zone 'bagg'", "did you mean 'bag'?")) == \
        "x.yaml:3:4: error: unknown zone 'bagg' (did you mean 'bag'?)"


def test_a_newline_in_a_quoted_name_is_escaped_so_the_message_stays_one_line() -> None:
    line = str(Diagnostic(Loc("x.yaml", 3, 4), "unknown zone 'bag\n'\x00"))
    assert line == "x.yaml:3:4: error: unknown zone 'bag\\n'\\x00"
    assert "\n" not in line


def test_a_long_unquoted_message_is_cut_with_its_length() -> None:
    text = shorten("x" * 50_000)
    assert len(text) <= MESSAGE_MAX
    assert text.endswith("(50,000 characters in all)")


def test_a_million_character_zone_name_gives_one_short_located_line(tmp_path: Path, snapshot) -> None:
    edited_base(tmp_path, "game.yaml", "    zone: bag\n", "    zone: " + "q" * 1_000_000 + "\n")
    outcome = run_ludus(["validate", "r"], cwd=tmp_path)
    assert_refused(outcome)
    assert len(outcome.err) < 2_000
    assert outcome.err == snapshot
