"""`ludus bench`, its hand-written references, and the load cache it measures.

Speed itself is never tested here (it depends on the machine); what is tested is that the
cache is used when it may be and never when it must not, that a cached load behaves exactly
like a full one, that the hand-written references do exactly what the interpreted rules do
(so the ratios compare like with like), and the shape of the bench report.
"""

from __future__ import annotations

import io
import json
import random
import shutil
from pathlib import Path

import pytest
from rulekit import play_random

from interpreter import Game, LudusError, load_ruleset, loadcache
from interpreter.bench import Report, Settings, measure_ratios, references, render
from interpreter.cli import main
from interpreter.loader import last_load

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "rulesets"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("LUDUS_CACHE", str(folder))
    return folder


def copy_ruleset(name: str, dest: Path) -> Path:
    shutil.copytree(BUNDLED / name, dest)
    return dest


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("ruleset-*.cache")) if folder.is_dir() else []


def play(rs, seed: int, decisions: int = 300) -> list:
    return play_random(rs, rs.max_players, seed, decisions).log


# ====================================================================== the load cache
def test_second_load_hits_the_cache_and_a_changed_file_misses(cache, tmp_path):
    folder = copy_ruleset("dice_race", tmp_path / "race")
    hits = loadcache.STATS["hits"]
    first = load_ruleset(folder)
    info = last_load()
    assert info is not None and info.cache == "miss" and info.reason == "no entry" and info.written
    assert len(entries(cache)) == 1
    second = load_ruleset(folder)
    assert last_load().cache == "hit"
    assert loadcache.STATS["hits"] == hits + 1
    assert second.digest == first.digest
    rules = folder / "rules.yaml"
    rules.write_text(rules.read_text(encoding="utf-8") + "\n# a comment changes the bytes\n", encoding="utf-8")
    load_ruleset(folder)
    assert last_load().cache == "miss" and last_load().reason.startswith("file changed")
    assert last_load().written  # the stale entry is rewritten ...
    load_ruleset(folder)
    assert last_load().cache == "hit"  # ... and used next time
    assert len(entries(cache)) == 1


def test_a_change_in_an_extended_ruleset_misses(cache, tmp_path):
    copy_ruleset("dice_race", tmp_path / "base")
    overlay = copy_ruleset("dice_race_short", tmp_path / "short")
    manifest = overlay / "ruleset.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("extends: dice_race", "extends: ../base"),
                        encoding="utf-8")
    load_ruleset(overlay)
    load_ruleset(overlay)
    assert last_load().cache == "hit"
    base_rules = tmp_path / "base" / "rules.yaml"
    base_rules.write_text(base_rules.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    load_ruleset(overlay)
    assert last_load().cache == "miss" and "base" in last_load().reason


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped"])
def test_a_corrupt_cache_file_is_ignored_and_rewritten(cache, tmp_path, damage):
    folder = copy_ruleset("dice_race", tmp_path / "race")
    good = load_ruleset(folder)
    (entry,) = entries(cache)
    blob = entry.read_bytes()
    if damage == "garbage":
        entry.write_bytes(b"not a cache file at all")
    elif damage == "truncated":
        entry.write_bytes(blob[: len(blob) // 2])
    else:
        entry.write_bytes(blob[:-10] + bytes(b ^ 0xFF for b in blob[-10:]))
    again = load_ruleset(folder)
    assert last_load().cache == "miss" and "corrupt" in last_load().reason
    assert again.digest == good.digest
    load_ruleset(folder)
    assert last_load().cache == "hit"


def test_caching_can_be_turned_off(cache, tmp_path, monkeypatch):
    folder = copy_ruleset("dice_race", tmp_path / "race")
    load_ruleset(folder, cache=False)
    assert last_load().cache == "off" and entries(cache) == []
    monkeypatch.setenv("LUDUS_CACHE", "off")
    load_ruleset(folder)
    assert last_load().cache == "off" and entries(cache) == []
    monkeypatch.setenv("LUDUS_CACHE", str(cache))
    assert main(["--no-cache", "validate", str(folder)]) == 0
    assert last_load().cache == "off" and entries(cache) == []
    monkeypatch.setenv("LUDUS_CACHE", str(cache))  # main() set it to off for its child processes


def test_an_unwritable_cache_folder_just_means_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("LUDUS_CACHE", str(blocker / "cache"))
    folder = copy_ruleset("dice_race", tmp_path / "race")
    rs = load_ruleset(folder)
    assert rs.name == "dice_race"
    assert last_load().cache == "miss" and not last_load().written


def test_errors_are_the_same_with_and_without_the_cache_and_never_cached(cache, tmp_path):
    folder = copy_ruleset("dice_race", tmp_path / "race")
    load_ruleset(folder)  # a good version is cached first
    rules = folder / "rules.yaml"
    rules.write_text(rules.read_text(encoding="utf-8").replace("procedures:", "procedures:\n  broken:\n"
                                                                "    source: T 1\n    do: |\n      set nowhere = 1\n"
                                                                "      call missing()\n", 1), encoding="utf-8")
    with pytest.raises(LudusError) as cached:
        load_ruleset(folder)
    with pytest.raises(LudusError) as uncached:
        load_ruleset(folder, cache=False)
    assert cached.value.render() == uncached.value.render()
    assert "missing" in cached.value.render()
    before = [e.read_bytes() for e in entries(cache)]
    with pytest.raises(LudusError):
        load_ruleset(folder)
    assert [e.read_bytes() for e in entries(cache)] == before  # the broken version was never written


def test_a_warm_load_builds_the_same_ruleset(cache):
    cold = load_ruleset("time_of_crisis", cache=False)
    load_ruleset("time_of_crisis")  # writes the cache
    warm = load_ruleset("time_of_crisis")
    assert last_load().cache == "hit"
    assert warm.digest == cold.digest and warm.data == cold.data
    def points(rs):  # each procedure's resume points, as file places
        return {n: {k: w[0].locate(w[1], w[2]) for k, w in p.points.items()} for n, p in rs.procedures.items()}
    assert points(warm) == points(cold)
    assert warm.smap.values == cold.smap.values and warm.smap.keys == cold.smap.keys
    assert warm.smap.texts == cold.smap.texts
    assert set(warm.sites) == set(cold.sites)
    for seed in (3, 8):
        assert play(warm, seed) == play(cold, seed)


# ====================================================================== the hand-written references
@pytest.fixture(scope="module")
def toc():
    return load_ruleset("time_of_crisis")


@pytest.fixture(scope="module")
def ref():
    mods = references()
    assert "time_of_crisis" in mods, "benchmarks/handwritten_toc.py should be found in the source checkout"
    return mods["time_of_crisis"]


def test_the_benchmarked_positions_agree(toc, ref):
    for case in ref.cases(toc):
        assert case.positions >= 8
        for i in range(case.positions):
            a = case.interpreted(case.prepare(i, "interpreted"))
            b = case.handwritten(case.prepare(i, "handwritten"))
            assert case.same(a, b), f"{case.name}, position {i}"


def enrich(ref, state: dict, player: str) -> dict:
    """Give ``player`` influence, an unused card of every event and a mob, so event actions are legal."""
    st = ref.copy_state(state)
    E, Z = st["entities"], st["zones"]
    for k in ("military", "senate", "populace"):
        E[player][k] = max(E[player][k], 4)
    seen = set()
    for c in list(Z["supply"]) + [c for z, items in Z.items() if z.startswith("discard@") for c in items]:
        ev = E[c]["event"]
        if ev and ev not in seen:
            seen.add(ev)
            ref.place(st, c, "played@" + player)
            E[c]["event_used"] = False
    mine = [r for r in E if E[r]["kind"] == "region" and E[r]["type"] == "province" and E[r]["governor"]
            and E[E[r]["governor"]]["owner"] == player]
    for r in mine[:1]:
        E[r]["mobs"] = 1
    for r in mine[1:2]:
        E[r]["support"] = 3
    return st


def test_the_references_agree_on_random_positions(toc, ref):
    """Every legal-action list, every battle offered and a sample of Place Governor attempts."""
    rand = random.Random(5)
    actions: set[str] = set()
    battles = governors = 0
    for seed, players in ((11, 4), (12, 3), (13, 2), (14, 4)):
        for k, game in enumerate(ref.action_pauses(toc, seed, 700, players)):
            p = game.pending["player"]
            states = [game.state] + ([enrich(ref, game.state, p)] if k % 7 == 0 else [])
            for st in states:
                options = Game(toc, st).action_options(p, ref.GROUP)
                assert options == ref.Board(st).turn_actions(p), f"seed {seed}, pause {k}"
                actions.update(o["value"]["action"] for o in options)
                for o in options:
                    args = o["value"]["args"]
                    if o["value"]["action"] == "initiate_battle":
                        g = ref.run_to_end(ref.isolated(toc, st, "battle", {"att": args["gen"],
                                                                            "target": args["target"]}))
                        board = ref.Board(ref.copy_state(st))
                        try:
                            board.battle(args["gen"], args["target"])
                        except ref.Unsupported:
                            continue
                        assert ref.outcome(g.state, g.log) == ref.outcome(board.st, board.log), f"seed {seed}, {k}"
                        battles += 1
                    elif o["value"]["action"] == "place_governor" and rand.random() < 0.2:
                        spent = rand.randint(1, st["entities"][p]["senate"])
                        g = ref.isolated(toc, st, "action:place_governor", {"actor": p, "target": args["target"]})
                        g.log.clear()
                        g.apply(spent - 1)
                        board = ref.Board(ref.copy_state(st))
                        board.place_governor(p, args["target"], spent)
                        assert ref.outcome(g.state, g.log) == ref.outcome(board.st, board.log)
                        governors += 1
    assert battles >= 10 and governors >= 50
    # the enriched positions make every kind of action appear at least once
    assert actions >= {"play_card", "end_actions", "move_army", "place_governor", "initiate_battle", "castra",
                       "praetorian_guard", "tribute", "foederati", "quaestor", "mob_event", "hold_games",
                       "increase_support", "recall_governor", "build_improvement"}


def unusual_battles(ref, toc) -> list[tuple[str, dict, str, str]]:
    """Battles random games rarely reach: Foederati on both sides of the rulebook's 8.3 example,
    a Barbarian Leader among raiders in the attacker's own province, a Rival Emperor, and a
    fight in a homeland where only the active counters fight."""
    (example, att1, def1), (goths, att2, goth), (lone, att3, _) = ref.battle_setups(toc)
    out = []

    def recruit(st: dict, where: str, tribe: str) -> str:
        b = next(b for b in st["zones"]["barbarians@" + tribe + "_home"] if not st["entities"][b]["leader"])
        ref.place(st, b, where)
        st["entities"][b]["active"] = True
        return b

    def govern(st: dict, player: str, region: str, support: int) -> None:
        E, Z = st["entities"], st["zones"]
        old = E[region]["governor"]
        if old is not None:
            ref.place(st, old, "neutrals" if E[old]["owner"] is None else "leaders@" + E[old]["owner"])
        gov = next(g for g in list(Z["unclaimed@" + player]) + list(Z["leaders@" + player])
                   if E[g]["kind"] == "governor" and E[g]["zone"] != "offices")
        ref.place(st, gov, "offices")
        E[region].update(governor=gov, support=support)

    st = ref.copy_state(example)
    recruit(st, "units@" + att1, "goths")
    recruit(st, "units@" + def1, "franks")
    out.append(("foederati", st, att1, def1))
    st = ref.copy_state(goths)
    ref.place(st, "cniva", "barbarians@thracia")
    st["zones"]["barbarians@thracia"].insert(0, st["zones"]["barbarians@thracia"].pop())  # hit first
    govern(st, st["entities"][att2]["owner"], "thracia", 2)
    out.append(("barbarian leader", st, att2, goth))
    st = ref.copy_state(lone)
    govern(st, st["entities"][att3]["owner"], "macedonia", 2)
    ref.place(st, "postumus", "rivals")
    st["entities"]["postumus"]["location"] = "macedonia"
    out.append(("rival emperor", st, att3, "postumus"))
    st = ref.copy_state(goths)
    st["entities"][att2]["location"] = "goths_home"
    home = [b for b in st["zones"]["barbarians@goths_home"] if not st["entities"][b]["leader"]]
    for b in home[:6]:
        st["entities"][b]["active"] = b in home[1:6:2]
    out.append(("homeland", st, att2, home[1]))
    return out


def test_the_references_agree_on_unusual_battles(toc, ref):
    from interpreter import rng

    for name, state, att, target in unusual_battles(ref, toc):
        ran = 0
        for seed in range(12):
            st = ref.copy_state(state)
            st["rng"] = rng.seed_state(seed)
            g = ref.run_to_end(ref.isolated(toc, st, "battle", {"att": att, "target": target}))
            board = ref.Board(ref.copy_state(st))
            try:
                board.battle(att, target)
            except ref.Unsupported:
                continue
            assert ref.outcome(g.state, g.log) == ref.outcome(board.st, board.log), f"{name}, seed {seed}"
            ran += 1
        assert ran >= 6, name


# ====================================================================== the command
def test_bench_quick_reports_every_figure(capsys):
    assert main(["bench", "--quick", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"]["ruleset"] == "time_of_crisis" and report["settings"]["quick"]
    figures = {f["key"]: f for f in report["figures"]}
    for key in ("import", "load_cold", "load_warm", "load_cold_in_process", "load_warm_in_process",
                "games_per_s", "decisions_per_s", "greedy_decisions_per_s", "ratio_combat", "ratio_governor", "ratio_choices"):
        assert key in figures, key
        assert figures[key]["value"] > 0
    for key in ("load_cold", "load_warm", "games_per_s", "ratio_combat", "ratio_governor", "ratio_choices"):
        f = figures[key]
        assert f["target"] is not None and isinstance(f["ok"], bool) and f["factor"] > 0
    assert all("DIFFER" not in f["note"] for f in report["figures"])
    assert not any("warm loads hit the cache" in n for n in report["notes"])  # every warm load was a hit
    from rich.console import Console
    out = io.StringIO()
    render(report, Console(file=out, width=200))
    text = out.getvalue()
    assert "games/s" in text and "interpreted ÷ hand-written" in text and "load + check, warm" in text
    assert ("✓" in text) or ("✗" in text)


def test_bench_says_when_there_is_no_reference(toc, monkeypatch, tmp_path):
    import interpreter.bench as bench

    monkeypatch.setattr(bench, "BENCH_DIR", tmp_path / "nothing")
    report = Report({}, {})
    measure_ratios(toc, Settings.make(quick=True), report)
    assert report.figures == []
    assert "no hand-written reference" in report.notes[0]
