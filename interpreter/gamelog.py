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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO

from .diagnostics import Diagnostic, Loc, LudusError
from .loader import find_ruleset, load_ruleset
from .model import UMPIRE, Ruleset, copy_plain
from .runtime import Game, IllegalChoice
from .savedstate import brief as _brief
from .schemas import schema
from .undo import History

MAX_LINE_BYTES = 1_000_000
MAX_LOG_BYTES = 32_000_000
MAX_LOG_LINES = 200_000  # a whole game of the largest bundled ruleset logs about 2,000
MAX_DEPTH = 64  # a log line nests three deep at most (the end line's result); a state line deeper
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


_CHOICE_KEYS = frozenset(("type", "player", "index", "label", "dice", "salt"))
_HEADER_KEYS = frozenset(("type", "ludus_log", "ruleset", "version", "digest", "players", "seed"))
_HEADER_MORE = frozenset(("seats", "setup", "from", "salted"))  # optional
MAX_SALT = 2**64 - 1
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
        if type(e.get("text")) is not str:
            return False
        if len(e) == 2:
            return True
        to = e.get("to")
        return (len(e) == 3 and type(to) is list and len(to) <= MAX_PLAYERS and len(set(map(str, to))) == len(to)
                and all(type(p) is str and len(p) <= MAX_NAME for p in to))
    if kind == "choice":
        dice = e.get("dice", [])
        index = e.get("index")
        salt = e.get("salt", 0)
        return (e.keys() <= _CHOICE_KEYS and type(e.get("player")) is str and type(index) is int and index >= 0
                and type(e.get("label")) is str and type(dice) is list and len(dice) <= MAX_DICE
                and all(type(d) is int and 1 <= d <= MAX_DIE for d in dice)
                and type(salt) is int and 0 <= salt <= MAX_SALT)
    if kind == "dice":
        values = e.get("values")
        return len(e) == 2 and type(values) is list and all(type(v) is int for v in values)
    if kind == "end":
        return len(e) == 2 and type(e.get("result")) is dict
    if kind == "undo":
        return len(e) == 2 and type(e.get("player")) is str
    if kind == "state":
        return len(e) == 2 and type(e.get("state")) is dict
    if kind == "header":
        players = e.get("players")
        log_format = e.get("ludus_log")
        seats = e.get("seats", {})
        return (_HEADER_KEYS <= e.keys() <= _HEADER_KEYS | _HEADER_MORE and type(log_format) is int
                and log_format == 1 and all(type(e[k]) is str for k in ("ruleset", "version", "digest"))
                and type(players) is list and len(players) <= MAX_PLAYERS
                and all(type(p) is str for p in players) and type(e["seed"]) in (int, str)
                and type(seats) is dict and len(seats) <= MAX_PLAYERS
                and all(type(v) is str and len(v) <= MAX_NAME for v in seats.values())
                and type(e.get("setup", "")) is str and len(e.get("setup", "")) <= MAX_NAME
                and type(e.get("from", "")) is str and len(e.get("from", "")) <= 10 * MAX_NAME
                and type(e.get("salted", True)) is bool)
    return False


def _branch(kind: str) -> dict[str, Any] | None:
    for s in schema("log")["oneOf"]:
        if s["properties"]["type"]["const"] == kind:
            return dict(s)
    return None


def _explain(entry: Any, text: str, where: Loc) -> Diagnostic:
    """Why one parsed line is not a log entry, at the key that is wrong."""
    def at(key: Any) -> Loc:
        col = text.find(json.dumps(key)) + 1 if isinstance(key, str) else 0
        return Loc(where.file, where.line, max(col, 1))

    hint = "a line is a header, state, choice, undo, dice, text or end entry: see docs/state.md"
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
        article = "an" if str(kind)[:1] in "aeiou" else "a"
        return Diagnostic(at(None), f"{article} {kind} line needs '{missing}'")
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


def kept_entries(entries: list[tuple[int, dict[str, Any]]], path: str) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The entries of the game a log records, without its undone choices; and how many were undone.

    An ``undo`` line takes back the last choice kept, which must be its player's, and
    everything logged after that choice.
    """
    kept: list[tuple[int, dict[str, Any]]] = []
    undone = 0
    for n, entry in entries:
        if entry["type"] != "undo":
            kept.append((n, entry))
            continue
        last = next((k for k in range(len(kept) - 1, -1, -1) if kept[k][1]["type"] == "choice"), None)
        if last is None or kept[last][1]["player"] != entry["player"]:
            whose = "no choice" if last is None else f"a choice of {kept[last][1]['player']}"
            raise LudusError([Diagnostic(Loc(path, n, 1), f"undo of {entry['player']} after {whose}",
                                         "an undo takes back its own player's last choice")])
        del kept[last:]
        undone += 1
    return kept, undone


@dataclass
class LogStart:
    """How a logged game began: its header, its ruleset, its starting state line if any."""

    header: dict[str, Any]
    at_header: Loc
    rs: Ruleset
    state: dict[str, Any] | None


def log_start(path: Path, entries: list[tuple[int, dict[str, Any]]], ruleset: str | None) -> LogStart:
    """Check a log's header against the ruleset it names (or ``ruleset``) and load that."""
    line0, header = entries[0]
    at_header = Loc(str(path), line0, 1)
    manifest = _find(ruleset or header["ruleset"], at_header, ruleset is not None)
    setup = header.get("setup")
    try:
        rs = load_ruleset(manifest.parent, setup=setup)
    except LudusError as exc:
        if setup is None or "set-up" not in exc.diagnostics[0].message:
            raise
        raise LudusError([Diagnostic(at_header, exc.diagnostics[0].message, exc.diagnostics[0].hint)]) from None
    if rs.digest != header["digest"]:
        raise LudusError([Diagnostic(at_header,
                                     f"the log was written with a different version of ruleset '{header['ruleset']}'",
                                     "replay with the files it was written with: --ruleset PATH")])
    problem = rs.player_count_problem(len(header["players"]))
    if problem:
        raise LudusError([Diagnostic(at_header, f"the log's seats do not fit: {problem}")])
    state = entries[1][1]["state"] if len(entries) > 1 and entries[1][1]["type"] == "state" else None
    for n, entry in entries[2:] if state is not None else entries[1:]:
        if entry["type"] in ("header", "state"):
            raise LudusError([Diagnostic(Loc(str(path), n, 1), f"a {entry['type']} line in the middle of a log",
                                         "a log has one header, then (if it began from a position) one state line")])
        stranger = next((p for p in entry.get("to", ()) if p not in header["players"]), None) \
            if entry["type"] == "text" else None
        if stranger is not None:
            raise LudusError([Diagnostic(Loc(str(path), n, 1), f"a text line told to {_brief(stranger)}, "
                                         "who has no seat in this game",
                                         "'to' lists seats of the header's players: "
                                         + ", ".join(header["players"]))])
    return LogStart(header, at_header, rs, state)


def begin(start: LogStart, path: Path, line: int, on_signal: Callable[[Game, str], None] | None = None) -> Game:
    """The game a log's header (and state line) begins, before its first choice (``on_signal``:
    see ``Game.on_signal``)."""
    rs, header = start.rs, start.header
    if start.state is not None:
        try:
            game = Game.resume(rs, copy_plain(start.state), owned=True)
        except LudusError as exc:
            raise LudusError([Diagnostic(Loc(str(path), line, 1), f"the log's starting position: "
                                         f"{exc.diagnostics[0].message}")]) from None
        game.log = [dict(header), {"type": "state", "state": copy_plain(start.state)}]
        game.on_signal = on_signal
    else:
        game = Game.new(rs, len(header["players"]), header["seed"], on_signal=on_signal)
        game.log[0] = dict(header)  # the optional parts too (seats, setup)
    if game.players != header["players"]:
        raise LudusError([Diagnostic(start.at_header, "the log's seats do not match the ruleset's seats")])
    return game


def replay(path: str | Path, ruleset: str | None = None, to: int | None = None,
           before_choice: Callable[[Game, dict[str, Any]], None] | None = None, partial: bool = False,
           history: History | None = None, on_signal: Callable[[Game, str], None] | None = None) -> Game:
    """Re-run a log and check that it reproduces exactly; returns the game at its end.

    The log is compared with what the rules produce as the replay goes, so a log that
    diverges is refused at its first wrong line without playing the rest. Undone choices
    are left out (:func:`kept_entries`). ``to``: stop after that many choices.
    ``before_choice(game, entry)`` is called before each choice is made (to let bots
    follow the game they will continue). ``partial``: the log may stop anywhere (a game
    stopped while its log was written), the game then goes on from there. ``history``:
    make the choices through it, so that the last ones may be undone as the game goes on.
    ``on_signal(game, name)``: called at every ``signal`` of the rules as they replay.
    """
    p = Path(path)
    entries, _ = kept_entries(read_log(p), str(p))
    start = log_start(p, entries, ruleset)
    game = begin(start, p, entries[1][0] if start.state is not None else entries[0][0], on_signal)
    choices = [k for k, (_, e) in enumerate(entries) if e["type"] == "choice"]
    if to is not None and to < len(choices):
        entries = entries[:choices[to]]  # up to the line before choice number to + 1
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
        if entry["player"] == UMPIRE and not start.rs.umpire:
            raise LudusError([Diagnostic(Loc(str(p), n, 1), f"a choice by the umpire, but ruleset '{start.rs.name}' "
                                         "declares no umpire seat",
                                         "only a ruleset with 'umpire: true' in ruleset.yaml has one")])
        if before_choice is not None:
            before_choice(game, entry)
        _apply(game, entry, Loc(str(p), n, 1), history)
        compare(len(game.log))
    compare(len(game.log))
    produced = game.log
    if len(produced) < len(entries):
        n, entry = entries[len(produced)]
        raise LudusError([Diagnostic(Loc(str(p), n, 1), "replay diverges: the rules produced nothing more, "
                                     f"the log has {dump_entry(entry)}")])
    if len(produced) > len(entries) and to is None and not partial:
        raise LudusError([Diagnostic(Loc(str(p), entries[-1][0], 1), "replay diverges: the log ends early; the rules "
                                     f"go on with {dump_entry(produced[len(entries)])}")])
    return game


def _apply(game: Game, entry: dict[str, Any], where: Loc, history: History | None = None) -> None:
    """Apply one logged choice; a refusal or a rule failing on its forced dice is this line's error."""
    try:
        if history is not None:
            history.apply(game, entry["index"], entry["player"], entry.get("dice"), entry.get("salt"))
        else:
            game.apply(entry["index"], entry["player"], entry.get("dice"), entry.get("salt"))
    except IllegalChoice as exc:
        raise LudusError([Diagnostic(where, f"replay diverges: {exc.reason}")]) from None
    except LudusError as exc:
        first = exc.diagnostics[0]
        raise LudusError([Diagnostic(where, f"replay fails at this choice: {first.message}",
                                     f"the rules stopped at {first.loc}")]) from None
