"""interpreter.rl: the PettingZoo environment, its observations, masks and rewards, policy bots."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test  # noqa: E402

from interpreter import Game, load_ruleset  # noqa: E402
from interpreter.bots import make_bot  # noqa: E402
from interpreter.diagnostics import LudusError  # noqa: E402
from interpreter.loader import bundled_names  # noqa: E402
from interpreter.rl import (  # noqa: E402
    LudusEnv,
    SingleAgentEnv,
    TooManyChoices,
    ludus_env,
    save_policy,
)


@pytest.mark.parametrize(("name", "players", "cycles"), [
    ("dice_race", 2, 400), ("dice_race", 4, 100), ("rome_in_crisis", 3, 60), ("time_of_crisis", 4, 40),
    ("empire_in_crisis", 2, 40)])
def test_pettingzoo_api_test(name, players, cycles):
    env = ludus_env(name, players=players, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # advice for image observations and agent names like player_0
        api_test(env, num_cycles=cycles, verbose_progress=False)


@pytest.mark.parametrize("name", bundled_names())
def test_pettingzoo_api_test_on_every_bundled_ruleset(name):
    env = ludus_env(name, seed=1)  # its usual number of players
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=10, verbose_progress=False)


def random_actions(env: LudusEnv, rand: random.Random, limit: int = 100_000):
    """Play the env to its end with random legal actions; yields each (agent, observation) met."""
    for _ in range(limit):
        if not env.agents:
            return
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        yield agent, obs
        if term or trunc:
            env.step(None)
        else:
            env.step(rand.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    raise AssertionError("the game did not end")


def test_a_whole_random_game_ends_with_the_documented_rewards():
    env = ludus_env("dice_race", players=3, seed=11)
    env.reset()
    total = {a: 0.0 for a in env.possible_agents}
    for _ in random_actions(env, random.Random(1)):
        for a, r in env.rewards.items():
            total[a] += r
    result = env.game.result
    winners = result["winners"]
    for a in env.possible_agents:
        assert total[a] == pytest.approx(1 / len(winners) if a in winners else -1.0)
    assert sum(total.values()) == pytest.approx(1 - (3 - len(winners)))


def test_masks_are_the_legal_choices():
    env = ludus_env("rome_in_crisis", players=4, seed=2, max_actions=64)
    env.reset()
    rand = random.Random(0)
    for _ in range(300):
        game = env.game
        if game.over:
            break
        for a in env.possible_agents:
            mask = env.observe(a)["action_mask"]
            legal = len(game.choices(a)) if a in game.deciders() else 0
            assert mask.sum() == legal and mask[:legal].all()
            assert env.choice_labels(a) == [c.label for c in game.choices(a)][:legal]
        assert env.agent_selection == game.deciders()[0]
        env.step(rand.randrange(len(game.choices(env.agent_selection))))


def redeal_hidden(game: Game, player: str, rand: random.Random) -> None:
    """Shuffle the entities of every zone hidden from ``player`` among those zones (by kind)."""
    view = game.view(player)
    hidden = [k for k, z in view["zones"].items() if isinstance(z, dict)]
    pools: dict[str, list[str]] = {}
    for key in hidden:
        for eid in game.state["zones"][key]:
            pools.setdefault(game.state["entities"][eid]["kind"], []).append(eid)
    for pool in pools.values():
        rand.shuffle(pool)
    for key in hidden:
        items = game.state["zones"][key]
        for i, eid in enumerate(items):
            items[i] = pools[game.state["entities"][eid]["kind"]].pop()
            game.state["entities"][items[i]] = dict(game.state["entities"][items[i]], zone=key)
    game.changed()


def test_red_sees_nothing_of_the_others_hidden_cards():
    env = ludus_env("time_of_crisis", players=4, seed=5)
    env.reset()
    rand = random.Random(4)
    checked = changed_for_blue = 0
    for step in range(120):
        game = env.game
        if game.over:
            break
        if step % 10 == 0:
            red_before, view_before = env.observe("red"), env.observe_view("red")
            blue_before = env.observe("blue")["observation"]
            hands = {k: list(v) for k, v in game.state["zones"].items()}
            redeal_hidden(game, "red", rand)
            assert hands != game.state["zones"]  # the shuffle moved cards
            red_after = env.observe("red")
            assert np.array_equal(red_before["observation"], red_after["observation"])
            assert np.array_equal(red_before["action_mask"], red_after["action_mask"])
            assert env.observe_view("red") == view_before
            changed_for_blue += not np.array_equal(blue_before, env.observe("blue")["observation"])
            checked += 1
        env.step(rand.randrange(len(game.choices(env.agent_selection))))
    assert checked >= 5
    assert changed_for_blue  # blue sees his own hand: the test is not blind


def test_same_seed_and_actions_same_observations():
    def run():
        env = ludus_env("rome_in_crisis", players=3, seed=9)
        env.reset()
        rand = random.Random(2)
        return [obs["observation"].copy() for _, (_, obs) in zip(range(200), random_actions(env, rand), strict=False)]

    a, b = run(), run()
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_the_umpire_is_no_agent():
    env = ludus_env("empire_in_crisis", players=2, seed=1)
    env.reset()
    assert "umpire" not in env.possible_agents and len(env.possible_agents) == 2
    rand = random.Random(3)
    for _, (agent, _) in zip(range(300), random_actions(env, rand), strict=False):
        assert agent != "umpire"
    assert any(e.get("player") == "umpire" for e in env.game.log if e.get("type") == "choice")


def test_too_many_choices_is_a_clear_error():
    env = ludus_env("rome_in_crisis", players=3, seed=1, max_actions=2)
    with pytest.raises(TooManyChoices, match=r"ruleset 'rome_in_crisis' offers \w+ \d+ legal choices, "
                                             r"more than max_actions=2"):
        env.reset()
        rand = random.Random(0)
        for _ in range(1000):
            env.step(rand.randrange(len(env.game.choices(env.agent_selection))))
    with pytest.raises(ValueError, match="max_actions must be a whole number of at least 2"):
        ludus_env("dice_race", max_actions=0)


def test_the_manifest_may_declare_max_actions(tmp_path):
    (tmp_path / "ruleset.yaml").write_text(
        "# yaml-language-server: $schema=../../schemas/manifest.schema.json\n"
        "ruleset: small_race\nversion: '1'\nextends: dice_race\nrl: {max_actions: 6}\nfiles: []\n")
    env = ludus_env(str(tmp_path))
    assert env.max_actions == 6 and env.action_space("red").n == 6
    assert ludus_env(str(tmp_path), max_actions=9).max_actions == 9


def test_evaluation_rewards_telescope_to_the_result():
    env = ludus_env("dice_race", players=2, seed=4, reward="evaluation", evaluation_scale=0.1)
    env.reset()
    start = dict(env._margins)
    total = {a: 0.0 for a in env.possible_agents}
    for _ in random_actions(env, random.Random(5)):
        for a, r in env.rewards.items():
            total[a] += r
    winners = env.game.result["winners"]
    for a in env.possible_agents:
        final = 1 / len(winners) if a in winners else -1.0
        assert total[a] == pytest.approx(final - start[a])


def test_render_prints_the_narration(capsys):
    env = ludus_env("dice_race", players=2, seed=1, render_mode="ansi")
    env.reset()
    first = env.render()
    assert first and first.splitlines()[0] == env.game.log[1]["text"]
    assert env.render() == ""
    human = ludus_env("dice_race", players=2, seed=1, render_mode="human")
    human.reset()
    human.render()
    assert capsys.readouterr().out.strip() == first


def test_a_policy_file_plays_as_a_bot(tmp_path):
    rs = load_ruleset("dice_race")
    env = SingleAgentEnv(rs, players=2, max_actions=8)
    rng = np.random.default_rng(0)
    size = env.observation_space.shape[0]
    path = tmp_path / "p.npz"
    save_policy(path, [rng.normal(size=(16, size)), rng.normal(size=(8, 16))], [np.zeros(16), np.zeros(8)],
                ruleset="dice_race", players=2, max_actions=8)
    game = Game.new(rs, players=2, seed=3)
    bots = {"red": make_bot(f"policy:{path}", 3, "red"), "blue": make_bot("random", 3, "blue")}
    while not game.over:
        who = game.deciders()[0]
        game.apply(bots[who].choose(game, who), who)
    with pytest.raises(ValueError, match="does not exist"):
        make_bot(f"policy:{tmp_path / 'missing.npz'}", 0, "red")
    (tmp_path / "bad.npz").write_text("not a policy")
    with pytest.raises(ValueError, match="is not a policy file"):
        make_bot(f"policy:{tmp_path / 'bad.npz'}", 0, "red")
    other = Game.new(rs, players=3, seed=1)
    with pytest.raises(LudusError, match="trained on dice_race with 2 players, not dice_race with 3"):
        bot = make_bot(f"policy:{path}", 0, "red")
        while True:
            who = other.deciders()[0]
            other.apply(bot.choose(other, who), who)


def test_the_single_agent_env_masks_and_ends():
    env = SingleAgentEnv("dice_race", players=2, seat=None, max_actions=8, seed=1)
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    rand = random.Random(0)
    done = False
    reward = 0.0
    while not done:
        mask = env.action_masks()
        obs, reward, term, trunc, _ = env.step(rand.choice(np.flatnonzero(mask).tolist()))
        done = term or trunc
    assert reward in (1.0, -1.0, 0.5)


def test_the_trained_example_policy_beats_the_random_bot():
    """examples/dice_race_policy.npz, written by examples/rl_train.py (docs/rl.md)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "dice_race_policy.npz"
    rs = load_ruleset("dice_race")
    won = 0.0
    games = 100
    for g in range(games):
        game = Game.new(rs, players=2, seed=500 + g)
        me = game.players[g % 2]
        bots = {p: make_bot(f"policy:{path}" if p == me else "random", g, p) for p in game.players}
        while not game.over:
            who = game.deciders()[0]
            game.apply(bots[who].choose(game, who), who)
        winners = game.result["winners"]
        won += 1 / len(winners) if me in winners else 0.0
    assert won / games > 0.7  # 86 % over 500 games (docs/rl.md); random against random: about 50 %
