"""`ludus schema` and `ludus new`: the JSON Schemas for editors, and a new ruleset to start from.

A modder's folder is not the source tree, so a modeline pointing at ``../../schemas`` finds
nothing there: `ludus new` writes the schemas into the new folder (:data:`SCHEMA_FOLDER`) and
points every file's modeline at that copy, which keeps working wherever the folder is moved.
The scaffold is a complete, tiny game (or an overlay of one patch): `ludus validate` accepts it
and its scenario runs at once, so the author changes something that works.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .bundled import SCHEMA_DIR
from .diagnostics import Diagnostic, Loc, LudusError, did_you_mean

SCHEMA_SUFFIX = ".schema.json"
SCHEMA_FOLDER = ".schemas"  # inside a new ruleset's folder
MODELINE = "# yaml-language-server: $schema="


def schema_names() -> list[str]:
    """The names of the shipped schemas (``rules``, ``manifest``, ``scenario``, ...)."""
    return sorted(p.name[:-len(SCHEMA_SUFFIX)] for p in SCHEMA_DIR.glob("*" + SCHEMA_SUFFIX))


def schema_text(name: str) -> str:
    """The JSON text of the schema called ``name``; a located error naming the others if unknown."""
    names = schema_names()
    if name not in names:
        raise LudusError([Diagnostic(Loc("ludus schema"), f"no schema '{name[:60]}'",
                                     did_you_mean(name[:100], names) or "one of: " + ", ".join(names))])
    return (SCHEMA_DIR / (name + SCHEMA_SUFFIX)).read_text(encoding="utf-8")


def write_schemas(folder: Path, names: list[str] | None = None) -> list[Path]:
    """Write the schemas (all, or those named) into ``folder``, made if missing; the files written."""
    chosen = schema_names() if names is None else names
    texts = {n: schema_text(n) for n in chosen}  # every name checked before anything is written
    try:
        folder.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for name, text in texts.items():
            path = folder / (name + SCHEMA_SUFFIX)
            path.write_text(text, encoding="utf-8")
            written.append(path)
    except OSError as exc:
        raise LudusError([Diagnostic(Loc(str(folder)), f"cannot write the schemas: {exc.strerror or exc}",
                                     "give a folder you may write to")]) from None
    return written


# ====================================================================== ludus new
def _modeline(schema: str, depth: int = 0) -> str:
    return f"{MODELINE}{'../' * depth}{SCHEMA_FOLDER}/{schema}{SCHEMA_SUFFIX}\n"


_GAME_MANIFEST = """\
ruleset: {name}
version: "0.1.0"
title: {title}
description: A new ruleset made by 'ludus new'; replace this game with yours.
players: {{min: 2, max: 4, default: 2}}
sources:
  MY: README.md, the rules this ruleset encodes (cite sections as 'MY 1', 'MY 2.3')
files:
  - rules.yaml
"""

_GAME_RULES = """\
kinds:
  player:
    source: MY 1
    fields:
      points: int

globals:
  round: {source: MY 2, type: int, initial: 0}
  goal: {source: MY 3, type: int, initial: 3}

functions:
  leader_points:
    source: MY 3
    returns: int
    expr: max(p.points for p in players)

procedures:
  main:
    source: MY 2
    do: |
      repeat
        increase round by 1
        log "Round {round}"
        for each p in players do
          choose action from turn by p
        end
      until leader_points() >= goal
      game over "a player reached {goal} points"

actions:
  score:
    source: MY 2
    group: turn
    label: Score a point
    do: |
      increase actor.points by 1
      log "{actor} scores and has {actor.points}"

  pass:
    source: MY 2
    group: turn
    label: Pass
    do: |
      log "{actor} passes"

scoring:
  source: MY 3
  score: p.points
  rounds: round
"""

_OVERLAY_MANIFEST = """\
ruleset: {name}
version: "0.1.0"
title: {title}
description: An overlay on {base} made by 'ludus new'; its patches change the base game.
extends: {base}
files:
  - rules.yaml
"""

_OVERLAY_RULES = """\
# Patches change the base ruleset by stable ids (see the overlays guide of Ludus).
# Replace this example with yours: 'ludus docs' on the folder shows each change before -> after.
patches:
  - op: set
    path: {path}
    value: {value}
    source: reconstructed
    note: An example patch made by 'ludus new'; it keeps the base's own value.
"""

_SCENARIO = """\
ruleset: ..
title: "{title}"
source: {source}
players: {players}
seed: 1
steps:
{steps}"""

_README = """\
# {title}

A ruleset for [Ludus](https://pypi.org/project/ludus/), made by `ludus new`{extends}.

```
{name}/
  ruleset.yaml            the manifest: name, players, the files below
  rules.yaml              {rules_what}
  scenarios/first.yaml    a scenario: a position, choices, what must hold after
  .schemas/               the JSON Schemas every file's first line points at (editor checks)
```

```sh
ludus validate {name}                      # every check, errors as file:line:col
ludus scenario {name}/scenarios/first.yaml # run the scenario
ludus play {name}                          # a complete game with bots in every seat
ludus docs {name}                          # a reference generated from the data
```

Editors: the first line of every YAML file lets yaml-language-server check and complete the
keys; `ludus lsp` (install `ludus[lsp]`) also checks the rules language as you type.
"""


def new_ruleset(folder: Path, extends: str | None = None) -> list[Path]:
    """Scaffold a ruleset (an overlay on ``extends`` when given) in ``folder``; the files written.

    Refuses a folder that exists and is not empty: nothing of an author's is overwritten.
    """
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        what = "a folder that is not empty" if folder.is_dir() else "a file"
        raise LudusError([Diagnostic(Loc(str(folder)), f"cannot make a ruleset here: it is {what}",
                                     "give the path of a new or empty folder; nothing was written")])
    name = _snake(folder.resolve().name)
    title = name.replace("_", " ").capitalize()
    files: dict[str, str] = {}
    if extends is None:
        files["ruleset.yaml"] = _modeline("manifest") + _GAME_MANIFEST.format(name=name, title=title)
        files["rules.yaml"] = _modeline("rules") + _GAME_RULES
        steps = "  - {player: p1, choose: Score a point}\n  - {player: p2, choose: Pass}\n"
        expect = "expect:\n  entities:\n    p1: {points: 1}\n    p2: {points: 0}\n"
        files["scenarios/first.yaml"] = (_modeline("scenario", 1) + _SCENARIO.format(
            title="Round 1: the first player scores, the second passes", source="MY 2", players=2,
            steps=steps) + expect)
        rules_what = "kinds, globals, functions, procedures, actions, scoring"
    else:
        base = _base(extends)
        patch_path, value = _example_patch(base)
        files["ruleset.yaml"] = _modeline("manifest") + _OVERLAY_MANIFEST.format(
            name=name, title=f"{title} (an overlay on {base.name})", base=_extends_spec(extends, folder))
        files["rules.yaml"] = _modeline("rules") + _OVERLAY_RULES.format(path=patch_path, value=value)
        files["scenarios/first.yaml"] = _modeline("scenario", 1) + _SCENARIO.format(
            title="The game starts", source="reconstructed\nnote: The overlay's starting position, before any choice.",
            players=base.min_players, steps="  []\n")
        rules_what = "the patches this overlay makes to its base"
    files["README.md"] = _README.format(title=title, name=folder.name, rules_what=rules_what,
                                        extends=f", as an overlay on `{extends}`" if extends else "")
    written: list[Path] = []
    try:
        for rel, text in files.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(path)
    except OSError as exc:
        raise LudusError([Diagnostic(Loc(str(folder)), f"cannot write the ruleset: {exc.strerror or exc}",
                                     "give a folder you may write to")]) from None
    written += write_schemas(folder / SCHEMA_FOLDER)
    return written


def _extends_spec(spec: str, folder: Path) -> str:
    """What the new manifest's ``extends`` says: a bundled name as given; a folder, relative to the
    new folder (the loader reads it so, never relative to where Ludus runs)."""
    from .finder import find_ruleset
    manifest = find_ruleset(spec)
    if "/" not in spec and os.sep not in spec and not Path(spec).exists():
        return spec
    return os.path.relpath(manifest.parent, folder.resolve())


def _snake(text: str) -> str:
    """A ruleset name from a folder name: snake_case, starting with a letter."""
    out = "".join(c if c.isascii() and c.isalnum() else "_" for c in text.lower()).strip("_")
    while "__" in out:
        out = out.replace("__", "_")
    return out if out[:1].isalpha() else "my_" + out if out else "my_ruleset"


def _base(spec: str) -> _Base:
    """The ruleset an overlay extends: it must load, or the overlay would not validate either."""
    from .loader import load_ruleset
    rs = load_ruleset(spec)
    return _Base(rs.name, rs.min_players, rs.data)


class _Base:
    def __init__(self, name: str, min_players: int, data: dict) -> None:
        self.name, self.min_players, self.data = name, min_players, data


def _example_patch(base: _Base) -> tuple[str, str]:
    """A patch that applies to any base: set a global's initial value to what it already is.

    Without globals, set the source of the first entry of any section to its own source.
    """
    for gid, entry in (base.data.get("globals") or {}).items():
        if isinstance(entry, dict) and "initial" in entry:
            return f"globals/{gid}/initial", json.dumps(entry["initial"])
    for section in ("procedures", "functions", "kinds", "zones", "tables", "actions"):
        for eid, entry in (base.data.get(section) or {}).items():
            if isinstance(entry, dict) and isinstance(entry.get("source"), str):
                return f"{section}/{eid}/source", json.dumps(entry["source"])
    raise LudusError([Diagnostic(Loc(base.name), f"'{base.name}' has no entry an example patch could change",
                                 "extend a ruleset with globals or procedures")])
