"""docs/tutorial.md, followed literally: its files written, its commands run, their output compared.

And the two modding tasks it teaches stay as small as promised: an erratum to one event card is
one patch of at most 5 lines, and a new event card with its effect at most 20 lines — neither
copies the base's procedures.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docrun import matches, read_page, run

ROOT = Path(__file__).resolve().parents[1]
PAGE = read_page(ROOT / "docs" / "tutorial.md")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("tutorial")
    for rel, text in PAGE.files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text, encoding="utf-8")
    return top


def test_the_page_shows_files_and_commands() -> None:
    assert "rulesets/pig/rules.yaml" in PAGE.files
    assert "rulesets/toc_inflation/inflation.yaml" in PAGE.files
    assert "rulesets/toc_fire/fire.yaml" in PAGE.files
    assert len(PAGE.commands) >= 8


@pytest.mark.parametrize("cmd", PAGE.commands, ids=lambda c: f"line{c.line}")
def test_command_prints_what_the_page_shows(folder: Path, cmd) -> None:
    actual = run(cmd.argv, folder)
    assert matches(cmd.expected, actual), (
        f"docs/tutorial.md:{cmd.line}: ludus {' '.join(cmd.argv)}\n--- page\n" + "\n".join(cmd.expected)
        + "\n--- actual\n" + "\n".join(actual))


def _rule_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_the_erratum_is_one_short_patch_of_the_card() -> None:
    text = PAGE.files["rulesets/toc_inflation/inflation.yaml"]
    body = _rule_lines(text)
    assert body[0] == "patches:" and len(body) - 1 <= 5, body
    assert "entities/inflation/effect" in text
    assert not re.search(r"procedures|draw_event", text)  # the base is not copied


def test_the_new_card_is_one_entry_of_at_most_20_lines() -> None:
    text = PAGE.files["rulesets/toc_fire/fire.yaml"]
    body = _rule_lines(text)
    assert body[0] == "entities:" and len(body) - 1 <= 20, body
    assert not re.search(r"procedures|draw_event|patches", text)


def test_without_the_erratum_the_scenario_fails(folder: Path) -> None:
    """The scenario shows the erratum's effect: on the base ruleset, the card costs 3, not 4."""
    scenario = folder / "tests" / "inflation_by_2.yaml"
    base = folder / "tests" / "inflation_base.yaml"
    base.write_text(scenario.read_text(encoding="utf-8").replace("../rulesets/toc_inflation", "time_of_crisis"),
                    encoding="utf-8")
    out = run(["scenario", str(base)], folder)
    assert any("illegal choice: 'Buy Red 2 Castra for 4'" in line and "Buy Red 2 Castra for 3" in line
               for line in out), out
