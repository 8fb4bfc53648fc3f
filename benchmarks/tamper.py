"""Measure how Ludus takes tampered logs and hostile scenarios, each in a real process.

    python benchmarks/tamper.py --logs 300 --scenarios 300 --seed 1 [--workers 2]

Case i of each kind is tests/security/tamper.py's ``tampered_log(seed, i)`` or
``hostile_scenario(seed, i)``, written to a folder of its own and given to ``python -m
interpreter`` (``replay`` or ``scenario``) from that folder, with a deadline of 20 s and its own
peak RSS read by ``os.wait4`` (tests/security/hostile.py). Prints, per kind and in all: cases,
accepted (exit 0), refused (exit 1), tracebacks, hangs (> 20 s), other exits, and the share of
refusals that carry an error at a line of the case's own file; then every faulty case, with the
numbers that rebuild it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "security"))

import tamper  # noqa: E402
from hostile import run_ludus  # noqa: E402

HANG_SECONDS = 20.0


def run_case(case: tamper.Case, root: Path) -> dict[str, object]:
    folder = root / f"{case.kind}-{case.index}"
    folder.mkdir()
    case.write(folder)
    o = run_ludus(case.argv, cwd=folder, seconds=HANG_SECONDS)
    timed_out = o.timed_out or o.seconds > HANG_SECONDS
    cls = tamper.judge(case, o.code, o.err, timed_out=timed_out)
    return {"kind": case.kind, "index": case.index, "description": case.description, "class": cls,
            "code": o.code, "seconds": o.seconds, "peak_mb": o.peak_mb, "err": o.err}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--logs", type=int, default=300, help="tampered logs (default 300)")
    p.add_argument("--scenarios", type=int, default=300, help="hostile scenarios (default 300)")
    p.add_argument("--seed", type=int, default=1, help="run seed (default 1)")
    p.add_argument("--workers", type=int, default=2, help="processes at a time (default 2)")
    args = p.parse_args(argv)
    if min(args.logs, args.scenarios) < 0 or args.workers < 1:
        p.error("counts must be 0 or more and --workers at least 1")
    cases = [tamper.tampered_log(args.seed, i) for i in range(args.logs)]
    cases += [tamper.hostile_scenario(args.seed, i) for i in range(args.scenarios)]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ludus-tamper-") as tmp, \
            ThreadPoolExecutor(args.workers) as pool:
        os.environ.setdefault("LUDUS_CACHE", str(Path(tmp) / "cache"))
        results = list(pool.map(lambda c: run_case(c, Path(tmp)), cases))
    seconds = time.perf_counter() - start
    print(f"benchmarks/tamper.py --logs {args.logs} --scenarios {args.scenarios} --seed {args.seed}: "
          f"{len(results)} cases in {seconds:.0f} s on {args.workers} worker(s)")
    header = f"{'':<10}{'cases':>7}{'accepted':>10}{'refused':>9}{'tracebacks':>12}{'hangs':>7}" \
             f"{'other':>7}{'located':>10}{'max s':>8}{'max MB':>8}"
    print(header)
    for kind in ("log", "scenario", "all"):
        rows = [r for r in results if kind in ("all", r["kind"])]
        if not rows:
            continue
        n = Counter(str(r["class"]) for r in rows)
        refused = n["located"] + n["unlocated"]
        share = f"{100 * n['located'] / refused:.1f}%" if refused else "-"
        print(f"{kind:<10}{len(rows):>7}{n['accepted']:>10}{refused:>9}{n['traceback']:>12}{n['hang']:>7}"
              f"{n['exit']:>7}{share:>10}{max(float(str(r['seconds'])) for r in rows):>8.1f}"
              f"{max(float(str(r['peak_mb'])) for r in rows):>8.0f}")
    bad = [r for r in results if r["class"] in tamper.FAULTS]
    for r in bad:
        print(f"\n{r['class']}: {r['kind']} {args.seed}/{r['index']} (exit {r['code']}) {r['description']}")
        print("  " + "\n  ".join(str(r["err"]).strip().splitlines()[-6:]))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
