"""Static types of the rules language, as small immutable objects.

``int``, ``bool``, ``str``, ``none``, ``any``; an entity of a kind (``ent(KIND)``; ``ent("*")``
for any kind); a zone holding entities of a kind (``zone_of(KIND)``, ``zone_of("*")`` when
mixed); a list of values of a type (``list_of(T)``); a value per player, from a secret choice
(``map_of(T)``); a value of an enumeration (``enum(NAME)``: text at runtime, whose literals are
checked against the declared values). The checker is deliberately forgiving: ``any`` matches everything, so rule
authors get errors only for mistakes that are certain.

``str(t)`` gives a short text (``int``, ``ent:card``, ``list:int``), for debugging and tests;
messages use :func:`describe`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

SCALARS = ("int", "bool", "str", "none", "any")
_INTERNED: dict[tuple[str, object], Type] = {}  # (tag, arg) -> the one Type (arg: a Type, by identity)


@dataclass(frozen=True, slots=True, eq=False)
class Type:
    """One type: ``tag`` is a scalar name or ``ent``/``zone`` (``arg`` a kind name, or '*') or
    ``list``/``map`` (``arg`` the type of the items).

    Types are interned: there is one object per type, so equal types are the same object and
    compare (and hash) by identity, which the checker does thousands of times a load.
    """

    tag: str
    arg: Type | str | None = None

    def __new__(cls, tag: str, arg: Type | str | None = None) -> Type:
        key = (tag, arg)
        t = _INTERNED.get(key)
        if t is None:
            t = _INTERNED[key] = object.__new__(cls)
        return t

    def __getnewargs__(self) -> tuple[str, Type | str | None]:
        return (self.tag, self.arg)

    def __str__(self) -> str:
        return self.tag if self.arg is None else f"{self.tag}:{self.arg}"

    def __repr__(self) -> str:
        return f"Type({self})"


INT, BOOL, STR, NONE, ANY = (Type(t) for t in SCALARS)


def is_list(t: Type) -> bool:
    return t.tag == "list"


def is_ent(t: Type) -> bool:
    return t.tag == "ent"


def is_zone(t: Type) -> bool:
    return t.tag == "zone"


def is_map(t: Type) -> bool:
    return t.tag == "map"


def arg(t: Type) -> Type | str:
    """The parameter of a compound type: the items' type of a list or map, the kind of an entity
    or a zone ('*': any kind); ``any`` for the others."""
    return t.arg if t.arg is not None else ANY


def kind_of(t: Type) -> str:
    """The kind of an entity or zone type ('*': any kind)."""
    return t.arg if isinstance(t.arg, str) else "*"


def item(t: Type) -> Type:
    """The items' type of a list or map (``any`` for the others)."""
    return t.arg if isinstance(t.arg, Type) else ANY


def list_of(t: Type) -> Type:
    return Type("list", t)


def map_of(t: Type) -> Type:
    return Type("map", t)


def ent(kind: str) -> Type:
    return Type("ent", kind)


def enum(name: str) -> Type:
    """A value of the enumeration ``name`` (``enums:``): one of its texts."""
    return Type("enum", name)


def is_enum(t: Type) -> bool:
    return t.tag == "enum"


def is_text(t: Type) -> bool:
    """Text or a value of an enumeration (which is text when the rules run)."""
    return t == STR or t.tag == "enum"


def zone_of(kind: str) -> Type:
    return Type("zone", kind)


def element(t: Type) -> Type:
    """The type of one item when iterating over a value of type ``t``."""
    if t.tag == "list":
        return item(t)
    if t.tag == "zone":
        k = kind_of(t)
        return ANY if k == "*" else ent(k)
    if t.tag == "map":
        return ent("player")
    return ANY


def iterable(t: Type) -> bool:
    return t == ANY or t.tag in ("list", "zone", "map")


def compatible(want: Type, got: Type) -> bool:
    """Whether a value of type ``got`` may be used where ``want`` is expected."""
    if ANY in (want, got) or want == got:
        return True
    if got == NONE:
        return want not in (INT, BOOL)
    if is_text(want) and is_text(got):  # a text literal's value is checked where it meets an enum
        return True
    if is_ent(want) and is_ent(got):
        return kind_of(want) == "*" or kind_of(got) == "*"
    if is_list(want) and (is_list(got) or is_zone(got)):
        return compatible(item(want), element(got))
    if is_zone(want) and is_zone(got):
        return kind_of(want) == "*" or kind_of(got) == "*"
    return False


def join(a: Type, b: Type) -> Type:
    """The type of a value that is either ``a`` or ``b``."""
    if a == b:
        return a
    if a == NONE:
        return b
    if b == NONE:
        return a
    if is_ent(a) and is_ent(b):
        return ent("*")
    if is_text(a) and is_text(b):
        return STR
    if is_list(a) and is_list(b):
        return list_of(join(item(a), item(b)))
    return ANY


def article(name: str) -> str:
    """``name`` after its indefinite article: 'a tribe', 'an influence_event'."""
    return ("an " if name[:1] in ("a", "e", "i", "o", "u") else "a ") + name


def describe(t: Type) -> str:
    """A reader-friendly name of a type for messages."""
    if is_ent(t):
        k = kind_of(t)
        return "an entity" if k == "*" else f"a {k}"
    if is_zone(t):
        return "a zone"
    if is_list(t):
        return "a list"
    if is_map(t):
        return "a per-player map"
    if is_enum(t):
        return article(str(t.arg))
    return {"int": "a number", "bool": "true/false", "str": "text", "none": "none", "any": "a value"}.get(t.tag, t.tag)


MAX_TYPE_DEPTH = 8  # "list of list of ... int": more is a typo or a hostile text


def parse_type(text: str, kinds: set[str], enums: Collection[str] = ()) -> Type | None:
    """Parse a type as written in YAML (``int``, ``card``, ``list of card``, an enumeration's
    name); None if unknown (or nested more than MAX_TYPE_DEPTH lists deep)."""
    t = " ".join(str(text).split())
    lists = 0
    while t.startswith("list of "):
        t = t[len("list of "):]
        lists += 1
        if lists > MAX_TYPE_DEPTH:
            return None
    base: Type
    if t in ("int", "bool", "str", "any"):
        base = Type(t)
    elif t == "list":
        base = list_of(ANY)
    elif t == "zone":
        base = zone_of("*")
    elif t in kinds:
        base = ent(t)
    elif t in enums:
        base = enum(t)
    elif t == "entity":
        base = ent("*")
    else:
        return None
    for _ in range(lists):
        base = list_of(base)
    return base
