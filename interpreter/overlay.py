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
from .yamlsource import PathKey, SourceMap

if TYPE_CHECKING:
    from .finder import Document

SINGLE_SECTIONS = ("scoring",)
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
        if op in ("set", "replace"):
            if not found:
                options = list(parent) if isinstance(parent, dict) else []
                diags.append(Diagnostic(loc, f"cannot {op} '{patch.get('path')}': it does not exist",
                                        did_you_mean(last, options) or "use op: add for a new entry"))
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
