"""Broken inputs get located, actionable errors: exit code 1, never a traceback.

Each case runs the `ludus` command in-process on one broken input under tests/broken/
(see its README) and checks, in this order:

1. the exit code is 1 and no Python traceback is printed;
2. every error line has the compiler shape `path:line:col: error: message` (or
   `NAME: error: message` for command-line mistakes, which have no file position);
3. every reported position exists: the line is in the file and the column is on that line;
4. the errors are the expected ones: one expectation per error line, each a location
   (regex, matched at the start of the line, after `tests/broken/`) and a phrase (regex
   searched in the line). The expectations are the *judged correct* locations — the exact
   character of the offending text in the author's file;
5. stderr matches its syrupy snapshot exactly.

Cases where the engine is wrong today are marked xfail(strict=True) with the reason; they
fail at one of steps 1-4, before any snapshot is taken. When the engine is fixed, the test
XPASSes, which fails the run: remove the mark, then `pytest tests/test_errors.py
--snapshot-update` records the corrected message.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from interpreter.cli import main

ROOT = Path(__file__).resolve().parent.parent
B = "tests/broken"
LOCATED = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(?P<col>\d+): error: \S")
UNLOCATED = re.compile(r"^[^\s:]+: error: \S")


@dataclass(frozen=True)
class Case:
    id: str
    argv: list[str]
    # one (location regex, phrase regex) per error line, in the order printed
    expect: list[tuple[str, str]] = field(default_factory=list)
    located: bool = True  # errors carry path:line:col
    xfail: str = ""


def validate(case: str, *expect: tuple[str, str], xfail: str = "") -> Case:
    return Case(case, ["validate", f"{B}/{case}"], list(expect), xfail=xfail)


def play(case: str, *expect: tuple[str, str], xfail: str = "") -> Case:
    return Case(case, ["play", f"{B}/{case}", "--seed", "1", "--quiet"], list(expect), xfail=xfail)


def scenario(case: str, *expect: tuple[str, str], xfail: str = "") -> Case:
    return Case(case, ["scenario", f"{B}/{case}.yaml"], list(expect), xfail=xfail)


def replay(case: str, *expect: tuple[str, str], ruleset: bool = True, xfail: str = "") -> Case:
    extra = ["--ruleset", f"{B}/_base"] if ruleset else []
    return Case(case, ["replay", f"{B}/{case}.jsonl", *extra], list(expect), xfail=xfail)


def cli(case: str, argv: list[str], *expect: tuple[str, str], xfail: str = "") -> Case:
    return Case(case, argv, list(expect), located=False, xfail=xfail)


CASES = [
    # ---------------------------------------------------------------- YAML syntax
    validate("yaml_missing_colon",  # line 28 reads `kind token`
             (r"yaml_missing_colon/game.yaml:28:5", r"YAML syntax: could not find expected ':'")),
    validate("yaml_unclosed_bracket",  # line 24 reads `value: [3`, never closed
             (r"yaml_unclosed_bracket/game.yaml:24:12", r"YAML syntax: .*\]")),
    validate("yaml_tab",
             (r"yaml_tab/game.yaml:25:1", r"YAML syntax: found character '\\t'")),
    # a YAML duplicate key: the same entity id twice in one file
    validate("yaml_duplicate_id",
             (r"yaml_duplicate_id/game.yaml:26:3", r"duplicate .*gold(?!.*\{').*\b21\b")),
    # ---------------------------------------------------------------- JSON Schema
    validate("schema_wrong_type",
             (r"schema_wrong_type/game.yaml:10:12", r"wrong type at zones/bag/holds: expected text, got a list")),
    validate("schema_unknown_key",
             (r"schema_unknown_key/game.yaml:14:5", r"unknown key 'visiblity' .*did you mean 'visibility'")),
    validate("schema_missing_key",
             (r"schema_missing_key/game.yaml:65:5", r"missing 'group' in actions/wait")),
    validate("schema_reconstructed_no_note",
             (r"schema_reconstructed_no_note/game.yaml:27:5", r"missing 'note' in entities/silver")),
    validate("schema_bad_id",  # line 26 reads `  Silver-Coin:`
             (r"schema_bad_id/game.yaml:26:3", r"Silver-Coin.*snake_case")),
    validate("schema_empty_entry",  # line 21 reads `  nothing:` with no value
             (r"schema_empty_entry/game.yaml:21:3", r"entities/nothing.*(empty|nothing)")),
    validate("manifest_players_min_gt_max",  # players: {min: 3, max: 2}
             (r"manifest_players_min_gt_max/ruleset.yaml:4:\d+", r"min")),
    validate("unknown_field_type",
             (r"unknown_field_type/game.yaml:5:14", r"unknown type 'integer' \(did you mean 'int'\?\)")),
    validate("manifest_missing_file",
             (r"manifest_missing_file/ruleset.yaml:8:5", r"file not found: extra.yaml")),
    # ---------------------------------------------------------------- cross-references
    validate("unknown_kind",
             (r"unknown_kind/game.yaml:23:11", r"unknown kind 'tokn' \(did you mean 'token'\?\)")),
    validate("unknown_entity_ref",
             (r"unknown_entity_ref/game.yaml:30:14", r"unknown token 'glod' \(did you mean 'gold'\?\)")),
    validate("unknown_zone",
             (r"unknown_zone/game.yaml:31:11", r"unknown zone 'bags' \(did you mean 'bag'\?\)")),
    validate("wrong_kind_of_id",
             (r"wrong_kind_of_id/game.yaml:32:14", r"wrong kind of id: 'flag' is a marker, not a token")),
    validate("duplicate_id_across_files",
             (r"duplicate_id_across_files/more.yaml:6:3",
              r"duplicate id 'gold' .*duplicate_id_across_files/game.yaml:21:3")),
    # ---------------------------------------------------------------- rules language
    validate("dsl_block_syntax",  # `move t to to actor.pile` inside `do: |`
             (r"dsl_block_syntax/game.yaml:63:17", r"syntax error: unexpected 'to'")),
    validate("dsl_block_unclosed",  # the `for each ... do` has no `end`
             (r"dsl_block_unclosed/game.yaml:52:7", r"syntax error: unexpected 'until' \(expected 'end'\)")),
    validate("dsl_quoted_syntax",  # `>>` in a double-quoted expression: the second '>'
             (r"dsl_quoted_syntax/game.yaml:60:42", r"syntax error: unexpected '>'")),
    validate("dsl_plain_syntax",  # `expr: points[t.value)` (plain scalar)
             (r"dsl_plain_syntax/game.yaml:43:25", r"syntax error: unexpected '\)' \(expected '\]'\)")),
    validate("dsl_quoted_escape",  # `vale` after two \" escapes in a double-quoted expression
             (r"dsl_quoted_escape/game.yaml:60:44", r"no field or zone 'vale' \(did you mean 'value'\?\)")),
    validate("dsl_label_template_quotes",  # label: 'Take "the" {t.vale}'
             (r"dsl_label_template_quotes/game.yaml:61:27", r"no field or zone 'vale'")),
    validate("dsl_plain_multiline",  # `+ count(p.pile) * worth(p)` continues the plain scalar on line 72
             (r"dsl_plain_multiline/game.yaml:72:29", r"argument 't' must be a token, not a player")),
    validate("dsl_folded_block",  # `do: >` folds the two statements into one line
             (r"dsl_folded_block/game.yaml:(62|64):\d+", r"")),
    validate("dsl_block_indent_indicator",  # `do: |2`, content indented 4 more than `do`
             (r"dsl_block_indent_indicator/game.yaml:63:19", r"syntax error: unexpected 'to'")),
    validate("dsl_unknown_name",  # `until rounds >= 3`
             (r"dsl_unknown_name/game.yaml:53:13", r"unknown name 'rounds' \(did you mean 'round'\?\)")),
    validate("dsl_unknown_variable",  # `increase rund by 1`
             (r"dsl_unknown_variable/game.yaml:49:18", r"unknown variable 'rund' \(did you mean 'round'\?\)")),
    validate("dsl_unknown_field",  # `actor.piles`
             (r"dsl_unknown_field/game.yaml:63:23", r"player has no field or zone 'piles' \(did you mean 'pile'\?\)")),
    validate("dsl_type_text_amount",  # `increase round by "one"`
             (r"dsl_type_text_amount/game.yaml:49:27", r"wrong type: the amount must be a number, not text")),
    validate("dsl_type_text_plus_number",  # `score: sum(...) + " points"`: '+' with text is concatenation
             (r"dsl_type_text_plus_number/game.yaml:71:42", r"wrong type: the score must be a number, not text")),
    validate("dsl_where_not_bool",  # `where x.value`
             (r"dsl_where_not_bool/game.yaml:60:35", r"'where' condition must be true/false, not a number")),
    validate("dsl_wrong_arg_count",  # `worth(t, 2)`
             (r"dsl_wrong_arg_count/game.yaml:71:15", r"function 'worth' takes 1 argument\(s\) \(t\), got 2")),
    # enumerations and constants: 'metal' is an enumeration of gold and silver
    validate("overlay_frankz",  # an overlay of time_of_crisis writes 'frankz' in a crisis table row
             (r"overlay_frankz/patch.yaml:4:12", r"unknown crisis_result 'frankz' \(did you mean 'franks'\?\)")),
    validate("enum_field_value",  # gold's metal is 'gould'
             (r"enum_field_value/game.yaml:29:12", r"unknown metal 'gould' \(did you mean 'gold'\?\)")),
    validate("enum_literal_compare",  # `if t.metal == "silvr"`
             (r"enum_literal_compare/game.yaml:67:21", r"'silvr' is not a metal \(did you mean 'silver'\?\)")),
    validate("constant_set",  # `set last_round = 4`, a constant
             (r"constant_set/game.yaml:55:13", r"'last_round' is a constant: rules cannot change it")),
    # procedure-valued fields: token declares 'effect: {type: procedure, params: {p: player}}'
    validate("procfield_missing",  # silver carries an effect, gold none (and no default)
             (r"procfield_missing/game.yaml:22:3", r"token 'gold' has no 'effect'.*default")),
    validate("procfield_arity",  # `call t.effect()`
             (r"procfield_arity/game.yaml:67:7", r"procedure field 'token.effect' takes 1 argument\(s\) \(p\), got 0")),
    validate("procfield_unknown",  # `call t.efect(actor)`
             (r"procfield_unknown/game.yaml:67:7", r"token has no procedure field 'efect' \(did you mean 'effect'\?\)")),
    validate("dsl_unknown_procedure",  # `call refil()`
             (r"dsl_unknown_procedure/game.yaml:53:9", r"unknown procedure 'refil' \(did you mean 'refill'\?\)")),
    validate("dsl_two_errors",  # every error is reported, in file order
             (r"dsl_two_errors/game.yaml:49:18", r"unknown variable 'rund'"),
             (r"dsl_two_errors/game.yaml:63:23", r"no field or zone 'piles'")),
    # ---------------------------------------------------------------- overlays and extends
    validate("overlay_missing_id",
             (r"overlay_missing_id/patch.yaml:3:11", r"no 'platinum' in entities"),
             (r"overlay_missing_id/patch.yaml:7:11", r"cannot remove 'entities/silvr'.*did you mean 'silver'")),
    validate("overlay_expect_changed",  # expects 'move t to actor.hand'; the base moves to actor.pile
             (r"overlay_expect_changed/patch.yaml:4:13",
              r"the base has changed: .*'actions/take/do'.*now reads 'move t to actor.pile'.*_base/game.yaml:62:9")),
    validate("overlay_lines_range",  # lines 2-3 of a one-line text
             (r"overlay_lines_range/patch.yaml:4:12", r"lines '2-3' are not lines of 'actions/take/do', which has 1")),
    validate("overlay_find_twice",  # 'round' occurs three times in main
             (r"overlay_find_twice/patch.yaml:4:11", r"'find' must match exactly once .* it matches 3 times")),
    validate("setup_patch_fails",  # the set-up 'rich_start' sets entities/gold/valu
             (r"setup_patch_fails/game.yaml:78:15", r"cannot set 'entities/gold/valu': it does not exist.*'value'")),
    validate("overlay_bad_path",
             (r"overlay_bad_path/patch.yaml:3:11", r"no 'entitys' in the ruleset \(did you mean 'entities'\?\)")),
    validate("overlay_remove_still_used",  # removes gold, which _base's silver still names as partner
             (r"_base/game.yaml:30:14", r"unknown token 'gold'.*overlay_remove_still_used/patch.yaml")),
    validate("extends_unknown",
             (r"extends_unknown/ruleset.yaml:3:10", r"extends unknown ruleset 'dice_rase' \(did you mean 'dice_race'\?\)")),
    validate("extends_cycle/a",
             (r"extends_cycle/b/ruleset.yaml:3:10", r"extends cycle: a -> b -> a")),
    # ---------------------------------------------------------------- faults while playing
    play("runtime_runaway_loop",  # `repeat ... until false`, limits: {steps: 1000}
         (r"runtime_runaway_loop/game.yaml:(48|49|50):\d+", r"runaway rules in 'main': more than 1000 steps")),
    play("runtime_table_no_row",  # worth(bronze) looks up points[2]
         (r"runtime_table_no_row/game.yaml:47:11", r"table 'points' has no row for '2'")),
    play("runtime_overlay_lines",  # line 2 of main replaced by 'increase round by points[2]' (no row 2)
         (r"runtime_overlay_lines/patch.yaml:6:30", r"table 'points' has no row for '2'")),
    play("runtime_narration",  # 'take' narrates, then fails: the narration, undone, is shown as a note
         (r"runtime_narration/patch.yaml:7:28", r"table 'points' has no row for '2'")),
    play("runtime_overlay_data",  # the overlay sets silver's value to 2: the base's worth() finds no row 2
         (r"_base/game.yaml:43:11", r"table 'points' has no row for '2'")),
    play("runtime_overlay_chain",  # an overlay's worth() looks up points[2], called from its 'take'
         (r"runtime_overlay_chain/patch.yaml:4:12", r"table 'points' has no row for '2'")),
    play("runtime_field_of_none",  # `best.value` where best is none
         (r"runtime_field_of_none/game.yaml:49:30", r"cannot read 'value' of none")),
    play("runtime_nothing_to_choose",
         (r"runtime_nothing_to_choose/game.yaml:48:7", r"red must choose 't' but there is nothing to choose from")),
    play("runtime_endless_recursion",  # main: choose an action, then `call main()`
         (r"runtime_endless_recursion/game.yaml:(48|49):\d+", r"nested more than 200 deep")),
    # ---------------------------------------------------------------- scenarios
    scenario("scenario_schema",
             (r"scenario_schema.yaml:1:1", r"missing 'steps'"),
             (r"scenario_schema.yaml:2:10", r"wrong type at players: expected a whole number, got 'two'"),
             (r"scenario_schema.yaml:3:1", r"unknown key 'step' .*did you mean 'steps'")),
    scenario("scenario_illegal_choice",  # gold was taken at step 1
             (r"scenario_illegal_choice.yaml:6:5", r"step 2: illegal choice: 'Take gold' is not one of the 2 choices")),
    scenario("scenario_inconsistent",  # gallia names a governor not in office; two armies in Syria's capital
             (r"scenario_inconsistent.yaml:4:1", r"breaks the invariant 'governors_in_office'"),
             (r"scenario_inconsistent.yaml:4:1", r"breaks the invariant 'one_army_per_capital': two armies")),
    scenario("scenario_unknown_entity",
             (r"scenario_unknown_entity.yaml:5:5", r"unknown entity 'platinum'"),
             (r"scenario_unknown_entity.yaml:7:22", r"unknown entity 'copper'")),
    scenario("scenario_create_bad_kind",  # a new entity needs a kind of the ruleset, not a player
             (r"scenario_create_bad_kind.yaml:5:5", r"cannot make 'extra_coin': 'coin' is not a kind of the ruleset"),
             (r"scenario_create_bad_kind.yaml:6:5", r"cannot make 'extra_card': 'player' is not a kind")),
    scenario("scenario_bad_assert",
             (r"scenario_bad_assert.yaml:7:22", r"player has no field or zone 'piles'")),
    # ---------------------------------------------------------------- logs
    replay("log_invalid_json",  # line 3 lost its closing brace
           (r"log_invalid_json.jsonl:3:70", r"not valid JSON")),
    replay("log_diverges",  # line 2: index 1 -> 0, label kept ("Take silver")
           (r"log_diverges.jsonl:2:1", r"replay diverges: the log has .*Take silver.* the rules now give .*Take gold")),
    replay("log_bad_index",  # line 4: index 0 -> 7
           (r"log_bad_index.jsonl:4:1", r"replay diverges: choice 7 is out of range")),
    replay("log_no_header",  # the header line removed
           (r"log_no_header.jsonl:1:1", r"a log starts with its header line")),
    replay("log_other_version",  # header digest changed
           (r"log_other_version.jsonl:1:1", r"different version of ruleset 'tiny'")),
    replay("log_unknown_ruleset",  # the header names 'tiny', which is not a bundled ruleset
           (r"log_unknown_ruleset.jsonl:1:\d+", r"'tiny'"),
           ruleset=False),
    # ---------------------------------------------------------------- command line
    cli("cli_players_out_of_range", ["play", "dice_race", "--players", "9"],
        (r"", r"is for 2 to 4 players, not 9")),
    cli("cli_bad_seat_name", ["play", "dice_race", "--seat", "nobody=human"],
        (r"ludus: error: ", r"bad --seat 'nobody=human'.*one of red, blue, green, yellow")),
    cli("cli_bad_seat_kind", ["play", "dice_race", "--seat", "red=genius"],
        (r"ludus: error: ", r"bad --seat 'red=genius'.*human, random, greedy")),
    cli("cli_unknown_ruleset", ["play", "dice_rase"],
        (r"", r"no ruleset 'dice_rase' \(did you mean 'dice_race'\?\)")),
    cli("cli_players_not_a_number", ["play", "dice_race", "--players", "nine"],
        (r"ludus: error: ", r"argument --players: invalid int value: 'nine'")),
    cli("cli_missing_scenario_file", ["scenario", f"{B}/no_such_scenario.yaml"],
        (r"tests/broken/no_such_scenario.yaml: error: ", r"^(?!.*manifest).*not found")),
]


def _params() -> list:
    out = []
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        out.append(pytest.param(case, id=case.id.replace("/", "_"), marks=marks))
    return out


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Messages print paths relative to the working directory: run from the repository root.

    argparse wraps its usage lines to the terminal width: fix it so snapshots do not depend on it.
    """
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "80")
    return ROOT


def run_in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if ": error: " in line]


def check_positions(lines: list[str]) -> None:
    """Every reported line exists and every column is on its line (at most one past its end)."""
    for line in lines:
        m = LOCATED.match(line)
        if not m:
            continue
        path = ROOT / m["path"]
        assert path.is_file(), f"{line!r}: no such file"
        text = path.read_text(encoding="utf-8").splitlines()
        n, col = int(m["line"]), int(m["col"])
        assert 1 <= n <= len(text), f"{line!r}: the file has {len(text)} lines"
        assert 1 <= col <= len(text[n - 1]) + 1, f"{line!r}: line {n} has {len(text[n - 1])} characters"


@pytest.mark.parametrize("case", _params())
def test_broken_input(case: Case, at_root: Path, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    code, out, err = run_in_process(case.argv, capsys)
    assert code == 1, f"exit code {code}; stderr:\n{err}"
    assert "Traceback" not in out + err
    lines = error_lines(err)
    assert lines, f"no error line in stderr:\n{err}"
    shape = LOCATED if case.located else UNLOCATED
    for line in lines:
        assert shape.match(line), f"not a compiler-style error: {line!r}"
    check_positions(lines)
    assert len(lines) == len(case.expect), "errors:\n" + "\n".join(lines)
    for line, (where, says) in zip(lines, case.expect, strict=True):
        prefix = f"{B}/{where}" if where and not where.startswith(("ludus", B)) else where
        if case.located:
            prefix += ": error: "
        assert re.match(prefix, line), f"expected at {prefix!r}:\n{line}"
        assert re.search(says, line), f"expected {says!r} in:\n{line}"
    assert err == snapshot


# `python -m interpreter` is the same command: a few cases through a real process prove that
# nothing prints a traceback on its way out and that the output is the same as in-process.
SUBPROCESS_CASES = ["yaml_tab", "dsl_block_syntax", "runtime_runaway_loop", "log_invalid_json",
                    "scenario_illegal_choice", "cli_players_not_a_number"]


@pytest.mark.parametrize("case", [c for c in CASES if c.id in SUBPROCESS_CASES], ids=lambda c: c.id)
def test_python_m_interpreter_prints_the_same_error(case: Case, at_root: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "interpreter", *case.argv], cwd=ROOT,
                          env={**os.environ, "COLUMNS": "80"}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    _code, _out, err = run_in_process(case.argv, capsys)
    assert proc.stderr == err
