"""runtime.copy_state is as good as a deep copy: nothing the game does later reaches the copy."""

from __future__ import annotations

import pickle
import random

import pytest
from rulekit import program

from interpreter import Game, load_ruleset
from interpreter.bots import RandomBot
from interpreter.diagnostics import LudusError
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


# Pauses inside loops (a 'choose' in the body, and a call of a procedure that pauses and
# returns a value into the caller's locals), then a secret choice; choosing 3 for 'y' fails
# right after the loops' places moved on in place, for 's' after the last answer is written.
PAUSING = """
let prev = 0
let picks = []
for each p in players do
  for each k in [1, 2] do
    set out = 10 / (3 - prev)
    call pick(p, k) as x
    set picks = picks + [x]
    choose y from [1, 2, 3] by p
    set prev = y
  end
end
set out = 10 / (3 - prev)
for each p in players choose secretly s from [1, 2, 3] label "{s}"
for each p in players do
  set out = 10 / (3 - s[p])
end
set out = picks
"""
PICK = """
pick:
  source: T 2
  params: {p: player, k: int}
  do: |
    choose z from [1, 2, 3] by p label "{z} ({k})"
    return z
"""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_copies_and_undo_stay_exact_through_paused_loops_secret_choices_and_failing_choices(tmp_path, seed):
    game = program(tmp_path / str(seed), PAUSING, procs=PICK, players=3)
    assert game.atomic  # every apply makes an undo copy, restored when the choice fails
    rand = random.Random(seed)
    held: list[tuple[dict, bytes]] = []
    failed = looped = secret = 0
    while not game.over:
        st = game.state
        looped += any(k.startswith("$") for fr in st["stack"] for k in fr["locals"])
        secret += st["pending"]["type"] == "secret"
        held.append((copy_state(st), pickle.dumps(st)))
        before = game.to_json()
        p = game.deciders()[0]
        trial = game.copy(memos=True)  # a bot's trial, played on (a choice that cannot fail)
        while not trial.over:
            q = trial.deciders()[0]
            trial.apply(next(c.index for c in trial.choices(q) if c.value != 3), q)
        assert game.to_json() == before
        fails = [c.index for c in game.choices(p) if c.value == 3 and
                 (st["pending"]["var"] == "y" or st["pending"]["var"] == "s" and len(game.deciders()) == 1)]
        if fails:
            with pytest.raises(LudusError, match="division by zero"):
                game.apply(fails[0], p)
            assert game.to_json() == before  # byte for byte: the loops' places and answers too
            failed += 1
        game.apply(rand.choice([c.index for c in game.choices(p) if c.value != 3]), p)
    assert failed == 7 and looped >= 10 and secret == 3  # a failing choice at every y, and at the last s
    for copy, deep in held:
        assert copy == pickle.loads(deep)  # later play changed nothing inside an earlier copy


def test_a_state_with_keys_of_its_own_is_copied_as_well():
    # a state made by hand may lack a key or hold one the engine does not know (copied deeply)
    game = Game.new(load_ruleset("dice_race"), 2, 1)
    st = dict(game.state, notes={"seen": [[1, 2]]})
    del st["result"]
    copy = copy_state(st)
    assert copy == st and "result" not in copy
    copy["notes"]["seen"][0].append(3)
    copy["stack"][-1]["locals"]["x"] = 1
    assert st["notes"] == {"seen": [[1, 2]]} and "x" not in st["stack"][-1]["locals"]
