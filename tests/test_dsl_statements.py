"""The rules language: statements, control flow, procedures, dice, zones and modifiers."""

from __future__ import annotations

import pytest
from rulekit import program

from interpreter import LudusError


def test_control_flow(tmp_path):
    game = program(tmp_path, """
        let acc = []
        for each x in 1..10 where x % 2 == 1 do
          if x == 7 then
            break
          elif x == 3 then
            set acc = acc + [0]
          else
            set acc = acc + [x]
          end
        end
        let n = 0
        while n < 3 do
          increase n by 1
        end
        repeat
          decrease n by 2
        until n < 0
        set out = [acc, n]
    """)
    assert game.glob["out"] == [[1, 0, 5], -1]


def test_setting_a_global_forgets_function_results_computed_from_its_old_value(tmp_path):
    extra = """
    functions:
      twice:
        source: T 2
        returns: int
        expr: n * 2
    """
    game = program(tmp_path, "set n = twice()\nlet m = twice()\nset out = m", globals_={"n": ("int", 1)}, extra=extra)
    assert game.glob["n"] == 2
    assert game.glob["out"] == 4  # not the 2 remembered while n was still 1


def test_loops_iterate_over_a_snapshot_and_leave_no_iterator_behind(tmp_path):
    game = program(tmp_path, """
        for each c in deck do
          move c to pile
        end
        set out = [count(deck), count(pile)]
    """)
    assert game.glob["out"] == [0, 3]
    assert game.result is not None  # ran to the end


def test_procedures_take_arguments_and_return_values(tmp_path):
    procs = """
      double:
        source: T 2
        params: {x: int}
        do: |
          return x * 2
      fact:
        source: T 2
        params: {n: int}
        do: |
          if n <= 1 then
            return 1
          end
          call fact(n - 1) as smaller
          return n * smaller
    """
    game = program(tmp_path, "call double(21) as a\ncall fact(5) as b\nset out = [a, b]", procs=procs)
    assert game.glob["out"] == [42, 120]


def test_endless_recursion_is_a_located_error(tmp_path):
    procs = """
      forever:
        source: T 2
        do: |
          call forever()
    """
    with pytest.raises(LudusError, match=r"rules\.yaml:\d+:\d+: error: procedure calls nested more than 200 deep"):
        program(tmp_path, "call forever()", procs=procs)


_DEEP_FUNCTION = r"rules\.yaml:\d+:\d+: error: function '(ping|pong|grow)' nested more than 200 deep"


def test_mutual_recursion_of_functions_is_a_located_error(tmp_path):
    # a cycle of two functions: each counts how deep calls nest (functions.recursive)
    extra = """
    functions:
      ping:
        source: T 3
        params: {n: int}
        returns: int
        expr: pong(n + 1)
      pong:
        source: T 3
        params: {n: int}
        returns: int
        expr: ping(n + 1) + 1
    """
    with pytest.raises(LudusError, match=_DEEP_FUNCTION):
        program(tmp_path, "set out = ping(0)", extra=extra)


@pytest.mark.parametrize("base, modify", [("grow(n + 1)", ""), ('"0"', "modify boost by 1 when grow(n) > 0\n")])
def test_recursion_through_a_modifier_point_is_a_located_error(tmp_path, base, modify):
    # no call in grow's body names grow: the point's base, or its modifier's condition, calls it.
    # Through a condition each level nests so many Python frames that Python's own limit comes
    # before 200 levels: that too is a located error ("rules nested too deeply").
    extra = f"""
    functions:
      grow:
        source: T 3
        params: {{n: int}}
        returns: int
        expr: boost(n + 1) + 1
    modifier_points:
      boost:
        source: T 4
        params: {{n: int}}
        type: int
        base: {base}
    """
    deep = _DEEP_FUNCTION if not modify else r"rules\.yaml:\d+:\d+: error: rules nested too deeply"
    with pytest.raises(LudusError, match=deep):
        program(tmp_path, modify + "set out = grow(0)", extra=extra)


def test_only_functions_that_may_run_inside_themselves_count_their_depth():
    from interpreter.dsl.functions import recursive
    reads = {"a": {("call", "b")}, "b": {("call", "a"), ("call", "c")}, "c": {("field", "x")},
             "d": {("call", "d")}, "e": {("call", "c"), ("all",)}, "f": {("call", "a")}}
    assert recursive(list(reads) + ["g"], reads) == {"a", "b", "d", "e", "g"}  # g: reads unknown


def test_runaway_loop_hits_the_step_budget_with_its_location(tmp_path):
    with pytest.raises(LudusError) as err:
        program(tmp_path, "let n = 0\nrepeat\n  increase n by 1\nuntil n < 0")
    text = str(err.value)
    assert "runaway rules in 'main': more than 200000 steps without a decision" in text
    assert "a loop never ends" in text
    assert "rules.yaml:10:7:" in text  # at the loop ('repeat'), not at the top of the file


def test_bonus_dice_chain_each_six_adds_a_die(tmp_path):
    # The Place Governor example of Time of Crisis 6.3.2, as a generic dice rule:
    # 4 dice 6,6,2,1; bonus dice 6,1; bonus die 3 -> 7 dice, 5 of them count.
    game = program(tmp_path, """
        roll 4 dice as rolled with bonus on 6
        set out = [rolled, count(for d in rolled where d >= 2)]
    """, dice=[6, 6, 2, 1, 6, 1, 3])
    assert game.glob["out"] == [[6, 6, 2, 1, 6, 1, 3], 5]
    assert {"type": "dice", "values": [6, 6, 2, 1, 6, 1, 3]} in game.log


def test_single_die_and_other_sides(tmp_path):
    game = program(tmp_path, "roll die as a\nroll 3 dice d10 as b\nset out = [a, b]", seed=5)
    a, b = game.glob["out"]
    assert 1 <= a <= 6
    assert len(b) == 3 and all(1 <= x <= 10 for x in b)


def test_rolled_dice_are_the_generators_draws(tmp_path):
    # Board.roll runs rng.below inline: the same faces and the same state after, for dice of
    # 1, 6 and 1000 sides (a d1000's draws are rejected more often), bonus dice and forced dice
    from interpreter import rng
    game = program(tmp_path, "set out = 1", seed=7)
    state = game.state["rng"]
    game.state["forced_dice"] = [4, 6]
    for n, sides, bonus in ((50, 6, None), (50, 1000, None), (3, 1, None), (40, 6, 6), (2, 6, None)):
        faces: list[int] = []
        left = n
        while left > 0:
            if game.state["forced_dice"] and len(faces) < 2 and sides == 6 and bonus is None:
                faces.append(game.state["forced_dice"][len(faces)])
            else:
                state, r = rng.below(state, sides)
                faces.append(r + 1)
            left -= 1 if faces[-1] != bonus else 0
        assert game.roll(n, sides, bonus, None) == faces
        assert game.state["rng"] == state
        game.state["forced_dice"] = []


def test_forced_dice_must_fit_the_die(tmp_path):
    with pytest.raises(LudusError, match="forced die 7 is not a result of a d6"):
        program(tmp_path, "roll die as a", dice=[7])


def test_zones_move_draw_shuffle_create_destroy(tmp_path):
    game = program(tmp_path, """
        let p = first(players)
        draw 2 from deck to p.hand
        move three to top of pile
        create token in pile with value = 5, owner = p as t
        move ace to pile
        let before = [c for c in pile]
        destroy t
        shuffle pile
        set out = [[c for c in p.hand], before, count(pile), t in every token]
    """)
    hand, before, pile_count, still_there = game.glob["out"]
    assert hand == ["two"]  # the deck is unshuffled: ace and two drawn, then ace moved out of the hand
    assert before[0] == "three" and before[-1] == "ace" and before[1].startswith("token_")
    assert pile_count == 2 and still_there is False
    assert game.state["entities"]["ace"]["zone"] == "pile"


def test_a_zone_holding_one_kind_refuses_another(tmp_path):
    with pytest.raises(LudusError, match="zone 'deck' holds card entities, not token"):
        program(tmp_path, "create token in deck with value = 1")


def test_modifiers_add_set_when_until_once(tmp_path):
    extra = """
    modifier_points:
      cost:
        source: T 4
        params: {who: player, card: card}
        type: int
        base: card.value
    """
    game = program(tmp_path, """
        let me = first(players)
        let other = last(players)
        let a = cost(me, three)
        modify cost by -1 when who == me until turn_end
        modify cost by 10 when card == two once
        let b = [cost(me, three), cost(other, three), cost(me, two)]
        consume cost(me, two)
        let c = [cost(me, two)]
        signal turn_end
        let d = cost(me, three)
        modify cost to 0 when who == other
        set out = [a, b, c, d, cost(other, ace), cost(me, ace)]
    """, extra=extra)
    assert game.glob["out"] == [3, [2, 3, 11], [1], 3, 0, 1]
    assert len(game.state["modifiers"]) == 1  # only the permanent one remains


def test_a_while_modifier_lasts_while_its_condition_holds(tmp_path):
    extra = """
    modifier_points:
      boost:
        source: T 4
        type: int
        base: "0"
    """
    game = program(tmp_path, """
        modify boost by 2 while ace.zone == deck
        let a = boost()
        move ace to pile
        let b = boost()
        signal anything
        set out = [a, b]
    """, extra=extra)
    assert game.glob["out"] == [2, 0]
    assert game.state["modifiers"] == []


def test_game_over_and_scoring_with_tiebreaks(tmp_path):
    extra = """
    scoring:
      source: T 5
      score: p.score
      tiebreaks: ["count(p.hand)"]
    """
    game = program(tmp_path, """
        let a = first(players)
        let b = last(players)
        set a.score = 4
        set b.score = 4
        draw 1 from deck to b.hand
        game over "done"
        set a.score = 99
    """, extra=extra)
    assert game.result == {"reason": "done", "scores": {"red": 4, "blue": 4}, "ranking": ["blue", "red"],
                           "winners": ["blue"]}
    assert game.state["entities"]["red"]["score"] == 4  # nothing runs after game over


def test_a_local_set_only_on_a_path_not_taken_is_a_clear_error(tmp_path):
    with pytest.raises(LudusError, match=r"'y' has no value here \(it is set only on a path that did not run"):
        program(tmp_path, "if false then\n  let y = 1\nend\nset out = y")


def test_huge_ranges_are_refused(tmp_path):
    with pytest.raises(LudusError, match=r"the range 1..1000000000 is too long"):
        program(tmp_path, "set out = count(1..1000000000)")


def test_a_while_lifetime_uses_captured_locals_even_if_a_parameter_has_the_same_name(tmp_path):
    extra = """
    modifier_points:
      boon:
        source: T 4
        params: {who: player}
        type: int
        base: "0"
    """
    game = program(tmp_path, """
        let who = first(players)
        modify boon by 1 while who == first(players)
        signal anything
        set out = [boon(first(players)), boon(last(players))]
    """, extra=extra)
    assert game.glob["out"] == [1, 1]
    assert len(game.state["modifiers"]) == 1


def test_create_can_name_the_new_entity(tmp_path):
    game = program(tmp_path, """
        for each p in players do
          create token in pile called "{p}_token" with value = 1, owner = p
        end
        set out = [t for t in pile]
    """)
    assert game.glob["out"] == ["red_token", "blue_token"]
    with pytest.raises(LudusError, match="cannot create 'ace': that id is taken"):
        program(tmp_path / "again", 'create token called "ace"')
    with pytest.raises(LudusError, match="cannot create 'Big Token': ids are snake_case"):
        program(tmp_path / "bad", 'create token called "Big Token"')


def test_a_one_use_modifier_can_also_expire(tmp_path):
    extra = """
    modifier_points:
      price:
        source: T 4
        params: {suit: str}
        type: int
        base: "5"
    """
    game = program(tmp_path, """
        modify price by -2 when suit == "blue" until turn_end once
        let a = [price("blue"), price("red")]
        signal turn_end
        modify price by -2 when suit == "blue" until turn_end once
        consume price("blue")
        set out = [a, price("blue")]
        signal turn_end
    """, extra=extra)
    assert game.glob["out"] == [[3, 5], 5]
    assert game.state["modifiers"] == []


def test_a_local_declared_as_none_takes_any_later_value(tmp_path):
    game = program(tmp_path, """
        let best = none
        for each x in [3, 8, 5] do
          if best == none or x > best then
            set best = x
          end
        end
        let who = none
        set who = players[1]
        set out = [best, who]
    """)
    assert game.glob["out"] == [8, game.players[1]]
