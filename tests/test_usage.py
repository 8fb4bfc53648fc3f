"""Which rules a run used, and compare's word on changed rules used rarely."""

from __future__ import annotations

import textwrap
from pathlib import Path

from interpreter import load_ruleset
from interpreter.simsummary import Tally
from interpreter.simulate import Plan, make_plan, play_game
from interpreter.usage import changed_rules, counted_name, warnings


def _usage(rs, games: int = 12):
    plan: Plan = make_plan(rs, "x", games, 2, None, False, 1, 20_000)
    t = Tally(rs.seat_names(2), [], False)
    for i in range(games):
        t.add(play_game(rs, plan, i))
    return t.usage


def test_a_game_counts_actions_and_carried_procedures_only_for_itself():
    rs = load_ruleset("time_of_crisis")
    plan = make_plan(rs, "x", 1, 2, None, False, 1, 20_000)
    rec = play_game(rs, plan, 0)
    fired = rec["fired"]
    assert fired["action:play_card"] > 0 and fired["diocletian.effect"] == 1  # Diocletian ends every game
    assert play_game(rs, plan, 0)["fired"] == fired  # the same game, the same counts
    events = [k for k in fired if k.endswith(".effect")]
    assert 1 <= len(events) <= 16


def test_patched_entries_are_named_as_a_game_counts_them():
    rs = load_ruleset("time_of_crisis")
    assert counted_name(rs, ["actions", "buy_card", "do"]) == "action:buy_card"
    assert counted_name(rs, ["entities", "inflation", "effect"]) == "inflation.effect"
    assert counted_name(rs, ["procedures", "battle", "steps", "most_hits_wins"]) == "battle"
    assert counted_name(rs, ["functions", "defeated_army_retreats", "expr"]) is None
    assert counted_name(rs, ["entities", "inflation", "name"]) is None


def test_compare_warns_about_a_changed_rule_that_never_ran(tmp_path: Path):
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "ruleset.yaml").write_text("ruleset: v\nversion: '1'\nextends: dice_race\nfiles: [p.yaml]\n")
    (folder / "p.yaml").write_text(textwrap.dedent("""\
        patches:
          - {op: set, path: actions/boost/if, value: "false", source: DR 4.2}
          - {op: set, path: globals/goal/initial, value: 25, source: DR 5}
        """))
    rs = load_ruleset(folder)
    assert [p for p, _n in changed_rules(rs)] == ["actions/boost/if", "globals/goal/initial"]
    found = warnings(rs, _usage(rs))
    assert found[0].startswith("- actions/boost/if: never used in 12 games of B")
    assert found[1].startswith("- globals/goal/initial: not counted")
