"""The load cache: what a cold load of a ruleset parsed, kept on disk for the next process.

A cold load reads YAML (ruamel), validates it against the JSON Schemas, merges overlays
and parses every rules text with Lark; most of its time goes there. None of that depends
on anything but the bytes of the ruleset's files and of the engine code that does it, so
a successful load writes its results to one cache file per manifest:

- the merged document (plain data, source positions, the manifest chain),
- the parsed AST of every rules text,
- the ruleset digest.

A warm load checks the cache file against the current bytes of every file that was read
(SHA-256), the engine fingerprint (the code and schemas of the skipped stages, the grammar,
the Python version) and how each ``extends`` resolves; only when all match does it skip
those stages. The checks by name and type and the compilation to closures always run, so a
warm load builds the same ``Ruleset`` a cold one does. Only loads without errors are cached,
so errors are always reported by a full load.

The cache lives in ``$LUDUS_CACHE``, else in the platform's cache folder (``~/.cache/ludus``).
``LUDUS_CACHE=off`` (or ``ludus --no-cache``) turns it off. A cache file that is corrupt, stale
or unreadable is ignored and rewritten; an unwritable folder just means no caching.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import struct
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CACHE_FORMAT = 1
_MAGIC = b"LUDUS-LOAD-CACHE\n"
_HEADER_LEN = struct.Struct("<Q")
_PREFIX = "ruleset-"
_SUFFIX = ".cache"
MAX_ENTRIES = 200  # older files beyond this are removed when a new one is written
OFF_WORDS = ("off", "0", "no", "false", "none", "disabled")

_PACKAGE = Path(__file__).resolve().parent
# The code whose work a warm load skips: reading YAML, schemas, overlays, parsing rules text.
_ENGINE_FILES = ("loadcache.py", "loader.py", "yamlsource.py", "schemas.py", "overlay.py", "diagnostics.py",
                 "dsl/parser.py", "dsl/ast.py", "dsl/grammar.lark")
_SCHEMA_DIR = _PACKAGE.parent / "schemas"


@dataclass
class LoadInfo:
    """How the last ruleset load went (see :func:`interpreter.loader.last_load`)."""

    manifest: str
    cache: str  # "hit", "miss" or "off"
    reason: str = ""  # why a miss: no entry, a changed file, a corrupt entry, ...
    entry: str | None = None  # the cache file used or written
    written: bool = False
    seconds: float = 0.0


@dataclass
class Trace:
    """What a cold load read: every file's digest and how each ``extends`` resolved."""

    reads: dict[str, str] = field(default_factory=dict)
    extends: list[tuple[str, str, str]] = field(default_factory=list)  # (folder, spec, manifest)


@dataclass
class Hit:
    doc: Any  # the compact document (see loader._dump_document)
    asts: dict[tuple, bytes]
    digest: str


STATS = {"hits": 0, "misses": 0, "writes": 0}
_fingerprint: str | None = None


def cache_dir(enabled: bool | None = None) -> Path | None:
    """The cache folder, or None when caching is off."""
    if enabled is False:
        return None
    env = os.environ.get("LUDUS_CACHE", "").strip()
    if env.lower() in OFF_WORDS:
        return None
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ludus"


def engine_fingerprint() -> str:
    """A digest of everything besides the ruleset that the cached results depend on."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(f"ludus-cache-{CACHE_FORMAT}/{sys.version}".encode())
        files = [_PACKAGE / f for f in _ENGINE_FILES]
        if _SCHEMA_DIR.is_dir():
            files += sorted(_SCHEMA_DIR.glob("*.json"))
        for f in files:
            h.update(f.as_posix().encode())
            try:
                h.update(f.read_bytes())
            except OSError:
                h.update(b"<missing>")
        _fingerprint = h.hexdigest()
    return _fingerprint


def entry_path(folder: Path, manifest: Path) -> Path:
    """The cache file of one manifest (its contents are checked, never trusted by name)."""
    key = hashlib.sha256(f"{manifest}\0{os.environ.get('LUDUS_PATH', '')}".encode()).hexdigest()[:32]
    return folder / f"{_PREFIX}{key}{_SUFFIX}"


def lookup(folder: Path, manifest: Path, resolve: Any) -> tuple[Hit | None, str]:
    """The cached results for ``manifest`` if they are current, else (None, why not).

    ``resolve(spec, folder)`` resolves an ``extends`` the way the loader does (it must
    still give the same manifest).
    """
    path = entry_path(folder, manifest)
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None, "no entry"
    except OSError as exc:
        return None, f"unreadable entry ({exc.strerror or exc})"
    try:
        if not blob.startswith(_MAGIC):
            return None, "corrupt entry"
        start = len(_MAGIC) + _HEADER_LEN.size
        (hlen,) = _HEADER_LEN.unpack_from(blob, len(_MAGIC))
        header = pickle.loads(blob[start:start + hlen])
        payload = blob[start + hlen:]
        if not isinstance(header, dict) or header.get("format") != CACHE_FORMAT:
            return None, "entry of another format"
        if header.get("manifest") != str(manifest):
            return None, "entry of another ruleset"
        if header.get("engine") != engine_fingerprint():
            return None, "engine or schemas changed"
        for fname, digest in header["reads"].items():
            try:
                current = hashlib.sha256(Path(fname).read_bytes()).hexdigest()
            except OSError:
                return None, f"file gone: {fname}"
            if current != digest:
                return None, f"file changed: {fname}"
        for folder_, spec, target in header["extends"]:
            try:
                if str(resolve(spec, Path(folder_))) != target:
                    return None, f"'extends: {spec}' now finds another ruleset"
            except Exception:
                return None, f"'extends: {spec}' no longer resolves"
        if hashlib.sha256(payload).hexdigest() != header.get("payload"):
            return None, "corrupt entry"
        body = pickle.loads(payload)
        return Hit(pickle.loads(body["doc"]), body["asts"], body["digest"]), ""
    except Exception as exc:  # a damaged file can fail in many ways; it is only ever a miss
        return None, f"corrupt entry ({type(exc).__name__})"


def store(folder: Path, manifest: Path, trace: Trace, doc: bytes, asts: dict[tuple, bytes],
          digest: str) -> Path | None:
    """Write the cache file for ``manifest``; None (silently) when the folder is not writable."""
    payload = pickle.dumps({"doc": doc, "asts": asts, "digest": digest},
                           protocol=pickle.HIGHEST_PROTOCOL)
    header = pickle.dumps({"format": CACHE_FORMAT, "manifest": str(manifest), "engine": engine_fingerprint(),
                           "reads": dict(trace.reads), "extends": list(trace.extends),
                           "payload": hashlib.sha256(payload).hexdigest()}, protocol=pickle.HIGHEST_PROTOCOL)
    path = entry_path(folder, manifest)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + _HEADER_LEN.pack(len(header)) + header + payload)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(folder)
    except OSError:
        return None
    return path


def _prune(folder: Path) -> None:
    entries = list(folder.glob(f"{_PREFIX}*{_SUFFIX}"))
    if len(entries) <= MAX_ENTRIES:
        return

    def mtime(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0
    for old in sorted(entries, key=mtime)[:len(entries) - MAX_ENTRIES]:
        with contextlib.suppress(OSError):
            old.unlink()


def clear(folder: Path | None = None) -> int:
    """Remove every cache file; returns how many."""
    folder = folder or cache_dir()
    n = 0
    if folder is None or not folder.is_dir():
        return 0
    for p in folder.glob(f"{_PREFIX}*{_SUFFIX}"):
        with contextlib.suppress(OSError):
            p.unlink()
            n += 1
    return n
