"""Scenarios: a position, a list of choices (with forced dice), and what must hold afterwards.

Rulebook examples become scenario files: ``state`` patches the position right
after setup, ``start`` may run one procedure instead of ``main``, ``steps``
answer the pending choices, and ``expect``/``assert`` check the outcome with a
readable difference when they fail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, Loc, LudusError
from .dsl import ast as A
from .dsl.compiler import Compiler
from .dsl.parser import DslSyntaxError, parse_expr
from .loader import find_ruleset, load_ruleset
from .model import Ruleset
from .runtime import Game, IllegalChoice
from .schemas import validate
from .yamlsource import SourceMap, load_yaml


@dataclass
class ScenarioRun:
    """The outcome of a scenario: the game and every failed expectation."""

    game: Game
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def load_scenario(path: str | Path) -> tuple[dict[str, Any], SourceMap, Ruleset]:
    """Read and validate a scenario file and load its ruleset."""
    p = Path(path)
    data, smap = load_yaml(p, missing_hint="check the scenario file's path")
    diags: list[Diagnostic] = []
    validate("scenario", data, smap, diags)
    if diags:
        raise LudusError(diags)
    try:
        manifest = find_ruleset(str(data["ruleset"]), p.parent)
    except LudusError as exc:
        raise LudusError([Diagnostic(smap.loc(("ruleset",)), exc.diagnostics[0].message,
                                     exc.diagnostics[0].hint)]) from None
    return data, smap, load_ruleset(manifest.parent)


def run_scenario(path: str | Path) -> ScenarioRun:
    """Run a scenario file; raises :class:`LudusError` for bad files or illegal steps."""
    data, smap, rs = load_scenario(path)
    players = int(data.get("players", rs.min_players))
    problem = rs.player_count_problem(players)
    if problem:
        raise LudusError([Diagnostic(smap.loc(("players",)), problem)])

    def prepare(game: Game) -> None:
        if "state" in data:
            _patch_state(game, data["state"], smap)
        if "start" in data:
            _start(game, data["start"], smap)

    try:
        game = Game.new(rs, players, data.get("seed", 0), after_setup=prepare, dice=data.get("dice", []))
    except LudusError as exc:
        if data.get("dice") and "forced dice" in exc.diagnostics[0].message:
            raise LudusError([Diagnostic(smap.loc(("dice",)), exc.diagnostics[0].message,
                                         exc.diagnostics[0].hint)]) from None
        raise
    # Assertions are checked before the steps, like every other rule text. Seats and the
    # entities made during set-up (e.g. each seat's leaders) may be named in them.
    names = {e: f"ent:{rec['kind']}" for e, rec in game.ents.items() if e not in rs.entities}
    checks = [_compile_assert(rs, str(text), smap, ("assert", i), names)
              for i, text in enumerate(data.get("assert") or [])]
    for i, step in enumerate(data.get("steps") or []):
        loc = smap.loc(("steps", i))
        if game.over:
            raise LudusError([Diagnostic(loc, f"step {i + 1}: the game is already over",
                                         "remove the steps after the end")])
        try:
            game.apply(step["choose"], step.get("player"), step.get("dice"))
        except IllegalChoice as exc:
            raise LudusError([Diagnostic(loc, f"step {i + 1}: illegal choice: {exc.reason}")]) from None
    run = ScenarioRun(game)
    if "expect" in data:
        _match(data["expect"], game.state, "", run.failures)
    for check in checks:
        check(game, run.failures)
    return run


def _patch_state(game: Game, patch: dict[str, Any], smap: SourceMap) -> None:
    diags: list[Diagnostic] = []
    rs = game.rs
    for name, value in (patch.get("globals") or {}).items():
        if name not in game.glob:
            diags.append(Diagnostic(smap.loc(("state", "globals", name), key=True), f"unknown global '{name}'"))
        elif _fits(game, rs.globals[name].type, value, smap, ("state", "globals", name), diags):
            game.glob[name] = value
    for eid, fields in (patch.get("entities") or {}).items():
        path = ("state", "entities", eid)
        if eid not in game.ents:
            diags.append(Diagnostic(smap.loc(path, key=True), f"unknown entity '{eid}'"))
            continue
        for fname, value in (fields or {}).items():
            if fname == "zone":
                if game._zone_def(str(value)) is None:
                    diags.append(Diagnostic(smap.loc(path + (fname,)), f"unknown zone '{value}'"))
                else:
                    game._place(eid, str(value), False)
            elif fname not in game.ents[eid] or fname == "kind":
                diags.append(Diagnostic(smap.loc(path + (fname,), key=True), f"{eid} has no field '{fname}'"))
            elif _fits(game, rs.kinds[game.ents[eid]["kind"]].fields[fname].type, value, smap, path + (fname,), diags):
                game.ents[eid][fname] = value
    for key, ids in (patch.get("zones") or {}).items():
        path = ("state", "zones", key)
        if game._zone_def(key) is None:
            diags.append(Diagnostic(smap.loc(path, key=True), f"unknown zone '{key}'"))
            continue
        for eid in list(game.zones.get(key, [])):
            game.zones[key].remove(eid)
            game.ents[eid]["zone"] = None
        for j, eid in enumerate(ids or []):
            if eid not in game.ents:
                diags.append(Diagnostic(smap.loc(path + (j,)), f"unknown entity '{eid}'"))
            else:
                game._place(eid, key, False)
    if "players" in patch:
        order = patch["players"]
        if sorted(order) != sorted(game.players):
            diags.append(Diagnostic(smap.loc(("state", "players")), "players must list the same seats, reordered"))
        else:
            game.players[:] = order
    if diags:
        raise LudusError(diags)
    game._kind_index = None


def _fits(game: Game, type_: str, value: Any, smap: SourceMap, path: tuple, diags: list[Diagnostic]) -> bool:
    """Check a patched value against its declared type (entity references must exist)."""
    ok = True
    if value is None or type_ == "any":
        return True
    if type_ == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif type_ == "bool":
        ok = isinstance(value, bool)
    elif type_ == "str":
        ok = isinstance(value, str)
    elif type_.startswith("list:"):
        if not isinstance(value, list):
            ok = False
        else:
            return all(_fits(game, type_[5:], v, smap, path + (i,), diags) for i, v in enumerate(value))
    elif type_.startswith("ent:"):
        kind = type_[4:]
        e = game.ents.get(value) if isinstance(value, str) else None
        ok = e is not None and (kind == "*" or e["kind"] == kind)
    if not ok:
        diags.append(Diagnostic(smap.loc(path), f"wrong type: {value!r} is not {type_.replace('ent:', 'a ')}"))
    return ok


def _start(game: Game, start: dict[str, Any], smap: SourceMap) -> None:
    name = start["procedure"]
    proc = game.rs.procedures.get(name)
    if proc is None:
        raise LudusError([Diagnostic(smap.loc(("start", "procedure")), f"unknown procedure '{name}'")])
    args = dict(start.get("args") or {})
    if set(args) != set(proc.params):
        raise LudusError([Diagnostic(smap.loc(("start",)), f"procedure '{name}' takes "
                                     f"({', '.join(proc.params)}), the scenario gives ({', '.join(args)})")])
    game.state["stack"][0] = game._frame(name, args, None)


def _match(expected: Any, actual: Any, path: str, failures: list[str]) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k, v in expected.items():
            sub = f"{path}.{k}" if path else str(k)
            if k not in actual:
                failures.append(f"{sub}: expected {_show(v)}, but it is missing")
            else:
                _match(v, actual[k], sub, failures)
        return
    if expected != actual:
        failures.append(f"{path}: expected {_show(expected)}, got {_show(actual)}")


def _show(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def _compile_assert(rs: Ruleset, text: str, smap: SourceMap, path: tuple, names: dict[str, str]) -> Any:
    """Compile one assertion; ``names`` (seats, entities made in set-up) may be used as names."""
    diags: list[Diagnostic] = []
    compiler = Compiler(rs, diags)
    origin = smap.text(path)
    scope = dict(names)
    fn, _ = compiler.expression(text, origin, scope, "bool", "an assertion")
    if fn is None:
        raise LudusError(diags)
    sides: list[Any] = []
    try:
        node = parse_expr(text)
    except DslSyntaxError:
        node = None
    if isinstance(node, A.BinOp) and node.op in ("==", "!=", "<", "<=", ">", ">="):
        sides = [compiler.expr(side, dict(scope))[0] for side in (node.left, node.right)]
    where = Loc(origin.loc.file, origin.loc.line, origin.loc.col)

    def check(game: Game, failures: list[str]) -> None:
        L = {n: n for n in names}
        if fn(game, L):
            return
        detail = ""
        if sides:
            left, right = (game.label_of(f(game, L)) for f in sides)
            detail = f" (left side is {left}, right side is {right})"
        failures.append(f"{where}: assertion failed: {text}{detail}")
    return check
