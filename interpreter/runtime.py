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

import contextlib
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import rng
from .diagnostics import Diagnostic, Loc, LudusError
from .model import (
    CALL_WORK,
    MAX_SIDES,
    MAX_STR,
    PLAYER_KIND,
    ActionDef,
    FieldDef,
    FunctionDef,
    Procedure,
    RuleFault,
    Ruleset,
    checked_int,
    copy_plain,
    type_default,
    work_fault,
)

STATE_FORMAT = 1
_ID = re.compile(r"[a-z][a-z0-9_]*\Z")  # with match(): the whole id ('$' also passes "x\n")
MAX_DEPTH = 200
_EMPTY: list = []


class IllegalChoice(Exception):
    """A choice that is not one of the offered ones; the state is untouched."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Choice:
    """One legal choice at a pause."""

    index: int
    label: str
    value: Any


def _rank_value(v: Any) -> int:
    """Scores and tie-breakers compare as numbers: true is 1, false 0, none lowest."""
    if v is None:
        return -(1 << 62)
    return int(v) if isinstance(v, bool | int) else 0


def _bad_die(d: Any) -> bool:
    return isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= MAX_SIDES


def _shown(v: Any) -> str:
    """A short text for a value a caller gave (a huge number is not written out in full)."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 24:
        return f"{'-' if v < 0 else ''}a number of {v.bit_length()} bits"
    text = repr(v)
    return text if len(text) <= 40 else text[:40] + "..."


def _initial(f: FieldDef) -> Any:
    """A fresh starting value for a field: its declared default, else its type's."""
    return _copy(f.default) if f.default is not None else type_default(f.type)


_copy = copy_plain


_SCALAR_KEYS = ("format", "seed", "rng", "next_id", "next_modifier")


def copy_state(st: dict[str, Any], shared: bool = False) -> dict[str, Any]:
    """A copy of a game state as good as a deep copy for the runtime, five times quicker.

    The runtime changes entities, zones, globals and the list of modifiers only by
    replacing values (``e[field] = v``, ``zone.append``, ``modifiers = [...]``), never by
    changing a field's value or a modifier record in place: so the entities' and zones'
    own dicts and lists are copied and their values shared. The frames, the pending
    decision and anything unknown are copied deeply (their dicts and lists do change in
    place). tests/test_runtime_copy.py plays games checking that a copy stays equal to a
    deep copy made at the same time.

    ``shared``: share the entities' dicts and the zones' lists too — only for games that
    copy one before changing it (see Game._writable_entity).
    """
    out: dict[str, Any] = {}
    for key, value in st.items():
        if key == "entities" and not shared:
            out[key] = {k: v.copy() for k, v in value.items()}
        elif key == "zones" and not shared:
            out[key] = {k: v[:] for k, v in value.items()}
        elif key in ("entities", "zones", "globals", "modifiers", "players", "forced_dice", "ruleset"):
            out[key] = value.copy()
        elif key in _SCALAR_KEYS:
            out[key] = value
        else:
            out[key] = _copy(value)
    return out


class Game:
    """A game in progress. Create with :meth:`new` or :meth:`resume`."""

    def __init__(self, rs: Ruleset, state: dict[str, Any]) -> None:
        self.rs = rs
        self.state = state
        self.log: list[dict[str, Any]] = []
        self.atomic = True
        self._procs: dict[str, Procedure] = dict(rs.procedures)
        for aid, action in rs.actions.items():
            self._procs["action:" + aid] = action.proc
        self._after_setup: Callable[[Game], None] | None = None
        self._depth = 0
        # Work done since the last decision (see spend) and passes of loops of generated code
        # (see codegen.StatementWriter); both start again at every run of the rules.
        self.work = 0
        self.work_budget = rs.work_budget
        self.steps = 0
        # Results of functions (pure: they read only their arguments and the state),
        # emptied by every change of the state (see _changed).
        self._memo: dict[tuple, Any] = {}
        self._bind()

    def _bind(self) -> None:
        st = self.state
        self.ents: dict[str, dict[str, Any]] = st["entities"]
        self.zones: dict[str, list[str]] = st["zones"]
        self.glob: dict[str, Any] = st["globals"]
        self.players: list[str] = st["players"]
        self._kind_index: dict[str, list[str]] | None = None
        self._memo = {}
        # Copy on write: the entities (by id) and zones (by key) whose dict or list this
        # game may change in place; None: all of them. A copy made by this game (an undo
        # copy, a copy for a bot) shares the others' dicts and lists, so both games then
        # copy one before changing it.
        self._own_ents: set[str] | None = None
        self._own_zones: set[str] | None = None

    def _shared(self) -> dict[str, Any]:
        """A copy of the state sharing entities' dicts and zones' lists with this game.

        A value the rules nested too deeply for Python to copy is a located error (at the
        decision waiting), and the state stays as it is.
        """
        self._own_ents, self._own_zones = set(), set()
        try:
            return copy_state(self.state, shared=True)
        except (RecursionError, MemoryError):
            raise self._too_deep("copy") from None

    def _too_deep(self, what: str) -> LudusError:
        loc: Loc = Loc(self.rs.folder)
        stack = self.state["stack"]
        if stack and stack[-1]["proc"] in self._procs:
            locs = self._procs[stack[-1]["proc"]].locs
            if locs:
                loc = locs[max(0, min(len(locs) - 1, stack[-1]["pc"] - 1))]
        return LudusError([Diagnostic(loc, f"a value of the game is nested too deeply to {what}",
                                      "a list put inside itself over and over?")])

    def _writable_entity(self, eid: str) -> dict[str, Any]:
        e = self.ents[eid]
        own = self._own_ents
        if own is not None and eid not in own:
            e = self.ents[eid] = e.copy()
            own.add(eid)
        return e

    def _writable_zone(self, key: str) -> list[str]:
        items = self.zones[key]
        own = self._own_zones
        if own is not None and key not in own:
            items = self.zones[key] = items[:]
            own.add(key)
        return items

    def _changed(self) -> None:
        """Forget remembered function results: the state they were computed on has changed."""
        if self._memo:
            self._memo.clear()

    # ================================================================ creation
    @classmethod
    def new(cls, rs: Ruleset, players: int | None = None, seed: int | str = 0,
            after_setup: Callable[[Game], None] | None = None, dice: Sequence[int] = ()) -> Game:
        """Start a game: build the initial state, run ``setup`` and ``main`` to the first pause."""
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
    def resume(cls, rs: Ruleset, state: dict[str, Any]) -> Game:
        """Continue a saved game (the state is used as is, not copied).

        A state that is not one this ruleset could have saved is refused with a LudusError
        (gamelog.state_problem): the run loop trusts the frames, zones and entities it holds.
        """
        from .gamelog import state_problem  # gamelog imports this module

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
        return cls(rs, state)

    def _populate(self) -> None:
        rs = self.rs
        player_kind = rs.kinds.get(PLAYER_KIND)
        for p in self.players:
            rec: dict[str, Any] = {"kind": PLAYER_KIND, "zone": None}
            if player_kind:
                for f in player_kind.fields.values():
                    rec[f.name] = _initial(f)
            self.ents[p] = rec
        for eid, spec in rs.entities.items():
            kind = rs.kinds[spec["kind"]]
            rec = {"kind": kind.name, "zone": None}
            for f in kind.fields.values():
                rec[f.name] = _copy(spec[f.name]) if f.name in spec else _initial(f)
            self.ents[eid] = rec
        for zname, z in rs.zones.items():
            if z.per is None:
                self.zones[zname] = []
        for eid, rec in self.ents.items():
            for zname in rs.kinds[rec["kind"]].zones if rec["kind"] in rs.kinds else ():
                self.zones[f"{zname}@{eid}"] = []
        for eid, spec in rs.entities.items():
            if spec.get("zone"):
                self._place(eid, spec["zone"], False)

    @staticmethod
    def _frame(proc: str, locals_: dict[str, Any], ret: str | None) -> dict[str, Any]:
        return {"proc": proc, "pc": 0, "locals": locals_, "ret": ret}

    # ================================================================ public API
    @property
    def pending(self) -> dict[str, Any] | None:
        return self.state["pending"]

    @property
    def result(self) -> dict[str, Any] | None:
        return self.state["result"]

    @property
    def over(self) -> bool:
        return self.state["result"] is not None

    def deciders(self) -> list[str]:
        """Players who may make a choice now (several during a secret choice)."""
        p = self.state["pending"]
        if p is None:
            return []
        if p["type"] == "secret":
            return [q for q in p["players"] if q not in p["answers"]]
        return [p["player"]]

    def choices(self, player: str | None = None) -> list[Choice]:
        """The finite, labelled list of legal choices for ``player`` (default: the first decider)."""
        p = self.state["pending"]
        if p is None:
            return []
        if player is None:
            ds = self.deciders()
            if not ds:
                return []
            player = ds[0]
        options = self._options_for(p, player)
        return [Choice(i, o["label"], o["value"]) for i, o in enumerate(options or [])]

    def _options_for(self, p: dict[str, Any], player: str) -> list[dict[str, Any]] | None:
        if p["type"] == "secret":
            if player in p["answers"] or player not in p["players"]:
                return None
            return p["players"][player]["options"]
        return p["options"] if p["player"] == player else None

    def apply(self, choice: int | str, player: str | None = None, dice: Sequence[int] | None = None) -> None:
        """Make a choice (by index, or by exact label) for ``player``.

        Raises :class:`IllegalChoice` and leaves the state untouched if it is not legal.
        ``dice`` forces the next die results (for tests and rulebook examples): whole numbers
        from 1 to MAX_SIDES (1000), else IllegalChoice; all must be rolled before the next
        decision, else IllegalChoice too. If a rule fails while the choice is carried out (a
        forced die the rolled die cannot show, a limit reached...), :class:`LudusError` with
        the rule's place; either way the state is as before.
        """
        self._changed()  # the state may have been edited from outside since the last call
        st = self.state
        p = st["pending"]
        if st["result"] is not None:
            raise IllegalChoice("the game is over")
        if p is None:
            raise IllegalChoice("no decision is pending")
        if player is None:
            ds = self.deciders()
            player = ds[0]
        options = self._options_for(p, player)
        if options is None:
            who = ", ".join(self.deciders())
            raise IllegalChoice(f"it is not {self.label_of(player)}'s decision (waiting for {who})")
        if isinstance(choice, bool) or not isinstance(choice, int | str):
            raise IllegalChoice(f"a choice is an index or a label, not {choice!r}")
        if isinstance(choice, str):
            matches = [i for i, o in enumerate(options) if o["label"] == choice]
            if not matches:
                labels = "; ".join(o["label"] for o in options[:12])
                raise IllegalChoice(f"'{choice}' is not one of the {len(options)} choices: {labels}")
            index = matches[0]
        else:
            index = choice
            if not 0 <= index < len(options):
                counted = "there is only 1 choice (0)" if len(options) == 1 else \
                    f"there are {len(options)} choices (0-{len(options) - 1})"
                raise IllegalChoice(f"choice {index} is out of range: {counted}")
        if dice is not None:
            for d in dice:
                if _bad_die(d):
                    raise IllegalChoice(f"forced dice must be whole numbers from 1 to {MAX_SIDES}, not {_shown(d)}")
        snapshot = self._shared() if self.atomic else None
        log_len = len(self.log)
        try:
            option = options[index]
            entry: dict[str, Any] = {"type": "choice", "player": player, "index": index, "label": option["label"]}
            if dice:
                entry["dice"] = [int(d) for d in dice]  # so a replay forces them too
            self.log.append(entry)
            if dice:
                st["forced_dice"].extend(int(d) for d in dice)
            self._resolve(p, player, option["value"])
            self._run()
            if dice and st["forced_dice"]:
                # Forced dice belong to the choice they come with; leftovers mean a wrong scenario.
                left = st["forced_dice"]
                self._rollback(snapshot, log_len)
                if snapshot is None:
                    left = list(left)
                    self.state["forced_dice"] = []
                raise IllegalChoice(f"this choice rolled {len(dice) - len(left)} of the {len(dice)} forced dice; "
                                    f"{left} were not rolled")
        except RuleFault as fault:
            self._rollback(snapshot, log_len)
            raise self._located(fault) from None
        except LudusError:
            self._rollback(snapshot, log_len)
            raise

    def _rollback(self, snapshot: dict[str, Any] | None, log_len: int) -> None:
        if snapshot is not None:
            self.state = snapshot
            self._bind()
            self._own_ents, self._own_zones = set(), set()  # the copy shares with the dropped state
        del self.log[log_len:]

    def _resolve(self, p: dict[str, Any], player: str, value: Any) -> None:
        st = self.state
        if p["type"] == "choice":
            st["pending"] = None
            st["stack"][-1]["locals"][p["var"]] = _copy(value)
        elif p["type"] == "action":
            st["pending"] = None
            args = dict(_copy(value["args"]))
            args["actor"] = player
            self.push("action:" + value["action"], args, p.get("bind"), None)
        else:
            p["answers"][player] = _copy(value)
            if len(p["answers"]) == len(p["players"]):
                st["pending"] = None
                st["stack"][-1]["locals"][p["var"]] = {q: p["answers"][q] for q in p["players"]}

    def view(self, player: str | None, copy: bool = True) -> dict[str, Any]:
        """What ``player`` may see (``None``: a spectator): hidden zones show only their size.

        ``copy=False`` shares values with the state (quicker; for reading at once, never to keep).
        """
        st = self.state
        out: dict[str, Any] = {k: st[k] for k in ("format", "ruleset", "players", "globals", "modifiers", "result")}
        zones: dict[str, Any] = {}
        hidden: set[str] = set()
        for key, items in st["zones"].items():
            if self._visible(key, player):
                zones[key] = list(items)
            else:
                zones[key] = {"hidden": len(items)}
                hidden.update(items)
        out["zones"] = zones
        out["entities"] = {e: dict(r) for e, r in st["entities"].items() if e not in hidden}
        p = st["pending"]
        if p is None:
            out["pending"] = None
        elif p["type"] == "secret":
            out["pending"] = {"type": "secret", "waiting_for": self.deciders(),
                              "players": {q: v for q, v in p["players"].items() if q == player},
                              "answers": {q: v for q, v in p["answers"].items() if q == player}}
        elif p["player"] == player:
            out["pending"] = p
        else:
            out["pending"] = {"type": p["type"], "player": p["player"], "prompt": p.get("prompt")}
        return _copy(out) if copy else out

    def sample(self, player: str, seed: int) -> Game:
        """A copy of the game as ``player`` might imagine it: for bots that look ahead.

        Everything ``player`` cannot see is redrawn at random from what is unseen:
        the entities in zones hidden from them are pooled by kind (sorted by id, so
        their arrangement in the real game leaks nothing), shuffled and dealt back
        into the hidden places; other players' secret answers not yet revealed are
        forgotten; the dice are re-seeded, so the dice to come are unknown too. The
        copy is not atomic (a look-ahead needs no undo) and logs nothing of note.
        """
        rand = random.Random(seed)
        st = self._shared()
        zones: dict[str, list[str]] = st["zones"]
        ents: dict[str, dict[str, Any]] = st["entities"]
        hidden = sorted(k for k in zones if zones[k] and not self._visible(k, player))
        hidden_ents: list[str] = []
        for key in hidden:  # redealt below: the copy's own lists and dicts
            zones[key] = zones[key][:]
            for eid in zones[key]:
                ents[eid] = ents[eid].copy()
                hidden_ents.append(eid)
        pools: dict[str, list[str]] = {}
        for key in hidden:
            for eid in zones[key]:
                pools.setdefault(ents[eid]["kind"], []).append(eid)
        for pool in pools.values():
            pool.sort()
            rand.shuffle(pool)
        for key in hidden:
            items = zones[key]
            for i, eid in enumerate(items):
                new = pools[ents[eid]["kind"]].pop()
                items[i] = new
            for eid in items:
                ents[eid]["zone"] = key
        p = st["pending"]
        if p is not None and p["type"] == "secret":
            p["answers"] = {q: v for q, v in p["answers"].items() if q == player}
        st["rng"] = rng.seed_state(rand.getrandbits(63))
        st["forced_dice"] = []
        game = Game(self.rs, st)
        game._own_ents, game._own_zones = set(hidden_ents), set(hidden)
        game.atomic = False
        return game

    def copy(self) -> Game:
        """An independent copy of the game as it stands (not atomic; its log starts empty)."""
        game = Game(self.rs, self._shared())
        game._own_ents, game._own_zones = set(), set()
        game.atomic = False
        return game

    def _visible(self, key: str, player: str | None) -> bool:
        known = self.rs.zone_visibility
        seen = known.get((key, player))
        if seen is None:
            seen = known[(key, player)] = self._zone_visible(key, player)
        return seen

    def _zone_visible(self, key: str, player: str | None) -> bool:
        name, _, owner = key.partition("@")
        z = self.rs.zones.get(name)
        if z is None or z.visibility == "public":
            return True
        return z.visibility == "owner" and player is not None and owner == player

    def to_json(self) -> str:
        """The state as JSON text (save); a value nested too deeply for JSON is a located error."""
        try:
            return json.dumps(self.state, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, MemoryError):
            raise self._too_deep("save") from None

    # ================================================================ the loop
    def _guarded(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except RuleFault as fault:
            raise self._located(fault) from None

    def _located(self, fault: RuleFault) -> LudusError:
        loc = fault.loc or Loc(self.rs.folder)
        return LudusError([Diagnostic(loc, fault.message, fault.hint)])

    def _run(self) -> None:
        st = self.state
        stack = st["stack"]
        procs = self._procs
        budget = self.rs.step_budget
        steps = 0
        self.work = self.steps = 0
        while st["pending"] is None and st["result"] is None:
            if not stack:
                self.finish("the rules ran to their end")
                return
            fr = stack[-1]
            proc = procs[fr["proc"]]
            pc = fr["pc"]
            code = proc.code
            if pc >= len(code):
                self.ret(None)
                continue
            fr["pc"] = pc + 1
            try:
                code[pc](self, fr)
            except RuleFault as fault:
                if fault.loc is None:
                    fault.loc = proc.locs[pc]
                raise
            except RecursionError:
                raise RuleFault("rules nested too deeply (a function calls itself without end?)",
                                proc.locs[pc]) from None
            except MemoryError:
                raise RuleFault("out of memory", proc.locs[pc], "a value grows too large") from None
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                raise RuleFault(f"rule failed: {type(exc).__name__}: {exc}", proc.locs[pc]) from None
            steps += 1
            if steps > budget:
                raise RuleFault(f"runaway rules in '{fr['proc']}': more than {budget} steps without a decision",
                                proc.locs[pc], "a loop never ends; check its 'until'/'while' condition")
            stack = st["stack"]

    # ================================================================ frames
    def push(self, name: str, args: dict[str, Any], bind: str | None, loc: Loc | None) -> None:
        stack = self.state["stack"]
        if loc is None and stack:
            # pushed on a player's answer: blame the statement that asked
            caller = stack[-1]
            loc = self._procs[caller["proc"]].locs[max(0, caller["pc"] - 1)]
        if len(stack) >= MAX_DEPTH:
            raise RuleFault(f"procedure calls nested more than {MAX_DEPTH} deep (endless recursion?)", loc)
        stack.append(self._frame(name, args, bind))

    def ret(self, value: Any) -> None:
        stack = self.state["stack"]
        fr = stack.pop()
        if stack and fr.get("ret"):
            stack[-1]["locals"][fr["ret"]] = value
        if fr["proc"] == "setup" and self._after_setup is not None and len(stack) == 1:
            hook, self._after_setup = self._after_setup, None
            self._changed()
            hook(self)
            self._changed()  # the hook edits the state directly

    # ================================================================ values
    def label_of(self, v: Any) -> str:
        """How a value reads in logs and labels."""
        cls = v.__class__
        if cls is str:  # the commonest, first: a text, or an entity's id
            e = self.ents.get(v)
            if e is None:
                return v
            kind = self.rs.kinds.get(e["kind"])
            if kind is not None and kind.label and e.get(kind.label) not in (None, ""):
                return str(e[kind.label])
            return v
        if cls is int:
            return str(v)
        if v is None:
            return "none"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, str):  # a subclass of str
            return self.label_of(str(v))
        if isinstance(v, list | dict):
            return self._label_of_many(v)
        return str(v)

    def _label_of_many(self, v: list | dict) -> str:
        """A list's or map's label: its items' labels, counted as work and at most MAX_STR long."""
        self.spend(len(v))
        parts = [self.label_of(x) for x in v] if isinstance(v, list) else \
            [f"{self.label_of(k)}: {self.label_of(x)}" for k, x in v.items()]
        size = sum(map(len, parts)) + 2 * len(parts)
        if size > MAX_STR:
            raise RuleFault(f"text too long: {size:,} characters (at most {MAX_STR:,})", None,
                            "a list too long to show?")
        return ", ".join(parts)

    @staticmethod
    def sort_key(v: Any) -> tuple:
        return (type(v).__name__, v) if not isinstance(v, list | dict) else ("z", json.dumps(v, sort_keys=True))

    def attr_fault(self, obj: Any, name: str, loc: Loc | None) -> RuleFault:
        if obj is None:
            return RuleFault(f"cannot read '{name}' of none", loc, "check that the value is set first")
        if obj not in self.ents:
            return RuleFault(f"cannot read '{name}' of {self.label_of(obj)}: it is not an entity", loc)
        return RuleFault(f"{self.label_of(obj)} has no field '{name}'", loc)

    def get_attr(self, obj: Any, name: str, loc: Loc | None) -> Any:
        if isinstance(obj, dict):
            if name in obj:
                return obj[name]
            raise RuleFault(f"no '{name}' in {self.label_of(obj)}", loc)
        e = self.ents.get(obj) if isinstance(obj, str) else None
        if e is None:
            raise self.attr_fault(obj, name, loc)
        if name in e:
            return e[name]
        if name == "id":
            return obj
        kind = self.rs.kinds.get(e["kind"])
        if kind is not None and name in kind.zones:
            return f"{name}@{obj}"
        raise self.attr_fault(obj, name, loc)

    def index_value(self, obj: Any, key: Any, loc: Loc | None) -> Any:
        if isinstance(obj, dict):
            if key in obj:
                return obj[key]
            raise RuleFault(f"no entry {self.label_of(key)} in {self.label_of(obj)}", loc)
        if isinstance(obj, list) and isinstance(key, int):
            if -len(obj) <= key < len(obj):
                return obj[key]
            raise RuleFault(f"index {key} is outside a list of {len(obj)}", loc)
        if isinstance(obj, str) and self._zone_def(obj) is not None and isinstance(key, int):
            return self.index_value(self.zone_items(obj), key, loc)
        raise RuleFault(f"cannot index {self.label_of(obj)}", loc)

    def as_seq(self, v: Any) -> list:
        if isinstance(v, list):
            return v
        if isinstance(v, dict):
            return list(v)
        if isinstance(v, str) and self._zone_def(v) is not None:
            return self.zone_items(v)
        raise RuleFault(f"cannot go through {self.label_of(v)}: it is not a list or zone")

    def as_map(self, v: Any, loc: Loc | None) -> dict:
        if isinstance(v, dict):
            return v
        raise RuleFault(f"{self.label_of(v)} is not a per-player map", loc)

    def kind_ids(self, kind: str) -> list[str]:
        """Every entity of ``kind``, in the order the entities were made."""
        if self._kind_index is None:
            # Games of one ruleset mostly hold the same entities (those of the ruleset and of
            # its set-up), so the index is shared between games with the same entity list:
            # every new game, copy or look-ahead would otherwise rebuild it.
            key = tuple(self.ents)
            known = self.rs.kind_indexes
            idx = known.get(key)
            if idx is None:
                idx = {}
                for eid, e in self.ents.items():
                    idx.setdefault(e["kind"], []).append(eid)
                if len(known) < 32:  # a few entity lists recur; rules that create many just rebuild
                    known[key] = idx
            self._kind_index = idx
        return list(self._kind_index.get(kind, _EMPTY))

    def spend(self, n: int) -> None:
        """Count ``n`` steps of work (items gone through, a call); past the budget, a fault
        (located at the statement running)."""
        w = self.work + n
        self.work = w
        if w > self.work_budget:
            raise work_fault(self.work_budget)

    def call_function(self, fdef: FunctionDef, args: dict[str, Any], loc: Loc | None) -> Any:
        self.spend(CALL_WORK)
        if self._depth > MAX_DEPTH:
            raise RuleFault(f"function '{fdef.name}' nested more than {MAX_DEPTH} deep (endless recursion?)", loc)
        self._depth += 1
        try:
            assert fdef.fn is not None
            value = fdef.fn(self, args)
            with contextlib.suppress(TypeError):  # a list argument is not hashable: not remembered
                self._memo[(fdef.name, *args.values())] = value
            return value
        finally:
            self._depth -= 1

    def distance(self, a: Any, b: Any, field: Any, loc: Loc | None) -> int | None:
        """Fewest steps from ``a`` to ``b`` following the list field ``field`` (none if unreachable)."""
        if a == b:
            return 0
        seen = {a}
        frontier = [a]
        steps = 0
        while frontier:
            steps += 1
            nxt = []
            for x in frontier:
                e = self.ents.get(x)
                if e is None or not isinstance(e.get(field), list):
                    raise RuleFault(f"distance(): {self.label_of(x)} has no list field '{field}'", loc)
                self.spend(len(e[field]))
                for y in e[field]:
                    if y == b:
                        return steps
                    if y not in seen:
                        seen.add(y)
                        nxt.append(y)
            frontier = nxt
        return None

    # ================================================================ zones & entities
    def _zone_def(self, key: str) -> Any:
        name, _, owner = key.partition("@")
        z = self.rs.zones.get(name)
        if z is None:
            return None
        if (z.per is None) != (owner == ""):
            return None
        if owner:
            e = self.ents.get(owner)
            if e is None or e["kind"] != z.per:
                return None
        return z

    def zone_items(self, key: Any) -> list[str]:
        items = self.zones.get(key)
        if items is not None:
            return items
        if not isinstance(key, str) or self._zone_def(key) is None:
            raise RuleFault(f"{self.label_of(key)} is not a zone")
        return _EMPTY

    def zone_owner(self, key: Any) -> str | None:
        if not isinstance(key, str):
            return None
        _, _, owner = key.partition("@")
        return owner or None

    def set_field(self, obj: Any, name: str, value: Any, op: str, loc: Loc | None) -> None:
        e = self.ents.get(obj) if isinstance(obj, str) else None
        if e is None:
            raise self.attr_fault(obj, name, loc)
        if name not in e or name in ("kind", "zone"):
            raise RuleFault(f"{self.label_of(obj)} has no field '{name}' that can be set", loc)
        self._changed()
        e = self._writable_entity(obj)
        if op == "=":
            e[name] = value
            return
        cur = e[name]
        if not isinstance(cur, int) or isinstance(cur, bool):
            raise RuleFault(f"cannot change {self.label_of(obj)}.{name} by a number: it is {self.label_of(cur)}", loc)
        e[name] = checked_int(cur + value if op == "+" else cur - value, loc)

    def _place(self, eid: str, key: str, top: bool) -> None:
        self._changed()
        e = self._writable_entity(eid)
        old = e["zone"]
        if old is not None:
            items = self.zones.get(old)
            if items is not None and eid in items:
                self._writable_zone(old).remove(eid)
        if key in self.zones:
            items = self._writable_zone(key)
        else:
            items = self.zones[key] = []
            if self._own_zones is not None:
                self._own_zones.add(key)
        if top:
            items.insert(0, eid)
        else:
            items.append(eid)
        e["zone"] = key

    def move(self, eid: Any, key: Any, top: bool, loc: Loc | None) -> None:
        if not isinstance(eid, str) or eid not in self.ents:
            raise RuleFault(f"cannot move {self.label_of(eid)}: it is not an entity", loc)
        z = self._zone_def(key) if isinstance(key, str) else None
        if z is None:
            raise RuleFault(f"cannot move to {self.label_of(key)}: it is not a zone", loc)
        kind = self.ents[eid]["kind"]
        if z.holds != "*" and kind != z.holds:
            raise RuleFault(f"zone '{z.name}' holds {z.holds} entities, not {kind} '{self.label_of(eid)}'", loc)
        self._place(eid, key, top)

    def shuffle(self, key: Any) -> None:
        self._changed()
        items = self.zone_items(key)
        if key in self.zones:
            items = self._writable_zone(key)
        st = self.state
        state = st["rng"]
        for i in range(len(items) - 1, 0, -1):
            state, j = rng.below(state, i + 1)
            items[i], items[j] = items[j], items[i]
        st["rng"] = state

    def create(self, kind: str, fields: dict[str, Any], zone: Any, loc: Loc | None,
               called: str | None = None) -> str:
        st = self.state
        kdef = self.rs.kinds[kind]
        if called is not None:
            eid = called
            if not _ID.match(eid):
                raise RuleFault(f"cannot create '{eid}': ids are snake_case (lower-case letters, digits, _)", loc)
            if eid in self.ents or eid in self.rs.globals or eid in self.rs.zones:
                raise RuleFault(f"cannot create '{eid}': that id is taken", loc)
        else:
            while True:
                eid = f"{kind}_{st['next_id']}"
                st["next_id"] += 1
                if eid not in self.ents:
                    break
        rec: dict[str, Any] = {"kind": kind, "zone": None}
        for f in kdef.fields.values():
            rec[f.name] = _initial(f)
        rec.update(fields)
        self._changed()
        self.ents[eid] = rec
        if self._own_ents is not None:
            self._own_ents.add(eid)
        for zname in kdef.zones:
            self.zones[f"{zname}@{eid}"] = []
            if self._own_zones is not None:
                self._own_zones.add(f"{zname}@{eid}")
        self._kind_index = None
        if zone is not None:
            self.move(eid, zone, False, loc)
        return eid

    def destroy(self, eid: Any, loc: Loc | None) -> None:
        e = self.ents.get(eid) if isinstance(eid, str) else None
        if e is None:
            raise RuleFault(f"cannot destroy {self.label_of(eid)}: it is not an entity", loc)
        if e["kind"] == PLAYER_KIND:
            raise RuleFault("players cannot be destroyed", loc)
        if e["zone"] is not None and eid in self.zones.get(e["zone"], _EMPTY):
            self._writable_zone(e["zone"]).remove(eid)
        for zname in self.rs.kinds[e["kind"]].zones:
            if self.zones.get(f"{zname}@{eid}"):
                raise RuleFault(f"cannot destroy {self.label_of(eid)}: its zone '{zname}' is not empty", loc)
            self.zones.pop(f"{zname}@{eid}", None)
        del self.ents[eid]
        self._kind_index = None
        self._changed()

    # ================================================================ dice & log
    def roll(self, n: int, sides: int, bonus: int | None, loc: Loc | None) -> list[int]:
        """Roll ``n`` dice of ``sides`` faces (1 to MAX_SIDES); with ``bonus``, each die showing
        that face adds a die (at most 10,000 dice in all)."""
        if n < 0 or n > 10_000:
            raise RuleFault(f"cannot roll {n} dice", loc)
        if not isinstance(sides, int) or not 1 <= sides <= MAX_SIDES:
            raise RuleFault(f"a die has 1 to {MAX_SIDES} sides, not {self.label_of(sides)[:24]}", loc)
        st = self.state
        forced = st["forced_dice"]
        state = st["rng"]
        values: list[int] = []
        left = n
        while left > 0:
            if forced:
                v = forced.pop(0)
                if not 1 <= v <= sides:
                    raise RuleFault(f"forced die {v} is not a result of a d{sides}", loc)
            else:
                state, r = rng.below(state, sides)
                v = r + 1
            values.append(v)
            left -= 1
            if bonus is not None and v == bonus:
                left += 1
                if len(values) > 10_000:
                    raise RuleFault("bonus dice chain too long", loc)
        st["rng"] = state
        self.log.append({"type": "dice", "values": values})
        return values

    def narrate(self, text: str) -> None:
        self.log.append({"type": "text", "text": text})

    # ================================================================ choices
    def _labelled(self, values: Sequence[Any], var: str, L: dict[str, Any],
                  label: Callable[[Any, dict], Any] | None) -> list[dict[str, Any]]:
        out = []
        L2 = dict(L)
        for v in values:
            if label is not None:
                L2[var] = v
                text = self.label_of(label(self, L2))
            else:
                text = self.label_of(v)
            out.append({"label": text, "value": _copy(v)})
        return out

    def _check_player(self, player: Any, loc: Loc | None) -> str:
        if player not in self.players:
            raise RuleFault(f"{self.label_of(player)} is not a player and cannot decide", loc)
        return player

    def ask(self, player: Any, options: Sequence[Any], var: str, L: dict[str, Any], prompt: Any,
            label: Callable[[Any, dict], Any] | None, loc: Loc | None, secret: bool = False) -> None:
        player = self._check_player(player, loc)
        if not options:
            raise RuleFault(f"{self.label_of(player)} must choose '{var}' but there is nothing to choose from",
                            loc, "guard the choice with a condition, or offer a 'none' option")
        self.state["pending"] = {"type": "choice", "player": player,
                                 "prompt": self.label_of(prompt) if prompt is not None else f"choose {var}",
                                 "var": var, "options": self._labelled(list(options), var, L, label)}
        if secret:
            self.state["pending"]["secret"] = True

    def ask_action(self, player: Any, group: str, bind: str | None, loc: Loc | None) -> None:
        player = self._check_player(player, loc)
        options = self.action_options(player, group)
        if not options:
            raise RuleFault(f"no action of group '{group}' is legal for {self.label_of(player)}", loc,
                            "add an action that is always legal, such as passing")
        self.state["pending"] = {"type": "action", "player": player, "prompt": f"choose an action ({group})",
                                 "group": group, "bind": bind, "options": options}

    def action_options(self, player: str, group: str) -> list[dict[str, Any]]:
        """Every legal (action, arguments) pair of ``group`` for ``player``, in a fixed order."""
        out: list[dict[str, Any]] = []
        for aid in self.rs.groups[group]:
            action = self.rs.actions[aid]
            if action.enum is not None:
                n = len(out)
                try:
                    action.enum(self, player, out)
                    continue
                except Exception:  # noqa: BLE001 - list it again the checked way, which says where it failed
                    del out[n:]
            self._enumerate(action, 0, {"actor": player}, out)
        return out

    def _enumerate(self, action: ActionDef, i: int, L: dict[str, Any], out: list[dict[str, Any]]) -> None:
        if action.stages is not None:
            for test in action.stages[i]:
                if not test(self, L):
                    return
        if i == len(action.params):
            label = self.label_of(action.label(self, L)) if action.label is not None else action.name
            args = {p.name: L[p.name] for p in action.params}
            out.append({"label": label, "value": {"action": action.name, "args": _copy(args)}})
            return
        param = action.params[i]
        assert param.domain is not None
        for v in list(param.domain(self, L)):
            L2 = dict(L)
            L2[param.name] = v
            self._enumerate(action, i + 1, L2, out)

    def ask_secret(self, players: list[Any], pvar: str, options: Callable[[Any, dict], Any], var: str,
                   L: dict[str, Any], prompt: Callable[[Any, dict], Any] | None,
                   label: Callable[[Any, dict], Any] | None, loc: Loc | None) -> None:
        per: dict[str, Any] = {}
        for p in players:
            p = self._check_player(p, loc)
            L2 = dict(L)
            L2[pvar] = p
            values = list(options(self, L2))
            if not values:
                raise RuleFault(f"{self.label_of(p)} must secretly choose '{var}' but there is nothing to choose from", loc)
            text = self.label_of(prompt(self, L2)) if prompt is not None else f"secretly choose {var}"
            per[p] = {"prompt": text, "options": self._labelled(values, var, L2, label)}
        if not per:
            self.state["stack"][-1]["locals"][var] = {}
            return
        self.state["pending"] = {"type": "secret", "var": var, "players": per, "answers": {}}

    # ================================================================ modifiers
    def point(self, name: str, args: list[Any]) -> Any:
        """Read a modifier point: its base value changed by every active modifier, oldest first."""
        pdef = self.rs.points[name]
        L = dict(zip(pdef.params, args, strict=True))
        assert pdef.base is not None
        value = pdef.base(self, L)
        for rec in self.state["modifiers"]:
            if rec["point"] != name or not self._applies(rec, L):
                continue
            value = value + rec["value"] if rec["mode"] == "add" else rec["value"]
        return value

    def _applies(self, rec: dict[str, Any], L: dict[str, Any]) -> bool:
        site = self.rs.sites[rec["site"]]
        if site.when is None and site.while_ is None:
            return True
        if site.while_ is not None and not site.while_(self, dict(rec["captured"])):
            return False
        if site.when is None:
            return True
        L2 = dict(rec["captured"])
        L2.update(L)
        return bool(site.when(self, L2))

    def add_modifier(self, rec: dict[str, Any]) -> None:
        st = self.state
        rec["id"] = st["next_modifier"]
        st["next_modifier"] += 1
        st["modifiers"].append(rec)
        self._changed()

    def signal(self, name: str) -> None:
        """End every modifier lasting 'until' this signal, and every 'while' whose condition is false."""
        keep = []
        for rec in self.state["modifiers"]:
            if rec["until"] == name:
                continue
            site = self.rs.sites[rec["site"]]
            if site.while_ is not None and not site.while_(self, dict(rec["captured"])):
                continue
            keep.append(rec)
        self.state["modifiers"] = keep
        self._changed()

    def consume(self, name: str, args: list[Any]) -> None:
        """Use up the one-use ('once') modifiers that apply to this reading."""
        pdef = self.rs.points[name]
        L = dict(zip(pdef.params, args, strict=True))
        self.state["modifiers"] = [r for r in self.state["modifiers"]
                                   if not (r["point"] == name and r["once"] and self._applies(r, L))]
        self._changed()

    # ================================================================ the end
    def finish(self, reason: str) -> None:
        st = self.state
        sc = self.rs.scoring
        scores: dict[str, Any] = {}
        keys: dict[str, tuple] = {}
        for p in self.players:
            L = {"p": p}
            s = sc.score(self, L) if sc.score else 0
            scores[p] = s
            keys[p] = tuple(_rank_value(v) for v in (s, *(tb(self, L) for tb in sc.tiebreaks)))
        ranking = sorted(self.players, key=lambda p: keys[p], reverse=True)
        best = keys[ranking[0]] if ranking else ()
        winners = [p for p in ranking if keys[p] == best]
        st["result"] = {"reason": reason, "scores": scores, "ranking": ranking, "winners": winners}
        st["pending"] = None
        st["stack"] = []
        self.log.append({"type": "end", "result": _copy(st["result"])})
