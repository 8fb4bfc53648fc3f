"""The one compiled path (interpreter/dsl/): generated Python, resume points, located errors."""

from __future__ import annotations

import json

import pytest
from rulekit import make_ruleset, program

from interpreter import Game, LudusError, load_ruleset
from interpreter.dsl.builtins import markdown_table
from interpreter.dsl.source import CodeGen, local


@pytest.mark.parametrize("name", ["time_of_crisis", "rome_in_crisis", "dice_race"])
def test_every_generated_function_of_the_bundled_games_compiles(name):
    rs = load_ruleset(name)
    assert all(a.enum is not None for a in rs.actions.values())
    assert all(p.run is not None for p in rs.procedures.values())
    sources = list(rs.codegen.sources())
    assert len(sources) > len(rs.procedures)
    for source in sources:
        compile(source, "<test>", "exec")


def test_author_text_never_appears_in_the_generated_source(tmp_path):
    nasty = 'x"); import os; ("{y}'
    gen = CodeGen("test")
    name = gen.const(nasty)
    assert name.startswith("_k") and gen.env[name] == nasty
    assert gen.const("plain_id") == "'plain_id'"
    assert gen.const(7) == "7" and gen.const(None) == "None" and gen.const(True) == "True"
    game = program(tmp_path, 'set out = "a\\"b{1 + 1}c\\\\d" + "\\{"')
    assert game.glob["out"] == 'a"b2c\\d{'
    sources = list(game.rs.codegen.sources())
    assert sources and not any('a\\"b' in s or 'a"b' in s for s in sources)


def test_names_become_prefixed_python_locals():
    assert local("army") == "v_army"
    with pytest.raises(ValueError):
        local("x); import os; (y")


def test_a_local_set_only_on_another_path_is_fine_when_not_read(tmp_path):
    game = program(tmp_path, """
        if false then
          let x = 5
        end
        set out = if true then 1 else x
    """)
    assert game.glob["out"] == 1


def test_runtime_errors_point_at_the_failing_expression(tmp_path):
    with pytest.raises(LudusError, match=r"rules\.yaml:11:26: error: division by zero"):  # at the '/'
        program(tmp_path, "let a = 0\nlet b = 1\nset out = [1, 2, 7 / a]")


def test_an_error_raised_by_the_engine_takes_the_place_of_its_statement(tmp_path):
    with pytest.raises(LudusError, match=r"rules\.yaml:14:7: error: 1 is not a zone"):
        program(tmp_path, "let a = 1\nlet b = 2\nif a < b then\n  set out = a\nend\nshuffle out\nset out = 3")


CHAIN = """
procedures:
  outer:
    source: T 2
    params: {k: int}
    do: |
      call inner(k + 1)
  inner:
    source: T 2
    params: {n: int}
    do: |
      set out = half(n)
functions:
  half:
    source: T 2
    params: {n: int}
    returns: int
    expr: 10 / (n - 3)
"""


def test_a_runtime_error_shows_the_call_chain_with_arguments(tmp_path):
    with pytest.raises(LudusError) as err:
        program(tmp_path, "call outer(2)", procs=CHAIN.split("functions:")[0].replace("procedures:\n", ""),
                extra="functions:" + CHAIN.split("functions:")[1])
    text = str(err.value).splitlines()
    assert "error: division by zero" in text[0]
    notes = [line.split(": note: ")[1] for line in text[1:]]
    assert notes == ["function half(n=3) was called here", "procedure inner(n=3) was called here",
                     "procedure outer(k=2) was called here"]


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


def test_procedures_that_never_pause_become_plain_functions(tmp_path):
    rules = "globals:\n  out:\n    source: T 2\n    type: int\n" + PROCS
    rs = load_ruleset(make_ruleset(tmp_path, {"rules.yaml": rules}))
    assert rs.procedures["tally"].points == {}
    assert set(rs.procedures["ask_one"].points) == {1}
    game = Game.new(rs, 2, 1)
    assert game.glob["out"] == 6  # 1 + 2 + 3, with no frame pushed for 'tally'
    assert [f["proc"] for f in game.state["stack"]] == ["main", "ask_one"]
    game.apply(1)
    assert game.glob["out"] == 8


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


# the values the closure interpreter computed for these answers before the one compiled path
@pytest.mark.parametrize(("answers", "out"), [([0, 0, 0, 1], [[2, 4, 6], 5]), ([1, 1, 0], [[20, 40], 5]),
                                             ([0, 1, 1], [[2, 40], 5])])
def test_loops_with_choices_inside_resume_from_json_at_every_pause(tmp_path, answers, out):
    outcomes = []
    for saved in (False, True):
        game = program(tmp_path / str(saved), LOOP_WITH_CHOICES)
        for a in answers:
            if saved:  # through JSON at every pause: the place in the loop is data
                game = Game.resume(game.rs, json.loads(game.to_json()))
            game.apply(a)
        outcomes.append((game.glob["out"], game.to_json()))
    assert outcomes[0][0] == out
    assert outcomes[1] == outcomes[0]


def test_a_state_saved_in_format_1_is_refused_with_a_way_forward(tmp_path):
    game = program(tmp_path, LOOP_WITH_CHOICES)
    state = json.loads(game.to_json())
    state["format"] = 1
    with pytest.raises(LudusError, match="format 1 by an older Ludus.*replay its log instead"):
        Game.resume(game.rs, state)


def test_a_frame_at_a_place_that_is_no_resume_point_is_refused(tmp_path):
    game = program(tmp_path, LOOP_WITH_CHOICES)
    state = json.loads(game.to_json())
    state["stack"][-1]["pc"] = 99
    with pytest.raises(LudusError, match="not a resume point"):
        Game.resume(game.rs, state)


def test_the_builtin_table_of_the_docs_is_generated_from_the_registry():
    from pathlib import Path
    docs = (Path(__file__).resolve().parents[1] / "docs" / "dsl.md").read_text(encoding="utf-8")
    assert markdown_table() in docs


# Each failure of an expression's own operation, worded by the expression and placed at it.
# (The text starts at rules.yaml line 9, column 7; the column is the failing expression's.)
NOBODY = "let p = first([q for q in players where false])\n"  # a player, as far as types go; none when run
EXPLAINED = [
    ("let l = [1, 2]\nset out = l[5]", r"rules\.yaml:10:17: error: index 5 is outside a list of 2"),
    ("set out = 1 < out", r"rules\.yaml:9:19: error: cannot compare 1 < none"),  # at the operator
    (NOBODY + "set out = count(p.hand)", r"rules\.yaml:10:25: error: cannot take zone 'hand' of none"),
    (NOBODY + "set out = p.score", r"rules\.yaml:10:19: error: cannot read 'score' of none"),  # at the name
    ("set out = next_in([1, 2], 3)", r"rules\.yaml:9:17: error: next_in\(\): 3 is not in the list"),
    ("let z = 0\nset out = 5 % z", r"rules\.yaml:10:19: error: division by zero"),
    ("set out = max(for c in [] )", r"rules\.yaml:9:17: error: max\(\) of an empty list"),
]


@pytest.mark.parametrize(("code", "message"), EXPLAINED)
def test_each_runtime_error_is_worded_and_placed_by_its_expression(tmp_path, code, message):
    with pytest.raises(LudusError, match=message):
        program(tmp_path, code)


def test_without_column_positions_errors_fall_back_to_their_statement(tmp_path):
    # python -X no_debug_ranges keeps no column ranges: the statement's place is the best left
    import subprocess
    import sys
    rules = "globals:\n  out:\n    source: T 2\n    type: any\nprocedures:\n  main:\n    source: T 2\n" \
            "    do: |\n      let a = 0\n      set out = [1, 7 / a]\n"
    folder = make_ruleset(tmp_path, {"rules.yaml": rules})
    run = subprocess.run([sys.executable, "-X", "no_debug_ranges", "-m", "interpreter", "play", str(folder),
                          "--seed", "1"], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "LUDUS_CACHE": "off"})
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "rules.yaml:10:7: error: division by zero" in run.stderr, run.stderr


@pytest.mark.parametrize(("name", "players"), [("time_of_crisis", 4), ("rome_in_crisis", 3)])
def test_a_game_saved_and_resumed_from_json_again_and_again_plays_as_one_never_saved(name, players):
    from interpreter.bots import RandomBot
    rs = load_ruleset(name)

    def play(save_every: int) -> tuple[str, str]:
        game = Game.new(rs, players, 11)
        bots = {p: RandomBot(11, p) for p in game.players}
        log: list = []
        n = 0
        while not game.over and n < 600:
            if save_every and n % save_every == 0:  # mid-procedure: frames at resume points, loops' places
                log += game.log
                game = Game.resume(rs, json.loads(game.to_json()))
            p = game.deciders()[0]
            game.apply(bots[p].choose(game, p), p)
            n += 1
        return json.dumps(log + game.log), game.to_json()

    assert play(37) == play(0)


NESTED_LOOPS = """let seen = []
for each x1 in [1, 2] do
""" + "".join(f"  for each y{i} in [1] do\n    pass\n  end\n" for i in range(9)) + """  for each x in [10, 20] do
    choose c from [x1 + x] by first(players)
    set seen = seen + [c]
  end
end
set out = seen
"""


def test_nested_loops_that_pause_keep_their_own_places(tmp_path):
    # x1 is the 1st loop and x the 11th, inside it: their places are '$1_x1' and '$11_x' (named
    # '$x11' both, they would overwrite each other); each pause goes through JSON
    game = program(tmp_path, NESTED_LOOPS)
    while not game.over:
        game = Game.resume(game.rs, json.loads(game.to_json()))
        game.apply(0)
    assert game.glob["out"] == [11, 21, 12, 22]
