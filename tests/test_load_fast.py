"""The fast paths of a cold load give exactly what the full paths give.

- YAML: ruamel.yaml.clib's C parser (yamlsource._read_fast) vs the round-trip loader;
- schemas: the compiled validity check (schemas.is_valid) vs jsonschema;
- rules texts: the parser that builds the AST directly vs the parse tree + walk.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from interpreter import schemas
from interpreter import yamlsource as Y
from interpreter.diagnostics import LudusError
from interpreter.dsl import ast as A
from interpreter.dsl import parser as P
from interpreter.loader import bundled_names, load_ruleset

ROOT = Path(__file__).resolve().parent.parent
YAML_FILES = sorted(p for d in ("rulesets", "tests") for p in (ROOT / d).rglob("*.y*ml"))
BUNDLED = sorted((ROOT / "rulesets").rglob("*.yaml"))

needs_clib = pytest.mark.skipif(not Y._fast(), reason="ruamel.yaml.clib is not installed")


def typed(value: Any) -> Any:
    """``value`` with every scalar's type spelled out (True == 1 in Python, not here)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}, list(value)
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def same_read(a: tuple[Any, Y.SourceMap], b: tuple[Any, Y.SourceMap]) -> None:
    assert typed(a[0]) == typed(b[0])
    assert a[1].values == b[1].values
    assert a[1].keys == b[1].keys
    assert a[1].texts == b[1].texts


def read(text: str, fast: bool) -> Any:
    try:
        return Y.load_yaml_text(text, "f.yaml", ("r",), fast=fast)
    except LudusError as exc:
        return str(exc)


# ------------------------------------------------------------------------------ YAML
@needs_clib
@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fast_reader_reads_every_file_as_the_full_reader(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast, full = read(text, True), read(text, False)
    if isinstance(full, str):
        assert fast == full  # an error: the same message (from the full reader)
    else:
        same_read(fast, full)


@needs_clib
def test_fast_reader_needs_no_help_for_the_bundled_rulesets() -> None:
    for path in BUNDLED:
        assert Y._read_fast(path.read_text(encoding="utf-8"), str(path), ()) is not None, path


SNIPPETS = [
    "",
    "# only a comment\n",
    "---\na: 1\n...\n",
    "a: 1\nb: -2\nc: +3\nd: 0\ne: true\nf: False\ng: ~\nh: null\ni:\nj: ''\nk: \"\"\n",
    "plain: some words here\nq1: 'it''s'\nq2: \"tab\\there \\\"quoted\\\" \\x41 \\u00e9\"\n",
    "multi: this plain text\n  goes on a second line\n  and a third\n",
    "dq: \"folded\n  quoted text\"\nsq: 'folded\n\n  with a blank line'\n",
    "lit: |\n  line one\n    indented\n  line three\nkeep: |+\n  kept\n\nstrip: |-\n  stripped\n",
    "fold: >\n  one\n  two\n\n  three\nind: |2\n    two extra\n",
    "seq:\n- a\n-\n- - nested\n  - list\n- k: v\n  k2: v2\n-   spaced\n",
    "flow: [1, two, 'three', {a: b, c: [d]}]\nmap: {x: 1, y: \"z\"}\nempty: []\nnone: {}\n",
    "1: one\n2-4: range\nfalse: no\nnull: x\n\"5\": five\n",
    "uni: é — ü\nkey é: « guillemets »\nemoji: \"🎲 roll\"\n",
    "top level plain scalar\n",
    "- just\n- a\n- list\n",
    "a:\n  b:\n    c:\n      d: deep\n  e: [f]\n",
    "expr: p.support >= 2 and not (x in y)\nlabel: \"Move {l} to {p.name}\"\n",
    "colon: 'a: b'\nhash: a #comment\nurl: http://x.y/z\n",
    "\ufeffbom: first line\nnext: x\n",
    "crlf: one\r\nlist:\r\n- two\r\n",
]


@needs_clib
@pytest.mark.parametrize("text", SNIPPETS)
def test_fast_reader_on_snippets(text: str) -> None:
    full = read(text, False)
    assert Y._read_fast(text, "f.yaml", ("r",)) is not None
    same_read(read(text, True), full)


LEFT_TO_FULL_READER = [
    "a: &x 1\nb: *x\n",  # anchors and aliases
    "a: !!str 1\n",  # tags
    "%YAML 1.1\n---\na: yes\n",  # a directive
    "a: 1\nb: 2\na: 3\n",  # a duplicate key
    "a: 1\n1: x\n\"1\": y\n",  # keys that only differ in type
    "1: one\ntrue: yes\n",  # keys that Python finds equal
    "a: 1.5\nb: 0x1F\nc: 2024-01-01\nd: 007\ne: 1_000\n",  # floats, hex, dates, octal, underscores
    "+1: signed key\n",
    "a: [1, 2\nb: 3\n",  # syntax errors
    "a: b: c\n",
    "a:\n\t- tab\n",
    "key\nother: 1\n",
    "a: 1\n---\nb: 2\n",  # two documents
    "? [complex, key]\n: value\n",
    "<<: {a: 1}\n",
]


@needs_clib
@pytest.mark.parametrize("text", LEFT_TO_FULL_READER)
def test_fast_reader_leaves_the_rest_to_the_full_reader(text: str) -> None:
    assert Y._read_fast(text, "f.yaml", ()) is None
    fast, full = read(text, True), read(text, False)
    if isinstance(full, str):
        assert fast == full
    else:
        same_read(fast, full)


def test_inline_places_shortcut_matches_the_walk() -> None:
    lines = ['k: plain text', 'q: "a\\"b"', "s: 'it''s'", 'u: "é — x"']
    for line0, value, col0, quote in [(0, "plain text", 3, ""), (1, 'a"b', 3, '"'), (2, "it's", 3, "'"),
                                      (3, "é — x", 3, '"')]:
        assert Y._inline_places(value, lines, line0, col0, quote) == \
            Y.CharPlaces.of(Y._inline_chars(value, lines, line0, col0, quote))


# ------------------------------------------------------------------------------ schemas
def documents() -> list[Any]:
    docs: list[Any] = []
    for path in YAML_FILES:
        with contextlib.suppress(LudusError):
            docs.append(Y.load_yaml_text(path.read_text(encoding="utf-8"), str(path))[0])
    for path in sorted((ROOT / "tests").rglob("*.json")):
        with contextlib.suppress(ValueError):
            docs.append(json.loads(path.read_text(encoding="utf-8")))
    # states and log entries of a short game
    from interpreter.bots import RandomBot
    from interpreter.runtime import Game

    game = Game.new(load_ruleset("dice_race"), seed=1)
    bots = {p: RandomBot(1, p) for p in game.players}
    for _ in range(30):
        if game.over:
            break
        docs.append(json.loads(json.dumps(game.state)))
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)
    docs.extend(json.loads(json.dumps(game.log)))
    return docs


ODD = [1, 0, -3, True, False, None, "x", "Bad Id", "reconstructed", "ToC 1.2", 1.5, 2.0, [], {}, [1, 1],
       [1, True], {"kind": "x"}]


def mutate(doc: Any, rng: random.Random) -> Any:
    """A copy of ``doc`` with one thing changed somewhere: a key dropped, added or retyped."""
    doc = copy.deepcopy(doc)
    node = doc
    for _ in range(rng.randint(0, 6)):
        inner = [v for v in (node.values() if isinstance(node, dict) else node if isinstance(node, list) else [])
                 if isinstance(v, dict | list) and v]
        if not inner:
            break
        node = rng.choice(inner)
    if isinstance(node, dict) and node:
        key = rng.choice(list(node))
        op = rng.randrange(3)
        if op == 0:
            del node[key]
        elif op == 1:
            node[key] = rng.choice(ODD)
        else:
            node[rng.choice(["extra", "Bad Key", "note", "source", "type", "kind", key + "_"])] = rng.choice(ODD)
    elif isinstance(node, list) and node:
        node[rng.randrange(len(node))] = rng.choice(ODD)
    return doc


@pytest.mark.parametrize("kind", ["rules", "manifest", "scenario", "state", "log"])
def test_compiled_schema_check_agrees_with_jsonschema(kind: str) -> None:
    assert schemas._compiled(kind) is not None  # every schema uses only keywords compiled here
    full = schemas.validator(kind)
    rng = random.Random(kind)
    seen = {True: 0, False: 0}
    for doc in documents():
        for one in [doc] + [mutate(doc, rng) for _ in range(8)]:
            valid = full.is_valid(one)
            assert schemas.is_valid(kind, one) == valid, json.dumps(one)[:300]
            seen[valid] += 1
    assert seen[True] and seen[False]


def test_compiled_schema_keywords() -> None:
    cases: list[tuple[Any, Any, bool]] = [
        ({"type": "integer"}, 2.0, True), ({"type": "integer"}, True, False), ({"type": "number"}, False, False),
        ({"const": 1}, True, False), ({"enum": [0, "a"]}, False, False), ({"enum": [[1]]}, [True], False),
        ({"uniqueItems": True}, [1, True], True), ({"uniqueItems": True}, [1, 1.0], False),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 3, False), ({"not": {"type": "string"}}, 1, True),
        ({"if": {"required": ["a"]}, "then": {"required": ["b"]}}, {"a": 1}, False),
        ({"if": {"required": ["a"]}, "else": {"required": ["b"]}}, {"c": 1}, False),
        ({"patternProperties": {"^x": {"type": "string"}}, "additionalProperties": False}, {"xa": 1}, False),
        ({"patternProperties": {"^x": {"type": "string"}}, "additionalProperties": False}, {"y": "s"}, False),
        ({"items": {"type": "string"}, "minItems": 1, "maxItems": 2}, ["a", "b", "c"], False),
        ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"Ab": 1}, False), ({"maximum": 3}, 4, False),
        ({"anyOf": [{"type": "null"}, {"type": "string"}]}, None, True),
    ]
    from jsonschema import Draft202012Validator

    for s, value, valid in cases:
        assert Draft202012Validator(s).is_valid(value) == valid, (s, value)
        assert schemas._compile(s)(value) == valid, (s, value)
    with pytest.raises(schemas._Unknown):
        schemas._compile({"$ref": "#/x"})


# ------------------------------------------------------------------------------ rules texts
def same_ast(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, A.Node):
        return vars(a).keys() == vars(b).keys() and all(same_ast(vars(a)[k], vars(b)[k]) for k in vars(a))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same_ast(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "children"):  # a parse-tree node no rule turned into AST
        return bool(a.data == b.data) and same_ast(list(a.children), list(b.children))
    return bool(a == b)


def outcome(text: str, start: str, direct: bool) -> Any:
    from lark.exceptions import UnexpectedInput

    try:
        return P._parse(text, start, direct=direct)
    except UnexpectedInput as exc:
        return ("lark", type(exc).__name__, getattr(exc, "line", None), getattr(exc, "column", None))
    except P.DslSyntaxError as exc:
        return ("dsl", exc.line, exc.col, exc.message)


def test_direct_parser_is_in_use() -> None:
    direct = P._direct()
    assert direct is not None
    assert direct.loop is not None  # its own loop over Lark's table, not Lark's


def outcome_by_lark_loop(direct: Any, text: str, start: str) -> Any:
    """What parsing ``text`` gives with the direct parser's own loop switched off (Lark's loop)."""
    loop, direct.loop = direct.loop, None
    try:
        return outcome(text, start, True)
    finally:
        direct.loop = loop


@pytest.mark.parametrize(("text", "start"), [
    ("x - -1 - y", "expr"), ("roll die d6 as r", "start"), ("roll 2 dice d12 as d6", "start"),
    ("a <= b == c", "expr"), ("1..n", "expr"), ("# only a comment", "start"), ("x # c\n", "expr"),
    ("let x = 1\r\n\r\nlog \"{x}\"  # c\n", "start"), ("x +", "expr"), ("'a'", "expr"), ("let let = 1", "start"),
])
def test_direct_loop_matches_lark_loop(text: str, start: str) -> None:
    """The direct parser's own loop gives what Lark's loop gives, values, places and errors."""
    direct = P._direct()
    assert direct is not None and direct.loop is not None
    fast = outcome(text, start, True)
    slow = outcome_by_lark_loop(direct, text, start)
    assert same_ast(fast, slow), (fast, slow)


def test_direct_parser_builds_the_same_ast_for_every_bundled_text(monkeypatch: pytest.MonkeyPatch) -> None:
    texts: set[tuple[str, str]] = set()
    real = P._parse

    def record(text: str, start: str, *, direct: bool = True) -> Any:
        texts.add((text, start))
        return real(text, start, direct=direct)

    monkeypatch.setattr(P, "_parse", record)
    for name in bundled_names():
        load_ruleset(name, cache=False)
    monkeypatch.setattr(P, "_parse", real)
    assert len(texts) > 200
    for text, start in sorted(texts):
        assert same_ast(P._parse(text, start), P._parse(text, start, direct=False)), text


@pytest.mark.parametrize(("text", "start"), [
    ("x + (y * 2) - -z", "expr"), ("(a).b[1, (c)]", "expr"), ("if a then (b) else c", "expr"),
    ("[x for x in (xs) where x > 1]", "expr"), ("not not (a and b) or c", "expr"), ("1 .. (n)", "expr"),
    ("\n\n; let x = 1 ;\n if x then\n pass\n elif y then break else\n log \"a {x}\"\n end\n", "start"),
    ("roll 2 dice d6 as r with bonus on (x)\nmodify p by 1 when (a) until done once", "start"),
    ("log \"bad {\"\nlet = 1", "start"),  # a syntax error after a bad string: the syntax error wins
    ("log \"bad {\"\nlog \"also {}\"", "start"),  # the first bad string is reported
    ("log \"fine {x +}\"", "start"), ("a +", "expr"), ("", "start"), ("", "expr"),
])
def test_direct_parser_matches_the_tree_on_odd_texts(text: str, start: str) -> None:
    fast, tree = outcome(text, start, True), outcome(text, start, False)
    assert same_ast(fast, tree), (fast, tree)


# ------------------------------------------------------------------------------ SourceMap.graft
def naive_graft(into: Y.SourceMap, other: Y.SourceMap, src: tuple[Any, ...], dst: tuple[Any, ...]) -> None:
    n = len(src)
    for mine, theirs in ((into.values, other.values), (into.keys, other.keys), (into.texts, other.texts)):
        for k, v in list(theirs.items()):
            if k[:n] == src:
                mine[dst + k[n:]] = v


def test_graft_by_prefix_index_matches_a_plain_scan() -> None:
    path = ROOT / "rulesets" / "time_of_crisis" / "cards.yaml"
    data, smap = Y.load_yaml_text(path.read_text(encoding="utf-8"), str(path))
    fast, plain = Y.SourceMap(), Y.SourceMap()
    grafts = [((), ("all",)), (("nothing", "here"), ("x",))]
    grafts += [((section,), (section,)) for section in data]
    grafts += [((section, eid), ("copy", eid)) for section in data for eid in (data[section] or {})]
    for src, dst in grafts:
        fast.graft(smap, src, dst)
        naive_graft(plain, smap, src, dst)
    assert fast == plain and len(fast.values) > 100
    # a change of the source after a graft is seen by the next one
    first = next(iter(data))
    smap.values[(first, "added")] = Y.Loc("elsewhere.yaml", 9, 9)
    fast.graft(smap, (first,), ("again",))
    naive_graft(plain, smap, (first,), ("again",))
    assert fast == plain and fast.loc(("again", "added")).file == "elsewhere.yaml"


def test_the_lalr_tables_are_made_from_the_grammar() -> None:
    """interpreter/dsl/lalr_table.json is current (else: python -m interpreter.dsl.lalr_table)."""
    from interpreter.dsl import lalr_table

    assert lalr_table.load_table() is not None


def test_first_characters_of_terminals_are_a_superset() -> None:
    import re

    from interpreter.dsl import lalr_table

    table = lalr_table.load_table()
    assert table is not None
    rng = random.Random(5)
    alphabet = [chr(i) for i in range(128)] + ["é", "K", "ſ", "٣"]
    samples = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    samples += [w for _n, regexp, literal, _f in table["terminals"] if literal for w in [regexp.replace("\\", "")]]
    samples += ["d6", "D12", "12", "\r\n", "\n", "# x", "\t ", '"a"', "== 1", "..", "abc"]
    for name, regexp, _literal, first in table["terminals"]:
        pattern = re.compile(regexp)
        for text in samples:
            if pattern.match(text) and text[0].isascii():
                assert first is None or text[0] in first, (name, text)


def test_direct_loop_matches_lark_on_random_texts() -> None:
    """Token soups: wherever the loop parses a text, Lark's own loop gives the same AST."""
    direct = P._direct()
    assert direct is not None and direct.loop is not None
    words = ["let", "x", "=", "1", "+", "-", "d6", "roll", "die", "dice", "2", "as", "r", "if", "then", "else",
             "end", "(", ")", "[", "]", ",", ".", "..", "log", '"a {x}"', "not", "and", "or", "in", "for", "each",
             "do", "\n", ";", "==", "<", "f", "set", "y", "increase", "by", "# c\n", "  ", "every", "unit", "top"]
    rng = random.Random(7)
    texts = [(" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))), rng.choice(["start", "expr"]))
             for _ in range(3000)]

    def expr(depth: int) -> str:
        atoms = ["x", "1", "d6", "top", '"s {x}"', "f(x)", "x.y", "[x, 2]", "every unit", "a[1]"]
        if depth > 2 or rng.random() < 0.4:
            return rng.choice(atoms)
        pick = rng.randrange(5)
        if pick == 0:
            return f"-{expr(depth + 1)}" if rng.random() < 0.5 else f"not {expr(depth + 1)}"
        if pick == 1:
            return f"({expr(depth + 1)})"
        if pick == 2:
            return f"if {expr(depth + 1)} then {expr(depth + 1)} else {expr(depth + 1)}"
        op = rng.choice(["+", "-", "*", "==", "<=", "and", "or", "in", "..", "not in", "%"])
        return f"{expr(depth + 1)}{rng.choice([' ', '', '  '])}{op} {expr(depth + 1)}"

    statements = ["let v = {e}", "set v = {e}", "log {e}", "roll die d6 as r", "roll {e} dice d12 as r",
                  "if {e} then\n log {e}\nelif {e} then pass else\n break\nend", "increase v.w by {e}",
                  "for each u in {e} where {e} do\n  call p({e}) as q\nend", "modify m by {e} when {e} once"]
    texts += [(expr(0), "expr") for _ in range(1500)]
    texts += [("\n".join(rng.choice(statements).replace("{e}", expr(1)) for _ in range(rng.randint(1, 4))), "start")
              for _ in range(800)]
    parsed = 0
    for text, start in texts:
        fast = outcome(text, start, True)
        slow = outcome_by_lark_loop(direct, text, start)
        assert same_ast(fast, slow), (text, fast, slow)
        parsed += not isinstance(fast, tuple)
    assert parsed > 1000


def test_a_load_without_syntax_errors_never_imports_lark() -> None:
    code = ("import sys; from interpreter.loader import load_ruleset; load_ruleset('time_of_crisis', cache=False); "
            "print(sorted(m for m in sys.modules if m == 'lark' or m.startswith('lark.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "LUDUS_CACHE": "off"})
    assert out.stdout.strip() == "[]"


def test_a_carriage_return_before_a_stray_character_is_a_located_syntax_error() -> None:
    """Python's splitlines() ends a line at a lone carriage return, the parser does not: the
    character named in the message is read from the parser's own lines (this raised IndexError)."""
    with pytest.raises(P.DslSyntaxError) as caught:
        P.parse_expr("count(p.hand)\r ?")
    assert (caught.value.line, caught.value.col) == (1, 14)
    assert "syntax error: unexpected character '\\r'" in str(caught.value)
