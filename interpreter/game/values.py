"""Values: how values are read, indexed and labelled; functions and their remembered results.

Function results are remembered in ``memo`` (functions are pure: they read only their
arguments and the state) until the state changes (``changed``).
"""

from __future__ import annotations

import json
from typing import Any

from ..diagnostics import Loc
from ..model import CALL_WORK, MAX_KEPT_RESULTS, MAX_STR, NO_MEMO, RuleFault
from .base import GameBase
from .viewbytes import forget_view_parts


def drop_slots(memos: list[dict[Any, Any]], bits: int) -> None:
    """Forget the memo slots whose bits are set in ``bits`` (slot i: bit i, as Game.filled)."""
    while bits:
        low = bits & -bits
        memos[low.bit_length() - 1] = NO_MEMO
        bits ^= low


class Values(GameBase):
    """Labels, fields and indexes of values, functions and their memo, narration."""

    #: The memos were handed over by the game this one copies, for this very state, and no
    #: decision was made since (see decided): set on a copy only, so a class default.
    memos_handed: bool = False
    #: Changes of the state the rules can read, counted since the game was made: every one
    #: forgets (changed, _forget, forget_all), and a bot's trial that made none is judged as
    #: the game it copies (bots._judge).
    changes: int = 0
    #: Code outside the rules has read ``state`` and may have edited it (see decided).
    exposed: bool = False
    #: Work of the runs whose results were kept since they were last counted (see decided).
    kept_work: int = 0

    # Forgetting replaces a memo slot by the shared empty NO_MEMO and never empties the dict
    # in place: a copy made with its source's memos (Views.copy(memos=True)) shares the
    # source's dicts, and each game leaves a dict when something its functions read changes
    # in that game. So the games holding one dict agree on all that its function reads, and a
    # result any of them remembers there is true for all of them.
    #
    # A change looks only at the volatile slots holding a dict, the bits of ``filled`` (slot i:
    # bit i), those that also read what changed (Ruleset.memo_reader_bits): a few bit
    # operations, however many slots are filled, and most changes find none.

    def changed(self) -> None:
        """Forget remembered function results (``memos``): the state may have changed anywhere.

        A change of modifiers and a decision in a game whose state was read from outside
        (``exposed``: it may have been edited; see decided) call it; other changes forget less
        (below). The results of functions that read only
        fields no rule sets (a map's connections, printed values) are kept: those fields are
        the game's constants, and a caller who edits one between decisions calls
        :meth:`forget_all`.
        """
        self.changes += 1
        filled = self.filled
        if filled:
            self.filled = 0
            drop_slots(self.memos, filled)
        self.bound_constants()

    def bound_constants(self) -> None:
        """Forget every result if the constant functions' kept ones are past MAX_KEPT_RESULTS.

        Kept results are bounded like the others (a call's work each, model.CALL_WORK), but
        over a whole game rather than one decision: past the bound they start again."""
        memos = self.memos
        kept = 0
        for i in self.rs.memo_constant:  # a loop, not sum() over a generator: this runs often
            kept += len(memos[i])
        if kept > MAX_KEPT_RESULTS:
            self.forget_all()

    def decided(self) -> None:
        """At a decision (``apply``): forget what :meth:`changed` forgets if the state may have
        been edited from outside since the last one — that is, if code outside the rules has
        read ``state`` (``exposed``) and this game is not a copy made with its source's memos
        (``copy(memos=True)``) and not yet played.

        A game only the rules have changed (one played by ``simulate``, ``bench`` or a bot's
        trials, which read it through ``choices``, ``view`` and ``apply``) keeps its results:
        the rules forget precisely what they change (Board, Modifiers, and the compiled rules'
        ``changed_glob``), as a bot's trials already rely on (bots.py)."""
        if self.memos_handed:
            self.memos_handed = False
        elif self.exposed:
            self.changed()
        else:
            # Each result kept cost its run a call's work (CALL_WORK; an index, its zone's
            # items), so no more than MAX_KEPT_RESULTS can have been added before the runs
            # since the last count have done that much work: only then are they counted.
            kept = self.kept_work + self.work
            if kept > MAX_KEPT_RESULTS * CALL_WORK:
                kept = 0
                if sum(map(len, self.memos)) > MAX_KEPT_RESULTS:
                    self.forget_all()
            self.kept_work = kept

    def forget_all(self) -> None:
        """Forget every remembered function result: entities were made or destroyed (so
        ``every KIND`` may differ), or the state was edited from outside the rules.

        The slots are replaced, not emptied: a copy of this game may share the dicts of
        constant functions (Views._share_constants), which stay right for it. The bytes kept
        for views are dropped too: an edit from outside may have changed in place a dict or
        list that no game owns (game/viewbytes.py)."""
        self.changes += 1
        self.memos = [NO_MEMO] * self.rs.memo_count
        self.filled = 0
        forget_view_parts()

    def changed_field(self, name: str) -> None:
        """Forget the results of the functions that read a field called ``name`` (or that read
        anything; see dsl/functions.memo_readers)."""
        self._forget(("field", name))

    def changed_glob(self, name: str) -> None:
        """Forget the results of the functions that read the global ``name`` (compiled rules
        call it after setting one)."""
        self._forget(("glob", name))

    def changed_zones(self) -> None:
        """Forget the results of the functions that read the items of a zone or where an
        entity is (an entity moved, a zone was shuffled)."""
        self._forget(("zones",))

    def _forget(self, fact: tuple[str, ...]) -> None:
        self.changes += 1
        filled = self.filled
        if filled:  # most changes find none: a call per entity moved adds up
            hit = filled & self.rs.memo_reader_bits.get(fact, self.rs.memo_always_bits)
            if hit:
                self.filled = filled ^ hit
                drop_slots(self.memos, hit)
        pinned = self.rs.memo_pinned
        if pinned:  # a field a constant function reads was set (by a caller: no rule sets it)
            for i in pinned.get(fact, ()):
                self.memos[i] = NO_MEMO

    def label_of(self, v: Any) -> str:
        """How a value reads in logs and labels."""
        cls = v.__class__
        if cls is str:  # the commonest, first: a text, or an entity's id
            e = self.ents.get(v)
            if e is None:
                return v
            kind = self.rs.kinds.get(e["kind"])
            field = kind.label if kind is not None else None
            if field:  # each read once: entity ids are the commonest values labelled
                text = e.get(field)
                if text is not None and text != "":
                    return str(text)
            return v
        if cls is int:
            return str(v)
        if v is None:
            return "none"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, str):  # a subclass of str
            return self.label_of(str(v))
        if isinstance(v, list | dict):
            return self._label_of_many(v)
        return str(v)

    def _label_of_many(self, v: list | dict) -> str:
        """A list's or map's label: its items' labels, counted as work and at most MAX_STR long."""
        self.spend(len(v))
        label_of = self.label_of
        # a number's label is its digits: no call for the commonest items (dice, counts)
        parts = [str(x) if x.__class__ is int else label_of(x) for x in v] if isinstance(v, list) else \
            [f"{self.label_of(k)}: {self.label_of(x)}" for k, x in v.items()]
        size = sum(map(len, parts)) + 2 * len(parts)
        if size > MAX_STR:
            raise RuleFault(f"text too long: {size:,} characters (at most {MAX_STR:,})", None,
                            "a list too long to show?")
        return ", ".join(parts)

    @staticmethod
    def sort_key(v: Any) -> tuple:
        return (type(v).__name__, v) if not isinstance(v, list | dict) else ("z", json.dumps(v, sort_keys=True))

    def attr_fault(self, obj: Any, name: str, loc: Loc | None) -> RuleFault:
        if obj is None:
            return RuleFault(f"cannot read '{name}' of none", loc, "check that the value is set first")
        if obj not in self.ents:
            return RuleFault(f"cannot read '{name}' of {self.label_of(obj)}: it is not an entity", loc)
        return RuleFault(f"{self.label_of(obj)} has no field '{name}'", loc)

    def get_attr(self, obj: Any, name: str, loc: Loc | None) -> Any:
        if isinstance(obj, dict):
            if name in obj:
                return obj[name]
            raise RuleFault(f"no '{name}' in {self.label_of(obj)}", loc)
        e = self.ents.get(obj) if isinstance(obj, str) else None
        if e is None:
            raise self.attr_fault(obj, name, loc)
        if name in e:
            return e[name]
        if name == "id":
            return obj
        kind = self.rs.kinds.get(e["kind"])
        if kind is not None and name in kind.zones:
            return f"{name}@{obj}"
        raise self.attr_fault(obj, name, loc)

    def index_value(self, obj: Any, key: Any, loc: Loc | None) -> Any:
        if isinstance(obj, dict):
            if key in obj:
                return obj[key]
            raise RuleFault(f"no entry {self.label_of(key)} in {self.label_of(obj)}", loc)
        if isinstance(obj, list) and isinstance(key, int):
            if -len(obj) <= key < len(obj):
                return obj[key]
            raise RuleFault(f"index {key} is outside a list of {len(obj)}", loc)
        if isinstance(obj, str) and self._zone_def(obj) is not None and isinstance(key, int):
            return self.index_value(self.zone_items(obj), key, loc)
        raise RuleFault(f"cannot index {self.label_of(obj)}", loc)

    def as_seq(self, v: Any) -> list:
        if isinstance(v, list):
            return v
        if isinstance(v, dict):
            return list(v)
        if isinstance(v, str) and self._zone_def(v) is not None:
            return self.zone_items(v)
        raise RuleFault(f"cannot go through {self.label_of(v)}: it is not a list or zone")

    def as_map(self, v: Any, loc: Loc | None) -> dict:
        if isinstance(v, dict):
            return v
        raise RuleFault(f"{self.label_of(v)} is not a per-player map", loc)

    # ================================================================ log
    def narrate(self, text: str) -> None:
        self.log.append({"type": "text", "text": text})

    def narrate_to(self, text: str, to: Any) -> None:
        """``log E to P``: a text told only to some players (P: a player or a list of them),
        in the order given, without repeats; an empty list is a note for the umpire alone."""
        seats = [to] if isinstance(to, str) and to in self.players else self.as_seq(to) if to is not None else None
        if seats is None or any(not isinstance(p, str) or p not in self.players for p in seats):
            raise RuleFault(f"a log is told to players, not {self.label_of(to)}", None)
        self.log.append({"type": "text", "text": text, "to": list(dict.fromkeys(seats))})
