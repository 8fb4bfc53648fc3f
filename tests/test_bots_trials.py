"""The greedy bot's trials: copies that start with the sampled game's remembered results,
and fingerprints made from kept bytes, must judge exactly as fresh copies and full views."""

from __future__ import annotations

import json
import marshal

import pytest
from rulekit import indexes_true, memo_functions, memos_true

from interpreter import Game, load_ruleset
from interpreter.bots import GreedyBot, _looks_alike, margin
from interpreter.model import NO_MEMO


def _consistent(handed: Game, fresh: Game) -> None:
    """Every result both games remember is the same: the handed memos hold nothing stale."""
    for i, (a, b) in enumerate(zip(handed.memos, fresh.memos, strict=True)):
        for key in a.keys() & b.keys():
            assert a[key] == b[key], (i, key)


def _filled_listed(game: Game) -> None:
    """Every volatile slot holding a dict is a bit of the game's filled slots, which forgetting
    looks at (game/values.py); no other slot is."""
    volatile = set(game.rs.memo_volatile)
    filled = {i for i in range(game.filled.bit_length()) if game.filled >> i & 1}
    assert {i for i in volatile if game.memos[i] is not NO_MEMO} <= filled <= volatile


@pytest.mark.parametrize("name", ["time_of_crisis", "rome_in_crisis"])
def test_trials_with_handed_memos_judge_as_fresh_copies(name: str) -> None:
    rs = load_ruleset(name)
    game = Game.new(rs, 4, 3)
    game.atomic = False
    bots = {p: GreedyBot(3, p) for p in game.players}
    functions = memo_functions(rs)
    tried = checked = unchanged = indexes = 0
    for step in range(60):
        if game.over:
            break
        p = game.deciders()[0]
        sampled = game.sample(p, step)
        margin(sampled, p)  # results in the memos the trials share
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
                _filled_listed(handed)
                _filled_listed(fresh)
                indexes += indexes_true(handed)
                if handed.changes == 0 and not handed.over:  # judged as the sampled game (bots._judge)
                    assert margin(handed, p) == margin(sampled, p)
                    unchanged += 1
                if step % 5 == 0:
                    checked += memos_true(handed, functions)
                tried += 1
        assert json.dumps(sampled.state["pending"], sort_keys=True) == pending  # shared by the trials, read only
        indexes += indexes_true(sampled)
        if step % 5 == 0:  # what the trials left in the memos they share with it holds for it
            checked += memos_true(sampled, functions)
        _filled_listed(sampled)
        game.apply(bots[p].choose(game, p), p)
        _filled_listed(game)
    assert tried > 50 and checked > 500 and unchanged > 5
    assert indexes > 0 or name != "time_of_crisis"  # its supply is looked up by the cards' names


@pytest.mark.parametrize("name", ["time_of_crisis", "rome_in_crisis", "pax_romana", "empire_in_crisis"])
def test_view_bytes_are_the_marshalled_view(name: str) -> None:
    rs = load_ruleset(name)
    game = Game.new(rs, None, 5)
    bots = {p: GreedyBot(5, p) for p in game.players}
    patched = alike = 0
    for step in range(40):
        if game.over:
            break
        p = game.deciders()[0]
        for g in (game, game.sample(p, step)):
            for q in [*game.players, None]:
                assert g.view_bytes(q) == marshal.dumps(g.view(q, copy=False), 0)
        sampled = game.sample(p, step)
        if _looks_alike(game):  # the bots fingerprint the sampled game for the game: the same view
            assert sampled.view_bytes(p) == game.view_bytes(p)
            alike += 1
        sampled.view_bytes(p)  # the layout its trials' views start from
        for c in game.choices(p)[:5]:
            trial = sampled.copy(memos=True)
            try:
                trial.apply(c.index, p)
            except Exception:  # noqa: BLE001 - a failing line of play is not judged
                continue
            patched += trial.source_layout is not None
            for q in [*game.players, None]:
                assert trial.view_bytes(q) == marshal.dumps(trial.view(q, copy=False), 0)
        game.apply(bots[p].choose(game, p), p)
    assert (patched > 20 and alike > 10) or rs.fog


def test_view_bytes_follow_an_edit_from_outside_made_known_by_forget_all() -> None:
    rs = load_ruleset("time_of_crisis")
    game = Game.new(rs, 4, 2)
    bots = {p: GreedyBot(2, p) for p in game.players}
    for _ in range(5):
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    p = game.deciders()[0]
    before = game.view_bytes(p)
    game.ents[p]["legacy"] += 7  # in place, in a dict the game has shared with its copies
    game.forget_all()
    after = game.view_bytes(p)
    assert after != before and after == marshal.dumps(game.view(p, copy=False), 0)
