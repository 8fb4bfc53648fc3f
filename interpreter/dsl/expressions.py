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
from . import types as T
from .operators import LITERALS, Abort, Scope, constant
from .queries import Queries
from .source import CodeGen, Src, read_local
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


class Expressions(Queries):
    """Checks and writes the expressions of one ruleset (lists, queries and calls: see queries.py;
    operators and built-ins: operators.py)."""

    def __init__(self, rs: Ruleset, gen: CodeGen, diags: list[Diagnostic]) -> None:
        self.rs = rs
        self.gen = gen
        self.diags = diags
        self.origin: Any = None  # a TextOrigin (or a joined one) of the text being compiled
        self.reads: set[tuple[str, ...]] | None = None  # what the function being compiled reads
        self.indexed: set[str] = set()  # the fields queries look zones' items up by (zoneindex.py)

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
                s, pt = self.expr(part, scope)
                i = len(parts)
                # a local number or text (or enumeration value), the commonest parts, labelled
                # as label_of would without its call: a number's digits, a text naming no entity
                # as it is (any other value still label_of's)
                if s.name is not None and pt == T.INT:
                    texts.append(f"(str({{{i}}}) if {{{i}}}.__class__ is int else g.label_of({{{i}}}))")
                elif s.name is not None and T.is_text(pt):
                    texts.append(f"({{{i}}} if {{{i}}}.__class__ is str and {{{i}}} not in g.ents "
                                 f"else g.label_of({{{i}}}))")
                else:
                    texts.append(f"g.label_of({{{i}}})")
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
            call = "_table1" if len(keys) == 1 else "_table"
            return self.src(f"{call}(g, {self.k(table)}{text})", *keys, pos=n.pos), table.value_type or T.ANY
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

__all__ = ["Abort", "Expressions", "Scope", "constant"]
