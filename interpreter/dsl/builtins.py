"""The built-in functions of the rules language, each declared once.

An entry says how many arguments the function takes, what it accepts and returns (its type
rule), the Python source it becomes (its implementation: ``{0}``, ``{1}``... are the
arguments' sources, a list argument already as a Python sequence) and its documentation
with an example. The compiler checks and writes calls from this table alone, and
``docs/dsl.md``'s table of built-in functions is generated from it (``python -m
interpreter.dsl.builtins`` prints it; a test keeps the two equal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..model import PLAYER_KIND
from . import types as T
from .types import Type

# What a built-in accepts:
LIST = "list"  # one list, zone or map (its first argument), gone through as a sequence
NUMBERS = "numbers"  # two or more whole numbers
VALUE = "value"  # anything: the arguments are checked by the entry's own rule, if any


@dataclass(frozen=True)
class Builtin:
    """One built-in function."""

    name: str
    lo: int  # fewest arguments
    hi: int  # most arguments (-1: any number)
    takes: str  # LIST, NUMBERS or VALUE
    returns: Callable[[list[Type]], Type]  # the result type, from the arguments' types
    source: str  # Python source; {0}, {1}... stand for the arguments
    doc: str  # the documentation's "result" column (Markdown)
    signature: str = ""  # as documented, e.g. ``min(L)``; default name(L)
    numbers: bool = False  # a LIST of numbers only
    query: bool = False  # also takes a query: name(for x in L where C)
    maps: bool = False  # its list argument must be a per-player map


def _el(ts: list[Type]) -> Type:
    return T.element(ts[0])


BUILTINS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("count", 1, 1, LIST, lambda ts: T.INT, "len({0})", "number of items in a list, zone or map",
            query=True),
    Builtin("sum", 1, 1, LIST, lambda ts: T.INT, "_ck(sum(_w(g, {0})))", "sum of a list of numbers (0 when empty)",
            numbers=True, query=True),
    Builtin("min", 1, 1, LIST, lambda ts: T.INT if _el(ts) == T.INT else T.ANY, "_min(g, {0}, 'min')",
            "smallest / largest of a list of numbers; **an empty list is a runtime error** (hint: check "
            "`count(...) > 0` first)", "`min(L)`, `max(L)`", numbers=True, query=True),
    Builtin("max", 1, 1, LIST, lambda ts: T.INT if _el(ts) == T.INT else T.ANY, "_min(g, {0}, 'max')", "",
            numbers=True, query=True),
    Builtin("any", 1, 1, LIST, lambda ts: T.BOOL, "any(_w(g, {0}))",
            "whether some / every item is true (`any([])` is false, `all([])` is true); with a query, "
            "`any(for x in L where C)`, whether some / every `x` of `L` satisfies `C` — e.g. "
            "`any(for c in p.hand where c.value > 3)`", "`any(L)`, `all(L)`", query=True),
    Builtin("all", 1, 1, LIST, lambda ts: T.BOOL, "all(_w(g, {0}))", "", query=True),
    # first/last without a call: an empty list (or none) gives the (None,) after 'or'
    Builtin("first", 1, 1, LIST, _el, "({0} or _NONE1)[0]",
            "first / last item; **`none` when empty** (a zone's first item is its top)", "`first(L)`, `last(L)`",
            query=True),
    Builtin("last", 1, 1, LIST, _el, "({0} or _NONE1)[-1]", "", query=True),
    Builtin("abs", 1, 1, VALUE, lambda ts: T.INT, "abs({0})", "absolute value", "`abs(n)`"),
    Builtin("sort", 1, 1, LIST, lambda ts: T.list_of(_el(ts)), "_sorted(g, {0})",
            "sorted copy: numbers ascending, text (and ids) alphabetically", query=True),
    Builtin("reverse", 1, 1, LIST, lambda ts: T.list_of(_el(ts)), "list(reversed(_w(g, {0})))", "reversed copy"),
    Builtin("unique", 1, 1, LIST, lambda ts: T.list_of(_el(ts)), "list(dict.fromkeys(_w(g, {0})))",
            "copy without repeats, first occurrence kept", query=True),
    Builtin("list", 1, 1, LIST, lambda ts: T.list_of(_el(ts)), "list(_w(g, {0}))",
            "a list copy of a list or zone (a snapshot of a zone's contents)", query=True),
    Builtin("index_of", 2, 2, LIST, lambda ts: T.INT, "_index_of(_w(g, {0}), {1})",
            "position of `x` in `L`, **-1** when absent", "`index_of(L, x)`"),
    Builtin("next_in", 2, 2, LIST, _el, "_next_in(g, _w(g, {0}), {1})",
            "the item after `x`, **cyclic** (after the last comes the first); runtime error if `x` is not in "
            "`L`. `next_in(players, p)` is the next seat", "`next_in(L, x)`"),
    Builtin("owner", 1, 1, VALUE, lambda ts: T.ent("*"), "g.zone_owner({0})",
            "the owner of a zone key (`owner(p.hand)` is `p`); `none` for a single zone", "`owner(z)`"),
    Builtin("str", 1, 1, VALUE, lambda ts: T.STR, "g.label_of({0})",
            "the display text of a value (an entity's label, a list joined with `, `)", "`str(x)`"),
    Builtin("distance", 3, 3, VALUE, lambda ts: T.ANY, "g.distance({0}, {1}, {2}, None)",
            "fewest steps from entity `a` to entity `b` following the **list field** named by text `f` "
            "(breadth-first); 0 when `a == b`; **`none` if `b` is unreachable**; runtime error if an entity "
            "reached has no such list field", "`distance(a, b, f)`"),
    Builtin("divide", 3, 3, VALUE, lambda ts: T.INT, "_divide(g, {0}, {1}, {2})",
            "`a / b` with a rounding, the text `r`: `\"down\"` (as `/`), `\"up\"`, `\"half_up\"` (nearest, .5 up) or "
            "`\"half_down\"` (nearest, .5 down): `divide(7, 2, \"half_down\")` is 3, `divide(3 * 40, 100, \"half_up\")` "
            "(40% of 3) is 1", "`divide(a, b, r)`"),
    Builtin("keys", 1, 1, LIST, lambda ts: T.list_of(T.ent(PLAYER_KIND)), "list(g.as_map({0}, None))",
            "the players of a per-player map", "`keys(m)`", maps=True),
    Builtin("combinations", 2, 2, LIST, lambda ts: T.list_of(T.list_of(_el(ts))),
            "_subsets(g, {0}, {1}, 'combinations')", "every `k`-item sub-list of `L`, in order",
            "`combinations(L, k)`"),
    Builtin("subsets", 1, 1, LIST, lambda ts: T.list_of(T.list_of(_el(ts))), "_subsets(g, {0}, None, 'subsets')",
            "every sub-list of `L`, from the empty list up to `L` itself", "`subsets(L)`"),
]}

# min(a, b, ...) and max(a, b, ...) of two or more numbers
SEVERAL = {"min": Builtin("min", 2, -1, NUMBERS, lambda ts: T.INT, "min({*})",
                          "smallest / largest of two or more numbers", "`min(a, b, ...)`, `max(a, b, ...)`"),
           "max": Builtin("max", 2, -1, NUMBERS, lambda ts: T.INT, "max({*})", "")}
QUERY_FUNCS = sorted(n for n, b in BUILTINS.items() if b.query)


def lookup(name: str, args: int) -> Builtin | None:
    """The entry for ``name`` called with ``args`` arguments (None: no such built-in)."""
    if name in SEVERAL and args >= 2:
        return SEVERAL[name]
    return BUILTINS.get(name)


def arity_text(name: str) -> str:
    """How many arguments ``name`` takes, for a message."""
    if name in SEVERAL:
        return "1 or more"
    b = BUILTINS[name]
    return str(b.lo) if b.lo == b.hi else f"{b.lo} or more"


def markdown_table() -> str:
    """The table of built-in functions of docs/dsl.md."""
    rows = ["| function | result |", "| --- | --- |"]
    for b in [*BUILTINS.values(), *SEVERAL.values()]:
        if not b.doc:
            continue  # documented on the row of its pair (min/max, any/all, first/last)
        rows.append(f"| {b.signature or f'`{b.name}(L)`'} | {b.doc} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
