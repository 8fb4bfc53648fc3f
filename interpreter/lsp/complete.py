"""Completion inside rules text: ids, fields after ``x.``, locals, builtins and keywords.

What ``x`` is in ``x.`` is worked out the way an author reads the text, not by compiling it
(a text being typed rarely parses): a parameter of the entry, a name bound earlier in its text
(``for x in …``, ``let x = …``, ``choose x from …``, ``as x``), or an id of the ruleset; the
type of what it is bound to comes from the checked ruleset (``every KIND``, a function's
result, a zone's kind, a field's type, a list's items).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..dsl import types as T
from ..dsl.builtins import BUILTINS
from ..dsl.expressions import BUILTIN_NAMES
from .symbols import SECTIONS, SymbolIndex, show_type

# The rules language's keywords (dsl/grammar.lark), offered in rules text.
KEYWORDS = (
    "and", "as", "ask", "bonus", "break", "by", "call", "called", "choose", "commit", "consume", "create", "decrease",
    "destroy", "dice", "die", "do", "draw", "each", "elif", "else", "end", "every", "for", "from", "game", "if",
    "in", "increase", "label", "let", "log", "modify", "move", "not", "of", "on", "once", "or", "over", "pass",
    "prompt", "repeat", "return", "roll", "secretly", "set", "shuffle", "signal", "then", "to", "top", "until",
    "when", "where", "while", "with",
)
_MEMBER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.([A-Za-z_][A-Za-z0-9_]*)?$")
_BINDERS = (
    r"\bfor\s+(?:each\s+)?{n}\s+in\s+(?P<src>[^\n]+)",
    r"\blet\s+{n}\s*=\s*(?P<src>[^\n]+)",
    r"\bchoose\s+(?:secretly\s+)?{n}\s+from\s+(?P<src>[^\n]+)",
)
MAX_DEPTH = 8  # how many bindings one name is followed through (a = b.c, b = d ...)


@dataclass(frozen=True)
class Item:
    """One completion: its text, what it is (for the editor's icon), and a detail line."""

    label: str
    what: str  # 'field', 'local', 'keyword', 'builtin', or a SECTIONS value
    detail: str = ""


def complete(index: SymbolIndex, before: str, entry_text: str, params: dict[str, T.Type]) -> list[Item]:
    """The completions at a cursor: ``before`` is its line up to it, ``entry_text`` the text of
    its entry up to it (for the names bound so far), ``params`` what the entry's text sees."""
    m = _MEMBER.search(before)
    if m is not None:
        t = resolve(index, m.group(1), entry_text, params)
        kind = T.kind_of(t) if t is not None and t.tag == "ent" else None
        if kind is None or kind == "*":
            return []  # not an entity of a known kind: nothing certain to offer
        return [Item(name, "field", f"{kind}.{name}: {typ}") for name, typ in index.fields_of(kind).items()]
    items: list[Item] = [Item(n, "local", show_type(t)) for n, t in params.items()]
    items += [Item(n, "local", "bound in this text") for n in _bound_names(entry_text) if n not in params]
    for name, defs in index.defs.items():
        items.append(Item(name, defs[0].what, _source(defs[0].entry)))
    if index.rs is not None:
        named = set(index.defs)
        items += [Item(e, "entity", f"a {v.get('kind', '?')}") for e, v in index.rs.entities.items() if e not in named]
    items += [Item(n, "builtin", b.doc.split(";")[0][:80] or b.signature) for n, b in BUILTINS.items()]
    items += [Item(n, "builtin", show_type(t)) for n, t in BUILTIN_NAMES.items()]
    if index.rs is not None and index.rs.umpire:
        items.append(Item("umpire", "builtin", "the umpire seat (by umpire)"))
    items += [Item(k, "keyword") for k in KEYWORDS]
    seen: set[str] = set()
    return [i for i in items if not (i.label in seen or seen.add(i.label))]  # type: ignore[func-returns-value]


def _source(entry: object) -> str:
    return f"source: {entry.get('source')}" if isinstance(entry, dict) and "source" in entry else ""


def _bound_names(text: str) -> list[str]:
    names = re.findall(r"\b(?:for\s+(?:each\s+)?|let\s+|choose\s+(?:secretly\s+)?|as\s+)([A-Za-z_][A-Za-z0-9_]*)", text)
    return [n for n in dict.fromkeys(names) if n not in KEYWORDS]


def resolve(index: SymbolIndex, dotted: str, text: str, params: dict[str, T.Type], depth: int = 0) -> T.Type | None:
    """The type of ``a.b.c`` at the end of ``text``, as far as it can be known (None: not known)."""
    head, *rest = dotted.split(".")
    t = _name_type(index, head, text, params, depth)
    for name in rest:
        if t is None or t.tag != "ent":
            return None
        t = index.field_type(T.kind_of(t), name)
    return t


def _name_type(index: SymbolIndex, name: str, text: str, params: dict[str, T.Type], depth: int) -> T.Type | None:
    best: tuple[int, str] | None = None  # the binding nearest the cursor wins (the innermost, usually)
    for pattern in _BINDERS:
        for m in re.finditer(pattern.format(n=re.escape(name)), text):
            if best is None or m.start() > best[0]:
                best = (m.start(), pattern)
    if best is not None and depth < MAX_DEPTH:
        bound = re.compile(best[1].format(n=re.escape(name))).match(text, best[0])
        if bound is not None:
            src = bound.group("src")
            t = expr_type(index, src, text[:best[0]], params, depth + 1)
            iterates = best[1].startswith((r"\bfor", r"\bchoose"))  # the name is one item of what follows
            return T.element(t) if t is not None and iterates else t
    if name in params:
        return params[name]
    return index.name_type(name)


def expr_type(index: SymbolIndex, src: str, text: str, params: dict[str, T.Type], depth: int) -> T.Type | None:
    """The type of the start of an expression: enough of it to know what it gives."""
    src = src.strip()
    m = re.match(r"every\s+([A-Za-z_]\w*)", src)
    if m is not None:
        return T.list_of(T.ent(m.group(1)))
    m = re.match(r"(?:\d+|\w+)\s*\.\.", src)
    if m is not None:
        return T.list_of(T.INT)
    m = re.match(r"\[\s*([A-Za-z_]\w*)\s+for\s+\1\s+in\s+(.+)", src)
    if m is not None:  # [x for x in L ...]: the items of L
        inner = expr_type(index, m.group(2), text, params, depth + 1)
        return T.list_of(T.element(inner)) if inner is not None else None
    m = re.match(r"([A-Za-z_]\w*)\s*\(", src)
    if m is not None:
        return index.call_type(m.group(1))
    m = re.match(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)", src)
    if m is not None and m.group(1) not in SECTIONS:
        return resolve(index, m.group(1), text, params, depth)
    return None
