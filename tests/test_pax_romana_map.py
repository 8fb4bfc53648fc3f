"""The reconstructed map of Pax Romana keeps every statement the rule text makes about the map.

docs/pax_romana_map.md lists the sources and choices; each test cites the rule it holds to.
"""

from __future__ import annotations

import itertools
from collections import deque

import pytest

from interpreter import load_ruleset

LINKS = ("land_links", "straits", "sea_links")


@pytest.fixture(scope="module")
def world():
    ents = load_ruleset("pax_romana").entities
    by_kind: dict[str, dict[str, dict]] = {"territory": {}, "province": {}, "space": {}}
    for eid, e in ents.items():
        if e["kind"] in by_kind:
            by_kind[e["kind"]][eid] = e
    return by_kind["territory"], by_kind["province"], by_kind["space"]


def linked(spaces, a, b, field):
    return b in spaces[a].get(field, [])


def test_the_territories_of_2_11(world):
    terr, prov, _ = world
    homes = {t["name"] for t in terr.values() if t.get("home_of")}
    barbarian = {t["name"] for t in terr.values() if t.get("barbarian")}
    independent = {t["name"] for t in terr.values()} - homes - barbarian
    assert len(homes) == 4
    assert barbarian == {"Caledonia", "Greater German Tribes", "Sarmatia", "Scythia", "Armenia"}
    assert independent == {"Hispania", "Gaul", "The Sicilies", "Germania", "Danube", "Asia Minor", "Crete",
                           "The Chersonese", "Rhodes"}
    provinces_of = {tid: {p["name"] for p in prov.values() if p["territory"] == tid} for tid in terr}
    assert provinces_of["rome_territory"] == {"Cisalpina", "Italia", "Bruttium"}
    assert provinces_of["greece_territory"] == {"Attica", "Thrace", "Macedonia", "Peloponnesus", "The Aegean Islands"}
    assert provinces_of["gaul"] == {"Britannia", "Belgica", "Aquitania", "Lugdunensis", "Narbonensis"}
    for tid, t in terr.items():  # undivided territories are one province (2.11)
        if t.get("undivided"):
            assert len(provinces_of[tid]) == 1, tid


@pytest.mark.parametrize(("province", "size"), [
    ("bruttium", 5), ("italia", 9), ("macedonia", 6), ("aquitania", 6), ("narbonensis", 5), ("lugdunensis", 9),
    ("britannia", 8), ("aegean_islands", 3), ("balearic_islands_province", 1)])
def test_province_sizes_the_text_gives(world, province, size):
    # PR 5.22, 5.23, 5.3 (the control example), 5.24
    assert sum(1 for s in world[2].values() if s.get("province") == province) == size


def test_every_province_has_a_land_space_and_its_income(world):
    _, prov, spaces = world
    special = {"italia": 2, "ionia": 2, "narbonensis": 2, "egypt": 3,  # PR 6.11
               "balearic_islands_province": 0, "melita_province": 0, "germania_magna": 0}  # PR 6.14
    for pid, p in prov.items():
        assert any(s.get("province") == pid for s in spaces.values()), pid
        assert p.get("income", 1) == special.get(pid, 1), pid


def test_capitals_mine_mountains_and_tribes(world):
    spaces = world[2]
    assert {sid: s["capital"] for sid, s in spaces.items() if s.get("capital")} == {
        "roma": "rome", "carthago": "carthage", "pella": "greece", "athens": "greece",
        "alexandria": "east", "antioch": "east"}  # PR 1.4, 8.15
    assert [sid for sid, s in spaces.items() if s.get("mine")] == ["bergidum"]  # PR 2.13, 6.11
    assert spaces["mazaca"]["terrain"] == spaces["sebastia"]["terrain"] == "mountain"  # PR 2.13
    assert sum(1 for s in spaces.values() if s.get("tribal")) == 26  # PR 13.18, design note


def test_the_straits_are_the_four_of_9_33(world):
    spaces = world[2]
    pairs = {frozenset((a, b)) for a, s in spaces.items() for b in s.get("straits", [])}
    named = {frozenset(p) for p in [("messana", "rhegium"), ("sestus", "abydos"), ("byzantium", "nicomedia")]}
    assert named < pairs and len(pairs) == 4
    (tingi,) = pairs - named
    assert "tingi" in tingi  # the fourth joins Tingi to Baetica's land transit point
    assert linked(spaces, "rhegium", "messana", "sea_links")  # PR 2.14: a strait with a naval connection


def test_connections_the_text_states(world):
    spaces = world[2]
    assert linked(spaces, "memphis", "hermopolis", "land_links")  # PR 2.14
    assert linked(spaces, "pisae", "aleria", "sea_links")  # PR 2.14
    assert linked(spaces, "megara", "corinth", "sea_links")  # PR 2.14: the Corinthian isthmus
    coast = ["malacca", "carthago_nova", "saguntum", "tarraco", "emporiae"]  # PR 2.14: Hispania's SE coast
    for a, b in itertools.pairwise(coast):
        assert linked(spaces, a, b, "land_links") and linked(spaces, a, b, "sea_links"), (a, b)

    def between(a, b, terrain, field):
        return [t for t in spaces[a].get(field, []) if spaces[t]["terrain"] == terrain and b in spaces[t].get(field, [])]

    assert between("salonae", "lissa", "land_transit", "land_links")  # PR 2.13
    assert between("lissa", "barium", "naval_transit", "sea_links")  # PR 2.13
    assert between("alexandria", "rhodes", "deep_sea", "sea_links")  # PR 2.13
    assert not linked(spaces, "gergovia", "uxellodunum", "land_links")  # PR 9.22's example


@pytest.mark.parametrize(("route", "field"), [
    (["emporiae", "narbo", "nemausus", "valentia", "alps_valentia_taurinorum", "taurinorum", "mediolanum",
      "parma", "arretium"], "land_links"),  # PR 8.4, the example of movement
    (["pella", "dyrrhachium"], "land_links"),  # PR 11.3, the example of transport
    (["dyrrhachium", "corcyra", "actium", "patrae", "gythium", "dstp_gythium_syracuse", "syracuse"], "sea_links"),
    (["syracuse", "agrigentum"], "land_links"),
    (["lilybaeum", "ntp_lilybaeum_melita", "melita", "thapsus"], "sea_links"),  # PR 11.33's example
    (["roma", "pisae", "arretium"], "land_links"),  # PR 10.3's examples
])
def test_the_routes_of_the_examples(world, route, field):
    spaces = world[2]
    assert all(linked(spaces, a, b, field) for a, b in itertools.pairwise(route))


def test_britannia_reaches_home_only_through_gesoriacum_and_darioritum(world):
    # PR 6.27 example #3: occupying those two cuts Britannia's line of communication
    terr, prov, spaces = world
    start = {sid for sid, s in spaces.items() if s.get("province") == "britannia"}
    seen, todo = set(start), deque(start)
    while todo:
        a = todo.popleft()
        for f in LINKS:
            for b in spaces[a].get(f, []):
                if b not in seen and b not in ("gesoriacum", "darioritum"):
                    seen.add(b)
                    todo.append(b)
    assert not any(prov.get(spaces[b].get("province"), {}).get("territory") == "carthage_territory" for b in seen)


def test_the_aegean_islands_are_islands(world):
    spaces = world[2]
    for sid in ("thasos", "limnos", "lesbos_chios", "samos", "naxos"):  # PR 6.28
        assert not spaces[sid].get("land_links") and not spaces[sid].get("straits"), sid


def test_every_space_is_reachable_and_on_the_board(world):
    spaces = world[2]
    seen, todo = {"roma"}, deque(["roma"])
    while todo:
        a = todo.popleft()
        for f in LINKS:
            for b in spaces[a].get(f, []):
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
    assert seen == set(spaces)
    assert all(0 <= s["x"] <= 1200 and 0 <= s["y"] <= 700 for s in spaces.values())
