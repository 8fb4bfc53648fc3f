"""``ludus_env``: a game of any ruleset as a PettingZoo AEC environment.

The agents are the game's players (its seats, in turn order). A decision of a seat that is
not a player — a ruleset's umpire seat — is taken inside the environment by the umpire bot
(``interpreter.bots``) and never becomes an agent's turn. A secret simultaneous choice is
presented to its deciders one after another, the first decider first: each sees only its own
options (the view hides the others' answers), so the order tells nothing.

Observations are ``{"observation": vector, "action_mask": mask}``: the vector is the generic
encoding of ``game.view(agent)`` (:mod:`interpreter.rl.encode`), never of the full state; the
mask marks the agent's legal choices among ``max_actions`` slots. An action is the index of a
legal choice (``game.apply(index, agent)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import AECEnv

from ..bots import make_bot, margin
from ..loader import load_ruleset
from ..model import UMPIRE, Ruleset
from ..runtime import Game
from .encode import BOUND, Encoder

#: max_actions when neither the caller nor the ruleset (manifest ``rl: max_actions``) gives one:
#: more than any bundled ruleset offered in random games (the most measured: 263).
DEFAULT_MAX_ACTIONS = 512
REWARDS = ("result", "evaluation")


class TooManyChoices(RuntimeError):
    """A decision offers more legal choices than the action space has slots."""


def result_rewards(game: Game) -> dict[str, float]:
    """The end-of-game rewards: each of the w winners gets 1/w, every other player -1."""
    result = game.result or {}
    winners = [w for w in result.get("winners", []) if w in game.players]
    return {p: (1.0 / len(winners) if p in winners else -1.0) for p in game.players}


def resolve_max_actions(rs: Ruleset, max_actions: int | None) -> int:
    """The action space's size: the caller's, else the ruleset's ``rl: max_actions``, else the default."""
    n = max_actions if max_actions is not None else (rs.rl_max_actions or DEFAULT_MAX_ACTIONS)
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"max_actions must be a whole number of at least 2, not {n!r}")
    return n


class LudusEnv(AECEnv):
    """A game of one ruleset as an AEC environment; make it with :func:`ludus_env`."""

    RENDER_MODES = ("human", "ansi")
    metadata = {"render_modes": list(RENDER_MODES), "name": "ludus_v0", "is_parallelizable": False}

    def __init__(self, rs: Ruleset, players: int | None = None, seed: int = 0, max_actions: int | None = None,
                 reward: str = "result", render_mode: str | None = None, evaluation_scale: float = 1.0) -> None:
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode is not None and render_mode not in self.RENDER_MODES:
            raise ValueError(f"render_mode must be one of {', '.join(self.RENDER_MODES)}, not {render_mode!r}")
        n = players if players is not None else rs.default_players or rs.min_players
        problem = rs.player_count_problem(n)
        if problem:
            raise ValueError(problem)
        self.rs = rs
        self.n_players = n
        self.seed = seed
        self.reward_mode = reward
        self.evaluation_scale = evaluation_scale
        self.render_mode = render_mode
        self.max_actions = resolve_max_actions(rs, max_actions)
        self.possible_agents: list[str] = rs.seat_names(n)
        self.encoder = Encoder(rs, self.possible_agents, self.max_actions)
        box = spaces.Box(-BOUND, BOUND, (self.encoder.size,), np.float32)
        mask = spaces.Box(0, 1, (self.max_actions,), np.int8)
        self.observation_spaces = {a: spaces.Dict({"observation": box, "action_mask": mask})
                                   for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.max_actions) for a in self.possible_agents}
        self.game: Game | None = None
        self._resets = 0
        self._rendered = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. ``seed`` given: that game; else the env's seed plus the number of resets
        made without one (so repeated resets give different, reproducible games)."""
        if seed is None:
            game_seed = self.seed + self._resets
            self._resets += 1
        else:
            game_seed = seed
        self.game = Game.new(self.rs, players=self.n_players, seed=game_seed)
        self._umpire = make_bot("umpire", game_seed, UMPIRE)
        self._rendered = 0
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._advance()
        self._margins = self._potentials()
        self._select()

    def step(self, action: Any) -> None:
        """Answer the selected agent's decision with choice ``action`` (an index of the mask)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game()
        legal = game.count_choices(agent)
        if action is None or isinstance(action, bool) or not 0 <= int(action) < legal:
            raise ValueError(f"{agent}: action {action!r} is not a legal choice (there are {legal}, 0-{legal - 1}; "
                             "see the action mask)")
        self._cumulative_rewards[agent] = 0.0
        game.apply(int(action), agent)
        self._advance()
        self.rewards = {a: 0.0 for a in self.agents}
        if self.reward_mode == "evaluation":
            after = self._potentials()
            for a in self.agents:
                self.rewards[a] = after[a] - self._margins[a]
            self._margins = after
        if game.over:
            for a, r in result_rewards(game).items():
                self.rewards[a] += r
                self.terminations[a] = True
        self._select()
        self._accumulate_rewards()

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game

    def _advance(self) -> None:
        """Let the umpire bot take every decision of a seat that is no agent, until an agent decides."""
        game = self._game()
        while not game.over:
            others = [d for d in game.deciders() if d not in self.possible_agents]
            if not others:
                break
            game.apply(self._umpire.choose(game, others[0]), others[0])
        for d in game.deciders():
            count = game.count_choices(d)
            if count > self.max_actions:
                raise TooManyChoices(
                    f"ruleset '{self.rs.name}' offers {d} {count} legal choices, more than max_actions="
                    f"{self.max_actions}: make the environment with ludus_env(..., max_actions={count}) or more, "
                    f"or declare 'rl: {{max_actions: N}}' in its ruleset.yaml")

    def _select(self) -> None:
        game = self._game()
        if game.over:  # every agent is terminated: step(None) each in turn (pettingzoo's _was_dead_step)
            self.agent_selection = self.agents[0] if self.agents else self.possible_agents[0]
            return
        self.agent_selection = game.deciders()[0]

    def _potentials(self) -> dict[str, float]:
        """The evaluation's margin of each agent, scaled (0 at the end: the result takes over)."""
        game = self._game()
        if self.reward_mode != "evaluation" or game.over:
            return {a: 0.0 for a in self.possible_agents}
        return {a: margin(game, a) * self.evaluation_scale for a in self.possible_agents}

    # ------------------------------------------------------------------ observing
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation: the encoded view and the mask of its legal choices."""
        game = self._game()
        options = [c.value for c in game.choices(agent)] if agent in game.deciders() else []
        vector = self.encoder.encode(game.view(agent, copy=False), agent, options)
        mask = np.zeros(self.max_actions, dtype=np.int8)
        mask[: min(len(options), self.max_actions)] = 1
        return {"observation": vector, "action_mask": mask}

    def observe_view(self, agent: str) -> dict[str, Any]:
        """The structured view the observation is encoded from (``game.view(agent)``, a copy)."""
        return self._game().view(agent)

    def choice_labels(self, agent: str) -> list[str]:
        """The labels of ``agent``'s legal choices, in action-index order (empty if not deciding)."""
        game = self._game()
        return [c.label for c in game.choices(agent)] if agent in game.deciders() else []

    def render(self) -> str | None:
        """The narration (text lines of the log) since the last call: printed ("human") or returned
        ("ansi"). It is a spectator's render: every line, private ones (``log ... to``) too."""
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; ludus_env(..., render_mode='human')")
            return None
        game = self._game()
        lines = [str(e["text"]) for e in game.log[self._rendered:] if e.get("type") == "text"]
        self._rendered = len(game.log)
        text = "\n".join(lines)
        if self.render_mode == "human":
            if text:
                print(text)
            return None
        return text

    def close(self) -> None:
        self.game = None


def ludus_env(ruleset: str | Ruleset, players: int | None = None, seed: int = 0, setup: str | None = None,
              max_actions: int | None = None, reward: str = "result", render_mode: str | None = None,
              evaluation_scale: float = 1.0) -> LudusEnv:
    """A PettingZoo AEC environment playing ``ruleset`` (a bundled name, a folder, or a loaded Ruleset).

    ``players``: how many (default: the ruleset's usual count); ``seed``: the first game's seed;
    ``setup``: a named set-up of the ruleset; ``max_actions``: the action space's size (default:
    the manifest's ``rl: max_actions``, else 512); ``reward``: ``"result"`` (at the end only) or
    ``"evaluation"`` (plus the change of each player's evaluation margin, times
    ``evaluation_scale``, at every step); ``render_mode``: ``"human"`` or ``"ansi"``.
    """
    if isinstance(ruleset, Ruleset):
        if setup is not None and ruleset.setup != setup:
            raise ValueError(f"the ruleset was loaded with set-up {ruleset.setup!r}, not {setup!r}")
        rs = ruleset
    else:
        rs = load_ruleset(ruleset, setup=setup)
    return LudusEnv(rs, players=players, seed=seed, max_actions=max_actions, reward=reward,
                    render_mode=render_mode, evaluation_scale=evaluation_scale)


__all__: Sequence[str] = ["DEFAULT_MAX_ACTIONS", "LudusEnv", "TooManyChoices", "ludus_env", "result_rewards"]
