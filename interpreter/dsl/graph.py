"""Searches over the entities of a board, and division with a chosen rounding.

``reachable(s from A over NEXT)`` and ``cheapest(s from A to B over NEXT)`` (docs/dsl.md,
"Graph searches") walk a graph the rules describe one node at a time: ``NEXT`` is an
expression giving, for the node ``s`` reached, the nodes one step on — entities, or
``[entity, cost]`` pairs. The graph is never built: lines of communication, paths that avoid
enemies, movement costs that depend on terrain or on who stands where are all the same walk.
Every step looked at counts as work (docs/dsl.md, "Limits").
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

from ..model import RuleFault

ROUNDINGS = ("down", "up", "half_up", "half_down")


def _starts(g: Any, start: Any) -> list[Any]:
    items = start if start.__class__ is list else [start]
    for x in items:
        if x.__class__ is not str:
            raise RuleFault(f"a graph search starts from entities, not {g.label_of(x)[:40]}")
    return items


def _edges(g: Any, name: str, items: Any) -> list[tuple[Any, int]]:
    """The (node, cost) steps one ``over`` expression gave."""
    if items.__class__ is not list:
        raise RuleFault(f"{name}(): 'over' must give a list of the next nodes, not {g.label_of(items)[:40]}")
    g.spend(len(items))
    out = []
    for it in items:
        if it.__class__ is str:
            out.append((it, 1))
        elif it.__class__ is list and len(it) == 2 and it[0].__class__ is str and it[1].__class__ is int:
            if it[1] < 0:
                raise RuleFault(f"{name}(): a step costs {it[1]}; costs are 0 or more")
            out.append((it[0], it[1]))
        else:
            raise RuleFault(f"{name}(): a step is an entity or an [entity, cost] pair, not {g.label_of(it)[:40]}",
                            None, "write the next nodes as [t for t in s.links], or as [[t, cost] for t in s.links]")
    return out


def reach(g: Any, start: Any, step: Callable[[Any], Any]) -> list[Any]:
    """The nodes reachable from ``start`` (an entity or a list of them, included), nearest first."""
    seen = dict.fromkeys(_starts(g, start))
    frontier = list(seen)
    while frontier:
        nxt = []
        for x in frontier:
            for y, _cost in _edges(g, "reachable", step(x)):
                if y not in seen:
                    seen[y] = None
                    nxt.append(y)
        frontier = nxt
    return list(seen)


def cheapest(g: Any, start: Any, goal: Any, step: Callable[[Any], Any]) -> int | None:
    """The least total cost from ``start`` to ``goal`` (a node, or a list: the nearest of them);
    none when no path reaches it. Dijkstra's search: costs are whole numbers, 0 or more."""
    goals = set(goal) if goal.__class__ is list else {goal}
    order = itertools.count()
    heap = [(0, next(order), s) for s in _starts(g, start)]
    best = {s: 0 for _d, _i, s in heap}
    done: set[Any] = set()
    while heap:
        d, _i, x = heapq.heappop(heap)
        if x in done:
            continue
        if x in goals:
            return d
        done.add(x)
        for y, cost in _edges(g, "cheapest", step(x)):
            nd = d + cost
            if y not in done and (y not in best or nd < best[y]):
                best[y] = nd
                heapq.heappush(heap, (nd, next(order), y))
    return None


def divide(g: Any, a: Any, b: Any, rounding: Any) -> int:
    """``divide(a, b, rounding)``: a / b rounded down, up, or to the nearest with halves up or down."""
    if a.__class__ is not int or b.__class__ is not int:
        raise RuleFault(f"divide() needs whole numbers, not {g.label_of(a)[:24]} and {g.label_of(b)[:24]}")
    if b == 0:
        raise RuleFault("division by zero")
    if b < 0:
        a, b = -a, -b
    q, r = divmod(a, b)  # a = q*b + r, 0 <= r < b
    if rounding == "down":
        return q
    if rounding == "up":
        return q + (r > 0)
    if rounding == "half_up":
        return q + (2 * r >= b)
    if rounding == "half_down":
        return q + (2 * r > b)
    raise RuleFault(f"divide(): unknown rounding {g.label_of(rounding)[:24]!r}", None,
                    "the roundings are " + ", ".join(f'"{r}"' for r in ROUNDINGS))
