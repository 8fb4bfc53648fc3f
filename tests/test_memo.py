"""Remembered function results: a change forgets those of the functions that read what changed;
only those of functions that read fields no rule sets (a game's constants: a map's connections,
printed values) outlive an edit from outside (see also test_memo_kept.py)."""

from __future__ import annotations

from rulekit import load

from interpreter import Game
from interpreter.model import NO_MEMO

RULES = """
functions:
  a_printed_total:
    source: T 1
    returns: int
    expr: sum(c.value for c in every card)
  b_scores:
    source: T 1
    returns: int
    expr: sum(p.score for p in players)
procedures:
  main:
    source: T 2
    do: |
      repeat
        choose x from [1, 2] by players[0] prompt "total {a_printed_total()}, scores {b_scores()}"
        increase players[0].score by x
      until players[0].score >= 6
"""


def test_results_that_read_only_unwritten_fields_outlive_a_decision(tmp_path):
    rs = load(tmp_path, {"rules.yaml": RULES})
    assert rs.memo_count == 2 and rs.memo_volatile == (1,)  # b_scores reads 'score', which main sets
    game = Game.new(rs, 2, 1)
    assert game.pending["prompt"] == "total 6, scores 0"
    assert game.memos[0] and game.memos[1]
    game.apply(1, "red")
    assert game.pending["prompt"] == "total 6, scores 2"  # the score was forgotten and computed again
    assert game.memos[0] == {(): 6}  # the printed total was kept


def test_an_edit_from_outside_is_seen_after_forget_all(tmp_path):
    game = Game.new(load(tmp_path, {"rules.yaml": RULES}), 2, 1)
    game.ents["ace"]["value"] = 10  # a caller editing a constant between decisions ...
    game.forget_all()  # ... says so
    game.apply(0, "red")
    assert game.pending["prompt"] == "total 15, scores 1"


def test_a_caller_setting_a_field_no_rule_sets_forgets_what_reads_it(tmp_path):
    # a constant function's memo is in no game's list of filled slots: such a change forgets it by number
    game = Game.new(load(tmp_path, {"rules.yaml": RULES}), 2, 1)
    assert game.memos[0] == {(): 6} and game.filled == 1 << 1
    game.set_field("ace", "value", 10, "=", None)
    assert game.memos[0] is NO_MEMO and game.memos[1]  # b_scores reads no 'value'
    game.set_field("red", "score", 1, "=", None)
    assert game.memos[1] is NO_MEMO and game.filled == 0


def test_making_an_entity_forgets_everything(tmp_path):
    rules = RULES.replace("        increase players[0].score by x\n",
                          "        increase players[0].score by x\n        create card in pile with value = 4\n")
    game = Game.new(load(tmp_path, {"rules.yaml": rules}), 2, 1)
    game.apply(0, "red")
    assert game.pending["prompt"] == "total 10, scores 1"  # 'every card' holds the new one


def test_kept_results_are_bounded_over_a_game(tmp_path, monkeypatch):
    import interpreter.game.values as values

    rules = RULES.replace("sum(c.value for c in every card)", "sum(c.value + n for c in every card)").replace(
        "  a_printed_total:\n    source: T 1\n", "  a_printed_total:\n    source: T 1\n    params: {n: int}\n").replace(
        "total {a_printed_total()}", "total {a_printed_total(players[0].score)}")
    monkeypatch.setattr(values, "MAX_KEPT_RESULTS", 2)
    game = Game.new(load(tmp_path, {"rules.yaml": rules}), 2, 1)
    sizes = []
    while not game.over:
        game.apply(0, "red")
        sizes.append(len(game.memos[0]))
    assert max(sizes) <= 3 and len(sizes) == 6  # one more result each decision, then started again


def test_a_field_is_forgotten_by_its_name_as_its_change_is(tmp_path):
    # Board.set_field forgets through field_reader_bits and field_pinned, not memo_reader_bits
    # and memo_pinned: the two must name the same memos for every field
    rs = load(tmp_path, {"rules.yaml": RULES})
    fields = {fact[1] for fact in rs.memo_readers if fact[0] == "field"}
    assert fields >= {"value", "score"}
    assert rs.field_reader_bits == {f: rs.memo_reader_bits[("field", f)] for f in fields}
    assert rs.field_pinned == {f: rs.memo_pinned[("field", f)] for f in fields if ("field", f) in rs.memo_pinned}
    assert rs.field_pinned == {"value": (0,)}
    game = Game.new(rs, 2, 1)
    game.set_field("ace", "name", "Ace!", "=", None)  # a field no function reads forgets none of these
    assert game.memos[0] == {(): 6} and game.memos[1] and game.filled == 1 << 1


def test_a_field_increased_past_the_largest_number_fails_where_it_is_increased(tmp_path):
    import pytest

    from interpreter.model import MAX_INT, RuleFault

    game = Game.new(load(tmp_path, {"rules.yaml": RULES}), 2, 1)
    game.set_field("red", "score", MAX_INT - 1, "=", None)
    game.set_field("red", "score", 1, "+", None)
    assert game.ents["red"]["score"] == MAX_INT
    with pytest.raises(RuleFault, match="number out of range"):
        game.set_field("red", "score", 1, "+", None)
    game.set_field("red", "score", -MAX_INT, "=", None)
    with pytest.raises(RuleFault, match="number out of range"):
        game.set_field("red", "score", 1, "-", None)


MIXED = """
functions:
  shown:
    source: T 1
    params: {x: any}
    returns: str
    expr: str(x)
  both:
    source: T 1
    params: {x: any, y: int}
    returns: str
    expr: str(x) + str(y)
procedures:
  main:
    source: T 2
    do: |
      choose z from [1] by players[0] prompt "{shown(1)} {shown(true)} {shown(0)} {shown(false)} {both(0, 1)} {both(false, 1)} {both([1], 2)}"
"""


def test_a_boolean_argument_never_finds_the_result_of_the_equal_number(tmp_path):
    # in Python true == 1 (and hashes alike): a remembered f(1) must not answer f(true)
    rs = load(tmp_path, {"rules.yaml": MIXED})
    game = Game.new(rs, 2, 1)
    assert game.pending["prompt"] == "1 true 0 false 01 false1 12"
    assert rs.memo_count == 2  # both functions are remembered: the keys were what was tested
