"""Saved states: whether a JSON state is a game of a ruleset the engine could have saved.

A saved state may come from anyone, and the run loop trusts it, so :func:`state_problem`
checks it by hand before :meth:`interpreter.runtime.Game.resume` continues it.
"""

from __future__ import annotations

import json
from typing import Any

from .model import MAX_INT, UMPIRE, Ruleset

MAX_DIE = 1000  # a forced die's face (model.MAX_SIDES)


def brief(value: Any) -> str:
    """A short text for a value found in a file: its type for a container, else at most 40 characters."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


_STATE_KEYS = ("format", "ruleset", "seed", "players", "globals", "entities", "zones", "modifiers", "rng",
               "forced_dice", "next_id", "next_modifier", "stack", "pending", "result")
_PENDING_TYPES = ("choice", "action", "secret")


def state_problem(rs: Ruleset, state: Any) -> str:
    """Why ``state`` is not a game of ``rs`` the engine could have saved ('' when it may be resumed).

    A saved state may come from anyone, and the run loop trusts it (its frames name procedures
    and instruction numbers, its zones and entities point at each other), so Game.resume asks
    this first. The checks are by hand and cost well under a millisecond for the largest
    bundled game (the schema's general check costs several): the parts, their types, and that
    frames, entities, zones and seats refer to what exists. Values the rules read are checked
    by the rules as they run.
    """
    if type(state) is not dict:
        return "a saved state is a JSON object"
    missing = [k for k in _STATE_KEYS if k not in state]
    if missing or len(state) != len(_STATE_KEYS):
        extra = sorted(str(k) for k in state if k not in _STATE_KEYS)
        return f"missing {', '.join(missing)}" if missing else f"unknown part {', '.join(extra)}"
    saved = state["ruleset"]
    if type(saved) is not dict:
        return "ruleset: a mapping of name, version and digest"
    if saved.get("name") != rs.name or saved.get("digest") != rs.digest:
        return ""  # Game.resume says which ruleset saved it
    if state["format"] == 1 and type(state["format"]) is int:
        # format 1 counted a frame's place in instructions; format 2 in resume points
        return ("format: saved in format 1 by an older Ludus, whose saved frames this engine cannot continue; "
                "replay its log instead (ludus replay LOG)")
    if state["format"] != 2 or type(state["format"]) is not int:
        return "format: this engine reads format 2"
    for key in ("rng", "next_id", "next_modifier"):
        value = state[key]
        if type(value) is not int or not 0 <= value <= (MAX_INT if key != "rng" else 2**64 - 1):
            return f"{key}: not a whole number in range"
    if type(state["seed"]) not in (int, str):
        return "seed: a whole number or text"
    dice = state["forced_dice"]
    if type(dice) is not list or any(type(d) is not int or not 1 <= d <= MAX_DIE for d in dice):
        return f"forced_dice: a list of dice from 1 to {MAX_DIE}"
    return (_entities_problem(rs, state) or _stack_problem(rs, state) or _pending_problem(rs, state)
            or ("" if type(state["modifiers"]) is list and all(type(m) is dict for m in state["modifiers"])
                else "modifiers: a list of records")
            or ("" if state["result"] is None or type(state["result"]) is dict else "result: a mapping or null"))


def _entities_problem(rs: Ruleset, state: dict[str, Any]) -> str:
    ents, zones, players, glob = state["entities"], state["zones"], state["players"], state["globals"]
    if type(ents) is not dict or type(zones) is not dict or type(players) is not list or type(glob) is not dict:
        return "entities, zones and globals are mappings, players a list"
    if set(glob) != set(rs.globals):
        return "globals: not the ruleset's globals"
    for eid, e in ents.items():
        if type(e) is not dict or e.get("kind") not in rs.kinds:
            return f"entities/{eid}: not an entity of a kind of the ruleset"
        if e.get("zone") is not None and e["zone"] not in zones:
            return f"entities/{eid}/zone: no zone '{e['zone']}'"
    if not players or any(type(p) is not str or p not in ents for p in players) or len(set(players)) != len(players):
        return "players: the seats, each an entity"
    for key, items in zones.items():
        name, _, owner = str(key).partition("@")
        z = rs.zones.get(name)
        if z is None or (z.per is None) != (owner == "") or (owner and ents.get(owner, {}).get("kind") != z.per):
            return f"zones/{key}: not a zone of the ruleset"
        if type(items) is not list or any(type(i) is not str or ents.get(i, {}).get("zone") != key for i in items):
            return f"zones/{key}: every item must be an entity that is in this zone"
    return ""


def _stack_problem(rs: Ruleset, state: dict[str, Any]) -> str:
    stack = state["stack"]
    if type(stack) is not list:
        return "stack: a list of frames"
    for i, fr in enumerate(stack):
        if type(fr) is not dict or set(fr) != {"proc", "pc", "locals", "ret"}:
            return f"stack/{i}: a frame has proc, pc, locals and ret"
        name = fr["proc"]
        proc = rs.actions[name[7:]].proc if type(name) is str and name.startswith("action:") and \
            name[7:] in rs.actions else rs.procedures.get(name) if type(name) is str else None
        if proc is None:
            return f"stack/{i}/proc: no procedure {brief(name)}"
        if type(fr["pc"]) is not int or (fr["pc"] != 0 and fr["pc"] not in proc.points):
            return f"stack/{i}/pc: not a resume point of '{name}'"
        if type(fr["locals"]) is not dict or (fr["ret"] is not None and type(fr["ret"]) is not str):
            return f"stack/{i}: locals is a mapping, ret a name or null"
    return ""


def _pending_problem(rs: Ruleset, state: dict[str, Any]) -> str:
    p = state["pending"]
    if p is None:
        return "" if state["result"] is not None else "pending: a game that is not over waits for a decision"
    if type(p) is not dict or p.get("type") not in _PENDING_TYPES:
        return "pending: null or a decision of type choice, action or secret"
    if p["type"] != "action" and type(p.get("var")) is not str:
        return "pending: a choice names the variable it sets"
    seats = [*state["players"], UMPIRE] if rs.umpire else state["players"]  # who may be asked
    if p["type"] == "secret":
        asked, answers = p.get("players"), p.get("answers")
        if type(asked) is not dict or type(answers) is not dict or not set(answers) <= set(asked) or \
                not set(asked) <= set(seats) or \
                any(type(q) is not dict or not _options_ok(q.get("options")) for q in asked.values()):
            return "pending: a secret decision has seats (each with options) and their answers"
        return ""
    if p.get("player") not in seats or not _options_ok(p.get("options")):
        return "pending: a decision has a seat and a list of options"
    if p["type"] == "action" and any(type(o["value"]) is not dict or o["value"].get("action") not in rs.actions
                                     or type(o["value"].get("args")) is not dict for o in p["options"]):
        return "pending: each option of an action decision names an action of the ruleset and its arguments"
    return ""


def _options_ok(options: Any) -> bool:
    return type(options) is list and all(type(o) is dict and type(o.get("label")) is str and "value" in o
                                         for o in options)
