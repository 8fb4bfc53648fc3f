"""Load a ruleset folder: manifest → files → overlays → schema → cross-references → compile.

Every stage reports *all* its problems as located diagnostics; loading stops
only after a stage that found errors (so one typo does not bury the report in
follow-on noise). Finding the ruleset and reading its files into one document is
:mod:`interpreter.finder`'s work, building the ``Ruleset`` from it :mod:`interpreter.builder`'s;
this module runs the stages, with the load cache (:mod:`interpreter.loadcache`) in between.
"""

from __future__ import annotations

import gc
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import loadcache
from .builder import NAMESPACE_SECTIONS, RulesetBuilder, RuleTexts
from .diagnostics import Diagnostic, Loc, LudusError, did_you_mean
from .dsl.astmemo import AstMemo, memoized
from .dsl.lazyprocs import Facts, LaterBodies
from .finder import (
    MANIFEST,
    MAX_EXTENDS,
    MAX_FILES,
    MAX_LOAD_BYTES,
    ROOT,
    Document,
    bundled_names,
    find_ruleset,
    find_ruleset_from,
    load_document,
    ruleset_dirs,
)
from .model import LIMITS, UMPIRE, Ruleset
from .overlay import apply_patches
from .yamlcommon import SplicedOrigin
from .yamlsource import SourceMap, has_unsaved

# load_ruleset and last_load, and the names of finding and building that callers import from here.
__all__ = [
    "ENGINE_FORMAT", "MANIFEST", "MAX_EXTENDS", "MAX_FILES", "MAX_LOAD_BYTES", "NAMESPACE_SECTIONS", "ROOT",
    "SECTIONS", "Document", "RuleTexts", "RulesetBuilder", "bundled_names", "find_ruleset", "find_ruleset_from",
    "Checked", "check_ruleset", "last_load", "load_document", "load_ruleset", "ruleset_dirs",
]

ENGINE_FORMAT = "ludus-1"
PRESENTATION_SECTIONS = ("board",)  # left out of the ruleset's digest
SECTIONS = ("kinds", "zones", "globals", "entities", "tables", "functions", "modifier_points",
            "procedures", "actions", "scoring", "patches")


_LAST: loadcache.LoadInfo | None = None


def last_load() -> loadcache.LoadInfo | None:
    """How the most recent :func:`load_ruleset` in this process went (cache hit or miss, time)."""
    return _LAST


def load_ruleset(spec: str | Path, *, cache: bool | None = None, setup: str | None = None) -> Ruleset:
    """Load, check and compile a ruleset; raises :class:`LudusError` with every problem found.

    With the load cache on (the default; ``cache=False`` or ``LUDUS_CACHE=off`` turns it off),
    a ruleset whose files, and the engine, are unchanged since a successful load skips reading
    YAML, schema validation and parsing the rules texts (see :mod:`interpreter.loadcache`).
    ``setup``: apply the patches of that named set-up (the ruleset's ``setups`` section); such
    a load is not cached.
    """
    # A load makes many small objects and frees few: the cyclic collector, run over and
    # over meanwhile, costs a third of a warm load and finds nothing to free.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if setup is not None:
            return _cold(find_ruleset(str(spec)), False, setup)[0]
        return _load(spec, cache)
    finally:
        if collecting:
            gc.enable()


def _load(spec: str | Path, cache: bool | None) -> Ruleset:
    global _LAST
    start = time.perf_counter()
    manifest_path = find_ruleset(str(spec))
    # The cache knows the files on disk: an editor's unsaved texts must be read and checked.
    where = None if has_unsaved() else loadcache.cache_dir(cache)
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
    rs, trace, snapshot, memo, facts = _cold(manifest_path, record=folder is not None)
    if folder is not None and trace is not None and snapshot is not None and memo is not None:
        written = loadcache.store(folder, manifest_path, trace, snapshot, memo.entries, rs.digest,
                                  facts.plain() if facts is not None else None)
        if written is not None:
            loadcache.STATS["writes"] += 1
            info.written, info.entry = True, str(written)
    info.seconds = time.perf_counter() - start
    return rs


def _cold(manifest_path: Path, record: bool, setup: str | None = None) -> tuple[
        Ruleset, loadcache.Trace | None, bytes | None, AstMemo | None, Facts | None]:
    """The full load: every stage, every check."""
    from .schemas import validate
    diags: list[Diagnostic] = []
    trace = loadcache.Trace() if record else None
    doc = load_document(manifest_path, diags, trace=trace)
    if diags:
        raise LudusError(diags)
    if setup is not None:
        _apply_setup(doc, manifest_path, setup, diags)
    validate("rules", doc.data, doc.smap, diags)
    if diags:
        raise LudusError(diags)
    snapshot = _dump_document(doc) if record else None  # before anything later can touch it
    path, manifest, msmap = doc.manifests[-1]
    rs = _new_ruleset(doc, path, manifest)
    rs.setup = setup
    _check_players(rs, doc, diags)
    memo = AstMemo() if record else None
    builder = RulesetBuilder(rs, doc, diags)
    with memoized(memo):
        builder.build()
    if diags:
        raise LudusError(diags)
    return rs, trace, snapshot, memo, builder.compiler.facts


@dataclass
class Checked:
    """What :func:`check_ruleset` found: every diagnostic, and what could be built despite them."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    document: Document | None = None  # the merged document, if the manifests could be read
    ruleset: Ruleset | None = None  # the ruleset, if no check failed
    partial: Ruleset | None = None  # the ruleset as far as it was built (names and types), if it got that far


def check_ruleset(manifest_path: Path, memo: AstMemo | None = None, setup: str | None = None) -> Checked:
    """Run every check of a full load and keep what was built, even when a stage fails.

    For editors: the document (ids and their places) is kept for hover and completion while a
    file has errors. ``memo`` remembers parsed rules texts from one check to the next, so that
    only the texts that changed are parsed again. ``setup``: check the ruleset with that named
    set-up's patches applied (as `ludus validate` does for each). Never uses the load cache's
    entries (the files an editor holds may differ from the disk); never raises :class:`LudusError`.
    """
    from .schemas import validate
    collecting = gc.isenabled()
    gc.disable()
    out = Checked()
    diags = out.diagnostics
    try:
        doc = out.document = load_document(manifest_path, diags)
        if diags:
            return out
        if setup is not None:
            _apply_setup(doc, manifest_path, setup, diags)
        validate("rules", doc.data, doc.smap, diags)
        if diags:
            return out
        path, manifest, _msmap = doc.manifests[-1]
        rs = out.partial = _new_ruleset(doc, path, manifest)
        rs.setup = setup
        _check_players(rs, doc, diags)
        with memoized(memo):
            RulesetBuilder(rs, doc, diags).build()
        if not diags:
            out.ruleset = rs
    except LudusError as exc:
        if exc.diagnostics is not diags:  # a stage may raise the very list it filled
            diags.extend(exc.diagnostics)
    finally:
        if collecting:
            gc.enable()
    return out


def _apply_setup(doc: Document, manifest_path: Path, setup: str, diags: list[Diagnostic]) -> None:
    """Apply the patches of the named set-up to the merged ruleset (refused if unknown)."""
    setups = doc.data.get("setups") or {}
    if not isinstance(setups, dict) or setup not in setups or not isinstance(setups[setup], dict):
        names = sorted(setups) if isinstance(setups, dict) else []
        raise LudusError([Diagnostic(Loc(str(manifest_path)), f"no set-up '{setup[:60]}' in this ruleset",
                                     did_you_mean(setup[:100], names) or
                                     (f"its set-ups: {', '.join(names)}" if names else "it declares no set-ups"))])
    patches = setups[setup].get("patches")
    if isinstance(patches, list):
        apply_patches(doc, patches, doc.smap, ("setups", setup, "patches"), diags)
    if diags:
        raise LudusError(diags)


def _warm(hit: loadcache.Hit) -> Ruleset | None:
    """Build the ruleset from cached parse results; None if that fails (then a full load decides)."""
    diags: list[Diagnostic] = []
    try:
        doc = _restore_document(hit.doc)
        path, manifest, _msmap = doc.manifests[-1]
        rs = _new_ruleset(doc, path, manifest, hit.digest)
        _check_players(rs, doc, diags)
        memo = AstMemo(hit.asts)
        builder = RulesetBuilder(rs, doc, diags)
        if hit.facts is not None:  # the bodies are checked at their first run (dsl/lazyprocs.py)
            builder.compiler.later = LaterBodies(builder.compiler, hit.facts, memo)
        with memoized(memo):
            builder.build()
    except Exception:  # whatever went wrong, the full load decides (and reports) instead
        return None
    return None if diags else rs


def _dump_document(doc: Document) -> bytes | None:
    """The document as the load cache keeps it (one line of JSON); None if it is not plain data.

    Written at once, so that nothing a later stage does to the document can reach the cache.
    """
    if not all(isinstance(v, Loc) for v in doc.removed.values()):
        return None
    if any(isinstance(t, SplicedOrigin) for t in doc.smap.texts.values()):
        return None  # a text patched in part maps to two files: not in the cache's format
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
    if rs.umpire and UMPIRE in rs.seats:
        for _path, manifest, msmap in reversed(doc.manifests):
            if UMPIRE in (manifest.get("seats") or []):
                diags.append(Diagnostic(msmap.loc(("seats", manifest["seats"].index(UMPIRE))),
                                        f"a seat is named '{UMPIRE}', but the ruleset declares the umpire seat",
                                        "rename the seat: 'umpire' is the umpire's seat, never a player's"))
                break
    for _path, manifest, msmap in reversed(doc.manifests):
        if "players" in manifest and rs.min_players > rs.max_players:
            diags.append(Diagnostic(msmap.loc(("players", "min")), f"players: min ({rs.min_players}) is more than "
                                    f"max ({rs.max_players})", "write the smaller number as min"))
            return
        if "players" in manifest and not rs.min_players <= rs.default_players <= rs.max_players:
            diags.append(Diagnostic(msmap.loc(("players", "default")), f"players: default ({rs.default_players}) is "
                                    f"not from {rs.min_players} to {rs.max_players}", "give a count the game allows"))
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
        # The board (how ludus serve draws the game) is presentation, not rules: adding or
        # changing one leaves the digest, and so every saved game and log, valid (docs/board.md).
        rules = {k: v for k, v in doc.data.items() if k not in PRESENTATION_SECTIONS}
        if rules.get("patches"):  # an overlay's patches of the board are presentation too
            rules["patches"] = [p for p in rules["patches"] if not (isinstance(p, dict) and str(
                p.get("path", "")).strip("/").split("/")[0] in PRESENTATION_SECTIONS)]
        digest_src = json.dumps({"engine": ENGINE_FORMAT, "manifest": merged_manifest, "data": rules},
                                sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(digest_src.encode("utf-8")).hexdigest()
    players = merged_manifest.get("players", players)
    return Ruleset(
        name=str(manifest["ruleset"]), version=str(manifest.get("version", "0")),
        title=str(merged_manifest.get("title", manifest["ruleset"])),
        min_players=int(players.get("min", 1)), max_players=int(players.get("max", players.get("min", 1))),
        default_players=int(players.get("default", players.get("min", 1))),
        seats=[str(s) for s in merged_manifest.get("seats", [])], folder=str(path.parent),
        digest=digest, data=doc.data, smap=doc.smap,
        step_budget=_limit(doc, limits, "steps"), work_budget=_limit(doc, limits, "work"),
        chain=[str(p) for p, _m, _s in doc.manifests], umpire=merged_manifest.get("umpire") is True,
        rl_max_actions=(merged_manifest.get("rl") or {}).get("max_actions"))


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

