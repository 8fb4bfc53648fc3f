"""What the two YAML readers share: where every value came from, and what a file may cost.

:class:`SourceMap` keeps the file position of every value and key, and for texts a
:class:`TextOrigin` (where each character is, :class:`CharPlaces`), so that any later stage
(schema, cross-references, the rules-language compiler, even a runtime error) can point back
into the author's file. Both readers — the fast one (:mod:`interpreter.yamlfast`) and
ruamel's round-trip loader (:mod:`interpreter.yamlsource`, which callers use) — fill it the
same way, refuse the same things in the same words, and word YAML errors alike.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from .diagnostics import Loc, LudusError, error

if TYPE_CHECKING:
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


class SplicedOrigin(TextOrigin):
    """The origin of a text made of pieces of others: an overlay's patch of some lines or of one
    phrase of a base text. Each piece maps back to the text it came from, so an error in the
    patched part points into the overlay and one elsewhere into the base.

    Not kept in the load cache: a ruleset with such a text always loads in full.
    """

    def __init__(self, parts: Sequence[tuple[str, TextOrigin, int, int]]) -> None:
        """``parts``: (text, origin, line, col): each piece of the new text, in order, and where its
        first character is inside the text ``origin`` describes."""
        first = parts[0][1] if parts else TextOrigin(Loc("<patch>"), block=True)
        super().__init__(first.loc, block=True)
        # for each line of the new text: (first column, origin, line, col in that origin), in order
        pieces: dict[int, list[tuple[int, TextOrigin, int, int]]] = {}
        object.__setattr__(self, "pieces", pieces)  # a frozen dataclass's subclass
        line, col = 1, 1
        for text, origin, oline, ocol in parts:
            for i, segment in enumerate(text.split("\n")):
                if i:
                    line, col = line + 1, 1
                if segment or i == 0:
                    pieces.setdefault(line, []).append((col, origin, oline + i, ocol if i == 0 else 1))
                col += len(segment)

    pieces: dict[int, list[tuple[int, TextOrigin, int, int]]]

    def locate(self, line: int, col: int) -> Loc:
        pieces = self.pieces.get(line) or self.pieces.get(max((n for n in self.pieces if n < line), default=1)) or []
        for start, origin, oline, ocol in reversed(pieces):
            if col >= start:
                return origin.locate(oline, ocol + col - start)
        return self.loc


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


# ---------------------------------------------------------------------------- refusals
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


def _short(text: str, n: int = 40) -> str:
    """``text`` cut to ``n`` characters for a message (a hostile file may hold huge names)."""
    return text if len(text) <= n else text[:n] + "…"


# ---------------------------------------------------------------------------- errors
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


# ---------------------------------------------------------------------------- places of characters
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

