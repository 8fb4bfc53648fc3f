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


def view_bytes(game: Views, player: str | None) -> bytes:
    """``marshal.dumps(game.view(player, copy=False), 0)`` for a game without fog of war."""
    st = game.state
    dumps = marshal.dumps
    parts = _PARTS
    if len(parts) > _MAX_PARTS:
        parts.clear()
        _HELD.clear()
    chunks = [b"{"]
    for key in VIEW_HEAD:
        chunks += (dumps(key, 0), dumps(st[key], 0))
    chunks += (_ZONES, b"{")
    hidden: set[str] = set()
    own_zones = game._own_zones
    everything = player == UMPIRE and game.rs.umpire
    known = game.rs.zone_visibility
    for key, items in st["zones"].items():
        if not everything:
            seen = known.get((key, player))
            if seen is None:
                seen = game._visible(key, player)
            if not seen:
                chunks += (dumps(key, 0), dumps({"hidden": len(items)}, 0))
                hidden.update(items)
                continue
        part = parts.get(id(items))
        if part is None:
            part = dumps(key, 0) + dumps(items, 0)
            if own_zones is not None and key not in own_zones:
                parts[id(items)] = part
                _HELD.append(items)
        chunks.append(part)
    chunks += (b"0", _ENTITIES, b"{")
    own = game._own_ents
    get = parts.get
    for eid, e in st["entities"].items():
        if eid in hidden:
            continue
        part = get(id(e))
        if part is None:
            part = dumps(eid, 0) + dumps(e, 0)
            if own is not None and eid not in own:
                parts[id(e)] = part
                _HELD.append(e)
        chunks.append(part)
    chunks += (b"0", _PENDING, dumps(game._pending_view(player), 0), b"0")
    return b"".join(chunks)
