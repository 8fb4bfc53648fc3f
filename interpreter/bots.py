"""Generic bots: random, greedy and Monte Carlo. None of them knows any game.

What a bot may know is what its player may know: the legal choices offered to it
and the player's view. A bot that looks ahead does so on :meth:`Game.sample`, a copy
of the game in which everything hidden from its player (cards in hidden zones,
other players' secret answers, the dice to come) is redrawn at random. So a bot
plays the same way in any two games that look the same to its player.

Bots never touch the game's own random generator: each has its own, seeded from
the game seed and its seat, so a game's log is reproducible whoever plays.

The umpire bot is for a ruleset's umpire seat (docs/umpire.md): it takes the first choice,
the ruling the rules list first. Every caller that seats bots gives the umpire seat that bot
unless told otherwise (:func:`seat_bots`).

The greedy and Monte Carlo bots judge a position by the ruleset's
``scoring.evaluation`` (else its ``score``), from one player's point of view:
their own evaluation minus the best of the other players' (the *margin*).
"""

from __future__ import annotations

import marshal
import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .model import UMPIRE
from .runtime import Game

BOT_KINDS = ("random", "greedy", "mcts", "umpire")

#: A finished game is worth more than any evaluation: a win, a loss.
WIN = 1e9


class Bot(Protocol):
    def choose(self, game: Game, player: str) -> int: ...


def margin(game: Game, player: str) -> float:
    """How well ``player`` stands: own evaluation minus the best other player's (a win/loss is ±WIN)."""
    if player not in game.players:
        return 0.0  # the umpire seat: it has no score, so no ruling is better for it than another
    if game.over:
        result = game.result or {}
        winners = result.get("winners", [])
        if player in winners:
            return WIN / len(winners)
        return -WIN
    rs = game.rs
    evaluate = rs.scoring.evaluation or rs.scoring.score
    if evaluate is None:
        return 0.0
    own = float(evaluate(game, {"p": player}))
    others = [float(evaluate(game, {"p": q})) for q in game.players if q != player]
    return own - max(others) if others else own


class RandomBot:
    """Uniform over the legal choices."""

    def __init__(self, seed: int | str, seat: str) -> None:
        self.rand = random.Random(f"{seed}/{seat}/random")

    def choose(self, game: Game, player: str) -> int:
        return self.rand.randrange(game.count_choices(player))


class UmpireBot:
    """Takes choice 0: the ruling the rules list first.

    A ruleset lists first, for every decision it gives the umpire, the ruling it would
    make by default (its reconstruction of how the gap in the rules is usually filled).
    So this bot rules the same way every time, and a game without a person in the
    umpire's chair plays as the ruleset's authors read the rules.
    """

    def __init__(self, seed: int | str, seat: str) -> None:
        pass  # it draws nothing: the same ruling whatever the seed

    def choose(self, game: Game, player: str) -> int:
        return 0


def _try(game: Game, player: str, index: int, seed: int, sampled: Game | None = None) -> Game | None:
    """The sampled game after ``player`` makes choice ``index``; None if the line of play fails.

    ``sampled``: ``game.sample(player, seed)`` made already (it is copied, not changed).
    """
    trial = sampled.copy() if sampled is not None else game.sample(player, seed)
    try:
        trial.apply(index, player)
    except Exception:  # a failing line of play (e.g. on a redrawn hidden card) is simply not preferred
        return None
    return trial


def fingerprint(game: Game, player: str) -> int:
    """A hash of what ``player`` sees (equal views, equal fingerprints).

    marshal's format 0 writes plain data by content and order alone (no references to
    objects met before, no mark of interned strings), and a state's dicts are built in an
    order fixed by the rules, so equal views give equal bytes, whatever objects they share.
    """
    return hash(marshal.dumps(game.view(player, copy=False), 0))


class GreedyBot:
    """One-step look-ahead: the choice whose immediate result has the best margin.

    Every choice is tried on the same sampled game (same hidden cards, same dice), so
    the choices are compared on equal terms; ties are broken at random. A choice that
    leads back to a position the bot has already seen is taken only when nothing
    else is left: rules often allow free back-and-forth moves, and a look-ahead that
    sees no gain in ending its turn would otherwise shuttle for ever.
    """

    def __init__(self, seed: int | str, seat: str) -> None:
        self.rand = random.Random(f"{seed}/{seat}/greedy")
        self.seen: set[int] = set()  # fingerprints of positions met or headed for
        self._after: dict[int, int] = {}  # choice index -> fingerprint of where it leads

    def ranked(self, game: Game, player: str, need: int = 1) -> list[tuple[float, int]]:
        """(margin, index) for every choice, best first (failing ones and revisits last).

        Only the first ``need`` places are checked for revisits.
        """
        self.seen.add(fingerprint(game, player))
        seed = self.rand.getrandbits(63)
        sampled = game.sample(player, seed)  # one imagined world for every choice: equal terms
        scored = []
        for c in game.choices(player):
            trial = _try(game, player, c.index, seed, sampled)
            value = margin(trial, player) if trial is not None else -2 * WIN
            scored.append((value, self.rand.random(), c.index, trial))
        scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
        self._after = {}
        fresh: list[tuple[float, int]] = []
        later: list[tuple[float, int]] = []
        for value, _, index, trial in scored:
            if len(fresh) < need and trial is not None and not trial.over:
                fp = fingerprint(trial, player)
                self._after[index] = fp
                if fp in self.seen:
                    later.append((value, index))
                    continue
            fresh.append((value, index))
        return fresh + later

    def chose(self, index: int) -> None:
        """Remember where the chosen line led, so that the bot does not come back to it."""
        if index in self._after:
            self.seen.add(self._after[index])

    def choose(self, game: Game, player: str) -> int:
        if game.count_choices(player) == 1:
            return 0
        index = self.ranked(game, player)[0][1]
        self.chose(index)
        return index


class MctsBot:
    """Flat Monte Carlo over the best few greedy candidates.

    The choices are first ranked by the greedy one-step margin; the best ``width``
    of them each get ``playouts`` random playouts of ``depth`` decisions (every
    player choosing uniformly at random) on freshly sampled games, and the one with
    the best mean margin at the end of its playouts is chosen. This sees what a
    one-step look-ahead cannot: the outcome of actions that take several decisions,
    and what the other players can do next.
    """

    def __init__(self, seed: int | str, seat: str, playouts: int = 4, depth: int = 16, width: int = 3) -> None:
        self.rand = random.Random(f"{seed}/{seat}/mcts")
        self.greedy = GreedyBot(f"{seed}/{seat}", "mcts")
        self.playouts = playouts
        self.depth = depth
        self.width = width

    def playout(self, game: Game, player: str, index: int) -> float:
        trial = _try(game, player, index, self.rand.getrandbits(63))
        if trial is None:
            return -2 * WIN
        for _ in range(self.depth):
            if trial.over:
                break
            who = trial.deciders()[0]
            try:
                trial.apply(self.rand.randrange(len(trial.choices(who))), who)
            except Exception:  # a sampled world that breaks a rule: judge it where it stopped
                break
        return margin(trial, player)

    def choose(self, game: Game, player: str) -> int:
        if game.count_choices(player) == 1:
            return 0
        candidates = [i for _, i in self.greedy.ranked(game, player, self.width)[: self.width]]
        if len(candidates) == 1:
            self.greedy.chose(candidates[0])
            return candidates[0]
        best, best_value = candidates[0], None
        for index in candidates:  # in greedy order, so a tie keeps the greedy favourite
            value = sum(self.playout(game, player, index) for _ in range(self.playouts)) / self.playouts
            if best_value is None or value > best_value:
                best, best_value = index, value
        self.greedy.chose(best)
        return best


def _parse(kind: str) -> tuple[str, dict[str, int]]:
    """'mcts' or 'mcts:playouts=16:depth=30' -> ('mcts', {...})."""
    name, *opts = kind.strip().split(":")
    params: dict[str, int] = {}
    for part in filter(None, opts):
        key, eq, value = part.partition("=")
        if not eq or not value.strip().isdigit():
            raise ValueError(f"bot option '{part}' must be name=number")
        params[key.strip()] = int(value)
    return name, params


MAKERS: dict[str, Callable[..., Any]] = {"random": RandomBot, "greedy": GreedyBot, "mcts": MctsBot,
                                         "umpire": UmpireBot}
OPTIONS: dict[str, tuple[str, ...]] = {"random": (), "greedy": (), "mcts": ("playouts", "depth", "width"),
                                       "umpire": ()}


POLICY_PREFIX = "policy:"


def _policy_bot(kind: str, seed: int | str, seat: str) -> Bot:
    """``policy:FILE``: a trained policy file played by interpreter.rl (the optional extra ``rl``)."""
    path = kind.strip()[len(POLICY_PREFIX):]
    if not path:
        raise ValueError("a policy bot names its file: policy:FILE")
    try:
        from .rl.policy import PolicyBot, PolicyError  # numpy and gymnasium: only for this bot
    except ImportError as exc:
        raise ValueError(f"policy bots need the rl extra (pip install 'ludus[rl]'): {exc}") from None
    try:
        bot: Bot = PolicyBot(path, seed, seat)
    except PolicyError as exc:
        raise ValueError(str(exc)) from None
    return bot


def bot_problem(kind: str) -> str | None:
    """Why ``kind`` does not name a bot (None when it does); ``policy:FILE`` loads the file to see."""
    if kind.strip().startswith(POLICY_PREFIX):
        try:
            _policy_bot(kind, 0, "")
        except ValueError as exc:
            return str(exc)
        return None
    try:
        name, params = _parse(kind)
    except ValueError as exc:
        return str(exc)
    if name not in MAKERS:
        return f"unknown bot '{name}'"
    for key, value in params.items():
        if key not in OPTIONS[name]:
            allowed = ", ".join(OPTIONS[name]) or "none"
            return f"bot '{name}' has no option '{key}' (options: {allowed})"
        if value < 1:
            return f"bot option '{key}' must be at least 1"
    return None


def make_bot(kind: str, seed: int | str, seat: str) -> Bot:
    """A bot by name, e.g. 'random', 'greedy', 'mcts', 'mcts:playouts=16:depth=30:width=4' or
    'policy:FILE' (a trained policy, docs/rl.md); a bad kind or policy file is a ValueError."""
    if kind.strip().startswith(POLICY_PREFIX):
        return _policy_bot(kind, seed, seat)
    problem = bot_problem(kind)
    if problem:
        raise ValueError(problem)
    name, params = _parse(kind)
    bot: Bot = MAKERS[name](seed, seat, **params)
    return bot


def seat_kind(game: Game, seat: str, kind: str) -> str:
    """The bot kind ``seat`` plays when the players play ``kind``: the umpire seat plays the umpire bot."""
    return "umpire" if seat == UMPIRE and game.rs.umpire else kind


def seat_bots(game: Game, kinds: Mapping[str, str], seed: int | str) -> dict[str, Bot]:
    """A bot for every seat of ``game`` (``game.seats``) that ``kinds`` gives a bot kind.

    ``kinds`` maps a seat to its bot kind ("human" seats get none); the umpire seat of a
    ruleset that has one plays the umpire bot unless ``kinds`` names it. A game without an
    umpire gets exactly the bots ``make_bot`` would make, seat by seat.
    """
    bots = {p: make_bot(k, seed, p) for p, k in kinds.items() if k != "human"}
    if game.rs.umpire and UMPIRE not in kinds:
        bots[UMPIRE] = UmpireBot(seed, UMPIRE)
    return bots
