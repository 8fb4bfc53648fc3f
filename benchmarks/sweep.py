"""Play many games with bots, checking a ruleset's invariants after every step.

``ludus simulate`` gives the statistics; this sweep is the stricter check behind the issue
notes: after every single decision it runs the invariants the ruleset's test module
declares (every card in one place, counters within their limits, ...), and for every ruleset
the engine's own (no entity in two zones, every zone holds only known entities). Not part of CI.

    python benchmarks/sweep.py time_of_crisis --games 1000 --players 2 3 4 --workers 2
    python benchmarks/sweep.py rome_in_crisis --games 500 --players 2 3 4 --workers 2

A soak: ``--minutes M`` plays until M minutes are up (shared equally by the rulesets named, one
after the other; ``all`` names every bundled ruleset; a game still running at the end of its
ruleset's share is stopped and not counted) instead of a fixed number of games, and ``--bots`` sets the
bots, one kind per seat in turn, rotating by one seat each game (random, greedy, mcts, or a bot
with options such as mcts:playouts=8):

    python benchmarks/sweep.py all --minutes 30 --bots greedy --workers 2
    python benchmarks/sweep.py time_of_crisis --minutes 10 --bots greedy,random --players 2 3 4

A game that errors or breaks an invariant is reported with its ruleset, player count, seed and
bots; it replays with the same arguments. The exit code is 1 if any game did.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import itertools
import multiprocessing
import queue
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from interpreter import Game, load_ruleset  # noqa: E402
from interpreter.bots import Bot, bot_problem, make_bot  # noqa: E402
from interpreter.loader import bundled_names  # noqa: E402
from interpreter.model import UMPIRE  # noqa: E402

# The test module holding each ruleset's invariants(game) check; an overlay uses its base's.
INVARIANTS = {"time_of_crisis": "test_time_of_crisis", "rome_in_crisis": "test_rome_in_crisis",
              "pax_romana": "test_pax_romana"}
CUT = "cut at the deadline"


class Job(NamedTuple):
    ruleset: str
    players: int
    seed: int
    bots: tuple[str, ...]  # the kind of each seat, in seat order
    deadline: float  # time.time() after which the game stops unfinished (0: none)


class Outcome(NamedTuple):
    ruleset: str
    players: int
    seed: int
    bots: tuple[str, ...]
    reason: str  # how the game ended, or ERROR ..., INVARIANT ..., or CUT
    decisions: int
    rounds: float
    seconds: float
    winners: tuple[str, ...] = ()  # the bot kind of each seat that won (a shared win counts for each)


_LOADED: dict[str, tuple[Any, Callable[[Game], None] | None]] = {}


def _invariants_of(name: str) -> Callable[[Game], None] | None:
    for base, module in INVARIANTS.items():
        if name == base or name.startswith(base + "_"):
            check: Callable[[Game], None] = importlib.import_module(module).invariants
            return check
    return None


def engine_invariants(game: Game) -> None:
    """What holds in every ruleset: each entity in at most one zone, and zones hold known entities."""
    placed = [eid for items in game.zones.values() for eid in items]
    assert len(placed) == len(set(placed)), "an entity is in two zones"
    unknown = set(placed) - set(game.ents)
    assert not unknown, f"zones hold unknown entities {sorted(unknown)[:3]}"


def _bots(job: Job, game: Game) -> dict[str, Bot | random.Random]:
    # A random seat draws from one generator seeded by the game, as the sweep always has.
    shared = random.Random(job.seed)
    bots: dict[str, Bot | random.Random] = {p: shared if kind == "random" else make_bot(kind, job.seed, p)
                                            for p, kind in zip(game.players, job.bots, strict=True)}
    if UMPIRE in game.seats:  # a ruleset's umpire seat rules by its default (bots.UmpireBot)
        bots[UMPIRE] = make_bot("umpire", job.seed, UMPIRE)
    return bots


def play(job: Job) -> Outcome:
    """One game, checking the invariants after every decision."""
    start = time.perf_counter()
    decisions = 0

    def out(reason: str, rounds: float = 0.0, winners: tuple[str, ...] = ()) -> Outcome:
        return Outcome(job.ruleset, job.players, job.seed, job.bots, reason, decisions, rounds,
                       time.perf_counter() - start, winners)

    try:
        if job.ruleset not in _LOADED:
            _LOADED[job.ruleset] = (load_ruleset(job.ruleset), _invariants_of(job.ruleset))
        rs, check = _LOADED[job.ruleset]
        game = Game.new(rs, job.players, job.seed)
        bots = _bots(job, game)
        while not game.over and decisions < 100_000:
            if job.deadline and time.time() > job.deadline:
                return out(CUT)
            p = game.deciders()[0]
            bot = bots[p]
            index = bot.randrange(len(game.choices(p))) if isinstance(bot, random.Random) else bot.choose(game, p)
            game.apply(index, p)
            decisions += 1
            try:
                engine_invariants(game)
                if check is not None:
                    check(game)
            except AssertionError as exc:
                return out(f"INVARIANT after decision {decisions}: {str(exc)[:200]}")
            del game.log[:]
    except Exception as exc:  # reported, not hidden: the sweep counts errors
        return out(f"ERROR {type(exc).__name__}: {str(exc)[:200]}")
    rounds = float(rs.scoring.rounds(game, {})) if rs.scoring.rounds else 0.0
    won = set(game.result.get("winners", [])) if game.result else set()
    kinds = tuple(kind for p, kind in zip(game.players, job.bots, strict=True) if p in won)
    return out(game.result["reason"] if game.result else "not over", rounds, kinds)


def _seat_kinds(kinds: list[str], players: int, game_number: int) -> tuple[str, ...]:
    return tuple(kinds[(game_number + seat) % len(kinds)] for seat in range(players))


def _jobs(args: argparse.Namespace, names: list[str], kinds: list[str]) -> Iterator[Job]:
    """The games to play: --games per player count, or each ruleset in turn for its share of --minutes."""
    if not args.minutes:
        for name in names:
            for n in args.players:
                for seed in range(args.first_seed, args.first_seed + args.games):
                    yield Job(name, n, seed, _seat_kinds(kinds, n, seed), 0.0)
        return
    share = 60 * args.minutes / len(names)
    start = time.time()
    for i, name in enumerate(names):
        deadline = start + share * (i + 1)
        for seed in itertools.count(args.first_seed):
            if time.time() > deadline:
                break
            for n in args.players:
                yield Job(name, n, seed, _seat_kinds(kinds, n, seed), deadline)


def _run(pool: Any, jobs: Iterator[Job], in_flight: int) -> list[Outcome]:
    """Play the jobs, a few at a time (the stream of a soak never ends), until they or the time run out."""
    done: queue.Queue[Outcome | BaseException] = queue.Queue()
    results: list[Outcome] = []
    pending = 0
    for first in itertools.islice(jobs, in_flight):
        pool.apply_async(play, (first,), callback=done.put, error_callback=done.put)
        pending += 1
    while pending:
        r = done.get()
        pending -= 1
        if isinstance(r, BaseException):
            raise r
        results.append(r)
        job = next(jobs, None)
        if job is not None:
            pool.apply_async(play, (job,), callback=done.put, error_callback=done.put)
            pending += 1
    return results


def _report(results: list[Outcome], names: list[str], args: argparse.Namespace) -> None:
    for name in names:
        if len(names) > 1:
            print(f"== {name}")
        for n in args.players:
            rows = [r for r in results if r.ruleset == name and r.players == n]
            ok = [r for r in rows if not r.reason.startswith(("ERROR", "INVARIANT"))]
            print(f"{n} players: {len(rows)} games")
            for reason, count in collections.Counter(r.reason for r in rows).most_common():
                print(f"  {count:5d}  {reason}")
            if len(ok) > 1:
                rounds = [r.rounds for r in ok]
                q = statistics.quantiles(rounds, n=10)
                print(f"  rounds: mean {statistics.mean(rounds):.1f}, min {min(rounds):.0f}, p10 {q[0]:.0f}, "
                      f"median {statistics.median(rounds):.0f}, p90 {q[-1]:.0f}, max {max(rounds):.0f}")
                print(f"  decisions per game: mean {statistics.mean(r.decisions for r in ok):.0f}; "
                      f"seconds per game (with the checks): {statistics.mean(r.seconds for r in ok):.2f}")
            _report_wins(ok)


def _report_wins(ok: list[Outcome]) -> None:
    """With more than one kind of bot: how often each kind won, against its share of the seats."""
    kinds = sorted({k for r in ok for k in r.bots})
    if len(kinds) < 2 or not ok:
        return
    for kind in kinds:
        games = [r for r in ok if kind in r.bots]
        wins = sum(kind in r.winners for r in games)
        fair = statistics.mean(r.bots.count(kind) / len(r.bots) for r in games)
        print(f"  {kind}: won {wins} of the {len(games)} games it played ({100 * wins / len(games):.1f}%; "
              f"its share of the seats: {100 * fair:.1f}%)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ruleset", nargs="+", help="bundled ruleset(s), or 'all'")
    ap.add_argument("--games", type=int, default=100, help="games per player count (default 100)")
    ap.add_argument("--minutes", type=float, help="play until this many minutes are up instead of --games")
    ap.add_argument("--bots", default="random", metavar="KIND[,KIND...]",
                    help="bot of each seat in turn, rotating by one seat per game (default random)")
    ap.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--first-seed", type=int, default=0, metavar="S",
                    help="seeds from S on (default 0): to add games to an earlier run without repeating them")
    args = ap.parse_args()
    names = bundled_names() if args.ruleset == ["all"] else args.ruleset
    unknown = [n for n in names if n not in bundled_names()]
    kinds = args.bots.split(",")
    problems = [p for p in (bot_problem(k) for k in kinds) if p]
    if unknown or problems or (args.minutes is not None and args.minutes <= 0):
        ap.error(f"unknown ruleset(s) {', '.join(unknown)}" if unknown else
                 problems[0] if problems else "--minutes must be positive")
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        results = _run(pool, _jobs(args, names, kinds), 2 * args.workers)
        pool.terminate()
    elapsed = time.perf_counter() - start
    cut = sum(r.reason == CUT for r in results)
    results = [r for r in results if r.reason != CUT]
    results.sort(key=lambda r: (names.index(r.ruleset), r.players, r.seed))
    _report(results, names, args)
    bad = [r for r in results if r.reason.startswith(("ERROR", "INVARIANT"))]
    for r in bad[:10]:
        print("  ", r)
    errors = sum(r.reason.startswith("ERROR") for r in bad)
    decisions = sum(r.decisions for r in results)
    busy = sum(r.seconds for r in results)
    print(f"{len(results)} games in {elapsed:.0f} s with {args.workers} worker(s), bots {args.bots}; "
          f"{errors} errors; {len(bad) - errors} invariant breaks; {decisions} decisions, "
          f"{decisions / busy if busy else 0:.0f} decisions/s per worker (with the checks)"
          + (f"; {cut} game(s) stopped unfinished at the deadline, not counted" if cut else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
