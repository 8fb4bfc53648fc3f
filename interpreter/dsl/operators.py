"""Operators and built-in calls of the rules language: checked, and written as Python source.

A mixin of :class:`~.expressions.Expressions` (which holds names, fields, indexing, queries
and calls): arithmetic and comparison, ``and``/``or`` chains, ``if … then … else``, ranges,
membership, and the calls of built-in functions from the registry in builtins.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..diagnostics import did_you_mean
from ..model import RuleFault, Ruleset
from . import ast as A
from . import builtins as B
from . import types as T
from .graph import ROUNDINGS
from .source import Src
from .types import Type

if TYPE_CHECKING:
    from .source import Explain

Scope = dict[str, Type]  # the locals in scope and their types
LITERALS: dict[str, Any] = {"none": None, "true": True, "false": False}

# A chain of more operands (a + b + ...) is folded by a helper over the tuple of its operands:
# Python's own compiler recurses once per operator of a binary expression.
CHAIN_RUN = 150



class Abort(Exception):
    """Stop compiling the current text after an error has been reported."""


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


class Operators:
    """Operators and built-in calls (a mixin: the helpers it uses are those of Expressions)."""

    rs: Ruleset

    if TYPE_CHECKING:
        def expr(self, node: A.Node, scope: Scope) -> tuple[Src, Type]: ...
        def want(self, node: A.Node, scope: Scope, want: Type, what: str) -> Src: ...
        def seq(self, s: Src, t: Type, pos: A.Pos) -> Src: ...
        def err(self, pos: A.Pos, message: str, hint: str = "") -> None: ...
        def read(self, *fact: str) -> None: ...
        def k(self, value: Any) -> str: ...
        def src(self, template: str, *parts: Src, pos: A.Pos, explain: Explain | None = None,
                binds: str | None = None, bound_from: int = 0) -> Src: ...

    def builtin(self, name: str, args: list[tuple[Src, Type]], pos: A.Pos, nodes: list[Any]) -> tuple[Src, Type]:
        b = B.lookup(name, len(args))
        assert b is not None
        if name == "distance":
            self.read("all")  # the field followed is a value
        elif name == "str":
            self.read("label")
        elif name == "divide":
            self._check_divide(args, nodes)
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

    def _check_divide(self, args: list[tuple[Src, Type]], nodes: list[Any]) -> None:
        """divide(a, b, r): numbers, and a rounding that is one of the four when written out."""
        for (_s, t), node in zip(args[:2], nodes, strict=False):
            if not T.compatible(T.INT, t):
                self.err(node.pos, f"wrong type: divide() divides numbers, not {T.describe(t)}")
                raise Abort
        r = nodes[2] if len(nodes) == 3 else None
        if isinstance(r, A.Str) and len(r.parts) == 1 and isinstance(r.parts[0], str) \
                and r.parts[0] not in ROUNDINGS:
            self.err(r.pos, f"divide(): unknown rounding '{r.parts[0]}'",
                     did_you_mean(r.parts[0], list(ROUNDINGS)) or
                     "the roundings are " + ", ".join(f'"{x}"' for x in ROUNDINGS))
            raise Abort
        elif not T.compatible(T.STR, args[2][1]):
            self.err(nodes[2].pos, f"wrong type: divide()'s rounding is a text, not {T.describe(args[2][1])}")
            raise Abort

    # ------------------------------------------------------------ operators
    def x_Unary(self, n: A.Unary, scope: Scope) -> tuple[Src, Type]:
        if n.op == "-":
            return self.src("(-{0})", self.want(n.operand, scope, T.INT, "the operand of '-'"), pos=n.pos), T.INT
        return self.src("(not {0})", self.want(n.operand, scope, T.BOOL, "the operand of 'not'"), pos=n.pos), T.BOOL

    def x_Cond(self, n: A.Cond, scope: Scope) -> tuple[Src, Type]:
        test = self.want(n.test, scope, T.BOOL, "an 'if' condition")
        a, ta = self.expr(n.then, scope)
        b, tb = self.expr(n.other, scope)
        return self.src("({1} if {0} else {2})", test, a, b, pos=n.pos), T.join(ta, tb)

    def x_Chain(self, n: A.Chain, scope: Scope) -> tuple[Src, Type]:
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
            self.read("label")
            ops = self.k(tuple(op for op, _p, _n in n.rest))
            text = f"_fold(g, {ops}, (" + ", ".join(f"{{{i}}}" for i in range(len(parts))) + ",))"
        # a product alone is checked by each '*' (_mul); a sum is checked at its end
        products = all(op == "*" for op, _p, _n in n.rest) and len(parts) <= CHAIN_RUN
        return self.src(f"_ck({text})" if t == T.INT and not products else f"({text})", *parts, pos=n.pos,
                        explain=_explain_chain), t

    def _logic_chain(self, n: A.Chain, scope: Scope) -> tuple[Src, Type]:
        op = n.rest[0][0]
        parts = [self.want(n.first, scope, T.BOOL, f"the left side of '{op}'")]
        parts += [self.want(node, scope, T.BOOL, f"the right side of '{op}'") for op, _pos, node in n.rest]
        # a chain of 'and' (or 'or') is one node of Python's tree however long: no depth to fear
        text = "{0}" + "".join(f" {op} {{{i}}}" for i in range(1, len(parts)))
        return self.src(f"({text})", *parts, pos=n.pos), T.BOOL

    def _step(self, op: str, ta: Type, tb: Type, left_pos: A.Pos, right: A.Node) -> tuple[str, Type]:
        """One operator of a chain: (Python template, result type); NUL+L / NUL+R stand for the sides."""
        if op == "+" and (T.is_list(ta) or T.is_list(tb) or T.is_zone(ta) or T.is_zone(tb)):
            for t in (ta, tb):  # what going through each side reads, as Expressions.seq notes it
                if T.is_zone(t):
                    self.read("zones")
                elif not T.is_list(t):
                    self.read("all")  # maybe a zone (g.as_seq)
            return (f"_cat(g, {_seq_text(ta, chr(0) + 'L')}, {_seq_text(tb, chr(0) + 'R')})",
                    T.join(T.list_of(T.element(ta)), T.list_of(T.element(tb))))
        if op == "+" and (ta == T.STR or tb == T.STR):
            self.read("label")
            return "_sz(g.label_of(\x00L) + g.label_of(\x00R))", T.STR
        for t, where in ((ta, left_pos), (tb, right.pos)):
            if not T.compatible(T.INT, t) or t == T.NONE:
                self.err(where, f"wrong type: '{op}' needs numbers, not {T.describe(t)}")
                raise Abort
        return {"+": "\x00L + \x00R", "-": "\x00L - \x00R", "*": "_mul(\x00L, \x00R)",
                "/": "\x00L // \x00R", "%": "\x00L % \x00R"}[op], T.INT

    def literal(self, node: A.Node, want: Type) -> None:
        """A text written where a value of an enumeration is expected must be one of its values
        (the only check an enumeration needs: everything else about it is text)."""
        if T.is_list(want) and isinstance(node, A.ListLit):
            for item in node.items:
                self.literal(item, T.item(want))
        if not T.is_enum(want) or not isinstance(node, A.Str) or not all(isinstance(p, str) for p in node.parts):
            return
        text = "".join(str(p) for p in node.parts)
        values = self.rs.enums[str(want.arg)]
        if text not in values:
            shown = ", ".join(values[:8]) + (", …" if len(values) > 8 else "")
            self.err(node.pos, f"'{text}' is not {T.article(str(want.arg))}",
                     did_you_mean(text, values) or f"{T.article(str(want.arg))} is one of: {shown}")

    def x_BinOp(self, n: A.BinOp, scope: Scope) -> tuple[Src, Type]:
        op = n.op
        if op in ("and", "or", "+", "-", "*", "/", "%"):  # the parser writes these as chains
            return self.x_Chain(A.Chain(n.pos, n.left, [(op, n.pos, n.right)]), scope)
        a, ta = self.expr(n.left, scope)
        b, tb = self.expr(n.right, scope)
        if op in ("in", "notin", "==", "!="):  # a text written against an enumeration is one of its values
            self.literal(n.right, T.list_of(ta) if op in ("in", "notin") else ta)
            self.literal(n.left, T.element(tb) if op in ("in", "notin") else tb)
        if op in ("in", "notin"):
            neg = "not " if op == "notin" else ""
            if not T.iterable(tb):
                self.err(n.right.pos, f"wrong type: 'in' needs a list or zone on the right, not {T.describe(tb)}")
                raise Abort
            if T.is_zone(tb):
                self.read("field", "zone")
                return self.src(f"({neg}g.ents.get({{0}}, _E).get('zone') == {{1}})", a, b, pos=n.pos), T.BOOL
            return self.src(f"({{0}} {neg}in _w(g, {{1}}))", a, self.seq(b, tb, n.right.pos), pos=n.pos), T.BOOL
        if op in ("==", "!="):
            const = constant(n.right, scope)
            if const is None:  # values are plain data: only none equals none, and 'is' needs no call
                return self.src(f"({{0}} {'is' if op == '==' else 'is not'} None)", a, pos=n.pos), T.BOOL
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

def _seq_text(t: Type, text: str) -> str:
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
