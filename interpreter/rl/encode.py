"""The generic observation encoder: a player's view as a fixed-size vector of numbers.

Everything here is read off the ruleset's declarations (globals, kinds and their fields,
zones, actions, static entities and seats), never off a particular game, and the numbers
come from ``game.view(player)`` alone: what the player may see. The layout depends only on
the ruleset and the number of players, so every position of such a game has the same size.

Numbers are made comparable across games of very different scales:

- a whole number ``x`` becomes ``sign(x) * log(1 + |x|)`` after clipping ``x`` to
  ``±INT_CLIP`` (so 0 -> 0, 1 -> 0.69, 10 -> 2.4, 1000 -> 6.9; never beyond ±BOUND);
- a flag is 0 or 1; an enumeration value, a seat and a zone name are one-hot;
- seats are *relative* to the observing player: slot 0 is the player itself, then the
  others in turn order after it, so one policy can learn to play every seat.

The layout (see :meth:`Encoder.describe`) is: header (the observer's seat, who decides, the
kind of decision, the game over), globals, zone sizes, entities, then one block per option
slot of the action mask (what the i-th legal choice is). Fields that no rule ever sets
(``Ruleset.fields_written``) are left out: an entity has a fixed slot, so a printed value
tells nothing that the slot does not. Entities made during play (``create``) have no slot.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model import PLAYER_KIND, Ruleset

INT_CLIP = 10**9
#: Every number of an observation lies in [-BOUND, BOUND] (log(1 + 10**9) < 21).
BOUND = 21.0
_PENDING_TYPES = ("choice", "action", "secret")


def scaled(x: Any) -> float:
    """A whole number (or flag) as a bounded float: signed log1p after clipping to ±INT_CLIP."""
    if isinstance(x, bool):
        return 1.0 if x else 0.0
    if not isinstance(x, int | float):
        return 0.0
    x = max(-INT_CLIP, min(INT_CLIP, x))
    return math.copysign(math.log1p(abs(x)), x)


class Encoder:
    """The fixed layout for one ruleset and one set of seats, and the encoding of a view."""

    def __init__(self, rs: Ruleset, players: Sequence[str], max_actions: int) -> None:
        self.rs = rs
        self.players = list(players)
        self.max_actions = max_actions
        n = len(self.players)
        # (name, encoding) for values: 'num' (int or flag, 1 slot), ('enum', values),
        # 'seat' (a player: n slots, relative), 'set' (some other entity: 1 slot), 'len' (1 slot)
        self.globals = [(g.name, enc) for g in rs.globals.values() if (enc := _encoding(rs, g.type)) is not None]
        kinds = {PLAYER_KIND: rs.kinds.get(PLAYER_KIND)} | dict(rs.kinds)
        self.kind_names = list(kinds)
        self.fields: dict[str, list[tuple[str, Any]]] = {}
        for kname, kind in kinds.items():
            fs = kind.fields.values() if kind is not None else ()
            self.fields[kname] = [(f.name, enc) for f in fs
                                  if f.name in rs.fields_written and (enc := _encoding(rs, f.type)) is not None]
        # Entities with a slot: the seats' player entities, then the static ones in declaration order.
        self.entities: list[tuple[str, str]] = [(p, PLAYER_KIND) for p in self.players]
        self.entities += [(eid, spec["kind"]) for eid, spec in rs.entities.items()]
        self.entity_index = {eid: i for i, (eid, _) in enumerate(self.entities)}
        self.zone_names = list(rs.zones)
        self.zone_index = {z: i for i, z in enumerate(self.zone_names)}
        self.zone_keys = [z.name for z in rs.zones.values() if z.per is None]
        for eid, kname in self.entities:
            kind = kinds.get(kname)
            for zname in (kind.zones if kind is not None else ()):
                self.zone_keys.append(f"{zname}@{eid}")
        self.actions = list(rs.actions)
        self.action_index = {a: i for i, a in enumerate(self.actions)}
        self.kind_index = {k: i for i, k in enumerate(self.kind_names)}
        self.header_size = n + (n + 1) + (1 + len(_PENDING_TYPES)) + 2
        self.globals_size = sum(_width(enc, n) for _, enc in self.globals)
        self.zones_size = 2 * len(self.zone_keys)
        # present, zone name one-hot (+ in no zone), owner seat (relative) + owned by another entity
        self.entity_base = 1 + len(self.zone_names) + 1 + n + 1
        self.entities_size = sum(self.entity_base + sum(_width(enc, n) for _, enc in self.fields[k])
                                 for _, k in self.entities)
        # legal, action one-hot, kind of the entity it names (+ none), a number, a seat, entity slot
        self.option_size = 1 + len(self.actions) + len(self.kind_names) + 1 + 1 + n + 1
        self.size = (self.header_size + self.globals_size + self.zones_size + self.entities_size
                     + self.option_size * max_actions)

    def describe(self) -> dict[str, int]:
        """The size of each part of the vector, in order."""
        return {"header": self.header_size, "globals": self.globals_size, "zones": self.zones_size,
                "entities": self.entities_size, "options": self.option_size * self.max_actions,
                "total": self.size}

    # ------------------------------------------------------------------ encoding
    def encode(self, view: dict[str, Any], me: str, options: Sequence[Any]) -> np.ndarray:
        """The vector for ``me`` from ``view`` (``game.view(me)``) and ``me``'s legal option values."""
        out = np.zeros(self.size, dtype=np.float32)
        n = len(self.players)
        order = self._relative(me)
        i = 0
        out[i + self.players.index(me)] = 1.0
        i += n
        pending = view.get("pending")
        deciders: list[str] = []
        if pending is not None:
            if pending["type"] == "secret":
                deciders = list(pending.get("waiting_for", []))
            else:
                deciders = [pending["player"]]
        for d in deciders:
            out[i + order.get(d, n)] = 1.0  # slot n: the umpire (or another non-player)
        i += n + 1
        ptype = pending["type"] if pending is not None else None
        out[i + (_PENDING_TYPES.index(ptype) + 1 if ptype in _PENDING_TYPES else 0)] = 1.0
        i += 1 + len(_PENDING_TYPES)
        out[i] = 1.0 if view.get("result") is not None else 0.0
        out[i + 1] = scaled(len(options))
        i += 2
        glob = view.get("globals", {})
        for name, enc in self.globals:
            i = self._value(out, i, enc, glob.get(name), order)
        zones = view.get("zones", {})
        for key in self.zone_keys:
            z = zones.get(key)
            if z is not None:  # under fog of war an unseen zone is missing: seen 0, size 0
                out[i] = 1.0
                out[i + 1] = scaled(z["hidden"] if isinstance(z, dict) else len(z))
            i += 2
        ents = view.get("entities", {})
        for eid, kname in self.entities:
            rec = ents.get(eid)
            width = self.entity_base + sum(_width(enc, n) for _, enc in self.fields[kname])
            if rec is None:  # not seen (a hidden zone, fog of war): zeros, 'present' 0
                i += width
                continue
            out[i] = 1.0
            j = i + 1
            zone = rec.get("zone")
            if zone is None:
                out[j + len(self.zone_names)] = 1.0
            else:
                name, _, owner = zone.partition("@")
                if name in self.zone_index:
                    out[j + self.zone_index[name]] = 1.0
                if owner in order:
                    out[j + len(self.zone_names) + 1 + order[owner]] = 1.0
                elif owner:
                    out[j + len(self.zone_names) + 1 + n] = 1.0
            j += self.entity_base - 1
            for fname, enc in self.fields[kname]:
                j = self._value(out, j, enc, rec.get(fname), order)
            i += width
        for k, value in enumerate(options[: self.max_actions]):
            self._option(out, i + k * self.option_size, value, ents, order)
        np.clip(out, -BOUND, BOUND, out=out)
        return out

    def _relative(self, me: str) -> dict[str, int]:
        k = self.players.index(me)
        turn = self.players[k:] + self.players[:k]
        return {p: j for j, p in enumerate(turn)}

    def _value(self, out: np.ndarray, i: int, enc: Any, v: Any, order: dict[str, int]) -> int:
        n = len(self.players)
        if enc == "num":
            out[i] = scaled(v)
            return i + 1
        if enc == "seat":
            if v in order:
                out[i + order[v]] = 1.0
            return i + n
        if enc == "set":
            out[i] = 0.0 if v is None else 1.0
            return i + 1
        if enc == "len":
            out[i] = scaled(len(v)) if isinstance(v, list | dict) else 0.0
            return i + 1
        values = enc[1]
        if v in values:
            out[i + values.index(v)] = 1.0
        return i + len(values)

    def _option(self, out: np.ndarray, i: int, value: Any, ents: dict[str, Any], order: dict[str, int]) -> None:
        """One option slot: legal, which action, and the first entity and number it names."""
        n = len(self.players)
        out[i] = 1.0
        j = i + 1
        if isinstance(value, dict) and "action" in value and "args" in value:
            if value["action"] in self.action_index:
                out[j + self.action_index[value["action"]]] = 1.0
            args = list(value["args"].values())
        else:
            args = [value]
        j += len(self.actions)
        named = next((a for a in args if isinstance(a, str) and (a in self.entity_index or a in ents)), None)
        number = next((a for a in args if isinstance(a, int | bool)), None)
        kind = None
        if named is not None:
            kind = self.entities[self.entity_index[named]][1] if named in self.entity_index else ents[named]["kind"]
        out[j + (self.kind_index[kind] if kind in self.kind_index else len(self.kind_names))] = 1.0
        j += len(self.kind_names) + 1
        out[j] = scaled(number)
        j += 1
        if named in order:
            out[j + order[named]] = 1.0
        j += n
        if named in self.entity_index:
            out[j] = (self.entity_index[named] + 1) / len(self.entities)


def _encoding(rs: Ruleset, t: Any) -> Any:
    """How a value of declared type ``t`` is encoded, or None when it is not (text, zones, any)."""
    if t.tag in ("int", "bool"):
        return "num"
    if t.tag == "enum":
        return ("enum", tuple(rs.enums.get(t.arg, ())))
    if t.tag == "ent":
        return "seat" if t.arg == PLAYER_KIND else "set"
    if t.tag in ("list", "map"):
        return "len"
    return None


def _width(enc: Any, n: int) -> int:
    if enc in ("num", "set", "len"):
        return 1
    if enc == "seat":
        return n
    return len(enc[1])


__all__ = ["BOUND", "INT_CLIP", "Encoder", "scaled"]
