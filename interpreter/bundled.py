"""Where the data that ships with Ludus lives: the bundled rulesets and the JSON Schemas.

A wheel carries them inside the package (``interpreter/_data/rulesets``, ``interpreter/_data/schemas``:
pyproject.toml maps the source tree's top-level ``rulesets/`` and ``schemas/`` there). A checkout
or an editable install reads the top-level folders themselves, so an edit shows at once.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
SOURCE_ROOT = _PACKAGE.parent


def data_dir(name: str) -> Path:
    """The folder of bundled ``rulesets`` or ``schemas``: the installed copy if there is one, else the source tree's."""
    installed = _PACKAGE / "_data" / name
    return installed if installed.is_dir() else SOURCE_ROOT / name


RULESETS_DIR = data_dir("rulesets")
SCHEMA_DIR = data_dir("schemas")
