"""Asking: the decisions the rules ask for (``choose``, a menu of actions, a secret choice),
their lists of legal choices, and the labels of a menu, made when first read.

The generated code of a ``choose`` statement calls ``ask``/``ask_secret``, and of ``choose
action`` ``ask_action``; each sets ``state["pending"]``. ``Choices`` (choices.py) answers it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..diagnostics import Loc
from ..dsl.source import FAILURES as _FAILURES
from ..dsl.source import fault_of
from ..model import _ATOMS, UMPIRE, RuleFault, copy_plain
from .base import GameBase

_copy = copy_plain


class Asking(GameBase):
    """Pending decisions as the rules ask them, and the labels of their choices."""

    @property
    def state(self) -> dict[str, Any]:
        """The game's state: plain JSON data (docs/state.md).

        The labels of a menu of actions are written when first read: a bot that picks by
        index needs one label, for the log, not one per choice. Reading ``state`` (as every
        caller outside the running rules does) labels them all first, so what it shows is
        always complete.

        Whoever reads it may edit it, so reading it marks the game *exposed*: from then on
        every decision forgets remembered function results (Values.decided).
        """
        self.exposed = True  # whoever holds it may edit it: decisions forget (Values.decided)
        if self._unlabelled is not None:
            self._label_or_fail()
        return self._state

    @state.setter
    def state(self, st: dict[str, Any]) -> None:
        self._state = self.raw_state = st
        self._unlabelled = None

    def _full_state(self) -> dict[str, Any]:
        """The state with every label written, as ``state`` gives it, for the engine's own
        readers (views, copies, JSON), which edit nothing: the game is not marked exposed."""
        if self._unlabelled is not None:
            self._label_or_fail()
        return self._state

    def _label_choices(self) -> None:
        """Write the labels of the pending menu's choices (a rule failing: RuleFault, located)."""
        due = self._unlabelled
        if due is None:
            return
        self._unlabelled = None  # the labels' rules read the state too (its modifiers)
        options, label_of_choice = due
        try:
            for o in options:
                if o["label"] is None:
                    o["label"] = label_of_choice(o)
        except BaseException:
            self._unlabelled = due  # still due: read again, the failure shows again
            raise

    def _label_of_choice(self, option: dict[str, Any]) -> str:
        """The label of one choice of the pending decision (not yet labelled)."""
        assert self._unlabelled is not None
        return self._unlabelled[1](option)

    def _label_of_action(self, option: dict[str, Any], actor: str) -> str:
        value = option["value"]
        labeler = self.rs.actions[value["action"]].labeler
        assert labeler is not None  # a choice is unlabelled only when its action writes a label
        return labeler(self, actor, value["args"])

    def _label_later(self, options: list[dict[str, Any]], label_of_choice: Callable[[dict[str, Any]], str]) -> None:
        """Options just offered, some without their label (None): made when first read, or at
        once in a game with undo, so that a label that fails undoes the choice before."""
        self._unlabelled = (options, label_of_choice)
        if self.atomic:
            try:
                self._label_choices()
            except _FAILURES as exc:
                raise fault_of(exc, self) from None

    def _label_or_fail(self) -> None:
        try:
            self._label_choices()
        except RuleFault as fault:
            raise self._located(fault) from None

    def _labelled(self, values: Sequence[Any], var: str, L: dict[str, Any],
                  label: Callable[[Any, dict], Any] | None) -> list[dict[str, Any]]:
        """The options of ``values``, each labelled at once (a secret choice's)."""
        label_of_choice = self._label_by(var, L, label)
        out = [{"label": None, "value": _copy(v)} for v in values]
        for o in out:
            o["label"] = label_of_choice(o)
        return out

    def _label_by(self, var: str, L: dict[str, Any],
                  label: Callable[[Any, dict], Any] | None) -> Callable[[dict[str, Any]], str]:
        """How a choice of ``choose VAR ... label LABEL`` is labelled, on the locals ``L`` of
        the procedure that asked (which stay as they are until the choice is answered)."""
        if label is None:
            return lambda o: self.label_of(o["value"])

        def label_of_choice(o: dict[str, Any]) -> str:
            L2 = dict(L)
            L2[var] = o["value"]
            t = label(self, L2)
            # a text that names no entity is its own label (the commonest): no call
            return t if t.__class__ is str and t not in self.ents else self.label_of(t)
        return label_of_choice

    def _check_player(self, player: Any, loc: Loc | None) -> str:
        if player not in self.players and not (player == UMPIRE and self.rs.umpire):
            raise RuleFault(f"{self.label_of(player)} is not a player and cannot decide", loc)
        return player

    def ask(self, player: Any, options: Sequence[Any], var: str, L: dict[str, Any], prompt: Any,
            label: Callable[[Any, dict], Any] | None, loc: Loc | None, secret: bool = False) -> None:
        player = self._check_player(player, loc)
        if not options:
            raise RuleFault(f"{self.label_of(player)} must choose '{var}' but there is nothing to choose from",
                            loc, "guard the choice with a condition, or offer a 'none' option")
        # a text or number (the commonest options) is its own copy: no call for it
        listed = [{"label": None, "value": v if v.__class__ in _ATOMS else _copy(v)} for v in options]
        self._state["pending"] = {"type": "choice", "player": player,
                                  "prompt": self.label_of(prompt) if prompt is not None else f"choose {var}",
                                  "var": var, "options": listed}
        if secret:
            self._state["pending"]["secret"] = True
        self._label_later(listed, self._label_by(var, L, label))

    def ask_action(self, player: Any, group: str, bind: str | None, loc: Loc | None, prompt: Any = None) -> None:
        player = self._check_player(player, loc)
        options = self._listed(player, group)
        if not options:
            raise RuleFault(f"no action of group '{group}' is legal for {self.label_of(player)}", loc,
                            "add an action that is always legal, such as passing")
        text = self.label_of(prompt) if prompt is not None else f"choose an action ({group})"
        self._state["pending"] = {"type": "action", "player": player, "prompt": text,
                                  "group": group, "bind": bind, "options": options}
        self._label_later(options, lambda o: self._label_of_action(o, player))

    def action_options(self, player: str, group: str) -> list[dict[str, Any]]:
        """Every legal (action, arguments) pair of ``group`` for ``player``, in a fixed order,
        each with its label (``{"label", "value"}``)."""
        out = self._listed(player, group)
        actions = self.rs.actions
        try:
            for o in out:
                if o["label"] is None:  # _label_of_action's work, inline: a call less per choice
                    value = o["value"]
                    o["label"] = actions[value["action"]].labeler(self, player, value["args"])  # type: ignore[misc]
        except _FAILURES as exc:
            raise fault_of(exc, self) from None
        return out

    def _listed(self, player: str, group: str) -> list[dict[str, Any]]:
        """The legal choices of ``group`` for ``player``, those whose action writes a label
        not yet labelled (label None)."""
        out: list[dict[str, Any]] = []
        rs = self.rs
        try:
            listers = rs.group_listers.get(group)
            if listers is None:
                listers = rs.group_listers[group] = tuple(self._lister(aid) for aid in rs.groups[group])
            for lister in listers:
                lister(self, player, out)
        except _FAILURES as exc:
            raise fault_of(exc, self) from None
        return out

    def _lister(self, aid: str) -> Callable[[Any, str, list], None]:
        lister = self.rs.actions[aid].enum
        assert lister is not None  # every action of a ruleset loaded without errors has one
        return lister

    def ask_secret(self, players: list[Any], pvar: str, options: Callable[[Any, dict], Any], var: str,
                   L: dict[str, Any], prompt: Callable[[Any, dict], Any] | None,
                   label: Callable[[Any, dict], Any] | None, loc: Loc | None) -> None:
        per: dict[str, Any] = {}
        for p in players:
            p = self._check_player(p, loc)
            L2 = dict(L)
            L2[pvar] = p
            values = list(options(self, L2))
            if not values:
                raise RuleFault(f"{self.label_of(p)} must secretly choose '{var}' but there is nothing to choose from", loc)
            text = self.label_of(prompt(self, L2)) if prompt is not None else f"secretly choose {var}"
            per[p] = {"prompt": text, "options": self._labelled(values, var, L2, label)}
        if not per:
            self._state["stack"][-1]["locals"][var] = {}
            return
        self._state["pending"] = {"type": "secret", "var": var, "players": per, "answers": {}}
