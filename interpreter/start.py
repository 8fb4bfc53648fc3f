"""Starting positions: games begun from a scenario, a saved state or a log (``--from FILE``).

``ludus play|simulate|compare RULESET --from FILE`` starts where FILE leaves the game:

- a scenario (``.yaml``): its position and its steps (with their forced dice);
- a saved state (``.json``, as ``Game.to_json`` writes it, or ``ludus replay --json``);
- a log (``.jsonl``): the game it records, replayed to its end.

Each game then goes on from that position; with a seed (every game of ``simulate``), the
dice from there on are drawn afresh from that seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import rng
from .diagnostics import Diagnostic, Loc, LudusError
from .gamelog import replay
from .model import Ruleset, copy_plain
from .runtime import Game

MAX_STATE_BYTES = 32_000_000


def from_kind(path: str) -> str:
    """'scenario', 'state' or 'log', by the file's name (or, failing that, its first line)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "scenario"
    if suffix == ".jsonl":
        return "log"
    if suffix == ".json":
        return "state"
    try:
        with open(path, "rb") as fh:
            first = fh.readline(4096)
    except OSError as exc:
        raise LudusError([Diagnostic(Loc(path), f"cannot read --from file: {exc.strerror or exc}")]) from None
    if first.lstrip().startswith(b"{"):
        return "log" if b'"header"' in first else "state"
    return "scenario"


def position(rs: Ruleset, path: str) -> dict[str, Any]:
    """The state a ``--from`` FILE leaves the game in (a copy the caller may keep)."""
    kind = from_kind(path)
    if kind == "log":
        game = replay(path, str(Path(rs.folder)), partial=True)
        _same_ruleset(rs, game.rs, Loc(path, 1, 1), "log")
        return copy_plain(game.state)
    if kind == "state":
        return _saved_state(rs, path)
    return _scenario_position(rs, path)


def _same_ruleset(rs: Ruleset, other: Ruleset, loc: Loc, what: str) -> None:
    if other.digest != rs.digest:
        raise LudusError([Diagnostic(loc, f"this {what} is a game of '{other.name}'"
                                     f"{' with set-up ' + other.setup if other.setup else ''}, not of '{rs.name}'"
                                     f"{' with set-up ' + rs.setup if rs.setup else ''}",
                                     "give the ruleset (and --setup) the file was made with")])


def _saved_state(rs: Ruleset, path: str) -> dict[str, Any]:
    p = Path(path)
    try:
        if p.stat().st_size > MAX_STATE_BYTES:
            raise LudusError([Diagnostic(Loc(path), f"a saved state of more than {MAX_STATE_BYTES // 1_000_000} MB",
                                         "a saved game is far smaller")])
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LudusError([Diagnostic(Loc(path), "file not found", "check the --from path")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LudusError([Diagnostic(Loc(path), f"cannot read the saved state: {exc}")]) from None
    try:
        state = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LudusError([Diagnostic(Loc(path, exc.lineno, exc.colno), f"not valid JSON: {exc.msg}",
                                     "a saved state is one JSON object (ludus replay LOG --json writes one)")]) from None
    except RecursionError:
        raise LudusError([Diagnostic(Loc(path, 1, 1), "nested too deeply to be a saved state")]) from None
    try:
        Game.resume(rs, state)
    except LudusError as exc:
        first = exc.diagnostics[0]
        raise LudusError([Diagnostic(Loc(path, 1, 1), first.message,
                                     "a saved state is what 'ludus replay LOG --json' prints")]) from None
    return dict(state)


def _scenario_position(rs: Ruleset, path: str) -> dict[str, Any]:
    from .scenario import apply_step, load_scenario, scenario_game

    data, smap, srs = load_scenario(path)
    _same_ruleset(rs, srs, smap.loc(("ruleset",)), "scenario")
    game = scenario_game(data, smap, rs)
    for i, step in enumerate(data.get("steps") or []):
        if "choose" in step:
            apply_step(game, i, step, smap)
    if game.over:
        raise LudusError([Diagnostic(smap.loc(("steps",)) if data.get("steps") else Loc(path),
                                     "the game is over at the end of this scenario: there is nothing to play on",
                                     "start from a scenario whose position waits for a decision")])
    return copy_plain(game.state)


def begin_at(rs: Ruleset, state: dict[str, Any], seed: int | str | None, source: str) -> Game:
    """A game at ``state`` (a copy is used); with ``seed``, the dice to come are drawn from it.

    Its log starts with a header and a ``state`` line holding the position, so that the log
    replays by itself.
    """
    state = copy_plain(state)
    if seed is not None:
        state["seed"] = seed
        state["rng"] = rng.seed_state(seed)
    game = Game.resume(rs, state, owned=True)  # its own copy (above)
    game.log = [{"type": "header", "ludus_log": 1, "ruleset": rs.name, "version": rs.version, "digest": rs.digest,
                 "players": list(state["players"]), "seed": state["seed"], "from": source[:1000]},
                {"type": "state", "state": copy_plain(state)}]
    if rs.setup is not None:
        game.log[0]["setup"] = rs.setup
    return game


def adopt(rs: Ruleset, state: dict[str, Any], source: str) -> dict[str, Any]:
    """``state`` (of another ruleset: a variant's base) as a position of ``rs``, if ``rs`` can go on from it."""
    state = copy_plain(state)
    state["ruleset"] = {"name": rs.name, "version": rs.version, "digest": rs.digest}
    try:
        Game.resume(rs, copy_plain(state))
    except LudusError as exc:
        raise LudusError([Diagnostic(Loc(source), f"the variant '{rs.name}' cannot go on from this position: "
                                     f"{exc.diagnostics[0].message}")]) from None
    return state
