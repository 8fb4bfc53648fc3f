"""Play many Rome in Crisis games with random bots, checking the invariants after every step.

Reports how games ended, their length in turns, decisions per game and the time taken.
Used for the issue notes; not part of CI.

    python benchmarks/ric_sweep.py --games 500 --players 2 3 4 --workers 2
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_rome_in_crisis import invariants  # noqa: E402

from interpreter import Game, load_ruleset  # noqa: E402

_RS = None


def play(job: tuple[int, int]) -> tuple[int, int, str, int, int, float]:
    global _RS
    players, seed = job
    if _RS is None:
        _RS = load_ruleset("rome_in_crisis")
    start = time.perf_counter()
    game = Game.new(_RS, players, seed)
    rand = random.Random(seed)
    decisions = 0
    try:
        while not game.over and decisions < 100_000:
            p = game.deciders()[0]
            game.apply(rand.randrange(len(game.choices(p))), p)
            invariants(game)
            decisions += 1
    except Exception as exc:  # reported, not hidden: the sweep counts errors
        return players, seed, f"ERROR {type(exc).__name__}: {str(exc)[:200]}", decisions, 0, 0.0
    turns = sum(1 for e in game.log if e["type"] == "text" and e["text"].startswith("=== Turn"))
    reason = game.result["reason"] if game.result else "not over"
    return players, seed, reason, decisions, turns, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    jobs = [(n, seed) for n in args.players for seed in range(args.games)]
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
        if ok:
            turns = [r[4] for r in ok]
            q = statistics.quantiles(turns, n=10) if len(turns) > 1 else [turns[0]] * 9
            print(f"  turns: mean {statistics.mean(turns):.1f}, min {min(turns)}, p10 {q[0]:.0f}, "
                  f"median {statistics.median(turns):.0f}, p90 {q[-1]:.0f}, max {max(turns)}")
            print(f"  decisions per game: mean {statistics.mean(r[3] for r in ok):.0f}; "
                  f"seconds per game (with invariants): mean {statistics.mean(r[5] for r in ok):.2f}")
    errors = [r for r in results if r[2].startswith("ERROR")]
    for r in errors[:10]:
        print("  ", r)
    print(f"{len(results)} games in {elapsed:.0f} s with {args.workers} worker(s); {len(errors)} errors")


if __name__ == "__main__":
    main()
