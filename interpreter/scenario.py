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

from .diagnostics import Diagnostic, Loc, LudusError, did_you_mean
from .dsl import ast as A
from .dsl import types as T
from .dsl.compiler import Compiler
from .dsl.parser import DslSyntaxError, parse_expr
from .loader import find_ruleset, load_ruleset
from .matchers import check_offered, nearest_label, parse_matchers
from .model import MAX_INT, MAX_LIST, MAX_STR, PLAYER_KIND, RuleFault, Ruleset
from .runtime import Game, IllegalChoice
from .schemas import schema, validate
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
    except (OSError, ValueError) as exc:  # a name the file system refuses (too long, a NUL byte)
        raise LudusError([Diagnostic(smap.loc(("ruleset",)), f"no ruleset '{str(data['ruleset'])[:60]}': "
                                     f"{getattr(exc, 'strerror', None) or exc}")]) from None
    return data, smap, load_ruleset(manifest.parent)


def run_scenario(path: str | Path) -> ScenarioRun:
    """Run a scenario file; raises :class:`LudusError` for bad files or illegal steps."""
    data, smap, rs = load_scenario(path)
    if "expect" in data:
        _check_expect(data["expect"], smap)
    game = scenario_game(data, smap, rs)
    # Assertions are checked before the steps, like every other rule text. Seats and the
    # entities made during set-up (e.g. each seat's leaders) may be named in them.
    names = setup_names(game)
    checks = [_compile_assert(rs, str(text), smap, ("assert", i), names)
              for i, text in enumerate(data.get("assert") or [])]
    steps = data.get("steps") or []
    offered = [(parse_matchers(step.get("offered"), smap, ("steps", i, "offered")),
                parse_matchers(step.get("not_offered"), smap, ("steps", i, "not_offered"))) for i, step in enumerate(steps)]
    final = (parse_matchers(data.get("offered"), smap, ("offered",)),
             parse_matchers(data.get("not_offered"), smap, ("not_offered",)))
    run = ScenarioRun(game)
    for i, step in enumerate(steps):
        where = f"{smap.loc(('steps', i))}: step {i + 1}"
        check_offered(game, offered[i][0], True, where, run.failures)
        check_offered(game, offered[i][1], False, where, run.failures)
        if "choose" in step:
            apply_step(game, i, step, smap)
        elif not step.get("offered") and not step.get("not_offered"):
            raise LudusError([Diagnostic(smap.loc(("steps", i)), f"step {i + 1} chooses nothing and checks nothing",
                                         "give choose:, offered: or not_offered:")])
    check_offered(game, final[0], True, f"{smap.loc(('offered',))}: at the end", run.failures)
    check_offered(game, final[1], False, f"{smap.loc(('not_offered',))}: at the end", run.failures)
    if "expect" in data:
        _match(data["expect"], game.state, "", run.failures, smap, ("expect",))
    for check in checks:
        check(game, run.failures)
    return run


def scenario_game(data: dict[str, Any], smap: SourceMap, rs: Ruleset, rng_seed: int | None = None) -> Game:
    """The scenario's position: the game set up, its ``state`` patched, its ``start`` begun.

    With ``rng_seed`` (``ludus odds``), the forced dice are left out and the random generator
    is seeded afresh once the position is set, so that only what happens from there varies.
    """
    players = int(data.get("players", rs.default_players or rs.min_players))
    problem = rs.player_count_problem(players)
    if problem:
        raise LudusError([Diagnostic(smap.loc(("players",)), problem)])

    started = False  # the position is ready: what fails from here on is the rules' running

    def prepare(game: Game) -> None:
        nonlocal started
        if "state" in data:
            _patch_state(game, data["state"], smap)
            _check_invariants(game, smap)
        if rng_seed is not None:
            game.state["rng"] = rng_seed
        if "start" in data:
            _start(game, data["start"], smap)
        started = True

    dice = data.get("dice", []) if rng_seed is None else []
    try:
        return Game.new(rs, players, data.get("seed", 0), after_setup=prepare, dice=dice)
    except LudusError as exc:
        if dice and "forced di" in exc.diagnostics[0].message:
            raise _at(exc, smap.loc(("dice",)), "") from None
        if started:
            # the rules failed on the scenario's position: say so at the scenario's start (or
            # its first line), the rule's place following, as for a step
            where = smap.loc(("start",)) if "start" in data else smap.loc(())
            what = f"'{data['start']['procedure']}'" if "start" in data else "the game"
            raise LudusError([Diagnostic(where, f"the rules failed running {what} on this position "
                                         f"(at {exc.diagnostics[0].loc})"), *exc.diagnostics]) from None
        raise


def setup_names(game: Game) -> dict[str, T.Type]:
    """The entities made during set-up (seats, each seat's leaders): names a scenario's rule
    texts may use."""
    return {e: T.ent(rec["kind"]) for e, rec in game.ents.items() if e not in game.rs.entities}


def apply_step(game: Game, i: int, step: dict[str, Any], smap: SourceMap, forced: bool = True) -> None:
    """Make step ``i``'s choice (with its forced dice unless ``forced`` is false); raises
    :class:`LudusError` located at the step, or :class:`IllegalChoice` when not ``forced``."""
    loc = smap.loc(("steps", i))
    if game.over:
        raise LudusError([Diagnostic(loc, f"step {i + 1}: the game is already over",
                                     "remove the steps after the end")])
    dice = step.get("dice") if forced else None
    try:
        game.apply(step["choose"], step.get("player"), dice)
    except IllegalChoice as exc:
        if not forced:
            raise
        # an authoring error (the step names a choice that is not there), not a failed expectation
        hint = ""
        if isinstance(step["choose"], str) and "is not one of" in exc.reason:
            hint = nearest_label(game, step["choose"], step.get("player")) or \
                "to check that a choice is not offered, write not_offered: instead"
        raise LudusError([Diagnostic(loc, f"step {i + 1}: illegal choice: {exc.reason}", hint)]) from None
    except LudusError as exc:
        if dice and "forced di" in exc.diagnostics[0].message:
            raise _at(exc, smap.loc(("steps", i, "dice")), f"step {i + 1}: ") from None
        raise LudusError([Diagnostic(loc, f"step {i + 1}: the rules failed on this choice "
                                     f"(at {exc.diagnostics[0].loc})"), *exc.diagnostics]) from None


def _at(exc: LudusError, loc: Loc, prefix: str) -> LudusError:
    """The first problem of ``exc`` told at ``loc`` (the forced dice that caused it)."""
    first = exc.diagnostics[0]
    return LudusError([Diagnostic(loc, prefix + first.message, first.hint or f"rolled at {first.loc}")])


def _check_expect(expect: dict[str, Any], smap: SourceMap) -> None:
    """An expectation naming a part the state does not have could never hold: an error, before the run."""
    keys = list(schema("state")["properties"])
    diags = [Diagnostic(smap.loc(("expect", k), key=True), f"expect: the state has no '{k}'",
                        did_you_mean(str(k), keys) or "the state's parts are " + ", ".join(keys))
             for k in expect if k not in keys]
    if diags:
        raise LudusError(diags)


def _patch_state(game: Game, patch: dict[str, Any], smap: SourceMap) -> None:
    diags: list[Diagnostic] = []
    rs = game.rs
    for name, value in (patch.get("globals") or {}).items():
        if name not in game.glob:
            diags.append(Diagnostic(smap.loc(("state", "globals", name), key=True), f"unknown global '{name}'"))
        elif _fits(game, rs.globals[name].type, value, smap, ("state", "globals", name), diags):
            game.glob[name] = value
    made: set[str] = set()
    for eid, fields in (patch.get("entities") or {}).items():
        path = ("state", "entities", eid)
        if eid not in game.ents:
            problem = _create(game, eid, fields)
            if problem:
                diags.append(Diagnostic(smap.loc(path, key=True), problem))
                continue
            made.add(eid)
        for fname, value in (fields or {}).items():
            if fname == "kind" and eid in made:
                continue
            if fname == "zone":
                problem = _unplaceable(game, eid, value, set()) if value is not None else "an entity's zone " \
                    "cannot be set to nothing here"
                if problem:
                    diags.append(Diagnostic(smap.loc(path + (fname,)), problem))
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
        placed: set[str] = set()
        for j, eid in enumerate(ids or []):
            problem = _unplaceable(game, eid, key, placed)
            if problem:
                diags.append(Diagnostic(smap.loc(path + (j,)), problem))
            else:
                placed.add(eid)
                game._place(eid, key, False)
    for j, spec in enumerate(patch.get("modifiers") or []):
        rec = _modifier(game, spec, smap, ("state", "modifiers", j), diags)
        if rec is not None:
            game.add_modifier(rec)
    if "players" in patch:
        order = patch["players"]
        if sorted(order) != sorted(game.players):
            diags.append(Diagnostic(smap.loc(("state", "players")), "players must list the same seats, reordered"))
        else:
            game.players[:] = order
    if diags:
        raise LudusError(diags)
    game._kind_index = None
    game.forget_all()  # the patch may have changed the fields rules never set


def _create(game: Game, eid: Any, fields: Any) -> str:
    """Make entity ``eid`` that the patch names with a ``kind``, as ``create`` would; a problem, or ''.

    A position with pieces the rules make as they go (armies raised, units bought) is written
    by naming them: ``s_1: {kind: soldier, rank: 2, zone: ranks@north_foot}``.
    """
    kind = fields.get("kind") if isinstance(fields, dict) else None
    if kind is None:
        return f"unknown entity '{eid}' (to make a new one, give its kind: {{kind: KIND, ...}})"
    if not isinstance(kind, str) or kind not in game.rs.kinds or kind == PLAYER_KIND:
        known = ", ".join(k for k in game.rs.kinds if k != PLAYER_KIND)
        return f"cannot make '{eid}': '{kind}' is not a kind of the ruleset (one of: {known})"
    try:
        game.create(kind, {}, None, None, called=str(eid))
    except RuleFault as exc:
        return exc.message
    return ""


def _modifier(game: Game, spec: dict[str, Any], smap: SourceMap, path: tuple,
              diags: list[Diagnostic]) -> dict[str, Any] | None:
    """A modifier record already in force, as a ``modify`` statement without conditions makes it."""
    rs = game.rs
    name = str(spec["point"])
    if name not in rs.points:
        diags.append(Diagnostic(smap.loc(path + ("point",)), f"unknown modifier point '{name}'",
                                did_you_mean(name, rs.points)))
        return None
    if ("by" in spec) == ("to" in spec):
        diags.append(Diagnostic(smap.loc(path), "a modifier gives either 'by' (added) or 'to' (the value instead)"))
        return None
    mode = "add" if "by" in spec else "set"
    value = spec["by" if mode == "add" else "to"]
    want = T.INT if mode == "add" else rs.points[name].type
    if not _fits(game, want, value, smap, path + ("by" if mode == "add" else "to",), diags) or value is None:
        return None
    until = spec.get("until")
    if until is not None and until not in rs.signals:
        diags.append(Diagnostic(smap.loc(path + ("until",)), f"no rule signals '{until}', so this modifier would never end",
                                did_you_mean(str(until), rs.signals)))
        return None
    return {"point": name, "mode": mode, "value": value, "until": until, "once": bool(spec.get("once", False)),
            "site": "", "captured": {}, "source": str(smap.loc(path))}


def _check_invariants(game: Game, smap: SourceMap) -> None:
    """A patched position must keep what every position of the game keeps (the ruleset's invariants)."""
    diags = []
    for name, (check, message) in game.rs.invariants.items():
        try:
            ok = bool(check(game, {}))
        except RuleFault as fault:
            ok, message = False, f"{message} ({fault.message})"
        if not ok:
            diags.append(Diagnostic(smap.loc(("state",), key=True), f"the position breaks the invariant '{name}': "
                                    f"{message}", "fix the state patch so the position could occur in a game"))
    if diags:
        raise LudusError(diags)


def _unplaceable(game: Game, eid: Any, key: Any, placed: set[str]) -> str:
    """Why entity ``eid`` cannot be put in zone ``key`` by a patch ('' when it can)."""
    if not isinstance(eid, str) or eid not in game.ents:
        return f"unknown entity '{eid}'" if isinstance(eid, str) else f"unknown entity {_brief(eid)}"
    z = game._zone_def(key) if isinstance(key, str) else None
    if z is None:
        return f"unknown zone '{key}'" if isinstance(key, str) else f"unknown zone {_brief(key)}"
    kind = game.ents[eid]["kind"]
    if z.holds not in ("*", kind):
        return f"zone '{key}' holds {z.holds} entities, and '{eid}' is a {kind}"
    if eid in placed:
        return f"'{eid}' is listed twice"
    return ""


def _fits(game: Game, type_: T.Type, value: Any, smap: SourceMap, path: tuple, diags: list[Diagnostic]) -> bool:
    """Check a patched value against its declared type (entity references must exist) and the bounds.

    The bounds are those of the values rules compute (model.MAX_INT, MAX_LIST, MAX_STR): a patch
    must not hand the rules what they could not make.
    """
    ok = True
    if value is None:
        return True
    if not _fits_size(value, smap, path, diags):
        return False
    if type_ == T.ANY:
        return _plain_value(value, smap, path, diags)
    if type_ == T.INT:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif type_ == T.BOOL:
        ok = isinstance(value, bool)
    elif type_ == T.STR:
        ok = isinstance(value, str)
    elif T.is_list(type_):
        if not isinstance(value, list):
            ok = False
        else:
            return all(_fits(game, T.item(type_), v, smap, path + (i,), diags) for i, v in enumerate(value))
    elif T.is_ent(type_):
        kind = T.kind_of(type_)
        e = game.ents.get(value) if isinstance(value, str) else None
        ok = e is not None and (kind == "*" or e["kind"] == kind)
    elif T.is_zone(type_):
        ok = isinstance(value, str) and game._zone_def(value) is not None
    else:
        return _plain_value(value, smap, path, diags)
    if not ok:
        diags.append(Diagnostic(smap.loc(path), f"wrong type: {_brief(value)} is not {str(type_).replace('ent:', 'a ')}"))
    return ok


def _plain_value(value: Any, smap: SourceMap, path: tuple, diags: list[Diagnostic]) -> bool:
    """A value of no declared type: plain data (numbers, text, true/false, lists, mappings) within the bounds."""
    if value is None or isinstance(value, bool | str):
        return _fits_size(value, smap, path, diags)
    if isinstance(value, int):
        return _fits_size(value, smap, path, diags)
    if isinstance(value, list):
        return _fits_size(value, smap, path, diags) and \
            all(_plain_value(v, smap, path + (i,), diags) for i, v in enumerate(value))
    if isinstance(value, dict):
        return all(_plain_value(v, smap, path + (k,), diags) for k, v in value.items())
    diags.append(Diagnostic(smap.loc(path), f"{_brief(value)} is not a value the rules use",
                            "whole numbers, text, true/false, lists"))
    return False


def _fits_size(value: Any, smap: SourceMap, path: tuple, diags: list[Diagnostic]) -> bool:
    if isinstance(value, int) and not isinstance(value, bool) and not -MAX_INT <= value <= MAX_INT:
        diags.append(Diagnostic(smap.loc(path), f"number out of range (whole numbers stay within ±{MAX_INT:,})"))
        return False
    if (isinstance(value, list) and len(value) > MAX_LIST) or (isinstance(value, str) and len(value) > MAX_STR):
        diags.append(Diagnostic(smap.loc(path), f"too long: {len(value):,} (lists hold at most {MAX_LIST:,} "
                                f"items, texts {MAX_STR:,} characters)"))
        return False
    return True


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _start(game: Game, start: dict[str, Any], smap: SourceMap) -> None:
    name = start["procedure"]
    proc = game.rs.procedures.get(name)
    if proc is None:
        raise LudusError([Diagnostic(smap.loc(("start", "procedure")), f"unknown procedure '{name}'")])
    args = dict(start.get("args") or {})
    if set(args) != set(proc.params):
        raise LudusError([Diagnostic(smap.loc(("start",)), f"procedure '{name}' takes "
                                     f"({', '.join(proc.params)}), the scenario gives ({', '.join(map(str, args))})")])
    diags: list[Diagnostic] = []
    for param, type_ in proc.params.items():
        _fits(game, type_, args[param], smap, ("start", "args", param), diags)
    if diags:
        raise LudusError(diags)
    game.state["stack"][0] = game._frame(name, args, None)


def _match(expected: Any, actual: Any, path: str, failures: list[str], smap: SourceMap, where: tuple) -> None:
    """Compare a partial state; each difference is told at the expectation's place in the file."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k, v in expected.items():
            sub = f"{path}.{k}" if path else str(k)
            if k not in actual:
                failures.append(f"{smap.loc(where + (k,), key=True)}: {sub}: expected {_show(v)}, but it is missing")
            else:
                _match(v, actual[k], sub, failures, smap, where + (k,))
        return
    if expected != actual:
        failures.append(f"{smap.loc(where)}: {path}: expected {_show(expected)}, got {_show(actual)}")


def _show(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."


def _compile_assert(rs: Ruleset, text: str, smap: SourceMap, path: tuple, names: dict[str, T.Type]) -> Any:
    """Compile one assertion; ``names`` (seats, entities made in set-up) may be used as names."""
    diags: list[Diagnostic] = []
    compiler = Compiler(rs, diags)
    origin = smap.text(path)
    scope = dict(names)
    fn, _ = compiler.expression(text, origin, scope, T.BOOL, "an assertion")
    if fn is None:
        raise LudusError(diags)
    sides: list[Any] = []
    try:
        node = parse_expr(text)
    except DslSyntaxError:
        node = None
    if isinstance(node, A.BinOp) and node.op in ("==", "!=", "<", "<=", ">", ">="):
        sides = [compiler.part(side, dict(scope)) for side in (node.left, node.right)]
    where = Loc(origin.loc.file, origin.loc.line, origin.loc.col)

    def check(game: Game, failures: list[str]) -> None:
        L = {n: n for n in names}
        try:
            if fn(game, L):
                return
            detail = ""
            if sides:
                left, right = (game.label_of(f(game, L) if f is not None else None) for f in sides)
                detail = f" (left side is {left}, right side is {right})"
        except RuleFault as fault:
            failures.append(f"{where}: assertion failed: {text} ({fault.message})")
            return
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError) as exc:
            failures.append(f"{where}: assertion failed: {text} (rule failed: {type(exc).__name__})")
            return
        failures.append(f"{where}: assertion failed: {text}{detail}")
    return check
