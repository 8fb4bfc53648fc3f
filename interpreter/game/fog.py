"""Fog of war: which entities and zones one player sees, from the ruleset's ``visible_to``.

A kind may say who sees its entities (``visible_to:``, a condition of ``me`` and ``it``), and
so may a zone per entity (``it``: its owner). An entity is *unseen* by a player when its kind's
condition is false, or it lies in an unseen zone; a zone per entity is unseen when its own
condition is false or its owner is unseen — so what an unseen army holds is unseen too.

A player who is no seat of the game (an umpire) sees everything; ``None`` (a spectator) sees
no entity or zone that has a condition. Views, bots' samples and the text shown to a person
(status lines, ``ludus report``) all ask a :class:`Sight`; a ruleset without ``visible_to``
never makes one (``Ruleset.fog`` is false).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model import RuleFault

if TYPE_CHECKING:
    from .base import GameBase


class Sight:
    """What ``player`` sees of ``game`` as it stands now (worked out as asked, remembered).

    Make a new one after the game changes: it remembers every answer.
    """

    def __init__(self, game: GameBase, player: str | None) -> None:
        self.game = game
        self.player = player
        # Everything is seen: no fog in the ruleset, or an onlooker who is no player (an umpire).
        self.all = not game.rs.fog or (player is not None and player not in game.players)
        self._ents: dict[str, bool] = {}
        self._zones: dict[str, bool] = {}

    def entity(self, eid: str) -> bool:
        """Whether the player sees entity ``eid`` (an id no entity has: seen, it is no entity)."""
        if self.all:
            return True
        known = self._ents.get(eid)
        if known is not None:
            return known
        rec = self.game.ents.get(eid)
        if rec is None:
            return True
        self._ents[eid] = False  # while working it out: an entity inside its own zone is unseen
        kind = self.game.rs.kinds.get(rec["kind"])
        seen = kind is None or kind.visible_to is None or self._holds(kind.visible_to, eid)
        zone = rec.get("zone")
        if seen and zone is not None:
            seen = self.zone(zone)
        self._ents[eid] = seen
        return seen

    def zone(self, key: str) -> bool:
        """Whether the player sees the zone ``key`` (a single zone always; ``name@owner`` as above)."""
        if self.all:
            return True
        known = self._zones.get(key)
        if known is not None:
            return known
        name, _, owner = key.partition("@")
        z = self.game.rs.zones.get(name)
        seen = True
        if owner and z is not None:
            self._zones[key] = False
            seen = (z.visible_to is None or self._holds(z.visible_to, owner)) and self.entity(owner)
        self._zones[key] = seen
        return seen

    def _holds(self, fn: Any, it: str) -> bool:
        """A 'visible_to' condition for (me, it); a spectator passes none. Its work is not the
        game's: the budget of the rules running now (or next) is left as it was."""
        if self.player is None:
            return False
        game = self.game
        work = game.work
        try:
            return bool(fn(game, {"me": self.player, "it": it}))
        except RuleFault as fault:
            raise game._located(fault) from None
        finally:
            game.work = work

    def unseen_entities(self) -> list[str]:
        """Every entity the player does not see, in the order of the state."""
        if self.all:
            return []
        return [eid for eid in self.game.ents if not self.entity(eid)]

    def value(self, value: Any) -> Any:
        """``value`` without what the player does not see: an unseen entity becomes None, and a
        list loses its unseen entities (what a status line shows; see seat.shown)."""
        if self.all:
            return value
        ents = self.game.ents
        if isinstance(value, str):
            return None if value in ents and not self.entity(value) else value
        if isinstance(value, list):
            return [v for v in value if not (isinstance(v, str) and v in ents and not self.entity(v))]
        return value
