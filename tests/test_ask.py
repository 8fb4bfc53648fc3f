"""Yes/no decisions: ``ask NAME by PLAYER prompt "..." [label "YES", "NO"]``."""

from __future__ import annotations

import json

import pytest
from rulekit import program

from interpreter import Game
from interpreter.bots import RandomBot
from interpreter.diagnostics import LudusError
from interpreter.dsl.parser import DslSyntaxError, parse_block

ASK = """
ask go by first(players) prompt "Go on, {first(players)}?" label "Go on", "Stop here"
ask sure by first(players)
set out = [go, sure]
"""


def test_ask_offers_yes_then_no_with_its_labels(tmp_path):
    game = program(tmp_path, ASK)
    assert game.pending["prompt"] == "Go on, red?"
    assert [c.label for c in game.choices("red")] == ["Go on", "Stop here"]
    game.apply(1, "red")
    assert [c.label for c in game.choices("red")] == ["Yes", "No"]  # the default labels
    game.apply(0, "red")
    assert game.glob["out"] == [False, True]


def test_a_question_saved_and_resumed_gets_the_same_answer_and_labels(tmp_path):
    game = program(tmp_path, ASK)
    game.apply(0, "red")
    again = Game.resume(game.rs, json.loads(game.to_json()))
    assert [c.label for c in again.choices("red")] == ["Yes", "No"]
    again.apply(1, "red")
    assert again.glob["out"] == [True, False]


def test_bots_answer_questions(tmp_path):
    game = program(tmp_path, ASK)
    bot = RandomBot(3, "red")
    while not game.over:
        game.apply(bot.choose(game, "red"), "red")
    assert all(isinstance(v, bool) for v in game.glob["out"])


def test_ask_needs_a_player_and_its_labels_come_in_pairs(tmp_path):
    with pytest.raises(LudusError, match="a choice needs the player who makes it"):
        program(tmp_path, "ask go\nset out = go")
    with pytest.raises(DslSyntaxError):
        parse_block('ask go by p label "Only one"')


def test_ask_is_a_reserved_word(tmp_path):
    with pytest.raises(DslSyntaxError):
        parse_block("let ask = 1")
