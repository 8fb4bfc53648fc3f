"""Views: what a player may see, samples for bots, copies of a game, saving.

``copy_state`` copies a state as well as a deep copy would for the runtime, sharing what
the runtime never changes in place; ``_shared`` makes such a copy that shares even the
entities' dicts and zones' lists, which both games then copy before changing.
"""

from __future__ import annotations

import json
import marshal
import random
from typing import TYPE_CHECKING, Any

from .. import rng
from ..diagnostics import Diagnostic, Loc, LudusError
from ..model import NO_MEMO, UMPIRE, copy_plain
from .base import GameBase
from .fog import Sight
from .viewbytes import VIEW_HEAD, Layout, view_bytes

if TYPE_CHECKING:
    from ..runtime import Game

_copy = copy_plain


# The keys of a game's state (docs/state.md); those holding a scalar are shared as they are.
_KEYS = frozenset(("format", "ruleset", "seed", "players", "globals", "entities", "zones", "modifiers", "rng",
                   "forced_dice", "next_id", "next_modifier", "stack", "pending", "result"))
_SCALAR_KEYS = ("format", "seed", "rng", "next_id", "next_modifier")
_SHALLOW_KEYS = ("entities", "zones", "globals", "modifiers", "players", "forced_dice", "ruleset")


def copy_state(st: dict[str, Any], shared: bool = False) -> dict[str, Any]:
    """A copy of a game state as good as a deep copy for the runtime, many times quicker.

    The runtime changes entities, zones, globals and the list of modifiers only by
    replacing values (``e[field] = v``, ``zone.append``, ``modifiers = [...]``), never by
    changing a field's value or a modifier record in place: so the entities' and zones'
    own dicts and lists are copied and their values shared. No rule changes a list or map
    in place either (every statement and built-in makes a new one), so a frame's values are
    shared too; what does change in place is copied (see ``_frames``): each frame, its
    dict of locals, and its loops' places. The pending decision is shared but for a secret
    decision's answers (see ``_pending``). Anything unknown is copied deeply.
    tests/test_runtime_copy.py plays games checking that a copy stays equal to a deep copy
    made at the same time. Code outside the runtime that edits a copy must likewise replace
    values, not change a frame's values or the pending options in place.

    ``shared``: share the entities' dicts and the zones' lists too — only for games that
    copy one before changing it (see game/board.py).
    """
    if st.keys() != _KEYS:
        return _copy_each(st, shared)
    out = st.copy()  # the scalars as they are; every other value replaced below
    if shared:
        out["entities"] = st["entities"].copy()
        out["zones"] = st["zones"].copy()
    else:
        out["entities"] = {k: v.copy() for k, v in st["entities"].items()}
        out["zones"] = {k: v[:] for k, v in st["zones"].items()}
    out["globals"] = st["globals"].copy()
    out["modifiers"] = st["modifiers"].copy()
    out["players"] = st["players"].copy()
    out["forced_dice"] = st["forced_dice"].copy()
    out["ruleset"] = st["ruleset"].copy()
    out["stack"] = _frames(st["stack"])
    out["pending"] = _pending(st["pending"])
    result = st["result"]
    if result is not None:
        out["result"] = _copy(result)
    return out


def _copy_each(st: dict[str, Any], shared: bool) -> dict[str, Any]:
    """copy_state of a state with keys missing or unknown (not a game's: made by hand)."""
    out: dict[str, Any] = {}
    for key, value in st.items():
        if key == "stack":
            out[key] = _frames(value)
        elif key == "pending":
            out[key] = _pending(value)
        elif key == "entities" and not shared:
            out[key] = {k: v.copy() for k, v in value.items()}
        elif key == "zones" and not shared:
            out[key] = {k: v[:] for k, v in value.items()}
        elif key in _SHALLOW_KEYS:
            out[key] = value.copy()
        elif key in _SCALAR_KEYS:
            out[key] = value
        else:
            out[key] = _copy(value)
    return out


def _frames(stack: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of the stack of frames for copy_state.

    A frame changes in place when it runs or is answered (``fr['pc']`` and ``fr['locals']``
    set, a value bound in its locals by ``ret`` or a choice), and a loop whose body pauses
    keeps its place in a list ``[items, index]`` of its locals (under '$<n>_VAR') whose index
    the generated code increases in place: these are copied; every list of the locals is
    (a shallow copy costs less than telling a loop's place from a value of the rules). The
    items of a place, and every other value, no rule changes in place: they are shared."""
    out = []
    for fr in stack:
        f = fr.copy()
        L = fr["locals"]
        mine = f["locals"] = L.copy()
        for k, v in L.items():
            if v.__class__ is list:
                mine[k] = v[:]
        out.append(f)
    return out


def _pending(p: dict[str, Any] | None) -> dict[str, Any] | None:
    """A copy of the pending decision for copy_state.

    Its options are labelled by then (``state`` and ``_full_state`` write every label) and
    nothing changes them in place: answering a choice or an action replaces the pending
    decision and copies the value chosen. Only a secret decision's answers change in place
    (one player's at a time), so that dict is copied."""
    if p is None:
        return None
    if p.get("type") == "secret":
        mine = p.copy()
        mine["answers"] = p["answers"].copy()
        return mine
    return p.copy()


class Views(GameBase):
    """Views of a player, samples and copies of the game, JSON."""

    #: The parts of this game's last view as marshal's bytes (game/viewbytes.py), and for a
    #: bot's trial (``copy(memos=True)``) those of the game it copies, if made of that very
    #: state: the trial's view changes them.
    view_layout: Layout | None = None
    source_layout: Layout | None = None
    #: The list of memo slots in which copy(memos=True) last put a dict of this game's own.
    memos_opened: list[dict[Any, Any]] | None = None

    def _shared(self) -> dict[str, Any]:
        """A copy of the state sharing entities' dicts and zones' lists with this game.

        A value copied deeply (see copy_state) that the rules nested too deeply for Python to
        copy is a located error (at the decision waiting), and the state stays as it is.
        """
        self._own_ents, self._own_zones = set(), set()
        try:
            return copy_state(self._full_state(), shared=True)
        except (RecursionError, MemoryError):
            raise self._too_deep("copy") from None

    def _too_deep(self, what: str) -> LudusError:
        loc: Loc = Loc(self.rs.folder)
        stack = self._state["stack"]
        if stack and stack[-1]["proc"] in self._procs:
            loc = self._paused_at(stack[-1]) or loc  # the statement the rules stopped at
        return LudusError([Diagnostic(loc, f"a value of the game is nested too deeply to {what}",
                                      "a list put inside itself over and over?")])

    def view(self, player: str | None, copy: bool = True) -> dict[str, Any]:
        """What ``player`` may see (``None``: a spectator): hidden zones show only their size.

        Under fog of war (``visible_to``, see game/fog.py) the entities the player does not
        see are left out of ``entities`` and of every zone, and the zones he does not see are
        left out of ``zones`` (not even their size: a count would tell strength). The umpire
        seat (if the ruleset has one) sees everything: every zone, the whole pending decision.

        ``copy=False`` shares values with the state (quicker; for reading at once, never to keep).
        """
        st = self._state  # the pending choices are labelled only if this view shows them
        out: dict[str, Any] = {k: st[k] for k in VIEW_HEAD}
        sight = Sight(self, player) if self.rs.fog else None
        if sight is not None and not sight.all:
            zones: dict[str, Any] = {}
            hidden: set[str] = set()
            self._fogged(sight, zones, hidden)
            out["zones"] = zones
            out["entities"] = {e: r for e, r in st["entities"].items()  # copied below if asked
                               if e not in hidden and sight.entity(e)}
        else:  # no fog of war: the plain loop (most games, and the bots' every look)
            out["zones"], hidden = self._plain_zones(player)
            out["entities"] = {e: r for e, r in st["entities"].items() if e not in hidden}  # copied below if asked
        out["pending"] = self._pending_view(player)
        return _copy(out) if copy else out

    def _plain_zones(self, player: str | None) -> tuple[dict[str, Any], set[str]]:
        """The zones of a view without fog of war, and the entities in those hidden from ``player``."""
        zones: dict[str, Any] = {}
        hidden: set[str] = set()
        visible = self._visible
        for key, items in self._state["zones"].items():
            if visible(key, player):
                zones[key] = list(items)
            else:
                zones[key] = {"hidden": len(items)}
                hidden.update(items)
        return zones, hidden

    def _pending_view(self, player: str | None) -> dict[str, Any] | None:
        """The pending decision as ``player`` sees it (shared with the state): its choices,
        labelled (see Asking.state), when they are his to make."""
        p: dict[str, Any] | None = self._state["pending"]
        if p is None:
            return None
        if player == UMPIRE and self.rs.umpire:
            return self._full_state()["pending"]  # the umpire's view: the whole decision, secret answers too
        if p["type"] == "secret":
            return {"type": "secret", "waiting_for": self.deciders(),
                    "players": {q: v for q, v in p["players"].items() if q == player},
                    "answers": {q: v for q, v in p["answers"].items() if q == player}}
        if p["player"] == player:
            return self._full_state()["pending"]
        return {"type": p["type"], "player": p["player"], "prompt": p.get("prompt")}

    def view_bytes(self, player: str | None) -> bytes:
        """``marshal.dumps(self.view(player, copy=False), 0)``, the same bytes made quicker from
        kept parts (see game/viewbytes.py): the bots' fingerprints of positions."""
        if self.rs.fog:
            return marshal.dumps(self.view(player, copy=False), 0)
        return view_bytes(self, player)

    def _fogged(self, sight: Sight, zones: dict[str, Any], hidden: set[str]) -> None:
        """The zones of a view under fog of war: an unseen zone is left out, with what it holds;
        a seen one lists (or, hidden, counts) only the entities seen."""
        for key, items in self._state["zones"].items():
            if not sight.zone(key):
                hidden.update(items)
            elif self._visible(key, sight.player):
                zones[key] = [e for e in items if sight.entity(e)]
            else:
                zones[key] = {"hidden": sum(map(sight.entity, items))}
                hidden.update(items)

    def sample(self, player: str, seed: int) -> Game:
        """A copy of the game as ``player`` might imagine it: for bots that look ahead.

        Everything ``player`` cannot see is redrawn at random from what is unseen:
        the entities in zones hidden from them are pooled by kind (sorted by id, so
        their arrangement in the real game leaks nothing), shuffled and dealt back
        into the hidden places; other players' secret answers not yet revealed are
        forgotten; the dice are re-seeded, so the dice to come are unknown too.
        Under fog of war every entity the player does not see is taken out of its
        zone (its ``zone`` is none): what he cannot see is nowhere in the world he
        imagines. The copy is not atomic (a look-ahead needs no undo) and logs
        nothing of note.
        """
        from ..runtime import Game  # runtime imports this module

        rand = random.Random(seed)
        st = self._shared()
        zones: dict[str, list[str]] = st["zones"]
        ents: dict[str, dict[str, Any]] = st["entities"]
        visible = self._visible
        hidden = sorted(k for k, items in zones.items() if items and not visible(k, player))
        kind_of = {eid: ents[eid]["kind"] for key in hidden for eid in zones[key]}
        pools: dict[str, list[str]] = {}
        for eid, kind in kind_of.items():
            pools.setdefault(kind, []).append(eid)
        for pool in pools.values():
            pool.sort()
            rand.shuffle(pool)
        hidden_ents: list[str] = []
        for key in hidden:  # redealt: the copy's own lists, and dicts for the entities that move
            items = zones[key] = [pools[kind_of[eid]].pop() for eid in zones[key]]
            for eid in items:
                if ents[eid]["zone"] != key:
                    ents[eid] = dict(ents[eid], zone=key)
                    hidden_ents.append(eid)
        if self.rs.fog:
            hidden_ents += _out_of_sight(Sight(self, player), zones, ents, hidden)
        p = st["pending"]
        if p is not None and p["type"] == "secret" and not (player == UMPIRE and self.rs.umpire):
            p["answers"] = {q: v for q, v in p["answers"].items() if q == player}
        st["rng"] = rng.seed_state(rand.getrandbits(63))
        st["forced_dice"] = []
        game = Game(self.rs, st)
        game._own_ents, game._own_zones = set(hidden_ents), set(hidden)
        game.atomic = False
        self._share_constants(game)
        return game

    def copy(self, memos: bool = False) -> Game:
        """An independent copy of the game as it stands (not atomic; its log starts empty).

        ``memos``: the copy shares this game's remembered results (the very dicts), and its
        next ``apply`` keeps them: for a copy played at once, with nothing edited from outside
        in between (a bot's trial of each choice on one sampled game). Each game leaves a
        shared dict when its own state changes what that function reads (see Values), so a
        result either game remembers there is true of both: the next copies start with what
        earlier ones worked out and their choices left unchanged.
        """
        from ..runtime import Game  # runtime imports this module

        game = Game(self.rs, self._shared())
        game._own_ents, game._own_zones = set(), set()
        game.atomic = False
        if memos:
            mine = self.memos
            if self.memos_opened is not mine:  # a dict of its own in every slot, which copies fill for all
                for i in self.rs.memo_volatile:
                    if mine[i] is NO_MEMO:
                        mine[i] = {}
                self.filled = self.rs.memo_volatile_bits
                self.memos_opened = mine  # (a slot forgotten since is only not shared)
            game.memos = mine[:]  # every dict, those of constant functions too
            game.filled = self.filled
            game.memos_handed = True
            layout = self.view_layout
            if layout is not None and layout.state is self._state and layout.changes == self.changes:
                game.source_layout = layout
        else:
            self._share_constants(game)
        return game

    def _share_constants(self, game: Game) -> None:
        """Let a copy or a sample use the remembered results of constant functions (they read
        only fields no rule sets, the same in both games): a bot's look-ahead then does not
        work out the map again. Neither game ever empties a shared dict (see forget_all).

        This game's kept constant results are counted first, as ``changed`` counts them: a
        bot's look-ahead adds to them through the samples, between this game's decisions."""
        self.bound_constants()
        mine, theirs = self.memos, game.memos
        for i in self.rs.memo_constant:
            theirs[i] = mine[i]

    def _visible(self, key: str, player: str | None) -> bool:
        if player == UMPIRE and self.rs.umpire:  # the umpire sees the whole board
            return True
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
            return json.dumps(self._full_state(), ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, MemoryError):
            raise self._too_deep("save") from None


def _out_of_sight(sight: Sight, zones: dict[str, list[str]], ents: dict[str, dict[str, Any]],
                  hidden: list[str]) -> list[str]:
    """Take every entity ``sight`` does not see out of its zone, in a sample's state (whose
    entities' dicts and zones' lists are shared with the game but for those in ``hidden``,
    the zones already redealt, which it may change in place); returns the entities changed.
    What is unseen is judged on the real game (the sight's), where it is seen from."""
    unseen = sight.unseen_entities()
    gone = set(unseen)
    for key in {ents[eid]["zone"] for eid in unseen} - {None}:
        zones[key] = [e for e in zones[key] if e not in gone]
        if key not in hidden:
            hidden.append(key)
    for eid in unseen:
        ents[eid] = dict(ents[eid], zone=None)
    return unseen
