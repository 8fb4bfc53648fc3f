"""Game logs: append-only JSON Lines of choices, dice, narration and the result; replay.

Same ruleset + seed + choices gives a byte-identical log, so a log is also a
regression test: replaying it checks that the rules still produce every die and
every line it recorded.

A log may come from a stranger, so reading one is bounded (line length, line count, file
size, nesting depth, digits of a number) and every problem is a located error at the log's
own line, never a traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import IO, Any, TextIO

from .diagnostics import Diagnostic, Loc, LudusError
from .loader import find_ruleset, load_ruleset
from .model import MAX_INT, Ruleset
from .runtime import Game, IllegalChoice
from .schemas import schema

MAX_LINE_BYTES = 1_000_000
MAX_LOG_BYTES = 32_000_000
MAX_LOG_LINES = 200_000  # a whole game of the largest bundled ruleset logs about 2,000
MAX_DEPTH = 16  # a log line nests three deep at most (the end line's result)
MAX_DIGITS = 20  # enough for any 64-bit seed
MAX_ERRORS = 20  # reading stops after this many bad lines: the rest would only repeat it
MAX_NAME = 100  # characters of the header's ruleset name

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")
_PLAIN = {"object": "a mapping", "array": "a list", "string": "text", "integer": "a whole number"}
_NAME = re.compile(r"[^/\\\x00-\x1f]+")


def dump_entry(entry: dict[str, Any]) -> str:
    """One log line (stable key order, no trailing spaces)."""
    return json.dumps(entry, ensure_ascii=False, separators=(", ", ": "))


def write_log(entries: list[dict[str, Any]], out: TextIO) -> None:
    """Write entries as JSON Lines."""
    for e in entries:
        out.write(dump_entry(e) + "\n")


class _BadNumber(ValueError):
    def __init__(self, text: str, message: str) -> None:
        super().__init__(message)
        self.text = text


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _BadNumber(text, f"a number of {len(text.lstrip('-'))} digits (a log's numbers have at most "
                               f"{MAX_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    raise _BadNumber(text, f"{text[:40]} is not a whole number (a log holds whole numbers only)")


def _constant(text: str) -> float:
    raise _BadNumber(text, f"{text} is not a number JSON allows")


def _too_deep(line: str) -> int:
    """The column where ``line`` nests deeper than MAX_DEPTH, or 0."""
    if line.count("[") + line.count("{") <= MAX_DEPTH:
        return 0
    depth = 0
    bare = _STRING.sub(lambda m: " " * len(m.group()), line)  # brackets inside strings do not nest
    for m in _BRACKET.finditer(bare):
        depth += 1 if m.group() in "[{" else -1
        if depth > MAX_DEPTH:
            return m.start() + 1
    return 0


_DECODER = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant)


def _parse_line(text: str, path: str, n: int) -> tuple[Any, Diagnostic | None]:
    col = _too_deep(text)
    if col:
        return None, Diagnostic(Loc(path, n, col), f"nested more than {MAX_DEPTH} deep",
                                "a log line is a flat JSON object")
    try:
        return _DECODER.decode(text), None
    except _BadNumber as exc:
        return None, Diagnostic(Loc(path, n, text.find(exc.text) + 1), str(exc))
    except json.JSONDecodeError as exc:
        return None, Diagnostic(Loc(path, n, exc.colno), f"not valid JSON: {exc.msg}",
                                "each line of a log is one JSON object")
    except (ValueError, RecursionError) as exc:  # what json itself refuses past its own limits
        return None, Diagnostic(Loc(path, n, 1), f"not valid JSON: {exc}")


_CHOICE_KEYS = frozenset(("type", "player", "index", "label", "dice"))
_HEADER_KEYS = frozenset(("type", "ludus_log", "ruleset", "version", "digest", "players", "seed"))
MAX_PLAYERS = 64  # seats in a header (the schema's maxItems)
MAX_DICE = 10_000  # forced dice of one choice (the schema's maxItems)
MAX_DIE = 1000  # a forced die's face (the schema's maximum, model.MAX_SIDES)


def valid_entry(e: Any) -> bool:
    """Whether one parsed line is a log entry: schemas/log.schema.json, checked by hand.

    A log may have hundreds of thousands of lines, and the general check of a schema costs
    about 100 µs a line; this costs a few. jsonschema explains the lines this refuses, and
    tests/security/test_sec_inputs.py checks that both agree. Floats never reach here
    (read_log refuses them while parsing), so ``type(x) is int`` is the schema's integer.
    """
    if type(e) is not dict:
        return False
    kind = e.get("type")
    if kind == "text":
        return len(e) == 2 and type(e.get("text")) is str
    if kind == "choice":
        dice = e.get("dice", [])
        index = e.get("index")
        return (e.keys() <= _CHOICE_KEYS and type(e.get("player")) is str and type(index) is int and index >= 0
                and type(e.get("label")) is str and type(dice) is list and len(dice) <= MAX_DICE
                and all(type(d) is int and 1 <= d <= MAX_DIE for d in dice))
    if kind == "dice":
        values = e.get("values")
        return len(e) == 2 and type(values) is list and all(type(v) is int for v in values)
    if kind == "end":
        return len(e) == 2 and type(e.get("result")) is dict
    if kind == "header":
        players = e.get("players")
        log_format = e.get("ludus_log")
        return (e.keys() == _HEADER_KEYS and type(log_format) is int and log_format == 1
                and all(type(e[k]) is str for k in ("ruleset", "version", "digest"))
                and type(players) is list and len(players) <= MAX_PLAYERS
                and all(type(p) is str for p in players) and type(e["seed"]) in (int, str))
    return False


def _branch(kind: str) -> dict[str, Any] | None:
    for s in schema("log")["oneOf"]:
        if s["properties"]["type"]["const"] == kind:
            return dict(s)
    return None


def _brief(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _explain(entry: Any, text: str, where: Loc) -> Diagnostic:
    """Why one parsed line is not a log entry, at the key that is wrong."""
    def at(key: Any) -> Loc:
        col = text.find(json.dumps(key)) + 1 if isinstance(key, str) else 0
        return Loc(where.file, where.line, max(col, 1))

    hint = "a line is a header, choice, dice, text or end entry: see docs/state.md"
    if not isinstance(entry, dict):
        return Diagnostic(at(None), f"a log line is a JSON object, not {_brief(entry)}", hint)
    kind = entry.get("type")
    branch = _branch(kind) if isinstance(kind, str) else None
    if branch is None:
        return Diagnostic(at("type"), f"unknown log entry type {_brief(kind)}", hint)
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    err = best_match(Draft202012Validator(branch).iter_errors(entry))
    if err is None:  # pragma: no cover - is_valid and jsonschema agree (test_standards)
        return Diagnostic(at(None), f"not a valid {kind} line", hint)
    path = list(err.absolute_path)
    key = path[0] if path else None
    field = "/".join(str(p) for p in path)
    v, arg = err.validator, err.validator_value
    if v == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        return Diagnostic(at(None), f"a {kind} line needs '{missing}'")
    if v == "additionalProperties":
        extra = sorted(set(entry) - set(branch["properties"]))
        return Diagnostic(at(extra[0] if extra else None), f"unknown key {_brief(extra[0] if extra else '')} "
                          f"in a {kind} line", "allowed: " + ", ".join(branch["properties"]))
    types = [arg] if isinstance(arg, str) else list(arg) if isinstance(arg, list) else []
    what = {"type": "must be " + " or ".join(_PLAIN.get(t, t) for t in types),
            "minimum": f"must be at least {arg}", "maximum": f"must be at most {arg}",
            "maxLength": f"must be at most {arg} characters long", "maxItems": f"holds at most {arg} items",
            "const": f"must be {_brief(arg)}"}.get(str(v), f"is not valid ({v})")
    shown = f"{len(err.instance)} characters" if v == "maxLength" else \
        f"{len(err.instance)} items" if v == "maxItems" else _brief(err.instance)
    return Diagnostic(at(key), f"'{field}' of a {kind} line {what}, not {shown}")


def _raw_lines(fh: IO[bytes], path: str, diags: list[Diagnostic]) -> list[tuple[int, bytes]]:
    """The log's lines as bytes, each with its number; refuses what is past the limits."""
    out: list[tuple[int, bytes]] = []
    total = 0
    n = 0
    while len(diags) < MAX_ERRORS:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        n += 1
        total += len(raw)
        if n > MAX_LOG_LINES or total > MAX_LOG_BYTES:
            diags.append(Diagnostic(Loc(path, n, 1), f"the log is longer than {MAX_LOG_LINES} lines or "
                                    f"{MAX_LOG_BYTES // 1_000_000} MB", "a log of a whole game is far shorter"))
            break
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            diags.append(Diagnostic(Loc(path, n, 1), f"line longer than {MAX_LINE_BYTES} bytes",
                                    "each line of a log is one short JSON object"))
            while raw and not raw.endswith(b"\n"):
                raw = fh.readline(1 << 20)
                total += len(raw)
            continue
        out.append((n, raw))
    return out


def read_log(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """Read and validate a log file; every problem is located at its line."""
    p = Path(path)
    diags: list[Diagnostic] = []
    try:
        with p.open("rb") as fh:
            raw_lines = _raw_lines(fh, str(p), diags)
    except FileNotFoundError:
        raise LudusError([Diagnostic(Loc(str(p)), "log file not found")]) from None
    except OSError as exc:
        raise LudusError([Diagnostic(Loc(str(p)), f"cannot read log: {exc.strerror or exc}")]) from None
    if diags:  # past a size limit: what was read is not worth parsing
        raise LudusError(diags)
    entries: list[tuple[int, dict[str, Any]]] = []
    path = str(p)
    for n, raw in raw_lines:
        if len(diags) >= MAX_ERRORS:
            break
        try:
            line = raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
        except UnicodeDecodeError as exc:
            diags.append(Diagnostic(Loc(str(p), n, exc.start + 1), "not UTF-8 text", "a log is a text file"))
            continue
        if not line.strip():
            continue
        entry, problem = _parse_line(line, path, n)
        if problem is None and not valid_entry(entry):
            problem = _explain(entry, line, Loc(path, n, 1))
            if n == raw_lines[-1][0] and not raw.endswith(b"\n"):
                problem = Diagnostic(problem.loc, problem.message, "the last line may be cut short")
        if problem is not None:
            diags.append(problem)
            continue
        entries.append((n, entry))
    if len(diags) >= MAX_ERRORS:
        diags.append(Diagnostic(Loc(str(p), diags[-1].loc.line, 1), f"stopped after {MAX_ERRORS} errors"))
    if not diags and (not entries or entries[0][1]["type"] != "header"):
        diags.append(Diagnostic(Loc(str(p), entries[0][0] if entries else 1, 1), "a log starts with its header line",
                                "" if entries else "the log is empty"))
    if diags:
        raise LudusError(diags)
    return entries


def _find(spec: str, header_at: Loc, explicit: bool) -> Path:
    """The manifest of the ruleset a log names (or the one given with --ruleset)."""
    if not explicit and not (len(spec) <= MAX_NAME and _NAME.fullmatch(spec) and not spec.startswith(".")):
        shown = spec if len(spec) <= 40 else spec[:37] + "..."
        raise LudusError([Diagnostic(header_at, f"the log's ruleset '{shown}' is not a ruleset name",
                                     "give its folder with --ruleset PATH")])
    try:
        return find_ruleset(spec)
    except (LudusError, OSError, ValueError):
        if explicit:
            raise
        raise LudusError([Diagnostic(header_at, f"the log's ruleset '{spec}' is not a bundled ruleset",
                                     "give its folder with --ruleset PATH")]) from None


def replay(path: str | Path, ruleset: str | None = None) -> Game:
    """Re-run a log and check that it reproduces exactly; returns the final game.

    The log is compared with what the rules produce as the replay goes, so a log that
    diverges is refused at its first wrong line without playing the rest.
    """
    p = Path(path)
    entries = read_log(p)
    line0, header = entries[0]
    at_header = Loc(str(p), line0, 1)
    rs = load_ruleset(_find(ruleset or header["ruleset"], at_header, ruleset is not None).parent)
    if rs.digest != header["digest"]:
        raise LudusError([Diagnostic(at_header,
                                     f"the log was written with a different version of ruleset '{header['ruleset']}'",
                                     "replay with the files it was written with: --ruleset PATH")])
    problem = rs.player_count_problem(len(header["players"]))
    if problem:
        raise LudusError([Diagnostic(at_header, f"the log's seats do not fit: {problem}")])
    game = Game.new(rs, len(header["players"]), header["seed"])
    if game.state["players"] != header["players"]:
        raise LudusError([Diagnostic(at_header, "the log's seats do not match the ruleset's seats")])
    checked = 0

    def compare(upto: int) -> None:
        nonlocal checked
        produced = game.log
        for i in range(checked, min(upto, len(entries), len(produced))):
            n, entry = entries[i]
            if produced[i] != entry:
                raise LudusError([Diagnostic(Loc(str(p), n, 1), f"replay diverges: the log has {dump_entry(entry)}, "
                                             f"the rules now give {dump_entry(produced[i])}")])
        checked = max(checked, min(upto, len(entries), len(produced)))

    for k, (n, entry) in enumerate(entries):
        if entry["type"] != "choice":
            continue
        compare(k)
        _apply(game, entry, Loc(str(p), n, 1))
        compare(len(game.log))
    compare(len(game.log))
    produced = game.log
    if len(produced) < len(entries):
        n, entry = entries[len(produced)]
        raise LudusError([Diagnostic(Loc(str(p), n, 1), "replay diverges: the rules produced nothing more, "
                                     f"the log has {dump_entry(entry)}")])
    if len(produced) > len(entries):
        raise LudusError([Diagnostic(Loc(str(p), entries[-1][0], 1), "replay diverges: the log ends early; the rules "
                                     f"go on with {dump_entry(produced[len(entries)])}")])
    return game


def _apply(game: Game, entry: dict[str, Any], where: Loc) -> None:
    """Apply one logged choice; a refusal or a rule failing on its forced dice is this line's error."""
    try:
        game.apply(entry["index"], entry["player"], entry.get("dice"))
    except IllegalChoice as exc:
        raise LudusError([Diagnostic(where, f"replay diverges: {exc.reason}")]) from None
    except LudusError as exc:
        first = exc.diagnostics[0]
        raise LudusError([Diagnostic(where, f"replay fails at this choice: {first.message}",
                                     f"the rules stopped at {first.loc}")]) from None


# ====================================================================== saved states
_STATE_KEYS = ("format", "ruleset", "seed", "players", "globals", "entities", "zones", "modifiers", "rng",
               "forced_dice", "next_id", "next_modifier", "stack", "pending", "result")
_PENDING_TYPES = ("choice", "action", "secret")


def state_problem(rs: Ruleset, state: Any) -> str:
    """Why ``state`` is not a game of ``rs`` the engine could have saved ('' when it may be resumed).

    A saved state may come from anyone, and the run loop trusts it (its frames name procedures
    and instruction numbers, its zones and entities point at each other), so Game.resume asks
    this first. The checks are by hand and cost well under a millisecond for the largest
    bundled game (the schema's general check costs several): the parts, their types, and that
    frames, entities, zones and seats refer to what exists. Values the rules read are checked
    by the rules as they run.
    """
    if type(state) is not dict:
        return "a saved state is a JSON object"
    missing = [k for k in _STATE_KEYS if k not in state]
    if missing or len(state) != len(_STATE_KEYS):
        extra = sorted(str(k) for k in state if k not in _STATE_KEYS)
        return f"missing {', '.join(missing)}" if missing else f"unknown part {', '.join(extra)}"
    saved = state["ruleset"]
    if type(saved) is not dict:
        return "ruleset: a mapping of name, version and digest"
    if saved.get("name") != rs.name or saved.get("digest") != rs.digest:
        return ""  # Game.resume says which ruleset saved it
    if state["format"] == 1 and type(state["format"]) is int:
        # format 1 counted a frame's place in instructions; format 2 in resume points
        return ("format: saved in format 1 by an older Ludus, whose saved frames this engine cannot continue; "
                "replay its log instead (ludus replay LOG)")
    if state["format"] != 2 or type(state["format"]) is not int:
        return "format: this engine reads format 2"
    for key in ("rng", "next_id", "next_modifier"):
        value = state[key]
        if type(value) is not int or not 0 <= value <= (MAX_INT if key != "rng" else 2**64 - 1):
            return f"{key}: not a whole number in range"
    if type(state["seed"]) not in (int, str):
        return "seed: a whole number or text"
    dice = state["forced_dice"]
    if type(dice) is not list or any(type(d) is not int or not 1 <= d <= MAX_DIE for d in dice):
        return f"forced_dice: a list of dice from 1 to {MAX_DIE}"
    return (_entities_problem(rs, state) or _stack_problem(rs, state) or _pending_problem(rs, state)
            or ("" if type(state["modifiers"]) is list and all(type(m) is dict for m in state["modifiers"])
                else "modifiers: a list of records")
            or ("" if state["result"] is None or type(state["result"]) is dict else "result: a mapping or null"))


def _entities_problem(rs: Ruleset, state: dict[str, Any]) -> str:
    ents, zones, players, glob = state["entities"], state["zones"], state["players"], state["globals"]
    if type(ents) is not dict or type(zones) is not dict or type(players) is not list or type(glob) is not dict:
        return "entities, zones and globals are mappings, players a list"
    if set(glob) != set(rs.globals):
        return "globals: not the ruleset's globals"
    for eid, e in ents.items():
        if type(e) is not dict or e.get("kind") not in rs.kinds:
            return f"entities/{eid}: not an entity of a kind of the ruleset"
        if e.get("zone") is not None and e["zone"] not in zones:
            return f"entities/{eid}/zone: no zone '{e['zone']}'"
    if not players or any(type(p) is not str or p not in ents for p in players) or len(set(players)) != len(players):
        return "players: the seats, each an entity"
    for key, items in zones.items():
        name, _, owner = str(key).partition("@")
        z = rs.zones.get(name)
        if z is None or (z.per is None) != (owner == "") or (owner and ents.get(owner, {}).get("kind") != z.per):
            return f"zones/{key}: not a zone of the ruleset"
        if type(items) is not list or any(type(i) is not str or ents.get(i, {}).get("zone") != key for i in items):
            return f"zones/{key}: every item must be an entity that is in this zone"
    return ""


def _stack_problem(rs: Ruleset, state: dict[str, Any]) -> str:
    stack = state["stack"]
    if type(stack) is not list:
        return "stack: a list of frames"
    for i, fr in enumerate(stack):
        if type(fr) is not dict or set(fr) != {"proc", "pc", "locals", "ret"}:
            return f"stack/{i}: a frame has proc, pc, locals and ret"
        name = fr["proc"]
        proc = rs.actions[name[7:]].proc if type(name) is str and name.startswith("action:") and \
            name[7:] in rs.actions else rs.procedures.get(name) if type(name) is str else None
        if proc is None:
            return f"stack/{i}/proc: no procedure {_brief(name)}"
        if type(fr["pc"]) is not int or (fr["pc"] != 0 and fr["pc"] not in proc.points):
            return f"stack/{i}/pc: not a resume point of '{name}'"
        if type(fr["locals"]) is not dict or (fr["ret"] is not None and type(fr["ret"]) is not str):
            return f"stack/{i}: locals is a mapping, ret a name or null"
    return ""


def _pending_problem(rs: Ruleset, state: dict[str, Any]) -> str:
    p = state["pending"]
    if p is None:
        return "" if state["result"] is not None else "pending: a game that is not over waits for a decision"
    if type(p) is not dict or p.get("type") not in _PENDING_TYPES:
        return "pending: null or a decision of type choice, action or secret"
    if p["type"] != "action" and type(p.get("var")) is not str:
        return "pending: a choice names the variable it sets"
    if p["type"] == "secret":
        asked, answers = p.get("players"), p.get("answers")
        if type(asked) is not dict or type(answers) is not dict or not set(answers) <= set(asked) or \
                not set(asked) <= set(state["players"]) or \
                any(type(q) is not dict or not _options_ok(q.get("options")) for q in asked.values()):
            return "pending: a secret decision has seats (each with options) and their answers"
        return ""
    if p.get("player") not in state["players"] or not _options_ok(p.get("options")):
        return "pending: a decision has a seat and a list of options"
    if p["type"] == "action" and any(type(o["value"]) is not dict or o["value"].get("action") not in rs.actions
                                     or type(o["value"].get("args")) is not dict for o in p["options"]):
        return "pending: each option of an action decision names an action of the ruleset and its arguments"
    return ""


def _options_ok(options: Any) -> bool:
    return type(options) is list and all(type(o) is dict and type(o.get("label")) is str and "value" in o
                                         for o in options)
