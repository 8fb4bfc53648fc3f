"""The `ludus` command: a complete narrated game, replay, human seats, validate, docs, where."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from interpreter.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_seeded_bot_game_is_narrated_to_the_final_score_table(capsys, snapshot):
    assert main(["play", "dice_race", "--players", "3", "--seed", "11"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-5].startswith("Game over: a runner reached 30")
    assert out == snapshot


def test_greedy_bots_play_a_complete_game(capsys):
    assert main(["play", "dice_race", "--players", "2", "--seed", "4", "--seat", "red=greedy", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "Game over" in out and "winner" in out


def test_a_played_log_replays_exactly(tmp_path, capsys):
    log = tmp_path / "game.jsonl"
    assert main(["play", "dice_race", "--seed", "5", "--quiet", "--log", str(log)]) == 0
    played = capsys.readouterr().out
    assert main(["replay", str(log)]) == 0
    out = capsys.readouterr().out
    assert "the log reproduces exactly" in out
    assert played.split("Game over")[1] == out.split("Game over")[1]  # same final table


def test_the_same_seed_writes_a_byte_identical_log(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (a, b):
        assert main(["play", "dice_race", "--seed", "9", "--quiet", "--log", str(path)]) == 0
    assert a.read_bytes() == b.read_bytes()


def test_a_human_seat_sees_numbered_choices_and_its_own_view(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    answers = ["x", "9", "v"] + ["1"] * 200
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(answers) + "\n"))
    assert main(["play", "dice_race", "--players", "2", "--seed", "2", "--seat", "red=human"]) == 0
    out = capsys.readouterr().out
    assert "red: Sprint: pick a card\n  [1] Step 2\n  [2] Step 1\n  [3] Boost\n" in out
    assert out.count("is not a choice: enter one of 1, 2, 3, or h for help") == 2  # 'x' and '9' are refused
    assert "  red (you): -\n    hand: Step 2, Step 1, Boost\n  blue: -\n    hand: 3 hidden\n" in out  # blue's hand hidden
    assert "  blue > (secret)" in out  # the opponent's secret pick is not narrated
    assert "  [2] Boost  (x2)" in out  # identical choices are merged, with their count


def test_a_human_may_quit_and_the_game_is_saved(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)  # without --log, quitting saves the game in the current folder
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert main(["play", "dice_race", "--players", "2", "--seat", "blue=human"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("quit")
    saved = list(tmp_path.glob("ludus-dice_race-*.jsonl"))
    assert len(saved) == 1 and f"saved in {saved[0].name}; 'ludus play --resume {saved[0].name}'" in out
    assert main(["replay", str(saved[0])]) == 0


def test_validate_summarises_each_ruleset(capsys):
    assert main(["validate", "dice_race", "rulesets/dice_race_short"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["dice_race 1.0.0: ok (18 entities, 5 procedures, 3 actions, 0 reconstructed entries)",
                   "dice_race_short 1.0.0: ok (18 entities, 5 procedures, 3 actions, 0 reconstructed entries)"]


def test_where_finds_entries_citing_a_section(capsys):
    assert main(["where", "DR 4.2", "--ruleset", "dice_race"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["rulesets/dice_race/rules.yaml:3:3: modifier_points/roll_bonus (DR 4.2)",
                   "rulesets/dice_race/rules.yaml:81:3: actions/boost (DR 4.2)"]


def test_docs_lists_entries_with_sources(capsys):
    assert main(["docs", "dice_race_short"]) == 0
    out = capsys.readouterr().out
    assert "| boost | 6 | deck | Boost | 0 | true | dice_race/components.yaml:62 | DR 1 |" in out
    assert ("- **set globals/goal/initial** — `dice_race_short/short.yaml:3` — source: DR 5 — note: The short game "
            "races to 20") in out
    assert "None: every entry cites its source." in out


def test_python_dash_m_is_the_same_command():
    proc = subprocess.run([sys.executable, "-m", "interpreter", "validate", "dice_race"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert proc.stdout.startswith("dice_race 1.0.0: ok")


def test_help_describes_every_command(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for command in ("validate", "play", "replay", "scenario", "docs", "where"):
        assert command in out


def test_where_reads_comma_separated_sections():
    from interpreter.docsgen import cites
    assert cites("ToC 6.3.2, 6.4", "ToC 6.4")
    assert cites("ToC 6.3.2, 6.4", "6.3")
    assert not cites("ToC 6.3.2, 6.4", "ToC 6.5")
    assert not cites("FAQ 6.4", "ToC 6.4")
    assert cites("ToC 5; FAQ 2", "FAQ 2")


def test_where_reads_lettered_sections(capsys):
    """Rule texts lettered as Empire in Crisis's: O, O.8, O.8b (a part of O.8), ranges O.2-O.6."""
    from interpreter.docsgen import cites
    assert cites("EiC O.8b", "O.8") and cites("EiC O.8b", "O") and cites("EiC O.8b", "EiC O.8b")
    assert cites("EiC O.2-O.6", "O.2") and cites("EiC O.2-O.6", "O.6")
    assert not cites("EiC O.18", "O.1") and not cites("EiC O.2-O.6", "O.4")
    assert cites("EiC E, J.1, Q.4", "Q.4") and cites("EiC E, J.1, Q.4", "E") and not cites("EiC Events 3", "E")
    assert cites("PR 8b", "8") and not cites("PR 10.56", "10.5")
    assert main(["where", "EiC O.8a"]) == 0
    assert "procedures/siege_attrition (EiC O.8, O.8a)" in capsys.readouterr().out


def test_a_game_with_forced_dice_replays_from_its_log(tmp_path):
    from interpreter import Game, load_ruleset
    from interpreter.gamelog import replay, write_log
    rs = load_ruleset("dice_race")
    game = Game.new(rs, 2, seed=3)
    game.apply(0, "red")
    game.apply(0, "blue")
    game.apply("Roll", dice=[6, 6, 1])
    log = tmp_path / "forced.jsonl"
    with log.open("w", encoding="utf-8") as fh:
        write_log(game.log, fh)
    assert {"type": "dice", "values": [6, 6, 1]} in game.log
    assert replay(log).to_json() == game.to_json()


def test_raw_dice_lines_only_with_the_dice_flag(capsys):
    assert main(["play", "dice_race", "--players", "2", "--seed", "3"]) == 0
    plain = capsys.readouterr().out
    assert main(["play", "dice_race", "--players", "2", "--seed", "3", "--dice"]) == 0
    with_dice = capsys.readouterr().out
    assert "  dice: " not in plain and "  dice: " in with_dice
    assert [line for line in with_dice.splitlines() if not line.startswith("  dice: ")] == plain.splitlines()
