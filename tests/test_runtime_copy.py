"""runtime.copy_state is as good as a deep copy: nothing the game does later reaches the copy."""

from __future__ import annotations

import pickle

import pytest

from interpreter import Game, load_ruleset
from interpreter.bots import RandomBot
from interpreter.runtime import copy_state


@pytest.mark.parametrize(("name", "players", "seed"), [
    ("time_of_crisis", 4, 3), ("time_of_crisis", 2, 4), ("rome_in_crisis", 3, 5), ("dice_race", 2, 6),
])
def test_a_copy_stays_equal_to_a_deep_copy_taken_with_it_while_the_game_goes_on(name, players, seed):
    rs = load_ruleset(name)
    game = Game.new(rs, players, seed)
    game.atomic = False  # the game must not rely on the copy under test
    bots = {p: RandomBot(seed, p) for p in game.players}
    held: list[tuple[dict, bytes]] = []
    for step in range(600):
        if game.over:
            break
        if step % 7 == 0:
            copy = copy_state(game.state)
            deep = pickle.dumps(game.state)
            assert copy == game.state
            held.append((copy, deep))
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    assert len(held) >= 3
    for copy, deep in held:
        assert copy == pickle.loads(deep)  # later play changed nothing inside an earlier copy


def test_a_failing_choice_puts_back_the_state_as_it_was(tmp_path):
    rs = load_ruleset("time_of_crisis")
    game = Game.new(rs, 3, 2)
    before = game.to_json()
    with pytest.raises(Exception):  # noqa: B017 - any refusal will do; what matters is the state after
        game.apply(0, dice=[7, 7, 7, 7, 7, 7, 7, 7, 7, 7])  # a d6 cannot show 7 (or the dice go unrolled)
    assert game.to_json() == before


@pytest.mark.parametrize(("name", "players", "seed"), [
    ("time_of_crisis", 4, 7), ("rome_in_crisis", 4, 8), ("dice_race", 2, 9),
])
def test_games_that_share_what_they_have_not_changed_stay_independent(name, players, seed):
    # Game.copy, Game.sample and apply's undo copy share entities' dicts and zones' lists
    # until one side changes them: neither side may ever see the other's changes.
    rs = load_ruleset(name)
    game = Game.new(rs, players, seed)  # atomic: every apply makes an undo copy too
    bots = {p: RandomBot(seed, p) for p in game.players}
    held: list[tuple[Game, bytes]] = []
    for step in range(500):
        if game.over:
            break
        if step % 5 == 0:
            player = game.deciders()[0]
            other = game.copy() if step % 10 == 0 else game.sample(player, step)
            held.append((other, pickle.dumps(other.state)))
            before = pickle.dumps(game.state)
            side = {p: RandomBot(step, p) for p in other.players}
            for _ in range(4):  # play on the copy: the game itself must not change
                if other.over:
                    break
                q = other.deciders()[0]
                other.apply(side[q].choose(other, q), q)
            assert game.state == pickle.loads(before)
            held[-1] = (other, pickle.dumps(other.state))
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    assert len(held) >= 3
    for other, deep in held:
        assert other.state == pickle.loads(deep)  # nor did the game's later play reach the copies
