"""A compiled statement: what statements.py builds and procwriter.py writes as Python."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .source import Src

Line = tuple[Any, ...]  # texts and expression sources, written one after the other


@dataclass
class Stmt:
    """One compiled statement.

    ``kind``: ``do`` (``lines`` of Python), ``if`` (``tests`` and ``blocks``, an ``else`` block
    last when there is one more block than tests), ``while`` / ``repeat`` (``tests[0]`` and
    ``blocks[0]``), ``for`` (``var``, ``seq``, ``tests`` = [where] or [], ``blocks[0]``,
    ``tag``: the loop's number), ``break``, ``call`` (``proc``, ``args``, ``bind``; or ``target`` and ``pfield``),
    ``return`` (``value``), ``ask`` (``lines`` that make a decision pending: the procedure
    pauses after them) or ``end`` (``lines`` ending the game).
    """

    kind: str
    where: Any  # (origin, line, col)
    lines: list[Line] = field(default_factory=list)
    tests: list[Src] = field(default_factory=list)
    blocks: list[list[Stmt]] = field(default_factory=list)
    var: str = ""
    seq: Src | None = None
    tag: int = 0
    proc: str = ""  # "" for a call of a procedure-valued field: ``target`` and ``pfield`` say which
    target: Src | None = None
    pfield: str = ""
    args: list[Src] = field(default_factory=list)
    bind: str | None = None
    value: Src | None = None
    names: list[str] = field(default_factory=list)  # a call's parameter names
    binds: list[str] = field(default_factory=list)  # the locals it sets
    point: int = 0  # the resume point after a pause (set by the writer)

    @property
    def loc(self) -> Any:
        origin, line, col = self.where
        return origin.locate(line, col)
