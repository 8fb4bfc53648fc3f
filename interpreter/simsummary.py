"""What the summary of a run keeps and prints (`ludus simulate`), and the comparison of two runs
(`ludus compare`).

A :class:`Tally` adds the game records of a run one at a time and keeps only the numbers the
summary needs; :func:`render_summary` and :func:`render_compare` print them as plain text
tables (see docs/simulate.md). Running the games is :mod:`interpreter.simulate`'s work.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .model import Ruleset
from .stats import ALPHA, Outcome, Summary, quantile, two_proportion_z, welch_t, wilson
from .usage import Usage, render_warnings
from .usage import rows as usage_rows

if TYPE_CHECKING:
    from .simulate import Plan

OVER, UNFINISHED, ERROR = "over", "unfinished", "error"  # the status of a game's record



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
        self.usage = Usage()

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
        self.usage.add(rec.get("fired"))
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
    if plan.origin:
        lines.append(f"start: {plan.origin}")
    if rs.umpire:
        bots += "; the umpire seat: the umpire bot (no score, not in the win rates)"
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
    used = usage_rows(t.usage)
    if used:
        lines.append("")
        lines += _table(["Rules used (actions; procedures components carry)", "games", "times per game"], used)
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
    lines += render_warnings(rs_b, b.usage)
    return "\n".join(lines) + "\n"
