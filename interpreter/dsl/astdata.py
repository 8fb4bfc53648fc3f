"""AST nodes as JSON text and back, for the load cache: data that cannot run code.

A node is written as ``{"": class, "pos": [line, col], field: value, ...}`` (its fields in
declaration order) and a tuple as ``{"t": [item, ...]}``; strings, numbers, booleans, None and
lists are themselves. Reading goes through :data:`NODES`, a table of the node classes of
:mod:`interpreter.dsl.ast` by name made when this module is imported: a class name read from a
file only ever selects a row of that table, a node must have exactly that row's fields, and
anything else makes the text unreadable.

:func:`decode` is total: any text at all gives a value or :class:`Unreadable`, never another
exception and never a long wait (JSON is read in one linear pass, and nesting deeper than
Python's recursion limit is a ``RecursionError``, which is turned into ``Unreadable`` too).
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from typing import Any

from . import ast as A


class Unreadable(ValueError):
    """The text is not an AST written by :func:`encode`."""


def _node_classes() -> dict[str, tuple[type[A.Node], tuple[str, ...]]]:
    table: dict[str, tuple[type[A.Node], tuple[str, ...]]] = {}
    for value in vars(A).values():
        if isinstance(value, type) and issubclass(value, A.Node) and value is not A.Node and is_dataclass(value):
            names = tuple(f.name for f in fields(value))
            if names[:1] == ("pos",):
                table[value.__name__] = (value, names[1:])
    return table


NODES: dict[str, tuple[type[A.Node], tuple[str, ...]]] = _node_classes()
# How each row is rebuilt: the class, the keys its object must have, and whether the object
# itself may become the node's __dict__ (a warm load rebuilds thousands of nodes; this is the
# quickest way that checks them); a node class with slots goes through __init__.
_ROWS: dict[str, tuple[type[A.Node], frozenset[str], bool]] = {
    name: (cls, frozenset(("pos", *names)), "__slots__" not in vars(cls)) for name, (cls, names) in NODES.items()}
_SCALARS = (str, int, float, bool, type(None))
_new = object.__new__


def _plain(value: Any) -> Any:
    if isinstance(value, A.Node):
        row = NODES.get(type(value).__name__)
        if row is None or row[0] is not type(value):
            raise TypeError(f"no table row for AST class {type(value).__name__}")
        line, col = value.pos
        obj: dict[str, Any] = {"": row[0].__name__, "pos": [line, col]}
        for name in row[1]:
            obj[name] = _plain(getattr(value, name))
        return obj
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return {"t": [_plain(item) for item in value]}
    if isinstance(value, str):
        return str(value)  # a parser token is a str subclass: keep only the text
    if isinstance(value, _SCALARS):
        return value
    raise TypeError(f"an AST holds a {type(value).__name__}, which has no plain form")


def encode(value: Any) -> str:
    """``value`` (a node, or lists and tuples of nodes and plain values) as one line of JSON.

    Raises ``TypeError`` for anything :func:`decode` could not rebuild exactly.
    """
    return json.dumps(_plain(value), separators=(",", ":"))


def _hook(obj: dict[str, Any]) -> Any:
    tag = obj.pop("", None)
    if tag is None:
        items = obj.get("t")
        if len(obj) == 1 and items.__class__ is list:
            return tuple(items)
        raise Unreadable("not a node or a tuple")
    row = _ROWS.get(tag) if tag.__class__ is str else None
    if row is None or obj.keys() != row[1]:
        raise Unreadable("not a node")
    pos = obj["pos"]
    if pos.__class__ is not list or len(pos) != 2 or pos[0].__class__ is not int or pos[1].__class__ is not int:
        raise Unreadable("not a position")
    obj["pos"] = (pos[0], pos[1])  # in place: the fields keep their order
    if not row[2]:
        return row[0](**obj)
    node = _new(row[0])
    node.__dict__ = obj
    return node


def decode(text: str | bytes) -> Any:
    """The value :func:`encode` wrote; :class:`Unreadable` for any other text."""
    try:
        return json.loads(text, object_hook=_hook)
    except Unreadable:
        raise
    except Exception as exc:  # ValueError, RecursionError, MemoryError: any text is only unreadable
        raise Unreadable(type(exc).__name__) from None
