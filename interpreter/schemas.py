"""JSON Schema (Draft 2020-12) validation with errors located in the author's file."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from .bundled import SCHEMA_DIR
from .diagnostics import Diagnostic, did_you_mean
from .yamlsource import SourceMap

# jsonschema is imported only when a document is not valid (or by a caller of validator()):
# importing it costs more than checking a whole ruleset with the checks compiled below.
if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError



@cache
def schema(kind: str) -> Any:
    """The JSON Schema of one file kind (``manifest``, ``rules``, ``scenario``, ``state``, ``log``)."""
    return json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))


@cache
def validator(kind: str) -> Draft202012Validator:
    """The jsonschema validator for one file kind (see :func:`schema`)."""
    from jsonschema import Draft202012Validator

    # The schemas themselves are checked by the test suite (test_standards), not on every load.
    return Draft202012Validator(schema(kind))


def validate(kind: str, data: Any, smap: SourceMap, diags: list[Diagnostic]) -> bool:
    """Validate ``data``; append located diagnostics; return True when valid.

    A valid document is recognised by :func:`is_valid`; only an invalid one goes through
    jsonschema, whose errors are explained with their locations.
    """
    if is_valid(kind, data):
        return True
    before = len(diags)
    for err in sorted(validator(kind).iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        diags.extend(_explain(err, smap))
    return len(diags) == before


def _leaf(err: ValidationError) -> ValidationError:
    """For oneOf/anyOf, the most specific sub-error reads best."""
    if err.context:
        deepest = max(err.context, key=lambda e: (len(e.absolute_path), -len(e.context or [])))
        if len(deepest.absolute_path) > len(err.absolute_path) or err.validator in ("anyOf", "oneOf"):
            return _leaf(deepest)
    return err


def _explain(err: ValidationError, smap: SourceMap) -> list[Diagnostic]:
    err = _leaf(err)
    path = tuple(err.absolute_path)
    where = _quote("/".join(str(p) for p in path), 120)[1:-1] or "the document"
    v = err.validator
    if v == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list((err.schema.get("properties") or {}).keys())
        out = []
        for key in err.instance:
            if key not in allowed and not any(re.search(p, key) for p in err.schema.get("patternProperties", {})):
                out.append(Diagnostic(smap.loc(path + (key,), key=True), f"unknown key {_quote(key)} in {where}",
                                      did_you_mean(key, allowed) or ("allowed: " + ", ".join(allowed) if allowed else "")))
        return out
    if v == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        hint = err.schema.get("description", "") if isinstance(err.schema, dict) else ""
        return [Diagnostic(smap.loc(path), f"missing '{missing}' in {where}", _short(hint))]
    if v == "enum":
        options = [str(o) for o in err.validator_value]
        return [Diagnostic(smap.loc(path), f"{_quote(str(err.instance))} is not allowed here ({where})",
                           did_you_mean(str(err.instance), options) or "one of: " + ", ".join(options))]
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        return [Diagnostic(smap.loc(path), f"wrong type at {where}: expected {_plain(want)}, got {_show(err.instance)}")]
    if v == "pattern" and "propertyNames" in err.schema_path and isinstance(err.instance, str):
        # the instance is a key of the mapping at ``path``
        what = "id" if err.schema.get("description") == "ids are snake_case" else "name"
        return [Diagnostic(smap.loc(path + (err.instance,), key=True), f"invalid {what} {_quote(err.instance)} in {where}",
                           f"{what}s are snake_case: lower-case letters, digits and _")]
    if v == "pattern":
        hint = err.schema.get("description", "") if isinstance(err.schema, dict) else ""
        return [Diagnostic(smap.loc(path), f"{_quote(str(err.instance))} is not a valid value for {where}", _short(hint))]
    if v in ("maxLength", "maxItems") and isinstance(err.instance, (str, list)):
        what = "characters" if isinstance(err.instance, str) else "items"
        return [Diagnostic(smap.loc(path), f"{where} is too long: {len(err.instance):,} {what} "
                           f"(at most {err.validator_value:,})")]
    hint = err.schema.get("description", "") if isinstance(err.schema, dict) else ""
    message = err.message if len(err.message) <= 200 else err.message[:200] + "…"  # it shows the value
    return [Diagnostic(smap.loc(path), f"{where}: {message}", _short(hint))]


def _quote(text: str, n: int = 60) -> str:
    """``text`` in quotes for a message: control characters escaped (a name may hide a newline), cut to ``n``."""
    shown = text if text.isprintable() else repr(text)[1:-1]
    return f"'{shown if len(shown) <= n else shown[:n] + '…'}'"


def _short(text: str) -> str:
    return text.split(". ")[0].rstrip(".") if text else ""


def _plain(t: str) -> str:
    return {"object": "a mapping", "array": "a list", "string": "text", "integer": "a whole number",
            "boolean": "true or false", "number": "a number", "null": "nothing"}.get(t, t)


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:60] + "…"


# ---------------------------------------------------------------- fast validity check
# The schemas use a small part of Draft 2020-12. Each is compiled once into nested closures that
# only answer "valid or not", with jsonschema's meaning of every keyword they use (its types, its
# equality, re.search for patterns). A schema with any other keyword is not compiled: its
# documents always go through jsonschema. A wrong "invalid" would only cost time (jsonschema then
# finds no error); a wrong "valid" would hide errors, so the test suite compares the two answers.

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default", "examples",
                          "deprecated", "readOnly", "writeOnly", "format"})  # format: not asserted


class _Unknown(Exception):
    """A keyword the compiled check does not implement."""


def _is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None, "integer": _is_int, "number": _is_num,
}


def _equal(one: Any, two: Any) -> bool:
    """jsonschema's equality: True is not 1, lists and mappings compare item by item."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return bool(one == two)


@cache
def _compiled(kind: str) -> Check | None:
    try:
        return _compile(schema(kind))
    except _Unknown:
        return None


def is_valid(kind: str, data: Any) -> bool:
    """Whether ``data`` is valid for the schema of ``kind`` (False when not sure: jsonschema decides)."""
    check = _compiled(kind)
    return check is not None and check(data)


def _compile(s: Any) -> Check:
    """One schema as a predicate; raises :class:`_Unknown` for a keyword not implemented here."""
    if s is True or s == {}:
        return lambda v: True
    if s is False:
        return lambda v: False
    if not isinstance(s, dict):
        raise _Unknown(s)
    checks: list[Check] = []
    for key, arg in s.items():
        if key in _ANNOTATIONS or key in ("then", "else"):
            continue  # then and else go with if
        make = _KEYWORDS.get(key)
        if make is None:
            raise _Unknown(key)
        checks.append(make(arg, s))
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)


def _type(arg: Any, s: dict[str, Any]) -> Check:
    names = [arg] if isinstance(arg, str) else list(arg)
    if any(n not in _TYPES for n in names):
        raise _Unknown(arg)
    tests = [_TYPES[n] for n in names]
    return tests[0] if len(tests) == 1 else lambda v: any(t(v) for t in tests)


def _properties(arg: Any, s: dict[str, Any]) -> Check:
    props = {name: _compile(sub) for name, sub in arg.items()}

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        return all(c(v[k]) for k, c in props.items() if k in v)
    return check


def _additional(arg: Any, s: dict[str, Any]) -> Check:
    known = set(s.get("properties") or {})
    patterns = [re.compile(p) for p in s.get("patternProperties") or {}]
    extra = _compile(arg)
    never = arg is False

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for k, item in v.items():
            if k in known or any(p.search(k) for p in patterns):
                continue
            if never or not extra(item):
                return False
        return True
    return check


def _pattern_properties(arg: Any, s: dict[str, Any]) -> Check:
    patterns = [(re.compile(p), _compile(sub)) for p, sub in arg.items()]

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        return all(c(item) for k, item in v.items() for p, c in patterns if p.search(k))
    return check


def _required(arg: Any, s: dict[str, Any]) -> Check:
    names = list(arg)
    return lambda v: not isinstance(v, dict) or all(n in v for n in names)


def _property_names(arg: Any, s: dict[str, Any]) -> Check:
    sub = _compile(arg)
    return lambda v: not isinstance(v, dict) or all(sub(k) for k in v)


def _pattern(arg: Any, s: dict[str, Any]) -> Check:
    rx = re.compile(arg)
    return lambda v: not isinstance(v, str) or rx.search(v) is not None


def _const(arg: Any, s: dict[str, Any]) -> Check:
    return lambda v: _equal(v, arg)


def _enum(arg: Any, s: dict[str, Any]) -> Check:
    options = list(arg)
    return lambda v: any(_equal(v, o) for o in options)


def _items(arg: Any, s: dict[str, Any]) -> Check:
    if "prefixItems" in s:
        raise _Unknown("prefixItems")
    sub = _compile(arg)
    return lambda v: not isinstance(v, list) or all(sub(item) for item in v)


def _min_items(arg: Any, s: dict[str, Any]) -> Check:
    return lambda v: not isinstance(v, list) or len(v) >= arg


def _max_items(arg: Any, s: dict[str, Any]) -> Check:
    return lambda v: not isinstance(v, list) or len(v) <= arg


def _max_properties(arg: Any, s: dict[str, Any]) -> Check:
    return lambda v: not isinstance(v, dict) or len(v) <= arg


def _unique(arg: Any, s: dict[str, Any]) -> Check:
    if not arg:
        return lambda v: True
    return lambda v: not isinstance(v, list) or not any(
        _equal(a, b) for i, a in enumerate(v) for b in v[i + 1:])


def _minimum(arg: Any, s: dict[str, Any]) -> Check:
    return lambda v: not _is_num(v) or v >= arg


def _maximum(arg: Any, s: dict[str, Any]) -> Check:
    return lambda v: not _is_num(v) or v <= arg


def _max_length(arg: Any, s: dict[str, Any]) -> Check:
    return lambda v: not isinstance(v, str) or len(v) <= arg


def _all_of(arg: Any, s: dict[str, Any]) -> Check:
    subs = [_compile(x) for x in arg]
    return lambda v: all(c(v) for c in subs)


def _any_of(arg: Any, s: dict[str, Any]) -> Check:
    subs = [_compile(x) for x in arg]
    return lambda v: any(c(v) for c in subs)


def _one_of(arg: Any, s: dict[str, Any]) -> Check:
    subs = [_compile(x) for x in arg]
    return lambda v: sum(1 for c in subs if c(v)) == 1


def _not(arg: Any, s: dict[str, Any]) -> Check:
    sub = _compile(arg)
    return lambda v: not sub(v)


def _if(arg: Any, s: dict[str, Any]) -> Check:
    cond = _compile(arg)
    then = _compile(s.get("then", True))
    other = _compile(s.get("else", True))
    return lambda v: then(v) if cond(v) else other(v)


_KEYWORDS: dict[str, Callable[[Any, dict[str, Any]], Check]] = {
    "type": _type, "properties": _properties, "additionalProperties": _additional,
    "patternProperties": _pattern_properties, "required": _required, "propertyNames": _property_names, "pattern": _pattern, "const": _const,
    "enum": _enum, "items": _items, "minItems": _min_items, "maxItems": _max_items,
    "maxProperties": _max_properties,
    "uniqueItems": _unique, "minimum": _minimum, "maximum": _maximum, "maxLength": _max_length, "allOf": _all_of,
    "anyOf": _any_of, "oneOf": _one_of, "not": _not, "if": _if,
}
