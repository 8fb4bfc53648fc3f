"""The statements of the rules language that change how values read: ``modify`` and ``consume``.

A mixin of :class:`~.statements.Statements`. A ``modify`` statement's conditions are compiled
into a :class:`~..model.ModifierSite` of the ruleset, named ``procedure#step``; the record the
statement adds to the state names that site and carries only data (see game/modifiers.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..diagnostics import Loc, did_you_mean
from ..model import ModifierSite, Procedure, Ruleset
from . import ast as A
from . import types as T
from .expressions import Abort, Expressions, Scope
from .stmt import Line, Stmt


class Modifying:
    """``modify`` and ``consume`` (a mixin of Statements)."""

    x: Expressions
    rs: Ruleset
    proc: Procedure
    step: int
    roots: Any
    untils: list[tuple[str, Loc]]

    if TYPE_CHECKING:
        def err(self, pos: A.Pos, message: str, hint: str = "") -> None: ...
        def do(self, pos: A.Pos, *lines: Line) -> Stmt: ...

    def s_Modify(self, s: A.Modify, scope: Scope) -> Stmt:
        if s.point not in self.rs.points:
            self.err(s.pos, f"unknown modifier point '{s.point}'", did_you_mean(s.point, self.rs.points))
            raise Abort
        point = self.rs.points[s.point]
        want = T.INT if s.mode == "add" else point.type
        value = self.x.want(s.value, scope, want, "the modifier's change")
        inner = dict(scope)
        inner.update(point.params)
        when = self.x.want(s.when, inner, T.BOOL, "a 'when' condition") if s.when else None
        # A lifetime condition sees only the captured locals and the game, never the reading's
        # parameters, so the runtime can drop a dead modifier without reading the point.
        while_ = self.x.want(s.while_, scope, T.BOOL, "a 'while' condition") if s.while_ else None
        captured = sorted({n.name for n in A.walk([s.when]) if isinstance(n, A.Name)
                           and n.name in scope and n.name not in point.params}
                          | {n.name for n in A.walk([s.while_]) if isinstance(n, A.Name) and n.name in scope})
        site = f"{self.proc.name}#{self.step}"
        self.rs.sites[site] = ModifierSite(self.roots(when, "a 'when' condition") if when is not None else None,
                                           self.roots(while_, "a 'while' condition") if while_ is not None else None,
                                           captured)
        if s.until:
            self.untils.append((s.until, self.x.loc(s.pos)))
        where = self.x.loc(s.pos)
        # folder/file:line:col, the same wherever the game runs (the state must not depend on the cwd)
        source = f"{Path(where.file).parent.name}/{Path(where.file).name}:{where.line}:{where.col}"
        record = {"point": s.point, "mode": s.mode, "until": s.until, "once": s.once}
        k = self.x.gen.const
        return self.do(s.pos, ("g.add_modifier({**", k(record), ", 'value': ", value, f", 'site': {k(site)}, "
                               f"'captured': _captured(locals(), {k(tuple(captured))}), 'source': {k(source)}}})"))

    def s_Consume(self, s: A.Consume, scope: Scope) -> Stmt:
        if s.point not in self.rs.points:
            self.err(s.pos, f"unknown modifier point '{s.point}'", did_you_mean(s.point, self.rs.points))
            raise Abort
        point = self.rs.points[s.point]
        args = self.x.check_args(s, list(point.params.items()), scope, f"modifier point '{s.point}'")
        parts: list[Any] = [f"g.consume({self.x.gen.const(s.point)}, ["]
        for i, a in enumerate(args):
            parts += [", " if i else "", a]
        return self.do(s.pos, (*parts, "])"))
