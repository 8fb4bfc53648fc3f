"""GameBase: the attributes every part of a game shares, and the interface compiled rules use.

Each part of :class:`interpreter.runtime.Game` (``machine``, ``board``, ``choices``,
``modifiers``, ``views``, ``values``) is a mixin deriving from :class:`GameBase`, which
declares, for mypy only, the attributes ``Game.__init__`` sets and the methods one part
calls on another. At run time GameBase adds nothing: no class attributes, no methods, so
a call costs what it did when ``Game`` was one class.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..diagnostics import LudusError
from ..model import Procedure, RuleFault, Ruleset

if TYPE_CHECKING:
    from ..diagnostics import Loc
    from ..runtime import Game

MAX_DEPTH = 200  # frames of procedures, and nested calls of functions


class GameBase:
    """What the parts of a game share.

    **The interface compiled rules call.** The generated Python of ``dsl/`` gets the game
    as ``g`` and uses only these (no private attribute):

    - state: ``g.raw_state`` (read: ``g.raw_state['modifiers']``; the state as the running
      rules see it, without what reading ``state`` does), ``g.ents`` (entities by id),
      ``g.zones`` (zone key → entity ids), ``g.glob`` (globals), ``g.players`` (seats);
    - budgets: ``g.spend(n)``, ``g.work``, ``g.work_budget``, ``g.steps`` (loop passes);
    - remembered function results: ``g.memos`` (one dict per remembering function),
      ``g.filled`` (the volatile slots given a dict), ``g.changed_glob(name)`` (after setting a global),
      ``g.depth`` (calls of recursive rule functions running inside one another);
    - values: ``g.label_of(v)``, ``g.sort_key(v)``, ``g.get_attr(obj, name, loc)``,
      ``g.attr_fault(obj, name, loc)``, ``g.index_value(obj, key, loc)``, ``g.as_seq(v)``,
      ``g.as_map(v, loc)``, ``g.narrate(text)``,
      ``g.narrate_to(text, players)``;
    - the board: ``g.set_field(obj, name, value, op, loc)``, ``g.move(eid, zone, top, loc)``,
      ``g.shuffle(zone)``, ``g.create(kind, fields, zone, loc, called)``,
      ``g.destroy(eid, loc)``, ``g.zone_items(zone)``, ``g.zone_owner(zone)``,
      ``g.kind_ids(kind)``, ``g.distance(a, b, field, loc)``, ``g.roll(n, sides, bonus, loc)``;
    - modifiers: ``g.point(name, args)``, ``g.add_modifier(rec)``, ``g.signal(name)``,
      ``g.consume(name, args)``;
    - commit points (undo stops there): ``g.commit()``;
    - frames and decisions: ``g.push(name, args, bind, loc)``, ``g.ret(value)``,
      ``g.finish(reason)``, ``g.ask(...)``, ``g.ask_action(player, group, bind, loc, prompt)``,
      ``g.ask_secret(...)``.

    Players of a game (the CLI, bots, scenarios, logs) use ``Game.new``, ``Game.resume``,
    ``pending``, ``result``, ``over``, ``seats``, ``deciders``, ``choices``, ``apply``, ``view``,
    ``sample``, ``copy``, ``to_json``, ``log`` and ``atomic``.
    """

    # set by Game.__init__ and Game._bind (see there)
    rs: Ruleset
    _state: dict[str, Any]  # read through ``state`` (Asking), which labels the pending menu first
    raw_state: dict[str, Any]  # the same dict, read by compiled rules (see above)
    exposed: bool
    # the pending decision's choices while some are not yet labelled, and how one is labelled
    _unlabelled: tuple[list[dict[str, Any]], Callable[[dict[str, Any]], str]] | None
    log: list[dict[str, Any]]
    atomic: bool
    usage: Counter[str] | None
    draws: int
    commits: int
    work: int
    work_budget: int
    steps: int
    memos: list[dict[Any, Any]]
    """Remembered results of functions: one dict per remembering function, keyed by its
    arguments (their tuple; a function of one argument by that argument itself).

    Functions are pure (they read only their arguments and the state), so a result holds
    until the state changes; ``changed()`` forgets it, putting the shared empty NO_MEMO in
    the slot (a dict may be shared with a bot's trial copy, so it is never emptied in place:
    see game/values.py). The generated functions of the rules read and fill it
    (dsl/procwriter.function_source).
    """
    filled: int
    """The volatile memo slots (``rs.memo_volatile``) that may hold a dict rather than NO_MEMO,
    each once: a generated function notes a slot as it puts a first dict in it, and a change
    looks at these slots alone (game/values.py)."""
    changes: int
    """Changes of the state the rules can read, counted (game/values.py)."""
    ents: dict[str, dict[str, Any]]
    zones: dict[str, list[str]]
    glob: dict[str, Any]
    players: list[str]
    _procs: dict[str, Procedure]
    _after_setup: Callable[[Game], None] | None
    on_signal: Callable[[Game, str], None] | None
    depth: int
    _kind_index: dict[str, list[str]] | None
    _own_ents: set[str] | None
    _own_zones: set[str] | None

    if TYPE_CHECKING:
        state: dict[str, Any]  # a property of Asking
        # What one part calls on another; each is defined in the module named.
        # runtime
        def _bind(self) -> None: ...
        # machine
        def _run(self) -> None: ...
        def _located(self, fault: RuleFault, said: Sequence[str] = ()) -> LudusError: ...
        def push(self, name: str, args: dict[str, Any], bind: str | None, loc: Loc | None) -> None: ...
        def ret(self, value: Any) -> None: ...
        def _paused_at(self, fr: dict[str, Any]) -> Loc | None: ...
        def spend(self, n: int) -> None: ...
        def finish(self, reason: str) -> None: ...
        # board
        def _writable_zone(self, key: str) -> list[str]: ...
        def _zone_def(self, key: str) -> Any: ...
        def zone_items(self, key: Any) -> list[str]: ...
        def move(self, eid: Any, key: Any, top: bool, loc: Loc | None) -> None: ...
        # choices
        def deciders(self) -> list[str]: ...
        # asking
        def _labelled(self, values: Sequence[Any], var: str, L: dict[str, Any],
                      label: Callable[[Any, dict], Any] | None) -> list[dict[str, Any]]: ...
        def action_options(self, player: str, group: str) -> list[dict[str, Any]]: ...
        def _label_of_choice(self, option: dict[str, Any]) -> str: ...
        def _label_or_fail(self) -> None: ...
        def _full_state(self) -> dict[str, Any]: ...
        def _check_player(self, player: Any, loc: Loc | None) -> str: ...
        # views
        def _shared(self) -> dict[str, Any]: ...
        def _too_deep(self, what: str) -> LudusError: ...
        def _visible(self, key: str, player: str | None) -> bool: ...
        # values
        def changed(self) -> None: ...
        def forget_all(self) -> None: ...
        def decided(self) -> None: ...
        def changed_field(self, name: str) -> None: ...
        def changed_zones(self) -> None: ...
        def _forget(self, fact: tuple[str, ...]) -> None: ...
        def bound_constants(self) -> None: ...
        def label_of(self, v: Any) -> str: ...
        def attr_fault(self, obj: Any, name: str, loc: Loc | None) -> RuleFault: ...
