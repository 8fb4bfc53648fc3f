"""Standing rules of the project, checked on every run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from interpreter.loader import bundled_names, load_ruleset

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_YAML = sorted(p for p in (ROOT / "rulesets").rglob("*.y*ml"))
SCHEMA_LINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")
# Words of the bundled games; the engine must not know any of them (rulesets/ holds game knowledge).
GAME_WORDS = re.compile(
    r"(^|[^a-z])(legion|barbarian|emperor|senate|populace|militia|pretender|italia|governor|sassanid|goth"
    r"|frank|alamanni|nomad|diocletian|legatus|praetorian|battlegroup|invasion|crisis|runner|sprint"
    r"|spqr|palmyra|persia|aurelian|probus|gordian|valerian|gallienus|trebonian|aemilian|florian|numerian"
    r"|carinus|quintillus|maximinus|tacitus|pupienus|balbinus|decius|claudius|carus|cavalry)", re.I)
# The engine's own test game (its words are in GAME_WORDS); every other bundled ruleset is a game
# whose component ids the engine must not name either.
ENGINE_TEST_GAMES = {"dice_race", "dice_race_short"}


@pytest.mark.parametrize("path", SHIPPED_YAML, ids=[str(p.relative_to(ROOT)) for p in SHIPPED_YAML])
def test_shipped_yaml_names_its_schema_for_editors(path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = SCHEMA_LINE.match(first)
    assert match, f"{path.relative_to(ROOT)} must start with '# yaml-language-server: $schema=...'"
    schema = (path.parent / match.group(1)).resolve()
    assert schema.is_file(), f"{match.group(1)} does not exist"
    expected = "manifest" if path.name == "ruleset.yaml" else "rules"
    assert schema.name == f"{expected}.schema.json"


@pytest.mark.parametrize("name", bundled_names())
def test_every_bundled_ruleset_validates(name):
    rs = load_ruleset(name)
    assert rs.name == name


def test_the_engine_knows_no_game():
    hits = []
    for path in sorted((ROOT / "interpreter").rglob("*")):
        if path.suffix not in (".py", ".lark"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if GAME_WORDS.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert hits == []


def engine_lines():
    for path in sorted((ROOT / "interpreter").rglob("*")):
        if path.suffix in (".py", ".lark"):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                yield path, n, line


@pytest.mark.parametrize("name", sorted(set(bundled_names()) - ENGINE_TEST_GAMES))
def test_the_engine_names_no_component_of_a_game(name):
    rs = load_ruleset(name)
    # each entity id, and the id a 'count:' expanded it from (goths_5_2 -> goths_5)
    words = set(rs.entities) | {re.sub(r"_\d+$", "", eid) for eid in rs.entities}
    pattern = re.compile(r"(?<![a-z0-9_])(" + "|".join(sorted(map(re.escape, words))) + r")(?![a-z0-9_])", re.I)
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path, n, line in engine_lines() if pattern.search(line)]
    assert hits == []


@pytest.mark.parametrize("kind", ["manifest", "rules", "scenario", "state", "log"])
def test_the_schemas_are_valid_json_schemas(kind):
    from jsonschema import Draft202012Validator

    schema = json.loads((ROOT / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
