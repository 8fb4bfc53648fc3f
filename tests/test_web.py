"""`ludus serve` through Starlette's TestClient: pages, what each seat is sent, undo, resume,
replay, errors. The real browser is tests/test_web_browser.py."""

from __future__ import annotations

import re
import socket
import sys
import warnings

import pytest

with warnings.catch_warnings():  # Starlette 1 prefers httpx2 for its TestClient; httpx works the same
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from interpreter.cli import main
from interpreter.gamelog import replay
from interpreter.web.app import build_app
from interpreter.web.board import place_graph
from interpreter.web.replays import EVERY, load_replay

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

RED_AND_BLUE = {"ruleset": "time_of_crisis", "players": "4", "seed": "3", "seat_red": "human",
                "seat_blue": "human", "seat_yellow": "random", "seat_green": "random"}
RED_AND_BOTS = {"ruleset": "time_of_crisis", "players": "4", "seat_red": "human", "seat_blue": "random",
                "seat_yellow": "random", "seat_green": "random"}


@pytest.fixture
def client(tmp_path):
    app = build_app([], tmp_path / "logs")
    with TestClient(app) as c:
        c.app_state = app.state  # type: ignore[attr-defined]
        yield c


def start(client, form) -> str:
    r = client.post("/new", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    return r.headers["location"]


def room_of(client, url):
    gid = url.split("/")[2]
    return client.app_state.server.rooms.rooms[gid]


def mentions(text: str, eid: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(eid)}(?![\w])", text) is not None


def test_the_index_lists_the_rulesets_with_a_form_each(client):
    r = client.get("/")
    assert r.status_code == 200
    for title in ("Time of Crisis (2nd edition)", "Dice Race", "Rome in Crisis"):
        assert title in r.text
    assert 'name="seat_red"' in r.text and 'name="seat_umpire"' in r.text  # Empire in Crisis has an umpire
    assert "<script src=\"/static/ludus.js\">" in r.text and "http" not in r.text.split("<body", 1)[1].lower()


def test_a_game_starts_on_reds_decision_with_the_board_drawn(client):
    url = start(client, {**RED_AND_BOTS, "seed": "3"})
    assert re.fullmatch(r"/game/[a-z0-9]{12}/red/[A-Za-z0-9_-]{32}", url)  # red's address, his key in it
    page = client.get(url)
    assert page.status_code == 200
    assert "<svg" in page.text and 'class="place' in page.text
    data = client.get("/api" + url).json()
    assert data["deciding"] is True
    assert "Choose your starting province" in data["decision"]
    # a choice about a place carries its id, and the place on the board carries it too
    assert 'data-values="gallia"' in data["decision"] and 'data-value="gallia"' in data["board"]


def test_red_is_never_sent_another_hand_the_deck_or_the_seed(client):
    url = start(client, RED_AND_BOTS)  # no seed: fresh dice, a random seed the page must not show
    room = room_of(client, url)
    game = room.game
    checked_hands = 0
    for _ in range(30):
        if game.over:
            break
        sent = client.get(url).text + client.get("/api" + url).text
        secrets_ = [f"{z}@{p}" for p in ("blue", "yellow", "green") for z in ("hand", "available", "discard")]
        for key in secrets_:
            for eid in game.zones[key]:
                assert not mentions(sent, eid), f"red was sent {eid} of {key}"
                checked_hands += 1
        for eid in game.zones["event_deck"]:
            assert not mentions(sent, eid), f"red was sent {eid} of the deck"
        assert '"rng"' not in sent and "rng" not in sent
        assert str(game.state["seed"]) not in sent and str(game.state["rng"]) not in sent
        choices = game.choices("red")
        r = client.post(url + "/choose", data={"index": str(len(choices) - 1), "version": str(room.version)})
        assert r.status_code == 200  # followed the redirect back to the page
    assert checked_hands > 20


def test_another_seats_secret_choice_is_not_sent(client):
    form = {"ruleset": "rome_in_crisis", "players": "3", "seed": "5", "seat_artorius": "human",
            "seat_brutus": "random", "seat_caesar": "random"}
    url = start(client, form)
    room = room_of(client, url)
    game = room.game
    seen_secret = 0
    for _ in range(200):
        if game.over:
            break
        pending = game.pending or {}
        if pending.get("type") == "secret" and "artorius" in game.deciders():
            sent = client.get("/api" + url).text
            view = game.view("artorius")
            visible = {e for items in view["zones"].values() if isinstance(items, list) for e in items}
            for who, value in pending["answers"].items():
                if who != "artorius" and isinstance(value, str) and value not in visible:
                    assert not mentions(sent, value), f"artorius was sent {who}'s secret answer {value}"
                    seen_secret += 1
        client.post(url + "/choose", data={"index": "0"})
    assert seen_secret > 0


def test_undo_takes_back_reds_decision(client):
    url = start(client, {**RED_AND_BOTS, "seed": "3"})
    room = room_of(client, url)
    for _ in range(40):
        before = (client.get("/api" + url).json()["decision"], room.version)
        choices = room.game.choices("red")
        client.post(url + "/choose", data={"index": str(len(choices) - 1)})
        if not room.undo_problem("red"):
            break
    else:
        pytest.fail("red never had a decision to take back")
    r = client.post(url + "/undo", headers={"Accept": "application/json"})
    assert r.status_code == 200 and r.json()["ok"]
    after = client.get("/api" + url).json()
    assert "undone: your last decision is taken back" in after["decision"]
    assert re.findall(r"<button[^>]*class=\"choice\"[^>]*>[^<]*", after["decision"]) == \
        re.findall(r"<button[^>]*class=\"choice\"[^>]*>[^<]*", before[0].replace(f'value="{before[1]}"', ""))
    # nothing more to take back: refused with a reason, as JSON 409 or a note on the page
    r = client.post(url + "/undo", headers={"Accept": "application/json"})
    assert r.status_code == 409 and "cannot undo" in r.json()["error"]
    assert "cannot undo" in client.post(url + "/undo").text


def test_a_restarted_server_resumes_the_game_from_its_log(client, tmp_path):
    url = start(client, {**RED_AND_BOTS, "seed": "3"})
    for _ in range(3):
        client.post(url + "/choose", data={"index": "0"})
    before = client.get("/api" + url).json()
    app2 = build_app([], tmp_path / "logs")  # a new server on the same logs folder
    with TestClient(app2) as c2:
        after = c2.get("/api" + url).json()
    strip = re.compile(r'name="version" value="\d+"')
    assert strip.sub("", after["decision"]) == strip.sub("", before["decision"])
    assert after["board"] == before["board"] and after["log"] == before["log"]


@pytest.mark.parametrize("method,path,form,status", [
    ("post", "/new", {"ruleset": "no_such_game"}, 400),
    ("post", "/new", {"ruleset": "../../etc"}, 400),
    ("post", "/new", {"ruleset": "dice_race", "players": "9"}, 400),
    ("post", "/new", {"ruleset": "dice_race", "seat_red": "wizard"}, 400),
    ("post", "/new", {"ruleset": "dice_race", "seed": "x" * 5000}, 400),
    ("get", "/game/nosuchgame12/red", None, 404),
    ("get", "/game/nosuchgame12/red/" + "k" * 32, None, 404),
    ("get", "/game/../../etc/red", None, 404),
    ("get", "/replay/open?log=../secret.jsonl", None, 400),
    ("get", "/replay/abcdefabcdef", None, 404),
    ("get", "/nowhere", None, 404),
])
def test_bad_requests_are_clear_4xx_pages(client, method, path, form, status):
    r = client.request(method.upper(), path, data=form)
    assert r.status_code == status
    assert "Traceback" not in r.text and "<pre>" in r.text or "no such page" in r.text


def test_a_bad_seat_or_choice_is_a_4xx(client):
    url = start(client, {**RED_AND_BOTS, "seed": "3"})
    gid = url.split("/")[2]
    assert client.get(f"/game/{gid}/purple").status_code == 404
    assert client.post(f"/game/{gid}/blue/choose", data={"index": "0"}).status_code == 403  # a bot's seat
    r = client.post(url + "/choose", data={"index": "999"})
    assert r.status_code == 400 and "not one of your" in r.text
    assert client.post(url + "/choose", data={"index": "-1"}).status_code == 400
    assert client.post(url + "/choose", data={"index": "0", "version": "12345"}).status_code == 409
    assert client.post(url + "/choose", content=b"\xff" * 10,
                       headers={"Content-Type": "application/x-www-form-urlencoded"}).status_code == 400


def test_replay_steps_through_a_log_and_refuses_a_bad_one(client, tmp_path):
    log = tmp_path / "logs" / "finished.jsonl"
    log.parent.mkdir(exist_ok=True)
    assert main(["play", "dice_race", "--players", "2", "--seed", "3", "--log", str(log), "--quiet"]) == 0
    assert "finished.jsonl" in client.get("/replay").text
    r = client.get("/replay/open?log=finished.jsonl", follow_redirects=False)
    assert r.status_code == 303
    end = client.get(r.headers["location"])
    total = int(re.search(r"of (\d+);", end.text).group(1))
    assert f'decision <b id="decision-n">{total}</b>' in end.text and "Game over" in end.text
    assert "the end of the log" in end.text
    first = client.get(r.headers["location"] + "?n=1")
    assert 'decision <b id="decision-n">1</b>' in first.text
    bad = client.post("/replay/upload?name=bad.jsonl", content=b'{"type": "header"\n',
                      headers={"Accept": "application/json"})
    assert bad.status_code == 400 and ":1:" in bad.json()["error"] and "Traceback" not in bad.text
    good = client.post("/replay/upload", content=log.read_bytes(), headers={"Accept": "application/json"})
    assert good.status_code == 200 and good.json()["url"].startswith("/replay/")


def test_a_replay_position_is_the_position_replay_to_n_gives(tmp_path):
    log = tmp_path / "g.jsonl"
    assert main(["play", "dice_race", "--players", "3", "--seed", "4", "--log", str(log), "--quiet"]) == 0
    rep = load_replay(log, "g")
    for n in (0, 1, EVERY - 1, EVERY, EVERY + 3, rep.total - 1, rep.total):
        assert rep.position(n).state == replay(log, to=n).state, n


def test_the_generic_board_finds_the_map_or_draws_lists_only(client):
    from interpreter.loader import load_ruleset

    graph = place_graph(load_ruleset("time_of_crisis"))
    assert graph is not None and graph.fields[0] == "adjacent" and len(graph.nodes) > 15
    assert place_graph(load_ruleset("dice_race")) is None
    url = start(client, {"ruleset": "dice_race", "players": "2", "seed": "1", "seat_red": "human",
                         "seat_blue": "random"})
    data = client.get("/api" + url).json()
    assert data["board"] == "" and 'class="zones"' in data["lists"]


def test_serve_help_and_clear_errors(capsys, monkeypatch):
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--help"])
    assert exit_.value.code == 0
    assert "--port" in capsys.readouterr().out
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 1
    err = capsys.readouterr().err
    assert "port is taken" in err and "Traceback" not in err
    monkeypatch.setitem(sys.modules, "interpreter.web.app", None)  # as if the web extra were missing
    assert main(["serve"]) == 1
    assert "pip install 'ludus[web]'" in capsys.readouterr().err


def test_texts_from_strangers_are_escaped(tmp_path):
    hostile = "<img src=x onerror=alert(1)>"
    with TestClient(build_app([hostile], tmp_path / "logs")) as c:
        page = c.get("/").text
        bad = c.post("/replay/upload?name=" + hostile, content=b"<script>alert(1)</script>\n").text
    assert hostile not in page and "&lt;img src=x" in page
    assert "<script>alert" not in bad and "&lt;script&gt;" in bad or "not valid JSON" in bad


# ====================================================================== seats' keys
def links_on(page: str) -> dict[str, str]:
    """The other seats' links listed on a (host's) seat page: seat -> address."""
    return dict(re.findall(r'class="seatlink" data-seat="(\w+)" href="([^"]+)"', page))


def hand_ids(room, seat: str) -> list[str]:
    return list(room.game.zones[f"hand@{seat}"])


def test_the_starters_page_lists_the_other_human_seats_links_only_for_him(client, tmp_path):
    url = start(client, RED_AND_BLUE)
    room = room_of(client, url)
    host = client.get(url)
    assert host.status_code == 200 and host.headers["referrer-policy"] == "no-referrer"
    assert "Give each player his link" in host.text and "Whoever has a link plays that seat" in host.text
    links = links_on(host.text)
    assert list(links) == ["blue"] and links["blue"] == f"/game/{room.gid}/blue/{room.keys['blue']}"
    blue = client.get(links["blue"])
    assert blue.status_code == 200 and "Blue" in blue.text
    # blue's page lists no link and holds no other key; no key is in the log
    assert links_on(blue.text) == {} and room.keys["red"] not in blue.text
    assert room.keys["red"] not in client.get("/api" + links["blue"]).text
    log = (tmp_path / "logs" / f"{room.gid}.jsonl").read_text()
    assert all(k not in log for k in room.keys.values())
    keys_file = tmp_path / "logs" / f"{room.gid}.keys.json"
    assert keys_file.stat().st_mode & 0o777 == 0o600
    # bots have no keys; the keys file is not a log the replay lists or opens
    assert set(room.keys) == {"red", "blue"}
    assert f"{room.gid}.keys.json" not in client.get("/replay").text
    assert client.get(f"/replay/open?log={room.gid}.keys.json").status_code == 400


def deal(room, cards: int = 3) -> None:
    """Red and blue take their first choices until each holds ``cards`` cards."""
    game = room.game
    for _ in range(40):
        if all(len(hand_ids(room, p)) >= cards for p in ("red", "blue")):
            return
        room.choose(game.deciders()[0], 0, None)
    pytest.fail("red and blue were not dealt their cards")


def _refused(r, room) -> None:
    assert r.status_code == 403, (r.status_code, r.text[:200])
    text = r.text
    assert "<svg" not in text and 'class="choice"' not in text and "Narration" not in text
    for seat in ("red", "blue"):
        for eid in hand_ids(room, seat):
            assert not mentions(text, eid), f"a refused request was sent {eid} of {seat}'s hand"
    assert all(k not in text for k in room.keys.values())


def test_a_seat_without_its_key_or_with_a_wrong_one_is_403_and_nothing_of_the_view(client):
    url = start(client, RED_AND_BLUE)
    room = room_of(client, url)
    deal(room)
    gid, key = room.gid, room.keys["red"]
    wrong = [f"/game/{gid}/red", f"/game/{gid}/red/" + "A" * 32, f"/game/{gid}/red/{key[:-1]}",
             f"/game/{gid}/red/{key}x", f"/game/{gid}/red/%C3%A9t%C3%A9", f"/game/{gid}/red/choose"]
    version = room.version
    for base in wrong:
        _refused(client.get(base), room)
        _refused(client.get("/api" + base), room)
        api = client.get("/api" + base)
        assert api.headers["content-type"].startswith("application/json") and "key" in api.json()["error"]
        _refused(client.post(base + "/choose", data={"index": "0"}), room)
        _refused(client.post(base + "/undo"), room)
    page = client.get(f"/game/{gid}/red/" + "A" * 32)
    assert "does not open seat" in page.text and "its key is wrong" in page.text
    assert "its key is missing" in client.get(f"/game/{gid}/red").text
    assert room.version == version  # no refused request made or took back a decision
    assert client.get(url).status_code == 200


def test_the_key_of_one_seat_does_not_open_another(client):
    url = start(client, RED_AND_BLUE)
    room = room_of(client, url)
    gid, red, blue = room.gid, room.keys["red"], room.keys["blue"]
    version = room.version
    for seat, key in (("blue", red), ("red", blue), ("yellow", red), ("green", blue)):
        _refused(client.get(f"/game/{gid}/{seat}/{key}"), room)
        _refused(client.get(f"/api/game/{gid}/{seat}/{key}"), room)
        _refused(client.post(f"/game/{gid}/{seat}/{key}/choose", data={"index": "0"}), room)
        _refused(client.post(f"/game/{gid}/{seat}/{key}/undo"), room)
    assert "played by a bot" in client.get(f"/game/{gid}/yellow/{red}").text
    # nor the same seat of another game
    other = room_of(client, start(client, RED_AND_BLUE))
    _refused(client.get(f"/game/{other.gid}/red/{red}"), other)
    assert room.version == version


def test_keys_survive_a_restart_and_a_missing_keys_file_is_a_clear_403(client, tmp_path):
    url = start(client, RED_AND_BLUE)
    room = room_of(client, url)
    deal(room)  # (a log is written from the first decision on)
    blue = links_on(client.get(url).text)["blue"]
    with TestClient(build_app([], tmp_path / "logs")) as c2:  # a new server on the same logs folder
        assert c2.get(url).status_code == 200 and c2.get(blue).status_code == 200
        assert links_on(c2.get(url).text) == {"blue": blue}
        assert c2.get(f"/game/{room.gid}/red/" + "A" * 32).status_code == 403
        assert c2.get(f"/game/{room.gid}/blue/{room.keys['red']}").status_code == 403
    (tmp_path / "logs" / f"{room.gid}.keys.json").unlink()
    with TestClient(build_app([], tmp_path / "logs")) as c3:
        r = c3.get(url)
        assert r.status_code == 403 and "keys.json" in r.text and "ludus play --resume" in r.text
        assert "<svg" not in r.text


def test_a_game_still_being_played_is_not_offered_for_replay(client, tmp_path):
    """A replay shows every seat's narration and secret decisions: only a finished game's log."""
    url = start(client, RED_AND_BLUE)
    room = room_of(client, url)
    deal(room, 1)  # the log holds decisions, and the game goes on
    name = f"{room.gid}.jsonl"
    assert (tmp_path / "logs" / name).stat().st_size > 0
    assert name not in client.get("/replay").text
    refused = client.get(f"/replay/open?log={name}", follow_redirects=False)
    assert refused.status_code == 403 and "still being played" in refused.text


def test_a_game_restarted_before_its_first_decision_resumes(tmp_path):
    """The log holds the game's header from its creation: a server restarted before anyone
    decided opens the game at its first decision."""
    logs = tmp_path / "logs"
    with TestClient(build_app([], logs)) as first:
        url = start(first, {**RED_AND_BLUE, "seed": "5"})
        before = first.get("/api" + url).json()["decision"]
    with TestClient(build_app([], logs)) as second:
        again = second.get("/api" + url)
        assert again.status_code == 200

        def offered(html: str) -> list[str]:  # the choices offered (the page's version counter aside)
            return re.findall(r'class="choice"[^>]*>([^<]+)<', html)
        assert offered(again.json()["decision"]) == offered(before) and len(offered(before)) > 1
