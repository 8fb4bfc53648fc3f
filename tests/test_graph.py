"""Graph searches (reachable, cheapest) and divide() with its roundings (docs/dsl.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rulekit import program

from interpreter import LudusError

# a - b - d - e, a - c - d; f alone. Entering a node costs its toll.
NODES = """
kinds:
  node:
    source: T 3
    fields:
      links: list of node
      toll: int
      enemy: bool
entities:
  a: {source: T 3, kind: node, links: [b, c], toll: 1}
  b: {source: T 3, kind: node, links: [a, d], toll: 5}
  c: {source: T 3, kind: node, links: [a, d], toll: 1, enemy: true}
  d: {source: T 3, kind: node, links: [b, c, e], toll: 1}
  e: {source: T 3, kind: node, links: [d], toll: 2}
  f: {source: T 3, kind: node, links: [], toll: 1}
"""


def value(tmp_path, expr: str, dice: list[int] | None = None):
    return program(tmp_path, f"set out = {expr}", extra=NODES, dice=dice).glob["out"]


@pytest.mark.parametrize(("expr", "expected"), [
    ("reachable(s from a over s.links)", ["a", "b", "c", "d", "e"]),      # nearest first
    ("reachable(s from f over s.links)", ["f"]),                          # the start is included
    ("reachable(s from a over [t for t in s.links where not t.enemy])", ["a", "b", "d", "e"]),
    ("reachable(s from [e, f] over s.links)", ["e", "f", "d", "b", "c", "a"]),
    ("reachable(s from a over [t for t in s.links where t != d])", ["a", "b", "c"]),
    ("cheapest(s from a to e over s.links)", 3),                          # each step costs 1
    ("cheapest(s from a to e over [[t, t.toll] for t in s.links])", 4),   # a c d e: 1 + 1 + 2
    ("cheapest(s from a to e over [[t, t.toll] for t in s.links where not t.enemy])", 8),  # a b d e
    ("cheapest(s from a to f over s.links)", None),                       # unreachable
    ("cheapest(s from a to a over s.links)", 0),
    ("cheapest(s from a to [e, b] over s.links)", 1),                     # the nearest goal
    ("cheapest(s from [a, e] to d over [[t, 0] for t in s.links])", 0),
    ("cheapest(s from a to e over [[t, t.toll] for t in s.links]) <= 4", True),
])
def test_graph_searches(tmp_path, expr, expected):
    assert value(tmp_path, expr) == expected


@pytest.mark.parametrize(("expr", "expected"), [
    ('divide(7, 2, "down")', 3),
    ('divide(7, 2, "up")', 4),
    ('divide(7, 2, "half_up")', 4),
    ('divide(7, 2, "half_down")', 3),
    ('divide(-7, 2, "up")', -3),
    ('divide(-7, 2, "down")', -4),
    ('divide(-7, 2, "half_up")', -3),
    ('divide(-7, 2, "half_down")', -4),
    ('divide(7, -2, "down")', -4),
    ('divide(36, 10, "half_up")', 4),      # 3.6 BP of losses are 4 (Pax Romana 10.53)
    ('divide(24, 10, "half_up")', 2),
    ('divide(25, 10, "half_up")', 3),
    ('divide(25, 10, "half_down")', 2),    # a battle ratio of 2.5 is 2:1 (Pax Romana 10.56)
    ('divide(12, 10, "up")', 2),           # 20% of 6 units is 1.2, rounded up (Pax Romana 9.43)
])
def test_divide(tmp_path, expr, expected):
    assert value(tmp_path, expr) == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(-10**6, 10**6), st.integers(-1000, 1000).filter(lambda b: b != 0))
def test_divide_agrees_with_exact_fractions(a, b):
    from fractions import Fraction

    from interpreter.dsl.graph import divide

    class G:
        label_of = staticmethod(str)

    exact = Fraction(a, b)
    floor = exact.numerator // exact.denominator
    frac = exact - floor
    assert divide(G, a, b, "down") == floor
    assert divide(G, a, b, "up") == floor + (frac > 0)
    assert divide(G, a, b, "half_up") == floor + (frac >= Fraction(1, 2))
    assert divide(G, a, b, "half_down") == floor + (frac > Fraction(1, 2))


def _errors(tmp_path, expr: str) -> str:
    with pytest.raises(LudusError) as err:
        value(tmp_path, expr)
    return str(err.value)


@pytest.mark.parametrize(("expr", "message"), [
    ('divide(7, 2, "half")', "unknown rounding 'half'"),
    ('divide(7, 2, "halfup")', "did you mean 'half_up'"),
    ('divide("7", 2, "up")', "divide() divides numbers, not text"),
    ("reachable(s from a to e over s.links)", "reachable() takes no 'to'"),
    ("cheapest(s from a over s.links)", "cheapest() needs 'to GOAL'"),
    ("nearest(s from a over s.links)", "'nearest' does not take 'VAR from START ... over NEXT'"),
    ("reachable(s from a over s.toll)", "'over' must give a list of the next nodes, not a number"),
    ("reachable(s from a over s.lnks)", "node has no field or zone 'lnks'"),
    ("reachable(s from 3 over [])", "a graph search starts from entities, not a number"),
])
def test_mistakes_are_found_when_the_ruleset_loads(tmp_path, expr, message):
    assert message in _errors(tmp_path, expr)


@pytest.mark.parametrize(("expr", "message"), [
    ("cheapest(s from a to e over [[t, 0 - 1] for t in s.links])", "a step costs -1; costs are 0 or more"),
    ("reachable(s from a over [1, 2])", "a step is an entity or an [entity, cost] pair, not 1"),
    ("reachable(s from out over s.links)", "a graph search starts from entities, not none"),
    ("divide(1, 0, \"up\")", "division by zero"),
])
def test_bad_values_are_located_runtime_errors(tmp_path, expr, message):
    text = _errors(tmp_path, expr)
    assert message in text
    assert "rules.yaml:" in text


def test_a_search_counts_its_steps_as_work(tmp_path):
    # a ring of 400 nodes searched from every node: 400 * 800 steps, past a small work budget
    nodes = "\n".join(f"  n{i}: {{source: T 3, kind: node, links: [n{(i + 1) % 400}, n{(i - 1) % 400}]}}"
                      for i in range(400))
    extra = NODES.split("entities:")[0] + "entities:\n" + nodes + "\n"
    with pytest.raises(LudusError) as err:
        program(tmp_path, "set out = sum(count(reachable(s from x over s.links)) for x in every node)",
                extra=extra)
    assert "too much work before a decision" in str(err.value)
