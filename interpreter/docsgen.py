"""Human-readable reference generated from a ruleset's data, and `where` look-ups."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .model import Ruleset

ENTRY_SECTIONS = ("kinds", "zones", "globals", "entities", "tables", "functions", "modifier_points",
                  "procedures", "actions")


def entries(rs: Ruleset) -> list[tuple[str, str, dict[str, Any]]]:
    """Every (section, id, entry) of the merged ruleset, in file order."""
    out = []
    for sec in ENTRY_SECTIONS:
        for eid, spec in (rs.data.get(sec) or {}).items():
            out.append((sec, eid, spec or {}))
    if rs.data.get("scoring"):
        out.append(("scoring", "scoring", rs.data["scoring"]))
    for i, patch in enumerate(rs.data.get("patches") or []):
        out.append(("patches", f"{patch.get('op')} {patch.get('path')}", patch | {"_index": i}))
    return out


def _loc(rs: Ruleset, sec: str, eid: str, spec: dict[str, Any]) -> str:
    if sec == "scoring":
        return str(rs.smap.loc(("scoring",), key=True))
    if sec == "patches":
        return str(rs.smap.loc(("patches", spec["_index"])))
    return str(rs.smap.loc((sec, eid), key=True))


def cites(source: str, section: str) -> bool:
    """Whether ``source`` ('ToC 6.3.2, 6.4; FAQ 3') cites ``section`` or a subsection of it.

    A number belongs to the abbreviation written before it, so 'ToC 6.3.2, 6.4' cites
    both ToC 6.3.2 and ToC 6.4.
    """
    abbr, _, num = section.strip().rpartition(" ")
    current = ""
    for token in re.findall(r"[A-Za-z][\w-]*|\d+(?:\.\d+)*", source):
        if not token[0].isdigit():
            current = token
            continue
        if abbr and current != abbr:
            continue
        if token == num or token.startswith(num + "."):
            return True
    return False


def where(rs: Ruleset, section: str) -> list[str]:
    """Lines naming every entry whose source cites ``section``."""
    lines = []
    for sec, eid, spec in entries(rs):
        src = str(spec.get("source", ""))
        if src and src != "reconstructed" and cites(src, section):
            loc = _loc(rs, sec, eid, spec)
            lines.append(f"{loc}: {sec}/{eid} ({src})" if loc else f"{sec}/{eid} ({src})")
    return lines


def reconstructed(rs: Ruleset) -> list[tuple[str, str, str, str]]:
    """Every entry marked ``source: reconstructed``: (location, section, id, note)."""
    return [(_loc(rs, sec, eid, spec), sec, eid, str(spec.get("note", "")))
            for sec, eid, spec in entries(rs) if spec.get("source") == "reconstructed"]


def render(rs: Ruleset) -> str:
    """A Markdown reference of the ruleset."""
    out = [f"# {rs.title}", "", f"Ruleset `{rs.name}` version {rs.version}, {rs.min_players}-{rs.max_players} players."]
    if len(rs.chain) > 1:
        out.append("Built on: " + " -> ".join(Path(p).parent.name for p in rs.chain))
    titles = {"kinds": "Kinds", "zones": "Zones", "globals": "Globals", "entities": "Components",
              "tables": "Tables", "functions": "Functions", "modifier_points": "Modifier points",
              "procedures": "Procedures", "actions": "Actions", "scoring": "Scoring", "patches": "Patches"}
    current = None
    for sec, eid, spec in entries(rs):
        if sec != current:
            out += ["", f"## {titles[sec]}", ""]
            current = sec
        src = spec.get("source", "?")
        extra = ""
        if sec == "entities" and spec.get("count"):
            extra = f" ×{spec['count']}"
        if sec == "actions":
            extra = f" (group {spec.get('group')})"
        line = f"- **{eid}**{extra} — source: {src}"
        if spec.get("note"):
            line += f" — note: {spec['note']}"
        out.append(line)
    recon = reconstructed(rs)
    out += ["", "## Reconstructed data", ""]
    if recon:
        out.append("These entries are not printed in the source documents; owners of the physical game can "
                   "correct them with an overlay.")
        out.append("")
        for loc, sec, eid, note in recon:
            out.append(f"- {sec}/{eid} ({loc}): {note}")
    else:
        out.append("None: every entry cites its source.")
    return "\n".join(out) + "\n"
