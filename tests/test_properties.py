"""Property-based tests (hypothesis) over random games of dice_race.

Every test drives real games for 2, 3 and 4 players from random seeds; the
sequence of decisions is drawn by hypothesis as a list of integers. At each
pause one integer ``x`` picks the deciding player (``x % len(deciders)``) and
the choice (``x // len(deciders) % len(choices)``), so every drawn list is a
legal line of play and hypothesis can shrink a failure to a short one.

The properties are those of DESIGN.md principles 4 (the state is plain data:
save anywhere, resume in another process), 5 (one list of legal actions; an
illegal choice is refused and changes nothing) and 6 (same ruleset + seed +
choices => byte-identical log), plus hidden information in views, card
conservation and the generic bots.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import interpreter
from interpreter.bots import make_bot
from interpreter.gamelog import dump_entry, replay, write_log
from interpreter.loader import find_ruleset, load_ruleset
from interpreter.model import Ruleset
from interpreter.runtime import Game, IllegalChoice

# The checkout the interpreter package was imported from (for the subprocess).
ROOT = Path(interpreter.__file__).resolve().parent.parent
RULESET_DIR = find_ruleset("dice_race").parent
TOTAL_CARDS = 18
MAX_HAND = 5
# Far more decisions than any game of dice_race needs when every choice is
# index 0 (Roll always moves a runner forward, so the game must end).
FINISH_LIMIT = 3000

PLAYERS = st.sampled_from([2, 3, 4])
SEEDS = st.one_of(st.integers(min_value=-(2**63), max_value=2**64), st.text(max_size=8))
PICKS = st.lists(st.integers(min_value=0, max_value=10**6), max_size=80)

FAST = settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
MEDIUM = settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
# One subprocess per example: keep these few.
SLOW = settings(deadline=None, max_examples=10, suppress_health_check=[HealthCheck.too_slow])


@functools.lru_cache(maxsize=1)
def ruleset() -> Ruleset:
    return load_ruleset(RULESET_DIR)


# ---------------------------------------------------------------- driving games

Move = tuple[str, int]
Hook = Callable[[Game], None]


def step(game: Game, x: int) -> Move:
    """Make the decision selected by ``x``; return (player, index) as applied."""
    deciders = game.deciders()
    assert deciders, f"game not over but nobody decides: pending={game.pending!r}"
    player = deciders[x % len(deciders)]
    n = len(game.choices(player))
    assert n > 0, f"{player} must decide but is offered no choice: pending={game.pending!r}"
    index = (x // len(deciders)) % n
    game.apply(index, player)
    return player, index


def drive(game: Game, picks: list[int], on_step: Hook | None = None) -> list[Move]:
    """Apply one decision per drawn integer, stopping early if the game ends."""
    moves: list[Move] = []
    for x in picks:
        if game.over:
            break
        moves.append(step(game, x))
        if on_step is not None:
            on_step(game)
    return moves


def finish(game: Game, on_step: Hook | None = None) -> list[Move]:
    """Play choice 0 (Roll in the action menu) until the game ends."""
    moves: list[Move] = []
    while not game.over:
        assert len(moves) < FINISH_LIMIT, f"game did not end after {FINISH_LIMIT} decisions"
        moves.append(step(game, 0))
        if on_step is not None:
            on_step(game)
    return moves


def play(players: int, seed: int | str, picks: list[int], to_end: bool,
         on_step: Hook | None = None) -> tuple[Game, list[Move]]:
    game = Game.new(ruleset(), players, seed)
    if on_step is not None:
        on_step(game)
    moves = drive(game, picks, on_step)
    if to_end:
        moves += finish(game, on_step)
    return game, moves


def log_text(entries: list[dict[str, Any]]) -> str:
    return "".join(dump_entry(e) + "\n" for e in entries)


def walk(value: Any) -> Iterator[Any]:
    """Every dict key and every leaf value inside a JSON-like value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from walk(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from walk(v)
    else:
        yield value


def card_ids(game: Game) -> list[str]:
    return [e for e, rec in game.state["entities"].items() if rec["kind"] == "card"]


# ---------------------------------------------------------------- 1. determinism


@FAST
@given(players=PLAYERS, seed=SEEDS, picks=PICKS, to_end=st.booleans())
def test_same_seed_and_choices_give_byte_identical_log_and_state(players, seed, picks, to_end):
    a, moves_a = play(players, seed, picks, to_end)
    b, moves_b = play(players, seed, picks, to_end)
    assert moves_a == moves_b
    assert log_text(a.log) == log_text(b.log), "same seed + choices gave different logs"
    assert a.to_json() == b.to_json(), "same seed + choices gave different final states"
    # The log records every choice actually made, in order.
    recorded = [(e["player"], e["index"]) for e in a.log if e["type"] == "choice"]
    assert recorded == moves_a
    assert a.log[0]["type"] == "header" and a.log[0]["seed"] == seed
    if a.over:
        assert a.log[-1] == {"type": "end", "result": a.result}


@MEDIUM
@given(players=PLAYERS, seed=st.integers(min_value=0, max_value=2**32), picks=PICKS,
       to_end=st.booleans())
def test_saved_log_replays_to_the_same_state(players, seed, picks, to_end):
    game, _ = play(players, seed, picks, to_end)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "game.jsonl"
        with path.open("w", encoding="utf-8") as out:
            write_log(game.log, out)
        again = replay(path, str(RULESET_DIR))
    assert log_text(again.log) == log_text(game.log)
    assert again.to_json() == game.to_json()


# ---------------------------------------------------------------- 2. save / resume

RESUME_SCRIPT = """
import json, sys
from interpreter.gamelog import dump_entry
from interpreter.loader import find_ruleset, load_ruleset
from interpreter.runtime import Game

rs = load_ruleset(sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as f:
    state = json.load(f)
with open(sys.argv[3], encoding="utf-8") as f:
    moves = json.load(f)
game = Game.resume(rs, state)
for player, index in moves:
    game.apply(index, player)
text = "".join(dump_entry(e) + "\\n" for e in game.log) + "STATE " + game.to_json() + "\\n"
sys.stdout.buffer.write(text.encode("utf-8"))
"""


@SLOW
@given(players=PLAYERS, seed=SEEDS, picks=PICKS, data=st.data())
def test_resume_in_a_fresh_process_continues_identically(players, seed, picks, data):
    # The uninterrupted game, in this process.
    full, moves = play(players, seed, picks, to_end=True)
    pause = data.draw(st.integers(min_value=0, max_value=len(moves)), label="pause")

    # The same game up to the pause, saved to a file.
    game = Game.new(ruleset(), players, seed)
    for player, index in moves[:pause]:
        game.apply(index, player)
    log_at_pause = len(game.log)
    assert log_text(game.log) == log_text(full.log[:log_at_pause])

    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "state.json").write_text(game.to_json(), encoding="utf-8")
        (tmpdir / "moves.json").write_text(json.dumps(moves[pause:]), encoding="utf-8")
        (tmpdir / "resume.py").write_text(RESUME_SCRIPT, encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env["PYTHONHASHSEED"] = "random"
        proc = subprocess.run(
            [sys.executable, str(tmpdir / "resume.py"), str(RULESET_DIR),
             str(tmpdir / "state.json"), str(tmpdir / "moves.json")],
            capture_output=True, env=env, cwd=tmp, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    out = proc.stdout.decode("utf-8")
    expected = log_text(full.log[log_at_pause:]) + "STATE " + full.to_json() + "\n"
    assert out == expected, (
        f"resumed in a fresh process after {pause} of {len(moves)} decisions "
        f"(players={players}, seed={seed!r}), the continuation differs")


@FAST
@given(players=PLAYERS, seed=SEEDS, picks=PICKS,
       saves=st.lists(st.booleans(), min_size=1, max_size=200))
def test_resume_from_json_in_process_continues_identically(players, seed, picks, saves):
    """Save and resume (through JSON text) after any subset of steps: same log, same state."""
    full, _ = play(players, seed, picks, to_end=True)

    game = Game.new(ruleset(), players, seed)
    log: list[dict[str, Any]] = []

    def save_and_resume(g: Game) -> Game:
        text = g.to_json()
        log.extend(g.log)
        resumed = Game.resume(ruleset(), json.loads(text))
        assert resumed.to_json() == text, "save -> load -> save is not a fixed point"
        assert resumed.deciders() == g.deciders()
        for p in g.deciders():
            assert resumed.choices(p) == g.choices(p)
        assert resumed.over == g.over and resumed.result == g.result
        return resumed

    for i, x in enumerate(picks + [0] * FINISH_LIMIT):
        if saves[i % len(saves)]:
            game = save_and_resume(game)
        if game.over:
            break
        step(game, x)
    log.extend(game.log)
    assert game.over
    assert log_text(log) == log_text(full.log)
    assert game.to_json() == full.to_json()


# ---------------------------------------------------------------- 3. illegal choices


@FAST
@given(players=PLAYERS, seed=SEEDS, picks=PICKS, to_end=st.booleans(), data=st.data())
def test_illegal_choice_is_refused_and_changes_nothing(players, seed, picks, to_end, data):
    game, _ = play(players, seed, picks, to_end)
    before = game.to_json()
    log_before = log_text(game.log)
    log_len = len(game.log)

    deciders = game.deciders()
    attempts: list[tuple[Any, str | None, Any]] = []  # (choice, player, dice)
    if game.over:
        attempts += [(0, None, None), (0, game.state["players"][0], None)]
    else:
        player = data.draw(st.sampled_from(deciders), label="player")
        choices = game.choices(player)
        n = len(choices)
        labels = {c.label for c in choices}
        all_labels = {c.label for p in deciders for c in game.choices(p)}
        attempts += [
            (data.draw(st.integers(min_value=n, max_value=2**70), label="too big"), player, None),
            (n, player, None),
            (data.draw(st.integers(max_value=-1, min_value=-(2**70)), label="negative"), player, None),
            (-1, player, None),
            (data.draw(st.text(max_size=20).filter(lambda s: s not in labels), label="label"),
             player, None),
            (data.draw(st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False),
                                 st.lists(st.integers(0, 3), max_size=2),
                                 st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=2),
                                 st.binary(max_size=3), st.tuples(st.integers(0, 3))),
                       label="not int/str"), player, None),
            (True, player, None), (False, player, None), (0.0, player, None), (None, player, None),
            (0, player, [0]), (0, player, [True]), (0, player, [1.5]), (0, player, ["6"]),
            (0, player, [-3]),
        ]
        # Labels offered to someone else but not to this player.
        attempts += [(lab, player, None) for lab in sorted(all_labels - labels)]
        # Legal index and label, but from someone who is not deciding now.
        others = [p for p in game.state["players"] if p not in deciders]
        others += ["nobody", "", 0]
        for other in others:
            attempts.append((0, other, None))
            attempts.append((choices[0].label, other, None))

    for choice, who, dice in attempts:
        try:
            game.apply(choice, who, dice)
        except IllegalChoice as exc:
            assert isinstance(exc.reason, str) and exc.reason, "IllegalChoice without a reason"
        else:
            raise AssertionError(f"apply({choice!r}, {who!r}, dice={dice!r}) was accepted "
                                 f"(players={players}, seed={seed!r}, picks={picks!r})")
        assert game.to_json() == before, f"apply({choice!r}, {who!r}, dice={dice!r}) changed the state"
        assert len(game.log) == log_len and log_text(game.log) == log_before, (
            f"apply({choice!r}, {who!r}, dice={dice!r}) changed the log")

    # The refused attempts left the game playable exactly as before.
    twin, _ = play(players, seed, picks, to_end)
    finish(game)
    finish(twin)
    assert log_text(game.log) == log_text(twin.log)
    assert game.to_json() == twin.to_json()


# ---------------------------------------------------------------- 4. views hide secrets


def check_views(game: Game) -> None:
    st_ = game.state
    players = st_["players"]
    zones = st_["zones"]
    deck = set(zones["deck"])
    pending = st_["pending"]
    for viewer in [*players, None]:
        view = game.view(viewer)
        text = json.dumps(view, ensure_ascii=False)  # a view is plain JSON
        assert json.loads(text) == view
        tokens = list(walk(view))
        strings = {t for t in tokens if isinstance(t, str)}
        ints = {t for t in tokens if isinstance(t, int) and not isinstance(t, bool)}
        where = f"view({viewer!r}) at round {st_['globals']['round']}"
        for other in players:
            if other == viewer:
                continue
            leaked = strings & set(zones[f"hand@{other}"])
            assert not leaked, f"{where} shows {other}'s hand cards {sorted(leaked)}"
            assert view["zones"][f"hand@{other}"] == {"hidden": len(zones[f"hand@{other}"])}
        leaked = strings & deck
        assert not leaked, f"{where} shows deck cards {sorted(leaked)}"
        assert view["zones"]["deck"] == {"hidden": len(deck)}
        # The machinery stays out of views (docs/state.md).
        for key in ("rng", "forced_dice", "stack", "seed", "next_id", "next_modifier"):
            assert key not in strings, f"{where} contains the key {key!r}"
        assert st_["rng"] not in ints, f"{where} contains the rng state"
        if viewer is not None:
            own = f"hand@{viewer}"
            assert view["zones"][own] == zones[own], f"{where} hides {viewer}'s own hand"
        # Sizes still add up: nothing vanishes from a view, only its identity.
        sizes = sum(v["hidden"] if isinstance(v, dict) else len(v) for v in view["zones"].values())
        assert sizes == TOTAL_CARDS
        if pending is not None and pending["type"] == "secret":
            for other, answer in pending["answers"].items():
                if other == viewer:
                    continue
                assert answer not in strings, f"{where} shows {other}'s secret answer {answer!r}"
                assert other not in view["pending"]["answers"], (
                    f"{where} shows that {other}'s secret answer exists in pending.answers")
                assert other not in view["pending"]["players"], (
                    f"{where} shows {other}'s secret options")
        elif pending is not None and pending["player"] != viewer:
            assert "options" not in view["pending"], f"{where} shows {pending['player']}'s options"


@FAST
@given(players=PLAYERS, seed=SEEDS, picks=PICKS, to_end=st.booleans())
def test_views_never_show_hidden_information(players, seed, picks, to_end):
    play(players, seed, picks, to_end, on_step=check_views)


# ---------------------------------------------------------------- 5. invariants


class InvariantChecker:
    def __init__(self) -> None:
        self.positions: dict[str, int] | None = None
        self.round = 0
        self.steps = 0

    def __call__(self, game: Game) -> None:
        st_ = game.state
        ents = st_["entities"]
        zones = st_["zones"]
        players = st_["players"]
        where = f"after {self.steps} decisions (round {st_['globals']['round']})"
        self.steps += 1

        cards = card_ids(game)
        assert len(cards) == TOTAL_CARDS, f"{where}: {len(cards)} cards exist"
        expected_zones = {"deck", "discard", *(f"hand@{p}" for p in players)}
        assert set(zones) == expected_zones, f"{where}: zones are {sorted(zones)}"
        counts = Counter(e for items in zones.values() for e in items)
        for c in cards:
            assert counts[c] == 1, f"{where}: card {c} appears {counts[c]} times across zones"
        for key, items in zones.items():
            for e in items:
                assert e in ents, f"{where}: zone {key} holds unknown entity {e!r}"
                assert ents[e]["zone"] == key, (
                    f"{where}: {e} is listed in {key} but its zone field says {ents[e]['zone']!r}")
        for c in cards:
            z = ents[c]["zone"]
            assert z in zones and c in zones[z], f"{where}: {c}.zone={z!r} but that zone lacks it"
        total = len(zones["deck"]) + len(zones["discard"]) + sum(
            len(zones[f"hand@{p}"]) for p in players)
        assert total == TOTAL_CARDS, f"{where}: deck+discard+hands hold {total} cards"
        for p in players:
            assert ents[p]["zone"] is None
            assert 0 <= len(zones[f"hand@{p}"]) <= MAX_HAND, (
                f"{where}: {p} holds {len(zones[f'hand@{p}'])} cards")

        positions = {p: ents[p]["position"] for p in players}
        if self.positions is not None:
            for p in players:
                assert positions[p] >= self.positions[p], (
                    f"{where}: {p}'s position went from {self.positions[p]} to {positions[p]}")
        assert all(v >= 0 for v in positions.values())
        self.positions = positions
        assert st_["globals"]["round"] >= self.round
        self.round = st_["globals"]["round"]
        if game.over:
            assert max(positions.values()) >= st_["globals"]["goal"]


@FAST
@given(players=PLAYERS, seed=SEEDS, picks=PICKS, to_end=st.booleans())
def test_invariants_hold_after_every_step(players, seed, picks, to_end):
    checker = InvariantChecker()
    game, moves = play(players, seed, picks, to_end, on_step=checker)
    assert checker.steps == len(moves) + 1


@FAST
@given(players=PLAYERS, seed=SEEDS, picks=PICKS, order=st.permutations(range(4)),
       answers=st.lists(st.integers(0, 4), min_size=4, max_size=4))
def test_secret_pick_result_does_not_depend_on_answer_order(players, seed, picks, order, answers):
    """A simultaneous pick: who answers first changes nothing but the log's order."""
    game, _ = play(players, seed, picks, to_end=False)
    # Go on (always choice 0) to the start of the next secret pick.
    def fresh_secret(g: Game) -> bool:
        return g.pending is not None and g.pending["type"] == "secret" and not g.pending["answers"]

    while not game.over and not fresh_secret(game):
        step(game, 0)
    if game.over:
        return
    chosen = {p: answers[i] % len(game.choices(p)) for i, p in enumerate(game.deciders())}
    a = Game.resume(ruleset(), json.loads(game.to_json()))
    b = Game.resume(ruleset(), json.loads(game.to_json()))
    for p in a.deciders():
        a.apply(chosen[p], p)
    seats = b.deciders()
    for i in order:
        if i < len(seats):
            b.apply(chosen[seats[i]], seats[i])
    assert a.to_json() == b.to_json()
    assert [e for e in a.log if e["type"] != "choice"] == [e for e in b.log if e["type"] != "choice"]


# ---------------------------------------------------------------- 6. bots


@MEDIUM
@given(players=PLAYERS, seed=SEEDS, kinds=st.lists(st.sampled_from(["random", "greedy"]),
                                                    min_size=4, max_size=4))
def test_bots_offer_legal_indexes_and_games_end_with_a_result(players, seed, kinds):
    def bot_game() -> Game:
        game = Game.new(ruleset(), players, seed)
        seats = game.state["players"]
        bots = {p: make_bot(kinds[i], seed, p) for i, p in enumerate(seats)}
        decisions = 0
        while not game.over:
            assert decisions < FINISH_LIMIT, f"bot game did not end (kinds={kinds})"
            for p in game.deciders():
                before = game.to_json()
                index = bots[p].choose(game, p)
                assert game.to_json() == before, f"{kinds[seats.index(p)]} bot changed the game"
                n = len(game.choices(p))
                assert isinstance(index, int) and not isinstance(index, bool), repr(index)
                assert 0 <= index < n, f"bot returned {index} with {n} choices"
                game.apply(index, p)
                decisions += 1
                if game.over:
                    break
        return game

    game = bot_game()
    result = game.result
    seats = game.state["players"]
    assert result is not None
    assert result["winners"], "a finished game has no winner"
    assert sorted(result["ranking"]) == sorted(seats) and len(result["ranking"]) == len(seats)
    assert set(result["winners"]) <= set(seats)
    assert result["ranking"][: len(result["winners"])] == result["winners"]
    assert set(result["scores"]) == set(seats)
    best = max(result["scores"].values())
    assert all(result["scores"][w] == best for w in result["winners"])
    assert game.log[-1] == {"type": "end", "result": result}
    # Bots have their own generators: the same seats and seed replay the same game.
    again = bot_game()
    assert log_text(again.log) == log_text(game.log)
