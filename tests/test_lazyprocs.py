"""A warm load checks each procedure body and rules function at its first run
(interpreter/dsl/lazyprocs.py) and ends up with what a cold load builds: the same procedures,
resume points, sites, signals, remembered results and generated Python (up to the numbering of
generated names)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from interpreter import load_ruleset
from interpreter.dsl.lazyprocs import Facts, LazySites
from interpreter.loader import last_load
from interpreter.model import Ruleset

NUMBERED = re.compile(r"\b[A-Za-z_]+\d+\b")  # generated names: R12, P3, e40, _k7, list5 ...


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LUDUS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def warm_and_cold(name: str) -> tuple[Ruleset, Ruleset]:
    cold = load_ruleset(name, cache=False)
    load_ruleset(name)  # writes the entry
    warm = load_ruleset(name)
    assert last_load().cache == "hit"  # type: ignore[union-attr]
    assert isinstance(warm.sites, LazySites)
    return warm, cold


def places(rs: Ruleset, name: str) -> dict[int, str]:
    return {n: str(origin.locate(line, col)) for n, (origin, line, col) in rs.procedures[name].points.items()}


@pytest.mark.parametrize("name", ["time_of_crisis", "pax_romana", "dice_race", "rome_in_crisis"])
def test_a_warm_load_builds_what_a_cold_load_builds(cache: Path, name: str) -> None:
    warm, cold = warm_and_cold(name)
    assert warm.procedures.keys() == cold.procedures.keys()
    for pname in cold.procedures:
        assert places(warm, pname) == places(cold, pname), pname
    assert warm.signals == cold.signals and warm.fields_written == cold.fields_written
    # which results of rules functions are remembered, and which changes forget them
    for memo in ("memo_count", "memo_always", "memo_constant", "memo_volatile", "memo_readers", "index_slots"):
        assert getattr(warm, memo) == getattr(cold, memo), memo
    # every generated function, the bodies' among them (writing one checks its body first)
    cold_src = sorted(NUMBERED.sub("N", s) for s in cold.codegen.sources())  # type: ignore[union-attr]
    warm_src = sorted(NUMBERED.sub("N", s) for s in warm.codegen.sources())  # type: ignore[union-attr]
    assert warm_src == cold_src
    assert sorted(warm.sites) == sorted(cold.sites)
    for key, site in cold.sites.items():
        assert warm.sites[key].captured == site.captured


def test_a_site_is_there_before_its_procedure_runs(cache: Path) -> None:
    """A saved game's modifier names its site; the body that makes it is checked on the lookup."""
    warm, cold = warm_and_cold("time_of_crisis")
    assert cold.sites
    for key, site in cold.sites.items():
        found = warm.sites.get(key)
        assert found is not None and found.captured == site.captured, key
    assert warm.sites.get("no_such_procedure#3") is None and "main#999" not in warm.sites


def test_facts_read_only_their_own_form() -> None:
    good = Facts(["main"], [], ["s"], ["f"], {"main": [(1, 0, 2, 3)]}, {"g": (True, 1, 1, [["field", "f"]])}, ["f"])
    assert Facts.read(good.plain()) == good
    bad = [None, [], {"procs": []}, {**good.plain(), "extra": 1}, {**good.plain(), "procs": [1]},
           {**good.plain(), "points": {"main": [[1, 2, 3]]}}, {**good.plain(), "points": {"main": [[1, 2, 3, "4"]]}},
           {**good.plain(), "points": []}, {**good.plain(), "signals": "s"},
           {**good.plain(), "functions": {"g": [1, 1, 1, []]}}, {**good.plain(), "functions": {"g": [True, 1, 1, [[1]]]}},
           {**good.plain(), "functions": {"g": [True, 1, 1]}}, {k: v for k, v in good.plain().items() if k != "functions"},
           {**good.plain(), "indexed": "f"}, {**good.plain(), "indexed": [1]}]
    for value in bad:
        with pytest.raises(ValueError):
            Facts.read(value)
