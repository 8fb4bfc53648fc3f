"""Procedure-valued fields: each entity carries its own rules text, run by ``call e.FIELD(args)``."""

from __future__ import annotations

import json

import pytest
from rulekit import load

from interpreter import Game
from interpreter.diagnostics import LudusError

CARDS = """
kinds:
  player:
    source: T 1
    fields:
      score: int
  card:
    source: T 1
    label: name
    fields:
      name: str
      play: {type: procedure, params: {p: player}, default: 'log "{p} plays a blank"'}
zones:
  deck:
    source: T 1
    holds: card
entities:
  bonus:
    source: T 1
    kind: card
    name: Bonus
    zone: deck
    play: |
      increase p.score by 2
      log "{p} scores 2"
  pick:
    source: T 1
    kind: card
    name: Pick
    zone: deck
    play: |
      choose n from [1, 5] by p prompt "How many?"
      increase p.score by n
      log "{p} picks {n}"
  blank:
    source: T 1
    kind: card
    name: Blank
    count: 2
    zone: deck
procedures:
  main:
    source: T 2
    do: |
      for each c in deck do
        call c.play(first(players))
      end
      create card with name = "Made" as m
      call m.play(first(players))
      game over "done"
"""


def _texts(game: Game) -> list[str]:
    return [e["text"] for e in game.log if e["type"] == "text"]


def test_each_entity_runs_its_own_text_and_the_default_fills_in(tmp_path):
    rs = load(tmp_path, {"cards.yaml": CARDS}, components=False)
    assert rs.field_procs["play"] == {"bonus": "bonus.play", "pick": "pick.play",
                                      "blank_1": "card.play", "blank_2": "card.play"}
    game = Game.new(rs, 2, 1)
    game.apply(1, "red")  # Pick: 5
    assert game.over
    assert _texts(game) == ["red scores 2", "red picks 5", "red plays a blank", "red plays a blank",
                            "red plays a blank"]  # the created card takes the kind's default
    assert game.ents["red"]["score"] == 7


def test_a_choice_inside_a_carried_procedure_resumes_from_json(tmp_path):
    rs = load(tmp_path, {"cards.yaml": CARDS}, components=False)
    game = Game.new(rs, 2, 1)
    assert game.pending is not None and game.pending["prompt"] == "How many?"
    frames = [f["proc"] for f in game.state["stack"]]
    assert frames[-1] == "pick.play"
    again = Game.resume(rs, json.loads(game.to_json()))
    again.apply(0, "red")
    assert _texts(again)[-4:] == ["red picks 1", "red plays a blank", "red plays a blank", "red plays a blank"]


def test_calling_the_field_of_none_is_a_located_fault(tmp_path):
    rules = CARDS.replace("call m.play(first(players))", "call first(for c in deck where c.name == \"Nope\").play(first(players))")
    with pytest.raises(LudusError):  # not an entity variable: the call is written 'call VAR.FIELD(...)'
        load(tmp_path / "a", {"cards.yaml": rules}, components=False)
    rules = CARDS.replace("create card with name = \"Made\" as m", "let m = first(for c in deck where c.name == \"Nope\")")
    rs = load(tmp_path / "b", {"cards.yaml": rules}, components=False)
    game = Game.new(rs, 2, 1)
    with pytest.raises(LudusError, match=r"cards.yaml:48:7: error: cannot call 'play' of none"):
        game.apply(1, "red")  # line 48 is 'call m.play(first(players))'
    assert game.ents["red"]["score"] == 2  # the failing step left the state as it was


def test_a_procedure_field_is_not_a_value(tmp_path):
    rules = CARDS.replace("create card with name = \"Made\" as m", "log \"{first(deck).play}\"\n      let m = first(deck)")
    with pytest.raises(LudusError, match=r"cards.yaml:47:25: error: 'play' of a card is a procedure, not a value "
                                         r"\(run it with 'call VAR.play\(...\)'\)"):
        load(tmp_path, {"cards.yaml": rules}, components=False)


def test_an_entity_gives_rules_text_not_another_value(tmp_path):
    rules = CARDS.replace("    play: |\n      increase p.score by 2\n      log \"{p} scores 2\"\n", "    play: 3\n")
    with pytest.raises(LudusError, match="'play' of a card is a procedure: give it as rules text"):
        load(tmp_path, {"cards.yaml": rules}, components=False)


def test_rules_cannot_set_a_procedure_field(tmp_path):
    rules = CARDS.replace("create card with name = \"Made\" as m", "let m = first(deck)\n      set m.play = 1")
    with pytest.raises(LudusError, match="'play' of a card is a procedure: rules cannot change it"):
        load(tmp_path, {"cards.yaml": rules}, components=False)
