"""JSON Schema (Draft 2020-12) validation with errors located in the author's file."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from .diagnostics import Diagnostic, did_you_mean
from .yamlsource import SourceMap

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


@cache
def validator(kind: str) -> Draft202012Validator:
    """The validator for one file kind (``manifest``, ``rules``, ``scenario``, ``state``, ``log``)."""
    schema = json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
    # The schemas themselves are checked by the test suite (test_standards), not on every load.
    return Draft202012Validator(schema)


def validate(kind: str, data: Any, smap: SourceMap, diags: list[Diagnostic]) -> bool:
    """Validate ``data``; append located diagnostics; return True when valid."""
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
    where = "/".join(str(p) for p in path) or "the document"
    v = err.validator
    if v == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list((err.schema.get("properties") or {}).keys())
        out = []
        for key in err.instance:
            if key not in allowed and not any(re.match(p, key) for p in err.schema.get("patternProperties", {})):
                out.append(Diagnostic(smap.loc(path + (key,), key=True), f"unknown key '{key}' in {where}",
                                      did_you_mean(key, allowed) or ("allowed: " + ", ".join(allowed) if allowed else "")))
        return out
    if v == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        hint = err.schema.get("description", "") if isinstance(err.schema, dict) else ""
        return [Diagnostic(smap.loc(path), f"missing '{missing}' in {where}", _short(hint))]
    if v == "enum":
        options = [str(o) for o in err.validator_value]
        return [Diagnostic(smap.loc(path), f"'{err.instance}' is not allowed here ({where})",
                           did_you_mean(str(err.instance), options) or "one of: " + ", ".join(options))]
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        return [Diagnostic(smap.loc(path), f"wrong type at {where}: expected {_plain(want)}, got {_show(err.instance)}")]
    if v == "pattern" and err.schema.get("description") == "ids are snake_case" and isinstance(err.instance, str):
        # a propertyNames error: the instance is the key itself
        return [Diagnostic(smap.loc(path + (err.instance,), key=True), f"invalid id '{err.instance}' in {where}",
                           "ids are snake_case: lower-case letters, digits and _")]
    if v == "pattern":
        hint = err.schema.get("description", "") if isinstance(err.schema, dict) else ""
        return [Diagnostic(smap.loc(path), f"'{err.instance}' is not a valid value for {where}", _short(hint))]
    hint = err.schema.get("description", "") if isinstance(err.schema, dict) else ""
    return [Diagnostic(smap.loc(path), f"{where}: {err.message}", _short(hint))]


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
    return repr(value)
