"""Enumerations (``enums:``) and constants (``constants:``): texts and values checked at load."""

from __future__ import annotations

import pytest
from rulekit import load, program

from interpreter.diagnostics import LudusError

ENUMS = """
enums:
  colour: {source: T 1, values: [red, green, blue]}
constants:
  primaries: {source: T 1, type: list of colour, value: [red, blue]}
  limit: {source: T 1, type: int, value: 3}
tables:
  shade:
    source: T 1
    keys: {c: colour}
    values: int
    rows: {red: 1, green: 2, blue: 3}
functions:
  warm:
    source: T 1
    params: {c: colour}
    returns: bool
    expr: c == "red"
"""


def test_constants_and_typed_tables_are_read_by_rules(tmp_path):
    game = program(tmp_path, 'set out = [limit, count(primaries), shade["green"], warm("red"), "blue" in primaries]',
                   extra=ENUMS)
    assert game.glob["out"] == [3, 2, 2, True, True]


@pytest.mark.parametrize(("code", "message"), [
    ('set out = warm("rde")', r"'rde' is not a colour \(did you mean 'red'\?\)"),
    ('set out = shade["gren"]', r"'gren' is not a colour \(did you mean 'green'\?\)"),
    ('set out = "yellow" in primaries', r"'yellow' is not a colour \(a colour is one of: red, green, blue\)"),
    ('for each c in primaries do\n  if c != "bleu" then\n    set out = c\n  end\nend', r"'bleu' is not a colour"),
    ("let limit = 4", r"'limit' is a constant; 'let' would hide it"),
])
def test_a_misspelt_value_is_a_load_error(tmp_path, code, message):
    with pytest.raises(LudusError, match=message):
        program(tmp_path, code, extra=ENUMS)


@pytest.mark.parametrize(("change", "message"), [
    (("rows: {red: 1, green: 2, blue: 3}", "rows: {red: 1, grene: 2, blue: 3}"), r"unknown colour 'grene'"),
    (("rows: {red: 1, green: 2, blue: 3}", "rows: {red: 1, green: two, blue: 3}"), r"expected a whole number"),
    (("value: [red, blue]", "value: [red, blu]"), r"unknown colour 'blu' \(did you mean 'blue'\?\)"),
    (("values: [red, green, blue]", "values: [red, green, red]"), r"'red' appears twice in enumeration 'colour'"),
    (("colour: {source", "card: {source"), r"'card' already names a type"),
])
def test_bad_data_is_a_load_error(tmp_path, change, message):
    with pytest.raises(LudusError, match=message):
        program(tmp_path, "set out = 1", extra=ENUMS.replace(*change))


def test_an_enum_value_is_text_when_the_rules_run(tmp_path):
    game = program(tmp_path, 'let c = first(primaries)\nset out = "{c}-" + "x"', extra=ENUMS)
    assert game.glob["out"] == "red-x"
    rs = load(tmp_path / "kit2", {"rules.yaml": ENUMS + "procedures:\n  main: {source: T 1, do: pass}\n"})
    assert rs.enums["colour"] == ("red", "green", "blue") and rs.constants["limit"].value == 3
