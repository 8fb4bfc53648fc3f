"""`ludus simulate` and `ludus compare`: reproducibility, files, summary, errors, the metrics mechanism."""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import pytest

from interpreter import LudusError, load_ruleset
from interpreter.cli import main
from interpreter.simfiles import csv_header
from interpreter.simulate import (
    GAMES_CSV,
    GAMES_JSONL,
    SUMMARY_TXT,
    Plan,
    Tally,
    compare_rows,
    game_seed,
    make_plan,
    play_game,
    read_records,
)

ROOT = Path(__file__).resolve().parent.parent
RECORD_KEYS = ["game", "seed", "bots", "status", "reason", "rounds", "decisions", "winners", "ranking",
               "scores", "metrics", "fired"]


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _simulate(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _records(out: Path) -> list[dict]:
    return list(read_records(out / GAMES_JSONL))


# ------------------------------------------------------------------ reproducibility
def test_the_files_are_byte_identical_whatever_the_worker_count(tmp_path, capsys):
    one, two = tmp_path / "one", tmp_path / "two"
    common = ["dice_race", "--games", "40", "--players", "3", "--bots", "random,greedy,random", "--seed", "7",
              "--no-plots"]
    assert _simulate(capsys, *common, "--workers", "1", "--out", str(one))[0] == 0
    assert _simulate(capsys, *common, "--workers", "2", "--out", str(two))[0] == 0
    for name in (GAMES_JSONL, GAMES_CSV, SUMMARY_TXT):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert [r["game"] for r in _records(one)] == list(range(40))  # gathered in game order
    runs = [json.loads((d / "run.json").read_text()) for d in (one, two)]
    assert [r["workers"] for r in runs] == [1, 2]  # timing and workers live in run.json only


def test_game_i_depends_only_on_the_run_seed_and_i(tmp_path, capsys):
    short, long_, other = tmp_path / "short", tmp_path / "long", tmp_path / "other"
    assert _simulate(capsys, "dice_race", "--games", "5", "--seed", "3", "--workers", "1", "--out", str(short),
                     "--no-plots")[0] == 0
    assert _simulate(capsys, "dice_race", "--games", "9", "--seed", "3", "--workers", "2", "--out", str(long_),
                     "--no-plots")[0] == 0
    assert _simulate(capsys, "dice_race", "--games", "5", "--seed", "4", "--workers", "1", "--out", str(other),
                     "--no-plots")[0] == 0
    assert _records(long_)[:5] == _records(short)
    assert [r["seed"] for r in _records(other)] != [r["seed"] for r in _records(short)]
    assert [r["seed"] for r in _records(short)] == [game_seed(3, i) for i in range(5)]
    assert len({game_seed(1, i) for i in range(1000)}) == 1000


def test_ludus_play_replays_a_simulated_game_from_its_record(tmp_path, capsys):
    out = tmp_path / "run"
    assert _simulate(capsys, "dice_race", "--games", "3", "--players", "2", "--bots", "greedy,random",
                     "--rotate", "--workers", "1", "--out", str(out), "--no-plots")[0] == 0
    rec = _records(out)[1]
    assert rec["bots"] == {"red": "random", "blue": "greedy"}  # rotated in game 1
    seats = [f"--seat={s}={k}" for s, k in rec["bots"].items()]
    assert main(["play", "dice_race", "--players", "2", "--seed", str(rec["seed"]), "--quiet", *seats]) == 0
    table = capsys.readouterr().out.split("Game over: ")[1].splitlines()
    assert table[0] == rec["reason"]
    rows = {line.split()[1]: int(line.split()[2]) for line in table[2:]}
    assert rows == rec["scores"]


# ------------------------------------------------------------------ files
def test_jsonl_and_csv_hold_one_game_per_line_with_the_documented_columns(tmp_path, capsys):
    out = tmp_path / "run"
    assert _simulate(capsys, "dice_race", "--games", "12", "--players", "2", "--workers", "1", "--out", str(out),
                     "--no-plots")[0] == 0
    records = _records(out)
    assert len(records) == 12
    for rec in records:
        assert list(rec) == RECORD_KEYS
        assert rec["status"] == "over" and rec["reason"] == "a runner reached 30"
        assert set(rec["scores"]) == {"red", "blue"} and rec["winners"]
        assert rec["ranking"][0] in rec["winners"]
        assert set(rec["metrics"]) == {"boosts_in_hand"}
        assert isinstance(rec["rounds"], int) and rec["rounds"] >= 1 and rec["decisions"] > rec["rounds"]
    with open(out / GAMES_CSV, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == csv_header(["red", "blue"], ["boosts_in_hand"])
    assert list(rows[0])[:7] == ["game", "seed", "status", "reason", "rounds", "decisions", "winners"]
    assert len(rows) == 12
    for row, rec in zip(rows, records, strict=True):
        assert int(row["seed"]) == rec["seed"] and int(row["rounds"]) == rec["rounds"]
        assert row["winners"].split() == rec["winners"]
        for s in ("red", "blue"):
            assert int(row[f"{s}_score"]) == rec["scores"][s]
            assert int(row[f"{s}_rank"]) == rec["ranking"].index(s) + 1
            assert float(row[f"{s}_win"]) == pytest.approx(
                1 / len(rec["winners"]) if s in rec["winners"] else 0, abs=1e-6)
            assert int(row[f"{s}_boosts_in_hand"]) == rec["metrics"]["boosts_in_hand"][s]


def test_plots_are_written_as_png(tmp_path, capsys):
    out = tmp_path / "run"
    code, text, _ = _simulate(capsys, "dice_race", "--games", "10", "--players", "2", "--bots", "random,greedy",
                              "--workers", "1", "--out", str(out))
    assert code == 0
    for name in ("win_rate_by_seat.png", "game_length.png", "scores.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert f"wrote {out / name}" in text


# ------------------------------------------------------------------ the summary
def test_the_summary_agrees_with_the_per_game_records(tmp_path, capsys):
    out = tmp_path / "run"
    code, text, err = _simulate(capsys, "dice_race", "--games", "30", "--players", "3", "--bots",
                                "random,greedy,random", "--seed", "5", "--workers", "1", "--out", str(out),
                                "--no-plots")
    assert code == 0 and err == ""  # no progress bar when stderr is not a terminal
    records = _records(out)
    summary = (out / SUMMARY_TXT).read_text()
    assert summary in text
    assert "30 games, 3 players, seed 5" in summary
    assert "bots: red=random, blue=greedy, green=random" in summary
    assert "finished: 30 of 30" in summary
    lines = summary.splitlines()
    ended = next(line for line in lines if line.strip().startswith("a runner reached 30"))
    assert ended.split()[4:6] == ["30", "100.0%"]
    rounds = [r["rounds"] for r in records]
    row = next(line for line in lines if line.strip().startswith("rounds")).split()
    assert float(row[1]) == pytest.approx(sum(rounds) / 30, abs=0.05)
    assert (int(row[3]), int(row[7])) == (min(rounds), max(rounds))
    for seat, bot in (("red", "random"), ("blue", "greedy"), ("green", "random")):
        wins = sum(1 / len(r["winners"]) for r in records if seat in r["winners"])
        row = next(line for line in lines if line.strip().startswith(f"{seat} ({bot})")).split()
        assert float(row[2]) == pytest.approx(wins, abs=0.05)
        assert row[3] == f"{100 * wins / 30:.1f}%"
        assert float(row[5]) == pytest.approx(sum(r["scores"][seat] for r in records) / 30, abs=0.05)
    greedy = next(line for line in lines if line.strip().startswith("greedy")).split()
    assert greedy[1] == "30"  # seat-games
    assert "Metrics (mean at the end)" in summary and "boosts_in_hand" in summary
    assert "games in" in text and "games/s" in text  # the timing is printed, not in summary.txt
    assert "games/s" not in summary


def test_a_shared_win_counts_a_fraction_to_each_winner_and_rotation_credits_the_bot():
    t = Tally(["red", "blue", "green"], [], False)
    base = {"status": "over", "reason": "end", "rounds": None, "decisions": 10, "ranking": [], "metrics": None,
            "scores": {"red": 5, "blue": 5, "green": 1}}
    t.add({**base, "game": 0, "bots": {"red": "greedy", "blue": "random", "green": "random"},
           "winners": ["red", "blue"]})
    t.add({**base, "game": 1, "bots": {"red": "random", "blue": "random", "green": "greedy"},
           "winners": ["green"]})
    t.add({**base, "game": 2, "bots": {"red": "random", "blue": "greedy", "green": "random"}, "status": "unfinished",
           "reason": "not over", "winners": [], "scores": None})
    assert t.seat_wins == {"red": 0.5, "blue": 0.5, "green": 1.0}
    assert t.bot_wins == {"greedy": 1.5, "random": 0.5}
    assert t.bot_seat_games == {"greedy": 3, "random": 6}
    assert (t.games, t.finished, t.decisions) == (3, 2, [10, 10])


def test_rotation_gives_each_bot_every_seat():
    plan = Plan("dice_race", 6, 3, ("greedy", "random", "random"), rotate=True)
    assert [plan.seat_bots(i)[0] for i in range(3)] == ["greedy", "random", "random"]
    assert [plan.seat_bots(i).index("greedy") for i in range(6)] == [0, 2, 1, 0, 2, 1]
    assert Plan("dice_race", 6, 3, ("greedy", "random", "random")).seat_bots(1) == ("greedy", "random", "random")


def test_unfinished_games_are_counted_not_hidden(capsys):
    code, text, _ = _simulate(capsys, "dice_race", "--games", "3", "--workers", "1", "--max-decisions", "4")
    assert code == 0
    assert "finished: 0 of 3 (3 not over after 4 decisions)" in text
    ended = next(line for line in text.splitlines() if line.strip().startswith("not over after 4 decisions"))
    assert ended.split()[-3:-1] == ["3", "100.0%"]
    seat = next(line for line in text.splitlines() if line.strip().startswith("red (random)")).split()
    assert seat[2:4] == ["0.0", "0.0%"] and seat[-2:] == ["-", "-"]  # nobody won; no scores


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(("args", "message"), [
    (["--games", "5", "--bots", "random,clever"], "ludus: error: unknown bot 'clever' in --bots 'random,clever' "
                                                  "(the bots are random, greedy"),
    (["--games", "5", "--players", "3", "--bots", "random,greedy"],
     "ludus: error: --bots names 2 bots for 3 players (give one kind per seat (red, blue, green) or a single kind"),
    (["--games", "0"], "ludus: error: --games must be at least 1, not 0 (e.g. --games 1000)"),
    (["--games", "5", "--workers", "0"], "ludus: error: --workers must be at least 1, not 0"),
    (["--games", "5", "--players", "9"], "ludus: error: dice_race is for 2 to 4 players, not 9"),
])
def test_bad_arguments_are_one_actionable_line(capsys, args, message):
    code, out, err = _simulate(capsys, "dice_race", *args)
    assert code == 1
    assert err.startswith(message)
    assert "Traceback" not in err and out == ""


def test_missing_games_and_unknown_ruleset(capsys):
    assert main(["simulate", "no_such_game", "--games", "3"]) == 1
    assert "no_such_game" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "dice_race"])
    assert exc.value.code == 1
    assert "--games" in capsys.readouterr().err


def test_an_out_path_that_is_a_file_is_refused(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = _simulate(capsys, "dice_race", "--games", "2", "--out", str(blocker))
    assert code == 1 and "a file of that name exists" in err


def test_games_stopped_by_a_rule_error_are_reported_with_a_replay_command(tmp_path, capsys):
    folder = _overlay(tmp_path, """\
        patches:
          - op: set
            path: actions/roll/do
            value: |
              let xs = [1]
              increase actor.position by xs[3]
            source: DR 4.1
        """)
    out = tmp_path / "run"
    code, text, err = _simulate(capsys, str(folder), "--games", "3", "--players", "2", "--workers", "1",
                                "--out", str(out), "--no-plots")
    assert code == 1
    assert "finished: 0 of 3 (3 stopped by an error)" in text
    assert "ludus: error: 3 game(s) of broken stopped with an error" in err
    assert "index 3 is outside a list of 1" in err
    assert f"replay it: ludus play {folder} --players 2 --seed {game_seed(1, 0)} --seat red=random" in err
    assert all(r["status"] == "error" and "house.yaml:6:" in r["reason"] for r in _records(out))


def test_a_crashing_bot_is_recorded_as_an_error_not_a_traceback(monkeypatch, capsys):
    class Crashing:
        def choose(self, game, player):
            raise ValueError("boom")

    monkeypatch.setattr("interpreter.bots.make_bot", lambda kind, seed, seat: Crashing())  # seat_bots makes them
    code, text, err = _simulate(capsys, "dice_race", "--games", "2", "--workers", "1", "--no-plots")
    assert code == 1
    assert "internal error: ValueError: boom" in text and "internal error: ValueError: boom" in err
    assert "Traceback" not in text + err


# ------------------------------------------------------------------ compare
def test_compare_flags_the_shorter_race_as_significant(tmp_path, capsys):
    code = main(["compare", "dice_race", "dice_race_short", "--games", "60", "--players", "2", "--workers", "2",
                 "--out", str(tmp_path), "--no-plots"])
    out = capsys.readouterr().out
    assert code == 0
    row = next(line for line in out.splitlines() if line.strip().startswith("rounds (mean)")).split()
    a, b = float(row[2]), float(row[3])
    assert b < a and row[-1] == "*"
    words = " ".join(out.split())
    assert "Welch's t-test" in words and "two-proportion z-test" in words
    assert (tmp_path / "compare.txt").read_text() in out
    assert _records(tmp_path / "base")[0]["seed"] == _records(tmp_path / "variant")[0]["seed"]


def test_compare_of_a_ruleset_with_itself_flags_nothing(capsys):
    code = main(["compare", "dice_race", "dice_race", "--games", "30", "--players", "2", "--workers", "1",
                 "--bots", "greedy,random"])
    out = capsys.readouterr().out
    assert code == 0
    assert "0 significant difference(s)" in out
    assert not [line for line in out.splitlines() if line.rstrip().endswith("*")]


def test_compare_rows_test_means_and_rates():
    rs = load_ruleset("dice_race")
    plan = make_plan(rs, "dice_race", 40, 2, "random")
    a = Tally(rs.seat_names(2), list(rs.scoring.metrics), True)
    b = Tally(rs.seat_names(2), list(rs.scoring.metrics), True)
    for i in range(40):
        a.add(play_game(rs, plan, i))
        rec = play_game(rs, plan, i)
        rec["rounds"] += 3  # a variant three rounds longer, same everything else
        b.add(rec)
    rows = {r.name: r for r in compare_rows(a, b)}
    assert rows["rounds (mean)"].flagged and rows["rounds (mean)"].diff == "+3.00"
    assert not rows["decisions (mean)"].flagged and rows["decisions (mean)"].test.p == 1.0
    assert not rows["win rate red"].flagged


# ------------------------------------------------------------------ the metrics mechanism
def _overlay(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "ruleset.yaml").write_text("ruleset: broken\nversion: '1'\nextends: dice_race\nfiles: [house.yaml]\n")
    (folder / "house.yaml").write_text(textwrap.dedent(text))
    return folder


def test_rounds_and_metrics_are_compiled_and_read_at_the_end():
    rs = load_ruleset("dice_race")
    assert rs.scoring.rounds is not None and list(rs.scoring.metrics) == ["boosts_in_hand"]
    rec = play_game(rs, make_plan(rs, "dice_race", 1, 2, "random"), 0)
    assert rec["rounds"] >= 1 and set(rec["metrics"]["boosts_in_hand"]) == {"red", "blue"}
    toc = load_ruleset("time_of_crisis")
    assert toc.scoring.rounds is not None and "emperor_turns" in toc.scoring.metrics


def test_a_bad_metric_or_rounds_expression_is_a_located_error(tmp_path):
    folder = _overlay(tmp_path, """\
        patches:
          - op: add
            path: scoring/metrics/lead
            value: p.positon + 1
            source: DR 5
          - op: set
            path: scoring/rounds
            value: p.position
            source: DR 5
          - op: add
            path: scoring/metrics/flag
            value: "true"
            source: DR 5
        """)
    with pytest.raises(LudusError) as exc:
        load_ruleset(str(folder))
    text = exc.value.render()
    assert "house.yaml:4:14: error: player has no field or zone 'positon' (did you mean 'position'?)" in text
    assert "house.yaml:8:12: error: unknown name 'p'" in text
    assert "house.yaml:12:13: error: wrong type: the metric 'flag' must be a number, not true/false" in text
