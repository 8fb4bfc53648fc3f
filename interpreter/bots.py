"""Generic bots: they see only the legal choices (and, for greedy, a determinised copy).

Bots never touch the game's own random generator: each has its own, seeded from
the game seed and its seat, so a game's log is reproducible whoever plays.
"""

from __future__ import annotations

import pickle
import random
from typing import Protocol

from . import rng
from .runtime import Game

BOT_KINDS = ("random", "greedy")


class Bot(Protocol):
    def choose(self, game: Game, player: str) -> int: ...


class RandomBot:
    """Uniform over the legal choices."""

    def __init__(self, seed: int | str, seat: str) -> None:
        self.rand = random.Random(f"{seed}/{seat}/random")

    def choose(self, game: Game, player: str) -> int:
        return self.rand.randrange(len(game.choices(player)))


class GreedyBot:
    """One-step lookahead on the ruleset's ``scoring.evaluation`` (or its score).

    Each candidate is tried on a copy of the game whose dice are re-seeded from the
    bot's own generator, so the bot cannot peek at the dice to come.
    """

    def __init__(self, seed: int | str, seat: str) -> None:
        self.rand = random.Random(f"{seed}/{seat}/greedy")

    def choose(self, game: Game, player: str) -> int:
        choices = game.choices(player)
        if len(choices) == 1:
            return 0
        rs = game.rs
        evaluate = rs.scoring.evaluation or rs.scoring.score
        best: list[int] = []
        best_value = None
        blob = pickle.dumps(game.state, protocol=pickle.HIGHEST_PROTOCOL)
        for c in choices:
            state = pickle.loads(blob)
            state["rng"] = rng.seed_state(self.rand.getrandbits(63))
            state["forced_dice"] = []
            trial = Game(rs, state)
            trial.atomic = False
            try:
                trial.apply(c.index, player)
            except Exception:  # a failing line of play is simply not preferred
                continue
            value = evaluate(trial, {"p": player}) if evaluate else 0
            if trial.over and player in (trial.result or {}).get("winners", []):
                value = float("inf")
            if best_value is None or value > best_value:
                best, best_value = [c.index], value
            elif value == best_value:
                best.append(c.index)
        return self.rand.choice(best) if best else self.rand.randrange(len(choices))


def make_bot(kind: str, seed: int | str, seat: str) -> Bot:
    if kind == "random":
        return RandomBot(seed, seat)
    if kind == "greedy":
        return GreedyBot(seed, seat)
    raise ValueError(kind)
