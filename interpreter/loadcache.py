"""The load cache: what a cold load of a ruleset parsed, kept on disk for the next process.

A cold load reads YAML (ruamel), validates it against the JSON Schemas, merges overlays
and parses every rules text with Lark; most of its time goes there. None of that depends
on anything but the bytes of the ruleset's files and of the engine code that does it, so
a successful load writes its results to one cache file per manifest:

- the merged document (plain data, source positions, the manifest chain),
- the parsed AST of every rules text (as tagged JSON, :mod:`interpreter.dsl.astdata`),
- the ruleset digest,
- what checking the bodies of procedures and rules functions found (:mod:`interpreter.dsl.lazyprocs`).

A cache file is data only: lines of JSON, signed with HMAC-SHA256 under a random key kept
in the folder (``key``, mode 0600, bound to that file's identity, so a copied folder does
not verify). Nothing of a file is read before its signature checks, and nothing in it can
run code: a planted or damaged file is a plain miss. The folder is created 0700; one that
belongs to another user or that others may write to is not used (one warning per process).

A warm load checks the cache file against the current bytes of every file that was read
(SHA-256), the engine fingerprint (the code and schemas of the skipped stages, the grammar,
the Python version) and how each ``extends`` resolves; only when all match does it skip
those stages. The cross-reference checks and the checks by name and type of every other text
always run; the bodies of procedures and rules functions are checked when first needed, and
must agree with the facts the entry keeps about them, so a warm load builds the same
``Ruleset`` a cold one does. Only loads without errors are cached, so errors are always
reported by a full load.

The cache lives in ``$LUDUS_CACHE``, else in the platform's cache folder (``~/.cache/ludus``).
``LUDUS_CACHE=off`` (or ``ludus --no-cache``) turns it off. A cache file that is corrupt, stale,
foreign or unreadable is ignored and rewritten; an unwritable folder just means no caching.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from .bundled import SCHEMA_DIR

CACHE_FORMAT = 2
_MAGIC = b"LUDUS-LOAD-CACHE 2\n"
_MAC_LEN = 64  # hex digits of an HMAC-SHA256
_PREFIX = "ruleset-"
_SUFFIX = ".cache"
KEY_FILE = "key"
_KEY_BYTES = 32
MAX_ENTRIES = 200  # older files beyond this are removed when a new one is written
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # the bundled rulesets need under 1 MB; a bigger file is not read
OFF_WORDS = ("off", "0", "no", "false", "none", "disabled")
# Opening never follows a link planted at an entry's name, nor waits on a pipe planted there.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_BINARY", 0))

_PACKAGE = Path(__file__).resolve().parent
# The code whose work a warm load skips: reading YAML, schemas, overlays, parsing rules text.
# And the code whose results the entry's facts about procedure bodies are (dsl/lazyprocs.py):
# every module of the rules language (checking, writing), and the model it fills.
_ENGINE_FILES = ("loadcache.py", "loader.py", "finder.py", "builder.py", "yamlsource.py", "yamlcommon.py",
                 "yamlfast.py", "schemas.py", "overlay.py", "diagnostics.py", "model.py", "dsl/grammar.lark",
                 "dsl/lalr_table.json")
_ENGINE_FOLDERS = ("dsl",)  # every .py file in them


@dataclass
class LoadInfo:
    """How the last ruleset load went (see :func:`interpreter.loader.last_load`)."""

    manifest: str
    cache: str  # "hit", "miss" or "off"
    reason: str = ""  # why a miss: no entry, a changed file, a corrupt entry, an unusable folder, ...
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
    """A current cache entry: the document's plain form (see ``loader._dump_document``), the
    parsed texts as :class:`interpreter.dsl.parser.AstMemo` entries, the ruleset digest."""

    doc: dict[str, Any]
    asts: dict[tuple, str]
    digest: str
    facts: Any = None  # what checking the procedure bodies found (dsl.lazyprocs.Facts), if kept


@dataclass(frozen=True)
class Folder:
    """A cache folder this process may use, and the key its entries are signed with."""

    path: Path
    key: bytes = field(repr=False)


class Corrupt(ValueError):
    """Cached data that is not in the form this module writes."""


STATS = {"hits": 0, "misses": 0, "writes": 0}
_fingerprint: str | None = None
_warned = False


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
        for folder in _ENGINE_FOLDERS:
            files += sorted((_PACKAGE / folder).glob("*.py"))
        if SCHEMA_DIR.is_dir():
            files += sorted(SCHEMA_DIR.glob("*.json"))
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


def _uid() -> int | None:
    """This process's user id, or None where files have no owner to compare (Windows)."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid() if geteuid is not None else None


def _untrusted(st: os.stat_result) -> str:
    """Why a folder with this status may hold files planted by someone else ('' if it may not)."""
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    uid = _uid()
    if uid is None:
        return ""
    if st.st_uid != uid:
        return f"belongs to another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "is writable by other users"
    return ""


def _warn(path: Path, problem: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        print(f"ludus: warning: load cache folder {path} not used: it {problem} "
              "(set LUDUS_CACHE to a folder of your own, or use --no-cache)", file=sys.stderr)


def open_folder(path: Path) -> tuple[Folder | None, str]:
    """The cache folder ready for use (created 0700, with its key), or (None, why not).

    A folder that belongs to another user or that others may write to is not used: anyone
    who can write there could plant entries. That gives one warning per process.
    """
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(path)
    except OSError as exc:
        return None, f"cache folder unusable ({exc.strerror or exc})"
    problem = _untrusted(st)
    if problem:
        _warn(path, problem)
        return None, f"cache folder not used: it {problem}"
    try:
        key = _key(path)
    except OSError as exc:
        return None, f"cache folder unusable ({exc.strerror or exc})"
    if key is None:
        return None, "cache folder unusable (no key)"
    return Folder(path, key), ""


def _read_key(path: Path) -> tuple[bytes | None, bool]:
    """(The signing key kept at ``path``, or None if there is no good one; whether a file is there.)

    The key is the file's random bytes bound to the file itself (device and inode), so the
    entries of a cache folder copied from elsewhere, key and all, never verify.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None, False
    except OSError:
        return None, True
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        raw = fh.read(_KEY_BYTES + 1) if stat.S_ISREG(st.st_mode) else b""
    uid = _uid()
    if len(raw) != _KEY_BYTES or (uid is not None and (st.st_uid != uid or st.st_mode & 0o077)):
        return None, True
    return hmac.new(raw, f"{st.st_dev}:{st.st_ino}".encode(), hashlib.sha256).digest(), True


def _key(folder: Path) -> bytes | None:
    """The folder's signing key, made (mode 0600) if it has none or a bad one."""
    path = folder / KEY_FILE
    key, exists = _read_key(path)
    if key is not None:
        return key
    fd, tmp = tempfile.mkstemp(prefix=".tmp-key-", dir=folder)  # mode 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(_KEY_BYTES))
        if exists:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # unlike a rename, never replaces a key another process just made
            except FileExistsError:
                pass
            except OSError:  # a file system without hard links
                os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return _read_key(path)[0]


def _read_entry(path: Path) -> bytes:
    fd = os.open(path, _OPEN_FLAGS)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Corrupt("not a file")
        if st.st_size > MAX_ENTRY_BYTES:
            raise Corrupt("too large")
        blob = fh.read(MAX_ENTRY_BYTES + 1)
    if len(blob) > MAX_ENTRY_BYTES:
        raise Corrupt("too large")
    return blob


def _digest(fname: str) -> str | None:
    """The SHA-256 of a file a load read; None if it is no longer a regular file of a sane size
    (a pipe put in its place must not stall the check: the full load then reports it)."""
    fd = os.open(fname, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
            return None
        return hashlib.sha256(fh.read()).hexdigest()


def _mac(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")


def _strs(value: Any, n: int) -> bool:
    return value.__class__ is list and len(value) == n and all(v.__class__ is str for v in value)


def _header(line: str, manifest: Path) -> tuple[dict[str, Any] | None, str]:
    header = json.loads(line)
    if header.__class__ is not dict or header.get("format") != CACHE_FORMAT:
        return None, "entry of another format"
    if header.get("manifest") != str(manifest):
        return None, "entry of another ruleset"
    if header.get("engine") != engine_fingerprint():
        return None, "engine or schemas changed"
    reads, extends = header.get("reads"), header.get("extends")
    if (reads.__class__ is not dict or not all(v.__class__ is str for v in reads.values())
            or extends.__class__ is not list or not all(_strs(e, 3) for e in extends)
            or header.get("digest").__class__ is not str or "facts" not in header):
        raise Corrupt("header")
    return header, ""


def lookup(folder: Folder, manifest: Path, resolve: Any) -> tuple[Hit | None, str]:
    """The cached results for ``manifest`` if they are current, else (None, why not).

    Nothing is read from an entry before its signature is checked, and nothing in it is more
    than plain data: any bytes at all give a hit or a miss, never an exception.
    ``resolve(spec, folder)`` resolves an ``extends`` the way the loader does (it must still
    give the same manifest).
    """
    path = entry_path(folder.path, manifest)
    try:
        blob = _read_entry(path)
    except FileNotFoundError:
        return None, "no entry"
    except OSError as exc:
        return None, f"unreadable entry ({exc.strerror or exc})"
    except Corrupt as exc:
        return None, f"corrupt entry ({exc})"
    start = len(_MAGIC) + _MAC_LEN + 1
    if not blob.startswith(_MAGIC) or blob[start - 1:start] != b"\n":
        return None, "corrupt entry"
    body = blob[start:]
    if not hmac.compare_digest(blob[len(_MAGIC):start - 1], _mac(folder.key, body)):
        return None, "corrupt or foreign entry (its signature does not match this folder's key)"
    try:
        lines = body.decode("utf-8").split("\n")
        header, why = _header(lines[0], manifest)
        if header is None:
            return None, why
        for fname, digest in header["reads"].items():
            try:
                current = _digest(fname)
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
        doc = json.loads(lines[1])
        keys = json.loads(lines[2])
        trees = lines[3:-1]
        if doc.__class__ is not dict or keys.__class__ is not list or len(keys) != len(trees) or lines[-1]:
            raise Corrupt("payload")
        asts = {_memo_key(k): t for k, t in zip(keys, trees, strict=True)}
        from .dsl.lazyprocs import Facts
        facts = Facts.read(header["facts"]) if header["facts"] is not None else None
        return Hit(doc, asts, header["digest"], facts), ""
    except Exception as exc:  # a damaged file can fail in many ways; it is only ever a miss
        return None, f"corrupt entry ({type(exc).__name__})"


def _memo_key(key: Any) -> tuple:
    if key.__class__ is list and key and all(k.__class__ is str or k.__class__ is int for k in key):
        return tuple(key)
    raise Corrupt("memo key")


def json_line(value: Any) -> bytes | None:
    """``value`` as one line of ASCII JSON; None if it has no such form (see :func:`is_plain`)."""
    try:
        return json.dumps(value, separators=(",", ":")).encode("ascii")
    except (TypeError, ValueError):  # not plain data after all, or a number too long to write
        return None


def store(folder: Folder, manifest: Path, trace: Trace, doc: bytes, asts: dict[tuple, str],
          digest: str, facts: dict[str, Any] | None = None) -> Path | None:
    """Write the cache file for ``manifest``; None (silently) when it cannot be written.

    ``doc`` is the document as one line of JSON (``loader._dump_document``), each of ``asts``
    one line of JSON (:mod:`interpreter.dsl.astdata`); ``facts`` what checking the procedure
    bodies found, in plain form (``dsl.lazyprocs.Facts.plain``).
    """
    header = json_line({"format": CACHE_FORMAT, "manifest": str(manifest), "engine": engine_fingerprint(),
                        "reads": dict(trace.reads), "extends": [list(e) for e in trace.extends],
                        "digest": digest, "facts": facts})
    keys = json_line([list(k) for k in asts])
    if header is None or keys is None or not all(t.isascii() and "\n" not in t for t in asts.values()):
        return None
    body = b"\n".join([header, doc, keys, *(t.encode("ascii") for t in asts.values())]) + b"\n"
    path = entry_path(folder.path, manifest)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder.path)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + _mac(folder.key, body) + b"\n" + body)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(folder.path)
    except OSError:
        return None
    return path


def is_plain(value: Any) -> bool:
    """Whether ``value`` is JSON exactly: JSON gives back what was written, no more, no less."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if not all(isinstance(k, str) for k in v):
                return False
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif not (v is None or isinstance(v, str | int | float)):
            return False
    return True


def smap_to_plain(dumped: tuple[Any, ...]) -> dict[str, Any]:
    """A ``SourceMap.dump()`` as plain data, in columns that read back in a few passes of C.

    Paths are numbers: node ``i`` of a tree of paths is its parent's path and ``steps[i]``
    (node 0 is the empty path). Each table is its paths' node numbers and one flat list of
    numbers; each text's characters are its runs' starts and (line, col), flat.
    """
    files, values, keys, texts = dumped
    ids: dict[tuple, int] = {(): 0}
    parents, steps = [0], [0]

    def node(path: tuple) -> int:
        found = ids.get(path)
        if found is None:
            parent = node(path[:-1])
            found = ids[path] = len(parents)
            parents.append(parent)
            steps.append(path[-1])
        return found

    runs = [t[5] for t in texts.values()]
    return {"files": list(files), "parents": parents, "steps": steps,
            "values": [[node(k) for k in values], [n for v in values.values() for n in v]],
            "keys": [[node(k) for k in keys], [n for v in keys.values() for n in v]],
            "texts": [[node(k) for k in texts], [n for t in texts.values() for n in t[:3]],
                      [flag for t in texts.values() for flag in t[3:5]],
                      [0 if r is None else len(r[0]) for r in runs],  # how many runs each text has
                      [0 if r is None else r[2] for r in runs],  # how many characters
                      [n for r in runs if r is not None for n in r[0]],  # where each run starts
                      [n for r in runs if r is not None for p in r[1] for n in p]]}  # its (line, col)


def _ints(values: Any, n: int) -> list[int]:
    if values.__class__ is not list or len(values) != n or not set(map(type, values)) <= {int}:
        raise Corrupt("numbers")
    return values


def _paths(plain: dict[str, Any]) -> list[tuple]:
    parents, steps = plain["parents"], plain["steps"]
    n = len(_ints(parents, len(steps)))
    if not n or not set(map(type, steps)) <= {str, int} or not all(map(int.__lt__, parents[1:], range(1, n))):
        raise Corrupt("paths")
    paths: list[tuple] = [()]
    add = paths.append
    for parent, step in zip(parents[1:], steps[1:], strict=True):
        add((*paths[parent], step))
    return paths


def _places(files: list[str], paths: list[tuple], column: Any) -> dict[tuple, tuple[int, int, int]]:
    nodes, at = column
    _ints(nodes, len(nodes))
    _ints(at, 3 * len(nodes))
    if nodes and (min(nodes) < 0 or max(nodes) >= len(paths)):
        raise Corrupt("path")
    if at and (min(at[0::3]) < 0 or max(at[0::3]) >= len(files)):
        raise Corrupt("file index")
    it = iter(at)
    return dict(zip(map(paths.__getitem__, nodes), zip(it, it, it, strict=False), strict=True))


def smap_from_plain(plain: Any) -> tuple[Any, ...]:
    """The inverse of :func:`smap_to_plain`, checked: :class:`Corrupt` (or another ``Exception``)
    for anything else, so that a restored map can never fail later, when a position is asked for."""
    files = plain["files"]
    if files.__class__ is not list or not set(map(type, files)) <= {str}:
        raise Corrupt("file names")
    paths = _paths(plain)
    values = _places(files, paths, plain["values"])
    keys = _places(files, paths, plain["keys"])
    nodes, at, flags, counts, chars, starts, places = plain["texts"]
    origins = _places(files, paths, [nodes, at])
    _ints(counts, len(nodes))
    _ints(chars, len(nodes))
    _ints(starts, sum(counts))
    _ints(places, 2 * len(starts))
    if flags.__class__ is not list or len(flags) != 2 * len(nodes) or not set(map(type, flags)) <= {bool}:
        raise Corrupt("text flags")
    if counts and (min(counts) < 0 or min(chars) < 0):
        raise Corrupt("character places")
    fl, st, pl = iter(flags), iter(starts), iter(places)
    texts = {k: (*o, next(fl), next(fl),
                 None if c == 0 else ((next(st),), ((next(pl), next(pl)),), n) if c == 1  # most texts are one run
                 else (tuple(islice(st, c)), tuple(zip(islice(pl, c), islice(pl, c), strict=True)), n))  # (l, c) pairs
             for (k, o), c, n in zip(origins.items(), counts, chars, strict=True)}
    return (files, values, keys, texts)


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
