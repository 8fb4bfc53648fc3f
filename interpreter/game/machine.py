"""Machine: the run loop over the frame stack, frames, the work budget, and the end.

The rules do not run on the Python call stack: a procedure call pushes a frame
``{proc, pc, locals, ret}`` onto ``state["stack"]`` and ``_run`` executes the top frame's
instructions until a decision is pending or the game has a result. ``finish`` ends the
game and ranks the players by the ruleset's scoring.
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..diagnostics import Diagnostic, Loc, LudusError
from ..dsl.source import FAILURES as _FAILURES
from ..dsl.source import describe_call, fault_of
from ..model import RuleFault, Ruleset, copy_plain, work_fault
from .base import MAX_DEPTH, GameBase

if TYPE_CHECKING:
    from ..runtime import Game

_copy = copy_plain


def _rank_value(v: Any) -> int:
    """Scores and tie-breakers compare as numbers: true is 1, false 0, none lowest."""
    if v is None:
        return -(1 << 62)
    return int(v) if isinstance(v, bool | int) else 0


NARRATION_NOTES = 5  # lines of the failing step's narration shown with a rule's fault
_DATA_SECTIONS = ("tables", "globals", "entities", "constants", "kinds")


def _patched_notes(rs: Ruleset, loc: Loc, calls: str) -> tuple[tuple[Loc, str], ...]:
    """For a fault in a rule whose line, or whose calls' arguments (``calls``), name data an
    overlay patched (a table's row, a global, an entity's field), a note naming each such
    patch: the data may be the culprit."""
    patches = rs.data.get("patches") or []
    if not patches or loc.line <= 0:
        return ()
    line = linecache.getline(loc.file, loc.line) + " " + calls
    words = set(re.findall(r"[a-z_][a-z0-9_]*", line))
    notes = []
    for i, patch in enumerate(patches):
        steps = str(patch.get("path", "")).strip("/").split("/")
        if len(steps) >= 2 and steps[0] in _DATA_SECTIONS and steps[1] in words:
            at = rs.smap.loc(("patches", i))
            notes.append((at, f"an overlay changed the data this rule reads: {patch.get('op')} {patch.get('path')}"))
    return tuple(notes[:NARRATION_NOTES])


class Machine(GameBase):
    """The run loop, frames, the step and work budgets, the end of the game and scoring."""

    def _guarded(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except RuleFault as fault:
            raise self._located(fault) from None

    def _located(self, fault: RuleFault, said: Sequence[str] = ()) -> LudusError:
        """The fault as a located error: the call chain, then what the failing step had narrated
        (undone with the step, but it tells where the game was)."""
        loc = fault.loc or Loc(self.rs.folder)
        notes = tuple((where or loc, what if what.startswith("...") else what + " was called here")
                      for where, what in reversed(fault.chain))
        notes += _patched_notes(self.rs, loc, " ".join(what for _where, what in notes))
        if said:
            shown = said[-NARRATION_NOTES:]
            more = f" (and {len(said) - len(shown)} line(s) before)" if len(said) > len(shown) else ""
            notes += ((loc, "before it failed, this step had narrated" + more + ": " + " / ".join(shown)),)
        return LudusError([Diagnostic(loc, fault.message, fault.hint, notes=notes)])

    def _run(self) -> None:
        """Run the top frame's procedure until a decision is pending or the game is over."""
        st = self._state
        stack = st["stack"]
        procs = self._procs
        budget = self.rs.step_budget
        steps = 0
        self.work = self.steps = 0
        while st["pending"] is None and st["result"] is None:
            if not stack:
                self.finish("the rules ran to their end")
                return
            fr = stack[-1]
            proc = procs[fr["proc"]]
            try:
                proc.run(self, fr)  # type: ignore[misc]  # every procedure of a loaded ruleset has one
            except _FAILURES as exc:
                raise self._fault(exc, stack) from None
            steps += 1
            if steps > budget:
                raise RuleFault(f"runaway rules in '{fr['proc']}': more than {budget} steps without a decision",
                                self._paused_at(fr) or proc.loc,
                                "a loop never ends; check its 'until'/'while' condition")
            stack = st["stack"]

    def _fault(self, exc: BaseException, stack: list[dict[str, Any]]) -> RuleFault:
        """The located fault of a rule that failed in the top frame, with its whole call chain:
        the frames below (procedures that called and wait) and the generated calls inside it."""
        fault = fault_of(exc, self)
        if fault.loc is None:
            fault.loc = self._procs[stack[-1]["proc"]].loc if stack else None
        waiting = []
        for caller, callee in zip(stack, stack[1:], strict=False):
            if self._paused_at(caller) is None:
                continue  # pushed by the engine (the set-up under 'main'), not called by a rule
            proc = self._procs[callee["proc"]]
            what = f"action {callee['proc'][7:]}" if callee["proc"].startswith("action:") else \
                f"procedure {callee['proc']}"
            waiting.append((self._paused_at(caller), describe_call(what, list(proc.params), callee["locals"], self)))
        fault.chain = waiting + fault.chain
        return fault

    def _paused_at(self, fr: dict[str, Any]) -> Loc | None:
        """Where a frame's procedure stopped (the statement of its resume point)."""
        where = self._procs[fr["proc"]].points.get(fr["pc"])
        return where[0].locate(where[1], where[2]) if where is not None else None

    # ================================================================ frames
    @staticmethod
    def _frame(proc: str, locals_: dict[str, Any], ret: str | None) -> dict[str, Any]:
        return {"proc": proc, "pc": 0, "locals": locals_, "ret": ret}

    def push(self, name: str, args: dict[str, Any], bind: str | None, loc: Loc | None) -> None:
        stack = self._state["stack"]
        if len(stack) >= MAX_DEPTH:
            raise RuleFault(f"procedure calls nested more than {MAX_DEPTH} deep (endless recursion?)", loc)
        stack.append({"proc": name, "pc": 0, "locals": args, "ret": bind})  # _frame, inline (a call a step)
        if self.usage is not None:
            self.usage[name] += 1

    def ret(self, value: Any) -> None:
        stack = self._state["stack"]
        fr = stack.pop()
        if stack and fr.get("ret"):
            stack[-1]["locals"][fr["ret"]] = value
        if self._after_setup is not None and fr["proc"] == "setup" and len(stack) == 1:
            hook, self._after_setup = self._after_setup, None
            self.forget_all()
            hook(cast("Game", self))  # a Machine is always a part of a Game
            self.forget_all()  # the hook edits the state directly

    # ================================================================ budget
    def spend(self, n: int) -> None:
        """Count ``n`` steps of work (items gone through, a call); past the budget, a fault
        (located at the statement running)."""
        w = self.work + n
        self.work = w
        if w > self.work_budget:
            raise work_fault(self.work_budget)

    # ================================================================ the end
    def finish(self, reason: str) -> None:
        st = self._state
        sc = self.rs.scoring
        scores: dict[str, Any] = {}
        keys: dict[str, tuple] = {}
        for p in self.players:
            L = {"p": p}
            s = sc.score(self, L) if sc.score else 0
            scores[p] = s
            keys[p] = tuple(_rank_value(v) for v in (s, *(tb(self, L) for tb in sc.tiebreaks)))
        ranking = sorted(self.players, key=lambda p: keys[p], reverse=True)
        best = keys[ranking[0]] if ranking else ()
        winners = [p for p in ranking if keys[p] == best]
        st["result"] = {"reason": reason, "scores": scores, "ranking": ranking, "winners": winners}
        st["pending"] = None
        st["stack"] = []
        self.log.append({"type": "end", "result": _copy(st["result"])})
