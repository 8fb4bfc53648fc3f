"""The generic board: a ruleset's map drawn as SVG from its data, and its zones as lists.

A ruleset has no drawing of its board yet, so the board is found in its kinds: the *places*
are the entities of the kind that has a list field naming entities of the same kind (an
adjacency list, whatever it is called), and the links between them are those lists. They are
laid out by a force-directed layout with a fixed seed (the same ruleset, the same picture),
computed once per ruleset from its printed data. A ruleset without such a kind gets its zones
as lists only.

Everything drawn comes from one seat's :meth:`Game.view`: a hidden zone shows only its size,
an entity out of sight is not drawn. Every text comes from a ruleset written by a stranger and
is escaped. Each place and each entity drawn carries its id in ``data-value``, which the page's
script matches against the legal choices to make it clickable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

from ..dsl.types import Type
from ..model import PLAYER_KIND, Ruleset
from ..seat import name_of

if TYPE_CHECKING:
    from ..runtime import Game

WIDTH, HEIGHT, MARGIN = 1000, 640, 50
MAX_PIECES = 10  # entities drawn beside one place; more are counted
MAX_ITEMS = 60  # items listed for one zone; more are counted
PALETTE = ("#c0392b", "#2e6fd0", "#d4ac0d", "#229954", "#8e44ad", "#e67e22", "#16a085", "#7f8c8d")


@dataclass
class PlaceGraph:
    """The places of a ruleset's map and the links between them (from its printed data)."""

    kind: str
    fields: list[str]  # the list fields that link places, the one with most links first
    nodes: list[str]
    edges: list[tuple[str, str, int]]  # (a, b, index of the field in ``fields``), a < b
    pos: dict[str, tuple[float, float]] = field(default_factory=dict)  # in SVG units


_GRAPHS: dict[tuple[str, str, str | None], PlaceGraph | None] = {}


def place_graph(rs: Ruleset) -> PlaceGraph | None:
    """The ruleset's map, laid out (cached per ruleset version); None if it has none."""
    key = (rs.name, rs.digest, rs.setup)
    if key not in _GRAPHS:
        graph = _find_graph(rs)
        if graph is not None:
            graph.pos = _layout(graph)
        _GRAPHS[key] = graph
    return _GRAPHS[key]


def _self_links(rs: Ruleset, kind: str) -> list[str]:
    want = Type("list", Type("ent", kind))
    return [f.name for f in rs.kinds[kind].fields.values() if f.type is want]


def _find_graph(rs: Ruleset) -> PlaceGraph | None:
    """The kind with the most links between its own entities, as a graph."""
    best: PlaceGraph | None = None
    for kind in rs.kinds:
        names = _self_links(rs, kind)
        if not names or kind == PLAYER_KIND:
            continue
        nodes = [e for e, rec in rs.entities.items() if rec.get("kind") == kind]
        known = set(nodes)
        links: dict[str, set[tuple[str, str]]] = {}
        for name in names:
            links[name] = {(min(e, other), max(e, other)) for e in nodes
                           for other in rs.entities[e].get(name) or [] if other in known and other != e}
        order = sorted(names, key=lambda name: -len(links[name]))
        edges: dict[tuple[str, str], int] = {}
        for i, name in enumerate(order):
            for pair in links[name]:
                edges.setdefault(pair, i)  # a pair linked by several fields is drawn as the first's
        graph = PlaceGraph(kind, order, nodes, sorted((a, b, i) for (a, b), i in edges.items()))
        if len(nodes) >= 2 and graph.edges and (best is None or len(graph.edges) > len(best.edges)):
            best = graph
    return best


def _layout(graph: PlaceGraph) -> dict[str, tuple[float, float]]:
    """Fruchterman-Reingold with a fixed seed and a pull to the centre (so that separate
    pieces of a map stay on the page), scaled to the drawing."""
    import numpy as np

    n = len(graph.nodes)
    index = {e: i for i, e in enumerate(graph.nodes)}
    rng = np.random.default_rng(20240601)  # fixed: the same ruleset always gets the same picture
    pos = rng.random((n, 2))
    a = np.array([index[x] for x, _, _ in graph.edges])
    b = np.array([index[y] for _, y, _ in graph.edges])
    k = math.sqrt(1.0 / n)
    temp = 0.1
    for _ in range(300):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.maximum(np.sqrt((delta ** 2).sum(axis=2)), 1e-3)
        disp = (delta / dist[:, :, None] * (k * k / dist)[:, :, None]).sum(axis=1)
        d = pos[a] - pos[b]
        dl = np.maximum(np.sqrt((d ** 2).sum(axis=1)), 1e-3)
        pull = d / dl[:, None] * (dl * dl / k)[:, None]
        np.add.at(disp, a, -pull)
        np.add.at(disp, b, pull)
        disp += (0.5 - pos) * 0.1 * n * k  # gravity
        length = np.maximum(np.sqrt((disp ** 2).sum(axis=1)), 1e-9)
        pos += disp / length[:, None] * np.minimum(length, temp)[:, None]
        temp = max(temp * 0.985, 0.002)
    lo, hi = pos.min(axis=0), pos.max(axis=0)
    span = np.maximum(hi - lo, 1e-9)
    scaled = (pos - lo) / span
    return {e: (round(float(MARGIN + scaled[i, 0] * (WIDTH - 2 * MARGIN)), 1),
                round(float(MARGIN + scaled[i, 1] * (HEIGHT - 2 * MARGIN)), 1))
            for e, i in index.items()}


@dataclass
class Drawing:
    """A board as HTML: the SVG map (empty if the ruleset has none), the zones as lists, and
    the ids of every place and entity drawn (the choices about them are clickable)."""

    svg: str
    lists: str
    ids: set[str]


def _owner_colours(game: Game) -> dict[str, str]:
    return {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(game.players)}


def _owner(game: Game, rec: dict[str, Any], ents: dict[str, Any], depth: int = 1) -> str | None:
    """The player an entity belongs to: its first field that names a player, else (one step
    further) the owner of an entity it names (a place held through the piece on it). Only
    ``ents``, the entities of the seat's view, are looked at."""
    kind = game.rs.kinds.get(rec.get("kind", ""))
    if kind is None:
        return None
    for f in kind.fields.values():
        if f.type is Type("ent", PLAYER_KIND) and rec.get(f.name) in game.players:
            return str(rec[f.name])
    if depth > 0:
        for f in kind.fields.values():
            if f.type.tag == "ent" and isinstance(rec.get(f.name), str) and rec[f.name] in ents:
                owner = _owner(game, ents[rec[f.name]], ents, depth - 1)
                if owner is not None:
                    return owner
    return None


def _label(game: Game, eid: str) -> str:
    return escape(name_of(game, eid))


def draw(game: Game, view: dict[str, Any]) -> Drawing:
    """The board as ``view`` shows it (``view`` is ``game.view(seat)``)."""
    ids: set[str] = set()
    if game.rs.board is not None:  # the ruleset says how its board looks: drawn from that
        from .databoard import draw_board

        lists = _lists(game, view, None, ids)
        drawing = draw_board(game, view, f'<details class="allzones"><summary>Every zone</summary>{lists}</details>')
        drawing.ids |= ids
        return drawing
    graph = place_graph(game.rs)
    svg = _svg(game, view, graph, ids) if graph is not None else ""
    lists = _lists(game, view, graph, ids)
    return Drawing(svg, lists, ids)


def _svg(game: Game, view: dict[str, Any], graph: PlaceGraph, ids: set[str]) -> str:
    ents: dict[str, Any] = view["entities"]
    zones: dict[str, Any] = view["zones"]
    colours = _owner_colours(game)
    places = [e for e in graph.nodes if e in ents]  # under fog of war, a place out of sight is not drawn
    shown = set(places)
    out = [f'<svg id="board" class="board" viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg" '
           f'role="img" aria-label="the board">',
           f'<rect class="bg" x="0" y="0" width="{WIDTH}" height="{HEIGHT}"/>']
    for a, b, f in graph.edges:
        if a in shown and b in shown:
            (x1, y1), (x2, y2) = graph.pos[a], graph.pos[b]
            out.append(f'<line class="link link{min(f, 2)}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
    # Entities beside a place: those in its zones, and those with a field naming it (a location).
    beside: dict[str, list[str]] = {e: [] for e in places}
    counts: dict[str, list[str]] = {e: [] for e in places}
    kdef = game.rs.kinds[graph.kind]
    for e in places:
        for zname in kdef.zones:
            items = zones.get(f"{zname}@{e}")
            if isinstance(items, dict):
                if items.get("hidden"):
                    counts[e].append(f"{zname.replace('_', ' ')}: {items['hidden']} hidden")
            elif items:
                counts[e].append(f"{zname.replace('_', ' ')}: {len(items)}")
                beside[e].extend(items)
    pointers = {name for k in game.rs.kinds.values() if k.name != graph.kind
                for name, f in k.fields.items() if f.type is Type("ent", graph.kind)}
    if pointers:
        for eid, rec in ents.items():
            if rec.get("kind") == graph.kind or rec.get("kind") == PLAYER_KIND:
                continue
            for name in pointers:
                at = rec.get(name)
                if at in beside and eid not in beside[at]:
                    beside[at].append(eid)
    for e in places:
        x, y = graph.pos[e]
        ids.add(e)
        rec = ents[e]
        colour = colours.get(_owner(game, rec, ents) or "", "#f4ecd8")
        out.append(f'<g class="place" data-value="{escape(e)}" tabindex="0">'
                   f'<title>{_label(game, e)}</title>'
                   f'<circle class="spot" cx="{x}" cy="{y}" r="13" style="fill:{colour}"/>'
                   f'<text class="name" x="{x}" y="{y - 17}">{_label(game, e)}</text>')
        pieces = beside[e]
        rows = (min(len(pieces), MAX_PIECES) + 4) // 5
        if counts[e]:
            out.append(f'<text class="count" x="{x}" y="{y + 26 + rows * 10}">{escape("; ".join(counts[e]))}</text>')
        out.append("</g>")
        for i, pid in enumerate(pieces[:MAX_PIECES]):  # in rows of five under the place
            row_len = min(5, min(len(pieces), MAX_PIECES) - i // 5 * 5)
            px, py = round(x - row_len * 5 + (i % 5) * 10, 1), round(y + 16 + (i // 5) * 10, 1)
            pc = colours.get(_owner(game, ents.get(pid, {}), ents) or "", "#555")
            ids.add(pid)
            out.append(f'<g class="piece" data-value="{escape(pid)}"><title>{_label(game, pid)}</title>'
                       f'<rect x="{px}" y="{py}" width="9" height="9" style="fill:{pc}"/></g>')
        if len(pieces) > MAX_PIECES:
            out.append(f'<text class="more" x="{x + 36}" y="{y + 24}">+{len(pieces) - MAX_PIECES}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _items(game: Game, items: Any, ids: set[str], ents: dict[str, Any]) -> str:
    if isinstance(items, dict):  # hidden from this seat: only its size
        n = int(items.get("hidden", 0))
        return f'<span class="hidden">{n} hidden</span>' if n else '<span class="empty">empty</span>'
    if not items:
        return '<span class="empty">empty</span>'
    colours = _owner_colours(game)
    # Identical items (ten copies of a card) are one chip with a count: a list stays readable;
    # the chip carries every id (``data-also``) so that a choice about any of them finds it.
    groups: dict[str, list[str]] = {}
    for eid in items:
        groups.setdefault(name_of(game, eid), []).append(eid)
    parts = []
    for label, same in list(groups.items())[:MAX_ITEMS]:
        ids.update(same)
        rec = ents.get(same[0], {})
        style = f' style="border-color:{colours[o]}"' if (o := _owner(game, rec, ents)) in colours else ""
        also = f' data-also="{escape(" ".join(same[1:MAX_ITEMS]))}"' if len(same) > 1 else ""
        count = f" ×{len(same)}" if len(same) > 1 else ""
        parts.append(f'<span class="item" data-value="{escape(same[0])}"{also}{style}>{escape(label)}{count}</span>')
    if len(groups) > MAX_ITEMS:
        parts.append(f'<span class="more">+{len(groups) - MAX_ITEMS} more</span>')
    return " ".join(parts)


def _lists(game: Game, view: dict[str, Any], graph: PlaceGraph | None, ids: set[str]) -> str:
    """The zones beside the board: the shared ones, each player's, then the others held."""
    zones: dict[str, Any] = view["zones"]
    shared, mine, others = [], [], []
    place_zones = set(game.rs.kinds[graph.kind].zones) if graph is not None else set()
    for key, items in zones.items():
        name, _, owner = key.partition("@")
        title = escape(name.replace("_", " "))
        row = f'<li><span class="zone">{title}</span> {_items(game, items, ids, view["entities"])}</li>'
        if not owner:
            shared.append(row)
        elif owner in game.players:
            mine.append((owner, row))
        elif name not in place_zones and items:
            others.append(f'<li><span class="zone">{title} of {_label(game, owner)}</span> '
                          f'{_items(game, items, ids, view["entities"])}</li>')
    out = ['<div class="zones">']
    if shared:
        out.append('<h3>Zones</h3><ul>' + "".join(shared) + "</ul>")
    for p in game.players:
        rows = [r for o, r in mine if o == p]
        if rows:
            out.append(f'<h3 class="owner" style="color:{_owner_colours(game)[p]}">{_label(game, p)}</h3>'
                       f'<ul>{"".join(rows)}</ul>')
    if others:
        out.append('<details><summary>Held elsewhere</summary><ul>' + "".join(others) + "</ul></details>")
    out.append("</div>")
    return "".join(out)
