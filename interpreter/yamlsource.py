"""YAML reading that remembers where every value came from.

ruamel.yaml's round-trip loader keeps line/column data on every mapping and
sequence. We convert the tree to plain Python data (fast to work with, trivially
JSON-able) and keep the positions in a side table keyed by the value's path, so
that any later stage (schema, cross-references, the rules-language compiler,
even a runtime error) can point back into the author's file.

:func:`load_yaml` and :func:`load_yaml_text` read a file with the fast reader
(:mod:`interpreter.yamlfast`) and fall back on the round-trip loader, here; the
positions' types, the limits and the wording both readers share are in
:mod:`interpreter.yamlcommon` (and importable from here).
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from .diagnostics import Loc, LudusError, error
from .yamlcommon import (
    FULL_READER_BYTES,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_INT_DIGITS,
    CharPlaces,
    PathKey,
    SourceMap,
    TextOrigin,
    _alias,
    _anchor,
    _block_indent,
    _folded_chars,
    _inline_chars,
    _mark,
    _Refused,
    _too_deep,
    _too_long,
    _yaml_error,
)
from .yamlcommon import _inline_places as _inline_places
from .yamlfast import _INT, _read_fast
from .yamlfast import _fast as _fast

if TYPE_CHECKING:
    from ruamel.yaml import YAML

__all__ = ["FULL_READER_BYTES", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_INT_DIGITS", "CharPlaces", "PathKey",
           "SourceMap", "TextOrigin", "load_yaml", "load_yaml_text", "has_unsaved", "unsaved_bytes", "unsaved_texts"]


# Texts an editor holds and has not saved, by resolved path: read instead of the file's bytes.
_UNSAVED: contextvars.ContextVar[Mapping[str, bytes] | None] = contextvars.ContextVar("ludus_unsaved", default=None)


@contextmanager
def unsaved_texts(texts: Mapping[str, str]) -> Iterator[None]:
    """Within the block, :func:`load_yaml` reads these texts (by file path) instead of the files.

    For an editor (the language server): a file open in it is checked as it reads there. Only
    what a load reads anyway is replaced — which files a ruleset may read, and every limit on
    their size, are decided exactly as without it (see docs/security.md).
    """
    resolved = {_resolved(path): text.encode("utf-8") for path, text in texts.items()}
    token = _UNSAVED.set(resolved)
    try:
        yield
    finally:
        _UNSAVED.reset(token)


def _resolved(path: Path | str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError, ValueError):
        return str(path)


def has_unsaved() -> bool:
    """Whether a :func:`unsaved_texts` block is active (then no load may use or fill the load cache)."""
    return bool(_UNSAVED.get())


def unsaved_bytes(path: Path | str) -> bytes | None:
    """The unsaved text of ``path`` as UTF-8 bytes, if an editor gave one (:func:`unsaved_texts`)."""
    texts = _UNSAVED.get()
    return None if not texts else texts.get(_resolved(path))


_RUAMEL: Any = None


def _ruamel() -> Any:
    """ruamel.yaml's classes, imported when YAML is first read (a load from the cache reads none)."""
    global _RUAMEL
    if _RUAMEL is None:
        from ruamel.yaml import YAML
        from ruamel.yaml.comments import CommentedMap, CommentedSeq
        from ruamel.yaml.error import MarkedYAMLError
        from ruamel.yaml.parser import Parser
        from ruamel.yaml.scalarstring import (
            DoubleQuotedScalarString,
            FoldedScalarString,
            LiteralScalarString,
            SingleQuotedScalarString,
        )
        from ruamel.yaml.scanner import Scanner
        _RUAMEL = SimpleNamespace(
            YAML=YAML, Scanner=Scanner, Parser=Parser, CommentedMap=CommentedMap, CommentedSeq=CommentedSeq,
            MarkedYAMLError=MarkedYAMLError,
            DoubleQuotedScalarString=DoubleQuotedScalarString, FoldedScalarString=FoldedScalarString,
            LiteralScalarString=LiteralScalarString, SingleQuotedScalarString=SingleQuotedScalarString,
            Containers=(CommentedMap, CommentedSeq), Quoted=(DoubleQuotedScalarString, SingleQuotedScalarString),
            GuardedComposer=None)
    return _RUAMEL


def _yaml() -> YAML:
    R = _ruamel()
    y = R.YAML(typ="rt")
    # The round-trip constructor (positions, quoting and block styles) on the plain scanner and
    # parser: they skip comments instead of collecting them for a dump we never make, which
    # saves a fifth of the reading time; the data, positions and errors are the same.
    y.Scanner = R.Scanner
    y.Parser = R.Parser
    y.Composer = _guarded_composer()
    y.preserve_quotes = True
    y.allow_duplicate_keys = False
    return y


def _guarded_composer() -> type:
    """ruamel's composer, refusing what could make a small file cost unbounded time or memory.

    It meets every node before it is built, in file order: an alias or an anchor, a mapping or
    list nested more than :data:`MAX_DEPTH` deep (before ruamel's own recursion goes deeper),
    an integer written with more than :data:`MAX_INT_DIGITS` characters (before it is converted).
    The fast reader refuses the same things at the same places with the same words.
    """
    R = _ruamel()
    if R.GuardedComposer is None:
        from ruamel.yaml.composer import Composer
        from ruamel.yaml.events import AliasEvent, CollectionStartEvent
        from ruamel.yaml.nodes import ScalarNode

        class GuardedComposer(Composer):
            def compose_node(self, parent: Any, index: Any) -> Any:
                ev = self.parser.peek_event()
                if isinstance(ev, AliasEvent):
                    raise _alias(ev.anchor, ev.start_mark)
                if ev.anchor is not None:
                    raise _anchor(ev.anchor, ev.start_mark)
                if isinstance(ev, CollectionStartEvent) and self.depth >= MAX_DEPTH:
                    raise _too_deep(ev.start_mark)
                node = super().compose_node(parent, index)
                if isinstance(node, ScalarNode) and len(node.value) > MAX_INT_DIGITS \
                        and str(getattr(node.tag, "value", node.tag)) == _INT:
                    raise _too_long(node.value, node.start_mark)
                return node

        R.GuardedComposer = GuardedComposer
    return R.GuardedComposer


def load_yaml(path: Path | str, root: PathKey = (), missing_hint: str = "check the path",
              reads: dict[str, str] | None = None) -> tuple[Any, SourceMap]:
    """Load one YAML file into plain data and a :class:`SourceMap` rooted at ``root``.

    ``reads``, when given, records the SHA-256 of the bytes that were parsed, by path
    (the load cache checks them to know a cached result is still current). A file larger
    than :data:`MAX_FILE_BYTES` is refused before it is parsed.
    """
    p = Path(path)
    unsaved = unsaved_bytes(p)
    try:
        if unsaved is not None:
            raw = unsaved
        else:
            with p.open("rb") as f:
                raw = f.read(MAX_FILE_BYTES + 1)  # never more: a device or a growing file cannot flood memory
        if len(raw) > MAX_FILE_BYTES:
            raise _too_big(str(p))
        # the same text read_text() gives: UTF-8 with universal newlines
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except FileNotFoundError:
        raise error(Loc(str(p)), "file not found", missing_hint) from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(str(p), raw, exc) from None
    except OSError as exc:
        raise error(Loc(str(p)), f"cannot read file: {exc}") from None
    if reads is not None:
        reads[str(p)] = hashlib.sha256(raw).hexdigest()
    return load_yaml_text(text, str(p), root)


def _not_utf8(filename: str, raw: bytes, exc: UnicodeDecodeError) -> LudusError:
    """The place of the first byte that is not UTF-8 (the text before it decodes)."""
    before = raw[:exc.start].decode("utf-8", "replace")
    line = before.count("\n") + 1
    col = len(before) - (before.rfind("\n") + 1) + 1
    return error(Loc(filename, line, col), f"not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot be read",
                 "save the file as UTF-8")


def _too_big(filename: str) -> LudusError:
    return error(Loc(filename, 1, 1), f"file too large: more than {MAX_FILE_BYTES:,} bytes",
                 "a YAML file may hold at most 1 MiB; split it into several files")


def load_yaml_text(text: str, filename: str, root: PathKey = (), *, fast: bool = True) -> tuple[Any, SourceMap]:
    """Parse YAML ``text`` (named ``filename`` in messages).

    The fast reader (ruamel's C parser, see :func:`_read_fast`) reads the plain YAML rule files
    are made of; whatever it leaves aside (errors, anchors, tags, unusual scalars) is read by
    ruamel's round-trip loader, which also words every error. Both give the same data and the
    same :class:`SourceMap`; ``fast=False`` uses the round-trip loader alone.

    Anchors and aliases, nesting deeper than :data:`MAX_DEPTH` and integers longer than
    :data:`MAX_INT_DIGITS` are refused, in the same words by either reader. In a text longer
    than :data:`FULL_READER_BYTES`, a syntax error is worded by the C parser instead (at the
    same place, in slightly other words), so that it costs no second reading in pure Python.
    """
    if len(text) > MAX_FILE_BYTES:
        raise _too_big(filename)
    try:
        done = _read_fast(text, filename, root, refuse=True) if fast else None
        if done is not None:
            return done
        doc = _yaml().load(text)
    except _Refused as exc:
        raise error(_mark(exc.mark, filename), exc.message, exc.hint) from None
    except LudusError:
        raise
    except _ruamel().MarkedYAMLError as exc:
        raise _yaml_error(exc, filename, text) from None
    except Exception as exc:  # ruamel raises a few unmarked errors too
        raise error(Loc(filename, 1, 1), f"YAML syntax: {exc}") from None
    lines = text.splitlines()
    smap = SourceMap()
    smap.values[root] = Loc(filename, 1, 1)
    data = _convert(doc, root, smap, filename, lines)
    return data, smap


def _note_scalar(value: Any, path: PathKey, line0: int, col0: int, smap: SourceMap, filename: str,
                 lines: list[str]) -> None:
    R = _ruamel()
    loc = Loc(filename, line0 + 1, col0 + 1)
    smap.values[path] = loc
    if isinstance(value, R.FoldedScalarString):
        indent = _block_indent(lines, line0, col0)
        smap.texts[path] = TextOrigin(Loc(filename, line0 + 2, indent), block=False, folded=True,
                                      chars=CharPlaces.of(_folded_chars(lines, line0 + 1, indent)))
    elif isinstance(value, R.LiteralScalarString):
        smap.texts[path] = TextOrigin(Loc(filename, line0 + 2, _block_indent(lines, line0, col0)), block=True)
    elif isinstance(value, R.Quoted):
        quote = '"' if isinstance(value, R.DoubleQuotedScalarString) else "'"
        chars = _inline_chars(str(value), lines, line0, col0, quote)
        smap.texts[path] = TextOrigin(Loc(filename, line0 + 1, col0 + 2), block=False, chars=CharPlaces.of(chars))
    elif isinstance(value, str):
        chars = _inline_chars(str(value), lines, line0, col0, "")
        smap.texts[path] = TextOrigin(loc, block=False, chars=CharPlaces.of(chars))


def _convert(node: Any, path: PathKey, smap: SourceMap, filename: str, lines: list[str]) -> Any:
    R = _ruamel()
    if isinstance(node, R.CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            k = str(key) if not isinstance(key, bool) else ("true" if key else "false")
            kpath = path + (k,)
            try:
                kl, kc = node.lc.key(key)
                smap.keys[kpath] = Loc(filename, kl + 1, kc + 1)
                vl, vc = node.lc.value(key)
            except (KeyError, TypeError, AttributeError):
                vl, vc = (node.lc.line, node.lc.col)
            if isinstance(value, R.Containers):
                smap.values[kpath] = Loc(filename, value.lc.line + 1, value.lc.col + 1)
            elif value is None and kpath in smap.keys:
                smap.values[kpath] = smap.keys[kpath]  # 'key:' with nothing after it
            else:
                _note_scalar(value, kpath, vl, vc, smap, filename, lines)
            out[k] = _convert(value, kpath, smap, filename, lines)
        return out
    if isinstance(node, R.CommentedSeq):
        items: list[Any] = []
        for i, value in enumerate(node):
            ipath = path + (i,)
            try:
                il, ic = node.lc.item(i)
            except (KeyError, TypeError, AttributeError):
                il, ic = (node.lc.line, node.lc.col)
            if isinstance(value, R.Containers):
                smap.values[ipath] = Loc(filename, value.lc.line + 1, value.lc.col + 1)
            else:
                _note_scalar(value, ipath, il, ic, smap, filename, lines)
            items.append(_convert(value, ipath, smap, filename, lines))
        return items
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return str(node)


