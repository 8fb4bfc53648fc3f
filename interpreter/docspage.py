"""The reference page ``ludus docs`` writes: every entry with its values, its place and its
source, and for an overlay what each patch changed — as Markdown or as one HTML page.

The page is built as a list of blocks (headings, entries, tables, code, diffs) by
:func:`blocks`, then written by :func:`markdown` or :func:`html`. A section the page has no
special view for (a new one) is shown generically, its entries' keys and values as a table.
Rule files are untrusted: every value goes through ``html.escape`` in the HTML page, and file
places are relative to the rulesets' folder (never a machine's absolute path).
"""

from __future__ import annotations

import difflib
import html as _html
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .model import Ruleset

TITLES = {"enums": "Enumerations", "kinds": "Kinds", "constants": "Constants", "zones": "Zones",
          "globals": "Globals", "entities": "Components", "tables": "Tables", "functions": "Functions",
          "modifier_points": "Modifier points", "procedures": "Procedures", "actions": "Actions",
          "invariants": "Invariants", "status": "Status", "setups": "Set-ups"}
META = ("source", "note")
MAX_CELL = 200  # characters of a value shown in a table cell


@dataclass
class Block:
    """One part of the page: ``kind`` is h1, h2, p, entry, table, code or diff."""

    kind: str
    text: str = ""
    rows: list[list[str]] = field(default_factory=list)  # a table's rows, the first its header
    place: str = ""  # an entry's file:line
    source: str = ""
    note: str = ""
    value: str = ""  # an entry's value, when one line says it


def place(rs: Ruleset, path: tuple[Any, ...], key: bool = True) -> str:
    """``folder/file.yaml:line`` of an entry, relative to the folder holding the ruleset folders."""
    loc = rs.smap.loc(path, key=key)
    if not loc.file or loc.line <= 0:
        return ""
    p = Path(loc.file)
    return f"{p.parent.name}/{p.name}:{loc.line}"


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split()) if "\n" not in text.strip() else text.strip().replace("\n", " ⏎ ")
    return text if len(text) <= MAX_CELL else text[:MAX_CELL - 1] + "…"


def _entry(rs: Ruleset, sec: str, eid: str, spec: dict[str, Any], value: str = "") -> Block:
    return Block("entry", eid, place=place(rs, (sec, eid)), source=str(spec.get("source", "")),
                 note=str(spec.get("note", "")), value=value)


def _code(out: list[Block], label: str, text: Any) -> None:
    if text is None:
        return
    out.append(Block("p", label))
    out.append(Block("code", str(text).rstrip("\n")))


def _kinds(rs: Ruleset, eid: str, spec: dict[str, Any], out: list[Block]) -> None:
    rows = [["field", "type", "default"]]
    for fname, fspec in (spec.get("fields") or {}).items():
        if isinstance(fspec, dict):
            ftype = str(fspec.get("type", "any"))
            if ftype == "procedure":
                params = ", ".join(f"{k}: {v}" for k, v in (fspec.get("params") or {}).items())
                ftype = f"procedure({params})"
            rows.append([fname, ftype, _cell(fspec["default"]) if "default" in fspec else ""])
        else:
            rows.append([fname, str(fspec), ""])
    if len(rows) > 1:
        out.append(Block("table", rows=rows))


def _tables(rs: Ruleset, eid: str, spec: dict[str, Any], out: list[Block]) -> None:
    keys = spec.get("keys", ["key"])
    names = list(keys) if isinstance(keys, dict | list) else ["key"]
    last = "result" if "value" in names else "value"
    rows = [[*names, f"{last} ({spec['values']})" if "values" in spec else last]]

    def walk(prefix: list[str], node: Any, depth: int) -> None:
        if depth == 0 or not isinstance(node, dict):
            rows.append([*prefix, *[""] * (len(names) - len(prefix)), _cell(node)])
            return
        for k, v in node.items():
            walk([*prefix, str(k)], v, depth - 1)
    walk([], spec.get("rows") or {}, len(names))
    out.append(Block("table", rows=rows))
    if "default" in spec:
        out.append(Block("p", f"default: {_cell(spec['default'])}"))


def _signature(spec: dict[str, Any]) -> str:
    params = ", ".join(f"{k}: {v}" for k, v in (spec.get("params") or {}).items())
    return f"({params})"


def _functions(rs: Ruleset, eid: str, spec: dict[str, Any], out: list[Block]) -> None:
    out.append(Block("p", f"{eid}{_signature(spec)} → {spec.get('returns', 'any')}"))
    _code(out, "", spec.get("expr"))


def _points(rs: Ruleset, eid: str, spec: dict[str, Any], out: list[Block]) -> None:
    out.append(Block("p", f"{eid}{_signature(spec)} → {spec.get('type', 'int')}"))
    _code(out, "", spec.get("base"))


def _procedures(rs: Ruleset, eid: str, spec: dict[str, Any], out: list[Block]) -> None:
    out.append(Block("p", f"{eid}{_signature(spec)}"))
    if "steps" in spec:
        for step, text in (spec.get("steps") or {}).items():
            _code(out, f"step {step} ({place(rs, ('procedures', eid, 'steps', step))}):", text)
    else:
        _code(out, "", spec.get("do"))


def _actions(rs: Ruleset, eid: str, spec: dict[str, Any], out: list[Block]) -> None:
    params = spec.get("params") or {}
    facts = [f"group {spec.get('group', 'actions')}"] + [f"{k} from {_cell(v)}" for k, v in params.items()]
    out.append(Block("p", "; ".join(facts)))
    for key in ("if", "label"):
        if key in spec:
            out.append(Block("p", f"{key}: `{_cell(spec[key])}`" if key == "if" else f"label: {_cell(spec[key])}"))
    _code(out, "", spec.get("do"))


def _generic(rs: Ruleset, eid: str, spec: dict[str, Any], out: list[Block]) -> None:
    rows = [["key", "value"]] + [[str(k), _cell(v)] for k, v in spec.items() if k not in META]
    if len(rows) > 1:
        out.append(Block("table", rows=rows))


def _components(rs: Ruleset, specs: dict[str, Any], out: list[Block]) -> None:
    """Components grouped by kind, one table per kind: id, count, zone, the fields they give;
    the procedures they carry as code after the table."""
    by_kind: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for eid, spec in specs.items():
        by_kind.setdefault(str((spec or {}).get("kind")), []).append((eid, spec or {}))
    for kind, members in by_kind.items():
        procs = set(rs.kinds[kind].procs if kind in rs.kinds else {})
        fields = [f for f in dict.fromkeys(k for _e, s in members for k in s)
                  if f not in (*META, "kind", "count", "zone") and f not in procs]
        out.append(Block("p", f"**{kind}** ({len(members)})"))
        rows = [["id", "count", "zone", *fields, "place", "source"]]
        for eid, spec in members:
            rows.append([eid, str(spec.get("count", "")), str(spec.get("zone", "") or ""),
                         *[_cell(spec[f]) if f in spec else "" for f in fields],
                         place(rs, ("entities", eid)), str(spec.get("source", ""))])
        out.append(Block("table", rows=rows))
        for eid, spec in members:
            for p in sorted(procs & set(spec)):
                _code(out, f"{eid}.{p}:", spec[p])


VIEWS: dict[str, Callable[[Ruleset, str, dict[str, Any], list[Block]], None]] = {
    "kinds": _kinds, "tables": _tables, "functions": _functions, "modifier_points": _points,
    "procedures": _procedures, "actions": _actions,
}


def _simple(sec: str, spec: dict[str, Any]) -> str:
    """The one-line value of an entry of a section whose entries are small."""
    if sec == "enums":
        return ", ".join(map(str, spec.get("values") or []))
    if sec == "constants":
        return f"{spec.get('type')} = {_cell(spec.get('value'))}"
    if sec == "globals":
        return f"{spec.get('type', 'any')}, initially {_cell(spec.get('initial'))}"
    if sec == "zones":
        parts = [f"holds {spec.get('holds', 'anything')}"]
        parts += [f"one per {spec['per']}"] if spec.get("per") else []
        parts += [str(spec.get("visibility", "public"))]
        return ", ".join(parts)
    return ""


def blocks(rs: Ruleset, base: Ruleset | None = None) -> list[Block]:
    """The page of ``rs`` (``base``: the ruleset an overlay extends, for its patches' before values)."""
    out = [Block("h1", rs.title),
           Block("p", f"Ruleset `{rs.name}` version {rs.version}, {rs.min_players}-{rs.max_players} players.")]
    if len(rs.chain) > 1:
        out.append(Block("p", "Built on: " + " -> ".join(Path(p).parent.name for p in rs.chain)))
    sections = [s for s in TITLES if rs.data.get(s)]
    sections += [s for s in rs.data if s not in TITLES and s not in ("patches", "scoring", "report", "board") and isinstance(rs.data[s], dict)]
    for sec in sections:
        out.append(Block("h2", TITLES.get(sec, sec.replace("_", " ").capitalize())))
        if sec == "entities":
            _components(rs, rs.data[sec], out)
            continue
        for eid, spec in rs.data[sec].items():
            spec = spec if isinstance(spec, dict) else {"value": spec}
            simple = _simple(sec, spec)
            out.append(_entry(rs, sec, eid, spec, simple))
            if not simple:
                VIEWS.get(sec, _generic)(rs, eid, spec, out)
    if rs.data.get("scoring"):
        out.append(Block("h2", "Scoring"))
        scoring = rs.data["scoring"]
        out.append(Block("entry", "scoring", place=place(rs, ("scoring",)), source=str(scoring.get("source", ""))))
        _generic(rs, "scoring", scoring, out)
    for single, title in (("report", "Report"), ("board", "Board")):  # one entry each, like scoring
        if isinstance(rs.data.get(single), dict):
            out.append(Block("h2", title))
            spec = rs.data[single]
            out.append(Block("entry", single, place=place(rs, (single,)), source=str(spec.get("source", ""))))
            _generic(rs, single, spec, out)
    _changes(rs, base, out)
    return out


def _changes(rs: Ruleset, base: Ruleset | None, out: list[Block]) -> None:
    patches = rs.data.get("patches") or []
    if not patches:
        return
    out.append(Block("h2", "Changes"))
    out.append(Block("p", f"What this overlay changes in {Path(rs.chain[-2]).parent.name if len(rs.chain) > 1 else 'its base'}"
                     ", patch by patch: the value in the base, then the new one."))
    for i, patch in enumerate(patches):
        path = str(patch.get("path", ""))
        op = str(patch.get("op", ""))
        out.append(Block("entry", f"{op} {path}", place=place(rs, ("patches", i), key=False),
                         source=str(patch.get("source", "")), note=str(patch.get("note", ""))))
        before = _at(base.data, path) if base is not None else _MISSING
        after = _at(rs.data, path)
        if isinstance(before, str) and isinstance(after, str) and ("\n" in before or "\n" in after):
            diff = difflib.unified_diff(before.splitlines(), after.splitlines(), "base", "overlay", lineterm="")
            out.append(Block("diff", "\n".join(diff)))
            continue
        shown_before = "(absent)" if before is _MISSING else _cell(before)
        shown_after = "(removed)" if after is _MISSING else _cell(after)
        out.append(Block("p", f"before: `{shown_before}` → after: `{shown_after}`"))


_MISSING = object()


def _at(data: Any, path: str) -> Any:
    for step in [p for p in path.strip("/").split("/") if p]:
        if isinstance(data, dict) and step in data:
            data = data[step]
        elif isinstance(data, list) and step.lstrip("-").isdigit() and -len(data) <= int(step) < len(data):
            data = data[int(step)]
        else:
            return _MISSING
    return data


# ------------------------------------------------------------------ writers
def markdown(page: list[Block]) -> str:
    """The page as GitHub Markdown."""
    out: list[str] = []
    for b in page:
        if b.kind == "h1":
            out += [f"# {b.text}", ""]
        elif b.kind == "h2":
            out += ["", f"## {b.text}", ""]
        elif b.kind == "entry":
            line = f"- **{b.text}**" + (f": {b.value}" if b.value else "") + (f" — `{b.place}`" if b.place else "") \
                + f" — source: {b.source or '?'}"
            out.append(line + (f" — note: {b.note}" if b.note else ""))
        elif b.kind == "p":
            if b.text:
                out += ["", b.text, ""]
        elif b.kind == "table":
            out.append("")
            out.append("| " + " | ".join(_md_cell(c) for c in b.rows[0]) + " |")
            out.append("|" + " --- |" * len(b.rows[0]))
            out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows[1:]]
            out.append("")
        elif b.kind in ("code", "diff"):
            out += ["```" + ("diff" if b.kind == "diff" else "text"), b.text.replace("```", "ʼʼʼ"), "```"]
    return "\n".join(out).replace("\n\n\n", "\n\n") + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


_CSS = ("body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}"
        "table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}td,th{border:1px solid #ccc;padding:.2rem .5rem;"
        "text-align:left;vertical-align:top}th{background:#f3f3f3}pre{background:#f7f7f7;padding:.5rem;overflow:auto}"
        ".place{color:#666;font-family:monospace}.src{color:#555}.del{color:#a00}.add{color:#070}")


def html(page: list[Block]) -> str:
    """The page as one self-contained HTML document (inline style, no script, no link out)."""
    e = _html.escape
    title = next((b.text for b in page if b.kind == "h1"), "Ruleset")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{e(title)}</title>",
           f"<style>{_CSS}</style></head><body>"]
    for b in page:
        if b.kind == "h1":
            out.append(f"<h1>{e(b.text)}</h1>")
        elif b.kind == "h2":
            out.append(f"<h2>{e(b.text)}</h2>")
        elif b.kind == "entry":
            note = f" — {e(b.note)}" if b.note else ""
            value = f": {e(b.value)}" if b.value else ""
            out.append(f'<h3>{e(b.text)}{value} <span class="place">{e(b.place)}</span></h3>'
                       f'<p class="src">source: {e(b.source or "?")}{note}</p>')
        elif b.kind == "p":
            if b.text:
                out.append(f"<p>{e(b.text)}</p>")
        elif b.kind == "table":
            head = "".join(f"<th>{e(c)}</th>" for c in b.rows[0])
            body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in b.rows[1:])
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif b.kind == "code":
            out.append(f"<details><summary>rules text</summary><pre>{e(b.text)}</pre></details>")
        elif b.kind == "diff":
            lines = [f'<span class="{"del" if ln.startswith("-") else "add" if ln.startswith("+") else ""}">'
                     f"{e(ln)}</span>" for ln in b.text.splitlines()]
            out.append("<pre>" + "\n".join(lines) + "</pre>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
