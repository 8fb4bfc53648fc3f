"""The engine's located diagnostics as LSP diagnostics, and the "did you mean" quick fixes.

A :class:`~interpreter.diagnostics.Loc` is a 1-based point; an editor underlines a range. The
range is the name the message quotes when the text at the point spells it, else the word at
the point, else one character: the exact token the author has to change.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lsprotocol import types as lsp

from ..diagnostics import Diagnostic, shorten
from .symbols import WORD

SOURCE = "ludus"
_QUOTED = re.compile(r"'([^'\n]{1,200})'")
_SUGGESTION = re.compile(r"did you mean '([^'\n]{1,200})'\?")
_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning}


def to_lsp(d: Diagnostic, line_text: Callable[[int], str]) -> lsp.Diagnostic:
    """One diagnostic; ``line_text(n)`` gives line ``n`` (0-based) of its file as the editor has it."""
    line = max(d.loc.line - 1, 0)
    col = max(d.loc.col - 1, 0)
    end = col
    if d.loc.line > 0:
        text = line_text(line)
        end = _token_end(text, col, d.message)
    message = shorten(d.message) + (f" ({shorten(d.hint)})" if d.hint else "")
    data = None
    m = _SUGGESTION.search(d.hint)
    if m is not None:
        data = {"replacement": m.group(1)}
    related = [lsp.DiagnosticRelatedInformation(
        lsp.Location(_uri(loc.file), _point_range(loc.line, loc.col)), shorten(note)) for loc, note in d.notes]
    return lsp.Diagnostic(range=lsp.Range(lsp.Position(line, col), lsp.Position(line, end)), message=message,
                          severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Error), source=SOURCE,
                          data=data, related_information=related or None)


def _token_end(text: str, col: int, message: str) -> int:
    """The end column of what the diagnostic at ``col`` is about."""
    for quoted in _QUOTED.findall(message):
        if text.startswith(quoted, col):
            return col + len(quoted)
    m = WORD.match(text, col)
    if m is not None:
        return m.end()
    return min(col + 1, len(text)) if col < len(text) else col


def _point_range(line: int, col: int) -> lsp.Range:
    p = lsp.Position(max(line - 1, 0), max(col - 1, 0))
    return lsp.Range(p, p)


def _uri(path: str) -> str:
    from pathlib import Path
    try:
        return Path(path).resolve().as_uri()
    except ValueError:  # not an absolute path ('<input>'): no place to point at
        return path


def quick_fixes(uri: str, diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """A "did you mean" diagnostic's fix: write the suggestion in place of the range."""
    actions = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else None
        replacement = data.get("replacement") if data else None
        if not isinstance(replacement, str) or d.range.start == d.range.end:
            continue
        edit = lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(d.range, replacement)]})
        actions.append(lsp.CodeAction(title=f"Change to '{replacement}'", kind=lsp.CodeActionKind.QuickFix,
                                      diagnostics=[d], edit=edit, is_preferred=True))
    return actions
