"""Overlays: 'extends' another ruleset and patch it by stable ids."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from interpreter import Game, LudusError, load_ruleset
from interpreter.loader import last_load


def overlay(tmp_path: Path, patches: str, name: str = "variant", extends: str = "dice_race",
            extra: str = "") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "ruleset.yaml").write_text(
        f"ruleset: {name}\nversion: '1'\nextends: {extends}\nfiles: [changes.yaml]\n", encoding="utf-8")
    (folder / "changes.yaml").write_text(textwrap.dedent(extra).lstrip() + "patches:\n" +
                                         textwrap.indent(textwrap.dedent(patches).strip("\n"), "  ") + "\n",
                                         encoding="utf-8")
    return folder


def test_bundled_short_variant_changes_only_the_goal():
    base = load_ruleset("dice_race")
    short = load_ruleset("dice_race_short")
    assert short.globals["goal"].initial == 20 and base.globals["goal"].initial == 30
    assert short.digest != base.digest
    assert set(short.entities) == set(base.entities)
    assert short.chain[0].endswith("dice_race/ruleset.yaml")


def test_every_patch_operation(tmp_path):
    folder = overlay(tmp_path, """
        - {op: set, path: tables/sprint/rows/3, value: 5, source: X 1}
        - {op: remove, path: entities/boost, source: X 1}
        - op: add
          path: entities/step_5
          value: {kind: card, source: X 1, name: Step 5, value: 3, zone: deck}
          source: X 1
        - {op: merge, path: entities/step_1, value: {name: Pace}, source: X 1}
        - {op: add, path: scoring/tiebreaks/-, value: "0 - p.position", source: X 1}
        - {op: replace, path: functions/hand_size/expr, value: "count(p.hand) * 2", source: X 1}
    """)
    rs = load_ruleset(folder)
    assert rs.tables["sprint"].rows["3"] == 5
    assert not any(e.startswith("boost") for e in rs.entities)
    assert rs.entities["step_5"]["value"] == 3
    assert rs.entities["step_1_1"]["name"] == "Pace"
    assert len(rs.scoring.tiebreaks) == 2
    game = Game.new(rs, 2, seed=3)
    assert game.over is False
    assert rs.functions["hand_size"].fn is not None
    assert rs.functions["hand_size"].fn(game, {"p": "red"}) == 6


@pytest.mark.parametrize(("patch", "message"), [
    ("- {op: set, path: globals/gaol/initial, value: 1, source: X 1}",
     "changes.yaml:2:21: error: patch path 'globals/gaol/initial': no 'gaol' in globals (did you mean 'goal'?)"),
    ("- {op: remove, path: entities/boots, source: X 1}",
     "changes.yaml:2:24: error: cannot remove 'entities/boots': it does not exist (did you mean 'boost'?)"),
    ("- {op: add, path: entities/boost, value: {kind: card, source: X 1}, source: X 1}",
     "changes.yaml:2:21: error: cannot add 'entities/boost': it already exists (use op: set or replace to change it)"),
    ("- {op: set, path: globals/goal/initial, value: lots, source: X 1}",
     "changes.yaml:2:50: error: wrong type: expected a whole number, got 'lots'"),
])
def test_bad_patches_are_located_in_the_overlay(tmp_path, monkeypatch, patch, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LudusError) as err:
        load_ruleset(overlay(tmp_path, patch))
    assert message in str(err.value)


def test_extends_cycles_are_reported(tmp_path):
    for a, b in (("one", "two"), ("two", "one")):
        folder = tmp_path / a
        folder.mkdir()
        (folder / "ruleset.yaml").write_text(f"ruleset: {a}\nversion: '1'\nextends: ../{b}\nfiles: []\n")
    with pytest.raises(LudusError, match=r"ruleset.yaml:3:10: error: extends cycle: one -> two -> one"):
        load_ruleset(tmp_path / "one")


def test_overlay_entries_cannot_silently_redefine_ids(tmp_path):
    folder = overlay(tmp_path, "[]", extra="""
        globals:
          goal:
            source: X 1
            type: int
            initial: 5
    """)
    with pytest.raises(LudusError, match="duplicate id 'goal' in globals .*to change it, use a patch"):
        load_ruleset(folder)


# ----------------------------------------------------------------- guarded and partial patches
BASE_TEXT = """
kinds:
  player: {source: T 1, fields: {score: int}}
tables:
  extra: {source: T 1, rows: {1: 10}}
procedures:
  main:
    source: T 1
    do: |
      let n = 1
      increase first(players).score by n
      increase first(players).score by extra[n + 1]
"""


def _base(tmp_path: Path) -> Path:
    folder = tmp_path / "base"
    folder.mkdir()
    (folder / "ruleset.yaml").write_text("ruleset: base\nversion: '1'\ntitle: B\nplayers: {min: 1, max: 2}\n"
                                         "files: [rules.yaml]\n", encoding="utf-8")
    (folder / "rules.yaml").write_text(textwrap.dedent(BASE_TEXT).lstrip(), encoding="utf-8")
    return folder


def test_a_line_patch_changes_one_line_and_errors_elsewhere_still_point_at_the_base(tmp_path):
    _base(tmp_path)
    folder = overlay(tmp_path, """
        - op: set
          path: procedures/main/do
          lines: 2
          expect: increase first(players).score by n
          value: increase first(players).score by n * 5
          source: X 1
        """, extends="../base")
    rs = load_ruleset(folder)
    assert "increase first(players).score by n * 5\n" in rs.data["procedures"]["main"]["do"]
    with pytest.raises(LudusError) as err:
        Game.new(rs, 1, 1)  # line 3, from the base, has no row extra[2]
    assert "base/rules.yaml:11:40: error: table 'extra' has no row for '2'" in str(err.value)


def test_a_find_patch_changes_one_phrase_and_errors_in_it_point_into_the_overlay(tmp_path):
    _base(tmp_path)
    folder = overlay(tmp_path, """
        - op: set
          path: procedures/main/do
          find: extra[n + 1]
          value: extra[n]
          source: X 1
        """, extends="../base")
    game = Game.new(load_ruleset(folder), 1, 1)
    assert game.ents["p1"]["score"] == 11
    folder = overlay(tmp_path, """
        - op: set
          path: procedures/main/do
          find: by n
          value: by extra[3]
          source: X 1
        """, name="broken", extends="../base")
    for _ in range(2):  # such a text is not kept in the load cache: the second load is a full one too
        with pytest.raises(LudusError) as err:
            Game.new(load_ruleset(folder), 1, 1)
        assert "broken/changes.yaml:5:15: error: table 'extra' has no row for '3'" in str(err.value)
        assert last_load() is not None and last_load().cache != "hit"


def test_a_guard_passes_when_the_base_is_unchanged_whatever_the_indentation(tmp_path):
    _base(tmp_path)
    folder = overlay(tmp_path, """
        - op: set
          path: tables/extra/rows/1
          expect: 10
          value: 20
          source: X 1
        - op: set
          path: procedures/main/do
          expect: |
                let n = 1
                increase first(players).score by n
                increase first(players).score by extra[n + 1]
          value: increase first(players).score by extra[1]
          source: X 1
        """, extends="../base")
    assert Game.new(load_ruleset(folder), 1, 1).ents["p1"]["score"] == 20
