"""The small functions generated rules code calls, besides the game's own methods.

Each checks what the rules language promises (docs/dsl.md, "Limits") and raises a
:class:`RuleFault` without a place: the generated frame that called it gives the place
(see source.fault_of). Hot paths stay inline in the generated code; these are the rest.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from ..model import (
    MAX_INT,
    MAX_LIST,
    MAX_STR,
    NO_MEMO,
    RuleFault,
    checked_size_error,
    copy_plain,
    int_fault,
    work_fault,
)
from . import graph
from .zoneindex import _ix

MAX_RANGE = 100_000  # a longer a..b is a rules bug; refusing it keeps memory bounded
MAX_SUBSETS = 1 << 16  # a choice among more subsets than this is a rules bug, not a decision


def row_key(value: Any) -> str:
    """The key a value looks a table row up by (rows are read from YAML keys: text)."""
    return str(value) if not isinstance(value, bool) else str(value).lower()


def _table(g: Any, table: Any, *keys: Any) -> Any:
    row: Any = table.rows
    for kv in keys:
        try:
            row = row[row_key(kv)]
        except (KeyError, TypeError):
            if table.has_default:
                return table.default
            raise RuleFault(f"table '{table.name}' has no row for {g.label_of(kv)!r}") from None
    return row


def _table1(g: Any, table: Any, kv: Any) -> Any:
    """``_table`` of a table with one key (the commonest): a text key is its own row key, so
    no call; a missing row (its default, or the fault) is ``_table``'s answer."""
    try:
        return table.rows[kv if kv.__class__ is str else row_key(kv)]
    except (KeyError, TypeError):
        return _table(g, table, kv)


def _index_of(s: Any, x: Any) -> int:
    return s.index(x) if x in s else -1


def _next_in(g: Any, s: Any, x: Any) -> Any:
    if x not in s:
        raise RuleFault(f"next_in(): {g.label_of(x)} is not in the list")
    return s[(s.index(x) + 1) % len(s)]


def _span(g: Any, lo: int, hi: int) -> list[int]:
    if hi - lo >= MAX_RANGE:
        raise RuleFault(f"the range {g.label_of(lo)[:24]}..{g.label_of(hi)[:24]} is too long "
                        f"(more than {MAX_RANGE:,} numbers)")
    _w(g, range(lo, hi + 1))
    return list(range(lo, hi + 1))


def _w(g: Any, s: Any) -> Any:
    """``s`` (a list about to be gone through), counting its items as work."""
    w = g.work + len(s)
    g.work = w
    if w > g.work_budget:
        raise work_fault(g.work_budget)
    return s


def _wf(g: Any) -> None:
    raise work_fault(g.work_budget)


def _deep(name: str, depth: int) -> None:
    raise RuleFault(f"function '{name}' nested more than {depth} deep (endless recursion?)")


def _ck(v: Any) -> Any:
    if v.__class__ is int and not -MAX_INT <= v <= MAX_INT:
        raise int_fault(v, None)
    return v


def _mul(a: Any, b: Any) -> Any:
    v = a * b
    if v.__class__ is int and not -MAX_INT <= v <= MAX_INT:
        raise int_fault(v, None)
    return v


def _sz(s: str) -> str:
    if len(s) > MAX_STR:
        raise RuleFault(f"text too long: {len(s):,} characters (at most {MAX_STR:,})", None,
                        "a text grows without end?")
    return s


def _min(g: Any, s: Any, name: str = "min") -> Any:
    if not s:
        raise RuleFault(f"{name}() of an empty list", None, "check count(...) > 0 first")
    return min(_w(g, s)) if name == "min" else max(_w(g, s))


def sorted_values(g: Any, s: Any) -> list:
    """``sort()``: the items in the engine's order, each gone through (a list item as its length)."""
    _w(g, s)
    if any(x.__class__ is list or x.__class__ is dict for x in s):  # keyed by their JSON text
        g.spend(sum(len(x) for x in s if x.__class__ is list or x.__class__ is dict))
    return sorted(s, key=g.sort_key)


def equal_lists(g: Any, a: Any, b: Any) -> bool:
    """``a == b`` where a list is compared: as long as the shorter list, in work."""
    if a.__class__ is list and b.__class__ is list:
        g.spend(min(len(a), len(b)))
    return bool(a == b)


def _cat(g: Any, a: Any, b: Any) -> list:
    n = len(a) + len(b)
    if n > MAX_LIST:
        raise checked_size_error(n, None)
    g.spend(n)
    if a.__class__ is list and b.__class__ is list:  # the usual case: one new list, no copies first
        return a + b
    return list(a) + list(b)


def _subsets(g: Any, items: Any, k: int | None, name: str) -> list:
    items = list(items)
    sizes = [k] if k is not None else range(len(items) + 1)
    total = sum(math.comb(len(items), n) for n in sizes if 0 <= n <= len(items))
    if total > MAX_SUBSETS:
        raise RuleFault(f"{name}() would make {total} lists (more than {MAX_SUBSETS})", None, "narrow the list first")
    g.spend(total + len(items))
    return [list(c) for n in sizes for c in itertools.combinations(items, n)]


def _fold(g: Any, ops: tuple[str, ...], values: tuple[Any, ...]) -> Any:
    """A long chain ``a + b - c * d ...`` over its operands (already computed), left to right."""
    v = values[0]
    for op, x in zip(ops, values[1:], strict=True):
        if op == "+" and (v.__class__ is list or x.__class__ is list):
            v = _cat(g, v, x)
        elif op == "+" and (v.__class__ is str or x.__class__ is str):
            v = _sz(g.label_of(v) + g.label_of(x))
        elif op in ("/", "%") and x == 0:
            raise RuleFault("division by zero")
        else:
            v = v + x if op == "+" else v - x if op == "-" else _mul(v, x) if op == "*" else v // x if op == "/" \
                else v % x
    return v


def _step(g: Any, name: str, cur: Any, v: Any, op: str) -> Any:
    """``set NAME += v`` / ``-= v`` of a local or global that holds ``cur``."""
    if not isinstance(cur, int):
        raise RuleFault(f"cannot {'increase' if op == '+' else 'decrease'} '{name}': it is {g.label_of(cur)}")
    v = cur + v if op == "+" else cur - v
    if v.__class__ is int and not -MAX_INT <= v <= MAX_INT:  # _ck, inline (a call less a step)
        raise int_fault(v, None)
    return v


def _fproc(g: Any, e: Any, field: str) -> str:
    """The procedure entity ``e`` carries in the procedure-valued ``field`` (``call e.FIELD()``):
    its own, else its kind's default (an entity made by ``create`` has only that)."""
    name = g.rs.field_procs[field].get(e)
    if name is not None:
        return str(name)
    rec = g.ents.get(e) if isinstance(e, str) else None
    pf = g.rs.kinds[rec["kind"]].procs.get(field) if rec is not None else None
    if pf is None or pf.default is None:
        what = "none" if e is None else repr(g.label_of(e))
        raise RuleFault(f"cannot call '{field}' of {what}: it carries no such procedure",
                        None, "check which entity the call is given")
    return str(pf.default)


# The Python name of every local of generated code -> its name in a frame's saved locals
# (``v_x`` -> ``x``, ``w_x1`` -> ``$x1`` for a loop's place); filled as each function is compiled.
SAVED_NAMES: dict[str, str] = {}


def note_locals(code: Any) -> None:
    """Note the locals of a compiled generated function (``_save`` keeps only those)."""
    for k in (*code.co_varnames, *code.co_cellvars):
        if k[:2] in ("v_", "w_") and k not in SAVED_NAMES:
            SAVED_NAMES[k] = k[2:] if k[0] == "v" else "$" + k[2:]


def saved_pairs(code: Any, source: str) -> tuple[tuple[str, str], ...] | None:
    """The locals ``_save`` writes for a pausing procedure: (Python name, name in the frame),
    in the order ``locals()`` lists them (the code's locals, then its cells); None when the
    procedure calls ``locals()`` elsewhere too (a modifier keeping locals): a second call in one
    run updates the first one's dict, where the names bound in between come last."""
    if source.count("locals()") != source.count("_save(fr, locals()"):
        return None
    return tuple((k, SAVED_NAMES[k]) for k in dict.fromkeys((*code.co_varnames, *code.co_cellvars))
                 if k in SAVED_NAMES)


def _save(fr: dict, values: dict[str, Any], pairs: tuple[tuple[str, str], ...] | None) -> dict[str, Any]:
    """Write a pausing procedure's locals (``v_x``, and ``w_x1`` for a loop's place) to its frame:
    those bound, in the order of ``values`` (``locals()``); ``pairs``: see saved_pairs."""
    # plain loops, not a dict comprehension: this runs at every pause, and a comprehension is
    # a function call of its own (Python 3.11)
    saved = {}
    if pairs is not None:  # the procedure's own names only, not every local of the call
        for k, n in pairs:
            if k in values:
                saved[n] = values[k]
    else:
        names = SAVED_NAMES
        for k, v in values.items():
            if k in names:
                saved[names[k]] = v
    fr["locals"] = saved
    return saved


def _captured(values: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The locals a modifier keeps (those set here)."""
    return {n: values["v_" + n] for n in names if "v_" + n in values}


HELPERS: dict[str, Any] = {
    "_reach": graph.reach, "_cheapest": graph.cheapest, "_divide": graph.divide,
    "_table": _table, "_table1": _table1, "_NONE1": (None,), "_index_of": _index_of, "_next_in": _next_in,
    "_span": _span, "_w": _w, "_ck": _ck, "_mul": _mul, "_sz": _sz, "_min": _min, "_cat": _cat,
    "_sorted": sorted_values, "_eq": equal_lists, "_subsets": _subsets, "_step": _step, "_fold": _fold, "_save": _save, "_fproc": _fproc,
    "_captured": _captured, "_ix": _ix, "_NO_MEMO": NO_MEMO, "_wf": _wf, "_deep": _deep, "_copy": copy_plain, "_E": {}, "RuleFault": RuleFault,
}
