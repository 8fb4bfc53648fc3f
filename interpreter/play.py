"""`ludus play`: one game with bots and people, its log written as it goes, resumed, undone.

The log (``--log``) is appended and flushed after every decision, so a game killed at any
moment loses nothing: ``ludus play --resume LOG`` replays it and goes on, with the seats as
before. A human seat's undo is a line of the log (see :mod:`interpreter.undo`).

A game with a human seat and no ``--seed`` stirs fresh randomness into the dice after each
human decision (logged with the decision: ``salt``). So neither the seed nor the log tells
the dice to come, though a person could read both in another terminal.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .bots import BOT_KINDS, Bot, bot_problem, seat_bots, seat_kind
from .diagnostics import Diagnostic, Loc, LudusError
from .gamelog import dump_entry, kept_entries, read_log, replay
from .loader import load_ruleset
from .model import UMPIRE
from .runtime import Game
from .seat import TerminalSeat
from .undo import History, UndoRefused

Echo = Callable[[str], None]
INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C (128 + SIGINT)


def _cannot_write(path: str, exc: OSError) -> LudusError:
    return LudusError([Diagnostic(Loc("ludus"), f"cannot write --log {path}: {exc.strerror or exc}",
                                  "give a file in a folder that exists and you may write")])


class LogFile:
    """A game's log on disk, appended and flushed after every decision.

    ``written`` counts the entries of the game's log already on disk (an undo takes entries
    off the game's log, and puts an ``undo`` line on disk).
    """

    def __init__(self, path: str, append: bool = False, written: int = 0) -> None:
        self.path = path
        try:
            self.fh: IO[str] = open(path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115 - see close
        except OSError as exc:
            raise _cannot_write(path, exc) from None
        self.written = written

    def sync(self, entries: list[dict[str, Any]]) -> None:
        """Write the entries not yet on disk, and flush them to the system."""
        if len(entries) > self.written:
            self._write("".join(dump_entry(e) + "\n" for e in entries[self.written:]))
            self.written = len(entries)

    def undone(self, player: str, kept: int) -> None:
        """Record an undo by ``player``; the game's log now holds ``kept`` entries."""
        self._write(dump_entry({"type": "undo", "player": player}) + "\n")
        self.written = kept

    def _write(self, text: str) -> None:
        try:
            self.fh.write(text)
            self.fh.flush()
        except OSError as exc:
            raise _cannot_write(self.path, exc) from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.fh.close()


@dataclass
class Table:
    """A game at the table: who sits where, the log on disk, what may be undone."""

    game: Game
    seats: dict[str, str]  # seat (the umpire's too, if any) -> human or a bot kind
    seed: int | str
    salted: bool  # fresh randomness after each human decision
    log: LogFile | None = None
    bots: dict[str, Bot] = field(default_factory=dict)
    history: History | None = None
    told: int = 0  # entries of the game's log already told (a resumed game tells only its last lines again)

    def __post_init__(self) -> None:
        bot_seed: int | str = secrets.randbits(63) if self.salted else self.seed
        self.bots = seat_bots(self.game, self.seats, bot_seed)
        self.history = History() if "human" in self.seats.values() else None

    @property
    def humans(self) -> list[str]:
        return [p for p, k in self.seats.items() if k == "human"]


def header_extras(game: Game, seats: dict[str, str], salted: bool, source: str | None) -> None:
    """Record in the log's header what ``--resume`` needs: the seats, the set-up, where it began."""
    header = game.log[0]
    header["seats"] = dict(seats)
    if game.rs.setup is not None:
        header["setup"] = game.rs.setup
    if source is not None:
        header["from"] = source[:1000]
    if salted:
        header["salted"] = True


MAX_SEED = 2**64 - 1  # the random generator's whole state is 64 bits


def _arg_error(message: str, hint: str = "") -> LudusError:
    return LudusError([Diagnostic(Loc("ludus"), message, hint)])


def parse_seats(players: list[str], specs: list[str], umpire: bool = False) -> dict[str, str]:
    """``NAME=KIND`` for some seats; the other players play the random bot.

    ``umpire``: the ruleset has an umpire seat, which plays the umpire bot unless a spec
    names it (``umpire=human`` asks a person).
    """
    seats = {p: "random" for p in players}
    if umpire:
        seats[UMPIRE] = "umpire"
    for spec in specs:
        name, sep, kind = spec.partition("=")
        if not sep or name not in seats or (kind != "human" and bot_problem(kind)):
            raise _arg_error(f"bad --seat '{spec[:100]}'",
                             f"write NAME=KIND with NAME one of {', '.join(seats)} and KIND one of "
                             f"human, {', '.join(BOT_KINDS)} (options: mcts:playouts=N:depth=N:width=N)")
        seats[name] = kind
    return seats


def new_table(ruleset: str, setup: str | None, from_file: str | None, players: int | None, seat_specs: list[str],
              seed: int | None, log_path: str | None, echo: Echo) -> Table:
    """A new game: at the ruleset's start (or a named set-up), or at a ``--from`` position."""
    from .start import begin_at, from_kind, position

    rs = load_ruleset(ruleset, setup=setup)
    state = position(rs, from_file) if from_file else None
    if state is not None:
        if players is not None and players != len(state["players"]):
            raise _arg_error(f"--players {players}, but the --from position has {len(state['players'])} players",
                             "leave out --players")
        players = len(state["players"])
    players = players if players is not None else rs.max_players
    problem = rs.player_count_problem(players)
    if problem:
        raise _arg_error(problem, "choose --players in that range")
    seats = parse_seats(rs.seat_names(players), seat_specs, rs.umpire)
    salted = "human" in seats.values() and seed is None
    used: int = secrets.randbelow(MAX_SEED + 1) if salted else (1 if seed is None else seed)
    fresh = seed is not None or salted  # dice from the position on drawn from the seed
    told = 0
    if from_file and state is not None and from_kind(from_file) == "log" and not fresh:
        game = replay(from_file, rs.folder, partial=True)  # the log's own game goes on, its log copied
        told = recent(game.log)
    elif from_file and state is not None:
        game = begin_at(rs, state, used if fresh else None, from_file)
    else:
        game = Game.new(rs, players, used)
    header_extras(game, seats, salted, from_file)
    log = LogFile(log_path) if log_path else None
    dice = "fresh dice after each of your decisions (--seed S plays a reproducible game)" if salted else f"seed {used}"
    where = (f", set-up {rs.setup}" if rs.setup else "") + (f", from {from_file}" if from_file else "")
    echo(f"{rs.title}: {players} players ({', '.join(f'{p}={seats[p]}' for p in game.seats)}), {dice}{where}")
    return Table(game, seats, used, salted, log, told=told)


def resume_table(path: str, seat_specs: list[str], echo: Echo,
                 on_choice: Callable[[Game, dict[str, Any]], None] | None = None) -> Table:
    """The game a log records, replayed to its end, with its log opened to go on.

    ``on_choice(game, entry)``: called before each logged choice is made again (the web
    server notes there which decisions were secret, to keep their labels from other seats).
    """
    _cut_incomplete_line(Path(path), echo)
    entries, _ = kept_entries(read_log(path), path)
    header = entries[0][1]
    logged = header.get("seats") or {}
    salted = bool(header.get("salted"))
    table: Table | None = None
    seats: dict[str, str] = {}

    def seat(game: Game) -> Table:
        # The seats as logged (the umpire's too: a human umpire stays human), then --seat;
        # known once the log's ruleset is loaded, at the first choice.
        default = {p: seat_kind(game, p, "random") for p in game.seats}
        seats.update({p: logged[p] if logged.get(p) == "human" or not bot_problem(str(logged.get(p, default[p])))
                      else default[p] for p in game.seats})
        named = {spec.partition("=")[0] for spec in seat_specs}
        seats.update({p: k for p, k in parse_seats(game.players, seat_specs, game.rs.umpire).items() if p in named})
        return Table(game, seats, header["seed"], salted)

    def follow(game: Game, entry: dict[str, Any]) -> None:
        # Bots seeded from the seed make their logged decisions again, so that they go on as
        # they would have in one process (a salted game's bots were seeded at random).
        nonlocal table
        if table is None:
            table = seat(game)
        if on_choice is not None:
            on_choice(game, entry)
        bot = table.bots.get(entry["player"])
        if bot is not None and not salted:
            bot.choose(game, entry["player"])

    history = History()
    game = replay(path, partial=True, before_choice=follow, history=history)
    if table is None:
        table = seat(game)
    table.game = game
    if table.history is not None:
        table.history = history  # a decision made before the game was stopped may be undone
    table.log = LogFile(path, append=True, written=len(entries))
    table.told = recent(game.log)
    echo(f"{game.rs.title}: resumed from {path} after {sum(1 for e in game.log if e['type'] == 'choice')} "
         f"decisions ({', '.join(f'{p}={seats[p]}' for p in game.seats)})")
    return table


def recent(log: list[dict[str, Any]], lines: int = 6) -> int:
    """Where the last ``lines`` lines of narration begin: what a resumed game tells again."""
    texts = [i for i, e in enumerate(log) if e["type"] == "text"]
    return texts[-lines] if len(texts) >= lines else 0


def run_table(table: Table, io: PlayOutput, stdin: IO[str], max_decisions: int) -> int:
    """Play the table's game (see :func:`play_table`); Ctrl-C ends it with code 130, its log kept."""
    try:
        return play_table(table, io, stdin, max_decisions)
    except KeyboardInterrupt:
        io.out("")
        io.err("interrupted")
        return INTERRUPTED
    finally:
        if table.log is not None:
            table.log.close()


def _cut_incomplete_line(path: Path, echo: Echo) -> None:
    """A process killed while writing may leave half a line at the end: it is dropped (its
    decision is made again)."""
    try:
        with path.open("rb+") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            if size == 0:
                return
            fh.seek(max(0, size - 1_000_000))
            tail = fh.read()
            if tail.endswith(b"\n"):
                return
            cut = tail.rfind(b"\n")
            keep = size - len(tail) + cut + 1 if cut >= 0 else 0
            fh.truncate(keep)
    except FileNotFoundError:
        raise LudusError([Diagnostic(Loc(str(path)), "log file not found", "give the --log file of the game")]) \
            from None
    except OSError as exc:
        raise LudusError([Diagnostic(Loc(str(path)), f"cannot open the log to go on: {exc.strerror or exc}")]) \
            from None
    echo(f"{path}: dropped an incomplete last line (the game was stopped while writing it)")


@dataclass
class PlayOutput:
    """Where a game is told: narration, choices made, the score table."""

    out: Echo
    err: Echo
    write: Echo
    quiet: bool = False
    dice: bool = False
    seen: int = 0
    styled: Any = None  # a rich Console for a person at a terminal (None: plain text)
    # The human seats at this terminal: a text told to some players ('log E to P') is shown
    # only if one of them is told it, or one is no player (an umpire); with none, all of it.
    humans: list[str] = field(default_factory=list)

    def narrate(self, game: Game) -> None:
        log = game.log
        self.seen = min(self.seen, len(log))
        for entry in log[self.seen:]:
            if self.quiet:
                continue
            if entry["type"] == "text":
                if "to" in entry and not told(entry, self.humans, game.players):
                    continue
                self.out(entry["text"])
            elif entry["type"] == "dice" and self.dice:
                self.out("  dice: " + " ".join(str(v) for v in entry["values"]))
        self.seen = len(log)


def told(entry: dict[str, Any], humans: list[str], players: list[str]) -> bool:
    """Whether a text entry is shown to the people at a terminal with these human seats: a
    public text always; one told to some players if a human seat is one of them or is no
    player (an umpire), or if no seat is human (a spectator watching bots sees everything)."""
    to = entry.get("to")
    if to is None or not humans:
        return True
    return any(h in to or h not in players for h in humans)


def prompt_of(game: Game, player: str) -> str:
    """The question of the pending decision, as a person reads it (no group or variable names)."""
    pending = game.pending or {}
    if pending.get("type") == "action" and str(pending.get("prompt", "")).startswith("choose an action ("):
        return "Choose an action"  # the engine's default names the group: the ruleset gave no prompt
    if "prompt" in pending:
        return str(pending["prompt"])
    asked = pending.get("players", {}).get(player) or {}
    return str(asked.get("prompt", "Choose"))


def play_table(table: Table, io: PlayOutput, stdin: IO[str], max_decisions: int) -> int:
    """Play until the game ends, a person quits, or ``max_decisions``; returns the exit code."""
    game = table.game
    seat = TerminalSeat(stdin, io.out, io.write, io.styled)
    if table.log is not None:
        table.log.sync(game.log)
    io.seen = table.told
    io.humans = table.humans
    io.narrate(game)
    decisions = 0
    while not game.over:
        decisions += 1
        if decisions > max_decisions:
            io.err(f"ludus: error: the game did not end within {max_decisions} decisions (--max-decisions)")
            return 1
        player = game.deciders()[0]
        pending = game.pending or {}
        secret = pending.get("type") == "secret" or bool(pending.get("secret"))
        salt = None
        if table.seats[player] == "human":
            assert table.history is not None
            answer = seat.decide(game, player, prompt_of(game, player), not table.history.undo_problem(game, player))
            if answer.kind == "quit":
                _quit(table, io)
                return 0
            if answer.kind == "undo":
                _undo(table, player, io)
                continue
            index = answer.index
            salt = secrets.randbits(64) if table.salted else None
        else:
            index = table.bots[player].choose(game, player)
        label = game.choices(player)[index].label
        if table.history is not None:
            table.history.apply(game, index, player, salt=salt)
        else:
            game.apply(index, player)
        if table.log is not None:
            table.log.sync(game.log)
        if not io.quiet:
            unseen = secret or game.rs.fog  # under fog of war another player's orders are his own
            shown = "(secret)" if unseen and _hidden_from(table.humans, player, game.players) else label
            io.out(f"  {game.label_of(player)} > {shown}")
        io.narrate(game)
    score_table(game, io.out)
    return 0


def _hidden_from(humans: list[str], player: str, players: list[str]) -> bool:
    """Whether a choice of ``player`` is kept from the human seats: they are players, he is not one of them."""
    return bool(humans) and player not in humans and all(h in players for h in humans)


def _undo(table: Table, player: str, io: PlayOutput) -> None:
    assert table.history is not None
    try:
        table.history.undo(table.game, player)
    except UndoRefused as exc:
        io.out(f"  cannot undo: {exc.reason}")
        return
    if table.log is not None:
        table.log.undone(player, len(table.game.log))
    io.seen = len(table.game.log)
    io.out("  undone: your last decision is taken back")


def _quit(table: Table, io: PlayOutput) -> None:
    if table.log is None:
        name = f"ludus-{table.game.rs.name}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        table.log = LogFile(name)
        table.log.sync(table.game.log)
    io.out(f"saved in {table.log.path}; 'ludus play --resume {table.log.path}' goes on from here")
    io.out("quit")


def score_table(game: Game, out: Echo) -> None:
    """The final ranking with scores and winners."""
    result = game.result or {}
    out("")
    out(f"Game over: {result.get('reason')}")
    out(f"{'rank':<5}{'player':<14}{'score':>6}")
    winners = set(result.get("winners", []))
    for i, p in enumerate(result.get("ranking", []), 1):
        mark = "  winner" if p in winners else ""
        out(f"{i:<5}{game.label_of(p):<14}{result['scores'][p]:>6}{mark}")
