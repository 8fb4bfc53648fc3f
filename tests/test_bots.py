"""The bots: legal picks, view discipline (no peeking), no endless shuttling, option parsing."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from rulekit import load

from interpreter import Game, load_ruleset, rng
from interpreter.bots import BOT_KINDS, GreedyBot, bot_problem, make_bot, margin
from interpreter.model import Ruleset

# Small budgets: these tests are about discipline, not strength.
KINDS = ["random", "greedy", "mcts:playouts=2:depth=6:width=2"]


def _toc() -> Ruleset:
    return load_ruleset("time_of_crisis")


def _advance(game: Game, steps: int, seed: int) -> None:
    rand = random.Random(seed)
    for _ in range(steps):
        if game.over:
            return
        p = game.deciders()[0]
        game.apply(rand.randrange(len(game.choices(p))), p)


def _hidden_rearranged(game: Game, player: str, seed: int) -> Game:
    """The same game, except for what ``player`` cannot see: hidden zones dealt anew, new dice.

    Entities change places only with entities of their kind: which kinds a zone may hold
    is the rules' (a hand holds cards, not events), and a game that breaks that is not one
    the player could be in.
    """
    twin = Game.resume(game.rs, json.loads(game.to_json()))
    zones, ents = twin.state["zones"], twin.state["entities"]
    hidden = [k for k in zones if zones[k] and not twin._visible(k, player)]
    pools: dict[str, list[str]] = {}
    for k in hidden:
        for e in zones[k]:
            pools.setdefault(ents[e]["kind"], []).append(e)
    rand = random.Random(seed)
    for pool in pools.values():
        rand.shuffle(pool)
    for k in hidden:
        zones[k] = [pools[ents[e]["kind"]].pop() for e in zones[k]]
        for e in zones[k]:
            ents[e]["zone"] = k
    twin.state["rng"] = rng.seed_state(seed)
    return twin


def _view(game: Game, player: str) -> str:
    return json.dumps(game.view(player), sort_keys=True)


@pytest.mark.parametrize("steps", [40, 160, 400])
def test_sample_shows_the_player_exactly_what_they_see(steps):
    game = Game.new(_toc(), 4, 3)
    _advance(game, steps, steps)
    for p in game.players:
        sample = game.sample(p, 99)
        assert _view(sample, p) == _view(game, p)
        hidden = sorted(e for k, items in game.state["zones"].items()
                        if not game._visible(k, p) for e in items)
        again = sorted(e for k, items in sample.state["zones"].items()
                       if not sample._visible(k, p) for e in items)
        assert hidden == again, "the sample deals the same unseen entities"
        assert sample.state["rng"] != game.state["rng"], "the dice to come are redrawn"
    redealt = [game.sample(game.players[0], s).state["zones"] for s in range(5)]
    assert any(z != game.state["zones"] for z in redealt), "hidden zones are really redealt"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("steps", [30, 120, 300])
def test_bots_choose_the_same_in_games_that_look_the_same(kind, steps):
    game = Game.new(_toc(), 4, 11)
    _advance(game, steps, steps + 1)
    # find a real decision (more than one choice)
    while len(game.choices(game.deciders()[0])) < 2:
        _advance(game, 1, steps)
    p = game.deciders()[0]
    twin = _hidden_rearranged(game, p, steps)
    assert twin.to_json() != game.to_json(), "the twin must differ in what is hidden"
    assert _view(twin, p) == _view(game, p)
    a = make_bot(kind, 5, p).choose(game, p)
    b = make_bot(kind, 5, p).choose(twin, p)
    assert a == b


def test_bots_leave_the_game_untouched_and_pick_offered_choices():
    rs = _toc()
    for seed in range(2):
        game = Game.new(rs, 3, seed)
        bots = {p: make_bot(KINDS[i % len(KINDS)], seed, p) for i, p in enumerate(game.players)}
        for _ in range(150):
            if game.over:
                break
            p = game.deciders()[0]
            before = game.to_json()
            index = bots[p].choose(game, p)
            assert game.to_json() == before
            assert 0 <= index < len(game.choices(p))
            game.apply(index, p)


FREE_TOGGLE = {
    "rules.yaml": """
    globals:
      lamp:
        source: T 1
        type: bool
      turns:
        source: T 1
        type: int
    actions:
      toggle:
        source: T 1
        group: turn
        label: "Toggle the lamp"
        do: |
          set lamp = not lamp
      finish:
        source: T 1
        group: turn
        label: "End the turn"
        do: |
          increase turns by 1
          decrease actor.score by 1
    procedures:
      main:
        source: T 1
        do: |
          repeat
            for each p in players do
              choose action from turn by p
            end
          until turns >= 6
          game over "done"
    scoring:
      source: T 1
      score: p.score
      evaluation: p.score
    """,
}


def test_greedy_does_not_shuttle_between_two_positions(tmp_path: Path):
    # Ending the turn costs a point and toggling costs nothing: a plain one-step
    # look-ahead would toggle for ever. The bot must still end its turns.
    rs = load(tmp_path, FREE_TOGGLE)
    game = Game.new(rs, 2, 1)
    bots = {p: GreedyBot(1, p) for p in game.players}
    decisions = 0
    while not game.over:
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
        decisions += 1
        assert decisions < 100, "greedy shuttled back and forth"
    assert game.result is not None and game.result["reason"] == "done"


def test_margin_is_own_evaluation_minus_the_best_other(tmp_path: Path):
    rs = load(tmp_path, FREE_TOGGLE)
    game = Game.new(rs, 3, 1)
    a, b, c = game.players
    game.state["entities"][a]["score"] = 5
    game.state["entities"][b]["score"] = 9
    game.state["entities"][c]["score"] = 2
    assert margin(game, a) == 5 - 9
    assert margin(game, b) == 9 - 5
    assert margin(game, c) == 2 - 9


@pytest.mark.parametrize("kind, problem", [
    ("random", None),
    ("mcts", None),
    ("mcts:playouts=3:depth=5:width=2", None),
    ("nope", "unknown bot 'nope'"),
    ("mcts:speed=2", "has no option 'speed'"),
    ("mcts:playouts=0", "at least 1"),
    ("mcts:playouts", "must be name=number"),
    ("greedy:width=2", "has no option 'width'"),
])
def test_bot_names_and_options(kind, problem):
    found = bot_problem(kind)
    if problem is None:
        assert found is None
        make_bot(kind, 1, "red")
    else:
        assert found is not None and problem in found
        with pytest.raises(ValueError):
            make_bot(kind, 1, "red")


def test_every_bot_kind_is_made_by_name():
    for kind in BOT_KINDS:
        assert hasattr(make_bot(kind, 0, "red"), "choose")
