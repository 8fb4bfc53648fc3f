"""``ludus odds``: a scenario's position played many times with fresh dice — the battle calculator.

A scenario with an ``odds:`` section names its **outcomes** (rules-language expressions read in
the final position: ``red.score >= 2``, ``count(deck)``). Each run sets up the
scenario's position exactly (its seed, state patch and start), then seeds the dice afresh from
``--seed`` and the run's number, makes the steps' choices (their forced dice left out), and, when
``odds: until:`` is given, lets bots make the decisions after them until it holds. A run whose
next step is not offered — the dice went another way — is counted as *diverged*, not scored.
Same scenario, runs and seed: the same report, byte for byte.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bots import bot_problem, make_bot, seat_kind
from .diagnostics import Diagnostic, LudusError
from .dsl import types as T
from .dsl.compiler import Compiler
from .model import ExprFn, RuleFault, Ruleset
from .runtime import Game, IllegalChoice
from .scenario import apply_step, load_scenario, scenario_game, setup_names
from .simulate import game_seed
from .stats import Z95, wilson
from .yamlsource import SourceMap

MAX_RUNS = 1_000_000
MAX_UNTIL_DECISIONS = 10_000  # decisions the bots may make in one run before 'until' holds
SHOWN_VALUES = 12  # values of a numeric outcome listed in its distribution


@dataclass
class Outcome:
    """One named outcome: every run's value."""

    name: str
    text: str
    values: list[Any] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """``rate`` (all true/false), ``number`` (all whole numbers) or ``value``."""
        if self.values and all(isinstance(v, bool) for v in self.values):
            return "rate"
        if self.values and all(isinstance(v, int) and not isinstance(v, bool) for v in self.values):
            return "number"
        return "value"

    def summary(self) -> dict[str, Any]:
        """The outcome's figures as plain data (what ``--json`` prints)."""
        n = len(self.values)
        out: dict[str, Any] = {"name": self.name, "expression": self.text, "runs": n, "kind": self.kind}
        if self.kind == "rate":
            hits = sum(1 for v in self.values if v)
            lo, hi = wilson(hits, n)
            out.update(rate=hits / n if n else None, low=lo, high=hi)
        elif self.kind == "number":
            mean = sum(self.values) / n
            sd = math.sqrt(sum((v - mean) ** 2 for v in self.values) / (n - 1)) if n > 1 else 0.0
            half = Z95 * sd / math.sqrt(n) if n else 0.0
            out.update(mean=mean, low=mean - half, high=mean + half, min=min(self.values), max=max(self.values))
        counts = Counter(json.dumps(v, sort_keys=True) for v in self.values)
        out["distribution"] = [{"value": json.loads(k), "share": c / n}
                               for k, c in sorted(counts.items(), key=lambda kc: (-kc[1], kc[0]))]
        return out


@dataclass
class OddsReport:
    """What ``ludus odds`` found."""

    scenario: str
    title: str
    runs: int
    seed: int
    outcomes: list[Outcome]
    diverged: Counter = field(default_factory=Counter)  # step number -> runs that could not make it

    @property
    def scored(self) -> int:
        return self.runs - sum(self.diverged.values())

    def to_json(self) -> str:
        return json.dumps({"scenario": self.scenario, "title": self.title, "runs": self.runs, "seed": self.seed,
                           "scored": self.scored, "diverged": {str(k): v for k, v in sorted(self.diverged.items())},
                           "outcomes": [o.summary() for o in self.outcomes]}, indent=1, ensure_ascii=False)


class _Odds:
    """A scenario's odds section, compiled once for every run."""

    def __init__(self, data: dict[str, Any], smap: SourceMap, rs: Ruleset, probe: Game) -> None:
        spec = data.get("odds")
        if not isinstance(spec, dict) or not spec.get("outcomes"):
            raise LudusError([Diagnostic(smap.loc(("odds",) if "odds" in data else ()),
                                         "this scenario declares no outcomes to count",
                                         "add odds: outcomes: NAME: EXPRESSION (see docs/odds.md)")])
        names = setup_names(probe)
        diags: list[Diagnostic] = []
        compiler = Compiler(rs, diags)
        self.outcomes: list[tuple[str, str, ExprFn | None]] = []
        for name, text in spec["outcomes"].items():
            fn, _ = compiler.expression(str(text), smap.text(("odds", "outcomes", name)), dict(names), None,
                                        f"the outcome '{name}'")
            self.outcomes.append((str(name), str(text), fn))
        self.until: ExprFn | None = None
        if "until" in spec:
            self.until, _ = compiler.expression(str(spec["until"]), smap.text(("odds", "until")), dict(names), T.BOOL,
                                                "the 'until' condition")
        self.bot = str(spec.get("bots", "random"))
        problem = bot_problem(self.bot)
        if problem:
            diags.append(Diagnostic(smap.loc(("odds", "bots")), problem))
        if diags:
            raise LudusError(diags)
        self.names = {n: n for n in names}

    def play_on(self, game: Game, seed: int, smap: SourceMap) -> None:
        """After the steps: the bots decide until 'until' holds (or the game ends)."""
        if self.until is None:
            return
        bots: dict[str, Any] = {}
        for _ in range(MAX_UNTIL_DECISIONS):
            if game.over or self.until(game, dict(self.names)):
                return
            p = game.deciders()[0]
            bot = bots.get(p) or bots.setdefault(p, make_bot(seat_kind(game, p, self.bot), seed, p))
            game.apply(bot.choose(game, p), p)
        raise LudusError([Diagnostic(smap.loc(("odds", "until")), f"'until' did not hold within "
                                     f"{MAX_UNTIL_DECISIONS:,} decisions of the bots",
                                     "check the condition: it should hold once the event counted is over")])


def run_odds(path: str | Path, runs: int, seed: int = 1, progress: Any = None) -> OddsReport:
    """Play the scenario at ``path`` ``runs`` times with fresh dice; raises :class:`LudusError`."""
    data, smap, rs = load_scenario(path)
    odds = _Odds(data, smap, rs, scenario_game(data, smap, rs, rng_seed=game_seed(seed, 0)))
    report = OddsReport(str(path), str(data.get("title", "")), runs, seed,
                        [Outcome(name, text) for name, text, _fn in odds.outcomes])
    for r in range(runs):
        run_seed = game_seed(seed, r)
        game = scenario_game(data, smap, rs, rng_seed=run_seed)
        diverged = _steps(game, data, smap)
        if diverged:
            report.diverged[diverged] += 1
        else:
            odds.play_on(game, run_seed, smap)
            for outcome, (name, _text, fn) in zip(report.outcomes, odds.outcomes, strict=True):
                assert fn is not None
                try:
                    outcome.values.append(fn(game, dict(odds.names)))
                except RuleFault as fault:
                    raise LudusError([Diagnostic(smap.loc(("odds", "outcomes", name)),
                                                 f"the outcome '{name}' failed in run {r + 1}: {fault.message}")]) from None
        if progress is not None:
            progress.advance()
    return report


def _steps(game: Game, data: dict[str, Any], smap: SourceMap) -> int:
    """Make the scenario's choices; the number of the first step not offered (0 if all were)."""
    for i, step in enumerate(data.get("steps") or []):
        try:
            apply_step(game, i, step, smap, forced=False)
        except IllegalChoice:
            return i + 1
    return 0


def render(report: OddsReport) -> str:
    """The report as text: one block per outcome."""
    lines = [f"{report.title or report.scenario}", f"{report.runs:,} runs, seed {report.seed}"
             + (f"; {report.scored:,} scored" if report.diverged else "")]
    for step, n in sorted(report.diverged.items()):
        lines.append(f"  {n:,} run(s) stopped at step {step}: its choice was not offered (the dice went otherwise)")
    for o in report.outcomes:
        s = o.summary()
        lines.append("")
        if not s["runs"]:
            lines.append(f"{o.name}: no run scored")
            continue
        if s["kind"] == "rate":
            lines.append(f"{o.name}: {100 * s['rate']:.1f}%  (95% interval {100 * s['low']:.1f}–{100 * s['high']:.1f}%)"
                         f"  [{o.text}]")
            continue
        if s["kind"] == "number":
            lines.append(f"{o.name}: mean {s['mean']:.2f}  (95% interval {s['low']:.2f}–{s['high']:.2f}; "
                         f"min {s['min']}, max {s['max']})  [{o.text}]")
        else:
            lines.append(f"{o.name}:  [{o.text}]")
        dist = s["distribution"] if s["kind"] != "number" else sorted(s["distribution"], key=lambda d: d["value"])
        for d in dist[:SHOWN_VALUES]:
            value = json.dumps(d["value"], ensure_ascii=False)
            lines.append(f"  {value:>12}  {100 * d['share']:5.1f}%  {'#' * round(40 * d['share'])}")
        if len(dist) > SHOWN_VALUES:
            lines.append(f"  … {len(dist) - SHOWN_VALUES} more values")
    return "\n".join(lines)


def write_png(report: OddsReport, path: Path) -> None:
    """A bar chart of each outcome (rates with their intervals; distributions of the others)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    outcomes = [o for o in report.outcomes if o.values]
    fig = Figure(figsize=(7, 2.2 * max(1, len(outcomes))), dpi=100, layout="constrained")
    axes = fig.subplots(max(1, len(outcomes)), 1, squeeze=False)[:, 0]
    for ax, o in zip(axes, outcomes, strict=False):
        s = o.summary()
        if s["kind"] == "rate":
            ax.barh([o.name], [s["rate"]], xerr=[[s["rate"] - s["low"]], [s["high"] - s["rate"]]], color="#4477aa")
            ax.set_xlim(0, 1)
            ax.set_xlabel("share of runs (95% interval)")
        else:
            dist = s["distribution"][:SHOWN_VALUES]
            ax.bar([json.dumps(d["value"]) for d in dist], [d["share"] for d in dist], color="#4477aa")
            ax.set_ylabel("share of runs")
        ax.set_title(f"{o.name}: {o.text}", fontsize=9)
    fig.suptitle(f"{report.title or report.scenario} ({report.scored:,} runs)", fontsize=10)
    fig.savefig(path)
