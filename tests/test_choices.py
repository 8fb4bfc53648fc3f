"""Pauses: choose, action menus, secret simultaneous picks; illegal choices change nothing."""

from __future__ import annotations

import json

import pytest
from rulekit import program

from interpreter import IllegalChoice, LudusError

ACTIONS = """
actions:
  take:
    source: T 6
    group: turn
    params:
      card: "[c for c in deck where c.value <= limit]"
    if: "count(actor.hand) < 2"
    label: "Take {card} ({card.value})"
    do: |
      move card to actor.hand
      return card.value
  stop:
    source: T 6
    group: turn
    label: Stop
    do: |
      set done = true
"""


def test_choose_offers_labelled_options_and_binds_the_answer(tmp_path):
    game = program(tmp_path, """
        choose c from deck by first(players) prompt "Pick one" label "{c} worth {c.value}"
        set out = c
    """)
    assert game.pending["prompt"] == "Pick one"
    assert [c.label for c in game.choices()] == ["Ace worth 1", "Two worth 2", "Three worth 3"]
    assert game.deciders() == ["red"]
    game.apply("Two worth 2")
    assert game.glob["out"] == "two"


def test_action_menu_lists_every_legal_action_with_arguments(tmp_path):
    game = program(tmp_path, """
        repeat
          choose action from turn by first(players) as got
          if got != none then
            set out = got
          end
        until done
    """, globals_={"done": ("bool", False), "limit": ("int", 2)}, extra=ACTIONS)
    assert [c.label for c in game.choices()] == ["Take Ace (1)", "Take Two (2)", "Stop"]
    game.apply(1)
    assert game.glob["out"] == 2  # the action's return value
    assert [c.label for c in game.choices()] == ["Take Ace (1)", "Stop"]
    game.apply(0)
    assert [c.label for c in game.choices()] == ["Stop"]  # the 'if' now forbids taking
    game.apply("Stop")
    assert game.over


def test_secret_choices_are_collected_then_revealed_together(tmp_path):
    game = program(tmp_path, """
        for each p in players do
          draw 1 from deck to p.hand
        end
        for each p in players choose secretly pick from p.hand label "{pick.value}"
        set out = [pick[p] for p in players]
    """)
    assert game.deciders() == ["red", "blue"]
    assert [c.label for c in game.choices("red")] == ["1"]
    assert [c.label for c in game.choices("blue")] == ["2"]
    game.apply(0, "blue")
    assert game.deciders() == ["red"]
    assert game.view("red")["pending"]["answers"] == {}  # red cannot see blue's pick
    with pytest.raises(IllegalChoice, match="not blue's decision"):
        game.apply(0, "blue")
    game.apply(0, "red")
    assert game.glob["out"] == ["ace", "two"]


def test_illegal_choices_are_refused_and_change_nothing(tmp_path):
    game = program(tmp_path, "choose c from deck by first(players)\nset out = c")
    before = game.to_json()
    log_before = list(game.log)
    for bad, reason in [(3, "out of range"), (-1, "out of range"), ("Four", "not one of the 3 choices"),
                        (1.5, "index or a label"), (True, "index or a label")]:
        with pytest.raises(IllegalChoice, match=reason):
            game.apply(bad)  # type: ignore[arg-type]
        assert game.to_json() == before
        assert game.log == log_before
    with pytest.raises(IllegalChoice, match="not blue's decision"):
        game.apply(0, "blue")
    assert game.to_json() == before


def test_a_rule_failing_after_a_choice_rolls_the_choice_back(tmp_path):
    game = program(tmp_path, "choose n from [1, 0] by first(players)\nset out = 10 / n")
    before = game.to_json()
    with pytest.raises(LudusError, match="division by zero"):
        game.apply(1)
    assert game.to_json() == before
    game.apply(0)
    assert game.glob["out"] == 10


def test_nothing_to_choose_is_a_located_error(tmp_path):
    with pytest.raises(LudusError, match=r"rules\.yaml:9:\d+: error: red must choose 'c' but there is nothing"):
        program(tmp_path, "choose c from [x for x in deck where x.value > 5] by first(players)")


def test_views_hide_hidden_zones_other_hands_and_the_machinery(tmp_path):
    game = program(tmp_path, """
        draw 1 from deck to first(players).hand
        choose c from first(players).hand by first(players)
    """)
    red = game.view("red")
    blue = game.view("blue")
    assert red["zones"]["hand@red"] == ["ace"]
    assert blue["zones"]["hand@red"] == {"hidden": 1}
    assert blue["zones"]["deck"] == {"hidden": 2}
    assert "ace" not in json.dumps(blue)
    assert "two" not in json.dumps(red)  # the deck is face down for everyone
    for view in (red, blue):
        assert not {"rng", "stack", "forced_dice"} & set(view)
    assert blue["pending"] == {"type": "choice", "player": "red", "prompt": "choose c"}
    assert red["pending"]["options"][0]["value"] == "ace"


def test_forced_dice_must_be_rolled_by_the_choice_they_come_with(tmp_path):
    game = program(tmp_path, """
        choose n from [0, 2] by first(players)
        roll n dice as rolled
        set out = rolled
        choose m from [1] by first(players)
    """)
    before = game.to_json()
    with pytest.raises(IllegalChoice, match=r"this choice rolled 0 of the 1 forced dice; \[4\] were not rolled"):
        game.apply(0, dice=[4])
    assert game.to_json() == before
    with pytest.raises(IllegalChoice, match=r"rolled 2 of the 3 forced dice; \[6\] were not rolled"):
        game.apply(1, dice=[5, 5, 6])
    assert game.to_json() == before
    game.apply(1, dice=[5, 4])
    assert game.glob["out"] == [5, 4]


def test_a_secret_choice_by_one_player_is_not_narrated_to_humans(tmp_path, monkeypatch, capsys):
    import io
    import sys

    from rulekit import make_ruleset

    from interpreter.cli import main
    folder = make_ruleset(tmp_path, {"rules.yaml": """
        procedures:
          main:
            source: T 1
            do: |
              choose secretly c from deck by last(players) prompt "Keep one"
              choose d from deck by first(players) prompt "Take one"
              game over
    """})
    game = program(tmp_path / "api", "choose secretly c from deck by first(players)\nset out = c")
    assert game.pending["secret"] is True
    monkeypatch.chdir(tmp_path)  # a game that ends for lack of input is saved in the current folder
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n"))
    assert main(["play", str(folder), "--players", "2", "--seat", "red=human"]) == 0
    out = capsys.readouterr().out
    assert "  blue > (secret)" in out
    assert "  red > Ace" in out


LABEL_FAILS_LATER = ACTIONS.replace('label: "Take {card} ({card.value})"',
                                    'label: "Take {card} ({10 / (1 - count(actor.hand))})"')
MENU = """
    repeat
      choose action from turn by first(players) as got
    until done
"""


def test_a_bot_game_labels_its_menu_when_read_and_logs_the_label_taken(tmp_path):
    # Games without undo (bots', simulate's) write a menu's labels only when something reads
    # them: what the reader gets is the same as a game with undo gets at once.
    kw = {"globals_": {"done": ("bool", False), "limit": ("int", 3)}, "extra": ACTIONS}
    eager, lazy = program(tmp_path / "a", MENU, **kw), program(tmp_path / "b", MENU, **kw)
    lazy.atomic = False
    for game in (eager, lazy):
        game.apply(2)  # take Three; the next menu is listed after it
    assert lazy.log[-1]["label"] == eager.log[-1]["label"] == "Take Three (3)"
    assert json.loads(lazy.to_json()) == json.loads(eager.to_json())
    assert [c.label for c in lazy.choices()] == ["Take Ace (1)", "Take Two (2)", "Stop"]
    lazy.apply(1)  # by index: the label logged is made for the choice taken
    assert lazy.log[-1]["label"] == "Take Two (2)"


def test_a_label_that_fails_is_a_located_error_with_or_without_undo(tmp_path):
    kw = {"globals_": {"done": ("bool", False), "limit": ("int", 3)}, "extra": LABEL_FAILS_LATER}
    game = program(tmp_path / "a", MENU, **kw)
    before = game.to_json()
    with pytest.raises(LudusError, match=r"rules\.yaml:\d+:\d+: error: .*divi") as undone:
        game.apply(0)  # the next menu's labels divide by zero: the choice is undone
    assert game.to_json() == before
    bot = program(tmp_path / "b", MENU, **kw)
    bot.atomic = False
    bot.apply(0)  # without undo the menu is labelled when read, and the failure shows then
    first = str(undone.value).splitlines()[0].replace(f"{tmp_path}/a/", "")
    assert first == "kit/rules.yaml:29:30: error: division by zero"  # the '/' of the label
    for read in (bot.choices, bot.to_json, lambda: bot.view("red"), lambda: bot.state):
        with pytest.raises(LudusError) as failed:
            read()
        assert str(failed.value).splitlines()[0].replace(f"{tmp_path}/b/", "") == first
    assert bot.view("blue")["pending"]["player"] == "red"  # a view without the menu needs no label
