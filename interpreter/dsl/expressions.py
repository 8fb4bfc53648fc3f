"""Expressions of the rules language: names and types checked, Python source written.

:class:`Expressions` turns an expression's AST into an :class:`~.source.Src` (its Python
source, with where each part was written) and its static type, or reports a located
diagnostic. Each construct is written once, here; the statement compiler puts these
sources into procedures, and the engine calls them through generated functions.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic, Loc, did_you_mean
from ..model import PLAYER_KIND, RuleFault, Ruleset
from . import ast as A
from . import builtins as B
from . import types as T
from .source import CodeGen, Src, local, read_local

Scope = dict[str, str]
BUILTIN_NAMES = {"players": T.list_of(T.ent(PLAYER_KIND)), "player_count": T.INT,
                 "none": T.NONE, "true": T.BOOL, "false": T.BOOL}
LITERALS: dict[str, Any] = {"none": None, "true": True, "false": False}
# A chain of more operands (a + b + ...) is folded by a helper over the tuple of its operands:
# Python's own compiler recurses once per operator of a binary expression.
CHAIN_RUN = 150


class Abort(Exception):
    """Stop compiling the current text after an error has been reported."""


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


def _explain_compare(op: str) -> Any:
    def explain(g: Any, exc: BaseException, value: Any) -> RuleFault | None:
        if isinstance(exc, TypeError):
            return RuleFault(f"cannot compare {g.label_of(value(0))} {op} {g.label_of(value(1))}")
        return None
    return explain


def _explain_chain(g: Any, exc: BaseException, value: Any) -> RuleFault | None:
    if isinstance(exc, ZeroDivisionError):
        return RuleFault("division by zero")
    return None


class Expressions:
    """Checks and writes the expressions of one ruleset."""

    def __init__(self, rs: Ruleset, gen: CodeGen, diags: list[Diagnostic]) -> None:
        self.rs = rs
        self.gen = gen
        self.diags = diags
        self.origin: Any = None  # a TextOrigin (or a joined one) of the text being compiled
        self.zone_names = {z for kind in rs.kinds.values() for z in kind.zones}

    # ------------------------------------------------------------ helpers
    def loc(self, pos: A.Pos) -> Loc:
        return self.origin.locate(pos[0], pos[1])

    def err(self, pos: A.Pos, message: str, hint: str = "") -> None:
        self.diags.append(Diagnostic(self.loc(pos), message, hint))

    def src(self, template: str, *parts: Src, pos: A.Pos, explain: Any = None, binds: str | None = None,
            bound_from: int = 0) -> Src:
        return Src(template, parts, (self.origin, pos[0], pos[1]), explain, binds, bound_from)

    def k(self, value: Any) -> str:
        """Source text of a constant (escaped for a template)."""
        return self.gen.const(value).replace("{", "{{").replace("}", "}}")

    # ------------------------------------------------------------ entry
    def expr(self, node: A.Node, scope: Scope) -> tuple[Src, str]:
        return getattr(self, "x_" + type(node).__name__)(node, scope)

    def want(self, node: A.Node, scope: Scope, want: str, what: str) -> Src:
        s, t = self.expr(node, scope)
        if not T.compatible(want, t):
            self.err(node.pos, f"wrong type: {what} must be {T.describe(want)}, not {T.describe(t)}")
            raise Abort
        return s

    def seq(self, s: Src, t: str, pos: A.Pos) -> Src:
        """``s`` as a Python sequence (a zone gives its items)."""
        if T.is_zone(t):
            return self.src("g.zones[{0}]", s, pos=pos, explain=_explain_zone)
        if T.is_list(t):
            return s
        return self.src("g.as_seq({0})", s, pos=pos)

    # ------------------------------------------------------------ literals and names
    def x_Num(self, n: A.Num, scope: Scope) -> tuple[Src, str]:
        return self.src(self.k(n.value), pos=n.pos), T.INT

    def x_Str(self, n: A.Str, scope: Scope) -> tuple[Src, str]:
        if len(n.parts) == 1 and isinstance(n.parts[0], str):
            return self.src(self.k(n.parts[0]), pos=n.pos), T.STR
        texts: list[str] = []
        parts: list[Src] = []
        for part in n.parts:
            if isinstance(part, str):
                texts.append(self.k(part))
            else:
                s, _ = self.expr(part, scope)
                texts.append(f"g.label_of({{{len(parts)}}})")
                parts.append(s)
        return self.src("_sz(" + " + ".join(texts or ["''"]) + ")", *parts, pos=n.pos), T.STR

    def x_Name(self, n: A.Name, scope: Scope) -> tuple[Src, str]:
        name = n.name
        if name in scope:
            return read_local(name, (self.origin, n.pos[0], n.pos[1])), scope[name]
        rs = self.rs
        if name in rs.globals:
            return self.src(f"g.glob[{self.k(name)}]", pos=n.pos), rs.globals[name].type
        if name in rs.entities:
            return self.src(self.k(name), pos=n.pos), T.ent(rs.entities[name]["kind"])
        if name in rs.zones and rs.zones[name].per is None:
            return self.src(self.k(name), pos=n.pos), f"zone:{rs.zones[name].holds}"
        if name == "players":
            return self.src("g.players", pos=n.pos), BUILTIN_NAMES[name]
        if name == "player_count":
            return self.src("len(g.players)", pos=n.pos), T.INT
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
        known = list(scope) + list(rs.globals) + list(rs.entities) + list(BUILTIN_NAMES)
        known += [z for z, d in rs.zones.items() if d.per is None]
        self.err(n.pos, f"unknown name '{name}'", did_you_mean(name, known))
        raise Abort

    def x_Every(self, n: A.Every, scope: Scope) -> tuple[Src, str]:
        kind = n.kind
        if kind not in self.rs.kinds:
            self.err(n.pos, f"unknown kind '{kind}'", did_you_mean(kind, self.rs.kinds))
            raise Abort
        if kind == PLAYER_KIND:
            return self.src("list(g.players)", pos=n.pos), T.list_of(T.ent(kind))
        return self.src(f"g.kind_ids({self.k(kind)})", pos=n.pos), T.list_of(T.ent(kind))

    # ------------------------------------------------------------ fields and indexing
    def x_Attr(self, n: A.Attr, scope: Scope) -> tuple[Src, str]:
        obj, t = self.expr(n.obj, scope)
        name = n.name
        if T.is_ent(t) and T.arg(t) != "*":
            kind = self.rs.kinds[T.arg(t)]
            if name in kind.fields:
                return self.src(f"g.ents[{{0}}][{self.k(name)}]", obj, pos=n.pos,
                                explain=_explain_attr(name)), kind.fields[name].type
            if name in kind.zones:
                return self.src(f"({self.k(name + '@')} + {{0}})", obj, pos=n.pos,
                                explain=_explain_zone_of(name)), f"zone:{kind.zones[name].holds}"
            if name == "id":
                return obj, T.STR
            if name == "kind":
                return self.src("g.ents[{0}]['kind']", obj, pos=n.pos, explain=_explain_attr(name)), T.STR
            if name == "zone":
                return self.src("g.ents[{0}].get('zone')", obj, pos=n.pos, explain=_explain_attr(name)), "zone:*"
            choices = list(kind.fields) + list(kind.zones) + ["id", "kind", "zone"]
            self.err(n.pos, f"{kind.name} has no field or zone '{name}'", did_you_mean(name, choices))
            raise Abort
        if T.is_ent(t) and name in ("kind", "zone", "id"):  # every entity has these
            if name == "id":
                return obj, T.STR
            text = "g.ents[{0}]['kind']" if name == "kind" else "g.ents[{0}].get('zone')"
            return self.src(text, obj, pos=n.pos, explain=_explain_attr(name)), T.STR if name == "kind" else "zone:*"
        if T.is_ent(t) and name not in self.zone_names:
            # an entity of some kind: a field (no kind has a zone of that name)
            return self.src(f"g.ents[{{0}}][{self.k(name)}]", obj, pos=n.pos,
                            explain=_explain_get(name)), T.ANY
        if t == T.ANY or T.is_ent(t):
            if isinstance(n.obj, A.Index) and isinstance(n.obj.obj, A.Name) and n.obj.obj.name in self.rs.tables:
                # a field of a table's row: a mapping (the checked way says what is missing)
                return self.src(f"{{0}}[{self.k(name)}]", obj, pos=n.pos,
                                explain=_explain_get(name)), T.ANY
            return self.src(f"g.get_attr({{0}}, {self.k(name)}, None)", obj, pos=n.pos), T.ANY
        self.err(n.pos, f"wrong type: cannot read '.{name}' of {T.describe(t)}")
        raise Abort

    def x_Index(self, n: A.Index, scope: Scope) -> tuple[Src, str]:
        if isinstance(n.obj, A.Name) and n.obj.name in self.rs.tables and n.obj.name not in scope:
            table = self.rs.tables[n.obj.name]
            if len(n.args) != len(table.keys):
                self.err(n.pos, f"table '{table.name}' takes {len(table.keys)} key(s) "
                         f"({', '.join(table.keys)}), got {len(n.args)}")
                raise Abort
            keys = [self.expr(a, scope)[0] for a in n.args]
            text = "".join(f", {{{i}}}" for i in range(len(keys)))
            return self.src(f"_table(g, {self.k(table)}{text})", *keys, pos=n.pos), T.ANY
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
            return self.src("g.index_value({0}, {1}, None)", obj, key, pos=n.pos), \
                T.arg(t) if T.is_map(t) else T.ANY
        self.err(n.pos, f"wrong type: cannot index {T.describe(t)}")
        raise Abort

    # ------------------------------------------------------------ lists and queries
    def x_ListLit(self, n: A.ListLit, scope: Scope) -> tuple[Src, str]:
        parts = []
        t = T.NONE
        for item in n.items:
            s, it = self.expr(item, scope)
            parts.append(s)
            t = it if t == T.NONE else T.join(t, it)
        text = "[" + ", ".join(f"{{{i}}}" for i in range(len(parts))) + "]"
        return self.src(text, *parts, pos=n.pos), T.list_of(t if t != T.NONE else T.ANY)

    def query(self, q: A.Query, scope: Scope) -> tuple[Src, str]:
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

    def x_ListQuery(self, n: A.ListQuery, scope: Scope) -> tuple[Src, str]:
        return self.query(n.query, scope)

    def x_CallQuery(self, n: A.CallQuery, scope: Scope) -> tuple[Src, str]:
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

    # ------------------------------------------------------------ calls
    def x_Call(self, n: A.Call, scope: Scope) -> tuple[Src, str]:
        rs = self.rs
        name = n.fn
        if name in rs.functions:
            fdef = rs.functions[name]
            args = self.check_args(n, list(fdef.params.items()), scope, f"function '{name}'")
            gname = self.gen.twin("F", name)
            text = gname + "(g" + "".join(f", {{{i}}}" for i in range(len(args))) + ")"
            return self.src(text, *args, pos=n.pos), fdef.returns
        if name in rs.points:
            point = rs.points[name]
            args = self.check_args(n, list(point.params.items()), scope, f"modifier point '{name}'")
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

    def check_args(self, n: A.Call | A.Consume, params: list[tuple[str, str]], scope: Scope,
                   what: str) -> list[Src]:
        if len(n.args) != len(params):
            self.err(n.pos, f"{what} takes {len(params)} argument(s) "
                     f"({', '.join(p for p, _ in params)}), got {len(n.args)}")
            raise Abort
        return [self.want(a, scope, ptype, f"argument '{pname}'")
                for (pname, ptype), a in zip(params, n.args, strict=True)]

    def builtin(self, name: str, args: list[tuple[Src, str]], pos: A.Pos, nodes: list[Any]) -> tuple[Src, str]:
        b = B.lookup(name, len(args))
        assert b is not None
        types = [t for _s, t in args]
        parts = [s for s, _t in args]
        if b.takes == B.LIST:
            t0 = types[0]
            where = nodes[0].pos if nodes else pos
            if b.maps and not (T.is_map(t0) or t0 == T.ANY):
                self.err(where, f"wrong type: {name}() needs a per-player map, not {T.describe(t0)}")
                raise Abort
            if not T.iterable(t0):
                self.err(where, f"wrong type: {name}() needs a list, not {T.describe(t0)}")
                raise Abort
            if b.numbers and not T.compatible(T.INT, T.element(t0)):
                self.err(pos, f"wrong type: {name}() needs numbers, not {T.describe(T.element(t0))}")
                raise Abort
            if not b.maps:
                parts[0] = self.seq(parts[0], t0, where)
        elif b.takes == B.NUMBERS:
            for t, node in zip(types, nodes, strict=True):
                if not T.compatible(T.INT, t):
                    self.err(node.pos, f"wrong type: {name}() compares numbers, not {T.describe(t)}")
                    raise Abort
        template = b.source.replace("{*}", ", ".join(f"{{{i}}}" for i in range(len(parts))))
        return self.src(template, *parts, pos=pos), b.returns(types)

    # ------------------------------------------------------------ operators
    def x_Unary(self, n: A.Unary, scope: Scope) -> tuple[Src, str]:
        if n.op == "-":
            return self.src("(-{0})", self.want(n.operand, scope, T.INT, "the operand of '-'"), pos=n.pos), T.INT
        return self.src("(not {0})", self.want(n.operand, scope, T.BOOL, "the operand of 'not'"), pos=n.pos), T.BOOL

    def x_Cond(self, n: A.Cond, scope: Scope) -> tuple[Src, str]:
        test = self.want(n.test, scope, T.BOOL, "an 'if' condition")
        a, ta = self.expr(n.then, scope)
        b, tb = self.expr(n.other, scope)
        return self.src("({1} if {0} else {2})", test, a, b, pos=n.pos), T.join(ta, tb)

    def x_Chain(self, n: A.Chain, scope: Scope) -> tuple[Src, str]:
        """``a + b - c``, ``a * b``, ``a and b and c``: left to right, as a left-nested tree would.

        Each operator is checked as a binary one (the left side's place being the previous
        operator's). Whole numbers are checked after each '*' and at the end of the chain.
        """
        if n.rest[0][0] in ("and", "or"):
            return self._logic_chain(n, scope)
        first, t = self.expr(n.first, scope)
        left_pos = n.first.pos
        text = "{0}"
        parts = [first]
        for op, opos, node in n.rest:
            b, tb = self.expr(node, scope)
            template, t = self._step(op, t, tb, left_pos, node)
            text = template.replace("\x00L", text).replace("\x00R", f"{{{len(parts)}}}")
            parts.append(b)
            left_pos = opos
        if len(parts) > CHAIN_RUN:  # every operand first, then the operators left to right
            ops = self.k(tuple(op for op, _p, _n in n.rest))
            text = f"_fold(g, {ops}, (" + ", ".join(f"{{{i}}}" for i in range(len(parts))) + ",))"
        return self.src(f"_ck({text})" if t == T.INT else f"({text})", *parts, pos=n.pos,
                        explain=_explain_chain), t

    def _logic_chain(self, n: A.Chain, scope: Scope) -> tuple[Src, str]:
        op = n.rest[0][0]
        parts = [self.want(n.first, scope, T.BOOL, f"the left side of '{op}'")]
        parts += [self.want(node, scope, T.BOOL, f"the right side of '{op}'") for op, _pos, node in n.rest]
        # a chain of 'and' (or 'or') is one node of Python's tree however long: no depth to fear
        text = "{0}" + "".join(f" {op} {{{i}}}" for i in range(1, len(parts)))
        return self.src(f"({text})", *parts, pos=n.pos), T.BOOL

    def _step(self, op: str, ta: str, tb: str, left_pos: A.Pos, right: A.Node) -> tuple[str, str]:
        """One operator of a chain: (Python template, result type); NUL+L / NUL+R stand for the sides."""
        if op == "+" and (T.is_list(ta) or T.is_list(tb) or T.is_zone(ta) or T.is_zone(tb)):
            return (f"_cat(g, {_seq_text(ta, chr(0) + 'L')}, {_seq_text(tb, chr(0) + 'R')})",
                    T.join(T.list_of(T.element(ta)), T.list_of(T.element(tb))))
        if op == "+" and (ta == T.STR or tb == T.STR):
            return "_sz(g.label_of(\x00L) + g.label_of(\x00R))", T.STR
        for t, where in ((ta, left_pos), (tb, right.pos)):
            if not T.compatible(T.INT, t) or t == T.NONE:
                self.err(where, f"wrong type: '{op}' needs numbers, not {T.describe(t)}")
                raise Abort
        return {"+": "\x00L + \x00R", "-": "\x00L - \x00R", "*": "_mul(\x00L, \x00R)",
                "/": "\x00L // \x00R", "%": "\x00L % \x00R"}[op], T.INT

    def x_BinOp(self, n: A.BinOp, scope: Scope) -> tuple[Src, str]:
        op = n.op
        if op in ("and", "or", "+", "-", "*", "/", "%"):  # the parser writes these as chains
            return self.x_Chain(A.Chain(n.pos, n.left, [(op, n.pos, n.right)]), scope)
        a, ta = self.expr(n.left, scope)
        b, tb = self.expr(n.right, scope)
        if op in ("in", "notin"):
            neg = "not " if op == "notin" else ""
            if not T.iterable(tb):
                self.err(n.right.pos, f"wrong type: 'in' needs a list or zone on the right, not {T.describe(tb)}")
                raise Abort
            if T.is_zone(tb):
                return self.src(f"({neg}g.ents.get({{0}}, _E).get('zone') == {{1}})", a, b, pos=n.pos), T.BOOL
            return self.src(f"({{0}} {neg}in _w(g, {{1}}))", a, self.seq(b, tb, n.right.pos), pos=n.pos), T.BOOL
        if op in ("==", "!="):
            const = constant(n.right, scope)
            if const is not NOT_CONSTANT:
                return self.src(f"({{0}} {op} {self.k(const)})", a, pos=n.pos), T.BOOL
            if T.is_list(ta) or T.is_list(tb):  # lists compare item by item: work
                neg = "not " if op == "!=" else ""
                return self.src(f"({neg}_eq(g, {{0}}, {{1}}))", a, b, pos=n.pos), T.BOOL
            return self.src(f"({{0}} {op} {{1}})", a, b, pos=n.pos), T.BOOL
        if op in ("<", "<=", ">", ">="):
            for t, side in ((ta, n.left), (tb, n.right)):
                if t not in (T.INT, T.ANY, T.STR):
                    self.err(side.pos, f"wrong type: '{op}' compares numbers, not {T.describe(t)}")
                    raise Abort
            return self.src(f"({{0}} {op} {{1}})", a, b, pos=n.pos, explain=_explain_compare(op)), T.BOOL
        if op == "..":
            for t, side in ((ta, n.left), (tb, n.right)):
                if not T.compatible(T.INT, t):
                    self.err(side.pos, f"wrong type: a range 'a..b' needs numbers, not {T.describe(t)}")
                    raise Abort
            return self.src("_span(g, {0}, {1})", a, b, pos=n.pos), T.list_of(T.INT)
        raise AssertionError(op)


def _seq_text(t: str, text: str) -> str:
    """Source making a value of type ``t`` a Python sequence."""
    if T.is_zone(t):
        return f"g.zones[{text}]"
    return text if T.is_list(t) else f"g.as_seq({text})"


NOT_CONSTANT = object()


def constant(node: A.Node, scope: Scope) -> Any:
    """The value of a literal number, plain string, none, true or false; else NOT_CONSTANT."""
    if isinstance(node, A.Num):
        return node.value
    if isinstance(node, A.Str) and len(node.parts) == 1 and isinstance(node.parts[0], str):
        return node.parts[0]
    if isinstance(node, A.Str) and not node.parts:
        return ""
    if isinstance(node, A.Name) and node.name in LITERALS and node.name not in scope:
        return LITERALS[node.name]
    return NOT_CONSTANT
