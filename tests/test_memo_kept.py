"""Remembered function results outlive a decision in a game only the rules change, and stay
true: the rules forget precisely what they change. Code that reads ``Game.state`` may edit
it, so from then on every decision forgets them (Values.decided)."""

from __future__ import annotations

import json
import random

import pytest
from rulekit import load, memo_functions, memos_true

from interpreter import Game, load_ruleset
from interpreter.game import values

RULES = """
functions:
  scores:
    source: T 1
    returns: int
    expr: sum(p.score for p in players)
procedures:
  main:
    source: T 2
    do: |
      repeat
        choose x from [1, 2] by players[0] prompt "scores {scores()}"
        if x == 2 then
          increase players[0].score by 1
        end
      until players[0].score >= 3
"""


@pytest.mark.parametrize("name", ["time_of_crisis", "rome_in_crisis", "pax_romana", "empire_in_crisis"])
def test_results_kept_across_decisions_are_those_a_fresh_game_computes(name: str) -> None:
    rs = load_ruleset(name)
    game = Game.new(rs, 4 if name != "empire_in_crisis" else rs.min_players, 7)
    game.atomic = False
    rand = random.Random(7)
    checked = kept = 0
    for _step in range(120):
        if game.over:
            break
        before = {(i, k) for i in rs.memo_volatile for k in game.memos[i]}
        p = game.deciders()[0]
        game.apply(rand.randrange(game.count_choices(p)), p)
        assert not game.exposed  # apply, deciders and count_choices are the rules' own reads
        kept += len(before & {(i, k) for i in rs.memo_volatile for k in game.memos[i]})
        checked += memos_true(game, memo_functions(rs))
    assert checked > 100 and kept > 0


def test_reading_state_makes_every_later_decision_forget(tmp_path) -> None:
    game = Game.new(load(tmp_path, {"rules.yaml": RULES}), 2, 1)
    remembered = game.memos[0]
    game.apply(0, "red")  # x = 1: nothing 'scores' reads changes
    assert not game.exposed and game.memos[0] is remembered  # kept: only the rules had the state
    state = game.state  # a caller may now edit it, now or between any later decisions
    state["entities"]["blue"]["score"] = 10
    game.apply(0, "red")
    assert game.pending["prompt"] == "scores 10"  # not the remembered 0
    state["entities"]["blue"]["score"] = 20  # through the reference kept from before
    game.apply(0, "red")
    assert game.pending["prompt"] == "scores 20"


@pytest.mark.parametrize("most", [0, 100_000])
def test_kept_results_are_bounded(tmp_path, monkeypatch, most: int) -> None:
    monkeypatch.setattr(values, "MAX_KEPT_RESULTS", most)
    game = Game.new(load(tmp_path, {"rules.yaml": RULES}), 2, 1)
    changes = game.changes
    for _ in range(6):
        game.apply(0, "red")  # changes nothing: only a count that finds too many forgets
    # counted once the work since the last count could have kept more than allowed: with none
    # allowed, at every decision (each run works 'scores' out again, a call's work)
    assert game.changes - changes == (6 if most == 0 else 0)


def test_a_function_joining_zones_is_forgotten_when_a_card_moves(tmp_path) -> None:
    """'zone + zone' reads the items of zones as a loop over a zone does (it used to be noted as
    reading nothing, so its function counted as constant and a move left the count remembered)."""
    rules = """
functions:
  held:
    source: T 1
    params: {p: player}
    returns: int
    expr: count(p.hand + pile)
procedures:
  main:
    source: T 2
    do: |
      repeat
        choose x from [1, 2] by players[0] prompt "held {held(players[0])}"
        if x == 2 then
          move first(deck) to players[0].hand
        end
      until count(deck) == 0
"""
    game = Game.new(load(tmp_path, {"rules.yaml": rules}), 2, 1)
    assert game.pending["prompt"] == "held 0"
    game.apply(1, "red")
    assert game.pending["prompt"] == "held 1"


def test_a_resumed_game_is_exposed_unless_its_state_is_handed_over(tmp_path) -> None:
    rs = load(tmp_path, {"rules.yaml": RULES})
    saved = json.loads(Game.new(rs, 2, 1).to_json())
    game = Game.resume(rs, saved)  # the caller still holds 'saved'
    game.apply(0, "red")
    saved["entities"]["blue"]["score"] = 10
    game.apply(0, "red")
    assert game.pending["prompt"] == "scores 10"
    assert not Game.resume(rs, json.loads(game.to_json()), owned=True).exposed


def test_adding_a_list_and_a_text_naming_a_zone_reads_the_zone(tmp_path) -> None:
    """'list + value' goes through the value as a list, and a text may name a zone: such a
    function reads what cannot be told (it used to count as reading nothing, so as constant)."""
    rules = """
globals:
  spot: {source: T 1, type: str, initial: pile}
functions:
  held:
    source: T 1
    returns: int
    expr: count(players + spot)
procedures:
  main:
    source: T 2
    do: |
      repeat
        choose x from [1, 2] by players[0] prompt "held {held()}"
        if x == 2 then
          move first(deck) to pile
        end
      until count(deck) == 0
"""
    game = Game.new(load(tmp_path, {"rules.yaml": rules}), 2, 1)
    assert game.pending["prompt"] == "held 2"
    game.apply(1, "red")
    assert game.pending["prompt"] == "held 3"
