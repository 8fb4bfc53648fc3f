"""Pax Romana (rulesets/pax_romana): the map's consistency, the reference tools, whole games and their invariants.

The rulebook's examples and edge cases are scenarios in tests/scenarios/pax_romana; what the text says
of the map is tested in test_pax_romana_map.py.
"""

from __future__ import annotations

import os
import random

import pytest

from interpreter import Game, load_ruleset
from interpreter.cli import main


@pytest.fixture(scope="module")
def rs():
    return load_ruleset("pax_romana")


def spaces(rs):
    return {eid: e for eid, e in rs.entities.items() if e["kind"] == "space"}


@pytest.mark.parametrize("field", ["land_links", "straits", "sea_links"])
def test_connections_are_symmetric(rs, field):
    sp = spaces(rs)
    one_way = [(a, b) for a, e in sp.items() for b in e.get(field, []) if a not in sp[b].get(field, [])]
    assert one_way == []


def test_land_units_and_ships_use_the_right_spaces(rs):
    sp = spaces(rs)
    # PR 2.13: only naval units use naval transit points; only land units land transit points and passes
    for eid, e in sp.items():
        if e["terrain"] in ("naval_transit", "deep_sea"):
            assert not e.get("land_links") and not e.get("straits"), eid
        if e.get("sea_links") and e["terrain"] == "land":
            assert e.get("port"), f"{eid} has sea connections but is no port"


def test_where_finds_the_loss_rules(capsys):
    assert main(["where", "PR 10.5", "--ruleset", "pax_romana"]) == 0
    out = capsys.readouterr().out
    assert "procedures/take_losses" in out and "tables/unit_bp" in out and "procedures/land_battle" in out


def test_docs_list_the_systems_and_the_reconstructed_charts(capsys):
    assert main(["docs", "pax_romana"]) == 0
    out = capsys.readouterr().out
    for name in ("controls_province", "has_loc", "land_battle", "take_losses", "attrition", "ranked_vp"):
        assert name in out
    recon = out[out.index("## Reconstructed data"):]
    for name in ("manmax", "odds_shifts", "stability_range_of", "raisable"):
        assert name in recon


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_bot_game_plays_every_game_turn_to_the_end(capsys, players):
    assert main(["play", "pax_romana", "--players", str(players), "--seed", "5"]) == 0
    out = capsys.readouterr().out
    # PR 3.2: five Game-Turns (the Basic Game, 3.81), each with its phases, then the end
    assert [line for line in out.splitlines() if line.startswith("=== Game-Turn")] == [
        f"=== Game-Turn {n} ===" for n in range(1, 6)]
    turn_two = out.split("=== Game-Turn 2 ===")[1].split("=== Game-Turn 3 ===")[0]
    assert "collects" in turn_two and "draws a" in turn_two and "'s activation ---" in turn_two
    assert "collects" not in out.split("=== Game-Turn 2 ===")[0]  # PR 3.6: no income on the first turn
    assert "Game over: Game-Turn 5 is over: the most Victory Points wins" in out
    assert out.count(" GOP, ") == 5 * players  # a Victory Phase every Game-Turn


def invariants(game: Game) -> None:
    """What every position of a Pax Romana game keeps (also run by benchmarks/sweep.py)."""
    ents, zones = game.ents, game.zones
    kinds: dict[str, list[str]] = {}
    for eid, e in ents.items():
        kinds.setdefault(e["kind"], []).append(eid)
    # the pieces are conserved: pools only move between the map and the reserve
    own_leaders = [x for x in kinds["leader"] if ents[x].get("band") is None]
    assert len(own_leaders) == 40 and len(kinds["town"]) == 30 and len(kinds["tribe"]) == 30
    placed = [eid for items in zones.values() for eid in items]
    assert len(placed) == len(set(placed)), "an entity is in two zones"
    for p in game.players:
        me = ents[p]
        assert me["talents"] >= 0, f"{p} has {me['talents']}T"  # PR 3.44: no money, no payment
        assert -6 <= me["stability"] <= 8, f"{p} Stability {me['stability']}"  # PR 14.14
        # the leader cup holds those being drawn (8.12, the Dictator's three: 12.47), not on the map
        on_map = [x for x in own_leaders if ents[x]["power"] == p and ents[x]["zone"] not in (None, "reserve", "leader_cup")]
        assert len(on_map) <= 2, f"{p} has leaders {on_map}"  # PR 8.11
    for t in kinds["town"]:
        e = ents[t]
        if e["zone"] not in (None, "reserve"):
            # PR 7.31, 7.33: a City holds 3-5 wall points, a Town 1-2
            assert (3 if e["city"] else 1) <= e["walls"] <= (5 if e["city"] else 2), f"{t}: {e}"
    if "event_card" in kinds:  # the Advanced Game's deck: PR 17.1, 17.14
        cards = kinds["event_card"]
        assert len(cards) == 55
        assert all(ents[c]["zone"] is not None for c in cards), "a card left the game's zones"
        for p in game.players:
            hand = zones.get(f"card_hand@{p}", [])
            assert sum(1 for c in hand if ents[c]["hold"]) <= 4, f"{p} holds {hand}"  # 3, and a 4th before a discard
    between_moves = bool(game.pending) and game.pending.get("prompt", "").endswith(": Expansion")
    for s in kinds["space"]:
        items = zones.get(f"units@{s}", [])
        assert sum(1 for x in items if ents[x]["kind"] == "town") <= 1, f"two towns in {s}"
        # PR 5.11, 10.97: between moves (at an Expansion's menu) one power at most occupies a space
        if between_moves:
            land = [x for x in items if ents[x]["kind"] == "unit" and ents[x]["type"] not in ("el", "gs")]
            owners = {ents[x]["power"] for x in land}
            assert len(owners) <= 1, f"{s} is held by {owners}"
            # PR 12.73, 13.37: slaves and barbarians leave a town they enter to its owner
            if not any(ents[x].get("band") for x in land):
                owners |= {ents[x]["power"] for x in items if ents[x]["kind"] == "town"}
                assert len(owners) <= 1, f"{s} is held by {owners}"
        for x in items:
            e = ents[x]
            if e["kind"] == "unit" and e.get("band") in ("sof", "invaders"):
                assert e["power"] is not None, f"{x} in {s} fights for no one"  # PR 12.42, 13.42
            if e["kind"] == "unit" and e.get("band") == "slaves":
                assert e["power"] is None, f"{x} in {s}: slaves serve no one"  # PR 12.71


# CI plays 2 seeds per player count; LUDUS_PR_SEEDS=300 runs the sweep.
SEEDS = int(os.environ.get("LUDUS_PR_SEEDS", "2"))


@pytest.fixture(scope="module")
def advanced():
    return load_ruleset("pax_romana_advanced")


@pytest.mark.parametrize("game_kind", ["standard", "advanced"])
@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_bots_keep_the_invariants_after_every_decision(rs, advanced, game_kind, players, seed):
    game = Game.new(rs if game_kind == "standard" else advanced, players, seed)
    rand = random.Random(seed)
    decisions = 0
    while not game.over and decisions < 5000:
        p = game.deciders()[0]
        game.apply(rand.randrange(len(game.choices(p))), p)
        invariants(game)
        decisions += 1
    assert game.over and game.result["reason"].startswith("Game-Turn 5 is over")
