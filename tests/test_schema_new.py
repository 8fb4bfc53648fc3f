"""`ludus schema` and `ludus new`: schemas an editor can use, and a scaffold that works at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from interpreter.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _ludus(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_schema_lists_prints_and_writes_the_shipped_schemas(tmp_path, capsys):
    assert main(["schema"]) == 0
    names = capsys.readouterr().out.split()
    assert {"manifest", "rules", "scenario", "state", "log"} <= set(names)
    assert main(["schema", "rules"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((ROOT / "schemas" / "rules.schema.json").read_text())
    assert main(["schema", "--write", str(tmp_path / "out")]) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == sorted(f"{n}.schema.json" for n in names)


def test_an_unknown_schema_name_is_an_error_with_a_suggestion(capsys):
    assert main(["schema", "rulez"]) == 1
    err = capsys.readouterr().err
    assert "no schema 'rulez'" in err and "did you mean 'rules'?" in err


@pytest.mark.parametrize("extends", [None, "dice_race"])
def test_new_scaffold_validates_and_its_scenario_runs(tmp_path, extends):
    folder = tmp_path / "my_variant"
    args = ["new", str(folder)] + (["--extends", extends] if extends else [])
    made = _ludus(*args, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    for rel in ("ruleset.yaml", "rules.yaml", "README.md", "scenarios/first.yaml"):
        assert (folder / rel).is_file(), rel
    for yaml_file in folder.rglob("*.yaml"):  # every modeline points at a schema that is there
        first = yaml_file.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), yaml_file
        target = (yaml_file.parent / first.split("=", 1)[1]).resolve()
        assert target.is_file() and json.loads(target.read_text())["$schema"], yaml_file
    validated = _ludus("validate", str(folder), cwd=tmp_path)
    assert validated.returncode == 0, validated.stderr
    assert validated.stdout.startswith("my_variant 0.1.0: ok")
    ran = _ludus("scenario", str(folder / "scenarios" / "first.yaml"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    if extends is None:
        assert "p1 scores and has 1" in ran.stdout


def test_new_refuses_a_folder_that_is_not_empty(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    refused = _ludus("new", str(folder), cwd=tmp_path)
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr
    assert refused.stderr.startswith("mine: error: cannot make a ruleset here: it is a folder that is not empty")
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_new_overlay_on_an_unknown_base_writes_nothing(tmp_path, capsys):
    assert main(["new", str(tmp_path / "x"), "--extends", "dice_rase"]) == 1
    assert "did you mean 'dice_race'?" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
