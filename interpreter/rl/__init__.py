"""Reinforcement learning on any ruleset (the optional extra ``ludus[rl]``; docs/rl.md).

:func:`ludus_env` makes a PettingZoo AEC environment of a game; :class:`Encoder` is the
generic observation encoding it uses; :class:`SingleAgentEnv` is a Gymnasium environment for
one learning seat against Ludus bots; :class:`PolicyBot` plays a policy file exported by
:func:`save_policy` as a Ludus bot (``--bots policy:FILE``).
"""

from __future__ import annotations

from .encode import Encoder
from .env import DEFAULT_MAX_ACTIONS, LudusEnv, TooManyChoices, ludus_env, result_rewards
from .policy import Policy, PolicyBot, PolicyError, SingleAgentEnv, save_policy

__all__ = ["DEFAULT_MAX_ACTIONS", "Encoder", "LudusEnv", "Policy", "PolicyBot", "PolicyError", "SingleAgentEnv",
           "TooManyChoices", "ludus_env", "result_rewards", "save_policy"]
