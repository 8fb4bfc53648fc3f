"""The compiled ruleset: definitions the runtime executes. Built by loader.py."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Loc
from .dsl.types import Type

_ATOMS = frozenset({str, int, bool, type(None)})


def copy_plain(value: Any) -> Any:
    """A deep copy of plain data (pickle is the fastest deep copy for JSON-like values; a flat
    list or map, the commonest, is copied by hand)."""
    cls = value.__class__
    if cls in _ATOMS:
        return value
    if cls is dict:
        if all(v.__class__ in _ATOMS for v in value.values()):
            return value.copy()
    elif cls is list and all(v.__class__ in _ATOMS for v in value):
        return value[:]
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


# A compiled expression: (game, locals) -> value.
ExprFn = Callable[[Any, dict], Any]
# A procedure's generated function: (game, frame) -> None.
OpFn = Callable[[Any, dict], None]

# Bounds on what rules compute, the same for every ruleset (see docs/dsl.md, "Limits"):
# whole numbers stay within ±MAX_INT, lists hold at most MAX_LIST items and texts at most
# MAX_STR characters; past them, the rule that made the value fails with a located error.
MAX_INT = (1 << 63) - 1
MAX_LIST = 100_000
MAX_STR = 1_000_000
MAX_SIDES = 1000  # faces of a die (at least 1)

# The budgets between two decisions, by manifest key: (least, default, hard maximum). A
# ruleset may set them within these bounds (limits: in ruleset.yaml), never past the maximum.
# steps: statements run (a pass of a loop of generated code counts as one);
# work: items gone through by comprehensions, built-ins over lists and ranges, plus CALL_WORK
# for each call of a function whose result is not remembered (a call does an expression's work).
LIMITS: dict[str, tuple[int, int, int]] = {
    "steps": (100, 200_000, 2_000_000),
    "work": (1_000, 200_000, 5_000_000),
}
# Each result remembered (Game.memos, forgotten when what it reads changes) costs a call's work,
# so the work of the runs since they were last counted bounds how many may have been added.
CALL_WORK = 10
# The memo slot of a function with nothing remembered yet (shared, never written: see Game.memos).
NO_MEMO: dict = {}
# Results outlive decisions (those of constant functions, which read only fields no rule sets,
# in every game; all in a game only the rules change): at most this many are kept in all, so
# that a long game cannot fill the memory with them (Values.decided, Values.changed).
MAX_KEPT_RESULTS = 100_000
# Procedure calls (frames), and calls of a function that may call itself, nest at most this deep.
MAX_CALL_DEPTH = 200

PLAYER_KIND = "player"
# The seat a ruleset may declare (manifest ``umpire: true``): it decides what the
# rules give it (``by umpire``) but is not a player: not in ``players``, never scored.
UMPIRE = "umpire"
RESERVED_FIELDS = ("id", "kind", "zone")


def type_default(type_: Type) -> Any:
    """The value a field or global of this type starts with when none is given."""
    if type_.tag == "list":
        return []  # a new list each time: callers keep it
    return {"int": 0, "bool": False, "str": ""}.get(type_.tag)


class RuleFault(Exception):
    """A rule failed while running (bad value, missing row, runaway loop...).

    ``loc`` is filled in by the innermost code that knows where it is.
    """

    def __init__(self, message: str, loc: Loc | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.loc, self.hint = message, loc, hint
        # Located at the statement running rather than the expression (the budgets' faults).
        self.at_statement = False
        # The rule procedures and functions it happened in, outermost first: (where each was
        # called, what was called with which arguments); see dsl/source.fault_of.
        self.chain: list[tuple[Loc | None, str]] = []


def int_fault(value: int, loc: Loc | None) -> RuleFault:
    """The error for a whole number past ±MAX_INT."""
    return RuleFault(f"number out of range: {'-' if value < 0 else ''}about 2^{value.bit_length() - 1} "
                     f"(numbers stay within ±{MAX_INT:,})", loc, "a value grows without end?")


def checked_int(value: Any, loc: Loc | None) -> Any:
    """``value``, unless it is a whole number past ±MAX_INT (other values pass as they are)."""
    if value.__class__ is int and not -MAX_INT <= value <= MAX_INT:
        raise int_fault(value, loc)
    return value


def checked_size_error(items: int, loc: Loc | None) -> RuleFault:
    """The error for a list of more than MAX_LIST items."""
    return RuleFault(f"list too long: {items:,} items (at most {MAX_LIST:,})", loc, "a list grows without end?")


def checked_size(value: Any, loc: Loc | None) -> Any:
    """``value``, unless it is a list longer than MAX_LIST or a text longer than MAX_STR."""
    if value.__class__ is list and len(value) > MAX_LIST:
        raise checked_size_error(len(value), loc)
    if value.__class__ is str and len(value) > MAX_STR:
        raise RuleFault(f"text too long: {len(value):,} characters (at most {MAX_STR:,})", loc,
                        "a text grows without end?")
    return value


def work_fault(budget: int) -> RuleFault:
    """The error for more work between two decisions than the budget allows.

    It has no place of its own: the statement running takes it (the same one whether the rules
    run as closures or as generated Python, which notice it at different points).
    """
    fault = RuleFault(f"too much work before a decision: more than {budget:,} steps of expressions",
                      None, "a list, range, comprehension or recursive function is too large; see limits: work")
    fault.at_statement = True
    return fault


@dataclass
class FieldDef:
    name: str
    type: Type  # see dsl/types.py
    default: Any = None


@dataclass
class ZoneDef:
    name: str
    per: str | None  # None: one global zone; else one zone per entity of this kind
    visibility: str  # public | owner | hidden
    holds: str = "*"  # the kind of entity it holds, or '*'
    source: str = ""
    # Fog of war ('visible_to:', a zone per entity only): whether player 'me' sees the zone of
    # entity 'it' (see game/fog.py); None: whoever sees its owner sees it.
    visible_to: ExprFn | None = None

    def key(self, owner: str | None) -> str:
        return self.name if owner is None else f"{self.name}@{owner}"


@dataclass
class ProcField:
    """A field of a kind whose value is a procedure (``type: procedure``): each entity of the
    kind carries its own rules text, run by ``call e.FIELD(args)``."""

    name: str
    params: dict[str, Type]
    # The procedure of an entity that gives no text of its own (from the field's 'default').
    default: str | None = None


@dataclass
class KindDef:
    name: str
    fields: dict[str, FieldDef] = field(default_factory=dict)
    procs: dict[str, ProcField] = field(default_factory=dict)  # its procedure-valued fields
    zones: dict[str, ZoneDef] = field(default_factory=dict)
    label: str | None = None  # field used as the display name
    source: str = ""
    # Fog of war ('visible_to:'): whether player 'me' sees entity 'it' of this kind (game/fog.py).
    visible_to: ExprFn | None = None


@dataclass
class GlobalDef:
    name: str
    type: Type
    initial: Any


@dataclass
class TableDef:
    name: str
    keys: list[str]
    rows: dict[str, Any]
    default: Any = None
    has_default: bool = False
    key_types: list[Type] = field(default_factory=list)  # when 'keys' gives them (else any)
    value_type: Type | None = None  # 'values:', when given


@dataclass
class ConstantDef:
    """A named value of ``constants:``: read by name in rules, never changed."""

    name: str
    type: Type
    value: Any


@dataclass
class FunctionDef:
    name: str
    params: dict[str, Type]
    returns: Type
    fn: ExprFn | None = None
    loc: Loc | None = None


@dataclass
class PointDef:
    name: str
    params: dict[str, Type]
    type: Type
    base: ExprFn | None = None
    loc: Loc | None = None


@dataclass
class Procedure:
    name: str
    params: dict[str, Type]
    # Its generated function run on a frame: ``run(game, frame)`` goes on from the frame's
    # resume point ('pc', 0 at the start) to the next decision or the procedure's end.
    run: OpFn | None = None
    loc: Loc | None = None
    # Its resume points: each number a frame's 'pc' may hold -> (origin, line, col) of the
    # statement it pauses at (see dsl/procwriter.py).
    points: dict[int, Any] = field(default_factory=dict)


@dataclass
class ActionParam:
    name: str
    type: Type
    domain: ExprFn | None = None


@dataclass
class ActionDef:
    name: str
    group: str
    params: list[ActionParam]
    label: ExprFn | None
    proc: Procedure
    loc: Loc | None = None
    # Generated: appends every legal (action, arguments) choice for an actor (see dsl/listers.lister).
    enum: Callable[[Any, str, list], None] | None = None
    labeler: Callable[[Any, str, dict], str] | None = None  # the label of one choice (when the rules write one)


@dataclass
class ModifierSite:
    """A compiled 'modify' statement: its condition and lifetime expressions."""

    when: ExprFn | None
    while_: ExprFn | None
    captured: list[str]


@dataclass
class Scoring:
    score: ExprFn | None = None
    tiebreaks: list[ExprFn] = field(default_factory=list)
    evaluation: ExprFn | None = None
    rounds: ExprFn | None = None  # the game's length in rounds, read at the end (for `ludus simulate`)
    metrics: dict[str, ExprFn] = field(default_factory=dict)  # per-player numbers read at the end, over p


@dataclass
class ReportDef:
    """The ``report:`` entry: a section of a player's report ends at each ``signal EVERY``."""

    every: str
    title: ExprFn | None = None  # a template of 'me' and 'number' (the section's, from 1)


@dataclass
class BoardDef:
    """The ``board:`` section, checked and compiled (presentation only: not part of the digest).

    See docs/board.md. Expressions are ``fn(game, locals)`` of ``it`` (a place, an item) or ``p``
    (a player); the web board evaluates them on a game made of one seat's view.
    """

    size: tuple[int, int] = (1000, 640)
    colours: dict[str, str] = field(default_factory=dict)  # seat -> colour
    kind: str | None = None  # the kind drawn as places (regions)
    at: dict[str, tuple[float, float]] = field(default_factory=dict)  # place -> its point
    shape: str = "circle"
    place_size: tuple[float, float] = (14.0, 14.0)  # a circle's radius (twice) or a rectangle's width, height
    links: list[str] = field(default_factory=list)  # list fields drawn as connections, the first solid
    pieces: list[str] = field(default_factory=list)  # zones per place drawn as stacks
    located: list[tuple[str, str]] = field(default_factory=list)  # (kind, field naming a place)
    owner: ExprFn | None = None  # of 'it': the player whose colour fills the place
    detail: ExprFn | None = None  # of 'it': a short text under the place
    tracks: dict[str, tuple[str, ExprFn, int]] = field(default_factory=dict)  # id -> (label, value of p, max)
    mat_zones: list[str] = field(default_factory=list)  # zones per player shown on his mat
    mat_fields: list[str] = field(default_factory=list)  # fields of the player shown on his mat
    # id -> (zone, x, y, width, height, title, item template of 'it' or None)
    areas: dict[str, tuple[str, float, float, float, float, str, ExprFn | None]] = field(default_factory=dict)


@dataclass
class Ruleset:
    """Everything needed to run a game; immutable once loaded."""

    name: str
    version: str
    title: str
    min_players: int
    max_players: int
    seats: list[str]
    folder: str
    digest: str
    data: dict[str, Any]  # the merged, validated ruleset document (for docs and `where`)
    smap: Any  # SourceMap of ``data``
    kinds: dict[str, KindDef] = field(default_factory=dict)
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)  # enumeration -> its values
    constants: dict[str, ConstantDef] = field(default_factory=dict)
    zones: dict[str, ZoneDef] = field(default_factory=dict)
    globals: dict[str, GlobalDef] = field(default_factory=dict)
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)  # static entities, expanded
    tables: dict[str, TableDef] = field(default_factory=dict)
    functions: dict[str, FunctionDef] = field(default_factory=dict)
    points: dict[str, PointDef] = field(default_factory=dict)
    procedures: dict[str, Procedure] = field(default_factory=dict)
    # For each procedure-valued field: the procedure each static entity carries in it.
    field_procs: dict[str, dict[str, str]] = field(default_factory=dict)
    actions: dict[str, ActionDef] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    sites: dict[str, ModifierSite] = field(default_factory=dict)
    signals: set[str] = field(default_factory=set)  # every NAME some rule signals ('signal NAME')
    # invariants: what every position of a game keeps: name -> (condition, message)
    invariants: dict[str, tuple[ExprFn, str]] = field(default_factory=dict)
    scoring: Scoring = field(default_factory=Scoring)
    # the lines of a player's status (the 'status' section): id -> (label, expression of 'me')
    status: dict[str, tuple[str, ExprFn]] = field(default_factory=dict)
    setups: dict[str, str] = field(default_factory=dict)  # named set-ups: name -> title
    # Fog of war: some kind or zone declares 'visible_to' (views, samples and status filter
    # entities then; without it they cost nothing more).
    fog: bool = False
    report: ReportDef | None = None  # the 'report:' entry (ludus report)
    board: BoardDef | None = None  # the 'board:' entry (ludus serve; see docs/board.md)
    setup: str | None = None  # the set-up this ruleset was loaded with (load_ruleset(setup=...))
    default_players: int = 0  # the usual count (manifest players: default; else min): a scenario's default
    step_budget: int = LIMITS["steps"][1]
    work_budget: int = LIMITS["work"][1]
    chain: list[str] = field(default_factory=list)  # the manifest files, base first
    umpire: bool = False  # the manifest declares the umpire seat (docs/umpire.md)
    rl_max_actions: int | None = None  # the manifest's 'rl: max_actions' (docs/rl.md), else None
    # The remembered results of functions (Game.memos): how many slots (a function's results,
    # or indexes of zones: index_slots, after the functions'), and for
    # each change of the state — ('field', NAME), ('glob', NAME), ('zones',) — which of them
    # to forget (memo_always: those forgotten at every change); see dsl/functions.memo_readers.
    # A change's readers that are constant (below), if any, are also in memo_pinned: a game
    # keeps no note of the constant memos it filled (Game.filled), so those are forgotten by number.
    memo_count: int = 0
    memo_readers: dict[tuple[str, ...], frozenset[int]] = field(default_factory=dict)
    memo_always: frozenset[int] = frozenset()
    memo_pinned: dict[tuple[str, ...], tuple[int, ...]] = field(default_factory=dict)
    # the same as numbers whose bits are slots (slot i: bit i), as Game.filled holds them
    memo_reader_bits: dict[tuple[str, ...], int] = field(default_factory=dict)
    memo_always_bits: int = 0
    # those of the change of a field, by the field's name (the commonest change: no tuple
    # to build and hash when one is set; see Board.set_field)
    field_reader_bits: dict[str, int] = field(default_factory=dict)
    field_pinned: dict[str, tuple[int, ...]] = field(default_factory=dict)
    memo_volatile_bits: int = 0
    # The memos a change of modifiers forgets (Game.changed): all but those of functions that
    # read only fields no rule sets (the map, printed values), which hold for the whole game.
    memo_volatile: tuple[int, ...] = ()
    memo_constant: tuple[int, ...] = ()  # the others: shared by a game's copies (Views._share_constants)
    # Each field some query looks items up by (``for x in Z where x.F == v``) -> the memo slot
    # of the indexes of zones (one for all fields), forgotten as the results of a function
    # reading those fields and the zones are (see dsl/zoneindex.py).
    index_slots: dict[str, int] = field(default_factory=dict)
    fields_written: set[str] = field(default_factory=set)  # the fields some rule sets (set/increase/decrease)
    codegen: Any = None  # the generated Python of its rules (dsl/codegen.CodeGen), shared by every compiler
    # What games of this ruleset work out alike, kept as they are first needed by any game:
    # whether a zone (by key) is visible to a player (None: a spectator), and the entities of
    # each kind for an entity list met before (see Game._visible, Game.kind_ids).
    zone_visibility: dict[tuple[str, str | None], bool] = field(default_factory=dict)
    kind_indexes: dict[tuple[str, ...], dict[str, list[str]]] = field(default_factory=dict)
    # The procedures a frame may run, by name (actions as 'action:ID'), read by every game
    # and built once: a bot makes thousands of copies a second (see Game.__init__).
    frame_procs: dict[str, Procedure] | None = None
    # The listers of each action group's actions, in the group's order (see Game._listed):
    # built once, at the group's first menu, as a menu is listed at every other decision.
    group_listers: dict[str, tuple[Callable[[Any, str, list], None], ...]] = field(default_factory=dict)
    # The entities' records a new game starts with, made at the first game: a bench or a
    # balance run starts thousands (see runtime._start).
    start: Any = None

    def seat_names(self, players: int) -> list[str]:
        """The seats of a game with this many players, in turn order."""
        return self.seats[:players] if len(self.seats) >= players else [f"p{i + 1}" for i in range(players)]

    def player_count_problem(self, players: int) -> str:
        """Why a game cannot have this many players ('' when it can)."""
        if self.min_players <= players <= self.max_players:
            return ""
        allowed = (f"exactly {self.min_players}" if self.min_players == self.max_players
                   else f"{self.min_players} to {self.max_players}")
        return f"{self.name} is for {allowed} players, not {players}"
