"""The direct parser: Lark's LALR parser building the AST while it parses (see :mod:`.parser`)."""

from __future__ import annotations

import threading
from typing import Any


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

    A builder method that fails (a bad ``{...}`` in a string) does not stop the
    parse: as with the tree, a syntax error later in the text is reported first; otherwise
    the first such failure is raised when the parse is done.
    """

    def __init__(self, grammar: str, builder: Any, rules: dict[str, Any]) -> None:
        from lark import Lark, Token, Tree

        self.lock = threading.RLock()  # one parse at a time (a string's {...} parses inside one)
        self.starts: dict[int, tuple[tuple[int, int], Any]] = {}
        self.error: Exception | None = None
        self.at: tuple[int, int] | None = None  # where the rule being reduced starts
        inline: dict[str, Any] = {name: self._method(builder, fn) for name, fn in rules.items()}
        inline["__default__"] = lambda data, children, meta: Tree(data, children)
        self.lark = Lark(grammar, parser="lalr", start=["start", "expr"],
                         maybe_placeholders=True, cache=True, transformer=_Namespace(inline))
        # The reduction callbacks Lark made from the transformer, by grammar rule (a Lark
        # internal, checked here: without it, _direct() returns None and the tree is built).
        callbacks = self.lark._callbacks
        if not isinstance(callbacks, dict) or not callbacks:
            raise TypeError("unexpected Lark internals")
        self.loop: _Loop | None = _Loop.of(self, self.lark, dict(callbacks), Token)
        for rule, cb in list(callbacks.items()):
            if not isinstance(rule, str):
                callbacks[rule] = self._positioned(cb, Token)

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



_FAILED = object()  # what _Loop.parse gives back when Lark's own parse must run instead


class _Loop:
    """Lark's LALR parse of a text, without Lark's loop: the same parse table, the same
    contextual lexers (their compiled regular expressions) and the same reduction callbacks,
    driven by one function.

    Lark's loop pays, per token, for a generator, a line counter object and a lookup of the
    lexer, and per reduction for slicing the stack and the position wrapper of :class:`_Direct`.
    Here the start of each value is kept on a stack beside it, and a reduction whose callback
    only hands its single child on (the levels of precedence an operand passes through alone,
    found once by calling each such callback with a marker) is only a jump in the table: the
    child keeps its value and its start, which is what the wrapper made of it.

    Anything this loop does not expect — a character no terminal matches, a token the state
    does not accept, a Lark whose lexer or table looks different — gives ``_FAILED``, and
    :meth:`_Direct.parse` parses again with Lark, which raises the error it always raised.
    """

    def __init__(self, d: _Direct, lark: Any, callbacks: dict[Any, Any], token: Any) -> None:
        from lark.parsers.lalr_analysis import Shift

        frontend = lark.parser
        lexer = frontend.lexer
        if type(lexer).__name__ != "ContextualLexer" or lark.options.postlex is not None \
                or frontend.lexer_conf.callbacks or any(isinstance(k, str) for k in callbacks):
            raise TypeError("unexpected Lark configuration")
        table = frontend.parser.parser.parse_table
        self.token = token
        self.new = getattr(token, "_future_new", token)
        self.start_states: dict[str, int] = dict(table.start_states)
        self.end_states: dict[str, int] = dict(table.end_states)
        self.contextual: dict[int, Any] = lexer.lexers
        self.lexers: dict[int, Any] = {}
        # One expression of every terminal, in the order every state's lexer lists them
        # (Lark sorts them the same way in each), each on its own: see parse().
        import re

        root = lexer.root_lexer
        terms = list(root.terminals)
        self.root = re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terms),
                               frontend.lexer_conf.g_regex_flags)
        # A state that accepts a string terminal and a pattern the string matches in full
        # (Lark then merges the two in that state's lexer) always uses its own lexer.
        merged = [(s.name, r.name) for s in terms if s.pattern.type == "str" for r in terms
                  if r.pattern.type == "re" and re.fullmatch(r.pattern.to_regexp(), s.pattern.value)]
        self.own = {state for state, actions in table.states.items()
                    if any(a in actions and b in actions for a, b in merged)}
        self.ignore = frozenset(root.ignore_types)
        marker = object()
        reductions: dict[Any, tuple[int, str, Any]] = {}
        self.states: dict[int, dict[str, Any]] = {}
        for state, actions in table.states.items():
            row: dict[str, Any] = {}
            for symbol, (action, arg) in actions.items():
                if action is Shift:
                    if not isinstance(arg, int):
                        raise TypeError("unexpected Lark parse table")
                    row[symbol] = arg
                    continue
                if arg not in reductions:
                    cb = callbacks[arg]
                    size = len(arg.expansion)
                    if size == 1 and not arg.expansion[0].is_term and _hands_on(d, cb, marker):
                        cb = None
                    reductions[arg] = (size, arg.origin.name, cb)
                row[symbol] = reductions[arg]
            self.states[state] = row

    def _lexer(self, state: int) -> Any:
        """The regular expression of ``state``'s own lexer (None: not as expected)."""
        basic = self.contextual[state]
        scanner = basic.scanner
        if basic.callback or len(scanner._mres) != 1 or frozenset(basic.ignore_types) != self.ignore:
            return None
        self.lexers[state] = found = scanner._mres[0]
        return found

    def parse(self, d: _Direct, text: str, start: str) -> Any:
        """The value Lark's parse would give, or ``_FAILED``."""
        states, lexers, new, token = self.states, self.lexers, self.new, self.token
        root, ignore, own = self.root.match, self.ignore, self.own
        end_state = self.end_states[start]
        stack: list[int] = [self.start_states[start]]
        values: list[Any] = []
        places: list[Any] = []  # where each value starts (None: not known)
        pos, line, line_start, n = 0, 1, 0, len(text)
        while True:
            state = stack[-1]
            if pos < n:
                # The lexer of all terminals first: its terminals are in the order of every
                # state's lexer, so a terminal the state accepts (or ignores) is what the
                # state's lexer finds too. Otherwise (a '-' before an operand, a name that is
                # dice sides) the state's lexer decides, as Lark's contextual lexer does.
                m = root(text, pos)
                if m is None:
                    return _FAILED
                kind = m.lastgroup or ""  # every alternative is a named group
                if kind not in states[state] and kind not in ignore or state in own:
                    lex = lexers.get(state) or self._lexer(state)
                    if lex is None:
                        return _FAILED
                    m = lex.match(text, pos)
                    if m is None:
                        return _FAILED
                    kind = m.lastgroup or ""
                value = m.group(0)
                at, tline, tcol = pos, line, pos - line_start + 1
                pos += len(value)
                if "\n" in value:
                    line += value.count("\n")
                    line_start = at + value.rindex("\n") + 1
                if kind in ignore:
                    continue
                tok = new(kind, value, at, tline, tcol, line, pos - line_start + 1, pos)
                place = (tline, tcol)
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
                if cb is None:  # hands its one child on: value and start stay
                    stack.pop()
                else:
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

    @classmethod
    def of(cls, d: _Direct, lark: Any, callbacks: dict[Any, Any], token: Any) -> _Loop | None:
        try:
            return cls(d, lark, callbacks, token)
        except (AttributeError, TypeError, KeyError, ValueError):
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
