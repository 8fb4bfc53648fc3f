"""Fog of war (visible_to), private narration (log ... to) and reports (ludus report), on tests/fog/scouts.

At the start north has a patrol at the Ford and one in its camp; south has one on the Hill
(next to the Ford: north sees it, but not its soldiers) and one in its camp (unseen).
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from rulekit import program

from interpreter import Game, load_ruleset
from interpreter.cli import main
from interpreter.diagnostics import LudusError

ROOT = Path(__file__).resolve().parent.parent
SCOUTS = ROOT / "tests" / "fog" / "scouts"
SOUTH_MEN = {"s_foot_men_1", "s_foot_men_2", "s_foot_men_3", "s_horse_men_1"}


@pytest.fixture(scope="module")
def rs():
    return load_ruleset(SCOUTS)


def new_game(rs, seed: int = 3) -> Game:
    return Game.new(rs, 2, seed)


def put(game: Game, patrol: str, place: str) -> None:
    """Move a patrol by hand (as a scenario's state patch would)."""
    game.move(patrol, f"ground@{place}", False, None)


# ---------------------------------------------------------------- views
def test_a_view_leaves_out_unseen_entities_and_zones(rs):
    assert rs.fog
    view = new_game(rs).view("north")
    ents = set(view["entities"])
    assert {"n_foot", "n_horse", "s_horse"} <= ents  # its own patrols, and the enemy next to the Ford
    assert "s_foot" not in ents  # in the south camp, out of sight
    assert not ents & SOUTH_MEN  # no enemy soldier: its ranks are unseen
    assert {k for k in view["zones"] if k.startswith("ranks")} == {"ranks@n_foot", "ranks@n_horse"}  # no size
    assert view["zones"]["ground@camp_s"] == [] and view["zones"]["ground@hill"] == ["s_horse"]
    assert view["zones"]["ranks@n_foot"] == ["n_foot_men_1", "n_foot_men_2"]


def test_a_spectator_sees_no_fog_limited_entity_and_an_umpire_everything(rs):
    game = new_game(rs)
    spectator = game.view(None)
    assert not {e for e, r in spectator["entities"].items() if r["kind"] in ("patrol", "soldier")}
    assert set(spectator["zones"]) == {f"ground@{p}" for p in ("camp_n", "ford", "wood", "hill", "camp_s")}
    assert not any(spectator["zones"].values())  # the places are there, empty
    umpire = game.view("umpire")  # a name that is no seat of the game sees everything
    assert set(umpire["entities"]) == set(game.ents)
    assert umpire["zones"] == game.zones


def test_an_enemy_on_the_same_place_shows_his_soldiers(rs):
    game = new_game(rs)
    put(game, "n_horse", "hill")
    view = game.view("north")
    assert view["zones"]["ranks@s_horse"] == ["s_horse_men_1"]
    assert "s_horse_men_1" in view["entities"]
    assert "ranks@s_foot" not in view["zones"]  # south camp is next to the hill: its patrol is seen...
    assert "s_foot" in view["entities"]  # ... but not its soldiers
    assert not SOUTH_MEN - {"s_horse_men_1"} & set(view["entities"])


def test_a_view_does_not_change_when_only_unseen_things_change(rs):
    game = new_game(rs)
    before = json.dumps(game.view("north"), sort_keys=True)
    game.zones["ranks@s_foot"].remove("s_foot_men_3")  # a soldier moves between unseen ranks
    game.zones["ranks@s_horse"].append("s_foot_men_3")
    game.ents["s_foot_men_3"]["zone"] = "ranks@s_horse"
    game.ents["s_foot"]["name"] = "Renamed"  # an unseen patrol changes
    game.forget_all()
    assert json.dumps(game.view("north"), sort_keys=True) == before
    assert json.dumps(game.view("south"), sort_keys=True) != before


def test_a_ruleset_without_visible_to_has_no_fog():
    rs = load_ruleset("dice_race")
    assert not rs.fog and rs.report is None
    view = Game.new(rs, 2, 1).view("red")
    assert view["zones"]["deck"] == {"hidden": len(Game.new(rs, 2, 1).zones["deck"])}


# ---------------------------------------------------------------- samples
def test_a_sample_takes_unseen_entities_out_of_their_zones(rs):
    game = new_game(rs)
    sample = game.sample("north", 7)
    assert sample.zones["ranks@s_foot"] == [] and sample.zones["ranks@s_horse"] == []
    assert all(sample.ents[e]["zone"] is None for e in SOUTH_MEN)
    assert sample.zones["ranks@n_foot"] == ["n_foot_men_1", "n_foot_men_2"]  # its own are where they are
    assert sample.zones["ground@camp_s"] == [] and sample.ents["s_foot"]["zone"] is None  # off the map
    assert sample.zones["ground@hill"] == ["s_horse"]  # seen: where it is
    assert game.zones["ranks@s_foot"] == ["s_foot_men_1", "s_foot_men_2", "s_foot_men_3"]  # the game is untouched
    assert all(game.ents[e]["zone"] is not None for e in SOUTH_MEN)
    assert game.sample("umpire", 7).zones == game.zones


def test_bots_play_a_fog_game_to_its_end(rs):
    from interpreter.bots import make_bot

    game = new_game(rs, 5)
    bots = {p: make_bot("greedy", 5, p) for p in game.players}
    while not game.over:
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    assert game.result is not None


# ---------------------------------------------------------------- log ... to
def test_log_to_writes_the_seats_in_order_without_repeats(tmp_path):
    game = program(tmp_path, 'log "a" to players[1]\nlog "b" to [players[1], players[0], players[1]]\n'
                             'log "c" to []\nlog "d"')
    assert game.log[1:5] == [{"type": "text", "text": "a", "to": ["blue"]},
                             {"type": "text", "text": "b", "to": ["blue", "red"]},
                             {"type": "text", "text": "c", "to": []},
                             {"type": "text", "text": "d"}]


@pytest.mark.parametrize("target", ["3", "[ace]", '"red"'])
def test_log_to_something_not_players_is_a_located_error(tmp_path, target):
    with pytest.raises(LudusError) as exc:
        program(tmp_path, f'log "x" to {target}')
    d = exc.value.diagnostics[0]
    assert (d.loc.line, d.loc.col) == (9, 18)  # at the value after 'to'
    assert "a log is told to a player or a list of players" in d.message


def test_a_logged_fog_game_replays_byte_identical(tmp_path, capsys):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for log in (first, second):
        assert main(["play", str(SCOUTS), "--seed", "3", "--quiet", "--log", str(log)]) == 0
    assert first.read_bytes() == second.read_bytes()
    lines = [json.loads(x) for x in first.read_text(encoding="utf-8").splitlines()]
    assert {"type": "text", "text": "north holds", "to": ["north"]} in lines
    assert {"type": "text", "text": "Turn 1 is over: the umpire's note", "to": []} in lines
    capsys.readouterr()
    assert main(["replay", str(first), "--ruleset", str(SCOUTS)]) == 0
    assert "the log reproduces exactly" in capsys.readouterr().out


@pytest.mark.parametrize(("to", "message"), [('["east"]', "a text line told to \"east\", who has no seat"),
                                             ('"north"', "'to' of a text line must be a list")])
def test_a_bad_to_in_a_log_is_an_error_at_its_line(tmp_path, capsys, to, message):
    log = tmp_path / "game.jsonl"
    assert main(["play", str(SCOUTS), "--seed", "3", "--quiet", "--log", str(log)]) == 0
    lines = log.read_text(encoding="utf-8").splitlines()
    lines[1] = '{"type": "text", "text": "Turn 1", "to": ' + to + "}"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["replay", str(log), "--ruleset", str(SCOUTS)]) == 1
    err = capsys.readouterr().err
    assert "game.jsonl:2:" in err and f"error: {message}" in err
    assert "Traceback" not in err


def test_a_human_is_told_only_his_own_lines(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("5\n" * 10))  # north holds, every turn
    assert main(["play", str(SCOUTS), "--seed", "3", "--seat", "north=human"]) == 0
    out = capsys.readouterr().out
    assert "north holds" in out and "south gives orders" in out
    assert "South horse marches" not in out and "sights North" not in out  # south's private lines
    assert "umpire's note" not in out
    assert "  south > (secret)" in out and "  south > March" not in out  # his orders are his own


def test_a_spectator_of_bots_is_told_everything(capsys):
    assert main(["play", str(SCOUTS), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "north holds" in out and "South horse marches to Ford" in out and "umpire's note" in out
    assert "  south > March South horse to Ford" in out


def test_status_lines_leave_out_what_the_player_does_not_see(rs):
    from interpreter.seat import readable_view, status_lines

    game = new_game(rs)
    lines = dict(status_lines(game, "north"))
    assert lines["patrols"] == "North foot, North horse"
    assert lines["enemies"] == "South horse"  # not South foot, out of sight
    text = "\n".join(readable_view(game, "north"))
    assert "South foot" not in text and "South horse" in text


# ---------------------------------------------------------------- ludus report
@pytest.fixture(scope="module")
def scouts_log(tmp_path_factory):
    log = tmp_path_factory.mktemp("report") / "game.jsonl"
    assert main(["play", str(SCOUTS), "--seed", "3", "--quiet", "--log", str(log)]) == 0
    return log


def report(capsys, log, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["report", str(SCOUTS), "--log", str(log), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_report_holds_the_players_narration_and_status(capsys, scouts_log):
    code, out, _ = report(capsys, scouts_log, "--player", "north")
    assert code == 0
    assert out.splitlines()[0] == "== Turn 3: report 3 for north =="  # the last section, its title
    assert "North foot marches to North camp" in out and "south gives orders" in out
    assert "South horse marches" not in out and "umpire's note" not in out and "Turn 2" not in out
    assert "  enemies  South horse\n" in out and "South foot" not in out


def test_report_all_and_season(capsys, scouts_log):
    code, out, _ = report(capsys, scouts_log, "--player", "south", "--all")
    assert code == 0
    assert [x for x in out.splitlines() if x.startswith("==")] == [
        f"== Turn {n}: report {n} for south ==" for n in (1, 2, 3)]
    code, one, _ = report(capsys, scouts_log, "--player", "south", "--season", "2")
    assert code == 0 and one.splitlines()[0] == "== Turn 2: report 2 for south =="
    assert one.strip() in out
    assert "South horse marches to Hill" in one and "north holds" not in one


@pytest.mark.parametrize(("args", "message"), [
    (["--player", "east"], "'east' is not a seat of this game (give --player one of north, south)"),
    (["--player", "north", "--season", "9"], "--season 9, but the log holds 3 complete report(s)"),
])
def test_report_errors(capsys, scouts_log, args, message):
    code, _, err = report(capsys, scouts_log, *args)
    assert code == 1 and message in err and "Traceback" not in err


def test_a_ruleset_without_report_is_told_to_declare_it(tmp_path, capsys):
    log = tmp_path / "game.jsonl"
    assert main(["play", "dice_race", "--seed", "3", "--quiet", "--log", str(log)]) == 0
    capsys.readouterr()
    assert main(["report", "dice_race", "--log", str(log), "--player", "red"]) == 1
    err = capsys.readouterr().err
    assert "ruleset 'dice_race' declares no report" in err and "add 'report:" in err


def test_a_report_of_a_log_that_does_not_replay_is_a_located_error(tmp_path, capsys, scouts_log):
    log = tmp_path / "game.jsonl"
    lines = scouts_log.read_text(encoding="utf-8").splitlines()
    lines[4] = lines[4].replace("north holds", "north sleeps")
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = report(capsys, log, "--player", "north")
    assert code == 1 and "game.jsonl:5:1: error: replay diverges" in err


# ---------------------------------------------------------------- validation
def broken(tmp_path: Path, old: str, new: str, file: str = "components.yaml") -> str:
    folder = tmp_path / "scouts"
    shutil.copytree(SCOUTS, folder)
    text = (folder / file).read_text(encoding="utf-8")
    assert old in text
    (folder / file).write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(LudusError) as exc:
        load_ruleset(folder, cache=False)
    return exc.value.render()


def test_visible_to_must_be_true_or_false(tmp_path):
    out = broken(tmp_path, "visible_to: it.owner == me or near(me, it)", "visible_to: it.side + 1")
    assert "components.yaml:16:25: error: wrong type:" in out and "who sees a patrol ('visible_to')" in out


def test_visible_to_with_an_unknown_name_is_located(tmp_path):
    out = broken(tmp_path, "near(me, it)", "sees(me, it)")
    assert "components.yaml:16:" in out and "sees" in out


def test_a_zone_visible_to_reads_its_owner(tmp_path):
    out = broken(tmp_path, "visible_to: it.owner == me or beside(me, it)", "visible_to: it.links == []")
    assert "components.yaml:33:20: error: patrol has no field or zone 'links'" in out


def test_a_single_zone_cannot_have_visible_to(tmp_path):
    out = broken(tmp_path, "    per: patrol\n", "")
    assert "only a zone 'per: KIND' can be visible to some players" in out


def test_report_every_must_be_signalled(tmp_path):
    out = broken(tmp_path, "every: turn_end", "every: turn_ends", file="rules.yaml")
    assert "no rule signals 'turn_ends', so no report would ever end (did you mean 'turn_end'?)" in out
