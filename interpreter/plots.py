"""PNG plots of a simulation run and of a comparison (matplotlib, Agg backend, no pyplot state).

Imported only when plots are written, so the rest of ``ludus`` never loads matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .simsummary import Tally
from .stats import wilson

WIN_RATE_PNG = "win_rate_by_seat.png"
LENGTH_PNG = "game_length.png"
SCORES_PNG = "scores.png"
COMPARE_LENGTH_PNG = "compare_length.png"
COMPARE_WIN_RATE_PNG = "compare_win_rate.png"

_A_COLOUR, _B_COLOUR = "#4477aa", "#ee6677"


def _figure(width: float, height: float, columns: int = 1) -> tuple[Any, list[Any]]:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    axes = fig.subplots(1, columns, squeeze=False)[0]
    return fig, list(axes)


def _save(fig: Any, path: Path) -> Path:
    fig.savefig(path, format="png", metadata={"Software": None})
    return path


def _rate_bars(ax: Any, labels: Sequence[str], wins: Sequence[float], totals: Sequence[int],
               colour: str = _A_COLOUR, offset: float = 0.0, width: float = 0.6, name: str | None = None) -> None:
    rates = [w / n if n else 0.0 for w, n in zip(wins, totals, strict=True)]
    cis = [wilson(w, n) for w, n in zip(wins, totals, strict=True)]
    lower = [100 * (r - lo) for r, (lo, _) in zip(rates, cis, strict=True)]
    upper = [100 * (hi - r) for r, (_, hi) in zip(rates, cis, strict=True)]
    xs = [i + offset for i in range(len(labels))]
    bars = ax.bar(xs, [100 * r for r in rates], width=width, color=colour, yerr=[lower, upper], capsize=4,
                  label=name)
    for bar, r, (_, hi) in zip(bars, rates, cis, strict=True):
        ax.annotate(f"{100 * r:.1f}%", (bar.get_x() + bar.get_width() / 2, 100 * hi),
                    xytext=(0, 3), textcoords="offset points", ha="center", va="bottom", fontsize=8)
    top = max([100 * hi for _, hi in cis] + [0.0])
    ax.set_ylim(0, max(ax.get_ylim()[1], min(100.0, top) * 1.12 + 1))


def _histogram(ax: Any, values: Sequence[float], title: str, colour: str = _A_COLOUR, label: str | None = None,
               bins: Any = None, step: bool = False) -> None:
    ax.hist(values, bins=bins if bins is not None else _bins(values), color=colour, label=label,
            histtype="step" if step else "bar", linewidth=2 if step else None, alpha=1.0 if step else 0.85)
    ax.set_title(title)
    ax.set_ylabel("games")
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _bins(values: Sequence[float]) -> Any:
    lo, hi = min(values), max(values)
    if all(float(v).is_integer() for v in values) and hi - lo <= 60:
        return [x - 0.5 for x in range(int(lo), int(hi) + 2)]
    return 30


def write_run_plots(t: Tally, out: Path, title: str) -> list[Path]:
    """Win rate by seat, game length and score distributions; returns the files written."""
    written = []
    kinds = t.bot_kinds()
    fig, axes = _figure(10 if len(kinds) > 1 else 6.5, 4.2, 2 if len(kinds) > 1 else 1)
    ax = axes[0]
    _rate_bars(ax, t.seats, [t.seat_wins[s] for s in t.seats], [t.games] * len(t.seats))
    ax.axhline(100 / len(t.seats), color="grey", linestyle="--", linewidth=1, label="equal chance")
    ax.set_xticks(range(len(t.seats)), t.seats)
    ax.set_ylabel("win rate (%)")
    ax.set_title("Win rate by seat (95% Wilson CI)")
    ax.legend(loc="best", fontsize=8)
    if len(kinds) > 1:
        bx = axes[1]
        _rate_bars(bx, kinds, [t.bot_wins[k] for k in kinds], [t.bot_seat_games[k] for k in kinds],
                   colour=_B_COLOUR)
        bx.axhline(100 / len(t.seats), color="grey", linestyle="--", linewidth=1)
        bx.set_xticks(range(len(kinds)), kinds)
        bx.set_ylabel("win rate per seat-game (%)")
        bx.set_title("Win rate by bot")
    fig.suptitle(title)
    written.append(_save(fig, out / WIN_RATE_PNG))

    if t.decisions:
        panels = ([("rounds", t.rounds)] if t.has_rounds and t.rounds else []) + [("decisions", t.decisions)]
        fig, axes = _figure(5.5 * len(panels), 4.2, len(panels))
        for ax, (name, values) in zip(axes, panels, strict=True):
            _histogram(ax, values, f"Game length in {name} ({len(values)} finished games)")
            ax.set_xlabel(name)
        fig.suptitle(title)
        written.append(_save(fig, out / LENGTH_PNG))

        fig, axes = _figure(max(6.0, 1.4 * len(t.seats) + 2), 4.2)
        ax = axes[0]
        ax.boxplot([t.seat_scores[s] for s in t.seats], showmeans=True)
        ax.set_xticks(range(1, len(t.seats) + 1), t.seats)
        ax.set_ylabel("final score")
        ax.set_title("Final score by seat (box: quartiles, line: median, triangle: mean)")
        fig.suptitle(title)
        written.append(_save(fig, out / SCORES_PNG))
    return written


def write_compare_plots(a: Tally, b: Tally, out: Path, name_a: str, name_b: str) -> list[Path]:
    """Game length of both runs on one histogram; win rate by seat side by side."""
    written = []
    if a.decisions and b.decisions:
        use_rounds = a.has_rounds and b.has_rounds and a.rounds and b.rounds
        va, vb = (a.rounds, b.rounds) if use_rounds else (a.decisions, b.decisions)
        what = "rounds" if use_rounds else "decisions"
        fig, axes = _figure(7, 4.2)
        bins = _bins(list(va) + list(vb))
        _histogram(axes[0], va, f"Game length in {what}", _A_COLOUR, f"A {name_a}", bins, step=True)
        _histogram(axes[0], vb, f"Game length in {what}", _B_COLOUR, f"B {name_b}", bins, step=True)
        axes[0].set_xlabel(what)
        axes[0].legend(fontsize=8)
        written.append(_save(fig, out / COMPARE_LENGTH_PNG))
    fig, axes = _figure(7, 4.2)
    ax = axes[0]
    _rate_bars(ax, a.seats, [a.seat_wins[s] for s in a.seats], [a.games] * len(a.seats), _A_COLOUR, -0.2, 0.4,
               f"A {name_a}")
    _rate_bars(ax, a.seats, [b.seat_wins[s] for s in b.seats], [b.games] * len(b.seats), _B_COLOUR, 0.2, 0.4,
               f"B {name_b}")
    ax.set_xticks(range(len(a.seats)), a.seats)
    ax.set_ylabel("win rate (%)")
    ax.set_title("Win rate by seat (95% Wilson CI)")
    ax.legend(fontsize=8)
    written.append(_save(fig, out / COMPARE_WIN_RATE_PNG))
    return written
