"""The game runtime: an explicit-stack interpreter over a plain-JSON state.

The whole game lives in ``Game.state`` — entities, zones, globals, modifier
records, the random generator, the pending decision and the interpreter's own
continuation (a stack of frames: procedure, instruction index, locals). Any
state can be saved with ``json.dumps`` and resumed with :meth:`Game.resume` in
another process; the continuation is identical because compiled code is looked
up by procedure name and instruction index.

The runtime knows no game: it moves entities between zones, sets fields, rolls
dice, asks players to choose, and reads values through modifier points.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from . import rng
from .diagnostics import Diagnostic, Loc, LudusError
from .game.asking import Asking
from .game.base import MAX_DEPTH
from .game.board import Board, _initial
from .game.choices import Choice, Choices, IllegalChoice, _bad_die, _shown
from .game.machine import Machine
from .game.modifiers import Modifiers
from .game.values import Values
from .game.views import Views, copy_state
from .model import _ATOMS, MAX_SIDES, NO_MEMO, PLAYER_KIND, Procedure, Ruleset, copy_plain

__all__ = ["MAX_DEPTH", "STATE_FORMAT", "Choice", "Game", "IllegalChoice", "copy_state", "rng"]

STATE_FORMAT = 2  # 2: a frame's pc is a resume point (1: an instruction index)
_copy = copy_plain


class Game(Machine, Board, Choices, Asking, Modifiers, Views, Values):
    """A game in progress. Create with :meth:`new` or :meth:`resume`.

    Its parts are the mixins of ``interpreter/game/``: ``Machine`` (the run loop, frames,
    budgets, the end), ``Board`` (entities, zones, dice), ``Choices`` (decisions and
    ``apply``), ``Modifiers``, ``Views`` (views, samples, copies, JSON) and ``Values``
    (labels, fields, functions and their memo). The interface compiled rules call is listed
    in :class:`interpreter.game.base.GameBase`.
    """

    def __init__(self, rs: Ruleset, state: dict[str, Any]) -> None:
        self.rs = rs
        self.state = state
        self.log: list[dict[str, Any]] = []
        self.atomic = True
        procs = rs.frame_procs
        if procs is None:
            procs = dict(rs.procedures)
            for aid, action in rs.actions.items():
                procs["action:" + aid] = action.proc
            rs.frame_procs = procs
        self._procs: dict[str, Procedure] = procs  # read only: shared by every game of the ruleset
        self._after_setup: Callable[[Game], None] | None = None
        self.depth = 0  # calls of recursive rule functions running inside one another (dsl.functions)
        # Work done since the last decision (see spend) and passes of loops (see
        # dsl/procwriter.py); both start again at every run of the rules.
        self.work = 0
        self.work_budget = rs.work_budget
        self.steps = 0
        # Frames pushed, by procedure (interpreter/usage.py): counted only when a run of games
        # asks for it; copies made for bots never count.
        self.usage: Counter[str] | None = None
        # Dice rolled and decks shuffled, and commit points the rules passed, in this process
        # (not saved): what undo must not cross (interpreter/undo.py).
        self.draws = 0
        self.commits = 0
        # Called at every 'signal NAME' with (game, NAME) when set (ludus report ends a section
        # there); copies and samples never have one.
        self.on_signal: Callable[[Game, str], None] | None = None
        self._bind()

    def _bind(self) -> None:
        st = self._state
        self.ents: dict[str, dict[str, Any]] = st["entities"]
        self.zones: dict[str, list[str]] = st["zones"]
        self.glob: dict[str, Any] = st["globals"]
        self.players: list[str] = st["players"]
        self._kind_index: dict[str, list[str]] | None = None
        # Results of functions (pure: they read only their arguments and the state), one dict
        # per remembering function (and one for indexes of zones), each forgotten when
        # something it reads changes (see Values). A game starts with none (copies are made by
        # the thousand for bots): each slot holds the shared NO_MEMO, never written, until the
        # function remembers a first result.
        self.memos: list[dict[Any, Any]] = [NO_MEMO] * self.rs.memo_count
        self.filled = 0  # bit i: volatile memo slot i may hold a dict; forgetting looks at these alone
        # Copy on write: the entities (by id) and zones (by key) whose dict or list this
        # game may change in place; None: all of them. A copy made by this game (an undo
        # copy, a copy for a bot) shares the others' dicts and lists, so both games then
        # copy one before changing it.
        self._own_ents: set[str] | None = None
        self._own_zones: set[str] | None = None

    # ================================================================ creation
    @classmethod
    def new(cls, rs: Ruleset, players: int | None = None, seed: int | str = 0,
            after_setup: Callable[[Game], None] | None = None, dice: Sequence[int] = (),
            on_signal: Callable[[Game, str], None] | None = None) -> Game:
        """Start a game: build the initial state, run ``setup`` and ``main`` to the first pause.

        ``on_signal(game, name)``: called at every ``signal`` of the rules (see ``Game.on_signal``).
        """
        n = players if players is not None else rs.min_players
        problem = rs.player_count_problem(n)
        if problem:
            raise LudusError([Diagnostic(Loc(rs.folder), problem)])
        seats = rs.seat_names(n)
        for d in dice:
            if _bad_die(d):
                raise LudusError([Diagnostic(Loc(rs.folder), f"forced dice must be whole numbers from 1 to "
                                             f"{MAX_SIDES}, not {_shown(d)}")])
        state: dict[str, Any] = {
            "format": STATE_FORMAT,
            "ruleset": {"name": rs.name, "version": rs.version, "digest": rs.digest},
            "seed": seed,
            "players": seats,
            "globals": {name: _copy(g.initial) for name, g in rs.globals.items()},
            "entities": {},
            "zones": {},
            "modifiers": [],
            "rng": rng.seed_state(seed),
            "forced_dice": [int(d) for d in dice],
            "next_id": 1,
            "next_modifier": 1,
            "stack": [],
            "pending": None,
            "result": None,
        }
        game = cls(rs, state)
        game.on_signal = on_signal
        game.log.append({"type": "header", "ludus_log": 1, "ruleset": rs.name, "version": rs.version,
                         "digest": rs.digest, "players": seats, "seed": seed})
        game._populate()
        if "main" in rs.procedures:
            state["stack"].append(game._frame("main", {}, None))
        if "setup" in rs.procedures:
            state["stack"].append(game._frame("setup", {}, None))
        game._after_setup = after_setup
        if "setup" not in rs.procedures and after_setup is not None:
            after_setup(game)
            game._after_setup = None
        game._guarded(game._run)
        if state["forced_dice"]:
            raise LudusError([Diagnostic(Loc(rs.folder), f"the forced dice {state['forced_dice']} were not rolled "
                                         "before the first decision", "give dice with the step that rolls them")])
        return game

    @classmethod
    def resume(cls, rs: Ruleset, state: dict[str, Any], owned: bool = False) -> Game:
        """Continue a saved game (the state is used as is, not copied).

        The caller still holds the state and may edit it, so the game counts as exposed (every
        decision forgets remembered results: Values.decided) unless ``owned``: the caller hands
        over a state no one else holds (a fresh copy).

        A state that is not one this ruleset could have saved is refused with a LudusError
        (savedstate.state_problem): the run loop trusts the frames, zones and entities it holds.
        """
        from .savedstate import state_problem  # savedstate imports this module's model

        problem = state_problem(rs, state)
        if problem:
            raise LudusError([Diagnostic(Loc("<state>"), f"not a saved game of '{rs.name}': {problem}",
                                         "resume a state saved by Game.to_json with the same ruleset")])
        saved = state.get("ruleset", {})
        if saved.get("name") != rs.name or saved.get("digest") != rs.digest:
            raise LudusError([Diagnostic(Loc(rs.folder), f"this state was saved by ruleset "
                                         f"'{saved.get('name')}' ({str(saved.get('digest'))[:12]}), not by "
                                         f"'{rs.name}' ({rs.digest[:12]})",
                                         "resume with the same ruleset files it was saved with")])
        game = cls(rs, state)
        game.exposed = not owned
        return game

    def _populate(self) -> None:
        rs = self.rs
        start = rs.start
        if start is None:
            start = rs.start = _start(rs)
        player, statics = start
        for p in self.players:
            self.ents[p] = _fresh(player)
        for eid, start_rec in statics:
            self.ents[eid] = _fresh(start_rec)
        for zname, z in rs.zones.items():
            if z.per is None:
                self.zones[zname] = []
        for eid, rec in self.ents.items():
            for zname in rs.kinds[rec["kind"]].zones if rec["kind"] in rs.kinds else ():
                self.zones[f"{zname}@{eid}"] = []
        for eid, spec in rs.entities.items():
            if spec.get("zone"):
                self._place(eid, spec["zone"], False)

    # ================================================================ public API
    @property
    def pending(self) -> dict[str, Any] | None:
        return self._full_state()["pending"]

    @property
    def result(self) -> dict[str, Any] | None:
        return self._state["result"]

    @property
    def over(self) -> bool:
        return self._state["result"] is not None


# The records a game starts with, made once per ruleset (Ruleset.start): each record with
# the keys of its values that are not atoms (copied for every game; atoms are shared).
_Start = tuple[dict[str, Any], tuple[str, ...]]


def _record(rec: dict[str, Any]) -> _Start:
    return rec, tuple(k for k, v in rec.items() if v.__class__ not in _ATOMS)


def _fresh(start: _Start) -> dict[str, Any]:
    """A game's own copy of a starting record (no list or map shared with another game)."""
    template, mutable = start
    rec = template.copy()
    for k in mutable:
        rec[k] = _copy(template[k])
    return rec


def _start(rs: Ruleset) -> tuple[_Start, tuple[tuple[str, _Start], ...]]:
    """The records every new game of ``rs`` starts with: a player's, and each static entity's."""
    player_kind = rs.kinds.get(PLAYER_KIND)
    player: dict[str, Any] = {"kind": PLAYER_KIND, "zone": None}
    if player_kind:
        for f in player_kind.fields.values():
            player[f.name] = _initial(f)
    statics = []
    for eid, spec in rs.entities.items():
        kind = rs.kinds[spec["kind"]]
        rec = {"kind": kind.name, "zone": None}
        for f in kind.fields.values():
            rec[f.name] = _copy(spec[f.name]) if f.name in spec else _initial(f)
        statics.append((eid, _record(rec)))
    return _record(player), tuple(statics)
