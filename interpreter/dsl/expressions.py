"""Expressions of the rules language: names and types checked, Python source written.

:class:`Expressions` turns an expression's AST into an :class:`~.source.Src` (its Python
source, with where each part was written) and its static type, or reports a located
diagnostic. Each construct is written once, here; the statement compiler puts these
sources into procedures, and the engine calls them through generated functions.
"""

from __future__ import annotations

import functools
from typing import Any

from ..diagnostics import Diagnostic, Loc, did_you_mean
from ..model import PLAYER_KIND, UMPIRE, RuleFault, Ruleset
from . import ast as A
from . import builtins as B
from . import types as T
from .operators import LITERALS, Abort, Operators, Scope, constant
from .source import CodeGen, Src, local, read_local
from .types import Type

BUILTIN_NAMES = {"players": T.list_of(T.ent(PLAYER_KIND)), "player_count": T.INT,
                 "none": T.NONE, "true": T.BOOL, "false": T.BOOL}
def _explain_attr(name: str) -> Any:
    def explain(g: Any, exc: BaseException, value: Any) -> RuleFault:
        return g.attr_fault(value(0), name, None)
    return explain


def _explain_get(name: str) -> Any:
    def explain(g: Any, exc: BaseException, value: Any) -> RuleFault | None:
        g.get_attr(value(0), name, None)  # raises what is wrong (a value without that field)
        return None
    return explain


def _explain_zone_of(name: str) -> Any:
    def explain(g: Any, exc: BaseException, value: Any) -> RuleFault | None:
        if value(0) is None:
            return RuleFault(f"cannot take zone '{name}' of none")
        return None
    return explain


def _explain_zone(g: Any, exc: BaseException, value: Any) -> RuleFault | None:
    g.zone_items(value(0))  # raises the fault of a key that is not a zone
    return None


def _explain_item(g: Any, exc: BaseException, value: Any) -> RuleFault | None:
    s, i = value(0), value(1)
    return RuleFault(f"index {g.label_of(i)} is outside a list of {len(s)}")


_METHODS: dict[type, str] = {}  # AST node class -> the name of the method compiling it (x_Class)


class Expressions(Operators):
    """Checks and writes the expressions of one ruleset (operators and built-ins: see operators.py)."""

    def __init__(self, rs: Ruleset, gen: CodeGen, diags: list[Diagnostic]) -> None:
        self.rs = rs
        self.gen = gen
        self.diags = diags
        self.origin: Any = None  # a TextOrigin (or a joined one) of the text being compiled
        self.reads: set[tuple[str, ...]] | None = None  # what the function being compiled reads

    # ------------------------------------------------------------ helpers
    def read(self, *fact: str) -> None:
        """Note what of the state the expression being compiled reads (see Compiler._write_functions):
        ('field', NAME), ('glob', NAME), ('zones',) (the items of zones), ('label',) (entities'
        labels), ('call', FUNCTION), or ('all',) when that cannot be told."""
        if self.reads is not None:
            self.reads.add(fact)

    @functools.cached_property
    def zone_names(self) -> set[str]:
        """Every name of a zone of some kind (the kinds are all known before any text compiles)."""
        return {z for kind in self.rs.kinds.values() for z in kind.zones}

    def loc(self, pos: A.Pos) -> Loc:
        return self.origin.locate(pos[0], pos[1])

    def err(self, pos: A.Pos, message: str, hint: str = "") -> None:
        self.diags.append(Diagnostic(self.loc(pos), message, hint))

    def src(self, template: str, *parts: Src, pos: A.Pos, explain: Any = None, binds: str | None = None,
            bound_from: int = 0) -> Src:
        return Src(template, parts, (self.origin, pos[0], pos[1]), explain, binds, bound_from)

    def k(self, value: Any) -> str:
        """Source text of a constant, for a template (it holds no braces: a number, True, False,
        None, an identifier-like text, or the name of a global holding the value)."""
        return self.gen.const(value)

    # ------------------------------------------------------------ entry
    def expr(self, node: A.Node, scope: Scope) -> tuple[Src, Type]:
        name = _METHODS.get(node.__class__)
        if name is None:  # first node of its class
            name = _METHODS[node.__class__] = "x_" + node.__class__.__name__
        return getattr(self, name)(node, scope)

    def want(self, node: A.Node, scope: Scope, want: Type, what: str) -> Src:
        self.literal(node, want)
        s, t = self.expr(node, scope)
        if not T.compatible(want, t):
            self.err(node.pos, f"wrong type: {what} must be {T.describe(want)}, not {T.describe(t)}")
            raise Abort
        return s

    def seq(self, s: Src, t: Type, pos: A.Pos) -> Src:
        """``s`` as a Python sequence (a zone gives its items)."""
        if T.is_zone(t):
            self.read("zones")
            return self.src("g.zones[{0}]", s, pos=pos, explain=_explain_zone)
        if T.is_list(t):
            return s
        self.read("all")  # maybe a zone, maybe a map
        return self.src("g.as_seq({0})", s, pos=pos)

    # ------------------------------------------------------------ literals and names
    def x_Num(self, n: A.Num, scope: Scope) -> tuple[Src, Type]:
        return self.src(self.k(n.value), pos=n.pos), T.INT

    def x_Str(self, n: A.Str, scope: Scope) -> tuple[Src, Type]:
        if len(n.parts) == 1 and isinstance(n.parts[0], str):
            return self.src(self.k(n.parts[0]), pos=n.pos), T.STR
        texts: list[str] = []
        parts: list[Src] = []
        self.read("label")
        for part in n.parts:
            if isinstance(part, str):
                texts.append(self.k(part))
            else:
                s, _ = self.expr(part, scope)
                texts.append(f"g.label_of({{{len(parts)}}})")
                parts.append(s)
        return self.src("_sz(" + " + ".join(texts or ["''"]) + ")", *parts, pos=n.pos), T.STR

    def x_Name(self, n: A.Name, scope: Scope) -> tuple[Src, Type]:
        name = n.name
        if name in scope:
            return read_local(name, (self.origin, n.pos[0], n.pos[1])), scope[name]
        rs = self.rs
        if name in rs.globals:
            self.read("glob", name)
            return self.src(f"g.glob[{self.k(name)}]", pos=n.pos), rs.globals[name].type
        if name in rs.entities:
            return self.src(self.k(name), pos=n.pos), T.ent(rs.entities[name]["kind"])
        if name in rs.constants:
            c = rs.constants[name]
            return self.src(self.k(c.value), pos=n.pos), c.type
        if name in rs.zones and rs.zones[name].per is None:
            return self.src(self.k(name), pos=n.pos), T.zone_of(rs.zones[name].holds)
        if name == "players":
            return self.src("g.players", pos=n.pos), BUILTIN_NAMES[name]
        if name == "player_count":
            return self.src("len(g.players)", pos=n.pos), T.INT
        if name == UMPIRE and rs.umpire:  # the umpire seat: a player for 'by', never one of 'players'
            return self.src(self.k(UMPIRE), pos=n.pos), T.ent(PLAYER_KIND)
        if name in LITERALS:
            return self.src(self.k(LITERALS[name]), pos=n.pos), BUILTIN_NAMES[name]
        if name in rs.tables:
            self.err(n.pos, f"table '{name}' needs a key", f"write {name}[key]")
            raise Abort
        if name in rs.kinds:
            self.err(n.pos, f"'{name}' is a kind, not a value", f"write 'every {name}' for all of them")
            raise Abort
        if name in rs.functions or name in rs.points:
            self.err(n.pos, f"'{name}' must be called", f"write {name}(...)")
            raise Abort
        known = list(scope) + list(rs.globals) + list(rs.constants) + list(rs.entities) + list(BUILTIN_NAMES)
        known += [z for z, d in rs.zones.items() if d.per is None] + ([UMPIRE] if rs.umpire else [])
        if name == UMPIRE:
            self.err(n.pos, f"unknown name '{name}': this ruleset has no umpire seat",
                     "declare 'umpire: true' in ruleset.yaml to give decisions to an umpire seat (docs/umpire.md)")
            raise Abort
        self.err(n.pos, f"unknown name '{name}'", did_you_mean(name, known))
        raise Abort

    def x_Every(self, n: A.Every, scope: Scope) -> tuple[Src, Type]:
        kind = n.kind
        if kind not in self.rs.kinds:
            self.err(n.pos, f"unknown kind '{kind}'", did_you_mean(kind, self.rs.kinds))
            raise Abort
        if kind == PLAYER_KIND:
            return self.src("list(g.players)", pos=n.pos), T.list_of(T.ent(kind))
        return self.src(f"g.kind_ids({self.k(kind)})", pos=n.pos), T.list_of(T.ent(kind))

    # ------------------------------------------------------------ fields and indexing
    def x_Attr(self, n: A.Attr, scope: Scope) -> tuple[Src, Type]:
        obj, t = self.expr(n.obj, scope)
        name = n.name
        self.read("field", name)  # (a zone's name reads nothing: it only names the zone)
        if T.is_ent(t) and T.kind_of(t) != "*":
            kind = self.rs.kinds[T.kind_of(t)]
            if name in kind.fields:
                return self.src(f"g.ents[{{0}}][{self.k(name)}]", obj, pos=n.pos,
                                explain=_explain_attr(name)), kind.fields[name].type
            if name in kind.zones:
                return self.src(f"({self.k(name + '@')} + {{0}})", obj, pos=n.pos,
                                explain=_explain_zone_of(name)), T.zone_of(kind.zones[name].holds)
            if name == "id":
                return obj, T.STR
            if name == "kind":
                return self.src("g.ents[{0}]['kind']", obj, pos=n.pos, explain=_explain_attr(name)), T.STR
            if name == "zone":
                return self.src("g.ents[{0}].get('zone')", obj, pos=n.pos, explain=_explain_attr(name)), T.zone_of("*")
            if name in kind.procs:
                self.err(n.pos, f"'{name}' of a {kind.name} is a procedure, not a value",
                         f"run it with 'call VAR.{name}(...)'")
                raise Abort
            choices = list(kind.fields) + list(kind.zones) + ["id", "kind", "zone"]
            self.err(n.pos, f"{kind.name} has no field or zone '{name}'", did_you_mean(name, choices))
            raise Abort
        if T.is_ent(t) and name in ("kind", "zone", "id"):  # every entity has these
            if name == "id":
                return obj, T.STR
            text = "g.ents[{0}]['kind']" if name == "kind" else "g.ents[{0}].get('zone')"
            return self.src(text, obj, pos=n.pos, explain=_explain_attr(name)), T.STR if name == "kind" else T.zone_of("*")
        if T.is_ent(t) and name not in self.zone_names:
            # an entity of some kind: a field (no kind has a zone of that name)
            return self.src(f"g.ents[{{0}}][{self.k(name)}]", obj, pos=n.pos,
                            explain=_explain_get(name)), T.ANY
        if t == T.ANY or T.is_ent(t):
            if isinstance(n.obj, A.Index) and isinstance(n.obj.obj, A.Name) and n.obj.obj.name in self.rs.tables:
                # a field of a table's row: a mapping (the checked way says what is missing)
                return self.src(f"{{0}}[{self.k(name)}]", obj, pos=n.pos,
                                explain=_explain_get(name)), T.ANY
            if obj.name is not None and name not in self.zone_names and name != "id":
                # a local that may hold anything: read an entity's field directly, else the checked way
                return self.src(f"(g.ents[{{0}}][{self.k(name)}] if {{0}}.__class__ is str else "
                                f"g.get_attr({{0}}, {self.k(name)}, None))", obj, pos=n.pos,
                                explain=_explain_get(name)), T.ANY
            return self.src(f"g.get_attr({{0}}, {self.k(name)}, None)", obj, pos=n.pos), T.ANY
        self.err(n.pos, f"wrong type: cannot read '.{name}' of {T.describe(t)}")
        raise Abort

    def x_Index(self, n: A.Index, scope: Scope) -> tuple[Src, Type]:
        if isinstance(n.obj, A.Name) and n.obj.name in self.rs.tables and n.obj.name not in scope:
            table = self.rs.tables[n.obj.name]
            if len(n.args) != len(table.keys):
                self.err(n.pos, f"table '{table.name}' takes {len(table.keys)} key(s) "
                         f"({', '.join(table.keys)}), got {len(n.args)}")
                raise Abort
            keys = [self.expr(a, scope)[0] for a in n.args]
            for a, kt in zip(n.args, table.key_types, strict=False):
                self.literal(a, kt)
            text = "".join(f", {{{i}}}" for i in range(len(keys)))
            return self.src(f"_table(g, {self.k(table)}{text})", *keys, pos=n.pos), table.value_type or T.ANY
        obj, t = self.expr(n.obj, scope)
        if len(n.args) != 1:
            self.err(n.pos, "indexing takes one value")
            raise Abort
        key, kt = self.expr(n.args[0], scope)
        if T.is_list(t) or T.is_zone(t):
            if not T.compatible(T.INT, kt):
                self.err(n.args[0].pos, f"wrong type: a list index must be a number, not {T.describe(kt)}")
                raise Abort
            return self.src("{0}[{1}]", self.seq(obj, t, n.obj.pos), key, pos=n.pos,
                            explain=_explain_item), T.element(t)
        if T.is_map(t) or t == T.ANY:
            self.read("all")  # maybe a zone
            return self.src("g.index_value({0}, {1}, None)", obj, key, pos=n.pos), \
                T.item(t) if T.is_map(t) else T.ANY
        self.err(n.pos, f"wrong type: cannot index {T.describe(t)}")
        raise Abort

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
        parts = [self.seq(source, st, q.source.pos)]
        text = f" for {local(q.var)} in _w(g, {{0}})"
        if q.where is not None:
            parts.append(self.want(q.where, inner, T.BOOL, "a 'where' condition"))
            text += " if {1}"
        if q.head is not None:
            head, ht = self.expr(q.head, inner)
            text = f"[{{{len(parts)}}}" + text + "]"
            parts.append(head)
        else:
            head, ht = None, T.element(st)
            text = "[" + local(q.var) + text + "]"
        return self.src(text, *parts, pos=q.pos, binds=q.var, bound_from=1), T.list_of(ht)

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


__all__ = ["Abort", "Expressions", "Scope", "constant"]
