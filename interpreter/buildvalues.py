"""Checking the values a ruleset writes: entity fields, constants and table rows against their
declared types (kinds, enumerations, lists), zone keys, and the ranges of table rows.

A mixin of :class:`interpreter.builder.RulesetBuilder`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .diagnostics import did_you_mean
from .dsl import types as T
from .model import MAX_INT, MAX_LIST, PLAYER_KIND, ConstantDef, Ruleset, TableDef
from .yamlsource import PathKey

if TYPE_CHECKING:
    from .finder import Document


class ValueChecks:
    """Values written in the ruleset, checked against their types (a mixin of RulesetBuilder)."""

    rs: Ruleset
    doc: Document
    broken: set[str]

    if TYPE_CHECKING:
        def err(self, path: PathKey, message: str, hint: str = "", key: bool = False) -> None: ...
        def section(self, name: str) -> dict[str, Any]: ...
        def type_of(self, path: PathKey, text: Any) -> T.Type: ...

    def zone_key_ok(self, path: PathKey, key: str, kind: str) -> bool:
        name, _, owner = key.partition("@")
        z = self.rs.zones.get(name)
        if z is None:
            self.err(path, f"unknown zone '{name}'", did_you_mean(name, self.rs.zones))
            return False
        if z.per is not None and not owner:
            self.err(path, f"zone '{name}' belongs to each {z.per}: write '{name}@<{z.per} id>'")
            return False
        if owner:
            if z.per is None:
                self.err(path, f"zone '{name}' is a single zone; drop '@{owner}'")
                return False
            okind = self.rs.entities.get(owner, {}).get("kind")
            if z.per == PLAYER_KIND and owner in self.rs.seats:
                self.err(path, f"components cannot start in a player's zone ('{key}'): a seat may not be in the game",
                         f"put them in a shared zone and deal them in 'setup' (e.g. draw 3 from deck to p.{name})")
                return False
            if okind != z.per:
                self.err(path, f"'{owner}' is not a {z.per}", did_you_mean(owner, [e for e, r in self.rs.entities.items() if r["kind"] == z.per]))
                return False
        if z.holds != "*" and z.holds != kind:
            self.err(path, f"zone '{name}' holds {z.holds} entities, not {kind}")
            return False
        return True

    def check_value(self, path: PathKey, type_: T.Type, value: Any) -> None:
        """Check a literal YAML value against a field type (references must name the right kind)."""
        if value is None or type_ == T.ANY:
            return
        if type_ == T.INT:
            if isinstance(value, bool) or not isinstance(value, int):
                self.err(path, f"wrong type: expected a whole number, got {value!r}")
            elif abs(value) > MAX_INT:  # the rules' numbers stay within it; so must their data
                self.err(path, f"number out of range: about 2^{abs(value).bit_length() - 1} "
                         f"(whole numbers are at most {MAX_INT:,} either side of 0)")
        elif type_ == T.BOOL:
            if not isinstance(value, bool):
                self.err(path, f"wrong type: expected true or false, got {value!r}")
        elif type_ == T.STR:
            if not isinstance(value, str):
                self.err(path, f"wrong type: expected text, got {value!r}")
        elif T.is_list(type_):
            if not isinstance(value, list):
                self.err(path, f"wrong type: expected a list, got {value!r}")
            elif len(value) > MAX_LIST:
                self.err(path, f"list too long: {len(value):,} items (at most {MAX_LIST:,})")
            else:
                for i, item in enumerate(value):
                    self.check_value(path + (i,), T.item(type_), item)
        elif T.is_enum(type_):
            values = self.rs.enums[str(type_.arg)]
            if not isinstance(value, str) or value not in values:
                shown = ", ".join(values[:8]) + (", …" if len(values) > 8 else "")
                self.err(path, f"unknown {type_.arg} '{value}'", did_you_mean(str(value), values) or
                         f"a {type_.arg} is one of: {shown}")
        elif T.is_ent(type_):
            kind = T.kind_of(type_)
            target = self.rs.entities.get(str(value))
            if target is None:
                if str(value) in self.broken:
                    return
                ids = [e for e, r in self.rs.entities.items() if kind == "*" or r["kind"] == kind]
                removed = self.doc.removed.get(("entities", str(value)))
                hint = f"it was removed by the patch at {removed}" if removed else did_you_mean(str(value), ids)
                self.err(path, f"unknown {kind if kind != '*' else 'entity'} '{value}'", hint)
            elif kind != "*" and target["kind"] != kind:
                self.err(path, f"wrong kind of id: '{value}' is a {target['kind']}, not a {kind}")

    def constants(self) -> None:
        for name, spec in self.section("constants").items():
            path = ("constants", name)
            ctype = self.type_of(path + ("type",), spec.get("type", "any"))
            self.check_value(path + ("value",), ctype, spec.get("value"))
            self.rs.constants[name] = ConstantDef(name, ctype, spec.get("value"))

    def tables(self) -> None:
        for name, spec in self.section("tables").items():
            path = ("tables", name)
            written = spec.get("keys", ["key"])
            keys = [str(k) for k in written]
            # keys: [a, b] names them; keys: {a: TYPE, b: TYPE} types them too (checked like fields)
            key_types = [self.type_of(path + ("keys", k), t) for k, t in written.items()] \
                if isinstance(written, dict) else [T.ANY] * len(keys)
            value_type = self.type_of(path + ("values",), spec["values"]) if "values" in spec else None
            self._check_rows(path + ("rows",), spec.get("rows") or {}, key_types, value_type)
            if value_type is not None and spec.get("default") is not None:
                self.check_value(path + ("default",), value_type, spec["default"])
            rows = _expand_ranges(spec.get("rows") or {}, len(keys), self, path + ("rows",))
            self.rs.tables[name] = TableDef(name, keys, rows, spec.get("default"), "default" in spec,
                                            key_types, value_type)

    def _check_rows(self, path: PathKey, rows: Any, key_types: list[T.Type], value_type: T.Type | None) -> None:
        """The keys and values of a table's rows against the types its 'keys' and 'values' give."""
        if not key_types:
            if value_type is not None:
                self.check_value(path, value_type, rows)
            return
        if not isinstance(rows, dict):
            return
        ktype = key_types[0]
        for key, sub in rows.items():
            if T.is_enum(ktype) and str(key) not in self.rs.enums[str(ktype.arg)]:
                self.err(path + (key,), f"unknown {ktype.arg} '{key}'",
                         did_you_mean(str(key), self.rs.enums[str(ktype.arg)]), key=True)
            elif T.is_ent(ktype) and str(key) not in self.rs.entities:
                self.err(path + (key,), f"unknown {T.kind_of(ktype)} '{key}'",
                         did_you_mean(str(key), self.rs.entities), key=True)
            self._check_rows(path + (key,), sub, key_types[1:], value_type)

    # ------------------------------------------------------------ signatures


MAX_TABLE_ROWS = 100_000  # rows of one table once its ranges are expanded


def _expand_ranges(rows: dict[str, Any], depth: int, b: ValueChecks, path: PathKey,
                   left: list[int] | None = None) -> dict[str, Any]:
    """Row keys like '2-4' stand for 2, 3 and 4 (handy for dice tables).

    ``left`` counts down the rows the whole table may still expand to (MAX_TABLE_ROWS).
    """
    left = [MAX_TABLE_ROWS] if left is None else left
    out: dict[str, Any] = {}
    for key, value in rows.items():
        sub = _expand_ranges(value, depth - 1, b, path + (key,), left) if depth > 1 and isinstance(value, dict) \
            else value
        parts = str(key).split("-")
        # ASCII digits only ('²'.isdigit() holds), and few enough for int()
        if len(parts) == 2 and all(p.strip().isascii() and p.strip().isdigit() and len(p.strip()) <= 18
                                   for p in parts):
            lo, hi = int(parts[0]), int(parts[1])
            if lo > hi:
                b.err(path + (key,), f"empty range '{key}'", "write the smaller number first", key=True)
            left[0] -= max(0, hi - lo + 1)
            if left[0] < 0:
                b.err(path + (key,), f"range '{key}' makes the table longer than {MAX_TABLE_ROWS:,} rows",
                      "a table's ranges may stand for at most 100,000 rows in all", key=True)
                return out
            for k in range(lo, hi + 1):
                if str(k) in out:
                    b.err(path + (key,), f"row {k} appears twice", key=True)
                out[str(k)] = sub
        else:
            if key in out:
                b.err(path + (key,), f"row {key} appears twice", key=True)
            out[str(key)] = sub
    return out
