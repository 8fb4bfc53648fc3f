"""Hand-written Python references of three Time of Crisis paths, for `ludus bench`.

`ludus bench` times the interpreted rules against these references and prints the ratio
(interpreted time ÷ hand-written time). They are game code written directly in Python, so
they live here, in benchmarks/, never in the product (interpreter/ knows no game).

What the references are: Time of Crisis as a skilled Python programmer would write it for
speed, over the engine's own state. The ratio says what running the rules costs against good
plain Python doing the same work, not against a deliberately literal transcription.

The contract:

- same input, same dice: each reference works on the very same state the interpreter uses
  (``game.state``: entities, zones, globals, modifiers, the generator) and draws its dice one
  at a time from the same stream with the engine's generator (``interpreter.rng.below``);
- same observable results: the same end state, the same log (dice, narration, and each
  decision with the label of the option taken) and the same legal choices, with the same
  labels and values in the same order. Every rule step that changes the state, rolls, writes
  to the log or asks a decision is done, in the rules' order; none that can change the outcome
  is skipped, and no rule is replaced by a different one;
- free where it cannot be observed: pure reads are written the fast way, not in the rules'
  order of evaluation. What the conditions read again and again is gathered once per call
  (who rules each region, the player's provinces, armies and unused events, which capitals
  are occupied); a condition that does not depend on an action's parameters is tested once,
  before its loop (so an event card not played costs one set lookup); the rules'
  ``count(for ...)`` scans become one pass; hot names are local aliases; nothing is pickled or
  deep-copied on the timed path;
- constants are constants: what the ruleset fixes and no rule changes (the tables, and the
  map: which entities are the regions and provinces, each tribe's homeland) is known once per
  ruleset, as a hand-written game has its map; everything play can change is read from the
  state on every call;
- the same moment of a game on both sides: the interpreted side gets its game as it stands at
  a decision in play (``in_play``), with what the engine keeps from one decision to the next
  already made (the index of entities by kind, the results of functions that read only
  constant fields), as the reference gets its constants; every other remembered result is
  forgotten (a game in play may still hold some whose inputs the last moves left alone, but
  which depends on those moves: the case counts none);
- tests/test_bench.py checks, on the benchmarked positions, on a few thousand positions of
  random games and on constructed battles random games rarely reach, that both sides agree
  exactly.

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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from interpreter import Game, rng
from interpreter.bots import RandomBot
from interpreter.model import PLAYER_KIND, Ruleset

RULESET = "time_of_crisis"
PLAYERS = 4
GROUP = "turn_actions"
# The speed targets, as the latest issue on speed set them (reported, never enforced): load and
# check in at most 0.2 s cold and 0.04 s warm, at least 25 complete 4-player games a second
# with random bots on one core, interpreted ÷ hand-written at most 1.2 on each path, and twice
# the greedy-bot decisions a second of the engine before that issue (d6845c4: 294/s, the best of
# three runs of `ludus bench`'s greedy figure on the 2-core machine the target was set on).
TARGETS = {"load_cold": 0.2, "load_warm": 0.04, "games_per_s": 25.0, "ratio": 1.2, "greedy_decisions_per_s": 588.0}


class Unsupported(Exception):
    """A position the references do not cover (the benchmarks never go there)."""


# ============================================================ the game, by hand
# The tables of the ruleset, as a hand-written program has them.
UNIT_COMBAT = {  # unit: (dice, to-hit)  (ToC 8.1)
    "full_legion": (1, 3), "reduced_legion": (1, 5), "militia": (1, 5), "barbarian": (1, 4),
    "barbarian_leader": (2, 4), "foederati": (1, 4), "rival_emperor": (3, 4),
}
ROLL_ORDER = ("full_legion", "reduced_legion", "militia", "foederati", "barbarian", "barbarian_leader",
              "rival_emperor")
ROMAN_UNITS = frozenset(("full_legion", "reduced_legion", "militia", "foederati"))
SUIT_COLOUR = {"military": "Red", "senate": "Blue", "populace": "Yellow"}
SPHERE_NAME = {"military": "Military", "senate": "Senate", "populace": "Populace"}
LABELLED = frozenset(("card", "governor", "general", "event", "rival_emperor", "barbarian", "region"))
IMPROVEMENTS = ("amphitheater", "basilica", "limes")


class Map(NamedTuple):
    """The map: a constant of the ruleset, since no rule creates or destroys a region or sets
    its ``type`` or ``tribe``."""

    regions: tuple[str, ...]  # every region, in the order the entities were made
    provinces: tuple[str, ...]
    homeland: dict[str, str]  # tribe: the first region of that tribe (homeland_of)


_MAPS: dict[str, Map] = {}


def board_map(state: dict[str, Any]) -> Map:
    """The map of a state's ruleset, read from the first state seen of that ruleset."""
    digest: str = state["ruleset"]["digest"]
    found = _MAPS.get(digest)
    if found is None:
        ents: dict[str, dict[str, Any]] = state["entities"]
        regions = tuple(eid for eid, e in ents.items() if e["kind"] == "region")
        homeland: dict[str, str] = {}
        for r in regions:
            homeland.setdefault(ents[r]["tribe"], r)
        found = _MAPS[digest] = Map(regions, tuple(r for r in regions if ents[r]["type"] == "province"), homeland)
    return found


def _option(text: str, action: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"label": text, "value": {"action": action, "args": args}}


class Board:
    """The state of a game, read and changed directly; dice from the game's own generator."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.st = state
        self.ents: dict[str, dict[str, Any]] = state["entities"]
        self.zones: dict[str, list[str]] = state["zones"]
        self.glob: dict[str, Any] = state["globals"]
        self.log: list[dict[str, Any]] = []

    # ---------------------------------------------------------------- basics
    def label(self, v: Any) -> str:
        if v.__class__ is str:
            e = self.ents.get(v)
            if e is not None and e["kind"] in LABELLED:
                name = e["name"]
                if name is not None and name != "":
                    return str(name)
            return str(v)
        if v is None:
            return "none"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, list):
            return ", ".join([self.label(x) for x in v])
        return str(v)

    def text(self, text: str) -> None:
        self.log.append({"type": "text", "text": text})

    def move(self, eid: str, key: str) -> None:
        e = self.ents[eid]
        zones = self.zones
        old = e["zone"]
        if old is not None:
            items = zones.get(old)
            if items is not None and eid in items:
                items.remove(eid)
        items = zones.get(key)
        if items is None:
            items = zones[key] = []
        items.append(eid)
        e["zone"] = key

    def roll(self, n: int, bonus: int | None = None) -> list[int]:
        st = self.st
        if st["forced_dice"]:
            raise Unsupported("forced dice")
        below = rng.below
        state = st["rng"]
        values: list[int] = []
        append = values.append
        while n > 0:
            state, r = below(state, 6)
            v = r + 1
            append(v)
            n -= 1
            if v == bonus:
                n += 1
        st["rng"] = state
        self.log.append({"type": "dice", "values": values})
        return values

    def choose_first(self, player: str | None, text: str) -> None:
        """A decision, answered with its first option (the benchmark's policy on both sides);
        ``text`` is that option's label."""
        if player is None:
            raise Unsupported("a decision for nobody")
        self.log.append({"type": "choice", "player": player, "index": 0, "label": text})

    def ruler(self, r: str) -> str | None:
        E = self.ents
        gov = E[r]["governor"]
        return None if gov is None else E[gov]["owner"]

    def unused_event(self, p: str, ev: str) -> str | None:
        E = self.ents
        for c in self.zones["played@" + p]:
            e = E[c]
            if e["event"] == ev and not e["event_used"]:
                return c
        return None

    def use_event(self, p: str, ev: str) -> None:
        c = self.unused_event(p, ev)
        assert c is not None
        self.ents[c]["event_used"] = True
        self.text(f"{p} uses the event of {self.label(c)}")

    def capital_free_for(self, r: str, p: str | None) -> bool:
        E, Z = self.ents, self.zones
        if E[r]["type"] != "province":
            return False
        for g in Z["armies"]:
            e = E[g]
            if e["in_capital"] and e["location"] == r:
                return False
        return not Z["garrison@" + r] or self.ruler(r) == p

    def target_label(self, t: str, r: str) -> str:
        e = self.ents[t]
        kind = e["kind"]
        if kind == "general":
            return f"{self.label(e['owner'])}'s army"
        if kind == "militia":
            return "the Militia"
        if kind == "barbarian":
            return f"the {self.label(e['tribe'])}"
        return self.label(t)

    # ---------------------------------------------------------------- combat (ToC 8)
    def unit_type(self, u: str) -> str:
        E = self.ents
        e = E[u]
        kind = e["kind"]
        if kind == "legion":
            return "full_legion" if e["full"] else "reduced_legion"
        if kind == "barbarian":
            if e["leader"]:
                return "barbarian_leader"
            zone = e["zone"]
            if zone is not None:
                owner = zone.partition("@")[2]
                if owner and E[owner]["kind"] == "general":
                    return "foederati"
        return str(kind)

    def to_hit(self, unit: str) -> int:
        value = UNIT_COMBAT[unit][1]
        for rec in self.st["modifiers"]:  # only the auguries change it, for Roman units (ToC 14.2)
            if rec["point"] == "to_hit" and unit in ROMAN_UNITS:
                value = value + rec["value"] if rec["mode"] == "add" else rec["value"]
        return value

    def army_units(self, g: str) -> list[str]:
        """A general's units, and the Militia when the army is its governor's and in the capital
        (a new list)."""
        e = self.ents[g]
        units = self.zones["units@" + g]
        if e["in_capital"]:
            loc = e["location"]
            if self.ruler(loc) == e["owner"]:
                return units + self.zones["garrison@" + loc]
        return units[:]

    def side_units(self, target: str, r: str) -> list[str]:
        """The units of the army ``target`` stands for (a new list)."""
        E = self.ents
        t = E[target]
        kind = t["kind"]
        if kind == "general":
            return self.army_units(target)
        if kind == "militia":
            return self.zones["garrison@" + r][:]
        if kind == "barbarian":
            tribe = t["tribe"]
            anywhere = E[r]["type"] != "homeland"
            out = []
            for b in self.zones["barbarians@" + r]:
                e = E[b]
                if e["tribe"] == tribe and (anywhere or e["active"]):
                    out.append(b)
            return out
        return [x for x in self.zones["rivals"] if E[x]["location"] == r]

    def roll_side(self, units: list[str], who: str) -> int:
        """Each unit's dice, by kind in the rules' order; each 6 adds a die."""
        counts: dict[str, int] = {}
        unit_type = self.unit_type
        for u in units:
            t = unit_type(u)
            counts[t] = counts.get(t, 0) + 1
        hits = 0
        modified = bool(self.st["modifiers"])
        log = self.log
        roll = self.roll
        for kind in ROLL_ORDER:
            n = counts.get(kind)
            if n:
                dice, hit = UNIT_COMBAT[kind]
                if modified:
                    hit = self.to_hit(kind)
                rolled = roll(n * dice, 6)
                scored = 0
                for d in rolled:
                    if d >= hit:
                        scored += 1
                hits += scored
                log.append({"type": "text",
                            "text": f"{who}: {kind} roll {', '.join(map(str, rolled))}, {scored} hit(s)"})
        return hits

    def eliminate(self, u: str) -> None:
        e = self.ents[u]
        kind = e["kind"]
        if kind == "legion":
            e["full"] = True
            self.move(u, "legions")
        elif kind == "militia":
            self.move(u, "militia_supply")
        elif kind == "barbarian" and not e["leader"]:
            e["active"] = False
            self.move(u, "barbarians@" + str(board_map(self.st).homeland.get(e["tribe"])))
        else:  # a Barbarian Leader or a Rival Emperor leaves the game
            self.move(u, "box")

    def suffer(self, target: str, r: str, hits: int, owner: str | None, hitter: str | None) -> int:
        """Hits on ``target``'s army, one at a time (ToC 8.1); the barbarian counters removed.

        ``alive`` is the side's units, kept up to date: a hit only flips or removes the unit it
        falls on, so it stays what ``side_units`` would give after each hit.
        """
        if hits <= 0:
            return 0
        E = self.ents
        unit_type = self.unit_type
        alive = self.side_units(target, r)
        removed = 0
        army = E[target]["kind"] in ("general", "militia")
        for _ in range(hits):
            if not alive:
                break
            if army:  # the owner takes hits on Militia, then Barbarians, then Legions
                u = barb = None
                for x in alive:
                    kind = E[x]["kind"]
                    if kind == "militia":
                        u = x
                        break
                    if kind == "barbarian" and barb is None:
                        barb = x
                else:
                    u = barb
                if u is None:  # legions only: full or reduced, the owner's choice when both
                    first = unit_type(alive[0])
                    for x in alive:
                        if unit_type(x) != first:
                            self.choose_first(owner, "Flip a full-strength legion" if first == "full_legion"
                                              else "Remove a reduced-strength legion")
                            break
                    u = alive[0]  # the first option is the first unit's type: the first unit of it
                    if first == "full_legion":
                        E[u]["full"] = False
                        continue
            else:  # the hitter allocates hits on barbarians and Rival Emperors
                first = unit_type(alive[0])
                for x in alive:
                    if unit_type(x) != first:
                        self.choose_first(hitter, f"Remove a {self.label(first)}")
                        break
                u = alive[0]
                e = E[u]
                if e["kind"] == "barbarian":
                    removed += 1
                    if e["leader"]:
                        self.glob["leader_removed"] = True
            self.eliminate(u)
            alive.remove(u)
        return removed

    def retreat(self, g: str, r: str) -> None:
        e = self.ents[g]
        e["in_capital"] = False
        e["castra"] = False
        self.text(f"{self.label(e['owner'])}'s army retreats out of the capital of {self.label(r)}")

    def disband_if_empty(self, g: str) -> None:
        e = self.ents[g]
        if not self.zones["units@" + g] and e["zone"] == "armies":
            self.move(g, "leaders@" + e["owner"])
            e["location"] = None
            e["in_capital"] = False
            e["fought"] = False
            self.text(f"{self.label(e['owner'])}'s general returns to the Available Leaders box")

    def advance(self, g: str) -> None:
        e = self.ents[g]
        if not e["in_capital"] and self.capital_free_for(e["location"], e["owner"]):
            self.choose_first(e["owner"], "Advance into the capital")  # options: advance, stay
            e["in_capital"] = True

    def figure_reward(self, p: str, r: str, sphere: str) -> None:
        e = self.ents[r]
        if not (self.ruler(r) == p and r != "italia" and e["support"] < e["max_support"]):
            self.choose_first(p, f"2 off the first {SPHERE_NAME[sphere]} card you buy this turn")
            raise Unsupported("a card discount (a modifier record)")
        self.choose_first(p, f"Increase support in {self.label(r)} for free")  # options: support, discount
        e["support"] += 1

    def battle(self, att: str, target: str) -> None:
        E, label = self.ents, self.label
        A, T = E[att], E[target]
        p = A["owner"]
        r = A["location"]
        tkind = T["kind"]
        defender = T["owner"] if tkind == "general" else self.ruler(r) if tkind == "militia" else None
        was_in_capital = T["in_capital"] if tkind == "general" else False
        A["castra"] = False
        self.glob["leader_removed"] = False
        who, them, where = label(p), self.target_label(target, r), label(r)  # fixed for the battle
        self.text(f"{who} attacks {them} in {where}")
        flanking = False
        if self.unused_event(p, "flanking_maneuver") is not None:
            self.choose_first(p, "Use Flanking Maneuver (a re-roll if needed)")  # options: use, keep
            flanking = True
            self.use_event(p, "flanking_maneuver")
        rolled_hits = self.roll_side(self.army_units(att), who)
        rolled_def_hits = self.roll_side(self.side_units(target, r), them)
        castra = 1 if tkind == "general" and T["castra"] else 0  # hits_suffered (ToC 14.1)
        att_hits = max(0, rolled_hits - castra)
        def_hits = max(0, rolled_def_hits - (1 if A["castra"] else 0))
        if att_hits != rolled_hits:
            self.text(f"The Castra reduces {who}'s hits to {att_hits}")
        if flanking:
            self.choose_first(p, "Keep the result")  # options: keep, re-roll
        barbarians_removed = self.suffer(target, r, att_hits, defender, p)
        self.suffer(att, r, def_hits, p, defender)
        att_left = len(self.army_units(att))
        def_left = len(self.side_units(target, r))
        if att_left > 0 and def_left == 0:
            winner = "attacker"
        elif def_left > 0 and att_left == 0:
            winner = "defender"
        elif att_left > 0 and def_left > 0:
            winner = "attacker" if att_hits > def_hits else "defender"
        else:
            winner = "none"
        A["fought"] = True
        if tkind == "general":
            T["fought"] = True
        if winner == "attacker":
            E[p]["legacy"] += 2 + barbarians_removed
            self.text(f"{who} wins the battle in {where} ({att_hits} hits to {def_hits}) "
                      f"and gains {2 + barbarians_removed} legacy")
            if tkind == "general" and def_left > 0 and T["in_capital"]:  # defeated_army_retreats(target, true)
                self.retreat(target, r)
            elif tkind == "barbarian":
                homeland = board_map(self.st).homeland
                for b in self.side_units(target, r):
                    E[b]["active"] = True
                    self.move(b, "barbarians@" + str(homeland.get(E[b]["tribe"])))
            elif tkind == "rival_emperor" and def_left == 0:
                self.figure_reward(p, r, "senate")
            if self.glob["leader_removed"]:
                self.figure_reward(p, r, "military")
        elif winner == "defender":
            if defender is not None:
                E[defender]["legacy"] += 2
            self.text(f"{them} holds {where} ({def_hits} hits to {att_hits})")
            # a defeated attacker does not retreat: defeated_army_retreats(att, false) is false
        else:
            self.text(f"Both armies in {where} are destroyed")
        self.disband_if_empty(att)
        if tkind == "general":
            self.disband_if_empty(target)
        if winner == "attacker" and att_left > 0:
            self.advance(att)
        elif winner == "defender" and tkind == "general" and def_left > 0 and not was_in_capital:
            self.advance(target)

    # ---------------------------------------------------------------- Place Governor (ToC 6.3.2)
    def votes_needed(self, r: str, p: str) -> int:
        """2 per support, plus the units in the capital of its ruler, less those of ``p``."""
        E, Z = self.ents, self.zones
        e = E[r]
        ru = self.ruler(r)
        n = 2 * e["support"]
        if e["governor"] is not None:  # the Militia is the governor's
            garrison = len(Z["garrison@" + r])
            if ru != p:
                n += garrison
        for g in Z["armies"]:
            a = E[g]
            if a["in_capital"] and a["location"] == r:
                owner = a["owner"]
                if owner == ru and owner != p:
                    n += len(Z["units@" + g])
                elif owner == p and owner != ru:
                    n -= len(Z["units@" + g])
        return max(1, n)

    def vacate(self, r: str) -> None:
        E = self.ents
        e = E[r]
        gov = e["governor"]
        if gov is not None:
            owner = E[gov]["owner"]
            self.move(gov, "neutrals" if owner is None else "leaders@" + owner)
            e["governor"] = None
        e["mobs"] = 0
        for m in list(self.zones["garrison@" + r]):
            self.move(m, "militia_supply")
        e["quaestor"] = False

    def governor_placed(self, p: str, r: str) -> None:
        E, label = self.ents, self.label
        italia = E["italia"]
        was = self.ruler(r)
        old_emperor = self.ruler("italia")
        neutral_emperor = old_emperor is None and italia["governor"] is not None
        had_governor = E[r]["governor"] is not None
        gov = next(g for g in self.zones["leaders@" + p] if E[g]["kind"] == "governor")
        self.vacate(r)  # install_governor
        self.move(gov, "offices")
        E[r]["governor"] = gov
        if r == "italia":
            if old_emperor is not None and old_emperor != p:
                self.glob["deposed"] = old_emperor
            ruler = self.ruler
            governed = 0
            for q in board_map(self.st).provinces:
                if ruler(q) == p:
                    governed += 1
            italia["support"] = min(italia["max_support"], governed)
            self.text(f"{label(p)} is the new Emperor; Italia's support is {italia['support']}")
        else:
            e = E[r]
            e["support"] = max(1, e["support"] - 1)
            if p == old_emperor:
                italia["support"] = min(italia["max_support"], italia["support"] + 1)
            elif (old_emperor is not None and was == old_emperor) or (neutral_emperor and was is None and had_governor):
                italia["support"] = max(0, italia["support"] - 1)
            self.text(f"{label(p)} now governs {label(r)} (support {e['support']})")

    def place_governor(self, actor: str, target: str, spent: int) -> None:
        """The Place Governor action once the spend is chosen (and attempt_governor)."""
        E = self.ents
        self.log.append({"type": "choice", "player": actor, "index": spent - 1, "label": f"{spent} dice"})
        a = E[actor]
        a["senate"] -= spent
        dice = spent  # governor_dice: one more per governed province with a Basilica, for Italia
        if target == "italia":
            ruler = self.ruler
            for q in board_map(self.st).provinces:
                if ruler(q) == actor and "basilica" in E[q]["improvements"]:
                    dice += 1
        threshold = 3 if E[target]["quaestor"] else 2  # vote_threshold: a Quaestor
        needed = self.votes_needed(target, actor)
        a["targeted"] = a["targeted"] + [target]
        rolled = self.roll(dice, 6)
        ones = threshold == 2 and self.ruler(target) is None  # a Neutral province: a 1 is a vote
        votes = 0
        for d in rolled:
            if d >= threshold or (ones and d == 1):
                votes += 1
        self.text(f"{self.label(actor)} rolls {', '.join(map(str, rolled))}: {votes} of {needed} votes in "
                  f"{self.label(target)}")
        if votes >= needed:
            self.governor_placed(actor, target)

    # ---------------------------------------------------------------- the legal actions (ToC 6.3, 14.1)
    def battle_targets(self, g: str, loc: str, owner: str, rulers: dict[str, str | None]) -> list[str]:
        """The other armies in ``g``'s region; each barbarian tribe there is one army."""
        E, Z = self.ents, self.zones
        armies = Z["armies"]
        out = [o for o in armies if E[o]["location"] == loc and E[o]["owner"] != owner]
        garrison = Z["garrison@" + loc]
        ru = rulers[loc]
        if garrison and ru != owner:
            for o in armies:
                e = E[o]
                if e["in_capital"] and e["location"] == loc and e["owner"] == ru:
                    break
            else:
                out.append(garrison[0])
        barbs = Z["barbarians@" + loc]
        if barbs:
            anywhere = E[loc]["type"] != "homeland"
            tribes: set[str] = set()
            for b in barbs:
                e = E[b]
                if (anywhere or e["active"]) and e["tribe"] not in tribes:
                    tribes.add(e["tribe"])
                    out.append(b)
        for x in Z["rivals"]:
            if E[x]["location"] == loc:
                out.append(x)
        return out

    def turn_actions(self, actor: str) -> list[dict[str, Any]]:
        """Every legal action of the Take Actions phase, in the order of the group."""
        E, Z, label = self.ents, self.zones, self.label
        a = E[actor]
        mil, sen, pop = a["military"], a["senate"], a["populace"]
        out: list[dict[str, Any]] = []
        add = out.append
        option = _option
        # what the conditions read, once: rulers, my provinces and armies, my leaders and events
        the_map = board_map(self.st)
        provinces = the_map.provinces
        rulers: dict[str, str | None] = {}
        for r in the_map.regions:
            gov = E[r]["governor"]
            rulers[r] = None if gov is None else E[gov]["owner"]
        governed = [r for r in provinces if rulers[r] == actor]
        armies = Z["armies"]
        mine = [(g, E[g]) for g in armies if E[g]["owner"] == actor]
        others_at = {E[g]["location"] for g in armies if E[g]["owner"] != actor}
        capitals = [(g, E[g]) for g in armies if E[g]["in_capital"]]
        n_generals = n_governors = 0
        for g in Z["leaders@" + actor]:
            kind = E[g]["kind"]
            if kind == "general":
                n_generals += 1
            elif kind == "governor":
                n_governors += 1
        events = {E[c]["event"] for c in Z["played@" + actor] if not E[c]["event_used"]}
        rivals_at = {E[x]["location"] for x in Z["rivals"]}
        legions_left = bool(Z["legions"])

        for card in Z["hand@" + actor]:  # play_card
            c = E[card]
            add(option(f"Play {label(card)} (+{c['value']} {SUIT_COLOUR[c['suit']]})", "play_card", {"card": card}))
        add(option("End the Take Actions phase", "end_actions", {}))
        unclaimed = Z["unclaimed@" + actor]
        for g in unclaimed:  # recruit_general
            e = E[g]
            if e["kind"] == "general" and e["cost"] <= mil:
                add(option(f"Recruit a general for {e['cost']} Military", "recruit_general", {"gen": g}))
        if mil >= 1 and n_generals and legions_left:  # create_army
            for r in governed:
                add(option(f"Create an army in {label(r)} for 1 Military", "create_army", {"r": r}))
        if legions_left:  # add_legion
            for g, e in mine:
                loc = e["location"]
                if rulers[loc] == actor:
                    cost = 1
                    for u in Z["units@" + g]:
                        if E[u]["kind"] == "legion":
                            cost += 1
                    if mil >= cost:
                        add(option(f"Add a legion to the army in {label(loc)} for {cost} Military", "add_legion",
                                   {"gen": g}))
        if mil >= 1:  # train_legions
            for g, e in mine:
                for u in Z["units@" + g]:
                    f = E[u]
                    if f["kind"] == "legion" and not f["full"]:
                        add(option(f"Train a legion of the army in {label(e['location'])} for 1 Military",
                                   "train_legions", {"gen": g}))
                        break
            for g, e in mine:  # move_army (a move costs 1, or 2 into a sea)
                if not e["fought"]:
                    loc = e["location"]
                    here = label(loc)
                    for dest in E[loc]["adjacent"]:
                        if mil >= 2 or E[dest]["type"] != "sea":
                            add(option(f"Move the army in {here} to {label(dest)} for 1 Military", "move_army",
                                       {"gen": g, "dest": dest}))
        taken = {e["location"] for _, e in capitals}
        for g, e in mine:  # enter_capital
            if not e["in_capital"]:
                loc = e["location"]
                if (E[loc]["type"] == "province" and loc not in taken
                        and (not Z["garrison@" + loc] or rulers[loc] == actor)):
                    add(option(f"Move the army in {label(loc)} into its capital (free)", "enter_capital",
                               {"gen": g}))
        for g, e in mine:  # leave_capital
            if e["in_capital"]:
                add(option(f"Move the army in {label(e['location'])} out of its capital (free)", "leave_capital",
                           {"gen": g}))
        if mil >= 1:  # disperse_mob: my armies in my provinces with a mob, then lone Militia there
            for g, e in mine:
                loc = e["location"]
                if rulers[loc] == actor and E[loc]["mobs"] > 0 and E[loc]["type"] == "province":
                    n = len(Z["units@" + g]) + (len(Z["garrison@" + loc]) if e["in_capital"] else 0)
                    size = "the army (1 unit)" if n == 1 else f"the army ({n} units)"
                    add(option(f"Disperse the mob in {label(loc)} with {size} for 1 Military", "disperse_mob",
                               {"army": g}))
            mine_in_capital = {e["location"] for g, e in mine if e["in_capital"]}
            for r in governed:
                garrison = Z["garrison@" + r]
                if E[r]["mobs"] > 0 and garrison and r not in mine_in_capital:
                    add(option(f"Disperse the mob in {label(r)} with the Militia (1 unit) for 1 Military",
                               "disperse_mob", {"army": garrison[0]}))
        for g in unclaimed:  # recruit_governor
            e = E[g]
            if e["kind"] == "governor" and e["cost"] <= sen:
                add(option(f"Recruit a governor for {e['cost']} Senate", "recruit_governor", {"gov": g}))
        if sen >= 1 and n_governors:  # place_governor
            targeted, recalled = a["targeted"], a["recalled"]
            in_capital: dict[tuple[str, str | None], int] = {}  # (region, owner): units in its capital
            for g, e in capitals:
                key = (e["location"], e["owner"])
                in_capital[key] = in_capital.get(key, 0) + len(Z["units@" + g])
            for r in provinces:
                ru = rulers[r]
                if ru == actor:
                    continue
                e = E[r]
                if (e["no_place"] or e["seat_of_power"] or e["breakaway"] or r in targeted or r in recalled):
                    continue
                needed = max(1, 2 * e["support"] + (len(Z["garrison@" + r]) if e["governor"] is not None else 0)
                             + in_capital.get((r, ru), 0) - in_capital.get((r, actor), 0))
                add(option(f"Place Governor in {label(r)} ({needed} votes needed)", "place_governor",
                           {"target": r}))
        if sen >= 2:  # recall_governor
            for r in governed:
                add(option(f"Recall your governor from {label(r)}", "recall_governor", {"r": r}))
        for r in governed:  # increase_support
            if r != "italia":
                e = E[r]
                s = e["support"] + 1
                if s <= e["max_support"] and pop >= s:
                    add(option(f"Increase support in {label(r)} to {s} for {s} Populace", "increase_support",
                               {"r": r}))
        if pop >= 2:
            if Z["militia_supply"]:  # place_militia: no enemy in the province
                for r in governed:
                    if not (Z["garrison@" + r] or Z["barbarians@" + r] or r in rivals_at or r in others_at):
                        add(option(f"Place a Militia in {label(r)} for 2 Populace", "place_militia", {"r": r}))
            for r in governed:  # hold_games
                if E[r]["mobs"] > 0:
                    add(option(f"Hold games in {label(r)} for 2 Populace", "hold_games", {"r": r}))
        if pop >= 3:  # build_improvement
            stock = self.glob["improvement_stock"]
            enemy_capitals = {e["location"] for _, e in capitals if e["owner"] != actor}
            built: dict[str, int] | None = None
            for r in governed:
                e = E[r]
                if e["mobs"] != 0 or r in rivals_at or r in enemy_capitals:
                    continue
                if any(E[b]["active"] for b in Z["barbarians@" + r]):
                    continue
                if built is None:  # how many of each are on the map
                    built = dict.fromkeys(IMPROVEMENTS, 0)
                    for q in provinces:
                        has = E[q]["improvements"]
                        if has:
                            for what in IMPROVEMENTS:
                                if what in has:
                                    built[what] += 1
                has = e["improvements"]
                for what in IMPROVEMENTS:
                    if what not in has and built[what] < stock:
                        add(option(f"Build a {label(what)} in {label(r)} for 3 Populace", "build_improvement",
                                   {"r": r, "what": what}))
        if mil >= 1:  # initiate_battle
            for g, e in mine:
                loc = e["location"]
                if not e["fought"] and E[loc]["type"] != "sea":
                    here = label(loc)
                    for target in self.battle_targets(g, loc, actor, rulers):
                        add(option(f"Attack {self.target_label(target, loc)} in {here} for 1 Military",
                                   "initiate_battle", {"gen": g, "target": target}))
        if not events:
            return out
        # the influence-card events (ToC 14.1): only with an unused card of that event played
        if "castra" in events:
            for g, e in mine:
                if not e["castra"]:
                    add(option(f"Castra: fortify the army in {label(e['location'])}", "castra", {"gen": g}))
        emperor = rulers["italia"]
        if ("praetorian_guard" in events and emperor != actor and mil >= 1 and "italia" not in a["targeted"]
                and n_governors):
            add(option(f"Praetorian Guard: seize Italia ({max(1, 2 * E['italia']['support'])} votes needed)",
                       "praetorian_guard", {}))
        if "tribute" in events:
            for r in provinces:
                tribes = dict.fromkeys(E[b]["tribe"] for b in Z["barbarians@" + r] if E[b]["active"])
                for tribe in tribes:
                    add(option(f"Tribute: pay off the {label(tribe)} in {label(r)}", "tribute",
                               {"r": r, "tribe": tribe}))
        if "foederati" in events:
            for g, e in mine:
                loc = e["location"]
                here = label(loc)
                for src in [loc, *E[loc]["adjacent"]]:
                    tribes = dict.fromkeys(E[b]["tribe"] for b in Z["barbarians@" + src] if not E[b]["leader"])
                    for tribe in tribes:
                        add(option(f"Foederati: recruit a {label(tribe)} counter from {label(src)} into the army "
                                   f"in {here}", "foederati", {"gen": g, "src": src, "tribe": tribe}))
        deposed = self.glob["deposed"]
        if "damnatio_memoriae" in events and emperor == actor and deposed is not None and deposed != actor:
            add(option(f"Damnatio Memoriae: condemn {label(deposed)}", "damnatio_memoriae", {}))
        if "quaestor" in events:
            for r in governed:
                if not E[r]["quaestor"]:
                    add(option(f"Quaestor: guard {label(r)}", "quaestor", {"r": r}))
        if "mob" in events:  # mob_event
            for r in provinces:
                if E[r]["mobs"] == 0:
                    add(option(f"Mob: stir up a mob in {label(r)}", "mob_event", {"r": r}))
        if ("pretender" in events and emperor != actor
                and not any(E[r]["seat_of_power"] for r in governed)):  # not is_pretender(actor)
            strong = [r for r in governed if r != "italia" and E[r]["support"] >= 3]
            for r in strong:  # pretender_eligible: a strong province bordering another
                near = E[r]["adjacent"] + E[r]["empire_adjacent"]
                if any(q != r and q in near for q in strong):
                    add(option(f"Pretender: proclaim an empire with its capital in {label(r)}", "pretender",
                               {"capital": r}))
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


def in_play(game: Game, player: str | None = None) -> Game:
    """``game`` as it stands at a decision in play (untimed): the engine's per-game index of
    entities by kind made, and, given the ``player`` whose menu is listed, the results of the
    constant functions that listing reads (``changed()`` keeps those and forgets the rest).
    A game made from a saved state has neither yet; a game in play made them at its first
    decisions."""
    game.kind_ids(PLAYER_KIND)
    if player is not None:
        game.action_options(player, GROUP)
        game.changed()
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
            return in_play(game), att, target
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
            game = in_play(isolated(self.rs, st, "action:place_governor", {"actor": p, "target": target}))
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
            return in_play(Game(self.rs, st), player), player
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
