"""`ludus lsp` driven over stdio by a real LSP client, on a copy of Time of Crisis."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lspclient import Session, find
from lsprotocol import types as lsp

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def toc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of Time of Crisis and its FAQ overlay, the overlay extending the copy."""
    for name in ("time_of_crisis", "time_of_crisis_faq"):
        shutil.copytree(ROOT / "rulesets" / name, tmp_path / name)
    manifest = tmp_path / "time_of_crisis_faq" / "ruleset.yaml"
    manifest.write_text(manifest.read_text().replace("extends: time_of_crisis", "extends: ../time_of_crisis"))
    monkeypatch.setenv("LUDUS_CACHE", str(tmp_path / "cache"))  # the server inherits it
    return tmp_path


def run(root: Path, body: Callable[[Session], Awaitable[None]]) -> None:
    async def main() -> None:
        session = Session(root)
        await session.start()
        try:
            await asyncio.wait_for(body(session), 60)
        finally:
            await session.stop()
    asyncio.run(main())


def test_a_planted_type_error_is_reported_at_its_range_then_cleared(toc):
    senate = toc / "time_of_crisis" / "senate.yaml"
    text = senate.read_text()
    line, col = find(text, "decrease actor.senate by spent")
    col += len("decrease actor.senate by ")

    async def body(s: Session) -> None:
        uri = s.open(senate)
        await s.wait_for(lambda: uri in s.diagnostics)
        assert s.diagnostics[uri] == []  # the copy is valid
        s.edit(senate, line, col, col + len("spent"), '"spent"')  # text where a number is needed
        await s.wait_for(lambda: s.diagnostics.get(uri))
        [d] = s.diagnostics[uri]
        assert "wrong type: the amount must be a number, not text" in d.message
        assert d.range == lsp.Range(lsp.Position(line, col), lsp.Position(line, col + 1))
        assert d.severity == lsp.DiagnosticSeverity.Error and d.source == "ludus"
        s.edit(senate, line, col, col + len('"spent"'), "spent")
        await s.wait_for(lambda: s.diagnostics.get(uri) == [])

    run(toc, body)


def test_an_unknown_name_is_underlined_whole_and_did_you_mean_is_a_quick_fix(toc):
    senate = toc / "time_of_crisis" / "senate.yaml"
    text = senate.read_text()
    line, col = find(text, "decrease actor.senate by spent")
    col += len("decrease actor.senate by ")

    async def body(s: Session) -> None:
        uri = s.open(senate, text.replace("decrease actor.senate by spent", "decrease actor.senate by spnt"))
        await s.wait_for(lambda: s.diagnostics.get(uri))
        [d] = s.diagnostics[uri]
        assert d.message.startswith("unknown name 'spnt'")
        assert (d.range.start.character, d.range.end.character) == (col, col + 4)
        [action] = await s.code_actions(senate, [d])
        assert action.title == "Change to 'spent'"
        [edit] = action.edit.changes[uri]
        assert edit.new_text == "spent" and edit.range == d.range

    run(toc, body)


def test_broken_yaml_is_a_diagnostic_and_the_server_keeps_serving(toc):
    turn = toc / "time_of_crisis" / "turn.yaml"

    async def body(s: Session) -> None:
        uri = s.open(turn, "procedures: {main: [\n")
        await s.wait_for(lambda: s.diagnostics.get(uri))
        assert "YAML syntax" in s.diagnostics[uri][0].message
        s.replace_all(turn, turn.read_text())
        await s.wait_for(lambda: s.diagnostics.get(uri) == [])
        assert (await s.hover(turn, *find(turn.read_text(), "vacate:"))) is not None

    run(toc, body)


def test_hover_on_place_governor_shows_its_kind_and_source(toc):
    senate = toc / "time_of_crisis" / "senate.yaml"
    line, col = find(senate.read_text(), "place_governor:")

    async def body(s: Session) -> None:
        s.open(senate)
        hover = await s.hover(senate, line, col + 3)
        assert hover is not None
        assert "**action** `place_governor`" in hover.contents.value
        assert "source: `ToC 6.3.2`" in hover.contents.value
        assert hover.range == lsp.Range(lsp.Position(line, col), lsp.Position(line, col + len("place_governor")))

    run(toc, body)


def test_definition_of_a_function_used_in_another_file_and_its_references(toc):
    senate, turn = toc / "time_of_crisis" / "senate.yaml", toc / "time_of_crisis" / "turn.yaml"
    line, col = find(senate.read_text(), "ruler(r) != actor")
    def_line, def_col = find(turn.read_text(), "\n  ruler:")

    async def body(s: Session) -> None:
        s.open(senate)
        [loc] = await s.definition(senate, line, col + 2)
        assert loc.uri == turn.as_uri()
        assert loc.range.start == lsp.Position(def_line + 1, 2)
        refs = await s.references(senate, line, col + 2)
        files = {Path(r.uri.removeprefix("file://")).name for r in refs}
        assert {"senate.yaml", "turn.yaml", "combat.yaml"} <= files
        assert any(r.uri == senate.as_uri() and r.range.start == lsp.Position(line, col) for r in refs)

    run(toc, body)


def test_completion_after_a_region_parameter_offers_the_region_fields(toc):
    combat = toc / "time_of_crisis" / "combat.yaml"
    text = combat.read_text()
    line, col = find(text, "[m for m in r.garrison]")
    col += len("[m for m in r.")

    async def body(s: Session) -> None:
        s.open(combat)
        items = {i.label: i for i in await s.complete(combat, line, col)}
        assert {"support", "garrison", "barbarians", "adjacent", "governor"} <= set(items)
        assert items["support"].kind == lsp.CompletionItemKind.Field
        assert "hand" not in items  # a player's zone, not a region's
        plain = {i.label for i in await s.complete(combat, line, col - 2)}  # before 'r.': ids, builtins, keywords
        assert {"ruler", "count", "for", "r", "target"} <= plain

    run(toc, body)


def test_an_overlays_broken_patch_is_reported_in_the_overlay_and_a_base_error_in_the_base(toc):
    faq = toc / "time_of_crisis_faq" / "faq.yaml"
    text = faq.read_text()
    line, col = find(text, "functions/defeated_army_retreats/expr")
    senate = toc / "time_of_crisis" / "senate.yaml"
    base_text = senate.read_text()
    base_line, base_col = find(base_text, "decrease actor.senate by spent")

    async def body(s: Session) -> None:
        uri = s.open(faq)
        await s.wait_for(lambda: uri in s.diagnostics)
        assert s.diagnostics[uri] == []
        s.replace_all(faq, text.replace("defeated_army_retreats", "defeated_army_retreat"))
        await s.wait_for(lambda: s.diagnostics.get(uri))
        [d] = s.diagnostics[uri]
        assert "defeated_army_retreat" in d.message
        assert d.range.start.line == line
        s.replace_all(faq, text)
        await s.wait_for(lambda: s.diagnostics.get(uri) == [])
        # a base file, changed in the editor, breaks the overlay: reported at the base file's line
        s.open(senate, base_text.replace("decrease actor.senate by spent", "decrease actor.senate by spnt"))
        await s.wait_for(lambda: s.diagnostics.get(senate.as_uri()))
        [b] = s.diagnostics[senate.as_uri()]
        assert b.range.start == lsp.Position(base_line, base_col + len("decrease actor.senate by "))
        assert s.diagnostics[uri] == []

    run(toc, body)


def test_a_broken_set_up_is_reported_on_open_like_validate_does(toc):
    setup = toc / "time_of_crisis" / "setup.yaml"
    text = setup.read_text()
    line, col = find(text, "after: starting_provinces")

    async def body(s: Session) -> None:
        uri = s.open(setup, text.replace("after: starting_provinces", "after: starting_provincez"))
        await s.wait_for(lambda: s.diagnostics.get(uri))
        [d] = s.diagnostics[uri]
        assert "starting_provincez" in d.message and d.range.start.line == line

    run(toc, body)


def test_a_garbage_manifest_and_a_stray_file_get_answers_not_a_crash(toc):
    manifest = toc / "time_of_crisis" / "ruleset.yaml"
    stray = toc / "notes.yaml"
    stray.write_text("just: [some, yaml]\n")

    async def body(s: Session) -> None:
        uri = s.open(manifest, "ruleset: [\n\x00")
        await s.wait_for(lambda: s.diagnostics.get(uri))
        assert s.diagnostics[uri][0].range.start.line <= 1
        s.open(stray)
        assert await s.hover(stray, 0, 1) is None
        assert await s.complete(stray, 0, 1) == []
        s.replace_all(manifest, manifest.read_text())
        await s.wait_for(lambda: s.diagnostics.get(uri) == [])

    run(toc, body)


def test_hover_on_a_field_after_a_dot_shows_the_field_of_that_kind(toc):
    combat = toc / "time_of_crisis" / "combat.yaml"
    line, col = find(combat.read_text(), "r.garrison]")

    async def body(s: Session) -> None:
        s.open(combat)
        hover = await s.hover(combat, line, col + 3)
        assert hover is not None and hover.contents.value.startswith("**zone** `region.garrison` — holds ")
        [loc] = await s.definition(combat, line, col + 3)
        assert loc.uri == (toc / "time_of_crisis" / "components.yaml").as_uri()
        support_line, support_col = find(combat.read_text(), "r.support")
        hover = await s.hover(combat, support_line, support_col + 3)
        assert hover is not None and hover.contents.value.startswith("**field** `region.support`: int")

    run(toc, body)


# ---------------------------------------------------------------- the loader over unsaved texts (in process)
def test_unsaved_texts_are_read_in_place_of_the_files_and_bypass_the_load_cache(toc):
    from interpreter.diagnostics import LudusError
    from interpreter.loader import load_ruleset
    from interpreter.yamlsource import unsaved_texts

    folder = toc / "time_of_crisis"
    load_ruleset(folder)  # a valid load: now in the cache (LUDUS_CACHE is the fixture's)
    senate = folder / "senate.yaml"
    broken = senate.read_text().replace("decrease actor.senate by spent", "decrease actor.senate by spnt")
    with unsaved_texts({str(senate): broken}), pytest.raises(LudusError) as exc:
        load_ruleset(folder)  # the cache's entry matches the disk, not the editor's text
    assert "unknown name 'spnt'" in str(exc.value)
    load_ruleset(folder)  # outside the block, the disk again


def test_an_unsaved_text_meets_the_same_size_limit_as_a_file(toc):
    from interpreter.loader import check_ruleset
    from interpreter.yamlsource import MAX_FILE_BYTES, unsaved_texts

    folder = toc / "time_of_crisis"
    huge = "# " + "x" * MAX_FILE_BYTES + "\n"
    with unsaved_texts({str(folder / "senate.yaml"): huge}):
        checked = check_ruleset((folder / "ruleset.yaml").resolve())
    assert checked.ruleset is None
    assert [d.message for d in checked.diagnostics] == [f"file too large: more than {MAX_FILE_BYTES:,} bytes"]
