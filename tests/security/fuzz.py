"""A seeded mutation fuzzer over the bundled rulesets: reproducible mutated copies, from YAML to rules text.

``mutate(ruleset, seed, index)`` is a pure function of its arguments and the bundled files: the
same numbers give the same mutated copy (plain ``random.Random`` seeded by a string, no clock, no
hash randomisation), so any case a large run finds is reproduced from those three values alone.
Every mutant differs from the ruleset it was made from. Mutations work at three levels:

- YAML text: lines deleted, duplicated, swapped or re-indented, a file cut short, tabs,
  unbalanced brackets, anchors and aliases (an alias bomb among them), bytes that are not UTF-8;
- structure (a round-trip YAML edit): a key dropped, a value of the wrong type, an id renamed,
  duplicated in another file or removed while still referenced, numbers made 0, -1, huge,
  5,000 digits long or fractional, very long strings, names with a newline;
- the rules language inside the YAML: tokens deleted or duplicated, operators and names swapped,
  numbers and die sizes changed (``d0``, ``d99999999999999999999``), nesting deepened, a called
  procedure or a field renamed.

An overlay (a ruleset that ``extends`` another by name) is mutated in its own files and written
beside nothing else: its ``extends`` still resolves to the bundled base.

tests/security/fuzzrun.py runs a mutant through ``ludus`` and classifies the outcome.
"""

from __future__ import annotations

import io
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
RULESETS = ROOT / "rulesets"
ENGINE = ROOT  # the checkout whose ``python -m interpreter`` runs (see use_engine)
MANIFEST = "ruleset.yaml"

MAX_DECISIONS = 20_000  # a played mutant stops here: 15 times a random game of the longest bundled ruleset

DSL_KEYS = ("do", "expr", "if", "base", "score", "evaluation", "rounds", "label", "effect")
KEYWORDS = frozenset((
    "let", "set", "increase", "decrease", "move", "draw", "shuffle", "create", "destroy", "roll", "choose",
    "if", "then", "elif", "else", "end", "for", "each", "in", "where", "do", "repeat", "until", "while",
    "break", "call", "return", "modify", "signal", "consume", "log", "game", "pass", "by", "to", "of", "top",
    "from", "with", "as", "and", "or", "not", "every", "secretly", "prompt", "label", "once", "when",
    "bonus", "on", "over", "die", "dice", "action", "called", "true", "false", "none",
))
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\d+|[A-Za-z_][A-Za-z0-9_]*|==|!=|<=|>=|\.\.|[-+*/%<>=()\[\].,;{}]')
OPERATORS = ("+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "and", "or", "..", "in")
BIG = ("0", "-1", "99999999999999999999", "1" + "0" * 40, "9" * 5000, "1.5", "1e308", "-0", "0x10")
_HUGE = "fuzz_huge_number_marker"
SECTIONS = ("kinds", "zones", "globals", "entities", "tables", "functions", "modifier_points", "procedures",
            "actions")


# ====================================================================== the bundled sources
@dataclass
class Source:
    """One bundled ruleset as bytes, with what the mutators pick from."""

    name: str
    files: dict[str, bytes]  # every file of its folder, by path relative to it
    players: int  # the smallest player count (an overlay's is its base's)
    dsl_lines: dict[str, list[int]] = field(default_factory=dict)  # rules-text lines (0-based) per YAML file
    names: list[str] = field(default_factory=list)  # names used in its rules texts
    statements: dict[str, set[int]] = field(default_factory=dict)  # lines that are one simple statement
    base: str | None = None  # the ruleset it extends
    texts: list[tuple[tuple[Any, ...], str]] = field(default_factory=list)  # (path, rules text) of its entries

    @property
    def yaml_files(self) -> list[str]:
        return sorted(p for p in self.files if p.endswith((".yaml", ".yml")))


def bundled(only: Iterable[str] | None = None) -> list[str]:
    """The bundled rulesets (every folder of rulesets/ holding a manifest), or ``only`` of them."""
    names = sorted(p.name for p in RULESETS.iterdir() if (p / MANIFEST).is_file())
    if only is None:
        return names
    wanted = list(only)
    unknown = [n for n in wanted if n not in names]
    if unknown:
        raise ValueError(f"no bundled ruleset {', '.join(unknown)} (have: {', '.join(names)})")
    return wanted


_SOURCES: dict[str, Source] = {}


def use_engine(folder: Path) -> None:
    """Fuzz another checkout (e.g. an exported commit): its rulesets, and its engine in real processes."""
    global RULESETS, ENGINE
    ENGINE = folder.resolve()
    RULESETS = ENGINE / "rulesets"
    _SOURCES.clear()


def source(name: str) -> Source:
    """The bundled ruleset ``name`` as read from disk (read once per process)."""
    if name not in _SOURCES:
        folder = RULESETS / name
        files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
                 if p.is_file() and "__pycache__" not in p.parts}
        src = Source(name, files, _min_players(folder))
        src.base = _manifest(folder).get("extends")
        found: set[str] = set()
        for path in src.yaml_files:
            lines = files[path].decode("utf-8").split("\n")
            data = yaml.load(files[path], Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            src.texts += [(p, v) for p, v in _nodes(data) if isinstance(v, str) and len(p) >= 2 and p[0] != "patches"
                          and (p[-1] in DSL_KEYS or p[-2] in ("params", "metrics", "tiebreaks"))]
            src.dsl_lines[path], src.statements[path] = _rules_lines(lines)
            for i in src.dsl_lines[path]:
                found.update(t for t in TOKEN.findall(lines[i]) if t[0].isalpha() and t not in KEYWORDS)
        src.names = sorted(found)
        _SOURCES[name] = src
    return _SOURCES[name]


def _manifest(folder: Path) -> dict[str, Any]:
    data = yaml.safe_load((folder / MANIFEST).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _min_players(folder: Path) -> int:
    manifest = _manifest(folder)
    players = manifest.get("players") or {}
    if "min" in players:
        return int(players["min"])
    base = manifest.get("extends")
    return _min_players(RULESETS / str(base)) if base else 2


_KEY_LINE = re.compile(r"^(?P<ind>\s*)(?:- )?(?P<key>[A-Za-z_][\w]*):\s*(?P<rest>.*)$")


_SIMPLE = re.compile(r"^\s*(let|set|increase|decrease|move|draw|shuffle|log|call|signal|modify|create|destroy|roll|"
                     r"pass)\b")


def _rules_lines(lines: list[str]) -> tuple[list[int], set[int]]:
    """Indexes of the lines holding rules text (block scalars, inline values of rules keys), and of
    those that are one simple statement of a ``do`` block."""
    found: list[int] = []
    statements: set[int] = set()
    block_indent: int | None = None
    block_key = ""
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                if line.strip() and not line.strip().startswith("#"):
                    found.append(i)
                    if block_key == "do" and _SIMPLE.match(line):
                        statements.add(i)
                continue
            block_indent = None
        m = _KEY_LINE.match(line)
        if not m:
            continue
        key, rest = m.group("key"), m.group("rest").strip()
        if rest[:1] in ("|", ">") and key not in ("note", "description", "text"):
            block_indent = len(m.group("ind"))
            block_key = key
        elif key in DSL_KEYS and rest and not rest.startswith(("{", "[", "#")):
            found.append(i)
    return found, statements


# ====================================================================== mutants
@dataclass
class Mutant:
    """A mutated copy of one bundled ruleset."""

    ruleset: str
    seed: int
    index: int
    description: str
    files: dict[str, bytes]
    players: int

    @property
    def name(self) -> str:
        return f"{self.ruleset}-{self.seed}-{self.index}"

    def write(self, root: Path) -> Path:
        """Write the mutant's folder under ``root`` (named after the ruleset, so messages read well)."""
        folder = root / self.name / self.ruleset
        for rel, data in self.files.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return folder

    def commands(self, folder: str) -> list[list[str]]:
        """The ``ludus`` arguments of its two phases: validate, then (if that passes) play."""
        return [["validate", folder],
                ["play", folder, "--players", str(self.players), "--seed", str(self.index), "--quiet",
                 "--max-decisions", str(MAX_DECISIONS)]]


class _Skip(Exception):
    """This mutation has nothing to act on in the chosen file."""


def mutant(seed: int, index: int, rulesets: Sequence[str] | None = None) -> Mutant:
    """Mutant number ``index`` of the run seeded ``seed``: the same numbers, the same bytes.

    Mutants go round the rulesets in turn; each draws its level, operator and file from a
    generator seeded by (ruleset, seed, index) alone.
    """
    names = list(rulesets) if rulesets is not None else bundled()
    return mutate(names[index % len(names)], seed, index)


def mutate(ruleset: str, seed: int, index: int) -> Mutant:
    """Mutant number ``index`` of ``ruleset`` in the run seeded ``seed``."""
    src = source(ruleset)
    rand = random.Random(f"ludus-fuzz/{ruleset}/{seed}/{index}")
    for _attempt in range(20):
        op = rand.choice(_OPERATORS)
        path = _pick_file(rand, src)
        files = dict(src.files)
        try:
            desc = op(rand, src, path, files)
        except _Skip:
            continue
        if files == src.files:  # e.g. a name swapped for itself
            continue
        return Mutant(src.name, seed, index, desc, files, src.players)
    raise RuntimeError(f"no mutation applies to {src.name}")  # pragma: no cover - every ruleset has text


def mutants(seed: int, count: int, rulesets: Sequence[str] | None = None, start: int = 0) -> list[Mutant]:
    """``count`` mutants of the run seeded ``seed`` (numbers ``start`` to ``start + count - 1``)."""
    names = list(rulesets) if rulesets is not None else bundled()
    return [mutant(seed, i, names) for i in range(start, start + count)]


def _pick_file(rand: random.Random, src: Source) -> str:
    paths = src.yaml_files
    weights = [max(20, src.files[p].count(b"\n")) for p in paths]
    return rand.choices(paths, weights)[0]


def _lines(files: dict[str, bytes], path: str) -> list[str]:
    return files[path].decode("utf-8").split("\n")


def _put(files: dict[str, bytes], path: str, lines: list[str]) -> None:
    files[path] = "\n".join(lines).encode("utf-8")


def _content_line(rand: random.Random, lines: list[str]) -> int:
    candidates = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    if not candidates:
        raise _Skip
    return rand.choice(candidates)


# ---------------------------------------------------------------- YAML text
def _text_line(rand: random.Random, src: Source, path: str, files: dict[str, bytes]) -> str:
    lines = _lines(files, path)
    i = _content_line(rand, lines)
    kind = rand.choice(("delete", "duplicate", "swap", "indent", "dedent", "tab"))
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "swap":
        j = _content_line(rand, lines)
        if lines[j] == lines[i]:
            raise _Skip
        lines[i], lines[j] = lines[j], lines[i]
        kind = f"swap line with line {j + 1}"
    elif kind == "indent":
        lines[i] = " " * rand.choice((1, 2, 4)) + lines[i]
    elif kind == "dedent":
        if not lines[i].startswith(" "):
            raise _Skip
        lines[i] = lines[i][rand.choice((1, 2)):]
    else:
        at = rand.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:at] + "\t" + lines[i][at:]
        kind = f"insert a tab at column {at + 1}"
    _put(files, path, lines)
    return f"{path}:{i + 1}: text: {kind}" + ("" if kind.startswith(("swap", "insert")) else " line")


def _text_cut(rand: random.Random, src: Source, path: str, files: dict[str, bytes]) -> str:
    data = files[path]
    at = rand.randrange(len(data))
    files[path] = data[:at]
    return f"{path}: text: cut the file after byte {at} of {len(data)}"


def _text_bracket(rand: random.Random, src: Source, path: str, files: dict[str, bytes]) -> str:
    lines = _lines(files, path)
    i = _content_line(rand, lines)
    ch = rand.choice("[]{}\"'")
    at = rand.randrange(len(lines[i]) + 1)
    lines[i] = lines[i][:at] + ch + lines[i][at:]
    _put(files, path, lines)
    return f"{path}:{i + 1}: text: insert an unbalanced {ch!r} at column {at + 1}"


def _alias_bomb(levels: int) -> list[str]:
    out = ['lol0: &l0 "lol"']
    for k in range(1, levels + 1):
        out.append(f"lol{k}: &l{k} [" + ", ".join([f"*l{k - 1}"] * 10) + "]")
    return out


def _text_alias(rand: random.Random, src: Source, path: str, files: dict[str, bytes]) -> str:
    lines = _lines(files, path)
    kind = rand.choice(("bomb", "bomb-nested", "undefined", "anchor", "merge"))
    if kind == "bomb":
        lines += _alias_bomb(9)
        desc = "append a nine-level alias bomb (10^9 strings) at the top level"
    elif kind == "bomb-nested":
        i = _content_line(rand, lines)
        m = _KEY_LINE.match(lines[i])
        if not m or not m.group("rest") or m.group("rest").startswith(("|", ">")):
            raise _Skip
        lines[i] = f"{m.group('ind')}{m.group('key')}: *l9"
        lines[:0] = _alias_bomb(9)
        desc = f"prepend a nine-level alias bomb and make line {i + 1}'s value its last alias"
        _put(files, path, lines)
        return f"{path}: yaml: {desc}"
    elif kind == "undefined":
        i = _content_line(rand, lines)
        m = _KEY_LINE.match(lines[i])
        if not m or not m.group("rest"):
            raise _Skip
        lines[i] = f"{m.group('ind')}{m.group('key')}: *nowhere"
        desc = f"line {i + 1}: value replaced by an alias of an undefined anchor"
    else:
        keyed = [i for i, ln in enumerate(lines) if (m := _KEY_LINE.match(ln)) and m.group("rest")
                 and not m.group("rest").startswith(("|", ">", "#", "&", "*"))]
        if len(keyed) < 2:
            raise _Skip
        i, j = sorted(rand.sample(keyed, 2))
        mi, mj = _KEY_LINE.match(lines[i]), _KEY_LINE.match(lines[j])
        assert mi and mj
        lines[i] = f"{mi.group('ind')}{mi.group('key')}: &fz {mi.group('rest')}"
        if kind == "merge":
            lines.insert(j, f"{mj.group('ind')}<<: *fz")
            desc = f"anchor line {i + 1}'s value and merge it (<<) before line {j + 1}"
        else:
            lines[j] = f"{mj.group('ind')}{mj.group('key')}: *fz"
            desc = f"anchor line {i + 1}'s value and alias it at line {j + 1}"
    _put(files, path, lines)
    return f"{path}: yaml: {desc}"


def _text_bytes(rand: random.Random, src: Source, path: str, files: dict[str, bytes]) -> str:
    data = files[path]
    junk = rand.choice((b"\xff\xfe", b"\xe9", b"\xc3(", b"\x00", b"\xef\xbb\xbf", b"\xed\xa0\x80"))
    at = rand.randrange(len(data))
    files[path] = data[:at] + junk + data[at:]
    return f"{path}: bytes: insert {junk!r} at byte {at}"


# ---------------------------------------------------------------- structure
def _rt() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.width = 1 << 16
    y.preserve_quotes = True
    return y


def _nodes(node: Any, path: tuple[Any, ...] = ()) -> Iterable[tuple[tuple[Any, ...], Any]]:
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _nodes(v, (*path, i))


def _structure(rand: random.Random, src: Source, path: str, files: dict[str, bytes]) -> str:
    y = _rt()
    data = y.load(files[path].decode("utf-8"))
    if not isinstance(data, dict) or not data:
        raise _Skip
    kind = rand.choice(("drop", "type", "rename", "duplicate", "remove", "number", "number", "string",
                        "newline-name"))
    nodes = list(_nodes(data))
    desc = _edit(rand, src, path, files, data, nodes, kind)
    out = io.StringIO()
    y.dump(data, out)
    # Python will not print a 5,000-digit int, so the dump holds a marker the digits replace.
    files[path] = out.getvalue().replace(_HUGE, "9" * 5000).encode("utf-8")
    return f"{path}: structure: {desc}"


def _where(p: tuple[Any, ...]) -> str:
    return "/".join(str(x) for x in p) or "(top)"


def _entries(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s, k) for s in SECTIONS if isinstance(data.get(s), dict) for k in data[s]]


def _edit(rand: random.Random, src: Source, path: str, files: dict[str, bytes], data: dict[str, Any],
          nodes: list[tuple[tuple[Any, ...], Any]], kind: str) -> str:
    maps = [(p, n) for p, n in nodes if isinstance(n, dict) and n]
    if kind == "drop":
        p, n = rand.choice(maps)
        k = rand.choice(list(n))
        del n[k]
        return f"drop key {_where((*p, k))}"
    if kind == "type":
        p, n = rand.choice(maps)
        k = rand.choice(list(n))
        old = n[k]
        new: Any = rand.choice([7, "seven", True, None, [], {}, [1, 2], {"a": 1}, 2.5])
        if type(new) is type(old):
            new = "changed" if not isinstance(old, str) else 3
        n[k] = new
        return f"{_where((*p, k))}: {type(old).__name__} replaced by {new!r}"
    entries = _entries(data)
    if kind in ("rename", "duplicate", "remove", "newline-name") and not entries:
        raise _Skip
    if kind == "rename":
        s, k = rand.choice(entries)
        new_key = rand.choice([n for n in (k + "_x", k[:-1], k.upper(), "x" * 300, "é" + k, "if", "players")
                               if n != k])
        _rename(data[s], k, new_key)
        return f"rename {s}/{k} to {new_key!r}"
    if kind == "newline-name":
        s, k = rand.choice(entries)
        _rename(data[s], k, k + "\n")
        return f"rename {s}/{k} to {k!r} + a newline"
    if kind == "remove":
        s, k = rand.choice(entries)
        del data[s][k]
        return f"remove {s}/{k}"
    if kind == "duplicate":
        s, k = rand.choice(entries)
        others = [p for p in src.yaml_files if p != path and p != MANIFEST]
        if not others:
            raise _Skip
        other = rand.choice(others)
        y = _rt()
        odata = y.load(files[other].decode("utf-8"))
        if not isinstance(odata, dict):
            raise _Skip
        odata.setdefault(s, {})
        if not isinstance(odata[s], dict):
            raise _Skip
        odata[s][k] = data[s][k]
        out = io.StringIO()
        y.dump(odata, out)
        files[other] = out.getvalue().encode("utf-8")
        return f"copy {s}/{k} into {other} (a duplicate id)"
    if kind == "number":
        nums = [(p, n) for p, n in nodes if isinstance(n, int) and not isinstance(n, bool) and p]
        if not nums:
            raise _Skip
        p, old_number = rand.choice(nums)
        value: Any = rand.choice([v for v in (0, -1, 10 ** 20, 10 ** 40, _HUGE, 1.5, 1e308, -(10 ** 19))
                                  if v != old_number])
        _set(data, p, value)
        shown = "a 5000-digit number" if value == _HUGE else repr(value)
        return f"{_where(p)}: number replaced by {shown}"
    strs = [(p, n) for p, n in nodes if isinstance(n, str) and p]
    if not strs:
        raise _Skip
    p, _s = rand.choice(strs)
    size = rand.choice((10_000, 100_000, 1_000_000))
    _set(data, p, "x" * size)
    return f"{_where(p)}: string replaced by {size:,} characters"


def _rename(section: Any, old: str, new: str) -> None:
    items = list(section.items())
    section.clear()
    for k, v in items:
        section[new if k == old else k] = v


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    node = data
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


# ---------------------------------------------------------------- rules language
def _dsl(rand: random.Random, src: Source, path: str, files: dict[str, bytes]) -> str:
    kind = rand.choice(_DSL_KINDS)
    # rules texts are the point here, whichever file was drawn; a kind that needs a statement
    # (a roll, a call) looks for a line holding one
    need = _NEEDS.get(kind)
    places = [(p, i) for p in src.yaml_files for i in src.dsl_lines.get(p, [])
              if need is None or need.search(src.files[p].decode("utf-8").split("\n")[i])]
    if not places:
        raise _Skip
    mine = [pl for pl in places if pl[0] == path]
    for _try in range(10):  # a kind may find nothing to act on in one line (no operator, no number)
        path, i = rand.choice(mine or places)
        lines = _lines(files, path)
        line = lines[i]
        if kind == "nest" and i in src.statements[path] and rand.random() < 0.4:
            depth = rand.choice((100, 500, 2000))
            body = line.lstrip(" ")
            lines[i] = line[:len(line) - len(body)] + "if true then " * depth + body + " end" * depth
            _put(files, path, lines)
            return f"{path}:{i + 1}: rules: nest the statement {depth} deep (if true then ... end)"
        quoted = _in_double_quotes(line)
        start = _value_start(line, i in _inline(src, path, lines))
        spans = [(m.start(), m.end(), m.group()) for m in TOKEN.finditer(line)
                 if m.start() >= start and not (quoted and m.group().startswith('"'))]
        try:
            new, desc = _dsl_edit(rand, src, line, spans, kind, quoted) if spans else _skip()
        except _Skip:
            continue
        lines[i] = new
        _put(files, path, lines)
        return f"{path}:{i + 1}: rules: {desc}"
    raise _Skip


def _skip() -> tuple[str, str]:
    raise _Skip


_NEEDS = {"dice": re.compile(r"\broll\b.*\b(die|dice)\b"), "call": re.compile(r"\bcall [a-z_]")}
_DSL_KINDS = ("delete", "duplicate", "operator", "name", "number", "dice", "nest", "nest", "call", "field", "sum",
              "string")


def _inline(src: Source, path: str, lines: list[str]) -> set[int]:
    return {i for i in src.dsl_lines.get(path, []) if (m := _KEY_LINE.match(lines[i])) and m.group("key") in DSL_KEYS
            and not m.group("rest").startswith(("|", ">"))}


def _value_start(line: str, inline: bool) -> int:
    if not inline:
        return 0
    m = _KEY_LINE.match(line)
    return m.start("rest") if m else 0


def _in_double_quotes(line: str) -> bool:
    m = _KEY_LINE.match(line)
    return bool(m and m.group("rest").startswith('"'))


def _dsl_edit(rand: random.Random, src: Source, line: str, spans: list[tuple[int, int, str]], kind: str,
              quoted: bool) -> tuple[str, str]:
    def at(span: tuple[int, int, str], text: str) -> str:
        return line[:span[0]] + text + line[span[1]:]

    def pick(pred: Callable[[str], bool]) -> tuple[int, int, str]:
        chosen = [s for s in spans if pred(s[2])]
        if not chosen:
            raise _Skip
        return rand.choice(chosen)

    is_name = lambda t: t[0].isalpha() or t[0] == "_"  # noqa: E731
    if kind == "delete":
        s = rand.choice(spans)
        return at(s, ""), f"delete token {s[2][:30]!r}"
    if kind == "duplicate":
        s = rand.choice(spans)
        return at(s, s[2] + " " + s[2]), f"duplicate token {s[2][:30]!r}"
    if kind == "operator":
        s = pick(lambda t: t in OPERATORS)
        new = rand.choice([o for o in OPERATORS if o != s[2]])
        return at(s, f" {new} "), f"operator {s[2]!r} -> {new!r}"
    if kind == "name":
        s = pick(lambda t: is_name(t) and t not in KEYWORDS)
        new = rand.choice(src.names) if rand.random() < 0.7 else s[2] + "_typo"
        return at(s, new), f"name {s[2]!r} -> {new!r}"
    if kind == "number":
        s = pick(str.isdigit)
        new = rand.choice(BIG)
        return at(s, new), f"number {s[2]} -> {_short(new)}"
    if kind == "dice":
        return _dice(rand, line, spans, at)
    if kind == "nest":
        s = pick(lambda t: t.isdigit() or (is_name(t) and t not in KEYWORDS))
        depth = rand.choice((100, 500, 2000))
        form = rand.choice(("parens", "minus", "abs", "if", "not"))
        wrap = {"parens": ("(" * depth, ")" * depth), "minus": ("- " * depth, ""),
                "abs": ("abs(" * depth, ")" * depth), "not": ("not " * depth, ""),
                "if": ("if true then " * depth, " else 0" * depth)}[form]
        return at(s, wrap[0] + s[2] + wrap[1]), f"nest {s[2][:30]!r} {depth} deep ({form})"
    if kind == "call":
        m = re.search(r"\bcall ([a-z_][a-z0-9_]*)\(", line)
        if not m:
            raise _Skip
        new = rand.choice((m.group(1) + "_gone", m.group(1)[:-1], "main", "setup"))
        return line[:m.start(1)] + new + line[m.end(1):], f"called procedure {m.group(1)!r} -> {new!r}"
    if kind == "field":
        fields = [s for k, s in enumerate(spans) if k > 0 and spans[k - 1][2] == "." and is_name(s[2])]
        if not fields:
            raise _Skip
        s = rand.choice(fields)
        new = rand.choice(src.names) if rand.random() < 0.5 else s[2] + "x"
        return at(s, new), f"field .{s[2]} -> .{new}"
    if kind == "sum":
        s = pick(lambda t: t.isdigit() or (is_name(t) and t not in KEYWORDS))
        terms = rand.choice((500, 5000))
        return at(s, "(" + " + ".join([s[2]] * terms) + ")"), f"{s[2]!r} -> a {terms}-term sum"
    if quoted:
        raise _Skip
    s = pick(lambda t: t.startswith('"'))
    size = rand.choice((10_000, 1_000_000))
    return at(s, '"' + "x" * size + '"'), f"string literal -> {size:,} characters"


def _dice(rand: random.Random, line: str, spans: list[tuple[int, int, str]],
          at: Callable[[tuple[int, int, str], str], str]) -> tuple[str, str]:
    size = rand.choice(("d0", "d1", "d1001", "d99999999999999999999", "d" + "9" * 5000))
    sides = [s for s in spans if re.fullmatch(r"d\d+", s[2])]
    if sides:
        s = rand.choice(sides)
        return at(s, size), f"die size {s[2]} -> {_short(size)}"
    m = re.search(r"\b(die|dice)( as)\b", line)
    if m:
        return line[:m.end(1)] + " " + size + line[m.end(1):], f"{m.group(1)} given size {_short(size)}"
    m = re.search(r"\broll (\S+) dice\b", line)
    if m:
        count = rand.choice(("0", "99999999999", "9" * 5000))
        return line[:m.start(1)] + count + line[m.end(1):], f"dice count {m.group(1)} -> {_short(count)}"
    raise _Skip


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:6]}...({len(text)} characters)"


def _overlay(rand: random.Random, src: Source, path: str, files: dict[str, bytes]) -> str:
    """A patch appended to an overlay: a base rules text mutated, a base entry removed, or a bad path."""
    if not src.base or path == MANIFEST:
        raise _Skip
    base = source(src.base)
    kind = rand.choice(("rules", "rules", "rules", "remove", "path"))
    if kind == "rules":
        where, text = rand.choice(base.texts)
        lines = text.split("\n")
        i = rand.randrange(len(lines))
        spans = [(m.start(), m.end(), m.group()) for m in TOKEN.finditer(lines[i])]
        if not spans:
            raise _Skip
        lines[i], desc = _dsl_edit(rand, base, lines[i], spans, rand.choice(_DSL_KINDS), False)
        patch: dict[str, Any] = {"op": "set", "path": _where(where), "value": "\n".join(lines)}
        desc = f"patch {_where(where)} (line {i + 1} of its text): {desc}"
    elif kind == "remove":
        entries = [(p[0], p[1]) for p, _ in base.texts if p[0] in SECTIONS]
        section, key = rand.choice(entries)
        patch = {"op": "remove", "path": f"{section}/{key}"}
        desc = f"patch: remove {section}/{key}"
    else:
        where, _text = rand.choice(base.texts)
        bad = rand.choice((_where(where) + "/nope", "x" * 5000, "procedures//do", "/".join(["a"] * 500)))
        patch = {"op": "set", "path": bad, "value": 1}
        desc = f"patch a bad path {_short(bad)!r}"
    y = _rt()
    data = y.load(files[path].decode("utf-8")) or {}
    if not isinstance(data, dict) or not isinstance(data.setdefault("patches", []), list):
        raise _Skip
    data["patches"].append({**patch, "source": "fuzz"})
    out = io.StringIO()
    y.dump(data, out)
    files[path] = out.getvalue().encode("utf-8")
    return f"{path}: overlay: {desc}"


_OPERATORS: tuple[Callable[[random.Random, Source, str, dict[str, bytes]], str], ...] = (
    _text_line, _text_line, _text_cut, _text_bracket, _text_alias, _text_bytes,
    _structure, _structure, _structure, _structure,
    _dsl, _dsl, _dsl, _dsl, _dsl, _overlay, _overlay, _overlay,
)
