"""A plain (non-editable) install carries the bundled rulesets and schemas: a wheel is built,
installed into a fresh virtual environment and used from a folder outside the source tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """(the venv's ludus, a working folder outside the tree, the environment to run it in)."""
    base = tmp_path_factory.mktemp("wheel")
    # built from a copy: an in-tree build would leave build/ in the checkout, whose stale files
    # a later build could pick up
    source = base / "source"
    for name in ("interpreter", "rulesets", "schemas"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    build = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                  "-w", str(base / "dist"), str(source)], base, dict(os.environ))
    assert build.returncode == 0, build.stdout + build.stderr
    wheel = next((base / "dist").glob("ludus-*.whl"))
    # the venv sees this interpreter's packages (lark, ruamel.yaml, ...) so nothing is downloaded;
    # the wheel installed into it shadows the editable install of the source tree
    venv.create(base / "venv", system_site_packages=True, with_pip=True)
    bindir = base / "venv" / ("Scripts" if os.name == "nt" else "bin")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LUDUS_PATH")}
    env["LUDUS_CACHE"] = str(base / "cache")
    pip = _run([str(bindir / "python"), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)], base, env)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    outside = base / "work"
    outside.mkdir()
    return bindir, outside, env


def test_the_installed_package_is_the_wheel_not_the_source_tree(installed):
    bindir, outside, env = installed
    where = _run([str(bindir / "python"), "-c", "import interpreter.bundled as b; print(b.RULESETS_DIR, b.SCHEMA_DIR)"],
                 outside, env)
    rulesets, schemas = where.stdout.split()
    assert "site-packages" in rulesets and rulesets.endswith(os.path.join("_data", "rulesets"))
    assert "site-packages" in schemas and not Path(schemas).is_relative_to(ROOT)
    # the parser's tables ship too (without them every rules text would be parsed by Lark)
    tables = _run([str(bindir / "python"), "-c", "from interpreter.dsl import lalr_table as t; "
                   "print(t.TABLE, t.load_table() is not None)"], outside, env)
    assert "site-packages" in tables.stdout and tables.stdout.split()[-1] == "True", tables.stdout + tables.stderr


def test_validate_docs_play_and_scenario_work_from_outside_the_tree(installed):
    bindir, outside, env = installed
    ludus = str(bindir / "ludus")
    validate = _run([ludus, "validate", "time_of_crisis", "pax_romana", "rome_in_crisis"], outside, env)
    assert validate.returncode == 0, validate.stderr
    assert "pax_romana 0.1.0: ok" in validate.stdout
    docs = _run([ludus, "docs", "pax_romana"], outside, env)
    assert docs.returncode == 0 and docs.stdout.startswith("# Pax Romana"), docs.stderr
    play = _run([ludus, "play", "dice_race", "--players", "2", "--seed", "3", "--quiet"], outside, env)
    assert play.returncode == 0 and "winner" in play.stdout, play.stderr
    shutil.copy(ROOT / "tests" / "scenarios" / "pax_romana" / "fleet_battle_won.yaml", outside / "mine.yaml")
    scenario = _run([ludus, "scenario", "mine.yaml"], outside, env)
    assert scenario.returncode == 0, scenario.stdout + scenario.stderr
    assert "rome's fleet ends its move at Patrae" in scenario.stdout


def test_an_invalid_ruleset_is_a_located_error_not_a_traceback(installed):
    bindir, outside, env = installed
    (outside / "broken").mkdir()
    (outside / "broken" / "ruleset.yaml").write_text("ruleset: broken\nversion: 1\n", encoding="utf-8")
    bad = _run([str(bindir / "ludus"), "validate", "broken"], outside, env)
    assert bad.returncode == 1
    assert "Traceback" not in bad.stderr and "ruleset.yaml:" in bad.stdout + bad.stderr
