"""The errata overlay time_of_crisis_faq: the reference manual's FAQ over the printed rulebook.

The manual (shared/seeds/001, section 7 "FAQ or Edge Cases") answers ten questions. One of them
changes a rule printed in the rulebook (Combat from Capital, against ToC 8.3) and is a patch of
the overlay; the other nine agree with the rulebook or settle what it leaves open, and the base
ruleset follows them. docs/time_of_crisis.md has the table. These tests check that every item has
a scenario citing it, that the overlay changes what it claims and nothing the base already
follows, and that each patch still finds the base text it was written against.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from interpreter import LudusError, load_ruleset
from interpreter.scenario import run_scenario

HERE = Path(__file__).parent
ROOT = HERE.parent
BASE_SCENARIOS = HERE / "scenarios" / "time_of_crisis"
FAQ_SCENARIOS = HERE / "scenarios" / "time_of_crisis_faq"

# The ten items of the manual's FAQ, in its order, and whether the rulebook prints a rule the
# answer changes (then the overlay patches it).
FAQ_ITEMS = {
    "Barbarians in Armies": False,
    "Foederati": False,
    "Combat from Capital": True,
    "Create Army": False,
    "Quaestor Removal": False,
    "Pretender Support Drop": False,
    "Multiple Pretenders": False,
    "Emperor Becomes Pretender": False,
    "Neutral Provinces": False,
    "Basilica Bonus": False,
}

# Each patch of the overlay, with the base value it replaces. The engine has no `expect:` on a
# patch yet, so this is where an erratum notices that the rule it corrects has changed.
PATCHED = {
    "functions/defeated_army_retreats/expr": "defending and g.in_capital",
}


def scenario_sources(folder: Path) -> dict[Path, str]:
    return {p: str(yaml.safe_load(p.read_text(encoding="utf-8")).get("source", "")) for p in sorted(folder.glob("*.yaml"))}


def overlay_patches() -> list[dict]:
    return yaml.safe_load((ROOT / "rulesets/time_of_crisis_faq/faq.yaml").read_text(encoding="utf-8"))["patches"]


def at(data: dict, path: str):
    for step in path.split("/"):
        data = data[step]
    return data


def test_the_manual_has_the_ten_items_listed_here():
    seed = ROOT.parent / "shared" / "seeds" / "001_40c02e761799a008.txt"
    if not seed.exists():
        pytest.skip("the seed documents are not beside this checkout")
    section = seed.read_text(encoding="utf-8").split("## 7. FAQ or Edge Cases", 1)[1]
    items = [line.split("**")[1].rstrip(":") for line in section.splitlines() if line.startswith("- **")]
    assert items == list(FAQ_ITEMS)


@pytest.mark.parametrize("item", list(FAQ_ITEMS))
def test_every_faq_item_has_a_scenario_where_it_belongs(item):
    cite = f"ToC manual FAQ, {item}"
    in_base = [p for p, s in scenario_sources(BASE_SCENARIOS).items() if cite in s]
    in_overlay = [p for p, s in scenario_sources(FAQ_SCENARIOS).items() if cite in s]
    assert in_base, f"no base scenario cites {cite!r}"  # the base: the rulebook, or the FAQ where it is silent
    if FAQ_ITEMS[item]:
        assert in_overlay, f"{item} changes a printed rule: the overlay needs a scenario citing it"
    else:
        assert not in_overlay, f"{item} is not an erratum: its scenarios belong to the base"


def test_the_overlay_holds_one_patch_per_changing_item_with_source_and_note():
    patches = overlay_patches()
    cited = [p["source"].split(";")[0].removeprefix("ToC manual FAQ, ") for p in patches]
    assert sorted(cited) == sorted(item for item, changes in FAQ_ITEMS.items() if changes)
    for p in patches:
        assert p["source"].startswith("ToC manual FAQ, ") and p.get("note")
    assert {p["path"] for p in patches} == set(PATCHED)


@pytest.mark.parametrize("path", list(PATCHED))
def test_each_patch_still_finds_the_base_text_it_corrects(path):
    base = load_ruleset("time_of_crisis")
    assert at(base.data, path) == PATCHED[path], (
        f"the base changed under the erratum at {path}: review rulesets/time_of_crisis_faq/faq.yaml")
    faq = load_ruleset("time_of_crisis_faq")
    new = next(p["value"] for p in overlay_patches() if p["path"] == path)
    assert at(faq.data, path) == new != PATCHED[path]


def with_ruleset(path: Path, ruleset: str, tmp_path: Path) -> Path:
    """A copy of the scenario at ``path`` that names another (bundled) ruleset."""
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    out = tmp_path / path.name
    out.write_text(text.replace(f"ruleset: {data['ruleset']}\n", f"ruleset: {ruleset}\n", 1), encoding="utf-8")
    return out


@pytest.mark.parametrize("path", sorted(BASE_SCENARIOS.glob("faq_*.yaml")), ids=lambda p: p.name)
def test_the_overlay_keeps_what_the_base_already_follows(path, tmp_path):
    """An item that is no erratum plays the same with the overlay."""
    assert run_scenario(with_ruleset(path, "time_of_crisis_faq", tmp_path)).failures == []


def test_combat_from_capital_tells_the_rulebook_from_the_faq(tmp_path):
    """The 8.3 pair: each scenario passes with its own ruleset and fails with the other."""
    base = BASE_SCENARIOS / "combat_attacker_in_capital_stays.yaml"
    faq = FAQ_SCENARIOS / "combat_from_capital_retreat.yaml"
    assert run_scenario(base).failures == []
    assert run_scenario(faq).failures == []
    failures = run_scenario(with_ruleset(base, "time_of_crisis_faq", tmp_path)).failures
    assert any("red_general_1.in_capital" in str(f) for f in failures)
    with pytest.raises(LudusError, match="step 3: illegal choice: it is not green's decision"):
        run_scenario(with_ruleset(faq, "time_of_crisis", tmp_path))
