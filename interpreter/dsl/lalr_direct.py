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

