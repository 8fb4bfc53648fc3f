"""Parsed rules texts remembered for the load cache: :class:`AstMemo` and :func:`memoized`."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import astdata


class AstMemo:
    """Parsed texts by (what, text): filled while a ruleset is parsed, replayed on a warm load.

    Entries are kept as JSON text (:mod:`interpreter.dsl.astdata`), so every lookup returns
    fresh nodes that no later stage can have changed, and the whole memo can be written to
    the load cache as plain data. An entry that does not read back is a miss: the text is
    parsed again.
    """

    def __init__(self, entries: dict[tuple, str] | None = None) -> None:
        self.entries: dict[tuple, str] = entries if entries is not None else {}
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple) -> Any:
        text = self.entries.get(key)
        if text is not None:
            try:
                found = astdata.decode(text)
            except astdata.Unreadable:
                found = None
            if found is not None:
                self.hits += 1
                return found
        self.misses += 1
        return None

    def put(self, key: tuple, value: Any) -> None:
        try:
            self.entries[key] = astdata.encode(value)
        except (TypeError, ValueError):  # no plain form (or a number too long to write): not kept
            self.entries.pop(key, None)


_MEMO: contextvars.ContextVar[AstMemo | None] = contextvars.ContextVar("ludus_ast_memo", default=None)


@contextmanager
def memoized(memo: AstMemo | None) -> Iterator[AstMemo | None]:
    """Within the block, parse_block/parse_expr/parse_template look texts up in ``memo`` first."""
    token = _MEMO.set(memo)
    try:
        yield memo
    finally:
        _MEMO.reset(token)


def _memo_get(key: tuple) -> tuple[AstMemo | None, Any]:
    memo = _MEMO.get()
    return memo, (memo.get(key) if memo is not None else None)
