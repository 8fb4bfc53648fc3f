"""Human-readable reference generated from a ruleset's data, and `where` look-ups."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .model import Ruleset

ENTRY_SECTIONS = ("enums", "kinds", "constants", "zones", "globals", "entities", "tables", "functions",
                  "modifier_points", "procedures", "actions")


def entries(rs: Ruleset) -> list[tuple[str, str, dict[str, Any]]]:
    """Every (section, id, entry) of the merged ruleset, in file order."""
    out = []
    for sec in ENTRY_SECTIONS:
        for eid, spec in (rs.data.get(sec) or {}).items():
            out.append((sec, eid, spec or {}))
    for single in ("scoring", "report", "board"):  # one entry each, not a mapping of ids
        if rs.data.get(single):
            out.append((single, single, rs.data[single]))
    for i, patch in enumerate(rs.data.get("patches") or []):
        out.append(("patches", f"{patch.get('op')} {patch.get('path')}", patch | {"_index": i}))
    return out


def _loc(rs: Ruleset, sec: str, eid: str, spec: dict[str, Any]) -> str:
    if sec in ("scoring", "report", "board"):
        return str(rs.smap.loc((sec,), key=True))
    if sec == "patches":
        return str(rs.smap.loc(("patches", spec["_index"])))
    return str(rs.smap.loc((sec, eid), key=True))


# A section is numbered (6.3.2, 8b) or lettered, as in rule texts whose parts are letters
# (O, O.8, O.8b, L.1e): one capital letter, then numbers; any other word is an abbreviation.
_TOKEN = re.compile(r"[A-Z](?:\.\d+[a-z]?)*(?!\w)|[A-Za-z][\w-]*|\d+(?:\.\d+)*[a-z]?")


def _is_section(token: str) -> bool:
    return token[0].isdigit() or (token[0].isupper() and (len(token) == 1 or token[1] == "."))


def _under(token: str, num: str) -> bool:
    """Whether section ``token`` is ``num`` or one of its parts (6.3 under 6; O.8b under O.8)."""
    if token == num or token.startswith(num + "."):
        return True
    return token.startswith(num) and token[len(num):].isalpha() and token[len(num) - 1].isdigit()


def cites(source: str, section: str) -> bool:
    """Whether ``source`` ('ToC 6.3.2, 6.4; FAQ 3', 'EiC O.8b') cites ``section`` or a part of it.

    A section belongs to the abbreviation written before it, so 'ToC 6.3.2, 6.4' cites
    both ToC 6.3.2 and ToC 6.4.
    """
    abbr, _, num = section.strip().rpartition(" ")
    current = ""
    for token in _TOKEN.findall(source):
        if not _is_section(token):
            current = token
            continue
        if abbr and current != abbr:
            continue
        if _under(token, num):
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


def render(rs: Ruleset, fmt: str = "md") -> str:
    """The reference page of the ruleset (``md`` or ``html``): see :mod:`interpreter.docspage`."""
    from .docspage import Block, blocks, html, markdown
    from .loader import load_ruleset

    base = load_ruleset(Path(rs.chain[-2]).parent) if len(rs.chain) > 1 else None
    page = blocks(rs, base)
    page.append(Block("h2", "Reconstructed data"))
    recon = reconstructed(rs)
    if recon:
        page.append(Block("p", "These entries are not printed in the source documents; owners of the physical game "
                          "can correct them with an overlay."))
        page.append(Block("table", rows=[["entry", "place", "note"]] +
                          [[f"{sec}/{eid}", _short_place(loc), note] for loc, sec, eid, note in recon]))
    else:
        page.append(Block("p", "None: every entry cites its source."))
    return html(page) if fmt == "html" else markdown(page)


def _short_place(loc: str) -> str:
    """``folder/file.yaml:line`` of a location (no machine path in a shared page)."""
    path, _, rest = loc.partition(".yaml:")
    return f"{Path(path).parent.name}/{Path(path).name}.yaml:{rest.split(':')[0]}" if rest else loc
