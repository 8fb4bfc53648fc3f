"""Everything an author writes is checked before play; all errors at once, each located."""

from __future__ import annotations

import pytest
from rulekit import load

from interpreter import LudusError


def errors(tmp_path, rules: str) -> list[str]:
    with pytest.raises(LudusError) as err:
        load(tmp_path, {"rules.yaml": rules})
    return [str(d) for d in err.value.diagnostics]


def only(messages: list[str]) -> str:
    assert len(messages) == 1, messages
    return messages[0]


MAIN = """
procedures:
  main:
    source: T 1
    do: |
      {code}
"""


def check(tmp_path, code: str) -> str:
    return only(errors(tmp_path, MAIN.replace("{code}", code)))


def test_unknown_name_has_a_hint_and_exact_position(tmp_path):
    msg = check(tmp_path, "move ace to dekc")
    assert msg.endswith("rules.yaml:5:19: error: unknown name 'dekc' (did you mean 'deck'?)")


def test_unknown_field_of_a_kind(tmp_path):
    msg = check(tmp_path, "let v = ace.valeu")
    assert msg.endswith("rules.yaml:5:19: error: card has no field or zone 'valeu' (did you mean 'value'?)")


def test_wrong_types(tmp_path):
    assert check(tmp_path, 'let v = ace.value + "x" * 2').endswith(
        "rules.yaml:5:27: error: wrong type: '*' needs numbers, not text")
    assert check(tmp_path, "if ace.value then pass end").endswith(
        "rules.yaml:5:14: error: wrong type: an 'if' condition must be true/false, not a number")
    assert check(tmp_path, "let v = count(for c in deck where c.value)").endswith(
        "wrong type: a 'where' condition must be true/false, not a number")
    assert check(tmp_path, "set ace.value = two").endswith(
        "wrong type: cannot store a card where a number is kept")


def test_wrong_arity_and_unknown_procedures(tmp_path):
    assert check(tmp_path, "let v = max()").endswith("max() takes 1 or more argument(s), got 0")
    assert check(tmp_path, "call nowhere()").endswith("unknown procedure 'nowhere'")


def test_syntax_errors_point_inside_the_block(tmp_path):
    rules = MAIN.replace("{code}", "let a = 1\n      if a > then\n      end")
    msg = only(errors(tmp_path, rules))
    assert ":6:14: error: syntax error: unexpected 'then'" in msg


def test_all_errors_are_reported_together(tmp_path):
    rules = MAIN.replace("{code}", "move ace to dekc\n      let x = nope\n      call gone()")
    assert len(errors(tmp_path, rules)) == 3


def test_reference_checks_on_data(tmp_path):
    msgs = errors(tmp_path, """
        entities:
          four:
            source: T 1
            kind: card
            value: many
            zone: dekc
          tok:
            source: T 1
            kind: token
            owner: ace
        procedures:
          main:
            source: T 1
            do: pass
    """)
    text = "\n".join(msgs)
    assert "rules.yaml:5:12: error: wrong type: expected a whole number, got 'many'" in text
    assert "rules.yaml:6:11: error: unknown zone 'dekc' (did you mean 'deck'?)" in text
    assert "rules.yaml:10:12: error: wrong kind of id: 'ace' is a card, not a player" in text


def test_duplicate_ids_across_files_name_both_places(tmp_path):
    with pytest.raises(LudusError) as err:
        load(tmp_path, {"more.yaml": """
            entities:
              ace:
                source: T 1
                kind: card
            procedures:
              main:
                source: T 1
                do: pass
        """})
    msg = str(err.value)
    assert "more.yaml:2:3: error: duplicate id 'ace' in entities" in msg
    assert "first defined at" in msg and "components.yaml" in msg


def test_schema_errors_are_located_with_hints(tmp_path):
    msgs = errors(tmp_path, """
        procedures:
          main:
            sorce: T 1
            do: pass
          other:
            source: reconstructed
            do: pass
    """)
    text = "\n".join(msgs)
    assert "rules.yaml:3:5: error: unknown key 'sorce' in procedures/main (did you mean 'source'?)" in text
    assert "missing 'note' in procedures/other" in text


def test_a_choice_without_a_player_is_an_error_not_a_crash(tmp_path):
    assert check(tmp_path, "choose x from [1, 2]").endswith(
        "rules.yaml:5:7: error: a choice needs the player who makes it (add 'by PLAYER', e.g. 'by actor')")


def test_a_modifier_until_a_signal_nobody_sends_is_an_error(tmp_path):
    rules = """
        modifier_points:
          bonus_points:
            source: T 1
            type: int
            base: "0"
        procedures:
          main:
            source: T 1
            do: |
              modify bonus_points by 1 until turn_end
              signal turn_ends
    """
    msg = only(errors(tmp_path, rules))
    assert "no rule signals 'turn_end', so this modifier would never end (did you mean 'turn_ends'?)" in msg


def test_keys_needs_a_per_player_map(tmp_path):
    assert "keys() needs a per-player map, not a list" in check(tmp_path, "let k = keys([1])")


def test_errors_inside_a_folded_expression_point_at_their_own_line(tmp_path):
    msgs = errors(tmp_path, """
        functions:
          total:
            source: T 1
            returns: int
            expr: >-
              count(deck)
              + ace.valeu
        procedures:
          main:
            source: T 1
            do: pass
    """)
    assert only(msgs).endswith("rules.yaml:7:13: error: card has no field or zone 'valeu' (did you mean 'value'?)")


@pytest.mark.parametrize("style", ["folded", "literal"])
def test_an_expression_may_span_lines(tmp_path, style):
    indicator = ">-" if style == "folded" else "|-"
    msgs = errors(tmp_path, f"""
        functions:
          total:
            source: T 1
            returns: int
            expr: {indicator}
              if count(deck) > 0
                then ace.value
                else two.valeu
        procedures:
          main:
            source: T 1
            do: pass
    """)
    assert only(msgs).endswith("rules.yaml:8:18: error: card has no field or zone 'valeu' (did you mean 'value'?)")
