"""Hostile YAML, paths that lead out of a ruleset, and names that are not whole names (issue 11).

- YAML: anchors and aliases (a "billion laughs" in a rules file, a manifest or a scenario),
  nesting past ``yamlsource.MAX_DEPTH``, integers longer than ``MAX_INT_DIGITS``, files over
  ``MAX_FILE_BYTES``: each a located error, the same from the fast and the full reader.
- Paths: ``files`` stay inside the ruleset's folder and ``extends`` inside the bundled and
  ``LUDUS_PATH`` folders or the workspace (the folder around the ruleset named on the command
  line), symlinks followed; the file outside is neither read nor quoted.
- Names: every place a name is accepted refuses one ending in a newline (``$`` alone lets it by).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile import HOSTILE, assert_refused, run_ludus

from interpreter import Game, load_ruleset
from interpreter import yamlsource as Y
from interpreter.diagnostics import LudusError
from interpreter.dsl import source as codegen
from interpreter.loader import MAX_EXTENDS, MAX_FILES, find_ruleset

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "tests" / "broken" / "_base"
MANIFEST = "ruleset: kit\nversion: '1'\ntitle: Kit\nplayers: {min: 2, max: 2}\nfiles: [game.yaml]\n"


def kit(folder: Path, game: str, manifest: str = MANIFEST) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ruleset.yaml").write_text(manifest, encoding="utf-8")
    (folder / "game.yaml").write_text(game, encoding="utf-8")
    return folder


# ------------------------------------------------------------------------------ YAML
@pytest.mark.parametrize("where, argv", [
    ("yaml", ["validate", "rules_alias_bomb"]),
    ("yaml", ["validate", "manifest_alias_bomb"]),
    ("yaml", ["scenario", "scenario_alias_bomb.yaml"]),
    ("yaml", ["validate", "rules_merge_alias"]),
], ids=["rules", "manifest", "scenario", "merge_key"])
def test_alias_bombs_are_refused_at_the_first_anchor(where: str, argv: list[str], snapshot: Any) -> None:
    outcome = run_ludus(argv, cwd=HOSTILE / where)
    assert_refused(outcome)
    assert "anchor" in outcome.err
    assert outcome.err == snapshot


def _deep_block(levels: int) -> str:
    return "notes:\n" + "".join("  " * (i + 1) + f"a{i}:\n" for i in range(levels)) + "  " * (levels + 1) + "end\n"


COSTLY = {
    "flow_list_100000_deep": "notes: " + "[" * 100_000 + "\n",
    "flow_mapping_100000_deep": "notes: " + "{a: " * 100_000 + "\n",
    "block_mapping_150_deep": _deep_block(150),
    "integer_5000_digits": "notes: " + "7" * 5000 + "\n",
    "hex_integer_5000_digits": "notes: 0x" + "f" * 5000 + "\n",
    "integer_key_5000_digits": "notes:\n  " + "7" * 5000 + ": x\n",
    "file_over_1_mib": "notes: x\n" + "# padding\n" * (Y.MAX_FILE_BYTES // 10),
    # past FULL_READER_BYTES, refused by the fast reader itself (see test_big_files_are_read_once)
    "syntax_error_after_100_kib": "notes:\n" + "".join(f"  k{i}: value\n" for i in range(7_000)) + "  z: [\n",
    "anchor_after_100_kib": "notes:\n" + "".join(f"  k{i}: value\n" for i in range(7_000)) + "  z: &a 1\n",
}


@pytest.mark.parametrize("end, message", [("z: &a 1", "YAML anchor '&a'"), ("z: *a", "YAML alias '*a'"),
                                          ("z: " + "1" * 200, "number too long"), ("z: " + "[" * 200, "nested too deeply"),
                                          ("z: [", "YAML syntax: did not find expected node content")])
def test_big_files_are_read_once(end: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "notes:\n" + "".join(f"  k{i}: value\n" for i in range(30_000)) + "  " + end + "\n"
    assert len(text) > Y.FULL_READER_BYTES
    monkeypatch.setattr(Y, "_yaml", lambda: pytest.fail("read a second time, in pure Python"))
    with pytest.raises(LudusError, match=r"^f.yaml:3000\d:\d+: error: " + re.escape(message)):
        Y.load_yaml_text(text, "f.yaml")


@pytest.mark.parametrize("case", sorted(COSTLY))
def test_costly_yaml_is_refused_with_a_located_error(case: str, tmp_path: Path, snapshot: Any) -> None:
    kit(tmp_path / "kit", COSTLY[case])
    outcome = run_ludus(["validate", "kit"], cwd=tmp_path)
    assert_refused(outcome)
    assert outcome.located_lines()[0].startswith("kit/game.yaml:")
    assert outcome.err == snapshot


def test_bytes_that_are_not_utf8_are_located(tmp_path: Path, snapshot: Any) -> None:
    folder = kit(tmp_path / "kit", "")
    (folder / "game.yaml").write_bytes("notes:\n  a: é\n  b: x".encode() + b"\xed\xa0\x80\n")
    outcome = run_ludus(["validate", "kit"], cwd=tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot


def test_a_costly_manifest_is_refused_too(tmp_path: Path, snapshot: Any) -> None:
    kit(tmp_path / "kit", "", MANIFEST.replace("version: '1'", "version: " + "9" * 5000))
    outcome = run_ludus(["validate", "kit"], cwd=tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
REFUSED_TEXTS = [BOMB, "a: 1\nb: *nowhere\n", "a: !!str &x 1\n", "- &x [1]\n", "[" * 101 + "]" * 101,
                 "a:\n" + "".join("  " * (i + 1) + "- \n" for i in range(120)), "n: -" + "1" * 101 + "\n",
                 "n: 0o" + "7" * 200 + "\n", "n: 1_000" + "0" * 200 + "\n", "x: [\n" + "[" * 200]


@pytest.mark.parametrize("text", REFUSED_TEXTS, ids=range(len(REFUSED_TEXTS)))
def test_fast_and_full_readers_refuse_alike(text: str) -> None:
    errors = []
    for fast in (True, False):
        with pytest.raises(LudusError) as caught:
            Y.load_yaml_text(text, "f.yaml", fast=fast)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("f.yaml:") and "YAML syntax" not in errors[0]


def test_the_limits_leave_room_for_real_data(tmp_path: Path) -> None:
    deep = "[" * (Y.MAX_DEPTH - 3) + "1" + "]" * (Y.MAX_DEPTH - 3)
    for fast in (True, False):
        assert Y.load_yaml_text("a: " + deep + "\n", "f.yaml", fast=fast)[0]["a"]
        assert Y.load_yaml_text("n: " + "9" * Y.MAX_INT_DIGITS + "\n", "f.yaml", fast=fast)[0]["n"] == int("9" * 100)
    # a value that deep goes through the schema checks, the compiler and a game
    game = (BASE / "game.yaml").read_text(encoding="utf-8").replace("      partner: token\n",
                                                                       "      partner: token\n      extra: any\n")
    game = game.replace("    value: 3\n", "    value: 3\n    extra: " + "[" * (Y.MAX_DEPTH - 3) + "]" * (Y.MAX_DEPTH - 3) + "\n")
    folder = kit(tmp_path / "kit", game, (BASE / "ruleset.yaml").read_text(encoding="utf-8"))
    assert Game.new(load_ruleset(folder), 2, 1).state["entities"]["gold"]["extra"]


# ------------------------------------------------------------------------------ paths
@pytest.mark.parametrize("case", ["files_absolute", "files_dotdot", "extends_absolute", "extends_dotdot",
                                  "extends_outside"])
def test_paths_out_of_the_ruleset_are_refused(case: str, snapshot: Any) -> None:
    outcome = run_ludus(["validate", case], cwd=HOSTILE / "paths")
    assert_refused(outcome)
    assert "root:" not in outcome.out + outcome.err  # /etc/passwd is neither read nor quoted
    assert outcome.err == snapshot


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_symlinks_out_of_the_ruleset_are_refused(tmp_path: Path, snapshot: Any) -> None:
    outside = tmp_path / "elsewhere"
    kit(outside / "secret_base", "kinds: {}\n")
    (outside / "secret.yaml").write_text("secret: SECRET-LINE\n", encoding="utf-8")
    work = tmp_path / "work"
    kit(work / "reader", "", MANIFEST.replace("[game.yaml]", "[game.yaml, linked.yaml]"))
    (work / "reader" / "linked.yaml").symlink_to(outside / "secret.yaml")
    (work / "base_link").symlink_to(outside / "secret_base", target_is_directory=True)
    (work / "climber").mkdir()
    (work / "climber" / "ruleset.yaml").write_text("ruleset: climber\nversion: '1'\nextends: ../base_link\nfiles: []\n")
    for case in ("reader", "climber"):
        outcome = run_ludus(["validate", case], cwd=work)
        assert_refused(outcome)
        assert "SECRET" not in outcome.err
        assert outcome.err == snapshot(name=case)


def _overlay(folder: Path, extends: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ruleset.yaml").write_text(f"ruleset: variant\nversion: '2'\nextends: {extends}\nfiles: []\n")
    return folder


def test_extends_may_name_a_sibling_a_bundled_ruleset_or_one_under_ludus_path(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    base = kit(tmp_path / "work" / "base", (BASE / "game.yaml").read_text(encoding="utf-8"),
               (BASE / "ruleset.yaml").read_text(encoding="utf-8"))
    assert load_ruleset(_overlay(tmp_path / "work" / "sibling", "../base")).name == "variant"
    assert load_ruleset(_overlay(tmp_path / "work" / "bundled", "dice_race")).name == "variant"
    pack = tmp_path / "pack"
    kit(pack / "packed", (BASE / "game.yaml").read_text(encoding="utf-8"),
        (BASE / "ruleset.yaml").read_text(encoding="utf-8"))
    monkeypatch.setenv("LUDUS_PATH", str(pack))
    assert load_ruleset(_overlay(tmp_path / "work" / "by_name", "packed")).name == "variant"
    assert load_ruleset(_overlay(tmp_path / "work" / "by_path", str(pack / "packed"))).name == "variant"
    # files in a subfolder are inside the ruleset's folder
    (base / "rules").mkdir()
    (base / "game.yaml").rename(base / "rules" / "game.yaml")
    (base / "ruleset.yaml").write_text((base / "ruleset.yaml").read_text().replace("- game.yaml", "- rules/game.yaml"))
    assert load_ruleset(base).name == "tiny"


def test_the_workspace_is_the_folder_around_the_ruleset_named(tmp_path: Path) -> None:
    kit(tmp_path / "a" / "base", (BASE / "game.yaml").read_text(encoding="utf-8"),
        (BASE / "ruleset.yaml").read_text(encoding="utf-8"))
    for overlay, extends in ((tmp_path / "b" / "mod", "../../a/base"), (tmp_path / "a" / "x" / "mod", "../../base")):
        with pytest.raises(LudusError, match="outside the folders a ruleset may extend"):
            load_ruleset(_overlay(overlay, extends))


def test_what_one_load_may_read_is_bounded(tmp_path: Path, snapshot: Any) -> None:
    many = kit(tmp_path / "many", "", MANIFEST.replace("[game.yaml]", "[" + ", ".join(["game.yaml"] * (MAX_FILES + 1)) + "]"))
    big = kit(tmp_path / "big", "notes: x\n" + "# padding\n" * (Y.MAX_FILE_BYTES // 11),
              MANIFEST.replace("[game.yaml]", "[" + ", ".join(["game.yaml"] * 9) + "]"))
    for i in range(MAX_EXTENDS + 1):
        if i == 0:
            kit(tmp_path / "chain" / "r0", (BASE / "game.yaml").read_text(encoding="utf-8"),
                (BASE / "ruleset.yaml").read_text(encoding="utf-8"))
        else:
            _overlay(tmp_path / "chain" / f"r{i}", f"../r{i - 1}")
    for case in (many, big, tmp_path / "chain" / f"r{MAX_EXTENDS}"):
        outcome = run_ludus(["validate", str(case.relative_to(tmp_path))], cwd=tmp_path)
        assert_refused(outcome)
        assert outcome.err == snapshot(name=case.name)


def test_table_row_ranges_are_bounded(tmp_path: Path, snapshot: Any) -> None:
    manifest = (BASE / "ruleset.yaml").read_text(encoding="utf-8")
    game = (BASE / "game.yaml").read_text(encoding="utf-8")
    assert load_ruleset(kit(tmp_path / "digits", game.replace("      1: 1\n", '      "²-3": 1\n'), manifest))
    kit(tmp_path / "wide", game.replace("      1: 1\n", '      "1-9999999999": 1\n'), manifest)
    kit(tmp_path / "many", game.replace("      1: 1\n", "".join(f'      "{i}000000-{i}099999": 1\n' for i in range(1, 3))),
        manifest)
    for case in ("wide", "many"):
        outcome = run_ludus(["validate", case], cwd=tmp_path)
        assert_refused(outcome)
        assert outcome.err == snapshot(name=case)


def test_entities_made_by_count_are_bounded(tmp_path: Path, snapshot: Any) -> None:
    manifest = (BASE / "ruleset.yaml").read_text(encoding="utf-8")
    game = (BASE / "game.yaml").read_text(encoding="utf-8").replace("    value: 3\n", "    value: 3\n    count: 1000000000\n")
    kit(tmp_path / "kit", game, manifest)
    outcome = run_ludus(["validate", "kit"], cwd=tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot


@pytest.mark.parametrize("op, step", [("set", "²"), ("add", "abc"), ("remove", "--1"), ("set", "9" * 5000),
                                      ("replace", "-0x1")])
def test_patch_paths_into_lists_take_only_whole_indexes(op: str, step: str, tmp_path: Path) -> None:
    manifest, game = _base()
    game["scoring"]["tiebreaks"] = ["1"]
    game["patches"] = [{"op": op, "path": f"scoring/tiebreaks/{step}", "value": "2", "source": "T 1"}]
    folder = tmp_path / "kit"
    folder.mkdir()
    (folder / "ruleset.yaml").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    (folder / "game.yaml").write_text(json.dumps(game, indent=1), encoding="utf-8")
    with pytest.raises(LudusError) as caught:
        load_ruleset(folder)
    assert [d.loc.line for d in caught.value.diagnostics] and all(d.loc.line > 0 for d in caught.value.diagnostics)
    assert "tiebreaks" in str(caught.value)


def test_a_ruleset_without_main_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    kit(tmp_path / "kit", (BASE / "game.yaml").read_text(encoding="utf-8").replace("  main:\n", "  other:\n"),
        (BASE / "ruleset.yaml").read_text(encoding="utf-8"))
    with pytest.raises(LudusError, match=r"^kit/ruleset.yaml:7:3: error: the ruleset has no 'main' procedure"):
        load_ruleset(tmp_path / "kit")


@pytest.mark.parametrize("spec", ["x" * 5000, "x/" * 3000, "a\0b", "..", "", "/" + "y" * 300 + "/z"],
                         ids=["long_name", "long_path", "nul", "dotdot", "empty", "long_component"])
def test_any_ruleset_name_gives_the_no_ruleset_error(spec: str) -> None:
    with pytest.raises(LudusError) as caught:
        find_ruleset(spec)
    message = str(caught.value)
    assert "no ruleset" in message and len(message) < 400


def test_a_long_ruleset_name_on_the_command_line(snapshot: Any) -> None:
    outcome = run_ludus(["validate", "q" * 5000])
    assert_refused(outcome, located=False)
    assert outcome.err.splitlines()[0] == snapshot  # (the summary line after it repeats the argument)


# ------------------------------------------------------------------------------ names
def _base() -> tuple[dict[str, Any], dict[str, Any]]:
    manifest = Y.load_yaml_text((BASE / "ruleset.yaml").read_text(encoding="utf-8"), "m")[0]
    game = Y.load_yaml_text((BASE / "game.yaml").read_text(encoding="utf-8"), "g")[0]
    return manifest, game


def _entry(**more: Any) -> dict[str, Any]:
    return {"source": "T 1", **more}


Mutation = Callable[[dict[str, Any], dict[str, Any], str], None]
NAME_CASES: dict[str, Mutation] = {
    "kind id": lambda m, g, n: g["kinds"].update({n: _entry(fields={"v": "int"})}),
    "zone id": lambda m, g, n: g["zones"].update({n: _entry()}),
    "global id": lambda m, g, n: g["globals"].update({n: _entry(type="int")}),
    "entity id": lambda m, g, n: g["entities"].update({n: _entry(kind="token", value=2)}),
    "table id": lambda m, g, n: g["tables"].update({n: _entry(rows={"1": 1})}),
    "function id": lambda m, g, n: g["functions"].update({n: _entry(returns="int", expr="1")}),
    "modifier point id": lambda m, g, n: g.update({"modifier_points": {n: _entry(type="int", base="1")}}),
    "procedure id": lambda m, g, n: g["procedures"].update({n: _entry(do="pass")}),
    "action id": lambda m, g, n: g["actions"].update({n: _entry(group="turn", do="pass")}),
    "field name": lambda m, g, n: g["kinds"]["token"]["fields"].update({n: "int"}),
    "function parameter": lambda m, g, n: g["functions"].update({"f": _entry(params={n: "int"}, returns="int", expr="1")}),
    "procedure parameter": lambda m, g, n: g["procedures"].update({"helper": _entry(params={n: "int"}, do="pass")}),
    "modifier point parameter": lambda m, g, n: g.update(
        {"modifier_points": {"bonus": _entry(type="int", params={n: "int"}, base="1")}}),
    "action parameter": lambda m, g, n: g["actions"]["take"]["params"].update({n: "[1, 2]"}),
    "action group": lambda m, g, n: g["actions"]["wait"].update(group=n),
    "entity field": lambda m, g, n: (g["kinds"]["token"]["fields"].update(extra="int"),
                                     g["entities"]["gold"].update({n: 1})),
    "entity kind": lambda m, g, n: (g["kinds"].update(extra=_entry(fields={"v": "int"})),
                                    g["entities"].update(more=_entry(kind=n))),
    "entity zone": lambda m, g, n: (g["zones"].update(extra=_entry()), g["entities"]["gold"].update(zone=n)),
    "zone holds": lambda m, g, n: (g["kinds"].update(extra=_entry(fields={"v": "int"})),
                                   g["zones"].update(more=_entry(holds=n))),
    "kind label": lambda m, g, n: g["kinds"]["token"].update(label="value" if n == "extra" else "value\n"),
    "table key name": lambda m, g, n: g["tables"]["points"].update(keys=[n]),
    "scoring metric": lambda m, g, n: g["scoring"].update(metrics={n: "1"}),
    "patch path": lambda m, g, n: g.update(patches=[{"op": "add", "path": f"kinds/token/fields/{n}", "value": "int",
                                                     "source": "T 1"}]),
    "source": lambda m, g, n: g["kinds"]["token"].update(source="reconstructed" + n[5:], note="a note"),
    "ruleset name": lambda m, g, n: m.update(ruleset=n),
    "seat name": lambda m, g, n: m.update(seats=["red", n]),
}


def _write_names_case(folder: Path, mutate: Mutation, name: str) -> Path:
    manifest, game = _base()
    mutate(manifest, game, name)
    folder.mkdir(parents=True)
    # JSON is YAML too, and writes any text (a newline as \n) exactly
    (folder / "ruleset.yaml").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    (folder / "game.yaml").write_text(json.dumps(game, indent=1), encoding="utf-8")
    return folder


@pytest.mark.parametrize("case", list(NAME_CASES))
def test_a_name_ending_in_a_newline_is_refused(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               snapshot: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_ruleset(_write_names_case(tmp_path / "good", NAME_CASES[case], "extra"))  # the same, named well
    with pytest.raises(LudusError) as caught:
        load_ruleset(_write_names_case(tmp_path / "bad", NAME_CASES[case], "extra\n"))
    assert all(d.loc.line > 0 for d in caught.value.diagnostics)
    assert str(caught.value) == snapshot


def test_an_extends_ending_in_a_newline_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    kit(tmp_path / "base", (BASE / "game.yaml").read_text(encoding="utf-8"),
        (BASE / "ruleset.yaml").read_text(encoding="utf-8"))
    assert load_ruleset(_overlay(tmp_path / "good", '"../base"'))
    for spec in ('"../base\\n"', '"dice_race\\n"'):
        with pytest.raises(LudusError, match=r"good/ruleset.yaml:3:10: error: extends unknown ruleset"):
            load_ruleset(_overlay(tmp_path / "good", spec))


def test_a_name_with_a_newline_is_refused_by_the_cli(tmp_path: Path, snapshot: Any) -> None:
    _write_names_case(tmp_path / "bad", NAME_CASES["kind id"], "extra\n")
    outcome = run_ludus(["validate", "bad"], cwd=tmp_path)
    assert_refused(outcome)
    assert outcome.err == snapshot


def test_an_entity_created_with_a_newline_in_its_id_is_refused(tmp_path: Path) -> None:
    def called(m: dict[str, Any], g: dict[str, Any], n: str) -> None:
        g["globals"]["chosen"] = _entry(type="str", initial=n)
        g["procedures"]["main"]["do"] = "create token in bag called chosen\n" + g["procedures"]["main"]["do"]

    assert "extra" in Game.new(load_ruleset(_write_names_case(tmp_path / "good", called, "extra")), 2, 1).ents
    with pytest.raises(LudusError, match=r"cannot create 'extra\\n': ids are snake_case"):
        Game.new(load_ruleset(_write_names_case(tmp_path / "bad", called, "extra\n")), 2, 1)


def test_generated_code_takes_only_whole_names() -> None:
    assert codegen.local("goal") == "v_goal"
    with pytest.raises(ValueError):
        codegen.local("goal\n")
