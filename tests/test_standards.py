"""Standing rules of the project, checked on every run."""

from __future__ import annotations

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
    r"|frank|alamanni|nomad|diocletian|legatus|praetorian|battlegroup|invasion|crisis|runner|sprint)", re.I)


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
