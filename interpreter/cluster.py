"""`ludus simulate/compare --cluster ray[...]`: the games of a run as Ray tasks.

Ray (https://www.ray.io, the ``cluster`` extra) is imported only here and only when
``--cluster`` is given. The games are handed out in *batches* (a task plays several
consecutive games, to amortise Ray's per-task cost; the size follows the measured cost of a
game, see :func:`batch_size`); each game is played by
:func:`interpreter.simulate.play_game`, the very function the local pool runs, with the
same per-game seed, so a record does not depend on where it was played. The batches come
back in any order and are handed on in game order, so the files are byte-identical to a
local run's.

A worker process that dies (killed, out of memory, its machine lost) fails its task with
a Ray system error; the driver resubmits that batch (Ray schedules it on a live worker)
and counts its games as *rerun*, which the run reports. A batch is tried at most
:data:`MAX_ATTEMPTS` times, so a batch that kills every worker it meets ends the run with
an error instead of looping.

The addresses (``--cluster``):

- ``ray``: start a local Ray instance, or join the one ``RAY_ADDRESS`` names (``ray.init()``);
- ``ray:auto``: join the instance running on this machine (``ray start`` was run here);
- ``ray:HOST:PORT``: join a cluster's head directly (its GCS port, 6379 by default), from a
  machine on the cluster's network;
- ``ray://HOST:PORT``: connect through the Ray Client (the head's port 10001 by default),
  from anywhere that reaches that port.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import socket
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, Loc, LudusError
from .loader import load_ruleset
from .model import Ruleset

INSTALL_HINT = "install Ray with: pip install 'ludus[cluster]'"
MAX_ATTEMPTS = 4  # tries of one batch (the first and three reruns) before the run gives up
MAX_BATCH = 64  # games per task at most: a lost task costs at most this many reruns
BATCHES_PER_CPU = 4  # at least this many batches per CPU, so that a slow batch does not idle the others
TASK_SECONDS = 2.0  # what a task should take: Ray's ~1 ms per task is then 0.05 % of it
IN_FLIGHT_PER_CPU = 2  # tasks submitted per CPU ahead of the results: bounds the driver's memory
CONNECT_TIMEOUT = 5.0  # seconds to reach an explicit address before calling it unreachable


def _error(message: str, hint: str = "") -> LudusError:
    return LudusError([Diagnostic(Loc("ludus"), message, hint)])


# ================================================================== where to run
@dataclass(frozen=True)
class ClusterSpec:
    """A parsed ``--cluster`` value: ``address`` is what ``ray.init`` is given (None: local/RAY_ADDRESS)."""

    text: str
    address: str | None


def parse_cluster(text: str) -> ClusterSpec:
    """``ray``, ``ray:auto``, ``ray:HOST:PORT`` or ``ray://HOST:PORT``; anything else is an error."""
    if text == "ray":
        return ClusterSpec(text, None)
    if text.startswith("ray://") and _host_port(text[len("ray://"):]):
        return ClusterSpec(text, text)
    if text.startswith("ray:") and not text.startswith("ray://"):
        rest = text[len("ray:"):]
        if rest == "auto" or _host_port(rest):
            return ClusterSpec(text, rest)
    raise _error(f"--cluster {text}: not a Ray address",
                 "give ray (a local instance, or RAY_ADDRESS), ray:auto, ray:HOST:6379 or ray://HOST:10001")


def _host_port(text: str) -> tuple[str, int] | None:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it (Ray is an optional extra)."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise _error("--cluster needs Ray, which is not installed", INSTALL_HINT) from None


def _check_reachable(spec: ClusterSpec) -> None:
    """Fail fast on an explicit address nobody listens on: ray.init would wait 30 s or more."""
    if spec.address in (None, "auto"):
        return
    target = spec.address.removeprefix("ray://")
    hp = _host_port(target)
    assert hp is not None  # parse_cluster checked it
    try:
        socket.create_connection(hp, timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _error(f"--cluster {spec.text}: cannot reach the Ray cluster at {target} ({reason})",
                     "start it with 'ray start --head' on that machine, and check the host, the port "
                     "(ray:// is the Ray Client port, 10001 by default) and the firewall") from None


class RaySession:
    """A connection to Ray for one command (simulate, or both runs of compare).

    It starts a local instance or joins a cluster, and leaves Ray as it found it: an
    instance it started is shut down, one this process was already connected to is kept.
    """

    def __init__(self, spec: ClusterSpec, local_cpus: int | None = None) -> None:
        self.spec = spec
        self.ray = import_ray()
        self.started = False
        _check_reachable(spec)
        if not self.ray.is_initialized():
            self._connect(local_cpus)
        elif spec.address is not None:  # a program (or a test) called ray.init itself: 'ray' uses it
            raise _error(f"--cluster {spec.text}: this process is connected to Ray already",
                         "give --cluster ray to use that connection")
        # Ray's task, defined once per session. max_retries=0: a batch whose worker died is
        # resubmitted by the driver itself (_BatchQueue), which can then count the reruns.
        self.remote = self.ray.remote(num_cpus=1, max_retries=0)(play_batch)

    def _connect(self, local_cpus: int | None) -> None:
        spec = self.spec
        # An instance started here gets --workers CPUs if given; a cluster's CPUs are its own.
        cpus = local_cpus if spec.address is None and not os.environ.get("RAY_ADDRESS") else None
        # Ray 2.59+ protects a cluster with a token: a client without one is refused (as an
        # unreachable cluster), one told RAY_AUTH_MODE=token but given no token fails at once.
        refused = getattr(self.ray.exceptions, "AuthenticationError", ConnectionError)
        try:
            self.ray.init(address=spec.address, num_cpus=cpus, include_dashboard=False,
                          logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError, SystemExit, refused) as exc:
            # SystemExit: ray.init exits when a GCS it was pointed at never answers
            where = spec.address or os.environ.get("RAY_ADDRESS") or "a local instance"
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise _error(f"--cluster {spec.text}: cannot connect to Ray ({where}): {first}",
                         "is the cluster running (ray status, on its head)? A cluster with token "
                         "authentication needs RAY_AUTH_MODE=token and its token in RAY_AUTH_TOKEN "
                         "(ray get-auth-token prints it on the head)") from None
        self.started = True

    def __enter__(self) -> RaySession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started:
            self.ray.shutdown()
            self.started = False

    def cpus(self) -> int:
        """The cluster's CPUs now (machines may join or leave later)."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def nodes(self) -> int:
        return sum(1 for n in self.ray.nodes() if n.get("Alive"))


def batch_size(remaining: int, cpus: int, seconds_per_game: float | None) -> int:
    """Games in the next task.

    Enough games for a task to take about TASK_SECONDS (so Ray's per-task cost is
    negligible: 64 games of a 2 ms game, one game of a search bot's 30 s game); one game
    while no game has been timed yet; at most MAX_BATCH (what a lost task costs) and at most
    a BATCHES_PER_CPU-th of the remaining games per CPU, so that batches shrink towards the
    end of a run and no CPU is left idle while another finishes a long one.
    """
    if seconds_per_game is None:
        return 1
    cap = max(1, min(MAX_BATCH, remaining // (cpus * BATCHES_PER_CPU)))
    return max(1, min(cap, int(TASK_SECONDS / max(seconds_per_game, 1e-6))))


# ================================================================== on a worker
_LOADED: dict[tuple[str, str | None], Ruleset] = {}  # per worker process: a ruleset is loaded once


def play_batch(plan: Any, source: str, digest: str, start: int, stop: int) -> dict[str, Any]:
    """Ray task: play games ``start`` … ``stop - 1`` of the plan; their records' lines, in order.

    ``source`` is the ruleset as this worker should load it (a bundled name, or an absolute
    path, which must exist on every machine). A ruleset whose digest differs from the
    driver's would play other games: it is refused, not played.
    """
    from .simfiles import record_line
    from .simulate import play_game  # not at import time: simulate uses this module

    where = f"{socket.gethostname()} (pid {os.getpid()})"
    key = (source, plan.setup)
    rs = _LOADED.get(key)
    if rs is None:
        try:
            rs = load_ruleset(source, setup=plan.setup)
        except LudusError as exc:
            return {"error": f"a worker on {where} cannot load {plan.ruleset}: "
                             f"{(str(exc).splitlines() or ['error'])[0]}"}
        _LOADED[key] = rs
    if rs.digest != digest:
        return {"error": f"a worker on {where} has another version of {plan.ruleset} "
                         f"(digest {rs.digest[:12]}, the driver's {digest[:12]})"}
    # As games.jsonl lines: the text is what the driver writes, and what it holds while a
    # batch waits for its turn (a third of the memory of the records as Python objects).
    began = time.perf_counter()
    lines = [record_line(play_game(rs, plan, i)) for i in range(start, stop)]
    return {"lines": lines, "seconds": time.perf_counter() - began, "where": where}


# ================================================================== on the driver
@dataclass
class StreamReport:
    """What a Ray run tells its summary: where it ran and what had to be rerun."""

    cpus: int = 0
    nodes: int = 0
    smallest: int = 0  # games per task, the least and the most
    largest: int = 0
    reruns: int = 0  # games played again because their worker died
    failures: list[str] = field(default_factory=list)  # one line per lost batch

    def describe(self) -> str:
        sizes = f"{self.smallest}" if self.smallest == self.largest else f"{self.smallest}-{self.largest}"
        return f"Ray: {self.cpus} CPU(s) on {self.nodes} node(s), {sizes} game(s) per task"


@contextmanager
def ray_stream(session: RaySession, rs: Ruleset, plan: Any, first: int,
               report: StreamReport) -> Iterator[Iterator[tuple[dict[str, Any], str | None]]]:
    """Games ``first`` … ``plan.games - 1`` played as Ray tasks: (record, games.jsonl line), in game order."""
    queue = _BatchQueue(session, rs, plan, first, report)
    try:
        yield queue.records()
    finally:
        queue.cancel()


class _BatchQueue:
    def __init__(self, session: RaySession, rs: Ruleset, plan: Any, first: int, report: StreamReport) -> None:
        self.session, self.plan, self.report = session, plan, report
        self.ray = session.ray
        # A folder on this machine: the workers get its absolute path (their working
        # folder is not the driver's); a bundled name is loaded from each node's install.
        self.source = str(Path(plan.ruleset).resolve()) if Path(plan.ruleset).exists() else plan.ruleset
        self.digest = rs.digest
        # Stored once in Ray's object store, not sent with every task (a --from position can be large).
        self.plan_ref = self.ray.put(plan)
        report.cpus, report.nodes = session.cpus(), session.nodes()
        self.cursor = first  # the first game not yet handed out
        self.retry: deque[tuple[int, int, int]] = deque()  # lost batches to send again: (start, stop, attempt)
        self.timed_games, self.timed_seconds = 0, 0.0  # what the games played so far cost
        self.pending: dict[Any, tuple[int, int, int]] = {}  # task -> (start, stop, attempt)
        self.done: dict[int, list[str]] = {}  # start -> the batch's lines, waiting for their turn
        self.next = first

    def _submit(self, start: int, stop: int, attempt: int) -> None:
        ref = self.session.remote.remote(self.plan_ref, self.source, self.digest, start, stop)
        self.pending[ref] = (start, stop, attempt)

    def _fill(self) -> None:
        while self.retry:  # a lost batch first: the games after it wait for it
            self._submit(*self.retry.popleft())
        # Keep every CPU busy, but do not run far ahead of the oldest unfinished batch: the
        # batches done out of order wait in memory (as text, ~2 KB a game) until it arrives.
        limit = self.report.cpus * IN_FLIGHT_PER_CPU
        ahead = limit * MAX_BATCH * 2  # games
        games = self.plan.games
        while self.cursor < games and len(self.pending) < limit and self.cursor < self.next + ahead:
            per_game = self.timed_seconds / self.timed_games if self.timed_games else None
            size = batch_size(games - self.cursor, self.report.cpus, per_game)
            stop = min(self.cursor + size, games)
            self._submit(self.cursor, stop, attempt=1)
            report = self.report
            report.smallest = min(report.smallest or size, stop - self.cursor)
            report.largest = max(report.largest, stop - self.cursor)
            self.cursor = stop

    def records(self) -> Iterator[tuple[dict[str, Any], str | None]]:
        while self.next < self.plan.games:
            if self.next in self.done:
                batch = self.done.pop(self.next)
                self.next += len(batch)
                for line in batch:
                    yield json.loads(line), line
                continue
            self._fill()
            # Wait for one batch, then take every other that is done too: one ray.wait per
            # result would cost the driver O(tasks in flight) each time on a large cluster.
            refs = list(self.pending)
            ready, rest = self.ray.wait(refs, num_returns=1)
            if rest:
                ready += self.ray.wait(rest, num_returns=len(rest), timeout=0)[0]
            for ref in ready:
                self._collect(ref)

    def _collect(self, ref: Any) -> None:
        start, stop, attempt = self.pending.pop(ref)
        exceptions = self.ray.exceptions
        try:
            result = self.ray.get(ref)
        except exceptions.RayTaskError as exc:  # a bug in the task itself: rerunning would not help
            raise _error(f"games {start}-{stop - 1} failed on a Ray worker: "
                         f"{(str(exc.cause) or type(exc.cause).__name__).splitlines()[0]}") from None
        except exceptions.RayError as exc:  # the worker, its node or its result was lost
            what = type(exc).__name__
            self.report.failures.append(f"games {start}-{stop - 1}: {what} (attempt {attempt})")
            if attempt >= MAX_ATTEMPTS:
                raise _error(f"games {start}-{stop - 1} were lost {attempt} times on Ray ({what})",
                             "see 'ray status' and the workers' logs (/tmp/ray/session_latest/logs)") from None
            self.report.reruns += stop - start
            self.retry.append((start, stop, attempt + 1))
            return
        if "error" in result:
            raise _error(result["error"], "install the same ludus and rulesets on every machine of the cluster")
        self.done[start] = result["lines"]
        self.timed_games += stop - start
        self.timed_seconds += result["seconds"]

    def cancel(self) -> None:
        """Stop what is still queued (an interrupted run, an error): the cluster is shared."""
        for ref in list(self.pending):
            with suppress(Exception):  # already finished or gone: nothing to stop
                self.ray.cancel(ref)
        self.pending.clear()
