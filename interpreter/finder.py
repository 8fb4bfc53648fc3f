"""Finding a ruleset and reading its files into one document.

A ruleset is named by a folder, a manifest file, or the name of a bundled (or ``LUDUS_PATH``)
ruleset (:func:`find_ruleset`). :func:`load_document` reads its manifest, first the chain of
rulesets it ``extends``, then its files, each checked against the schema, merged by id and
patched (:mod:`interpreter.overlay`); what one load may read is bounded (:class:`_Reach`,
:data:`MAX_EXTENDS`, :data:`MAX_FILES`, :data:`MAX_LOAD_BYTES`). Building the ``Ruleset`` from
the document is :mod:`interpreter.builder`'s work; :mod:`interpreter.loader` runs the stages.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import loadcache
from .bundled import RULESETS_DIR, SOURCE_ROOT
from .diagnostics import Diagnostic, Loc, LudusError, did_you_mean
from .overlay import apply_patches, merge_document
from .yamlsource import PathKey, SourceMap, load_yaml, unsaved_bytes

MANIFEST = "ruleset.yaml"
ROOT = SOURCE_ROOT


# What one load may read (see docs/security.md): a chain of 'extends' this long at most, this
# many files listed in one manifest, this many bytes of YAML in all (each file also has its own
# cap, yamlsource.MAX_FILE_BYTES).
MAX_EXTENDS = 16
MAX_FILES = 256
MAX_LOAD_BYTES = 8 << 20


def ruleset_dirs() -> list[Path]:
    """Folders searched for bundled rulesets: ``$LUDUS_PATH`` entries, then rulesets/."""
    dirs = [Path(p) for p in os.environ.get("LUDUS_PATH", "").split(os.pathsep) if p]
    dirs.append(RULESETS_DIR)
    return dirs


def bundled_names() -> list[str]:
    """The names of the rulesets in :func:`ruleset_dirs` (folders holding a ruleset.yaml)."""
    names: set[str] = set()
    for d in ruleset_dirs():
        try:
            names.update(p.name for p in d.iterdir() if _is(Path.is_file, p / MANIFEST))
        except (OSError, ValueError):  # a LUDUS_PATH entry that is not a readable folder
            continue
    return sorted(names)


def _is(test: Any, path: Path) -> bool:
    """``test(path)`` (Path.is_file, Path.is_dir), False for a name the system cannot even look up."""
    try:
        return bool(test(path))
    except (OSError, ValueError):  # a name too long, a NUL byte, no permission
        return False


def _manifest_at(c: Path) -> Path | None:
    """The manifest of ``c`` (a folder holding ruleset.yaml, or a .yaml file), resolved."""
    if _is(Path.is_dir, c) and _is(Path.is_file, c / MANIFEST):
        return (c / MANIFEST).resolve()
    if c.suffix in (".yaml", ".yml") and _is(Path.is_file, c):
        return c.resolve()
    return None


def _bundled(spec: str) -> Path | None:
    """The manifest of the bundled (or ``LUDUS_PATH``) ruleset called ``spec``, if there is one."""
    if "/" in spec or os.sep in spec or spec in ("", ".", ".."):
        return None
    for d in ruleset_dirs():
        if _is(Path.is_file, d / spec / MANIFEST):
            return (d / spec / MANIFEST).resolve()
    return None


def _shown(text: str, n: int = 60) -> str:
    """``text`` cut for a message: a hostile file or log may give names of any length."""
    return text if len(text) <= n else text[:n] + "…"


def find_ruleset(spec: str, relative_to: Path | None = None) -> Path:
    """Resolve a ruleset argument (folder, manifest file, or bundled name) to its manifest.

    Any text gives either a manifest or the one "no ruleset" error, never an OSError.
    """
    p = Path(spec)
    candidates = [relative_to / p] if relative_to is not None and not p.is_absolute() else []
    for c in (*candidates, p):
        found = _manifest_at(c)
        if found is not None:
            return found
    found = _bundled(spec)
    if found is not None:
        return found
    names = bundled_names()
    raise LudusError([Diagnostic(Loc(_shown(spec)), f"no ruleset '{_shown(spec)}'",
                                 did_you_mean(spec[:100], names) or
                                 "give a folder holding ruleset.yaml, or one of: " + ", ".join(names))])


# ====================================================================== documents
class Document:
    """A merged ruleset document with positions, plus the manifest chain."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.smap = SourceMap()
        self.manifests: list[tuple[Path, dict[str, Any], SourceMap]] = []
        self.removed: dict[PathKey, Any] = {}  # (section, id) -> location of the patch that removed it


class _Reach:
    """Where one load may read: the roots ``extends`` may lead into, and the bytes left to read.

    The roots are the bundled and ``LUDUS_PATH`` folders and the *workspace*: the folder that
    holds the folder of the ruleset being loaded (so an overlay may extend a sibling folder).
    """

    def __init__(self, manifest_path: Path) -> None:
        folder = manifest_path.resolve().parent
        workspace = folder.parent if folder.parent != folder else folder
        roots = []
        for d in ruleset_dirs():
            try:
                roots.append(d.resolve())
            except (OSError, RuntimeError):  # RuntimeError: a symlink loop
                continue
        self.roots = (*roots, workspace)
        self.left = MAX_LOAD_BYTES

    def holds(self, path: Path) -> bool:
        return any(path.is_relative_to(r) for r in self.roots)


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is inside ``folder`` once both are resolved (symlinks followed)."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError, RuntimeError):
        return False


def _size(path: Path) -> int:
    """The size of a file in bytes (0 when it cannot be seen: reading it later says why); of the
    text an editor holds for it, if any (what the load will read)."""
    unsaved = unsaved_bytes(path)
    if unsaved is not None:
        return len(unsaved)
    try:
        return path.stat().st_size
    except (OSError, ValueError):
        return 0


def find_ruleset_from(spec: str, folder: Path, reach: _Reach | None = None) -> Path:
    """Resolve an ``extends`` written in the manifest of ``folder``.

    A path relative to ``folder`` (never to the working folder), else the name of a bundled or
    ``LUDUS_PATH`` ruleset. With ``reach``, a target outside its roots is refused before it is
    looked at; the load cache resolves without it, and needs no check: it compares the target
    with the one recorded, and whether that is allowed depends only on the target, the top
    manifest and ``LUDUS_PATH``, which name the cache entry.
    """
    local = folder / spec
    try:
        resolved = local.resolve()
    except (OSError, ValueError, RuntimeError):
        resolved = local
    if reach is not None and not reach.holds(resolved) and _bundled(spec) is None:
        raise _Outside(spec)
    found = _manifest_at(resolved) or _bundled(spec)
    if found is None:
        raise LudusError([Diagnostic(Loc(_shown(spec)), f"no ruleset '{_shown(spec)}'")])
    if reach is not None and not reach.holds(found.parent):
        raise _Outside(spec)
    return found


class _Outside(Exception):
    """An ``extends`` that leads outside the roots a load may read."""


def load_document(manifest_path: Path, diags: list[Diagnostic], seen: tuple[Path, ...] = (),
                  trace: loadcache.Trace | None = None, reach: _Reach | None = None) -> Document:
    """Load a manifest and its files (and, first, the ruleset it extends).

    ``trace``, when given, records what was read (for the load cache). ``reach`` (made for the
    top manifest when not given) bounds what the whole chain may read: ``files`` stay inside
    their ruleset's folder, ``extends`` inside the roots of :class:`_Reach`, at most
    :data:`MAX_EXTENDS` deep, :data:`MAX_FILES` files per manifest, :data:`MAX_LOAD_BYTES` in all.
    """
    from .schemas import validate  # a full load only (and jsonschema only for an invalid document)

    reach = reach or _Reach(manifest_path)
    reach.left -= _size(manifest_path)
    reads = trace.reads if trace is not None else None
    manifest, msmap = load_yaml(manifest_path, missing_hint="give a folder holding ruleset.yaml", reads=reads)
    if not validate("manifest", manifest, msmap, diags) or not isinstance(manifest, dict):
        raise LudusError(diags)  # what follows reads the manifest's values as the schema says
    folder = manifest_path.parent
    doc = Document()
    if manifest.get("extends"):
        spec = str(manifest["extends"])
        loc = msmap.loc(("extends",))
        try:
            parent = find_ruleset_from(spec, folder, reach)
        except _Outside:
            diags.append(Diagnostic(loc, f"extends '{_shown(spec)}', which is outside the folders a ruleset may "
                                    "extend", "name a bundled ruleset, one under LUDUS_PATH, or a folder beside "
                                    "this ruleset's folder"))
            raise LudusError(diags) from None
        except LudusError:
            diags.append(Diagnostic(loc, f"extends unknown ruleset '{_shown(spec)}'",
                                    did_you_mean(spec[:100], bundled_names())))
            raise LudusError(diags) from None
        if parent in seen + (manifest_path,):
            chain = " -> ".join(p.parent.name for p in seen + (manifest_path, parent))
            diags.append(Diagnostic(loc, f"extends cycle: {chain}", "a ruleset cannot extend itself, even indirectly"))
            raise LudusError(diags)
        if len(seen) + 1 >= MAX_EXTENDS:
            diags.append(Diagnostic(loc, f"too many rulesets extend one another (at most {MAX_EXTENDS})",
                                    "extend the base ruleset more directly"))
            raise LudusError(diags)
        if trace is not None:
            trace.extends.append((str(folder), spec, str(parent)))
        doc = load_document(parent, diags, seen + (manifest_path,), trace, reach)
    doc.manifests.append((manifest_path, manifest, msmap))
    files = manifest.get("files") or []
    if len(files) > MAX_FILES:
        diags.append(Diagnostic(msmap.loc(("files",)), f"{len(files)} files listed (at most {MAX_FILES})",
                                "put more into each file"))
        raise LudusError(diags)
    reach.left -= sum(_size(folder / str(name)) for name in files if _inside(folder / str(name), folder))
    if reach.left < 0:  # refused before any of them is read
        diags.append(Diagnostic(msmap.loc(("files",)), f"the ruleset's files hold more than {MAX_LOAD_BYTES:,} "
                                "bytes of YAML in all", "a ruleset and those it extends may hold at most 8 MiB"))
        raise LudusError(diags)
    patches: list[tuple[Any, SourceMap, PathKey]] = []
    for i, name in enumerate(files):
        fpath = folder / str(name)
        if not _inside(fpath, folder):
            diags.append(Diagnostic(msmap.loc(("files", i)), f"file '{_shown(str(name))}' is outside the ruleset's "
                                    "folder", "a ruleset reads only files inside the folder of its ruleset.yaml"))
            continue
        if not _is(Path.is_file, fpath):
            diags.append(Diagnostic(msmap.loc(("files", i)), f"file not found: {_shown(str(name))}",
                                    "check the name in 'files'"))
            continue
        try:
            data, smap = load_yaml(fpath, reads=reads)
        except LudusError as exc:
            diags.extend(exc.diagnostics)
            continue
        if data is None:
            continue
        if not validate("rules", data, smap, diags):
            continue
        merge_document(doc, data, smap, diags)
        if data.get("patches"):
            patches.append((data["patches"], smap, ("patches",)))
    for plist, smap, root in patches:
        apply_patches(doc, plist, smap, root, diags)
        # Keep the applied patches in the document, so docs and `where` can show them.
        applied = doc.data.setdefault("patches", [])
        for i, patch in enumerate(plist):
            doc.smap.graft(smap, root + (i,), ("patches", len(applied)))
            applied.append(patch)
    return doc
