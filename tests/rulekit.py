"""Build small throwaway rulesets for engine tests."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from interpreter import Game, load_ruleset
from interpreter.model import Ruleset

BASE_COMPONENTS = """
kinds:
  player:
    source: T 1
    fields:
      score: int
  card:
    source: T 1
    label: name
    fields:
      name: str
      value: int
  token:
    source: T 1
    fields:
      value: int
      owner: player
zones:
  deck:
    source: T 1
    holds: card
    visibility: hidden
  pile:
    source: T 1
    visibility: public
  hand:
    source: T 1
    per: player
    holds: card
    visibility: owner
entities:
  ace:
    source: T 1
    kind: card
    name: Ace
    value: 1
    zone: deck
  two:
    source: T 1
    kind: card
    name: Two
    value: 2
    zone: deck
  three:
    source: T 1
    kind: card
    name: Three
    value: 3
    zone: deck
"""


def make_ruleset(root: Path, files: dict[str, str], *, name: str = "kit", players: str = "{min: 1, max: 4}",
                 extra_manifest: str = "", components: bool = True) -> Path:
    """Write a ruleset folder under ``root``; returns the folder."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    all_files = ({"components.yaml": BASE_COMPONENTS} if components else {}) | files
    for fname, text in all_files.items():
        (folder / fname).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    listed = "\n".join(f"  - {f}" for f in all_files)
    (folder / "ruleset.yaml").write_text(
        f"ruleset: {name}\nversion: '1'\ntitle: Test kit\nplayers: {players}\n"
        f"seats: [red, blue, green, yellow]\n{extra_manifest}files:\n{listed}\n", encoding="utf-8")
    return folder


def program(root: Path, code: str, *, globals_: dict[str, tuple[str, Any]] | None = None, extra: str = "",
            procs: str = "", players: int = 2, seed: int = 1, dice: list[int] | None = None) -> Game:
    """Run ``code`` as the body of 'main' in the kit ruleset and return the game."""
    glob = {"out": ("any", None)} | (globals_ or {})
    lines = ["globals:"]
    for gname, (gtype, initial) in glob.items():
        lines += [f"  {gname}:", "    source: T 2", f"    type: {gtype}"]
        if initial is not None:
            lines.append(f"    initial: {initial!r}" if not isinstance(initial, bool) else f"    initial: {str(initial).lower()}")
    body = textwrap.indent(textwrap.dedent(code).strip("\n"), "      ")
    rules = ("\n".join(lines) + "\nprocedures:\n  main:\n    source: T 2\n    do: |\n" + body + "\n"
             + textwrap.indent(textwrap.dedent(procs).strip("\n"), "  ") + "\n" + textwrap.dedent(extra))
    folder = make_ruleset(root, {"rules.yaml": rules})
    rs = load_ruleset(folder)
    return Game.new(rs, players, seed, dice=dice or [])


def load(root: Path, files: dict[str, str], **kw: Any) -> Ruleset:
    return load_ruleset(make_ruleset(root, files, **kw))


def play_random(rs: Ruleset, players: int, seed: int, limit: int = 4000) -> Game:
    """A game of random bots (seeded by ``seed``), played to its end or ``limit`` decisions."""
    from interpreter.bots import seat_bots

    game = Game.new(rs, players, seed)
    bots = seat_bots(game, {p: "random" for p in game.players}, seed)  # an umpire seat plays the umpire bot
    for _ in range(limit):
        if game.over:
            break
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    return game


def memo_functions(rs: Ruleset) -> dict[int, tuple[Any, int]]:
    """The generated function of each memo slot, and how many arguments it takes."""
    out = {}
    for name, fn in list(rs.codegen.env.items()):  # writing a source may add its constants
        src = rs.codegen.source_of(fn) if re.fullmatch(r"F\d+", name) else None
        slot = re.search(r"g\.memos\[(\d+)\]", src or "")
        if src and slot:
            head = re.match(r"def \w+\(g((?:, \w+)*)\)", src)
            assert head is not None
            out[int(slot.group(1))] = (fn, head.group(1).count(","))
    return out


def memos_true(game: Game, functions: dict[int, tuple[Any, int]]) -> int:
    """Every result ``game`` remembers is what its function gives on a copy remembering nothing,
    and every index of a zone it could read is the zone's items now (dsl/zoneindex.py)."""
    checked = 0
    for i in sorted(game.rs.memo_volatile + game.rs.memo_constant):
        if i in game.rs.index_slots.values():
            checked += indexes_true(game)
            continue
        fn, n = functions[i]
        for key, value in list(game.memos[i].items()):
            args = () if n == 0 else (key,) if n == 1 else key
            args = tuple(a[0] if a.__class__ is tuple else a for a in args)  # a boolean goes in a 1-tuple
            fresh = game.copy()
            fresh.forget_all()  # a copy shares the constant results: this one has none
            assert fn(fresh, *args) == value, (i, key)
            checked += 1
    return checked


def indexes_true(game: Game) -> int:
    """Every index of a zone by a field made from a zone's list ``game`` holds groups the zone's
    items by that field now (those made from others' lists, which it never reads, are skipped)."""
    checked = 0
    held = {id(items): items for items in game.zones.values()}
    slots = set(game.rs.index_slots.values())
    for (field, key), (items, index) in (game.memos[slots.pop()] if slots else {}).items():
        assert key == id(items)
        if held.get(key) is not items or not isinstance(index, dict):
            continue
        now: dict[Any, list[str]] = {}
        for x in items:
            now.setdefault(game.ents[x][field], []).append(x)
        assert index == now, field
        checked += 1
    return checked
