"""The LALR tables of the rules language as plain data: ``lalr_table.json``, made from Lark.

The direct parser (:mod:`.lalr_direct`) runs Lark's LALR(1) parse of ``grammar.lark`` from these
tables, so a load whose rules texts hold no syntax error neither imports nor builds Lark (its
import and the building of its parser were a fifth of a cold load). The file is what Lark makes
of the grammar, written down:

- ``terminals``: ``[name, regular expression, is a literal string, first]`` in the order Lark's
  lexers try them (every lexer of a state lists its terminals in this order), ``first`` being
  every ASCII character a match can start with (a superset; ``null``: any); ``ignore``, the
  terminals skipped between tokens;
- ``rules``: per rule, ``[name, length, callback name, expand single child, child filter]``:
  how Lark's parse-tree builder hands a reduction's children to the AST builder (the filter is
  ``null`` or ``[[index, splice, nones before], ...], nones after``);
- ``states``: per parser state, each symbol's action: a state number (shift, or the state after
  a reduction) or ``-1 - rule`` (reduce); ``start`` and ``end``, the first and accepting state
  of each start rule; ``own``, the states whose lexer Lark builds differently (a literal that
  a pattern of the same state also matches), which the direct parser leaves to Lark;
- ``grammar``: the SHA-256 of the grammar it was made from. If the grammar changes and the
  file is not made again, it no longer matches and every text is parsed by Lark, as before
  the file existed (``tests/test_load_fast.py`` fails until the file is made again).

Make it again after a change of the grammar or of Lark: ``python -m interpreter.dsl.lalr_table``.
It is data only (JSON), read without running anything it holds.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

GRAMMAR = Path(__file__).with_name("grammar.lark")
TABLE = Path(__file__).with_name("lalr_table.json")
FORMAT = 1


def grammar_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_table() -> dict[str, Any] | None:
    """The tables, if the file is there and was made from the current grammar (else None)."""
    try:
        table = json.loads(TABLE.read_text(encoding="utf-8"))
        grammar = GRAMMAR.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    if not isinstance(table, dict) or table.get("format") != FORMAT or table.get("grammar") != grammar_digest(grammar):
        return None
    return table


def make_table() -> dict[str, Any]:
    """The tables as Lark builds them from the grammar (needs Lark; not used at load)."""
    from lark import Lark
    from lark.lexer import ContextualLexer
    from lark.parse_tree_builder import (
        ChildFilterLALR,
        ChildFilterLALR_NoPlaceholders,
        maybe_create_child_filter,
    )
    from lark.parsers.lalr_analysis import Shift

    grammar = GRAMMAR.read_text(encoding="utf-8")
    lark = Lark(grammar, parser="lalr", start=["start", "expr"], maybe_placeholders=True)
    frontend = lark.parser
    if not isinstance(frontend.lexer, ContextualLexer) or frontend.lexer_conf.g_regex_flags:
        raise TypeError("unexpected Lark configuration")
    terms = list(frontend.lexer.root_lexer.terminals)  # type: ignore[attr-defined]  # sorted as every lexer sorts them
    table = frontend.parser.parser.parse_table
    rules: list[Any] = []
    index: dict[Any, int] = {}
    states: list[dict[str, int]] = []
    if sorted(table.states) != list(range(len(table.states))):
        raise TypeError("unexpected Lark parse table")
    for state in range(len(table.states)):
        row: dict[str, int] = {}
        for symbol, (action, arg) in table.states[state].items():
            if action is Shift:
                row[symbol] = arg
            else:
                if arg not in index:
                    index[arg] = len(rules)
                    rules.append(arg)
                row[symbol] = -1 - index[arg]
        states.append(row)
    plain_rules = []
    for rule in rules:
        opts = rule.options
        made = maybe_create_child_filter(rule.expansion, opts.keep_all_tokens, False, opts.empty_indices)
        if made is None:
            child_filter = None
        elif made.func is ChildFilterLALR:
            to_include, after = made.args
            child_filter = [[[i, bool(x), n] for i, x, n in to_include], after]
        elif made.func is ChildFilterLALR_NoPlaceholders:
            child_filter = [[[i, bool(x), 0] for i, x in made.args[0]], 0]
        else:
            raise TypeError("unexpected Lark child filter")
        name = rule.alias or opts.template_source or rule.origin.name
        plain_rules.append([rule.origin.name, len(rule.expansion), str(name), bool(opts.expand1 and not rule.alias),
                            child_filter])
    merged = [(s.name, r.name) for s in terms if s.pattern.type == "str" for r in terms
              if r.pattern.type == "re" and re.fullmatch(r.pattern.to_regexp(), s.pattern.value)]
    own = sorted(state for state, row in enumerate(states) if any(a in row and b in row for a, b in merged))
    return {"format": FORMAT, "grammar": grammar_digest(grammar),
            "terminals": [[t.name, t.pattern.to_regexp(), t.pattern.type == "str", first_chars(t.pattern.to_regexp())]
                          for t in terms],
            "ignore": sorted(frontend.lexer_conf.ignore), "rules": plain_rules, "states": states,
            "start": dict(table.start_states), "end": dict(table.end_states), "own": own}


_ASCII = [chr(i) for i in range(128)]


def first_chars(regexp: str) -> str | None:
    """Every ASCII character a match of ``regexp`` can start with, or None if that is not
    known here (a superset: lookarounds are passed over as if they always held)."""
    from re import _constants as C
    from re import _parser

    parsed = _parser.parse(regexp)
    found = _first(parsed.data, bool(parsed.state.flags & C.SRE_FLAG_IGNORECASE), C)[0]
    return None if found is None else "".join(sorted(found))


def _first(items: Any, fold: bool, C: Any) -> tuple[set[str] | None, bool]:
    """(The ASCII characters a sequence of regular-expression items can start with, or None;
    whether it can match the empty string.)"""
    out: set[str] = set()
    for op, av in items:
        found, empty = _first_one(op, av, fold, C)
        if found is None:
            return None, False
        out |= found
        if not empty:
            return out, False
    return out, True


def _chars(codes: list[int], fold: bool) -> set[str] | None:
    out: set[str] = set()
    for code in codes:
        ch = chr(code)
        if fold and not ch.isascii():
            return None  # a letter outside ASCII may match one inside when case is ignored
        if ch.isascii():
            out |= {ch, ch.lower(), ch.upper()} if fold else {ch}
    return {c for c in out if c.isascii()}


def _first_one(op: Any, av: Any, fold: bool, C: Any) -> tuple[set[str] | None, bool]:
    categories = {C.CATEGORY_DIGIT: str.isdigit, C.CATEGORY_SPACE: str.isspace,
                  C.CATEGORY_WORD: lambda c: c.isalnum() or c == "_"}
    if op is C.LITERAL:
        return _chars([av], fold), False
    if op is C.IN:
        out: set[str] = set()
        for kind, value in av:
            if kind is C.LITERAL:
                found = _chars([value], fold)
            elif kind is C.RANGE and value[1] - value[0] < 0x3000:
                found = _chars(list(range(value[0], value[1] + 1)), fold)
            elif kind is C.CATEGORY and value in categories:
                found = {c for c in _ASCII if categories[value](c)}
            else:
                return None, False
            if found is None:
                return None, False
            out |= found
        return out, False
    if op is C.SUBPATTERN:
        _group, add, _remove, sub = av
        return _first(sub.data, fold or bool(add & C.SRE_FLAG_IGNORECASE), C)
    if op is C.BRANCH:
        out, empty = set(), False
        for sub in av[1]:
            found, may_be_empty = _first(sub.data, fold, C)
            if found is None:
                return None, False
            out |= found
            empty = empty or may_be_empty
        return out, empty
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", C.MAX_REPEAT)):
        low, _high, sub = av
        found, empty = _first(sub.data, fold, C)
        return found, empty or low == 0
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return set(), True
    return None, False


def dump(table: dict[str, Any]) -> str:
    """The file's text: one line per state, so a change of the grammar reads as a diff."""
    head = {k: v for k, v in table.items() if k not in ("states", "rules")}
    lines = ["{", *(f"{json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()), '"rules": [']
    lines += [json.dumps(r) + ("," if i < len(table["rules"]) - 1 else "") for i, r in enumerate(table["rules"])]
    lines += ["],", '"states": [']
    lines += [json.dumps(s, sort_keys=True) + ("," if i < len(table["states"]) - 1 else "")
              for i, s in enumerate(table["states"])]
    lines += ["]", "}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m interpreter.dsl.lalr_table
    TABLE.write_text(dump(make_table()), encoding="utf-8")
    print(f"wrote {TABLE}", file=sys.stderr)
