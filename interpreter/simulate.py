"""Batch bot games (`ludus simulate`) and variant comparison (`ludus compare`).

A run plays ``games`` complete games with bots in every seat, on a pool of worker
processes (each loads the ruleset once). Game ``i`` is seeded from ``(seed, i)`` alone,
and results are gathered in game order, so the per-game files are byte-identical
whatever the number of workers. Results are streamed to the files as they arrive; only
the numbers the summary needs are kept in memory.

What a game reports besides its result comes from the ruleset's ``scoring`` section:
``rounds`` (the game's length in rounds) and ``metrics`` (per-player numbers), both read
when the game ends. The engine itself knows nothing of any game.

What the summary keeps of the records and how it and a comparison are printed is in
:mod:`interpreter.simsummary`.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import platform
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import simresume, usage
from .bots import BOT_KINDS, bot_problem, seat_bots
from .diagnostics import Diagnostic, Loc, LudusError
from .loader import load_ruleset
from .model import RuleFault, Ruleset
from .runtime import Game, IllegalChoice
from .simfiles import GAMES_CSV as GAMES_CSV
from .simfiles import GAMES_JSONL as GAMES_JSONL
from .simfiles import progress_bar, result_files
from .simfiles import read_records as read_records
from .simsummary import ERROR, OVER, UNFINISHED, Tally, render_compare, render_summary
from .simsummary import Row as Row
from .simsummary import compare_rows as compare_rows
from .start import adopt, begin_at, position

if TYPE_CHECKING:
    from .cluster import RaySession

SUMMARY_TXT = "summary.txt"
RUN_JSON = "run.json"
COMPARE_TXT = "compare.txt"

MAX_GAMES = 10_000_000  # games of one run: days of work, and a bound a typo cannot pass
MAX_WORKERS = 256  # worker processes: each holds a loaded ruleset

Echo = Callable[[str], None]


def _arg_error(message: str, hint: str = "") -> LudusError:
    return LudusError([Diagnostic(Loc("ludus"), message, hint)])


# ================================================================== the plan of a run
@dataclass(frozen=True)
class Plan:
    """What to play: everything that determines the per-game results (not the worker count)."""

    ruleset: str  # as given on the command line (a name or a path)
    games: int
    players: int
    bots: tuple[str, ...]  # one bot kind per seat, in seat order
    rotate: bool = False
    seed: int = 1
    max_decisions: int = 100_000
    setup: str | None = None  # the ruleset's named set-up every game starts from
    start: str | None = None  # or the position (a state, as JSON text) every game starts from
    origin: str = ""  # where the games start, for the summary: '', 'set-up NAME', 'from FILE'

    def seat_bots(self, index: int) -> tuple[str, ...]:
        """The bot of each seat in game ``index``: with ``rotate``, seat j plays bots[(j + index) % n]."""
        if not self.rotate:
            return self.bots
        k = index % len(self.bots)
        return self.bots[k:] + self.bots[:k]


def parse_bots(text: str | None, seats: Sequence[str]) -> tuple[str, ...]:
    """``random,greedy,...``: one kind per seat, or a single kind for every seat."""
    kinds = [k.strip() for k in (text or "random").split(",")]
    for k in kinds:
        problem = bot_problem(k)
        if problem:
            raise _arg_error(f"{problem} in --bots '{text}'",
                             f"the bots are {', '.join(BOT_KINDS)}; options go after a colon, "
                             "e.g. mcts:playouts=8:depth=24")
    if len(kinds) == 1:
        return tuple(kinds * len(seats))
    if len(kinds) != len(seats):
        raise _arg_error(f"--bots names {len(kinds)} bots for {len(seats)} players",
                         f"give one kind per seat ({', '.join(seats)}) or a single kind for all")
    return tuple(kinds)


def make_plan(rs: Ruleset, spec: str, games: int, players: int | None, bots: str | None,
              rotate: bool = False, seed: int = 1, max_decisions: int = 100_000,
              start: dict[str, Any] | None = None, origin: str = "") -> Plan:
    """Check the command-line values against the ruleset; every problem is an actionable error.

    ``start``: the position every game starts from (``--from``); it fixes the players.
    """
    if games < 1:
        raise _arg_error(f"--games must be at least 1, not {games}", "e.g. --games 1000")
    if games > MAX_GAMES:
        raise _arg_error(f"--games must be at most {MAX_GAMES}, not {games}")
    if max_decisions < 1:
        raise _arg_error(f"--max-decisions must be at least 1, not {max_decisions}")
    if start is not None and players is not None and players != len(start["players"]):
        raise _arg_error(f"--players {players}, but the --from position has {len(start['players'])} players",
                         "leave out --players")
    n = len(start["players"]) if start is not None else players if players is not None else rs.max_players
    problem = rs.player_count_problem(n)
    if problem:
        raise _arg_error(problem, "choose --players in that range")
    seats = list(start["players"]) if start is not None else rs.seat_names(n)
    return Plan(spec, games, n, parse_bots(bots, seats), rotate, seed, max_decisions, rs.setup,
                json.dumps(start, ensure_ascii=False) if start is not None else None, origin)


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of a run seeded ``seed``: 48 bits of SHA-256 of 'seed/index'.

    It depends on nothing else, so game i is the same game in a run of any length on any
    number of workers, and ``ludus play --seed`` replays it.
    """
    digest = hashlib.sha256(f"ludus-simulate/{seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


# ================================================================== one game
def start_game(rs: Ruleset, plan: Plan, index: int) -> Game:
    """Game ``index`` of the plan before its first decision: at the ruleset's start (or its
    set-up, with which ``rs`` was loaded), or at the plan's ``--from`` position with its own dice."""
    seed = game_seed(plan.seed, index)
    if plan.start:
        return begin_at(rs, json.loads(plan.start), seed, "")
    return Game.new(rs, plan.players, seed)


def play_game(rs: Ruleset, plan: Plan, index: int) -> dict[str, Any]:
    """Play game ``index`` of the plan to its end; return its record (plain JSON data)."""
    seed = game_seed(plan.seed, index)
    seats = rs.seat_names(plan.players)
    kinds = plan.seat_bots(index)
    record: dict[str, Any] = {"game": index, "seed": seed, "bots": dict(zip(seats, kinds, strict=True))}
    decisions = 0
    status, reason = ERROR, ""
    game: Game | None = None
    try:
        game = start_game(rs, plan, index)
        # Bots pick from the offered choices, and a rule that fails ends the game as an
        # error anyway: the undo copy 'apply' keeps for a rejected choice is not needed.
        game.atomic = False
        game.usage = Counter()  # which rules the game used (interpreter/usage.py)
        del game.log[:]  # the log is not needed: keep memory flat
        # The umpire seat, if any, plays the umpire bot; it is not in the record's bots: no score, no wins.
        bots = seat_bots(game, dict(zip(seats, kinds, strict=True)), seed)
        while not game.over and decisions < plan.max_decisions:
            player = game.deciders()[0]
            game.apply(bots[player].choose(game, player), player)
            del game.log[:]
            decisions += 1
        if game.over:
            status, reason = OVER, str((game.result or {}).get("reason", ""))
        else:
            status, reason = UNFINISHED, f"not over after {plan.max_decisions} decisions"
    except (LudusError, IllegalChoice, RuleFault) as exc:
        reason = _one_line(exc)
    except Exception as exc:  # a bug (in a bot or the engine): recorded, reported at the end, not fatal to the run
        reason = f"internal error: {type(exc).__name__}: {exc}"
    record.update(status=status, reason=reason, rounds=None, decisions=decisions,
                  winners=[], ranking=[], scores=None, metrics=None,
                  fired=usage.record(game.usage if game is not None else None))
    if game is not None and status != ERROR:
        try:
            _read_end(rs, game, record)
        except (LudusError, RuleFault) as exc:
            record.update(status=ERROR, reason=_one_line(exc), rounds=None, winners=[], ranking=[], scores=None,
                          metrics=None)
    return record


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, IllegalChoice):
        return f"error: a bot made an illegal choice: {exc.reason}"
    if isinstance(exc, RuleFault):
        return f"error: {exc.message}"
    return (str(exc).splitlines() or ["error"])[0]  # 'file:line:col: error: ...'


def _read_end(rs: Ruleset, game: Game, record: dict[str, Any]) -> None:
    sc = rs.scoring
    if sc.rounds is not None:
        record["rounds"] = sc.rounds(game, {})
    result = game.result
    if result is not None:
        record["winners"] = list(result["winners"])
        record["ranking"] = list(result["ranking"])
        record["scores"] = {p: result["scores"][p] for p in game.players}
    if sc.metrics:
        record["metrics"] = {name: {p: fn(game, {"p": p}) for p in game.players}
                             for name, fn in sc.metrics.items()}


# ================================================================== running many games
_PRELOADED: tuple[str, Ruleset] | None = None  # inherited by forked workers
_WORKER: tuple[Plan, Ruleset] | None = None


def _init_worker(plan: Plan) -> None:
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: no traceback per worker
    if _PRELOADED is not None and _PRELOADED[0] == plan.ruleset:
        rs = _PRELOADED[1]
    else:  # a spawned worker: load it once
        rs = load_ruleset(plan.ruleset, setup=plan.setup)
    _WORKER = (plan, rs)


def _work(index: int) -> dict[str, Any]:
    assert _WORKER is not None
    plan, rs = _WORKER
    return play_game(rs, plan, index)


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextmanager
def game_stream(rs: Ruleset, plan: Plan, workers: int, first: int = 0) -> Iterator[Iterator[dict[str, Any]]]:
    """The records of games ``first`` … ``plan.games - 1``, in game order, played on ``workers`` processes."""
    todo = plan.games - first
    workers = max(1, min(workers, todo))
    if workers == 1:
        yield (play_game(rs, plan, i) for i in range(first, plan.games))
        return
    global _PRELOADED
    _PRELOADED = (plan.ruleset, rs)
    try:
        with multiprocessing.Pool(workers, initializer=_init_worker, initargs=(plan,)) as pool:
            chunk = max(1, min(16, todo // (workers * 16)))
            yield pool.imap(_work, range(first, plan.games), chunksize=chunk)
    finally:
        _PRELOADED = None


@contextmanager
def _local_stream(rs: Ruleset, plan: Plan, workers: int,
                  first: int) -> Iterator[Iterator[tuple[dict[str, Any], str | None]]]:
    """:func:`game_stream` as (record, line) pairs, the form of a Ray stream (no line made yet)."""
    with game_stream(rs, plan, workers, first) as records:
        yield ((rec, None) for rec in records)


# ================================================================== the commands


@dataclass
class RunResult:
    rs: Ruleset
    plan: Plan
    tally: Tally
    seconds: float
    workers: int  # worker processes, or the cluster's CPUs
    resumed: int = 0  # games kept from an interrupted run (--resume), not played again
    where: str = ""  # the Ray cluster that played the games ('' for the local pool)
    reruns: int = 0  # games played again because their Ray worker died
    failures: tuple[str, ...] = ()  # the lost batches, one line each

    @property
    def played(self) -> int:
        return self.plan.games - self.resumed


def run(rs: Ruleset, plan: Plan, workers: int, out: Path | None = None, progress: bool = False,
        label: str = "", session: RaySession | None = None, resume: bool = False) -> RunResult:
    """Play every game of the plan; stream the records to ``out`` (if given); return the tally.

    ``session``: play them on Ray (interpreter.cluster) instead of the local pool.
    ``resume``: ``out`` holds an interrupted run of this plan: keep its games, play the rest.
    """
    metrics = list(rs.scoring.metrics)
    seats = rs.seat_names(plan.players)
    tally = Tally(seats, metrics, rs.scoring.rounds is not None)
    kept = simresume.Kept(0, 0)
    if out is not None and resume:
        simresume.check(out, rs, plan)
        kept = simresume.kept(out / GAMES_JSONL, plan, lambda i: game_seed(plan.seed, i))
    if out is not None:  # written first, so that an interrupted run can be resumed
        out.mkdir(parents=True, exist_ok=True)
        (out / RUN_JSON).write_text(simresume.started_json(rs, plan), encoding="utf-8")
    report = None
    start = time.perf_counter()
    with result_files(out, seats, metrics, kept.size) as files, \
            progress_bar(plan.games, progress, label or rs.name) as bar:
        if out is not None:
            for rec in simresume.kept_records(out / GAMES_JSONL, kept.count):
                tally.add(rec)
                files.csv_only(rec)
            bar.advance(kept.count)
        if session is not None:
            from .cluster import StreamReport, ray_stream
            report = StreamReport()
            stream = ray_stream(session, rs, plan, kept.count, report)
        else:
            stream = _local_stream(rs, plan, workers, kept.count)
        with stream as records:
            for rec, line in records:
                tally.add(rec)
                files.write(rec, line)
                bar.advance()
    seconds = time.perf_counter() - start
    if report is not None:
        return RunResult(rs, plan, tally, seconds, report.cpus, kept.count, report.describe(), report.reruns,
                         tuple(report.failures))
    return RunResult(rs, plan, tally, seconds, max(1, min(workers, plan.games - kept.count)), kept.count)


def _timing(r: RunResult) -> str:
    rate = r.played / r.seconds if r.seconds > 0 else float("inf")
    where = r.where or f"{r.workers} worker(s)"
    text = f"{r.played} games in {r.seconds:.1f} s ({rate:.1f} games/s) on {where}"
    if r.resumed:
        text += f"; {r.resumed} game(s) kept from the interrupted run"
    if r.reruns:
        text += f"; {r.reruns} game(s) rerun after a Ray worker was lost ({len(r.failures)} task(s))"
    return text


def _run_json(r: RunResult) -> str:
    from . import __version__
    info = {"complete": True, "ludus": __version__, "python": platform.python_version(),
            "ruleset": {"name": r.rs.name, "version": r.rs.version, "digest": r.rs.digest},
            "plan": asdict(r.plan), "workers": r.workers, "cluster": r.where or None,
            "seconds": round(r.seconds, 3), "played": r.played, "resumed": r.resumed,
            "reruns": r.reruns, "lost_tasks": list(r.failures),
            "games_per_second": round(r.played / r.seconds, 3) if r.seconds > 0 else None,
            "finished": r.tally.finished, "unfinished": r.tally.status[UNFINISHED],
            "errors": r.tally.status[ERROR],
            "files": [GAMES_JSONL, GAMES_CSV, SUMMARY_TXT]}
    return json.dumps(info, indent=1, ensure_ascii=False) + "\n"


def _error_report(r: RunResult, echo: Echo) -> int:
    t = r.tally
    if not t.status[ERROR]:
        return 0
    echo(f"ludus: error: {t.status[ERROR]} game(s) of {r.rs.name} stopped with an error, e.g.:")
    for rec in t.first_errors:
        seats = " ".join(f"--seat {s}={k}" for s, k in rec["bots"].items())
        echo(f"  game {rec['game']}: {rec['reason']}")
        echo(f"    replay it: ludus play {r.plan.ruleset} --players {r.plan.players} --seed {rec['seed']} {seats}")
    return 1


def _write_plots(r: RunResult, out: Path, echo: Echo) -> None:
    from .plots import write_run_plots
    for path in write_run_plots(r.tally, out, f"{r.rs.title}: {r.tally.games} games"):
        echo(f"wrote {path}")


def simulate(spec: str, games: int, players: int | None = None, bots: str | None = None, rotate: bool = False,
             workers: int | None = None, seed: int = 1, out: str | None = None, max_decisions: int = 100_000,
             progress: bool = False, plots: bool = True, echo: Echo = print, err: Echo = print,
             from_file: str | None = None, setup: str | None = None, cluster: str | None = None,
             resume: str | None = None) -> int:
    """`ludus simulate`: play the games, print the summary, write the files. Returns the exit code.

    ``from_file``/``setup``: every game starts from that position or named set-up (see start.py).
    ``cluster``: play on Ray (``ray``, ``ray:auto``, ``ray://HOST:PORT``; see interpreter.cluster).
    ``resume``: the --out folder of an interrupted run of the same command: play only its missing games.
    """
    rs = load_ruleset(spec, setup=setup)
    start = position(rs, from_file) if from_file else None
    plan = make_plan(rs, spec, games, players, bots, rotate, seed, max_decisions, start, _origin(rs, from_file))
    out_dir = _out_dir(_resume_out(out, resume))
    with _session(cluster, workers) as session:
        workers = _check_workers(workers)
        result = run(rs, plan, workers, out_dir, progress, session=session, resume=resume is not None)
    _report_reruns(result, err)
    summary = render_summary(rs, plan, result.tally)
    echo(summary.rstrip("\n"))
    echo("")
    echo(_timing(result))
    if out_dir is not None:
        (out_dir / SUMMARY_TXT).write_text(summary, encoding="utf-8")
        (out_dir / RUN_JSON).write_text(_run_json(result), encoding="utf-8")
        echo(f"wrote {out_dir / GAMES_JSONL}, {out_dir / GAMES_CSV}, {out_dir / SUMMARY_TXT}, {out_dir / RUN_JSON}")
        if plots:
            _write_plots(result, out_dir, echo)
    return _error_report(result, err)


def compare(base: str, variant: str, games: int, players: int | None = None, bots: str | None = None,
            rotate: bool = False, workers: int | None = None, seed: int = 1, out: str | None = None,
            max_decisions: int = 100_000, progress: bool = False, plots: bool = True,
            echo: Echo = print, err: Echo = print, from_file: str | None = None, setup: str | None = None,
            cluster: str | None = None, resume: str | None = None) -> int:
    """`ludus compare`: the same games (seeds, bots) on two rulesets; differences with their tests.

    With ``from_file`` both start from the position it gives with the base ruleset. ``cluster``
    and ``resume`` as for :func:`simulate` (``resume``: the folder holding base/ and variant/).
    """
    rs_a, rs_b = load_ruleset(base, setup=setup), load_ruleset(variant, setup=setup)
    start_a = position(rs_a, from_file) if from_file else None
    start_b = adopt(rs_b, start_a, from_file or "") if start_a is not None else None
    plan_a = make_plan(rs_a, base, games, players, bots, rotate, seed, max_decisions, start_a, _origin(rs_a, from_file))
    plan_b = make_plan(rs_b, variant, games, players, bots, rotate, seed, max_decisions, start_b,
                       _origin(rs_b, from_file))
    out_dir = _out_dir(_resume_out(out, resume))
    dirs = (out_dir / "base", out_dir / "variant") if out_dir is not None else (None, None)
    with _session(cluster, workers) as session:
        workers = _check_workers(workers)
        ra = run(rs_a, plan_a, workers, dirs[0], progress, f"A {rs_a.name}", session, resume is not None)
        rb = run(rs_b, plan_b, workers, dirs[1], progress, f"B {rs_b.name}", session, resume is not None)
    _report_reruns(ra, err)
    _report_reruns(rb, err)
    text = render_compare(rs_a, rs_b, plan_a, ra.tally, rb.tally)
    echo(text.rstrip("\n"))
    echo("")
    echo(f"A: {_timing(ra)}; B: {_timing(rb)}")
    if out_dir is not None and dirs[0] is not None and dirs[1] is not None:
        (out_dir / COMPARE_TXT).write_text(text, encoding="utf-8")
        for r, d in ((ra, dirs[0]), (rb, dirs[1])):
            (d / SUMMARY_TXT).write_text(render_summary(r.rs, r.plan, r.tally), encoding="utf-8")
            (d / RUN_JSON).write_text(_run_json(r), encoding="utf-8")
        echo(f"wrote {out_dir / COMPARE_TXT} and each run's files in {dirs[0]} and {dirs[1]}")
        if plots:
            from .plots import write_compare_plots
            for path in write_compare_plots(ra.tally, rb.tally, out_dir, rs_a.name, rs_b.name):
                echo(f"wrote {path}")
    return max(_error_report(ra, err), _error_report(rb, err))


@contextmanager
def _session(cluster: str | None, workers: int | None) -> Iterator[RaySession | None]:
    """A Ray session for ``--cluster`` (its errors are one line), or None for the local pool."""
    if cluster is None:
        yield None
        return
    from .cluster import RaySession, parse_cluster
    spec = parse_cluster(cluster)
    with RaySession(spec, _check_workers(workers) if workers is not None else None) as session:
        yield session


def _resume_out(out: str | None, resume: str | None) -> str | None:
    """``--resume DIR`` writes to DIR: ``--out`` may be left out, or name the same folder."""
    if resume is None:
        return out
    if out is not None and Path(out).resolve() != Path(resume).resolve():
        raise _arg_error(f"--resume {resume} and --out {out} name two folders",
                         "leave out --out: a resumed run writes to its own folder")
    if not Path(resume).is_dir():
        raise _arg_error(f"--resume {resume}: no such folder", "give the --out folder of the interrupted run")
    return resume


def _report_reruns(r: RunResult, err: Echo) -> None:
    if r.reruns:
        err(f"ludus: note: {r.reruns} game(s) of {r.rs.name} were played again after a Ray worker was lost:")
        for line in r.failures:
            err(f"  {line}")


def _origin(rs: Ruleset, from_file: str | None) -> str:
    parts = ([f"set-up {rs.setup} ({rs.setups.get(rs.setup, '')})"] if rs.setup else []) + \
        ([f"from {from_file}"] if from_file else [])
    return ", ".join(parts)


def _check_workers(workers: int | None) -> int:
    if workers is None:
        return default_workers()
    if workers < 1:
        raise _arg_error(f"--workers must be at least 1, not {workers}")
    if workers > MAX_WORKERS:
        raise _arg_error(f"--workers must be at most {MAX_WORKERS}, not {workers}")
    return workers


def _out_dir(out: str | None) -> Path | None:
    if out is None:
        return None
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise _arg_error(f"--out {out}: a file of that name exists", "give a folder (it is created if missing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _arg_error(f"--out {out}: cannot create the folder ({exc.strerror})") from None
    return path
