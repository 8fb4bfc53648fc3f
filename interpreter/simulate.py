"""Batch bot games (`ludus simulate`) and variant comparison (`ludus compare`).

A run plays ``games`` complete games with bots in every seat, on a pool of worker
processes (each loads the ruleset once). Game ``i`` is seeded from ``(seed, i)`` alone,
and results are gathered in game order, so the per-game files are byte-identical
whatever the number of workers. Results are streamed to the files as they arrive; only
the numbers the summary needs are kept in memory.

What a game reports besides its result comes from the ruleset's ``scoring`` section:
``rounds`` (the game's length in rounds) and ``metrics`` (per-player numbers), both read
when the game ends. The engine itself knows nothing of any game.
"""

from __future__ import annotations

import csv
import hashlib
import json
import multiprocessing
import os
import platform
import signal
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .bots import BOT_KINDS, bot_problem, make_bot
from .diagnostics import Diagnostic, Loc, LudusError
from .loader import load_ruleset
from .model import RuleFault, Ruleset
from .runtime import Game, IllegalChoice
from .stats import ALPHA, Outcome, Summary, quantile, two_proportion_z, welch_t, wilson

GAMES_JSONL = "games.jsonl"
GAMES_CSV = "games.csv"
SUMMARY_TXT = "summary.txt"
RUN_JSON = "run.json"
COMPARE_TXT = "compare.txt"

OVER, UNFINISHED, ERROR = "over", "unfinished", "error"

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
              rotate: bool = False, seed: int = 1, max_decisions: int = 100_000) -> Plan:
    """Check the command-line values against the ruleset; every problem is an actionable error."""
    if games < 1:
        raise _arg_error(f"--games must be at least 1, not {games}", "e.g. --games 1000")
    if games > MAX_GAMES:
        raise _arg_error(f"--games must be at most {MAX_GAMES}, not {games}")
    if max_decisions < 1:
        raise _arg_error(f"--max-decisions must be at least 1, not {max_decisions}")
    n = players if players is not None else rs.max_players
    problem = rs.player_count_problem(n)
    if problem:
        raise _arg_error(problem, "choose --players in that range")
    return Plan(spec, games, n, parse_bots(bots, rs.seat_names(n)), rotate, seed, max_decisions)


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of a run seeded ``seed``: 48 bits of SHA-256 of 'seed/index'.

    It depends on nothing else, so game i is the same game in a run of any length on any
    number of workers, and ``ludus play --seed`` replays it.
    """
    digest = hashlib.sha256(f"ludus-simulate/{seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


# ================================================================== one game
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
        game = Game.new(rs, plan.players, seed)
        # Bots pick from the offered choices, and a rule that fails ends the game as an
        # error anyway: the undo copy 'apply' keeps for a rejected choice is not needed.
        game.atomic = False
        del game.log[:]  # the log is not needed: keep memory flat
        bots = {p: make_bot(k, seed, p) for p, k in zip(seats, kinds, strict=True)}
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
                  winners=[], ranking=[], scores=None, metrics=None)
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
        rs = load_ruleset(plan.ruleset)
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
def game_stream(rs: Ruleset, plan: Plan, workers: int) -> Iterator[Iterator[dict[str, Any]]]:
    """The records of every game, in game order, played on ``workers`` processes."""
    workers = max(1, min(workers, plan.games))
    if workers == 1:
        yield (play_game(rs, plan, i) for i in range(plan.games))
        return
    global _PRELOADED
    _PRELOADED = (plan.ruleset, rs)
    try:
        with multiprocessing.Pool(workers, initializer=_init_worker, initargs=(plan,)) as pool:
            chunk = max(1, min(16, plan.games // (workers * 16)))
            yield pool.imap(_work, range(plan.games), chunksize=chunk)
    finally:
        _PRELOADED = None


# ================================================================== what the summary keeps
class Tally:
    """The numbers a summary (and a comparison) needs, added one game record at a time."""

    def __init__(self, seats: Sequence[str], metrics: Sequence[str], has_rounds: bool) -> None:
        self.seats = list(seats)
        self.metric_names = list(metrics)
        self.has_rounds = has_rounds
        self.games = 0
        self.status: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.rounds: list[int] = []  # finished games only, as are all the lists below
        self.decisions: list[int] = []
        self.seat_wins = {s: 0.0 for s in self.seats}
        self.seat_scores: dict[str, list[float]] = {s: [] for s in self.seats}
        self.bot_seat_games: Counter[str] = Counter()
        self.bot_wins: dict[str, float] = {}
        self.bot_scores: dict[str, Summary] = {}
        self.mean_scores: list[float] = []  # per finished game: the players' mean score
        self.metric_seat: dict[str, dict[str, Summary]] = {m: {s: Summary() for s in self.seats}
                                                           for m in self.metric_names}
        self.metric_means: dict[str, list[float]] = {m: [] for m in self.metric_names}
        self.metric_bot: dict[str, dict[str, Summary]] = {m: {} for m in self.metric_names}
        self.first_errors: list[dict[str, Any]] = []

    def add(self, rec: dict[str, Any]) -> None:
        self.games += 1
        self.status[rec["status"]] += 1
        self.reasons[rec["reason"]] += 1
        bots: dict[str, str] = rec["bots"]
        for s in self.seats:
            self.bot_seat_games[bots[s]] += 1
            self.bot_wins.setdefault(bots[s], 0.0)
        winners = rec["winners"]
        for w in winners:
            self.seat_wins[w] += 1.0 / len(winners)
            self.bot_wins[bots[w]] += 1.0 / len(winners)
        if rec["status"] == ERROR and len(self.first_errors) < 3:
            self.first_errors.append(rec)
        if rec["status"] != OVER:
            return
        if rec["rounds"] is not None:
            self.rounds.append(rec["rounds"])
        self.decisions.append(rec["decisions"])
        scores = rec["scores"]
        for s in self.seats:
            self.seat_scores[s].append(scores[s])
            self.bot_scores.setdefault(bots[s], Summary()).add(scores[s])
        self.mean_scores.append(sum(scores.values()) / len(scores))
        for m in self.metric_names:
            values = rec["metrics"][m]
            for s in self.seats:
                self.metric_seat[m][s].add(values[s])
                self.metric_bot[m].setdefault(bots[s], Summary()).add(values[s])
            self.metric_means[m].append(sum(values.values()) / len(values))

    @property
    def finished(self) -> int:
        return self.status[OVER]

    def bot_kinds(self) -> list[str]:
        return sorted(self.bot_seat_games)


# ================================================================== output files
@contextmanager
def result_files(out: Path | None, seats: Sequence[str],
                 metrics: Sequence[str]) -> Iterator[Callable[[dict[str, Any]], None]]:
    """games.jsonl and games.csv, written one game at a time (deterministic: no timings).

    Yields a function that writes one record; without ``out`` it writes nothing.
    """
    if out is None:
        yield lambda rec: None
        return
    out.mkdir(parents=True, exist_ok=True)
    with open(out / GAMES_JSONL, "w", encoding="utf-8", newline="\n") as jsonl, \
            open(out / GAMES_CSV, "w", encoding="utf-8", newline="") as csv_file:
        table = csv.writer(csv_file, lineterminator="\n")
        table.writerow(csv_header(seats, metrics))

        def write(rec: dict[str, Any]) -> None:
            jsonl.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
            table.writerow(csv_row(rec, seats, metrics))

        yield write


def csv_header(seats: Sequence[str], metrics: Sequence[str]) -> list[str]:
    cols = ["game", "seed", "status", "reason", "rounds", "decisions", "winners"]
    for s in seats:
        cols += [f"{s}_bot", f"{s}_score", f"{s}_rank", f"{s}_win"] + [f"{s}_{m}" for m in metrics]
    return cols


def _share(rec: dict[str, Any], seat: str) -> str:
    winners = rec["winners"]
    return f"{1 / len(winners):.6g}" if seat in winners else "0"


def csv_row(rec: dict[str, Any], seats: Sequence[str], metrics: Sequence[str]) -> list[Any]:
    def blank(v: Any) -> Any:
        return "" if v is None else v

    row: list[Any] = [rec["game"], rec["seed"], rec["status"], rec["reason"], blank(rec["rounds"]),
                      rec["decisions"], " ".join(rec["winners"])]
    ranking = rec["ranking"]
    for s in seats:
        row += [rec["bots"][s], blank((rec["scores"] or {}).get(s)),
                ranking.index(s) + 1 if s in ranking else "", _share(rec, s)]
        row += [blank((rec["metrics"] or {}).get(m, {}).get(s)) for m in metrics]
    return row


# ================================================================== summary text
def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _ci(successes: float, n: int) -> str:
    lo, hi = wilson(successes, n)
    return f"{100 * lo:.1f}-{100 * hi:.1f}%"


def _num(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "-"
    return f"{x:.{digits}f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Plain text columns: the first left-aligned, the others right-aligned."""
    allrows = [list(header)] + [[indent + r[0], *r[1:]] for r in rows]
    widths = [max(len(r[i]) for r in allrows) for i in range(len(header))]
    out = []
    for r in allrows:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        out.append("   ".join(cells).rstrip())
    return out


def _spread_row(name: str, values: Sequence[float]) -> list[str]:
    if not values:
        return [name, "-", "-", "-", "-", "-", "-", "-"]
    s = Summary.of(values)
    v = sorted(values)
    return [name, _num(s.mean), _num(s.sd), _num(v[0], 0), _num(quantile(v, 0.1)), _num(quantile(v, 0.5)),
            _num(quantile(v, 0.9)), _num(v[-1], 0)]


def render_summary(rs: Ruleset, plan: Plan, t: Tally) -> str:
    """The summary table of a run (deterministic: the timing is printed separately)."""
    lines: list[str] = []
    bots = "rotated by game: " if plan.rotate else ""
    bots += ", ".join(f"{s}={k}" for s, k in zip(t.seats, plan.bots, strict=True))
    lines.append(f"{rs.title} ({rs.name} {rs.version}): {t.games} games, {plan.players} players, seed {plan.seed}")
    lines.append(f"bots: {bots}")
    unfinished, errors = t.status[UNFINISHED], t.status[ERROR]
    lines.append(f"finished: {t.finished} of {t.games}" + (f" ({unfinished} not over after "
                 f"{plan.max_decisions} decisions)" if unfinished else "") +
                 (f" ({errors} stopped by an error)" if errors else ""))
    lines.append("")
    rows = [[reason, str(n), _pct(n / t.games), _ci(n, t.games)]
            for reason, n in sorted(t.reasons.items(), key=lambda kv: (-kv[1], kv[0]))]
    lines += _table(["How games ended", "games", "rate", "95% CI"], rows)
    lines.append("")
    rows = []
    if t.has_rounds:
        rows.append(_spread_row("rounds", t.rounds))
    rows.append(_spread_row("decisions", t.decisions))
    lines += _table(["Game length", "mean", "sd", "min", "p10", "median", "p90", "max"], rows)
    lines.append("")
    rows = []
    for i, s in enumerate(t.seats):
        sc = Summary.of(t.seat_scores[s])
        who = s if plan.rotate else f"{s} ({plan.bots[i]})"
        rows.append([who, _num(t.seat_wins[s]), _pct(t.seat_wins[s] / t.games), _ci(t.seat_wins[s], t.games),
                     _num(sc.mean if sc.n else None), _num(sc.sd if sc.n else None)])
    lines += _table(["Win rate by seat", "wins", "rate", "95% CI", "mean score", "sd"], rows)
    kinds = t.bot_kinds()
    if len(kinds) > 1:
        lines.append("")
        rows = []
        for k in kinds:
            n, w = t.bot_seat_games[k], t.bot_wins[k]
            sc = t.bot_scores.get(k) or Summary()
            rows.append([k, str(n), _num(w), _pct(w / n), _ci(w, n), _num(sc.mean if sc.n else None)])
        lines += _table(["Win rate by bot", "seat-games", "wins", "rate", "95% CI", "mean score"], rows)
    if t.metric_names:
        lines.append("")
        rows = []
        for m in t.metric_names:
            all_ = Summary.of(t.metric_means[m])
            rows.append([m] + [_num(t.metric_seat[m][s].mean if t.metric_seat[m][s].n else None, 2)
                               for s in t.seats] + [_num(all_.mean if all_.n else None, 2)])
        lines += _table(["Metrics (mean at the end)"] + t.seats + ["all"], rows)
        if len(kinds) > 1:
            lines.append("")
            rows = [[m] + [_num(t.metric_bot[m][k].mean if k in t.metric_bot[m] else None, 2) for k in kinds]
                    for m in t.metric_names]
            lines += _table(["Metrics by bot"] + kinds, rows)
    lines.append("")
    lines += textwrap.wrap("Wins: a shared win counts 1/(number of winners) to each winner. 95% CI: Wilson "
                           "score interval. Length, scores and metrics: finished games only.", 100, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


# ================================================================== comparison
@dataclass
class Row:
    """One line of a comparison: a mean or a rate in each run, the test, and its outcome."""

    name: str
    a: str
    b: str
    diff: str
    test: Outcome | None

    @property
    def flagged(self) -> bool:
        return self.test is not None and self.test.significant()


def _mean_row(name: str, a: Sequence[float], b: Sequence[float]) -> Row:
    sa, sb = Summary.of(a), Summary.of(b)
    test = welch_t(sa.mean, sa.variance, sa.n, sb.mean, sb.variance, sb.n)
    diff = f"{sb.mean - sa.mean:+.2f}" if sa.n and sb.n else "-"
    return Row(name, _mean_of(sa), _mean_of(sb), diff, test)


def _mean_of(s: Summary) -> str:
    return _num(s.mean, 2) if s.n else "-"


def _rate_row(name: str, xa: float, na: int, xb: float, nb: int) -> Row:
    test = two_proportion_z(xa, na, xb, nb)
    ra, rb = xa / na, xb / nb
    return Row(name, _pct(ra), _pct(rb), f"{100 * (rb - ra):+.1f} pp", test)


def compare_rows(a: Tally, b: Tally) -> list[Row]:
    rows: list[Row] = []
    if a.has_rounds and b.has_rounds:
        rows.append(_mean_row("rounds (mean)", a.rounds, b.rounds))
    rows.append(_mean_row("decisions (mean)", a.decisions, b.decisions))
    rows.append(_mean_row("score (mean per player)", a.mean_scores, b.mean_scores))
    reasons = sorted(set(a.reasons) | set(b.reasons), key=lambda r: (-(a.reasons[r] + b.reasons[r]), r))
    for r in reasons:
        rows.append(_rate_row(f"ended: {r}", a.reasons[r], a.games, b.reasons[r], b.games))
    for i, (sa, sb) in enumerate(zip(a.seats, b.seats, strict=True)):
        seat = sa if sa == sb else f"seat {i + 1} ({sa}/{sb})"
        rows.append(_rate_row(f"win rate {seat}", a.seat_wins[sa], a.games, b.seat_wins[sb], b.games))
    kinds = sorted(set(a.bot_kinds()) & set(b.bot_kinds()))
    if len(kinds) > 1:
        for k in kinds:
            rows.append(_rate_row(f"win rate bot {k}", a.bot_wins[k], a.bot_seat_games[k],
                                  b.bot_wins[k], b.bot_seat_games[k]))
    for m in a.metric_names:
        if m in b.metric_names:
            rows.append(_mean_row(f"{m} (mean per player)", a.metric_means[m], b.metric_means[m]))
    return rows


def _p(test: Outcome | None) -> str:
    if test is None:
        return "-"
    return "<0.001" if test.p < 0.001 else f"{test.p:.3f}"


def render_compare(rs_a: Ruleset, rs_b: Ruleset, plan: Plan, a: Tally, b: Tally) -> str:
    lines = [f"A = {rs_a.name} {rs_a.version}, B = {rs_b.name} {rs_b.version}: {plan.games} games each, "
             f"{plan.players} players, the same seeds (seed {plan.seed})",
             "bots: " + ("rotated by game: " if plan.rotate else "") +
             ", ".join(f"{s}={k}" for s, k in zip(a.seats, plan.bots, strict=True)),
             f"finished: A {a.finished}, B {b.finished}", ""]
    rows = compare_rows(a, b)
    table = [[r.name, r.a, r.b, r.diff, _p(r.test), "*" if r.flagged else ""] for r in rows]
    lines += _table(["", "A", "B", "B - A", "p", ""], table)
    n = sum(r.flagged for r in rows)
    lines.append("")
    lines += textwrap.wrap(f"{n} significant difference(s) (*: p < {ALPHA}, two-sided). Means: Welch's "
                           "t-test over per-game values (a game's mean over its players for scores and metrics; "
                           "finished games only). Rates: two-proportion z-test (pooled). Of rows with no real "
                           "difference, about 1 in 20 is flagged by chance.", 100, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


# ================================================================== the commands


def _progress(total: int, enabled: bool, label: str) -> Any:
    """A rich progress bar on stderr (games done, games/s, ETA), or a no-op."""
    if not enabled:
        return _NoProgress()
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f} games/s" if speed else "- games/s")

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                   console=Console(file=sys.stderr), transient=False)
    return _RichProgress(bar, total, label)


class _NoProgress:
    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def advance(self) -> None:
        return None


class _RichProgress:
    def __init__(self, bar: Any, total: int, label: str) -> None:
        self.bar, self.total, self.label = bar, total, label

    def __enter__(self) -> _RichProgress:
        self.bar.__enter__()
        self.task = self.bar.add_task(self.label, total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def advance(self) -> None:
        self.bar.advance(self.task)


@dataclass
class RunResult:
    rs: Ruleset
    plan: Plan
    tally: Tally
    seconds: float
    workers: int


def run(rs: Ruleset, plan: Plan, workers: int, out: Path | None = None, progress: bool = False,
        label: str = "") -> RunResult:
    """Play every game of the plan; stream the records to ``out`` (if given); return the tally."""
    metrics = list(rs.scoring.metrics)
    seats = rs.seat_names(plan.players)
    tally = Tally(seats, metrics, rs.scoring.rounds is not None)
    start = time.perf_counter()
    with result_files(out, seats, metrics) as write, game_stream(rs, plan, workers) as records, \
            _progress(plan.games, progress, label or rs.name) as bar:
        for rec in records:
            tally.add(rec)
            write(rec)
            bar.advance()
    return RunResult(rs, plan, tally, time.perf_counter() - start, max(1, min(workers, plan.games)))


def _timing(r: RunResult) -> str:
    rate = r.plan.games / r.seconds if r.seconds > 0 else float("inf")
    return f"{r.plan.games} games in {r.seconds:.1f} s ({rate:.1f} games/s) on {r.workers} worker(s)"


def _run_json(r: RunResult) -> str:
    from . import __version__
    info = {"ludus": __version__, "python": platform.python_version(),
            "ruleset": {"name": r.rs.name, "version": r.rs.version, "digest": r.rs.digest},
            "plan": asdict(r.plan), "workers": r.workers, "seconds": round(r.seconds, 3),
            "games_per_second": round(r.plan.games / r.seconds, 3) if r.seconds > 0 else None,
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
             progress: bool = False, plots: bool = True, echo: Echo = print, err: Echo = print) -> int:
    """`ludus simulate`: play the games, print the summary, write the files. Returns the exit code."""
    rs = load_ruleset(spec)
    plan = make_plan(rs, spec, games, players, bots, rotate, seed, max_decisions)
    workers = _check_workers(workers)
    out_dir = _out_dir(out)
    result = run(rs, plan, workers, out_dir, progress)
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
            echo: Echo = print, err: Echo = print) -> int:
    """`ludus compare`: the same games (seeds, bots) on two rulesets; differences with their tests."""
    rs_a, rs_b = load_ruleset(base), load_ruleset(variant)
    plan_a = make_plan(rs_a, base, games, players, bots, rotate, seed, max_decisions)
    plan_b = make_plan(rs_b, variant, games, players, bots, rotate, seed, max_decisions)
    workers = _check_workers(workers)
    out_dir = _out_dir(out)
    dirs = (out_dir / "base", out_dir / "variant") if out_dir is not None else (None, None)
    ra = run(rs_a, plan_a, workers, dirs[0], progress, f"A {rs_a.name}")
    rb = run(rs_b, plan_b, workers, dirs[1], progress, f"B {rs_b.name}")
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


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a games.jsonl file, one by one (to rebuild a summary or for your own analysis)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)

