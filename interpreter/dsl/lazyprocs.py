"""Procedure and function bodies checked at their first run, on a load from the load cache.

A load cache entry exists only because the same files loaded without errors under the same
engine (see loadcache.py), so a warm load need not check every procedure body and rules
function before anything runs. What the checked bodies tell the rest of the load — which
procedures are direct, which signals are sent, which fields some rule sets, each resume point
of a procedure that may pause; which functions are cheap, where each body starts, what each
reads — is kept in the entry as plain data (:class:`Facts`, computed by the cold load that wrote
it). A warm load takes those facts and leaves each body as its texts: it is parsed (from the
cached AST), checked and written as Python the first time its function runs (a function's when
its positional twin is first written), or when a modifier site of a procedure is looked up (a
saved game's modifier, before the procedure ran in this process).

The result is the ruleset a cold load builds: the same functions, the same resume points, sites
and memo of results (each body, once checked, must agree with the facts: a difference is an
engine bug and fails loudly). Only the numbering of the helper functions and constants a body
makes differs, which nothing outside this process sees.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model import CALL_WORK, MAX_CALL_DEPTH, FunctionDef, ModifierSite, Procedure, RuleFault
from .astmemo import AstMemo, memoized
from .functions import CHEAP_STEPS, cost_facts, memo_index, memo_readers, recursive
from .parser import parse_block, parse_expr
from .procwriter import ProcWriter, callees, function_source, mixed_params, pauses_itself
from .source import Src
from .statements import Statements

if TYPE_CHECKING:
    from .compiler import Compiler


def joined_origin(origin: Any, text: str) -> Any:
    """Where a function's body is read from (see compiler._joined)."""
    from .compiler import _joined
    return _joined(origin, text)

Parts = list[tuple[str, Any]]  # a body's texts, each with where it starts (its TextOrigin)


@dataclass
class Facts:
    """What a cold load learned from checking every procedure body (plain data in the cache)."""

    procs: list[str]  # the procedures with a body, in the order they were checked
    direct: list[str]  # those that never pause (see Compiler.finish)
    signals: list[str]  # every 'signal NAME' of a body
    written: list[str]  # every field some body sets
    # each procedure that may pause -> its resume points: (point, text of the body, line, col)
    points: dict[str, list[tuple[int, int, int, int]]]
    # each rules function, in order -> (cheap, line and column of its body, what it reads)
    functions: dict[str, tuple[bool, int, int, list[list[str]]]]
    indexed: list[str]  # the fields queries look zones' items up by (their indexes' memo slot: zoneindex.py)

    def plain(self) -> dict[str, Any]:
        return {"procs": self.procs, "direct": self.direct, "signals": self.signals, "written": self.written,
                "points": {name: [list(p) for p in pts] for name, pts in self.points.items()},
                "functions": {name: list(f) for name, f in self.functions.items()}, "indexed": self.indexed}

    @classmethod
    def read(cls, value: Any) -> Facts:
        """The facts written by :meth:`plain`; ``ValueError`` for anything else."""
        if value.__class__ is not dict or set(value) != {"procs", "direct", "signals", "written", "points",
                                                         "functions", "indexed"}:
            raise ValueError("facts")
        lists = [value[k] for k in ("procs", "direct", "signals", "written", "indexed")]
        if not all(v.__class__ is list and all(s.__class__ is str for s in v) for v in lists):
            raise ValueError("facts")
        points = value["points"]
        if points.__class__ is not dict or not all(
                pts.__class__ is list and all(p.__class__ is list and len(p) == 4 and all(n.__class__ is int for n in p)
                                              for p in pts) for pts in points.values()):
            raise ValueError("facts")
        functions = value["functions"]
        if functions.__class__ is not dict or not all(
                f.__class__ is list and len(f) == 4 and f[0].__class__ is bool and f[1].__class__ is int
                and f[2].__class__ is int and f[3].__class__ is list
                and all(r.__class__ is list and all(x.__class__ is str for x in r) for r in f[3])
                for f in functions.values()):
            raise ValueError("facts")
        procs, direct, signals, written, indexed = lists
        return cls(procs, direct, signals, written,
                   {name: [(p[0], p[1], p[2], p[3]) for p in pts] for name, pts in points.items()},
                   {name: (f[0], f[1], f[2], f[3]) for name, f in functions.items()}, indexed)


def facts_of(c: Compiler, direct: set[str], points: dict[str, dict[int, Any]], cheap: set[str]) -> Facts | None:
    """The facts of a cold load's compiler, once every body is checked (None: not expressible)."""
    plain: dict[str, list[tuple[int, int, int, int]]] = {}
    for name, pts in points.items():
        origins = c.origins.get(name, [])
        rows = []
        for n, where in pts.items():
            part = next((i for i, o in enumerate(origins) if o is where[0]), None)
            if part is None or not (isinstance(where[1], int) and isinstance(where[2], int)):
                return None
            rows.append((n, part, where[1], where[2]))
        plain[name] = rows
    functions = {}
    for name, (_fdef, src) in c.functions.items():
        reads = c.reads.get(name)
        if src.where is None or reads is None:
            return None
        functions[name] = (name in cheap, src.where[1], src.where[2], sorted(list(r) for r in reads))
    return Facts(list(c.bodies), sorted(direct), sorted(c.signals), sorted(c.rs.fields_written), plain, functions,
                 sorted(c.rs.index_slots))


class LazySites(dict[str, ModifierSite]):
    """The ruleset's modifier sites while some bodies are unchecked: looking up a site of such a
    body ('proc#12') checks that body first, which makes its sites; anything that goes over all
    the sites (iterating, counting, comparing) checks every body first."""

    def __init__(self, check: Callable[[str], None], check_all: Callable[[], None]) -> None:
        super().__init__()
        self.check = check
        self.check_all = check_all

    def _fill(self, key: Any) -> None:
        if isinstance(key, str) and not dict.__contains__(self, key) and "#" in key:
            self.check(key.rsplit("#", 1)[0])

    def get(self, key: Any, default: Any = None) -> Any:
        self._fill(key)
        return dict.get(self, key, default)

    def __getitem__(self, key: Any) -> ModifierSite:
        self._fill(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key: object) -> bool:
        self._fill(key)
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[str]:
        self.check_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self.check_all()
        return dict.__len__(self)

    def __eq__(self, other: object) -> bool:
        self.check_all()
        return dict.__eq__(self, other)

    __hash__ = None  # as for every dict

    def keys(self) -> Any:
        self.check_all()
        return dict.keys(self)

    def values(self) -> Any:
        self.check_all()
        return dict.values(self)

    def items(self) -> Any:
        self.check_all()
        return dict.items(self)


class LaterBodies:
    """The procedure bodies of a warm load, checked and written when first needed."""

    def __init__(self, c: Compiler, facts: Facts, memo: AstMemo) -> None:
        self.c = c
        self.facts = facts
        self.memo = memo  # the cached ASTs the bodies are read from
        self.pending: dict[str, tuple[Procedure, Parts, dict[str, Any], str]] = {}
        self.writers: dict[str, ProcWriter] = {}
        self.names: dict[str, str] = {}  # direct procedure -> its function's global name
        self.globals: dict[str, str] = {}  # every procedure -> the global name of its writer's function
        self.lock = threading.RLock()  # one body checked at a time (they share the compiler)
        self.fpending: dict[str, tuple[FunctionDef, str, Any]] = {}  # function -> its text and origin
        self.sources: dict[str, Src] = {}  # function -> its checked body
        c.signals |= set(facts.signals)
        c.rs.sites = LazySites(self.check, self.check_all)

    def defer(self, proc: Procedure, parts: Parts, scope: dict[str, Any], what: str) -> None:
        self.pending[proc.name] = (proc, parts, dict(scope), what)

    def defer_function(self, fdef: FunctionDef, text: str, origin: Any) -> None:
        """A rules function: its engine function now, its body checked when its twin is written."""
        _cheap, line, col, _reads = self.facts.functions[fdef.name]
        origin = joined_origin(origin, str(text))
        self.fpending[fdef.name] = (fdef, text, origin)
        self.c.function_root(fdef, (origin, line, col))

    def finish(self) -> None:
        """What Compiler.finish does, with the facts in place of the checked bodies."""
        c, facts, rs = self.c, self.facts, self.c.rs
        if list(self.pending) != facts.procs or c.bodies:
            raise ValueError("the cached facts are not those of these procedures")
        rs.fields_written |= set(facts.written)
        if list(self.fpending) != list(facts.functions) or c.functions:
            raise ValueError("the cached facts are not those of these functions")
        cheap = {name for name, f in facts.functions.items() if f[0]}
        index = memo_index(self.fpending, cheap)
        reads = {name: {tuple(r) for r in f[3]} for name, f in facts.functions.items()}
        memo_readers(rs, reads, index, facts.indexed)
        deep = recursive(self.fpending, reads)  # from the reads, which each body checked must match
        for fname in self.fpending:
            c.gen.lazy(c.gen.twin("F", fname), self._write_function(fname, index.get(fname), fname in deep))
        direct = set(facts.direct)
        self.names = {n: c.gen.name("P") for n in sorted(direct)}
        for pname, (proc, parts, _scope, what) in self.pending.items():
            if pname in direct:
                self.globals[pname] = self.names[pname]
                c.gen.lazy(self.names[pname], self._write(pname))
                proc.run = c._frame_of_direct(proc, self.names[pname], what)
            else:
                self.globals[pname] = c.gen.name("R")
                proc.run = c.gen.lazy(self.globals[pname], self._write(pname))
                origins = [origin for _text, origin in parts]
                proc.points = {n: (origins[part], line, col) for n, part, line, col in facts.points.get(pname, [])}

    def _write_function(self, fname: str, memo: int | None, deep: bool) -> Callable[[], Any]:
        def write() -> Any:
            src = self.function_source(fname)
            fdef = self.fpending[fname][0]
            return function_source(self.c.gen, self.c.gen.twin("F", fname), fname, list(fdef.params), src, src.where,
                                   CALL_WORK, MAX_CALL_DEPTH if deep else None, memo,
                                   memo not in self.c.rs.memo_constant, mixed_params(fdef.params))()
        return write

    def function_source(self, fname: str) -> Src:
        """The checked body of the rules function ``fname`` (checked once)."""
        with self.lock:
            src = self.sources.get(fname)
            if src is not None:
                return src
            c = self.c
            fdef, text, origin = self.fpending[fname]
            before = len(c.diags)
            c.x.origin = origin
            c.x.reads = set()
            try:
                with memoized(self.memo):
                    node = parse_expr(str(text).replace("\n", " "))
                checked, _ = c._checked(node, dict(fdef.params), fdef.returns, f"the result of '{fname}'")
                reads = c.x.reads
            finally:
                c.x.reads = None
            cheap, line, col, facts_reads = self.facts.functions[fname]
            twins = {twin: name for (kind, name), twin in c.gen.twins.items() if kind == "F"}
            if checked is None or len(c.diags) != before or checked.where is None \
                    or checked.where[1:] != (line, col) or reads != {tuple(r) for r in facts_reads}:
                raise self._differs(f"function {fname}", before)
            bounded, called, steps = cost_facts(checked, twins)
            if cheap and not (bounded and steps <= CHEAP_STEPS
                              and called <= {n for n, f in self.facts.functions.items() if f[0]}):
                raise self._differs(f"function {fname}", before)
            self.sources[fname] = checked
            return checked

    def _differs(self, what: str, before: int) -> RuleFault:
        """A body that, checked now, disagrees with the facts of the cached load: a located
        rule failure, never a traceback. Its diagnostic, if checking it now found one (a rule
        nested too deeply for the stack the game runs on), is the message."""
        new = self.c.diags[before:]
        del self.c.diags[before:]
        if new:
            return RuleFault(new[0].message, new[0].loc, new[0].hint or "run it again with the load cache off (LUDUS_CACHE=off)")
        return RuleFault(f"{what} checks differently from the load that was cached", None,
                         "run it again with the load cache off (LUDUS_CACHE=off), and report this")

    def _write(self, pname: str) -> Callable[[], Any]:
        def write() -> Any:
            return self.writer(pname).write()
        return write

    def check(self, pname: str) -> None:
        """Check the body of ``pname`` now, if it is still unchecked (its sites are then made)."""
        if pname in self.pending and pname not in self.writers:
            self.writer(pname)

    def check_all(self) -> None:
        """Check every body still unchecked."""
        for pname in list(self.pending):
            self.check(pname)

    def writer(self, pname: str) -> ProcWriter:
        """The writer of ``pname``'s function, its body checked first (once)."""
        with self.lock:
            pw = self.writers.get(pname)
            if pw is not None:
                return pw
            c = self.c
            proc, parts, scope, what = self.pending[pname]
            st = Statements(c.x, proc, c.root)
            stmts = []
            before = len(c.diags)
            with memoized(self.memo):
                for text, origin in parts:
                    c.x.origin = origin
                    stmts += st.block(parse_block(str(text)), scope)
            direct = pname in self.names
            pw = ProcWriter(c.gen, self.globals[pname], what, list(proc.params), stmts, self.names,
                            c.rs.step_budget, proc.loc, not direct)
            # The body must be what the facts said it was (else the engine differs from the
            # one that wrote them, which the cache's engine fingerprint rules out).
            agrees = len(c.diags) == before and st.signals <= set(self.facts.signals) \
                and c.rs.fields_written <= set(self.facts.written) \
                and ((not pauses_itself(stmts) and callees(stmts) <= set(self.names)) if direct
                     else pw.points == proc.points)
            if not agrees:
                raise self._differs(f"procedure {pname}", before)
            self.writers[pname] = pw
            return pw
