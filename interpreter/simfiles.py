"""The files and the progress bar of a simulate run: games.jsonl, games.csv, reading them back.

games.jsonl holds one record per game (one JSON line each, in game order), games.csv the same
as a table; both are written one game at a time and hold no timings, so a run's files are
byte-identical whatever the number of workers or the machines (see docs/simulate.md).
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

GAMES_JSONL = "games.jsonl"
GAMES_CSV = "games.csv"


def record_line(rec: dict[str, Any]) -> str:
    """A record's line of games.jsonl: the one way it is written, locally or on a Ray worker."""
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"


class ResultWriter:
    """Writes records to games.jsonl and games.csv (or nowhere, without an out folder)."""

    def __init__(self, jsonl: Any = None, table: Any = None, seats: Sequence[str] = (),
                 metrics: Sequence[str] = ()) -> None:
        self.jsonl, self.table, self.seats, self.metrics = jsonl, table, seats, metrics

    def write(self, rec: dict[str, Any], line: str | None = None) -> None:
        """Write a record; ``line``: its games.jsonl line, if made already (by a Ray worker)."""
        if self.jsonl is not None:
            self.jsonl.write(line if line is not None else record_line(rec))
        self.csv_only(rec)

    def csv_only(self, rec: dict[str, Any]) -> None:
        """A kept record of a resumed run: it is in games.jsonl already; games.csv is rewritten."""
        if self.table is not None:
            self.table.writerow(csv_row(rec, self.seats, self.metrics))


@contextmanager
def result_files(out: Path | None, seats: Sequence[str], metrics: Sequence[str],
                 keep: int = 0) -> Iterator[ResultWriter]:
    """games.jsonl and games.csv, written one game at a time (deterministic: no timings).

    ``keep``: bytes of an interrupted run's games.jsonl to keep (``--resume``); the rest of
    the file is cut and the new records appended. Without ``out`` nothing is written.
    """
    if out is None:
        yield ResultWriter()
        return
    out.mkdir(parents=True, exist_ok=True)
    if keep:
        os.truncate(out / GAMES_JSONL, keep)
    with open(out / GAMES_JSONL, "a" if keep else "w", encoding="utf-8", newline="\n") as jsonl, \
            open(out / GAMES_CSV, "w", encoding="utf-8", newline="") as csv_file:
        table = csv.writer(csv_file, lineterminator="\n")
        table.writerow(csv_header(seats, metrics))
        yield ResultWriter(jsonl, table, seats, metrics)


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


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a games.jsonl file, one by one (to rebuild a summary or for your own analysis)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


# ================================================================== the progress bar
def progress_bar(total: int, enabled: bool, label: str) -> Any:
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

    def advance(self, games: int = 1) -> None:
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

    def advance(self, games: int = 1) -> None:
        self.bar.advance(self.task, games)
