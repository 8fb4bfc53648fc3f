"""Seeded generators of tampered game logs and hostile scenario files, and a judge of the outcome.

``tampered_log(seed, index)`` and ``hostile_scenario(seed, index)`` are pure functions: the same
two numbers give the same :class:`Case` (plain ``random.Random`` seeded by text, no clock, no hash
randomisation), so a case found by a large run is rebuilt from its numbers alone.

- Logs are mutations of the logs of real short games (random bots, fixed seeds): a value changed
  (wrong type, out of range, negative or boolean index, forced dice out of range, huge numbers,
  ``1e999``), keys added or removed, lines deleted, duplicated, swapped or cut short, nesting
  deepened, the header naming another ruleset, version, digest, seat list or seed, binary garbage,
  an empty file, a line of megabytes.
- Scenarios are mutations of the files under tests/scenarios/ and tests/broken/: steps with wrong
  types, answers that are not offered, dice out of range, state patches naming unknown entities,
  fields or zones or giving wrong types, ``expect`` with bad paths, ``assert`` texts that are not
  rules, huge numbers, and line-level damage to the YAML text.

:func:`judge` sorts what ``ludus`` did with a case: ``accepted`` (exit 0), ``located`` (exit 1 with
an error at a line of the case's own file), or a fault: ``unlocated``, ``traceback``, ``hang``,
``exit`` (any other exit code). benchmarks/tamper.py runs many in real processes;
tests/security/test_sec_inputs.py runs a seeded share in-process.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
BROKEN = ROOT / "tests" / "broken"
LOG = "game.jsonl"
SCENARIO = "scenario.yaml"

# The games whose logs are tampered with: (ruleset, players, seed). Short ones, so a replay is quick.
GAMES = (("dice_race", 2, 3), ("dice_race", 3, 8), ("dice_race_short", 2, 5), ("rome_in_crisis", 3, 2))

CLASSES = ("accepted", "located", "unlocated", "traceback", "hang", "exit")
FAULTS = ("unlocated", "traceback", "hang", "exit")
_HUGE = "tamper-raw-"  # a string value replaced by raw text after dumping (numbers JSON/YAML cannot hold)
RAW = ("9" * 5000, "-" + "9" * 5000, "1e999", "-1e999", "NaN", "Infinity", "1" + "0" * 30, "0.5", "-0",
       "18446744073709551616", "1e-999")
ODD = (None, True, False, 0, -1, 1.5, "", "x", "²", "\u202e", [], {}, [1, [2, [3]]], {"a": {"b": 1}},
       10**30, -(10**30), 2**63, "a" * 10_000, "\n", "../../etc/passwd")


@dataclass
class Case:
    """One hostile input: its files (relative path -> bytes) and the ``ludus`` arguments that read it."""

    kind: str  # "log" or "scenario"
    seed: int
    index: int
    description: str
    files: dict[str, bytes] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)

    @property
    def target(self) -> str:
        """The file the case is about: every refusal must point into it."""
        return LOG if self.kind == "log" else SCENARIO

    def write(self, folder: Path) -> None:
        for name, data in self.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


# ====================================================================== logs
@cache
def base_log(ruleset: str, players: int, seed: int) -> tuple[str, ...]:
    """The log lines of a complete game of random bots."""
    from interpreter import Game, load_ruleset
    from interpreter.bots import RandomBot
    from interpreter.gamelog import dump_entry

    game = Game.new(load_ruleset(ruleset), players, seed)
    bots = {p: RandomBot(seed, p) for p in game.players}
    while not game.over:
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    return tuple(dump_entry(e) for e in game.log)


def _dump(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return re.sub(rf'"{_HUGE}(\d+)"', lambda m: RAW[int(m.group(1))], text)


def _odd(r: random.Random) -> Any:
    if r.random() < 0.3:
        return f"{_HUGE}{r.randrange(len(RAW))}"
    return r.choice(ODD)


def _pick(r: random.Random, lines: list[str], kind: str | None = None) -> int:
    """A line of ``lines`` (of entry ``kind`` when there is one)."""
    chosen = [i for i, line in enumerate(lines) if kind is None or f'"type": "{kind}"' in line[:24]]
    return r.choice(chosen or list(range(len(lines))))


def _edit(lines: list[str], i: int, change: Callable[[dict[str, Any]], None]) -> list[str]:
    entry = json.loads(lines[i])
    change(entry)
    return lines[:i] + [_dump(entry)] + lines[i + 1:]


def _m_value(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines)
    key = r.choice([k for k in json.loads(lines[i]) if k != "type"] or ["type"])
    value = _odd(r)
    return f"line {i + 1}: {key} = {_dump(value)[:40]}", _edit(lines, i, lambda e: e.__setitem__(key, value))


def _m_index(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines, "choice")
    value = r.choice([-1, 1, 2, 7, 99, 10**6, 2**63, True, False, "0", 0.0, None, f"{_HUGE}0"])
    return f"line {i + 1}: index = {value!r}"[:80], _edit(lines, i, lambda e: e.__setitem__("index", value))


def _m_dice(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines, "choice")
    dice = r.choice([[0], [-3], [7], [1001], [10**30], [6] * 20_000, ["6"], [[6]], [1.5], [True], [],
                     [6, 6, 6, 6, 6], [f"{_HUGE}0"], 6, None])
    return f"line {i + 1}: forced dice {_dump(dice)[:30]}", _edit(lines, i, lambda e: e.__setitem__("dice", dice))


def _m_player(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines, "choice")
    value = r.choice(["nobody", "", "RED", "red\n", 0, None, ["red"], "a" * 5000])
    return f"line {i + 1}: player = {_dump(value)[:30]}", _edit(lines, i, lambda e: e.__setitem__("player", value))


def _m_keys(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines)
    entry = json.loads(lines[i])
    if r.random() < 0.5 and len(entry) > 1:
        key = r.choice(list(entry))
        del entry[key]
        return f"line {i + 1}: '{key}' removed", lines[:i] + [_dump(entry)] + lines[i + 1:]
    entry[r.choice(["extra", "Type", "type ", "__proto__", "index"])] = _odd(r)
    return f"line {i + 1}: a key added", lines[:i] + [_dump(entry)] + lines[i + 1:]


def _m_type(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines)
    value = r.choice(["header", "choice", "dice", "text", "end", "Choice", "", "rewind", 1, None])
    return f"line {i + 1}: type = {value!r}", _edit(lines, i, lambda e: e.__setitem__("type", value))


def _m_header(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    key, value = r.choice([
        ("ruleset", "no_such_game"), ("ruleset", "a" * 5000), ("ruleset", "../../etc"), ("ruleset", "/etc"),
        ("ruleset", "dice_rase"), ("ruleset", "time_of_crisis"), ("ruleset", ""), ("ruleset", "x\x00y"),
        ("ruleset", "rulesets/dice_race"), ("version", "9.9.9"), ("digest", "0" * 64), ("digest", ""),
        ("players", []), ("players", ["red"]), ("players", ["blue", "red"]), ("players", ["p"] * 65),
        ("players", ["red", "red"]), ("players", ["x" * 10] * 60), ("seed", 4), ("seed", -1), ("seed", "text"),
        ("seed", f"{_HUGE}0"), ("seed", 2**64), ("seed", 1.5), ("ludus_log", 2), ("ludus_log", True),
    ])
    return f"header: {key} = {_dump(value)[:40]}", _edit(lines, 0, lambda e: e.__setitem__(key, value))


def _m_delete(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines)
    return f"line {i + 1} deleted", lines[:i] + lines[i + 1:]


def _m_duplicate(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines)
    return f"line {i + 1} duplicated", lines[:i + 1] + lines[i:]


def _m_swap(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i, j = sorted(r.sample(range(len(lines)), 2))
    out = list(lines)
    out[i], out[j] = out[j], out[i]
    return f"lines {i + 1} and {j + 1} swapped", out


def _m_truncate(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    text = "\n".join(lines)
    cut = r.randrange(len(text))
    return f"cut after {cut} characters", text[:cut].split("\n")


def _m_deep(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines)
    depth = r.choice([17, 100, 1000, 100_000])
    entry = json.loads(lines[i])
    key = r.choice(list(entry))
    text = _dump(entry).replace(f'"{key}": ', f'"{key}": ' + "[" * depth, 1)
    if r.random() < 0.5:
        text = text[:-1] + "]" * depth + "}"
    return f"line {i + 1}: {key} nested {depth} deep", lines[:i] + [text] + lines[i + 1:]


def _m_garbage(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    i = _pick(r, lines)
    junk = r.choice(["\x00\x01\x02", "\ufeff", "{", "}", "[]", "null", "1", '"text"', "{}", "\udcff",
                     "{\"type\": \"text\", \"text\": \"x\"", "// comment", "\t", "\x1b[2J"])
    return f"line {i + 1}: replaced by {junk!r}", lines[:i] + [junk] + lines[i + 1:]


def _m_crlf(r: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    return "CRLF line ends", [line + "\r" for line in lines]


MUTATIONS: tuple[Callable[[random.Random, list[str]], tuple[str, list[str]]], ...] = (
    _m_value, _m_value, _m_index, _m_index, _m_dice, _m_dice, _m_player, _m_keys, _m_type, _m_header, _m_header,
    _m_delete, _m_duplicate, _m_swap, _m_truncate, _m_deep, _m_garbage, _m_crlf,
)


def _whole_file(r: random.Random, lines: list[str]) -> tuple[str, bytes] | None:
    """Damage to the file as a whole, now and then (bytes, not lines)."""
    roll = r.random()
    if roll < 0.02:
        return "empty file", b""
    if roll < 0.04:
        return "binary garbage", bytes(r.randrange(256) for _ in range(300))
    if roll < 0.06:
        return "a line of 3 MB", ("\n".join(lines[:3]) + "\n" + '{"type": "text", "text": "' + "x" * 3_000_000
                                  + '"}\n').encode()
    if roll < 0.08:
        text = "\n".join(lines).encode()
        return "invalid UTF-8 in the middle", text[:len(text) // 2] + b"\xff\xfe" + text[len(text) // 2:]
    return None


def tampered_log(seed: int, index: int) -> Case:
    """Case ``index`` of run ``seed``: the log of a real game with one to three mutations."""
    r = random.Random(f"tamper-log/{seed}/{index}")
    game = GAMES[r.randrange(len(GAMES))]
    lines = list(base_log(*game))
    whole = _whole_file(r, lines)
    if whole is not None:
        return Case("log", seed, index, f"{game[0]}: {whole[0]}", {LOG: whole[1]}, ["replay", LOG])
    done = []
    for _ in range(r.choice([1, 1, 1, 2, 3])):
        try:
            what, lines = r.choice(MUTATIONS)(r, lines)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError):
            continue  # an earlier mutation left a line that is no longer an object: mutate on
        done.append(what)
        if not lines:
            break
    text = "\n".join(lines) + ("\n" if r.random() < 0.9 else "")
    return Case("log", seed, index, f"{game[0]}: " + "; ".join(done), {LOG: text.encode("utf-8", "surrogatepass")},
                ["replay", LOG])


# ====================================================================== scenarios
@cache
def scenario_sources() -> tuple[Path, ...]:
    """Every scenario file of the suite, good and broken."""
    return tuple(sorted(SCENARIOS.rglob("*.yaml")) + sorted(BROKEN.glob("scenario_*.yaml")))


@cache
def _base_files() -> dict[str, bytes]:
    """tests/broken/_base, which the broken scenarios name as ``ruleset: _base`` (beside them)."""
    base = BROKEN / "_base"
    return {f"_base/{p.relative_to(base)}": p.read_bytes() for p in base.rglob("*") if p.is_file()}


class _Dumper(yaml.SafeDumper):
    """Writes a value used twice out twice: no anchors, which Ludus refuses for their own sake."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _yaml_dump(data: Any) -> str:
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000)
    return re.sub(rf"'?{_HUGE}(\d+)'?", lambda m: RAW[int(m.group(1))], text)


def _any_path(r: random.Random, data: Any, path: tuple = ()) -> tuple:
    """A random path to a value inside ``data``."""
    if isinstance(data, dict) and data and r.random() < 0.75:
        key = r.choice(list(data))
        return _any_path(r, data[key], path + (key,))
    if isinstance(data, list) and data and r.random() < 0.75:
        i = r.randrange(len(data))
        return _any_path(r, data[i], path + (i,))
    return path


def _set(data: Any, path: tuple, value: Any) -> None:
    for p in path[:-1]:
        data = data[p]
    data[path[-1]] = value


def _s_value(r: random.Random, d: dict[str, Any], ids: list[str]) -> str:
    path = _any_path(r, d)
    if not path:
        path = (r.choice(list(d)),)
    value = _odd(r) if r.random() < 0.6 else r.choice(ids)
    _set(d, path, value)
    return f"{'/'.join(map(str, path))} = {_dump(value)[:40]}"


def _s_step(r: random.Random, d: dict[str, Any], ids: list[str]) -> str:
    steps = d.get("steps")
    if not isinstance(steps, list) or not steps:
        d["steps"] = steps = [{"choose": 0}]
    i = r.randrange(len(steps))
    step = steps[i] if isinstance(steps[i], dict) else {}
    steps[i] = step
    key = r.choice(["choose", "choose", "player", "dice", "dice", "extra"])
    value = {
        "choose": lambda: r.choice([-1, 99, 10**30, 1.5, True, None, [0], {"a": 1}, "", "not offered",
                                    f"{_HUGE}0", r.choice(ids)]),
        "player": lambda: r.choice(["nobody", 0, None, ["red"], "", r.choice(ids)]),
        "dice": lambda: r.choice([[0], [-1], [7], [99], [1000], [1001], [10**30], [6] * 20_000, ["6"], 6,
                                  [[6]], [1.5], [f"{_HUGE}0"], [], [6, 6, 6, 6, 6, 6, 6, 6]]),
        "extra": lambda: _odd(r),
    }[key]()
    step[key] = value
    return f"steps/{i}/{key} = {_dump(value)[:40]}"


def _s_steps_order(r: random.Random, d: dict[str, Any], ids: list[str]) -> str:
    steps = d.get("steps")
    if not isinstance(steps, list) or len(steps) < 2:
        d["steps"] = [{"choose": 0}] * r.choice([0, 5, 50])
        return f"steps replaced by {len(d['steps'])} steps"
    i, j = r.sample(range(len(steps)), 2)
    how = r.choice(["swap", "delete", "duplicate"])
    if how == "swap":
        steps[i], steps[j] = steps[j], steps[i]
    elif how == "delete":
        del steps[i]
    else:
        steps.insert(i, steps[i])
    return f"steps: {how} {i}"


def _s_state(r: random.Random, d: dict[str, Any], ids: list[str]) -> str:
    state = d.setdefault("state", {})
    if not isinstance(state, dict):
        state = d["state"] = {}
    part = r.choice(["globals", "entities", "zones", "players", "other"])
    name = r.choice(ids + ["nope", "", "x" * 300, "hand@nobody", "hand@", "@red"])
    value = _odd(r) if r.random() < 0.5 else r.choice(ids)
    if part == "globals":
        state.setdefault("globals", {})[name] = value
    elif part == "entities":
        field_name = r.choice(["zone", "kind", "position", "value", "name", "nope", name])
        state.setdefault("entities", {})[name] = {field_name: value}
    elif part == "zones":
        state.setdefault("zones", {})[name] = r.choice([[value], [name, name], ids[:3], [], value])
    elif part == "players":
        state["players"] = r.choice([[], ["red"], ["red", "red"], [value], value, ids[:4]])
    else:
        state[name] = value
    return f"state/{part}/{str(name)[:20]} = {_dump(value)[:30]}"


def _s_expect(r: random.Random, d: dict[str, Any], ids: list[str]) -> str:
    expect = d.setdefault("expect", {})
    if not isinstance(expect, dict):
        expect = d["expect"] = {}
    key = r.choice(["globals", "entities", "zones", "result", "pending", "nope", "Entities", "stack"])
    value = r.choice([{r.choice(ids): _odd(r)}, {"a": {"b": {"c": 1}}}, _odd(r), {r.choice(ids): {"nope": 1}}])
    expect[key] = value
    return f"expect/{key} = {_dump(value)[:40]}"


def _s_assert(r: random.Random, d: dict[str, Any], ids: list[str]) -> str:
    text = r.choice(["1 +", "count(nope) == 1", "true and", "1", "\"text\"", "-" * 500 + "1 == 1",
                     "(" * 200 + "1" + ")" * 200 + " == 1", "1 / 0 == 1", "9" * 5000 + " == 1", "x" * 10_000,
                     f"count({r.choice(ids)}) == 1", "every p in players: p.nope == 1", "", "\x00",
                     " + ".join(["1"] * 2000) + " == 1", "abs(" * 300 + "1" + ")" * 300 + " == 1"])
    d.setdefault("assert", [])
    if isinstance(d["assert"], list):
        d["assert"].append(text)
    else:
        d["assert"] = [text]
    return f"assert: {text[:40]!r}"


def _s_top(r: random.Random, d: dict[str, Any], ids: list[str]) -> str:
    key, value = r.choice([
        ("ruleset", "no_such_game"), ("ruleset", "a" * 5000), ("ruleset", "../../../etc"), ("ruleset", "/etc"),
        ("ruleset", "/etc/passwd"), ("ruleset", 5), ("ruleset", "x\x00y"), ("ruleset", ""),
        ("players", 0), ("players", -1), ("players", 10**30), ("players", "two"), ("players", 1000),
        ("seed", f"{_HUGE}0"), ("seed", [1]), ("seed", 1.5), ("seed", "a" * 100_000), ("seed", -(2**70)),
        ("dice", [3]), ("dice", [0]), ("dice", [1001]), ("dice", "6"),
        ("start", {"procedure": "nope"}), ("start", {"procedure": "main", "args": {"x": 1}}), ("start", "main"),
        ("steps", None), ("steps", "all"), ("steps", {}), ("title", ["x"]), ("source", ""), ("extra", 1),
    ])
    d[key] = value
    return f"{key} = {_dump(value)[:40]}"


def _s_drop(r: random.Random, d: dict[str, Any], ids: list[str]) -> str:
    key = r.choice(list(d))
    del d[key]
    return f"'{key}' removed"


SCENARIO_MUTATIONS: tuple[Callable[[random.Random, dict[str, Any], list[str]], str], ...] = (
    _s_value, _s_value, _s_step, _s_step, _s_step, _s_steps_order, _s_state, _s_state, _s_state, _s_expect,
    _s_assert, _s_top, _s_drop,
)


def _text_damage(r: random.Random, text: str) -> tuple[str, str]:
    lines = text.split("\n")
    i = r.randrange(len(lines))
    how = r.choice(["delete", "duplicate", "truncate", "tab", "bracket", "indent", "huge", "alias", "binary",
                    "deep"])
    if how == "delete":
        del lines[i]
    elif how == "duplicate":
        lines.insert(i, lines[i])
    elif how == "truncate":
        return f"cut after {i} lines", "\n".join(lines[:i]) + "\n" + lines[i][: len(lines[i]) // 2]
    elif how == "tab":
        lines[i] = "\t" + lines[i]
    elif how == "bracket":
        lines[i] += " ["
    elif how == "indent":
        lines[i] = "   " + lines[i]
    elif how == "huge":
        lines.append("seed: " + "9" * 5000)
    elif how == "alias":
        lines = ["x: &a [1, 2]", "y: *a"] + lines
    elif how == "binary":
        lines[i] += "\x00\x07"
    else:
        lines.append("expect: {x: " + "[" * 500 + "]" * 500 + "}")
    return f"text: {how} at line {i + 1}", "\n".join(lines)


def hostile_scenario(seed: int, index: int) -> Case:
    """Case ``index`` of run ``seed``: a scenario file of the suite with one to three mutations."""
    r = random.Random(f"tamper-scenario/{seed}/{index}")
    sources = scenario_sources()
    source = sources[r.randrange(len(sources))]
    text = source.read_text(encoding="utf-8")
    name = str(source.relative_to(ROOT))
    files = dict(_base_files()) if source.parent == BROKEN else {}
    if r.random() < 0.2:
        what, out = _text_damage(r, text)
    else:
        data = yaml.safe_load(text)
        if not isinstance(data, dict):
            data = {"steps": []}
        ids = sorted({str(v) for v in re.findall(r"[a-z_]+[a-z0-9_@]*", text) if len(v) > 2})[:200] or ["red"]
        done = [r.choice(SCENARIO_MUTATIONS)(r, data, ids) for _ in range(r.choice([1, 1, 2, 3]))]
        what, out = "; ".join(done), _yaml_dump(data)
    files[SCENARIO] = out.encode("utf-8", "surrogatepass")
    return Case("scenario", seed, index, f"{name}: {what}", files, ["scenario", SCENARIO])


# ====================================================================== the judge
LOCATED = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): error: \S", re.M)
FAILED_EXPECTATION = re.compile(r"^  (?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): \S", re.M)


def judge(case: Case, code: int, err: str, *, timed_out: bool = False, raised: bool = False) -> str:
    """The class of an outcome (see the module's docstring)."""
    if timed_out:
        return "hang"
    if raised or "Traceback (most recent call last)" in err:
        return "traceback"
    if code == 0:
        return "accepted"
    if code != 1:
        return "exit"
    paths = [m["path"] for m in LOCATED.finditer(err)]
    if case.kind == "scenario" and "expectation(s) failed" in err:
        paths += [m["path"] for m in FAILED_EXPECTATION.finditer(err)]
    return "located" if case.target in paths else "unlocated"


def run_here(case: Case, folder: Path) -> tuple[str, int, str]:
    """Run a case through ``interpreter.cli.main`` in this process, in ``folder``: (class, code, stderr).

    Quicker than a real process (no interpreter start, the rulesets stay loaded), for CI; an
    exception escaping ``main`` is a traceback. There is no deadline here: benchmarks/tamper.py
    runs cases in real processes with one.
    """
    import contextlib
    import io
    import os

    from interpreter.cli import main

    case.write(folder)
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    raised = False
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(case.argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # noqa: BLE001 - what the judge is for
        import traceback
        raised = True
        code = -1
        err.write("".join(traceback.format_exception(exc)))
    finally:
        os.chdir(here)
    return judge(case, code, err.getvalue(), raised=raised), code, err.getvalue()
