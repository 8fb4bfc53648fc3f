"""A small LSP client for the tests and the docs' recording: `ludus lsp` in a subprocess, over stdio.

Uses pygls' own client, so every message is a real LSP message; diagnostics the server
publishes are kept by URI with the time they arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient


class Session:
    """One server process, one client, and the diagnostics published so far."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = LanguageClient("ludus-tests", "1")
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.arrivals: list[tuple[float, str]] = []
        self.versions: dict[str, int] = {}
        self.published = asyncio.Event()
        self.logs: list[str] = []

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _published(params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)
            self.arrivals.append((time.perf_counter(), params.uri))
            self.published.set()

        @self.client.feature(lsp.WINDOW_LOG_MESSAGE)
        def _logged(params: lsp.LogMessageParams) -> None:
            self.logs.append(params.message)

    async def start(self, *env_args: str) -> None:
        await self.client.start_io(sys.executable, "-m", "interpreter", "lsp", *env_args)
        await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=self.root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(self.root.as_uri(), "root")]))
        self.client.initialized(lsp.InitializedParams())

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.published.clear()
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
            uri=uri, language_id="yaml", version=1, text=path.read_text() if text is None else text)))
        return uri

    def replace_all(self, path: Path, text: str) -> None:
        uri = path.as_uri()
        self.versions[uri] += 1
        self.published.clear()
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)]))

    def edit(self, path: Path, line: int, col: int, end_col: int, new: str) -> None:
        """Replace columns col..end_col of one line (0-based), as an editor sends a keystroke."""
        uri = path.as_uri()
        self.versions[uri] += 1
        self.published.clear()
        rng = lsp.Range(lsp.Position(line, col), lsp.Position(line, end_col))
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [lsp.TextDocumentContentChangePartial(range=rng, text=new)]))

    async def wait_for(self, predicate: Any, timeout: float = 30.0) -> None:
        """Wait until ``predicate()`` holds, checking after every publication."""
        deadline = time.perf_counter() + timeout
        while not predicate():
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no such diagnostics within {timeout} s: {self.diagnostics}")
            self.published.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.published.wait(), left)

    async def hover(self, path: Path, line: int, col: int) -> lsp.Hover | None:
        return await self.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(line, col)))

    async def definition(self, path: Path, line: int, col: int) -> Any:
        return await self.client.text_document_definition_async(lsp.DefinitionParams(
            lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(line, col)))

    async def references(self, path: Path, line: int, col: int) -> Any:
        return await self.client.text_document_references_async(lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=path.as_uri()), position=lsp.Position(line=line, character=col),
            context=lsp.ReferenceContext(include_declaration=True)))

    async def complete(self, path: Path, line: int, col: int) -> list[lsp.CompletionItem]:
        result = await self.client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(line, col)))
        if result is None:
            return []
        return list(result.items if isinstance(result, lsp.CompletionList) else result)

    async def code_actions(self, path: Path, diagnostics: list[lsp.Diagnostic]) -> Any:
        rng = diagnostics[0].range
        return await self.client.text_document_code_action_async(lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(path.as_uri()), rng, lsp.CodeActionContext(diagnostics)))


def find(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """The 0-based (line, column) of the nth occurrence of ``needle`` in ``text``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at)
    return line, at - (text.rfind("\n", 0, at) + 1)
