"""The balance report pages of ``ludus serve``: the result folders of ``ludus simulate --out`` and
``ludus compare --out`` found under ``--results DIR``, each with its summary, plots and games.

Every file read is inside the results folder: a run is named by its path relative to the folder,
checked against a pattern (no ``..``, no absolute path, no link out of the folder once resolved)
and against the list of runs found there; a plot is one of the PNG files of that run. Result
files are the operator's, but their texts still go through :func:`html.escape`.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .pages import page
from .rooms import WebError

RUN_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,80}(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,80}){0,2}$")
PLOT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,80}\.png$")
MARKERS = ("summary.txt", "compare.txt")  # what makes a folder a run's results
MAX_RUNS = 200
MAX_GAMES = 300  # games listed on a run's page
MAX_TEXT = 200_000  # bytes of a summary shown
MAX_PLOT = 5_000_000


class Results:
    """The result folders under one root (``ludus serve --results DIR``), or none."""

    def __init__(self, root: Path | None) -> None:
        self.root = root.resolve() if root is not None else None

    def runs(self) -> list[str]:
        """The runs under the root (at most two folders deep), by path relative to it."""
        if self.root is None or not self.root.is_dir():
            return []
        found = []
        for marker in MARKERS:
            for depth in ("", "*/", "*/*/"):
                for p in self.root.glob(depth + marker):
                    rel = p.parent.relative_to(self.root).as_posix()
                    if rel != "." and RUN_NAME.match(rel) and self._inside(p.parent):
                        found.append(rel)
        return sorted(set(found))[:MAX_RUNS]

    def _inside(self, path: Path) -> bool:
        assert self.root is not None
        try:
            return path.resolve().is_relative_to(self.root)
        except OSError:
            return False

    def run(self, name: str) -> Path:
        """The folder of run ``name``, checked; a 404 for anything else."""
        if self.root is None:
            raise WebError(404, "this server shows no results: start it with 'ludus serve --results DIR'")
        if not RUN_NAME.match(name) or ".." in name.split("/") or name not in self.runs():
            raise WebError(404, f"no run '{name[:80]}' in the results folder")
        return self.root / name

    def plot(self, name: str, plot: str) -> bytes:
        folder = self.run(name)
        path = folder / plot
        if not PLOT_NAME.match(plot) or not path.is_file() or not self._inside(path):
            raise WebError(404, f"no plot '{plot[:80]}' in run '{name}'")
        if path.stat().st_size > MAX_PLOT:
            raise WebError(413, f"the plot {plot} is larger than {MAX_PLOT} bytes")
        return path.read_bytes()


def _read_text(path: Path) -> str:
    if not path.is_file():
        return ""
    with path.open("rb") as fh:
        data = fh.read(MAX_TEXT + 1)
    text = data[:MAX_TEXT].decode("utf-8", "replace")
    return text + ("\n... (cut)" if len(data) > MAX_TEXT else "")


def games_of(folder: Path, limit: int = MAX_GAMES) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` records of the run's games.jsonl, and how many lines it has."""
    path = folder / "games.jsonl"
    if not path.is_file():
        return [], 0
    out: list[dict[str, Any]] = []
    total = 0
    with path.open("rb") as fh:
        for line in fh:
            total += 1
            if len(out) < limit and len(line) < 1_000_000:
                try:
                    rec = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(rec, dict):
                    out.append(rec)
    return out, total


def plan_of(folder: Path) -> dict[str, Any]:
    """The run's run.json (its plan and the ruleset's digest), or {} if unreadable."""
    try:
        info = json.loads(_read_text(folder / "run.json") or "{}")
    except ValueError:
        return {}
    return info if isinstance(info, dict) else {}


def reopenable(info: dict[str, Any], offered: dict[str, str]) -> str:
    """Why the games of a run cannot be played again here ('' when they can)."""
    plan = info.get("plan") or {}
    spec = plan.get("ruleset")
    if not isinstance(spec, str) or not isinstance(plan.get("players"), int):
        return "run.json is missing or has no plan"
    if plan.get("setup") or plan.get("start"):
        return "its games start from a set-up or a position, which the server does not start from"
    if spec not in offered:
        return f"this server does not offer the ruleset '{spec}' (name it on the 'ludus serve' command line)"
    return ""


# ====================================================================== pages
def index_page(results: Results) -> str:
    if results.root is None:
        body = ('<main><div><h2>Balance reports</h2><p>This server was started without a results folder. '
                'Run games with <code>ludus simulate RULESET --games 200 --out results/run1</code> (or '
                '<code>ludus compare BASE VARIANT --out results/cmp1</code>) and start the server with '
                '<code>ludus serve --results results</code>: each run\'s summary, plots and games are shown here.'
                '</p></div></main>')
        return page("Balance reports", body)
    runs = results.runs()
    items = "".join(f'<li><a href="/report/run?name={quote(r)}">{escape(r)}</a></li>' for r in runs)
    body = (f'<main><div><h2>Balance reports</h2><p>Runs of <code>ludus simulate --out</code> and '
            f'<code>ludus compare --out</code> in <code>{escape(str(results.root))}</code>:</p>'
            f'<ul class="runs">{items or "<li>none yet</li>"}</ul></div></main>')
    return page("Balance reports", body)


def run_page(results: Results, name: str, offered: dict[str, str]) -> str:
    folder = results.run(name)
    text = _read_text(folder / "compare.txt") or _read_text(folder / "summary.txt")
    plots = sorted(p.name for p in folder.glob("*.png") if PLOT_NAME.match(p.name))
    imgs = "".join(f'<figure><img class="plot" alt="{escape(p)}" src="/report/plot?name={quote(name)}&amp;plot='
                   f'{quote(p)}"><figcaption>{escape(p)}</figcaption></figure>' for p in plots)
    subs = [r for r in results.runs() if r.startswith(name + "/")]
    sub_links = "".join(f'<li><a href="/report/run?name={quote(r)}">{escape(r[len(name) + 1:])}</a></li>' for r in subs)
    out = [f'<main class="report"><div><h2>{escape(name)}</h2>']
    if sub_links:
        out.append(f"<p>The two runs compared:</p><ul>{sub_links}</ul>")
    out.append(f'<pre class="summary">{escape(text)}</pre>{imgs}')
    games, total = games_of(folder)
    if games:
        info = plan_of(folder)
        why = reopenable(info, offered)
        out.append(f"<h3>Games ({total})</h3><p><code>ludus simulate</code> keeps no log of its games. ")
        if why:
            out.append(f"They cannot be opened here: {escape(why)}; each can be played again with the "
                       "<code>ludus play</code> command shown.</p>")
        else:
            out.append("<b>Open</b> plays a game again from its seed and bots (as <code>ludus play --seed</code> "
                       "does: the very same game) and opens it in the replay.</p>")
        spec = str((info.get("plan") or {}).get("ruleset", "RULESET"))
        players = (info.get("plan") or {}).get("players", len(games[0].get("bots") or {}))
        rows = ["<tr><th>game</th><th>status</th><th>reason</th><th>decisions</th><th>winners</th><th></th></tr>"]
        for rec in games:
            bots: dict[str, Any] = rec["bots"] if isinstance(rec.get("bots"), dict) else {}
            command = (f"ludus play {spec} --players {players} --seed {rec.get('seed')} "
                       + " ".join(f"--seat {s}={k}" for s, k in bots.items()))
            opener = "" if why else (f'<form method="post" action="/report/open"><input type="hidden" name="name" '
                                     f'value="{escape(name)}"><input type="hidden" name="game" '
                                     f'value="{escape(str(rec.get("game")))}"><button type="submit">Open</button></form>')
            winners = ", ".join(str(w) for w in rec.get("winners") or [])
            rows.append(f'<tr><td>{escape(str(rec.get("game")))}</td><td>{escape(str(rec.get("status")))}</td>'
                        f'<td>{escape(str(rec.get("reason"))[:120])}</td><td>{escape(str(rec.get("decisions")))}</td>'
                        f'<td>{escape(winners)}</td><td>{opener}<code title="{escape(command)}">play</code></td></tr>')
        more = f"<p>The first {len(games)} games of {total}.</p>" if total > len(games) else ""
        out.append(f'<table class="games">{"".join(rows)}</table>{more}')
    out.append("</div></main>")
    return page(f"Report: {name}", "".join(out))


def game_to_open(results: Results, name: str, index: int, offered: dict[str, str]) -> tuple[str, int, dict[str, str], int]:
    """(ruleset key, players, seat -> bot, seed) of game ``index`` of run ``name``; 4xx otherwise."""
    folder = results.run(name)
    info = plan_of(folder)
    why = reopenable(info, offered)
    if why:
        raise WebError(400, f"the games of {name} cannot be opened here: {why}")
    games, _ = games_of(folder, limit=index + 1)
    rec = next((g for g in games if g.get("game") == index), None)
    if rec is None or not isinstance(rec.get("seed"), int) or not isinstance(rec.get("bots"), dict):
        raise WebError(404, f"no game {index} in {name}/games.jsonl")
    bots = {str(s): str(k) for s, k in rec["bots"].items()}
    return str(info["plan"]["ruleset"]), int(info["plan"]["players"]), bots, int(rec["seed"])
