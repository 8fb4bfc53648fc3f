"""Generated Python (interpreter/dsl/codegen.py) runs the rules exactly as the checked closures do."""

from __future__ import annotations

import json

import pytest
from rulekit import make_ruleset, play_random, program

from interpreter import Game, LudusError, load_ruleset
from interpreter.bots import RandomBot
from interpreter.dsl.codegen import CodeGen, local


def play(rs, players: int, seed: int) -> tuple[str, str]:
    game = play_random(rs, players, seed)
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



def test_a_game_saved_by_one_way_resumes_identically_the_other_way(monkeypatch):
    closures, generated = both(monkeypatch, "time_of_crisis")
    game = Game.new(closures, 3, 9)
    bots = {p: RandomBot(9, p) for p in game.players}
    for _ in range(150):
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    saved = game.to_json()
    ends = []
    for rs in (closures, generated):
        resumed = Game.resume(rs, json.loads(saved))
        again = {p: RandomBot(10, p) for p in resumed.players}
        for _ in range(300):
            if resumed.over:
                break
            p = resumed.deciders()[0]
            resumed.apply(again[p].choose(resumed, p), p)
        ends.append((json.dumps(resumed.log), resumed.to_json()))
    assert ends[0] == ends[1]


PROCS = """
procedures:
  main:
    source: T 2
    do: |
      call tally(3) as n
      set out = n
      call ask_one()
  tally:
    source: T 2
    params: {k: int}
    do: |
      let total = 0
      for each i in 1..k do
        increase total by i
      end
      return total
  ask_one:
    source: T 2
    do: |
      choose c from [1, 2] by first(players)
      set out = out + c
  countdown:
    source: T 2
    params: {k: int}
    do: |
      if k > 0 then
        call countdown(k - 1)
      end
"""


def test_procedures_that_never_pause_become_plain_functions(tmp_path, monkeypatch):
    monkeypatch.setenv("LUDUS_GENERATED", "on")
    rules = "globals:\n  out:\n    source: T 2\n    type: int\n" + PROCS
    rs = load_ruleset(make_ruleset(tmp_path, {"rules.yaml": rules}))
    direct = [name for name in rs.codegen.env if name.startswith("P") and name[1:].isdigit()]
    assert len(direct) == 1  # tally only: ask_one chooses, main calls it, countdown calls itself
    game = Game.new(rs, 2, 1)
    assert game.glob["out"] == 6  # 1 + 2 + 3, with no frame pushed for 'tally'
    assert [f["proc"] for f in game.state["stack"]] == ["main", "ask_one"]
    game.apply(1)
    assert game.glob["out"] == 8


@pytest.mark.parametrize("generated", ["on", "off"])
def test_an_error_in_the_middle_of_a_run_of_statements_is_placed_at_its_statement(tmp_path, monkeypatch, generated):
    monkeypatch.setenv("LUDUS_GENERATED", generated)
    # the runtime raises this one without a place: it takes the place of the statement running
    with pytest.raises(LudusError, match=r"rules\.yaml:14:7: error: 1 is not a zone"):
        program(tmp_path, "let a = 1\nlet b = 2\nif a < b then\n  set out = a\nend\nshuffle out\nset out = 3")


LOOP_WITH_CHOICES = """
let picked = []
for each x in 1..6 where x % 2 == 0 do
  choose c from [x, x * 10] by first(players)
  set picked = picked + [c]
  if c > 30 then
    break
  end
end
let n = 0
repeat
  increase n by 1
  if n == 2 then
    choose d from [1, 2] by first(players)
    increase n by d
  end
until n > 4
set out = [picked, n]
"""


@pytest.mark.parametrize("answers", [[0, 0, 0, 1], [1, 1, 0], [0, 1, 1]])
def test_loops_with_choices_inside_run_the_same_both_ways_and_resume_from_saves(tmp_path, monkeypatch, answers):
    outcomes = []
    for generated in ("off", "on", "on-saved"):
        monkeypatch.setenv("LUDUS_GENERATED", "off" if generated == "off" else "on")
        game = program(tmp_path / generated, LOOP_WITH_CHOICES)
        for a in answers:
            if generated == "on-saved":  # through JSON at every pause: the place in the loop is data
                game = Game.resume(game.rs, json.loads(game.to_json()))
            game.apply(a)
        outcomes.append((game.glob["out"], game.to_json(), json.dumps(game.log)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[2][:2] == outcomes[0][:2]  # a resumed game starts a new log; its state is the same
    assert outcomes[0][0] is not None
