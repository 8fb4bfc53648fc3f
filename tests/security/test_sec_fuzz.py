"""A small seeded share of the mutation fuzzer, over every bundled ruleset.

Each mutant (tests/security/fuzz.py) is validated and, if it loads, played with random bots, in a
forked child with the fuzzer's deadline (20 s) and memory limit (500 MB above this process). The
standard: no traceback, no hang, no memory blow-up, and every refusal carries a
``path:line:col: error:`` line (each mutation has a place in a file). A failure lists every
offending mutant with its mutation, the command to regenerate it and its output.

The large run is ``python benchmarks/fuzz.py --mutations 2000`` (real processes, 2 workers).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import fuzz
import fuzzrun
import pytest

SEED = 11
PER_RULESET = 20  # 120 mutants with six bundled rulesets: about a minute on an idle 2-core machine

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the fuzzer forks a child per command")


def _report(bad: list[fuzzrun.Result]) -> str:
    parts = []
    for r in bad:
        parts.append(f"{r.line()}\n  regenerate: fuzz.mutate({r.ruleset!r}, {r.seed}, {r.index})"
                     f" (then ludus validate / play the folder)\n  "
                     + "\n  ".join(r.output.strip().splitlines()[-8:]))
    return f"{len(bad)} mutant(s) failed:\n" + "\n".join(parts)


@pytest.mark.parametrize("ruleset", fuzz.bundled())
def test_mutants_are_refused_with_a_located_error_or_play(ruleset: str, tmp_path: Path) -> None:
    results = [fuzzrun.run(fuzz.mutate(ruleset, SEED, i), tmp_path, fork=True) for i in range(PER_RULESET)]
    bad = [r for r in results if r.cls in fuzzrun.FAULTS]
    assert not bad, _report(bad)
    # the share is not vacuous: mutants are refused, and some load and play
    assert any(r.cls == "located" for r in results)


def test_mutants_are_reproducible() -> None:
    names = fuzz.bundled()
    first = fuzz.mutants(SEED, 2 * len(names))
    again = fuzz.mutants(SEED, 2 * len(names))
    assert [(m.description, m.files) for m in first] == [(m.description, m.files) for m in again]
    assert {m.ruleset for m in first} == set(names)
    assert any(m.files != fuzz.source(m.ruleset).files for m in first)
    assert all(m.files != fuzz.source(m.ruleset).files for m in first)


def test_the_classes_are_told_apart() -> None:
    # the classes the suite asserts against must be reachable, or the test above proves nothing
    def phase(code: int, err: str, seconds: float = 0.1, peak: float = 30, timed_out: bool = False) -> fuzzrun.Phase:
        return fuzzrun.Phase(["validate"], code, "", err, seconds, peak, timed_out)

    cases = {
        "traceback": phase(1, "Traceback (most recent call last):\n  ..."),
        "hang": phase(-9, "", 21.0, timed_out=True),
        "memory": phase(1, "x.yaml:1:1: error: too big", peak=900),
        "unlocated": phase(1, "ludus: error: no ruleset 'x'"),
        "located": phase(1, "a/b.yaml:3:7: error: unknown name 'x'"),
        "accepted": phase(0, ""),
    }
    assert {cls: fuzzrun.classify(p) for cls, p in cases.items()} == {cls: cls for cls in cases}
    assert fuzzrun.classify(phase(-11, "")) == "traceback"  # killed by a signal


def test_the_forked_runner_catches_a_hang_and_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from interpreter import cli

    monkeypatch.setattr(cli, "main", lambda argv: time.sleep(30))
    hung = fuzzrun._forked(["validate", "x"], 1.0, None)
    assert hung.timed_out and fuzzrun.classify(hung) == "hang" and hung.seconds < 5

    def boom(argv: list[str]) -> int:
        raise RecursionError("deep")

    monkeypatch.setattr(cli, "main", boom)
    crashed = fuzzrun._forked(["validate", "x"], 5.0, None)
    assert fuzzrun.classify(crashed) == "traceback" and "RecursionError: deep" in crashed.err

    monkeypatch.setattr(cli, "main", lambda argv: len(b"x" * (700 << 20)) and 0)
    big = fuzzrun._forked(["validate", "x"], 60.0, None)
    assert fuzzrun.classify(big) == "memory", big
