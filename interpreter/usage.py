"""Which rules a run of games used: how often each action was taken and each procedure a
component carries (an event's effect, an ability) ran — and, for ``compare``, whether the rules
a variant changes were used often enough for a difference to show.

A game counts every frame the rules push (:meth:`interpreter.game.machine.Machine.push`):
actions (``action:NAME``), the procedures that may pause, and every procedure-valued field
(``ENTRY.FIELD``). A procedure that never pauses runs without a frame and is not counted, nor
are functions, tables and values: for a change of one of those, ``compare`` says so.
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .model import Ruleset

# Games needed to see a change of DETECT in a rate near 50% (two-sided 5%, power 80%), per ruleset.
DETECT = 0.05
_Z = 1.96 + 0.84
GAMES_FOR_DETECT = math.ceil(2 * _Z * _Z * 0.25 / (DETECT * DETECT))
FEW = 0.2  # a changed rule used in fewer games than this share is reported


class Usage:
    """Per rule: in how many games it ran, and how many times in all."""

    def __init__(self) -> None:
        self.games: Counter[str] = Counter()
        self.times: Counter[str] = Counter()
        self.counted = 0  # games that carried counts

    def add(self, fired: dict[str, int] | None) -> None:
        if fired is None:
            return
        self.counted += 1
        for name, n in fired.items():
            self.games[name] += 1
            self.times[name] += n


def shown(name: str) -> bool:
    """Whether a counted rule is listed in a summary: actions and carried procedures."""
    return name.startswith("action:") or "." in name


def rows(usage: Usage) -> list[list[str]]:
    """Table rows: rule, games it ran in (share), times per game."""
    n = max(usage.counted, 1)
    return [[name.removeprefix("action:"), f"{usage.games[name]} ({100 * usage.games[name] / n:.0f}%)",
             f"{usage.times[name] / n:.2f}"]
            for name in sorted(usage.games, key=lambda k: (not k.startswith("action:"), k)) if shown(name)]


def changed_rules(rs: Ruleset) -> list[tuple[str, str | None]]:
    """The variant's patched or added rules: (patch path or entry, the counted name or None)."""
    out: list[tuple[str, str | None]] = []
    for patch in rs.data.get("patches") or []:
        path = str(patch.get("path", ""))
        out.append((path, counted_name(rs, path.strip("/").split("/"))))
    return out


def counted_name(rs: Ruleset, steps: Sequence[str]) -> str | None:
    """The name a game counts the entry at ``steps`` under, or None if it is not counted."""
    if len(steps) < 2:
        return None
    sec, eid = steps[0], steps[1]
    if sec == "actions":
        return f"action:{eid}"
    if sec == "procedures":
        proc = rs.procedures.get(eid)
        return eid if proc is not None and proc.points else None  # a procedure that may pause
    if sec == "entities" and len(steps) >= 3:
        kind = (rs.entities.get(eid) or rs.entities.get(f"{eid}_1") or {}).get("kind")
        if kind in rs.kinds and steps[2] in rs.kinds[kind].procs:
            return f"{eid}.{steps[2]}"
    return None


def warnings(rs_b: Ruleset, usage_b: Usage) -> list[str]:
    """What compare says about the variant's changed rules that ran in few games, or are not counted."""
    games = max(usage_b.counted, 1)
    lines: list[str] = []
    for path, name in changed_rules(rs_b):
        if name is None:
            lines.append(f"- {path}: not counted (only actions, procedures that pause and carried "
                         "procedures are), so whether it was used is unknown")
            continue
        share = usage_b.games[name] / games
        if share >= FEW:
            continue
        if usage_b.games[name] == 0:
            lines.append(f"- {path}: never used in {usage_b.counted} games of B: these games cannot show "
                         "what it changes")
            continue
        needed = math.ceil(GAMES_FOR_DETECT / share)
        lines.append(f"- {path}: used in {usage_b.games[name]} of {usage_b.counted} games of B ({100 * share:.0f}%): "
                     f"to see a change of {100 * DETECT:.0f} points in a win rate among those games alone, "
                     f"about {needed:,} games would be needed")
    return lines


def render_warnings(rs_b: Ruleset, usage_b: Usage) -> list[str]:
    found = warnings(rs_b, usage_b)
    if not found:
        return []
    head = textwrap.wrap("Changed rules that these games used rarely, or that cannot be counted:", 100)
    return ["", *head, *found]


def record(fired: Counter[str] | None) -> dict[str, Any] | None:
    """A game's counts as plain data for its record (sorted: the same games, the same file)."""
    return None if fired is None else dict(sorted(fired.items()))
