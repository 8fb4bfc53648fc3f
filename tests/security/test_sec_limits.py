"""Limits on the rules language that no ruleset can switch off (issue 11, part C).

Each hostile rules text is put into a copy of a tiny valid ruleset (tests/broken/_base) and
run through ``ludus`` in a real process (hostile.run_ludus): it must be refused with a located
error within the deadline and the memory bound, with the default limits, never a hang or a
traceback. Long flat sums and ``and`` chains, which real rules write, must work.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hostile import SECONDS, Outcome, assert_refused, run_ludus

from interpreter import Game, IllegalChoice, LudusError, load_ruleset
from interpreter.dsl import expressions as X
from interpreter.model import MAX_INT, MAX_LIST, MAX_STR
from interpreter.runtime import rng

BASE = Path(__file__).resolve().parents[1] / "broken" / "_base"
FUNCTION = """  f:
    source: T 1
    params: {{n: int, k: int}}
    returns: int
    expr: "{expr}"
"""


def tiny(tmp: Path, setup: str | None = None, *, function: str | None = None, manifest: str = "",
         action: str | None = None) -> Path:
    """A copy of the tiny ruleset as tmp/r: ``setup`` as its setup procedure, ``function`` as the
    body of ``f(n, k)``, ``action`` as the body of an action ``boom``, ``manifest`` appended."""
    folder = Path(shutil.copytree(BASE, tmp / "r"))
    game = (folder / "game.yaml").read_text()
    if setup is not None:
        body = "".join(f"      {line}\n" for line in setup.splitlines())
        game = game.replace("procedures:\n", f"procedures:\n  setup:\n    source: T 1\n    do: |\n{body}", 1)
    if function is not None:
        game = game.replace("functions:\n", "functions:\n" + FUNCTION.format(expr=function), 1)
    if action is not None:
        body = "".join(f"      {line}\n" for line in action.splitlines())
        game = game.replace("actions:\n", f"actions:\n  boom:\n    source: T 2\n    group: turn\n    do: |\n{body}", 1)
    (folder / "game.yaml").write_text(game)
    if manifest:
        (folder / "ruleset.yaml").write_text((folder / "ruleset.yaml").read_text() + manifest)
    return folder


def validate(tmp: Path) -> Outcome:
    return run_ludus(["validate", "r"], cwd=tmp)


def play(tmp: Path, seconds: float = SECONDS) -> Outcome:
    return run_ludus(["play", "r", "--seed", "1"], cwd=tmp, seconds=seconds)


def chain(op: str, term: str, n: int) -> str:
    return f" {op} ".join([term] * n)


# ---------------------------------------------------------------- refused at load
LOAD = {
    "unary_minus_500": "let x = " + "-" * 500 + "1",
    "abs_500": "let x = " + "abs(" * 500 + "1" + ")" * 500,
    "if_then_else_500": "let x = " + "if true then " * 500 + "1" + " else 2" * 500,
    "lists_500": "let x = " + "[" * 500 + "1" + "]" * 500,
    "blocks_100": "\n".join(["if true then"] * 100 + ["pass"] + ["end"] * 100),
    "number_5000_digits": "let x = " + "9" * 5000,
    "number_past_2_63": f"let x = {MAX_INT + 1}",
    "die_d0": "roll die d0 as x",
    "die_d1001": "roll 2 dice d1001 as x",
    "die_d_30_digits": "roll die d" + "9" * 30 + " as x",
    "text_too_long": "let x = " + chain("+", "1", 7_500),
}


@pytest.mark.parametrize("case", sorted(LOAD))
def test_refused_at_load(case: str, tmp_path: Path, snapshot) -> None:
    tiny(tmp_path, LOAD[case])
    outcome = validate(tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot


def test_label_nested_too_deeply(tmp_path: Path, snapshot) -> None:
    tiny(tmp_path, 'log "{' + "-" * 500 + '1}"')
    outcome = validate(tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot


@pytest.mark.parametrize("limit", ["steps: 100000000000000000000", "work: 1000000000", "steps: 10"])
def test_limits_past_their_bounds(limit: str, tmp_path: Path, snapshot) -> None:
    tiny(tmp_path, manifest=f"limits: {{{limit}}}\n")
    outcome = validate(tmp_path)
    assert_refused(outcome)
    assert outcome.err.startswith("r/ruleset.yaml:8:")
    assert outcome.err == snapshot


def test_limits_within_their_bounds_load(tmp_path: Path) -> None:
    rs = load_ruleset(str(tiny(tmp_path, manifest="limits: {steps: 2000000, work: 5000000}\n")), cache=False)
    assert (rs.step_budget, rs.work_budget) == (2_000_000, 5_000_000)
    assert (load_ruleset(str(BASE), cache=False).work_budget, Game.new(load_ruleset(str(BASE))).work_budget) == \
        (200_000, 200_000)


# ---------------------------------------------------------------- long flat chains work
@pytest.mark.parametrize(("setup", "shown"), [
    ("let x = " + chain("+", "1", 500) + '\nlog "sum {x}"', "sum 500"),
    ("let x = " + chain("+", "1", 2500) + " - " + chain("-", "1", 2500) + '\nlog "sum {x}"', "sum 0"),
    ("let x = " + chain("*", "1", 3000) + '\nlog "product {x}"', "product 1"),
    ("let x = " + chain("and", "true", 1500) + " and " + chain("or", "false", 1500) + '\nlog "and {x}"',
     "and false"),
    ('log "label {' + chain("+", "1", 500) + '}"', "label 500"),
    ('let s = "ab"\nlog "text {' + chain("+", "s", 2000) + ' + 1}"', "text " + "ab" * 2000 + "1"),
], ids=["sum_500", "sum_5000", "product_3000", "and_or_3000", "label_500", "text_2000"])
def test_long_flat_chains_run(setup: str, shown: str, tmp_path: Path) -> None:
    tiny(tmp_path, setup)
    outcome = play(tmp_path, seconds=30)  # a valid ruleset: no deadline to prove
    assert outcome.code == 0, outcome.err[-2000:]
    assert not outcome.timed_out
    assert shown in outcome.out.splitlines()


# ---------------------------------------------------------------- refused while running
RUN = {
    "comprehensions_10_to_10": "let x = count([[y for y in 1..99999] for z in 1..99999])",
    "sum_over_a_range_in_a_loop": "repeat\n  let x = sum(1..99999)\nuntil false",
    "membership_in_a_loop": "let l = 1..99999\nrepeat\n  let b = 0 in l\nuntil false",
    "square_64_times": "let x = 2\nrepeat\n  set x = x * x\nuntil x < 0",
    "increase_by_itself": "let x = 1\nrepeat\n  increase x by x\nuntil x < 0",
    "sum_past_2_63": f"let x = sum([{MAX_INT}, {MAX_INT}])",
    "double_a_list_40_times": "let l = [1]\nrepeat\n  set l = l + l\nuntil count(l) < 0",
    "double_a_text": 'let s = "ab"\nrepeat\n  set s = "{s}{s}"\nuntil s == ""',
    "concatenate_a_text": 'let s = "ab"\nrepeat\n  set s = s + s\nuntil s == ""',
    "nested_for_loops": "let l = 1..1000\nfor each a in l do\n  for each b in l do\n    pass\n  end\nend",
    "compare_long_lists_in_a_loop": "let l = 1..99999\nlet m = 1..99999\nrepeat\n  let b = l == m\nuntil false",
    "sort_lists_of_long_lists": "let l = 1..99999\nlet m = sort([l for x in 1..1000])",
}


@pytest.mark.parametrize("case", sorted(RUN))
def test_refused_while_running(case: str, tmp_path: Path, snapshot) -> None:
    tiny(tmp_path, RUN[case])
    outcome = play(tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot


def test_doubly_recursive_function_60_deep(tmp_path: Path, snapshot) -> None:
    tiny(tmp_path, "let x = f(60, 1)", function="if n == 0 then 1 else f(n - 1, k * 2) + f(n - 1, k * 2 + 1)")
    outcome = play(tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot


def test_work_budget_is_per_decision_and_configurable(tmp_path: Path) -> None:
    # 60,000 items a decision for three rounds: within a budget of 100,000 per decision, but
    # not within 50,000 (the budget starts again at each decision, it does not add up)
    action = "let x = count(1..60000)"
    ok = tiny(tmp_path / "ok", action=action, manifest="limits: {work: 100000}\n")
    game = Game.new(load_ruleset(str(ok), cache=False), seed=1)
    for _ in range(6):
        game.apply("boom")
    assert game.over
    tight = tiny(tmp_path / "tight", action=action, manifest="limits: {work: 50000}\n")
    game = Game.new(load_ruleset(str(tight), cache=False), seed=1)
    with pytest.raises(LudusError, match=r"r/game\.yaml:\d+:7: error: too much work before a decision"):
        game.apply("boom")


def test_a_failing_action_leaves_the_state_untouched(tmp_path: Path) -> None:
    rs = load_ruleset(str(tiny(tmp_path, action="let l = [1]\nrepeat\n  set l = l + l\nuntil false")), cache=False)
    game = Game.new(rs, seed=1)
    before, log = game.to_json(), list(game.log)
    with pytest.raises(LudusError, match="list too long"):
        game.apply("boom")
    assert (game.to_json(), game.log) == (before, log)


def test_values_at_the_bounds_are_kept(tmp_path: Path) -> None:
    thousand = "x" * 1000
    setup = (f"let big = {MAX_INT} - 1 + 1\nlet small = -{MAX_INT}\nlet l = 1..{MAX_LIST}\n"
             f'let s = "{thousand}"\nlet t = "' + "{s}" * (MAX_STR // 1000) + '"\n'
             'log "{big} {small} {count(l)} {count([c for c in l])} {count(l + [])}"\n'
             'log "{t}"')
    rs = load_ruleset(str(tiny(tmp_path, setup, manifest="limits: {work: 1000000}\n")), cache=False)
    game = Game.new(rs, seed=1)
    texts = [e["text"] for e in game.log if e["type"] == "text"]
    assert texts[:2] == [f"{MAX_INT} {-MAX_INT} {MAX_LIST} {MAX_LIST} {MAX_LIST}", "x" * MAX_STR]


# ---------------------------------------------------------------- dice
def test_forced_die_out_of_range_is_an_illegal_choice() -> None:
    game = Game.new(load_ruleset("dice_race"), seed=1)
    before, log = game.to_json(), list(game.log)
    for die in (10**30, 10**5000, 1001, 0, -1, "6", True):
        with pytest.raises(IllegalChoice, match="forced dice must be whole numbers from 1 to 1000"):
            game.apply(0, dice=[die])
        assert (game.to_json(), game.log) == (before, log)
    with pytest.raises(LudusError, match="forced dice must be whole numbers from 1 to 1000, not a number of 16610 bits"):
        Game.new(load_ruleset("dice_race"), seed=1, dice=[10**5000])


def test_roll_checks_the_sides_at_run_time() -> None:
    game = Game.new(load_ruleset("dice_race"), seed=1)
    for sides in (0, 1001, 2**70):
        with pytest.raises(Exception, match="a die has 1 to 1000 sides"):
            game.roll(1, sides, None, None)
    assert game.roll(3, 1, None, None) == [1, 1, 1]


# ---------------------------------------------------------------- Python's own limits
def test_memory_error_while_running_is_located(monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(state: int, n: int) -> tuple[int, int]:
        raise MemoryError

    rs = load_ruleset("dice_race")
    monkeypatch.setattr(rng, "below", exhausted)
    with pytest.raises(LudusError) as info:
        Game.new(rs, seed=1)
    assert info.value.diagnostics[0].loc.line > 0
    assert "out of memory" in str(info.value)


@pytest.mark.parametrize("error", [RecursionError, MemoryError])
def test_python_limits_while_compiling_are_located(error: type[BaseException], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(self: X.Expressions, n: object, scope: object) -> None:
        raise error

    monkeypatch.setattr(X.Expressions, "x_Num", exhausted)
    with pytest.raises(LudusError) as info:
        load_ruleset(str(tiny(tmp_path, "let x = 1")), cache=False)
    text = str(info.value)
    assert "Traceback" not in text
    assert all(d.loc.line > 0 for d in info.value.diagnostics)
    assert "rules text" in text


def test_loops_nested_past_what_python_compiles_are_refused_at_their_place(tmp_path: Path) -> None:
    # 30 nested loops: more blocks than Python compiles in one function (20), fewer than the
    # language's nesting (64); refused when the ruleset is loaded, at the 17th loop
    setup = "let n = 0\n" + "for each a in [1] do\n" * 30 + "increase n by 1\n" + "end\n" * 30 + 'log "n {n}"'
    for nested, ok in ((16, True), (30, False)):
        setup = "let n = 0\n" + "for each a in [1] do\n" * nested + "increase n by 1\n" + "end\n" * nested
        outcome = play(tiny(tmp_path / str(nested), setup + 'log "n {n}"').parent)
        if ok:
            assert outcome.code == 0, outcome.err[-2000:]
            assert "n 1" in outcome.out.splitlines()
        else:
            assert_refused(outcome)
            assert "loops nested too deeply to run (more than 16 inside each other)" in outcome.err


def test_state_of_a_refused_game_is_json(tmp_path: Path) -> None:
    rs = load_ruleset(str(tiny(tmp_path, action="let x = 1\nrepeat\n  set x = x * 3\nuntil false")), cache=False)
    game = Game.new(rs, seed=1)
    with pytest.raises(LudusError, match="number out of range"):
        game.apply("boom")
    json.loads(game.to_json())


def test_value_nested_too_deeply_to_save(tmp_path: Path) -> None:
    # a list put inside itself 150,000 times (within the step budget) is built, but the
    # game cannot save it: a located error, the state unchanged. Copies of the game (undo's
    # before a choice, a bot's trial) share a frame's values, so they go on.
    setup = ("let l = []\nlet i = 0\nwhile i < 150000 do\n  set l = [l]\n  increase i by 1\nend\n"
             "choose x from [1, 2] by first(players)")
    game = Game.new(load_ruleset(str(tiny(tmp_path, setup)), cache=False), seed=1)
    pending = game.pending
    with pytest.raises(LudusError, match=r"r/game\.yaml:\d+:7: error: a value of the game is nested too deeply"):
        game.to_json()
    assert game.pending is pending and not game.over
    game.copy().apply(0)
    game.apply(0)
    assert game.pending is not pending
    json.loads(game.to_json())  # the value went with the procedure that made it


def test_type_nested_too_deeply(tmp_path: Path) -> None:
    folder = tiny(tmp_path)
    game = (folder / "game.yaml").read_text()
    (folder / "game.yaml").write_text(game.replace("      value: int", "      value: int\n      deep: "
                                                   + "list of " * 5000 + "int", 1))
    with pytest.raises(LudusError, match=r"r/game\.yaml:\d+:\d+: error: unknown type 'list of list of"):
        load_ruleset(str(folder), cache=False)
    (folder / "game.yaml").write_text(game.replace("      value: int", "      value: int\n      deep: "
                                                   + "list of " * 8 + "int", 1))
    assert str(load_ruleset(str(folder), cache=False).kinds["token"].fields["deep"].type) == "list:" * 8 + "int"


def test_operator_inside_a_text_keeps_its_place(tmp_path: Path) -> None:
    # a sum is one flat chain; its operators are placed in the file like any node
    rs = load_ruleset(str(tiny(tmp_path, 'let z = 0\nlog "x {1 + 2 / z}"')), cache=False)
    with pytest.raises(LudusError, match=r"r/game\.yaml:49:21: error: division by zero"):
        Game.new(rs, seed=1)
