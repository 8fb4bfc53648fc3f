"""Merging ruleset files and applying overlay patches by stable ids (never list positions).

A ruleset's files are merged section by section; an id defined twice is an
error. A ruleset that ``extends`` another adds its own entries and then applies
its ``patches`` in order: ``set``/``replace`` an existing value, ``add`` a new
entry (or append to a list with ``-``), ``remove`` an entry, ``merge`` fields
into an entry. Every patch path is ``section/id/...``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .diagnostics import Diagnostic, did_you_mean
from .yamlcommon import SplicedOrigin
from .yamlsource import PathKey, SourceMap

if TYPE_CHECKING:
    from .finder import Document

SINGLE_SECTIONS = ("scoring", "report", "board")
_INDEX = re.compile(r"-?[0-9]{1,18}\Z")  # a list index in a patch path (ASCII digits, the whole step)


def merge_document(doc: Document, data: dict[str, Any], smap: SourceMap, diags: list[Diagnostic]) -> None:
    """Add one file's sections to ``doc``; duplicate ids are reported with both places."""
    for section, entries in data.items():
        if section == "patches" or entries is None:
            continue
        if section in SINGLE_SECTIONS:
            if section in doc.data:
                diags.append(Diagnostic(smap.loc((section,), key=True), f"'{section}' is already defined",
                                        f"at {doc.smap.loc((section,), key=True)}; change it with a patch"))
                continue
            doc.data[section] = entries
            doc.smap.graft(smap, (section,), (section,))
            continue
        target = doc.data.setdefault(section, {})
        if (section,) not in doc.smap.values:
            doc.smap.values[(section,)] = smap.loc((section,))
        for eid, value in entries.items():
            if eid in target:
                diags.append(Diagnostic(smap.loc((section, eid), key=True), f"duplicate id '{eid}' in {section}",
                                        f"first defined at {doc.smap.loc((section, eid), key=True)}; "
                                        "to change it, use a patch"))
                continue
            target[eid] = value
            doc.smap.graft(smap, (section, eid), (section, eid))


def _split(path: str) -> list[str]:
    return [p for p in str(path).strip("/").split("/") if p]


def _step(container: Any, key: str) -> tuple[bool, Any]:
    if isinstance(container, dict):
        return (key in container, container.get(key))
    if isinstance(container, list) and _INDEX.match(key):
        i = int(key)
        return (-len(container) <= i < len(container), container[i] if -len(container) <= i < len(container) else None)
    return (False, None)


def _insert(parent: dict[str, Any], key: str, value: Any, patch: dict[str, Any], smap: SourceMap,
            here: PathKey, diags: list[Diagnostic]) -> bool:
    """Add ``key`` to a mapping: last, or ``before``/``after`` the key the patch names (the order
    of a mapping matters for a procedure's steps)."""
    where = [w for w in ("before", "after") if w in patch]
    if not where:
        parent[key] = value
        return True
    anchor = str(patch[where[0]])
    if len(where) > 1 or anchor not in parent:
        hint = "give one of before/after" if len(where) > 1 else did_you_mean(anchor, parent)
        diags.append(Diagnostic(smap.loc(here + (where[-1],)), f"cannot add '{patch.get('path')}' {where[-1]} "
                                f"'{patch[where[-1]]}'" + ("" if len(where) > 1 else ": no such key"), hint))
        return False
    items = list(parent.items())
    at = [k for k, _ in items].index(anchor) + (where[0] == "after")
    items.insert(at, (key, value))
    parent.clear()
    parent.update(items)
    return True


def _normal(value: Any) -> Any:
    """A value as a guard compares it: a text line by line, without the spaces around each line
    (indentation means nothing in the rules language) and the blank lines around it."""
    if isinstance(value, str):
        return "\n".join(line.strip() for line in value.strip("\n").split("\n"))
    return value


def _expected(doc: Document, smap: SourceMap, here: PathKey, full: PathKey, current: Any, expect: Any,
              diags: list[Diagnostic], what: str = "") -> bool:
    """Whether the base still holds what the patch says it replaces (``expect:``); else a located
    error naming both places."""
    if _normal(current) == _normal(expect):
        return True
    now = str(_normal(current)).split("\n")
    was = str(_normal(expect)).split("\n")
    first = next((i for i, (a, b) in enumerate(zip(now, was, strict=False)) if a != b), min(len(now), len(was)))
    shown = now[first] if first < len(now) else "(the end)"
    diags.append(Diagnostic(
        smap.loc(here + ("expect",)),
        f"the base has changed: {what or 'the value'} at '{'/'.join(map(str, full))}' is not what this patch "
        f"expects (line {first + 1} now reads '{shown.strip()}')",
        f"the value in the base is at {doc.smap.loc(full)}: review that change, then update this patch "
        "and its expect"))
    return False


def _text_lines(spec: Any) -> tuple[int, int] | None:
    """``lines: 12`` or ``lines: "12-13"`` as (first, last), 1-based; None if written otherwise."""
    text = str(spec).strip()
    a, _, b = text.partition("-")
    if not (a.strip().isascii() and a.strip().isdigit() and (not b or (b.strip().isascii() and b.strip().isdigit()))):
        return None
    first, last = int(a), int(b or a)
    return (first, last) if 1 <= first <= last else None


def _text_patch(doc: Document, smap: SourceMap, here: PathKey, full: PathKey, current: Any,
                patch: dict[str, Any], diags: list[Diagnostic]) -> tuple[str, SplicedOrigin] | None:
    """A rules text with some ``lines`` or one ``find`` phrase replaced by the patch's value, and
    its origin: the new part in the overlay, the rest where it was."""
    value = patch.get("value")
    path = patch.get("path")
    if not isinstance(current, str) or not isinstance(value, str):
        diags.append(Diagnostic(smap.loc(here + ("path",)), f"cannot patch part of '{path}': "
                                "'find' and 'lines' change a text, and the value must be a text too"))
        return None
    if "find" in patch and "lines" in patch:
        diags.append(Diagnostic(smap.loc(here + ("lines",)), "give 'find' or 'lines', not both"))
        return None
    base = doc.smap.text(full)
    new = smap.text(here + ("value",))
    if "find" in patch:
        phrase = str(patch["find"])
        n = current.count(phrase) if phrase else 0
        if n != 1:
            diags.append(Diagnostic(smap.loc(here + ("find",)), f"'find' must match exactly once in '{path}': "
                                    f"it matches {n} times", "quote more of the text around it" if n else
                                    f"the text is at {doc.smap.loc(full)}"))
            return None
        i = current.index(phrase)
        head, tail = current[:i], current[i + len(phrase):]
        at = i + len(phrase)
        line, col = current.count("\n", 0, at) + 1, at - current.rfind("\n", 0, at)
        parts = [(head, base, 1, 1), (value, new, 1, 1), (tail, base, line, col)]
        return head + value + tail, SplicedOrigin(parts)
    rows = current.split("\n")
    count = len(rows) - (1 if current.endswith("\n") else 0)
    span = _text_lines(patch["lines"])
    if span is None or span[1] > count:
        diags.append(Diagnostic(smap.loc(here + ("lines",)), f"lines '{patch['lines']}' are not lines of '{path}', "
                                f"which has {count} line(s)", "write one line number, or FIRST-LAST"))
        return None
    first, last = span
    if "expect" in patch and not _expected(doc, smap, here, full, "\n".join(rows[first - 1:last]),
                                           patch["expect"], diags,
                                           f"line {first}" if first == last else f"lines {first}-{last}"):
        return None
    head = "".join(r + "\n" for r in rows[:first - 1])
    middle = value if value.endswith("\n") else value + "\n"
    tail = "\n".join(rows[last:])
    parts = [(head, base, 1, 1), (middle, new, 1, 1), (tail, base, last + 1, 1)]
    return head + middle + tail, SplicedOrigin(parts)


def apply_patches(doc: Document, patches: list[dict[str, Any]], smap: SourceMap, root: PathKey,
                  diags: list[Diagnostic]) -> None:
    """Apply ``patches`` (from the file described by ``smap``) to ``doc`` in order."""
    for i, patch in enumerate(patches):
        here = root + (i,)
        op = patch.get("op")
        keys = _split(patch.get("path", ""))
        loc = smap.loc(here + ("path",))
        if not keys:
            diags.append(Diagnostic(loc, "empty patch path", "write section/id/field"))
            continue
        parent: Any = doc.data
        walked: list[str | int] = []
        ok = True
        for k in keys[:-1]:
            found, child = _step(parent, k)
            if not found:
                options = list(parent) if isinstance(parent, dict) else []
                where = "/".join(str(w) for w in walked) or "the ruleset"
                diags.append(Diagnostic(loc, f"patch path '{patch.get('path')}': no '{k}' in {where}",
                                        did_you_mean(k, options)))
                ok = False
                break
            walked.append(int(k) if isinstance(parent, list) else k)
            parent = child
        if not ok:
            continue
        last = keys[-1]
        found, current = _step(parent, last)
        full: PathKey = tuple(walked) + ((int(last) if isinstance(parent, list) and _INDEX.match(last) else last),)
        value = patch.get("value")
        if found and "expect" in patch and op != "add" and "lines" not in patch \
                and not _expected(doc, smap, here, full, current, patch["expect"], diags):
            continue
        if op in ("set", "replace"):
            if not found:
                options = list(parent) if isinstance(parent, dict) else []
                diags.append(Diagnostic(loc, f"cannot {op} '{patch.get('path')}': it does not exist",
                                        did_you_mean(last, options) or "use op: add for a new entry"))
                continue
            if "find" in patch or "lines" in patch:
                patched = _text_patch(doc, smap, here, full, current, patch, diags)
                if patched is not None:
                    parent[full[-1]], doc.smap.texts[full] = patched
                continue
            parent[full[-1]] = value
            doc.smap.drop(full)
            doc.smap.graft(smap, here + ("value",), full)
        elif op == "add":
            if isinstance(parent, list) and last == "-":
                parent.append(value)
                full = tuple(walked) + (len(parent) - 1,)
            elif isinstance(parent, dict):
                if found:
                    diags.append(Diagnostic(loc, f"cannot add '{patch.get('path')}': it already exists",
                                            "use op: set or replace to change it"))
                    continue
                if not _insert(parent, last, value, patch, smap, here, diags):
                    continue
            else:
                diags.append(Diagnostic(loc, f"cannot add '{patch.get('path')}'", "add into a mapping, or append to a list with '-'"))
                continue
            doc.smap.graft(smap, here + ("value",), full)
        elif op == "remove":
            if not found:
                options = list(parent) if isinstance(parent, dict) else []
                diags.append(Diagnostic(loc, f"cannot remove '{patch.get('path')}': it does not exist",
                                        did_you_mean(last, options)))
                continue
            del parent[full[-1]]
            doc.smap.drop(full)
            doc.removed[full] = loc
        elif op == "merge":
            if not found or not isinstance(current, dict) or not isinstance(value, dict):
                diags.append(Diagnostic(loc, f"cannot merge into '{patch.get('path')}'",
                                        "merge needs an existing mapping and a mapping value"))
                continue
            for k, v in value.items():
                current[k] = v
                doc.smap.drop(full + (k,))
                doc.smap.graft(smap, here + ("value", k), full + (k,))
