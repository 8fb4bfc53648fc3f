"""Static types of the rules language, as short strings.

``int``, ``bool``, ``str``, ``none``, ``any``; ``ent:KIND`` (an entity id of that
kind; ``ent:*`` for any kind); ``zone:KIND`` (a zone holding entities of that kind,
``zone:*`` when mixed); ``list:T``; ``map:T`` (a value per player, from a secret
choice). The checker is deliberately forgiving: ``any`` matches everything, so
rule authors get errors only for mistakes that are certain.
"""

from __future__ import annotations

INT, BOOL, STR, NONE, ANY = "int", "bool", "str", "none", "any"


def is_list(t: str) -> bool:
    return t.startswith("list:")


def is_ent(t: str) -> bool:
    return t.startswith("ent:")


def is_zone(t: str) -> bool:
    return t.startswith("zone:")


def is_map(t: str) -> bool:
    return t.startswith("map:")


def arg(t: str) -> str:
    """The parameter of a compound type (``list:int`` → ``int``)."""
    return t.split(":", 1)[1] if ":" in t else ANY


def list_of(t: str) -> str:
    return f"list:{t}"


def ent(kind: str) -> str:
    return f"ent:{kind}"


def element(t: str) -> str:
    """The type of one item when iterating over a value of type ``t``."""
    if is_list(t):
        return arg(t)
    if is_zone(t):
        k = arg(t)
        return ANY if k == "*" else ent(k)
    if is_map(t):
        return ent("player")
    return ANY


def iterable(t: str) -> bool:
    return t == ANY or is_list(t) or is_zone(t) or is_map(t)


def compatible(want: str, got: str) -> bool:
    """Whether a value of type ``got`` may be used where ``want`` is expected."""
    if ANY in (want, got) or want == got:
        return True
    if got == NONE:
        return want not in (INT, BOOL)
    if is_ent(want) and is_ent(got):
        return arg(want) == "*" or arg(got) == "*"
    if is_list(want) and (is_list(got) or is_zone(got)):
        return compatible(arg(want), element(got))
    if is_zone(want) and is_zone(got):
        return arg(want) == "*" or arg(got) == "*"
    return False


def join(a: str, b: str) -> str:
    """The type of a value that is either ``a`` or ``b``."""
    if a == b:
        return a
    if a == NONE:
        return b
    if b == NONE:
        return a
    if is_ent(a) and is_ent(b):
        return ent("*")
    if is_list(a) and is_list(b):
        return list_of(join(arg(a), arg(b)))
    return ANY


def describe(t: str) -> str:
    """A reader-friendly name of a type for messages."""
    if is_ent(t):
        k = arg(t)
        return "an entity" if k == "*" else f"a {k}"
    if is_zone(t):
        return "a zone"
    if is_list(t):
        return "a list"
    if is_map(t):
        return "a per-player map"
    return {INT: "a number", BOOL: "true/false", STR: "text", NONE: "none", ANY: "a value"}.get(t, t)


MAX_TYPE_DEPTH = 8  # "list of list of ... int": more is a typo or a hostile text


def parse_type(text: str, kinds: set[str]) -> str | None:
    """Parse a type as written in YAML (``int``, ``card``, ``list of card``); None if unknown
    (or nested more than MAX_TYPE_DEPTH lists deep)."""
    t = " ".join(str(text).split())
    lists = 0
    while t.startswith("list of "):
        t = t[len("list of "):]
        lists += 1
        if lists > MAX_TYPE_DEPTH:
            return None
    if t in (INT, BOOL, STR, ANY):
        base = t
    elif t == "list":
        base = list_of(ANY)
    elif t == "zone":
        base = "zone:*"
    elif t in kinds:
        base = ent(t)
    elif t == "entity":
        base = ent("*")
    else:
        return None
    for _ in range(lists):
        base = list_of(base)
    return base
