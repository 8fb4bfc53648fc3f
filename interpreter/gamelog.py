"""Game logs: append-only JSON Lines of choices, dice, narration and the result; replay.

Same ruleset + seed + choices gives a byte-identical log, so a log is also a
regression test: replaying it checks that the rules still produce every die and
every line it recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from .diagnostics import Diagnostic, Loc, LudusError
from .loader import find_ruleset, load_ruleset
from .runtime import Game, IllegalChoice
from .schemas import validator


def dump_entry(entry: dict[str, Any]) -> str:
    """One log line (stable key order, no trailing spaces)."""
    return json.dumps(entry, ensure_ascii=False, separators=(", ", ": "))


def write_log(entries: list[dict[str, Any]], out: TextIO) -> None:
    for e in entries:
        out.write(dump_entry(e) + "\n")


def read_log(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """Read and validate a log file; every problem is located at its line."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise LudusError([Diagnostic(Loc(str(p)), "log file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LudusError([Diagnostic(Loc(str(p)), f"cannot read log: {exc}")]) from None
    entries: list[tuple[int, dict[str, Any]]] = []
    diags: list[Diagnostic] = []
    v = validator("log")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            diags.append(Diagnostic(Loc(str(p), n, exc.colno), f"not valid JSON: {exc.msg}",
                                    "each line of a log is one JSON object"))
            continue
        problems = list(v.iter_errors(entry))
        if problems:
            kind = entry.get("type") if isinstance(entry, dict) else None
            diags.append(Diagnostic(Loc(str(p), n, 1), f"not a valid log entry (type {kind!r})",
                                    "entries are header, choice, dice, text or end"))
            continue
        entries.append((n, entry))
    if not diags and (not entries or entries[0][1]["type"] != "header"):
        diags.append(Diagnostic(Loc(str(p), entries[0][0] if entries else 1, 1), "a log starts with its header line"))
    if diags:
        raise LudusError(diags)
    return entries


def replay(path: str | Path, ruleset: str | None = None) -> Game:
    """Re-run a log and check that it reproduces exactly; returns the final game."""
    p = Path(path)
    entries = read_log(p)
    line0, header = entries[0]
    spec = ruleset or header["ruleset"]
    try:
        manifest = find_ruleset(spec)
    except LudusError:
        if ruleset:
            raise
        raise LudusError([Diagnostic(Loc(str(p), line0, 1), f"the log's ruleset '{spec}' is not a bundled ruleset",
                                     "give its folder with --ruleset PATH")]) from None
    rs = load_ruleset(manifest.parent)
    if rs.digest != header["digest"]:
        raise LudusError([Diagnostic(Loc(str(p), line0, 1),
                                     f"the log was written with a different version of ruleset '{header['ruleset']}'",
                                     "replay with the files it was written with: --ruleset PATH")])
    game = Game.new(rs, len(header["players"]), header["seed"])
    if game.state["players"] != header["players"]:
        raise LudusError([Diagnostic(Loc(str(p), line0, 1), "the log's seats do not match the ruleset's seats")])
    for n, entry in entries:
        if entry["type"] != "choice":
            continue
        try:
            game.apply(entry["index"], entry["player"], entry.get("dice"))
        except IllegalChoice as exc:
            raise LudusError([Diagnostic(Loc(str(p), n, 1), f"replay diverges: {exc.reason}")]) from None
    produced = game.log
    for i, (n, entry) in enumerate(entries):
        if i >= len(produced):
            raise LudusError([Diagnostic(Loc(str(p), n, 1), "replay diverges: the rules produced nothing more, "
                                         f"the log has {dump_entry(entry)}")])
        if produced[i] != entry:
            raise LudusError([Diagnostic(Loc(str(p), n, 1), f"replay diverges: the log has {dump_entry(entry)}, "
                                         f"the rules now give {dump_entry(produced[i])}")])
    if len(produced) > len(entries):
        last = entries[-1][0] if entries else 1
        raise LudusError([Diagnostic(Loc(str(p), last, 1), "replay diverges: the log ends early; the rules go on with "
                                     f"{dump_entry(produced[len(entries)])}")])
    return game
