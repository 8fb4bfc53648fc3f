"""How long `ludus lsp` takes to answer a one-character edit in a Time of Crisis file with diagnostics.

    python benchmarks/lsp_latency.py [--edits N] [--transcript]

Copies rulesets/time_of_crisis into a temporary folder, starts `ludus lsp` over stdio with the
test suite's client (tests/lspclient.py, pygls' LanguageClient), opens senate.yaml and waits for
its first diagnostics (the cold check; the load cache is warmed first by `ludus validate`, as an
author's machine has it). Then it types N one-character edits in a rule of that file (the '1'
of 'actor.senate >= 1' in place_governor becomes 'x', an unknown name, then '1' again) and
times each from sending didChange to receiving the publishDiagnostics that answers it (the
server's debounce included). Prints the median, 90th percentile and worst, the server's own
time per check (from its log), and with --transcript a readable log of the exchange.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from lspclient import Session, find  # noqa: E402


async def measure(root: Path, edits: int, transcript: bool) -> list[float]:
    senate = root / "time_of_crisis" / "senate.yaml"
    text = senate.read_text()
    line, col = find(text, "actor.senate >= 1 and count(governors")
    col += len("actor.senate >= ")  # the '1'
    say = print if transcript else (lambda *a: None)
    s = Session(root)
    t0 = time.perf_counter()
    await s.start()
    say(f"-> initialize, initialized                      ({(time.perf_counter() - t0) * 1000:.0f} ms)")
    t0 = time.perf_counter()
    uri = s.open(senate)
    await s.wait_for(lambda: uri in s.diagnostics)
    say(f"-> didOpen senate.yaml\n<- publishDiagnostics senate.yaml: {len(s.diagnostics[uri])} diagnostics"
        f"   ({(time.perf_counter() - t0) * 1000:.0f} ms, first check)")
    times = []
    for i in range(edits):
        new = "x" if i % 2 == 0 else "1"
        old_len = 1
        start = time.perf_counter()
        s.edit(senate, line, col, col + old_len, new)
        want_error = new == "x"
        await s.wait_for(lambda w=want_error: bool(s.diagnostics.get(uri)) == w)
        times.append(time.perf_counter() - start)
        if i < 2:
            say(f"-> didChange senate.yaml {line + 1}:{col + 1} '{'1' if want_error else 'x'}' -> '{new}'")
            for d in s.diagnostics[uri]:
                say(f"<- publishDiagnostics senate.yaml {d.range.start.line + 1}:{d.range.start.character + 1}-"
                    f"{d.range.end.line + 1}:{d.range.end.character + 1} error: {d.message}")
            if not s.diagnostics[uri]:
                say("<- publishDiagnostics senate.yaml: (none)")
            say(f"   ({times[-1] * 1000:.0f} ms)")
    hover = await s.hover(senate, *find(text, "place_governor:"))
    if hover is not None:
        say("-> hover senate.yaml on 'place_governor'\n<- " + hover.contents.value.replace("\n\n", "\n   "))
    server_ms = [float(m.rsplit(" in ", 1)[1].split()[0]) for m in s.logs if m.startswith("checked ")]
    print(f"the server's own time per check (its log): median {statistics.median(server_ms[3:]):.0f} ms")
    await s.stop()
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=40)
    ap.add_argument("--transcript", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(ROOT / "rulesets" / "time_of_crisis", root / "time_of_crisis")
        os.environ["LUDUS_CACHE"] = str(root / "cache")
        subprocess.run([sys.executable, "-m", "interpreter", "validate", str(root / "time_of_crisis")], check=True,
                       capture_output=True)
        times = asyncio.run(measure(root, args.edits, args.transcript))
    ms = sorted(t * 1000 for t in times[2:])  # the first two warm the server's parse memo
    print(f"{len(ms)} one-character edits: median {statistics.median(ms):.0f} ms, "
          f"90th percentile {ms[int(len(ms) * 0.9) - 1]:.0f} ms, worst {ms[-1]:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
