"""The legal choices of an action: the lister that goes through its parameters' choices
testing its ``if`` in stages, and the labeler of one choice.

``Compiler.action`` checks an action's texts and calls these to write its Python: a lister
``(game, actor, out)`` appending every legal choice to ``out``, and a labeler ``(game, actor,
args)`` giving one choice's label, made when it is first read (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..model import ActionDef
from . import ast as A
from . import types as T
from .expressions import Abort, Scope
from .parser import DslSyntaxError, parse_template
from .source import CodeGen, Src, Writer, local
from .types import Type

if TYPE_CHECKING:
    from .compiler import Compiler

Text = tuple[str, Any]  # a rules text and where it starts (its TextOrigin)


def filter_loop(c: Compiler, domain: Text, scope: Scope) -> tuple[str, Src, Src] | None:
    """The last parameter's choices ``[x for x in L where C]`` as (x, loop, C), for a lister
    to go through L testing C itself (a comprehension is a call of its own in Python); None
    for other choices, or when x would hide a name the lister still reads. Only the last
    parameter, tested by no stage: then C's tests are the only work of its loop, in the
    same order as the comprehension's, and a failure fails the listing alike."""
    listed = c._parse_expr(domain[0], domain[1])
    if not isinstance(listed, A.ListQuery):
        return None
    node = listed.query
    if node.where is None or node.var in scope or not (
            node.head is None or (isinstance(node.head, A.Name) and node.head.name == node.var)):
        return None
    reported = len(c.diags)
    try:
        loop, where = c.x.filter_loop(node, dict(scope))
    except (Abort, RecursionError, MemoryError):  # the comprehension, compiled once already, serves
        return None
    finally:
        del c.diags[reported:]  # none: the same text compiled without any a moment ago
    return node.var, loop, where

def staged(c: Compiler, cond: Text, scope: Scope, params: list[str]) -> list[Src | None]:
    """An action's ``if`` split into checks per parameter.

    Stage i holds the conjuncts that can be tested once the first i parameters are bound,
    so listing prunes early: a test of the actor alone runs once, not once per combination
    of parameters. A conjunct never moves before one written ahead of it, so 'and' still
    short-circuits exactly as written.
    """
    node = c._parse_expr(cond[0], cond[1])
    assert node is not None
    stages: list[list[Src]] = [[] for _ in range(len(params) + 1)]
    level = 0
    for part in A.conjuncts(node):
        used = A.names_in(part)
        level = max([level] + [i + 1 for i, p in enumerate(params) if p in used])
        stages[level].append(c.x.expr(part, dict(scope))[0])
    out: list[Src | None] = []
    for tests in stages:
        if not tests:
            out.append(None)
        elif len(tests) == 1:
            out.append(tests[0])
        else:
            out.append(Src("(" + " and ".join(f"{{{i}}}" for i in range(len(tests))) + ")", tuple(tests)))
    return out


def lister(gen: CodeGen, action: ActionDef, doms: list[Src], stages: list[Src | None],
            label: Src | None, last: tuple[str, Src, Src] | None = None,
            text: str | None = None) -> Callable[[Any, str, list], None]:
    """``lister(game, actor, out)`` appending every legal choice of the action to ``out``;
    ``last``: the last parameter's choices as a loop and its test (filter_loop);
    ``text``: the label when it is a constant text."""
    name = gen.name("list")
    k = gen.const
    params = action.params

    def write() -> Writer:
        w = Writer(f"the choices of action {action.name}", ["actor"], action.loc)
        w.line(0, f"def {name}(g, v_actor, out):")
        w.line(1, "try:")
        depth = 2
        if stages[0] is not None:
            w.line(depth, "if not ", stages[0], ":", loc=stages[0].loc)
            w.line(depth + 1, "return")
        for i, p in enumerate(params):
            if last is not None and i == len(params) - 1:
                var, loop, where = last
                w.line(depth, f"for {local(var)} in ", loop, ":", loc=doms[i].loc)
                w.line(depth + 1, "if not ", where, ":", loc=doms[i].loc)
                w.line(depth + 2, "continue")
                if var != p.name:
                    w.line(depth + 1, f"{local(p.name)} = {local(var)}")
            else:
                w.line(depth, f"for {local(p.name)} in ", doms[i], ":", loc=doms[i].loc)
            depth += 1
            stage = stages[i + 1]
            if stage is not None:
                w.line(depth, "if not ", stage, ":", loc=stage.loc)
                w.line(depth + 1, "continue")
        args = ", ".join(f"{p.name!r}: " + (local(p.name) if simple(p.type) else f"_copy({local(p.name)})")
                         for p in params)
        # a label the rules write is made when it is first read (see Choices.label_choices)
        lab = "None" if label is not None else k(action.name)
        if text is not None:  # its own label unless it names an entity: no labeler call then
            lab = f"({k(text)} if {k(text)} not in g.ents else None)"
        w.line(depth, f"out.append({{'label': {lab}, 'value': {{'action': {k(action.name)}, 'args': {{{args}}}}}}})",
               loc=action.loc)
        w.line(1, "except _FAILURES as _e:")
        w.line(2, "raise _located(_e, g) from None")
        return w
    return gen.lazy(name, write)


def constant_text(template: str) -> str | None:
    """The text of a label template without ``{...}`` parts (None if it has some)."""
    try:
        node = parse_template(str(template))
    except DslSyntaxError:
        return None
    if isinstance(node, A.Str) and len(node.parts) == 1 and isinstance(node.parts[0], str):
        return node.parts[0]
    return None


def labeler(gen: CodeGen, action: ActionDef, label: Src) -> Callable[[Any, str, dict], str]:
    """``labeler(game, actor, args)``: the label of one of the action's choices, its
    parameters bound from ``args`` (the choice's value) on the state it was listed in."""
    name = gen.name("label")

    def write() -> Writer:
        w = Writer(f"the label of action {action.name}", ["actor", *[p.name for p in action.params]], action.loc)
        w.line(0, f"def {name}(g, v_actor, args):")
        w.line(1, "try:")
        for p in action.params:
            w.line(2, f"{local(p.name)} = args[{p.name!r}]", loc=action.loc)
        # a label is a text that names no entity: returned as it is, without label_of's call
        w.line(2, "_t = ", label, loc=label.loc)
        w.line(2, "return _t if _t.__class__ is str and _t not in g.ents else g.label_of(_t)", loc=label.loc)
        w.line(1, "except _FAILURES as _e:")
        w.line(2, "raise _located(_e, g) from None")
        return w
    return gen.lazy(name, write)


def simple(t: Type) -> bool:
    """Values passed to an action as they are (no copy needed)."""
    return t in (T.INT, T.STR, T.BOOL) or T.is_ent(t)
