"""Golden games: every game of tests/golden/small.json still plays exactly as recorded.

Each entry is one complete bot game of a bundled ruleset (random bots for seeds 1..5 at every
player count, greedy bots for a few seeds at the max players of the two Crisis games) and the
SHA-256 of its log and final state (tests/golden.py says how). The larger set,
benchmarks/golden_100.json, is checked by ``python -m tests.golden --check``.
"""

from __future__ import annotations

from typing import Any

import pytest
from golden import SMALL, Entry, bundled, game_id, load, play_record, ruleset

DATA: dict[str, Any] = load(SMALL)
GAMES: list[Entry] = DATA["games"]


@pytest.mark.parametrize("want", GAMES, ids=[game_id(e["ruleset"], e["players"], e["seed"], e["bot"]) for e in GAMES])
def test_plays_as_recorded(want: Entry) -> None:
    got = play_record(want["ruleset"], want["players"], want["seed"], want["bot"])
    commit = DATA["engine_commit"]
    assert got["digest"] == want["digest"], (
        f"the engine now plays this game differently from commit {commit} "
        f"({want['decisions']} decisions recorded, {got['decisions']} now; the digest covers the log and the "
        f"final state); if the change of behaviour is intended, regenerate with python -m tests.golden --write "
        f"and say why in the commit message")


def test_every_bundled_ruleset_and_player_count_is_recorded() -> None:
    recorded = {(e["ruleset"], e["players"]) for e in GAMES}
    for name in bundled():
        rs = ruleset(name)
        for n in range(rs.min_players, rs.max_players + 1):
            assert (name, n) in recorded, (f"{name} with {n} players has no golden game: regenerate with "
                                           "python -m tests.golden --write")
