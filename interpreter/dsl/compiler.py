"""Compile rules-language ASTs to Python closures, checking names and types on the way.

Expressions become ``fn(game, locals) -> value``; statement blocks become a flat
list of instructions ``op(game, frame)`` with explicit jumps, so that the whole
continuation (procedure name, instruction index, locals) is plain data and a game
can pause at any choice and resume in another process. Author text can only reach
the game state through the operations below: the language is a sandbox.

Beside each expression's closure the compiler writes the same expression as Python
source (see codegen.py): what the engine calls is a generated function that runs
the whole expression at once and falls back to the closure, which knows where each
part was written, whenever anything goes wrong.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, Loc, did_you_mean
from ..model import (
    MAX_LIST,
    PLAYER_KIND,
    ActionDef,
    ExprFn,
    FunctionDef,
    ModifierSite,
    OpFn,
    Procedure,
    RuleFault,
    Ruleset,
    checked_int,
    checked_size,
    checked_size_error,
)
from ..yamlsource import TextOrigin
from . import ast as A
from . import types as T
from .codegen import (
    MAX_CHAIN_SOURCE,
    MAX_RANGE,
    CodeGen,
    Plan,
    Src,
    StatementWriter,
    enabled,
    equal_lists,
    local,
    row_key,
    sorted_values,
)
from .parser import DslSyntaxError, parse_block, parse_expr, parse_template

Scope = dict[str, str]

BUILTIN_NAMES = {"players": T.list_of(T.ent(PLAYER_KIND)), "player_count": T.INT,
                 "none": T.NONE, "true": T.BOOL, "false": T.BOOL}

# name: (min args, max args or -1, description)
BUILTIN_FUNCS: dict[str, tuple[int, int]] = {
    "count": (1, 1), "sum": (1, 1), "min": (1, -1), "max": (1, -1), "any": (1, 1), "all": (1, 1),
    "first": (1, 1), "last": (1, 1), "abs": (1, 1), "sort": (1, 1), "reverse": (1, 1),
    "index_of": (2, 2), "next_in": (2, 2), "owner": (1, 1), "str": (1, 1),
    "distance": (3, 3), "keys": (1, 1), "unique": (1, 1), "list": (1, 1),
    "combinations": (2, 2), "subsets": (1, 1),
}
MAX_SUBSETS = 1 << 16  # a choice among more subsets than this is a rules bug, not a decision
QUERY_FUNCS = {"count", "sum", "min", "max", "any", "all", "first", "last", "list", "sort", "unique"}


class _Abort(Exception):
    """Stop compiling the current text after an error has been reported."""


def _fault(message: str, loc: Loc | None, hint: str = "") -> RuleFault:
    return RuleFault(message, loc, hint)


class Compiler:
    """Compiles every rules-language text of one ruleset, collecting diagnostics."""

    def __init__(self, rs: Ruleset, diags: list[Diagnostic]) -> None:
        self.rs = rs
        self.diags = diags
        self.origin: Any = TextOrigin(Loc("<text>"), False)  # a TextOrigin or a _JoinedOrigin
        self.proc_name = ""
        self.signals: set[str] = set()  # every 'signal NAME' compiled
        self.untils: list[tuple[str, Loc]] = []  # every 'until NAME' of a modifier, to check
        if rs.codegen is None:
            rs.codegen = CodeGen(rs.name or "rules")
        self.gen: CodeGen = rs.codegen
        self.generate = enabled()
        self.src: dict[Callable[..., Any], Src] = {}  # each compiled closure/root's Python source
        self._nest = 0  # how deep inside an expression the compiler is

    # ------------------------------------------------------------ generated source
    def py(self, fn: ExprFn, text: str, *parts: ExprFn, free: frozenset[str] = frozenset()) -> ExprFn:
        """Record the Python source of ``fn``: ``text`` with {0}, {1}... standing for ``parts``' sources.

        If a part has no source, neither has ``fn`` (and whatever contains it runs as closures).
        """
        srcs = []
        for p in parts:
            ps = self.src.get(p)
            if ps is None:
                return fn
            srcs.append(ps)
        self.src[fn] = Src(text, tuple(srcs), free)
        return fn

    def k(self, value: Any) -> str:
        """Source text of a constant (escaped for use in a :meth:`py` template)."""
        return self.gen.const(value).replace("{", "{{").replace("}", "}}")

    def root(self, fn: ExprFn) -> ExprFn:
        """What the engine calls for ``fn``: its generated twin if it has source, else ``fn`` itself.

        Only for what leaves the compiler (``expr`` called from outside an expression):
        parts of a bigger expression stay closures, which is all the fallback needs.
        """
        src = self.src.get(fn)
        if src is None or not self.generate or self._nest:
            return fn
        r = self.gen.root(src, fn)
        self.src[r] = src
        return r

    def check_signals(self) -> None:
        """A modifier lasting 'until X' needs some rule that signals X."""
        for name, loc in self.untils:
            if name not in self.signals:
                self.diags.append(Diagnostic(loc, f"no rule signals '{name}', so this modifier would never end",
                                             did_you_mean(name, self.signals) or f"add 'signal {name}' where it ends"))

    # ------------------------------------------------------------ generated statements
    def fuse(self) -> None:
        """Generate Python for the statements once every procedure is compiled.

        A procedure that never pauses (no choice, no end of the game, and calls only such
        procedures; not recursive) gets a direct function, so ``call`` runs it without a
        frame; in every procedure, the instruction where a block starts, or where the rules
        go on after a pause, runs the rest of its block as one (see codegen.StatementWriter).
        """
        if not self.generate:
            return
        rs = self.rs
        procs = list(rs.procedures.values()) + [a.proc for a in rs.actions.values()]
        facts: dict[str, tuple[bool, set[str]]] = {}
        for proc in procs:
            # a procedure nested beyond what Python compiles stays instructions (see _nesting)
            if proc.plans is not None and _nesting(proc.plans) <= _DIRECT_NESTING:
                facts[proc.name] = _pause_facts(proc.plans)
        direct: set[str] = set()
        grew = True
        while grew:  # least fixed point: a procedure on a cycle of calls is never direct
            grew = False
            for name, (no_pause, callees) in facts.items():
                if name not in direct and name in rs.procedures and name not in ("setup", "main") \
                        and no_pause and callees <= direct:
                    direct.add(name)
                    grew = True
        names = {n: f"P{i}" for i, n in enumerate(sorted(direct))}
        for pname, pdef in rs.points.items():
            self.gen.point(pname, list(pdef.params), self.src.get(pdef.base) if pdef.base is not None else None)
        for proc in procs:
            if proc.plans is None:
                continue
            w = StatementWriter(self.gen, proc.name, list(proc.code), proc.locs, rs.step_budget, names)
            if proc.name in direct:
                w.procedure(names[proc.name], proc.plans)
            _fuse_runs(w, proc.plans, proc.code)

    # ------------------------------------------------------------ diagnostics
    def loc(self, pos: A.Pos) -> Loc:
        return self.origin.locate(pos[0], pos[1])

    def err(self, pos: A.Pos, message: str, hint: str = "") -> None:
        self.diags.append(Diagnostic(self.loc(pos), message, hint))

    def _exhausted(self, exc: BaseException) -> None:
        """Python ran out of stack or memory on a text (the limits should prevent it): its error."""
        what = "nested too deeply" if isinstance(exc, RecursionError) else "too large to compile (out of memory)"
        self.diags.append(Diagnostic(self.origin.locate(1, 1), f"rules text {what}",
                                     "split it with 'let', a function or a procedure"))

    def _syntax(self, exc: DslSyntaxError) -> None:
        self.diags.append(Diagnostic(self.origin.locate(exc.line, exc.col), exc.message, exc.hint))

    # ------------------------------------------------------------ entry points
    def expression(self, text: str, origin: TextOrigin, scope: Scope,
                   want: str | None = None, what: str = "expression") -> tuple[ExprFn | None, str]:
        """Compile one expression written in YAML; returns (fn or None on error, type)."""
        self.origin = _joined(origin, str(text))
        try:
            node = parse_expr(str(text).replace("\n", " "))
            fn, t = self.expr(node, dict(scope))
        except DslSyntaxError as exc:
            self._syntax(exc)
            return None, T.ANY
        except _Abort:
            return None, T.ANY
        except (RecursionError, MemoryError) as exc:
            self._exhausted(exc)
            return None, T.ANY
        if want is not None and not T.compatible(want, t):
            self.err(node.pos, f"wrong type: {what} must be {T.describe(want)}, not {T.describe(t)}")
            return None, t
        return fn, t

    def staged(self, text: str, origin: TextOrigin, scope: Scope, params: list[str]) -> list[list[ExprFn]]:
        """Split an action's ``if`` (already compiled without error) into checks per parameter.

        Stage i holds the conjuncts that can be tested once the first i parameters are
        bound, so enumeration prunes early: a test of the actor alone runs once, not once
        per combination of parameters. A conjunct never moves before one written ahead of
        it, so 'and' still short-circuits exactly as written.
        """
        self.origin = _joined(origin, str(text))
        node = parse_expr(str(text).replace("\n", " "))
        stages: list[list[ExprFn]] = [[] for _ in range(len(params) + 1)]
        level = 0
        for part in A.conjuncts(node):
            used = A.names_in(part)
            level = max([level] + [i + 1 for i, p in enumerate(params) if p in used])
            fn, _ = self.expr(part, dict(scope))
            stages[level].append(fn)
        return [self._fused(tests) for tests in stages]

    def _fused(self, tests: list[ExprFn]) -> list[ExprFn]:
        """One stage's tests as one generated function (they all have source), else as they are."""
        if len(tests) < 2 or not all(t in self.src for t in tests):
            return tests
        def both(g: Any, L: dict) -> bool:
            return all(t(g, L) for t in tests)
        text = " and ".join(f"{{{i}}}" for i in range(len(tests)))
        return [self.root(self.py(both, f"({text})", *tests))]

    def enumerator(self, action: ActionDef) -> Callable[[Any, str, list], None] | None:
        """The generated lister of an action's legal choices (None if some part has no source)."""
        if not self.generate:
            return None
        params: list[tuple[str, Src, bool]] = []
        for p in action.params:
            if p.domain is None or p.domain not in self.src:
                return None
            simple = p.type in (T.INT, T.STR, T.BOOL) or (T.is_ent(p.type))
            params.append((p.name, self.src[p.domain], not simple))
        stages: list[Src | None] = [None] * (len(action.params) + 1)
        if action.stages is not None:
            for i, tests in enumerate(action.stages):
                if not tests:
                    continue
                if len(tests) != 1 or tests[0] not in self.src:
                    return None
                stages[i] = self.src[tests[0]]
        label = None
        if action.label is not None:
            if action.label not in self.src:
                return None
            label = self.src[action.label]
        return self.gen.enumerator(action.name, params, stages, label)

    def template(self, text: str, origin: TextOrigin, scope: Scope) -> ExprFn | None:
        """Compile a label/log text with ``{expression}`` parts."""
        self.origin = origin
        try:
            node = parse_template(str(text))
            fn, _ = self.expr(node, dict(scope))
        except DslSyntaxError as exc:
            self._syntax(exc)
            return None
        except _Abort:
            return None
        except (RecursionError, MemoryError) as exc:
            self._exhausted(exc)
            return None
        return fn

    def procedure(self, proc: Procedure, text: str, origin: TextOrigin, scope: Scope) -> None:
        """Compile a statement block into ``proc.code``."""
        self.origin = origin
        self.proc_name = proc.name
        try:
            stmts = parse_block(str(text))
            b = _Builder(self, proc)
            proc.plans = b.block(stmts, dict(scope))
            b.finish()
        except DslSyntaxError as exc:
            self._syntax(exc)
        except (RecursionError, MemoryError) as exc:
            self._exhausted(exc)

    # ------------------------------------------------------------ expressions
    def expr(self, node: A.Node, scope: Scope) -> tuple[ExprFn, str]:
        method = getattr(self, "x_" + type(node).__name__)
        self._nest += 1
        try:
            fn, t = method(node, scope)
        finally:
            self._nest -= 1
        return self.root(fn), t

    def want(self, node: A.Node, scope: Scope, want: str, what: str) -> ExprFn:
        fn, t = self.expr(node, scope)
        if not T.compatible(want, t):
            self.err(node.pos, f"wrong type: {what} must be {T.describe(want)}, not {T.describe(t)}")
            raise _Abort
        return fn

    def x_Num(self, n: A.Num, scope: Scope) -> tuple[ExprFn, str]:
        v = n.value
        return self.py(lambda g, L: v, self.k(v)), T.INT

    def x_Str(self, n: A.Str, scope: Scope) -> tuple[ExprFn, str]:
        if len(n.parts) == 1 and isinstance(n.parts[0], str):
            s = n.parts[0]
            return self.py(lambda g, L: s, self.k(s)), T.STR
        pieces: list[Callable[[Any, dict], str]] = []
        texts: list[str] = []
        fns: list[ExprFn] = []
        for part in n.parts:
            if isinstance(part, str):
                pieces.append(_const_text(part))
                texts.append(self.k(part))
            else:
                fn, _ = self.expr(part, scope)
                pieces.append(_label_text(fn))
                texts.append(f"g.label_of({{{len(fns)}}})")
                fns.append(fn)
        loc = self.loc(n.pos)

        def joined(g: Any, L: dict) -> str:
            return checked_size("".join(p(g, L) for p in pieces), loc)
        return self.py(joined, "_sz(" + " + ".join(texts or ["''"]) + ")", *fns), T.STR

    def x_Name(self, n: A.Name, scope: Scope) -> tuple[ExprFn, str]:
        name = n.name
        if name in scope:
            loc = self.loc(n.pos)

            def read_local(g: Any, L: dict) -> Any:
                try:
                    return L[name]
                except KeyError:
                    raise _fault(f"'{name}' has no value here", loc,
                                 "it is set only on a path that did not run; set it before the 'if'") from None
            return self.py(read_local, local(name), free=frozenset([name])), scope[name]
        rs = self.rs
        if name in rs.globals:
            return self.py(lambda g, L: g.glob[name], f"g.glob[{self.k(name)}]"), rs.globals[name].type
        if name in rs.entities:
            kind = rs.entities[name]["kind"]
            return self.py(lambda g, L: name, self.k(name)), T.ent(kind)
        if name in rs.zones and rs.zones[name].per is None:
            z = rs.zones[name]
            return self.py(lambda g, L: name, self.k(name)), f"zone:{z.holds}"
        if name == "players":
            return self.py(lambda g, L: g.players, "g.players"), BUILTIN_NAMES[name]
        if name == "player_count":
            return self.py(lambda g, L: len(g.players), "len(g.players)"), T.INT
        if name in ("none", "true", "false"):
            v = _LITERALS[name]
            return self.py(lambda g, L: v, self.k(v)), BUILTIN_NAMES[name]
        if name in rs.tables:
            self.err(n.pos, f"table '{name}' needs a key", f"write {name}[key]")
            raise _Abort
        if name in rs.kinds:
            self.err(n.pos, f"'{name}' is a kind, not a value", f"write 'every {name}' for all of them")
            raise _Abort
        if name in rs.functions or name in rs.points:
            self.err(n.pos, f"'{name}' must be called", f"write {name}(...)")
            raise _Abort
        known = list(scope) + list(rs.globals) + list(rs.entities) + list(BUILTIN_NAMES)
        known += [z for z, d in rs.zones.items() if d.per is None]
        self.err(n.pos, f"unknown name '{name}'", did_you_mean(name, known))
        raise _Abort

    def x_Every(self, n: A.Every, scope: Scope) -> tuple[ExprFn, str]:
        kind = n.kind
        if kind not in self.rs.kinds:
            self.err(n.pos, f"unknown kind '{kind}'", did_you_mean(kind, self.rs.kinds))
            raise _Abort
        if kind == PLAYER_KIND:
            return self.py(lambda g, L: list(g.players), "list(g.players)"), T.list_of(T.ent(kind))
        return self.py(lambda g, L: g.kind_ids(kind), f"g.kind_ids({self.k(kind)})"), T.list_of(T.ent(kind))

    def x_Attr(self, n: A.Attr, scope: Scope) -> tuple[ExprFn, str]:
        obj, t = self.expr(n.obj, scope)
        name = n.name
        loc = self.loc(n.pos)
        if T.is_ent(t) and T.arg(t) != "*":
            kind = self.rs.kinds[T.arg(t)]
            if name in kind.fields:
                ftype = kind.fields[name].type

                def read_field(g: Any, L: dict) -> Any:
                    o = obj(g, L)
                    try:
                        return g.ents[o][name]
                    except (KeyError, TypeError):
                        raise g.attr_fault(o, name, loc) from None
                return self.py(read_field, f"g.ents[{{0}}][{self.k(name)}]", obj), ftype
            if name in kind.zones:
                zone = kind.zones[name]

                def zone_key(g: Any, L: dict) -> Any:
                    o = obj(g, L)
                    if o is None:
                        raise _fault(f"cannot take zone '{name}' of none", loc)
                    return f"{name}@{o}"
                return self.py(zone_key, f"({self.k(name + '@')} + {{0}})", obj), f"zone:{zone.holds}"
            if name == "id":
                return obj, T.STR
            if name == "kind":
                return self.py(lambda g, L: g.ents[obj(g, L)]["kind"], "g.ents[{0}]['kind']", obj), T.STR
            if name == "zone":
                return self.py(lambda g, L: g.ents[obj(g, L)].get("zone"), "g.ents[{0}].get('zone')", obj), "zone:*"
            choices = list(kind.fields) + list(kind.zones) + ["id", "kind", "zone"]
            self.err(n.pos, f"{kind.name} has no field or zone '{name}'", did_you_mean(name, choices))
            raise _Abort
        if t in (T.ANY,) or (T.is_ent(t) and T.arg(t) == "*"):
            # Read as an entity's field first: anything else (a map, 'id', a zone of the
            # entity) makes the generated code fall back to this closure, which knows them all.
            if name == "id":
                text = f"g.get_attr({{0}}, {self.k(name)}, None)"
            elif isinstance(n.obj, A.Index) and isinstance(n.obj.obj, A.Name) and n.obj.obj.name in self.rs.tables:
                text = f"{{0}}[{self.k(name)}]"  # a field of a table's row
            else:
                text = f"g.ents[{{0}}][{self.k(name)}]"
            return self.py(lambda g, L: g.get_attr(obj(g, L), name, loc), text, obj), T.ANY
        self.err(n.pos, f"wrong type: cannot read '.{name}' of {T.describe(t)}")
        raise _Abort

    def x_Index(self, n: A.Index, scope: Scope) -> tuple[ExprFn, str]:
        loc = self.loc(n.pos)
        if isinstance(n.obj, A.Name) and n.obj.name in self.rs.tables and n.obj.name not in scope:
            table = self.rs.tables[n.obj.name]
            if len(n.args) != len(table.keys):
                self.err(n.pos, f"table '{table.name}' takes {len(table.keys)} key(s) "
                         f"({', '.join(table.keys)}), got {len(n.args)}")
                raise _Abort
            keys = [self.expr(a, scope)[0] for a in n.args]

            def lookup(g: Any, L: dict) -> Any:
                row: Any = table.rows
                for k in keys:
                    kv = k(g, L)
                    try:
                        row = row[row_key(kv)]
                    except (KeyError, TypeError):
                        if table.has_default:
                            return table.default
                        raise _fault(f"table '{table.name}' has no row for {g.label_of(kv)!r}", loc) from None
                return row
            keys_text = "".join(f", {{{i}}}" for i in range(len(keys)))
            return self.py(lookup, f"_table({self.k(table)}{keys_text})", *keys), T.ANY
        obj, t = self.expr(n.obj, scope)
        if len(n.args) != 1:
            self.err(n.pos, "indexing takes one value")
            raise _Abort
        key, kt = self.expr(n.args[0], scope)
        if T.is_list(t) or T.is_zone(t):
            if not T.compatible(T.INT, kt):
                self.err(n.args[0].pos, f"wrong type: a list index must be a number, not {T.describe(kt)}")
                raise _Abort
            seq = self.seq(obj, t)

            def item(g: Any, L: dict) -> Any:
                s = seq(g, L)
                i = key(g, L)
                try:
                    return s[i]
                except (IndexError, TypeError):
                    raise _fault(f"index {i} is outside a list of {len(s)}", loc) from None
            return self.py(item, "{0}[{1}]", seq, key), T.element(t)
        if T.is_map(t) or t == T.ANY:
            return self.py(lambda g, L: g.index_value(obj(g, L), key(g, L), loc), "g.index_value({0}, {1}, None)",
                           obj, key), T.arg(t) if T.is_map(t) else T.ANY
        self.err(n.pos, f"wrong type: cannot index {T.describe(t)}")
        raise _Abort

    def seq(self, fn: ExprFn, t: str) -> ExprFn:
        """Wrap ``fn`` so that it yields a Python sequence (zones give their items)."""
        if T.is_zone(t):
            # every zone that exists has its list in g.zones; a bad key falls back to the closure's error
            return self.root(self.py(lambda g, L: g.zone_items(fn(g, L)), "g.zones[{0}]", fn))
        if T.is_list(t):
            return fn
        return self.root(self.py(lambda g, L: g.as_seq(fn(g, L)), "g.as_seq({0})", fn))

    def x_ListLit(self, n: A.ListLit, scope: Scope) -> tuple[ExprFn, str]:
        fns = []
        t = T.NONE
        for item in n.items:
            f, it = self.expr(item, scope)
            fns.append(f)
            t = it if t == T.NONE else T.join(t, it)
        def listed(g: Any, L: dict) -> list:
            return [f(g, L) for f in fns]
        text = "[" + ", ".join(f"{{{i}}}" for i in range(len(fns))) + "]"
        return self.py(listed, text, *fns), T.list_of(t if t != T.NONE else T.ANY)

    def query(self, q: A.Query, scope: Scope) -> tuple[Callable[[Any, dict], list], str]:
        """Compile a query to a function returning the list of (head) values."""
        src, st = self.expr(q.source, scope)
        if not T.iterable(st):
            self.err(q.source.pos, f"wrong type: cannot go through {T.describe(st)}")
            raise _Abort
        seq = self.seq(src, st)
        inner = dict(scope)
        inner[q.var] = T.element(st)
        var = q.var
        where = self.want(q.where, inner, T.BOOL, "a 'where' condition") if q.where else None
        if q.head is not None:
            head, ht = self.expr(q.head, inner)
        else:
            head, ht = None, T.element(st)

        def run(g: Any, L: dict) -> list:
            items = seq(g, L)
            g.spend(len(items))
            L2 = dict(L)
            out = []
            for x in items:
                L2[var] = x
                if where is None or where(g, L2):
                    out.append(head(g, L2) if head is not None else x)
            return out
        parts = [p for p in (seq, where, head) if p is not None]
        if all(p in self.src for p in parts):
            v = local(var)
            text = f"[{'{' + str(len(parts) - 1) + '}' if head is not None else v} for {v} in _w(g, {{0}})"
            if where is not None:
                text += " if {1}"
            text += "]"
            self.src[run] = Src(text, tuple(self.src[p] for p in parts), bound=var, bound_from=1)
        return run, T.list_of(ht)

    def x_ListQuery(self, n: A.ListQuery, scope: Scope) -> tuple[ExprFn, str]:
        return self.query(n.query, scope)

    def x_CallQuery(self, n: A.CallQuery, scope: Scope) -> tuple[ExprFn, str]:
        if n.fn not in QUERY_FUNCS:
            self.err(n.pos, f"'{n.fn}' does not take a 'for ... in ...' query",
                     "queries go with " + ", ".join(sorted(QUERY_FUNCS)))
            raise _Abort
        q = n.query
        if n.fn in ("any", "all") and q.head is None and q.where is not None:
            # any/all(for x in L where C): whether some / every x of L satisfies C (not
            # whether the x that satisfy C are themselves true, which for entities always holds)
            q = A.Query(q.pos, q.where, q.var, q.source, None)
        run, t = self.query(q, scope)
        return self.builtin(n.fn, [(run, t)], n.pos, [q])

    def x_Call(self, n: A.Call, scope: Scope) -> tuple[ExprFn, str]:
        rs = self.rs
        name = n.fn
        if name in rs.functions:
            fdef = rs.functions[name]
            args = self.check_args(n, list(fdef.params.items()), scope, f"function '{name}'")
            pnames = list(fdef.params)
            loc = self.loc(n.pos)

            fname = fdef.name

            def call_fn(g: Any, L: dict) -> Any:
                values = [a(g, L) for a in args]
                try:
                    return g.memo[(fname, *values)]
                except (KeyError, TypeError):  # not remembered, or a list argument
                    return g.call_function(fdef, dict(zip(pnames, values, strict=True)), loc)
            return self.py(call_fn, self.gen.call(name, [f"{{{i}}}" for i in range(len(args))]), *args), fdef.returns
        if name in rs.points:
            point = rs.points[name]
            args = self.check_args(n, list(point.params.items()), scope, f"modifier point '{name}'")
            def read(g: Any, L: dict) -> Any:
                return g.point(name, [a(g, L) for a in args])
            text = self.gen.call_point(name, [f"{{{i}}}" for i in range(len(args))])
            return self.py(read, text, *args), point.type
        if name in rs.procedures:
            self.err(n.pos, f"procedure '{name}' cannot be used in an expression",
                     f"write 'call {name}(...) as result' on its own line")
            raise _Abort
        if name in BUILTIN_FUNCS:
            lo, hi = BUILTIN_FUNCS[name]
            if len(n.args) < lo or (hi >= 0 and len(n.args) > hi):
                self.err(n.pos, f"{name}() takes {lo if lo == hi else f'{lo} or more'} argument(s), got {len(n.args)}")
                raise _Abort
            compiled = [self.expr(a, scope) for a in n.args]
            return self.builtin(name, compiled, n.pos, n.args)
        known = list(rs.functions) + list(rs.points) + list(BUILTIN_FUNCS)
        self.err(n.pos, f"unknown function '{name}'", did_you_mean(name, known))
        raise _Abort

    def check_args(self, n: A.Call | A.Consume, params: list[tuple[str, str]], scope: Scope,
                   what: str) -> list[ExprFn]:
        if len(n.args) != len(params):
            self.err(n.pos, f"{what} takes {len(params)} argument(s) "
                     f"({', '.join(p for p, _ in params)}), got {len(n.args)}")
            raise _Abort
        out = []
        for (pname, ptype), a in zip(params, n.args, strict=True):
            out.append(self.want(a, scope, ptype, f"argument '{pname}'"))
        return out

    def builtin(self, name: str, args: list[tuple[ExprFn, str]], pos: A.Pos,
                nodes: list[Any]) -> tuple[ExprFn, str]:
        loc = self.loc(pos)
        f0, t0 = args[0]
        if name in ("count", "sum", "any", "all", "first", "last", "sort", "reverse", "unique", "list", "keys") \
                or (name in ("min", "max") and len(args) == 1):
            if not T.iterable(t0):
                self.err(nodes[0].pos if nodes else pos, f"wrong type: {name}() needs a list, not {T.describe(t0)}")
                raise _Abort
            seq = self.seq(f0, t0)
            el = T.element(t0)
            if name == "count":
                return self.py(lambda g, L: len(seq(g, L)), "len({0})", seq), T.INT
            if name == "first":
                return self.py(lambda g, L: (lambda s: s[0] if s else None)(seq(g, L)), "_first({0})", seq), el
            if name == "last":
                return self.py(lambda g, L: (lambda s: s[-1] if s else None)(seq(g, L)), "_last({0})", seq), el
            # the rest go through the whole list: each item is a step of work
            spent = _spent(seq)
            if name == "sum":
                self._need_numbers(el, name, pos)
                return self.py(lambda g, L: checked_int(sum(spent(g, L)), loc), "_ck(sum(_w(g, {0})))",
                               seq), T.INT
            if name in ("min", "max"):
                self._need_numbers(el, name, pos)
                agg = min if name == "min" else max

                def extreme(g: Any, L: dict) -> Any:
                    s = spent(g, L)
                    if not s:
                        raise _fault(f"{name}() of an empty list", loc, "check count(...) > 0 first")
                    return agg(s)
                return self.py(extreme, name + "(_w(g, {0}))", seq), T.INT if el == T.INT else T.ANY
            if name == "any":
                return self.py(lambda g, L: any(spent(g, L)), "any(_w(g, {0}))", seq), T.BOOL
            if name == "all":
                return self.py(lambda g, L: all(spent(g, L)), "all(_w(g, {0}))", seq), T.BOOL
            if name == "sort":
                return self.py(lambda g, L: sorted_values(g, seq(g, L)), "_sorted(g, {0})", seq), T.list_of(el)
            if name == "reverse":
                return self.py(lambda g, L: list(reversed(spent(g, L))), "list(reversed(_w(g, {0})))",
                               seq), T.list_of(el)
            if name == "unique":
                return self.py(lambda g, L: list(dict.fromkeys(spent(g, L))), "list(dict.fromkeys(_w(g, {0})))",
                               seq), T.list_of(el)
            if name == "list":
                return self.py(lambda g, L: list(spent(g, L)), "list(_w(g, {0}))", seq), T.list_of(el)
            if name == "keys":
                if not (T.is_map(t0) or t0 == T.ANY):
                    self.err(nodes[0].pos if nodes else pos, f"wrong type: keys() needs a per-player map, not {T.describe(t0)}")
                    raise _Abort
                return self.py(lambda g, L: list(g.as_map(f0(g, L), loc)), "list(g.as_map({0}, None))",
                               f0), T.list_of(T.ent(PLAYER_KIND))
        if name in ("min", "max"):
            for (_f, t), node in zip(args, nodes, strict=True):
                if not T.compatible(T.INT, t):
                    self.err(node.pos, f"wrong type: {name}() compares numbers, not {T.describe(t)}")
                    raise _Abort
            fns = [f for f, _ in args]
            agg2 = min if name == "min" else max
            text = name + "(" + ", ".join(f"{{{i}}}" for i in range(len(fns))) + ")"
            return self.py(lambda g, L: agg2(f(g, L) for f in fns), text, *fns), T.INT
        if name == "abs":
            return self.py(lambda g, L: abs(f0(g, L)), "abs({0})", f0), T.INT
        if name in ("index_of", "next_in"):
            seq = self.seq(f0, t0)
            spent = _spent(seq)
            f1 = args[1][0]
            if name == "index_of":
                return self.py(lambda g, L: (lambda s, x: s.index(x) if x in s else -1)(spent(g, L), f1(g, L)),
                               "_index_of(_w(g, {0}), {1})", seq, f1), T.INT

            def next_in(g: Any, L: dict) -> Any:
                s = spent(g, L)
                x = f1(g, L)
                if x not in s:
                    raise _fault(f"next_in(): {g.label_of(x)} is not in the list", loc)
                return s[(s.index(x) + 1) % len(s)]
            return self.py(next_in, "_next_in({0}, {1})", seq, f1), T.element(t0)
        if name in ("combinations", "subsets"):
            seq = self.seq(f0, t0)
            k_fn = args[1][0] if name == "combinations" else None

            def subsets(g: Any, L: dict) -> list:
                items = list(seq(g, L))
                sizes = [k_fn(g, L)] if k_fn is not None else range(len(items) + 1)
                total = sum(math.comb(len(items), k) for k in sizes if 0 <= k <= len(items))
                if total > MAX_SUBSETS:
                    raise _fault(f"{name}() would make {total} lists (more than {MAX_SUBSETS})", loc,
                                 "narrow the list first")
                g.spend(total + len(items))
                return [list(c) for k in sizes for c in itertools.combinations(items, k)]
            return subsets, T.list_of(T.list_of(T.element(t0)))
        if name == "owner":
            return self.py(lambda g, L: g.zone_owner(f0(g, L)), "g.zone_owner({0})", f0), T.ent("*")
        if name == "str":
            return self.py(lambda g, L: g.label_of(f0(g, L)), "g.label_of({0})", f0), T.STR
        if name == "distance":
            f1 = args[1][0]
            f2 = args[2][0]
            return self.py(lambda g, L: g.distance(f0(g, L), f1(g, L), f2(g, L), loc),
                           "g.distance({0}, {1}, {2}, None)", f0, f1, f2), T.ANY
        raise AssertionError(name)

    def _need_numbers(self, el: str, name: str, pos: A.Pos) -> None:
        if not T.compatible(T.INT, el):
            self.err(pos, f"wrong type: {name}() needs numbers, not {T.describe(el)}")
            raise _Abort

    def x_Unary(self, n: A.Unary, scope: Scope) -> tuple[ExprFn, str]:
        if n.op == "-":
            f = self.want(n.operand, scope, T.INT, "the operand of '-'")
            return self.py(lambda g, L: -f(g, L), "(-{0})", f), T.INT
        f = self.want(n.operand, scope, T.BOOL, "the operand of 'not'")
        return self.py(lambda g, L: not f(g, L), "(not {0})", f), T.BOOL

    def x_Cond(self, n: A.Cond, scope: Scope) -> tuple[ExprFn, str]:
        test = self.want(n.test, scope, T.BOOL, "an 'if' condition")
        a, ta = self.expr(n.then, scope)
        b, tb = self.expr(n.other, scope)
        return self.py(lambda g, L: a(g, L) if test(g, L) else b(g, L), "({1} if {0} else {2})",
                       test, a, b), T.join(ta, tb)

    def x_Chain(self, n: A.Chain, scope: Scope) -> tuple[ExprFn, str]:
        """``a + b - c``, ``a * b``, ``a and b and c``: evaluated left to right without nesting.

        Each operator is checked and applied as a binary one (with the left side's place
        being the previous operator's, as in a left-nested tree). Whole numbers are checked
        against MAX_INT after each '*' and at the end of the chain.
        """
        if n.rest[0][0] in ("and", "or"):
            return self._logic_chain(n, scope)
        first, t = self.expr(n.first, scope)
        left_pos = n.first.pos
        steps: list[tuple[Callable[[Any, Any, Any], Any], ExprFn]] = []
        text = "{0}"
        fns = [first]
        for op, opos, node in n.rest:
            b, tb = self.expr(node, scope)
            comb, template, t = self._step(op, self.loc(opos), t, tb, left_pos, node)
            steps.append((comb, b))
            text = template.replace("\x00L", text).replace("\x00R", f"{{{len(fns)}}}")
            fns.append(b)
            left_pos = opos
        end = self.loc(n.pos)
        ints = t == T.INT

        def chain(g: Any, L: dict) -> Any:
            v = first(g, L)
            for comb, f in steps:
                v = comb(g, v, f(g, L))
            return checked_int(v, end) if ints else v
        if len(fns) > MAX_CHAIN_SOURCE:  # Python's own compiler would recurse too deeply: closures only
            return chain, t
        return self.py(chain, f"_ck({text})" if ints else f"({text})", *fns), t

    def _logic_chain(self, n: A.Chain, scope: Scope) -> tuple[ExprFn, str]:
        op = n.rest[0][0]
        fns = [self.want(n.first, scope, T.BOOL, f"the left side of '{op}'")]
        fns += [self.want(node, scope, T.BOOL, f"the right side of '{op}'") for op, _pos, node in n.rest]
        want = op == "or"  # the value that decides the whole chain

        def logic(g: Any, L: dict) -> Any:
            v: Any = not want
            for f in fns:
                v = f(g, L)
                if bool(v) is want:
                    return v
            return v
        if len(fns) > MAX_CHAIN_SOURCE:
            return logic, T.BOOL
        text = "(" + f" {op} ".join(f"{{{i}}}" for i in range(len(fns))) + ")"
        return self.py(logic, text, *fns), T.BOOL

    def _step(self, op: str, loc: Loc, ta: str, tb: str, left_pos: A.Pos,
              right: A.Node) -> tuple[Callable[[Any, Any, Any], Any], str, str]:
        """One operator of a chain: (combine(game, left, right), Python template, result type).

        In the template, NUL+L stands for the left side's source and NUL+R for the right's.
        """
        if op == "+" and (T.is_list(ta) or T.is_list(tb) or T.is_zone(ta) or T.is_zone(tb)):
            sa, sb = _seq_value(ta), _seq_value(tb)

            def concat(g: Any, x: Any, y: Any) -> list:
                return _concat(g, sa(g, x), sb(g, y), loc)
            return concat, f"_cat(g, {_seq_text(ta, chr(0) + 'L')}, {_seq_text(tb, chr(0) + 'R')})", \
                T.join(T.list_of(T.element(ta)), T.list_of(T.element(tb)))
        if op == "+" and (ta == T.STR or tb == T.STR):
            def text(g: Any, x: Any, y: Any) -> str:
                return checked_size(g.label_of(x) + g.label_of(y), loc)
            return text, "_sz(g.label_of(\x00L) + g.label_of(\x00R))", T.STR
        for t, where in ((ta, left_pos), (tb, right.pos)):
            if not T.compatible(T.INT, t) or t == T.NONE:
                self.err(where, f"wrong type: '{op}' needs numbers, not {T.describe(t)}")
                raise _Abort
        if op == "+":
            return _add, "\x00L + \x00R", T.INT
        if op == "-":
            return _sub, "\x00L - \x00R", T.INT
        if op == "*":
            def times(g: Any, x: Any, y: Any) -> Any:
                return checked_int(x * y, loc)
            return times, "_mul(\x00L, \x00R)", T.INT

        def divide(g: Any, x: Any, y: Any) -> int:
            if y == 0:
                raise _fault("division by zero", loc)
            return x // y if op == "/" else x % y
        return divide, "\x00L // \x00R" if op == "/" else "\x00L % \x00R", T.INT

    def x_BinOp(self, n: A.BinOp, scope: Scope) -> tuple[ExprFn, str]:
        op = n.op
        if op in ("and", "or", "+", "-", "*", "/", "%"):  # the parser writes these as chains
            return self.x_Chain(A.Chain(n.pos, n.left, [(op, n.pos, n.right)]), scope)
        loc = self.loc(n.pos)
        a, ta = self.expr(n.left, scope)
        b, tb = self.expr(n.right, scope)
        if op in ("in", "notin"):
            if not T.iterable(tb):
                self.err(n.right.pos, f"wrong type: 'in' needs a list or zone on the right, not {T.describe(tb)}")
                raise _Abort
            if T.is_zone(tb):
                def in_zone(g: Any, L: dict) -> bool:
                    return g.ents.get(a(g, L), {}).get("zone") == b(g, L)
                text = "(g.ents.get({0}, _E).get('zone') == {1})"
                if op == "in":
                    return self.py(in_zone, text, a, b), T.BOOL
                return self.py(lambda g, L: not in_zone(g, L), f"(not {text})", a, b), T.BOOL
            seq = _spent(self.seq(b, tb))
            if op == "in":
                return self.py(lambda g, L: a(g, L) in seq(g, L), "({0} in _w(g, {1}))", a, self.seq(b, tb)), T.BOOL
            return self.py(lambda g, L: a(g, L) not in seq(g, L), "({0} not in _w(g, {1}))", a,
                           self.seq(b, tb)), T.BOOL
        if op in ("==", "!="):
            const = _constant(n.right, scope)
            if const is not _NOT_CONSTANT:
                k = const
                if op == "==":
                    return self.py(lambda g, L: a(g, L) == k, f"({{0}} == {self.k(k)})", a), T.BOOL
                return self.py(lambda g, L: a(g, L) != k, f"({{0}} != {self.k(k)})", a), T.BOOL
            if T.is_list(ta) or T.is_list(tb):  # lists compare item by item: work
                if op == "==":
                    return self.py(lambda g, L: equal_lists(g, a(g, L), b(g, L)), "_eq(g, {0}, {1})", a, b), T.BOOL
                return self.py(lambda g, L: not equal_lists(g, a(g, L), b(g, L)), "(not _eq(g, {0}, {1}))",
                               a, b), T.BOOL
            if op == "==":
                return self.py(lambda g, L: a(g, L) == b(g, L), "({0} == {1})", a, b), T.BOOL
            return self.py(lambda g, L: a(g, L) != b(g, L), "({0} != {1})", a, b), T.BOOL
        if op in ("<", "<=", ">", ">="):
            for t, side in ((ta, n.left), (tb, n.right)):
                if t not in (T.INT, T.ANY, T.STR):
                    self.err(side.pos, f"wrong type: '{op}' compares numbers, not {T.describe(t)}")
                    raise _Abort
            cmp = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]

            def compare(g: Any, L: dict) -> bool:
                x, y = a(g, L), b(g, L)
                try:
                    return cmp(x, y)
                except TypeError:
                    raise _fault(f"cannot compare {g.label_of(x)} {op} {g.label_of(y)}", loc) from None
            return self.py(compare, f"({{0}} {op} {{1}})", a, b), T.BOOL
        if op == "..":
            for t, side in ((ta, n.left), (tb, n.right)):
                if not T.compatible(T.INT, t):
                    self.err(side.pos, f"wrong type: a range 'a..b' needs numbers, not {T.describe(t)}")
                    raise _Abort
            def span(g: Any, L: dict) -> list[int]:
                lo, hi = a(g, L), b(g, L)
                if hi - lo >= MAX_RANGE:
                    raise _fault(f"the range {g.label_of(lo)[:24]}..{g.label_of(hi)[:24]} is too long "
                                 f"(more than {MAX_RANGE:,} numbers)", loc)
                g.spend(max(0, hi - lo + 1))
                return list(range(lo, hi + 1))
            return self.py(span, "_span(g, {0}, {1})", a, b), T.list_of(T.INT)
        raise AssertionError(op)


class _Builder:
    """Emits the flat instruction list of one procedure."""

    def __init__(self, c: Compiler, proc: Procedure) -> None:
        self.c = c
        self.proc = proc
        self.code: list[OpFn | None] = []
        self.locs: list[Loc] = []
        self.loops: list[list[int]] = []  # per open loop: indexes of 'break' jumps to patch
        self.loop_ends: list[str] = []
        self.counter = 0
        self.plan: Plan | None = None  # set by a statement that is not a simple one (see block)
        self.break_plans: dict[int, Plan] = {}  # instruction index of each 'break' -> its plan

    def emit(self, op: OpFn | None, pos: A.Pos) -> int:
        self.code.append(op)
        self.locs.append(self.c.loc(pos))
        return len(self.code) - 1

    def patch(self, index: int, op: OpFn) -> None:
        self.code[index] = op

    def here(self) -> int:
        return len(self.code)

    def finish(self) -> None:
        self.proc.code = [op if op is not None else _nop for op in self.code]
        self.proc.locs = self.locs

    def block(self, stmts: list[A.Node], scope: Scope) -> list[Plan]:
        plans: list[Plan] = []
        for s in stmts:
            start = self.here()
            self.plan = None
            with contextlib.suppress(_Abort):  # already reported; keep checking the next statements
                getattr(self, "s_" + type(s).__name__)(s, scope)
            end = self.here()
            # a statement of one instruction is a simple one, unless it said otherwise
            plan = self.plan if self.plan is not None else Plan("op" if end - start == 1 else "pause")
            plan.at, plan.end = start, end
            plans.append(plan)
        return plans

    # --------------------------------------------------------- simple statements
    def s_Pass(self, s: A.Pass, scope: Scope) -> None:
        self.emit(_nop, s.pos)

    def s_Let(self, s: A.Let, scope: Scope) -> None:
        fn, t = self.c.expr(s.value, scope)
        name = s.name
        if name in self.c.rs.globals:
            self.c.err(s.pos, f"'{name}' is a global; 'let' would hide it", f"use 'set {name} = ...'")
        scope[name] = t

        def let(g: Any, fr: dict) -> None:
            fr["locals"][name] = fn(g, fr["locals"])
        self.emit(let, s.pos)
        self.plan = Plan("let", name=name, fns=[fn])

    def s_Set(self, s: A.Set, scope: Scope) -> None:
        c = self.c
        loc = c.loc(s.pos)
        op = s.op
        if isinstance(s.target, A.Name):
            name = s.target.name
            if name in scope:
                t = scope[name]
                kind = "local"
            elif name in c.rs.globals:
                t = c.rs.globals[name].type
                kind = "global"
            else:
                c.err(s.target.pos, f"unknown variable '{name}'",
                      did_you_mean(name, list(scope) + list(c.rs.globals)) or "declare it with 'let' or in 'globals'")
                raise _Abort
            fn = self._value(s, t, scope)

            def set_var(g: Any, fr: dict) -> None:
                L = fr["locals"]
                store = g.glob if kind == "global" else L
                v = fn(g, L)
                if op == "=":
                    store[name] = v
                else:
                    cur = store[name]
                    if not isinstance(cur, int):
                        raise _fault(f"cannot {'increase' if op == '+' else 'decrease'} '{name}': it is {g.label_of(cur)}", loc)
                    store[name] = checked_int(cur + v if op == "+" else cur - v, loc)
                if kind == "global":
                    # after the value is computed: results remembered while computing it
                    # were read from the old value
                    g.changed()
            self.emit(set_var, s.pos)
            if op == "=":
                code = "L[{0}] = {1}(g, L)" if kind == "local" else "g.glob[{0}] = {1}(g, L)\ng.changed()"
                self.plan = Plan("inline", code=code, fns=[name, fn])
            return
        target = s.target
        assert isinstance(target, A.Attr)
        obj, ot = c.expr(target.obj, scope)
        fname = target.name
        if T.is_ent(ot) and T.arg(ot) != "*":
            kind_def = c.rs.kinds[T.arg(ot)]
            if fname not in kind_def.fields:
                c.err(target.pos, f"{kind_def.name} has no field '{fname}'", did_you_mean(fname, kind_def.fields))
                raise _Abort
            t = kind_def.fields[fname].type
        elif ot == T.ANY or T.is_ent(ot):
            t = T.ANY
        else:
            c.err(target.pos, f"wrong type: cannot set a field of {T.describe(ot)}")
            raise _Abort
        fn = self._value(s, t, scope)

        def set_field(g: Any, fr: dict) -> None:
            L = fr["locals"]
            g.set_field(obj(g, L), fname, fn(g, L), op, loc)
        self.emit(set_field, s.pos)
        self.plan = Plan("inline", code="g.set_field({0}(g, L), {1}, {2}(g, L), {3}, {4})",
                         fns=[obj, fname, fn, op, loc])

    def _value(self, s: A.Set, t: str, scope: Scope) -> ExprFn:
        if s.op == "=":
            fn, vt = self.c.expr(s.value, scope)
            if not T.compatible(t, vt):
                self.c.err(s.value.pos, f"wrong type: cannot store {T.describe(vt)} where {T.describe(t)} is kept")
                raise _Abort
            return fn
        if not T.compatible(T.INT, t):
            self.c.err(s.pos, f"wrong type: only numbers can be increased or decreased, not {T.describe(t)}")
            raise _Abort
        return self.c.want(s.value, scope, T.INT, "the amount")

    def _zone(self, node: A.Node, scope: Scope, what: str) -> ExprFn:
        fn, t = self.c.expr(node, scope)
        if not (T.is_zone(t) or t == T.ANY):
            self.c.err(node.pos, f"wrong type: {what} must be a zone, not {T.describe(t)}")
            raise _Abort
        return fn

    def s_Move(self, s: A.Move, scope: Scope) -> None:
        what, wt = self.c.expr(s.what, scope)
        if not (T.is_ent(wt) or T.is_list(wt) or T.is_zone(wt) or wt == T.ANY):
            self.c.err(s.what.pos, f"wrong type: can only move entities, not {T.describe(wt)}")
            raise _Abort
        many = T.is_list(wt) or T.is_zone(wt)
        items = self.c.seq(what, wt) if many else None
        dest = self._zone(s.dest, scope, "the destination")
        top = s.top
        loc = self.c.loc(s.pos)

        def move(g: Any, fr: dict) -> None:
            L = fr["locals"]
            key = dest(g, L)
            if items is not None:
                for e in list(items(g, L)):
                    g.move(e, key, top, loc)
            else:
                g.move(what(g, L), key, top, loc)
        self.emit(move, s.pos)
        if items is None:
            self.plan = Plan("inline", code="_d = {0}(g, L)\ng.move({1}(g, L), _d, {2}, {3})",
                             fns=[dest, what, top, loc])

    def s_Draw(self, s: A.Draw, scope: Scope) -> None:
        n = self.c.want(s.count, scope, T.INT, "the number to draw")
        src = self._zone(s.src, scope, "the zone drawn from")
        dest = self._zone(s.dest, scope, "the destination")
        loc = self.c.loc(s.pos)

        def draw(g: Any, fr: dict) -> None:
            L = fr["locals"]
            key = dest(g, L)
            for e in list(g.zone_items(src(g, L))[: max(0, n(g, L))]):
                g.move(e, key, False, loc)
        self.emit(draw, s.pos)

    def s_Shuffle(self, s: A.Shuffle, scope: Scope) -> None:
        zone = self._zone(s.zone, scope, "what is shuffled")
        self.emit(lambda g, fr: g.shuffle(zone(g, fr["locals"])), s.pos)

    def s_Create(self, s: A.Create, scope: Scope) -> None:
        c = self.c
        if s.kind not in c.rs.kinds or s.kind == PLAYER_KIND:
            c.err(s.pos, f"unknown kind '{s.kind}'" if s.kind != PLAYER_KIND else "players cannot be created",
                  did_you_mean(s.kind, c.rs.kinds))
            raise _Abort
        kind_def = c.rs.kinds[s.kind]
        zone = self._zone(s.zone, scope, "where it is created") if s.zone is not None else None
        fields: list[tuple[str, ExprFn]] = []
        for fname, node, fpos in s.fields:
            if fname not in kind_def.fields:
                c.err(fpos, f"{kind_def.name} has no field '{fname}'", did_you_mean(fname, kind_def.fields))
                raise _Abort
            fields.append((fname, c.want(node, scope, kind_def.fields[fname].type, f"field '{fname}'")))
        kind = s.kind
        bind = s.bind
        called = c.want(s.called, scope, T.STR, "the id after 'called'") if s.called is not None else None
        if bind:
            scope[bind] = T.ent(kind)
        loc = c.loc(s.pos)

        def create(g: Any, fr: dict) -> None:
            L = fr["locals"]
            eid = g.create(kind, {f: fn(g, L) for f, fn in fields}, zone(g, L) if zone else None, loc,
                           called(g, L) if called else None)
            if bind:
                L[bind] = eid
        self.emit(create, s.pos)

    def s_Destroy(self, s: A.Destroy, scope: Scope) -> None:
        what, wt = self.c.expr(s.what, scope)
        if not (T.is_ent(wt) or wt == T.ANY):
            self.c.err(s.what.pos, f"wrong type: can only destroy an entity, not {T.describe(wt)}")
            raise _Abort
        loc = self.c.loc(s.pos)
        self.emit(lambda g, fr: g.destroy(what(g, fr["locals"]), loc), s.pos)

    def s_Roll(self, s: A.Roll, scope: Scope) -> None:
        c = self.c
        count = c.want(s.count, scope, T.INT, "the number of dice") if s.count is not None else None
        bonus = c.want(s.bonus_on, scope, T.INT, "the bonus face") if s.bonus_on is not None else None
        sides = s.sides
        bind = s.bind
        scope[bind] = T.INT if count is None else T.list_of(T.INT)
        loc = c.loc(s.pos)

        def roll(g: Any, fr: dict) -> None:
            L = fr["locals"]
            if count is None:
                L[bind] = g.roll(1, sides, None, loc)[0]
            else:
                L[bind] = g.roll(count(g, L), sides, bonus(g, L) if bonus else None, loc)
        self.emit(roll, s.pos)

    def s_Log(self, s: A.Log, scope: Scope) -> None:
        fn, _ = self.c.expr(s.text, scope)
        self.emit(lambda g, fr: g.narrate(g.label_of(fn(g, fr["locals"]))), s.pos)
        self.plan = Plan("inline", code="g.narrate(g.label_of({0}(g, L)))", fns=[fn])

    def s_GameOver(self, s: A.GameOver, scope: Scope) -> None:
        fn = self.c.expr(s.reason, scope)[0] if s.reason is not None else None
        self.emit(lambda g, fr: g.finish(g.label_of(fn(g, fr["locals"])) if fn else "game over"), s.pos)
        self.plan = Plan("pause")  # the rules stop here

    def s_Signal(self, s: A.Signal, scope: Scope) -> None:
        name = s.name
        self.c.signals.add(name)
        self.emit(lambda g, fr: g.signal(name), s.pos)

    # --------------------------------------------------------- choices
    def _options(self, node: A.Node, scope: Scope) -> tuple[ExprFn, str]:
        fn, t = self.c.expr(node, scope)
        if not T.iterable(t):
            self.c.err(node.pos, f"wrong type: the options must be a list or zone, not {T.describe(t)}")
            raise _Abort
        return self.c.seq(fn, t), T.element(t)

    def _player(self, node: A.Node | None, scope: Scope, pos: A.Pos) -> ExprFn:
        if node is None:
            self.c.err(pos, "a choice needs the player who makes it", "add 'by PLAYER', e.g. 'by actor'")
            raise _Abort
        return self.c.want(node, scope, T.ent(PLAYER_KIND), "the deciding player ('by')")

    def _text(self, node: A.Node | None, scope: Scope) -> ExprFn | None:
        if node is None:
            return None
        fn, _ = self.c.expr(node, scope)
        return fn

    def s_Choose(self, s: A.Choose, scope: Scope) -> None:
        options, el = self._options(s.options, scope)
        by = self._player(s.by, scope, s.pos)
        prompt = self._text(s.prompt, scope)
        inner = dict(scope)
        inner[s.var] = el
        label = self._text(s.label, inner)
        scope[s.var] = el
        var = s.var
        secret = s.secret
        loc = self.c.loc(s.pos)

        def choose(g: Any, fr: dict) -> None:
            L = fr["locals"]
            g.ask(by(g, L), options(g, L), var, L, prompt(g, L) if prompt else None, label, loc, secret)
        self.emit(choose, s.pos)
        self.plan = Plan("pause")

    def s_ChooseAction(self, s: A.ChooseAction, scope: Scope) -> None:
        c = self.c
        if s.group not in c.rs.groups:
            c.err(s.pos, f"unknown action group '{s.group}'", did_you_mean(s.group, c.rs.groups))
            raise _Abort
        by = self._player(s.by, scope, s.pos)
        group = s.group
        bind = s.bind
        if bind:
            scope[bind] = T.ANY
        loc = c.loc(s.pos)
        self.emit(lambda g, fr: g.ask_action(by(g, fr["locals"]), group, bind, loc), s.pos)
        self.plan = Plan("pause")

    def s_Secret(self, s: A.Secret, scope: Scope) -> None:
        players_fn, pt = self.c.expr(s.players, scope)
        if not T.compatible(T.list_of(T.ent(PLAYER_KIND)), pt):
            self.c.err(s.players.pos, f"wrong type: a secret choice is made by a list of players, not {T.describe(pt)}")
            raise _Abort
        inner = dict(scope)
        inner[s.pvar] = T.ent(PLAYER_KIND)
        options, el = self._options(s.options, inner)
        prompt = self._text(s.prompt, inner)
        inner2 = dict(inner)
        inner2[s.var] = el
        label = self._text(s.label, inner2)
        scope[s.var] = f"map:{el}"
        pvar, var = s.pvar, s.var
        loc = self.c.loc(s.pos)

        def secret(g: Any, fr: dict) -> None:
            L = fr["locals"]
            g.ask_secret(list(players_fn(g, L)), pvar, options, var, L, prompt, label, loc)
        self.emit(secret, s.pos)
        self.plan = Plan("pause")

    # --------------------------------------------------------- control flow
    def _jump_if_false(self, test: ExprFn) -> Callable[[int], OpFn]:
        def make(target: int) -> OpFn:
            def jump_if_false(g: Any, fr: dict) -> None:
                if not test(g, fr["locals"]):
                    fr["pc"] = target
            return jump_if_false
        return make

    @staticmethod
    def _jump(target: int) -> OpFn:
        def jump(g: Any, fr: dict) -> None:
            fr["pc"] = target
        return jump

    def s_If(self, s: A.If, scope: Scope) -> None:
        ends: list[int] = []
        plan = Plan("if")
        for test_node, body in s.branches:
            try:
                test = self.c.want(test_node, scope, T.BOOL, "an 'if' condition")
            except _Abort:
                test = lambda g, L: False  # noqa: E731 - keeps compiling the body to report more errors
            jif = self.emit(None, test_node.pos)
            plan.fns.append(test)
            plan.ats.append(jif)
            plan.blocks.append(self.block(body, scope))
            ends.append(self.emit(None, s.pos))
            self.patch(jif, self._jump_if_false(test)(self.here()))
        if s.other is not None:
            plan.blocks.append(self.block(s.other, scope))
        end = self.here()
        for i in ends:
            self.patch(i, self._jump(end))
        self.plan = plan

    def _loop(self, body: Callable[[], list[Plan]]) -> tuple[list[int], list[Plan]]:
        self.loops.append([])
        plans = body()
        return self.loops.pop(), plans

    def s_While(self, s: A.While, scope: Scope) -> None:
        top = self.here()
        test = self.c.want(s.test, scope, T.BOOL, "a 'while' condition")
        jif = self.emit(None, s.pos)
        breaks, body = self._loop(lambda: self.block(s.body, scope))
        self.emit(self._jump(top), s.pos)
        end = self.here()
        self.patch(jif, self._jump_if_false(test)(end))
        self._breaks_to(breaks, end)
        self.plan = Plan("while", fns=[test], blocks=[body], ats=[jif])

    def s_Repeat(self, s: A.Repeat, scope: Scope) -> None:
        top = self.here()
        breaks, body = self._loop(lambda: self.block(s.body, scope))
        test = self.c.want(s.until, scope, T.BOOL, "an 'until' condition")
        until = self.emit(self._jump_if_false(test)(top), s.until.pos)
        end = self.here()
        self._breaks_to(breaks, end)
        self.plan = Plan("repeat", fns=[test], blocks=[body], ats=[until])

    def _breaks_to(self, breaks: list[int], target: int) -> None:
        for b in breaks:
            self.patch(b, self._jump(target))
            self.break_plans[b].ats = [target]

    def s_Break(self, s: A.Break, scope: Scope) -> None:
        if not self.loops:
            self.c.err(s.pos, "'break' outside a loop")
            raise _Abort
        index = self.emit(None, s.pos)
        self.loops[-1].append(index)
        self.plan = self.break_plans[index] = Plan("break")

    def s_For(self, s: A.For, scope: Scope) -> None:
        c = self.c
        src, st = c.expr(s.source, scope)
        if not T.iterable(st):
            c.err(s.source.pos, f"wrong type: cannot go through {T.describe(st)}")
            raise _Abort
        seq = c.seq(src, st)
        self.counter += 1
        it = f"${s.var}{self.counter}"
        var = s.var
        scope[var] = T.element(st)
        where = c.want(s.where, scope, T.BOOL, "a 'where' condition") if s.where else None

        def init(g: Any, fr: dict) -> None:
            L = fr["locals"]
            L[it] = [list(seq(g, L)), 0]
        first = self.emit(init, s.pos)
        top = self.here()
        nxt = self.emit(None, s.pos)
        breaks, body = self._loop(lambda: self.block(s.body, scope))
        self.emit(self._jump(top), s.pos)
        end = self.here()

        def next_item(g: Any, fr: dict) -> None:
            L = fr["locals"]
            state = L[it]
            items, i = state
            while i < len(items):
                L[var] = items[i]
                i += 1
                if where is None or where(g, L):
                    state[1] = i
                    return
            del L[it]
            fr["pc"] = end
        self.patch(nxt, next_item)
        # Both an exhausted loop and 'break' land here; dropping the iterator keeps locals small.
        exit_op_index = self.emit(None, s.pos)

        def drop_iter(g: Any, fr: dict) -> None:
            fr["locals"].pop(it, None)
        self.patch(exit_op_index, drop_iter)
        self._breaks_to(breaks, exit_op_index)
        self.plan = Plan("for", name=var, fns=[seq, where], blocks=[body], ats=[first, nxt], bind=it)

    def s_CallProc(self, s: A.CallProc, scope: Scope) -> None:
        c = self.c
        if s.proc not in c.rs.procedures:
            extra = " (it is a function: use it in an expression)" if s.proc in c.rs.functions else ""
            c.err(s.pos, f"unknown procedure '{s.proc}'{extra}", did_you_mean(s.proc, c.rs.procedures))
            raise _Abort
        target = c.rs.procedures[s.proc]
        args = c.check_args(s, list(target.params.items()), scope, f"procedure '{s.proc}'")  # type: ignore[arg-type]
        pnames = list(target.params)
        name = s.proc
        bind = s.bind
        if bind:
            scope[bind] = T.ANY
        loc = c.loc(s.pos)

        def call(g: Any, fr: dict) -> None:
            L = fr["locals"]
            g.push(name, {p: a(g, L) for p, a in zip(pnames, args, strict=True)}, bind, loc)
        self.emit(call, s.pos)
        self.plan = Plan("call", name=name, fns=list(args), names=pnames, bind=bind)

    def s_Return(self, s: A.Return, scope: Scope) -> None:
        fn = self.c.expr(s.value, scope)[0] if s.value is not None else None
        self.emit(lambda g, fr: g.ret(fn(g, fr["locals"]) if fn else None), s.pos)
        self.plan = Plan("return", fns=[fn])

    # --------------------------------------------------------- modifiers
    def s_Modify(self, s: A.Modify, scope: Scope) -> None:
        c = self.c
        if s.point not in c.rs.points:
            c.err(s.pos, f"unknown modifier point '{s.point}'", did_you_mean(s.point, c.rs.points))
            raise _Abort
        point = c.rs.points[s.point]
        want = T.INT if s.mode == "add" else point.type
        value = c.want(s.value, scope, want, "the modifier's change")
        inner = dict(scope)
        inner.update(point.params)
        when = c.want(s.when, inner, T.BOOL, "a 'when' condition") if s.when else None
        # A lifetime condition sees only the captured locals and the game, never the reading's
        # parameters, so the runtime can drop a dead modifier without reading the point.
        while_ = c.want(s.while_, scope, T.BOOL, "a 'while' condition") if s.while_ else None
        # 'when' sees the point's parameters (they shadow locals); 'while' sees only locals.
        captured = sorted({n.name for n in A.walk([s.when]) if isinstance(n, A.Name)
                           and n.name in scope and n.name not in point.params}
                          | {n.name for n in A.walk([s.while_]) if isinstance(n, A.Name) and n.name in scope})
        site = f"{self.proc.name}#{self.here()}"
        c.rs.sites[site] = ModifierSite(when, while_, captured)
        if s.until:
            c.untils.append((s.until, c.loc(s.pos)))
        record: dict[str, Any] = {"point": s.point, "mode": s.mode, "until": s.until, "once": s.once}
        where = c.loc(s.pos)
        # folder/file:line:col, the same wherever the game runs (the state must not depend on the cwd)
        source = f"{Path(where.file).parent.name}/{Path(where.file).name}:{where.line}:{where.col}"

        def modify(g: Any, fr: dict) -> None:
            L = fr["locals"]
            rec = dict(record)
            rec["value"] = value(g, L)
            rec["site"] = site
            rec["captured"] = {n: L[n] for n in captured if n in L}
            rec["source"] = source
            g.add_modifier(rec)
        self.emit(modify, s.pos)

    def s_Consume(self, s: A.Consume, scope: Scope) -> None:
        c = self.c
        if s.point not in c.rs.points:
            c.err(s.pos, f"unknown modifier point '{s.point}'", did_you_mean(s.point, c.rs.points))
            raise _Abort
        point = c.rs.points[s.point]
        args = c.check_args(s, list(point.params.items()), scope, f"modifier point '{s.point}'")
        name = s.point
        self.emit(lambda g, fr: g.consume(name, [a(g, fr["locals"]) for a in args]), s.pos)


class _JoinedOrigin:
    """An expression written over several lines is parsed as one line; this maps it back."""

    def __init__(self, origin: TextOrigin, places: list[tuple[int, int]]) -> None:
        self.origin = origin
        self.places = places
        self.loc = origin.loc

    def locate(self, line: int, col: int) -> Loc:
        if line == 1 and 1 <= col <= len(self.places):
            return self.origin.locate(*self.places[col - 1])
        return self.origin.locate(line, col)


def _joined(origin: TextOrigin, text: str) -> Any:
    if "\n" not in text:
        return origin
    if getattr(origin, "chars", None):
        return origin  # positions are already kept per character of the whole value
    places: list[tuple[int, int]] = []
    line, col = 1, 1
    for ch in text:
        places.append((line, col))
        if ch == "\n":
            line, col = line + 1, 1
        else:
            col += 1
    return _JoinedOrigin(origin, places)


def _pause_facts(plans: list[Plan]) -> tuple[bool, set[str]]:
    """Whether these statements never pause by themselves, and the procedures they call."""
    no_pause, callees = True, set()
    for p in plans:
        if p.kind == "pause":
            no_pause = False
        elif p.kind == "call":
            callees.add(p.name)
        for b in p.blocks:
            ok, more = _pause_facts(b)
            no_pause = no_pause and ok
            callees |= more
    return no_pause, callees


# Python compiles at most 20 nested loops and try blocks and 100 levels of indentation; a
# direct procedure's body is generated with a try, two levels per loop and one more level
# per 'elif' (its own instructions, which run otherwise, have no such limit).
_DIRECT_NESTING = 16


def _nesting(plans: list[Plan]) -> int:
    """How deep the generated Python of these statements would nest (loops count twice)."""
    deepest = 0
    stack: list[tuple[list[Plan], int]] = [(plans, 0)]
    while stack:
        block, depth = stack.pop()
        for p in block:
            for i, b in enumerate(p.blocks):
                inner = depth + (i + 1 if p.kind == "if" else 2)
                deepest = max(deepest, inner)
                stack.append((b, inner))
    return deepest


def _fuse_runs(w: StatementWriter, plans: list[Plan], code: list[OpFn]) -> None:
    """Make the first instruction of a block, and of each statement after one that may pause,
    run the rest of the block (the places where instructions are entered one by one)."""
    for i in range(len(plans)):
        if i == 0 or w.may_pause(plans[i - 1]):
            run = plans[i:]
            if run[-1].end - run[0].at > 1:  # one instruction alone gains nothing
                code[run[0].at] = w.run(run)
    for p in plans:
        for b in p.blocks:
            _fuse_runs(w, b, code)


def _spent(seq: ExprFn) -> ExprFn:
    """``seq``, counting each item of the list it gives as a step of work."""
    def spent(g: Any, L: dict) -> Any:
        s = seq(g, L)
        g.spend(len(s))
        return s
    return spent


def _seq_value(t: str) -> Callable[[Any, Any], Any]:
    """How a value of type ``t`` becomes a Python sequence (as Compiler.seq does for a closure)."""
    if T.is_zone(t):
        return lambda g, x: g.zone_items(x)
    if T.is_list(t):
        return lambda g, x: x
    return lambda g, x: g.as_seq(x)


def _seq_text(t: str, text: str) -> str:
    """Source of the same conversion as :func:`_seq_value`."""
    if T.is_zone(t):
        return f"g.zones[{text}]"
    return text if T.is_list(t) else f"g.as_seq({text})"


def _concat(g: Any, a: Any, b: Any, loc: Loc | None) -> list:
    """``a + b`` of two lists: counted as work, at most MAX_LIST items."""
    if len(a) + len(b) > MAX_LIST:  # before the work, as _cat does: the same error either way
        raise checked_size_error(len(a) + len(b), loc)
    g.spend(len(a) + len(b))
    return list(a) + list(b)


def _add(g: Any, x: Any, y: Any) -> Any:
    return x + y


def _sub(g: Any, x: Any, y: Any) -> Any:
    return x - y


def _const_text(text: str) -> Callable[[Any, dict], str]:
    return lambda g, L: text


def _label_text(fn: ExprFn) -> Callable[[Any, dict], str]:
    return lambda g, L: g.label_of(fn(g, L))


def _nop(g: Any, fr: dict) -> None:
    return None


def compile_function(c: Compiler, fdef: FunctionDef, text: str, origin: TextOrigin) -> None:
    """Compile a pure function's body (an expression over its parameters)."""
    fn, _ = c.expression(text, origin, dict(fdef.params), fdef.returns, f"the result of '{fdef.name}'")
    fdef.fn = fn
    if fn is not None and c.generate:
        c.gen.function(fdef.name, list(fdef.params), c.src.get(fn), fn)


_NOT_CONSTANT = object()
_LITERALS: dict[str, Any] = {"none": None, "true": True, "false": False}


def _constant(node: A.Node, scope: Scope) -> Any:
    """The value of a literal number, plain string, none, true or false; else _NOT_CONSTANT."""
    if isinstance(node, A.Num):
        return node.value
    if isinstance(node, A.Str) and len(node.parts) == 1 and isinstance(node.parts[0], str):
        return node.parts[0]
    if isinstance(node, A.Str) and not node.parts:
        return ""
    if isinstance(node, A.Name) and node.name in _LITERALS and node.name not in scope:
        return _LITERALS[node.name]
    return _NOT_CONSTANT
