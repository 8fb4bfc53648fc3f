"""`ludus simulate/compare --resume DIR`: go on with an interrupted run.

A run writes its ``run.json`` (the plan and the ruleset's digest) before the first game,
and its records to ``games.jsonl`` in game order, so an interrupted run leaves a prefix of
the games: games 0 … k-1, perhaps followed by half a line. Resuming checks that the
command asks for the same games (every value of the plan and the rules' digest), keeps
the longest prefix of well-formed records that are the games the plan describes, cuts the
file there and plays games k … N-1 only. Game i depends on (seed, i) alone, so the
finished files are those an uninterrupted run writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .diagnostics import Diagnostic, Loc, LudusError
from .model import Ruleset

if TYPE_CHECKING:
    from .simulate import Plan

# the plan's values a resumed run must share, with the option that sets each
_OPTIONS = {"games": "--games", "players": "--players", "bots": "--bots", "rotate": "--rotate",
            "seed": "--seed", "max_decisions": "--max-decisions", "setup": "--setup", "start": "--from"}


def _error(message: str, hint: str = "") -> LudusError:
    return LudusError([Diagnostic(Loc("ludus"), message, hint)])


def started_json(rs: Ruleset, plan: Plan) -> str:
    """run.json as written before the first game: enough to check a resumed command against."""
    info = {"complete": False, "ruleset": {"name": rs.name, "version": rs.version, "digest": rs.digest},
            "plan": asdict(plan)}
    return json.dumps(info, indent=1, ensure_ascii=False) + "\n"


def check(folder: Path, rs: Ruleset, plan: Plan) -> None:
    """The command must ask for the games the run in ``folder`` was playing; else say what differs."""
    path = folder / "run.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        old_plan, old_rules = stored["plan"], stored["ruleset"]
    except FileNotFoundError:
        raise _error(f"--resume {folder}: there is no run.json in it",
                     "give the --out folder of a run of ludus simulate") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _error(f"--resume {folder}: cannot read its run.json ({exc})") from None
    new = asdict(plan)
    diffs = []
    if old_rules.get("name") != rs.name:
        diffs.append(f"the ruleset (the run: {old_rules.get('name')}, now: {rs.name})")
    elif old_rules.get("digest") != rs.digest:
        diffs.append(f"the rules of {rs.name} (they changed since the run: digest "
                     f"{str(old_rules.get('digest'))[:12]} then, {rs.digest[:12]} now)")
    for key, option in _OPTIONS.items():
        then, now = old_plan.get(key), new[key]
        if isinstance(now, tuple):
            now = list(now)
        if then != now:
            if key == "bots":
                then, now = ",".join(then or []), ",".join(now)
            if key == "start":  # a whole position: not worth printing
                then, now = "one position", "another"
            diffs.append(f"{option} (the run: {then}, now: {now})")
    if diffs:
        raise _error(f"--resume {folder}: this command asks for other games than the run in it: "
                     + "; ".join(diffs),
                     "repeat the run's own command with --resume, or give a new --out folder")


@dataclass(frozen=True)
class Kept:
    """The records of an interrupted run that are kept: the first ``count`` games, ``size`` bytes."""

    count: int
    size: int


def kept(jsonl: Path, plan: Plan, seeds: Any) -> Kept:
    """The longest prefix of ``jsonl`` whose lines are the plan's games 0, 1, 2, … (whole lines
    only: a line cut by the interruption, or anything after a line that is not the expected
    game, is played again). ``seeds(i)`` is game i's seed."""
    count = size = 0
    if not jsonl.is_file():
        return Kept(0, 0)
    with open(jsonl, "rb") as fh:
        for line in fh:
            if count >= plan.games or not line.endswith(b"\n") or not _is_game(line, count, plan, seeds):
                break
            count += 1
            size += len(line)
    return Kept(count, size)


def _is_game(line: bytes, index: int, plan: Plan, seeds: Any) -> bool:
    try:
        rec = json.loads(line)
    except ValueError:
        return False
    return (isinstance(rec, dict) and rec.get("game") == index and rec.get("seed") == seeds(index)
            and isinstance(rec.get("bots"), dict) and tuple(rec["bots"].values()) == plan.seat_bots(index))


def kept_records(jsonl: Path, count: int) -> Iterator[dict[str, Any]]:
    """The first ``count`` records of ``jsonl`` (those :func:`kept` accepted)."""
    if count == 0:
        return
    with open(jsonl, encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if n >= count:
                return
            yield json.loads(line)
