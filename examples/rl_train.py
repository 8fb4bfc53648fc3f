"""Train a small agent on the Dice Race and show it beating the random bot (docs/rl.md).

    pip install torch   # CPU is enough (choose the build yourself: pip may take a CUDA one)
    pip install -e '.[rl-example]'
    python examples/rl_train.py --steps 60000 --out dice_race_policy.npz --games 500

MaskablePPO (sb3-contrib) learns one seat of a 2-player Dice Race against Ludus's random bot,
the learner's seat drawn at random each game (interpreter.rl.SingleAgentEnv: the same generic
observation as ludus_env, and the action mask). The trained network is exported to a NumPy
policy file, which any Ludus command plays as a bot:

    ludus simulate dice_race --players 2 --games 500 --rotate --bots policy:dice_race_policy.npz,random

The script ends by playing ``--games`` games of the exported policy against the random bot
(seats alternating) and printing its win rate, with random against random as the baseline.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sb3_contrib import MaskablePPO
from torch import nn

from interpreter import Game, load_ruleset
from interpreter.bots import make_bot
from interpreter.rl import SingleAgentEnv, save_policy

RULESET, PLAYERS, MAX_ACTIONS = "dice_race", 2, 8


def export(model: MaskablePPO, path: str) -> None:
    """The policy network's linear layers (tanh between them) to a Ludus policy file."""
    layers = [m for m in model.policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    layers.append(model.policy.action_net)
    weights = [m.weight.detach().cpu().numpy() for m in layers]
    biases = [m.bias.detach().cpu().numpy() for m in layers]
    save_policy(path, weights, biases, ruleset=RULESET, players=PLAYERS, max_actions=MAX_ACTIONS)


def win_rate(kind: str, games: int, seed: int) -> float:
    """The share of games ``kind`` wins against the random bot, seats alternating (a tie: half)."""
    rs = load_ruleset(RULESET)
    won = 0.0
    for g in range(games):
        game = Game.new(rs, players=PLAYERS, seed=seed + g)
        me = game.players[g % PLAYERS]
        bots = {p: make_bot(kind if p == me else "random", seed + g, p) for p in game.players}
        while not game.over:
            who = game.deciders()[0]
            game.apply(bots[who].choose(game, who), who)
        winners = game.result["winners"]
        won += 1 / len(winners) if me in winners else 0.0
    return won / games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=60_000, help="training decisions of the learner")
    ap.add_argument("--out", default="dice_race_policy.npz", help="the policy file to write")
    ap.add_argument("--games", type=int, default=500, help="evaluation games against the random bot")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    env = SingleAgentEnv(RULESET, players=PLAYERS, seat=None, opponents="random", seed=args.seed,
                         max_actions=MAX_ACTIONS)
    model = MaskablePPO("MlpPolicy", env, seed=args.seed, verbose=0, device="cpu", n_steps=1024, batch_size=256,
                        gamma=1.0, ent_coef=0.01)
    start = time.time()
    model.learn(total_timesteps=args.steps)
    print(f"trained {args.steps} steps in {time.time() - start:.0f} s")
    export(model, args.out)
    eval_seed = 1_000_000 + args.seed  # games the learner never trained on
    trained = win_rate(f"policy:{args.out}", args.games, eval_seed)
    baseline = win_rate("random", args.games, eval_seed)
    # 95 % normal interval of a win rate over these games
    half = 1.96 * np.sqrt(trained * (1 - trained) / args.games)
    print(f"policy vs random: {trained:.1%} of {args.games} games (±{half:.1%}); random vs random: {baseline:.1%}")


if __name__ == "__main__":
    main()
