"""The direct parser: Lark's LALR parser building the AST while it parses (see :mod:`.parser`)."""

from __future__ import annotations

import re
import threading
from typing import Any

from .lalr_table import load_table


class _Direct:
    """A parser that builds the AST while it parses: no parse tree, no second walk.

    Lark calls a callback at every reduction; with ``transformer=`` those are the methods of
    the AST builder (``builder``, an instance of :class:`.parser._AstBuilder`; ``rules``, its
    methods by grammar rule), given the rule's children as a parse tree would hold them. What
    Lark's ``propagate_positions`` adds to a tree — a rule starts where its first child (token or
    rule, including the keywords a tree leaves out) starts, and a rule that only passes its
    single child on makes that child start where the rule does — is done here by one wrapper
    around each reduction, which keeps the start of each value it built by the value's id
    (with the value, so an id cannot be reused while the parse runs). That bookkeeping is
    most of the time the tree took; the AST and every position are the same as
    ``parser._build(parser._lark().parse(...))`` (a test compares them on every bundled rules text).

    Most texts never reach Lark: :class:`_Loop` parses them from Lark's tables kept as data
    (:mod:`.lalr_table`) with the same callbacks, and Lark is imported and built only for a
    text the loop gives up on (a syntax error, whose message Lark words).

    A builder method that fails (a bad ``{...}`` in a string) does not stop the
    parse: as with the tree, a syntax error later in the text is reported first; otherwise
    the first such failure is raised when the parse is done.
    """

    def __init__(self, grammar: str, builder: Any, rules: dict[str, Any]) -> None:
        self.grammar = grammar
        self.lock = threading.RLock()  # one parse at a time (a string's {...} parses inside one)
        self.starts: dict[int, tuple[tuple[int, int], Any]] = {}
        self.error: Exception | None = None
        self.at: tuple[int, int] | None = None  # where the rule being reduced starts
        self.inline: dict[str, Any] = {name: self._method(builder, fn) for name, fn in rules.items()}
        self._lark: Any = None
        table = load_table()
        self.loop: _Loop | None = _Loop.of(self, table) if table is not None else None
        if self.loop is None:  # without the tables Lark parses every text: build it now (its checks decide)
            try:
                self.lark  # noqa: B018
            except LarkUnusable as exc:
                raise TypeError(str(exc)) from None

    @property
    def lark(self) -> Any:
        """Lark's parser with the AST builder as its transformer, built at first use."""
        if self._lark is None:
            from lark import Lark, Token, Tree

            inline = dict(self.inline)
            inline["__default__"] = lambda data, children, meta: Tree(data, children)
            lark = Lark(self.grammar, parser="lalr", start=["start", "expr"],
                        maybe_placeholders=True, transformer=_Namespace(inline))
            # The reduction callbacks Lark made from the transformer, by grammar rule (a Lark
            # internal, checked here: without it, _direct() returns None and the tree is built).
            callbacks = getattr(lark, "_callbacks", None)
            if not isinstance(callbacks, dict) or not callbacks:
                raise LarkUnusable("unexpected Lark internals")
            for rule, cb in list(callbacks.items()):
                if not isinstance(rule, str):
                    callbacks[rule] = self._positioned(cb, Token)
            self._lark = lark
        return self._lark

    def _method(self, builder: Any, fn: Any) -> Any:
        def method(children: list[Any]) -> Any:
            try:
                return fn(builder, self.at, children)
            except Exception as exc:  # reported after the parse, like an error of _build
                if self.error is None:
                    self.error = exc
                return None
        return method

    def _positioned(self, cb: Any, token: Any) -> Any:
        def positioned(children: list[Any]) -> Any:
            first = None
            starts = self.starts
            for c in children:
                if isinstance(c, token):
                    first = (c.line, c.column)
                    break
                known = starts.get(id(c))
                if known is not None:
                    first = known[0]
                    break
            self.at = first
            res = cb(children)
            if first is not None and not isinstance(res, token):
                starts[id(res)] = (first, res)
            return res
        return positioned

    def parse(self, text: str, start: str) -> Any:
        """The AST of ``text`` from rule ``start``; raises Lark's errors, then a builder's."""
        with self.lock:
            saved = self.starts, self.error
            self.starts, self.error = {}, None
            try:
                result = self.loop.parse(self, text, start) if self.loop is not None else _FAILED
                if result is _FAILED:  # a syntax error (or anything unusual): Lark's parse words it
                    self.starts, self.error = {}, None
                    result = self.lark.parse(text, start=start)
                if self.error is not None:
                    raise self.error
                return result
            finally:
                self.starts, self.error = saved


class _Namespace:
    """Attributes from a dict (Lark looks transformer methods up by rule name)."""

    def __init__(self, attrs: dict[str, Any]) -> None:
        self.__dict__.update(attrs)



class LarkUnusable(Exception):
    """This Lark's internals are not the ones :class:`_Direct` knows: parse with the tree instead."""


_FAILED = object()  # what _Loop.parse gives back when Lark's own parse must run instead


class Token(str):
    """A token of the direct loop: its text, its terminal and where it starts (what the AST
    builder reads of one of Lark's tokens)."""

    type: str
    line: int
    column: int


class _Tree:
    """What Lark's tree holds for a rule without a builder method: only the inlined '_' rules
    (a run of separators), whose children the rule around them takes in their place."""

    __slots__ = ("data", "children")

    def __init__(self, data: str, children: list[Any]) -> None:
        self.data = data
        self.children = children


def _callback(inline: dict[str, Any], rule: list[Any]) -> Any:
    """The reduction callback Lark's parse-tree builder makes for ``rule`` (see lalr_table.py):
    the child filter, around 'one child is the value' (``?rule``), around the builder's method."""
    _origin, _size, name, expand1, child_filter = rule
    fn = inline.get(name)
    if fn is None:
        def fn(children: list[Any]) -> Any:
            return _Tree(name, children)
    if expand1:
        built = fn

        def fn(children: list[Any]) -> Any:
            return children[0] if len(children) == 1 else built(children)
    if child_filter is not None:
        inner, (to_include, after) = fn, child_filter

        def fn(children: list[Any]) -> Any:
            out: list[Any] = []
            for i, splice, nones in to_include:
                if nones:
                    out += [None] * nones
                if splice:  # an inlined rule: its children, in its place
                    if out:
                        out += children[i].children
                    else:  # as Lark does: the inlined rule's own list (left recursion)
                        out = children[i].children
                else:
                    out.append(children[i])
            if after:
                out += [None] * after
            return inner(out)
    return fn


class _Loop:
    """Lark's LALR parse of a text, without Lark: its tables (:mod:`.lalr_table`), the same
    lexing and the same reduction callbacks, driven by one function.

    Lark's loop pays, per token, for a generator, a line counter object and a lookup of the
    lexer, and per reduction for slicing the stack and the position wrapper of :class:`_Direct`.
    Here the start of each value is kept on a stack beside it, and a reduction whose callback
    only hands its single child on (the levels of precedence an operand passes through alone,
    found once by calling each such callback with a marker) is only a jump in the table: the
    child keeps its value and its start, which is what the wrapper made of it.

    Lexing is Lark's contextual lexing: in each state, the first terminal (in Lark's order)
    that matches among those the state accepts or ignores. Lark tries them all at once, as one
    regular expression per state; here only the terminals a match may start with the
    character at hand are tried (the tables say which), one by one, which is several times
    quicker and finds the same token.

    Anything this loop does not expect — a character no terminal matches, a token the state
    does not accept, a state whose lexer Lark builds differently — gives ``_FAILED``, and
    :meth:`_Direct.parse` parses again with Lark, which raises the error it always raised.
    """

    def __init__(self, d: _Direct, table: dict[str, Any]) -> None:
        self.terms: list[tuple[str, str, frozenset[str] | None]] = [
            (name, regexp, frozenset(first) if first is not None else None)
            for name, regexp, _literal, first in table["terminals"]]
        self.patterns: dict[str, Any] = {}  # terminal -> its compiled expression (at first use)
        self.by_char: dict[str, list[tuple[str, Any]]] = {}  # character -> terminals that may start there
        self.ignore = frozenset(table["ignore"])
        self.own = frozenset(table["own"])
        self.start_states: dict[str, int] = dict(table["start"])
        self.end_states: dict[str, int] = dict(table["end"])
        self.chains: dict[tuple[int, int, str], int] = {}
        marker = object()
        reductions: list[tuple[int, str, Any]] = []
        for rule in table["rules"]:
            cb = _callback(d.inline, rule)
            if rule[1] == 1 and _hands_on(d, cb, marker):
                cb = None
            reductions.append((rule[1], rule[0], cb))
        self.states: list[dict[str, Any]] = [
            {symbol: (act if act >= 0 else reductions[-1 - act]) for symbol, act in row.items()}
            for row in table["states"]]

    def _candidates(self, ch: str) -> list[tuple[str, Any]]:
        """The terminals, in Lark's order, whose matches may start with ``ch`` (each with its
        compiled expression): every terminal for a character outside ASCII."""
        found = []
        for name, regexp, first in self.terms:
            if first is None or not ch.isascii() or ch in first:
                pattern = self.patterns.get(name)
                if pattern is None:
                    pattern = self.patterns[name] = re.compile(regexp)
                found.append((name, pattern))
        self.by_char[ch] = found
        return found

    def parse(self, d: _Direct, text: str, start: str) -> Any:
        """The value Lark's parse would give, or ``_FAILED``."""
        states, by_char, token = self.states, self.by_char, Token
        ignore, own, chains = self.ignore, self.own, self.chains
        end_state = self.end_states[start]
        stack: list[int] = [self.start_states[start]]
        values: list[Any] = []
        places: list[Any] = []  # where each value starts (None: not known)
        pos, line, line_start, n = 0, 1, 0, len(text)
        while True:
            state = stack[-1]
            if pos < n:
                # Lark's lexer of this state: the first of the terminals it accepts or ignores,
                # in Lark's order, that matches here (only those that may start with this
                # character are tried). A state whose lexer Lark builds otherwise is Lark's.
                if own and state in own:
                    return _FAILED
                row = states[state]
                for kind, pattern in by_char.get(text[pos]) or self._candidates(text[pos]):
                    if kind in row or kind in ignore:
                        m = pattern.match(text, pos)
                        if m is not None:
                            break
                else:
                    return _FAILED
                value = m.group(0)
                at, tline, tcol = pos, line, pos - line_start + 1
                pos += len(value)
                if "\n" in value:
                    line += value.count("\n")
                    line_start = at + value.rindex("\n") + 1
                if kind in ignore:
                    continue
                tok: Token | None = token(value)
                tok.type, tok.line, tok.column = kind, tline, tcol  # type: ignore[union-attr]
                place: tuple[int, int] | None = (tline, tcol)
            else:
                kind, tok, place = "$END", None, None
            while True:
                act = states[state].get(kind)
                if act is None:
                    return _FAILED
                if act.__class__ is int:
                    if tok is None:
                        return _FAILED
                    stack.append(act)
                    values.append(tok)
                    places.append(place)
                    break
                size, origin, cb = act
                if cb is None:  # hands its one child on: value and start stay; only the state changes
                    # (a run of such reductions depends only on the state below, the state and
                    # the token: where it ends is remembered)
                    key = (stack[-2], state, kind)
                    goto = chains.get(key)
                    if goto is None:
                        goto = chains[key] = self._chain(stack[-2], state, kind, end_state)
                    stack[-1] = goto
                    if tok is None and goto == end_state:
                        return values[-1]
                    state = goto
                    continue
                first = None
                if size:
                    children = values[-size:]
                    for p in places[-size:]:
                        if p is not None:
                            first = p
                            break
                    del values[-size:], places[-size:], stack[-size:]
                else:
                    children = []
                d.at = first
                res = cb(children)
                values.append(res)
                places.append((res.line, res.column) if isinstance(res, token) else first)
                goto = states[stack[-1]][origin]
                stack.append(goto)
                if tok is None and goto == end_state:
                    return values[-1]
                state = goto

    def _chain(self, below: int, state: int, kind: str, end_state: int) -> int:
        """The state after every reduction that hands its child on, from ``state`` (above
        ``below``) with the token ``kind`` next: as Lark would go, one reduction at a time."""
        states = self.states
        while True:
            act = states[state].get(kind)
            if act is None or act.__class__ is int or act[2] is not None:
                return state
            state = states[below][act[1]]
            if kind == "$END" and state == end_state:
                return state

    @classmethod
    def of(cls, d: _Direct, table: dict[str, Any]) -> _Loop | None:
        try:
            return cls(d, table)
        except (AttributeError, TypeError, KeyError, ValueError, IndexError, re.error):
            return None


def _hands_on(d: _Direct, cb: Any, marker: object) -> bool:
    """Whether the reduction callback ``cb`` of a one-symbol rule gives its child back as it is."""
    saved = d.at, d.error
    try:
        d.at = None
        return bool(cb([marker]) is marker)
    except Exception:  # the callback cannot take the marker: it does more than hand it on
        return False
    finally:
        d.at, d.error = saved
