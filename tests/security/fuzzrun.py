"""Run one mutant of tests/security/fuzz.py through ``ludus`` and sort the outcome into a class.

``run(mutant, folder)`` validates the mutant with ``ludus validate`` and, if it loads, plays one
game with random bots at its smallest player count. Each command runs in a real process (or, for
speed in CI, a forked child of this one, which skips the interpreter's start) with a deadline and
its own peak RSS read through ``os.wait4``, as tests/security/hostile.py does for single cases.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import fuzz
from fuzz import Mutant
from hostile import reap, spawn

SECONDS = 20.0  # a phase that runs longer is a hang
PEAK_MB = 500  # a phase that needs more is a memory fault
CEILING_MB = 2048  # address space granted above the start, so a runaway case cannot take the machine

CLASSES = ("accepted", "located", "unlocated", "traceback", "hang", "memory")
FAULTS = ("traceback", "hang", "memory", "unlocated")
LOCATED = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): error: \S", re.M)
UNFINISHED = "did not end within"

@dataclass
class Phase:
    """What one ``ludus`` command did."""

    argv: list[str]
    code: int
    out: str
    err: str
    seconds: float
    peak_mb: float
    timed_out: bool
    cpu: float = 0.0  # the child's user + system seconds (what the case costs on an idle machine)


@dataclass
class Result:
    """The class of one mutant and what decided it."""

    ruleset: str
    seed: int
    index: int
    description: str
    cls: str
    phase: str  # validate or play: where the class was decided
    seconds: float
    peak_mb: float
    cpu: float
    output: str  # the deciding phase's stderr and stdout (tails)
    unfinished: bool = False  # played, and stopped at fuzz.MAX_DECISIONS

    def line(self) -> str:
        return f"{self.cls:9} {self.phase:8} {self.ruleset}#{self.index}: {self.description}"


def classify(p: Phase) -> str:
    """The class of one phase (``accepted`` for exit 0 or a game stopped at its decision cap)."""
    text = p.out + p.err
    if p.timed_out:
        return "hang"
    if p.peak_mb > PEAK_MB:
        return "memory"
    if "Traceback" in text or p.code not in (0, 1):
        return "traceback"
    if p.code == 0 or UNFINISHED in p.err:
        return "accepted"
    if LOCATED.search(p.err):
        return "located"
    return "unlocated"


def run(m: Mutant, workdir: Path, *, fork: bool = False, seconds: float = SECONDS,
        env: dict[str, str] | None = None) -> Result:
    """Validate ``m`` (written under ``workdir``) and, if it loads, play one game; classify the outcome."""
    folder = m.write(workdir)
    runner = _forked if fork else _process
    try:
        total = cpu = peak = 0.0
        for argv, phase in zip(m.commands(str(folder)), ("validate", "play"), strict=True):
            p = runner(argv, seconds, env)
            if p.timed_out and p.cpu < seconds / 2:
                # killed at the deadline having had less than half of it on a CPU: a busy machine,
                # not a hang; the same command once more with three times as long tells them apart
                p = runner(argv, 3 * seconds, env)
            total += p.seconds
            cpu += p.cpu
            peak = max(peak, p.peak_mb)
            cls = classify(p)
            if cls != "accepted" or phase == "play":
                output = _clip(p.err, 4000) + ("\n--- stdout\n" + _clip(p.out, 1500) if p.out.strip() else "")
                return Result(m.ruleset, m.seed, m.index, m.description, cls, phase, total, peak, cpu, output,
                              unfinished=UNFINISHED in p.err)
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        _remove(folder.parent)


def _clip(text: str, size: int) -> str:
    """Enough of an output to read: long lines (a message quoting a huge value) and long texts cut."""
    lines = [ln if len(ln) <= 400 else f"{ln[:200]}[...{len(ln) - 400} characters...]{ln[-200:]}"
             for ln in text.splitlines()]
    text = "\n".join(lines)
    return text if len(text) <= size else f"{text[:size // 2]}\n[...]\n{text[-size // 2:]}"


def _remove(folder: Path) -> None:
    for p in sorted(folder.rglob("*"), key=lambda q: len(q.parts), reverse=True):
        with contextlib.suppress(OSError):
            p.rmdir() if p.is_dir() else p.unlink()
    with contextlib.suppress(OSError):
        folder.rmdir()


def _ceiling() -> None:
    cap = _vsize() + CEILING_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _vsize() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * resource.getpagesize()


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / (1 << 20)


def _process(argv: list[str], seconds: float, env: dict[str, str] | None) -> Phase:
    """``python -m interpreter ARGV`` in a real process (its start counts against the deadline)."""
    full_env = {**os.environ, "COLUMNS": "80", **(env or {})}
    if fuzz.ENGINE != fuzz.ROOT:
        full_env["PYTHONPATH"] = str(fuzz.ENGINE)
    o = spawn([sys.executable, "-m", "interpreter", *argv], cwd=fuzz.ENGINE, env=full_env, stdin=None,
              seconds=seconds + 1.0, preexec=_ceiling)
    return Phase(argv, o.code, o.out, o.err, o.seconds, o.peak_mb, o.timed_out, o.cpu)


def _forked(argv: list[str], seconds: float, env: dict[str, str] | None) -> Phase:
    """``interpreter.cli.main(ARGV)`` in a forked child of this process (no interpreter start).

    The child's peak RSS includes what it inherited, so this process's own RSS is taken off.
    An uncaught exception is printed as Python would and exits 1, like a real process.
    """
    from interpreter import cli

    base = _rss_mb()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                os.setpgid(0, 0)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdin = open(os.devnull)  # noqa: SIM115
                sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                os.environ.update({"COLUMNS": "80", **(env or {})})
                _ceiling()
                code = cli.main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                with contextlib.suppress(BaseException):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        code, peak, timed_out, cpu = reap(pid, start, seconds)
        elapsed = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return Phase(argv, code, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                     elapsed, max(0.0, peak - base), timed_out, cpu)


def reproduce(m: Mutant, result: Result, root: Path) -> Path:
    """Write a mutant whose class is a fault, with its description, commands and output, under ``root``."""
    folder = m.write(root / result.cls)
    case = folder.parent
    rel = f"{result.cls}/{m.name}/{m.ruleset}"
    cmds = "\n".join("ludus " + " ".join(a) for a in m.commands(rel))
    (case / "CASE.md").write_text(
        f"# {result.cls} in {result.phase}: {m.ruleset} mutant {m.index} of seed {m.seed}\n\n"
        f"mutation: {m.description}\n\n"
        f"regenerate (from the checkout): python -c \"import sys, pathlib; sys.path.insert(0, 'tests/security'); "
        f"import fuzz; fuzz.mutate('{m.ruleset}', {m.seed}, {m.index}).write(pathlib.Path('/tmp/m'))\"\n\n"
        f"run from {root}:\n\n{cmds}\n\nseconds {result.seconds:.1f}, peak {result.peak_mb:.0f} MB\n\n"
        f"output:\n\n```\n{result.output}\n```\n", encoding="utf-8")
    return case
