"""The games a ``ludus serve`` runs: each a :class:`~interpreter.play.Table` behind a lock.

A game is played as ``ludus play`` plays it (same seats, bots, undo, fresh dice for people,
log appended after every decision), but a person's decision comes from a web request: the
server makes the bots' decisions at once, until a person must decide. Every game writes its
log to the logs folder as ``ID.jsonl``; a game not in memory (the server was restarted) is
resumed from it, as ``ludus play --resume`` would.

Each human seat has a secret key (:func:`new_keys`), made when the game is created: the seat's
address carries it and every request for the seat is checked against it (:meth:`Room.check_key`).
The keys are kept beside the log, in ``ID.keys.json`` (readable by this user only), never in the
log itself: a log may be shared or replayed, the keys are what let someone play a seat.

What a seat is sent is built here from the seat's own view only (:func:`narration`), and the
pages are drawn from ``game.view(seat)`` (see :mod:`interpreter.web.pages`).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import LudusError
from ..play import Table, new_table, resume_table, told
from ..runtime import Game, IllegalChoice
from ..undo import UndoRefused

GAME_ID = re.compile(r"^[a-z0-9]{12}$")  # the ids this server makes: also safe as a file name
MAX_BOT_DECISIONS = 100_000  # bots' decisions in a row before the server gives up (as play's --max-decisions)
MAX_NARRATION = 400  # lines of narration a page shows (the most recent ones)
KEY_BYTES = 24  # a seat's key: 192 random bits, 32 characters of secrets.token_urlsafe
SEAT_KEY = re.compile(r"^[A-Za-z0-9_-]{22,86}$")  # what a keys file may hold (token_urlsafe's alphabet)
MAX_KEYS_BYTES = 100_000


class WebError(Exception):
    """A request that cannot be served: an HTTP status and a message for the person."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Room:
    """One game being played: its table, a lock (requests come on several threads), and
    which logged decisions were secret (their labels are kept from the other seats)."""

    gid: str
    table: Table
    secret: set[int] = field(default_factory=set)  # indices in game.log of choices made in secret
    lock: threading.RLock = field(default_factory=threading.RLock)
    version: int = 0  # changes at every decision and undo: the pages poll it
    notes: dict[str, str] = field(default_factory=dict)  # seat -> a message shown once (a refused undo)
    keys: dict[str, str] = field(default_factory=dict, repr=False)  # human seat -> its secret key
    keys_problem: str = ""  # why this game has no keys (its keys file is missing or unreadable)

    @property
    def game(self) -> Game:
        return self.table.game

    @property
    def seats(self) -> dict[str, str]:
        return self.table.seats

    def check_seat(self, seat: str) -> None:
        """A 404 for a name that is not a seat of this game."""
        if seat not in self.seats:
            raise WebError(404, f"this game has no seat '{seat[:40]}' (its seats: {', '.join(self.seats)})")

    def check_key(self, seat: str, key: str) -> None:
        """A 404 for a name that is not a seat; a 403 unless ``key`` is the seat's key.

        Compared with :func:`secrets.compare_digest` (as bytes: a key from a URL may be any text),
        so the time taken tells nothing of how much of a guess was right."""
        self.check_seat(seat)
        if self.seats[seat] != "human":
            raise WebError(403, f"seat '{seat}' is played by a bot: it has no page of its own "
                                f"(watch the game from a human seat's page, or replay its log)")
        expected = self.keys.get(seat)
        if expected is None:
            raise WebError(403, f"seat '{seat}' of this game cannot be opened: {self.keys_problem or 'it has no key'}")
        if not key or not secrets.compare_digest(key.encode("utf-8", "replace"), expected.encode("ascii")):
            raise WebError(403, f"this address does not open seat '{seat}' of this game: its key is "
                                f"{'missing' if not key else 'wrong'}. Each player's link (/game/ID/SEAT/KEY) "
                                f"is given by whoever started the game; ask him for yours.")

    def links(self, seats: list[str]) -> dict[str, str]:
        """The addresses of these human seats, keys included (for the page of a seat of this
        game opened with its valid key only)."""
        return {p: seat_url(self.gid, p, self.keys[p]) for p in seats if p in self.keys}

    def apply(self, index: int, player: str, salt: int | None = None) -> None:
        """Make one decision (through the history, so a person may take his back), log it."""
        game = self.game
        pending = game.pending or {}
        secret = pending.get("type") == "secret" or bool(pending.get("secret"))
        at = len(game.log)  # apply writes the choice's log line first
        if self.table.history is not None:
            self.table.history.apply(game, index, player, salt=salt)
        else:
            game.apply(index, player)
        if secret:
            self.secret.add(at)
        if self.table.log is not None:
            self.table.log.sync(game.log)
        self.version += 1

    def advance(self) -> None:
        """The bots decide until a person must (or the game is over)."""
        game = self.game
        for _ in range(MAX_BOT_DECISIONS):
            if game.over:
                return
            bot = next((p for p in game.deciders() if self.seats.get(p, "human") != "human"), None)
            if bot is None:
                return  # waiting for a person
            self.apply(self.table.bots[bot].choose(game, bot), bot)
        raise WebError(500, f"the bots made {MAX_BOT_DECISIONS} decisions without a person's turn coming")

    def choose(self, seat: str, index: int, version: int | None) -> None:
        """A person's decision: choice ``index`` of the seat's legal choices."""
        with self.lock:
            self.check_seat(seat)
            if self.seats[seat] != "human":
                raise WebError(403, f"seat '{seat}' is played by a bot")
            if version is not None and version != self.version:
                raise WebError(409, "the game has moved on since this page was drawn: look again and choose")
            if seat not in self.game.deciders():
                raise WebError(409, "it is not your decision")
            count = len(self.game.choices(seat))
            if not 0 <= index < count:
                raise WebError(400, f"choice {index} is not one of your {count} choices")
            salt = secrets.randbits(64) if self.table.salted else None
            try:
                self.apply(index, seat, salt)
            except IllegalChoice as exc:
                raise WebError(400, f"illegal choice: {exc.reason}") from None
            self.notes.pop(seat, None)
            self.advance()

    def undo(self, seat: str) -> str:
        """Take back the seat's last decision; '' when done, else why it cannot be."""
        with self.lock:
            self.check_seat(seat)
            history = self.table.history
            if history is None or self.seats[seat] != "human":
                raise WebError(403, f"seat '{seat}' is played by a bot")
            try:
                history.undo(self.game, seat)
            except UndoRefused as exc:
                self.notes[seat] = f"cannot undo: {exc.reason}"
                return exc.reason
            if self.table.log is not None:
                self.table.log.undone(seat, len(self.game.log))
            self.secret = {i for i in self.secret if i < len(self.game.log)}
            self.notes[seat] = "undone: your last decision is taken back"
            self.version += 1
            return ""

    def undo_problem(self, seat: str) -> str:
        history = self.table.history
        if history is None or self.seats.get(seat) != "human":
            return "bots do not undo"
        return history.undo_problem(self.game, seat)


def new_keys(seats: dict[str, str]) -> dict[str, str]:
    """A fresh secret key for each human seat; bots have none."""
    return {p: secrets.token_urlsafe(KEY_BYTES) for p, kind in seats.items() if kind == "human"}


def seat_url(gid: str, seat: str, key: str) -> str:
    """A seat's address. The key is a path segment rather than ``?key=``: the address is one
    opaque link to hand out, and the forms (``.../choose``, ``.../undo``) and the poll
    (``/api/...``) are built from it without carrying a query along. (Neither form keeps it out of
    an access log; ``ludus serve`` keeps none, and its pages send no Referer: see app.py.)"""
    return f"/game/{gid}/{seat}/{key}"


def narration(room: Room, seat: str, limit: int = MAX_NARRATION) -> list[str]:
    """The narration ``seat`` may read: public lines, lines told to him (``log ... to``), every
    decision's label — but another player's secret decisions (or, under fog of war, all his
    decisions) read ``(secret)``. The most recent ``limit`` lines."""
    game = room.game
    players = game.players
    lines: list[str] = []
    for i, entry in enumerate(game.log):
        kind = entry["type"]
        if kind == "text":
            if not told(entry, [seat], players):
                continue
            lines.append(str(entry["text"]))
        elif kind == "choice":
            who = entry["player"]
            hidden = (i in room.secret or game.rs.fog) and who != seat and seat in players
            lines.append(f"  {game.label_of(who)} > {'(secret)' if hidden else entry['label']}")
    return lines[-limit:]


class Rooms:
    """Every game of the server, by id; a game not in memory is resumed from its log."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.rooms: dict[str, Room] = {}
        self.lock = threading.Lock()

    def log_path(self, gid: str) -> Path:
        return self.logs / f"{gid}.jsonl"

    def keys_path(self, gid: str) -> Path:
        return self.logs / f"{gid}.keys.json"

    def write_keys(self, gid: str, keys: dict[str, str]) -> None:
        """``ID.keys.json``, created new (never over another file) and readable by this user only."""
        data = json.dumps({"format": 1, "game": gid, "keys": keys}, indent=1).encode("utf-8")
        fd = os.open(self.keys_path(gid), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with open(fd, "wb") as fh:
            fh.write(data)

    def read_keys(self, gid: str, seats: dict[str, str]) -> tuple[dict[str, str], str]:
        """The keys of a resumed game's human seats, or none and why."""
        path = self.keys_path(gid)
        humans = [p for p, kind in seats.items() if kind == "human"]
        if not humans:
            return {}, ""
        try:
            with open(path, "rb") as fh:
                raw = fh.read(MAX_KEYS_BYTES + 1)
        except FileNotFoundError:
            return {}, (f"its keys file {path.name} is not in the logs folder (a game started before seats had "
                        f"keys?); go on with it in a terminal: ludus play --resume {self.log_path(gid)}")
        except OSError as exc:
            return {}, f"its keys file {path.name} cannot be read ({exc.strerror})"
        try:
            data = json.loads(raw) if len(raw) <= MAX_KEYS_BYTES else None
        except (UnicodeDecodeError, ValueError):
            data = None
        keys = data.get("keys") if isinstance(data, dict) and data.get("game") == gid else None
        if not isinstance(keys, dict) or not all(isinstance(keys.get(p), str) and SEAT_KEY.match(keys[p])
                                                 for p in humans):
            return {}, f"its keys file {path.name} is not a keys file of this game"
        return {p: keys[p] for p in humans}, ""

    def create(self, ruleset: str, players: int, seats: dict[str, str], seed: int | None) -> Room:
        """A new game: its log in the logs folder, the bots' first decisions made."""
        self.logs.mkdir(parents=True, exist_ok=True)
        gid = secrets.token_hex(6)
        specs = [f"{name}={kind}" for name, kind in seats.items()]
        keys = new_keys(seats)
        if keys:  # written before the log: a game is never left with a log and no keys
            self.write_keys(gid, keys)
        try:
            table = new_table(ruleset, None, None, players, specs, seed, str(self.log_path(gid)), lambda _: None)
        except LudusError as exc:
            self.keys_path(gid).unlink(missing_ok=True)
            raise WebError(400, exc.render()) from None
        if table.log is not None:  # the header and the set-up's narration: a restart before the
            table.log.sync(table.game.log)  # first decision finds the game in its log
        room = Room(gid, table, keys=keys)
        with self.lock:
            self.rooms[gid] = room
        with room.lock:
            room.advance()
        return room

    def get(self, gid: str) -> Room:
        """The game ``gid``: in memory, or resumed from its log (404 if there is none)."""
        if not GAME_ID.match(gid):
            raise WebError(404, "no such game")
        with self.lock:
            room = self.rooms.get(gid)
            if room is not None:
                return room
            path = self.log_path(gid)
            if not path.is_file():
                raise WebError(404, f"no game '{gid}' (no log {path.name} in {self.logs})")
            secret: set[int] = set()

            def note(game: Game, entry: dict[str, Any]) -> None:
                pending = game.pending or {}
                if pending.get("type") == "secret" or pending.get("secret"):
                    secret.add(len(game.log))

            try:
                table = resume_table(str(path), [], lambda _: None, on_choice=note)
            except LudusError as exc:
                raise WebError(400, exc.render()) from None
            keys, problem = self.read_keys(gid, table.seats)
            room = Room(gid, table, secret, keys=keys, keys_problem=problem)
            self.rooms[gid] = room
        with room.lock:
            room.advance()  # a game stopped while a bot was to decide goes on
        return room

    def close(self) -> None:
        """Close every game's log file."""
        for room in self.rooms.values():
            if room.table.log is not None:
                room.table.log.close()

