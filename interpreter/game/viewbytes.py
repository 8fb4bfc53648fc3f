"""A player's view as marshal's bytes, made from kept parts: the bots' fingerprints of positions.

``marshal.dumps(game.view(player, copy=False), 0)`` is what a bot hashes to know a position
again (bots.fingerprint), several times a decision, and most of a view is the same from one
position to the next. Format 0 writes plain data by content alone (no references to objects
met before, no mark of interned strings) and a dict as ``{``, each key and value as they
would be written alone, and ``0``: so a view's bytes are its parts' bytes joined, and the
part of an entity or of a zone can be kept from one view to the next while its dict or list
cannot change.

Copy on write (game/board.py) makes that sure: a game changes in place only the entities'
dicts and zones' lists it owns (``_own_ents``, ``_own_zones``; None: all), which it made
itself since it was last copied, and a copy makes both games own nothing. So a dict or list
that a game does not own is never changed again, by any game: its part is kept by the
object's id, with the object itself (so that the id cannot be another object's while the
part is kept). A game's own dicts and lists are written afresh each time. Every entity has
its own dict and every zone its own list, so an object's part names the one entity or zone.

A bot's trial (``Views.copy(memos=True)``) differs from the game it copies only in the
entities and zones it owns: its view is that game's last view (its ``Layout``, if made of the
state copied: no change since) with those parts written again, when it has the same entities
and zones in the same order and owns no zone hidden from the player (so that the same
entities are hidden).
"""

from __future__ import annotations

import marshal
from typing import TYPE_CHECKING, Any

from ..model import UMPIRE

if TYPE_CHECKING:
    from .views import Views

# A view's keys before its zones, in the order of Views.view.
VIEW_HEAD = ("format", "ruleset", "players", "globals", "modifiers", "result")
_ZONES, _ENTITIES, _PENDING = (marshal.dumps(k, 0) for k in ("zones", "entities", "pending"))

# The parts kept, by the id of their entity's dict or zone's list, and those objects kept
# alive meanwhile; all forgotten past the bound (a long run of many games).
_PARTS: dict[int, bytes] = {}
_HELD: list[Any] = []
_MAX_PARTS = 50_000


def forget_view_parts() -> None:
    """Drop every part kept (Game.forget_all: the state may have been edited from outside)."""
    _PARTS.clear()
    _HELD.clear()


class Layout:
    """The parts of one game's view for one player, for its copies to change (see above)."""

    def __init__(self, game: Views, player: str | None, zone_parts: list[bytes], ent_parts: list[bytes],
                 hidden: set[str], hidden_zones: set[str]) -> None:
        self.player = player
        self.state, self.changes = game._full_state(), game.changes  # of what state (see Views.copy)
        self.zone_keys = list(game._full_state()["zones"])
        self.ent_keys = list(game._full_state()["entities"])
        self.zone_parts, self.ent_parts = zone_parts, ent_parts
        self.hidden, self.hidden_zones = hidden, hidden_zones
        self._zone_at: dict[str, int] | None = None
        self._ent_at: dict[str, int] | None = None

    def zone_at(self) -> dict[str, int]:
        """The place of each zone's part among the zones' parts."""
        if self._zone_at is None:
            self._zone_at = dict(zip(self.zone_keys, range(len(self.zone_keys)), strict=True))
        return self._zone_at

    def ent_at(self) -> dict[str, int]:
        """The place of each entity's part among the entities' parts (a hidden one's is empty)."""
        if self._ent_at is None:
            self._ent_at = dict(zip(self.ent_keys, range(len(self.ent_keys)), strict=True))
        return self._ent_at


def view_bytes(game: Views, player: str | None) -> bytes:
    """``marshal.dumps(game.view(player, copy=False), 0)`` for a game without fog of war."""
    st = game._full_state()
    dumps = marshal.dumps
    if len(_PARTS) > _MAX_PARTS:
        forget_view_parts()
    layout = game.source_layout
    parts = _patched(game, player, layout) if layout is not None else None
    if parts is None:
        parts = _written(game, player)
    chunks = [b"{"]
    for key in VIEW_HEAD:
        chunks += (dumps(key, 0), dumps(st[key], 0))
    chunks += (_ZONES, b"{", *parts[0], b"0", _ENTITIES, b"{", *parts[1], b"0",
               _PENDING, dumps(game._pending_view(player), 0), b"0")
    return b"".join(chunks)


def _written(game: Views, player: str | None) -> tuple[list[bytes], list[bytes]]:
    """The parts of the zones and of the entities of the view, each written or kept; the game
    keeps them as its layout, for its copies."""
    st = game._full_state()
    dumps = marshal.dumps
    parts = _PARTS
    zone_parts: list[bytes] = []
    hidden: set[str] = set()
    hidden_zones: set[str] = set()
    own_zones = game._own_zones
    everything = player == UMPIRE and game.rs.umpire
    known = game.rs.zone_visibility
    for key, items in st["zones"].items():
        if not everything:
            seen = known.get((key, player))
            if seen is None:
                seen = game._visible(key, player)
            if not seen:
                zone_parts.append(dumps(key, 0) + dumps({"hidden": len(items)}, 0))
                hidden.update(items)
                hidden_zones.add(key)
                continue
        part = parts.get(id(items))
        if part is None:
            part = dumps(key, 0) + dumps(items, 0)
            if own_zones is not None and key not in own_zones:
                parts[id(items)] = part
                _HELD.append(items)
        zone_parts.append(part)
    ent_parts: list[bytes] = []
    own = game._own_ents
    get = parts.get
    for eid, e in st["entities"].items():
        if eid in hidden:
            ent_parts.append(b"")  # so that the parts are in the places of the entities
            continue
        part = get(id(e))
        if part is None:
            part = dumps(eid, 0) + dumps(e, 0)
            if own is not None and eid not in own:
                parts[id(e)] = part
                _HELD.append(e)
        ent_parts.append(part)
    game.view_layout = Layout(game, player, zone_parts, ent_parts, hidden, hidden_zones)
    return zone_parts, ent_parts


def _patched(game: Views, player: str | None, layout: Layout) -> tuple[list[bytes], list[bytes]] | None:
    """The parts of the view of a copy, from the layout of the game it copies: those of what
    the copy owns written again (None when the layout does not fit, see above)."""
    st = game._full_state()
    own_zones, own_ents = game._own_zones, game._own_ents
    if (layout.player != player or own_zones is None or own_ents is None or not own_zones.isdisjoint(layout.hidden_zones)
            or list(st["zones"]) != layout.zone_keys or list(st["entities"]) != layout.ent_keys):
        return None
    dumps = marshal.dumps
    zone_parts = layout.zone_parts
    if own_zones:
        zone_parts = zone_parts[:]
        at = layout.zone_at()
        zones = st["zones"]
        for key in own_zones:
            zone_parts[at[key]] = dumps(key, 0) + dumps(zones[key], 0)
    ent_parts = layout.ent_parts
    hidden = layout.hidden
    mine = [eid for eid in own_ents if eid not in hidden]
    if mine:
        ent_parts = ent_parts[:]
        at = layout.ent_at()
        ents = st["entities"]
        for eid in mine:
            ent_parts[at[eid]] = dumps(eid, 0) + dumps(ents[eid], 0)
    return zone_parts, ent_parts
