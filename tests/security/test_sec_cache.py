"""The load cache holds data only, signed, in a folder nobody else can write.

A cache entry is read only after its HMAC (keyed by the cache folder's own random key) checks,
and even then only as JSON decoded through fixed tables: so a file planted at an entry's name
(a pickle that would run code, in the old format or the new framing, even one signed with the
right key) runs nothing and is a plain miss, and so is any damage to a real entry. A folder
that another user owns or others may write to is not used, with one warning.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import assert_refused, run_ludus

from interpreter import load_ruleset, loadcache
from interpreter.dsl import ast as A
from interpreter.dsl import astdata
from interpreter.loader import _warm, find_ruleset, find_ruleset_from, last_load

ROOT = Path(__file__).resolve().parents[2]
POSIX = hasattr(os, "geteuid")


class _Exec:
    """Unpickling this runs ``code``: the payload a cache poisoner would plant."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __reduce__(self) -> tuple:
        return (exec, (self.code,))


def poison(marker: Path) -> bytes:
    return pickle.dumps(_Exec(f"open({str(marker)!r}, 'w').write('ran')"), protocol=pickle.HIGHEST_PROTOCOL)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("LUDUS_CACHE", str(folder))
    monkeypatch.setattr(loadcache, "_warned", False)
    return folder


@pytest.fixture
def race(tmp_path: Path) -> Path:
    return Path(shutil.copytree(ROOT / "rulesets" / "dice_race", tmp_path / "race"))


def entry_of(cache: Path, ruleset: Path) -> Path:
    return loadcache.entry_path(cache, find_ruleset(str(ruleset)))


def signed(cache: Path, body: bytes) -> bytes:
    """``body`` framed and signed as the folder's own key would sign it."""
    folder, why = loadcache.open_folder(cache)
    assert folder is not None, why
    return loadcache._MAGIC + loadcache._mac(folder.key, body) + b"\n" + body


# ====================================================================== planted pickles
def test_the_poison_is_live(tmp_path: Path) -> None:
    """The planted payload does run code when unpickled, so the tests below can fail."""
    marker = tmp_path / "control"
    pickle.loads(poison(marker))
    assert marker.read_text() == "ran"


@pytest.mark.parametrize("framing", ["old format", "new framing, bad signature", "new framing, signed",
                                     "signed entry with a pickled tree"])
def test_a_planted_pickle_runs_no_code_and_the_load_falls_back(cache: Path, race: Path, tmp_path: Path,
                                                               framing: str) -> None:
    marker = tmp_path / "marker"
    payload = poison(marker)
    digest = load_ruleset(race, cache=False).digest
    path = entry_of(cache, race)
    cache.mkdir(mode=0o700)
    if framing == "old format":  # what the loader used to unpickle before any check
        blob = b"LUDUS-LOAD-CACHE\n" + struct.pack("<Q", len(payload)) + payload + payload
    elif framing == "new framing, bad signature":
        blob = loadcache._MAGIC + b"0" * 64 + b"\n" + payload + b"\n" + payload + b"\n"
    elif framing == "new framing, signed":  # as if the key had leaked
        blob = signed(cache, payload + b"\n" + payload + b"\n" + payload + b"\n")
    else:
        load_ruleset(race)
        lines = path.read_bytes().split(b"\n")[2:]
        lines[3] = payload.decode("latin-1").replace("\n", " ").encode("utf-8")  # the first parsed text
        blob = signed(cache, b"\n".join(lines))
    path.write_bytes(blob)

    outcome = run_ludus(["validate", "race"], cwd=tmp_path, env={"LUDUS_CACHE": "cache"})
    assert not outcome.timed_out and "Traceback" not in outcome.err, outcome.err
    assert outcome.code == 0 and outcome.out.startswith("dice_race 1.0.0: ok"), outcome.err
    assert not marker.exists()

    path.write_bytes(blob)
    rs = load_ruleset(race)
    assert not marker.exists()
    assert rs.digest == digest
    info = last_load()
    assert info is not None
    if framing == "signed entry with a pickled tree":
        assert info.cache == "hit"  # the one unreadable tree is parsed again; the rest is used
    else:
        assert info.cache == "miss" and "corrupt" in info.reason and info.written
        load_ruleset(race)
        assert last_load().cache == "hit"  # the planted file was replaced by a good entry


def test_an_ast_tree_names_only_classes_of_the_table() -> None:
    assert set(astdata.NODES) == {name for name, cls in vars(A).items() if isinstance(cls, type)
                                  and issubclass(cls, A.Node) and cls is not A.Node}
    good = astdata.encode(A.BinOp((1, 2), "+", A.Num((1, 1), 1), A.Name((1, 5), "x")))
    assert astdata.decode(good) == A.BinOp((1, 2), "+", A.Num((1, 1), 1), A.Name((1, 5), "x"))
    for text in ['{"": "Node", "pos": [1, 1]}', '{"": "Block", "pos": [1, 1], "stmts": []}',
                 '{"": "__class__", "pos": [1, 1]}', '{"": "system", "pos": [1, 1], "command": "touch /tmp/x"}',
                 '{"": "Name", "pos": [1, 1]}', '{"": "Name", "pos": ["1", 1], "name": "x"}',
                 '{"": "Name", "pos": [1, 1, 1], "name": "x"}', '{"": "Name", "pos": [1, 1], "name": "x", "t": []}',
                 '{"": ["Name"], "pos": [1, 1], "name": "x"}', '{"t": 3}', '{"os": "system"}', "[" * 100_000,
                 "1" * 5000, "\xff", ""]:
        with pytest.raises(astdata.Unreadable):
            astdata.decode(text)


# ====================================================================== damaged entries
HOSTILE_JSON = ["1" * 5000, "[" * 50_000 + "]" * 50_000, "null", "-1", "9223372036854775808", "1e999", "true",
                '"x"', "[]", "{}", '{"":"Name","pos":[1,1],"name":"x"}', '{"":"Block","pos":[1,1],"stmts":[]}',
                '{"t":[1,2]}', "NaN"]


def _paths(value: object, rng: random.Random) -> list:
    path: list = []
    while isinstance(value, dict | list) and value and rng.random() < 0.85:
        key = rng.choice(list(value)) if isinstance(value, dict) else rng.randrange(len(value))
        path.append(key)
        value = value[key]
    return path


def _json_mutant(body: bytes, rng: random.Random) -> bytes:
    """Swap two values of one JSON line of an entry, or put a hostile value in one's place."""
    lines = body.split(b"\n")
    i = rng.randrange(len(lines) - 1)
    doc = json.loads(lines[i])
    if not isinstance(doc, dict | list):
        lines[i] = rng.choice(HOSTILE_JSON).encode()
        return b"\n".join(lines)
    a, b = _paths(doc, rng), _paths(doc, rng)
    hole = "\x00hole\x00"

    def put(path: list, new: object) -> object:
        if not path:
            return new
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        old, parent[path[-1]] = parent[path[-1]], new
        return old

    if a and b and a[:len(b)] != b and b[:len(a)] != a and rng.random() < 0.5:
        put(b, put(a, put(b, None)))
        text = json.dumps(doc, separators=(",", ":"))
    else:
        doc = put(a, hole) if a else hole
        text = json.dumps(doc, separators=(",", ":")).replace(json.dumps(hole), rng.choice(HOSTILE_JSON))
    lines[i] = text.encode()
    return b"\n".join(lines)


def _mutants(blob: bytes, rng: random.Random, n: int, start: int) -> list[tuple[str, bytes]]:
    """``n`` damaged copies of ``blob``, whose JSON lines begin at ``start``."""
    out = []
    for k in range(n):
        kind = k % 3
        if kind == 0:
            out.append(("truncated", blob[:rng.randrange(len(blob))]))
        elif kind == 1:
            flipped = bytearray(blob)
            for _ in range(rng.randint(1, 8)):
                pos = rng.randrange(len(flipped))
                flipped[pos] ^= 1 << rng.randrange(8)
            out.append(("bit flips", bytes(flipped)))
        else:
            out.append(("json", blob[:start] + _json_mutant(blob[start:], rng)))
    return out


def test_random_damage_to_a_real_entry_is_always_a_miss(cache: Path, race: Path) -> None:
    load_ruleset(race)
    path = entry_of(cache, race)
    blob = path.read_bytes()
    folder, _ = loadcache.open_folder(cache)
    assert folder is not None
    manifest = find_ruleset(str(race))
    assert loadcache.lookup(folder, manifest, find_ruleset_from)[0] is not None
    rng = random.Random(11)
    for kind, mutant in _mutants(blob, rng, 300, len(loadcache._MAGIC) + 65):
        if mutant == blob:
            continue
        path.write_bytes(mutant)
        hit, why = loadcache.lookup(folder, manifest, find_ruleset_from)
        assert hit is None, f"{kind}: a damaged entry was used"
        assert "corrupt" in why
    path.write_bytes(blob[:100] + b"x" + blob[100:])
    good = load_ruleset(race, cache=False)
    again = load_ruleset(race)
    assert last_load().cache == "miss" and again.digest == good.digest


def test_a_signed_entry_with_any_damage_never_raises(cache: Path, race: Path) -> None:
    """Even behind a good signature (a leaked key, or a bug of the writer) decoding is total."""
    load_ruleset(race)
    path = entry_of(cache, race)
    body = path.read_bytes()[len(loadcache._MAGIC) + 65:]
    folder, _ = loadcache.open_folder(cache)
    assert folder is not None
    manifest = find_ruleset(str(race))
    rng = random.Random(12)
    outcomes = {"miss": 0, "hit, rebuilt": 0, "hit, full load": 0}
    for _kind, mutant in _mutants(body, rng, 90, 0):
        path.write_bytes(signed(cache, mutant))
        start = time.perf_counter()
        hit, _why = loadcache.lookup(folder, manifest, find_ruleset_from)
        if hit is None:
            outcomes["miss"] += 1
        else:
            outcomes["hit, rebuilt" if _warm(hit) is not None else "hit, full load"] += 1
        assert time.perf_counter() - start < 5
    assert outcomes["miss"] > 30, outcomes


def test_a_pipe_a_link_or_a_huge_file_at_an_entry_name_is_a_miss(cache: Path, race: Path, tmp_path: Path) -> None:
    load_ruleset(race)
    path = entry_of(cache, race)
    path.unlink()
    secret = tmp_path / "secret.cache"
    secret.write_bytes(b"LUDUS-LOAD-CACHE 2\n")
    path.symlink_to(secret)
    load_ruleset(race)
    assert last_load().cache == "miss" and "unreadable" in last_load().reason
    path.unlink()
    with open(path, "wb") as fh:
        fh.truncate(loadcache.MAX_ENTRY_BYTES + 1)  # sparse: nothing is really written
    load_ruleset(race)
    assert last_load().cache == "miss" and "too large" in last_load().reason
    path.unlink()
    path.mkdir()
    load_ruleset(race)
    assert last_load().cache == "miss" and "unreadable" in last_load().reason and not last_load().written
    if hasattr(os, "mkfifo"):
        path.rmdir()
        os.mkfifo(path)
        outcome = run_ludus(["validate", "race"], cwd=tmp_path, env={"LUDUS_CACHE": "cache"})
        assert not outcome.timed_out and outcome.code == 0, outcome.err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_pipe_in_place_of_a_cached_rules_file_does_not_stall_the_check(cache: Path, race: Path,
                                                                          tmp_path: Path) -> None:
    load_ruleset(race)
    rules = race / "rules.yaml"
    rules.unlink()
    os.mkfifo(rules)
    outcome = run_ludus(["validate", "race"], cwd=tmp_path, env={"LUDUS_CACHE": "cache"})
    assert_refused(outcome)


def test_a_copied_cache_folder_is_not_trusted(cache: Path, race: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Its key file travels with it, but the key is bound to the file's identity: a cache
    shipped in a ruleset pack, key and all, is a miss."""
    load_ruleset(race)
    load_ruleset(race)
    assert last_load().cache == "hit"
    shutil.copytree(cache, tmp_path / "shipped")
    monkeypatch.setenv("LUDUS_CACHE", str(tmp_path / "shipped"))
    load_ruleset(race)
    assert last_load().cache == "miss" and "signature" in last_load().reason


def test_processes_starting_together_agree_on_one_key(cache: Path, race: Path, tmp_path: Path) -> None:
    env = {**os.environ, "LUDUS_CACHE": str(cache)}
    procs = [subprocess.Popen([sys.executable, "-m", "interpreter", "validate", str(race)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and b"Traceback" not in err, err
    assert [p.name for p in cache.iterdir() if p.name.startswith(".tmp")] == []
    load_ruleset(race)
    assert last_load().cache == "hit"


@pytest.mark.skipif(not POSIX, reason="file modes and owners")
def test_an_open_key_file_is_replaced(cache: Path, race: Path) -> None:
    load_ruleset(race)
    key = cache / loadcache.KEY_FILE
    old = key.read_bytes()
    key.chmod(0o644)
    load_ruleset(race)
    assert last_load().cache == "miss" and "signature" in last_load().reason
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.read_bytes() != old
    load_ruleset(race)
    assert last_load().cache == "hit"


# ====================================================================== the folder
@pytest.mark.skipif(not POSIX, reason="file modes and owners")
def test_the_folder_and_key_are_created_private(tmp_path: Path, race: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "deep" / "er" / "cache"
    monkeypatch.setenv("LUDUS_CACHE", str(folder))
    old = os.umask(0)  # the modes must not depend on a careful umask
    try:
        load_ruleset(race)
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / loadcache.KEY_FILE).stat().st_mode) == 0o600
    assert len((folder / loadcache.KEY_FILE).read_bytes()) == 32
    (entry,) = folder.glob("ruleset-*.cache")
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


@pytest.mark.skipif(not POSIX, reason="file modes and owners")
@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777], ids=["0777", "0770", "1777"])
def test_a_folder_others_may_write_is_not_used(tmp_path: Path, race: Path, mode: int, snapshot) -> None:
    shutil.copytree(ROOT / "rulesets" / "dice_race_short", tmp_path / "short")
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    outcome = run_ludus(["validate", "race", "short"], cwd=tmp_path, env={"LUDUS_CACHE": "shared"})
    assert not outcome.timed_out and "Traceback" not in outcome.err
    assert outcome.code == 0 and outcome.out.count(": ok") == 2
    assert outcome.err == snapshot  # one warning for the two loads
    assert sorted(os.listdir(folder)) == []


@pytest.mark.skipif(not POSIX, reason="file modes and owners")
def test_a_folder_of_another_user_is_not_used(cache: Path, race: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    load_ruleset(race)  # a good entry, which must not be used now
    me = os.geteuid()
    monkeypatch.setattr(loadcache, "_uid", lambda: me + 1)
    load_ruleset(race)
    load_ruleset(race)
    info = last_load()
    assert info is not None and info.cache == "miss" and "another user" in info.reason and not info.written
    err = capsys.readouterr().err
    assert err.count("ludus: warning:") == 1
    assert f"not used: it belongs to another user (uid {me})" in err


@pytest.mark.skipif(not POSIX or os.geteuid() != 0, reason="needs root to give the folder away")
def test_a_folder_given_to_another_user_is_not_used(tmp_path: Path, race: Path) -> None:
    folder = tmp_path / "given"
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)
    outcome = run_ludus(["validate", "race"], cwd=tmp_path, env={"LUDUS_CACHE": "given"})
    assert outcome.code == 0 and "Traceback" not in outcome.err
    assert outcome.err == ("ludus: warning: load cache folder given not used: it belongs to another user (uid 65534) "
                           "(set LUDUS_CACHE to a folder of your own, or use --no-cache)\n")
    assert os.listdir(folder) == []


def test_the_cache_path_reads_no_pickle() -> None:
    """No module of the load cache's path imports pickle or marshal."""
    for name in ("loadcache.py", "loader.py", "finder.py", "builder.py", "dsl/parser.py", "dsl/astdata.py",
                 "dsl/astmemo.py", "dsl/lalr_direct.py", "yamlsource.py", "yamlcommon.py", "yamlfast.py",
                 "dsl/compiler.py", "dsl/source.py", "dsl/lazyprocs.py"):
        text = (ROOT / "interpreter" / name).read_text(encoding="utf-8")
        assert "import pickle" not in text and "import marshal" not in text, name


# ====================================================================== the parser's own cache
def test_the_rules_parser_keeps_no_pickle_in_the_temporary_folder(tmp_path: Path) -> None:
    """Lark's ``cache=True`` unpickles a file at a name anyone can guess in the shared
    temporary folder: a file planted there would run code. The parser is built without it
    (only a rules text with a syntax error builds it at all), so it neither writes nor reads
    one: here a syntax error is parsed with the temporary folder pointed at an empty folder,
    and any pickle read is reported."""
    spy = (
        "import pickle, sys\n"
        "real = pickle.load\n"
        "def load(*a, **k):\n"
        "    print('pickle.load', file=sys.stderr)\n"
        "    return real(*a, **k)\n"
        "pickle.load = load\n"
        "from interpreter.cli import main\n"
        "sys.exit(main(['validate', sys.argv[1]]))\n"
    )
    temp = tmp_path / "tmp"
    temp.mkdir()
    broken = ROOT / "tests" / "broken" / "dsl_plain_syntax"
    done = subprocess.run([sys.executable, "-c", spy, str(broken)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TMPDIR": str(temp), "LUDUS_CACHE": "off"}, cwd=ROOT)
    assert done.returncode == 1 and "error:" in done.stdout + done.stderr, done.stderr
    assert "pickle.load" not in done.stderr
    assert list(temp.iterdir()) == []
