"""Lists, queries, graph searches and calls of the rules language: checked, and written as
Python source.

A mixin of :class:`~.expressions.Expressions` (which holds names, fields and indexing, and
the helpers used here): list literals, ``[head for x in L where C]`` and the functions that
take a query (``count(for x in L where C)``...), ``reachable``/``cheapest`` searches, and calls
of the rules' functions, modifier points and built-ins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..diagnostics import did_you_mean
from . import ast as A
from . import builtins as B
from . import types as T
from .operators import NOT_CONSTANT, Abort, Operators, Scope, constant
from .source import CodeGen, Src, local
from .types import Type


class Queries(Operators):
    """Lists, queries, graph searches and calls (a mixin: the helpers are those of Expressions)."""

    if TYPE_CHECKING:
        gen: CodeGen
        reads: set[tuple[str, ...]] | None
        indexed: set[str]

        @property
        def zone_names(self) -> set[str]: ...

    # ------------------------------------------------------------ lists and queries
    def x_ListLit(self, n: A.ListLit, scope: Scope) -> tuple[Src, Type]:
        parts = []
        t = T.NONE
        for item in n.items:
            s, it = self.expr(item, scope)
            parts.append(s)
            t = it if t == T.NONE else T.join(t, it)
        text = "[" + ", ".join(f"{{{i}}}" for i in range(len(parts))) + "]"
        return self.src(text, *parts, pos=n.pos), T.list_of(t if t != T.NONE else T.ANY)

    def query(self, q: A.Query, scope: Scope) -> tuple[Src, Type]:
        """``[head for x in source if where]``, each item gone through counted as work."""
        source, st = self.expr(q.source, scope)
        if not T.iterable(st):
            self.err(q.source.pos, f"wrong type: cannot go through {T.describe(st)}")
            raise Abort
        inner = dict(scope)
        inner[q.var] = T.element(st)
        parts = [self.items(q, source, st, scope)]
        text = f" for {local(q.var)} in {{0}}"
        if q.where is not None:
            parts.append(self.want(q.where, inner, T.BOOL, "a 'where' condition"))
            text += " if {1}"
        bound_from = 1  # the condition and head see the item
        if q.head is not None:
            head, ht = self.expr(q.head, inner)
            text = f"[{{{len(parts)}}}" + text + "]"
            parts.append(head)
        else:
            head, ht = None, T.element(st)
            text = "[" + local(q.var) + text + "]"
        return self.src(text, *parts, pos=q.pos, binds=q.var, bound_from=bound_from), T.list_of(ht)

    def filter_loop(self, q: A.Query, scope: Scope) -> tuple[Src, Src]:
        """A filtering query ``[x for x in L where C]`` (checked already, by ``query``) as the
        loop an action's lister writes over it: the source it goes through, as ``query`` goes
        through it (its items counted as work, or a zone's index), and the condition C."""
        assert q.where is not None
        source, st = self.expr(q.source, scope)
        inner = dict(scope)
        inner[q.var] = T.element(st)
        items = self.items(q, source, st, scope)
        return items, self.want(q.where, inner, T.BOOL, "a 'where' condition")

    def items(self, q: A.Query, source: Src, st: Type, scope: Scope) -> Src:
        """What a query goes through: its list, each item counted as work (``_w``), or only the
        items of a zone whose field is the value its condition starts by comparing with
        (``_ix``: see lookup_key and zoneindex.py)."""
        seq = self.seq(source, st, q.source.pos)
        key = self.lookup_key(q, st, scope)
        if key is None:
            return self.src("_w(g, {0})", seq, pos=q.pos)
        field, value = key
        self.indexed.add(field)
        return self.src(f"_ix(g, {{0}}, {self.k(field)}, {{1}})", seq, value, pos=q.pos)

    def lookup_key(self, q: A.Query, st: Type, scope: Scope) -> tuple[str, Src] | None:
        """(FIELD, the source of v) when the query goes through a zone's items and its condition
        starts with ``x.FIELD == v`` (or ``v == x.FIELD``), ``x`` its item and FIELD a field read
        straight from the item's entity, ``v`` a value that cannot fail to read nor change while
        the query runs: then only the items whose FIELD is v can pass (see zoneindex.py)."""
        if q.where is None or not T.is_zone(st):
            return None
        test = A.conjuncts(q.where)[0]
        if not isinstance(test, A.BinOp) or test.op != "==":
            return None
        for item, value in ((test.left, test.right), (test.right, test.left)):
            if isinstance(item, A.Attr) and isinstance(item.obj, A.Name) and item.obj.name == q.var \
                    and self._entity_field(T.element(st), item.name) and self._sure(value, q.var, scope):
                return item.name, self.expr(value, scope)[0]
        return None

    def _entity_field(self, el: Type, name: str) -> bool:
        """Whether ``x.name`` of an item of type ``el`` reads the field straight from its entity
        (what Expressions.x_Attr writes as ``g.ents[x][name]``), a value that can be a key."""
        if not T.is_ent(el) or name in ("kind", "zone", "id"):
            return False
        kind = T.kind_of(el)
        if kind == "*":
            return name not in self.zone_names
        fdef = self.rs.kinds[kind].fields.get(name)
        return fdef is not None and not (T.is_list(fdef.type) or T.is_map(fdef.type))

    def _sure(self, node: A.Node, var: str, scope: Scope) -> bool:
        """Whether reading ``node`` can neither fail nor give another value while a query over
        ``var`` runs: a literal, a constant, an entity, a global, or a local that is surely set
        (a function's parameter: a procedure's local may be set on one path only)."""
        if constant(node, scope) is not NOT_CONSTANT:
            return True
        if not isinstance(node, A.Name) or node.name == var:
            return False
        if node.name in scope:
            return self.reads is not None  # compiling a function's body: its locals are its parameters
        rs = self.rs
        return node.name in rs.globals or node.name in rs.entities or node.name in rs.constants

    def x_ListQuery(self, n: A.ListQuery, scope: Scope) -> tuple[Src, Type]:
        return self.query(n.query, scope)

    def x_CallQuery(self, n: A.CallQuery, scope: Scope) -> tuple[Src, Type]:
        if n.fn not in B.QUERY_FUNCS:
            self.err(n.pos, f"'{n.fn}' does not take a 'for ... in ...' query",
                     "queries go with " + ", ".join(B.QUERY_FUNCS))
            raise Abort
        q = n.query
        if n.fn in ("any", "all") and q.head is None and q.where is not None:
            # any/all(for x in L where C): whether some / every x of L satisfies C (not
            # whether the x that satisfy C are themselves true, which for entities always holds)
            q = A.Query(q.pos, q.where, q.var, q.source, None)
        s, t = self.query(q, scope)
        return self.builtin(n.fn, [(s, t)], n.pos, [q])

    def x_Graph(self, n: A.Graph, scope: Scope) -> tuple[Src, Type]:
        """A search over a graph the rules describe node by node (graph.py)."""
        if n.fn not in ("reachable", "cheapest"):
            self.err(n.pos, f"'{n.fn}' does not take 'VAR from START ... over NEXT'",
                     "the graph searches are reachable(s from A over NEXT) and cheapest(s from A to B over NEXT)")
            raise Abort
        if (n.goal is None) == (n.fn == "cheapest"):
            self.err(n.pos, "cheapest() needs 'to GOAL': cheapest(s from A to B over NEXT)" if n.goal is None
                     else "reachable() takes no 'to': reachable(s from A over NEXT) lists every node it reaches")
            raise Abort
        start, st = self.expr(n.start, scope)
        many = T.is_list(st) or T.is_zone(st)
        node = T.element(st) if many else st
        if node in (T.INT, T.BOOL, T.STR):
            self.err(n.start.pos, f"wrong type: a graph search starts from entities, not {T.describe(node)}")
            raise Abort
        if many:
            start = self.seq(start, st, n.start.pos)
        parts = [start]
        if n.goal is not None:
            goal, gt = self.expr(n.goal, scope)
            parts.append(self.seq(goal, gt, n.goal.pos) if T.is_list(gt) or T.is_zone(gt) else goal)
        inner = dict(scope)
        inner[n.var] = node
        step, stt = self.expr(n.step, inner)
        if not T.iterable(stt):
            self.err(n.step.pos, f"wrong type: 'over' must give a list of the next nodes, not {T.describe(stt)}")
            raise Abort
        parts.append(self.seq(step, stt, n.step.pos))
        args = ", ".join(f"{{{i}}}" for i in range(len(parts) - 1))
        text = f"_{'reach' if n.fn == 'reachable' else 'cheapest'}(g, {args}, lambda {local(n.var)}: {{{len(parts) - 1}}})"
        src = self.src(text, *parts, pos=n.pos, binds=n.var, bound_from=len(parts) - 1)
        return src, (T.list_of(node) if n.fn == "reachable" else T.ANY)

    # ------------------------------------------------------------ calls
    def x_Call(self, n: A.Call, scope: Scope) -> tuple[Src, Type]:
        rs = self.rs
        name = n.fn
        if name in rs.functions:
            fdef = rs.functions[name]
            args = self.check_args(n, list(fdef.params.items()), scope, f"function '{name}'")
            self.read("call", name)
            gname = self.gen.twin("F", name)
            text = gname + "(g" + "".join(f", {{{i}}}" for i in range(len(args))) + ")"
            return self.src(text, *args, pos=n.pos), fdef.returns
        if name in rs.points:
            point = rs.points[name]
            args = self.check_args(n, list(point.params.items()), scope, f"modifier point '{name}'")
            self.read("all")  # a modifier's condition may read anything
            gname = self.gen.twin("Q", name)
            text = gname + "(g" + "".join(f", {{{i}}}" for i in range(len(args))) + ")"
            return self.src(text, *args, pos=n.pos), point.type
        if name in rs.procedures:
            self.err(n.pos, f"procedure '{name}' cannot be used in an expression",
                     f"write 'call {name}(...) as result' on its own line")
            raise Abort
        b = B.lookup(name, len(n.args))
        if b is not None:
            if len(n.args) < b.lo or (b.hi >= 0 and len(n.args) > b.hi):
                self.err(n.pos, f"{name}() takes {B.arity_text(name)} argument(s), got {len(n.args)}")
                raise Abort
            return self.builtin(name, [self.expr(a, scope) for a in n.args], n.pos, n.args)
        known = list(rs.functions) + list(rs.points) + list(B.BUILTINS)
        self.err(n.pos, f"unknown function '{name}'", did_you_mean(name, known))
        raise Abort

    def check_args(self, n: A.Call | A.Consume, params: list[tuple[str, Type]], scope: Scope,
                   what: str) -> list[Src]:
        if len(n.args) != len(params):
            self.err(n.pos, f"{what} takes {len(params)} argument(s) "
                     f"({', '.join(p for p, _ in params)}), got {len(n.args)}")
            raise Abort
        return [self.want(a, scope, ptype, f"argument '{pname}'")
                for (pname, ptype), a in zip(params, n.args, strict=True)]
