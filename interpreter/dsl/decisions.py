"""Statements that hand control to the engine: choices, calls of procedures, return, the end.

A mixin of :class:`~.statements.Statements`. A choice or the end of the game always pauses
the procedure; a call pauses it unless the procedure called never pauses (see procwriter.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..diagnostics import did_you_mean
from ..model import PLAYER_KIND, Ruleset
from . import ast as A
from . import types as T
from .expressions import Abort, Expressions, Scope
from .source import SAVE, Src
from .stmt import Line, Stmt
from .types import Type


class Decisions:
    """Choices, calls, return and the end of the game (a mixin of Statements)."""

    x: Expressions
    rs: Ruleset
    step: int
    roots: Any

    if TYPE_CHECKING:
        def where(self, pos: A.Pos) -> Any: ...
        def err(self, pos: A.Pos, message: str, hint: str = "") -> None: ...

    def s_GameOver(self, s: A.GameOver, scope: Scope) -> Stmt:
        self.step += 1
        reason = self.x.expr(s.reason, scope)[0] if s.reason is not None else None
        line: Line = ("g.finish(g.label_of(", reason, "))") if reason is not None else ("g.finish('game over')",)
        return Stmt("end", self.where(s.pos), [line])

    def _options(self, node: A.Node, scope: Scope) -> tuple[Src, Type]:
        value, t = self.x.expr(node, scope)
        if not T.iterable(t):
            self.err(node.pos, f"wrong type: the options must be a list or zone, not {T.describe(t)}")
            raise Abort
        return self.x.seq(value, t, node.pos), T.element(t)

    def _player(self, node: A.Node | None, scope: Scope, pos: A.Pos) -> Src:
        if node is None:
            self.err(pos, "a choice needs the player who makes it", "add 'by PLAYER', e.g. 'by actor'")
            raise Abort
        return self.x.want(node, scope, T.ent(PLAYER_KIND), "the deciding player ('by')")

    def _root(self, node: A.Node | None, scope: Scope) -> str:
        """The engine's function for an expression evaluated per option (a label, a prompt): a constant."""
        if node is None:
            return "None"
        value, _ = self.x.expr(node, scope)
        return self.x.gen.const(self.roots(value, "a label"))

    def s_Choose(self, s: A.Choose, scope: Scope) -> Stmt:
        options, el = self._options(s.options, scope)
        by = self._player(s.by, scope, s.pos)
        prompt = self.x.expr(s.prompt, scope)[0] if s.prompt is not None else None
        inner = dict(scope)
        inner[s.var] = el
        label = self._root(s.label, inner)
        scope[s.var] = el
        self.step += 1
        line = ("g.ask(", by, ", ", options, f", {s.var!r}, {SAVE}, ",
                *((prompt,) if prompt is not None else ("None",)), f", {label}, None, {s.secret!r})")
        return Stmt("ask", self.where(s.pos), [line], binds=[s.var])

    def s_ChooseAction(self, s: A.ChooseAction, scope: Scope) -> Stmt:
        if s.group not in self.rs.groups:
            self.err(s.pos, f"unknown action group '{s.group}'", did_you_mean(s.group, self.rs.groups))
            raise Abort
        by = self._player(s.by, scope, s.pos)
        prompt = self.x.expr(s.prompt, scope)[0] if s.prompt is not None else None
        if s.bind:
            scope[s.bind] = T.ANY
        self.step += 1
        return Stmt("ask", self.where(s.pos), [(SAVE,),
                                                ("g.ask_action(", by, f", {self.x.gen.const(s.group)}, {s.bind!r}, None",
                                                 *((", ", prompt) if prompt is not None else ()), ")")],
                    binds=[s.bind] if s.bind else [])

    def s_Secret(self, s: A.Secret, scope: Scope) -> Stmt:
        players, pt = self.x.expr(s.players, scope)
        if not T.compatible(T.list_of(T.ent(PLAYER_KIND)), pt):
            self.err(s.players.pos, f"wrong type: a secret choice is made by a list of players, not {T.describe(pt)}")
            raise Abort
        inner = dict(scope)
        inner[s.pvar] = T.ent(PLAYER_KIND)
        options, el = self._options(s.options, inner)
        options_root = self.x.gen.const(self.roots(options, "the options"))
        prompt = self._root(s.prompt, inner)
        inner2 = dict(inner)
        inner2[s.var] = el
        label = self._root(s.label, inner2)
        scope[s.var] = T.map_of(el)
        self.step += 1
        return Stmt("ask", self.where(s.pos), [("g.ask_secret(list(", players, f"), {s.pvar!r}, {options_root}, "
                                                f"{s.var!r}, {SAVE}, {prompt}, {label}, None)")],
                    binds=[s.var])

    def s_CallProc(self, s: A.CallProc, scope: Scope) -> Stmt:
        if s.proc not in self.rs.procedures:
            extra = " (it is a function: use it in an expression)" if s.proc in self.rs.functions else ""
            self.err(s.pos, f"unknown procedure '{s.proc}'{extra}", did_you_mean(s.proc, self.rs.procedures))
            raise Abort
        target = self.rs.procedures[s.proc]
        args = self.x.check_args(s, list(target.params.items()), scope, f"procedure '{s.proc}'")  # type: ignore[arg-type]
        if s.bind:
            scope[s.bind] = T.ANY
        self.step += 1
        return Stmt("call", self.where(s.pos), proc=s.proc, args=args, bind=s.bind, names=list(target.params),
                    binds=[s.bind] if s.bind else [])

    def s_CallField(self, s: A.CallField, scope: Scope) -> Stmt:
        """``call e.FIELD(args)``: the procedure entity ``e`` carries (always run on a frame, as
        the procedure is known only when the statement runs)."""
        receiver, t = self.x.expr(A.Name(s.pos, s.var), scope)
        kind = T.kind_of(t) if T.is_ent(t) else None
        kd = self.rs.kinds.get(kind) if kind else None
        if kd is None:
            with_procs = sorted(f"{k.name}.{f}" for k in self.rs.kinds.values() for f in k.procs)
            self.err(s.pos, f"cannot call '{s.var}.{s.field}': '{s.var}' is {T.describe(t)}, not an entity of a "
                     "known kind", "procedure fields: " + (", ".join(with_procs) or "none") if with_procs
                     else "declare a field of type 'procedure' in its kind")
            raise Abort
        pf = kd.procs.get(s.field)
        if pf is None:
            extra = " (it is a value: use it in an expression)" if s.field in kd.fields else ""
            self.err(s.pos, f"{kd.name} has no procedure field '{s.field}'{extra}",
                     did_you_mean(s.field, kd.procs) or f"declare it under kinds: {kd.name}: fields with "
                     "type: procedure")
            raise Abort
        args = self.x.check_args(s, list(pf.params.items()), scope,  # type: ignore[arg-type]
                                 f"procedure field '{kd.name}.{s.field}'")
        if s.bind:
            scope[s.bind] = T.ANY
        self.step += 1
        return Stmt("call", self.where(s.pos), proc="", target=receiver, pfield=s.field, args=args, bind=s.bind,
                    names=list(pf.params), binds=[s.bind] if s.bind else [])

    def s_Return(self, s: A.Return, scope: Scope) -> Stmt:
        self.step += 1
        return Stmt("return", self.where(s.pos), value=self.x.expr(s.value, scope)[0] if s.value is not None else None)
