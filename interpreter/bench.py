"""`ludus bench`: how fast the engine is, measured on this machine in one run.

Figures (see docs/bench.md for what each means and how it is measured):

- importing the engine, in a fresh process;
- loading and checking a ruleset: cold (no load cache) and warm (cached parse results),
  each in a fresh process and again within one process;
- complete games per second and decisions per second, random bots in every seat, one
  process on one core;
- for each path that has a hand-written Python reference, the time of the interpreted
  rules divided by the time of the reference.

The engine knows no game, so the references are not part of it: they live in the source
checkout's ``benchmarks/`` folder (``handwritten_*.py``, each naming its ``RULESET``) and
are imported from there when it exists; without it the ratios are reported as not available.
The targets are the ruleset's and come with its references (``TARGETS``); they are reported,
never enforced: speed is never a test.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from .bots import seat_bots
from .diagnostics import Diagnostic, Loc, LudusError
from .loader import ROOT, find_ruleset, last_load, load_ruleset
from .model import Ruleset
from .runtime import Game

BENCH_DIR = ROOT / "benchmarks"
MAX_DECISIONS = 100_000

# Targets are a ruleset's, so they come with its hand-written references (``TARGETS``):
# "load_cold", "load_warm" (seconds, at most), "games_per_s" (at least), "ratio" (at most).
TARGET_KEYS = ("load_cold", "load_warm", "games_per_s", "ratio", "greedy_decisions_per_s")


@dataclass
class Settings:
    ruleset: str | None = None
    players: int | None = None
    games: int = 20
    repeat: int = 15  # timings per position and side for the ratios
    loads: int = 5  # fresh processes per load figure
    quick: bool = False

    @classmethod
    def make(cls, quick: bool = False, games: int | None = None, repeat: int | None = None,
             ruleset: str | None = None, players: int | None = None) -> Settings:
        s = cls(ruleset=ruleset, players=players, quick=quick)
        if quick:
            s.games, s.repeat, s.loads = 1, 3, 1
        if games is not None:
            s.games = games
        if repeat is not None:
            s.repeat = repeat
        for option, value in (("--games", s.games), ("--repeat", s.repeat)):
            if value < 1:
                raise LudusError([Diagnostic(Loc("ludus bench"), f"{option} must be at least 1, not {value}")])
        return s


@dataclass
class Figure:
    key: str
    label: str
    value: float | None
    unit: str  # "s", "/s" or "x"
    target: float | None = None
    better: str = "lower"  # which way is better: "lower" or "higher"
    note: str = ""

    @property
    def ok(self) -> bool | None:
        if self.target is None or self.value is None:
            return None
        return self.value <= self.target if self.better == "lower" else self.value >= self.target

    @property
    def factor(self) -> float | None:
        """How far off the target (1.0 = on it; above 1 = missed by that factor)."""
        if self.target is None or not self.value:
            return None
        return self.value / self.target if self.better == "lower" else self.target / self.value

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"], d["factor"] = self.ok, self.factor
        return d


@dataclass
class Report:
    machine: dict[str, Any]
    settings: dict[str, Any]
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"machine": self.machine, "settings": self.settings,
                "figures": [f.as_dict() for f in self.figures], "notes": self.notes,
                "seconds": round(self.seconds, 2)}


# ====================================================================== references
def references() -> dict[str, ModuleType]:
    """The hand-written reference modules of the source checkout, by the ruleset they cover."""
    found: dict[str, ModuleType] = {}
    if not BENCH_DIR.is_dir():
        return found
    for path in sorted(BENCH_DIR.glob("handwritten_*.py")):
        name = f"_ludus_bench_{path.stem}"
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                continue
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except Exception:
                del sys.modules[name]
                raise
        ruleset = getattr(module, "RULESET", None)
        if isinstance(ruleset, str) and callable(getattr(module, "cases", None)):
            found[ruleset] = module
    return found


# ====================================================================== timing helpers
def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


@contextmanager
def _no_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_PROBE = """
import json, sys, time
t0 = time.perf_counter()
import interpreter
from interpreter.loader import last_load, load_ruleset
t1 = time.perf_counter()
spec = sys.argv[1]
if spec:
    load_ruleset(spec)
t2 = time.perf_counter()
info = last_load()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "cache": info.cache if info else None}))
"""


def _probe(spec: str, cache: str) -> dict[str, Any]:
    """Import the engine and load ``spec`` in a fresh Python process."""
    env = dict(os.environ)
    env["LUDUS_CACHE"] = cache
    out = subprocess.run([sys.executable, "-c", _PROBE, spec], env=env, capture_output=True, text=True,
                         cwd=str(ROOT), check=False, timeout=300)
    if out.returncode != 0:
        raise LudusError([Diagnostic(Loc("ludus bench"), "a fresh process could not load the ruleset",
                                     out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "")])
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# ====================================================================== the measures
def measure_loads(manifest: Path, s: Settings, report: Report, targets: dict[str, float]) -> None:
    spec = str(manifest)
    with tempfile.TemporaryDirectory(prefix="ludus-bench-cache-") as cache:
        imports, cold_fresh, warm_fresh = [], [], []
        for _ in range(s.loads):
            r = _probe(spec, "off")
            imports.append(r["import"])
            cold_fresh.append(r["load"])
        load_ruleset(spec, cache=False)  # in-process: the first load also builds parsers and validators
        cold_in = []
        for _ in range(s.loads if s.quick else max(3, s.loads)):
            t = time.perf_counter()
            load_ruleset(spec, cache=False)
            cold_in.append(time.perf_counter() - t)
        saved = os.environ.get("LUDUS_CACHE")
        os.environ["LUDUS_CACHE"] = cache
        try:
            load_ruleset(spec)  # writes the cache entry
            warm_in, hits = [], 0
            for _ in range(3 if s.quick else max(5, s.loads * 2)):
                t = time.perf_counter()
                load_ruleset(spec)
                warm_in.append(time.perf_counter() - t)
                info = last_load()
                hits += bool(info and info.cache == "hit")
        finally:
            if saved is None:
                del os.environ["LUDUS_CACHE"]
            else:
                os.environ["LUDUS_CACHE"] = saved
        for _ in range(s.loads):
            r = _probe(spec, cache)
            imports.append(r["import"])
            warm_fresh.append(r["load"])
            hits += r["cache"] == "hit"
    n = f"median of {s.loads} fresh process{'es' if s.loads > 1 else ''}"
    report.figures += [
        Figure("import", "import the engine (fresh process)", median(imports), "s",
               note=f"median of {len(imports)}; not part of the load figures"),
        Figure("load_cold", "load + check, cold (fresh process, no cache)", median(cold_fresh), "s",
               targets.get("load_cold"), note=n),
        Figure("load_warm", "load + check, warm (fresh process, cached)", median(warm_fresh), "s",
               targets.get("load_warm"), note=n),
        Figure("load_cold_in_process", "load + check, cold (again in one process)", median(cold_in), "s",
               note=f"median of {len(cold_in)}"),
        Figure("load_warm_in_process", "load + check, warm (again in one process)", median(warm_in), "s",
               note=f"median of {len(warm_in)}"),
    ]
    if hits < len(warm_in) + len(warm_fresh):
        report.notes.append(f"only {hits} of {len(warm_in) + len(warm_fresh)} warm loads hit the cache")


def play_one(rs: Ruleset, players: int, seed: int, atomic: bool = True) -> int:
    """One complete game, random bots in every seat; returns the number of decisions."""
    game = Game.new(rs, players, seed)
    game.atomic = atomic
    bots = seat_bots(game, {p: "random" for p in game.players}, seed)
    decisions = 0
    while not game.over:
        if decisions >= MAX_DECISIONS:
            raise LudusError([Diagnostic(Loc(rs.folder), f"game {seed} did not end within {MAX_DECISIONS} decisions")])
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
        decisions += 1
    return decisions


def measure_games(rs: Ruleset, players: int, s: Settings, report: Report, targets: dict[str, float]) -> None:
    # The target is judged as 'ludus simulate' plays bot games: without the undo copy that
    # 'apply' keeps for rejected choices (bots only make offered ones). Both are shown.
    play_one(rs, players, 0)  # untimed: the rules' Python is compiled at its first run, once a process
    for atomic in (False, True):
        total, decisions = 0.0, 0
        for seed in range(1, s.games + 1):
            gc.collect()
            t = time.perf_counter()
            decisions += play_one(rs, players, seed, atomic)
            total += time.perf_counter() - t
        what = ", apply keeping its undo copy" if atomic else ", as simulate plays them"
        note = f"{s.games} game{'s' if s.games > 1 else ''} (seeds 1-{s.games}), {decisions / s.games:.0f} decisions a game"
        report.figures += [
            Figure("games_per_s" + ("_with_undo" if atomic else ""), f"complete {players}-player games/s (random bots{what})",
                   s.games / total, "/s", None if atomic else targets.get("games_per_s"), "higher", note),
            Figure("decisions_per_s" + ("_with_undo" if atomic else ""), f"decisions/s (random bots{what})",
                   decisions / total, "/s", None, "higher"),
        ]


GREEDY_DECISIONS = 200  # decisions timed per greedy game (a whole game of look-aheads takes minutes)


def measure_greedy(rs: Ruleset, players: int, s: Settings, report: Report, targets: dict[str, float]) -> None:
    """Greedy bots in every seat, as the balance lab plays them: each decision tries every
    option on a sampled copy of the game and judges the result (see bots.py)."""
    decisions, total = 0, 0.0
    games = max(1, min(s.games, 3))
    limit = GREEDY_DECISIONS if not s.quick else 60
    for seed in range(1, games + 1):
        game = Game.new(rs, players, seed)
        game.atomic = False
        bots = seat_bots(game, {p: "greedy" for p in game.players}, seed)
        gc.collect()
        t = time.perf_counter()
        n = 0
        while not game.over and n < limit:
            p = game.deciders()[0]
            game.apply(bots[p].choose(game, p), p)
            n += 1
        total += time.perf_counter() - t
        decisions += n
    report.figures.append(Figure("greedy_decisions_per_s", "decisions/s (greedy bots, as simulate plays them)",
                                 decisions / total, "/s", targets.get("greedy_decisions_per_s"), "higher",
                                 f"the first {limit} decisions of {games} game(s)"))


def measure_ratio(case: Any, s: Settings, target: float | None = None) -> Figure:
    """Time each position ``s.repeat`` times per side; the ratio of the sums of per-position medians."""
    n = int(case.positions)
    times: dict[str, list[list[float]]] = {"interpreted": [[] for _ in range(n)], "handwritten": [[] for _ in range(n)]}
    runs: dict[str, Callable[[Any], Any]] = {"interpreted": case.interpreted, "handwritten": case.handwritten}
    agree = 0
    gc.collect()
    for rep in range(s.repeat):
        for i in range(n):
            results = {}
            order = ("interpreted", "handwritten") if (rep + i) % 2 == 0 else ("handwritten", "interpreted")
            for side in order:
                ctx = case.prepare(i, side)
                with _no_gc():
                    t = time.perf_counter()
                    results[side] = runs[side](ctx)
                    times[side][i].append(time.perf_counter() - t)
            if rep == 0:
                agree += bool(case.same(results["interpreted"], results["handwritten"]))
    interp = sum(median(t) for t in times["interpreted"])
    hand = sum(median(t) for t in times["handwritten"])
    note = (f"{n} positions × {s.repeat}; {interp / n * 1e6:.0f} µs vs {hand / n * 1e6:.0f} µs a position")
    if agree < n:
        note += f"; RESULTS DIFFER on {n - agree} of {n} positions"
    return Figure("ratio_" + str(case.name), f"interpreted ÷ hand-written: {case.title}", interp / hand, "x",
                  target, "lower", note)


def measure_ratios(rs: Ruleset, s: Settings, report: Report) -> None:
    module = references().get(rs.name)
    if module is None:
        where = "benchmarks/handwritten_*.py" if BENCH_DIR.is_dir() else "benchmarks/ (only in a source checkout)"
        report.notes.append(f"no hand-written reference for '{rs.name}' in {where}: ratios not measured")
        return
    t = time.perf_counter()
    cases = module.cases(rs)
    report.notes.append(f"reference: {Path(module.__file__ or '').relative_to(ROOT)} "
                        f"({time.perf_counter() - t:.1f} s to build its positions)")
    for case in cases:
        report.figures.append(measure_ratio(case, s, targets_of(module).get("ratio")))


def targets_of(module: ModuleType | None) -> dict[str, float]:
    """The targets a reference module sets for its ruleset (none without one)."""
    found = getattr(module, "TARGETS", None) if module is not None else None
    if not isinstance(found, dict):
        return {}
    return {k: float(v) for k, v in found.items() if k in TARGET_KEYS and isinstance(v, int | float)}


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(terse=True), "cpus": os.cpu_count(),
            "bytecode_cache": not sys.flags.dont_write_bytecode and not os.environ.get("PYTHONDONTWRITEBYTECODE"),
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}


def run(s: Settings, progress: Callable[[str], None] | None = None) -> Report:
    """Measure everything; ``progress`` is told what is being measured."""
    say = progress or (lambda _msg: None)
    start = time.perf_counter()
    refs = references() if s.ruleset is None else {}
    spec = s.ruleset or next(iter(refs), None)
    if spec is None:
        raise LudusError([Diagnostic(Loc("ludus bench"), "which ruleset? no hand-written reference names one",
                                     "give a RULESET")])
    manifest = find_ruleset(spec)
    rs = load_ruleset(manifest)
    players = s.players if s.players is not None else rs.max_players
    problem = rs.player_count_problem(players)
    if problem:
        raise LudusError([Diagnostic(Loc("ludus bench"), problem, "choose --players in that range")])
    report = Report(machine(), {"ruleset": rs.name, "digest": rs.digest[:12], "players": players,
                                "games": s.games, "repeat": s.repeat, "loads": s.loads, "quick": s.quick})
    targets = targets_of(references().get(rs.name))
    if not targets:
        report.notes.append(f"no targets for '{rs.name}' (targets come with its hand-written references)")
    say("loading the ruleset (fresh processes and in this one)")
    measure_loads(manifest, s, report, targets)
    say(f"playing {s.games} complete game(s), twice")
    measure_games(rs, players, s, report, targets)
    say("playing greedy bots")
    measure_greedy(rs, players, s, report, targets)
    say("timing the interpreted rules against the hand-written references")
    measure_ratios(rs, s, report)
    if not report.machine["bytecode_cache"]:
        report.notes.append("bytecode caching is off (PYTHONDONTWRITEBYTECODE): a fresh process compiles every "
                            "module changed since its last .pyc, which slows imports")
    load = report.machine.get("load_average")
    if load and load[0] > 0.5 * (os.cpu_count() or 1):
        report.notes.append(f"the machine was busy (load average {load[0]:.1f} on {os.cpu_count()} cores): "
                            "figures are noisy")
    report.seconds = time.perf_counter() - start
    return report


# ====================================================================== output
def _value(f: dict[str, Any]) -> str:
    v, unit = f["value"], f["unit"]
    if v is None:
        return "n/a"
    if unit == "s":
        return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"
    if unit == "x":
        return f"{v:.2f}×"
    return f"{v:,.1f}/s" if v < 100 else f"{v:,.0f}/s"


def _target(f: dict[str, Any]) -> str:
    t = f["target"]
    if t is None:
        return ""
    shown = _value({"value": t, "unit": f["unit"]})
    return ("≤ " if f["better"] == "lower" else "≥ ") + shown


def _status(f: dict[str, Any]) -> str:
    if f["ok"] is None:
        return ""
    if f["ok"]:
        return "✓"
    return f"✗ missed by {f['factor']:.1f}×"


def render(report: dict[str, Any], console: Any = None) -> None:
    """Print the report (as made by :meth:`Report.as_dict`) as a table."""
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)
    st, m = report["settings"], report["machine"]
    table = Table(title=f"ludus bench: {st['ruleset']} ({st['digest']}), {st['players']} players"
                  + (" — quick" if st["quick"] else ""), title_justify="left")
    table.add_column("figure")
    table.add_column("measured", justify="right")
    table.add_column("target", justify="right")
    table.add_column("", justify="left")
    table.add_column("how", style="dim")
    for f in report["figures"]:
        status = _status(f)
        style = "green" if f["ok"] else ("red" if f["ok"] is False else "")
        table.add_row(f["label"], _value(f), _target(f), f"[{style}]{status}[/]" if style else status, f["note"])
    console.print(table)
    console.print(f"Python {m['python']} ({m['implementation']}) on {m['platform']}, {m['cpus']} CPUs; "
                  f"measured in {report['seconds']:.0f} s; medians of repeated timings (time.perf_counter).")
    for note in report["notes"]:
        console.print(f"note: {note}")


def as_json(report: Report) -> str:
    return json.dumps(report.as_dict(), indent=1, ensure_ascii=False)
