"""Located diagnostics: every error an author can cause points into their own file.

A :class:`Loc` is a position in a source file (1-based line and column, as editors
show them). A :class:`Diagnostic` is one message at one location; a
:class:`LudusError` carries one or more diagnostics and is the only exception the
CLI turns into output (compiler style, exit code 1, never a traceback).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Loc:
    """A 1-based position in a file."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        path = _display_path(self.file)
        if self.line <= 0:
            return path
        return f"{path}:{self.line}:{self.col}"

    def shifted(self, dline: int, col: int | None = None) -> Loc:
        """Return a location ``dline`` lines further down, optionally at column ``col``."""
        return Loc(self.file, self.line + dline, self.col if col is None else col)


def _display_path(path: str) -> str:
    if not path or path.startswith("<"):
        return path or "<input>"
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


QUOTE_MAX = 80  # characters of a quoted name or value shown in a message
MESSAGE_MAX = 1000  # characters of one message or hint
_LONG_QUOTE = re.compile("'([^'\n]{" + str(QUOTE_MAX + 1) + ",})'")
_CONTROL = {c: repr(chr(c))[1:-1] for c in (*range(32), 127)}


def shorten(text: str) -> str:
    """Keep a message that quotes hostile input to one readable line.

    An author's mistake may be a name of a million characters, or one ending in a newline;
    control characters are escaped (``\\n``), and a long quoted part keeps its start and says
    its length.
    """
    if not text.isprintable():  # one message, one line: a name may carry a newline or a NUL
        text = text.translate(_CONTROL)
    if len(text) <= QUOTE_MAX:
        return text
    text = _LONG_QUOTE.sub(lambda m: f"'{m.group(1)[:QUOTE_MAX - 20]}…' ({len(m.group(1)):,} characters)", text)
    if len(text) > MESSAGE_MAX:
        text = f"{text[:MESSAGE_MAX - 40]}… ({len(text):,} characters in all)"
    return text


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One error or warning at one place."""

    loc: Loc
    message: str
    hint: str = ""
    severity: str = "error"
    # Lines printed under it, each at its own place: for a rule failing while it runs, the
    # calls of rule procedures and functions it happened in, innermost first.
    notes: tuple[tuple[Loc, str], ...] = ()

    def __str__(self) -> str:
        text = f"{self.loc}: {self.severity}: {shorten(self.message)}"
        if self.hint:
            text += f" ({shorten(self.hint)})"
        for loc, note in self.notes:
            text += f"\n{loc}: note: {shorten(note)}"
        return text


@dataclass
class LudusError(Exception):
    """One or more located problems; raised by loading, checking, running and the CLI."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(str(d) for d in sorted_diagnostics(self.diagnostics))

    def __str__(self) -> str:
        return self.render()


def error(loc: Loc, message: str, hint: str = "") -> LudusError:
    """Build a single-diagnostic error."""
    return LudusError([Diagnostic(loc, message, hint)])


def sorted_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sort by file, line, column; drop exact duplicates."""
    seen: set[Diagnostic] = set()
    out: list[Diagnostic] = []
    for d in sorted(diags, key=lambda d: (d.loc.file, d.loc.line, d.loc.col, d.message)):
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """A hint naming the closest candidate, or '' when nothing is close."""
    close = difflib.get_close_matches(str(name).lower(), sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""
