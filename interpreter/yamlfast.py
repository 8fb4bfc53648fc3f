"""The fast YAML reader: plain data and positions from the events of ruamel.yaml.clib's C parser.

It reads the plain YAML rule files are made of, with the same data and the same
:class:`~interpreter.yamlcommon.SourceMap` as the round-trip loader; whatever it leaves aside
(errors, anchors, tags, unusual scalars) is read by that loader (see
:func:`interpreter.yamlsource.load_yaml_text`).
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from .diagnostics import Loc
from .yamlcommon import (
    FULL_READER_BYTES,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    CharPlaces,
    PathKey,
    SourceMap,
    TextOrigin,
    _alias,
    _anchor,
    _block_indent,
    _folded_chars,
    _inline_places,
    _Refused,
    _too_deep,
    _too_long,
    _yaml_error,
)


class _Unsupported(Exception):
    """The fast reader met something it leaves to the round-trip loader."""


_FAST: Any = None  # the C parser and what goes with it; False when ruamel.yaml.clib is missing
_STR, _NULL, _BOOL, _INT = ("tag:yaml.org,2002:" + t for t in ("str", "null", "bool", "int"))
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_KEY_INT = re.compile(r"(?:0|[1-9][0-9]*)\Z")
_NOT_PLAIN = object()  # a plain scalar the fast reader does not construct itself
_TOO_LONG = object()  # an integer longer than MAX_INT_DIGITS


def _fast() -> Any:
    """ruamel.yaml.clib's parser, event classes and a YAML 1.2 resolver; False when not installed."""
    global _FAST
    if _FAST is None:
        try:
            from _ruamel_yaml import CParser
        except ImportError:  # an optional speed-up: without it every file takes the full reader
            _FAST = False
            return _FAST
        from ruamel.yaml import events as E
        from ruamel.yaml.nodes import ScalarNode
        from ruamel.yaml.resolver import VersionedResolver

        resolver = VersionedResolver()
        _FAST = SimpleNamespace(
            CParser=CParser, Alias=E.AliasEvent, Scalar=E.ScalarEvent, MapStart=E.MappingStartEvent, MapEnd=E.MappingEndEvent,
            SeqStart=E.SequenceStartEvent, SeqEnd=E.SequenceEndEvent, DocStart=E.DocumentStartEvent,
            DocEnd=E.DocumentEndEvent, StreamEnd=E.StreamEndEvent, StreamStart=E.StreamStartEvent,
            resolve=lambda value: str(getattr(t := resolver.resolve(ScalarNode, value, (True, False)), "value", t)),
            plain={})
    return _FAST


def _plain_value(F: Any, value: str) -> Any:
    """What the round-trip loader makes of a plain (unquoted) scalar, or ``_NOT_PLAIN``.

    The same YAML 1.2 resolver decides the type; only text, null, booleans and decimal
    integers are constructed here (floats, dates, octal or hex numbers go the full way).
    """
    tag = F.resolve(value)
    if tag == _STR:
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return value in ("true", "True", "TRUE")
    if tag == _INT and len(value) > MAX_INT_DIGITS:
        return _TOO_LONG
    if tag == _INT and _DECIMAL.match(value):
        return int(value)
    return _NOT_PLAIN


def _read_fast(text: str, filename: str, root: PathKey, *, refuse: bool = False) -> tuple[Any, SourceMap] | None:
    """Read ``text`` with the C parser: the same data and positions as the round-trip loader.

    Returns None — and the caller uses the round-trip loader — when the C parser is not
    installed, when the text has an error (so every message keeps its wording and place), or
    when it uses something read here only approximately: anchors and aliases, tags, directives,
    several documents, a key that is not a scalar or that appears twice, a value whose type
    the resolver says is not text, null, a boolean or a decimal integer. With ``refuse``, what
    the guarded composer refuses (anchors, aliases, deep nesting, long integers) is refused
    here instead (``_Refused``), at the same place in the same words, without a second reading
    of the file in pure Python (which costs ten times as much).
    """
    F = _fast()
    if not F:
        return None
    smap = SourceMap()
    try:
        data = _FastReader(F, text, filename, smap).document(root)
    except _Refused:
        if refuse:
            raise
        return None
    except Exception as exc:  # _Unsupported, or any error of the C parser: the full reader decides
        if refuse and len(text) > FULL_READER_BYTES and getattr(exc, "problem_mark", None) is not None:
            raise _yaml_error(exc, filename, text) from None  # type: ignore[arg-type]  # a MarkedYAMLError
        return None
    return data, smap


class _FastReader:
    """Plain data and positions from the C parser's events (the work of :func:`_convert`)."""

    def __init__(self, F: Any, text: str, filename: str, smap: SourceMap) -> None:
        self.F = F
        self.get = F.CParser(text).get_event
        self.filename = filename
        self.lines = text.splitlines()
        self.values, self.keys, self.texts = smap._values, smap._keys, smap._texts
        self.deepest = MAX_DEPTH  # the length of path below which a list or mapping may still start

    def document(self, root: PathKey) -> Any:
        F, get = self.F, self.get
        self.deepest = len(root) + MAX_DEPTH
        if type(get()) is not F.StreamStart:
            raise _Unsupported
        self.values[root] = Loc(self.filename, 1, 1)
        ev = get()
        if type(ev) is F.StreamEnd:
            return None
        if type(ev) is not F.DocStart or ev.version is not None or ev.tags:
            raise _Unsupported
        data = self.node(get(), root, top=True)
        if type(get()) is not F.DocEnd or type(get()) is not F.StreamEnd:
            raise _Unsupported  # more than one document: the full reader says so
        return data

    def node(self, ev: Any, path: PathKey, top: bool = False) -> Any:
        """The value that starts with event ``ev``; nested values' positions are noted."""
        F = self.F
        t = type(ev)
        if t is F.Alias:
            raise _alias(ev.anchor, ev.start_mark)
        if getattr(ev, "tag", None) is not None:
            raise _Unsupported  # (with a tag, the two parsers place an anchor differently)
        if ev.anchor is not None:
            raise _anchor(ev.anchor, ev.start_mark)
        if (t is F.MapStart or t is F.SeqStart) and len(path) >= self.deepest:
            raise _too_deep(ev.start_mark)  # a step of the path is a level of nesting
        if t is F.MapStart:
            return self.mapping(path)
        if t is F.SeqStart:
            return self.sequence(path)
        if t is F.Scalar and top:
            return self.scalar(ev)
        raise _Unsupported  # an alias, or an event out of place

    def scalar(self, ev: Any) -> Any:
        if ev.tag is not None:
            raise _Unsupported
        if ev.anchor is not None:
            raise _anchor(ev.anchor, ev.start_mark)
        value = ev.value
        if ev.style:
            return value  # quoted or block: always text
        plain = self.F.plain
        found = plain.get(value, plain)
        if found is plain:
            found = plain[value] = _plain_value(self.F, value)
        if found is _NOT_PLAIN:
            raise _Unsupported
        if found is _TOO_LONG:
            raise _too_long(value, ev.start_mark)
        return found

    def note(self, value: Any, ev: Any, path: PathKey) -> None:
        """Record a scalar's position, and for text where each character of it is."""
        mark = ev.start_mark
        line0, col0 = mark.line, mark.column
        loc = Loc(self.filename, line0 + 1, col0 + 1)
        self.values[path] = loc
        if value.__class__ is not str:
            return
        style, lines = ev.style, self.lines
        if style == ">":
            indent = _block_indent(lines, line0, col0)
            self.texts[path] = TextOrigin(Loc(self.filename, line0 + 2, indent), block=False, folded=True,
                                          chars=CharPlaces.of(_folded_chars(lines, line0 + 1, indent)))
        elif style == "|":
            self.texts[path] = TextOrigin(Loc(self.filename, line0 + 2, _block_indent(lines, line0, col0)),
                                          block=True)
        elif style == '"' or style == "'":
            self.texts[path] = TextOrigin(Loc(self.filename, line0 + 1, col0 + 2), block=False,
                                          chars=_inline_places(value, lines, line0, col0, style))
        else:
            self.texts[path] = TextOrigin(loc, block=False, chars=_inline_places(value, lines, line0, col0, ""))

    def mapping(self, path: PathKey) -> dict[str, Any]:
        F, get, keys, values, filename = self.F, self.get, self.keys, self.values, self.filename
        out: dict[str, Any] = {}
        seen: set[Any] = set()  # the keys as YAML typed them: ruamel finds 1 and true the same key
        while True:
            kev = get()
            if type(kev) is F.MapEnd:
                return out
            if type(kev) is not F.Scalar:
                raise _Unsupported  # a key that is a list or a mapping
            key = self.scalar(kev)
            if key.__class__ is str:
                k = key
            elif key is None or key.__class__ is bool:
                k = "true" if key is True else "false" if key is False else "None"
            elif kev.value.__class__ is str and _KEY_INT.match(kev.value):
                k = kev.value
            else:
                raise _Unsupported  # a signed number as a key: leave its spelling to the full reader
            if k in out or key in seen:
                raise _Unsupported  # a duplicate key: the full reader reports it
            seen.add(key)
            kpath = path + (k,)
            mark = kev.start_mark
            kloc = keys[kpath] = Loc(filename, mark.line + 1, mark.column + 1)
            vev = get()
            if type(vev) is F.Scalar:
                value = self.scalar(vev)
                if value is None:
                    values[kpath] = kloc  # 'key:' with nothing after it
                else:
                    self.note(value, vev, kpath)
                out[k] = value
            else:
                mark = vev.start_mark
                values[kpath] = Loc(filename, mark.line + 1, mark.column + 1)
                out[k] = self.node(vev, kpath)

    def sequence(self, path: PathKey) -> list[Any]:
        F, get, values, filename = self.F, self.get, self.values, self.filename
        items: list[Any] = []
        while True:
            ev = get()
            if type(ev) is F.SeqEnd:
                return items
            ipath = path + (len(items),)
            if type(ev) is F.Scalar:
                value = self.scalar(ev)
                self.note(value, ev, ipath)
                items.append(value)
            else:
                mark = ev.start_mark
                values[ipath] = Loc(filename, mark.line + 1, mark.column + 1)
                items.append(self.node(ev, ipath))
