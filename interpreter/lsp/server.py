"""The language server: pygls wiring of checks, symbols, completion and fixes to the protocol.

An open or changed file marks the rulesets that read it (its own, and any overlay checked
before that reads it) to be checked again; the checks run once the editor pauses
(:data:`DEBOUNCE_SECONDS`), or at once when a request needs fresh answers. A check's
diagnostics are published to each file they point into — a base ruleset's file too, when an
overlay's check found the problem there — and every file that had some and now has none is
cleared. Nothing an author types can stop the server: a check that fails in any way is a
diagnostic.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..diagnostics import Loc
from ..yamlsource import MAX_FILE_BYTES
from .complete import complete
from .convert import quick_fixes, to_lsp
from .rulesets import RulesetChecks, manifest_for
from .symbols import Definition, SymbolIndex, references, word_at

log = logging.getLogger(__name__)
DEBOUNCE_SECONDS = 0.02  # a burst of keystrokes is checked once, after its last change
_ITEM_KINDS = {
    "field": lsp.CompletionItemKind.Field, "local": lsp.CompletionItemKind.Variable,
    "keyword": lsp.CompletionItemKind.Keyword, "builtin": lsp.CompletionItemKind.Function,
    "function": lsp.CompletionItemKind.Function, "procedure": lsp.CompletionItemKind.Method,
    "action": lsp.CompletionItemKind.Event, "kind": lsp.CompletionItemKind.Class,
    "entity": lsp.CompletionItemKind.Constant, "global": lsp.CompletionItemKind.Variable,
    "table": lsp.CompletionItemKind.Struct, "zone": lsp.CompletionItemKind.Module,
    "enumeration": lsp.CompletionItemKind.Enum, "constant": lsp.CompletionItemKind.Constant,
    "modifier point": lsp.CompletionItemKind.Property,
}


def path_of(uri: str) -> Path | None:
    """The file a ``file:`` URI names (None for any other scheme: untitled buffers, ...)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    try:
        return Path(unquote(parsed.path)).resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def uri_of(file: str) -> str:
    return Path(file).as_uri() if Path(file).is_absolute() else file


def _line_of(lines: list[str]) -> Callable[[int], str]:
    return lambda n: lines[n] if n < len(lines) else ""


class LudusServer(LanguageServer):
    """The server's state: the checks, one symbol index per ruleset, what was published where."""

    def __init__(self) -> None:
        super().__init__("ludus", __version__)
        self.checks = RulesetChecks()
        self.indexes: dict[Path, SymbolIndex] = {}
        self.dirty: set[Path] = set()
        self.published: dict[Path, dict[str, list[lsp.Diagnostic]]] = {}  # manifest -> uri -> diagnostics
        self._timer: asyncio.TimerHandle | None = None
        self.with_setups: set[Path] = set()  # rulesets whose next check covers their set-ups

    # ------------------------------------------------------------------ texts
    def unsaved(self) -> dict[str, str]:
        """The text of every open file, by path: what the checks read instead of the disk."""
        out = {}
        for uri, doc in self.workspace.text_documents.items():
            path = path_of(uri)
            if path is not None:
                out[str(path)] = doc.source
        return out

    def text_of(self, path: Path) -> str:
        """A file as the editor has it, else as on disk ('' if it cannot be read)."""
        doc = self.workspace.text_documents.get(path.as_uri())
        if doc is not None:
            return doc.source
        try:
            with path.open("rb") as f:
                return f.read(MAX_FILE_BYTES).decode("utf-8", "replace")
        except OSError:
            return ""

    # ------------------------------------------------------------------ checks
    def touched(self, uri: str, setups: bool = False) -> None:
        """A file was opened or changed: check the rulesets that read it, once the editor pauses.

        ``setups`` (on open and save, not on every keystroke: each set-up is one more check):
        check the rulesets' named set-ups too.
        """
        path = path_of(uri)
        if path is None:
            return
        manifests = self.checks.manifests_reading(path)
        self.dirty.update(manifests)
        if setups:
            self.with_setups.update(manifests)
        if self._timer is not None:
            self._timer.cancel()
        try:
            self._timer = asyncio.get_running_loop().call_later(DEBOUNCE_SECONDS, self.flush)
        except RuntimeError:  # no loop (called outside the server): check now
            self.flush()

    def flush(self) -> None:
        """Check every ruleset marked, and publish what changed."""
        self._timer = None
        dirty, self.dirty = self.dirty, set()
        setups, self.with_setups = self.with_setups & dirty, self.with_setups - dirty
        unsaved = self.unsaved() if dirty else {}
        for manifest in sorted(dirty):
            try:
                start = time.perf_counter()
                checked = self.checks.check(manifest, unsaved, setups=manifest in setups)
                good = self.checks.last_good.get(manifest)
                self.indexes[manifest] = SymbolIndex(checked, good.ruleset if good else None)
                self.publish(manifest, checked.diagnostics)
                # the editor's log of the server (its output panel): what was checked, how fast
                self.window_log_message(lsp.LogMessageParams(
                    lsp.MessageType.Log, f"checked {manifest.parent.name}: {len(checked.diagnostics)} "
                    f"diagnostic(s) in {(time.perf_counter() - start) * 1000:.0f} ms"))
            except Exception:  # never let one ruleset's trouble stop the server
                log.exception("checking %s failed", manifest)

    def publish(self, manifest: Path, diagnostics: list) -> None:
        by_uri: dict[str, list[lsp.Diagnostic]] = {}
        lines: dict[str, list[str]] = {}
        for d in diagnostics:
            loc = d.loc if Path(d.loc.file).is_absolute() else Loc(str(manifest), 1, 1)
            if loc is not d.loc:
                d = type(d)(loc, f"{d.message} ({d.loc.file})" if d.loc.file else d.message, d.hint, d.severity)
            if loc.file not in lines:
                lines[loc.file] = self.text_of(Path(loc.file)).split("\n")
            by_uri.setdefault(uri_of(loc.file), []).append(to_lsp(d, _line_of(lines[loc.file])))
        before = self.published.get(manifest, {})
        self.published[manifest] = by_uri
        read = {f.as_uri() for f in self.checks.reads.get(manifest, ())}
        opened = read & set(self.workspace.text_documents)  # an open file hears that it is clean
        for uri in sorted(set(before) | set(by_uri) | opened):
            merged: dict[tuple, lsp.Diagnostic] = {}
            for per_uri in self.published.values():
                for diag in per_uri.get(uri, []):
                    merged.setdefault((diag.range.start.line, diag.range.start.character, diag.message), diag)
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=list(merged.values())))

    def index_for(self, uri: str) -> tuple[Path, SymbolIndex] | None:
        """The file's own ruleset's symbols (checked now if the editor changed something since)."""
        path = path_of(uri)
        manifest = manifest_for(path) if path is not None else None
        if path is None or manifest is None:
            return None
        if self.dirty or manifest not in self.indexes:
            self.dirty.add(manifest)
            self.flush()
        index = self.indexes.get(manifest)
        return (path, index) if index is not None else None

    # ------------------------------------------------------------------ symbols at a position
    def symbol_at(self, uri: str, pos: lsp.Position) -> tuple[SymbolIndex, list[Definition], lsp.Range] | None:
        found = self.index_for(uri)
        if found is None:
            return None
        path, index = found
        lines = self.text_of(path).split("\n")
        line = lines[pos.line] if pos.line < len(lines) else ""
        span = word_at(line, pos.character)
        if span is None:
            return None
        name = line[span[0]:span[1]]
        rng = lsp.Range(lsp.Position(pos.line, span[0]), lsp.Position(pos.line, span[1]))
        if span[0] > 0 and line[span[0] - 1] == ".":  # a field: of the kind of what is before the dot
            return index, self._field_defs(index, path, lines, pos.line, line[:span[0] - 1], name), rng
        defs = list(index.defs.get(name, []))
        if not defs:
            defs = index.fields.get(name, [])
        return index, defs, rng

    def _field_defs(self, index: SymbolIndex, path: Path, lines: list[str], line_no: int, before: str,
                    name: str) -> list[Definition]:
        from .complete import resolve
        every = index.fields.get(name, [])
        m = re.search(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$", before)
        if m is None:
            return every
        entry_text, params = self.entry_context(index, path, lines, line_no, len(before))
        t = resolve(index, m.group(1), entry_text, params)
        kind = t.arg if t is not None and t.tag == "ent" else None
        owned = [d for d in every if d.owner == kind]
        return owned or every

    def entry_context(self, index: SymbolIndex, path: Path, lines: list[str], line_no: int,
                      col: int) -> tuple[str, dict]:
        """The text of the entry holding a position, up to it, and the parameters it sees."""
        entry = index.entry_at(str(path), line_no + 1)
        if entry is None:
            return lines[line_no][:col] if line_no < len(lines) else "", {}
        start = max(entry.loc.line - 1, 0)
        text = "\n".join(lines[start:line_no] + [lines[line_no][:col] if line_no < len(lines) else ""])
        return text, index.params_of(entry)


SERVER = LudusServer()


@SERVER.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LudusServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.touched(params.text_document.uri, setups=True)


@SERVER.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LudusServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.touched(params.text_document.uri)


@SERVER.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: LudusServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.touched(params.text_document.uri, setups=True)


@SERVER.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: LudusServer, params: lsp.DidCloseTextDocumentParams) -> None:
    ls.touched(params.text_document.uri)  # now read from the disk again


@SERVER.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: LudusServer, params: lsp.HoverParams) -> lsp.Hover | None:
    found = ls.symbol_at(params.text_document.uri, params.position)
    if found is None or not found[1]:
        return None
    index, defs, rng = found
    text = "\n\n---\n\n".join(index.describe(d) for d in defs[:6])
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text), range=rng)


def _location(d: Definition) -> lsp.Location:
    p = lsp.Position(max(d.loc.line - 1, 0), max(d.loc.col - 1, 0))
    return lsp.Location(uri_of(d.loc.file), lsp.Range(p, lsp.Position(p.line, p.character + len(d.name))))


@SERVER.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LudusServer, params: lsp.DefinitionParams) -> list[lsp.Location] | None:
    found = ls.symbol_at(params.text_document.uri, params.position)
    if found is None or not found[1]:
        return None
    return [_location(d) for d in found[1]]


@SERVER.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def find_references(ls: LudusServer, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
    found = ls.symbol_at(params.text_document.uri, params.position)
    path = path_of(params.text_document.uri)
    if found is None or not found[1] or path is None:
        return None
    index, defs, _rng = found
    manifest = manifest_for(path)
    files = ls.checks.reads.get(manifest, {path}) if manifest is not None else {path}
    texts = {str(f): ls.text_of(f) for f in sorted(files)}
    is_field = {d.section == "fields" for d in defs}
    field = None if len(is_field) > 1 else is_field.pop()
    name = defs[0].name
    out = [lsp.Location(uri_of(f), lsp.Range(lsp.Position(line, col), lsp.Position(line, col + len(name))))
           for f, line, col in references(name, texts, field)]
    if field and params.context.include_declaration:
        out += [_location(d) for d in defs]
    return out


@SERVER.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["."]))
def completion(ls: LudusServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    found = ls.index_for(params.text_document.uri)
    if found is None:
        return None
    path, index = found
    lines = ls.text_of(path).split("\n")
    line_no, col = params.position.line, params.position.character
    before = lines[line_no][:col] if line_no < len(lines) else ""
    entry_text, entry_params = ls.entry_context(index, path, lines, line_no, col)
    items = [lsp.CompletionItem(label=i.label, kind=_ITEM_KINDS.get(i.what), detail=i.detail or i.what)
             for i in complete(index, before, entry_text, entry_params)]
    return lsp.CompletionList(is_incomplete=False, items=items)


@SERVER.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def code_action(ls: LudusServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    return quick_fixes(params.text_document.uri, list(params.context.diagnostics))


def serve() -> None:
    """Run the server over stdin/stdout until the editor says exit."""
    logging.basicConfig(level=logging.WARNING, format="ludus lsp: %(levelname)s: %(message)s")
    SERVER.start_io()
