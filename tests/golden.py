"""Golden digests: what every bundled ruleset plays, recorded so an engine change can be checked.

A digest is the SHA-256 of one complete bot game: its log, written exactly as ``ludus play
--log`` writes it (``gamelog.dump_entry`` per line, each ending in a newline), then a newline,
then the final state as ``Game.to_json`` writes it, less its ``format`` key (the version of
the saved-state layout, not a move of the game: at the end the stack is empty, and 149cdb7
moved it from 1 to 2 with no change of play), and with the ruleset's own digest (the hash of its
files) blanked in both: a rework of the rules that plays exactly as before (an event's effect
moved onto its card) keeps every game's digest. Same engine, rules, seed and bots, same digest.

    python -m tests.golden --check benchmarks/golden_100.json   # replay, exit 1 on a difference
    python -m tests.golden --write                             # regenerate tests/golden/small.json
    python -m tests.golden --write FILE --seeds 100 --greedy-seeds 0

Timing (engine d6845c4, LUDUS_CACHE=off, 2 processes on a 2-core machine shared with another
engineer): writing benchmarks/golden_100.json (1,800 games) took 84 s (164 s of CPU; 101 s on a
second run); tests/golden/small.json (94 games, 4 of them greedy) 16-29 s, and its test 35 s of CPU.
With Pax Romana's two rulesets (a whole game since 2026-11-25) the file holds 2,400 games: 121 s.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypedDict

import interpreter
from interpreter import Game, load_ruleset
from interpreter.bots import seat_bots
from interpreter.gamelog import dump_entry
from interpreter.model import Ruleset

ROOT = Path(__file__).resolve().parents[1]  # the checkout these tests belong to
RULESETS = ROOT / "rulesets"
SMALL = ROOT / "tests" / "golden" / "small.json"
MAX_DECISIONS = 20_000  # the longest bundled game (time_of_crisis, greedy) takes about 2,000
MAX_PROCESSES = 2
GREEDY_RULESETS = ("rome_in_crisis", "time_of_crisis")  # greedy bots at max players: Game.sample/copy
SMALL_SEEDS, SMALL_GREEDY_SEEDS = 5, 2


class Entry(TypedDict):
    ruleset: str
    players: int
    seed: int
    bot: str
    digest: str
    decisions: int


class TooLong(RuntimeError):
    """A game that did not end within MAX_DECISIONS decisions."""


# ================================================================== one game
@functools.cache
def ruleset(name: str) -> Ruleset:
    """The bundled ruleset ``name`` of this checkout (by path: whatever the working folder)."""
    return load_ruleset(RULESETS / name)


def bundled() -> list[str]:
    """The names of the bundled rulesets, sorted."""
    return sorted(p.name for p in RULESETS.iterdir() if (p / "ruleset.yaml").is_file())


def play(name: str, players: int, seed: int, bot: str = "random") -> Game:
    """One complete game with a ``bot`` in every seat, each seeded as ``ludus play`` seeds it."""
    game = Game.new(ruleset(name), players=players, seed=seed)
    bots = seat_bots(game, {p: bot for p in game.players}, seed)  # an umpire seat plays the umpire bot
    decisions = 0
    while not game.over:
        if decisions == MAX_DECISIONS:
            raise TooLong(f"{name} with {players} players, seed {seed}, {bot} bots: "
                          f"not over after {MAX_DECISIONS} decisions")
        player = game.deciders()[0]
        game.apply(bots[player].choose(game, player), player)
        decisions += 1
    return game


def digest(game: Game) -> str:
    """SHA-256 of the game's log as ``ludus`` writes it, a newline, and its state less ``format``,
    with the ruleset's digest left out of both (see the module docstring)."""
    log_text = "".join(dump_entry(_without_digest(e)) + "\n" for e in game.log)
    state = json.loads(game.to_json())
    state.pop("format", None)
    state["ruleset"] = _without_digest(state["ruleset"])
    state_json = json.dumps(state, ensure_ascii=False, separators=(",", ":"))  # as Game.to_json
    return hashlib.sha256((log_text + "\n" + state_json).encode("utf-8")).hexdigest()


def _without_digest(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "digest"}


def decisions_of(game: Game) -> int:
    return sum(1 for e in game.log if e["type"] == "choice")


def play_record(name: str, players: int, seed: int, bot: str = "random") -> Entry:
    game = play(name, players, seed, bot)
    return Entry(ruleset=name, players=players, seed=seed, bot=bot, digest=digest(game),
                 decisions=decisions_of(game))


def play_digest(ruleset_name: str, players: int, seed: int, bot: str = "random") -> str:
    """The digest of one complete game (see the module's docstring)."""
    return digest(play(ruleset_name, players, seed, bot))


# ================================================================== many games
def plan(seeds: int, greedy_seeds: int) -> list[tuple[str, int, int, str]]:
    """(ruleset, players, seed, bot): random bots for seeds 1..seeds at every ruleset and
    player count, then greedy bots for seeds 1..greedy_seeds at GREEDY_RULESETS' max players."""
    games = [(name, n, seed, "random") for name in bundled()
             for n in range(ruleset(name).min_players, ruleset(name).max_players + 1)
             for seed in range(1, seeds + 1)]
    games += [(name, ruleset(name).max_players, seed, "greedy") for name in GREEDY_RULESETS
              for seed in range(1, greedy_seeds + 1)]
    return games


def game_id(ruleset_name: str, players: int, seed: int, bot: str) -> str:
    return f"{ruleset_name}-{players}p-seed{seed}-{bot}"


def _play_one(game: tuple[str, int, int, str]) -> Entry | str:
    """The game's record, or why it could not be played to its end (one line)."""
    try:
        return play_record(*game)
    except Exception as exc:  # a rule that fails, an illegal pick, TooLong, an engine bug: reported per game
        return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"


def play_all(games: Sequence[tuple[str, int, int, str]], processes: int) -> Iterator[tuple[int, Entry | str]]:
    """(index in ``games``, record or error) for every game, slowest rulesets first."""
    # the slow rulesets first, so that the last games of a run are short ones
    order = sorted(range(len(games)), key=lambda i: ("crisis" not in games[i][0], games[i][3] == "random"))
    if processes <= 1:
        for i in order:
            yield i, _play_one(games[i])
        return
    for name in {g[0] for g in games}:
        ruleset(name)  # loaded once, before the fork: the workers inherit it
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        yield from zip(order, pool.imap(_play_one, [games[i] for i in order]), strict=True)


class Progress:
    """One line on stderr: rewritten in place on a terminal, else printed every 5 %."""

    def __init__(self, total: int, what: str) -> None:
        self.total, self.what, self.done, self.start = total, what, 0, time.monotonic()
        self.tty = sys.stderr.isatty()
        self.shown = -1

    def step(self, note: str = "") -> None:
        self.done += 1
        line = f"{self.what}: {self.done}/{self.total} games, {time.monotonic() - self.start:.0f} s{note}"
        if self.tty:
            print("\r" + line, end="\n" if self.done == self.total else "", file=sys.stderr, flush=True)
        elif self.done * 20 // self.total != self.shown:
            self.shown = self.done * 20 // self.total
            print(line, file=sys.stderr, flush=True)


def engine_commit() -> str:
    """The short commit of the importable engine's checkout (+dirty if its code or rulesets changed)."""
    engine = Path(interpreter.__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(engine), "rev-parse", "--short=7", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(engine), "status", "--porcelain", "--", "interpreter", "rulesets"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def load(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def write(path: Path, seeds: int, greedy_seeds: int, processes: int) -> None:
    os.environ["LUDUS_CACHE"] = "off"  # every load cold: nothing read from an older engine's cache
    games = plan(seeds, greedy_seeds)
    results: list[Entry | None] = [None] * len(games)
    progress = Progress(len(games), f"writing {path}")
    start = time.monotonic()
    for i, record in play_all(games, processes):
        if isinstance(record, str):
            raise SystemExit(f"\n{game_id(*games[i])}: {record}")
        results[i] = record
        progress.step()
    data = {"engine_commit": engine_commit(), "seeds": seeds, "greedy_seeds": greedy_seeds,
            "max_decisions": MAX_DECISIONS, "games": results}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("{\n" + ",\n".join(_json_item(k, v) for k, v in data.items()) + "\n}\n")
    print(f"wrote {len(games)} games to {path} in {time.monotonic() - start:.0f} s "
          f"with {processes} process(es), engine {data['engine_commit']} ({interpreter.__file__})")


def _json_item(key: str, value: Any) -> str:
    if key != "games":
        return f"  {json.dumps(key)}: {json.dumps(value)}"
    return '  "games": [\n' + ",\n".join("    " + json.dumps(g) for g in value) + "\n  ]"


def check(path: Path, processes: int) -> int:
    """Replay every game of ``path``; print a summary; 1 if any differs, else 0."""
    data = load(path)
    recorded: list[Entry] = data["games"]
    games = [(e["ruleset"], e["players"], e["seed"], e["bot"]) for e in recorded]
    print(f"checking {len(games)} games of {path} (recorded by engine {data.get('engine_commit')}) "
          f"with the engine at {Path(interpreter.__file__).parent}")
    progress = Progress(len(games), "checking")
    differ: list[str] = []
    failed: list[str] = []
    for i, record in play_all(games, processes):
        want = recorded[i]
        gid = game_id(*games[i])
        if isinstance(record, str):
            failed.append(f"{gid}: {record}")
        elif record["digest"] != want["digest"]:
            differ.append(f"{gid}: {want.get('decisions', '?')} decisions recorded, {record['decisions']} now")
        progress.step(f", {len(differ) + len(failed)} differ" if differ or failed else "")
    same = len(games) - len(differ) - len(failed)
    print(f"{same} of {len(games)} games play as recorded; {len(differ)} differ; {len(failed)} failed")
    for line in sorted(differ) + sorted(failed):
        print("  " + line)
    if differ or failed:
        print(f"the engine now plays these games differently from {data.get('engine_commit')}; if the change "
              f"of behaviour is intended, regenerate with python -m tests.golden --write {path} "
              "and say why in the commit message")
    return 1 if differ or failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", type=Path, metavar="FILE", help="replay the games of FILE and compare")
    what.add_argument("--write", type=Path, metavar="FILE", nargs="?", const=SMALL,
                      help=f"play the games and write FILE (default {SMALL.relative_to(ROOT)})")
    ap.add_argument("--seeds", type=int, help="--write: random bots, seeds 1..N "
                    f"(default: as recorded in FILE, else {SMALL_SEEDS})")
    ap.add_argument("--greedy-seeds", type=int, help="--write: greedy bots, seeds 1..N, at the max players of "
                    f"{' and '.join(GREEDY_RULESETS)} (default: as recorded in FILE, else {SMALL_GREEDY_SEEDS})")
    ap.add_argument("--processes", type=int, default=MAX_PROCESSES, help=f"default {MAX_PROCESSES}")
    args = ap.parse_args(argv)
    processes = max(1, min(args.processes, MAX_PROCESSES))
    if args.check is not None:
        return check(args.check, processes)
    old = load(args.write) if args.write.is_file() else {}
    seeds = args.seeds if args.seeds is not None else old.get("seeds", SMALL_SEEDS)
    greedy = args.greedy_seeds if args.greedy_seeds is not None else old.get("greedy_seeds", SMALL_GREEDY_SEEDS)
    write(args.write, seeds, greedy, processes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
