"""Run a Markdown page as a test: write the files it shows, run its `$ ludus` commands, and
compare what they print with what the page says they print.

A **file** is a fenced block right after a line that ends with the file's path in backticks and
a colon (`` `rulesets/pig/rules.yaml`: ``, also `` `tests/x.yaml` (next to `rulesets/`): ``).
A **command block** is a fence whose first line starts with ``$ ``: each ``$ ludus ...`` line is
run (in-process, in the page's folder) and the lines up to the next ``$`` are its expected output
(stdout and stderr together). A line ``…`` stands for any number of lines. A block right after
the comment ``<!-- not run -->`` is skipped (an interactive session, a deliberate typo).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from interpreter.cli import main

_FILE = re.compile(r"`([\w./-]+\.(?:ya?ml|md|jsonl?))`(?: \([^)]*\))?:\s*$")
SKIP = "<!-- not run -->"


@dataclass
class Command:
    line: int  # where the command is on the page
    argv: list[str]
    expected: list[str] = field(default_factory=list)


@dataclass
class Page:
    files: dict[str, str] = field(default_factory=dict)  # path -> text, in the order shown
    commands: list[Command] = field(default_factory=list)


def read_page(path: Path) -> Page:
    """The files and commands of a Markdown page, in order (see the module docstring)."""
    page = Page()
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    before = ""  # the last non-blank line outside a fence
    while i < len(lines):
        line = lines[i]
        if not line.startswith("```"):
            if line.strip():
                before = line.strip()
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        body = lines[i + 1:end]
        named = _FILE.search(before)
        if before == SKIP:
            pass
        elif named:
            page.files[named.group(1)] = "\n".join(body) + "\n"
        elif body and body[0].startswith("$ "):
            for k, text in enumerate(body):
                if text.startswith("$ "):
                    argv = shlex.split(text[2:])
                    assert argv[0] == "ludus", f"{path}:{i + 2 + k}: only ludus commands are run"
                    page.commands.append(Command(i + 2 + k, argv[1:]))
                else:
                    page.commands[-1].expected.append(text)
        before = ""
        i = end + 1
    return page


def run(argv: list[str], cwd: Path) -> list[str]:
    """What ``ludus ARGV`` prints in ``cwd``, stdout and stderr together, line by line."""
    out = io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            main(argv)
    finally:
        os.chdir(old)
    return out.getvalue().splitlines()


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``expected`` line by line (right-stripped), ``…`` matching any lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() == "…":
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and actual[0].rstrip() == head.rstrip() and matches(rest, actual[1:])
