"""The rules language: expressions evaluate as documented in docs/dsl.md."""

from __future__ import annotations

import pytest
from rulekit import program

from interpreter import LudusError


def value(tmp_path, expr: str, **kw):
    return program(tmp_path, f"set out = {expr}", **kw).glob["out"]


@pytest.mark.parametrize(("expr", "expected"), [
    ("2 + 3 * 4 - 10 / 3", 11),
    ("(2 + 3) * 4", 20),
    ("-7 / 2", -4),          # floor division, like the dice maths in rulebooks
    ("7 % 3", 1),
    ("-(2 - 5)", 3),
    ("1 < 2 and 2 <= 2 and 3 > 2 and (3 >= 4) == false", True),
    ("not (1 == 2) or 1 / 0 == 1", True),   # 'or' short-circuits: 1/0 is never evaluated
    ("false and 1 / 0 == 1", False),
    ("3 in 1..5", True),
    ("6 not in 1..5", True),
    ("1..4", [1, 2, 3, 4]),
    ("5..4", []),
    ("if 2 > 1 then \"yes\" else \"no\"", "yes"),
    ("[1, 2] + [3]", [1, 2, 3]),
    ("\"a\" + \"b\"", "ab"),
    ("\"total {1 + 2} of {[1, 2]}\"", "total 3 of 1, 2"),
    ("count([4, 5, 6])", 3),
    ("sum([4, 5, 6])", 15),
    ("min([4, 2, 6])", 2),
    ("max(4, 9, 6)", 9),
    ("first([7, 8])", 7),
    ("last([7, 8])", 8),
    ("first([])", None),
    ("any([false, true])", True),
    ("all([true, false])", False),
    # with a query: whether some / every item satisfies the condition
    ("all(for x in [1, 2, 3] where x > 1)", False),
    ("all(for x in [2, 3] where x > 1)", True),
    ("any(for x in [1, 2, 3] where x > 5)", False),
    ("any(for x in [0, 7] where x > 5)", True),
    ("any(for x in [0, 1] where x < 1)", True),
    ("all(for x in [] where x > 1)", True),
    ("abs(-3)", 3),
    ("sort([3, 1, 2])", [1, 2, 3]),
    ("reverse([1, 2, 3])", [3, 2, 1]),
    ("unique([1, 1, 2])", [1, 2]),
    ("index_of([5, 6, 7], 7)", 2),
    ("index_of([5, 6, 7], 9)", -1),
    ("next_in([5, 6, 7], 7)", 5),
    ("[x * 2 for x in 1..4 where x % 2 == 0]", [4, 8]),
    ("[x for x in 1..5 where x > 3]", [4, 5]),
    ("count(for x in 1..10 where x > 7)", 3),
    ("sum(x * x for x in 1..3)", 14),
    ("max(x for x in [3, 9, 2])", 9),
    ("[c.value for c in deck]", [1, 2, 3]),
    ("sum(c.value for c in every card where c.value > 1)", 5),
    ("str(two)", "Two"),
    ("two.zone", "deck"),
    ("two.kind", "card"),
    ("count(players)", 2),
    ("player_count", 2),
    ("first(players)", "red"),
    ("count(first(players).hand)", 0),
])
def test_expression_values(tmp_path, expr, expected):
    assert value(tmp_path, expr) == expected


def test_tables_with_ranges_defaults_and_two_keys(tmp_path):
    extra = """
    tables:
      crisis:
        source: T 3
        keys: [roll]
        rows:
          2-4: low
          5: mid
          6-12: high
      fallback:
        source: T 3
        keys: [k]
        rows: {a: 1}
        default: 0
      grid:
        source: T 3
        keys: [row, col]
        rows:
          a: {x: 1, y: 2}
          b: {x: 3, y: 4}
      units:
        source: T 3
        keys: [unit]
        rows:
          legion: {dice: 1, hit: 3}
    """
    game = program(tmp_path, 'set out = [crisis[3], crisis[5], crisis[12], fallback["zz"], grid["b", "y"], units["legion"].hit]',
                   extra=extra)
    assert game.glob["out"] == ["low", "mid", "high", 0, 4, 3]


def test_a_missing_table_row_is_a_located_runtime_error(tmp_path):
    extra = """
    tables:
      crisis:
        source: T 3
        keys: [roll]
        rows: {2-4: low}
    """
    with pytest.raises(LudusError) as err:
        program(tmp_path, "let x = 1\nset out = crisis[x + 8]", extra=extra)
    text = str(err.value)
    assert "table 'crisis' has no row for '9'" in text
    assert "rules.yaml:10:17:" in text  # the lookup, inside the 'do' block


def test_min_of_empty_list_is_an_error_with_a_hint(tmp_path):
    with pytest.raises(LudusError, match=r"min\(\) of an empty list \(check count"):
        value(tmp_path, "min([x for x in [1] where x > 5])")


def test_reading_a_field_of_none_is_located(tmp_path):
    with pytest.raises(LudusError, match=r"rules\.yaml:10:19: error: cannot read 'value' of none"):
        program(tmp_path, "let c = first([])\nset out = c.value")


@pytest.mark.parametrize(("expr", "expected"), [
    ("combinations([1, 2, 3], 2)", [[1, 2], [1, 3], [2, 3]]),
    ("subsets([1, 2])", [[], [1], [2], [1, 2]]),
    # a subset-sum choice: the ways to discard cards worth at least 5
    ("[s for s in subsets([2, 3, 4]) where sum(s) >= 5 and count(s) <= 2]", [[2, 3], [2, 4], [3, 4]]),
])
def test_subsets_for_subset_choices(tmp_path, expr, expected):
    assert value(tmp_path, expr) == expected


def test_too_many_subsets_is_refused(tmp_path):
    with pytest.raises(LudusError, match=r"subsets\(\) would make 131072 lists"):
        value(tmp_path, "count(subsets(1..17))")
