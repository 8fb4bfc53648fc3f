"""Procedures as Python functions that can stop at a decision and go on later.

A procedure that may pause (a choice, a call of a procedure that may pause, the end of the
game) becomes ``def R(g, fr)`` over Python locals. Every place where it hands control back to
the engine is a numbered *resume point*: there it writes its locals into its frame
(``fr['locals']``), sets ``fr['pc']`` to the point's number and returns. Called again with that
frame, the function loads its locals and jumps to the point: each statement before it (in its
block and the blocks around it) is guarded by ``if pc == 0``, a branch or loop holding it is
entered because ``pc`` is in its range of points, and the point itself sets ``pc`` back to 0.
So the continuation is plain data (procedure, point, locals), and the rules between two
decisions run as straight Python.

A procedure that never pauses becomes ``def P(g, a, b)``, called directly, without a frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .source import SAVE, SAVED_TABLE, CodeGen, Writer, local
from .statements import Stmt
from .types import ANY, BOOL, INT, Type


def callees(stmts: list[Stmt]) -> set[str]:
    out: set[str] = set()
    for s in stmts:
        if s.kind == "call":
            out.add(s.proc)
        for b in s.blocks:
            out |= callees(b)
    return out


def pauses_itself(stmts: list[Stmt]) -> bool:
    return any(s.kind in ("ask", "end") or any(pauses_itself(b) for b in s.blocks) for s in stmts)


class ProcWriter:
    """Writes one procedure (see the module docstring)."""

    def __init__(self, gen: CodeGen, name: str, what: str, params: list[str], stmts: list[Stmt],
                 direct: dict[str, str], budget: int, at: Any, resumable: bool) -> None:
        self.gen = gen
        self.name = name
        self.what = what
        self.params = params
        self.stmts = stmts
        self.direct = direct  # procedure -> global name of its direct function
        self.budget = budget
        self.at = at  # the procedure's place (a line of no statement takes it)
        self.resumable = resumable
        self.points: dict[int, Any] = {}  # resume point -> where its statement is
        self.ranges: dict[int, tuple[int, int]] = {}  # id(stmt) -> its points' range
        self.names: set[str] = set(params)  # every local the procedure may have
        self.loop_vars: set[str] = set()
        if resumable:
            self._number(stmts)

    # ------------------------------------------------------------ resume points
    def _number(self, stmts: list[Stmt]) -> None:
        for s in stmts:
            first = len(self.points) + 1
            if s.kind == "ask" or (s.kind == "call" and s.proc not in self.direct):
                s.point = len(self.points) + 1
                self.points[s.point] = s.where
            for b in s.blocks:
                self._number(b)
            if len(self.points) >= first:
                self.ranges[id(s)] = (first, len(self.points))

    # ------------------------------------------------------------ the function
    def write(self) -> Writer:
        w = Writer(self.what, self.params, self.at)
        self.w = w
        self._collect(self.stmts)
        if self.resumable:
            w.line(0, f"def {self.name}(g, fr):")
            w.line(1, "pc = fr['pc']")
            w.line(1, "L = fr['locals']")
            w.line(1, "if pc:")
            w.line(2, "pass")
            for n in sorted(self.names):
                w.line(2, f"if {n!r} in L: {local(n)} = L[{n!r}]")
            for tag_var in sorted(self.loop_vars):
                w.line(2, f"if '${tag_var}' in L: w_{tag_var} = L['${tag_var}']")
            w.line(1, "else:")
            for p in self.params:
                w.line(2, f"{local(p)} = L[{p!r}]")
            w.line(2, "pass")
        else:
            args = "".join(", " + local(p) for p in self.params)
            w.line(0, f"def {self.name}(g{args}):")
        self.block(self.stmts, 1, [])
        if self.resumable:
            w.line(1, "g.ret(None)")
        else:
            w.line(1, "return None")
        return w

    def _collect(self, stmts: list[Stmt]) -> None:
        """Every local the procedure may bind, and each loop that keeps its place in one
        (loaded again when the procedure resumes)."""
        for s in stmts:
            self.names.update(s.binds)
            if s.kind == "for" and id(s) in self.ranges:
                self.loop_vars.add(f"{s.tag}_{s.var}")
            for b in s.blocks:
                self._collect(b)

    def block(self, stmts: list[Stmt], depth: int, loops: list[str | None]) -> None:
        """Write ``stmts``; ``loops`` holds, innermost last, each loop around them: the local keeping
        its place (a 'for' whose body may pause), else None."""
        w = self.w
        if not stmts:
            w.line(depth, "pass")
            return
        later = [False] * (len(stmts) + 1)  # whether a resume point follows statement i in this block
        for i in range(len(stmts) - 1, -1, -1):
            later[i] = later[i + 1] or id(stmts[i]) in self.ranges
        guarded = False  # inside an open 'if pc == 0:' of consecutive statements
        for i, s in enumerate(stmts):
            has = id(s) in self.ranges
            pause_here = s.point != 0
            if (later[i + 1] and not has) or pause_here:
                if not guarded:
                    w.line(depth, "if pc == 0:", loc=s.loc)
                    guarded = True
                self.statement(s, depth + 1, loops)
                if pause_here:
                    w.line(depth, f"if pc == {s.point}: pc = 0", loc=s.loc)
                    guarded = False
                continue
            guarded = False
            if has and later[i + 1]:
                lo, hi = self.ranges[id(s)]
                w.line(depth, f"if pc <= {hi}:", loc=s.loc)
                self.statement(s, depth + 1, loops)
            else:
                self.statement(s, depth, loops)

    def statement(self, s: Stmt, depth: int, loops: list[str | None]) -> None:
        w = self.w
        loc = s.loc
        kind = s.kind
        if kind == "do":
            for line in s.lines:
                w.line(depth, *line, loc=loc)
            if not s.lines:
                w.line(depth, "pass", loc=loc)
        elif kind == "if":
            self._if(s, depth, loops)
        elif kind == "while":
            head = ("while pc or ", s.tests[0], ":") if id(s) in self.ranges else ("while ", s.tests[0], ":")
            w.line(depth, *head, loc=loc)
            self._runaway(depth + 1, loc)
            self.block(s.blocks[0], depth + 1, loops + [None])
        elif kind == "repeat":
            w.line(depth, "while True:", loc=loc)
            self._runaway(depth + 1, loc)
            self.block(s.blocks[0], depth + 1, loops + [None])
            w.line(depth + 1, "if ", s.tests[0], ":", loc=loc)
            w.line(depth + 2, "break", loc=loc)
        elif kind == "for":
            self._for(s, depth, loops)
        elif kind == "break":
            if loops and loops[-1] is not None:
                w.line(depth, f"del {loops[-1]}", loc=loc)
            w.line(depth, "break", loc=loc)
        elif kind == "call":
            self._call(s, depth)
        elif kind == "return":
            value: tuple[Any, ...] = (s.value,) if s.value is not None else ("None",)
            if self.resumable:
                w.line(depth, "g.ret(", *value, ")", loc=loc)
                w.line(depth, "return", loc=loc)
            else:
                w.line(depth, "return ", *value, loc=loc)
        elif kind == "ask":
            for line in s.lines:
                w.line(depth, *(self.saving(part) for part in line), loc=loc)
            self._pause(s, depth)
        elif kind == "end":
            for line in s.lines:
                w.line(depth, *line, loc=loc)
            w.line(depth, "return", loc=loc)
        else:  # pragma: no cover - every kind is written above
            raise AssertionError(kind)

    def saving(self, part: Any) -> Any:
        """A part of a line, its saving of the locals (``SAVE``, as statements write it) given
        this procedure's table of locals (a global set when it is compiled: CodeGen.jit)."""
        if isinstance(part, str) and SAVE in part:
            return part.replace(SAVE, f"_save(fr, locals(), {SAVED_TABLE}{self.name})")
        return part

    def _pause(self, s: Stmt, depth: int) -> None:
        self.w.line(depth, f"fr['pc'] = {s.point}", loc=s.loc)
        self.w.line(depth, "return", loc=s.loc)

    def _call(self, s: Stmt, depth: int) -> None:
        w = self.w
        loc = s.loc
        if s.proc in self.direct:
            parts: list[Any] = [f"{local(s.bind)} = " if s.bind else "", f"{self.direct[s.proc]}(g"]
            for a in s.args:
                parts += [", ", a]
            w.line(depth, *parts, ")", loc=loc)
            return
        w.line(depth, self.saving(SAVE), loc=loc)
        callee: tuple[Any, ...] = (repr(s.proc),) if s.proc else ("_fproc(g, ", s.target, f", {s.pfield!r})")
        args: list[Any] = ["g.push(", *callee, ", {"]
        for i, (p, a) in enumerate(zip(s.names, s.args, strict=True)):
            args += [", " if i else "", f"{p!r}: ", a]
        w.line(depth, *args, f"}}, {s.bind!r}, None)", loc=loc)
        self._pause(s, depth)

    def _if(self, s: Stmt, depth: int, loops: list[str | None]) -> None:
        w = self.w
        loc = s.loc
        for i, test in enumerate(s.tests):
            r = self._block_range(s.blocks[i])
            word = "if " if i == 0 else "elif "
            if id(s) not in self.ranges:
                w.line(depth, word, test, ":", loc=loc)
            elif r is None:
                w.line(depth, word, "pc == 0 and ", test, ":", loc=loc)
            else:
                w.line(depth, word, "(pc == 0 and ", test, f") or {r[0]} <= pc <= {r[1]}:", loc=loc)
            self.block(s.blocks[i], depth + 1, loops)
        if len(s.blocks) > len(s.tests):
            w.line(depth, "else:", loc=loc)
            self.block(s.blocks[-1], depth + 1, loops)

    def _block_range(self, stmts: list[Stmt]) -> tuple[int, int] | None:
        rs = [self.ranges[id(s)] for s in stmts if id(s) in self.ranges]
        if not rs:
            return None
        return rs[0][0], rs[-1][1]

    def _runaway(self, depth: int, loc: Any) -> None:
        # a loop that never ends is reported at the loop; passes are counted on the game, so
        # loops of direct procedures called from a loop add up
        k = self.gen.const
        msg = k(f"runaway rules in '{self.what.split(' ', 1)[-1]}': more than {self.budget} steps without a decision")
        hint = k("a loop never ends; check its 'until'/'while' condition")
        self.w.line(depth, "g.steps += 1", loc=loc)
        self.w.line(depth, f"if g.steps > {self.budget}: raise RuleFault({msg}, None, {hint})", loc=loc)

    def _for(self, s: Stmt, depth: int, loops: list[str | None]) -> None:
        w = self.w
        loc = s.loc
        v = local(s.var)
        body = s.blocks[0]
        assert s.seq is not None
        if id(s) not in self.ranges:
            w.line(depth, f"for {v} in list(", s.seq, "):", loc=loc)
            self._runaway(depth + 1, loc)
            if s.tests:
                w.line(depth + 1, "if not ", s.tests[0], ":", loc=loc)
                w.line(depth + 2, "continue", loc=loc)
            self.block(body, depth + 1, loops + [None])
            return
        # The body may pause: the loop keeps its place in a local saved with the frame
        # ('$<n>_VAR', as w_<n>_VAR: the number first, so no two loops share one), so that
        # after the pause it goes on with the next item.
        it = f"w_{s.tag}_{s.var}"
        w.line(depth, "if pc == 0:", loc=loc)
        w.line(depth + 1, f"{it} = [list(", s.seq, "), 0]", loc=loc)
        w.line(depth, "while True:", loc=loc)
        w.line(depth + 1, "if pc == 0:", loc=loc)
        self._runaway(depth + 2, loc)
        w.line(depth + 2, f"if {it}[1] >= len({it}[0]):", loc=loc)
        w.line(depth + 3, f"del {it}", loc=loc)
        w.line(depth + 3, "break", loc=loc)
        w.line(depth + 2, f"{v} = {it}[0][{it}[1]]", loc=loc)
        w.line(depth + 2, f"{it}[1] += 1", loc=loc)
        if s.tests:
            w.line(depth + 2, "if not ", s.tests[0], ":", loc=loc)
            w.line(depth + 3, "continue", loc=loc)
        self.block(body, depth + 1, loops + [it])


def mixed_params(params: dict[str, Type]) -> frozenset[str]:
    """The parameters that may hold a boolean in one call and a number in another (typed
    ``int``, ``bool`` or ``any``: an ``any`` value passes the check for either)."""
    return frozenset(p for p, t in params.items() if t in (INT, BOOL, ANY))


def _key_part(name: str, mixed: frozenset[str]) -> str:
    # true == 1 and false == 0 in Python, with equal hashes: a boolean goes into the key
    # wrapped in a 1-tuple (no argument is a tuple), so f(true) never finds f(1)'s result
    v = local(name)
    return f"(({v},) if {v}.__class__ is bool else {v})" if name in mixed else v


def function_source(gen: CodeGen, gname: str, fname: str, params: list[str], body: Any, at: Any,
                    work: int, depth: int | None, memo: int | None, volatile: bool = True,
                    mixed: frozenset[str] = frozenset()) -> Callable[[], Writer]:
    """The positional twin of a rules function, remembering results in the game's memo number
    ``memo`` (None: a function cheaper to run again than to look up is not remembered). A
    ``volatile`` memo (one a change of modifiers forgets) sets its bit in ``g.filled`` at its
    first result: the slots the next change must look at (game/values.py).

    A function that may run inside itself (functions.recursive) counts how deep calls nest,
    and fails, located, past ``depth``; any other (``depth`` None) nests no deeper than the
    chain of distinct functions it calls, so it counts nothing. ``mixed``: see mixed_params."""
    def write() -> Writer:
        origin, line, col = at
        w = Writer(f"function {fname}", params, origin.locate(line, col))
        args = ", ".join(local(p) for p in params)
        if memo is None:
            w.line(0, f"def {gname}(g{', ' if params else ''}{args}):")
            w.line(1, "return ", body, loc=body.loc)
            return w
        w.line(0, f"def {gname}(g{', ' if params else ''}{args}):")
        # one argument is its own key: a 1-tuple would be built and hashed at every call, and
        # two arguments are equal exactly when their 1-tuples are
        parts = [_key_part(p, mixed) for p in params]
        w.line(1, f"key = {parts[0]}" if len(parts) == 1 else "key = (" + "".join(p + ", " for p in parts) + ")")
        w.line(1, f"memo = g.memos[{memo}]")
        # 'in', then memo[key] if there: about half the calls of a hot function miss (the memo
        # is forgotten at a change), and a miss then costs one lookup and no call (get() is a
        # method call; a raised KeyError costs more still)
        w.line(1, "try:")
        w.line(2, "if key in memo:")
        w.line(3, "return memo[key]")
        w.line(1, "except TypeError:")  # a list argument cannot be remembered
        w.line(2, "memo = None")
        # a call not answered from the memo is work (see model.CALL_WORK); the counters are
        # read once each (this runs for every call that misses)
        w.line(1, f"wk = g.work + {work}")
        w.line(1, "g.work = wk")
        w.line(1, "if wk > g.work_budget: _wf(g)")
        if depth is None:
            w.line(1, "value = ", body, loc=body.loc)
        else:
            w.line(1, "dp = g.depth")
            w.line(1, f"if dp >= {depth}: _deep({gen.const(fname)}, {depth})")
            w.line(1, "g.depth = dp + 1")
            w.line(1, "try:")
            w.line(2, "value = ", body, loc=body.loc)
            w.line(1, "finally:")
            w.line(2, "g.depth -= 1")
        w.line(1, "if memo is not None:")
        w.line(2, "if memo is _NO_MEMO:")  # the first result it remembers in this game
        w.line(3, f"memo = g.memos[{memo}] = {{}}")
        if volatile:
            w.line(3, f"g.filled |= {1 << memo}")
        w.line(2, "memo[key] = value")
        w.line(1, "return value")
        return w
    return write


def point_source(gen: CodeGen, gname: str, pname: str, params: list[str], base: Any, at: Any) -> Callable[[], Writer]:
    """The positional twin of a modifier point: its base alone while no modifier is active."""
    def write() -> Writer:
        origin, line, col = at
        w = Writer(f"modifier point {pname}", params, origin.locate(line, col))
        args = ", ".join(local(p) for p in params)
        w.line(0, f"def {gname}(g{''.join(', ' + local(p) for p in params)}):")
        w.line(1, "if g.raw_state['modifiers']:")
        w.line(2, f"return g.point({gen.const(pname)}, [{args}])")
        w.line(1, "return ", base, loc=base.loc)
        return w
    return write
