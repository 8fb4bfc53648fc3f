"""The `board:` section (docs/board.md): checked at load, left out of the digest, drawn by
`ludus serve` from a seat's view; and the balance report pages (/report)."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from interpreter.cli import main
from interpreter.diagnostics import LudusError
from interpreter.loader import load_ruleset
from interpreter.web.app import build_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROOT = Path(__file__).resolve().parent.parent
RULESETS = ROOT / "rulesets"


@pytest.fixture
def client(tmp_path):
    app = build_app([], tmp_path / "logs", tmp_path / "results")
    (tmp_path / "results").mkdir()
    with TestClient(app) as c:
        c.app_state = app.state  # type: ignore[attr-defined]
        yield c


def start(client, form) -> tuple[str, object]:
    r = client.post("/new", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    url = r.headers["location"]
    return url, client.app_state.server.rooms.rooms[url.split("/")[2]]


def mentions(text: str, eid: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(eid)}(?![\w])", text) is not None


def test_the_map_is_drawn_where_the_board_section_puts_it(client):
    rs = load_ruleset("time_of_crisis")
    url, room = start(client, {"ruleset": "time_of_crisis", "players": "4", "seed": "3", "seat_red": "human",
                               "seat_blue": "random", "seat_yellow": "random", "seat_green": "random"})
    board = client.get("/api" + url).json()["board"]
    assert 'class="board data"' in board
    for eid, (x, y) in rs.board.at.items():  # every region at its point, with its name
        assert re.search(rf'data-value="{eid}"[^>]*><title>[^<]+</title><circle class="spot" cx="{x}" cy="{y}"', board), eid
    assert board.count('class="link link0"') >= 20 and 'class="link link1"' in board  # adjacency, empire dashed
    assert "support 0/8" in board  # Italia's detail
    assert board.count('class="track"') == 2 and ">Legacy<" in board
    assert board.count('class="mat"') == 4
    red_hand = room.game.zones["hand@red"]
    for _ in range(6):  # play until red holds cards
        if red_hand:
            break
        client.post(url + "/choose", data={"index": "0"})
        red_hand = room.game.zones["hand@red"]
        board = client.get("/api" + url).json()["board"]
    assert red_hand and all(mentions(board, c) for c in red_hand[:1])
    for seat in ("blue", "yellow", "green"):
        for eid in room.game.zones[f"hand@{seat}"] + room.game.zones[f"available@{seat}"]:
            assert not mentions(board, eid), f"red was sent {eid} of {seat}"
    for eid in room.game.zones["event_deck"]:
        assert not mentions(board, eid)


def test_rome_in_crisis_mats_areas_and_no_other_hand(client):
    url, room = start(client, {"ruleset": "rome_in_crisis", "players": "3", "seed": "5", "seat_artorius": "human",
                               "seat_brutus": "random", "seat_caesar": "random"})
    game = room.game
    for _ in range(40):
        if game.over:
            break
        board = client.get("/api" + url).json()["board"]
        assert "<svg" in board and ">Offices<" in board and ">Crises<" in board
        assert board.count('class="mat"') == 3 and ">Points<" in board
        assert "Emperor: " in board  # the offices' item text, a template of the office
        for eid in game.zones["hand@artorius"]:
            assert mentions(board, eid)
        for seat in ("brutus", "caesar"):
            for eid in game.zones[f"hand@{seat}"]:
                assert not mentions(board, eid), f"artorius was sent {eid} of {seat}'s hand"
        assert not any(mentions(board, eid) for eid in game.zones["deck"])
        client.post(url + "/choose", data={"index": "0"})


def test_a_ruleset_without_a_board_keeps_the_generic_view(client):
    url, _ = start(client, {"ruleset": "dice_race", "players": "2", "seed": "1", "seat_red": "human",
                            "seat_blue": "random"})
    data = client.get("/api" + url).json()
    assert data["board"] == "" and 'class="zones"' in data["lists"]


def _copy(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(RULESETS / name, folder)
    return folder


BAD_BOARD = """# yaml-language-server: $schema=../../schemas/rules.schema.json
board:
  source: DR 1
  players: {red: "#f00", purple: "#800"}
  tracks:
    position: {label: Position, value: p.positon, max: 30}
  mats:
    zones: [hnad]
    fields: [postion]
  areas:
    pile: {zone: dek, at: [10, 10]}
    far: {zone: deck, at: [5000, 10]}
"""


def test_a_bad_board_is_located_errors_with_suggestions(tmp_path):
    folder = _copy(tmp_path, "dice_race")
    (folder / "board.yaml").write_text(BAD_BOARD)
    manifest = folder / "ruleset.yaml"
    manifest.write_text(manifest.read_text().replace("  - rules.yaml", "  - rules.yaml\n  - board.yaml"))
    with pytest.raises(LudusError) as exc:
        load_ruleset(str(folder), cache=False)
    text = exc.value.render()
    for line, needle in ((4, "no seat 'purple'"), (6, "positon"), (8, "no zone 'hnad' per player"),
                         (9, "no field 'postion'"), (11, "no zone 'dek'"), (12, "outside the board")):
        assert re.search(rf"board\.yaml:{line}:\d+: error: [^\n]*{re.escape(needle)}", text), (needle, text)
    assert "did you mean 'hand'?" in text and "did you mean 'position'?" in text and "did you mean 'deck'?" in text


def test_the_digest_leaves_the_board_out(tmp_path):
    with_board = load_ruleset("rome_in_crisis", cache=False)
    folder = _copy(tmp_path, "rome_in_crisis")
    manifest = folder / "ruleset.yaml"
    manifest.write_text(manifest.read_text().replace("  - board.yaml\n", ""))
    without = load_ruleset(str(folder), cache=False)
    assert without.board is None and with_board.board is not None
    assert without.digest == with_board.digest
    board = (folder / "board.yaml")
    board.write_text(board.read_text().replace("label: Offices", "label: Magistracies"))
    manifest.write_text(manifest.read_text().replace("  - status.yaml", "  - status.yaml\n  - board.yaml"))
    changed = load_ruleset(str(folder), cache=False)
    assert changed.board.areas["offices"][5] == "Magistracies" and changed.digest == with_board.digest


@pytest.fixture
def results(tmp_path):
    """A folder with one run of dice_race (its games, summary, run.json, a plot)."""
    root = tmp_path / "results"
    run = root / "run1"
    assert main(["simulate", "dice_race", "--games", "3", "--players", "2", "--out", str(run), "--no-plots",
                 "--quiet", "--workers", "1"]) == 0
    (run / "scores.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really a plot")
    (tmp_path / "secret.png").write_bytes(b"\x89PNG secret")
    (run / "escape.png").symlink_to(tmp_path / "secret.png")
    return root


def test_the_report_pages_show_a_run_and_open_its_games(tmp_path, results):
    with TestClient(build_app([], tmp_path / "logs", results)) as c:
        index = c.get("/report")
        assert index.status_code == 200 and "/report/run?name=run1" in index.text
        page = c.get("/report/run?name=run1")
        assert page.status_code == 200
        assert (results / "run1" / "summary.txt").read_text().splitlines()[0].strip()[:20] in page.text
        assert 'src="/report/plot?name=run1&amp;plot=scores.png"' in page.text and "keeps no log" in page.text
        plot = c.get("/report/plot?name=run1&plot=scores.png")
        assert plot.status_code == 200 and plot.headers["content-type"] == "image/png"
        record = json.loads((results / "run1" / "games.jsonl").read_text().splitlines()[1])
        opened = c.post("/report/open", data={"name": "run1", "game": "1"})
        assert opened.status_code == 200 and "the end of the log" in opened.text
        assert f'of {record["decisions"]};' in opened.text  # the very game of the run, played again


@pytest.mark.parametrize("path", [
    "/report/run?name=../logs", "/report/run?name=/etc", "/report/run?name=run1/../../x", "/report/run?name=nope",
    "/report/plot?name=run1&plot=../summary.txt", "/report/plot?name=run1&plot=escape.png",
    "/report/plot?name=run1&plot=%2Fetc%2Fpasswd.png", "/report/plot?name=..&plot=secret.png",
])
def test_the_report_reads_nothing_outside_its_folder(tmp_path, results, path):
    with TestClient(build_app([], tmp_path / "logs", results)) as c:
        r = c.get(path)
    assert r.status_code == 404 and "secret" not in r.text and "Traceback" not in r.text


def test_without_a_results_folder_the_report_page_explains(tmp_path):
    with TestClient(build_app([], tmp_path / "logs")) as c:
        r = c.get("/report")
        assert r.status_code == 200 and "ludus serve --results" in r.text
        assert c.get("/report/run?name=run1").status_code == 404
