"""Scenario files: positions, forced dice, expectations; the runner reports failures readably."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from interpreter import LudusError
from interpreter.cli import main
from interpreter.scenario import run_scenario

HERE = Path(__file__).parent
SCENARIOS = sorted((HERE / "scenarios").rglob("*.yaml"))
ROOT = HERE.parent


@pytest.mark.parametrize("path", SCENARIOS, ids=[str(p.relative_to(HERE / "scenarios")) for p in SCENARIOS])
def test_scenario_expectations_hold(path):
    run = run_scenario(path)
    assert run.failures == []


@pytest.mark.parametrize("path", SCENARIOS, ids=[str(p.relative_to(HERE / "scenarios")) for p in SCENARIOS])
def test_scenario_final_state(path, snapshot, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert main(["scenario", str(path.relative_to(ROOT))]) == 0
    assert capsys.readouterr().out == snapshot


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return p


def test_failed_expectations_show_a_readable_difference(tmp_path, monkeypatch, capsys):
    write(tmp_path, """
        ruleset: dice_race
        players: 2
        steps: []
        expect:
          globals: {round: 5, goal: 30}
          entities: {red: {position: 3, speed: 1}}
        assert:
          - "count(deck) == 99"
    """)
    monkeypatch.chdir(tmp_path)
    assert main(["scenario", "s.yaml"]) == 1
    err = capsys.readouterr().err
    assert "globals.round: expected 5, got 1" in err
    assert "entities.red.position: expected 3, got 0" in err
    assert "entities.red.speed: expected 1, but it is missing" in err
    assert "s.yaml:8:6: assertion failed: count(deck) == 99 (left side is 12, right side is 99)" in err
    assert "globals.goal" not in err


def test_an_illegal_step_is_located(tmp_path, monkeypatch):
    path = write(tmp_path, """
        ruleset: dice_race
        players: 2
        steps:
          - {player: red, choose: "Step 9"}
    """)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LudusError) as err:
        run_scenario(path)
    assert str(err.value).startswith("s.yaml:4:5: error: step 1: illegal choice: 'Step 9' is not one of")


def test_start_runs_one_procedure_after_setup(tmp_path):
    path = write(tmp_path, """
        ruleset: dice_race
        players: 2
        start: {procedure: end_of_round}
        state:
          zones: {hand@red: [], hand@blue: [step_1_1]}
        steps: []
        expect:
          result: {reason: the rules ran to their end}
    """)
    run = run_scenario(path)
    assert run.failures == []
    hands = {k: v for k, v in run.game.state["zones"].items() if k.startswith("hand@")}
    assert [len(v) for v in hands.values()] == [3, 3]


def test_json_output_is_the_whole_state(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert main(["scenario", "--json", "tests/scenarios/dice_race/boost_and_roll.yaml"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["entities"]["red"]["position"] == 14
    assert state["stack"]  # the continuation is part of the state


def test_patched_values_are_type_checked_and_bad_counts_located(tmp_path, monkeypatch):
    path = write(tmp_path, """
        ruleset: dice_race
        players: 2
        state:
          entities: {red: {position: fast}}
          globals: {goal: [1]}
        steps: []
    """)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LudusError) as err:
        run_scenario(path)
    text = str(err.value)
    assert "s.yaml:4:30: error: wrong type: 'fast' is not int" in text
    assert "s.yaml:5:19: error: wrong type: [1] is not int" in text
    path = write(tmp_path, "ruleset: dice_race\nplayers: 7\nsteps: []\n")
    with pytest.raises(LudusError, match=r"s.yaml:2:10: error: dice_race is for 2 to 4 players, not 7"):
        run_scenario(path)


# ----------------------------------------------------------------- offered / not_offered
def test_matchers_pass_when_the_choices_are_as_stated(tmp_path):
    path = write(tmp_path, """
        ruleset: dice_race
        players: 2
        steps:
          - offered: ["Step 3", "/^Boost$/"]
            not_offered: ["Step 9", "/^Roll/"]
          - {player: red, choose: Step 3}
          - {player: blue, choose: Boost}
        offered: [{action: roll}, {action: roll, player: red}, {label: Roll}]
        not_offered: [{action: roll, player: blue}, {action: boost, player: blue}]
    """)
    run = run_scenario(path)
    assert run.ok, run.failures


def test_a_failed_matcher_is_a_failed_expectation_listing_the_offered_choices(tmp_path, monkeypatch, capsys):
    write(tmp_path, """
        ruleset: dice_race
        players: 2
        steps:
          - offered: ["Step 9"]
            not_offered: ["Boost"]
            player: red
            choose: Step 3
        offered: ["/^Sprint/"]
    """)
    monkeypatch.chdir(tmp_path)
    assert main(["scenario", "s.yaml"]) == 1
    err = capsys.readouterr().err
    assert "s.yaml:4:5: step 1: expected a choice matching 'Step 9' to be offered; offered: Step 3; Step 3; Boost" in err
    assert "s.yaml:4:5: step 1: expected no choice matching 'Boost', but offered: Boost; Boost" in err
    # red has chosen: blue's secret choice is pending
    assert "s.yaml:8:10: at the end: expected a choice matching /^Sprint/ to be offered; offered: Boost; Step 1; Step 3" in err
    assert "error:" not in err  # failed expectations, not errors of the file


@pytest.mark.parametrize(("pattern", "message"), [
    ("/(a+)+b/", r"s.yaml:4:15: error: pattern /\(a\+\)\+b/ is refused: a repeat inside a repeat"),
    ("/(x)\\\\1/", r"is refused: a backreference"),
    ("/[/", r"s.yaml:4:15: error: bad pattern /\[/"),
    ("/" + "a" * 201 + "/", r"pattern too long: 201 characters"),
])
def test_a_pattern_that_could_hang_or_is_wrong_is_refused(tmp_path, pattern, message):
    path = write(tmp_path, f"""
        ruleset: dice_race
        players: 2
        steps:
          - offered: ["{pattern}"]
    """)
    with pytest.raises(LudusError, match=message):
        run_scenario(path)


def test_a_step_must_choose_or_check_something(tmp_path):
    path = write(tmp_path, """
        ruleset: dice_race
        players: 2
        steps:
          - {player: red}
    """)
    with pytest.raises(LudusError, match="s.yaml:4:5: error: step 1 chooses nothing and checks nothing"):
        run_scenario(path)


def test_players_default_to_the_rulesets_usual_count(tmp_path):
    toc = write(tmp_path, """
        ruleset: time_of_crisis
        steps: []
    """)
    assert len(run_scenario(toc).game.players) == 4  # players: {min: 2, max: 4, default: 4}
    dice = write(tmp_path, """
        ruleset: dice_race
        steps: []
    """)
    assert len(run_scenario(dice).game.players) == 2  # no default: the minimum


@pytest.mark.parametrize(("modifier", "message"), [
    ("{point: roll_bonu, by: 1}", r"unknown modifier point 'roll_bonu' \(did you mean 'roll_bonus'\?\)"),
    ("{point: roll_bonus, by: 1, to: 2}", r"a modifier gives either 'by' \(added\) or 'to'"),
    ("{point: roll_bonus, by: one}", r"wrong type: 'one' is not int"),
    ("{point: roll_bonus, by: 1, until: round_ends}", r"no rule signals 'round_ends'.*did you mean 'round_end'"),
])
def test_a_modifier_in_the_position_is_checked(tmp_path, modifier, message):
    path = write(tmp_path, f"""
        ruleset: dice_race
        players: 2
        state:
          modifiers:
            - {modifier}
        steps: []
    """)
    with pytest.raises(LudusError, match=message):
        run_scenario(path)


def test_a_modifier_in_the_position_ends_with_its_signal(tmp_path):
    path = write(tmp_path, """
        ruleset: dice_race
        players: 2
        state:
          modifiers:
            - {point: roll_bonus, to: 5, until: round_end}
        steps: []
        assert:
          - roll_bonus(red) == 5
    """)
    run = run_scenario(path)
    assert run.ok and run.game.state["modifiers"][0]["site"] == ""
    run.game.signal("round_end")
    assert run.game.state["modifiers"] == []


def test_rules_failing_on_the_start_procedure_are_told_at_the_start(tmp_path, monkeypatch, capsys):
    # a none where end_of_turn needs a player: the rules fail; the error names the scenario's start too
    text = (HERE / "scenarios" / "time_of_crisis" / "mob_grows.yaml").read_text(encoding="utf-8")
    path = tmp_path / "s.yaml"
    path.write_text(text.replace("args: {p: red}", "args: {p: null}"), encoding="utf-8")
    assert "args: {p: null}" in path.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["scenario", "s.yaml"]) == 1
    err = capsys.readouterr().err
    assert "s.yaml:7:8: error: the rules failed running 'end_of_turn' on this position (at " in err
    assert "turn.yaml:" in err and "cannot take zone 'hand' of none" in err
