"""Python source written for rules, and the map from it back to the rules text.

The compiler turns every rules text into Python source (see compiler.py): an expression
becomes an :class:`Src` — a template whose ``{0}``, ``{1}``... stand for the sources of its
parts — and the writers of statements, functions and action listers put these into whole
Python functions. :class:`CodeGen` compiles such a function lazily, on its first call, and
keeps a :class:`SourceMap` of it: for every generated line the rule statement it comes
from, and for every expression on the line the columns it spans and the rules text
position it was written at.

When generated code fails, :func:`fault_of` reads the Python traceback: the innermost
generated frame and the column range of the failing bytecode (Python 3.11 keeps one for
every instruction) name the narrowest expression that failed, so the error points at the
rule exactly; the outer generated frames, and the frames of the game's stack, are the call
chain of rule procedures and functions, with their arguments.

Nothing of a rule author's text is executed: the source is written by the compiler from the
checked AST, names of the rules language become ``v_NAME`` (the grammar only admits
``[a-z_][a-z0-9_]*``) and every value that is not a number, a boolean, none or an
identifier-like text is passed in as a constant from a table, never spelt out.
"""

from __future__ import annotations

import builtins
import functools
import itertools
import re
import types
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Loc
from ..model import RuleFault

_IDENT = re.compile(r"[a-z_][a-z0-9_]*\Z")  # with match(): whole names ('$' also passes "x\n")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PLACEHOLDER = re.compile(r"\{(\d+)\}")

# Why a fault happened, when Python only says what: (game, exception, value of part i) -> fault or None.
Explain = Callable[[Any, BaseException, Callable[[int], Any]], "RuleFault | None"]


@functools.lru_cache(maxsize=4096)
def local(name: str) -> str:
    """The Python name of a rules-language local."""
    if not _NAME.match(name):  # the grammar guarantees it; this keeps the guarantee local
        raise ValueError(f"not a rules-language name: {name!r}")
    return "v_" + name


@functools.lru_cache(maxsize=4096)
def _pieces(template: str) -> tuple[str | int, ...]:
    out: list[str | int] = []
    at = 0
    for m in _PLACEHOLDER.finditer(template):
        if m.start() > at:
            out.append(template[at:m.start()].replace("{{", "{").replace("}}", "}"))
        out.append(int(m.group(1)))
        at = m.end()
    if at < len(template):
        out.append(template[at:].replace("{{", "{").replace("}}", "}"))
    return tuple(out)


class Src:
    """The Python source of one expression, with where it was written.

    ``template`` holds ``{i}`` for the source of ``parts[i]`` (a literal brace is doubled).
    ``where`` is ``(origin, line, col)``: a rules text origin and a position inside it, turned
    into a file location only when an error needs it. ``binds`` is a local the template itself
    binds (a query's variable) for the parts from ``bound_from`` on. ``explain`` words a
    Python error of the expression's own operation (see :data:`Explain`).
    """

    __slots__ = ("pieces", "parts", "where", "binds", "bound_from", "explain", "name")

    def __init__(self, template: str, parts: tuple[Src, ...] = (), where: Any = None,
                 explain: Explain | None = None, binds: str | None = None, bound_from: int = 0) -> None:
        self.pieces = _pieces(template)
        self.parts = parts
        self.where = where
        self.explain = explain
        self.binds = binds
        self.bound_from = bound_from
        self.name: str | None = None  # set for a local variable read

    @property
    def loc(self) -> Loc | None:
        if self.where is None:
            return None
        origin, line, col = self.where
        return origin.locate(line, col)

    def free(self) -> set[str]:
        """The rules-language locals this expression reads (minus those it binds itself)."""
        out: set[str] = set()
        stack: list[tuple[Src, frozenset[str]]] = [(self, frozenset())]
        while stack:
            s, bound = stack.pop()
            if s.name is not None and s.name not in bound:
                out.add(s.name)
            for i, p in enumerate(s.parts):
                stack.append((p, bound | {s.binds} if s.binds is not None and i >= s.bound_from else bound))
        return out


def read_local(name: str, where: Any) -> Src:
    """The source reading a rules-language local (a Python local, or ``L[name]`` in a root)."""
    def unset(g: Any, exc: BaseException, value: Callable[[int], Any]) -> RuleFault | None:
        if isinstance(exc, NameError | KeyError):
            return RuleFault(f"'{name}' has no value here", None,
                             "it is set only on a path that did not run; set it before the 'if'")
        return None
    s = Src("", (), where, unset)
    s.name = name
    return s


# How locals are read: "py" (Python locals ``v_x``: statements, functions, listers) or
# "dict" (``L['x']``: a root called with a dict of locals).
PY, DICT = "py", "dict"


def render(src: Src, mode: str, bound: frozenset[str], spans: list[Span] | None, offset: int) -> str:
    """The Python text of ``src`` placed at column ``offset`` of a line; records its spans."""
    if src.name is not None:
        text = local(src.name) if mode == PY or src.name in bound else f"L[{src.name!r}]"
    else:
        out: list[str] = []
        at = offset
        binds = src.binds
        for piece in src.pieces:
            if piece.__class__ is str:
                out.append(piece)
                at += len(piece)
            else:
                i: int = piece  # type: ignore[assignment]
                inner = bound | {binds} if binds is not None and i >= src.bound_from else bound
                t = render(src.parts[i], mode, inner, spans, at)
                out.append(t)
                at += len(t)
        text = "".join(out)
    if spans is not None and src.where is not None:
        spans.append(Span(offset, offset + len(text), src, mode, bound))
    return text


@dataclass(slots=True)
class Span:
    """Where an expression sits on a generated line (columns, 0-based, end excluded)."""

    start: int
    end: int
    src: Src
    mode: str
    bound: frozenset[str]


@dataclass
class SourceMap:
    """What each line of one generated function comes from."""

    what: str  # 'procedure battle', 'function strength', 'the choices of action move'...
    params: list[str]  # the rules names of its parameters (shown in a call chain)
    locs: list[Loc | None] = field(default_factory=list)  # per line (1-based: index line - 1)
    spans: list[list[Span]] = field(default_factory=list)
    at_loc: Loc | None = None  # the whole function's place (a line without one takes it)

    def place(self, line: int, col: int | None, end: int | None) -> tuple[Loc | None, Span | None, Loc | None]:
        """(the narrowest expression's place, its span, the statement's place) at a position."""
        if not 1 <= line <= len(self.locs):
            return self.at_loc, None, self.at_loc
        stmt = self.locs[line - 1] or self.at_loc
        best: Span | None = None
        if col is not None and end is not None:
            for s in self.spans[line - 1]:
                if s.start <= col and end <= s.end and (best is None or s.end - s.start < best.end - best.start):
                    best = s
        if best is None:
            return stmt, None, stmt
        return best.src.loc or stmt, best, stmt


class Writer:
    """Lines of one generated function, each with the rules text it comes from."""

    def __init__(self, what: str, params: list[str], at: Loc | None) -> None:
        self.lines: list[str] = []
        self.map = SourceMap(what, params, at_loc=at)

    def line(self, depth: int, *parts: str | Src, loc: Loc | None = None, mode: str = PY,
             bound: frozenset[str] = frozenset()) -> None:
        """Add one line: texts and expression sources, ``depth`` levels indented."""
        text = "    " * depth
        spans: list[Span] = []
        for p in parts:
            text += p if p.__class__ is str else render(p, mode, bound, spans, len(text))  # type: ignore[arg-type]
        self.lines.append(text)
        self.map.locs.append(loc)
        self.map.spans.append(spans)

    def source(self) -> str:
        return "\n".join(self.lines) + "\n"


# ------------------------------------------------------------------ lazy compilation
_MAPS: weakref.WeakValueDictionary[str, SourceMap] = weakref.WeakValueDictionary()
_files = itertools.count()


def _trampoline(*args: Any, _i: int = 0) -> Any:  # pragma: no cover - its code is only a template
    return _jit(_i)(*args)  # type: ignore[name-defined]  # noqa: F821 - bound in each CodeGen's env


class CodeGen:
    """The generated functions of one ruleset: their shared globals, constants and maps."""

    def __init__(self, label: str = "rules") -> None:
        from .runtime_helpers import HELPERS  # the functions generated code may call

        self.label = label
        self.env: dict[str, Any] = dict(HELPERS)
        self.env["__builtins__"] = {n: getattr(builtins, n) for n in _BUILTINS}
        self.env["_jit"] = self.jit
        self.env["_FAILURES"] = FAILURES
        self.env["_located"] = fault_of
        self._consts: dict[tuple[type, Any], str] = {}
        # per lazy function: what writes its source and map (run at its first call), and the function
        self._sources: list[tuple[Callable[[], Writer], types.FunctionType]] = []
        self.maps: list[SourceMap] = []  # keeps the weakly registered maps alive
        self._names = itertools.count()
        self.twins: dict[tuple[str, str], str] = {}  # (F or Q, rules name) -> its twin's global name

    def twin(self, prefix: str, name: str) -> str:
        """The global name of a rules function's (F) or modifier point's (Q) positional twin."""
        key = (prefix, name)
        if key not in self.twins:
            self.twins[key] = f"{prefix}{sum(1 for p, _n in self.twins if p == prefix)}"
        return self.twins[key]

    def name(self, prefix: str) -> str:
        """A fresh global name."""
        return f"{prefix}{next(self._names)}"

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

    def lazy(self, name: str, write: Callable[[], Writer]) -> types.FunctionType:
        """A function ``name`` whose source (and map) ``write`` makes at its first call.

        Loading makes one per rule; many never run in a game, so this stays cheap.
        """
        fn = types.FunctionType(_trampoline.__code__, self.env, name)
        fn.__kwdefaults__ = {"_i": len(self._sources)}
        self._sources.append((write, fn))
        self.env[name] = fn
        return fn

    def jit(self, i: int) -> types.FunctionType:
        """Compile the i-th source and give its function the real code.

        Python's compiler has limits of its own (nesting of blocks, indentation, recursion)
        that the checks of the rules language keep rules away from; if one is reached all the
        same, the call fails as a rule, at the rule's place.
        """
        write, fn = self._sources[i]
        w = write()
        filename = f"<{self.label}: generated {fn.__name__} #{next(_files)}>"
        scratch: dict[str, Any] = {}
        source = w.source()
        try:
            code = compile(source, filename, "exec")
        except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError):
            raise RuleFault("rules too deeply nested to run (the generated Python does not compile)",
                            w.map.at_loc, "split the rule into procedures or functions") from None
        self.maps.append(w.map)
        _MAPS[filename] = w.map
        exec(code, self.env, scratch)  # noqa: S102 - compiler-written source; see the module docstring
        from .runtime_helpers import note_locals, saved_pairs  # (imported here as HELPERS is)

        made = scratch[fn.__name__].__code__
        note_locals(made)
        for name in made.co_names:
            if name.startswith(SAVED_TABLE):  # the table of the locals its pauses save (ProcWriter.saving)
                self.env[name] = saved_pairs(made, source)
        fn.__code__ = scratch[fn.__name__].__code__
        fn.__kwdefaults__ = scratch[fn.__name__].__kwdefaults__
        fn.__defaults__ = scratch[fn.__name__].__defaults__
        return fn

    def source_of(self, fn: Callable[..., Any]) -> str | None:
        """The generated source of a function made here (for debugging and tests)."""
        for write, f in self._sources:
            if f is fn:
                return write().source()
        return None

    def sources(self) -> Iterator[str]:
        """Every generated source (for tests)."""
        for write, _f in self._sources:
            yield write().source()


# How a statement that pauses saves the procedure's locals in its frame (dsl/decisions.py,
# dsl/procwriter.py); ProcWriter.saving adds the procedure's table of its locals, a global
# named SAVED_TABLE + the procedure's name, set when it is compiled (runtime_helpers.saved_pairs).
SAVE = "_save(fr, locals())"
SAVED_TABLE = "_SV_"

_BUILTINS = ("len", "bool", "list", "sorted", "reversed", "dict", "sum", "min", "max", "any", "all", "abs", "type", "str",
             "isinstance", "int", "locals", "Exception", "KeyError", "TypeError", "ValueError", "IndexError",
             "AttributeError", "RecursionError", "MemoryError", "ZeroDivisionError", "NameError")


# ------------------------------------------------------------------ from a Python error to the rule
MAX_CHAIN = 8  # calls shown in a call chain

# What generated code may raise when a rule goes wrong (anything else is a bug of the engine).
FAILURES = (RuleFault, KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError, NameError,
            OverflowError, RecursionError, MemoryError)

@dataclass
class Frame:
    """One generated frame of a traceback."""

    frame: types.FrameType
    map: SourceMap
    loc: Loc | None  # the narrowest expression at the frame's current instruction
    span: Span | None
    stmt: Loc | None


def generated_frames(exc: BaseException) -> list[Frame]:
    """The frames of generated rules code in ``exc``'s traceback, outermost first."""
    out: list[Frame] = []
    tb = exc.__traceback__
    while tb is not None:
        m = _MAPS.get(tb.tb_frame.f_code.co_filename)
        if m is not None:
            line, col, end = _position(tb.tb_frame.f_code, tb.tb_lasti)
            loc, span, stmt = m.place(line, col, end)
            out.append(Frame(tb.tb_frame, m, loc, span, stmt))
        tb = tb.tb_next
    return out


def _position(code: types.CodeType, lasti: int) -> tuple[int, int | None, int | None]:
    positions = list(code.co_positions())
    i = min(max(lasti // 2, 0), len(positions) - 1)
    while i >= 0:
        line, end_line, col, end = positions[i]
        if line is not None:
            if end_line != line:
                return line, None, None
            return line, col, end
        i -= 1
    return 0, None, None


def _part_value(f: Frame) -> Callable[[int], Any]:
    """The value of part i of the failing expression, computed again in its frame (expressions
    are pure); raises if it cannot be."""
    span = f.span

    def value(i: int) -> Any:
        assert span is not None
        src = span.src
        bound = span.bound | {src.binds} if src.binds is not None and i >= src.bound_from else span.bound
        text = render(src.parts[i], span.mode, bound, None, 0)
        return eval(text, f.frame.f_globals, dict(f.frame.f_locals))  # noqa: S307 - compiler-written source
    return value


def fault_of(exc: BaseException, game: Any, at_statement: bool = False) -> RuleFault:
    """The located rule fault for an exception raised while generated rules code ran.

    A :class:`RuleFault` raised without a place takes the failing expression's (or, if it says
    so, the statement's); a Python error is explained by that expression when it can be.
    The generated frames outside the innermost become the fault's call chain.
    """
    frames = generated_frames(exc)
    inner = frames[-1] if frames else None
    if isinstance(exc, RuleFault):
        fault = exc
    elif isinstance(exc, RecursionError):
        fault = RuleFault("rules nested too deeply (a function calls itself without end?)")
        at_statement = True
    elif isinstance(exc, MemoryError):
        fault = RuleFault("out of memory", None, "a value grows too large")
        at_statement = True
    else:
        fault = _explained(exc, game, inner) or _plain(exc)
    if fault.loc is None and inner is not None:
        fault.loc = inner.stmt if (at_statement or getattr(fault, "at_statement", False)) else inner.loc
    if not fault.chain:
        # calls of rule procedures, functions and points; not the Python functions a
        # comprehension runs as, nor what the engine itself called (a label, a condition)
        calls = [f for f in frames if f.map.what and not f.frame.f_code.co_name.startswith("<")]
        fault.chain = [_called(f, callee, game) for f, callee in zip(calls, calls[1:], strict=False)]
        if len(fault.chain) > MAX_CHAIN:  # a deep recursion: its ends tell the story
            cut = len(fault.chain) - MAX_CHAIN + 1
            fault.chain = fault.chain[:2] + [(None, f"... {cut} more calls")] + fault.chain[2 + cut:]
    return fault


def _plain(exc: BaseException) -> RuleFault:
    """The fault of a Python error no expression explained (e.g. when Python keeps no columns)."""
    if isinstance(exc, ZeroDivisionError):
        return RuleFault("division by zero")
    return RuleFault(f"rule failed: {type(exc).__name__}: {exc}")


def _explained(exc: BaseException, game: Any, f: Frame | None) -> RuleFault | None:
    if f is None or f.span is None or f.span.src.explain is None:
        return None
    try:
        return f.span.src.explain(game, exc, _part_value(f))
    except RuleFault as fault:  # the checked way of doing the operation said what is wrong
        return fault
    except Exception:  # noqa: BLE001 - the explanation failed too: the plain error will do
        return None


def _called(caller: Frame, callee: Frame, game: Any) -> tuple[Loc | None, str]:
    """(where the caller called, what was called with which arguments)."""
    return caller.loc or caller.stmt, describe_call(callee.map.what, callee.map.params,
                                                    {p: callee.frame.f_locals.get(local(p)) for p in callee.map.params},
                                                    game)


def describe_call(what: str, params: list[str], values: dict[str, Any], game: Any) -> str:
    """``procedure move(who=red, to=square_3)`` for a call chain."""
    args = ", ".join(f"{p}={_shown(values.get(p), game)}" for p in params)
    return f"{what}({args})"


def _shown(v: Any, game: Any) -> str:
    try:
        text = game.label_of(v) if game is not None else repr(v)
    except Exception:  # noqa: BLE001 - any value, however odd, can be shown somehow
        text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."
