"""A game you can pick up: a person at a real terminal, undo, save and quit, resume, a killed
process, and games started from a set-up or a position (docs/cli.md)."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from interpreter import load_ruleset
from interpreter.gamelog import kept_entries, read_log
from interpreter.simulate import make_plan, start_game

ROOT = Path(__file__).resolve().parents[1]
PROMPT = re.compile(rb"choice \((u = undo, )?h = help\)> $")
ANSI = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")  # the terminal seat's colours (rich)
KEY = re.compile(r"^\s+\[(\d+)\] ", re.M)
posix_only = pytest.mark.skipif(os.name != "posix", reason="needs a POSIX pseudo-terminal and signals")


class Terminal:
    """``ludus`` run on a pseudo-terminal, read up to each prompt, answered like a person."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        import pty

        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "interpreter", *args], cwd=cwd, stdin=slave,
                                     stdout=slave, stderr=subprocess.PIPE, close_fds=True)
        os.close(slave)
        self.text = b""
        self.held = b""

    def screen(self, seconds: float = 60) -> bytes:
        """The output up to the next prompt (or to the end); b'' once the program has ended."""
        start = len(self.text)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the program ended and closed the terminal
                    break
                if not chunk:
                    break
                chunk, self.held = self.held + chunk, b""
                esc = chunk.rfind(b"\x1b")
                if esc >= 0 and not ANSI.match(chunk, esc):  # a colour code cut in two: keep its start
                    chunk, self.held = chunk[:esc], chunk[esc:]
                self.text += ANSI.sub(b"", chunk)
                if PROMPT.search(self.text):
                    return self.text[start:]
            elif self.proc.poll() is not None:
                break
        return self.text[start:] if len(self.text) > start else b""

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def close(self) -> tuple[int, str]:
        code = self.proc.wait(timeout=60)
        os.close(self.master)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read().decode()


def _keys(screen: bytes) -> list[str]:
    return KEY.findall(screen.decode(errors="replace").replace("\r", ""))


def _menu(screen: bytes) -> str:
    """The status and the question as shown (the part a person reads before deciding)."""
    text = screen.decode(errors="replace").replace("\r", "")
    return text[text.rfind("\nred: "):] if "\nred: " in text else text


GAME = ["play", "time_of_crisis_short", "--players", "2", "--seed", "11", "--seat", "red=human"]


def _play_first_keys(term: Terminal, quit_after: int | None = None, detour: bool = False) -> dict[str, object]:
    """Answer every decision with its first key; with ``detour``, once: the second key, undo, then the first."""
    seen: dict[str, object] = {"decisions": 0, "undone": False, "status": False}
    screen = term.screen()
    while screen and PROMPT.search(screen):
        seen["status"] = seen["status"] or b"legacy" in screen
        keys = _keys(screen)
        assert keys, screen.decode(errors="replace")[-2000:]
        if quit_after is not None and seen["decisions"] == quit_after:
            term.type("q")
            term.screen()
            return seen
        if detour and not seen["undone"] and len(keys) > 1 and b"Your turn: play a card" in screen:
            before = _menu(screen)
            term.type(keys[1])
            after = term.screen()
            if PROMPT.search(after) and b"u = undo" in after:
                term.type("u")
                again = term.screen()
                assert b"undone: your last decision is taken back" in again
                assert _menu(again) == before  # the same status, question and choices as before the detour
                seen["undone"] = True
                screen = again
                continue
            screen = after  # no undo here (new information came): try again later
            continue
        term.type(keys[0])
        seen["decisions"] = int(seen["decisions"]) + 1  # type: ignore[call-overload]
        screen = term.screen()
    return seen


def _entries(path: Path) -> list[dict]:
    kept, _ = kept_entries(read_log(path), str(path))
    return [e for _, e in kept]


@posix_only
def test_a_person_at_a_terminal_undoes_saves_quits_and_resumes_to_the_same_game(tmp_path: Path) -> None:
    whole = Terminal([*GAME, "--log", "whole.jsonl"], tmp_path)
    plain = _play_first_keys(whole)
    code, err = whole.close()
    assert code == 0 and "Game over" in whole.text.decode(errors="replace"), err
    assert plain["status"]  # the status (legacy, influence, ...) was shown before decisions

    first = Terminal([*GAME, "--log", "game.jsonl"], tmp_path)
    seen = _play_first_keys(first, quit_after=40, detour=True)
    code, err = first.close()
    assert code == 0, err
    assert seen["undone"], "no decision could be undone"
    assert b"saved in game.jsonl; 'ludus play --resume game.jsonl' goes on from here" in first.text
    assert any(json.loads(line)["type"] == "undo" for line in (tmp_path / "game.jsonl").read_text().splitlines())

    saved = _entries(tmp_path / "game.jsonl")
    assert sum(1 for e in saved if e["type"] == "choice" and e["player"] == "red") == 40  # the undone one left out
    decided = sum(1 for e in saved if e["type"] == "choice")
    second = Terminal(["play", "--resume", "game.jsonl"], tmp_path)
    _play_first_keys(second)
    code, err = second.close()
    assert code == 0, err
    assert f"resumed from game.jsonl after {decided} decisions (red=human, blue=random)".encode() in second.text
    assert _entries(tmp_path / "game.jsonl") == _entries(tmp_path / "whole.jsonl")


@posix_only
def test_a_game_killed_mid_way_resumes_from_its_log_with_nothing_lost(tmp_path: Path) -> None:
    args = ["play", "time_of_crisis", "--players", "2", "--seed", "3", "--seat", "red=greedy", "--seat",
            "blue=greedy", "--quiet"]
    subprocess.run([sys.executable, "-m", "interpreter", *args, "--log", "whole.jsonl"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=300)
    proc = subprocess.Popen([sys.executable, "-m", "interpreter", *args, "--log", "game.jsonl"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = tmp_path / "game.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not log.exists() or log.read_text().count("\n") < 400):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    written = log.read_text().count('"type": "choice"')
    assert proc.returncode == -signal.SIGKILL and written >= 50
    assert '"type": "end"' not in log.read_text()  # it was killed mid-game
    resumed = subprocess.run([sys.executable, "-m", "interpreter", "play", "--resume", "game.jsonl", "--quiet"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"after {written} decisions" in resumed.stdout or "dropped an incomplete last line" in resumed.stdout
    assert _entries(log) == _entries(tmp_path / "whole.jsonl")


def test_every_simulated_game_of_a_set_up_starts_from_it() -> None:
    rs = load_ruleset("time_of_crisis", setup="260ad")
    plan = make_plan(rs, "time_of_crisis", 200, 4, "random")
    assert plan.setup == "260ad"
    for index in range(0, 200, 10):
        game = start_game(rs, plan, index)
        while game.ents["postumus"]["zone"] != "rivals":  # the 260 AD step runs after the starting provinces
            game.apply(0)
        first = game.glob["order"][0]
        assert game.ents["postumus"]["location"] == "gallia"
        assert game.ents[game.ents["italia"]["governor"]]["owner"] == first  # Gallienus is Emperor
        assert game.ents["postumus_event"]["zone"] == "events_out"


def test_every_simulated_game_from_a_scenario_starts_at_its_position(tmp_path: Path) -> None:
    from interpreter.start import position

    rs = load_ruleset("time_of_crisis")
    scenario = ROOT / "tests" / "scenarios" / "time_of_crisis" / "edge_setup_italia_support_two_players.yaml"
    state = position(rs, str(scenario))
    plan = make_plan(rs, "time_of_crisis", 200, None, "random", start=state)
    rngs = set()
    for index in range(200):
        game = start_game(rs, plan, index)
        mine = json.loads(game.to_json())
        rngs.add(mine.pop("rng"))
        assert mine.pop("seed") != state["seed"] or index == 0
        assert mine == {k: v for k, v in state.items() if k not in ("rng", "seed")}
    assert len(rngs) == 200  # each game draws its own dice from the position


def test_simulate_runs_from_a_set_up_and_from_a_scenario_and_says_so(tmp_path: Path) -> None:
    scenario = ROOT / "tests" / "scenarios" / "time_of_crisis" / "edge_setup_italia_support_two_players.yaml"
    for extra, start in ((["--setup", "260ad"], "start: set-up 260ad (260 AD"),
                         (["--from", str(scenario)], f"start: from {scenario}")):
        done = subprocess.run([sys.executable, "-m", "interpreter", "simulate", "time_of_crisis", *extra, "--games",
                               "200", "--no-plots", "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[1].startswith(start), lines[:3]
        assert "finished: 200 of 200" in done.stdout


def test_a_game_started_from_a_position_logs_it_and_replays(tmp_path: Path) -> None:
    from interpreter.gamelog import replay

    scenario = ROOT / "tests" / "scenarios" / "time_of_crisis" / "edge_setup_italia_support_two_players.yaml"
    done = subprocess.run([sys.executable, "-m", "interpreter", "play", "time_of_crisis", "--from", str(scenario),
                           "--seed", "4", "--quiet", "--log", "from.jsonl"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (tmp_path / "from.jsonl").read_text().splitlines()]
    assert lines[0]["from"] == str(scenario) and lines[1]["type"] == "state"
    assert replay(tmp_path / "from.jsonl").over


def test_a_game_goes_on_from_a_log_and_its_new_log_replays(tmp_path: Path) -> None:
    def ludus(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)

    assert ludus("play", "time_of_crisis", "--players", "2", "--seed", "5", "--log", "old.jsonl", "--quiet",
                 "--max-decisions", "60").returncode == 1  # stopped half-way
    old = (tmp_path / "old.jsonl").read_text().splitlines()
    for extra, name in (([], "same.jsonl"), (["--seed", "9"], "fresh.jsonl")):
        done = ludus("play", "time_of_crisis", "--from", "old.jsonl", *extra, "--log", name, "--quiet")
        assert done.returncode == 0, done.stderr
        new = (tmp_path / name).read_text().splitlines()
        if extra:  # fresh dice: a new log, beginning at the old game's last position
            assert json.loads(new[1])["type"] == "state" and json.loads(new[0])["seed"] == 9
        else:  # the old game itself goes on: its log is copied
            assert [json.loads(x) for x in new[1:len(old)]] == [json.loads(x) for x in old[1:]]
        assert ludus("replay", name).returncode == 0


def test_replay_to_shows_the_position_after_a_decision(tmp_path: Path) -> None:
    def ludus(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)

    assert ludus("play", "time_of_crisis", "--players", "2", "--seed", "5", "--log", "g.jsonl", "--quiet").returncode == 0
    shown = ludus("replay", "g.jsonl", "--to", "2")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("the position after decision 2 of time_of_crisis")
    assert "== the board ==" in shown.stdout and "== red ==" in shown.stdout and "legacy" in shown.stdout
    assert "waiting for red, blue: Choose card 1 of your starting hand" in shown.stdout
    state = json.loads(ludus("replay", "g.jsonl", "--to", "2", "--json").stdout)
    assert state["pending"]["type"] == "secret"
    (tmp_path / "two.json").write_text(json.dumps(state))
    assert ludus("play", "time_of_crisis", "--from", "two.json", "--quiet").returncode == 0  # a saved state
