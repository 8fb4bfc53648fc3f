"""AST of the rules language. Every node knows its (line, col) inside the source text."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

Pos = tuple[int, int]


@dataclass
class Node:
    pos: Pos


# ---------------------------------------------------------------- expressions
@dataclass
class Num(Node):
    value: int


@dataclass
class Str(Node):
    parts: list[str | Node]  # literal text and interpolated expressions


@dataclass
class Name(Node):
    name: str


@dataclass
class Attr(Node):
    obj: Node
    name: str


@dataclass
class Index(Node):
    obj: Node
    args: list[Node]


@dataclass
class Call(Node):
    fn: str
    args: list[Node]


@dataclass
class Query(Node):
    head: Node | None
    var: str
    source: Node
    where: Node | None


@dataclass
class CallQuery(Node):
    fn: str
    query: Query


@dataclass
class Graph(Node):
    """``reachable(var from start over step)``, ``cheapest(var from start to goal over step)``."""

    fn: str
    var: str
    start: Node
    goal: Node | None
    step: Node


@dataclass
class ListLit(Node):
    items: list[Node]


@dataclass
class ListQuery(Node):
    query: Query


@dataclass
class Every(Node):
    kind: str


@dataclass
class Unary(Node):
    op: str  # '-' or 'not'
    operand: Node


@dataclass
class BinOp(Node):
    op: str  # + - * / % == != < <= > >= and or in notin ..
    left: Node
    right: Node


@dataclass
class Chain(Node):
    """Operands of one level of precedence, applied left to right: ``a + b - c``, ``a and b``.

    Kept flat (not as nested :class:`BinOp`) so that a long sum or a long ``and`` nests no
    deeper than one operator, wherever the tree is walked. ``rest`` holds (operator, where
    the operator is, operand); ``pos`` is where a nested left-to-right tree would have its
    outermost operator (the last one), so messages about the whole chain keep that place.
    """

    first: Node
    rest: list[tuple[str, Pos, Node]]


@dataclass
class Cond(Node):
    test: Node
    then: Node
    other: Node


# ---------------------------------------------------------------- statements
@dataclass
class Let(Node):
    name: str
    value: Node


@dataclass
class Set(Node):
    target: Node  # Name or Attr
    value: Node
    op: str = "="  # '=', '+', '-'


@dataclass
class Move(Node):
    what: Node
    dest: Node
    top: bool


@dataclass
class Draw(Node):
    count: Node
    src: Node
    dest: Node


@dataclass
class Shuffle(Node):
    zone: Node


@dataclass
class Create(Node):
    kind: str
    zone: Node | None
    fields: list[tuple[str, Node, Pos]]
    bind: str | None
    called: Node | None = None  # the new entity's id (default: kind_N)


@dataclass
class Destroy(Node):
    what: Node


@dataclass
class Roll(Node):
    count: Node | None  # None: a single die, bound as an int
    sides: int
    bind: str
    bonus_on: Node | None


@dataclass
class Choose(Node):
    var: str
    options: Node
    by: Node
    prompt: Node | None
    label: Node | None
    secret: bool = False  # the answer is not narrated to the other players


@dataclass
class ChooseAction(Node):
    group: str
    by: Node
    bind: str | None
    prompt: Node | None = None


@dataclass
class Secret(Node):
    pvar: str
    players: Node
    var: str
    options: Node
    prompt: Node | None
    label: Node | None


@dataclass
class If(Node):
    branches: list[tuple[Node, list[Node]]]
    other: list[Node] | None


@dataclass
class For(Node):
    var: str
    source: Node
    where: Node | None
    body: list[Node]


@dataclass
class Repeat(Node):
    body: list[Node]
    until: Node


@dataclass
class While(Node):
    test: Node
    body: list[Node]


@dataclass
class Break(Node):
    pass


@dataclass
class CallProc(Node):
    proc: str
    args: list[Node]
    bind: str | None


@dataclass
class CallField(Node):
    """``call e.FIELD(args)``: the procedure an entity carries in a field of its kind."""

    var: str
    field: str
    args: list[Node]
    bind: str | None


@dataclass
class Return(Node):
    value: Node | None


@dataclass
class Modify(Node):
    point: str
    value: Node
    mode: str  # 'add' or 'set'
    when: Node | None
    until: str | None = None
    while_: Node | None = None
    once: bool = False


@dataclass
class Signal(Node):
    name: str


@dataclass
class Consume(Node):
    point: str
    args: list[Node]


@dataclass
class Log(Node):
    text: Node
    to: Node | None = None  # 'log E to P': the player or list of players it is told to


@dataclass
class GameOver(Node):
    reason: Node | None


@dataclass
class Pass(Node):
    pass


@dataclass
class Commit(Node):
    """A commit point: a player's undo does not go back past it."""


@dataclass
class Block:
    stmts: list[Node] = field(default_factory=list)


def walk(node: Any) -> Iterator[Node]:
    """Yield every AST node below (and including) ``node``, parents before children.

    Iterative, so a deep tree cannot exhaust Python's stack (trees are also bounded, see
    :func:`depth`).
    """
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Node):
            yield n
            stack.extend(reversed(list(vars(n).values())))
        elif isinstance(n, list | tuple):
            stack.extend(reversed(n))


def too_deep(node: Any, limit: int) -> Node | None:
    """The first node found nested more than ``limit`` levels deep, or None.

    A level is an expression inside another or a block of statements inside a statement;
    the operands of a :class:`Chain` are one level, however many there are. Iterative.
    """
    stack: list[tuple[Any, int]] = [(node, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        n, d = pop()
        if isinstance(n, Node):
            d += 1
            if d > limit:
                return n
            values: Any = vars(n).values()
        elif isinstance(n, list | tuple):
            values = n
        else:
            continue
        for value in values:  # texts, numbers and places hold no node: not even stacked
            if value.__class__ not in _LEAVES:
                push((value, d))
    return None


_LEAVES = frozenset((str, int, bool, type(None)))


def names_in(node: Any) -> set[str]:
    """Every name a node mentions (an over-approximation of what it depends on)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Name):
            out.add(n.name)
        elif isinstance(n, Node):
            stack.extend(getattr(n, f.name) for f in fields(n))
        elif isinstance(n, list | tuple):
            stack.extend(n)
    return out


def conjuncts(node: Node) -> list[Node]:
    """``a and b and (c and d)`` as [a, b, c, d], in the order written."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Chain) and n.rest[0][0] == "and":
            stack.extend(reversed([n.first] + [operand for _op, _pos, operand in n.rest]))
        else:
            out.append(n)
    return out
