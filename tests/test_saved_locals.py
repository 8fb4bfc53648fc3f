"""A pausing procedure saves its locals through its table of them (runtime_helpers.saved_pairs):
the same names, in the same order, as going through every local of the call."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from interpreter import Game, load_ruleset
from interpreter.dsl import runtime_helpers as H


def _a_pausing_function(g: Any, fr: dict) -> dict:
    v_a = 1
    w_1_k = [[1, 2], 0]
    v_seen = [x for x in range(3) if x == v_a]  # v_a is a cell: listed after the plain locals
    if g:
        v_late = 2
    return H._save(fr, locals(), PAIRS)


PAIRS: Any = None


@pytest.mark.parametrize("bound", [True, False])
def test_the_table_lists_locals_in_the_order_locals_does(bound):
    global PAIRS
    code = _a_pausing_function.__code__
    H.note_locals(code)
    PAIRS = H.saved_pairs(code, "_save(fr, locals(), T)")
    assert PAIRS is not None and [k for k, _ in PAIRS] == ["w_1_k", "v_seen", "v_late", "v_a"]
    by_table = _a_pausing_function(bound, {})
    PAIRS = None
    by_every_local = _a_pausing_function(bound, {})
    assert list(by_table.items()) == list(by_every_local.items())
    assert list(by_table) == (["$1_k", "seen", "late", "a"] if bound else ["$1_k", "seen", "a"])


def test_a_procedure_calling_locals_elsewhere_goes_through_every_local():
    code = _a_pausing_function.__code__
    source = "x = _captured(locals(), ('a',))\n_save(fr, locals(), T)\n"
    assert H.saved_pairs(code, source) is None


def _states(rs: Any, seed: int, decisions: int) -> list[str]:
    game = Game.new(rs, 4, seed)
    game.atomic = False
    rand = random.Random(seed)
    out = []
    while not game.over and len(out) < decisions:
        p = game.deciders()[0]
        game.apply(rand.randrange(game.count_choices(p)), p)
        out.append(json.dumps(game.state))
    return out


def test_games_save_the_same_frames_with_and_without_the_tables(monkeypatch):
    rs = load_ruleset("time_of_crisis")
    with_tables = _states(rs, 5, 400)
    save = H._save
    monkeypatch.setitem(rs.codegen.env, "_save", lambda fr, values, pairs: save(fr, values, None))
    assert _states(rs, 5, 400) == with_tables
