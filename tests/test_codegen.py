"""Generated Python (interpreter/dsl/codegen.py) runs the rules exactly as the checked closures do."""

from __future__ import annotations

import json

import pytest
from rulekit import program

from interpreter import Game, LudusError, load_ruleset
from interpreter.bots import RandomBot
from interpreter.dsl.codegen import CodeGen, local


def play(rs, players: int, seed: int, limit: int = 4000) -> tuple[str, str]:
    game = Game.new(rs, players, seed)
    bots = {p: RandomBot(seed, p) for p in game.players}
    for _ in range(limit):
        if game.over:
            break
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    return json.dumps(game.log, sort_keys=True), game.to_json()


def both(monkeypatch, name: str):
    monkeypatch.setenv("LUDUS_GENERATED", "off")
    closures = load_ruleset(name)
    monkeypatch.setenv("LUDUS_GENERATED", "on")
    generated = load_ruleset(name)
    return closures, generated


@pytest.mark.parametrize(("name", "players", "seeds"), [
    ("time_of_crisis", 4, [1, 2]),
    ("time_of_crisis", 2, [3]),
    ("rome_in_crisis", 3, [1, 2]),
    ("dice_race", 2, [1]),
])
def test_games_are_identical_with_and_without_generated_code(monkeypatch, name, players, seeds):
    closures, generated = both(monkeypatch, name)
    assert closures.codegen is not generated.codegen
    for seed in seeds:
        slow_log, slow_state = play(closures, players, seed)
        fast_log, fast_state = play(generated, players, seed)
        assert fast_log == slow_log
        assert fast_state == slow_state


@pytest.mark.parametrize("name", ["time_of_crisis", "rome_in_crisis"])
def test_every_action_and_function_of_the_bundled_games_has_generated_code(monkeypatch, name):
    monkeypatch.setenv("LUDUS_GENERATED", "on")
    rs = load_ruleset(name)
    missing = [a for a, action in rs.actions.items() if action.enum is None]
    assert missing == []  # else some expression lost its generated source and runs as closures
    assert sorted(rs.codegen.functions) == sorted(rs.functions)
    for fname in rs.functions:
        source = rs.codegen.source_of(rs.codegen.env[rs.codegen.functions[fname]])
        assert source is not None and "memo[key] = value" in source


def test_the_generated_lister_offers_what_the_checked_lister_offers(monkeypatch):
    closures, generated = both(monkeypatch, "time_of_crisis")
    for seed in (4, 5):
        game = Game.new(generated, 4, seed)
        bot = RandomBot(seed, "x")
        for _ in range(300):
            if game.over:
                break
            p = game.deciders()[0]
            pending = game.pending
            if pending is not None and pending["type"] == "action":
                slow: list = []
                for aid in generated.groups[pending["group"]]:
                    game._enumerate(generated.actions[aid], 0, {"actor": p}, slow)
                assert game.action_options(p, pending["group"]) == slow
            game.apply(bot.choose(game, p), p)


def test_a_local_set_only_on_another_path_still_gives_the_closures_value(tmp_path):
    # the generated body reads every local it mentions up front; 'x' is missing, so it
    # falls back to the closure, which only reads x on the branch that needs it
    game = program(tmp_path, """
        if false then
          let x = 5
        end
        set out = if true then 1 else x
    """)
    assert game.glob["out"] == 1


@pytest.mark.parametrize("generated", ["on", "off"])
def test_runtime_errors_keep_their_place_in_the_file(tmp_path, monkeypatch, generated):
    monkeypatch.setenv("LUDUS_GENERATED", generated)
    with pytest.raises(LudusError, match=r"rules\.yaml:11:26: error: division by zero"):  # at the '/'
        program(tmp_path, "let a = 0\nlet b = 1\nset out = [1, 2, 7 / a]")


def test_author_text_never_appears_in_the_generated_source(tmp_path):
    nasty = 'x"); import os; ("{y}'
    gen = CodeGen("test")
    name = gen.const(nasty)
    assert name.startswith("_k") and gen.env[name] == nasty
    assert gen.const("plain_id") == "'plain_id'"
    assert gen.const(7) == "7" and gen.const(None) == "None" and gen.const(True) == "True"
    game = program(tmp_path, 'set out = "a\\"b{1 + 1}c\\\\d" + "\\{"')
    assert game.glob["out"] == 'a"b2c\\d{'
    sources = [write() for write, _fn in game.rs.codegen._sources]
    assert sources and not any('a\\"b' in s or 'a"b' in s for s in sources)


def test_names_become_prefixed_python_locals():
    assert local("army") == "v_army"
    with pytest.raises(ValueError):
        local("x); import os; (y")


def test_switching_generated_code_off_runs_closures_only(monkeypatch, tmp_path):
    monkeypatch.setenv("LUDUS_GENERATED", "off")
    game = program(tmp_path, "set out = 1 + 2")
    assert game.glob["out"] == 3
    assert game.rs.codegen._sources == []

