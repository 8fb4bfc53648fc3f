"""``ludus docs``: values, places and an overlay's changes, as Markdown or one HTML page."""

from __future__ import annotations

import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

from interpreter.cli import main


def _docs(capsys, *argv: str) -> str:
    assert main(["docs", *argv]) == 0
    return capsys.readouterr().out


def test_markdown_shows_values_and_places(capsys):
    out = _docs(capsys, "time_of_crisis")
    assert "- **tribe**: franks, alamanni, goths, sassanids, nomads — `time_of_crisis/components.yaml:" in out
    assert "| 4 | 7 | event |" in out  # crisis_table, 4 players, a roll of 7
    assert "inflation.effect:\n\n```text\nmodify card_cost by 1 until next_event\n```" in out
    assert "step most_hits_wins (time_of_crisis/combat.yaml:" in out
    assert "/work/" not in out and "/tmp/" not in out  # places are relative to the rulesets' folder


def test_an_overlays_changes_show_before_and_after(capsys):
    out = _docs(capsys, "time_of_crisis_faq")
    assert "- **set functions/defeated_army_retreats/expr** — `time_of_crisis_faq/faq.yaml:" in out
    assert "before: `defending and g.in_capital` → after: `g.in_capital`" in out


def _overlay(tmp_path: Path, name: str, patches: str) -> Path:
    """An overlay of dice_race named ``name`` whose one file holds ``patches``."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "ruleset.yaml").write_text(f"ruleset: {name}\nversion: '1'\nextends: dice_race\nfiles: [p.yaml]\n")
    (folder / "p.yaml").write_text(textwrap.dedent(patches))
    return folder


def test_a_patched_text_is_shown_as_a_diff(tmp_path, capsys):
    folder = _overlay(tmp_path, "v", """\
        patches:
          - op: set
            path: procedures/refill_deck/do
            find: shuffle deck
            value: |-
              shuffle deck
              log "The deck is shuffled"
            source: DR 4.3
        """)
    out = _docs(capsys, str(folder))
    assert "```diff\n--- base\n+++ overlay\n" in out
    assert "\n+log \"The deck is shuffled\"\n" in out


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_is_one_page_with_every_value_escaped(tmp_path, capsys):
    folder = _overlay(tmp_path, "evil", """\
        patches:
          - op: set
            path: entities/boost/name
            value: <script>alert(1)</script>
            source: DR 1
            note: "<img src=x onerror=alert(2)>"
        """)
    out = tmp_path / "docs.html"
    assert main(["docs", str(folder), "--format", "html", "--output", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    parsed = _Tags()
    parsed.feed(page)
    assert parsed.tags[:4] == ["html", "head", "meta", "title"] and "style" in parsed.tags
    assert not {"script", "img", "link", "iframe"} & set(parsed.tags)
    assert "<script>alert(1)</script>" in "".join(parsed.text)  # shown as text
    assert "&lt;script&gt;" in page and "http" not in page
    assert {"table", "details", "h2", "h3"} <= set(parsed.tags)


def test_a_bad_format_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["docs", "dice_race", "--format", "pdf"])
    assert exit_.value.code == 1
    assert "argument --format: invalid choice: 'pdf'" in capsys.readouterr().err


def test_docs_md_snapshot(capsys, snapshot):
    assert _docs(capsys, "dice_race_short") == snapshot


def test_unwritable_output_is_a_clear_error(tmp_path, capsys):
    assert main(["docs", "dice_race", "--output", str(tmp_path / "no" / "such" / "f.md")]) == 1
    assert "cannot write --output" in capsys.readouterr().err
    assert not Path(tmp_path / "no").exists()
