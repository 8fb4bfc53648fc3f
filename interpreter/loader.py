"""Load a ruleset folder: manifest → files → overlays → schema → cross-references → compile.

Every stage reports *all* its problems as located diagnostics; loading stops
only after a stage that found errors (so one typo does not bury the report in
follow-on noise).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from . import loadcache
from .diagnostics import Diagnostic, Loc, LudusError, did_you_mean
from .dsl import types as T
from .dsl.compiler import Compiler
from .dsl.parser import AstMemo, memoized
from .model import (
    LIMITS,
    MAX_INT,
    MAX_LIST,
    PLAYER_KIND,
    RESERVED_FIELDS,
    ActionDef,
    FieldDef,
    FunctionDef,
    GlobalDef,
    KindDef,
    PointDef,
    Procedure,
    Ruleset,
    TableDef,
    ZoneDef,
    type_default,
)
from .overlay import apply_patches, merge_document
from .yamlsource import PathKey, SourceMap, load_yaml

MANIFEST = "ruleset.yaml"
ENGINE_FORMAT = "ludus-1"
ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("kinds", "zones", "globals", "entities", "tables", "functions", "modifier_points",
            "procedures", "actions", "scoring", "patches")
NAMESPACE_SECTIONS = ("entities", "globals", "zones", "tables", "functions", "modifier_points")


# What one load may read (see docs/security.md): a chain of 'extends' this long at most, this
# many files listed in one manifest, this many bytes of YAML in all (each file also has its own
# cap, yamlsource.MAX_FILE_BYTES).
MAX_EXTENDS = 16
MAX_FILES = 256
MAX_LOAD_BYTES = 8 << 20


def ruleset_dirs() -> list[Path]:
    """Folders searched for bundled rulesets: ``$LUDUS_PATH`` entries, then rulesets/."""
    dirs = [Path(p) for p in os.environ.get("LUDUS_PATH", "").split(os.pathsep) if p]
    dirs.append(ROOT / "rulesets")
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
    """The size of a file in bytes (0 when it cannot be seen: reading it later says why)."""
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


# ====================================================================== building
_LAST: loadcache.LoadInfo | None = None


def last_load() -> loadcache.LoadInfo | None:
    """How the most recent :func:`load_ruleset` in this process went (cache hit or miss, time)."""
    return _LAST


def load_ruleset(spec: str | Path, *, cache: bool | None = None) -> Ruleset:
    """Load, check and compile a ruleset; raises :class:`LudusError` with every problem found.

    With the load cache on (the default; ``cache=False`` or ``LUDUS_CACHE=off`` turns it off),
    a ruleset whose files, and the engine, are unchanged since a successful load skips reading
    YAML, schema validation and parsing the rules texts (see :mod:`interpreter.loadcache`).
    """
    # A load makes many small objects and frees few: the cyclic collector, run over and
    # over meanwhile, costs a third of a warm load and finds nothing to free.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load(spec, cache)
    finally:
        if collecting:
            gc.enable()


def _load(spec: str | Path, cache: bool | None) -> Ruleset:
    global _LAST
    start = time.perf_counter()
    manifest_path = find_ruleset(str(spec))
    where = loadcache.cache_dir(cache)
    info = loadcache.LoadInfo(str(manifest_path), "off" if where is None else "miss")
    _LAST = info
    folder = None
    if where is not None:
        folder, info.reason = loadcache.open_folder(where)
        loadcache.STATS["misses"] += folder is None
    if folder is not None:
        hit, info.reason = loadcache.lookup(folder, manifest_path, find_ruleset_from)
        if hit is not None:
            rs = _warm(hit)
            if rs is not None:
                loadcache.STATS["hits"] += 1
                info.cache, info.entry = "hit", str(loadcache.entry_path(folder.path, manifest_path))
                info.seconds = time.perf_counter() - start
                return rs
            info.reason = "the cached ruleset no longer builds"
        loadcache.STATS["misses"] += 1
    rs, trace, snapshot, memo = _cold(manifest_path, record=folder is not None)
    if folder is not None and trace is not None and snapshot is not None and memo is not None:
        written = loadcache.store(folder, manifest_path, trace, snapshot, memo.entries, rs.digest)
        if written is not None:
            loadcache.STATS["writes"] += 1
            info.written, info.entry = True, str(written)
    info.seconds = time.perf_counter() - start
    return rs


def _cold(manifest_path: Path, record: bool) -> tuple[Ruleset, loadcache.Trace | None, bytes | None,
                                                      AstMemo | None]:
    """The full load: every stage, every check."""
    from .schemas import validate
    diags: list[Diagnostic] = []
    trace = loadcache.Trace() if record else None
    doc = load_document(manifest_path, diags, trace=trace)
    if diags:
        raise LudusError(diags)
    validate("rules", doc.data, doc.smap, diags)
    if diags:
        raise LudusError(diags)
    snapshot = _dump_document(doc) if record else None  # before anything later can touch it
    path, manifest, msmap = doc.manifests[-1]
    rs = _new_ruleset(doc, path, manifest)
    _check_players(rs, doc, diags)
    memo = AstMemo() if record else None
    with memoized(memo):
        _Builder(rs, doc, diags).build()
    if diags:
        raise LudusError(diags)
    return rs, trace, snapshot, memo


def _warm(hit: loadcache.Hit) -> Ruleset | None:
    """Build the ruleset from cached parse results; None if that fails (then a full load decides)."""
    diags: list[Diagnostic] = []
    try:
        doc = _restore_document(hit.doc)
        path, manifest, _msmap = doc.manifests[-1]
        rs = _new_ruleset(doc, path, manifest, hit.digest)
        _check_players(rs, doc, diags)
        with memoized(AstMemo(hit.asts)):
            _Builder(rs, doc, diags).build()
    except Exception:  # whatever went wrong, the full load decides (and reports) instead
        return None
    return None if diags else rs


def _dump_document(doc: Document) -> bytes | None:
    """The document as the load cache keeps it (one line of JSON); None if it is not plain data.

    Written at once, so that nothing a later stage does to the document can reach the cache.
    """
    if not all(isinstance(v, Loc) for v in doc.removed.values()):
        return None
    removed = SourceMap()
    removed.values = dict(doc.removed)
    dumped = {
        "data": doc.data,
        "manifests": [[str(p), m, loadcache.smap_to_plain(s.dump())] for p, m, s in doc.manifests],
        "smap": loadcache.smap_to_plain(doc.smap.dump()),
        "removed": loadcache.smap_to_plain(removed.dump()),
    }
    if not (loadcache.is_plain(doc.data) and all(loadcache.is_plain(m) for _p, m, _s in doc.manifests)):
        return None
    return loadcache.json_line(dumped)


def _restore_document(dumped: dict[str, Any]) -> Document:
    """The inverse of :func:`_dump_document`; raises on anything that is not its output."""
    doc = Document()
    data = dumped["data"]
    if not isinstance(data, dict):
        raise loadcache.Corrupt("document")
    doc.data = data
    doc.smap = SourceMap.restore(loadcache.smap_from_plain(dumped["smap"]))
    for p, m, s in dumped["manifests"]:
        if not isinstance(p, str) or not isinstance(m, dict):
            raise loadcache.Corrupt("manifest")
        doc.manifests.append((Path(p), m, SourceMap.restore(loadcache.smap_from_plain(s))))
    if not doc.manifests:
        raise loadcache.Corrupt("manifest")
    doc.removed = dict(SourceMap.restore(loadcache.smap_from_plain(dumped["removed"])).values)
    return doc


def _check_players(rs: Ruleset, doc: Document, diags: list[Diagnostic]) -> None:
    for _path, manifest, msmap in reversed(doc.manifests):
        if "players" in manifest and rs.min_players > rs.max_players:
            diags.append(Diagnostic(msmap.loc(("players", "min")), f"players: min ({rs.min_players}) is more than "
                                    f"max ({rs.max_players})", "write the smaller number as min"))
            return
        if "seats" in manifest and rs.seats and len(rs.seats) < rs.max_players:
            diags.append(Diagnostic(msmap.loc(("seats",)), f"{len(rs.seats)} seats for up to {rs.max_players} players",
                                    "name one seat per player, or lower players: max"))
            return
        if "players" in manifest or "seats" in manifest:
            return


def _new_ruleset(doc: Document, path: Path, manifest: dict[str, Any], digest: str | None = None) -> Ruleset:
    players = manifest.get("players", {})
    merged_manifest = {}
    for _p, m, _s in doc.manifests:
        merged_manifest.update({k: v for k, v in m.items() if k != "files"})
    limits = merged_manifest.get("limits") or {}
    if digest is None:
        digest_src = json.dumps({"engine": ENGINE_FORMAT, "manifest": merged_manifest, "data": doc.data},
                                sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(digest_src.encode("utf-8")).hexdigest()
    players = merged_manifest.get("players", players)
    return Ruleset(
        name=str(manifest["ruleset"]), version=str(manifest.get("version", "0")),
        title=str(merged_manifest.get("title", manifest["ruleset"])),
        min_players=int(players.get("min", 1)), max_players=int(players.get("max", players.get("min", 1))),
        seats=[str(s) for s in merged_manifest.get("seats", [])], folder=str(path.parent),
        digest=digest, data=doc.data, smap=doc.smap,
        step_budget=_limit(doc, limits, "steps"), work_budget=_limit(doc, limits, "work"),
        chain=[str(p) for p, _m, _s in doc.manifests])


def _limit(doc: Document, limits: dict[str, Any], key: str) -> int:
    """The manifest's ``limits: KEY``, or its default; outside model.LIMITS' bounds, a located error.

    The schema says the same; this check does not depend on it (a limit is a safety bound).
    """
    least, default, most = LIMITS[key]
    value = limits.get(key, default)
    if isinstance(value, int) and not isinstance(value, bool) and least <= value <= most:
        return value
    loc = Loc(str(doc.manifests[-1][0]))
    for _p, m, msmap in reversed(doc.manifests):
        if key in (m.get("limits") or {}):
            loc = msmap.loc(("limits", key))
            break
    raise LudusError([Diagnostic(loc, f"limits: {key} must be a whole number from {least:,} to {most:,}",
                                 "no ruleset can raise a limit past its maximum")])


class _Builder:
    """Turns the validated document into model definitions, then compiles every rule text."""

    def __init__(self, rs: Ruleset, doc: Document, diags: list[Diagnostic]) -> None:
        self.rs = rs
        self.doc = doc
        self.data = doc.data
        self.smap = doc.smap
        self.diags = diags
        self.compiler = Compiler(rs, diags)
        self.broken: set[str] = set()  # entities already reported (their kind is unknown)

    def err(self, path: PathKey, message: str, hint: str = "", key: bool = False) -> None:
        self.diags.append(Diagnostic(self.smap.loc(path, key=key), message, hint))

    def section(self, name: str) -> dict[str, Any]:
        value = self.data.get(name) or {}
        return value if isinstance(value, dict) else {}

    def build(self) -> None:
        self.namespace()
        self.kinds()
        self.zones()
        self.globals()
        self.entities()
        self.tables()
        self.signatures()
        if self.diags:
            return
        self.bodies()

    # ------------------------------------------------------------ structure
    def namespace(self) -> None:
        """Bare names in rules must be unambiguous: one id may name one thing."""
        owner: dict[str, tuple[str, str]] = {}
        for sec in NAMESPACE_SECTIONS:
            for eid in self.section(sec):
                if sec == "zones" and (self.section("zones")[eid] or {}).get("per"):
                    continue
                if eid in owner:
                    other_sec, _ = owner[eid]
                    self.err((sec, eid), f"duplicate id '{eid}': it also names one of the {other_sec}",
                             f"see {self.smap.loc((other_sec, eid), key=True)}; rename one", key=True)
                else:
                    owner[eid] = (sec, eid)
        for sec in ("entities", "globals"):
            for eid in self.section(sec):
                if eid in ("players", "player_count", "none", "true", "false", "actor"):
                    self.err((sec, eid), f"'{eid}' is a built-in name and cannot be an id", key=True)

    def type_of(self, path: PathKey, text: Any) -> str:
        t = T.parse_type(str(text), set(self.section("kinds")) | {PLAYER_KIND})
        if t is None:
            known = ["int", "bool", "str", "any", "list", "list of KIND", *self.section("kinds")]
            self.err(path, f"unknown type '{text}'", did_you_mean(str(text), known) or
                     "use int, bool, str, any, a kind name, or 'list of ...'")
            return T.ANY
        return t

    def kinds(self) -> None:
        rs = self.rs
        kinds = dict(self.section("kinds"))
        kinds.setdefault(PLAYER_KIND, {"fields": {}})
        for name, spec in kinds.items():
            spec = spec or {}
            kd = KindDef(name, label=spec.get("label"), source=str(spec.get("source", "")))
            rs.kinds[name] = kd
        for name, spec in kinds.items():
            spec = spec or {}
            kd = rs.kinds[name]
            for fname, fspec in (spec.get("fields") or {}).items():
                path = ("kinds", name, "fields", fname)
                if fname in RESERVED_FIELDS:
                    self.err(path, f"'{fname}' is a built-in field of every entity", "choose another name", key=True)
                    continue
                if isinstance(fspec, dict):
                    ftype = self.type_of(path + ("type",), fspec.get("type", "any"))
                    default = fspec.get("default")
                else:
                    ftype = self.type_of(path, fspec)
                    default = None
                if default is not None:
                    self.check_value(path + ("default",), ftype, default)
                kd.fields[fname] = FieldDef(fname, ftype, default)
            if kd.label and kd.label not in kd.fields:
                self.err(("kinds", name, "label"), f"label field '{kd.label}' is not a field of {name}",
                         did_you_mean(kd.label, kd.fields))

    def zones(self) -> None:
        rs = self.rs
        for name, spec in self.section("zones").items():
            spec = spec or {}
            per = spec.get("per")
            holds = spec.get("holds", "*")
            for key, val in (("per", per), ("holds", holds)):
                if val not in (None, "*") and val not in rs.kinds:
                    self.err(("zones", name, key), f"unknown kind '{val}'", did_you_mean(str(val), rs.kinds))
            vis = spec.get("visibility", "public")
            if vis == "owner" and per != PLAYER_KIND:
                self.err(("zones", name, "visibility"), "only zones 'per: player' can be visible to their owner",
                         "use public or hidden")
            z = ZoneDef(name, per, vis,
                        holds if holds in rs.kinds else "*", str(spec.get("source", "")))
            rs.zones[name] = z
            if per in rs.kinds:
                kd = rs.kinds[per]
                if name in kd.fields:
                    self.err(("zones", name), f"zone '{name}' has the name of a field of {per}", key=True)
                kd.zones[name] = z

    def globals(self) -> None:
        for name, spec in self.section("globals").items():
            path = ("globals", name)
            gtype = self.type_of(path + ("type",), spec.get("type", "any"))
            initial = spec.get("initial")
            if initial is not None:
                self.check_value(path + ("initial",), gtype, initial)
            else:
                initial = type_default(gtype)
            self.rs.globals[name] = GlobalDef(name, gtype, initial)

    def entities(self) -> None:
        rs = self.rs
        specs = self.section("entities")
        # first pass: ids and kinds, so references between entities resolve in any order
        expanded: list[tuple[str, str, dict[str, Any]]] = []
        for eid, spec in specs.items():
            path = ("entities", eid)
            kind = spec.get("kind")
            if kind not in rs.kinds:
                self.err(path + ("kind",), f"unknown kind '{kind}'", did_you_mean(str(kind), rs.kinds))
                self.broken.add(eid)  # known to exist: references to it are not errors too
                continue
            if kind == PLAYER_KIND:
                self.err(path + ("kind",), "players are created by the engine, one per seat",
                         "give player fields defaults in kinds: player")
                continue
            count = spec.get("count")
            if len(expanded) + (1 if count is None else int(count)) > MAX_LIST:
                self.err(path + ("count",), f"more than {MAX_LIST:,} entities in all",
                         "a ruleset may define at most 100,000 entities")
                break
            ids = [eid] if count is None else [f"{eid}_{i}" for i in range(1, int(count) + 1)]
            for one in ids:
                if one in rs.entities:
                    self.err(path, f"duplicate id '{one}' (made by 'count')", key=True)
                rs.entities[one] = {"kind": kind}
                expanded.append((one, eid, spec))
        for one, eid, spec in expanded:
            path = ("entities", eid)
            kd = rs.kinds[spec["kind"]]
            rec = rs.entities[one]
            for key, value in spec.items():
                if key in ("kind", "count", "source", "note", "zone"):
                    continue
                if key not in kd.fields:
                    self.err(path + (key,), f"{kd.name} has no field '{key}'",
                             did_you_mean(key, kd.fields) or f"declare it under kinds: {kd.name}: fields", key=True)
                    continue
                self.check_value(path + (key,), kd.fields[key].type, value)
                rec[key] = value
            if spec.get("zone") is not None:
                zkey = str(spec["zone"])
                if self.zone_key_ok(path + ("zone",), zkey, kd.name):
                    rec["zone"] = zkey

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

    def check_value(self, path: PathKey, type_: str, value: Any) -> None:
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
                    self.check_value(path + (i,), T.arg(type_), item)
        elif T.is_ent(type_):
            kind = T.arg(type_)
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

    def tables(self) -> None:
        for name, spec in self.section("tables").items():
            keys = [str(k) for k in spec.get("keys", ["key"])]
            rows = _expand_ranges(spec.get("rows") or {}, len(keys), self, ("tables", name, "rows"))
            self.rs.tables[name] = TableDef(name, keys, rows, spec.get("default"), "default" in spec)

    # ------------------------------------------------------------ rule texts
    def params(self, path: PathKey, spec: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        for pname, ptype in (spec or {}).items():
            out[pname] = self.type_of(path + (pname,), ptype)
        return out

    def signatures(self) -> None:
        rs = self.rs
        for name, spec in self.section("functions").items():
            path = ("functions", name)
            rs.functions[name] = FunctionDef(name, self.params(path + ("params",), spec.get("params")),
                                             self.type_of(path + ("returns",), spec.get("returns", "any")),
                                             loc=self.smap.loc(path, key=True))
        for name, spec in self.section("modifier_points").items():
            path = ("modifier_points", name)
            rs.points[name] = PointDef(name, self.params(path + ("params",), spec.get("params")),
                                       self.type_of(path + ("type",), spec.get("type", "int")),
                                       loc=self.smap.loc(path, key=True))
        for name, spec in self.section("procedures").items():
            path = ("procedures", name)
            rs.procedures[name] = Procedure(name, self.params(path + ("params",), spec.get("params")),
                                            loc=self.smap.loc(path, key=True))
        if "main" not in rs.procedures:
            _path, _manifest, msmap = self.doc.manifests[-1]  # at the list of files main should be in
            self.diags.append(Diagnostic(msmap.loc(("files",)), "the ruleset has no 'main' procedure",
                                         "add procedures: main: do: ..."))
        for name in ("setup", "main"):
            if name in rs.procedures and rs.procedures[name].params:
                self.err(("procedures", name, "params"), f"'{name}' cannot take parameters")
        for name, spec in self.section("actions").items():
            group = str(spec.get("group", "actions"))
            rs.groups.setdefault(group, []).append(name)
            rs.actions[name] = ActionDef(name, group, [], None,
                                         Procedure("action:" + name, {}, loc=self.smap.loc(("actions", name), key=True)),
                                         loc=self.smap.loc(("actions", name), key=True))

    def text(self, path: PathKey, statements: bool = False) -> tuple[str, Any]:
        """A rules-language text and where it starts (YAML true/false/numbers read as written).

        A folded block ('>') suits a long expression but not statements, whose line breaks matter.
        """
        raw = _get(self.data, path)
        origin = self.smap.text_at(path)
        if statements and origin is not None and origin.folded:
            self.err(path, "rules text cannot be a folded block ('>'): YAML would join its lines",
                     "write '|' instead of '>' to keep each statement on its own line")
            return "pass", origin  # compiling the joined lines would only add misleading errors
        text = ("true" if raw else "false") if isinstance(raw, bool) else ("none" if raw is None else str(raw))
        return text, origin if origin is not None else self.smap.text(path)

    def bodies(self) -> None:
        rs = self.rs
        c = self.compiler
        for name, fdef in rs.functions.items():
            text, origin = self.text(("functions", name, "expr"))
            c.function(fdef, text, origin)
        for name, pdef in rs.points.items():
            text, origin = self.text(("modifier_points", name, "base"))
            c.point(pdef, text, origin)
        for name, proc in rs.procedures.items():
            text, origin = self.text(("procedures", name, "do"), statements=True)
            c.procedure(proc, text, origin, dict(proc.params))
        player = T.ent(PLAYER_KIND)
        for name, action in rs.actions.items():
            spec = self.section("actions")[name]
            domains = [(pname, self.text(("actions", name, "params", pname))) for pname in spec.get("params") or {}]
            cond = self.text(("actions", name, "if")) if "if" in spec else None
            label = self.text(("actions", name, "label")) if "label" in spec else None
            c.action(action, domains, cond, label, self.text(("actions", name, "do"), statements=True))
        scoring = self.data.get("scoring") or {}
        scope = {"p": player}
        if "score" in scoring:
            text, origin = self.text(("scoring", "score"))
            rs.scoring.score, _ = c.expression(text, origin, scope, T.INT, "the score")
        for i, _tb in enumerate(scoring.get("tiebreaks") or []):
            text, origin = self.text(("scoring", "tiebreaks", i))
            fn, _ = c.expression(text, origin, scope, None)
            if fn is not None:
                rs.scoring.tiebreaks.append(fn)
        if "evaluation" in scoring:
            text, origin = self.text(("scoring", "evaluation"))
            rs.scoring.evaluation, _ = c.expression(text, origin, scope, T.INT, "the evaluation")
        if "rounds" in scoring:
            text, origin = self.text(("scoring", "rounds"))
            rs.scoring.rounds, _ = c.expression(text, origin, {}, T.INT, "the number of rounds")
        for mname in scoring.get("metrics") or {}:
            text, origin = self.text(("scoring", "metrics", mname))
            fn, _ = c.expression(text, origin, scope, T.INT, f"the metric '{mname}'")
            if fn is not None:
                rs.scoring.metrics[mname] = fn
        c.check_signals()
        c.finish()


def _get(data: Any, path: PathKey) -> Any:
    for k in path:
        data = data[k]
    return data


MAX_TABLE_ROWS = 100_000  # rows of one table once its ranges are expanded


def _expand_ranges(rows: dict[str, Any], depth: int, b: _Builder, path: PathKey,
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
