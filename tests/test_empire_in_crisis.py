"""Empire in Crisis (rulesets/empire_in_crisis): whole campaigns with bots and the umpire bot,
the invariants of the issue after every decision, fog of war in views and reports, replays.

The rulebook's tables and examples are scenarios (tests/scenarios/empire_in_crisis, run by
tests/test_scenarios.py); here the campaign as a whole.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from interpreter import Game, load_ruleset
from interpreter.bots import make_bot
from interpreter.cli import main

# CI plays a few campaigns per player count; LUDUS_EIC_SEEDS=200 runs the sweep.
SEEDS = int(os.environ.get("LUDUS_EIC_SEEDS", "3"))


@pytest.fixture(scope="module")
def rs():
    return load_ruleset("empire_in_crisis")


def seen_provinces(game: Game, p: str) -> set[str]:
    """Where ``p`` sees what stands, worked out here from the state (EiC B, C; ``sees``)."""
    ents = game.state["entities"]
    out: set[str] = set()
    for g in ents.values():
        if g["kind"] == "general" and g["owner"] == p and (g["zone"] or "").startswith("present@"):
            s = g["zone"].split("@", 1)[1]
            out |= {s, *ents[s]["links"]}
    for c in ents.values():
        if c["kind"] == "city" and c["holder"] == p:
            out.add(c["province"])
    return out


def check_invariants(game: Game) -> None:
    """Treasuries never negative, battlegroups conserved, one holder per city and only his
    troops in its garrison; every player's view shows no enemy army he cannot see."""
    st = game.state
    ents, zones, glob = st["entities"], st["zones"], st["globals"]
    for p in game.players:
        assert ents[p]["treasury"] >= 0, f"{p}'s treasury is {ents[p]['treasury']}"
        assert min(ents[p]["manpower"], ents[p]["horses"], ents[p]["timber"]) >= 0
    units = [u for u, e in ents.items() if e["kind"] == "unit"]
    assert len(units) == glob["units_raised"] - glob["units_lost"], "battlegroups appeared or vanished"
    for u in units:
        z = ents[u]["zone"]
        assert z is not None and u in zones[z], f"{u} stands nowhere"
    for c, e in ents.items():
        if e["kind"] == "city":
            assert e["holder"] is None or e["holder"] in game.players
            for u in zones[f"garrison@{c}"]:
                assert ents[u]["owner"] == e["holder"], f"{u} of {ents[u]['owner']} garrisons {c} of {e['holder']}"
    for p in game.players:
        view = game.view(p, copy=False)
        seen = seen_provinces(game, p)
        for gid, g in view["entities"].items():
            if g["kind"] != "general" or g["owner"] == p or not (g["zone"] or "").startswith("present@"):
                continue
            assert g["zone"].split("@", 1)[1] in seen, f"{p} sees {gid} in {g['zone']}"
        for key in view["zones"]:
            if key.startswith("garrison@"):
                c = key.split("@", 1)[1]
                assert ents[c]["holder"] == p or ents[c]["province"] in seen, f"{p} sees the garrison of {c}"


def play(rs: Any, players: int, seed: int, kinds: list[str], check: bool = True) -> Game:
    game = Game.new(rs, players, seed)
    bots = {p: make_bot(kinds[i % len(kinds)], seed, p) for i, p in enumerate(game.players)}
    bots["umpire"] = make_bot("umpire", seed, "umpire")
    decisions = 0
    while not game.over:
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
        decisions += 1
        if check:
            check_invariants(game)
        assert decisions < 20000, "the campaign does not end"
    return game


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(SEEDS))
def test_campaigns_keep_the_invariants_after_every_decision(rs, players, seed):
    game = play(rs, players, seed, ["random"])
    reason = game.result["reason"]
    assert reason.endswith("is the last player whose Caesar is free") or reason.startswith("the campaign's 10 years")
    free = [p for p in game.players if not game.state["entities"][p]["eliminated"]]
    if "last player" in reason:
        assert len(free) == 1 and game.result["winners"] == free


def test_the_umpire_rules_in_a_campaign_and_a_replay_reproduces_it(rs, tmp_path, capsys):
    log = tmp_path / "eic.jsonl"
    assert main(["play", "empire_in_crisis", "--players", "3", "--seed", "4", "--log", str(log)]) == 0
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(e["type"] == "choice" and e["player"] == "umpire" for e in entries)
    assert entries[0]["seats"]["umpire"] == "umpire"
    capsys.readouterr()
    assert main(["replay", str(log)]) == 0


def test_private_narration_goes_only_to_those_who_see(rs, tmp_path, capsys):
    """A player's report holds the public lines and the lines told to him, nothing else."""
    log = tmp_path / "eic.jsonl"
    assert main(["play", "empire_in_crisis", "--players", "4", "--seed", "2", "--log", str(log)]) == 0
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    texts = [e for e in entries if e["type"] == "text"]
    assert any("to" in e for e in texts) and any("to" not in e for e in texts)
    for p in ["red", "green"]:
        capsys.readouterr()
        assert main(["report", "empire_in_crisis", "--log", str(log), "--player", p, "--all"]) == 0
        report = capsys.readouterr().out
        for e in texts:
            if "to" in e and p not in e["to"] and all(e["text"] != other["text"] for other in texts
                                                       if "to" not in other or p in other["to"]):
                assert e["text"] not in report, f"{p}'s report tells him: {e['text']}"


def test_a_view_does_not_change_when_only_unseen_armies_change(rs):
    """Fog of war: moving an enemy army about where red cannot see it leaves red's view as it was."""
    game = Game.new(rs, 2, 1)
    before = game.view("red")
    st = game.state
    # blue's Caesar goes from Pannonia to Dacia: red sees neither
    assert "pannonia" not in seen_provinces(game, "red") and "dacia" not in seen_provinces(game, "red")
    st["zones"]["present@pannonia"].remove("blue_caesar")
    st["zones"]["present@dacia"].append("blue_caesar")
    st["entities"]["blue_caesar"]["zone"] = "present@dacia"
    game.forget_all()
    assert game.view("red") == before
    assert "blue_caesar" in game.view("blue")["entities"]
    assert "blue_caesar" in game.view("umpire")["entities"]


def test_greedy_bots_play_a_campaign(rs):
    game = play(rs, 2, 7, ["greedy", "random"], check=False)
    assert game.over


def test_the_map_is_symmetric_and_every_capital_lies_in_its_province(rs):
    ents = Game.new(rs, 2, 0).state["entities"]
    provinces = {k: e for k, e in ents.items() if e["kind"] == "province"}
    cities = {k: e for k, e in ents.items() if e["kind"] == "city"}
    assert len(provinces) == 40 and len(cities) == 80
    for s, f in provinces.items():
        for t in f["links"]:
            assert s in provinces[t]["links"], f"{s} - {t}"
        assert set(f.get("rivers") or []) <= set(f["links"])
        if f.get("roman"):
            assert cities[f["capital"]]["province"] == s and cities[f["capital"]]["capital"]


def test_a_season_report_names_the_season(rs, tmp_path, capsys):
    log = tmp_path / "eic.jsonl"
    assert main(["play", "empire_in_crisis", "--players", "2", "--seed", "5", "--log", str(log)]) == 0
    capsys.readouterr()
    assert main(["report", "empire_in_crisis", "--log", str(log), "--player", "red", "--season", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== Report 1 to red: the spring of year 1 ==")
    assert "treasury" in out and "armies" in out


def test_campaign_lengths_are_reported(rs):
    """The rounds metric counts seasons: a campaign lasts at most 40 (ten years)."""
    game = play(rs, 4, 11, ["random"], check=False)
    assert 1 <= game.state["globals"]["seasons_played"] <= 40


if __name__ == "__main__":  # the sweep: python -m tests.test_empire_in_crisis N
    import sys
    import time
    from collections import Counter

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rs_ = load_ruleset("empire_in_crisis")
    for players in (2, 3, 4):
        t0 = time.time()
        reasons: Counter[str] = Counter()
        seasons = []
        for seed in range(n):
            g = play(rs_, players, seed, ["random"], check=True)
            reasons["last Caesar" if "last player" in g.result["reason"] else "time limit"] += 1
            seasons.append(g.state["globals"]["seasons_played"])
        seasons.sort()
        print(f"{players} players: {n} campaigns in {time.time() - t0:.0f} s; ends {dict(reasons)}; "
              f"seasons min {seasons[0]} median {seasons[len(seasons) // 2]} max {seasons[-1]}")
