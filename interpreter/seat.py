"""The terminal seat: a person plays one seat of ``ludus play`` at a terminal.

Before each of his decisions the seat shows his status (the ruleset's ``status`` section),
the question and the legal choices: identical choices merged with a count, each under a key
that stays the same while the same choices are offered again (a hand picked from one card at
a time keeps its numbers). Several keys typed on one line answer the next decisions in turn
("1 4 4" picks three cards). Commands: ``s`` status, ``v`` a readable view, ``u`` undo,
``h`` help, ``q`` save and quit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from .game.fog import Sight
from .model import PLAYER_KIND, RuleFault

if TYPE_CHECKING:
    from .runtime import Game

MAX_ANSWER = 1000  # characters of one line typed by a human seat
MAX_SHOWN = 12  # items of one list shown before "+N more"

HELP = """\
  number   make that choice (several numbers, e.g. "1 4 4", answer your next decisions in turn)
  s        your status again
  v        a readable view of what you can see: your zones, the players, the board
  u        undo your last decision (not past a die roll, a revealed card or another player's decision)
  q        save and quit (with --log, 'ludus play --resume LOG' goes on from here)
  h        this help"""


@dataclass
class Answer:
    """What a person typed: a choice (its index), or a command: 'undo' or 'quit'."""

    kind: str
    index: int = -1


@dataclass
class Menu:
    """The legal choices of one decision as shown: distinct labels, each with a key and a count."""

    keys: list[int]
    labels: list[str]
    counts: list[int]
    first: list[int]  # the index of the first choice of each label


@dataclass
class TerminalSeat:
    """Asks a person for his decisions on ``stdin``/``stdout``."""

    stdin: IO[str]
    out: Callable[[str], None]
    write: Callable[[str], None]
    styled: Any = None  # a rich Console when the output is a terminal: keys and questions stand out
    _keys: dict[str, int] = field(default_factory=dict)  # label -> key, kept while offered again
    _queue: list[str] = field(default_factory=list)  # keys typed ahead
    _queued_by: str = ""  # the seat that typed them (another seat at the same terminal does not use them)
    _status: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # last shown, by seat

    def menu(self, labels: list[str]) -> Menu:
        """The choices of one decision, merged by label, with stable keys."""
        counts = Counter(labels)
        distinct = list(dict.fromkeys(labels))
        if not set(distinct) <= set(self._keys):
            self._keys = {label: k for k, label in enumerate(distinct, 1)}
        first = [labels.index(label) for label in distinct]
        return Menu([self._keys[label] for label in distinct], distinct, [counts[label] for label in distinct], first)

    def decide(self, game: Game, player: str, prompt: str, can_undo: bool) -> Answer:
        """Show the decision and read an answer (a choice, undo or quit; quit at end of input)."""
        labels = [c.label for c in game.choices(player)]
        menu = self.menu(labels)
        if self._queued_by != player:
            self._queue.clear()
        if not self._queue:
            lines = status_lines(game, player)
            if lines != self._status.get(player):  # shown again only when it changed
                self._status[player] = lines
                self.show_status(lines)
            self.show_menu(f"{game.label_of(player)}: {prompt}", menu)
        while True:
            if not self._queue:
                self.write(f"choice ({'u = undo, ' if can_undo else ''}h = help)> ")
                text = read_answer(self.stdin)
                if text is None:
                    self.out("\nend of input")
                    return Answer("quit")
                self._queue, self._queued_by = text.split(), player
                if not self._queue:
                    continue
            word = self._queue.pop(0)
            if word in ("q", "quit"):
                self._queue.clear()
                return Answer("quit")
            if word in ("u", "undo"):
                self._queue.clear()
                return Answer("undo")
            if word in ("h", "help", "?"):
                self._queue.clear()
                self.out(HELP)
            elif word == "s":
                self._queue.clear()
                self.show_status(status_lines(game, player), full=True)
            elif word == "v":
                self._queue.clear()
                for line in readable_view(game, player):
                    self.out(line)
            elif word.isascii() and word.isdigit() and len(word) <= 6 and int(word) in menu.keys:
                return Answer("choice", menu.first[menu.keys.index(int(word))])
            else:
                self._queue.clear()
                shown = word if len(word) <= 20 else word[:20] + "..."
                self.out(f"  '{shown}' is not a choice: enter one of {', '.join(map(str, menu.keys))}, or h for help")


    def show_status(self, lines: list[tuple[str, str]], full: bool = False) -> None:
        """A player's status lines (a ruleset without ``status``: nothing, unless ``full``)."""
        if self.styled is None or not lines:
            show_status(lines, self.out, full)
            return
        from rich.table import Table

        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column()
        for label, value in lines:
            grid.add_row(label, value)
        self.styled.print()
        self.styled.print(grid)

    def show_menu(self, question: str, menu: Menu) -> None:
        """The question and the choices, each under its key."""
        rows = [(f"  [{key}]", f" {label}", f"  (x{n})" if n > 1 else "")
                for key, label, n in zip(menu.keys, menu.labels, menu.counts, strict=True)]
        if self.styled is None:
            self.out(question)
            for key, label, count in rows:
                self.out(key + label + count)
            return
        from rich.text import Text

        self.styled.print(Text(question, style="bold"))
        for key, label, count in rows:
            self.styled.print(Text.assemble((key, "bold cyan"), label, (count, "dim")))


def read_answer(stream: IO[str]) -> str | None:
    """One typed line, at most MAX_ANSWER characters kept (the rest is read and dropped); None at EOF."""
    line = stream.readline(MAX_ANSWER)
    if not line:
        return None
    rest = line
    while rest and not rest.endswith("\n") and len(rest) == MAX_ANSWER:
        rest = stream.readline(MAX_ANSWER)
    return line.strip()


# ====================================================================== status and views
def status_lines(game: Game, player: str) -> list[tuple[str, str]]:
    """(label, value) of each line of the ruleset's ``status`` section for ``player``."""
    out: list[tuple[str, str]] = []
    if player not in game.players:
        return out  # the umpire seat: not a player, it has no status ('v' shows it the whole board)
    sight = Sight(game, player) if game.rs.fog else None  # what the player does not see is left out
    for label, fn in game.rs.status.values():
        try:
            value = fn(game, {"me": player})
        except (RuleFault, KeyError, TypeError, ValueError, IndexError, AttributeError):
            value = "?"
        out.append((label, shown(game, value, player, sight)))
    return out


def show_status(lines: list[tuple[str, str]], out: Callable[[str], None], full: bool = False) -> None:
    """Print a player's status lines (a ruleset without ``status``: nothing, unless ``full``)."""
    if not lines:
        if full:
            out("  (this ruleset declares no status; v shows what you can see)")
        return
    out("")
    width = max(len(label) for label, _ in lines)
    for label, value in lines:
        out(f"  {label:<{width}}  {value}")


def shown(game: Game, value: Any, player: str | None, sight: Sight | None = None) -> str:
    """A value as a person reads it: a zone by its contents, lists merged and counted.

    Under fog of war what ``player`` does not see is left out: an unseen entity reads
    ``unseen``, a list loses its unseen entities, an unseen zone reads ``unseen``.
    """
    if sight is None and game.rs.fog:
        sight = Sight(game, player)
    if isinstance(value, str) and value not in game.ents and game._zone_def(value) is not None:
        if sight is not None and not sight.zone(value):
            return "unseen"
        items = game.zones.get(value, [])
        if sight is not None:
            items = sight.value(items)
        if not game._visible(value, player):
            return f"{len(items)} hidden"
        value = items
    elif sight is not None:
        if isinstance(value, str) and value in game.ents and not sight.entity(value):
            return "unseen"
        value = sight.value(value)
    if isinstance(value, list):
        if not value:
            return "none"
        counts = Counter(name_of(game, v) for v in value)
        parts = [f"{label} x{n}" if n > 1 else label for label, n in counts.items()]
        more = len(parts) - MAX_SHOWN
        return ", ".join(parts[:MAX_SHOWN]) + (f", +{more} more" if more > 0 else "")
    return name_of(game, value)


def name_of(game: Game, value: Any) -> str:
    """A value's label; an entity of a kind without a label field reads as its kind ('token'),
    not its id ('token_4')."""
    rec = game.ents.get(value) if isinstance(value, str) else None
    if rec is not None:
        kind = game.rs.kinds.get(rec["kind"])
        if kind is not None and not kind.label and rec["kind"] != PLAYER_KIND:
            return rec["kind"].replace("_", " ")
    return game.label_of(value)


def _scalars(game: Game, eid: str, rec: dict[str, Any], player: str | None) -> str:
    """The fields of an entity that the game has changed (its printed data left out)."""
    kind = game.rs.kinds.get(rec["kind"])
    printed = game.rs.entities.get(eid, {})
    parts = []
    for name, value in rec.items():
        if name in ("kind", "zone") or (kind is not None and name == kind.label):
            continue
        if value in (None, False, 0, "", []) or isinstance(value, dict) or (name in printed and printed[name] == value):
            continue
        parts.append(f"{name.replace('_', ' ')} {shown(game, value, player)}")
    return ", ".join(parts)


def readable_view(game: Game, player: str | None) -> list[str]:
    """What ``player`` can see (None: a spectator), as text: globals, players, board, zones.

    Built from :meth:`Game.view`, so nothing hidden from the player is shown: a hidden zone
    shows only how many items it holds.
    """
    view = game.view(player, copy=False)
    zones: dict[str, Any] = view["zones"]
    lines = ["", "== the game =="]
    glob = [f"{k.replace('_', ' ')} {shown(game, v, player)}" for k, v in view["globals"].items()
            if v not in (None, False, "", []) and not isinstance(v, dict)]
    if glob:
        lines.append("  " + "; ".join(glob))
    lines.append("== players ==")
    for p in view["players"]:
        mine = " (you)" if p == player else ""
        lines.append(f"  {game.label_of(p)}{mine}: {_scalars(game, p, game.ents[p], player) or '-'}")
        for key, items in zones.items():
            name, _, owner = key.partition("@")
            if owner == p and (items or p == player):
                lines.append(f"    {name.replace('_', ' ')}: " + _zone_text(game, items, player, key))
    board = [(e, rec) for e, rec in view["entities"].items()
             if rec["kind"] != PLAYER_KIND and game.rs.kinds.get(rec["kind"]) is not None
             and game.rs.kinds[rec["kind"]].zones]
    if board:
        lines.append("== the board ==")
    for eid, rec in board:
        held = [f"{key.partition('@')[0].replace('_', ' ')}: {_zone_text(game, zones[key], player, key)}"
                for key in (f"{z}@{eid}" for z in game.rs.kinds[rec["kind"]].zones)
                if key in zones and zones[key]]
        facts = _scalars(game, eid, rec, player)
        if held or facts:
            lines.append(f"  {game.label_of(eid)}: " + "; ".join(x for x in [facts, *held] if x))
    lines.append("== zones ==")
    for key, items in zones.items():
        if "@" not in key and items:
            lines.append(f"  {key.replace('_', ' ')}: {_zone_text(game, items, player, key)}")
    return lines


def _zone_text(game: Game, items: Any, player: str | None, key: str) -> str:
    if isinstance(items, dict):  # hidden from this player
        return f"{items.get('hidden', 0)} hidden" if items.get("hidden") else "empty"
    return shown(game, list(items), player) if items else "empty"
