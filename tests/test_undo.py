"""Undo (interpreter/undo.py): a player takes back his own decisions, never past new information."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rulekit import make_ruleset

from interpreter import Game, load_ruleset
from interpreter.gamelog import dump_entry, kept_entries, read_log, replay
from interpreter.undo import History, UndoRefused

RULES = """
procedures:
  main:
    source: T 1
    do: |
      shuffle deck
      let me = first(players)
      let you = last(players)
      choose a from [1, 2, 3] by me prompt "First pick"
      choose b from [1, 2] by me prompt "Second pick"
      roll die as d
      choose c from [1, 2] by me prompt "After the die"
      move first(deck) to me.hand
      choose e from [1, 2] by me prompt "After the draw"
      choose f from [1, 2] by you prompt "Your turn"
      choose g from [1, 2] by me prompt "After you"
      commit
      choose h from [1, 2] by me prompt "After the commit"
      choose i from [1, 2] by me prompt "Last"
      game over
"""


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory):
    return load_ruleset(make_ruleset(tmp_path_factory.mktemp("undo"), {"rules.yaml": RULES}))


def _prompt(game: Game) -> str:
    return str((game.pending or {}).get("prompt"))


def test_undo_restores_the_exact_earlier_state(kit) -> None:
    game, history = Game.new(kit, 2, 5), History()
    before = json.loads(game.to_json())
    log_before = list(game.log)
    history.apply(game, 2, "red")
    assert _prompt(game) == "Second pick"
    history.undo(game, "red")
    assert json.loads(game.to_json()) == before and game.log == log_before
    assert _prompt(game) == "First pick"


@pytest.mark.parametrize(("picks", "why"), [
    (2, "your last decision cannot be taken back: dice were rolled or cards shuffled since"),
    (3, "your last decision cannot be taken back: a card hidden from you was revealed since"),
    (5, "blue has decided since your last decision"),
    (6, "your last decision cannot be taken back: the rules passed a point of no return since"),
])
def test_undo_is_refused_past_new_information(kit, picks: int, why: str) -> None:
    game, history = Game.new(kit, 2, 5), History()
    for _ in range(picks):
        history.apply(game, 0, game.deciders()[0])
    assert history.undo_problem(game, "red") == why
    state = game.to_json()
    with pytest.raises(UndoRefused) as refused:
        history.undo(game, "red")
    assert refused.value.reason == why and game.to_json() == state  # a refused undo changes nothing


def test_a_player_undoes_several_decisions_back_to_the_last_new_information(kit) -> None:
    game, history = Game.new(kit, 2, 5), History()
    for _ in range(7):
        history.apply(game, 0, game.deciders()[0])
    assert _prompt(game) == "Last"
    history.undo(game, "red")
    assert _prompt(game) == "After the commit"
    assert history.undo_problem(game, "red").endswith("point of no return since")


def test_a_bot_seated_game_logs_an_undo_and_replays_without_the_undone_choices(kit, tmp_path: Path) -> None:
    game, history = Game.new(kit, 2, 5), History()
    lines = [dump_entry(e) for e in game.log]
    history.apply(game, 1, "red")
    lines += [dump_entry(e) for e in game.log[len(lines):]]
    history.undo(game, "red")
    lines.append(dump_entry({"type": "undo", "player": "red"}))
    history.apply(game, 0, "red")
    lines += [dump_entry(e) for e in game.log[len(game.log) - 1:]]
    path = tmp_path / "undo.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kept, undone = kept_entries(read_log(path), str(path))
    assert undone == 1 and [e for _, e in kept] == game.log
    assert replay(path, str(kit.folder), partial=True).to_json() == game.to_json()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moves=st.lists(st.one_of(st.just("undo"), st.integers(0, 2)), max_size=20), seed=st.integers(0, 2**32))
def test_any_choices_and_undos_equal_replaying_the_choices_kept(kit, moves: list[int | str], seed: int) -> None:
    game, history = Game.new(kit, 2, seed), History()
    kept: list[tuple[str, int]] = []
    for move in moves:
        if game.over:
            break
        player = game.deciders()[0]
        if move == "undo":
            if not history.undo_problem(game, player):
                history.undo(game, player)
                kept.pop()
            continue
        index = int(move) % len(game.choices(player))
        history.apply(game, index, player)
        kept.append((player, index))
    again = Game.new(kit, 2, seed)
    for player, index in kept:
        again.apply(index, player)
    assert again.to_json() == game.to_json() and again.log == game.log
