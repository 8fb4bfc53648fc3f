"""Statements of the rules language: checked, and turned into a tree the writer makes Python of.

:class:`Statements` checks one procedure's statements (names, types, where a choice or a
loop is allowed) and builds a tree of :class:`Stmt`: simple statements as lines of Python
(with the sources of their expressions), control flow as nested blocks, and the statements
that hand control back to the engine (a choice, a call of a procedure that may pause, the end
of the game, a return). procwriter.py writes the tree as one Python function.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..diagnostics import did_you_mean
from ..model import PLAYER_KIND, Procedure
from . import ast as A
from . import types as T
from .decisions import Decisions
from .expressions import Abort, Expressions, Scope
from .modifying import Modifying
from .source import Src, local
from .stmt import Line, Stmt
from .types import Type

MAX_LOOPS = 16  # loops inside each other in one procedure (Python compiles at most 20 nested blocks)
MAX_BLOCKS = 40  # blocks inside each other (each may add an indentation level or two)


class Statements(Decisions, Modifying):
    """Checks the statements of one procedure and builds their tree (the statements that hand
    control to the engine: see decisions.py)."""

    def __init__(self, x: Expressions, proc: Procedure, roots: Any) -> None:
        self.x = x
        self.rs = x.rs
        self.proc = proc
        self.roots = roots  # makes a function of an expression for the engine (labels, prompts, sites)
        self.loops = 0  # loops open around the statement being compiled
        self.blocks = 0
        self.fors = 0  # 'for' statements so far (each keeps its place in a local '$<n>_VAR')
        # Each statement's number in the procedure's numbering of steps, which names the
        # sites of its modifiers ('proc#12') in saved games; kept as it has always been counted.
        self.step = 0
        self.signals: set[str] = set()
        self.untils: list[tuple[str, Any]] = []

    def where(self, pos: A.Pos) -> Any:
        return (self.x.origin, pos[0], pos[1])

    def err(self, pos: A.Pos, message: str, hint: str = "") -> None:
        self.x.err(pos, message, hint)

    def block(self, stmts: list[A.Node], scope: Scope) -> list[Stmt]:
        self.blocks += 1
        if self.blocks > MAX_BLOCKS and stmts:
            self.err(stmts[0].pos, f"blocks nested too deeply to run (more than {MAX_BLOCKS} inside each other)",
                     "move the inner part into a procedure")
            self.blocks -= 1
            return []
        out: list[Stmt] = []
        for s in stmts:
            with contextlib.suppress(Abort):  # already reported; keep checking the next statements
                out.append(getattr(self, "s_" + type(s).__name__)(s, scope))
        self.blocks -= 1
        return out

    @staticmethod
    def bind(st: Stmt, *names: str | None) -> Stmt:
        st.binds += [n for n in names if n]
        return st

    def do(self, pos: A.Pos, *lines: Line) -> Stmt:
        self.step += 1
        return Stmt("do", self.where(pos), list(lines))

    # --------------------------------------------------------- simple statements
    def s_Pass(self, s: A.Pass, scope: Scope) -> Stmt:
        return self.do(s.pos)

    def s_Commit(self, s: A.Commit, scope: Scope) -> Stmt:
        return self.do(s.pos, ("g.commit()",))

    def s_Let(self, s: A.Let, scope: Scope) -> Stmt:
        value, t = self.x.expr(s.value, scope)
        if s.name in self.rs.globals:
            self.err(s.pos, f"'{s.name}' is a global; 'let' would hide it", f"use 'set {s.name} = ...'")
        elif s.name in self.rs.constants:
            self.err(s.pos, f"'{s.name}' is a constant; 'let' would hide it", "choose another name")
        # `let x = none` declares a local set later: it keeps any value
        scope[s.name] = T.ANY if t == T.NONE else t
        return self.bind(self.do(s.pos, (f"{local(s.name)} = ", value)), s.name)

    def s_Set(self, s: A.Set, scope: Scope) -> Stmt:
        x = self.x
        op = s.op
        if isinstance(s.target, A.Name):
            name = s.target.name
            if name in scope:
                t, target = scope[name], local(name)
            elif name in self.rs.globals:
                t, target = self.rs.globals[name].type, f"g.glob[{name!r}]"
            elif name in self.rs.constants:
                self.err(s.target.pos, f"'{name}' is a constant: rules cannot change it",
                         "declare it under globals to change it while the game runs")
                raise Abort
            else:
                self.err(s.target.pos, f"unknown variable '{name}'",
                         did_you_mean(name, list(scope) + list(self.rs.globals)) or "declare it with 'let' or in 'globals'")
                raise Abort
            value = self._value(s, t, scope)
            if op == "=":
                line: Line = (f"{target} = ", value)
            else:
                line = (f"{target} = _step(g, {name!r}, {target}, ", value, f", {op!r})")
            if target.startswith("g."):
                # after the value is computed: results remembered meanwhile were read from the old value
                return self.do(s.pos, line, (f"g.changed_glob({name!r})",))
            return self.do(s.pos, line)
        target_attr = s.target
        assert isinstance(target_attr, A.Attr)
        obj, ot = x.expr(target_attr.obj, scope)
        fname = target_attr.name
        self.rs.fields_written.add(fname)
        if T.is_ent(ot) and T.kind_of(ot) != "*":
            kind_def = self.rs.kinds[T.kind_of(ot)]
            if fname in kind_def.procs:
                self.err(target_attr.pos, f"'{fname}' of a {kind_def.name} is a procedure: rules cannot change it",
                         "an overlay's patch of the entity's entry can")
                raise Abort
            if fname not in kind_def.fields:
                self.err(target_attr.pos, f"{kind_def.name} has no field '{fname}'", did_you_mean(fname, kind_def.fields))
                raise Abort
            t = kind_def.fields[fname].type
        elif ot == T.ANY or T.is_ent(ot):
            t = T.ANY
        else:
            self.err(target_attr.pos, f"wrong type: cannot set a field of {T.describe(ot)}")
            raise Abort
        value = self._value(s, t, scope)
        return self.do(s.pos, ("g.set_field(", obj, f", {fname!r}, ", value, f", {op!r}, None)"))

    def _value(self, s: A.Set, t: Type, scope: Scope) -> Src:
        if s.op == "=":
            value, vt = self.x.expr(s.value, scope)
            if not T.compatible(t, vt):
                self.err(s.value.pos, f"wrong type: cannot store {T.describe(vt)} where {T.describe(t)} is kept")
                raise Abort
            return value
        if not T.compatible(T.INT, t):
            self.err(s.pos, f"wrong type: only numbers can be increased or decreased, not {T.describe(t)}")
            raise Abort
        return self.x.want(s.value, scope, T.INT, "the amount")

    def _zone(self, node: A.Node, scope: Scope, what: str) -> Src:
        value, t = self.x.expr(node, scope)
        if not (T.is_zone(t) or t == T.ANY):
            self.err(node.pos, f"wrong type: {what} must be a zone, not {T.describe(t)}")
            raise Abort
        return value

    def s_Move(self, s: A.Move, scope: Scope) -> Stmt:
        what, wt = self.x.expr(s.what, scope)
        if not (T.is_ent(wt) or T.is_list(wt) or T.is_zone(wt) or wt == T.ANY):
            self.err(s.what.pos, f"wrong type: can only move entities, not {T.describe(wt)}")
            raise Abort
        dest = self._zone(s.dest, scope, "the destination")
        if T.is_list(wt) or T.is_zone(wt):
            items = self.x.seq(what, wt, s.what.pos)
            return self.do(s.pos, ("_d = ", dest), ("for _e in list(", items, "):"),
                           (f"    g.move(_e, _d, {s.top!r}, None)",))
        return self.do(s.pos, ("_d = ", dest), ("g.move(", what, f", _d, {s.top!r}, None)"))

    def s_Draw(self, s: A.Draw, scope: Scope) -> Stmt:
        n = self.x.want(s.count, scope, T.INT, "the number to draw")
        src = self._zone(s.src, scope, "the zone drawn from")
        dest = self._zone(s.dest, scope, "the destination")
        return self.do(s.pos, ("_d = ", dest), ("for _e in list(g.zone_items(", src, ")[:max(0, ", n, ")]):"),
                       ("    g.move(_e, _d, False, None)",))

    def s_Shuffle(self, s: A.Shuffle, scope: Scope) -> Stmt:
        return self.do(s.pos, ("g.shuffle(", self._zone(s.zone, scope, "what is shuffled"), ")"))

    def s_Create(self, s: A.Create, scope: Scope) -> Stmt:
        if s.kind not in self.rs.kinds or s.kind == PLAYER_KIND:
            self.err(s.pos, f"unknown kind '{s.kind}'" if s.kind != PLAYER_KIND else "players cannot be created",
                     did_you_mean(s.kind, self.rs.kinds))
            raise Abort
        kind_def = self.rs.kinds[s.kind]
        zone = self._zone(s.zone, scope, "where it is created") if s.zone is not None else None
        parts: list[Any] = [f"_r = g.create({s.kind!r}, {{"]
        for i, (fname, node, fpos) in enumerate(s.fields):
            if fname not in kind_def.fields:
                self.err(fpos, f"{kind_def.name} has no field '{fname}'", did_you_mean(fname, kind_def.fields))
                raise Abort
            parts += [", " if i else "", f"{fname!r}: ", self.x.want(node, scope, kind_def.fields[fname].type,
                                                                  f"field '{fname}'")]
        called = self.x.want(s.called, scope, T.STR, "the id after 'called'") if s.called is not None else None
        parts += ["}, ", *((zone,) if zone is not None else ("None",)), ", None, ",
                  *((called,) if called is not None else ("None",)), ")"]
        lines: list[Line] = [tuple(parts)]
        if s.bind:
            scope[s.bind] = T.ent(s.kind)
            lines.append((f"{local(s.bind)} = _r",))
        return self.bind(self.do(s.pos, *lines), s.bind)

    def s_Destroy(self, s: A.Destroy, scope: Scope) -> Stmt:
        what, wt = self.x.expr(s.what, scope)
        if not (T.is_ent(wt) or wt == T.ANY):
            self.err(s.what.pos, f"wrong type: can only destroy an entity, not {T.describe(wt)}")
            raise Abort
        return self.do(s.pos, ("g.destroy(", what, ", None)"))

    def s_Roll(self, s: A.Roll, scope: Scope) -> Stmt:
        count = self.x.want(s.count, scope, T.INT, "the number of dice") if s.count is not None else None
        bonus = self.x.want(s.bonus_on, scope, T.INT, "the bonus face") if s.bonus_on is not None else None
        scope[s.bind] = T.INT if count is None else T.list_of(T.INT)
        if count is None:
            return self.bind(self.do(s.pos, (f"{local(s.bind)} = g.roll(1, {s.sides}, None, None)[0]",)), s.bind)
        return self.bind(self.do(s.pos, (f"{local(s.bind)} = g.roll(", count, f", {s.sides}, ",
                                         *((bonus,) if bonus is not None else ("None",)), ", None)")), s.bind)

    def s_Log(self, s: A.Log, scope: Scope) -> Stmt:
        text = self.x.expr(s.text, scope)[0]
        if s.to is None and isinstance(s.text, A.Str):
            # a text (what a string gives) naming no entity is its own label: no label_of call
            return self.do(s.pos, ("_t = ", text), ("g.narrate(_t if _t not in g.ents else g.label_of(_t))",))
        if s.to is None:
            return self.do(s.pos, ("g.narrate(g.label_of(", text, "))"))
        to, tt = self.x.expr(s.to, scope)
        player = T.ent(PLAYER_KIND)
        one = T.is_ent(tt) and T.compatible(player, tt)
        many = (T.is_list(tt) or T.is_zone(tt)) and T.compatible(T.list_of(player), tt)
        if not (one or many or tt == T.ANY):
            self.err(s.to.pos, f"wrong type: a log is told to a player or a list of players, not {T.describe(tt)}")
            raise Abort
        return self.do(s.pos, ("g.narrate_to(g.label_of(", text, "), ", to, ")"))

    def s_Signal(self, s: A.Signal, scope: Scope) -> Stmt:
        self.signals.add(s.name)
        return self.do(s.pos, (f"g.signal({self.x.gen.const(s.name)})",))

    # --------------------------------------------------------- control flow
    def s_If(self, s: A.If, scope: Scope) -> Stmt:
        st = Stmt("if", self.where(s.pos))
        for test_node, body in s.branches:
            self.step += 1  # the test
            try:
                st.tests.append(self.x.want(test_node, scope, T.BOOL, "an 'if' condition"))
            except Abort:  # keep compiling the body to report more errors
                st.tests.append(Src("False"))
            st.blocks.append(self.block(body, scope))
            self.step += 1  # the jump past the other branches
        if s.other is not None:
            st.blocks.append(self.block(s.other, scope))
        return st

    def _loop_body(self, body: list[A.Node], scope: Scope, pos: A.Pos) -> list[Stmt]:
        self.loops += 1
        try:
            if self.loops > MAX_LOOPS:
                self.err(pos, f"loops nested too deeply to run (more than {MAX_LOOPS} inside each other)",
                         "move the inner loops into a procedure")
                raise Abort
            return self.block(body, scope)
        finally:
            self.loops -= 1

    def s_While(self, s: A.While, scope: Scope) -> Stmt:
        test = self.x.want(s.test, scope, T.BOOL, "a 'while' condition")
        self.step += 1
        body = self._loop_body(s.body, scope, s.pos)
        self.step += 1
        return Stmt("while", self.where(s.pos), tests=[test], blocks=[body])

    def s_Repeat(self, s: A.Repeat, scope: Scope) -> Stmt:
        body = self._loop_body(s.body, scope, s.pos)
        until = self.x.want(s.until, scope, T.BOOL, "an 'until' condition")
        self.step += 1
        return Stmt("repeat", self.where(s.pos), tests=[until], blocks=[body])

    def s_Break(self, s: A.Break, scope: Scope) -> Stmt:
        if not self.loops:
            self.err(s.pos, "'break' outside a loop")
            raise Abort
        self.step += 1
        return Stmt("break", self.where(s.pos))

    def s_For(self, s: A.For, scope: Scope) -> Stmt:
        source, st = self.x.expr(s.source, scope)
        if not T.iterable(st):
            self.err(s.source.pos, f"wrong type: cannot go through {T.describe(st)}")
            raise Abort
        seq = self.x.seq(source, st, s.source.pos)
        self.fors += 1
        tag = self.fors
        scope[s.var] = T.element(st)
        where = self.x.want(s.where, scope, T.BOOL, "a 'where' condition") if s.where else None
        self.step += 2
        body = self._loop_body(s.body, scope, s.pos)
        self.step += 2
        return Stmt("for", self.where(s.pos), var=s.var, seq=seq, tests=[where] if where is not None else [],
                    blocks=[body], tag=tag, binds=[s.var])

__all__ = ["Line", "Statements", "Stmt"]
