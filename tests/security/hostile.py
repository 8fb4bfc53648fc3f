"""Run ``ludus`` on one hostile input in a real process, with a wall-clock and memory watch.

Each hostile case of tests/security must give, with the default limits, a located error
(``path:line:col: error: ...``) or a plain refusal, exit code 1, no Python traceback, within
``SECONDS`` and under ``PEAK_MB`` of peak resident memory. A real process is the only honest
way to measure both: a hang is killed at the deadline, and ``os.wait4`` reports the child's own
peak RSS (``ru_maxrss``). An address-space ceiling (``CEILING_MB``) keeps a runaway case from
taking the machine down; hitting it still fails the test (the process dies with MemoryError or
is killed, and either way does not print a located error).
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parent / "hostile"
SECONDS = 5.0
PEAK_MB = 500
CEILING_MB = 2048
LOCATED = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): error: \S", re.M)
UNLOCATED = re.compile(r"^[^\s:]+: error: \S", re.M)


@dataclass
class Outcome:
    """What one run of ``ludus`` did."""

    code: int
    out: str
    err: str
    seconds: float
    peak_mb: float
    timed_out: bool
    cpu: float = 0.0

    def located_lines(self) -> list[str]:
        return [m.group(0) for m in LOCATED.finditer(self.err)]


def _limit() -> None:  # runs in the child before exec
    cap = CEILING_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def reap(pid: int, start: float, seconds: float) -> tuple[int, float, bool, float]:
    """Wait for ``pid``, killing its process group at ``start + seconds``.

    Returns its exit code, its own peak RSS in MB and whether it was killed, and its CPU
    seconds — all from ``os.wait4``, the kernel's record of that one child.
    """
    deadline = start + seconds
    timed_out = False
    while True:
        got, status, usage = os.wait4(pid, os.WNOHANG)
        if got:
            break
        if time.perf_counter() > deadline:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            got, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.005)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, timed_out, usage.ru_utime + usage.ru_stime


def spawn(cmd: list[str], *, cwd: Path, env: dict[str, str], stdin: bytes | None, seconds: float,
          preexec: Callable[[], None]) -> Outcome:
    """Run ``cmd`` in its own session, feed it ``stdin`` (none: /dev/null) and :func:`reap` it."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=preexec, start_new_session=True)
    chunks: dict[str, bytes] = {}

    def drain(name: str, stream: IO[bytes]) -> None:
        chunks[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(n, s), daemon=True)
               for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    if stdin is not None and proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(stdin)
            proc.stdin.close()
    code, peak, timed_out, cpu = reap(proc.pid, start, seconds)
    proc.returncode = code
    for t in readers:
        t.join(5)
    return Outcome(code, chunks.get("out", b"").decode("utf-8", "replace"),
                   chunks.get("err", b"").decode("utf-8", "replace"), time.perf_counter() - start,
                   peak, timed_out, cpu)


def run_ludus(argv: list[str], *, cwd: Path = ROOT, stdin: str | None = None,
              env: dict[str, str] | None = None, seconds: float = SECONDS) -> Outcome:
    """Run ``python -m interpreter ARGV`` and watch it (the deadline adds the interpreter's start)."""
    full_env = {**os.environ, "COLUMNS": "80", **(env or {})}
    return spawn([sys.executable, "-m", "interpreter", *argv], cwd=cwd, env=full_env,
                 stdin=(stdin or "").encode(), seconds=seconds + 1.0, preexec=_limit)


BASE = ROOT / "tests" / "broken" / "_base"


def edited_base(tmp: Path, file: str, old: str, new: str) -> Path:
    """A copy of the tiny valid ruleset tests/broken/_base as ``tmp/r``, with ``old`` in ``file``
    replaced by ``new`` once (``old`` must be there, so a changed base fails loudly)."""
    folder = Path(shutil.copytree(BASE, tmp / "r"))
    path = folder / file
    text = path.read_text()
    assert old in text, f"{old!r} is no longer in {path}"
    path.write_text(text.replace(old, new, 1))
    return folder


def assert_refused(o: Outcome, *, located: bool = True) -> None:
    """The standard of the suite: refused in time, in memory, exit 1, no traceback, located."""
    assert not o.timed_out, f"no answer within {SECONDS} s\nstderr:\n{o.err[-2000:]}"
    assert "Traceback" not in o.out + o.err, o.err[-4000:]
    assert o.code == 1, f"exit code {o.code}\nstdout:\n{o.out[-2000:]}\nstderr:\n{o.err[-2000:]}"
    assert o.seconds <= SECONDS + 1.0, f"took {o.seconds:.1f} s"
    assert o.peak_mb < PEAK_MB, f"peak RSS {o.peak_mb:.0f} MB"
    if located:
        assert o.located_lines(), f"no file:line:col error in:\n{o.err[-2000:]}"
    else:
        assert UNLOCATED.search(o.err) or o.located_lines(), f"no error line in:\n{o.err[-2000:]}"
