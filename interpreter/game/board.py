"""Board: entities and zones (copy on write), fields, dice.

Entities are dicts in ``state["entities"]``, zones lists of entity ids in
``state["zones"]`` (``name`` or ``name@owner``). A game that shares these dicts and lists
with a copy (see ``views.copy_state``) copies one before changing it (``_own_ents``,
``_writable_zone``). Every change forgets remembered function results (``changed``).
"""

from __future__ import annotations

import re
from typing import Any

from .. import rng
from ..diagnostics import Loc
from ..model import (
    MAX_INT,
    MAX_SIDES,
    NO_MEMO,
    PLAYER_KIND,
    FieldDef,
    RuleFault,
    copy_plain,
    int_fault,
    type_default,
)
from .base import GameBase
from .values import drop_slots

_ID = re.compile(r"[a-z][a-z0-9_]*\Z")  # with match(): the whole id ('$' also passes "x\n")
_EMPTY: list = []
_copy = copy_plain


def _initial(f: FieldDef) -> Any:
    """A fresh starting value for a field: its declared default, else its type's."""
    return _copy(f.default) if f.default is not None else type_default(f.type)


class Board(GameBase):
    """Entities, zones and their copy on write; fields, moves, creation; dice."""

    def _writable_zone(self, key: str) -> list[str]:
        items = self.zones[key]
        own = self._own_zones
        if own is not None and key not in own:
            items = self.zones[key] = items[:]
            own.add(key)
        return items

    # ================================================================ zones & entities
    def _zone_def(self, key: str) -> Any:
        zones = self.rs.zones
        z = zones.get(key)
        if z is not None:  # a zone's own name (names have no '@'): the global zone, if it is one
            return z if z.per is None else None
        name, _, owner = key.partition("@")
        z = zones.get(name)
        if z is None:
            return None
        if (z.per is None) != (owner == ""):
            return None
        if owner:
            e = self.ents.get(owner)
            if e is None or e["kind"] != z.per:
                return None
        return z

    def zone_items(self, key: Any) -> list[str]:
        items = self.zones.get(key)
        if items is not None:
            return items
        if not isinstance(key, str) or self._zone_def(key) is None:
            raise RuleFault(f"{self.label_of(key)} is not a zone")
        return _EMPTY

    def zone_owner(self, key: Any) -> str | None:
        if not isinstance(key, str):
            return None
        _, _, owner = key.partition("@")
        return owner or None

    def set_field(self, obj: Any, name: str, value: Any, op: str, loc: Loc | None) -> None:
        e = self.ents.get(obj) if isinstance(obj, str) else None
        if e is None:
            raise self.attr_fault(obj, name, loc)
        if name not in e or name in ("kind", "zone"):
            raise RuleFault(f"{self.label_of(obj)} has no field '{name}' that can be set", loc)
        # _forget(("field", name)), inline and by the field's name: a field is set at almost
        # every step, and the call and the tuple built and hashed add up
        self.changes += 1
        rs = self.rs
        filled = self.filled
        if filled:
            hit = filled & rs.field_reader_bits.get(name, rs.memo_always_bits)
            if hit:
                self.filled = filled ^ hit
                drop_slots(self.memos, hit)
        pinned = rs.field_pinned
        if pinned and name in pinned:  # a field a constant function reads was set (by a caller: no rule sets it)
            for i in pinned[name]:
                self.memos[i] = NO_MEMO
        own = self._own_ents  # an entity copied before its first change: a field is set at almost every step
        if own is not None and obj not in own:
            e = self.ents[obj] = e.copy()
            own.add(obj)
        if op == "=":
            e[name] = value
            return
        cur = e[name]
        if not isinstance(cur, int) or isinstance(cur, bool):
            raise RuleFault(f"cannot change {self.label_of(obj)}.{name} by a number: it is {self.label_of(cur)}", loc)
        v = cur + value if op == "+" else cur - value
        if v.__class__ is int and not -MAX_INT <= v <= MAX_INT:  # checked_int, inline: a call a step
            raise int_fault(v, loc)
        e[name] = v

    def _place(self, eid: str, key: str, top: bool) -> None:
        self._forget(("zones",))  # changed_zones, inline (a call less an entity moved)
        # the entity and both zones copied before their first change (as _writable_zone does),
        # inline: entities move at almost every step
        ents, zones = self.ents, self.zones
        e = ents[eid]
        own = self._own_ents
        if own is not None and eid not in own:
            e = ents[eid] = e.copy()
            own.add(eid)
        own_zones = self._own_zones
        old = e["zone"]
        if old is not None:
            items = zones.get(old)
            if items is not None and eid in items:
                if own_zones is not None and old not in own_zones:
                    items = zones[old] = items[:]
                    own_zones.add(old)
                items.remove(eid)
        items = zones.get(key)
        if items is None:
            items = zones[key] = []
            if own_zones is not None:
                own_zones.add(key)
        elif own_zones is not None and key not in own_zones:
            items = zones[key] = items[:]
            own_zones.add(key)
        if top:
            items.insert(0, eid)
        else:
            items.append(eid)
        e["zone"] = key

    def move(self, eid: Any, key: Any, top: bool, loc: Loc | None) -> None:
        e = self.ents.get(eid) if isinstance(eid, str) else None
        if e is None:
            raise RuleFault(f"cannot move {self.label_of(eid)}: it is not an entity", loc)
        z = self._zone_def(key) if isinstance(key, str) else None
        if z is None:
            raise RuleFault(f"cannot move to {self.label_of(key)}: it is not a zone", loc)
        kind = e["kind"]
        if z.holds != "*" and kind != z.holds:
            raise RuleFault(f"zone '{z.name}' holds {z.holds} entities, not {kind} '{self.label_of(eid)}'", loc)
        self._place(eid, key, top)

    def shuffle(self, key: Any) -> None:
        self.changed_zones()
        items = self.zone_items(key)
        if key in self.zones:
            items = self._writable_zone(key)
        st = self._state
        self.draws += 1
        state = st["rng"]
        for i in range(len(items) - 1, 0, -1):
            state, j = rng.below(state, i + 1)
            items[i], items[j] = items[j], items[i]
        st["rng"] = state

    def create(self, kind: str, fields: dict[str, Any], zone: Any, loc: Loc | None,
               called: str | None = None) -> str:
        st = self._state
        kdef = self.rs.kinds[kind]
        if called is not None:
            eid = called
            if not _ID.match(eid):
                raise RuleFault(f"cannot create '{eid}': ids are snake_case (lower-case letters, digits, _)", loc)
            if eid in self.ents or eid in self.rs.globals or eid in self.rs.zones:
                raise RuleFault(f"cannot create '{eid}': that id is taken", loc)
        else:
            while True:
                eid = f"{kind}_{st['next_id']}"
                st["next_id"] += 1
                if eid not in self.ents:
                    break
        rec: dict[str, Any] = {"kind": kind, "zone": None}
        for f in kdef.fields.values():
            rec[f.name] = _initial(f)
        rec.update(fields)
        self.forget_all()
        self.ents[eid] = rec
        if self._own_ents is not None:
            self._own_ents.add(eid)
        for zname in kdef.zones:
            self.zones[f"{zname}@{eid}"] = []
            if self._own_zones is not None:
                self._own_zones.add(f"{zname}@{eid}")
        self._kind_index = None
        if zone is not None:
            self.move(eid, zone, False, loc)
        return eid

    def destroy(self, eid: Any, loc: Loc | None) -> None:
        e = self.ents.get(eid) if isinstance(eid, str) else None
        if e is None:
            raise RuleFault(f"cannot destroy {self.label_of(eid)}: it is not an entity", loc)
        if e["kind"] == PLAYER_KIND:
            raise RuleFault("players cannot be destroyed", loc)
        if e["zone"] is not None and eid in self.zones.get(e["zone"], _EMPTY):
            self._writable_zone(e["zone"]).remove(eid)
        for zname in self.rs.kinds[e["kind"]].zones:
            if self.zones.get(f"{zname}@{eid}"):
                raise RuleFault(f"cannot destroy {self.label_of(eid)}: its zone '{zname}' is not empty", loc)
            self.zones.pop(f"{zname}@{eid}", None)
        del self.ents[eid]
        self._kind_index = None
        self.forget_all()

    def kind_ids(self, kind: str) -> list[str]:
        """Every entity of ``kind``, in the order the entities were made."""
        if self._kind_index is None:
            # Games of one ruleset mostly hold the same entities (those of the ruleset and of
            # its set-up), so the index is shared between games with the same entity list:
            # every new game, copy or look-ahead would otherwise rebuild it.
            key = tuple(self.ents)
            known = self.rs.kind_indexes
            idx = known.get(key)
            if idx is None:
                idx = {}
                for eid, e in self.ents.items():
                    idx.setdefault(e["kind"], []).append(eid)
                if len(known) < 32:  # a few entity lists recur; rules that create many just rebuild
                    known[key] = idx
            self._kind_index = idx
        return list(self._kind_index.get(kind, _EMPTY))

    def distance(self, a: Any, b: Any, field: Any, loc: Loc | None) -> int | None:
        """Fewest steps from ``a`` to ``b`` following the list field ``field`` (none if unreachable)."""
        if a == b:
            return 0
        seen = {a}
        frontier = [a]
        steps = 0
        while frontier:
            steps += 1
            nxt = []
            for x in frontier:
                e = self.ents.get(x)
                if e is None or not isinstance(e.get(field), list):
                    raise RuleFault(f"distance(): {self.label_of(x)} has no list field '{field}'", loc)
                self.spend(len(e[field]))
                for y in e[field]:
                    if y == b:
                        return steps
                    if y not in seen:
                        seen.add(y)
                        nxt.append(y)
            frontier = nxt
        return None

    # ================================================================ dice
    def roll(self, n: int, sides: int, bonus: int | None, loc: Loc | None) -> list[int]:
        """Roll ``n`` dice of ``sides`` faces (1 to MAX_SIDES); with ``bonus``, each die showing
        that face adds a die (at most 10,000 dice in all)."""
        if n < 0 or n > 10_000:
            raise RuleFault(f"cannot roll {n} dice", loc)
        if not isinstance(sides, int) or not 1 <= sides <= MAX_SIDES:
            raise RuleFault(f"a die has 1 to {MAX_SIDES} sides, not {self.label_of(sides)[:24]}", loc)
        st = self._state
        forced = st["forced_dice"]
        state = st["rng"]
        values: list[int] = []
        left = n
        # rng.below(state, sides) inline (two calls less a die): its rejection limit, once
        limit = (1 << 64) - ((1 << 64) % sides)
        mask, gamma, mix1, mix2 = rng._MASK, rng.GAMMA, rng.MIX1, rng.MIX2
        while left > 0:
            if forced:
                v = forced.pop(0)
                if not 1 <= v <= sides:
                    raise RuleFault(f"forced die {v} is not a result of a d{sides}", loc)
            elif sides <= 1:
                v = 1  # below's answer without a draw
            else:
                while True:  # rng.next_u64 until under the limit
                    state = (state + gamma) & mask
                    z = ((state ^ (state >> 30)) * mix1) & mask
                    z = ((z ^ (z >> 27)) * mix2) & mask
                    z ^= z >> 31
                    if z < limit:
                        break
                v = z % sides + 1
            values.append(v)
            left -= 1
            if bonus is not None and v == bonus:
                left += 1
                if len(values) > 10_000:
                    raise RuleFault("bonus dice chain too long", loc)
        st["rng"] = state
        self.draws += 1
        self.log.append({"type": "dice", "values": values})
        return values
