"""Queries that look items of a zone up by a field's value instead of going through the zone.

A query over a zone whose condition starts with ``x.FIELD == v`` (``v`` a value that cannot
fail to read: a literal, a constant, a global, or a local that is surely set) keeps only the
items whose FIELD is ``v``: the others fail the condition at its first test. Asked over and
over with different values (a function called for every name of a card, every player) the
whole zone is gone through each time; an index of the zone by that field (value -> the
items that have it, in the zone's order) answers each call with just the items that can
match. The compiled query is ``[... for x in _ix(g, ZONE, FIELD, v) if CONDITION]``: the
condition is still tested, whole, on every item ``_ix`` gives, so the result and every
error are those of going through the zone, and ``_ix`` counts the zone's items as work, as
going through it does.

The indexes live in the game's memos (``Game.memos``), in one slot after the functions' own
(``Ruleset.index_slots``: each field looked up by -> that slot), a dict from (field, a zone's
list of items) to its index. The slot is forgotten, like the results of a function that
reads those fields and the items of zones, by every change that could make an index stale
(a move, a shuffle, one of the fields set, entities made or destroyed, a decision in a game
whose state was read from outside): see
functions.memo_readers. (A slot per field would keep an index when another field is set,
but every slot costs every change a test, and moves and decisions forget them all anyway.)
So a game's copies that share its memos (Views.copy(memos=True)) share its indexes under
the same rule as the functions' results. A zone's list is the key (by its id, the list kept
alongside so that the id cannot be reused): a copy writes a zone it shares as a new list, so
an index is never read for a list other than the one it was made from.

A field a query looks up by but that has no slot (a text compiled after the slots were
numbered) is never indexed: setting it would not forget an index.
"""

from __future__ import annotations

from typing import Any

from ..model import NO_MEMO, work_fault

# The fewest items a zone indexed has: going through a few items costs less than the
# bookkeeping of an index (a zone's lookup, an entry's), let alone making one.
INDEXED_FROM = 12

# What a zone's entry holds besides an index: the zone was gone through once since the slot
# was last forgotten (the index is made at the second look: a zone looked at once is gone
# through once, as before, not twice), or its items cannot be indexed by the field (one has
# no such field, or its value cannot be a key): they are always gone through.
_ONCE = "once"
_SCAN = "scan"


def _ix(g: Any, items: list[str], field: str, value: Any) -> list[str]:
    """The items of a zone (``items``, its list) whose ``field`` may be ``value``, in the zone's
    order: those whose field is ``value`` (a list the caller only goes through), else every item;
    counts every item of the zone as work (the work of going through it)."""
    w = g.work + len(items)
    g.work = w
    if w > g.work_budget:
        raise work_fault(g.work_budget)
    if len(items) < INDEXED_FROM:
        return items
    slot = g.rs.index_slots.get(field)
    if slot is None:  # a query compiled after the slots were numbered: it goes through the zone
        return items
    memos = g.memos
    zones = memos[slot]
    key = (field, id(items))
    if zones is NO_MEMO:  # the first look since the slot was forgotten
        memos[slot] = {key: (items, _ONCE)}
        g.filled |= 1 << slot  # a slot holding a dict is one a change must look at (Values)
        return items
    entry = zones.get(key)
    if entry is None:
        zones[key] = (items, _ONCE)
        return items
    index = entry[1]
    if index is _ONCE:
        index = _index(g.ents, items, field)
        zones[key] = (items, index)
    if index is _SCAN:
        return items
    try:
        return index.get(value, _NONE)
    except TypeError:  # a value that cannot be a key (a list): compared with every item
        return items


_NONE: list[str] = []  # what no item matches (never changed: callers only go through it)


def _index(ents: dict[str, dict[str, Any]], items: list[str], field: str) -> dict[Any, list[str]] | str:
    """``items`` by the value of their ``field``, each value's items in order; _SCAN when one has
    no such field or a value that cannot be a key (going through the zone then says what is
    wrong, or compares as it always did)."""
    index: dict[Any, list[str]] = {}
    try:
        for x in items:
            v = ents[x][field]
            got = index.get(v)
            if got is None:
                index[v] = [x]
            else:
                got.append(x)
    except (KeyError, TypeError):
        return _SCAN
    return index
