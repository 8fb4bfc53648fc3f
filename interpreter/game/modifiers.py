"""Modifiers: reading modifier points, and the records that change them.

A ``modify`` statement adds a record to ``state["modifiers"]`` naming its ``ModifierSite``
(its ``when`` and ``while`` conditions) and carrying only data; reading a point applies the
active records to its base value, oldest first.
"""

from __future__ import annotations

from typing import Any

from .base import GameBase


class Modifiers(GameBase):
    """Modifier points and records: reading, adding, ending, using up."""

    def point(self, name: str, args: list[Any]) -> Any:
        """Read a modifier point: its base value changed by every active modifier, oldest first."""
        pdef = self.rs.points[name]
        L = dict(zip(pdef.params, args, strict=True))
        assert pdef.base is not None
        value = pdef.base(self, L)
        for rec in self._state["modifiers"]:
            if rec["point"] != name or not self._applies(rec, L):
                continue
            value = value + rec["value"] if rec["mode"] == "add" else rec["value"]
        return value

    def _applies(self, rec: dict[str, Any], L: dict[str, Any]) -> bool:
        site = self.rs.sites.get(rec["site"])  # none for a scenario's modifier: it always applies
        if site is None or (site.when is None and site.while_ is None):
            return True
        if site.while_ is not None and not site.while_(self, dict(rec["captured"])):
            return False
        if site.when is None:
            return True
        L2 = dict(rec["captured"])
        L2.update(L)
        return bool(site.when(self, L2))

    def add_modifier(self, rec: dict[str, Any]) -> None:
        st = self._state
        rec["id"] = st["next_modifier"]
        st["next_modifier"] += 1
        st["modifiers"].append(rec)
        self.changed()

    def signal(self, name: str) -> None:
        """End every modifier lasting 'until' this signal, and every 'while' whose condition is false."""
        keep = []
        for rec in self._state["modifiers"]:
            if rec["until"] == name:
                continue
            site = self.rs.sites.get(rec["site"])
            if site is not None and site.while_ is not None and not site.while_(self, dict(rec["captured"])):
                continue
            keep.append(rec)
        self._state["modifiers"] = keep
        self.changed()
        if self.on_signal is not None:
            self.on_signal(self, name)  # type: ignore[arg-type]  # a Game: GameBase is its part

    def consume(self, name: str, args: list[Any]) -> None:
        """Use up the one-use ('once') modifiers that apply to this reading."""
        pdef = self.rs.points[name]
        L = dict(zip(pdef.params, args, strict=True))
        self._state["modifiers"] = [r for r in self._state["modifiers"]
                                   if not (r["point"] == name and r["once"] and self._applies(r, L))]
        self.changed()
