"""Play many games with random bots, checking a ruleset's invariants after every step.

``ludus simulate`` gives the statistics; this sweep is the stricter check behind the issue
notes: after every single decision it runs the invariants the ruleset's test module
declares (every card in one place, counters within their limits, ...). Not part of CI.

    python benchmarks/sweep.py time_of_crisis --games 1000 --players 2 3 4 --workers 2
    python benchmarks/sweep.py rome_in_crisis --games 500 --players 2 3 4 --workers 2
"""

from __future__ import annotations

import argparse
import collections
import importlib
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from interpreter import Game, load_ruleset  # noqa: E402

# The test module holding each ruleset's invariants(game) check.
INVARIANTS = {"time_of_crisis": "test_time_of_crisis", "rome_in_crisis": "test_rome_in_crisis"}

_RS = None
_CHECK = None


def play(job: tuple[str, int, int]) -> tuple[int, int, str, int, float, float]:
    """One game: (players, seed, end reason or ERROR, decisions, rounds, seconds)."""
    global _RS, _CHECK
    name, players, seed = job
    if _RS is None:
        _RS = load_ruleset(name)
        _CHECK = importlib.import_module(INVARIANTS[name]).invariants
    assert _CHECK is not None
    start = time.perf_counter()
    game = Game.new(_RS, players, seed)
    rand = random.Random(seed)
    decisions = 0
    try:
        while not game.over and decisions < 100_000:
            p = game.deciders()[0]
            game.apply(rand.randrange(len(game.choices(p))), p)
            _CHECK(game)
            decisions += 1
            del game.log[:]
    except Exception as exc:  # reported, not hidden: the sweep counts errors
        return players, seed, f"ERROR {type(exc).__name__}: {str(exc)[:200]}", decisions, 0.0, 0.0
    rounds = float(_RS.scoring.rounds(game, {})) if _RS.scoring.rounds else 0.0
    reason = game.result["reason"] if game.result else "not over"
    return players, seed, reason, decisions, rounds, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ruleset", choices=sorted(INVARIANTS))
    ap.add_argument("--games", type=int, default=100, help="games per player count")
    ap.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    jobs = [(args.ruleset, n, seed) for n in args.players for seed in range(args.games)]
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        results = pool.map(play, jobs, chunksize=10)
    elapsed = time.perf_counter() - start
    for n in args.players:
        rows = [r for r in results if r[0] == n]
        ok = [r for r in rows if not r[2].startswith("ERROR")]
        print(f"{n} players: {len(rows)} games")
        for reason, count in collections.Counter(r[2] for r in rows).most_common():
            print(f"  {count:5d}  {reason}")
        if len(ok) > 1:
            rounds = [r[4] for r in ok]
            q = statistics.quantiles(rounds, n=10)
            print(f"  rounds: mean {statistics.mean(rounds):.1f}, min {min(rounds):.0f}, p10 {q[0]:.0f}, "
                  f"median {statistics.median(rounds):.0f}, p90 {q[-1]:.0f}, max {max(rounds):.0f}")
            print(f"  decisions per game: mean {statistics.mean(r[3] for r in ok):.0f}; "
                  f"seconds per game (with the checks): {statistics.mean(r[5] for r in ok):.2f}")
    errors = [r for r in results if r[2].startswith("ERROR")]
    for r in errors[:10]:
        print("  ", r)
    print(f"{len(results)} games in {elapsed:.0f} s with {args.workers} worker(s); {len(errors)} errors")


if __name__ == "__main__":
    main()
