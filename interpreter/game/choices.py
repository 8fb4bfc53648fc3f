"""Choices: the pending decision, the legal choices offered, and ``apply``.

Every pause offers one finite list of labelled options (``state["pending"]``): a ``choose``
over a list, a menu of actions (every legal action of a group and combination of its
parameters), or a secret choice with one list per player. ``apply`` is atomic: it copies
the state first and restores it if the choice is illegal or a rule fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import rng
from ..diagnostics import LudusError
from ..model import _ATOMS, MAX_SIDES, UMPIRE, RuleFault, copy_plain
from .base import MAX_DEPTH, GameBase

_copy = copy_plain


class IllegalChoice(Exception):
    """A choice that is not one of the offered ones; the state is untouched."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Choice:
    """One legal choice at a pause."""

    index: int
    label: str
    value: Any


def _bad_die(d: Any) -> bool:
    return isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= MAX_SIDES


def _shown(v: Any) -> str:
    """A short text for a value a caller gave (a huge number is not written out in full)."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 24:
        return f"{'-' if v < 0 else ''}a number of {v.bit_length()} bits"
    text = repr(v)
    return text if len(text) <= 40 else text[:40] + "..."


class Choices(GameBase):
    """Pending decisions: asking, listing the legal choices, applying one."""

    @property
    def seats(self) -> list[str]:
        """Everyone who decides: the players, then the umpire if the ruleset declares one.

        Callers that give each seat a bot or a person use this, not ``players``.
        """
        return [*self.players, UMPIRE] if self.rs.umpire else list(self.players)

    def deciders(self) -> list[str]:
        """Seats who may make a choice now (several during a secret choice); the umpire is "umpire"."""
        p = self._state["pending"]
        if p is None:
            return []
        if p["type"] == "secret":
            return [q for q in p["players"] if q not in p["answers"]]
        return [p["player"]]

    def choices(self, player: str | None = None) -> list[Choice]:
        """The finite, labelled list of legal choices for ``player`` (default: the first decider)."""
        self._label_or_fail()  # the pending choices labelled, if they are not yet
        return [Choice(i, o["label"], o["value"]) for i, o in enumerate(self._offered(player))]

    def count_choices(self, player: str | None = None) -> int:
        """How many legal choices ``player`` has (default: the first decider): ``len(choices(player))``
        without making the list or the labels (a random bot needs only the count)."""
        return len(self._offered(player))

    def _offered(self, player: str | None) -> list[dict[str, Any]]:
        """The pending options of ``player`` (default: the first decider), labelled or not; none
        when nothing is pending or it is not his decision."""
        p = self._state["pending"]
        if p is None:
            return []
        if player is None:
            ds = self.deciders()
            if not ds:
                return []
            player = ds[0]
        return self._options_for(p, player) or []

    def _options_for(self, p: dict[str, Any], player: str) -> list[dict[str, Any]] | None:
        if p["type"] == "secret":
            if player in p["answers"] or player not in p["players"]:
                return None
            return p["players"][player]["options"]
        return p["options"] if p["player"] == player else None

    def apply(self, choice: int | str, player: str | None = None, dice: Sequence[int] | None = None,
              salt: int | None = None) -> None:
        """Make a choice (by index, or by exact label) for ``player``.

        Raises :class:`IllegalChoice` and leaves the state untouched if it is not legal.
        ``dice`` forces the next die results (for tests and rulebook examples): whole numbers
        from 1 to MAX_SIDES (1000), else IllegalChoice; all must be rolled before the next
        decision, else IllegalChoice too. ``salt`` (a whole number below 2**64) stirs fresh
        randomness into the dice to come, and is logged with the choice (rng.mix). If a rule fails while the choice is carried out (a
        forced die the rolled die cannot show, a limit reached...), :class:`LudusError` with
        the rule's place; either way the state is as before.
        """
        self.decided()  # forgets if the state may have been edited from outside since the last call
        st = self._state
        p = st["pending"]
        if st["result"] is not None:
            raise IllegalChoice("the game is over")
        if p is None:
            raise IllegalChoice("no decision is pending")
        if player is None:
            ds = self.deciders()
            player = ds[0]
        options = self._options_for(p, player)
        if options is None:
            who = ", ".join(self.deciders())
            raise IllegalChoice(f"it is not {self.label_of(player)}'s decision (waiting for {who})")
        # an index, the commonest choice, passes without the checks (``int | str`` is a new
        # object at every evaluation)
        if choice.__class__ is not int and (isinstance(choice, bool) or not isinstance(choice, int | str)):
            raise IllegalChoice(f"a choice is an index or a label, not {choice!r}")
        if isinstance(choice, str):
            self._label_or_fail()  # every choice labelled, to match the one named
            matches = [i for i, o in enumerate(options) if o["label"] == choice]
            if not matches:
                labels = "; ".join(o["label"] for o in options[:12])
                raise IllegalChoice(f"'{choice}' is not one of the {len(options)} choices: {labels}")
            index = matches[0]
        else:
            index = choice
            if not 0 <= index < len(options):
                counted = "there is only 1 choice (0)" if len(options) == 1 else \
                    f"there are {len(options)} choices (0-{len(options) - 1})"
                raise IllegalChoice(f"choice {index} is out of range: {counted}")
        if dice is not None:
            for d in dice:
                if _bad_die(d):
                    raise IllegalChoice(f"forced dice must be whole numbers from 1 to {MAX_SIDES}, not {_shown(d)}")
        if salt is not None and (isinstance(salt, bool) or not isinstance(salt, int) or not 0 <= salt < 2**64):
            raise IllegalChoice(f"a salt is a whole number from 0 to 2**64-1, not {_shown(salt)}")
        snapshot = self._shared() if self.atomic else None
        log_len = len(self.log)
        try:
            option = options[index]
            label = option["label"]
            if label is None:
                label = self._label_of_choice(option)
            entry: dict[str, Any] = {"type": "choice", "player": player, "index": index, "label": label}
            if dice:
                entry["dice"] = [int(d) for d in dice]  # so a replay forces them too
            if salt is not None:
                entry["salt"] = salt
                st["rng"] = rng.mix(st["rng"], salt)
            self.log.append(entry)
            if dice:
                st["forced_dice"].extend(int(d) for d in dice)
            self._resolve(p, player, option["value"])
            self._run()
            if dice and st["forced_dice"]:
                # Forced dice belong to the choice they come with; leftovers mean a wrong scenario.
                left = st["forced_dice"]
                self._rollback(snapshot, log_len)
                if snapshot is None:
                    left = list(left)
                    self._state["forced_dice"] = []
                raise IllegalChoice(f"this choice rolled {len(dice) - len(left)} of the {len(dice)} forced dice; "
                                    f"{left} were not rolled")
        except RuleFault as fault:
            said = [str(e["text"]) for e in self.log[log_len:] if e.get("type") == "text"]
            self._rollback(snapshot, log_len)
            raise self._located(fault, said) from None
        except LudusError:
            self._rollback(snapshot, log_len)
            raise

    def _rollback(self, snapshot: dict[str, Any] | None, log_len: int) -> None:
        if snapshot is not None:
            self.state = snapshot
            self._bind()
            self._own_ents, self._own_zones = set(), set()  # the copy shares with the dropped state
        del self.log[log_len:]

    def _resolve(self, p: dict[str, Any], player: str, value: Any) -> None:
        st = self._state
        self._unlabelled = None  # the menu is answered: its other labels are never needed
        if p["type"] == "choice":
            st["pending"] = None
            # a text or number is its own copy: no call for the commonest choices
            st["stack"][-1]["locals"][p["var"]] = value if value.__class__ in _ATOMS else _copy(value)
        elif p["type"] == "action":
            st["pending"] = None
            args = dict(_copy(value["args"]))
            args["actor"] = player
            # pushed on a player's answer: a failure (too deep) is blamed on the statement that asked
            stack = st["stack"]
            self.push("action:" + value["action"], args, p.get("bind"),
                      self._paused_at(stack[-1]) if len(stack) >= MAX_DEPTH else None)
        else:
            p["answers"][player] = _copy(value)
            if len(p["answers"]) == len(p["players"]):
                st["pending"] = None
                st["stack"][-1]["locals"][p["var"]] = {q: p["answers"][q] for q in p["players"]}

    def commit(self) -> None:
        """A commit point of the rules (the ``commit`` statement): undo does not go back past it."""
        self.commits += 1
