"""A manifest is checked against its schema before any of its values is used (issue 11).

Found by the mutation fuzzer: `files: 7` reached the loader's file count as a number (a
TypeError), and a ruleset name of a million characters validated and then cost `ludus play`
830 MB. Manifest texts have a length now, and a manifest that breaks its schema stops there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hostile import BASE, assert_refused, edited_base, run_ludus

CASES = {
    "files_a_number": ("files:\n  - game.yaml\n", "files: 7\n"),
    "files_a_mapping": ("files:\n  - game.yaml\n", "files: {a: game.yaml}\n"),
    "name_a_million_characters": ("ruleset: tiny\n", "ruleset: " + "t" * 1_000_000 + "\n"),
    "title_a_million_characters": ("title: Tiny (base of the broken-input tests)\n", "title: " + "T" * 1_000_000 + "\n"),
    "seat_a_long_name": ("seats: [red, blue]\n", "seats: [red, " + "b" * 100 + "]\n"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_manifest_that_breaks_its_schema_is_refused_at_its_line(case: str, tmp_path: Path, snapshot) -> None:
    edited_base(tmp_path, "ruleset.yaml", *CASES[case])
    outcome = run_ludus(["validate", "r"], cwd=tmp_path)
    assert_refused(outcome)
    assert outcome.err.startswith("r/ruleset.yaml:")
    assert len(outcome.err) < 2_000
    assert outcome.err == snapshot


def test_the_unchanged_base_still_validates(tmp_path: Path) -> None:
    shutil.copytree(BASE, tmp_path / "r")
    assert run_ludus(["validate", "r"], cwd=tmp_path).code == 0


def test_a_whole_number_in_the_data_past_the_rules_bound_is_refused_at_its_line(tmp_path: Path, snapshot) -> None:
    """The rules keep whole numbers within ±(2^63 − 1); a field's value from YAML must too."""
    edited_base(tmp_path, "game.yaml", "    value: 3\n", "    value: " + "9" * 30 + "\n")
    outcome = run_ludus(["validate", "r"], cwd=tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot
