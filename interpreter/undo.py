"""Undo: a player takes back his own decisions, back to where new information appeared.

A decision may be taken back only while nothing has happened since that its player could
not have known when he made it: no die rolled or deck shuffled, no card hidden from him
revealed, no other player's decision, no commit point of the rules (the ``commit``
statement). Undoing then restores the exact earlier state, and the game goes on as if the
decision had never been made: the rules are deterministic and no randomness was drawn, so
replaying the kept decisions gives the same state (tests/test_undo.py checks this as a
property). The log records an undo as a line of its own (see :mod:`interpreter.gamelog`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .game.views import copy_state

if TYPE_CHECKING:
    from .runtime import Game


class UndoRefused(Exception):
    """An undo that cannot be made; the game is untouched."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Point:
    """The state before one decision, and why that decision can no longer be taken back ('' if it can)."""

    state: dict[str, Any]
    log_len: int
    player: str
    final: str


class History:
    """The decisions of a game that may still be taken back.

    Make every decision through :meth:`apply`. Only the decisions since the last one that
    cannot be undone are kept, so the history stays small however long the game.
    """

    def __init__(self) -> None:
        self.points: list[_Point] = []

    def apply(self, game: Game, choice: int | str, player: str, dice: Sequence[int] | None = None,
              salt: int | None = None) -> None:
        """``game.apply`` (same arguments and errors), remembering how to take it back."""
        before = copy_state(game.state)
        draws, commits, log_len = game.draws, game.commits, len(game.log)
        hidden = _hidden_from(game, player)
        pending = game.pending or {}
        others_answered = pending.get("type") == "secret" and any(q != player for q in pending.get("answers", {}))
        game.apply(choice, player, dice, salt)
        final = ""
        if game.draws != draws or dice:
            final = "dice were rolled or cards shuffled since"
        elif game.commits != commits:
            final = "the rules passed a point of no return since"
        elif others_answered and (game.pending or {}).get("answers") is not pending.get("answers"):
            final = "the other players' secret choices were revealed since"
        elif _revealed(game, player, hidden):
            final = "a card hidden from you was revealed since"
        point = _Point(before, log_len, player, final)
        last = self.points[-1] if self.points else None
        if final or last is None:
            self.points = [point]  # nothing before this decision can be undone any more
        elif last.player != player or last.final:
            self.points = [last, point]  # the last before it stays, to say why undo stops there
        else:
            self.points.append(point)

    def undo_problem(self, game: Game, player: str) -> str:
        """Why ``player`` cannot take back a decision now ('' when he can)."""
        if not self.points:
            return "you have made no decision that can be taken back"
        last = self.points[-1]
        if last.player != player:
            return f"{game.label_of(last.player)} has decided since your last decision"
        if last.final:
            return f"your last decision cannot be taken back: {last.final}"
        return ""

    def undo(self, game: Game, player: str) -> None:
        """Take back ``player``'s last decision: the game is exactly as it was before it."""
        problem = self.undo_problem(game, player)
        if problem:
            raise UndoRefused(problem)
        point = self.points.pop()
        game.state = point.state
        game._bind()
        game._own_ents = game._own_zones = None
        del game.log[point.log_len:]


def _hidden_from(game: Game, player: str) -> set[str]:
    """The entities in zones ``player`` cannot see."""
    out: set[str] = set()
    for key, items in game.zones.items():
        if items and not game._visible(key, player):
            out.update(items)
    return out


def _revealed(game: Game, player: str, hidden: set[str]) -> bool:
    """Whether an entity of ``hidden`` is now where ``player`` sees it."""
    if not hidden:
        return False
    for eid in hidden:
        rec = game.ents.get(eid)
        zone = rec.get("zone") if rec is not None else None
        if zone is not None and game._visible(zone, player):
            return True
    return False
