"""Trained policies as Ludus bots, and one learning seat as a Gymnasium environment.

A *policy file* (``.npz``, NumPy only) holds a small multilayer perceptron and what it was
trained on: the ruleset's name, the number of players, ``max_actions`` and the observation
size. :class:`PolicyBot` (``--bots policy:FILE``) encodes its player's view exactly as
``ludus_env`` does and takes the legal choice with the highest output (the masked argmax):
it sees what its player sees, nothing more. Any library can produce such a file:
:func:`save_policy` takes the layers' weight matrices and biases.

:class:`SingleAgentEnv` puts one learner in a seat and Ludus bots in the others, for
single-agent libraries (it offers ``action_masks()`` as sb3-contrib's MaskablePPO expects).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from ..bots import seat_bots
from ..diagnostics import Diagnostic, Loc, LudusError
from ..loader import load_ruleset
from ..model import Ruleset
from ..runtime import Game
from .encode import BOUND, Encoder
from .env import TooManyChoices, resolve_max_actions, result_rewards

POLICY_FORMAT = 1
ACTIVATIONS = ("tanh", "relu")


class PolicyError(ValueError):
    """A policy file that cannot be used (missing or unreadable: when the bot is made)."""


def _mismatch(path: str, message: str) -> LudusError:
    """A policy made for another game, found at its first decision: a located error, which the
    commands print as one line (not a traceback)."""
    return LudusError([Diagnostic(Loc(path), message, "retrain the policy for this ruleset and player count")])


def save_policy(path: str | Path, weights: Sequence[np.ndarray], biases: Sequence[np.ndarray], *,
                ruleset: str, players: int, max_actions: int, activation: str = "tanh") -> None:
    """Write a policy file: layer i computes ``act(weights[i] @ x + biases[i])`` (no activation on
    the last, whose outputs are the scores of the ``max_actions`` choices)."""
    if activation not in ACTIVATIONS:
        raise PolicyError(f"activation must be one of {ACTIVATIONS}, not {activation!r}")
    meta = {"format": POLICY_FORMAT, "ruleset": ruleset, "players": players, "max_actions": max_actions,
            "activation": activation, "layers": len(weights), "inputs": int(weights[0].shape[1])}
    arrays: dict[str, Any] = {f"w{i}": np.asarray(w, np.float32) for i, w in enumerate(weights)}
    arrays |= {f"b{i}": np.asarray(b, np.float32) for i, b in enumerate(biases)}
    with open(path, "wb") as fh:  # np.savez adds '.npz' to a path without it; a file object keeps the name
        arrays["meta"] = np.array(json.dumps(meta))
        np.savez(fh, **arrays)


class Policy:
    """A loaded policy file: ``scores(x)`` runs the perceptron on one observation vector."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                self.meta: dict[str, Any] = json.loads(str(data["meta"]))
                layers = int(self.meta["layers"])
                self.weights = [data[f"w{i}"] for i in range(layers)]
                self.biases = [data[f"b{i}"] for i in range(layers)]
        except FileNotFoundError:
            raise PolicyError(f"policy file '{path}' does not exist") from None
        except Exception as exc:  # a file that is no policy: say so, whatever numpy found wrong
            raise PolicyError(f"'{path}' is not a policy file: {exc}") from None
        if self.meta.get("format") != POLICY_FORMAT or self.meta.get("activation") not in ACTIVATIONS:
            raise PolicyError(f"'{path}': a policy file of format {POLICY_FORMAT} is expected")
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            want = self.meta["inputs"] if i == 0 else self.weights[i - 1].shape[0]
            if w.ndim != 2 or w.shape[1] != want or b.shape != (w.shape[0],):
                raise PolicyError(f"'{path}': layer {i} has weights {w.shape} and biases {b.shape}, "
                                  f"which do not fit {want} inputs")
        if self.weights[-1].shape[0] != self.meta["max_actions"]:
            raise PolicyError(f"'{path}': the last layer has {self.weights[-1].shape[0]} outputs, "
                              f"not max_actions={self.meta['max_actions']}")

    def scores(self, x: np.ndarray) -> np.ndarray:
        act = np.tanh if self.meta["activation"] == "tanh" else (lambda v: np.maximum(v, 0.0))
        h = x
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = w @ h + b
            if i < len(self.weights) - 1:
                h = act(h)
        return h


class PolicyBot:
    """A Ludus bot playing a policy file: the legal choice with the best score (masked argmax)."""

    def __init__(self, path: str | Path, seed: int | str = 0, seat: str = "") -> None:
        self.policy = Policy(path)
        self._encoder: Encoder | None = None

    def encoder(self, game: Game) -> Encoder:
        meta = self.policy.meta
        if self._encoder is None:
            if game.rs.name != meta["ruleset"] or len(game.players) != meta["players"]:
                raise _mismatch(self.policy.path, f"this policy was trained on {meta['ruleset']} with "
                                f"{meta['players']} players, not {game.rs.name} with {len(game.players)}")
            enc = Encoder(game.rs, game.players, int(meta["max_actions"]))
            if enc.size != meta["inputs"]:
                raise _mismatch(self.policy.path, f"this policy expects {meta['inputs']} inputs; this version "
                                f"of {game.rs.name} encodes {enc.size}: retrain the policy")
            self._encoder = enc
        return self._encoder

    def choose(self, game: Game, player: str) -> int:
        options = [c.value for c in game.choices(player)]
        if len(options) == 1:
            return 0
        enc = self.encoder(game)
        if len(options) > enc.max_actions:
            raise TooManyChoices(f"{player} has {len(options)} legal choices; the policy knows {enc.max_actions}")
        scores = self.policy.scores(enc.encode(game.view(player, copy=False), player, options))
        return int(np.argmax(scores[: len(options)]))


class SingleAgentEnv(gymnasium.Env):
    """One learning seat against Ludus bots, as a Gymnasium environment.

    ``seat``: the learner's seat index, or None for a seat drawn at random each game. The
    reward is the learner's end-of-game reward (``result_rewards``); a game longer than
    ``max_decisions`` decisions is truncated.
    """

    metadata = {"render_modes": []}

    def __init__(self, ruleset: str | Ruleset, players: int = 2, seat: int | None = 0, opponents: str = "random",
                 seed: int = 0, max_actions: int | None = None, max_decisions: int = 10_000) -> None:
        self.rs = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
        self.players = players
        self.seats = self.rs.seat_names(players)
        self.fixed_seat = seat
        self.opponents = opponents
        self.max_actions = resolve_max_actions(self.rs, max_actions)
        self.max_decisions = max_decisions
        self.encoder = Encoder(self.rs, self.seats, self.max_actions)
        self.observation_space = spaces.Box(-BOUND, BOUND, (self.encoder.size,), np.float32)
        self.action_space = spaces.Discrete(self.max_actions)
        self._seed = seed
        self._rand = random.Random(seed)
        self.game: Game | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self._rand = random.Random(seed)
        game_seed = self._rand.getrandbits(31)
        self.me = self.seats[self.fixed_seat if self.fixed_seat is not None else self._rand.randrange(self.players)]
        self.game = Game.new(self.rs, players=self.players, seed=game_seed)
        kinds = {p: self.opponents for p in self.game.players if p != self.me}
        self.bots = seat_bots(self.game, kinds, game_seed)
        self.decisions = 0
        self._play_others()
        return self._obs(), {}

    def _play_others(self) -> None:
        game = self.game
        assert game is not None
        while not game.over and self.me not in game.deciders() and self.decisions < self.max_decisions:
            who = game.deciders()[0]
            game.apply(self.bots[who].choose(game, who), who)
            self.decisions += 1

    def _options(self) -> list[Any]:
        game = self.game
        assert game is not None
        if game.over or self.me not in game.deciders():
            return []
        options = [c.value for c in game.choices(self.me)]
        if len(options) > self.max_actions:
            raise TooManyChoices(f"ruleset '{self.rs.name}' offers {len(options)} legal choices, more than "
                                 f"max_actions={self.max_actions}")
        return options

    def _obs(self) -> np.ndarray:
        assert self.game is not None
        return self.encoder.encode(self.game.view(self.me, copy=False), self.me, self._options())

    def action_masks(self) -> np.ndarray:
        """The legal choices of the learner now (True: legal), for MaskablePPO."""
        mask = np.zeros(self.max_actions, dtype=bool)
        mask[: len(self._options())] = True
        return mask

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        game = self.game
        assert game is not None
        game.apply(int(action), self.me)
        self.decisions += 1
        self._play_others()
        reward = result_rewards(game)[self.me] if game.over else 0.0
        truncated = not game.over and self.decisions >= self.max_decisions
        return self._obs(), reward, game.over, truncated, {}


__all__ = ["Policy", "PolicyBot", "PolicyError", "SingleAgentEnv", "save_policy"]
