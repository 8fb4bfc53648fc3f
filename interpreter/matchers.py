"""Which choices a decision offers: the ``offered:`` / ``not_offered:`` matchers of scenarios.

A matcher is a label substring (``"Buy"``), a regular expression between slashes
(``"/^Roll \\d+ dice?$/"``), or a mapping ``{action: NAME, player: P, label: TEXT}`` (all
keys optional but one). Scenario files are untrusted: a pattern is at most MAX_PATTERN
characters, and one that could backtrack without end — a repeat inside a repeat, a
backreference — is refused with a located error, so matching a label stays linear.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

from .diagnostics import Diagnostic, LudusError, did_you_mean
from .runtime import Choice, Game
from .yamlsource import PathKey, SourceMap

MAX_PATTERN = 200
_parser: Any = importlib.import_module("re._parser")  # the standard library's own regex parser
_REPEATS = {_parser.MAX_REPEAT, _parser.MIN_REPEAT, getattr(_parser, "POSSESSIVE_REPEAT", None)} - {None}


@dataclass(frozen=True)
class Matcher:
    """One matcher as written (``shown``) and what it tests."""

    shown: str
    label: str | None = None
    pattern: re.Pattern[str] | None = None
    action: str | None = None
    player: str | None = None

    def matches(self, choice: Choice, player: str) -> bool:
        if self.player is not None and self.player != player:
            return False
        if self.action is not None and (not isinstance(choice.value, dict) or choice.value.get("action") != self.action):
            return False
        if self.label is not None and self.label not in choice.label:
            return False
        return self.pattern is None or self.pattern.search(choice.label) is not None


def _unsafe(tree: Any, inside_repeat: bool = False) -> str:
    """Why a parsed pattern could take exponential time ('' if it cannot)."""
    for op, arg in tree:
        if op in _REPEATS:
            if inside_repeat:
                return "a repeat inside a repeat"
            found = _unsafe(arg[2], True)
        elif op == _parser.GROUPREF or op == _parser.GROUPREF_EXISTS:
            return "a backreference"
        elif op == _parser.SUBPATTERN:
            found = _unsafe(arg[3], inside_repeat)
        elif op == _parser.BRANCH:
            found = next((w for w in (_unsafe(b, inside_repeat) for b in arg[1]) if w), "")
        elif op in (_parser.ASSERT, _parser.ASSERT_NOT):
            found = _unsafe(arg[1], inside_repeat)
        else:
            continue
        if found:
            return found
    return ""


def _pattern(text: str, smap: SourceMap, path: PathKey) -> re.Pattern[str]:
    body = text[1:-1]
    if len(body) > MAX_PATTERN:
        raise LudusError([Diagnostic(smap.loc(path), f"pattern too long: {len(body):,} characters "
                                     f"(at most {MAX_PATTERN})", "match a shorter part of the label")])
    try:
        unsafe = _unsafe(_parser.parse(body))
        compiled = re.compile(body)
    except (re.error, RecursionError, OverflowError) as exc:
        raise LudusError([Diagnostic(smap.loc(path), f"bad pattern {text}: {exc}",
                                     "a label substring needs no slashes")]) from None
    if unsafe:
        raise LudusError([Diagnostic(smap.loc(path), f"pattern {text} is refused: {unsafe} may take "
                                     "exponential time", "write a simpler pattern, or a label substring")])
    return compiled


def parse_matchers(specs: Any, smap: SourceMap, path: PathKey) -> list[Matcher]:
    """The matchers of an ``offered:``/``not_offered:`` list (checked by the schema's shapes)."""
    out: list[Matcher] = []
    for i, spec in enumerate(specs or []):
        where = path + (i,)
        if isinstance(spec, str):
            if len(spec) >= 2 and spec.startswith("/") and spec.endswith("/"):
                out.append(Matcher(spec, pattern=_pattern(spec, smap, where)))
            else:
                out.append(Matcher(f"'{spec}'", label=spec))
            continue
        label = spec.get("label")
        shown = ", ".join(f"{k}: {v}" for k, v in spec.items())
        out.append(Matcher("{" + shown + "}", label=None if label is None else str(label),
                           action=spec.get("action"), player=spec.get("player")))
    return out


def check_offered(game: Game, matchers: list[Matcher], offered: bool, where: str, failures: list[str]) -> None:
    """Add a failure for each matcher that no offered choice matches (``offered``), or that one
    does (not ``offered``). Every deciding player's choices count."""
    choices = [(p, c) for p in game.deciders() for c in game.choices(p)] if not game.over else []
    labels = "; ".join(c.label for _p, c in choices) or "nothing (no decision is pending)"
    for m in matchers:
        hits = [c.label for p, c in choices if m.matches(c, p)]
        if offered and not hits:
            failures.append(f"{where}: expected a choice matching {m.shown} to be offered; offered: {labels}")
        elif not offered and hits:
            failures.append(f"{where}: expected no choice matching {m.shown}, but offered: {'; '.join(hits)}")


def nearest_label(game: Game, wanted: Any, player: str | None) -> str:
    """A hint for a step whose choice is not offered: the offered label nearest to it."""
    if not isinstance(wanted, str) or game.over:
        return ""
    deciders = [player] if player else game.deciders()
    labels = [c.label for p in deciders if p in game.deciders() for c in game.choices(p)]
    return did_you_mean(wanted, labels)
