"""Rules functions as Python: their positional twins, which remember results, and which
remembered results each change of the state makes stale.

A *cheap* function (it goes through no list, calls only cheap functions, is not recursive,
and its body with theirs is small: at most CHEAP_STEPS reads and calls) does a bounded amount
of work, less than looking its result up: it is not remembered and its calls count no work.
Every other function remembers its results in its own memo, forgotten only when something it
reads changes (see Expressions.read and Game.changed_field).

Only a function that may run inside itself (``recursive``: on a cycle of calls, or calling
what cannot be told, such as a modifier point) counts how deep calls nest, to fail, located,
past MAX_CALL_DEPTH instead of at Python's own limit; any other nests no deeper than the chain
of distinct functions it calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..model import CALL_WORK, MAX_CALL_DEPTH, FunctionDef, Ruleset
from .procwriter import function_source, mixed_params
from .source import CodeGen, Src


def write_functions(gen: CodeGen, rs: Ruleset, functions: dict[str, tuple[FunctionDef, Src]],
                    reads: dict[str, set[tuple[str, ...]]], indexed: Iterable[str] = ()) -> set[str]:
    """The positional twins of the rules functions; gives the cheap ones.

    A *cheap* function — it goes through no list, calls only cheap functions, is not
    recursive and is small — does a bounded amount of work, less than looking its result up:
    it is not remembered and its calls count no work. Every other function remembers its results.
    ``indexed``: the fields some query looks the items of a zone up by (zoneindex.py), whose
    indexes share a memo slot.
    """
    twin = {name: gen.twin("F", name) for name in functions}
    facts = {name: cost_facts(src, {v: k for k, v in twin.items()}) for name, (_f, src) in functions.items()}
    cheap: dict[str, int] = {}  # cheap function -> the reads and calls of a call of it, callees' included
    grew = True
    while grew:  # least fixed point: a function on a cycle of calls is never cheap
        grew = False
        for name, (bounded, called, steps) in facts.items():
            if name not in cheap and bounded and all(c in cheap for c in called):
                total = steps + sum(cheap[c] for c in called)
                if total <= CHEAP_STEPS:
                    cheap[name] = total
                    grew = True
    index = memo_index(functions, set(cheap))
    memo_readers(rs, reads, index, indexed)
    deep = recursive(functions, reads)
    for name, (fdef, src) in functions.items():
        gen.lazy(twin[name], function_source(gen, twin[name], name, list(fdef.params), src, src.where,
                                             CALL_WORK, MAX_CALL_DEPTH if name in deep else None,
                                             index.get(name), index.get(name) not in rs.memo_constant,
                                             mixed_params(fdef.params)))
    return set(cheap)


def recursive(names: Iterable[str], reads: dict[str, set[tuple[str, ...]]]) -> set[str]:
    """The functions that may run inside themselves: those on a cycle of calls, and those whose
    calls cannot all be told.

    A function's reads name every function it calls (('call', NAME), see Expressions.read), or
    say ('all',) when what it reads cannot be told: a call of a modifier point (whose modifiers'
    conditions may call any function) and every other call the rules make at run time read
    ('all',), since its results must be forgotten at any change. So a recursion that goes
    through something other than a call written in a body passes through a function reading
    ('all',), and every other recursion is a cycle of written calls.
    """
    callees: dict[str, list[str]] = {}
    out: set[str] = set()
    for name in names:
        r = reads.get(name, {("all",)})
        if ("all",) in r:
            out.add(name)
        callees[name] = sorted(f[1] for f in r if f[0] == "call" and f[1] in reads)
    return out | on_cycles(callees)


def on_cycles(graph: dict[str, list[str]]) -> set[str]:
    """The nodes of ``graph`` (node -> its successors) on some cycle: Tarjan's strongly
    connected components, without Python recursion (rules may have thousands of functions)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: set[str] = set()
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            succ = graph.get(node, [])
            while i < len(succ) and succ[i] in index:
                if succ[i] in on_stack:
                    low[node] = min(low[node], index[succ[i]])
                i += 1
            if i < len(succ):
                work += [(node, i + 1), (succ[i], 0)]
                continue
            if low[node] == index[node]:  # the root of a component: pop it
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1 or node in succ:
                    out.update(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def memo_index(names: Iterable[str], cheap: set[str]) -> dict[str, int]:
    """Each function that remembers its results -> the number of its memo."""
    return {name: i for i, name in enumerate(sorted(n for n in names if n not in cheap))}


def memo_readers(rs: Ruleset, reads_of: dict[str, set[tuple[str, ...]]], index: dict[str, int],
                 indexed: Iterable[str] = ()) -> None:
    """Which remembered results each change of the state makes stale.

    A function's results are forgotten only when something it reads, or a function it calls
    reads, changes: a field of that name, a global, the items of zones (see
    Expressions.read). A function whose reads cannot be told is forgotten at every change.
    The indexes of zones by the fields ``indexed`` (one slot, after the functions') read
    those fields and the items of zones, and are forgotten likewise.
    """
    reads: dict[str, set[tuple[str, ...]]] = {n: set(r) for n, r in reads_of.items()}
    grew = True
    while grew:  # what a function reads includes what the functions it calls read
        grew = False
        for r in reads.values():
            for fact in [f for f in r if f[0] == "call"]:
                more = reads.get(fact[1], {("all",)}) - r
                if more:
                    r |= more
                    grew = True
    labels = {k.label for k in rs.kinds.values() if k.label}
    readers: dict[tuple[str, ...], list[int]] = {}
    always: list[int] = []
    for name, i in index.items():
        r = reads.get(name, {("all",)})
        if ("all",) in r:
            always.append(i)
            continue
        for fact in r:
            if fact == ("label",):
                for lf in labels:
                    readers.setdefault(("field", lf), []).append(i)
            elif fact[0] in ("field", "glob", "zones"):
                readers.setdefault(fact, []).append(i)
        readers.setdefault(("field", "zone"), [])
    # moving an entity changes the items of zones and its 'zone'
    moved = set(readers.get(("zones",), [])) | set(readers.get(("field", "zone"), []))
    # One slot holds every index (of any field): each slot costs every change a test, and
    # most changes (a move, a decision) forget them all anyway.
    rs.index_slots = {f: len(index) for f in sorted(set(indexed))}
    for f, i in rs.index_slots.items():
        readers.setdefault(("field", f), []).append(i)
        moved.add(i)
    readers[("zones",)] = sorted(moved)
    rs.memo_count = len(index) + (1 if rs.index_slots else 0)
    rs.memo_always = frozenset(always)
    # A function that reads only fields no rule sets (nor an entity's zone) gives the same
    # results all game long: a change of modifiers does not forget them (Game.changed).
    constant = {name for name, i in index.items()
                if all(f[0] == "field" and f[1] != "zone" and f[1] not in rs.fields_written
                       for f in reads.get(name, {("all",)}) if f[0] != "call")}
    rs.memo_constant = tuple(sorted(index[name] for name in constant))
    rs.memo_volatile = tuple(sorted([i for name, i in index.items() if name not in constant]
                                    + list(set(rs.index_slots.values()))))
    rs.memo_readers = {fact: frozenset(ids) | rs.memo_always for fact, ids in readers.items()}
    rs.memo_always_bits = _bits(rs.memo_always)
    rs.memo_reader_bits = {fact: _bits(ids) for fact, ids in rs.memo_readers.items()}
    rs.memo_volatile_bits = _bits(rs.memo_volatile)
    rs.memo_pinned = {fact: tuple(sorted(ids & set(rs.memo_constant))) for fact, ids in rs.memo_readers.items()
                      if ids & set(rs.memo_constant)}
    rs.field_reader_bits = {fact[1]: bits for fact, bits in rs.memo_reader_bits.items() if fact[0] == "field"}
    rs.field_pinned = {fact[1]: ids for fact, ids in rs.memo_pinned.items() if fact[0] == "field"}


def _bits(slots: Iterable[int]) -> int:
    """The memo slots ``slots`` as the bits of a number (slot i: bit i), as Game.filled holds them."""
    return sum(1 << i for i in set(slots))


# what in a function's source goes through a list or may run long (see Compiler._write_functions)
_COSTLY = ("_w(", "_ix(", "_reach(", "_cheapest(", "_sorted(", "_span(", "_subsets(", "_cat(", "_eq(", "_fold(", "g.distance(", "g.kind_ids(",
           "g.label_of(", "g.as_seq(", "g.point(", "list(", "_sz(", "_min(")


# The most reads and calls (counted as the subscripts and calls in its Python source, those of
# the cheap functions it calls included) a function may make and still be cheap: past this,
# looking a result up costs less than working it out again (a dozen field reads, called for
# every item of a list for every value of another, as a battle may do).
CHEAP_STEPS = 24


def cost_facts(src: Src, twins: dict[str, str]) -> tuple[bool, set[str], int]:
    """Whether an expression surely does a bounded amount of work, the functions it calls,
    and how many reads and calls it makes (at most)."""
    bounded, called, steps = True, set[str](), 0
    stack = [src]
    while stack:
        s = stack.pop()
        if s.binds is not None:
            bounded = False
        for piece in s.pieces:
            if piece.__class__ is str:
                if bounded and (any(c in piece for c in _COSTLY) or "Q" in piece):
                    bounded = False
                steps += piece.count("[") + piece.count("(")
                if "F" in piece:
                    called.update(twins[m] for m in _TWIN_CALL.findall(piece) if m in twins)
        stack.extend(s.parts)
    return bounded, called, steps


_TWIN_CALL = re.compile(r"\b(F\d+)\(")
