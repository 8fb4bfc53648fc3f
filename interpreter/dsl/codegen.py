"""Generated Python for compiled rules: the fast path beside the checked closures.

The compiler turns every expression into a closure tree (one Python call per AST node),
which is simple and reports every runtime error at its exact place in the rules file.
Beside each closure it also writes the same expression as a line of Python source, and
this module turns that source into real Python functions, so a whole expression runs as
one function with plain Python locals instead of a call per node.

How the two fit together:

- A *root* is what the rest of the engine calls, ``fn(game, locals)``. Its generated
  body reads the locals it needs, evaluates the expression and returns. If anything at
  all goes wrong (a missing local, a read of a field of none, a division by zero, a
  rule fault raised by the runtime), it runs the closure instead, which raises the
  located error — or, when the fast path only stumbled (a local set on another path
  than the one taken), returns the same value. Expressions are pure, so running one
  again is safe.
- Functions of the rules get a positional twin (``F3(game, a, b)``) that shares the
  runtime's memo of results, so generated code calls them without building dicts;
  modifier points get one too (their base while no modifier is active).
- An action gets an *enumerator*: its parameters' domains, its staged ``if`` and its
  label fused into nested Python loops that list the legal (action, arguments) pairs.
- Statements: see :class:`StatementWriter` (runs of statements as one instruction,
  procedures that never pause as plain functions).

Nothing of the rule author's text is executed: the source is written by the compiler
from the checked AST, names of the rules language become ``v_NAME`` (the grammar only
admits ``[a-z_][a-z0-9_]*``), and every value that is not a number, a boolean, none or
an identifier-like string is passed in as a constant from a table, never spelt out.

Sources are compiled lazily, on a function's first call (a function object is created
at load with a small trampoline body and gets its real code assigned then), so loading
a ruleset compiles nothing and a game compiles only what it runs.
"""

from __future__ import annotations

import builtins
import copy
import functools
import itertools
import os
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..model import CALL_WORK, MAX_INT, MAX_LIST, MAX_STR, RuleFault, copy_plain


class Src:
    """The Python text of an expression and the rules-language locals it reads.

    Both are worked out when first asked for (most expressions are only ever part of a
    bigger one, and sources are compiled lazily), from a template whose ``{0}``, ``{1}``...
    stand for the parts' texts. ``bound`` is a local the template itself binds (a query's
    variable): it is not read from outside by the parts from ``bound_from`` on.
    """

    __slots__ = ("template", "parts", "own", "bound", "bound_from", "_text", "_free")

    def __init__(self, template: str, parts: tuple[Src, ...] = (), own: frozenset[str] = frozenset(),
                 bound: str | None = None, bound_from: int = 0) -> None:
        self.template, self.parts, self.own = template, parts, own
        self.bound, self.bound_from = bound, bound_from
        self._text: str | None = None
        self._free: frozenset[str] | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.template.format(*(p.text for p in self.parts)) if self.parts else self.template
        return self._text

    @property
    def free(self) -> frozenset[str]:
        if self._free is None:
            free = self.own
            for i, p in enumerate(self.parts):
                free = free | (p.free - {self.bound} if self.bound is not None and i >= self.bound_from else p.free)
            self._free = free
        return self._free


_IDENT = re.compile(r"[a-z_][a-z0-9_]*\Z")  # with match(): whole names ('$' also passes "x\n")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_RANGE = 100_000  # a longer a..b is a rules bug; refusing it keeps memory bounded
# A chain of more operands (a + b + ...) runs as its closure: Python's compiler recurses once
# per operator and would fail on a few thousand.
MAX_CHAIN_SOURCE = 200


def _trampoline(*args: Any, _i: int = 0) -> Any:  # pragma: no cover - its code is only a template
    return _jit(_i)(*args)  # type: ignore[name-defined]  # noqa: F821 - bound in each CodeGen's env


def _forward(*args: Any, _to: Any = None) -> Any:  # the code of a function whose source did not compile
    return _to(*args)


def enabled() -> bool:
    """Whether rules run as generated Python (``LUDUS_GENERATED=off``: closures only, for comparison)."""
    return os.environ.get("LUDUS_GENERATED", "").strip().lower() not in ("off", "0", "no", "false")


@functools.lru_cache(maxsize=4096)
def local(name: str) -> str:
    """The Python name of a rules-language local."""
    if not _NAME.match(name):  # the grammar guarantees it; this keeps the guarantee local
        raise ValueError(f"not a rules-language name: {name!r}")
    return "v_" + name


# ------------------------------------------------------------------ helpers of generated code
def row_key(value: Any) -> str:
    """The key a value looks a table row up by (rows are read from YAML keys: text)."""
    return str(value) if not isinstance(value, bool) else str(value).lower()


def _table(table: Any, *keys: Any) -> Any:
    row: Any = table.rows
    for kv in keys:
        try:
            row = row[row_key(kv)]
        except (KeyError, TypeError):
            if table.has_default:
                return table.default
            raise
    return row


def _first(s: Any) -> Any:
    return s[0] if s else None


def _last(s: Any) -> Any:
    return s[-1] if s else None


def _index_of(s: Any, x: Any) -> int:
    return s.index(x) if x in s else -1


def _next_in(s: Any, x: Any) -> Any:
    return s[(s.index(x) + 1) % len(s)]  # ValueError when x is missing: the closure says where


def _span(g: Any, lo: int, hi: int) -> list[int]:
    if hi - lo >= MAX_RANGE:
        raise ValueError("range too long")  # the closure reports it with its place
    _w(g, range(lo, hi + 1))
    return list(range(lo, hi + 1))


# The checks of generated code only raise: the root then runs the closure, which checks the
# same and reports the fault at its place in the rules (see Game.spend, model.checked_int).
def _w(g: Any, s: Any) -> Any:
    """``s`` (a list about to be gone through), counting its items as work."""
    w = g.work + len(s)
    g.work = w
    if w > g.work_budget:
        raise RuleFault("work budget")
    return s


def _ck(v: Any) -> Any:
    if v.__class__ is int and not -MAX_INT <= v <= MAX_INT:
        raise OverflowError("number out of range")
    return v


def _mul(a: Any, b: Any) -> Any:
    v = a * b
    if v.__class__ is int and not -MAX_INT <= v <= MAX_INT:
        raise OverflowError("number out of range")
    return v


def _sz(s: str) -> str:
    if len(s) > MAX_STR:
        raise ValueError("text too long")
    return s


def sorted_values(g: Any, s: Any) -> list:
    """``sort()``: the items in the engine's order, each gone through (a list item as its length)."""
    g.spend(len(s))
    if any(x.__class__ is list or x.__class__ is dict for x in s):  # keyed by their JSON text
        g.spend(sum(len(x) for x in s if x.__class__ is list or x.__class__ is dict))
    return sorted(s, key=g.sort_key)


def equal_lists(g: Any, a: Any, b: Any) -> bool:
    """``a == b`` where a list is compared: as long as the shorter list, in work."""
    if a.__class__ is list and b.__class__ is list:
        g.spend(min(len(a), len(b)))
    return bool(a == b)


def _cat(g: Any, a: Any, b: Any) -> list:
    if len(a) + len(b) > MAX_LIST:
        raise ValueError("list too long")
    w = g.work + len(a) + len(b)
    g.work = w
    if w > g.work_budget:
        raise RuleFault("work budget")
    return list(a) + list(b)


_BUILTINS = ("len", "list", "sorted", "reversed", "dict", "sum", "min", "max", "any", "all", "abs", "type", "str",
             "Exception", "KeyError", "TypeError", "ValueError", "IndexError", "AttributeError", "RecursionError",
             "MemoryError")
_HELPERS: dict[str, Any] = {
    "_table": _table, "_first": _first, "_last": _last, "_index_of": _index_of,
    "_next_in": _next_in, "_span": _span, "_copy": copy_plain, "_E": {}, "RuleFault": RuleFault,
    "_w": _w, "_ck": _ck, "_mul": _mul, "_sz": _sz, "_cat": _cat, "_sorted": sorted_values, "_eq": equal_lists,
    # generated code sees only these built-ins (it needs no others; see the module docstring)
    "__builtins__": {n: getattr(builtins, n) for n in _BUILTINS},
}


class CodeGen:
    """The generated functions of one ruleset: their shared globals, constants and sources."""

    def __init__(self, label: str = "rules") -> None:
        self.label = label
        self.env: dict[str, Any] = dict(_HELPERS)
        self.env["_jit"] = self.jit
        self._consts: dict[tuple[type, Any], str] = {}
        # per lazy function: what writes its source (run at its first call) and the function;
        # by index, what it runs instead if Python cannot compile that source (else a fault)
        self._sources: list[tuple[Callable[[], str], types.FunctionType]] = []
        self._fallbacks: dict[int, Callable[..., Any]] = {}
        self._names = itertools.count()
        self.functions: dict[str, str] = {}  # rules function name -> its positional twin's global name
        self.points: dict[str, str] = {}  # modifier point name -> its twin's global name

    # ------------------------------------------------------------ values in source
    def const(self, value: Any) -> str:
        """Source text for a constant value: a literal when that is safe, else a global."""
        if value is None or isinstance(value, bool | int):
            return repr(value)
        if isinstance(value, str) and _IDENT.match(value):
            return repr(value)
        try:
            key: tuple[type, Any] = (type(value), value)
            hash(key)
        except TypeError:
            key = (type(value), id(value))
        name = self._consts.get(key)
        if name is None:
            name = f"_k{len(self._consts)}"
            self._consts[key] = name
            self.env[name] = value
        return name

    # ------------------------------------------------------------ lazy functions
    def _lazy(self, name: str, write: Callable[[], str],
              fallback: Callable[..., Any] | None = None) -> types.FunctionType:
        """A function whose source is written and compiled on its first call.

        Loading makes one per compiled expression, most never called on their own (the
        expression is part of a bigger one), so this must stay cheap: no text yet.
        ``fallback`` (same arguments) is what it runs if Python cannot compile the source.
        """
        fn = types.FunctionType(_trampoline.__code__, self.env, name)
        fn.__kwdefaults__ = {"_i": len(self._sources)}
        if fallback is not None:
            self._fallbacks[len(self._sources)] = fallback
        self._sources.append((write, fn))
        return fn

    def jit(self, i: int) -> types.FunctionType:
        """Compile the i-th source and give its function the real code.

        Python's compiler has limits of its own (nesting of blocks, parentheses, indentation,
        recursion) that rules within the language's limits should not reach; if one is
        reached all the same, the function runs its fallback from then on, or fails as a
        rule (located by its caller).
        """
        write, fn = self._sources[i]
        fallback = self._fallbacks.get(i)
        scratch: dict[str, Any] = {}
        try:
            code = compile(write(), f"<{self.label}: generated {fn.__name__}>", "exec")
        except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError):
            if fallback is None:
                raise RuleFault("rules too deeply nested to run (the generated Python does not compile)",
                                None, "split the rule into procedures or functions") from None
            fn.__code__ = _forward.__code__
            fn.__kwdefaults__ = {"_to": fallback}
            return fn
        exec(code, self.env, scratch)  # noqa: S102 - compiler-written source; see the module docstring
        fn.__code__ = scratch[fn.__name__].__code__
        fn.__kwdefaults__ = None
        return fn

    def source_of(self, fn: Callable[..., Any]) -> str | None:
        """The generated source of a function made here (for debugging and tests)."""
        for write, f in self._sources:
            if f is fn:
                return write()
        return None

    # ------------------------------------------------------------ what the compiler asks for
    def root(self, src: Src, slow: Callable[[Any, dict], Any]) -> Callable[[Any, dict], Any]:
        """``fn(game, locals)`` evaluating ``src``; ``slow`` (the closure) on any trouble."""
        name = f"e{next(self._names)}"

        def write() -> str:
            text, free = src.text, src.free
            lines = [f"def {name}(g, L):", "    try:"]
            lines += [f"        {local(v)} = L[{v!r}]" for v in sorted(free)]
            lines += [f"        return {text}", "    except Exception:", f"        return {self.const(slow)}(g, L)"]
            return "\n".join(lines) + "\n"
        return self._lazy(name, write, slow)

    def function(self, fname: str, params: list[str], body: Src | None,
                 slow: Callable[[Any, dict], Any]) -> None:
        """The positional twin of a rules function, sharing the runtime's memo of results."""
        gname = self.functions.setdefault(fname, f"F{len(self.functions)}")

        def write() -> str:
            args = ", ".join(local(p) for p in params)
            sig = f"g, {args}" if params else "g"
            if body is None:  # no generated body: go through the runtime with the closure
                call = f"{self.const(slow)}(g, {{{', '.join(f'{p!r}: {local(p)}' for p in params)}}})"
            else:
                call = body.text
            key = self.const(fname)
            keyt = f"({key}, {args},)" if params else f"({key},)"
            # a call not answered from the memo is a step of work (Game.call_function counts
            # the same); past the budget the caller's closure reports it at its place
            return (f"def {gname}({sig}):\n"
                    f"    key = {keyt}\n"
                    f"    memo = g.memo\n"
                    f"    try:\n"
                    f"        return memo[key]\n"
                    f"    except KeyError:\n"
                    f"        pass\n"
                    f"    except TypeError:\n"  # a list argument cannot be remembered
                    f"        key = None\n"
                    f"    g.work += {CALL_WORK}\n"
                    f"    if g.work > g.work_budget:\n"
                    f"        raise RuleFault('work budget')\n"
                    f"    value = {call}\n"
                    f"    if key is not None:\n"
                    f"        memo[key] = value\n"
                    f"    return value\n")
        self.env[gname] = self._lazy(gname, write)

    def point(self, pname: str, params: list[str], base: Src | None) -> None:
        """The positional twin of a modifier point: its base alone while no modifier is active."""
        gname = self.points.setdefault(pname, f"Q{len(self.points)}")

        def write() -> str:
            args = ", ".join(local(p) for p in params)
            read = f"g.point({self.const(pname)}, [{args}])"
            return (f"def {gname}(g{''.join(', ' + local(p) for p in params)}):\n"
                    f"    if g.state['modifiers']:\n"
                    f"        return {read}\n"
                    f"    return {base.text if base is not None else read}\n")
        self.env[gname] = self._lazy(gname, write)

    def call_point(self, pname: str, args: list[str]) -> str:
        """Source reading a modifier point through its twin."""
        gname = self.points.setdefault(pname, f"Q{len(self.points)}")
        return f"{gname}(g{''.join(', ' + a for a in args)})"

    def call(self, fname: str, args: list[str]) -> str:
        """Source calling a rules function's positional twin."""
        gname = self.functions.setdefault(fname, f"F{len(self.functions)}")
        return f"{gname}(g{''.join(', ' + a for a in args)})"

    def enumerator(self, action: str, params: list[tuple[str, Src, bool]], stages: list[Src | None],
                   label: Src | None) -> Callable[[Any, str, list], None]:
        """``enum(game, actor, out)`` appending every legal choice of one action to ``out``.

        ``params`` are (name, domain source, value needs a copy); ``stages[i]`` is the
        test once the first i parameters are bound (None: nothing to test).
        """
        name = f"enum{next(self._names)}"
        lines = [f"def {name}(g, v_actor, out):"]
        depth = 1

        def emit(line: str) -> None:
            lines.append("    " * depth + line)

        def test(stage: Src | None, leave: str) -> None:
            if stage is not None:
                emit(f"if not ({stage.text}):")
                emit(f"    {leave}")

        test(stages[0], "return")
        for i, (pname, dom, _needs_copy) in enumerate(params):
            emit(f"for {local(pname)} in {dom.text}:")
            depth += 1
            test(stages[i + 1], "continue")
        args = ", ".join(f"{p!r}: " + (f"_copy({local(p)})" if copy else local(p)) for p, _d, copy in params)
        lab = f"g.label_of({label.text})" if label is not None else self.const(action)
        emit(f"out.append({{'label': {lab}, 'value': {{'action': {self.const(action)}, 'args': {{{args}}}}}}})")
        source = "\n".join(lines) + "\n"
        return self._lazy(name, lambda: source)




# ------------------------------------------------------------------ statements
@dataclass
class Plan:
    """What one compiled statement does, kept beside its instructions for generating Python.

    ``kind`` is one of: ``op`` (a simple statement: call its instruction), ``inline`` (a
    simple statement written out, see ``code``), ``let``, ``if``, ``while``, ``repeat``,
    ``for``, ``break``, ``call``, ``return``, or ``pause`` (a choice, the end of the game,
    or anything else that must run as instructions).
    """

    kind: str
    # 'inline': ``code`` is Python doing what the statement's one instruction does, with
    # {0}, {1}... standing for ``fns`` (functions, names, places: passed as constants)
    code: str = ""
    at: int = 0  # index of the statement's first instruction (errors without a place take its place)
    end: int = 0  # index just after its last instruction
    fns: list[Any] = field(default_factory=list)  # expression functions it evaluates, in order
    name: str = ""  # let / for variable, or the procedure called
    bind: str | None = None  # where a call's result goes; for a 'for', the local keeping its place
    names: list[str] = field(default_factory=list)  # a call's parameter names
    blocks: list[list[Plan]] = field(default_factory=list)  # nested statements (branches, loop body)
    # instructions whose place a test's errors take; for a 'break', the instruction it goes to
    ats: list[int] = field(default_factory=list)


_RULE_ERRORS = "(KeyError, TypeError, ValueError, IndexError, AttributeError)"


class StatementWriter:
    """Writes Python for a procedure's statements (see Compiler.fuse).

    A *run* (the statements of a block from some statement to the block's end) becomes
    one instruction doing what the instructions it replaces would do, in the same order,
    calling the same runtime operations with the same places; ``if``, loops and direct
    calls become Python control flow. When a statement pauses (a choice, a call of a
    procedure that may pause, a return, the end of the game) the run stops right after
    it with the frame's next instruction set exactly as the instructions would have left
    it, so the game goes on instruction by instruction from there, through other runs,
    and the continuation stays plain data. A loop over a list that may pause keeps its
    place in the locals as the instructions do. A procedure that never pauses (nor calls
    one that may) becomes a plain function that ``call`` runs without pushing a frame.
    """

    def __init__(self, gen: CodeGen, proc: str, code: list[Any], locs: list[Any], budget: int,
                 direct: dict[str, str]) -> None:
        self.gen = gen
        self.proc = proc
        self.code = code  # the procedure's instructions, before any run replaced one
        self.locs = gen.const(locs)
        self.budget = budget
        self.direct = direct  # procedure -> global name of its direct function
        self.loops = itertools.count()
        self.direct_mode = False  # writing a direct procedure (a 'return' returns its value)

    def may_pause(self, plan: Plan) -> bool:
        """Whether control may leave the procedure's code at this statement (and resume after it)."""
        kind = plan.kind
        if kind in ("pause", "return") or (kind == "call" and plan.name not in self.direct):
            return True
        return any(self.may_pause(p) for b in plan.blocks for p in b)

    def _runaway(self, pad: str, at: int) -> list[str]:
        # a loop that never ends is reported at the loop (a repeat has no instruction of its
        # own: at its first statement); passes are counted on the game, so loops in direct
        # procedures called from a loop add up
        msg = self.gen.const(f"runaway rules in '{self.proc}': more than {self.budget} steps without a decision")
        hint = self.gen.const("a loop never ends; check its 'until'/'while' condition")
        return [f"{pad}g.steps += 1", f"{pad}if g.steps > {self.budget}:",
                f"{pad}    raise RuleFault({msg}, {self.locs}[{at}], {hint})"]

    def lines(self, plans: list[Plan], pad: str, loops: list[str | None]) -> list[str]:
        """Python for ``plans``; ``loops`` holds, innermost last, each enclosing loop written
        here: the local keeping its place (a loop over a list that may pause), else None."""
        out: list[str] = []
        k = self.gen.const
        for p in plans:
            kind = p.kind
            if kind == "op":
                out += [f"{pad}_at = {p.at}", f"{pad}{k(self.code[p.at])}(g, fr)"]
            elif kind == "inline":
                out.append(f"{pad}_at = {p.at}")
                out += [pad + line for line in p.code.format(*(k(f) for f in p.fns)).split("\n")]
            elif kind == "let":
                out += [f"{pad}_at = {p.at}", f"{pad}L[{p.name!r}] = {k(p.fns[0])}(g, L)"]
            elif kind == "if":
                depth = pad
                for i, test in enumerate(p.fns):
                    out += [f"{depth}_at = {p.ats[i]}", f"{depth}if {k(test)}(g, L):"]
                    out += self.lines(p.blocks[i], depth + "    ", loops) or [f"{depth}    pass"]
                    out.append(f"{depth}else:")
                    depth += "    "
                rest = p.blocks[len(p.fns)] if len(p.blocks) > len(p.fns) else []
                out += self.lines(rest, depth, loops) or [f"{depth}pass"]
            elif kind == "while":
                out += [f"{pad}while True:", f"{pad}    _at = {p.ats[0]}",
                        f"{pad}    if not {k(p.fns[0])}(g, L):", f"{pad}        break"]
                out += self._runaway(pad + "    ", p.at) + self.lines(p.blocks[0], pad + "    ", loops + [None])
            elif kind == "repeat":
                out += [f"{pad}while True:"] + self._runaway(pad + "    ", p.at)
                out += self.lines(p.blocks[0], pad + "    ", loops + [None])
                out += [f"{pad}    _at = {p.ats[0]}", f"{pad}    if {k(p.fns[0])}(g, L):", f"{pad}        break"]
            elif kind == "for":
                out += self._for(p, pad, loops)
            elif kind == "break":
                if not loops:  # the loop is not written here: go on at its exit instruction
                    out += [f"{pad}fr['pc'] = {p.ats[0]}", f"{pad}return"]
                else:
                    if loops[-1] is not None:
                        out.append(f"{pad}L.pop({loops[-1]!r}, None)")
                    out.append(f"{pad}break")
            elif kind == "call" and p.name in self.direct:
                args = ", ".join(f"{n!r}: {k(a)}(g, L)" for n, a in zip(p.names, p.fns, strict=True))
                out += [f"{pad}_at = {p.at}", f"{pad}_r = {self.direct[p.name]}(g, {{{args}}})"]
                if p.bind:
                    out.append(f"{pad}L[{p.bind!r}] = _r")
            elif kind == "return" and self.direct_mode:
                value = f"{k(p.fns[0])}(g, L)" if p.fns and p.fns[0] is not None else "None"
                out += [f"{pad}_at = {p.at}", f"{pad}return {value}"]
            elif kind == "return":  # the frame ends: nothing of it runs after this
                out += [f"{pad}_at = {p.at}", f"{pad}{k(self.code[p.at])}(g, fr)", f"{pad}return"]
            else:  # a choice, a call that may pause, the end of the game: do it and stop here
                out += [f"{pad}_at = {p.at}", f"{pad}{k(self.code[p.at])}(g, fr)",
                        f"{pad}fr['pc'] = {p.end}", f"{pad}return"]
        return out

    def _for(self, p: Plan, pad: str, loops: list[str | None]) -> list[str]:
        k = self.gen.const
        seq, where = p.fns
        body = p.blocks[0]
        if not any(self.may_pause(b) for b in body):
            item = f"_i{next(self.loops)}"
            out = [f"{pad}_at = {p.ats[0]}", f"{pad}for {item} in list({k(seq)}(g, L)):",
                   f"{pad}    L[{p.name!r}] = {item}"] + self._runaway(pad + "    ", p.at)
            if where is not None:
                out += [f"{pad}    _at = {p.ats[1]}", f"{pad}    if not {k(where)}(g, L):", f"{pad}        continue"]
            return out + (self.lines(body, pad + "    ", loops + [None]) or [f"{pad}    pass"])
        # The body may pause: keep the loop's place in the locals, as the instructions do,
        # so that after the pause they go on with the next item.
        it = p.bind or ""
        s = f"_s{next(self.loops)}"
        test = f"{k(where)}(g, L)" if where is not None else "True"
        out = [f"{pad}_at = {p.ats[0]}", f"{pad}L[{it!r}] = {s} = [list({k(seq)}(g, L)), 0]",
               f"{pad}while True:", *self._runaway(pad + "    ", p.at),
               f"{pad}    _at = {p.ats[1]}",
               f"{pad}    _found = False",
               f"{pad}    while {s}[1] < len({s}[0]):",
               f"{pad}        L[{p.name!r}] = {s}[0][{s}[1]]",
               f"{pad}        {s}[1] += 1",
               f"{pad}        if {test}:",
               f"{pad}            _found = True",
               f"{pad}            break",
               f"{pad}    if not _found:",
               f"{pad}        del L[{it!r}]",
               f"{pad}        break"]
        return out + self.lines(body, pad + "    ", loops + [it])

    def _wrap(self, head: list[str], body: list[str], tail: list[str], first: int) -> str:
        locs = self.locs
        lines = head + [f"    _at = {first}", "    try:"] + body + [
            "    except RuleFault as _f:",
            "        if _f.loc is None:",
            f"            _f.loc = {locs}[_at]",
            "        raise",
            "    except RecursionError:",
            f"        raise RuleFault({self.gen.const('rules nested too deeply (a function calls itself without end?)')}, "
            f"{locs}[_at]) from None",
            "    except MemoryError:",
            f"        raise RuleFault('out of memory', {locs}[_at], 'a value grows too large') from None",
            f"    except {_RULE_ERRORS} as _e:",
            f"        raise RuleFault('rule failed: ' + type(_e).__name__ + ': ' + str(_e), {locs}[_at]) from None",
        ] + tail
        return "\n".join(lines) + "\n"

    def run(self, plans: list[Plan]) -> Callable[[Any, dict], None]:
        """One instruction doing ``plans`` (a block from one statement on) and moving on past them."""
        name = f"run{next(self.gen._names)}"
        end = plans[-1].end

        def write() -> str:
            return self._wrap([f"def {name}(g, fr):", "    L = fr['locals']"], self.lines(plans, "        ", []),
                              [f"    fr['pc'] = {end}"], plans[0].at)
        # if Python cannot compile it, the first statement's own instruction runs instead
        return self.gen._lazy(name, write, self.code[plans[0].at])

    def procedure(self, gname: str, plans: list[Plan]) -> None:
        """The direct function of a procedure that never pauses: ``fn(game, args) -> result``."""
        writer = copy.copy(self)
        writer.direct_mode = True

        def write() -> str:
            return writer._wrap([f"def {gname}(g, L):", "    fr = {'locals': L}"],
                                writer.lines(plans, "        ", []), ["    return None"], plans[0].at if plans else 0)
        self.gen.env[gname] = self.gen._lazy(gname, write)
