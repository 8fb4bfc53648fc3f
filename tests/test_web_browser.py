"""`ludus serve` in a real browser: Debian's Chromium driven by Playwright.

The server runs as a real process (``python -m interpreter serve``); the browser starts a game
of Time of Crisis as red against bots, plays by clicking (the board once, choice buttons),
undoes a decision, reloads the page and finds the same decision, then replays a finished log
to its end. Then two browser contexts (two computers) play red and blue of one game: each sees
only its own hand and can act only on its own decisions. Screenshots of the board (the ruleset's own, from its board.yaml) at three moments
are kept in tests/artifacts/web/, and the test fails if the board is blank.

Chromium comes from Debian's packages (`apt-get install chromium`; .ci/run installs it), not
from Playwright's downloads: nothing is fetched at test time.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts" / "web"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
MIN_DRAWN = 40  # circles, lines and rects of the board's SVG: fewer means a blank or broken board


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's Chromium - run "
                    "'apt-get install chromium' (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    logs = tmp_path_factory.mktemp("serve") / "logs"
    logs.mkdir()
    # a finished game to replay, bots only
    subprocess.run([sys.executable, "-m", "interpreter", "play", "time_of_crisis", "--seed", "1", "--log",
                    str(logs / "finished.jsonl"), "--quiet"], check=True, capture_output=True, cwd=ROOT)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "interpreter", "serve", "--port", str(port), "--logs", str(logs)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"ludus serve stopped: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("ludus serve did not start listening within 30 s")
    yield f"http://127.0.0.1:{port}", logs
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def check_board(page, name: str) -> None:
    """Save a screenshot of the board; fail if it is blank (too few shapes, or one colour)."""
    from matplotlib.image import imread

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    drawn = page.locator("#board svg").evaluate("s => s.querySelectorAll('circle, line, rect').length")
    assert drawn >= MIN_DRAWN, f"the board has only {drawn} shapes"
    # the ruleset's own board (rulesets/time_of_crisis/board.yaml): its map, tracks and mats
    assert page.locator("#board svg.data").count() == 1, "the board section was not drawn"
    assert page.locator("#board svg g.mat").count() == 4 and page.locator("#board svg g.track").count() >= 1
    path = ARTIFACTS / f"{name}.png"
    page.locator("#board svg").screenshot(path=str(path))
    pixels = imread(str(path))
    colours = {tuple(px) for px in pixels.reshape(-1, pixels.shape[-1])[::37].tolist()}
    assert len(colours) > 5, f"the board's screenshot {path.name} is (nearly) one colour"


def choice_labels(page) -> list[str]:
    return [b.inner_text() for b in page.locator("button.choice").all()]


def test_play_undo_reload_and_replay_in_a_browser(browser, server):
    base, _ = server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(15_000)
    page.goto(base + "/")
    game = page.locator("li", has_text="Time of Crisis (2nd edition)").filter(has_text="time_of_crisis ").first
    game.locator("summary").click()
    form = game.locator("form.newgame")
    form.locator("input[name=seed]").fill("3")
    assert form.locator("select[name=seat_red]").input_value() == "human"
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/game/*/red/*")  # red's address carries his key
    page.wait_for_selector("button.choice")
    check_board(page, "1-start")

    # the first decision is about a place: click it on the board
    place = page.locator("svg g.place.clickable").first
    assert place.count() == 1
    prompt = page.locator("h3.prompt").inner_text()
    place.click()
    page.wait_for_load_state("load")
    page.wait_for_function("p => !document.querySelector('h3.prompt') || "
                           "document.querySelector('h3.prompt').innerText !== p", arg=prompt)

    # then choice buttons, until red has a decision he may take back; take it back
    for _ in range(40):
        page.wait_for_selector("button.choice")
        before = (page.locator("h3.prompt").inner_text(), choice_labels(page))
        page.locator("button.choice").last.click()
        page.wait_for_selector("button.undo")
        if page.locator("button.undo").is_enabled():
            break
    else:
        pytest.fail("red never had a decision to take back")
    check_board(page, "2-playing")
    page.locator("button.undo").click()
    page.wait_for_selector("p.note")
    assert "undone" in page.locator("p.note").inner_text()
    assert (page.locator("h3.prompt").inner_text(), choice_labels(page)) == before

    # a reloaded page resumes at the same decision
    page.reload()
    page.wait_for_selector("button.choice")
    assert (page.locator("h3.prompt").inner_text(), choice_labels(page)) == before

    # then play on by clicking until red's whole turn is over: the narration shows his turn
    # begin, then the next player's (ToC 5: a turn's phases end with "End the ... phase")
    for _ in range(150):
        log = page.locator("#log").inner_text()
        began = log.find("--- red's turn")
        if began >= 0 and "--- blue's turn" in log[began:]:
            break
        page.wait_for_selector("button.choice")
        ends = page.locator("button.choice", has_text="End the")
        (ends.first if ends.count() else page.locator("button.choice").last).click()
        page.wait_for_load_state("load")
    else:
        pytest.fail("red's turn did not end after 150 clicks")

    # replay a finished log to its end
    page.goto(base + "/replay")
    page.locator("#upload").set_input_files(str(server[1] / "finished.jsonl"))
    page.wait_for_url("**/replay/*")
    total = page.locator("#decision-n").inner_text()
    page.goto(page.url.split("?")[0] + "?n=0")
    assert page.locator("#decision-n").inner_text() == "0"
    page.locator("a.step", has_text="forward").click()
    page.wait_for_function("() => document.getElementById('decision-n').innerText === '1'")
    page.locator("a.step", has_text="end").click()
    page.wait_for_function(f"() => document.getElementById('decision-n').innerText === '{total}'")
    assert "the end of the log" in page.locator("p.position").inner_text()
    assert "Game over" in page.locator("h3.result").inner_text()
    check_board(page, "3-replay-end")
    page.close()


def hands(logs: Path, gid: str) -> dict[str, list[str]]:
    """Red's and blue's hands now, from the game's log (replayed here, as the server wrote it)."""
    from interpreter.gamelog import replay

    if not (logs / f"{gid}.jsonl").stat().st_size:  # the server writes the log from the first decision on
        return {"red": [], "blue": []}
    game = replay(logs / f"{gid}.jsonl", partial=True)
    return {p: list(game.zones[f"hand@{p}"]) for p in ("red", "blue")}


def test_two_computers_each_see_only_their_own_hand(browser, server):
    base, logs = server
    red = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    red.set_default_timeout(15_000)
    red.goto(base + "/")
    game = red.locator("li", has_text="Time of Crisis (2nd edition)").filter(has_text="time_of_crisis ").first
    game.locator("summary").click()
    form = game.locator("form.newgame")
    form.locator("input[name=seed]").fill("3")
    form.locator("select[name=seat_blue]").select_option("human")
    form.locator("button[type=submit]").click()
    red.wait_for_url("**/game/*/red/*")
    _, _, gid, _, red_key = red.url.split("?")[0].rsplit("/", 4)
    links = red.locator("details.links")
    assert "Give each player his link" in links.inner_text() and "Whoever has a link plays that seat" in links.inner_text()
    blue_link = red.locator("a.seatlink[data-seat=blue]").get_attribute("href")
    assert blue_link and blue_link.startswith(f"/game/{gid}/blue/") and red_key not in blue_link

    # the second computer: its own browser context (no cookie, no history of the first)
    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    blue = other.new_page()
    blue.set_default_timeout(15_000)
    blue.goto(base + blue_link)
    assert blue.locator("details.links").count() == 0 and red_key not in blue.content()
    blue_key = blue_link.rsplit("/", 1)[1]

    # without red's key, blue's browser cannot open red's seat nor decide for him
    r = blue.goto(f"{base}/game/{gid}/red")
    assert r is not None and r.status == 403 and "key is missing" in blue.content()
    r = blue.goto(f"{base}/game/{gid}/red/{blue_key}")
    assert r is not None and r.status == 403 and blue.locator("svg").count() == 0
    status = blue.evaluate("url => fetch(url, {method: 'POST', body: new URLSearchParams({index: '0'}), "
                           "headers: {'Accept': 'application/json'}}).then(r => r.status)",
                           f"/game/{gid}/red/{blue_key}/choose")
    assert status == 403
    blue.goto(base + blue_link)

    # both play by clicking, each on his own page, until each holds three cards
    pages = {"red": red, "blue": blue}
    for _ in range(40):
        held = hands(logs, gid)
        if all(len(h) >= 3 for h in held.values()):
            break
        acted = False
        for page in pages.values():
            page.reload()
            page.wait_for_selector("#decision")
            if page.locator("button.choice").count():
                page.locator("button.choice").first.click()
                page.wait_for_load_state("load")
                acted = True
            else:
                assert "Waiting for" in page.locator("#decision").inner_text()
        assert acted, "neither red nor blue had a decision"
    else:
        pytest.fail("red and blue were not dealt three cards each")

    held = hands(logs, gid)
    for seat, page in pages.items():
        page.reload()
        page.wait_for_selector("#board svg")
        content = page.content()
        other_seat = "blue" if seat == "red" else "red"
        assert any(f'data-value="{c}"' in content for c in held[seat]), f"{seat} does not see his own hand"
        for card in held[other_seat]:
            assert card not in content, f"{seat}'s page holds {card} of {other_seat}'s hand"
        api = page.evaluate("url => fetch(url).then(r => r.text())", page.locator("body").get_attribute("data-api"))
        assert all(card not in api for card in held[other_seat])
    other.close()
    red.context.close()
