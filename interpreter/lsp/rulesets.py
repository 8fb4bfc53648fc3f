"""Which ruleset a file belongs to, and checking rulesets over the texts open in the editor.

A check is the loader's own (:func:`interpreter.loader.check_ruleset`): the same stages, the
same messages and places as `ludus validate`, run over the editor's unsaved texts
(:func:`interpreter.yamlsource.unsaved_texts`) rather than the files on disk. Parsed rules
texts are remembered from one check to the next (an :class:`AstMemo`, first filled from the
load cache when its entry is current), so an edit re-parses only the texts it changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..diagnostics import Diagnostic, Loc
from ..dsl.astmemo import AstMemo
from ..finder import MANIFEST, find_ruleset_from
from ..loader import Checked, check_ruleset
from ..yamlsource import unsaved_texts

# How far up from a file its ruleset.yaml is looked for (rules files may sit in subfolders).
MAX_LEVELS = 4
# Parsed texts kept at most; past it the memo starts afresh (each edit adds a text or two).
MAX_MEMO_ENTRIES = 50_000


def manifest_for(path: Path) -> Path | None:
    """The ruleset.yaml a file belongs to: itself, or the nearest one in the folders above it."""
    if path.name == MANIFEST:
        return path
    folder = path.parent
    for _ in range(MAX_LEVELS):
        candidate = folder / MANIFEST
        try:
            if candidate.is_file():
                return candidate.resolve()
        except OSError:
            return None
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def files_read(checked: Checked, manifest: Path) -> set[Path]:
    """Every file a check of ``manifest`` read (or tried to): the manifests of its chain and their files."""
    files = {manifest}
    if checked.document is None:
        return files
    for path, data, _smap in checked.document.manifests:
        files.add(path)
        listed = data.get("files") if isinstance(data, dict) else None
        for name in listed if isinstance(listed, list) else []:
            files.add(_resolved(path.parent / str(name)))
    return files


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path


class RulesetChecks:
    """The last check of every ruleset the editor has touched, and the files each one read."""

    def __init__(self) -> None:
        self.results: dict[Path, Checked] = {}
        self.reads: dict[Path, set[Path]] = {}  # manifest -> the files its last check read
        self.last_good: dict[Path, Checked] = {}  # manifest -> its last check that built a ruleset
        self.memo = AstMemo()
        self._seeded: set[Path] = set()
        # what the last check of each ruleset's set-ups found (they are checked on open and save)
        self.setup_diagnostics: dict[Path, list[Diagnostic]] = {}

    def manifests_reading(self, path: Path) -> list[Path]:
        """The rulesets a change of ``path`` can change: its own, and every checked one that read it
        (an overlay reads its base's files)."""
        found = [m for m, files in self.reads.items() if path in files]
        own = manifest_for(path)
        if own is not None and own not in found:
            found.insert(0, own)
        return found

    def check(self, manifest: Path, unsaved: Mapping[str, str], setups: bool = False) -> Checked:
        """Check one ruleset over the editor's texts; never raises (an engine fault is a diagnostic).

        ``setups``: when the ruleset is valid, check it with each of its named set-ups too, as
        `ludus validate` does (their diagnostics are added to the result).
        """
        self._seed(manifest)
        if len(self.memo.entries) > MAX_MEMO_ENTRIES:
            self.memo = AstMemo()
        try:
            with unsaved_texts(unsaved):
                checked = check_ruleset(manifest, self.memo)
                if setups:
                    found: list[Diagnostic] = []
                    for name in checked.ruleset.setups if checked.ruleset is not None else ():
                        found.extend(check_ruleset(manifest, self.memo, name).diagnostics)
                    self.setup_diagnostics[manifest] = found
                if checked.ruleset is not None:  # kept from the last open or save until the next
                    checked.diagnostics.extend(self.setup_diagnostics.get(manifest, []))
        except RecursionError:
            checked = Checked([Diagnostic(Loc(str(manifest), 1, 1), "the ruleset nests too deeply to check",
                                          "run 'ludus validate' on it for the full report")])
        except Exception as exc:  # the server must outlive any input; the report says what broke
            checked = Checked([Diagnostic(Loc(str(manifest), 1, 1),
                                          f"internal error while checking: {type(exc).__name__}: {exc}",
                                          "run 'ludus validate' on it; please report this")])
        self.results[manifest] = checked
        self.reads[manifest] = files_read(checked, manifest)
        if checked.ruleset is not None and not checked.diagnostics:
            self.last_good[manifest] = checked
        return checked

    def _seed(self, manifest: Path) -> None:
        """Fill the memo from the load cache's entry for ``manifest``, once, if it is current."""
        if manifest in self._seeded:
            return
        self._seeded.add(manifest)
        from .. import loadcache
        try:
            where = loadcache.cache_dir(None)
            folder = loadcache.open_folder(where)[0] if where is not None else None
            hit = loadcache.lookup(folder, manifest, find_ruleset_from)[0] if folder is not None else None
        except Exception:  # the cache only ever speeds a check up
            return
        if hit is not None:
            for key, text in hit.asts.items():
                self.memo.entries.setdefault(key, text)
