"""`ludus simulate/compare --cluster ray` and `--resume`: the same files as the local pool, a
killed Ray worker's games rerun, an interrupted run continued, and the errors.

One local Ray instance with 2 CPUs serves the whole module (started once: it takes seconds);
the CLI uses it as a program's own connection (`--cluster ray`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from interpreter.cli import main
from interpreter.cluster import batch_size, parse_cluster
from interpreter.simulate import GAMES_CSV, GAMES_JSONL, RUN_JSON, SUMMARY_TXT

ROOT = Path(__file__).resolve().parent.parent
GAMES = 40
TOC = ["time_of_crisis", "--games", str(GAMES), "--bots", "random", "--seed", "11", "--no-plots", "--quiet"]
FILES = (GAMES_JSONL, GAMES_CSV, SUMMARY_TXT)


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def ray_instance():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> Path:
    """The reference: 40 games of Time of Crisis on the local pool (2 workers)."""
    out = tmp_path_factory.mktemp("local")
    assert main(["simulate", *TOC, "--workers", "2", "--out", str(out)]) == 0
    return out


def _simulate(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _same_files(a: Path, b: Path) -> None:
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def _batch_workers() -> list[int]:
    """Pids of the Ray workers playing a batch now: Ray titles a busy worker 'ray::TASK'."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::play_batch"):
                pids.append(int(entry.name))
    return pids


# ------------------------------------------------------------------ the same results
def test_ray_writes_the_files_of_the_local_pool(ray_instance, local_run, tmp_path, capsys):
    capsys.readouterr()
    code, text, _ = _simulate(capsys, *TOC, "--cluster", "ray", "--out", str(tmp_path))
    assert code == 0
    _same_files(local_run, tmp_path)
    assert len((tmp_path / GAMES_JSONL).read_text().splitlines()) == GAMES
    summary = (local_run / SUMMARY_TXT).read_text()
    assert summary.rstrip("\n") in text  # the printed summary too
    # the first task plays one game, later ones as many as the time per game allows: on a
    # loaded machine (a worker's first game, its ruleset loaded, over TASK_SECONDS) every one
    assert re.search(r"on Ray: 2 CPU\(s\) on 1 node\(s\), 1(-\d+)? game\(s\) per task", text)
    info = json.loads((tmp_path / RUN_JSON).read_text())
    assert info["complete"] and info["reruns"] == 0 and info["workers"] == 2 and info["cluster"].startswith("Ray")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the Ray workers in /proc")
def test_a_killed_worker_has_its_games_rerun(ray_instance, local_run, tmp_path, capsys):
    killed: list[int] = []
    done = threading.Event()

    def kill_one() -> None:  # from outside, as the OOM killer or a lost machine would
        while not done.is_set() and not killed:
            for pid in _batch_workers():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.01)

    killer = threading.Thread(target=kill_one)
    killer.start()
    try:
        code, text, err = _simulate(capsys, *TOC, "--cluster", "ray", "--out", str(tmp_path))
    finally:
        done.set()
        killer.join()
    assert killed, "no Ray worker was seen playing a batch"
    assert code == 0
    _same_files(local_run, tmp_path)  # every game, and the same games
    info = json.loads((tmp_path / RUN_JSON).read_text())
    assert info["reruns"] >= 1 and info["lost_tasks"]
    assert f"{info['reruns']} game(s) rerun after a Ray worker was lost" in text
    assert "were played again after a Ray worker was lost" in err
    assert "WorkerCrashedError" in err


# ------------------------------------------------------------------ --resume
def _interrupt(src: Path, dst: Path, keep: int) -> None:
    """A copy of a run cut after ``keep`` games and half a line, as a killed run leaves it."""
    dst.mkdir(parents=True)
    lines = (src / GAMES_JSONL).read_bytes().splitlines(keepends=True)
    (dst / GAMES_JSONL).write_bytes(b"".join(lines[:keep]) + lines[keep][: len(lines[keep]) // 2])
    (dst / GAMES_CSV).write_text("half of a csv\n")
    info = json.loads((src / RUN_JSON).read_text())
    (dst / RUN_JSON).write_text(json.dumps({"complete": False, "ruleset": info["ruleset"], "plan": info["plan"]}))


@pytest.mark.parametrize("where", [["--workers", "2"], ["--cluster", "ray"]], ids=["local", "ray"])
def test_resume_plays_only_the_missing_games(where, ray_instance, local_run, tmp_path, capsys):
    run = tmp_path / "run"
    _interrupt(local_run, run, 17)
    code, text, _ = _simulate(capsys, *TOC, *where, "--resume", str(run))
    assert code == 0
    _same_files(local_run, run)
    assert "23 games in" in text and "17 game(s) kept from the interrupted run" in text
    info = json.loads((run / RUN_JSON).read_text())
    assert (info["played"], info["resumed"], info["complete"]) == (23, 17, True)


def test_resuming_a_finished_run_plays_nothing(local_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(local_run, run)
    code, text, _ = _simulate(capsys, *TOC, "--workers", "1", "--resume", str(run))
    assert code == 0 and "0 games in" in text
    _same_files(local_run, run)


def test_resume_refuses_another_command(local_run, tmp_path, capsys):
    run = tmp_path / "run"
    _interrupt(local_run, run, 5)
    args = [a if a != "11" else "12" for a in TOC]  # --seed 12
    code, _, err = _simulate(capsys, *args, "--players", "3", "--resume", str(run))
    assert code == 1
    assert err.startswith(f"ludus: error: --resume {run}: this command asks for other games than the run in it:")
    assert "--players (the run: 4, now: 3)" in err and "--seed (the run: 11, now: 12)" in err
    assert "Traceback" not in err
    assert (run / GAMES_JSONL).stat().st_size > 0  # nothing was touched
    code, _, err = _simulate(capsys, *TOC, "--resume", str(tmp_path / "nowhere"))
    assert code == 1 and "no such folder" in err


def test_compare_resumes_both_runs(tmp_path, capsys):
    common = ["dice_race", "dice_race_short", "--games", "12", "--players", "2", "--workers", "1", "--no-plots",
              "--quiet"]
    full, cut = tmp_path / "full", tmp_path / "cut"
    assert main(["compare", *common, "--out", str(full)]) == 0
    for side, keep in (("base", 3), ("variant", 0)):
        _interrupt(full / side, cut / side, keep) if keep else shutil.copytree(full / side, cut / side)
    capsys.readouterr()
    assert main(["compare", *common, "--resume", str(cut)]) == 0
    assert "9 games in" in capsys.readouterr().out
    for side in ("base", "variant"):
        _same_files(full / side, cut / side)
    assert (full / "compare.txt").read_bytes() == (cut / "compare.txt").read_bytes()


# ------------------------------------------------------------------ errors and choices
def test_without_ray_the_error_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as without the extra
    code, _, err = _simulate(capsys, "dice_race", "--games", "2", "--cluster", "ray")
    assert code == 1
    assert err.strip() == ("ludus: error: --cluster needs Ray, which is not installed "
                           "(install Ray with: pip install 'ludus[cluster]')")


def test_an_unreachable_or_malformed_address_is_one_line(capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = _simulate(capsys, "dice_race", "--games", "2", "--cluster", f"ray://127.0.0.1:{port}")
    assert code == 1
    assert err.startswith(f"ludus: error: --cluster ray://127.0.0.1:{port}: cannot reach the Ray cluster at "
                          f"127.0.0.1:{port} (Connection refused)")
    assert "Traceback" not in err
    code, _, err = _simulate(capsys, "dice_race", "--games", "2", "--cluster", "spark://x:1")
    assert code == 1 and "--cluster spark://x:1: not a Ray address" in err


def test_the_addresses_and_the_batch_size():
    assert parse_cluster("ray").address is None
    assert parse_cluster("ray:auto").address == "auto"
    assert parse_cluster("ray:10.0.0.5:6379").address == "10.0.0.5:6379"
    assert parse_cluster("ray://head:10001").address == "ray://head:10001"
    assert batch_size(40, 2, None) == 1  # no game timed yet
    assert batch_size(40, 2, 0.1) == 5  # 20 games would take 2 s, but keep 4 batches per CPU
    assert batch_size(1_000_000, 256, 0.002) == 64  # at most 64
    assert batch_size(1_000_000, 256, 0.1) == 20  # about 2 s a task
    assert batch_size(1_000_000, 256, 30.0) == 1  # a search bot's game is a task
