"""The `ludus` command line. Every user error is a located message and exit code 1."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .bots import BOT_KINDS
from .diagnostics import Diagnostic, Loc, LudusError, sorted_diagnostics
from .docsgen import reconstructed, render, where
from .gamelog import replay
from .loader import bundled_names, load_ruleset
from .odds import MAX_RUNS
from .play import INTERRUPTED, MAX_SEED
from .runtime import Game, IllegalChoice
from .scenario import run_scenario
from .simulate import MAX_GAMES, MAX_WORKERS


class _Parser(argparse.ArgumentParser):
    """argparse, but bad arguments exit with code 1 and a hint, like every other error."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"ludus: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(1)


def _whole(lo: int | None, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` to ``hi``, checked before any work starts.

    ``lo`` None: numbers below 1 are let through, for the command's own check and message.
    """
    def parse(text: str) -> int:
        digits = text[1:] if text[:1] in "+-" else text
        if not (digits.isascii() and digits.isdigit()):
            raise ValueError(text)  # argparse then says: invalid int value: TEXT
        # Length first: int() of thousands of digits is slow, and Python refuses more than 4300.
        if len(digits) > len(str(hi)) or int(text) > hi or (lo is not None and int(text) < lo):
            shown = text if len(text) <= 40 else f"{text[:20]}...({len(digits)} digits)"
            raise argparse.ArgumentTypeError(f"{shown} is out of range: give a whole number from {1 if lo is None else lo} to {hi}")
        value = int(text)
        return value
    parse.__name__ = "int"
    return parse


_COUNT = _whole(1, 1000)  # players: the ruleset says which counts it allows
_SEED = _whole(0, MAX_SEED)
_DECISIONS = _whole(1, 1_000_000_000)


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


# ------------------------------------------------------------------ validate
def cmd_validate(args: argparse.Namespace) -> int:
    failed = 0
    for spec in args.rulesets:
        try:
            rs = load_ruleset(spec)
        except LudusError as exc:
            _err(exc.render())
            _err(f"{spec}: {len(sorted_diagnostics(exc.diagnostics))} error(s)")  # as printed: no duplicates
            failed += 1
            continue
        setup_errors = 0
        for name in rs.setups:  # each set-up's patches must apply to the ruleset
            try:
                load_ruleset(spec, setup=name)
            except LudusError as exc:
                _err(exc.render())
                setup_errors += len(sorted_diagnostics(exc.diagnostics))
        if setup_errors:
            _err(f"{spec}: {setup_errors} error(s) in its set-ups")
            failed += 1
            continue
        n_recon = len(reconstructed(rs))
        named = sum(1 for name in rs.procedures if "." not in name)  # not those entities carry in a field
        setups = f", {len(rs.setups)} set-up{'s' if len(rs.setups) != 1 else ''}" if rs.setups else ""
        _out(f"{rs.name} {rs.version}: ok ({len(rs.entities)} entities, {named} procedures, "
             f"{len(rs.actions)} actions, {n_recon} reconstructed entries{setups})")
    return 1 if failed else 0


# ------------------------------------------------------------------ play
def cmd_play(args: argparse.Namespace) -> int:
    from .play import PlayOutput, new_table, resume_table, run_table

    io = PlayOutput(_out, _err, _write, args.quiet, args.dice)
    if sys.stdout.isatty():  # a person's seat in colour (rich); plain text into a file or a pipe
        from rich.console import Console

        io.styled = Console(highlight=False, soft_wrap=True)
    if args.resume:
        if args.ruleset or args.from_file or args.setup or args.players or args.seed is not None:
            raise LudusError([_arg_diag("--resume goes on with the game of the log, its ruleset and seed",
                                        "give only --resume LOG (and --seat NAME=KIND to change who plays)")])
        table = resume_table(args.resume, args.seat or [], _out)
    elif not args.ruleset:
        raise LudusError([_arg_diag("give the RULESET to play, or --resume LOG", "ludus play --help lists the bundled rulesets")])
    else:
        table = new_table(args.ruleset, args.setup, args.from_file, args.players, args.seat or [], args.seed, args.log,
                          _out)
    return run_table(table, io, sys.stdin, args.max_decisions)


def _arg_diag(message: str, hint: str = "") -> Diagnostic:
    return Diagnostic(Loc("ludus"), message, hint)


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# ------------------------------------------------------------------ replay / scenario
def cmd_replay(args: argparse.Namespace) -> int:
    from .play import prompt_of, score_table
    from .seat import readable_view, status_lines

    game = replay(args.log, args.ruleset, to=args.to)
    if args.json:
        _out(json.dumps(game.state, indent=1, ensure_ascii=False))
        return 0
    n = sum(1 for e in game.log if e["type"] == "choice")
    if args.to is not None:
        _out(f"the position after decision {n} of {game.rs.name}" + (" (the log has no more)" if n < args.to else ""))
        for line in readable_view(game, None):
            _out(line)
        for p in game.players:
            lines = status_lines(game, p)
            if lines:
                _out(f"== {game.label_of(p)} ==")
                for label, value in lines:
                    _out(f"  {label}: {value}")
        if game.pending:
            who = game.deciders()
            _out(f"\nwaiting for {', '.join(game.label_of(p) for p in who)}: {prompt_of(game, who[0])}")
        elif game.over:
            score_table(game, _out)
        return 0
    _out(f"replayed {n} choices of {game.rs.name}: the log reproduces exactly")
    if game.over:
        score_table(game, _out)
    else:
        _out(f"the game is not over; waiting for {', '.join(game.deciders())} "
             f"(ludus play --resume {args.log} goes on)")
    return 0


def _summary(game: Game) -> None:
    from .play import score_table

    for e in game.log:
        if e["type"] == "text":
            _out(e["text"])
        elif e["type"] == "dice":
            _out("  dice: " + " ".join(str(v) for v in e["values"]))
        elif e["type"] == "choice":
            _out(f"  {e['player']} > {e['label']}")
    _out("")
    _out("globals: " + json.dumps(game.glob, ensure_ascii=False))
    if game.over:
        score_table(game, _out)
    elif game.pending:
        pending: dict[str, Any] = game.pending
        asked: dict[str, Any] = next(iter(pending.get("players", {}).values()), {})
        prompt = pending.get("prompt") or asked.get("prompt", "")
        _out(f"pending: {prompt} for {', '.join(game.deciders())}")


def cmd_scenario(args: argparse.Namespace) -> int:
    run = run_scenario(args.file)
    if args.json:
        _out(json.dumps(run.game.state, indent=1, ensure_ascii=False))
    else:
        _summary(run.game)
    if run.failures:
        _err(f"{args.file}: {len(run.failures)} expectation(s) failed:")
        for f in run.failures:
            _err("  " + f)
        return 1
    return 0


# ------------------------------------------------------------------ docs / where
def cmd_docs(args: argparse.Namespace) -> int:
    rs = load_ruleset(args.ruleset)
    if args.reconstructed:
        rows = reconstructed(rs)
        for loc, sec, eid, note in rows:
            _out(f"{loc}: {sec}/{eid}: {note}")
        _out(f"{len(rows)} reconstructed entries")
        return 0
    page = render(rs, args.format)
    if args.output:
        try:
            Path(args.output).write_text(page, encoding="utf-8")
        except OSError as exc:
            raise LudusError([_arg_diag(f"cannot write --output {args.output}: {exc.strerror or exc}",
                                        "give a file in a folder that exists and you may write")]) from None
        _out(f"wrote {args.output}")
        return 0
    sys.stdout.write(page)
    return 0


def cmd_where(args: argparse.Namespace) -> int:
    specs = args.ruleset or bundled_names()
    found: dict[str, list[str]] = {}
    for spec in specs:
        rs = load_ruleset(spec)
        for line in where(rs, args.section):
            found.setdefault(line, []).append(rs.name)  # an overlay inherits its base's entries
    for line, names in found.items():
        _out(line if len(specs) == 1 else f"{line} [{', '.join(names)}]")
    if not found:
        _out(f"no entry cites section {args.section}")
    return 0


# ------------------------------------------------------------------ simulate / compare
def _show_progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate
    return simulate(args.ruleset, args.games, args.players, args.bots, args.rotate, args.workers, args.seed,
                    args.out, args.max_decisions, _show_progress(args), not args.no_plots, _out, _err,
                    args.from_file, args.setup, args.cluster, args.resume)


def cmd_compare(args: argparse.Namespace) -> int:
    from .simulate import compare
    return compare(args.base, args.variant, args.games, args.players, args.bots, args.rotate, args.workers,
                   args.seed, args.out, args.max_decisions, _show_progress(args), not args.no_plots, _out, _err,
                   args.from_file, args.setup, args.cluster, args.resume)


def _batch_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--games", type=_whole(None, MAX_GAMES), required=True, metavar="N",
                    help="number of games (per ruleset)")
    sp.add_argument("--players", type=_COUNT, metavar="N", help="number of players (default: the ruleset's maximum)")
    sp.add_argument("--bots", metavar="KIND[,KIND...]",
                    help=f"the bot of each seat, in seat order, or one kind for all ({', '.join(BOT_KINDS)}; "
                    "default random)")
    sp.add_argument("--rotate", action="store_true",
                    help="rotate the --bots list by one seat per game, so no bot keeps a seat's advantage")
    sp.add_argument("--workers", type=_whole(None, MAX_WORKERS), metavar="W",
                    help="worker processes (default: one per core); results do not depend on it")
    sp.add_argument("--seed", type=_SEED, default=1, metavar="S",
                    help="run seed (default 1): game i is seeded from (S, i), so a run is reproducible")
    sp.add_argument("--out", metavar="DIR", help="write games.jsonl, games.csv, summary.txt, run.json and PNG "
                    "plots to DIR")
    sp.add_argument("--max-decisions", type=_DECISIONS, default=100_000, metavar="N",
                    help="count a game as unfinished after N decisions (default 100000)")
    sp.add_argument("--no-plots", action="store_true", help="do not write the PNG plots")
    sp.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal)")
    sp.add_argument("--from", dest="from_file", metavar="FILE",
                    help="start every game from this position: a scenario (.yaml), a saved state (.json) or a log "
                    "(.jsonl); each game draws its own dice from there")
    sp.add_argument("--setup", metavar="NAME", help="start every game from the ruleset's named set-up NAME")
    sp.add_argument("--cluster", metavar="ray[:ADDRESS]",
                    help="play the games on Ray (pip install 'ludus[cluster]'): 'ray' starts a local instance "
                    "(or joins RAY_ADDRESS), 'ray:auto' joins this machine's, 'ray://HOST:10001' a cluster's head; "
                    "the results are the same")
    sp.add_argument("--resume", metavar="DIR",
                    help="go on with the interrupted run written to DIR (the same command): play only its "
                    "missing games")


# ------------------------------------------------------------------ odds
def cmd_odds(args: argparse.Namespace) -> int:
    from .odds import render as render_odds
    from .odds import run_odds, write_png
    from .simfiles import progress_bar

    with progress_bar(args.runs, _show_progress(args), "runs") as bar:
        report = run_odds(args.scenario, args.runs, args.seed, bar)
    _out(report.to_json() if args.json else render_odds(report))
    if args.png:
        try:
            write_png(report, Path(args.png))
        except OSError as exc:
            raise LudusError([_arg_diag(f"cannot write --png {args.png}: {exc.strerror or exc}",
                                        "give a file in a folder that exists and you may write")]) from None
        if not args.json:
            _out(f"\nwrote {args.png}")
    return 0


# ------------------------------------------------------------------ bench
def cmd_bench(args: argparse.Namespace) -> int:
    from . import bench

    settings = bench.Settings.make(quick=args.quick, games=args.games, repeat=args.repeat,
                                   ruleset=args.ruleset, players=args.players)
    progress = (lambda msg: _err(f"ludus bench: {msg}...")) if sys.stderr.isatty() and not args.json else None
    report = bench.run(settings, progress)
    if args.json:
        _out(bench.as_json(report))
    else:
        bench.render(report.as_dict())
    return 0


# ------------------------------------------------------------------ schema / new / lsp
def cmd_schema(args: argparse.Namespace) -> int:
    from .scaffold import schema_names, schema_text, write_schemas

    if args.write:
        for path in write_schemas(Path(args.write), [args.name] if args.name else None):
            _out(str(path))
    elif args.name:
        _out(schema_text(args.name).rstrip("\n"))
    else:
        for name in schema_names():
            _out(name)
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from .scaffold import new_ruleset

    folder = Path(args.folder)
    written = new_ruleset(folder, args.extends)
    what = f"an overlay on {args.extends}" if args.extends else "a new ruleset"
    _out(f"{folder}: {what}, {len(written)} files written")
    _out(f"next: ludus validate {folder} && ludus scenario {folder / 'scenarios' / 'first.yaml'}")
    return 0


def cmd_lsp(args: argparse.Namespace) -> int:
    try:
        from .lsp.server import serve
    except ImportError as exc:
        raise LudusError([_arg_diag(f"the language server needs pygls ({exc.name or exc} is not installed)",
                                    "install it with: pip install 'ludus[lsp]'")]) from None
    serve()
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from .web.app import serve
    except ImportError as exc:
        raise LudusError([_arg_diag(f"'ludus serve' needs Starlette and uvicorn ({exc.name or exc} is not installed)",
                                    "install them with: pip install 'ludus[web]'")]) from None
    import socket

    # Whether the port is free, before anything is loaded: a clear message rather than uvicorn's.
    try:
        infos = socket.getaddrinfo(args.host, args.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise LudusError([_arg_diag(f"cannot listen on --host {args.host[:80]}: {exc}",
                                    "give an address of this machine, e.g. 127.0.0.1 or 0.0.0.0")]) from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise LudusError([_arg_diag(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
                                        "the port is taken (another ludus serve?): give another with --port")]) \
                from None
    for spec in args.rulesets:
        load_ruleset(spec)  # a bad ruleset on the command line is an error now, not a page later
    logs = Path(args.logs)
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LudusError([_arg_diag(f"cannot make the logs folder {args.logs}: {exc.strerror or exc}")]) from None
    results = Path(args.results) if args.results else None
    if results is not None and not results.is_dir():
        raise LudusError([_arg_diag(f"--results {args.results}: no such folder",
                                    "give the folder holding 'ludus simulate --out' result folders")])
    shown = "localhost" if args.host in ("127.0.0.1", "::1") else args.host
    _out(f"ludus serve: open http://{shown}:{args.port}/ in your browser (Ctrl-C stops; games are logged in {logs})")
    serve(args.rulesets, args.host, args.port, logs, results)
    return 0


# ------------------------------------------------------------------ parser
def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ludus", description="Ludus: a declarative rules interpreter for historical board games. "
                "RULESET is a folder holding ruleset.yaml or the name of a bundled ruleset "
                f"({', '.join(bundled_names()) or 'none found'}).")
    p.add_argument("--version", action="version", version=f"ludus {__version__}")
    p.add_argument("--no-cache", action="store_true",
                   help="do not use the load cache (same as LUDUS_CACHE=off; see docs/architecture.md)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    v = sub.add_parser("validate", help="check rulesets and report every error with its location",
                       description="Load and check each ruleset: YAML, schema, references and rules language. "
                       "Prints one summary line per valid ruleset; errors go to stderr as file:line:col.")
    v.add_argument("rulesets", nargs="+", metavar="RULESET")
    v.set_defaults(func=cmd_validate)

    pl = sub.add_parser("play", help="play a game, bots in every seat unless --seat NAME=human",
                        description="Play a game to its end. Seats are bots (random) unless set with --seat; "
                        "a human seat sees his status and the legal choices, and may undo, save and quit. "
                        "Narrates the game and ends with the final score table. With --log the log is written "
                        "after every decision, and --resume LOG goes on with it later. See docs/cli.md.")
    pl.add_argument("ruleset", nargs="?", metavar="RULESET")
    pl.add_argument("--players", type=_COUNT, help="number of players (default: the ruleset's maximum)")
    pl.add_argument("--seed", type=_SEED,
                    help="random seed, 0 to 2^64-1 (default 1; with a human seat, fresh dice after each of his "
                    "decisions); same seed and choices, same game")
    pl.add_argument("--seat", action="append", metavar="NAME=KIND",
                    help=f"who plays a seat: human or a bot ({', '.join(BOT_KINDS)}); repeatable")
    pl.add_argument("--log", metavar="FILE", help="write the game log (JSON Lines) to FILE, after every decision")
    pl.add_argument("--resume", metavar="LOG", help="go on with the unfinished game of LOG (written with --log), "
                    "appending to it; the seats play as before unless --seat says otherwise")
    pl.add_argument("--from", dest="from_file", metavar="FILE",
                    help="start from a position: a scenario (.yaml: its position and steps), a saved state "
                    "(.json) or a log (.jsonl: replayed, then played on)")
    pl.add_argument("--setup", metavar="NAME", help="start from one of the ruleset's named set-ups (see ludus docs)")
    pl.add_argument("--quiet", action="store_true", help="print only the final score table")
    pl.add_argument("--dice", action="store_true",
                    help="also print every roll as the engine made it (the rules narrate the rolls that matter)")
    pl.add_argument("--max-decisions", type=_DECISIONS, default=100_000, help="stop a game that runs longer (default 100000)")
    pl.set_defaults(func=cmd_play)

    r = sub.add_parser("replay", help="re-run a saved log and check it reproduces exactly",
                       description="Re-run a game log and check that the rules still produce every die, line and "
                       "result it recorded; prints the final result.")
    r.add_argument("log", metavar="LOG")
    r.add_argument("--ruleset", help="ruleset to replay with (default: the one named in the log)")
    r.add_argument("--json", action="store_true", help="print the final state as JSON")
    r.add_argument("--to", type=_whole(0, 1_000_000_000), metavar="N",
                   help="stop after decision N and show the position (with --json: as JSON)")
    r.set_defaults(func=cmd_replay)

    from .report import add_parser as add_report  # its own module: the command is mostly its code

    add_report(sub, _whole)

    s = sub.add_parser("scenario", help="run a scenario file and check its expectations",
                       description="Run a scenario (a position, choices with forced dice, expectations); prints the "
                       "resulting state. Exit 1 with a readable difference if an expectation fails.")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--json", action="store_true", help="print the final state as JSON")
    s.set_defaults(func=cmd_scenario)

    d = sub.add_parser("docs", help="print a reference of a ruleset generated from its data",
                       description="Print a Markdown reference of the ruleset: each entry with its source, "
                       "and the list of reconstructed entries.")
    d.add_argument("ruleset", metavar="RULESET")
    d.add_argument("--reconstructed", action="store_true", help="list only the reconstructed entries")
    d.add_argument("--format", choices=("md", "html"), default="md",
                   help="md: GitHub Markdown (default); html: one self-contained page")
    d.add_argument("--output", metavar="FILE", help="write the page to FILE instead of printing it")
    d.set_defaults(func=cmd_docs)

    w = sub.add_parser("where", help="find the entries that implement a rulebook section",
                       description="List every ruleset entry whose source cites SECTION (or a subsection), e.g. "
                       "'ludus where 6.3.2' or 'ludus where \"ToC 6.3\"'.")
    w.add_argument("section", metavar="SECTION")
    w.add_argument("--ruleset", action="append", help="search only this ruleset (repeatable; default: all bundled)")
    w.set_defaults(func=cmd_where)

    od = sub.add_parser("odds", help="play a scenario's position many times with fresh dice and count its outcomes",
                        description="The battle calculator: set up the scenario's position, make its steps' choices "
                        "with fresh dice (its forced dice left out) RUNS times, and report each outcome its 'odds:' "
                        "section names: rates with 95%% Wilson intervals, numbers as distributions. See docs/odds.md.")
    od.add_argument("scenario", metavar="SCENARIO")
    od.add_argument("--runs", type=_whole(1, MAX_RUNS), default=1000, metavar="N", help="runs (default 1000)")
    od.add_argument("--seed", type=_SEED, default=1, metavar="S", help="seed of the runs' dice (default 1)")
    od.add_argument("--json", action="store_true", help="print the figures as JSON")
    od.add_argument("--png", metavar="FILE", help="also draw the outcomes as a bar chart")
    od.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal)")
    od.set_defaults(func=cmd_odds)

    sm = sub.add_parser("simulate", help="play many bot games; summary table, per-game JSONL/CSV and plots",
                        description="Play N complete games with bots in every seat on a pool of worker processes. "
                        "Prints how games ended, game length, win rate by seat and by bot with 95% Wilson "
                        "intervals, mean scores and the ruleset's metrics. With --out, writes the per-game "
                        "results (JSON Lines and CSV), the summary and PNG plots. See docs/simulate.md.")
    sm.add_argument("ruleset", metavar="RULESET")
    _batch_options(sm)
    sm.set_defaults(func=cmd_simulate)

    cp = sub.add_parser("compare", help="play the same bot games on two rulesets and test the differences",
                        description="Simulate BASE and VARIANT with the same seeds and bots, and print their "
                        "means and rates side by side, flagging significant differences (Welch's t-test for "
                        "means, two-proportion z-test for rates, alpha 0.05). See docs/simulate.md.")
    cp.add_argument("base", metavar="BASE")
    cp.add_argument("variant", metavar="VARIANT")
    _batch_options(cp)
    cp.set_defaults(func=cmd_compare)

    b = sub.add_parser("bench", help="measure load time, games per second and interpreted vs hand-written speed",
                       description="Measure, in one run on this machine: loading and checking the ruleset (cold "
                       "and with the load cache, in fresh processes), complete games per second and decisions per "
                       "second with random bots on one core, and the time of the interpreted rules divided by a "
                       "hand-written Python reference (from the source checkout's benchmarks/). Each figure is "
                       "shown against its target. See docs/bench.md.")
    b.add_argument("ruleset", nargs="?", metavar="RULESET",
                   help="the ruleset to measure (default: the one the hand-written references are for)")
    b.add_argument("--players", type=_COUNT, metavar="N", help="players in the timed games (default: the maximum)")
    b.add_argument("--games", type=_whole(1, 100_000), metavar="N", help="complete games to time (default 20; 1 with --quick)")
    b.add_argument("--repeat", type=_whole(1, 10_000), metavar="N",
                   help="timings per position for the ratios (default 15; 3 with --quick)")
    b.add_argument("--quick", action="store_true", help="a fast, rough run (a few seconds)")
    b.add_argument("--json", action="store_true", help="print the figures as JSON")
    b.set_defaults(func=cmd_bench)

    sc = sub.add_parser("schema", help="print or write the JSON Schemas of ruleset, scenario, state and log files",
                        description="With no NAME, list the schemas; with NAME, print that schema; with --write DIR, "
                        "write them (all, or NAME) into DIR, for an editor's YAML language server. See docs/editor.md.")
    sc.add_argument("name", nargs="?", metavar="NAME")
    sc.add_argument("--write", metavar="DIR", help="write the schemas into DIR (made if missing)")
    sc.set_defaults(func=cmd_schema)

    nw = sub.add_parser("new", help="make a new ruleset (or an overlay) that validates and runs at once",
                        description="Write a small working ruleset into FOLDER (new or empty): ruleset.yaml, "
                        "rules.yaml, README.md, a scenario, and the JSON Schemas the files' modelines point at. "
                        "With --extends NAME, an overlay on that ruleset instead. See docs/editor.md.")
    nw.add_argument("folder", metavar="RULESET_DIR")
    nw.add_argument("--extends", metavar="RULESET", help="make an overlay on this ruleset (a name or a folder)")
    nw.set_defaults(func=cmd_new)

    ls = sub.add_parser("lsp", help="run the language server for ruleset files (over stdio; needs ludus[lsp])",
                        description="A Language Server Protocol server on stdin/stdout: diagnostics as you type, "
                        "hover, go to definition, references, completion and quick fixes in ruleset files. "
                        "Started by an editor, not by hand. See docs/editor.md.")
    ls.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default and only transport)")
    ls.set_defaults(func=cmd_lsp)

    sv = sub.add_parser("serve", help="play, watch and replay games on a board in your browser (needs ludus[web])",
                        description="Start a local web app: the bundled rulesets and those named here, a form to "
                        "start a game with people and bots in its seats, each person's page (his board, status, "
                        "choices, undo and narration: only what his seat may see), and a replay of any log. "
                        "Each game's log is written to --logs after every decision, so a reloaded page or a "
                        "restarted server goes on with it. See docs/serve.md.")
    sv.add_argument("rulesets", nargs="*", metavar="RULESET", help="more rulesets to offer (names or folders)")
    sv.add_argument("--port", type=_whole(1, 65535), default=8000, help="the port to listen on (default 8000)")
    sv.add_argument("--host", default="127.0.0.1",
                    help="the address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: the local "
                    "network, for players on other computers)")
    sv.add_argument("--logs", metavar="DIR", default="ludus-games",
                    help="the folder of the games' logs (default ./ludus-games, made if missing)")
    sv.add_argument("--results", metavar="DIR", default=None,
                    help="a folder of 'ludus simulate/compare --out' results, shown as balance reports on /report")
    sv.set_defaults(func=cmd_serve)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.no_cache:
        os.environ["LUDUS_CACHE"] = "off"  # worker processes inherit it
    try:
        return int(args.func(args))
    except LudusError as exc:
        _err(exc.render())
        return 1
    except IllegalChoice as exc:
        _err(f"ludus: error: illegal choice: {exc.reason}")
        return 1
    except KeyboardInterrupt:
        _err("interrupted")
        return INTERRUPTED
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

