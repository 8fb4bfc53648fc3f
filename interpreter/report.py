"""`ludus report`: what an umpire sends one player after a turn or a season.

A ruleset declares ``report: {every: SIGNAL, title: TEMPLATE}``: each time its rules run
``signal SIGNAL`` a section of the report ends. The log is replayed (with every check of
``ludus replay``) and, for the player, each section gathers the narration he was told since
the last one (public lines and lines ``log ... to`` him), then his ``status`` lines as they
stood when the section ended — through his sight: under fog of war an entity he does not
see is never named by a status line's value.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, Loc, LudusError
from .gamelog import kept_entries, read_log, replay
from .model import RuleFault
from .play import told
from .runtime import Game
from .seat import status_lines


@dataclass
class Section:
    """One section of a player's report: its heading, the narration, the status lines."""

    number: int
    title: str
    texts: list[str] = field(default_factory=list)
    status: list[tuple[str, str]] = field(default_factory=list)


def _error(message: str, hint: str = "") -> LudusError:
    return LudusError([Diagnostic(Loc("ludus"), message, hint)])


def collect(log: str, player: str, ruleset: str | None = None) -> tuple[Game, list[Section]]:
    """Replay ``log`` and gather every completed section of ``player``'s report.

    A seat that is not the log's, a ruleset without ``report:`` and a log that does not
    replay are errors (LudusError), never a traceback.
    """
    path = Path(log)
    entries, _ = kept_entries(read_log(path), str(path))
    seats = list(entries[0][1]["players"])
    if player not in seats:
        raise _error(f"'{player[:100]}' is not a seat of this game", "give --player one of " + ", ".join(seats))
    sections: list[Section] = []
    mark = 0  # the log's entries before this were told in an earlier section

    def no_report(game: Game) -> LudusError:
        return _error(f"ruleset '{game.rs.name}' declares no report",
                      "add 'report: {source: ..., every: SIGNAL}' to a rule file: a section ends at each "
                      "'signal SIGNAL' (see docs/fog.md)")

    def on_signal(game: Game, name: str) -> None:
        nonlocal mark
        rep = game.rs.report
        if rep is None or name != rep.every:
            return
        number = len(sections) + 1
        texts = [str(e["text"]) for e in game.log[mark:] if e["type"] == "text" and told(e, [player], seats)]
        mark = len(game.log)
        work = game.work  # the report's reading is not the rules' work
        try:
            title = f"Report {number}"
            if rep.title is not None:
                try:
                    title = game.label_of(rep.title(game, {"me": player, "number": number}))
                except RuleFault as fault:
                    title += f" (its title failed: {fault.message})"
            sections.append(Section(number, title, texts, status_lines(game, player)))
        finally:
            game.work = work

    def before_choice(game: Game, _entry: dict[str, Any]) -> None:
        if game.rs.report is None:  # found out before the whole log is replayed
            raise no_report(game)

    game = replay(path, ruleset, before_choice=before_choice, partial=True, on_signal=on_signal)
    if game.rs.report is None:
        raise no_report(game)
    return game, sections


def render(player: str, sections: list[Section], game: Game) -> list[str]:
    """The report as text lines: each section's heading, narration and status."""
    out: list[str] = []
    for s in sections:
        if out:
            out.append("")
        out.append(f"== {s.title} ==")
        out.extend(s.texts if s.texts else ["(nothing was told to you)"])
        if s.status:
            out.append("")
            width = max(len(label) for label, _ in s.status)
            out.extend(f"  {label:<{width}}  {value}" for label, value in s.status)
    return out


def cmd_report(args: argparse.Namespace) -> int:
    """``ludus report RULESET --log FILE --player NAME [--season N | --all]``."""
    game, sections = collect(args.log, args.player, args.ruleset)
    every = game.rs.report.every if game.rs.report is not None else ""
    if not sections:
        raise _error(f"the log holds no complete report yet: the rules never signalled '{every}'",
                     "a section of a report ends at each 'signal " + every + "'")
    if args.season is not None:
        if args.season > len(sections):
            raise _error(f"--season {args.season}, but the log holds {len(sections)} complete report(s)",
                         f"give --season 1 to {len(sections)}, or --all")
        chosen = [sections[args.season - 1]]
    else:
        chosen = sections if args.all else sections[-1:]
    for line in render(args.player, chosen, game):
        print(line)
    return 0


def add_parser(sub: Any, whole: Any) -> None:
    """Register ``ludus report`` (``whole``: the CLI's type of a whole number in a range)."""
    rp = sub.add_parser(
        "report", help="what an umpire sends one player: the narration he was told and his status",
        description="Replay a game's log (checked as 'ludus replay' does) and print one player's report: for "
        "each section (a section ends each time the rules run the signal named by the ruleset's 'report: "
        "{every: SIGNAL}'), the lines narrated to everyone or to that player, then his status lines as they "
        "stood at its end. Under fog of war nothing he does not see is shown. Default: the last complete "
        "section.")
    rp.add_argument("ruleset", metavar="RULESET", help="the ruleset the log was written with (a name or a folder)")
    rp.add_argument("--log", required=True, metavar="FILE", help="the game's log (ludus play --log FILE)")
    rp.add_argument("--player", required=True, metavar="NAME", help="the seat the report is for")
    which = rp.add_mutually_exclusive_group()
    which.add_argument("--season", type=whole(1, 1_000_000), metavar="N",
                       help="print section N (from 1) instead of the last")
    which.add_argument("--all", action="store_true", help="print every complete section")
    rp.set_defaults(func=cmd_report)
