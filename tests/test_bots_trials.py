"""The greedy bot's trials: copies that start with the sampled game's remembered results,
and fingerprints made from kept bytes, must judge exactly as fresh copies and full views."""

from __future__ import annotations

import json
import marshal

import pytest

from interpreter import Game, load_ruleset
from interpreter.bots import GreedyBot, _remember_margins, margin


def _consistent(handed: Game, fresh: Game) -> None:
    """Every result both games remember is the same: the handed memos hold nothing stale."""
    for i, (a, b) in enumerate(zip(handed.memos, fresh.memos, strict=True)):
        for key in a.keys() & b.keys():
            assert a[key] == b[key], (i, key)


@pytest.mark.parametrize("name", ["time_of_crisis", "rome_in_crisis"])
def test_trials_with_handed_memos_judge_as_fresh_copies(name: str) -> None:
    rs = load_ruleset(name)
    game = Game.new(rs, 4, 3)
    game.atomic = False
    bots = {p: GreedyBot(3, p) for p in game.players}
    tried = 0
    for step in range(60):
        if game.over:
            break
        p = game.deciders()[0]
        sampled = game.sample(p, step)
        _remember_margins(sampled, p)
        pending = json.dumps(sampled.state["pending"], sort_keys=True)
        for c in game.choices(p)[:6]:
            handed, fresh = sampled.copy(memos=True), sampled.copy()
            outcomes = []
            for trial in (handed, fresh):
                try:
                    trial.apply(c.index, p)
                except Exception as exc:  # noqa: BLE001 - both must fail alike
                    outcomes.append(type(exc))
                else:
                    outcomes.append(trial.view_bytes(p))
            assert outcomes[0] == outcomes[1]
            if isinstance(outcomes[0], bytes):
                assert [margin(handed, q) for q in game.players] == [margin(fresh, q) for q in game.players]
                _consistent(handed, fresh)
                tried += 1
        assert json.dumps(sampled.state["pending"], sort_keys=True) == pending  # shared by the trials, read only
        game.apply(bots[p].choose(game, p), p)
    assert tried > 50


@pytest.mark.parametrize("name", ["time_of_crisis", "rome_in_crisis", "pax_romana"])
def test_view_bytes_are_the_marshalled_view(name: str) -> None:
    rs = load_ruleset(name)
    game = Game.new(rs, None, 5)
    bots = {p: GreedyBot(5, p) for p in game.players}
    for _ in range(40):
        if game.over:
            break
        p = game.deciders()[0]
        sampled = game.sample(p, 1)
        for g in (game, sampled, sampled.copy()):
            for q in [*game.players, None]:
                assert g.view_bytes(q) == marshal.dumps(g.view(q, copy=False), 0)
        game.apply(bots[p].choose(game, p), p)
