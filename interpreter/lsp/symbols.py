"""The ids a checked ruleset defines: where each is, what it is, and where it is used.

Built from the loader's merged document (so an overlay's index holds its base's entries too,
each at its place in the base file) and, for types, from the ruleset as far as it was built.
References are found by name in the text of every file of the ruleset's chain: the rules
language has one name space per kind of thing, so a word that spells an id is that id,
except after a dot, where it is a field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics import Loc
from ..dsl import types as T
from ..loader import Checked
from ..model import PLAYER_KIND, RESERVED_FIELDS, Ruleset

# The sections whose entries are named by id, and what an entry of each is called in a hover.
SECTIONS = {
    "kinds": "kind", "enums": "enumeration", "constants": "constant", "zones": "zone", "globals": "global",
    "entities": "entity", "tables": "table", "functions": "function", "modifier_points": "modifier point",
    "procedures": "procedure", "actions": "action", "invariants": "invariant", "status": "status line",
    "setups": "set-up",
}
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_REFERENCES = 5000  # answers to one request stay small whatever a file holds


@dataclass(frozen=True)
class Definition:
    """One named thing: an entry of a section, or a field of a kind (``section`` 'fields')."""

    name: str
    section: str  # a key of SECTIONS, or "fields"
    loc: Loc  # where its name is written
    entry: Any  # its YAML value
    owner: str = ""  # for a field: its kind

    @property
    def what(self) -> str:
        return "field" if self.section == "fields" else SECTIONS[self.section]


def show_type(t: T.Type | None) -> str:
    """A type as an author writes it (``region``, ``list of region``, ``zone of card``)."""
    if t is None:
        return "any"
    if t.tag == "ent":
        return "entity" if T.kind_of(t) == "*" else T.kind_of(t)
    if t.tag == "zone":
        return "zone" if T.kind_of(t) == "*" else f"zone of {T.kind_of(t)}"
    if t.tag in ("list", "map"):
        return f"{t.tag} of {show_type(T.item(t))}"
    return str(t.arg) if t.arg is not None else t.tag


def word_at(line: str, col: int) -> tuple[int, int] | None:
    """The (start, end) columns (0-based) of the identifier at or just before ``col``."""
    for m in WORD.finditer(line):
        if m.start() <= col <= m.end():
            return m.start(), m.end()
    return None


class SymbolIndex:
    """Definitions by name, and each file's entries by line, for one checked ruleset."""

    def __init__(self, checked: Checked, fallback: Ruleset | None = None) -> None:
        self.rs: Ruleset | None = checked.ruleset or checked.partial or fallback
        self.defs: dict[str, list[Definition]] = {}
        self.fields: dict[str, list[Definition]] = {}
        self.by_file: dict[str, list[tuple[int, Definition]]] = {}
        doc = checked.document
        if doc is None:
            return
        keys = doc.smap.keys
        for section in SECTIONS:
            entries = doc.data.get(section)
            if not isinstance(entries, dict):
                continue
            for name, entry in entries.items():
                loc = keys.get((section, name)) or doc.smap.loc((section, name))
                d = Definition(str(name), section, loc, entry)
                self.defs.setdefault(d.name, []).append(d)
                self.by_file.setdefault(loc.file, []).append((loc.line, d))
                if section == "zones" and isinstance(entry, dict) and isinstance(entry.get("per"), str):
                    # read as x.NAME of an entity x of that kind, like a field
                    self.fields.setdefault(d.name, []).append(Definition(d.name, section, loc, entry, entry["per"]))
                if section == "kinds" and isinstance(entry, dict) and isinstance(entry.get("fields"), dict):
                    for fname, fentry in entry["fields"].items():
                        floc = keys.get((section, name, "fields", fname)) or loc
                        self.fields.setdefault(str(fname), []).append(
                            Definition(str(fname), "fields", floc, fentry, owner=str(name)))
        for entries in self.by_file.values():
            entries.sort(key=lambda e: e[0])

    # ------------------------------------------------------------------ lookups
    def entry_at(self, file: str, line: int) -> Definition | None:
        """The entry whose text holds ``line`` (1-based) of ``file``: the last one defined above it."""
        found = None
        for start, d in self.by_file.get(file, []):
            if start > line:
                break
            found = d
        return found

    def fields_of(self, kind: str) -> dict[str, str]:
        """A kind's fields, per-entity zones and procedure fields, each with its type as text."""
        out: dict[str, str] = {"id": "str", "kind": "str", "zone": "zone"}
        kd = self.rs.kinds.get(kind) if self.rs is not None else None
        if kd is not None:
            out.update({f.name: show_type(f.type) for f in kd.fields.values()})
            out.update({p: "procedure" for p in kd.procs})
            out.update({z: f"zone ({zd.visibility})" for z, zd in kd.zones.items()})
            if self.rs is not None:  # zones declared 'per: KIND' are read as x.NAME too
                out.update({z.name: "zone" for z in self.rs.zones.values() if z.per == kind and z.name not in out})
        else:
            out.update({d.name: str(d.entry if not isinstance(d.entry, dict) else d.entry.get("type", "any"))
                        for d in self.fields_named(kind)})
        return out

    def fields_named(self, kind: str) -> Iterator[Definition]:
        for defs in self.fields.values():
            yield from (d for d in defs if d.owner == kind)

    def field_type(self, kind: str, name: str) -> T.Type | None:
        """The type of ``x.name`` for an entity ``x`` of ``kind``."""
        if self.rs is None:
            return None
        kd = self.rs.kinds.get(kind)
        if kd is None:
            return None
        if name in kd.fields:
            return kd.fields[name].type
        if name in kd.zones:
            return T.zone_of(kd.zones[name].holds)
        for z in self.rs.zones.values():
            if z.per == kind and z.name == name:
                return T.zone_of(z.holds)
        return T.STR if name in RESERVED_FIELDS[:2] else None

    def name_type(self, name: str) -> T.Type | None:
        """The type of a bare name that is not a local: an entity, a global, a constant, a zone."""
        rs = self.rs
        if rs is None:
            return None
        if name in rs.entities:
            return T.ent(str(rs.entities[name].get("kind", "*")))
        if name in rs.globals:
            return rs.globals[name].type
        if name in rs.constants:
            return rs.constants[name].type
        if name in rs.zones and rs.zones[name].per is None:
            return T.zone_of(rs.zones[name].holds)
        if name == "players":
            return T.list_of(T.ent(PLAYER_KIND))
        return None

    def call_type(self, name: str) -> T.Type | None:
        """The result type of calling the function or modifier point ``name``."""
        if self.rs is None:
            return None
        if name in self.rs.functions:
            return self.rs.functions[name].returns
        if name in self.rs.points:
            return self.rs.points[name].type
        return None

    def params_of(self, d: Definition) -> dict[str, T.Type]:
        """The parameters (with their types) an entry's rules text sees."""
        rs = self.rs
        if rs is None:
            return {}
        if d.section == "actions" and d.name in rs.actions:
            return {"actor": T.ent(PLAYER_KIND), **{p.name: p.type for p in rs.actions[d.name].params}}
        table: dict[str, Any] = {"functions": rs.functions, "procedures": rs.procedures,
                                 "modifier_points": rs.points}
        found = table.get(d.section, {}).get(d.name)
        if found is not None:
            return dict(found.params)
        if d.section == "status":
            return {"me": T.ent(PLAYER_KIND)}
        return {}

    # ------------------------------------------------------------------ hover
    def describe(self, d: Definition) -> str:
        """Markdown for a hover: what it is, its type, its source and note, where it is defined."""
        head = f"**{d.what}** `{d.name}`"
        detail = self._detail(d)
        lines = [head + (f" — {detail}" if detail else "")]
        entry = d.entry if isinstance(d.entry, dict) else {}
        if d.section == "fields":
            lines[0] = f"**field** `{d.owner}.{d.name}`: {self._field_detail(d)}"
        elif d.owner:
            lines[0] = f"**{d.what}** `{d.owner}.{d.name}`" + (f" — {detail}" if detail else "")
        if "source" in entry:
            lines.append(f"source: `{entry['source']}`")
        if "note" in entry:
            lines.append(f"note: {entry['note']}")
        lines.append(f"defined at {Path(d.loc.file).name}:{d.loc.line}")
        return "\n\n".join(lines)

    def _field_detail(self, d: Definition) -> str:
        t = self.field_type(d.owner, d.name)
        if t is not None:
            return show_type(t)
        return str(d.entry.get("type", "any")) if isinstance(d.entry, dict) else str(d.entry)

    def _detail(self, d: Definition) -> str:
        rs, e = self.rs, d.entry if isinstance(d.entry, dict) else {}
        if rs is None:
            return ""
        if d.section == "functions" and d.name in rs.functions:
            f = rs.functions[d.name]
            return f"`{d.name}({sig(f.params)}) -> {show_type(f.returns)}`"
        if d.section == "modifier_points" and d.name in rs.points:
            p = rs.points[d.name]
            return f"`{d.name}({sig(p.params)}) -> {show_type(p.type)}`"
        if d.section == "procedures" and d.name in rs.procedures:
            return f"`call {d.name}({sig(rs.procedures[d.name].params)})`"
        if d.section == "actions" and d.name in rs.actions:
            a = rs.actions[d.name]
            return f"group `{a.group}`" + (f", params {sig({p.name: p.type for p in a.params})}" if a.params else "")
        if d.section == "globals" and d.name in rs.globals:
            return f"{show_type(rs.globals[d.name].type)}, initially `{rs.globals[d.name].initial!r}`"
        if d.section == "constants" and d.name in rs.constants:
            return show_type(rs.constants[d.name].type)
        if d.section == "tables" and d.name in rs.tables:
            t = rs.tables[d.name]
            return f"keys {', '.join(t.keys)}" + (f" -> {show_type(t.value_type)}" if t.value_type else "")
        if d.section == "zones" and d.name in rs.zones:
            z = rs.zones[d.name]
            return (f"holds {z.holds if z.holds != '*' else 'anything'}, {z.visibility}"
                    + (f", one per {z.per}" if z.per else ""))
        if d.section == "entities":
            return f"a {e.get('kind', '?')}" + (f", {e['count']} of them" if "count" in e else "")
        if d.section == "kinds" and d.name in rs.kinds:
            return "fields " + ", ".join(rs.kinds[d.name].fields) if rs.kinds[d.name].fields else ""
        if d.section == "enums" and d.name in rs.enums:
            return "values " + ", ".join(rs.enums[d.name])
        return ""


def sig(params: dict[str, T.Type]) -> str:
    """Parameters as an author writes them: ``r: region, p: player``."""
    return ", ".join(f"{k}: {show_type(v)}" for k, v in params.items())


def references(name: str, texts: dict[str, str], field: bool | None) -> list[tuple[str, int, int]]:
    """Where ``name`` is written in ``texts`` (file -> text): (file, 0-based line, 0-based col).

    ``field``: True, only after a dot (a field); False, never after a dot (an id); None, both.
    Comments (from a ``#`` that starts a YAML comment) are skipped.
    """
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])")
    out: list[tuple[str, int, int]] = []
    for file, text in texts.items():
        if name not in text:
            continue
        for i, line in enumerate(text.splitlines()):
            if name not in line:
                continue
            code = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
            for m in pattern.finditer(code):
                dotted = m.start() > 0 and code[m.start() - 1] == "."
                if field is None or dotted == field:
                    out.append((file, i, m.start()))
                    if len(out) >= MAX_REFERENCES:
                        return out
    return out
