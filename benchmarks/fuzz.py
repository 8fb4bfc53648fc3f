"""Mutation fuzzing of the bundled rulesets, measured: every mutant validated and, if it loads, played.

Each mutant (tests/security/fuzz.py: a seeded, reproducible mutation of one bundled ruleset) is
run through ``ludus validate`` and, if that passes, ``ludus play`` with random bots at its
smallest player count, each in a real process with a 20 s deadline and its own peak RSS. The
table counts, per ruleset, the mutants accepted, refused with a located error, refused without a
location, and the faults: tracebacks, hangs, memory over 500 MB. Every fault (and every refusal
without a location) is written to ``--out`` with its mutation, files, commands and output.

    python benchmarks/fuzz.py --mutations 2000 --seed 1 --workers 2 --out /tmp/fuzz
    python benchmarks/fuzz.py --mutations 300 --rulesets dice_race time_of_crisis
    python benchmarks/fuzz.py --mutations 600 --engine /tmp/ludus-head   # an exported commit

Not part of CI (tests/security/test_sec_fuzz.py runs a small seeded share of it).
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "security"))

import fuzz  # noqa: E402
import fuzzrun  # noqa: E402

_WORK: Path | None = None
_FORK = False


def _init(engine: str | None, cache: str, fork: bool) -> None:
    global _WORK, _FORK
    if engine:
        fuzz.use_engine(Path(engine))
        if fork:  # the forked children run this process's engine: the other checkout's
            sys.path.insert(0, str(fuzz.ENGINE))
    os.environ["LUDUS_CACHE"] = cache
    _WORK = Path(tempfile.mkdtemp(prefix="ludus-fuzz-"))
    _FORK = fork
    if fork:
        import interpreter.cli  # (imported once, before the children fork)

        assert Path(interpreter.cli.__file__).is_relative_to(fuzz.ENGINE), interpreter.cli.__file__


def _one(job: tuple[str, int, int]) -> fuzzrun.Result:
    ruleset, seed, index = job
    assert _WORK is not None
    return fuzzrun.run(fuzz.mutate(ruleset, seed, index), _WORK, fork=_FORK)


def _table(results: list[fuzzrun.Result], names: list[str]) -> list[str]:
    cols = fuzzrun.CLASSES
    rows = [f"{'ruleset':22}{'mutants':>8}" + "".join(f"{c:>11}" for c in cols) + f"{'located %':>11}"]
    for name in [*names, "all"]:
        mine = [r for r in results if name in ("all", r.ruleset)]
        if not mine:
            continue
        count = collections.Counter(r.cls for r in mine)
        refused = len(mine) - count["accepted"]
        share = f"{100 * count['located'] / refused:.1f}" if refused else "-"
        rows.append(f"{name:22}{len(mine):>8}" + "".join(f"{count[c]:>11}" for c in cols) + f"{share:>11}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutations", type=int, default=200, metavar="N", help="number of mutants (default 200)")
    ap.add_argument("--seed", type=int, default=1, metavar="S", help="run seed (default 1)")
    ap.add_argument("--rulesets", nargs="+", metavar="NAME", help="bundled rulesets to mutate (default: all)")
    ap.add_argument("--workers", type=int, default=2, metavar="W", help="parallel cases (default 2)")
    ap.add_argument("--out", metavar="DIR", help="write results.jsonl, summary.txt and every fault case to DIR")
    ap.add_argument("--engine", metavar="DIR", help="a checkout to fuzz instead of this one (its rulesets too)")
    ap.add_argument("--fork", action="store_true",
                    help="run each command in a forked child of a worker instead of a fresh interpreter (faster)")
    args = ap.parse_args()
    if args.engine:
        fuzz.use_engine(Path(args.engine))
    try:
        names = fuzz.bundled(args.rulesets)
    except ValueError as exc:
        print(f"fuzz: error: {exc}", file=sys.stderr)
        return 1
    jobs = [(names[i % len(names)], args.seed, i) for i in range(args.mutations)]
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="ludus-fuzz-cache-")
    start = time.perf_counter()
    results: list[fuzzrun.Result] = []
    with multiprocessing.Pool(args.workers, _init, (args.engine, cache, args.fork)) as pool:
        for n, r in enumerate(pool.imap(_one, jobs, chunksize=1), 1):
            results.append(r)
            if r.cls in fuzzrun.FAULTS:
                print(r.line()[:160], flush=True)
                if out:
                    fuzzrun.reproduce(fuzz.mutate(r.ruleset, r.seed, r.index), r, out)
            if n % 100 == 0:
                print(f"... {n}/{len(jobs)} in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start
    shutil.rmtree(cache, ignore_errors=True)
    lines = _table(results, names)
    unfinished = sum(r.unfinished for r in results)
    played = sum(r.phase == "play" for r in results)
    lines += [
        "",
        f"{len(results)} mutants (seed {args.seed}) in {elapsed:.0f} s with {args.workers} worker(s) "
        f"({'forked children' if args.fork else 'real processes'}); {played} loaded and were played "
        f"({unfinished} stopped at {fuzz.MAX_DECISIONS} decisions); slowest {max(r.seconds for r in results):.1f} s; "
        f"peak RSS {max(r.peak_mb for r in results):.0f} MB",
        f"CPU time of the ludus commands: {sum(r.cpu for r in results):.0f} s, "
        f"{sum(r.cpu for r in results) / len(results):.2f} s per mutant "
        f"(on an idle machine the run takes about that over the number of workers)",
        "located %: refusals (every class but accepted) that carry a path:line:col error",
    ]
    print("\n".join(lines))
    if out:
        (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        with open(out / "results.jsonl", "w", encoding="utf-8") as fh:
            for r in results:
                fh.write(json.dumps({"ruleset": r.ruleset, "index": r.index, "class": r.cls, "phase": r.phase,
                                     "seconds": round(r.seconds, 2), "cpu": round(r.cpu, 2), "peak_mb": round(r.peak_mb),
                                     "mutation": r.description, "output": r.output[-600:]}) + "\n")
    return 1 if any(r.cls in fuzzrun.FAULTS for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
