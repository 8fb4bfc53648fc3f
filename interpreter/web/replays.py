"""Logs replayed in the browser: the position after any decision, stepped back and forth.

A log is replayed once, in full, with every check of ``ludus replay`` (a log that does not
reproduce is refused at its line); the state is kept every ``EVERY`` decisions, so the
position after decision N is that copy with at most ``EVERY - 1`` logged choices made again.
A log may come from a stranger: it is read by gamelog's bounded reader, and every problem is
a located error shown on the page.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import LudusError
from ..game.views import copy_state
from ..gamelog import replay
from ..runtime import Game
from .rooms import WebError

EVERY = 20  # decisions between two kept states
MAX_REPLAYS = 16  # replays kept in memory (the oldest is forgotten)


@dataclass
class Replay:
    """A replayed log: its final game, the states kept on the way, where each decision is."""

    name: str
    final: Game
    kept: dict[int, dict[str, Any]] = field(default_factory=dict)  # decision k -> state before it
    choices: list[dict[str, Any]] = field(default_factory=list)  # the logged choices, in order
    log_at: list[int] = field(default_factory=list)  # decision k -> the game's log length before it

    @property
    def total(self) -> int:
        return len(self.choices)

    def position(self, n: int) -> Game:
        """The game after ``n`` decisions (0: before the first)."""
        if n >= self.total:
            return self.final
        start = n - n % EVERY
        game = Game.resume(self.final.rs, copy_state(self.kept[start]), owned=True)
        for entry in self.choices[start:n]:
            game.apply(entry["index"], entry["player"], entry.get("dice"), entry.get("salt"))
        return game

    def narration(self, n: int) -> list[str]:
        """The narration up to decision ``n``, every line (a spectator of a log reads it all)."""
        upto = self.log_at[n] if n < self.total else len(self.final.log)
        lines = []
        for entry in self.final.log[:upto]:
            if entry["type"] == "text":
                lines.append(str(entry["text"]))
            elif entry["type"] == "choice":
                lines.append(f"  {self.final.label_of(entry['player'])} > {entry['label']}")
        return lines


def load_replay(path: Path, name: str) -> Replay:
    """Replay the log at ``path`` (refused with a located error, as 400, if it is not a good log)."""
    kept: dict[int, dict[str, Any]] = {}
    choices: list[dict[str, Any]] = []
    log_at: list[int] = []

    def note(game: Game, entry: dict[str, Any]) -> None:
        k = len(choices)
        if k % EVERY == 0:
            kept[k] = copy_state(game.state)
        choices.append(entry)
        log_at.append(len(game.log))

    try:
        final = replay(path, partial=True, before_choice=note)
    except LudusError as exc:
        raise WebError(400, exc.render()) from None
    return Replay(name, final, kept, choices, log_at)


class Replays:
    """The replays open on this server, the most recent ``MAX_REPLAYS``."""

    def __init__(self) -> None:
        self.open: OrderedDict[str, Replay] = OrderedDict()
        self.lock = threading.Lock()

    def add(self, path: Path, name: str) -> str:
        rep = load_replay(path, name)
        rid = secrets.token_hex(6)
        with self.lock:
            self.open[rid] = rep
            while len(self.open) > MAX_REPLAYS:
                self.open.popitem(last=False)
        return rid

    def get(self, rid: str) -> Replay:
        with self.lock:
            rep = self.open.get(rid)
        if rep is None:
            raise WebError(404, "no such replay (this server forgets old ones: open the log again)")
        return rep
