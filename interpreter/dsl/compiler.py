"""Compile rules-language texts to Python, checking names and types on the way.

The one path from a rules text to running code (see docs/architecture.md):

- expressions.py checks an expression and writes its Python source (an ``Src``);
- statements.py checks a procedure's statements and builds their tree;
- procwriter.py writes procedures (resumable at their decisions, or direct), functions
  and modifier points as Python functions;
- source.py compiles each function lazily, on its first call, and maps every generated
  line and expression back to the rules text for located errors.

This module is the entry point the loader and the checker of expectations use: one ``Compiler`` per
ruleset, collecting diagnostics. Author text can only reach the game state through the
operations the statements write: the language is a sandbox.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..diagnostics import Diagnostic, Loc, did_you_mean
from ..model import (
    PLAYER_KIND,
    ActionDef,
    ActionParam,
    ExprFn,
    FunctionDef,
    PointDef,
    Procedure,
    Ruleset,
)
from ..yamlsource import TextOrigin
from . import ast as A
from . import types as T
from .expressions import Abort, Expressions, Scope
from .functions import write_functions
from .lazyprocs import Facts, LaterBodies, facts_of
from .listers import constant_text, filter_loop, labeler, lister, staged
from .parser import DslSyntaxError, parse_block, parse_expr, parse_template
from .procwriter import ProcWriter, callees, pauses_itself, point_source
from .source import DICT, CodeGen, Src, Writer, read_local
from .statements import Statements, Stmt
from .types import Type

MAX_PARAMS = 16  # parameters of one action (its lister nests one loop per parameter)
Text = tuple[str, Any]  # a rules text and where it starts (its TextOrigin)


class Compiler:
    """Compiles every rules-language text of one ruleset, collecting diagnostics."""

    def __init__(self, rs: Ruleset, diags: list[Diagnostic]) -> None:
        self.rs = rs
        self.diags = diags
        if rs.codegen is None:
            rs.codegen = CodeGen(rs.name or "rules")
        self.gen: CodeGen = rs.codegen
        self.x = Expressions(rs, self.gen, diags)
        self.signals: set[str] = set()  # every 'signal NAME' compiled
        self.untils: list[tuple[str, Loc]] = []  # every 'until NAME' of a modifier, to check
        self.bodies: dict[str, tuple[Procedure, list[Stmt], str]] = {}  # procedure -> its tree, what it is
        self.functions: dict[str, tuple[FunctionDef, Src]] = {}  # function -> its body
        self.reads: dict[str, set[tuple[str, ...]]] = {}  # function -> what its body reads
        self.origins: dict[str, list[Any]] = {}  # procedure -> where each of its texts starts
        self.later: LaterBodies | None = None  # a warm load's bodies, checked at their first run
        self.facts: Facts | None = None  # what checking the bodies found, for the load cache

    # ------------------------------------------------------------ diagnostics
    def _exhausted(self, exc: BaseException) -> None:
        """Python ran out of stack or memory on a text (the limits should prevent it): its error."""
        what = "nested too deeply" if isinstance(exc, RecursionError) else "too large to compile (out of memory)"
        self.diags.append(Diagnostic(self.x.origin.locate(1, 1), f"rules text {what}",
                                     "split it with 'let', a function or a procedure"))

    def _syntax(self, exc: DslSyntaxError) -> None:
        self.diags.append(Diagnostic(self.x.origin.locate(exc.line, exc.col), exc.message, exc.hint))

    def _parse_expr(self, text: str, origin: TextOrigin) -> A.Node | None:
        self.x.origin = _joined(origin, str(text))
        try:
            return parse_expr(str(text).replace("\n", " "))
        except DslSyntaxError as exc:
            self._syntax(exc)
        except (RecursionError, MemoryError) as exc:
            self._exhausted(exc)
        return None

    def _checked(self, node: A.Node, scope: Scope, want: Type | None, what: str) -> tuple[Src | None, Type]:
        try:
            s, t = self.x.expr(node, dict(scope))
        except Abort:
            return None, T.ANY
        except (RecursionError, MemoryError) as exc:
            self._exhausted(exc)
            return None, T.ANY
        if want is not None and not T.compatible(want, t):
            self.x.err(node.pos, f"wrong type: {what} must be {T.describe(want)}, not {T.describe(t)}")
            return None, t
        return s, t

    # ------------------------------------------------------------ functions for the engine
    def root(self, src: Src, what: str = "an expression") -> ExprFn:
        """``fn(game, locals)`` evaluating ``src`` with its locals read from the dict."""
        name = self.gen.name("e")
        at = src.where

        def write() -> Writer:
            # called by the engine, not by a rule: it has no place in a call chain (what: '')
            w = Writer("", [], at[0].locate(at[1], at[2]) if at is not None else None)
            w.line(0, f"def {name}(g, L):")
            w.line(1, "try:")
            w.line(2, "return ", src, loc=src.loc, mode=DICT)
            w.line(1, "except _FAILURES as _e:")  # the engine called it: the error is located here
            w.line(2, "raise _located(_e, g) from None")
            return w
        return self.gen.lazy(name, write)

    # ------------------------------------------------------------ entry points
    def expression(self, text: str, origin: TextOrigin, scope: Scope,
                   want: Type | None = None, what: str = "expression") -> tuple[ExprFn | None, Type]:
        """Compile one expression written in YAML: (the engine's function or None on error, type)."""
        src, t = self.source(text, origin, scope, want, what)
        return (self.root(src, what) if src is not None else None), t

    def source(self, text: str, origin: TextOrigin, scope: Scope,
               want: Type | None = None, what: str = "expression") -> tuple[Src | None, Type]:
        """Compile one expression written in YAML to its source (None on error) and type."""
        node = self._parse_expr(text, origin)
        if node is None:
            return None, T.ANY
        return self._checked(node, scope, want, what)

    def part(self, node: A.Node, scope: Scope) -> ExprFn | None:
        """The engine's function for a part of the text compiled last (e.g. a side of a comparison)."""
        src, _ = self._checked(node, scope, None, "an expression")
        return self.root(src) if src is not None else None

    def template(self, text: str, origin: TextOrigin, scope: Scope) -> ExprFn | None:
        """Compile a label/log text with ``{expression}`` parts."""
        src = self._template_source(text, origin, scope)
        return self.root(src, "a label") if src is not None else None

    def _template_source(self, text: str, origin: TextOrigin, scope: Scope) -> Src | None:
        self.x.origin = origin
        try:
            node = parse_template(str(text))
        except DslSyntaxError as exc:
            self._syntax(exc)
            return None
        except (RecursionError, MemoryError) as exc:
            self._exhausted(exc)
            return None
        return self._checked(node, scope, None, "a label")[0]

    def procedure(self, proc: Procedure, text: str, origin: TextOrigin, scope: Scope, what: str = "") -> None:
        """Check a statement block; it is written as Python by :meth:`finish`."""
        self.procedure_steps(proc, [(text, origin)], scope, what)

    def procedure_steps(self, proc: Procedure, parts: list[tuple[str, TextOrigin]], scope: Scope,
                        what: str = "") -> None:
        """Check a procedure given as named steps: its texts, in order, are one body (a local one
        step sets is there in the next), each located in its own place."""
        if self.later is not None:
            self.later.defer(proc, parts, scope, what or f"procedure {proc.name}")
            return
        self.origins[proc.name] = [origin for _text, origin in parts]
        st = Statements(self.x, proc, self.root)
        scope = dict(scope)
        stmts: list[Stmt] = []
        complete = True
        for text, origin in parts:
            self.x.origin = origin
            try:
                stmts += st.block(parse_block(str(text)), scope)
            except DslSyntaxError as exc:
                self._syntax(exc)  # and check the other steps
                complete = False
            except (RecursionError, MemoryError) as exc:
                self._exhausted(exc)
                complete = False
        if not complete:
            return
        self.signals |= st.signals
        self.untils += st.untils
        self.bodies[proc.name] = (proc, stmts, what or f"procedure {proc.name}")

    def function(self, fdef: FunctionDef, text: str, origin: TextOrigin) -> None:
        """Compile a pure function's body (an expression over its parameters)."""
        if self.later is not None:
            self.later.defer_function(fdef, text, origin)
            return
        self.x.reads = set()
        try:
            src, _ = self.source(text, origin, dict(fdef.params), fdef.returns, f"the result of '{fdef.name}'")
            self.reads[fdef.name] = self.x.reads
        finally:
            self.x.reads = None
        if src is None:
            return
        self.functions[fdef.name] = (fdef, src)
        self.function_root(fdef, src.where)

    def function_root(self, fdef: FunctionDef, where: Any) -> None:
        """The engine's function of a rules function: a call of its positional twin."""
        call = Src(self.gen.twin("F", fdef.name) + "(g" + "".join(f", {{{i}}}" for i in range(len(fdef.params)))
                   + ")", tuple(read_local(p, where) for p in fdef.params), where)
        fdef.fn = self.root(call, f"function {fdef.name}")

    def point(self, pdef: PointDef, text: str, origin: TextOrigin) -> None:
        """Compile a modifier point's base."""
        src, _ = self.source(text, origin, dict(pdef.params), pdef.type, f"the base of '{pdef.name}'")
        if src is None:
            return
        pdef.base = self.root(src, f"modifier point {pdef.name}")
        gname = self.gen.twin("Q", pdef.name)
        self.gen.lazy(gname, point_source(self.gen, gname, pdef.name, list(pdef.params), src, src.where))

    def action(self, action: ActionDef, domains: list[tuple[str, Text]], cond: Text | None,
               label: Text | None, body: Text) -> None:
        """Compile an action: its parameters' choices, its ``if``, its label, its body, and the
        lister of its legal choices."""
        scope: dict[str, Type] = {"actor": T.ent(PLAYER_KIND)}
        reported = len(self.diags)
        doms: list[Src | None] = []
        if len(domains) > MAX_PARAMS:
            self.diags.append(Diagnostic(action.loc or Loc(self.rs.folder),
                                         f"an action takes at most {MAX_PARAMS} parameters, not {len(domains)}",
                                         "choose some of them inside its 'do'"))
        outer: Scope = scope
        for pname, (text, origin) in domains:
            outer = dict(scope)  # what the last parameter's choices see
            src, t = self.source(text, origin, scope, None, f"the choices for '{pname}'")
            if src is not None and not T.iterable(t):
                self.diags.append(Diagnostic(self.x.origin.locate(1, 1), f"wrong type: the choices for '{pname}' "
                                             f"must be a list or zone, not {T.describe(t)}"))
                src = None
            el = T.element(t)
            doms.append(self.x.seq(src, t, (1, 1)) if src is not None else None)
            action.params.append(ActionParam(pname, el, None))
            scope[pname] = el
        stages: list[Src | None] = [None] * (len(domains) + 1)
        if cond is not None:
            src, _ = self.source(cond[0], cond[1], scope, T.BOOL, "an action's 'if'")
            if src is not None:  # checked whole (for its messages), run in stages
                stages = staged(self, cond, scope, [p.name for p in action.params])
        lab = self._template_source(label[0], label[1], scope) if label is not None else None
        if all(d is not None for d in doms) and (label is None or lab is not None):
            # compiled again for the loop: only a text that reported nothing (no message twice)
            last = filter_loop(self, domains[-1][1], outer) \
                if domains and stages[-1] is None and len(self.diags) == reported else None
            fixed = constant_text(label[0]) if label is not None else None
            action.enum = lister(self.gen, action, doms, stages, lab, last, fixed)  # type: ignore[arg-type]
            if lab is not None:
                action.labeler = labeler(self.gen, action, lab)
        action.proc.params = dict(scope)
        self.procedure(action.proc, body[0], body[1], scope, f"action {action.name}")

    # ------------------------------------------------------------ after every text
    def check_signals(self) -> None:
        """A modifier lasting 'until X' needs some rule that signals X."""
        for name, loc in self.untils:
            if name not in self.signals:
                self.diags.append(Diagnostic(loc, f"no rule signals '{name}', so this modifier would never end",
                                             did_you_mean(name, self.signals) or f"add 'signal {name}' where it ends"))

    def finish(self) -> None:
        """Write every procedure as Python, once all are checked.

        A procedure that never pauses (no choice, no end of the game, calls only such
        procedures; not recursive) is *direct*: a plain function that ``call`` runs without a
        frame. Every procedure (direct ones too, for a scenario's ``start``) gets a function
        the engine runs on a frame.
        """
        if self.later is not None:
            self.later.finish()
            return
        cheap = write_functions(self.gen, self.rs, self.functions, self.reads, self.x.indexed)
        facts = {name: (not pauses_itself(stmts), callees(stmts)) for name, (_p, stmts, _w) in self.bodies.items()}
        direct: set[str] = set()
        grew = True
        while grew:  # least fixed point: a procedure on a cycle of calls is never direct
            grew = False
            for name, (no_pause, called) in facts.items():
                if name not in direct and name in self.rs.procedures and name not in ("setup", "main") \
                        and no_pause and called <= direct:
                    direct.add(name)
                    grew = True
        names = {n: self.gen.name("P") for n in sorted(direct)}
        budget = self.rs.step_budget
        for pname, (proc, stmts, what) in self.bodies.items():
            at = proc.loc
            if pname in direct:
                self.gen.lazy(names[pname], _writer(ProcWriter(self.gen, names[pname], what, list(proc.params),
                                                               stmts, names, budget, at, False)))
                proc.run = self._frame_of_direct(proc, names[pname], what)
            else:
                pw = ProcWriter(self.gen, self.gen.name("R"), what, list(proc.params), stmts, names, budget, at, True)
                proc.run = self.gen.lazy(pw.name, _writer(pw))
                proc.points = {n: where for n, where in pw.points.items()}
        self.facts = facts_of(self, direct, {n: p.points for n, (p, _s, _w) in self.bodies.items() if n not in direct},
                              cheap)

    def _frame_of_direct(self, proc: Procedure, gname: str, what: str) -> Callable[[Any, dict], None]:
        """The frame function of a direct procedure: run it, return its value."""
        name = self.gen.name("R")
        params = list(proc.params)

        def write() -> Writer:
            w = Writer(what, params, proc.loc)
            w.line(0, f"def {name}(g, fr):")
            w.line(1, "L = fr['locals']")
            w.line(1, f"g.ret({gname}(g" + "".join(f", L[{p!r}]" for p in params) + "))")
            return w
        return self.gen.lazy(name, write)


def _writer(pw: ProcWriter) -> Callable[[], Writer]:
    return pw.write


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


__all__ = ["Compiler"]
