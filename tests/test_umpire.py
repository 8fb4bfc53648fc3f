"""The umpire seat: a ruleset's neutral seat that rules on gaps in the rules (docs/umpire.md).

tests/umpire/duel is the test ruleset: two duellists throw dice; on a tie the umpire rules who
wins the round, the first listed ruling (the one who threw first) being the default.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from interpreter.bots import UmpireBot, make_bot, seat_bots
from interpreter.cli import main
from interpreter.diagnostics import LudusError
from interpreter.loader import load_ruleset
from interpreter.play import parse_seats
from interpreter.runtime import Game, IllegalChoice
from interpreter.scenario import run_scenario

HERE = Path(__file__).resolve().parent
DUEL = HERE / "umpire" / "duel"
ROOT = HERE.parent
TIE_SEED = 3  # with random bots in both players' seats, round 1 is a tie (1 against 1)


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def duel_copy(tmp_path: Path, manifest: str | None = None, rules: str | None = None) -> Path:
    """A copy of the duel ruleset with its manifest or rules text changed."""
    folder = tmp_path / "duel"
    shutil.copytree(DUEL, folder)
    if manifest is not None:
        (folder / "ruleset.yaml").write_text(manifest, encoding="utf-8")
    if rules is not None:
        (folder / "rules.yaml").write_text(rules, encoding="utf-8")
    return folder


def errors_of(folder: Path) -> list[str]:
    with pytest.raises(LudusError) as exc:
        load_ruleset(folder)
    return [str(d) for d in exc.value.diagnostics]


def tie_game(seed: int = 1) -> Game:
    """A duel at the umpire's ruling on a tie in round 1 (both throw one die, both show 4)."""
    game = Game.new(load_ruleset(DUEL), 2, seed)
    game.apply("1 dice", "north", dice=[4])
    game.apply("1 dice", "south", dice=[4])
    return game


# ------------------------------------------------------------------ the manifest and the rules language
def test_umpire_without_the_manifest_key_is_an_unknown_name_with_a_hint(tmp_path):
    manifest = (DUEL / "ruleset.yaml").read_text(encoding="utf-8").replace("umpire: true\n", "")
    errors = errors_of(duel_copy(tmp_path, manifest=manifest))
    # (then 'w', which the failed choice does not bind, is unknown too)
    assert "rules.yaml:64:42: error: unknown name 'umpire': this ruleset has no umpire seat" in errors[0]
    assert "declare 'umpire: true' in ruleset.yaml" in errors[0]


def test_a_seat_named_umpire_is_refused_at_its_place(tmp_path):
    manifest = (DUEL / "ruleset.yaml").read_text(encoding="utf-8").replace("[north, south]", "[north, umpire]")
    errors = errors_of(duel_copy(tmp_path, manifest=manifest))
    assert errors == [f"{tmp_path / 'duel' / 'ruleset.yaml'}:7:16: error: a seat is named 'umpire', but the ruleset "
                      "declares the umpire seat (rename the seat: 'umpire' is the umpire's seat, never a player's)"]


def test_an_id_named_umpire_is_refused_when_the_ruleset_has_an_umpire(tmp_path):
    rules = (DUEL / "rules.yaml").read_text(encoding="utf-8").replace("  round:\n", "  umpire:\n    source: DU 2\n"
                                                                      "    type: int\n    initial: 0\n  round:\n", 1)
    errors = errors_of(duel_copy(tmp_path, rules=rules))
    assert any("'umpire' names the umpire seat of this ruleset and cannot be an id" in e for e in errors)


def test_the_manifest_key_must_be_a_boolean(tmp_path):
    manifest = (DUEL / "ruleset.yaml").read_text(encoding="utf-8").replace("umpire: true", "umpire: yes please")
    errors = errors_of(duel_copy(tmp_path, manifest=manifest))
    assert len(errors) == 1 and "ruleset.yaml:8:" in errors[0] and "umpire" in errors[0]


def test_an_overlay_inherits_the_umpire_seat(tmp_path):
    duel_copy(tmp_path)
    overlay = tmp_path / "short_duel"
    overlay.mkdir()
    (overlay / "ruleset.yaml").write_text("ruleset: short_duel\nversion: '1'\nextends: ../duel\nfiles: []\n",
                                          encoding="utf-8")
    rs = load_ruleset(overlay)
    assert rs.umpire
    assert Game.new(rs, 2, 1).seats == ["north", "south", "umpire"]


def test_reading_a_field_of_the_umpire_is_a_runtime_error(tmp_path):
    rules = (DUEL / "rules.yaml").read_text(encoding="utf-8").replace(
        'log "The umpire rules for {w}"', 'log "The umpire rules for {w} ({umpire.wins})"')
    game = Game.new(load_ruleset(duel_copy(tmp_path, rules=rules)), 2, 1)
    game.apply("1 dice", "north", dice=[4])
    game.apply("1 dice", "south", dice=[4])
    with pytest.raises(LudusError, match="cannot read 'wins' of umpire: it is not an entity"):
        game.apply(0, "umpire")
    assert game.deciders() == ["umpire"]  # the failed choice changed nothing


# ------------------------------------------------------------------ the runtime
def test_a_decision_by_umpire_is_the_umpire_seats_and_only_its():
    game = tie_game()
    assert game.players == ["north", "south"]  # the umpire is not a player
    assert game.seats == ["north", "south", "umpire"]
    assert game.deciders() == ["umpire"]
    assert game.pending is not None and game.pending["player"] == "umpire"
    assert [c.label for c in game.choices("umpire")] == ["north wins", "south wins"]
    with pytest.raises(IllegalChoice, match="it is not north's decision"):
        game.apply(0, "north")
    game.apply("south wins", "umpire")
    assert game.log[-3:-1] == [{"type": "choice", "player": "umpire", "index": 1, "label": "south wins"},
                               {"type": "text", "text": "The umpire rules for south"}]
    assert game.ents["south"]["wins"] == 1 and "umpire" not in game.ents


def test_a_game_saved_at_the_umpires_decision_resumes():
    game = tie_game()
    again = Game.resume(game.rs, json.loads(game.to_json()))
    assert again.deciders() == ["umpire"]
    again.apply("north wins", "umpire")
    assert again.ents["north"]["wins"] == 1


def test_a_game_without_an_umpire_has_only_its_players_as_seats():
    game = Game.new(load_ruleset("dice_race"), 2, 1)
    assert game.seats == game.players == ["red", "blue"]


def test_the_umpire_sees_the_whole_board_and_the_whole_pending_decision():
    game = Game.new(load_ruleset(DUEL), 2, 1)
    assert game.view("umpire")["zones"]["envelope"] == ["secret_word"]
    assert game.view("north")["zones"]["envelope"] == {"hidden": 1}
    assert "secret_word" not in game.view("south")["entities"]
    assert game.view("umpire")["entities"]["secret_word"]["word"] == "parry"
    # north's decision: the umpire sees its options, south only who decides and the question
    assert [o["label"] for o in game.view("umpire")["pending"]["options"]] == ["1 dice", "2 dice"]
    assert "options" not in game.view("south")["pending"]


def test_a_ruleset_without_an_umpire_shows_a_seat_called_umpire_nothing_hidden():
    game = Game.new(load_ruleset("dice_race"), 2, 1)
    assert game.view("umpire")["zones"]["deck"] == {"hidden": len(game.zones["deck"])}


# ------------------------------------------------------------------ bots
def test_the_umpire_bot_takes_the_first_listed_ruling():
    game = tie_game()
    assert make_bot("umpire", 1, "umpire").choose(game, "umpire") == 0
    bots = seat_bots(game, {"north": "random", "south": "greedy"}, 1)
    assert sorted(bots) == ["north", "south", "umpire"] and isinstance(bots["umpire"], UmpireBot)
    assert not isinstance(seat_bots(game, {"umpire": "random"}, 1)["umpire"], UmpireBot)  # told otherwise
    assert "umpire" not in seat_bots(Game.new(load_ruleset("dice_race"), 2, 1), {"red": "random"}, 1)


@pytest.mark.parametrize("kind", ["random", "greedy", "mcts:playouts=1:depth=2:width=2"])
def test_any_bot_may_rule_in_the_umpire_seat(kind):
    game = tie_game()
    index = make_bot(kind, 5, "umpire").choose(game, "umpire")
    game.apply(index, "umpire")
    assert game.log[-3]["player"] == "umpire"


def test_a_bot_game_logs_the_umpires_ruling_and_replays_byte_for_byte(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (a, b):
        assert main(["play", str(DUEL), "--seed", str(TIE_SEED), "--quiet", "--log", str(path)]) == 0
    assert a.read_bytes() == b.read_bytes()
    entries = [json.loads(line) for line in a.read_text(encoding="utf-8").splitlines()]
    assert entries[0]["seats"] == {"north": "random", "south": "random", "umpire": "umpire"}
    assert {"type": "choice", "player": "umpire", "index": 0, "label": "north wins"} in entries
    capsys.readouterr()
    assert main(["replay", str(a), "--ruleset", str(DUEL)]) == 0
    assert "the log reproduces exactly" in capsys.readouterr().out


def test_an_umpire_choice_in_the_log_of_a_ruleset_without_one_is_refused(tmp_path, capsys):
    log = tmp_path / "race.jsonl"
    assert main(["play", "dice_race", "--players", "2", "--seed", "1", "--quiet", "--log", str(log)]) == 0
    lines = log.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if '"type": "choice"' in line)
    entry = json.loads(lines[first])
    entry["player"] = "umpire"
    lines[first] = json.dumps(entry)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["replay", str(log)]) == 1
    err = capsys.readouterr().err
    assert f"{log}:{first + 1}:1: error: a choice by the umpire, but ruleset 'dice_race' declares no umpire seat" in err


# ------------------------------------------------------------------ ludus play
def test_parse_seats_gives_the_umpire_seat_the_umpire_bot_unless_told_otherwise():
    assert parse_seats(["north", "south"], [], umpire=True) == {"north": "random", "south": "random",
                                                                "umpire": "umpire"}
    assert parse_seats(["north", "south"], ["umpire=human", "north=greedy"], umpire=True)["umpire"] == "human"
    assert parse_seats(["north", "south"], ["umpire=random"], umpire=True)["umpire"] == "random"
    assert parse_seats(["red", "blue"], []) == {"red": "random", "blue": "random"}
    with pytest.raises(LudusError, match="bad --seat 'umpire=human'"):
        parse_seats(["red", "blue"], ["umpire=human"])  # no umpire seat in this ruleset


def test_a_human_umpire_rules_at_the_prompt_and_sees_the_whole_board(monkeypatch, capsys, tmp_path):
    log = tmp_path / "duel.jsonl"
    monkeypatch.setattr(sys, "stdin", io.StringIO("v\n2\n"))
    assert main(["play", str(DUEL), "--seed", str(TIE_SEED), "--seat", "umpire=human", "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "2 players (north=random, south=random, umpire=human)" in out
    assert "north throws 1: 1\n  south > 1 dice\nsouth throws 1: 1\n" in out  # all the narration
    assert "umpire: A tie: who wins the round?\n  [1] north wins\n  [2] south wins\n" in out
    assert "== zones ==\n  envelope: parry\n" in out  # 'v': the sealed envelope too
    assert "  umpire > south wins\nThe umpire rules for south\n" in out
    header = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert header["seats"]["umpire"] == "human"


def test_a_resumed_game_keeps_a_human_umpire_human(monkeypatch, capsys, tmp_path):
    whole, stopped = tmp_path / "whole.jsonl", tmp_path / "stopped.jsonl"
    common = [str(DUEL), "--seed", str(TIE_SEED), "--seat", "umpire=human", "--quiet"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("2\n"))
    assert main(["play", *common, "--log", str(whole)]) == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))  # quits at the umpire's first ruling
    assert main(["play", *common, "--log", str(stopped)]) == 0
    capsys.readouterr()
    monkeypatch.chdir(DUEL.parent)  # the log names its ruleset 'duel': found in the working folder
    monkeypatch.setattr(sys, "stdin", io.StringIO("2\n"))
    assert main(["play", "--resume", str(stopped)]) == 0
    out = capsys.readouterr().out
    assert "(north=random, south=random, umpire=human)" in out
    assert "umpire: A tie: who wins the round?" in out
    assert stopped.read_bytes() == whole.read_bytes()  # as if never stopped


# ------------------------------------------------------------------ simulate and scenarios
def test_simulate_plays_the_umpire_bot_and_leaves_it_out_of_the_win_rates(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["simulate", str(DUEL), "--games", "12", "--workers", "1", "--bots", "random,greedy",
                 "--no-plots", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "games.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == 12 and all(r["status"] == "over" for r in records)
    assert all(r["bots"] == {"north": "random", "south": "greedy"} for r in records)
    assert all(set(r["scores"]) == {"north", "south"} for r in records)
    summary = (out / "summary.txt").read_text(encoding="utf-8")
    assert "the umpire seat: the umpire bot (no score, not in the win rates)" in summary
    by_bot = summary.split("Win rate by bot")[1].split("\n\n")[0]
    assert "greedy" in by_bot and "random" in by_bot and "umpire" not in by_bot


def test_a_scenario_step_answers_the_umpires_decision():
    run = run_scenario(HERE / "umpire" / "tie_ruling.yaml")
    assert run.ok, run.failures
    assert run.game.ents["south"]["wins"] == 1
    assert {"type": "choice", "player": "umpire", "index": 1, "label": "south wins"} in run.game.log
