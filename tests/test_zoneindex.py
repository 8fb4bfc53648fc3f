"""Queries that look a zone's items up by a field (dsl/zoneindex.py): the same results, in the
same order, the same work and the same errors as going through the zone, and never stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rulekit import load

from interpreter import Game
from interpreter.dsl import zoneindex
from interpreter.dsl.queries import Queries
from interpreter.model import RuleFault, Ruleset

RULES = """
zones:
  bag:
    source: T 1
    holds: token
    visibility: public
globals:
  wanted:
    source: T 1
    type: int
    initial: 2
functions:
  with_value:
    source: T 1
    params: {v: int}
    returns: list of token
    expr: "[t for t in bag where t.value == v]"
  first_owned:
    source: T 1
    params: {v: int, p: player}
    returns: token
    expr: first(for t in bag where v == t.value and t.owner == p)
  counted:
    source: T 1
    params: {v: int}
    returns: int
    expr: count(for t in bag where t.value == v and t.value >= 0)
  doubled:
    source: T 1
    params: {p: player}
    returns: list of int
    expr: "[2 * t.value for t in bag where t.owner == p and t.value != 3]"
  of_wanted:
    source: T 1
    params: {p: player}
    returns: list of token
    expr: "[t for t in bag where t.value == wanted and t.owner == p]"
procedures:
  main:
    source: T 2
    do: |
      choose x from [1, 2] by players[0]
"""

PLAYERS = ["red", "blue"]


@pytest.fixture(scope="module")
def rulesets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ruleset, Ruleset]:
    """The rules compiled with lookups, and compiled as before (every query goes through its zone)."""
    indexed = load(tmp_path_factory.mktemp("indexed"), {"rules.yaml": RULES})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LUDUS_CACHE", "off")
        mp.setattr(Queries, "lookup_key", lambda self, q, st, scope: None)
        plain = load(tmp_path_factory.mktemp("plain"), {"rules.yaml": RULES})
    return indexed, plain


def _game(rs: Ruleset, tokens: list[tuple[int, int]]) -> Game:
    game = Game.new(rs, 2, 1)
    for value, owner in tokens:
        game.create("token", {"value": value, "owner": PLAYERS[owner]}, "bag", None)
    return game


def _call(rs: Ruleset, game: Game, name: str, **args: Any) -> Any:
    return rs.functions[name].fn(game, args)


def _place(fault: RuleFault) -> tuple[str, int, int]:
    """Where a fault is, but for the folder (the two rulesets are loaded from two)."""
    assert fault.loc is not None
    return Path(fault.loc.file).name, fault.loc.line, fault.loc.col


def _scan(game: Game, v: int) -> list[str]:
    return [t for t in game.zones["bag"] if game.ents[t]["value"] == v]


def _index_of_bag(game: Game) -> Any:
    """What the slot of 'value' holds for the bag's list (None: nothing)."""
    zones = game.memos[game.rs.index_slots["value"]]
    entry = zones.get(("value", id(game.zones["bag"])))
    return None if entry is None else entry[1]


def test_the_queries_are_compiled_as_lookups(rulesets: tuple[Ruleset, Ruleset]) -> None:
    rs, plain = rulesets
    assert sorted(rs.index_slots) == ["owner", "value"] and not plain.index_slots
    sources = "".join(rs.codegen.sources())
    assert sources.count("_ix(g, g.zones['bag'], 'value', ") == 4
    assert "_ix(g, g.zones['bag'], 'owner', v_p)" in sources
    # the indexes' slot follows the functions' and is forgotten as they are
    assert set(rs.index_slots.values()) == {5} and rs.memo_count == 6 and 5 in rs.memo_volatile
    assert 5 in rs.memo_readers[("zones",)]
    assert 5 in rs.memo_readers[("field", "value")] and 5 in rs.memo_readers[("field", "owner")]
    assert 5 not in rs.memo_readers.get(("field", "score"), rs.memo_always)


@settings(max_examples=60, deadline=None)
@given(tokens=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1)), max_size=40),
       asks=st.lists(st.tuples(st.integers(-1, 6), st.integers(0, 1)), min_size=1, max_size=12),
       every_size=st.booleans())
def test_lookups_give_what_going_through_the_zone_gives(rulesets: tuple[Ruleset, Ruleset],
                                                        tokens: list[tuple[int, int]], asks: list[tuple[int, int]],
                                                        every_size: bool) -> None:
    rs, plain = rulesets
    with pytest.MonkeyPatch.context() as mp:
        if every_size:  # small zones are gone through without an index: here they are indexed too
            mp.setattr(zoneindex, "INDEXED_FROM", 1)
        game, before = _game(rs, tokens), _game(plain, tokens)
        for v, p in asks:
            for name in ("with_value", "first_owned", "counted", "doubled", "of_wanted"):
                args = {"v": v, "p": PLAYERS[p]}
                got, want = _call(rs, game, name, **args), _call(plain, before, name, **args)
                assert got == want, (name, args)
            assert _call(rs, game, "with_value", v=v) == _scan(game, v)
        assert game.work == before.work  # the same work counted
        if len({v for v, _p in asks}) > 1 and len(tokens) >= max(1, zoneindex.INDEXED_FROM):
            assert isinstance(_index_of_bag(game), dict)  # looked up in an index, not gone through


def test_a_result_is_a_list_of_its_own(rulesets: tuple[Ruleset, Ruleset]) -> None:
    rs, _plain = rulesets
    game = _game(rs, [(i % 3, 0) for i in range(20)])
    results = [_call(rs, game, "with_value", v=v) for v in (0, 1, 2)]
    index = _index_of_bag(game)
    assert isinstance(index, dict)
    assert all(r is not x for r in results for x in index.values())


def _indexed_game(rs: Ruleset) -> Game:
    """A game whose bag (20 tokens, values 0-3, owners alternating) is indexed by value."""
    game = _game(rs, [(i % 4, i % 2) for i in range(20)])
    game.create("token", {"value": 1}, "pile", None)
    for v in range(4):
        assert _call(rs, game, "with_value", v=v) == _scan(game, v)
    assert isinstance(_index_of_bag(game), dict)
    return game


@pytest.mark.parametrize("change", ["move out", "move in", "set", "increase", "shuffle", "create", "destroy"])
def test_no_lookup_reads_a_stale_index(rulesets: tuple[Ruleset, Ruleset], change: str) -> None:
    rs, _plain = rulesets
    game = _indexed_game(rs)
    bag = game.zones["bag"]
    if change == "move out":
        game.move(bag[1], "pile", False, None)
    elif change == "move in":
        game.move(game.zones["pile"][0], "bag", True, None)
    elif change == "set":
        game.set_field(bag[0], "value", 1, "=", None)
    elif change == "increase":
        game.set_field(bag[2], "value", 1, "-", None)
    elif change == "shuffle":
        game.shuffle("bag")
    elif change == "create":
        game.create("token", {"value": 1}, "bag", None)
    else:
        game.destroy(bag[1], None)
    assert _index_of_bag(game) is None
    for v in range(4):
        assert _call(rs, game, "with_value", v=v) == _scan(game, v)
        assert _call(rs, game, "counted", v=v) == len(_scan(game, v))


def test_a_field_no_lookup_reads_keeps_the_index(rulesets: tuple[Ruleset, Ruleset]) -> None:
    rs, _plain = rulesets
    game = _indexed_game(rs)
    game.set_field("red", "score", 3, "=", None)
    assert isinstance(_index_of_bag(game), dict)


def test_copies_sharing_memos_share_indexes_only_while_both_agree(rulesets: tuple[Ruleset, Ruleset]) -> None:
    rs, _plain = rulesets
    game = _indexed_game(rs)
    copy = game.copy(memos=True)
    assert _index_of_bag(copy) is _index_of_bag(game)  # handed over: the same state
    copy.set_field(copy.zones["bag"][0], "value", 3, "=", None)
    copy.move(copy.zones["bag"][1], "pile", False, None)
    for v in range(4):  # each game sees its own bag
        assert _call(rs, copy, "with_value", v=v) == _scan(copy, v)
        assert _call(rs, game, "with_value", v=v) == _scan(game, v)
    assert _scan(copy, 0) != _scan(game, 0)


def test_an_index_a_copy_makes_serves_the_game_it_copies(rulesets: tuple[Ruleset, Ruleset]) -> None:
    rs, _plain = rulesets
    game = _game(rs, [(i % 4, i % 2) for i in range(20)])
    copy = game.copy(memos=True)  # a bot's trial: it shares the game's memos, then plays on
    for v in range(4):
        assert _call(rs, copy, "with_value", v=v) == _scan(copy, v)
    index = _index_of_bag(copy)
    assert isinstance(index, dict) and _index_of_bag(game) is index
    copy.shuffle("bag")
    assert _index_of_bag(copy) is None and _index_of_bag(game) is index  # the game's bag is as it was
    for v in range(4):
        assert _call(rs, game, "counted", v=v) == len(_scan(game, v))
        assert _call(rs, copy, "with_value", v=v) == _scan(copy, v)


def test_work_budgets_fault_where_going_through_the_zone_faults(rulesets: tuple[Ruleset, Ruleset]) -> None:
    rs, plain = rulesets
    tokens = [(i % 4, i % 2) for i in range(30)]
    spent = []
    for ruleset in (rs, plain):
        game = _game(ruleset, tokens)
        game.work = 0
        for v in range(4):
            _call(ruleset, game, "with_value", v=v)
        spent.append(game.work)
    assert spent[0] == spent[1]
    for budget in range(0, spent[0] + 2, 7):
        outcomes = []
        for ruleset in (rs, plain):
            game = _game(ruleset, tokens)
            game.work, game.work_budget = 0, budget
            try:
                outcomes.append([_call(ruleset, game, "with_value", v=v) for v in range(4)])
            except RuleFault as fault:
                outcomes.append([str(fault), _place(fault), game.work])
        assert outcomes[0] == outcomes[1], budget


@pytest.mark.parametrize("odd", ["missing", "a list"])
def test_an_item_that_cannot_be_indexed_is_gone_through_as_before(rulesets: tuple[Ruleset, Ruleset],
                                                                  odd: str) -> None:
    rs, plain = rulesets
    outcomes = []
    for ruleset in (rs, plain):
        game = _game(ruleset, [(i % 4, 0) for i in range(20)])
        for v in range(3):
            _call(ruleset, game, "with_value", v=v)
        rec = game.ents[game.zones["bag"][5]]
        if odd == "missing":  # an edit from outside the rules, said so
            del rec["value"]
        else:
            rec["value"] = [1]
        game.forget_all()
        try:
            outcomes.append([_call(ruleset, game, "with_value", v=v) for v in range(4)])
        except RuleFault as fault:
            outcomes.append([str(fault), _place(fault)])
    assert outcomes[0] == outcomes[1]
    if odd == "missing":
        assert outcomes[0][0] == f"{game.zones['bag'][5]} has no field 'value'" and outcomes[0][1][0] == "rules.yaml"


def test_a_value_that_cannot_be_a_key_is_compared_with_every_item(tmp_path: Path) -> None:
    rules = RULES.replace("params: {v: int}\n    returns: list of token\n    expr: \"[t for t in bag where t.value == v]\"",
                          "params: {v: any}\n    returns: list of token\n    expr: \"[t for t in bag where t.value == v]\"")
    rs = load(tmp_path, {"rules.yaml": rules})
    game = _game(rs, [(i % 4, 0) for i in range(20)])
    for v in (0, 1, 2):
        assert _call(rs, game, "with_value", v=v) == _scan(game, v)
    assert _call(rs, game, "with_value", v=[1]) == []
    assert _call(rs, game, "with_value", v=True) == _scan(game, 1)  # true == 1, as Python compares


def test_a_zone_the_rules_name_by_a_value_is_indexed_per_list(tmp_path: Path) -> None:
    rules = RULES.replace("expr: \"[t for t in bag where t.value == v]\"",
                          "expr: \"[c for c in players[v % 2].hand where c.value == v]\"").replace(
        "returns: list of token\n    expr: \"[c", "returns: list of card\n    expr: \"[c")
    rs = load(tmp_path, {"rules.yaml": rules})
    game = Game.new(rs, 2, 1)
    for i in range(30):
        game.create("card", {"value": i % 4, "name": f"c{i}"}, f"hand@{PLAYERS[i % 2]}", None)
    for _ in range(2):
        for v in range(4):
            hand = game.zones[f"hand@{PLAYERS[v % 2]}"]
            assert _call(rs, game, "with_value", v=v) == [c for c in hand if game.ents[c]["value"] == v]
