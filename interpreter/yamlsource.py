"""YAML reading that remembers where every value came from.

ruamel.yaml's round-trip loader keeps line/column data on every mapping and
sequence. We convert the tree to plain Python data (fast to work with, trivially
JSON-able) and keep the positions in a side table keyed by the value's path, so
that any later stage (schema, cross-references, the rules-language compiler,
even a runtime error) can point back into the author's file.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, overload

from .diagnostics import Loc, LudusError, error

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError

PathKey = tuple[str | int, ...]

# What one YAML file may cost (rule files, manifests, scenarios alike); past any of these the
# file is refused with a located error. The largest bundled file is about 13 KB.
MAX_FILE_BYTES = 1 << 20
MAX_DEPTH = 100  # mappings and lists inside one another; keeps every reader off Python's recursion limit
MAX_INT_DIGITS = 100  # an integer written with more characters than this is no game's number
# Past this size, a YAML error found by the C parser is reported as it words it: the full reader,
# which words errors for smaller files, reads ten times slower (some 13 s for 1 MiB).
FULL_READER_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class TextOrigin:
    """Where a string scalar's text starts, so offsets inside it map to the file."""

    loc: Loc  # position of the first character of the text
    block: bool  # literal/folded block: text line n is file line loc.line + n - 1
    folded: bool = False  # a '>' block: YAML joined its lines
    # For inline (plain or quoted) scalars: the file (line, col) of each character of the
    # parsed value, so escapes, doubled quotes and folded lines do not shift columns.
    chars: Sequence[tuple[int, int]] | None = None

    def locate(self, line: int, col: int) -> Loc:
        """Map a 1-based (line, col) inside the string to a file location."""
        if self.block:
            return Loc(self.loc.file, self.loc.line + line - 1, self.loc.col + col - 1)
        chars = self.chars
        if line == 1 and chars.__class__ is CharPlaces:
            ln, cl = chars.place(col)
            return Loc(self.loc.file, ln, cl)
        if self.chars and line == 1:
            if 1 <= col <= len(self.chars):
                ln, cl = self.chars[col - 1]
                return Loc(self.loc.file, ln, cl)
            ln, cl = self.chars[-1]
            return Loc(self.loc.file, ln, cl + col - len(self.chars))
        if line == 1:
            return Loc(self.loc.file, self.loc.line, self.loc.col + col - 1)
        return Loc(self.loc.file, self.loc.line + line - 1, col)


class CharPlaces(Sequence[tuple[int, int]]):
    """The file (line, col) of each character of a text, kept as runs of consecutive columns.

    Reads like a tuple of (line, col) pairs but stores one triple per run (a text usually
    is one run, or a few when YAML folded lines or read escapes), which keeps the source map
    and the load cache small.
    """

    __slots__ = ("starts", "places", "n")

    def __init__(self, starts: tuple[int, ...], places: tuple[tuple[int, int], ...], n: int) -> None:
        self.starts, self.places, self.n = starts, places, n

    @classmethod
    def of(cls, chars: Sequence[tuple[int, int]]) -> CharPlaces | None:
        if not chars:
            return None
        starts: list[int] = []
        places: list[tuple[int, int]] = []
        prev: tuple[int, int] | None = None
        for i, (ln, cl) in enumerate(chars):
            if prev is None or ln != prev[0] or cl != prev[1] + 1:
                starts.append(i)
                places.append((ln, cl))
            prev = (ln, cl)
        return cls(tuple(starts), tuple(places), len(chars))

    def __len__(self) -> int:
        return self.n

    def place(self, col: int) -> tuple[int, int]:
        """The (line, col) of the 1-based character ``col``; past the end, counted on from the last."""
        starts, n = self.starts, self.n
        if 1 <= col <= n:
            r = bisect_right(starts, col - 1) - 1
            ln, cl = self.places[r]
            return ln, cl + col - 1 - starts[r]
        ln, cl = self.places[-1]
        return ln, cl + n - 1 - starts[-1] + col - n

    @overload
    def __getitem__(self, i: int) -> tuple[int, int]: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[int, int]]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self.n)))
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        r = bisect_right(self.starts, i) - 1
        ln, cl = self.places[r]
        return ln, cl + i - self.starts[r]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CharPlaces):
            return (self.starts, self.places, self.n) == (other.starts, other.places, other.n)
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash((self.starts, self.places, self.n))

    def __repr__(self) -> str:
        return f"CharPlaces({self.n} chars from {self.places[0] if self.places else None})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (CharPlaces, (self.starts, self.places, self.n))


class SourceMap:
    """Positions of values (and of mapping keys) by path; shared by merged documents.

    A map restored from the load cache keeps its compact form and makes a :class:`Loc` only
    for the entries that are looked up (:meth:`loc`, :meth:`text`, :meth:`text_at`); reading
    ``values``, ``keys`` or ``texts`` directly converts them all first.
    """

    def __init__(self) -> None:
        self._values: dict[PathKey, Loc] = {}
        self._keys: dict[PathKey, Loc] = {}
        self._texts: dict[PathKey, TextOrigin] = {}
        self._raw: tuple[Any, ...] | None = None  # the compact form, while not converted
        # Entries by path prefix, by prefix length, for graft(); dropped whenever the tables are
        # handed out (which any change of them goes through).
        self._index: dict[int, dict[PathKey, tuple[list[Any], list[Any], list[Any]]]] = {}

    @property
    def values(self) -> dict[PathKey, Loc]:
        self._convert_all()
        self._index = {}
        return self._values

    @values.setter
    def values(self, table: dict[PathKey, Loc]) -> None:
        self._convert_all()
        self._index = {}
        self._values = table

    @property
    def keys(self) -> dict[PathKey, Loc]:
        self._convert_all()
        self._index = {}
        return self._keys

    @keys.setter
    def keys(self, table: dict[PathKey, Loc]) -> None:
        self._convert_all()
        self._index = {}
        self._keys = table

    @property
    def texts(self) -> dict[PathKey, TextOrigin]:
        self._convert_all()
        self._index = {}
        return self._texts

    @texts.setter
    def texts(self, table: dict[PathKey, TextOrigin]) -> None:
        self._convert_all()
        self._index = {}
        self._texts = table

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceMap):
            return NotImplemented
        return (self.values, self.keys, self.texts) == (other.values, other.keys, other.texts)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SourceMap({len(self.values)} values, {len(self.keys)} keys, {len(self.texts)} texts)"

    def loc(self, path: PathKey, *, key: bool = False) -> Loc:
        """The location of ``path`` (or of its key), falling back to the nearest ancestor."""
        raw = self._raw
        if raw is not None:
            files, values, keys, _texts = raw
            table = keys if key else values
        else:
            values = self._values
            table = self._keys if key else values
        p = tuple(path)
        found = None
        while p:
            if p in table:
                found = table[p]
                break
            if p in values:
                found = values[p]
                break
            p = p[:-1]
        if found is None:
            found = values.get((), None)
            if found is None:
                return Loc("<unknown>")
        return Loc(files[found[0]], found[1], found[2]) if raw is not None else found

    def text_at(self, path: PathKey) -> TextOrigin | None:
        """The text origin of the string at ``path``, if it is known."""
        raw = self._raw
        if raw is None:
            return self._texts.get(tuple(path))
        t = raw[3].get(tuple(path))
        return None if t is None else _origin(raw[0], t)

    def text(self, path: PathKey) -> TextOrigin:
        """The text origin of the string at ``path`` (approximate when unknown)."""
        found = self.text_at(path)
        if found is not None:
            return found
        return TextOrigin(self.loc(path), block=False)

    def drop(self, prefix: PathKey) -> None:
        """Forget every position at or below ``prefix`` (before replacing that value)."""
        n = len(prefix)
        for table in (self.values, self.keys, self.texts):
            for k in [k for k in table if k[:n] == prefix]:
                del table[k]

    def graft(self, other: SourceMap, src: PathKey, dst: PathKey) -> None:
        """Copy positions under ``src`` in ``other`` to live under ``dst`` here."""
        n = len(src)
        found = other._prefixed(n).get(tuple(src))
        if found is None:
            return
        tables: tuple[dict[PathKey, Any], ...] = (self.values, self.keys, self.texts)
        for mine, theirs in zip(tables, found, strict=True):
            for k, v in theirs:
                mine[dst + k[n:]] = v

    def _prefixed(self, n: int) -> dict[PathKey, tuple[list[Any], list[Any], list[Any]]]:
        """The entries (values, keys, texts) by their first ``n`` path steps.

        A ruleset file's entries are grafted one id at a time: grouping them once makes that
        one pass over the file's map instead of one per id.
        """
        index = self._index.get(n)
        if index is None:
            self._convert_all()
            index = {}
            tables: tuple[dict[PathKey, Any], ...] = (self._values, self._keys, self._texts)
            for i, table in enumerate(tables):
                for k, v in table.items():
                    if len(k) >= n:
                        group = index.get(k[:n])
                        if group is None:
                            group = index[k[:n]] = ([], [], [])
                        group[i].append((k, v))
            self._index[n] = index
        return index

    # ------------------------------------------------------------ compact form (load cache)
    def dump(self) -> tuple[Any, ...]:
        """A compact, picklable form: locations as (file index, line, col) tuples."""
        if self._raw is not None:
            return self._raw
        files: dict[str, int] = {}

        def f(name: str) -> int:
            return files.setdefault(name, len(files))

        values = {k: (f(v.file), v.line, v.col) for k, v in self._values.items()}
        keys = {k: (f(v.file), v.line, v.col) for k, v in self._keys.items()}
        texts = {k: (f(t.loc.file), t.loc.line, t.loc.col, t.block, t.folded, _runs(t.chars))
                 for k, t in self._texts.items()}
        return (list(files), values, keys, texts)

    @classmethod
    def restore(cls, dumped: tuple[Any, ...]) -> SourceMap:
        """The inverse of :meth:`dump` (entries are converted when first read)."""
        smap = cls()
        smap._raw = dumped
        return smap

    def _convert_all(self) -> None:
        raw = self._raw
        if raw is None:
            return
        self._raw = None
        files, values, keys, texts = raw
        self._values = {k: Loc(files[v[0]], v[1], v[2]) for k, v in values.items()}
        self._keys = {k: Loc(files[v[0]], v[1], v[2]) for k, v in keys.items()}
        self._texts = {k: _origin(files, t) for k, t in texts.items()}


def _runs(chars: Sequence[tuple[int, int]] | None) -> tuple[Any, ...] | None:
    """Per-character positions as plain tuples (unpickled without running any Python)."""
    places = chars if isinstance(chars, CharPlaces) or chars is None else CharPlaces.of(chars)
    return None if places is None else (places.starts, places.places, places.n)


def _origin(files: list[str], t: tuple[Any, ...]) -> TextOrigin:
    return TextOrigin(Loc(files[t[0]], t[1], t[2]), t[3], t[4], CharPlaces(*t[5]) if t[5] is not None else None)


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


class _Refused(Exception):
    """What the guarded composer refuses: a message, a hint and ruamel's mark of the place."""

    def __init__(self, message: str, hint: str, mark: Any) -> None:
        super().__init__(message)
        self.message, self.hint, self.mark = message, hint, mark


_NO_ALIASES = ("write the value out in full: Ludus reads no anchors (&name) or aliases (*name), "
               "which let a small file stand for an unbounded amount of data")


def _alias(name: str, mark: Any) -> _Refused:
    return _Refused(f"YAML alias '*{_short(name)}' is not allowed", _NO_ALIASES, mark)


def _anchor(name: str, mark: Any) -> _Refused:
    return _Refused(f"YAML anchor '&{_short(name)}' is not allowed", _NO_ALIASES, mark)


def _too_deep(mark: Any) -> _Refused:
    return _Refused(f"nested too deeply: more than {MAX_DEPTH} mappings and lists inside one another",
                    "flatten the data", mark)


def _too_long(text: str, mark: Any) -> _Refused:
    return _Refused(f"number too long: {len(text):,} characters (at most {MAX_INT_DIGITS})",
                    "no game needs a number this large", mark)


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


def _short(text: str, n: int = 40) -> str:
    """``text`` cut to ``n`` characters for a message (a hostile file may hold huge names)."""
    return text if len(text) <= n else text[:n] + "…"


def load_yaml(path: Path | str, root: PathKey = (), missing_hint: str = "check the path",
              reads: dict[str, str] | None = None) -> tuple[Any, SourceMap]:
    """Load one YAML file into plain data and a :class:`SourceMap` rooted at ``root``.

    ``reads``, when given, records the SHA-256 of the bytes that were parsed, by path
    (the load cache checks them to know a cached result is still current). A file larger
    than :data:`MAX_FILE_BYTES` is refused before it is parsed.
    """
    p = Path(path)
    try:
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


def _mark(mark: Any, filename: str) -> Loc:
    return Loc(filename, mark.line + 1, mark.column + 1) if mark is not None else Loc(filename, 1, 1)


def _yaml_error(exc: MarkedYAMLError, filename: str, text: str) -> LudusError:
    """A YAML error, located where an author would look, with the parser's context as a hint."""
    problem = (exc.problem or exc.context or "invalid YAML").strip()
    context = (exc.context or "").strip()
    dup = re.match(r'found duplicate key "([^"]*)"', problem)
    if dup:
        key = dup.group(1)
        here = _mark(exc.problem_mark, filename)
        first = _first_key_line(text, key, here)
        where = f"first defined at line {first}" if first else "it appears earlier in the same mapping"
        return error(here, f"duplicate id '{key}'", f"{where}; each id may appear only once")
    if "simple key" in context and exc.context_mark is not None:
        # 'could not find expected :' is noticed a line late; the key without its colon is here
        return error(_mark(exc.context_mark, filename), f"YAML syntax: {problem}",
                     "is the colon after the key missing? write 'key: value'")
    flow = re.search(r"flow (sequence|mapping)", context)
    if flow and exc.context_mark is not None:
        # the bracket that was never closed is what the author must fix
        opener = "[" if flow.group(1) == "sequence" else "{"
        seen = _mark(exc.problem_mark, filename)
        return error(_mark(exc.context_mark, filename), f"YAML syntax: this '{opener}' is never closed",
                     f"at line {seen.line}, column {seen.col}: {problem}")
    hint = "indent with spaces: YAML does not allow tabs" if "'\\t'" in problem else "check indentation, colons and quotes"
    if context and exc.context_mark is not None and exc.context_mark != exc.problem_mark:
        started = _mark(exc.context_mark, filename)
        hint = f"{context} that starts at line {started.line}, column {started.col}"
    return error(_mark(exc.problem_mark or exc.context_mark, filename), f"YAML syntax: {problem}", hint)


def _first_key_line(text: str, key: str, dup: Loc) -> int:
    """The line of the first ``key:`` at the same indentation as the duplicate, above it."""
    lines = text.splitlines()
    if not 1 <= dup.line <= len(lines):
        return 0
    indent = dup.col - 1
    pattern = re.compile(rf"^ {{{indent}}}(['\"]?){re.escape(key)}\1\s*:")
    for n in range(dup.line - 1):
        if pattern.match(lines[n]):
            return n + 1
    return 0


def _block_indent(lines: list[str], indicator_line: int, indicator_col: int) -> int:
    """Column (1-based) where a block scalar's content starts."""
    header = lines[indicator_line][indicator_col:] if indicator_line < len(lines) else ""
    digit = re.match(r"^[|>][+-]?([1-9])", header)
    if digit:
        # An explicit indentation indicator counts from the parent's indentation.
        parent = lines[indicator_line]
        return len(parent) - len(parent.lstrip(" ")) + int(digit.group(1)) + 1
    for raw in lines[indicator_line + 1:]:
        if raw.strip():
            return len(raw) - len(raw.lstrip(" ")) + 1
    return 1


def _folded_chars(lines: list[str], first: int, indent: int) -> tuple[tuple[int, int], ...]:
    """Positions of the characters of a folded ('>') block: its lines joined by spaces."""
    out: list[tuple[int, int]] = []
    n = first
    while n < len(lines) and (not lines[n].strip() or len(lines[n]) - len(lines[n].lstrip(" ")) >= indent - 1):
        raw = lines[n]
        for i in range(indent - 1, len(raw)):
            out.append((n + 1, i + 1))
        out.append((n + 1, len(raw) + 1))  # the space (or newline) that ends this line
        n += 1
    return tuple(out)


def _inline_chars(value: str, lines: list[str], line0: int, col0: int, quote: str) -> tuple[tuple[int, int], ...]:
    """The file position of each character of an inline scalar's parsed value.

    Walks the raw text alongside the value: escapes (\\x), doubled single quotes and
    line folding (a newline plus indentation read as one space) take several raw
    characters for one value character.
    """
    out: list[tuple[int, int]] = []
    ln, cl = line0, col0 + (1 if quote else 0)

    def raw(ln: int, cl: int) -> str:
        return lines[ln][cl] if ln < len(lines) and cl < len(lines[ln]) else "\n"

    for ch in value:
        if ln >= len(lines):
            break
        r = raw(ln, cl)
        if r == "\n" or (ch == " " and r == "\n"):
            # folded line break: the value has one space for the newline and indentation
            pos = (ln + 1, cl + 1)
            ln += 1
            cl = 0
            while raw(ln, cl) == " ":
                cl += 1
            out.append(pos)
            if ch != " ":
                out[-1] = (ln + 1, cl + 1)
                cl += 1
            continue
        if quote == '"' and r == "\\":
            out.append((ln + 1, cl + 1))
            nxt = raw(ln, cl + 1)
            cl += {"x": 4, "u": 6, "U": 10}.get(nxt, 2)
            continue
        if quote == "'" and r == "'" and raw(ln, cl + 1) == "'":
            out.append((ln + 1, cl + 1))
            cl += 2
            continue
        out.append((ln + 1, cl + 1))
        cl += 1
    return tuple(out)


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


def _inline_places(value: str, lines: list[str], line0: int, col0: int, quote: str) -> CharPlaces | None:
    """:func:`_inline_chars` as :class:`CharPlaces`, without the walk when the text is written as read.

    Most scalars sit on one line and contain no escape, doubled quote or folding: their
    characters are then consecutive columns from the first one, which is what the walk finds.
    """
    q = 1 if quote else 0
    if value and line0 < len(lines) and lines[line0][col0 + q:col0 + q + len(value)] == value \
            and not (quote == '"' and "\\" in value) and not (quote == "'" and "'" in value):
        return CharPlaces((0,), ((line0 + 1, col0 + q + 1),), len(value))
    return CharPlaces.of(_inline_chars(value, lines, line0, col0, quote))


# ---------------------------------------------------------------------------- fast reader
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
