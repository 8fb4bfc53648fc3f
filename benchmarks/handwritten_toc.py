"""Hand-written Python references of three Time of Crisis paths, for `ludus bench`.

`ludus bench` times the interpreted rules against these references and prints the ratio
(interpreted time ÷ hand-written time). They are game code written directly in Python, so
they live here, in benchmarks/, never in the product (interpreter/ knows no game).

Like with like:
- each reference works on the very same state the interpreter uses (``game.state``:
  entities, zones, globals, the generator) and draws its dice from the same generator
  stream, so both sides end in the same state with the same log;
- each follows the rules text step by step — the same loops, conditions and order of
  evaluation (a list the rules build is built here too; a value the rules read per element
  is read per element here) — so the ratio measures interpretation, not a cleverer algorithm;
- tests/test_bench.py checks, on many positions and seeds, that both sides agree exactly.

The cases (see ``cases()``), each over several positions and dice streams:

- ``combat``: a whole battle (ToC 8: dice with bonus dice, hits, losses, the victor,
  legacy, retreat, advance), from ``call battle(att, target)`` to its end; a decision inside
  a battle is answered with the first option on both sides;
- ``governor``: Place Governor after the spend is chosen (ToC 6.3.2: the dice, the votes,
  the new governor and the support changes);
- ``choices``: the legal choices (labels and values) at the start of a player's Take Actions
  phase, all 26 actions of the ``turn_actions`` group.

The protocol `interpreter/bench.py` expects (it knows nothing else of this module):
``RULESET``, optional ``TARGETS`` and ``cases(rs)``, a list of objects with ``name``, ``title``,
``positions`` (int), ``prepare(i, side)`` (untimed: a fresh input for repetition ``i``,
side "interpreted" or "handwritten"), ``interpreted(ctx)`` and ``handwritten(ctx)`` (timed),
and ``same(a, b)`` (do the two results agree).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from interpreter import Game, rng
from interpreter.bots import RandomBot
from interpreter.model import Ruleset

RULESET = "time_of_crisis"
PLAYERS = 4
GROUP = "turn_actions"
# The targets of the issue that asked for `ludus bench` (reported, never enforced): load and
# check in under 0.3 s cold and 0.05 s warm, at least 10 complete 4-player games a second with
# random bots on one core, and interpreted ÷ hand-written at most 1.5 on each path.
TARGETS = {"load_cold": 0.3, "load_warm": 0.05, "games_per_s": 10.0, "ratio": 1.5}


class Unsupported(Exception):
    """A position the references do not cover (the benchmarks never go there)."""


# ============================================================ the game, by hand
# The tables of the ruleset, as a hand-written program has them.
UNIT_COMBAT = {  # unit: (dice, to-hit)  (ToC 8.1)
    "full_legion": (1, 3), "reduced_legion": (1, 5), "militia": (1, 5), "barbarian": (1, 4),
    "barbarian_leader": (2, 4), "foederati": (1, 4), "rival_emperor": (3, 4),
}
ROLL_ORDER = ["full_legion", "reduced_legion", "militia", "foederati", "barbarian", "barbarian_leader",
              "rival_emperor"]
ROMAN_UNITS = ("full_legion", "reduced_legion", "militia", "foederati")
SUIT_COLOUR = {"military": "Red", "senate": "Blue", "populace": "Yellow"}
SPHERE_NAME = {"military": "Military", "senate": "Senate", "populace": "Populace"}
LABELLED = {"card", "governor", "general", "event", "rival_emperor", "barbarian", "region"}
IMPROVEMENTS = ["amphitheater", "basilica", "limes"]


class Board:
    """The state of a game, read and changed directly; dice from the game's own generator."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.st = state
        self.ents: dict[str, dict[str, Any]] = state["entities"]
        self.zones: dict[str, list[str]] = state["zones"]
        self.glob: dict[str, Any] = state["globals"]
        self.log: list[dict[str, Any]] = []
        self._regions: list[str] | None = None

    # ---------------------------------------------------------------- basics
    def label(self, v: Any) -> str:
        if v is None:
            return "none"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, str):
            e = self.ents.get(v)
            if e is not None and e["kind"] in LABELLED and e["name"] not in (None, ""):
                return str(e["name"])
            return v
        if isinstance(v, list):
            return ", ".join(self.label(x) for x in v)
        return str(v)

    def text(self, text: str) -> None:
        self.log.append({"type": "text", "text": text})

    def move(self, eid: str, key: str) -> None:
        e = self.ents[eid]
        old = e["zone"]
        if old is not None:
            items = self.zones.get(old)
            if items is not None and eid in items:
                items.remove(eid)
        items = self.zones.get(key)
        if items is None:
            items = self.zones[key] = []
        items.append(eid)
        e["zone"] = key

    def roll(self, n: int, bonus: int | None = None) -> list[int]:
        st = self.st
        if st["forced_dice"]:
            raise Unsupported("forced dice")
        state = st["rng"]
        values: list[int] = []
        left = n
        while left > 0:
            state, r = rng.below(state, 6)
            v = r + 1
            values.append(v)
            left -= 1
            if bonus is not None and v == bonus:
                left += 1
        st["rng"] = state
        self.log.append({"type": "dice", "values": values})
        return values

    def choose_first(self, player: str | None, options: list[Any], label: Callable[[Any], str]) -> Any:
        """A decision, answered with its first option (the benchmark's policy on both sides)."""
        if player is None:
            raise Unsupported("a decision for nobody")
        labels = [label(o) for o in options]
        self.log.append({"type": "choice", "player": player, "index": 0, "label": labels[0]})
        return options[0]

    def regions(self) -> list[str]:
        if self._regions is None:
            self._regions = [eid for eid, e in self.ents.items() if e["kind"] == "region"]
        return list(self._regions)

    # ---------------------------------------------------------------- functions of the rules
    def ruler(self, r: str) -> str | None:
        gov = self.ents[r]["governor"]
        return None if gov is None else self.ents[gov]["owner"]

    def emperor(self) -> str | None:
        return self.ruler("italia")

    def provinces(self) -> list[str]:
        E = self.ents
        return [r for r in self.regions() if E[r]["type"] == "province"]

    def governed(self, p: str | None) -> list[str]:
        return [r for r in self.provinces() if self.ruler(r) == p]

    def armies_of(self, p: str) -> list[str]:
        E = self.ents
        return [g for g in self.zones["armies"] if E[g]["owner"] == p]

    def legions_in(self, g: str) -> int:
        E = self.ents
        return len([u for u in self.zones["units@" + g] if E[u]["kind"] == "legion"])

    def generals_available(self, p: str) -> list[str]:
        E = self.ents
        return [g for g in self.zones["leaders@" + p] if E[g]["kind"] == "general"]

    def governors_available(self, p: str) -> list[str]:
        E = self.ents
        return [g for g in self.zones["leaders@" + p] if E[g]["kind"] == "governor"]

    def unused_event(self, p: str, ev: str) -> str | None:
        E = self.ents
        for c in self.zones["played@" + p]:
            if E[c]["event"] == ev and not E[c]["event_used"]:
                return c
        return None

    def army_in_capital(self, r: str) -> str | None:
        E = self.ents
        for g in self.zones["armies"]:
            if E[g]["location"] == r and E[g]["in_capital"]:
                return g
        return None

    def capital_free_for(self, r: str, p: str | None) -> bool:
        return (self.ents[r]["type"] == "province" and self.army_in_capital(r) is None
                and (len(self.zones["garrison@" + r]) == 0 or self.ruler(r) == p))

    def rival_emperor_in(self, r: str) -> bool:
        E = self.ents
        return any(E[x]["location"] == r for x in self.zones["rivals"])

    def active_barbarians_in(self, r: str) -> int:
        E = self.ents
        return len([b for b in self.zones["barbarians@" + r] if E[b]["active"]])

    def enemy_army_in_capital(self, r: str, p: str) -> bool:
        E = self.ents
        return any(E[g]["location"] == r and E[g]["in_capital"] and E[g]["owner"] != p for g in self.zones["armies"])

    def enemy_units_in(self, r: str, p: str) -> bool:
        E = self.ents
        return (len(self.zones["barbarians@" + r]) > 0 or self.rival_emperor_in(r)
                or any(E[g]["location"] == r and E[g]["owner"] != p for g in self.zones["armies"]))

    def units_in_capital(self, r: str, p: str | None) -> int:
        E = self.ents
        n = len(self.zones["garrison@" + r]) if E[r]["governor"] is not None and self.ruler(r) == p else 0
        return n + sum(len(self.zones["units@" + g]) for g in self.zones["armies"]
                       if E[g]["location"] == r and E[g]["in_capital"] and E[g]["owner"] == p)

    def votes_needed(self, r: str, p: str) -> int:
        return max(1, 2 * self.ents[r]["support"] + self.units_in_capital(r, self.ruler(r)) - self.units_in_capital(r, p))

    def move_cost(self, dest: str) -> int:
        return 2 if self.ents[dest]["type"] == "sea" else 1

    def is_pretender(self, p: str) -> bool:
        E = self.ents
        return any(E[r]["seat_of_power"] for r in self.governed(p))

    def empire_neighbours(self, r: str) -> list[str]:
        return self.ents[r]["adjacent"] + self.ents[r]["empire_adjacent"]

    def pretender_eligible(self, p: str) -> list[str]:
        E = self.ents
        return [r for r in self.governed(p) if r != "italia" and E[r]["support"] >= 3
                and any(q != r and q != "italia" and E[q]["support"] >= 3 and q in self.empire_neighbours(r)
                        for q in self.governed(p))]

    def homeland_of(self, tribe: str) -> str | None:
        E = self.ents
        for r in self.regions():
            if E[r]["tribe"] == tribe:
                return r
        return None

    def foederati_sources(self, g: str) -> list[str]:
        E = self.ents
        loc = E[g]["location"]
        return [r for r in [loc] + E[loc]["adjacent"]
                if any(not E[b]["leader"] for b in self.zones["barbarians@" + r])]

    def army_region(self, a: str) -> str:
        e = self.ents[a]
        return e["location"] if e["kind"] == "general" else e["zone"].partition("@")[2]

    def mob_dispersers(self, p: str) -> list[str]:
        E = self.ents
        out = [g for g in self.armies_of(p) if E[E[g]["location"]]["type"] == "province"
               and self.ruler(E[g]["location"]) == p and E[E[g]["location"]]["mobs"] > 0]
        return out + [self.zones["garrison@" + r][0] for r in self.governed(p)
                      if E[r]["mobs"] > 0 and len(self.zones["garrison@" + r]) > 0
                      and not any(E[g]["location"] == r and E[g]["in_capital"] for g in self.armies_of(p))]

    def disperser_label(self, a: str) -> str:
        if self.ents[a]["kind"] == "militia":
            return "the Militia (1 unit)"
        n = len(self.side_units(a, self.army_region(a)))
        return "the army (1 unit)" if n == 1 else f"the army ({n} units)"

    # ---------------------------------------------------------------- combat (ToC 8)
    def unit_type(self, u: str) -> str:
        E = self.ents
        e = E[u]
        kind = e["kind"]
        if kind == "legion":
            return "full_legion" if e["full"] else "reduced_legion"
        if kind == "barbarian" and e["leader"]:
            return "barbarian_leader"
        if kind == "barbarian" and e["zone"] is not None:
            owner = e["zone"].partition("@")[2]
            if owner and E[owner]["kind"] == "general":
                return "foederati"
        return kind

    def to_hit(self, unit: str) -> int:
        value = UNIT_COMBAT[unit][1]
        for rec in self.st["modifiers"]:  # only the auguries change it, for Roman units (ToC 14.2)
            if rec["point"] == "to_hit" and unit in ROMAN_UNITS:
                value = value + rec["value"] if rec["mode"] == "add" else rec["value"]
        return value

    def army_units(self, g: str) -> list[str]:
        E = self.ents
        e = E[g]
        units = list(self.zones["units@" + g])
        if e["in_capital"] and self.ruler(e["location"]) == e["owner"]:
            return units + list(self.zones["garrison@" + e["location"]])
        return units

    def side_units(self, target: str, r: str) -> list[str]:
        E = self.ents
        kind = E[target]["kind"]
        if kind == "general":
            return self.army_units(target)
        if kind == "militia":
            return list(self.zones["garrison@" + r])
        if kind == "barbarian":
            tribe = E[target]["tribe"]
            return [b for b in self.zones["barbarians@" + r]
                    if E[b]["tribe"] == tribe and (E[b]["active"] or E[r]["type"] != "homeland")]
        return [x for x in self.zones["rivals"] if E[x]["location"] == r]

    def side_owner(self, target: str, r: str) -> str | None:
        kind = self.ents[target]["kind"]
        if kind == "general":
            return self.ents[target]["owner"]
        if kind == "militia":
            return self.ruler(r)
        return None

    def battle_targets(self, g: str) -> list[str]:
        E = self.ents
        e = E[g]
        loc = e["location"]
        armies = self.zones["armies"]
        out = [o for o in armies if E[o]["location"] == loc and E[o]["owner"] != e["owner"]]
        garrison = self.zones["garrison@" + loc]
        if (len(garrison) > 0 and self.ruler(loc) != e["owner"]
                and not any(E[o]["location"] == loc and E[o]["in_capital"] and E[o]["owner"] == self.ruler(loc)
                            for o in armies)):
            out.append(garrison[0])
        barbs = self.zones["barbarians@" + loc]
        homeland = E[loc]["type"] == "homeland"
        for b in barbs:
            tribe = E[b]["tribe"]
            first = next((c for c in barbs if E[c]["tribe"] == tribe and (E[c]["active"] or not homeland)), None)
            if b == first:
                out.append(b)
        out += [x for x in self.zones["rivals"] if E[x]["location"] == loc]
        return out

    def target_label(self, t: str, r: str) -> str:
        e = self.ents[t]
        if e["kind"] == "general":
            return f"{self.label(e['owner'])}'s army"
        if e["kind"] == "militia":
            return "the Militia"
        if e["kind"] == "barbarian":
            return f"the {self.label(e['tribe'])}"
        return self.label(t)

    def roll_side(self, units: list[str], who: str) -> int:
        hits = 0
        for kind in ROLL_ORDER:
            n = len([u for u in units if self.unit_type(u) == kind]) * UNIT_COMBAT[kind][0]
            if n > 0:
                rolled = self.roll(n, bonus=6)
                scored = len([d for d in rolled if d >= self.to_hit(kind)])
                hits += scored
                self.text(f"{self.label(who)}: {kind} roll {self.label(rolled)}, {scored} hit(s)")
        return hits

    def eliminate(self, u: str, r: str) -> None:
        e = self.ents[u]
        if e["kind"] == "legion":
            e["full"] = True
            self.move(u, "legions")
        elif e["kind"] == "militia":
            self.move(u, "militia_supply")
        elif e["kind"] == "barbarian" and e["leader"]:
            self.move(u, "box")
        elif e["kind"] == "barbarian":
            e["active"] = False
            self.move(u, "barbarians@" + str(self.homeland_of(e["tribe"])))
        else:
            self.move(u, "box")

    def suffer(self, target: str, r: str, hits: int, owner: str | None, hitter: str | None) -> int:
        E = self.ents
        removed = 0
        army = E[target]["kind"] in ("general", "militia")
        for _hit in range(1, hits + 1):
            alive = self.side_units(target, r)
            if not alive:
                break
            militia_left = [u for u in alive if E[u]["kind"] == "militia"]
            barbs = [u for u in alive if E[u]["kind"] == "barbarian"]
            if army:
                if militia_left:
                    self.eliminate(militia_left[0], r)
                elif barbs:
                    self.eliminate(barbs[0], r)
                else:
                    options = list(dict.fromkeys(self.unit_type(u) for u in alive))
                    pick = options[0]
                    if len(options) > 1:
                        pick = self.choose_first(owner, options, lambda o: "Flip a full-strength legion"
                                                 if o == "full_legion" else "Remove a reduced-strength legion")
                    u = next(u for u in alive if self.unit_type(u) == pick)
                    if pick == "full_legion":
                        E[u]["full"] = False
                    else:
                        self.eliminate(u, r)
            else:
                options = list(dict.fromkeys(self.unit_type(u) for u in alive))
                pick = options[0]
                if len(options) > 1:
                    pick = self.choose_first(hitter, options, lambda o: f"Remove a {self.label(o)}")
                u = next(u for u in alive if self.unit_type(u) == pick)
                if E[u]["kind"] == "barbarian":
                    removed += 1
                if E[u]["kind"] == "barbarian" and E[u]["leader"]:
                    self.glob["leader_removed"] = True
                self.eliminate(u, r)
        return removed

    def use_event(self, p: str, ev: str) -> None:
        c = self.unused_event(p, ev)
        assert c is not None
        self.ents[c]["event_used"] = True
        self.text(f"{self.label(p)} uses the event of {self.label(c)}")

    def defeated_army_retreats(self, g: str, defending: bool) -> bool:
        return defending and self.ents[g]["in_capital"]  # ToC 8.3: only a defender in its capital

    def retreat(self, g: str, r: str) -> None:
        e = self.ents[g]
        e["in_capital"] = False
        e["castra"] = False
        self.text(f"{self.label(e['owner'])}'s army retreats out of the capital of {self.label(r)}")

    def disband_if_empty(self, g: str) -> None:
        e = self.ents[g]
        if len(self.zones["units@" + g]) == 0 and e["zone"] == "armies":
            self.move(g, "leaders@" + e["owner"])
            e["location"] = None
            e["in_capital"] = False
            e["fought"] = False
            self.text(f"{self.label(e['owner'])}'s general returns to the Available Leaders box")

    def advance(self, g: str) -> None:
        e = self.ents[g]
        if not e["in_capital"] and self.capital_free_for(e["location"], e["owner"]):
            go = self.choose_first(e["owner"], [True, False],
                                   lambda o: "Advance into the capital" if o else "Stay outside")
            if go:
                e["in_capital"] = True

    def figure_reward(self, p: str, r: str, sphere: str) -> None:
        E = self.ents
        options = ["discount"]
        if self.ruler(r) == p and r != "italia" and E[r]["support"] < E[r]["max_support"]:
            options = ["support"] + options
        reward = self.choose_first(p, options, lambda o: f"Increase support in {self.label(r)} for free"
                                   if o == "support" else f"2 off the first {SPHERE_NAME[sphere]} card you buy this turn")
        if reward != "support":
            raise Unsupported("a card discount (a modifier record)")
        E[r]["support"] += 1

    def battle(self, att: str, target: str) -> None:
        E = self.ents
        A, T = E[att], E[target]
        p = A["owner"]
        r = A["location"]
        defender = self.side_owner(target, r)
        was_in_capital = T["in_capital"] if T["kind"] == "general" else False
        A["castra"] = False
        self.glob["leader_removed"] = False
        self.text(f"{self.label(p)} attacks {self.target_label(target, r)} in {self.label(r)}")
        flanking = False
        if self.unused_event(p, "flanking_maneuver") is not None:
            flanking = self.choose_first(p, [True, False], lambda o: "Use Flanking Maneuver (a re-roll if needed)"
                                         if o else "Keep the card's event")
            if flanking:
                self.use_event(p, "flanking_maneuver")
        rolled_hits = self.roll_side(self.army_units(att), self.label(p))
        rolled_def_hits = self.roll_side(self.side_units(target, r), self.target_label(target, r))
        att_hits = max(0, rolled_hits - (1 if T["kind"] == "general" and T["castra"] else 0))
        def_hits = max(0, rolled_def_hits - (1 if A["castra"] else 0))
        if att_hits != rolled_hits:
            self.text(f"The Castra reduces {self.label(p)}'s hits to {att_hits}")
        if flanking:
            reroll = self.choose_first(p, [False, True], lambda o: "Re-roll (the new result stands)"
                                       if o else "Keep the result")
            if reroll:
                rerolled = self.roll_side(self.army_units(att), self.label(p))
                att_hits = max(0, rerolled - (1 if T["kind"] == "general" and T["castra"] else 0))
        barbarians_removed = self.suffer(target, r, att_hits, defender, p)
        self.suffer(att, r, def_hits, p, defender)
        att_left = len(self.army_units(att))
        def_left = len(self.side_units(target, r))
        winner = "none"
        if att_left > 0 and def_left == 0:
            winner = "attacker"
        elif def_left > 0 and att_left == 0:
            winner = "defender"
        elif att_left > 0 and def_left > 0:
            winner = "attacker" if att_hits > def_hits else "defender"
        A["fought"] = True
        if T["kind"] == "general":
            T["fought"] = True
        if winner == "attacker":
            E[p]["legacy"] += 2 + barbarians_removed
            self.text(f"{self.label(p)} wins the battle in {self.label(r)} ({att_hits} hits to {def_hits}) "
                      f"and gains {2 + barbarians_removed} legacy")
            if T["kind"] == "general" and def_left > 0 and self.defeated_army_retreats(target, True):
                self.retreat(target, r)
            if T["kind"] == "barbarian":
                for b in self.side_units(target, r):
                    E[b]["active"] = True
                    self.move(b, "barbarians@" + str(self.homeland_of(E[b]["tribe"])))
            if T["kind"] == "rival_emperor" and def_left == 0:
                self.figure_reward(p, r, "senate")
            if self.glob["leader_removed"]:
                self.figure_reward(p, r, "military")
        elif winner == "defender":
            if defender is not None:
                E[defender]["legacy"] += 2
            self.text(f"{self.target_label(target, r)} holds {self.label(r)} ({def_hits} hits to {att_hits})")
            if att_left > 0 and self.defeated_army_retreats(att, False):
                self.retreat(att, r)
        else:
            self.text(f"Both armies in {self.label(r)} are destroyed")
        self.disband_if_empty(att)
        if T["kind"] == "general":
            self.disband_if_empty(target)
        if winner == "attacker" and att_left > 0:
            self.advance(att)
        elif winner == "defender" and T["kind"] == "general" and def_left > 0 and not was_in_capital:
            self.advance(target)

    # ---------------------------------------------------------------- Place Governor (ToC 6.3.2)
    def vacate(self, r: str) -> None:
        E = self.ents
        gov = E[r]["governor"]
        if gov is not None:
            owner = E[gov]["owner"]
            self.move(gov, "neutrals" if owner is None else "leaders@" + owner)
            E[r]["governor"] = None
        E[r]["mobs"] = 0
        for m in list(self.zones["garrison@" + r]):
            self.move(m, "militia_supply")
        E[r]["quaestor"] = False

    def install_governor(self, gov: str, r: str) -> None:
        self.vacate(r)
        self.move(gov, "offices")
        self.ents[r]["governor"] = gov

    def governor_placed(self, p: str, r: str) -> None:
        E = self.ents
        was = self.ruler(r)
        old_emperor = self.emperor()
        neutral_emperor = old_emperor is None and E["italia"]["governor"] is not None
        had_governor = E[r]["governor"] is not None
        self.install_governor(self.governors_available(p)[0], r)
        italia = E["italia"]
        if r == "italia":
            if old_emperor is not None and old_emperor != p:
                self.glob["deposed"] = old_emperor
            italia["support"] = min(italia["max_support"], len(self.governed(p)))
            self.text(f"{self.label(p)} is the new Emperor; Italia's support is {italia['support']}")
        else:
            E[r]["support"] = max(1, E[r]["support"] - 1)
            if p == old_emperor:
                italia["support"] = min(italia["max_support"], italia["support"] + 1)
            elif (old_emperor is not None and was == old_emperor) or (neutral_emperor and was is None and had_governor):
                italia["support"] = max(0, italia["support"] - 1)
            self.text(f"{self.label(p)} now governs {self.label(r)} (support {E[r]['support']})")

    def attempt_governor(self, p: str, target: str, count_dice: int, needed: int, threshold: int) -> None:
        E = self.ents
        E[p]["targeted"] = E[p]["targeted"] + [target]
        rolled = self.roll(count_dice, bonus=6)
        votes = len([d for d in rolled
                     if d >= threshold or (d == 1 and self.ruler(target) is None and threshold == 2)])
        self.text(f"{self.label(p)} rolls {self.label(rolled)}: {votes} of {needed} votes in {self.label(target)}")
        if votes >= needed:
            self.governor_placed(p, target)

    def place_governor(self, actor: str, target: str, spent: int) -> None:
        """The Place Governor action once the spend is chosen."""
        E = self.ents
        self.log.append({"type": "choice", "player": actor, "index": spent - 1, "label": f"{spent} dice"})
        E[actor]["senate"] -= spent
        dice = spent + (len([q for q in self.governed(actor) if "basilica" in E[q]["improvements"]])
                        if target == "italia" else 0)
        threshold = 3 if E[target]["quaestor"] else 2
        self.attempt_governor(actor, target, dice, self.votes_needed(target, actor), threshold)

    # ---------------------------------------------------------------- the legal actions (ToC 6.3, 14.1)
    def turn_actions(self, actor: str) -> list[dict[str, Any]]:
        """Every legal action of the Take Actions phase, in the order of the rules."""
        E, Z, label = self.ents, self.zones, self.label
        a = E[actor]
        out: list[dict[str, Any]] = []

        def add(text: str, action: str, args: dict[str, Any]) -> None:
            out.append({"label": text, "value": {"action": action, "args": args}})

        for card in list(Z["hand@" + actor]):  # play_card
            c = E[card]
            add(f"Play {label(card)} (+{c['value']} {SUIT_COLOUR[c['suit']]})", "play_card", {"card": card})
        add("End the Take Actions phase", "end_actions", {})
        for g in [g for g in Z["unclaimed@" + actor] if E[g]["kind"] == "general" and E[g]["cost"] <= a["military"]]:
            add(f"Recruit a general for {E[g]['cost']} Military", "recruit_general", {"gen": g})
        for r in self.governed(actor):  # create_army
            if a["military"] >= 1 and len(self.generals_available(actor)) > 0 and len(Z["legions"]) > 0:
                add(f"Create an army in {label(r)} for 1 Military", "create_army", {"r": r})
        for g in [g for g in self.armies_of(actor) if self.ruler(E[g]["location"]) == actor]:  # add_legion
            if len(Z["legions"]) > 0 and a["military"] >= self.legions_in(g) + 1:
                add(f"Add a legion to the army in {label(E[g]['location'])} for {self.legions_in(g) + 1} Military",
                    "add_legion", {"gen": g})
        for g in [g for g in self.armies_of(actor)  # train_legions
                  if any(E[u]["kind"] == "legion" and not E[u]["full"] for u in Z["units@" + g])]:
            if a["military"] >= 1:
                add(f"Train a legion of the army in {label(E[g]['location'])} for 1 Military", "train_legions",
                    {"gen": g})
        for g in [g for g in self.armies_of(actor) if not E[g]["fought"]]:  # move_army
            for dest in list(E[E[g]["location"]]["adjacent"]):
                if a["military"] >= self.move_cost(dest):
                    add(f"Move the army in {label(E[g]['location'])} to {label(dest)} for 1 Military", "move_army",
                        {"gen": g, "dest": dest})
        for g in [g for g in self.armies_of(actor)  # enter_capital
                  if not E[g]["in_capital"] and self.capital_free_for(E[g]["location"], actor)]:
            add(f"Move the army in {label(E[g]['location'])} into its capital (free)", "enter_capital", {"gen": g})
        for g in [g for g in self.armies_of(actor) if E[g]["in_capital"]]:  # leave_capital
            add(f"Move the army in {label(E[g]['location'])} out of its capital (free)", "leave_capital", {"gen": g})
        for g in self.mob_dispersers(actor):  # disperse_mob
            if a["military"] >= 1:
                r = self.army_region(g)
                add(f"Disperse the mob in {label(r)} with {self.disperser_label(g)} for 1 Military", "disperse_mob",
                    {"army": g})
        for g in [g for g in Z["unclaimed@" + actor] if E[g]["kind"] == "governor" and E[g]["cost"] <= a["senate"]]:
            add(f"Recruit a governor for {E[g]['cost']} Senate", "recruit_governor", {"gov": g})
        for r in [r for r in self.provinces() if self.ruler(r) != actor and not E[r]["no_place"]  # place_governor
                  and r not in a["targeted"] and r not in a["recalled"] and not E[r]["seat_of_power"]
                  and not E[r]["breakaway"]]:
            if a["senate"] >= 1 and len(self.governors_available(actor)) > 0:
                add(f"Place Governor in {label(r)} ({self.votes_needed(r, actor)} votes needed)", "place_governor",
                    {"target": r})
        for r in self.governed(actor):  # recall_governor
            if a["senate"] >= 2:
                add(f"Recall your governor from {label(r)}", "recall_governor", {"r": r})
        for r in [r for r in self.governed(actor)  # increase_support
                  if r != "italia" and E[r]["support"] < E[r]["max_support"]]:
            if a["populace"] >= E[r]["support"] + 1:
                add(f"Increase support in {label(r)} to {E[r]['support'] + 1} for {E[r]['support'] + 1} Populace",
                    "increase_support", {"r": r})
        for r in [r for r in self.governed(actor)  # place_militia
                  if len(Z["garrison@" + r]) == 0 and not self.enemy_units_in(r, actor)]:
            if a["populace"] >= 2 and len(Z["militia_supply"]) > 0:
                add(f"Place a Militia in {label(r)} for 2 Populace", "place_militia", {"r": r})
        for r in [r for r in self.governed(actor) if E[r]["mobs"] > 0]:  # hold_games
            if a["populace"] >= 2:
                add(f"Hold games in {label(r)} for 2 Populace", "hold_games", {"r": r})
        for r in [r for r in self.governed(actor)  # build_improvement
                  if E[r]["mobs"] == 0 and self.active_barbarians_in(r) == 0 and not self.rival_emperor_in(r)
                  and not self.enemy_army_in_capital(r, actor)]:
            for what in list(IMPROVEMENTS):
                if (a["populace"] >= 3 and what not in E[r]["improvements"]
                        and len([q for q in self.provinces() if what in E[q]["improvements"]])
                        < self.glob["improvement_stock"]):
                    add(f"Build a {label(what)} in {label(r)} for 3 Populace", "build_improvement",
                        {"r": r, "what": what})
        for g in [g for g in self.armies_of(actor)  # initiate_battle
                  if not E[g]["fought"] and E[E[g]["location"]]["type"] != "sea" and len(self.battle_targets(g)) > 0]:
            for target in self.battle_targets(g):
                if a["military"] >= 1:
                    loc = E[g]["location"]
                    add(f"Attack {self.target_label(target, loc)} in {label(loc)} for 1 Military", "initiate_battle",
                        {"gen": g, "target": target})
        for g in [g for g in self.armies_of(actor) if not E[g]["castra"]]:  # castra
            if self.unused_event(actor, "castra") is not None:
                add(f"Castra: fortify the army in {label(E[g]['location'])}", "castra", {"gen": g})
        if (self.unused_event(actor, "praetorian_guard") is not None and self.ruler("italia") != actor
                and a["military"] >= 1 and "italia" not in a["targeted"] and len(self.governors_available(actor)) > 0):
            add(f"Praetorian Guard: seize Italia ({max(1, 2 * E['italia']['support'])} votes needed)",
                "praetorian_guard", {})
        for r in [r for r in self.provinces() if any(E[b]["active"] for b in Z["barbarians@" + r])]:  # tribute
            for tribe in list(dict.fromkeys(E[b]["tribe"] for b in Z["barbarians@" + r] if E[b]["active"])):
                if self.unused_event(actor, "tribute") is not None:
                    add(f"Tribute: pay off the {label(tribe)} in {label(r)}", "tribute", {"r": r, "tribe": tribe})
        for g in self.armies_of(actor):  # foederati
            for src in self.foederati_sources(g):
                for tribe in list(dict.fromkeys(E[b]["tribe"] for b in Z["barbarians@" + src] if not E[b]["leader"])):
                    if self.unused_event(actor, "foederati") is not None:
                        add(f"Foederati: recruit a {label(tribe)} counter from {label(src)} into the army in "
                            f"{label(E[g]['location'])}", "foederati", {"gen": g, "src": src, "tribe": tribe})
        deposed = self.glob["deposed"]
        if (self.unused_event(actor, "damnatio_memoriae") is not None and self.emperor() == actor
                and deposed is not None and deposed != actor):
            add(f"Damnatio Memoriae: condemn {label(deposed)}", "damnatio_memoriae", {})
        for r in [r for r in self.governed(actor) if not E[r]["quaestor"]]:  # quaestor
            if self.unused_event(actor, "quaestor") is not None:
                add(f"Quaestor: guard {label(r)}", "quaestor", {"r": r})
        for r in [r for r in self.provinces() if E[r]["mobs"] == 0]:  # mob_event
            if self.unused_event(actor, "mob") is not None:
                add(f"Mob: stir up a mob in {label(r)}", "mob_event", {"r": r})
        for capital in self.pretender_eligible(actor):  # pretender
            if (self.unused_event(actor, "pretender") is not None and self.emperor() != actor
                    and not self.is_pretender(actor)):
                add(f"Pretender: proclaim an empire with its capital in {label(capital)}", "pretender",
                    {"capital": capital})
        return out


# ============================================================ running the rules on a position
def copy_state(state: dict[str, Any]) -> dict[str, Any]:
    return pickle.loads(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))


def isolated(rs: Ruleset, state: dict[str, Any], proc: str, args: dict[str, Any]) -> Game:
    """A game on a copy of ``state`` whose only frame is a call of ``proc``; runs to a pause or the end.

    When the procedure returns the game just stops (it does not score the game), so the
    time measured is the procedure's.
    """
    st = copy_state(state)
    st["stack"], st["pending"], st["result"] = [], None, None
    game = Game(rs, st)
    game.atomic = False

    def stop(reason: str) -> None:
        game.state["result"] = {"reason": reason}
        game.state["pending"] = None

    game.finish = stop  # type: ignore[method-assign]
    game.push(proc, dict(args), None, None)
    game._run()
    return game


def run_to_end(game: Game) -> Game:
    """Answer every decision with its first option until the procedure ends."""
    while game.pending is not None:
        game.apply(0)
    return game


def outcome(state: dict[str, Any], log: list[dict[str, Any]]) -> dict[str, Any]:
    """What a run changed: the parts of the state both sides share, and the log."""
    keep = ("entities", "zones", "globals", "modifiers", "rng", "forced_dice", "next_id", "next_modifier")
    return {"state": {k: state[k] for k in keep}, "log": log}


def action_pauses(rs: Ruleset, seed: int, limit: int = 2000, players: int = PLAYERS) -> Iterator[Game]:
    """A random-bot game (the bots of `ludus bench`), paused at each choice of a turn action."""
    game = Game.new(rs, players, seed)
    game.atomic = False
    bots = {p: RandomBot(seed, p) for p in game.players}
    for _ in range(limit):
        if game.over:
            return
        pending = game.pending or {}
        if pending.get("type") == "action" and pending.get("group") == GROUP:
            yield game
        p = game.deciders()[0]
        game.apply(bots[p].choose(game, p), p)


def phase_starts(rs: Ruleset, seeds: range | list[int], every: int = 1, limit: int = 2000,
                 count: int | None = None) -> list[dict[str, Any]]:
    """States at the start of a player's Take Actions phase (nothing played yet): every
    ``every``-th one of each seed's game, at most ``count`` in all."""
    out: list[dict[str, Any]] = []
    for seed in seeds:
        n = 0
        for game in action_pauses(rs, seed, limit):
            p = game.pending["player"] if game.pending else None
            if p and not game.zones["played@" + p] and not any(game.ents[p][k] for k in ("military", "senate",
                                                                                           "populace")):
                if n % every == 0:
                    out.append(copy_state(game.state))
                    if count is not None and len(out) >= count:
                        return out
                n += 1
    return out


def place(state: dict[str, Any], eid: str, key: str) -> None:
    """Put an entity in a zone (for building positions)."""
    e = state["entities"][eid]
    if e["zone"] is not None and eid in state["zones"].get(e["zone"], []):
        state["zones"][e["zone"]].remove(eid)
    state["zones"].setdefault(key, []).append(eid)
    e["zone"] = key


# ============================================================ the positions benchmarked
def battle_setups(rs: Ruleset) -> list[tuple[dict[str, Any], str, str]]:
    """Three fixed battles (state, attacking general, target), on the board of a game just begun.

    1. the ToC 8.3 example: three legions attack an army of a full and a reduced legion with a
       Militia in its capital, behind a Castra; the attacker holds an unused Flanking Maneuver;
    2. four legions (one reduced) against four Goths raiding a province;
    3. two legions against a province's lone Militia.
    """
    base = phase_starts(rs, [1], count=1)[0]
    red, green = "red", "green"
    out = []
    legions = iter(list(base["zones"]["legions"]))
    militia = iter(list(base["zones"]["militia_supply"]))

    def army(st: dict[str, Any], owner: str, region: str, n_full: int, n_reduced: int,
             in_capital: bool = False, castra: bool = False) -> str:
        Es, Zs = st["entities"], st["zones"]
        gen = next(g for g in list(Zs["unclaimed@" + owner]) + list(Zs["leaders@" + owner])
                   if Es[g]["kind"] == "general" and Es[g]["zone"] != "armies")
        place(st, gen, "armies")
        Es[gen].update(location=region, in_capital=in_capital, castra=castra, fought=False)
        for i in range(n_full + n_reduced):
            leg = next(legions)
            place(st, leg, "units@" + gen)
            Es[leg]["full"] = i < n_full
        return gen

    def governor(st: dict[str, Any], owner: str, region: str, support: int) -> None:
        Es, Zs = st["entities"], st["zones"]
        old = Es[region]["governor"]
        if old is not None:
            place(st, old, "neutrals" if Es[old]["owner"] is None else "leaders@" + Es[old]["owner"])
        gov = next(g for g in list(Zs["unclaimed@" + owner]) + list(Zs["leaders@" + owner])
                   if Es[g]["kind"] == "governor")
        place(st, gov, "offices")
        Es[region].update(governor=gov, support=support)

    # 1. ToC 8.3
    st = copy_state(base)
    governor(st, green, "gallia", 2)
    defender = army(st, green, "gallia", 1, 1, in_capital=True, castra=True)
    place(st, next(militia), "garrison@gallia")
    attacker = army(st, red, "gallia", 3, 0)
    card = next(c for c in st["zones"]["supply"] if st["entities"][c]["event"] == "flanking_maneuver")
    place(st, card, "played@" + red)
    st["entities"][card]["event_used"] = False
    out.append((st, attacker, defender))
    # 2. Goths raiding Thracia
    st = copy_state(base)
    goths = [b for b in st["zones"]["barbarians@goths_home"] if not st["entities"][b]["leader"]][:4]
    for b in goths:
        place(st, b, "barbarians@thracia")
        st["entities"][b]["active"] = True
    attacker = army(st, red, "thracia", 3, 1)
    out.append((st, attacker, goths[0]))
    # 3. a lone Militia
    st = copy_state(base)
    governor(st, green, "macedonia", 3)
    m = next(militia)
    place(st, m, "garrison@macedonia")
    attacker = army(st, red, "macedonia", 2, 0)
    out.append((st, attacker, m))
    return out


def governor_setups(rs: Ruleset) -> list[tuple[dict[str, Any], str, str, int]]:
    """Place Governor attempts (state, player, target, Senate spent) in a game under way:
    Italia with a Basilica's extra die, a Neutral province, a rival's province with a Quaestor."""
    st = phase_starts(rs, [2], every=4, count=4)[-1]
    E = st["entities"]
    p = st["pending"]["player"]
    gov = next((g for g in st["zones"]["unclaimed@" + p] if E[g]["kind"] == "governor"), None)
    if gov is not None:
        place(st, gov, "leaders@" + p)
    E[p]["senate"] = 6
    mine = [r for r in E if E[r]["kind"] == "region" and E[r]["type"] == "province" and E[r]["governor"]
            and E[E[r]["governor"]]["owner"] == p]
    if mine:
        E[mine[0]]["improvements"] = E[mine[0]]["improvements"] + ["basilica"]
    provinces = [r for r in E if E[r]["kind"] == "region" and E[r]["type"] == "province"]
    others = [r for r in provinces if r != "italia" and r not in mine]
    neutral = next((r for r in others if E[r]["governor"] is None or E[E[r]["governor"]]["owner"] is None), others[0])
    rival = next((r for r in others if E[r]["governor"] and E[E[r]["governor"]]["owner"] not in (None, p)), others[-1])
    E[rival]["quaestor"] = True
    E[p]["targeted"], E[p]["recalled"] = [], []
    return [(st, p, "italia", 4), (st, p, neutral, 3), (st, p, rival, 5)]


SEEDS = 8  # dice streams per position


def _reseed(state: dict[str, Any], i: int) -> None:
    state["rng"] = rng.seed_state(1000 + i % SEEDS)


@dataclass
class CombatCase:
    rs: Ruleset
    setups: list[tuple[dict[str, Any], str, str]]
    name: str = "combat"
    title: str = "combat resolution (ToC 8)"

    @property
    def positions(self) -> int:
        return len(self.setups) * SEEDS

    def prepare(self, i: int, side: str) -> Any:
        state, att, target = self.setups[i % len(self.setups)]
        st = copy_state(state)
        _reseed(st, i // len(self.setups))
        if side == "interpreted":
            st["stack"], st["pending"], st["result"] = [], None, None
            game = Game(self.rs, st)
            game.atomic = False
            game.finish = lambda reason: game.state.update(result={"reason": reason}, pending=None)  # type: ignore[method-assign]
            return game, att, target
        return Board(st), att, target

    def interpreted(self, ctx: Any) -> Any:
        game, att, target = ctx
        game.push("battle", {"att": att, "target": target}, None, None)
        game._run()
        run_to_end(game)
        return outcome(game.state, game.log)

    def handwritten(self, ctx: Any) -> Any:
        board, att, target = ctx
        board.battle(att, target)
        return outcome(board.st, board.log)

    def same(self, a: Any, b: Any) -> bool:
        return bool(a == b)


@dataclass
class GovernorCase:
    rs: Ruleset
    setups: list[tuple[dict[str, Any], str, str, int]]
    name: str = "governor"
    title: str = "Place Governor dice (ToC 6.3.2)"

    @property
    def positions(self) -> int:
        return len(self.setups) * SEEDS

    def prepare(self, i: int, side: str) -> Any:
        state, p, target, spent = self.setups[i % len(self.setups)]
        st = copy_state(state)
        _reseed(st, i // len(self.setups))
        if side == "interpreted":
            game = isolated(self.rs, st, "action:place_governor", {"actor": p, "target": target})
            game.log.clear()
            return game, spent
        return Board(st), p, target, spent

    def interpreted(self, ctx: Any) -> Any:
        game, spent = ctx
        game.apply(spent - 1)
        return outcome(game.state, game.log)

    def handwritten(self, ctx: Any) -> Any:
        board, p, target, spent = ctx
        board.place_governor(p, target, spent)
        return outcome(board.st, board.log)

    def same(self, a: Any, b: Any) -> bool:
        return bool(a == b)


@dataclass
class ChoicesCase:
    rs: Ruleset
    states: list[dict[str, Any]]
    name: str = "choices"
    title: str = "legal choices at the start of Take Actions (ToC 6.3)"

    @property
    def positions(self) -> int:
        return len(self.states)

    def prepare(self, i: int, side: str) -> Any:
        st = self.states[i % len(self.states)]
        player = st["pending"]["player"]
        if side == "interpreted":
            return Game(self.rs, st), player
        return Board(st), player

    def interpreted(self, ctx: Any) -> Any:
        game, player = ctx
        return game.action_options(player, GROUP)

    def handwritten(self, ctx: Any) -> Any:
        board, player = ctx
        return board.turn_actions(player)

    def same(self, a: Any, b: Any) -> bool:
        return bool(a == b)


def cases(rs: Ruleset) -> list[Any]:
    """The benchmarked paths, each over several positions (built once, a second or two)."""
    starts = phase_starts(rs, [3], every=6, count=4) + phase_starts(rs, [4], every=6, count=4)
    return [CombatCase(rs, battle_setups(rs)), GovernorCase(rs, governor_setups(rs)), ChoicesCase(rs, starts)]
