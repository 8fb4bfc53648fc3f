"""Parse rules-language text into the AST (see ast.py); errors carry text positions."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import MAX_INT, MAX_SIDES
from . import ast as A
from .astmemo import AstMemo as AstMemo
from .astmemo import _memo_get
from .astmemo import memoized as memoized
from .lalr_direct import LarkUnusable, _Direct

# Lark is imported when a text is first parsed, not with this module: a load from the
# load cache parses nothing, so a process that only uses cached rulesets never imports it.
if TYPE_CHECKING:
    from lark import Lark, Token, Tree
    from lark.exceptions import UnexpectedInput

GRAMMAR = Path(__file__).with_name("grammar.lark")

# Limits on rule text that no ruleset can change (see docs/dsl.md, "Limits"). They are
# checked on the AST right after the parse, before anything walks it recursively (the
# compiler, the generated Python, the load cache's pickles), so no text reaches a
# Python recursion limit.
MAX_NESTING = 64  # levels of expressions and blocks; the operands of a + b + ... are one
MAX_TEXT = 30_000  # characters in one rules text (a block, an expression or a label)


class DslSyntaxError(Exception):
    """A syntax error at (line, col) of the parsed text."""

    def __init__(self, line: int, col: int, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.line, self.col, self.message, self.hint = line, col, message, hint


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """The parser that builds a parse tree (with positions) for :func:`_build`."""
    from lark import Lark

    return Lark(GRAMMAR.read_text(encoding="utf-8"), parser="lalr", start=["start", "expr"],
                propagate_positions=True, maybe_placeholders=True)


_DIRECT: list[_Direct | None] = []


def _direct() -> _Direct | None:
    """The direct parser, or None if this Lark's internals are not the expected ones."""
    if not _DIRECT:
        try:
            _DIRECT.append(_Direct(GRAMMAR.read_text(encoding="utf-8"), _AstBuilder(), _rules()))
        except (AttributeError, TypeError):
            _DIRECT.append(None)
    return _DIRECT[0]


def _parse(text: str, start: str, *, direct: bool = True) -> Any:
    """The AST of ``text`` (rule ``start``); ``direct=False`` builds and walks the parse tree.

    Raises :class:`DslSyntaxError` for a text longer than ``MAX_TEXT`` or nested deeper
    than ``MAX_NESTING`` (positions relative to ``text``).
    """
    if len(text) > MAX_TEXT:
        raise DslSyntaxError(1, 1, f"rules text too long: {len(text):,} characters (at most {MAX_TEXT:,})",
                             "split it into procedures or functions")
    parser = _direct() if direct else None
    result = None
    if parser is not None:
        try:
            result = parser.parse(text, start)
        except LarkUnusable:  # a text only Lark parses, and this Lark's internals are not the known ones
            parser = None
    if parser is None:
        try:
            result = _build(_lark().parse(text, start=start))
        except RecursionError:  # only this fallback walks a tree recursively
            raise DslSyntaxError(1, 1, f"nested too deeply (more than {MAX_NESTING} levels)",
                                 "split it with 'let', a function or a procedure") from None
    deep = A.too_deep(result, MAX_NESTING)
    if deep is not None:
        raise DslSyntaxError(deep.pos[0], deep.pos[1], f"nested too deeply (more than {MAX_NESTING} levels "
                             "of expressions and blocks)", "split it with 'let', a function or a procedure")
    return result


_FRIENDLY = {
    "_NL": "end of line", "$END": "end of text", "NAME": "a name", "NUMBER": "a number",
    "STRING": "a string", "COMP_OP": "a comparison", "ADD_OP": "'+' or '-'", "MUL_OP": "'*', '/' or '%'",
    "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "COMMA": "','", "DOT": "'.'",
    "EQUAL": "'='", "SEMICOLON": "';'", "SIDES": "dice sides like d6", "MINUS": "'-'",
}


def _friendly(term: str) -> str:
    if term in _FRIENDLY:
        return _FRIENDLY[term]
    name = term.lstrip("_")
    return f"'{name.lower()}'"


def _syntax_error(exc: UnexpectedInput, text: str) -> DslSyntaxError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    line = getattr(exc, "line", 0) or 0
    col = getattr(exc, "column", 0) or 0
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
            found = "end of text"
        elif tok.type == "_NL":
            found = "end of line"
        else:
            found = f"'{tok}'"
        expected = sorted({_friendly(t) for t in exc.expected if not t.startswith("__")})
        hint = "expected " + ", ".join(expected[:8]) if expected else ""
        if "'end'" in expected and tok.type == "$END":
            hint = "a block opened with 'if', 'for', 'while' or 'repeat' is not closed with 'end'/'until'"
        return DslSyntaxError(line, col, f"syntax error: unexpected {found}", hint)
    if isinstance(exc, UnexpectedCharacters):
        # lines as the parser counts them (a lone carriage return does not end one)
        lines = text.split("\n")
        ch = lines[line - 1][col - 1] if 0 < line <= len(lines) and 0 < col <= len(lines[line - 1]) else "?"
        hint = "strings use double quotes" if ch == "'" else ""
        shown = ch if ch.isprintable() else repr(ch)[1:-1]  # a control character, spelt out
        return DslSyntaxError(line, col, f"syntax error: unexpected character '{shown}'", hint)
    if isinstance(exc, UnexpectedEOF):
        return DslSyntaxError(line, col, "syntax error: unexpected end of text")
    return DslSyntaxError(line, col, f"syntax error: {exc}")


def parse_block(text: str) -> list[A.Node]:
    """Parse a statement block."""
    memo, found = _memo_get(("block", text))
    if found is not None:
        return found
    result = _parse_block(text)
    if memo is not None:
        memo.put(("block", text), result)
    return result


def _parse_block(text: str) -> list[A.Node]:
    try:
        return list(_parse(text, "start"))
    except Exception as exc:
        # Only Lark raises its errors: it is imported by then (a text without one never imports it).
        from lark.exceptions import UnexpectedInput

        if isinstance(exc, UnexpectedInput):
            raise _syntax_error(exc, text) from None
        raise


def _build(tree: Tree) -> Any:
    """Lark tree → AST, bottom-up: each rule's children first, then its :class:`_AstBuilder` method.

    (What ``lark.Transformer`` with ``v_args(meta=True)`` does, without its per-node wrappers;
    a rule without a method stays a tree.)
    """
    from lark import Tree

    builder = _AstBuilder()
    rules = _rules()

    def walk(t: Any) -> Any:
        if isinstance(t, Tree):
            children = [walk(c) for c in t.children]
            fn = rules.get(t.data)
            return fn(builder, t.meta, children) if fn is not None else Tree(t.data, children, t.meta)
        return t

    return walk(tree)


def parse_expr(text: str, line: int = 1, col: int = 1) -> A.Node:
    """Parse one expression; positions are shifted so the text starts at (line, col)."""
    key = ("expr", text, line, col)
    memo, found = _memo_get(key)
    if found is not None:
        return found
    result = _parse_expr(text, line, col)
    if memo is not None:
        memo.put(key, result)
    return result


def _parse_expr(text: str, line: int = 1, col: int = 1) -> A.Node:
    try:
        node = _parse(text, "expr")
    except Exception as exc:
        if not isinstance(exc, DslSyntaxError):
            from lark.exceptions import UnexpectedInput  # see _parse_block

            if not isinstance(exc, UnexpectedInput):
                raise
        err = _syntax_error(exc, text) if not isinstance(exc, DslSyntaxError) else exc
        if err.line <= 1:
            err.col += col - 1
        err.line += line - 1
        raise err from None
    if (line, col) != (1, 1):
        def shift(pos: A.Pos) -> A.Pos:
            return (pos[0] + line - 1, pos[1] + col - 1 if pos[0] == 1 else pos[1])
        for sub in A.walk(node):
            sub.pos = shift(sub.pos)
            if isinstance(sub, A.Chain):  # its operators keep their own places
                sub.rest = [(op, shift(at), operand) for op, at, operand in sub.rest]
    return node


def _pos(meta: Any) -> A.Pos:
    """Where a rule starts: from Lark's tree meta, or the (line, col) the direct parser gives."""
    if meta.__class__ is tuple:
        return (meta[0] or 1, meta[1] or 1)
    return (getattr(meta, "line", 1) or 1, getattr(meta, "column", 1) or 1)


def _tpos(tok: Token) -> A.Pos:
    return (tok.line or 1, tok.column or 1)


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "{": "{", "}": "}"}


def parse_string_token(tok: Token) -> A.Str:
    """Split a string literal into text and ``{expression}`` parts."""
    line, col0 = _tpos(tok)
    return _template(str(tok)[1:-1], line, col0 + 1, escapes=True, pos=_tpos(tok))


def parse_template(text: str) -> A.Str:
    """Parse a text with ``{expression}`` parts written directly in YAML (labels).

    YAML has already handled quoting, so backslashes are literal; ``{{`` and ``}}`` stand
    for literal braces.
    """
    memo, found = _memo_get(("template", text))
    if found is not None:
        return found
    result = _template(text, 1, 1, escapes=False, pos=(1, 1))
    if memo is not None:
        memo.put(("template", text), result)
    return result


def _template(raw: str, line: int, col_first: int, *, escapes: bool, pos: A.Pos) -> A.Str:
    """Split ``raw`` (whose first character is at ``col_first``) into text and expressions."""
    col0 = col_first - 1
    parts: list[str | A.Node] = []
    buf: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if escapes and ch == "\\" and i + 1 < len(raw):
            buf.append(_ESCAPES.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        if not escapes and ch in "{}" and raw[i + 1:i + 2] == ch:
            buf.append(ch)
            i += 2
            continue
        if ch == "{":
            end = raw.find("}", i + 1)
            if end < 0:
                raise DslSyntaxError(line, col0 + 1 + i, "unclosed '{' in text",
                                 "write \\{ for a literal brace" if escapes else "write {{ for a literal brace")
            if buf:
                parts.append("".join(buf))
                buf = []
            inner = raw[i + 1:end]
            if not inner.strip():
                raise DslSyntaxError(line, col0 + 1 + i, "empty '{}' in text", "put an expression inside it")
            parts.append(_parse_expr(inner, line, col0 + 2 + i))
            i = end + 1
            continue
        buf.append(ch)
        i += 1
    if buf or not parts:
        parts.append("".join(buf))
    return A.Str(pos, parts)


def _number(tok: Token) -> int:
    """A number literal's value; past MAX_INT it is an error (checked on the digits first)."""
    digits = str(tok).lstrip("0")
    if len(digits) > len(str(MAX_INT)) or int(digits or "0") > MAX_INT:
        line, col = _tpos(tok)
        raise DslSyntaxError(line, col, f"number too large: {digits[:12]}... (numbers are at most {MAX_INT:,})"
                             if len(digits) > 24 else f"number too large: {digits} (numbers are at most {MAX_INT:,})")
    return int(digits or "0")


def _sides(tok: Token | None) -> int:
    """The faces of a die written ``dN`` (6 when not written): 1 to MAX_SIDES."""
    if tok is None:
        return 6
    digits = str(tok)[1:].lstrip("0")
    if not digits or len(digits) > len(str(MAX_SIDES)) or int(digits) > MAX_SIDES:
        line, col = _tpos(tok)
        shown = str(tok) if len(str(tok)) <= 12 else str(tok)[:12] + "..."
        raise DslSyntaxError(line, col, f"a die has 1 to {MAX_SIDES} sides, not {shown}")
    return int(digits)


def _block(x: Any) -> list[A.Node]:
    return list(x) if x is not None else []


@lru_cache(maxsize=1)
def _rules() -> dict[str, Any]:
    """The methods of :class:`_AstBuilder` by grammar rule name."""
    return {k: v for k, v in vars(_AstBuilder).items() if not k.startswith("_") and callable(v)}


class _AstBuilder:
    """Lark tree → AST: one method per grammar rule, given the rule's meta and built children."""

    # ---- structure
    def start(self, meta, children):
        return children[0]

    def block(self, meta, children):
        return [c for c in children if isinstance(c, A.Node)]

    # ---- expressions
    def number(self, meta, c):
        return A.Num(_tpos(c[0]), _number(c[0]))

    def string(self, meta, c):
        return parse_string_token(c[0])

    def name(self, meta, c):
        return A.Name(_tpos(c[0]), str(c[0]))

    def every(self, meta, c):
        return A.Every(_pos(meta), str(c[0]))

    def attr(self, meta, c):
        return A.Attr(_tpos(c[1]), c[0], str(c[1]))

    def index(self, meta, c):
        return A.Index(_pos(meta), c[0], c[1])

    def args(self, meta, c):
        return list(c)

    def call(self, meta, c):
        return A.Call(_tpos(c[0]), str(c[0]), c[1] or [])

    def call_query(self, meta, c):
        return A.CallQuery(_tpos(c[0]), str(c[0]), c[1])

    def call_graph(self, meta, c):
        fn, var, start, goal, step = c
        return A.Graph(_tpos(fn), str(fn), str(var), start, goal, step)

    def query(self, meta, c):
        head, var, source, where = c
        return A.Query(_pos(meta), head, str(var), source, where)

    def list_(self, meta, c):
        return A.ListLit(_pos(meta), c[0] or [])

    def list_query(self, meta, c):
        return A.ListQuery(_pos(meta), c[0])

    def neg(self, meta, c):
        return A.Unary(_pos(meta), "-", c[0])

    def not_(self, meta, c):
        return A.Unary(_pos(meta), "not", c[0])

    def _chain(self, meta, c, op=None):
        if len(c) == 1:
            return c[0]  # most expressions pass through every level of precedence alone
        rest: list[tuple[str, A.Pos, A.Node]] = []
        i = 1
        while i < len(c):
            if isinstance(c[i], str) and op is None:  # an operator's token (operands are nodes)
                rest.append((str(c[i]), _tpos(c[i]), c[i + 1]))
                i += 2
            else:
                rest.append((op or "?", _pos(meta), c[i]))
                i += 1
        return A.Chain(rest[-1][1], c[0], rest)

    def arith(self, meta, c):
        return self._chain(meta, c)

    def or_(self, meta, c):
        return self._chain(meta, c, "or")

    def and_(self, meta, c):
        return self._chain(meta, c, "and")

    def compare(self, meta, c):
        if len(c) == 1 or c[1] is None:
            return c[0]
        return A.BinOp(_tpos(c[1]), str(c[1]), c[0], c[2])

    def in_(self, meta, c):
        return A.BinOp(_pos(meta), "in", c[0], c[1])

    def not_in(self, meta, c):
        return A.BinOp(_pos(meta), "notin", c[0], c[1])

    def range_(self, meta, c):
        if len(c) == 1 or c[1] is None:
            return c[0]
        return A.BinOp(_pos(meta), "..", c[0], c[1])

    def cond_expr(self, meta, c):
        return A.Cond(_pos(meta), c[0], c[1], c[2])

    # ---- statements
    def let_stmt(self, meta, c):
        return A.Let(_pos(meta), str(c[0]), c[1])

    def name_target(self, meta, c):
        return A.Name(_tpos(c[0]), str(c[0]))

    def attr_target(self, meta, c):
        return A.Attr(_tpos(c[1]), c[0], str(c[1]))

    def set_stmt(self, meta, c):
        return A.Set(_pos(meta), c[0], c[1], "=")

    def increase_stmt(self, meta, c):
        return A.Set(_pos(meta), c[0], c[1], "+")

    def decrease_stmt(self, meta, c):
        return A.Set(_pos(meta), c[0], c[1], "-")

    def move_stmt(self, meta, c):
        return A.Move(_pos(meta), c[0], c[2], c[1] is not None)

    def draw_stmt(self, meta, c):
        return A.Draw(_pos(meta), c[0], c[1], c[2])

    def shuffle_stmt(self, meta, c):
        return A.Shuffle(_pos(meta), c[0])

    def assigns(self, meta, c):
        return list(c)

    def assign(self, meta, c):
        return (str(c[0]), c[1], _tpos(c[0]))

    def create_stmt(self, meta, c):
        kind, zone, called, fields, bind = c
        return A.Create(_pos(meta), str(kind), zone, fields or [], str(bind) if bind else None, called)

    def destroy_stmt(self, meta, c):
        return A.Destroy(_pos(meta), c[0])

    def roll_one_stmt(self, meta, c):
        _die, sides, bind = c
        return A.Roll(_pos(meta), None, _sides(sides), str(bind), None)

    def roll_stmt(self, meta, c):
        count, _dice, sides, bind, bonus = c
        return A.Roll(_pos(meta), count, _sides(sides), str(bind), bonus)

    def bonus(self, meta, c):
        return c[0]

    def choose_stmt(self, meta, c):
        secret, var, options, by, prompt, label = c
        return A.Choose(_pos(meta), str(var), options, by, prompt, label, secret is not None)

    def ask_stmt(self, meta, c):
        # a yes/no decision is a choice between true and false, labelled by the two answers
        var, by, prompt, yes, no = c
        pos = _pos(meta)
        options = A.ListLit(pos, [A.Name(pos, "true"), A.Name(pos, "false")])
        label = A.Cond(pos, A.Name(pos, str(var)), yes or A.Str(pos, ["Yes"]), no or A.Str(pos, ["No"]))
        return A.Choose(pos, str(var), options, by, prompt, label)

    def choose_action_stmt(self, meta, c):
        _kw, group, by, prompt, bind = c
        return A.ChooseAction(_pos(meta), str(group), by, str(bind) if bind else None, prompt)

    def secret_stmt(self, meta, c):
        pvar, players, _secretly, var, options, prompt, label = c
        return A.Secret(_pos(meta), str(pvar), players, str(var), options, prompt, label)

    def elif_clause(self, meta, c):
        return (c[0], _block(c[1]))

    def if_stmt(self, meta, c):
        branches = [(c[0], _block(c[1]))]
        other = None
        for item in c[2:]:
            if isinstance(item, tuple):
                branches.append(item)
            elif item is not None:
                other = _block(item)
        return A.If(_pos(meta), branches, other)

    def for_stmt(self, meta, c):
        return A.For(_pos(meta), str(c[0]), c[1], c[2], _block(c[3]))

    def repeat_stmt(self, meta, c):
        return A.Repeat(_pos(meta), _block(c[0]), c[1])

    def while_stmt(self, meta, c):
        return A.While(_pos(meta), c[0], _block(c[1]))

    def break_stmt(self, meta, c):
        return A.Break(_pos(meta))

    def call_stmt(self, meta, c):
        return A.CallProc(_pos(meta), str(c[0]), c[1] or [], str(c[2]) if c[2] else None)

    def call_field_stmt(self, meta, c):
        return A.CallField(_pos(meta), str(c[0]), str(c[1]), c[2] or [], str(c[3]) if c[3] else None)

    def return_stmt(self, meta, c):
        return A.Return(_pos(meta), c[0])

    def until_signal(self, meta, c):
        return ("until", str(c[0]))

    def while_cond(self, meta, c):
        return ("while", c[0])

    def _modify(self, meta, c, mode):
        point, value, when, duration, once = c
        node = A.Modify(_pos(meta), str(point), value, mode, when)
        node.once = once is not None
        if duration:
            kind, arg = duration
            if kind == "until":
                node.until = arg
            else:
                node.while_ = arg
        return node

    def modify_stmt(self, meta, c):
        return self._modify(meta, c, "add")

    def modify_to_stmt(self, meta, c):
        return self._modify(meta, c, "set")

    def signal_stmt(self, meta, c):
        return A.Signal(_pos(meta), str(c[0]))

    def consume_stmt(self, meta, c):
        return A.Consume(_pos(meta), str(c[0]), c[1] or [])

    def log_stmt(self, meta, c):
        return A.Log(_pos(meta), c[0], c[1])

    def game_over_stmt(self, meta, c):
        return A.GameOver(_pos(meta), c[0])

    def pass_stmt(self, meta, c):
        return A.Pass(_pos(meta))

    def commit_stmt(self, meta, c):
        return A.Commit(_pos(meta))

