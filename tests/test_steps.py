"""Procedures in named steps, and overlays that change one step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rulekit import load, make_ruleset

from interpreter import Game
from interpreter.diagnostics import LudusError
from interpreter.scenario import run_scenario

ROOT = Path(__file__).resolve().parents[1]
MODDING = ROOT / "tests" / "modding"

STEPS = """
globals:
  out:
    source: T 1
    type: any
procedures:
  main:
    source: T 1
    steps:
      start: |
        let n = 1
        set out = [n]
      grow: |
        increase n by 1
        set out = out + [n]
        if n > 1 then
          return
        end
        set out = out + [99]
      never: |
        set out = out + [100]
"""


def test_steps_run_in_order_as_one_body(tmp_path):
    rs = load(tmp_path, {"rules.yaml": STEPS})
    game = Game.new(rs, 2, 1)
    assert game.glob["out"] == [1, 2]  # 'n' from the first step; 'return' leaves the procedure


def test_an_error_in_a_step_points_into_that_step(tmp_path):
    # line 13 is the first of the step 'grow': "        increase m by 1"
    with pytest.raises(LudusError, match=r"rules.yaml:13:18: error: unknown variable 'm'"):
        load(tmp_path, {"rules.yaml": STEPS.replace("increase n by 1", "increase m by 1")})


def test_a_procedure_has_do_or_steps(tmp_path):
    text = STEPS.replace("    steps:\n", "    do: pass\n    steps:\n")
    with pytest.raises(LudusError, match="needs either 'do' .* or 'steps' .*, not both"):
        load(tmp_path, {"rules.yaml": text})


def _overlay(tmp_path: Path, patch: str) -> Game:
    make_ruleset(tmp_path, {"rules.yaml": STEPS})
    folder = make_ruleset(tmp_path, {"o.yaml": "patches:\n" + patch}, name="over", components=False,
                          extra_manifest="extends: ../kit\n")
    from interpreter import load_ruleset
    return Game.new(load_ruleset(folder), 2, 1)


def test_an_overlay_replaces_one_step(tmp_path):
    game = _overlay(tmp_path, """
  - op: set
    path: procedures/main/steps/grow
    value: set out = out + [n + 10]
    source: T 1
""")
    assert game.glob["out"] == [1, 11, 100]


def test_an_overlay_adds_a_step_between_two(tmp_path):
    game = _overlay(tmp_path, """
  - op: add
    path: procedures/main/steps/double
    after: start
    value: set out = out + out
    source: T 1
""")
    assert game.glob["out"] == [1, 1, 2]


def test_a_step_added_before_an_unknown_step_is_located(tmp_path):
    with pytest.raises(LudusError, match=r"o.yaml:5:13: error: cannot add 'procedures/main/steps/double' before "
                                         r"'gorw': no such key \(did you mean 'grow'\?\)"):
        _overlay(tmp_path, """
  - op: add
    path: procedures/main/steps/double
    before: gorw
    value: pass
    source: T 1
""")


# ----------------------------------------------------------------- the modder's task
def _rule_lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_ties_to_the_attacker_is_one_step_in_at_most_10_lines():
    text = (MODDING / "ties_to_attacker" / "ties.yaml").read_text(encoding="utf-8")
    lines = _rule_lines(MODDING / "ties_to_attacker" / "ties.yaml")
    assert lines[0] == "patches:" and len(lines) <= 10, lines
    assert text.count("op:") == 1 and "procedures/battle/steps/most_hits_wins" in text
    assert not re.search(r"roll_side|suffer|retreat|legacy", text)  # nothing of the battle is copied


def test_ties_go_to_the_attacker_with_the_overlay_and_to_the_defender_without(tmp_path):
    assert run_scenario(MODDING / "ties_to_attacker.yaml").ok
    assert run_scenario(ROOT / "tests" / "scenarios" / "time_of_crisis" / "combat_defender_wins_ties.yaml").ok
    base = tmp_path / "base.yaml"
    base.write_text((MODDING / "ties_to_attacker.yaml").read_text(encoding="utf-8")
                    .replace("ruleset: ties_to_attacker", "ruleset: time_of_crisis"), encoding="utf-8")
    run = run_scenario(base)
    assert not run.ok and any("legacy" in f for f in run.failures), run.failures


def test_a_procedure_with_no_steps_is_located(tmp_path):
    text = STEPS.split("    steps:\n")[0] + "    steps: {}\n"
    with pytest.raises(LudusError, match=r"rules.yaml:8:12: error: procedure 'main' has no steps"):
        load(tmp_path, {"rules.yaml": text})
