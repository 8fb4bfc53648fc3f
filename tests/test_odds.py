"""``ludus odds``: a scenario played many times with fresh dice, checked against exact odds."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from interpreter.cli import main
from interpreter.odds import run_odds

ODDS = Path(__file__).resolve().parent / "odds"


def test_one_legion_against_one_goth_matches_the_exact_odds():
    # ToC 8.1: a full legion hits on 3+, a barbarian on 4+, each 6 adds a die; 8.2: a side with
    # no units left loses, else the most hits wins, ties to the defender. Red wins when his die
    # hits (4/6) and the Goth does not score two hits: P(0) + P(1) = 3/6 + (2/6 + 1/6 * 3/6) = 11/12.
    red_wins = Fraction(4, 6) * (Fraction(3, 6) + Fraction(2, 6) + Fraction(1, 6) * Fraction(3, 6))
    assert red_wins == Fraction(11, 18)
    unhurt = Fraction(3, 6)  # the Goth's first die misses (a hit reduces the legion, two eliminate it)
    report = run_odds(ODDS / "legion_vs_barbarian.yaml", runs=4000, seed=7)
    figures = {o.name: o.summary() for o in report.outcomes}
    for name, exact in (("red_wins", red_wins), ("legion_unhurt", unhurt)):
        s = figures[name]
        assert s["kind"] == "rate" and s["runs"] == 4000
        assert s["low"] <= float(exact) <= s["high"], (name, s["low"], float(exact), s["high"])
        assert s["high"] - s["low"] < 0.035
    goths = figures["goths_left"]
    assert goths["kind"] == "number" and {d["value"] for d in goths["distribution"]} == {0, 1}
    assert goths["low"] <= 1 - 4 / 6 <= goths["high"]  # the Goth survives when Red's die misses


def test_the_same_seed_gives_the_same_report(capsys):
    argv = ["odds", str(ODDS / "legion_vs_barbarian.yaml"), "--runs", "60", "--seed", "3", "--json"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    data = json.loads(first)
    assert data["runs"] == 60 and data["scored"] == 60 and [o["name"] for o in data["outcomes"]] == \
        ["red_wins", "goths_left", "legion_unhurt"]


def test_runs_whose_next_step_is_not_offered_are_counted_apart(tmp_path):
    text = (ODDS / "legion_vs_barbarian.yaml").read_text(encoding="utf-8").replace(
        "  - choose: Attack the goths in Thracia for 1 Military\n",
        "  - choose: Attack the goths in Thracia for 1 Military\n  - choose: Advance into the capital\n")
    path = tmp_path / "s.yaml"
    path.write_text(text.replace("ruleset: time_of_crisis", "ruleset: time_of_crisis"), encoding="utf-8")
    report = run_odds(path, runs=200, seed=1)
    # only a victor may advance: the runs Red lost stop at step 2
    assert 0 < report.diverged[2] < 200 and report.scored == 200 - report.diverged[2]
    assert all(report.outcomes[0].values)  # every scored run is a win


def test_a_scenario_without_outcomes_or_with_a_bad_one_is_a_located_error(tmp_path, capsys):
    plain = Path(__file__).resolve().parent / "scenarios" / "time_of_crisis" / "combat_barbarians.yaml"
    assert main(["odds", str(plain), "--runs", "5"]) == 1
    assert "combat_barbarians.yaml:1:1: error: this scenario declares no outcomes to count" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text((ODDS / "legion_vs_barbarian.yaml").read_text(encoding="utf-8")
                   .replace("red.legacy >= 2", "red.legcy >= 2"), encoding="utf-8")
    assert main(["odds", str(bad), "--runs", "5"]) == 1
    err = capsys.readouterr().err
    assert "bad.yaml:23:19: error: player has no field or zone 'legcy' (did you mean 'legacy'?)" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("runs", ["0", "-3", "x"])
def test_a_bad_number_of_runs_is_refused(runs, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["odds", str(ODDS / "legion_vs_barbarian.yaml"), "--runs", runs])
    assert exit_.value.code == 1
    assert "ludus: error: argument --runs" in capsys.readouterr().err


def test_a_png_is_drawn(tmp_path):
    png = tmp_path / "odds.png"
    assert main(["odds", str(ODDS / "legion_vs_barbarian.yaml"), "--runs", "30", "--png", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_pax_romana_battle_matches_the_exact_odds(tmp_path):
    # PR 10.51, the forces of battle example #1: 21 BP against 11 (2:1) and a better leader give
    # Greece 3 shifts; a random bot puts k of them (0 to 3, each 1/4) on its own die and the rest
    # against the East's. Greece wins when the East's die ends lower; the East loses Greece's die
    # x 10% of its 11 BP, .5 rounding up (10.53).
    def half_up(n: int, d: int) -> int:
        return (2 * n + d) // (2 * d)

    # A beaten East retreats half the time (the random bot's Retreat or Stand), its losses 10% less (10.91).
    wins, east_loss = Fraction(0), Fraction(0)
    for a in range(1, 7):
        for d in range(1, 7):
            for k in range(4):
                att, dfd = a + k, max(0, d - (3 - k))
                wins += Fraction(1, 144) * (dfd < att)
                if dfd < att:
                    east_loss += Fraction(1, 288) * (half_up(11 * att, 10) + half_up(11 * (att - 1), 10))
                else:
                    east_loss += Fraction(1, 144) * half_up(11 * att, 10)
    text = (ODDS / "pax_romana_battle.yaml").read_text(encoding="utf-8").replace("bots: mcts", "bots: random")
    path = tmp_path / "battle.yaml"
    path.write_text(text, encoding="utf-8")
    report = run_odds(path, runs=3000, seed=5)
    figures = {o.name: o.summary() for o in report.outcomes}
    assert report.scored == 3000
    win = figures["greece_wins"]
    assert win["low"] <= float(wins) <= win["high"], (win, float(wins))
    loss = figures["east_loses_bp"]
    assert loss["low"] <= float(east_loss) <= loss["high"], (loss, float(east_loss))


def test_an_empire_in_crisis_assault_matches_the_exact_odds():
    # EiC O.8b, K: the Scorpion hits on 1-3 in round A (the city falls); else the garrison's
    # Legionarii kills it on 1-2 or routs it on a 6 in round C (the assault ends); three rounds.
    go_on = Fraction(1, 2) * Fraction(3, 6)
    rounds = 1 + go_on + go_on**2
    falls, lost = Fraction(1, 2) * rounds, Fraction(1, 2) * Fraction(2, 6) * rounds
    assert (falls, lost) == (Fraction(21, 32), Fraction(7, 32))
    report = run_odds(ODDS / "eic_storm_a_city.yaml", runs=4000, seed=5)
    figures = {o.name: o.summary() for o in report.outcomes}
    for name, exact in (("city_falls", falls), ("scorpion_lost", lost)):
        s = figures[name]
        assert s["low"] <= float(exact) <= s["high"], (name, s["low"], float(exact), s["high"])
