"""The board a ruleset describes (its ``board:`` section, docs/board.md), drawn as SVG.

Drawn from one seat's view only: the expressions of the section (a place's owner and detail,
the tracks, the areas' item texts) are evaluated on a game made of that view
(:func:`view_game`), where a hidden zone holds only anonymous placeholders, as many as it has
items. An expression that would need what the seat does not see fails, and its value is drawn
as unknown: nothing hidden can reach the page through the board.

Layout, top to bottom: the places and areas at the section's points (``size`` wide and high),
then a bar per player for each track, then one mat per player side by side. Every place and
item drawn carries its id (``data-value``, and ``data-also`` for the other copies of a stack),
which the page's script matches against the legal choices.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from ..model import BoardDef, RuleFault
from ..runtime import Game
from ..seat import name_of

if TYPE_CHECKING:
    from .board import Drawing

PALETTE = ("#c0392b", "#2e6fd0", "#d4ac0d", "#229954", "#8e44ad", "#e67e22", "#16a085", "#7f8c8d")
LINE = 14  # the height of a line of text
TRACK_ROW = 16  # the height of one player's bar
MAT_LINES = 24  # lines of one mat at most
STACKS_PER_ROW = 4
FAILS = (RuleFault, KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError)


def view_game(game: Game, view: dict[str, Any]) -> Game:
    """A game whose state is ``view``: what the board's expressions are evaluated on.

    A zone hidden from the seat holds placeholders (``count`` of it is its size, which the
    seat sees anyway; the fields of its items do not exist). It is read, never played."""
    zones = {key: list(items) if isinstance(items, list) else [f"?{key}#{i}" for i in range(int(items.get("hidden", 0)))]
             for key, items in view["zones"].items()}
    state = {"format": view.get("format"), "ruleset": view.get("ruleset"), "players": view["players"],
             "globals": view["globals"], "entities": view["entities"], "zones": zones,
             "modifiers": view.get("modifiers", []), "result": view.get("result"), "pending": view.get("pending"),
             "stack": [], "seed": None, "rng": None, "forced_dice": [], "next_id": 0, "next_modifier": 0}
    return Game(game.rs, state)


def _value(fn: Any, vg: Game, local: dict[str, Any]) -> Any:
    try:
        return fn(vg, local)
    except FAILS:
        return None


def colours(game: Game, board: BoardDef) -> dict[str, str]:
    return {p: board.colours.get(p, PALETTE[i % len(PALETTE)]) for i, p in enumerate(game.players)}


def _owner_of(vg: Game, eid: str) -> str | None:
    """The player a piece belongs to: its first field naming a player, else that of the entity
    it names (a unit through its general)."""
    from .board import _owner

    rec = vg.ents.get(eid)
    return _owner(vg, rec, vg.ents) if rec is not None else None


def _text(vg: Game, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(name_of(vg, v) for v in value)
    return name_of(vg, value) if isinstance(value, str) else str(value)


class Canvas:
    """The SVG being written, and the ids of what is drawn."""

    def __init__(self, game: Game, view: dict[str, Any]) -> None:
        self.game = game
        self.board: BoardDef = game.rs.board  # type: ignore[assignment]
        self.view = view
        self.vg = view_game(game, view)
        self.colours = colours(game, self.board)
        self.ids: set[str] = set()
        self.out: list[str] = []

    def label(self, eid: str) -> str:
        return escape(name_of(self.vg, eid))

    def groups(self, items: list[str]) -> list[tuple[str, list[str]]]:
        """Identical items (by label and owner) together, in order of first appearance."""
        out: dict[tuple[str, str | None], list[str]] = {}
        for eid in items:
            out.setdefault((name_of(self.vg, eid), _owner_of(self.vg, eid)), []).append(eid)
        return [(label, same) for (label, _o), same in out.items()]

    def ref(self, same: list[str]) -> str:
        """The attributes that make an element clickable for a choice about any of ``same``."""
        self.ids.update(same)
        also = f' data-also="{escape(" ".join(same[1:60]))}"' if len(same) > 1 else ""
        return f'data-value="{escape(same[0])}"{also}'

    def items_text(self, items: Any, item_fn: Any = None, limit: int = 8) -> str:
        return ", ".join(self.items_parts(items, item_fn, limit))

    def items_parts(self, items: Any, item_fn: Any = None, limit: int = 8) -> list[str]:
        """A zone's items as clickable text parts ``label ×n``; a hidden zone by its size."""
        if isinstance(items, dict):
            n = int(items.get("hidden", 0))
            return [f'<tspan class="hidden">{n} hidden</tspan>' if n else '<tspan class="hidden">empty</tspan>']
        if not items:
            return ['<tspan class="hidden">empty</tspan>']
        parts = []
        groups = self.groups(items)
        for label, same in groups[:limit]:
            if item_fn is not None:
                label = str(_value(item_fn, self.vg, {"it": same[0]}) or label)
            count = f" ×{len(same)}" if len(same) > 1 else ""
            parts.append(f'<tspan class="entry" {self.ref(same)}>{escape(label)}{count}</tspan>')
        if len(groups) > limit:
            parts.append(f'<tspan class="hidden">+{len(groups) - limit} more</tspan>')
        return parts


def draw_board(game: Game, view: dict[str, Any], lists: str) -> Drawing:
    """The ruleset's board as ``view`` (``game.view(seat)``) shows it."""
    from .board import Drawing

    c = Canvas(game, view)
    board = c.board
    width, height = board.size
    body: list[str] = []
    c.out = body
    if board.kind is not None:
        _places(c)
    for area in board.areas.values():
        _area(c, *area)
    y = _mats(c, _tracks(c, height + 10.0))
    head = (f'<svg id="board" class="board data" viewBox="0 0 {width} {round(y)}" xmlns="http://www.w3.org/2000/svg" '
            f'role="img" aria-label="the board"><rect class="bg" x="0" y="0" width="{width}" height="{round(y)}"/>')
    return Drawing(head + "\n".join(body) + "</svg>", lists, c.ids)


def _places(c: Canvas) -> None:
    board, vg = c.board, c.vg
    ents: dict[str, Any] = c.view["entities"]
    shown = [e for e in board.at if e in ents]  # under fog of war, a place out of sight is not drawn
    done: set[tuple[str, str]] = set()
    for i, fname in enumerate(board.links):
        for a in shown:
            targets = ents[a].get(fname)
            for b in targets if isinstance(targets, list) else [targets]:
                if b in board.at and b in ents and a != b and (min(a, b), max(a, b)) not in done:
                    done.add((min(a, b), max(a, b)))
                    (x1, y1), (x2, y2) = board.at[a], board.at[b]
                    c.out.append(f'<line class="link link{min(i, 2)}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
    beside: dict[str, list[str]] = {e: [] for e in shown}
    for zone in board.pieces:
        for e in shown:
            items = c.view["zones"].get(f"{zone}@{e}")
            if isinstance(items, list):
                beside[e].extend(items)
    located: dict[str, list[str]] = {e: [] for e in shown}
    if board.located:
        wanted = {(k, f) for k, f in board.located}
        for eid, rec in ents.items():
            for kind, fname in wanted:
                if rec.get("kind") == kind and rec.get(fname) in located:
                    located[rec[fname]].append(eid)
    w, h = board.place_size
    for e in shown:
        x, y = board.at[e]
        c.ids.add(e)
        owner = _value(board.owner, vg, {"it": e}) if board.owner is not None else None
        fill = c.colours.get(owner, "#f4ecd8") if isinstance(owner, str) else "#f4ecd8"
        shape = (f'<circle class="spot" cx="{x}" cy="{y}" r="{w / 2}" style="fill:{fill}"/>' if board.shape == "circle"
                 else f'<rect class="spot" x="{x - w / 2}" y="{y - h / 2}" width="{w}" height="{h}" style="fill:{fill}"/>')
        c.out.append(f'<g class="place" data-value="{escape(e)}" tabindex="0"><title>{c.label(e)}</title>{shape}'
                     f'<text class="name" x="{x}" y="{y - h / 2 - 4}">{c.label(e)}</text></g>')
        below = y + h / 2 + 11
        if board.detail is not None:
            detail = _text(vg, _value(board.detail, vg, {"it": e}))
            if detail:
                c.out.append(f'<text class="detail" x="{x}" y="{below}">{escape(detail)}</text>')
                below += 10
        _stacks(c, x, below, c.groups(beside[e]) + [(name_of(vg, g), [g]) for g in located[e]])


def _stacks(c: Canvas, x: float, y: float, stacks: list[tuple[str, list[str]]]) -> None:
    """Stacks of pieces in rows under a place: a chip in its owner's colour and the count."""
    ents = c.view["entities"]
    for i, (label, same) in enumerate(stacks[:3 * STACKS_PER_ROW]):
        row_len = min(STACKS_PER_ROW, len(stacks) - i // STACKS_PER_ROW * STACKS_PER_ROW)
        px = round(x - row_len * 11 + (i % STACKS_PER_ROW) * 22, 1)
        py = round(y + (i // STACKS_PER_ROW) * 13, 1)
        owner = _owner_of(c.vg, same[0])
        fill = c.colours.get(owner or "", "#666")
        # what the piece holds (an army's units): counted in its tooltip and beside the chip
        held = [(z.replace("_", " "), c.view["zones"].get(f"{z}@{same[0]}"))
                for z in c.game.rs.kinds[ents[same[0]]["kind"]].zones] if same[0] in ents else []
        inside = sum(len(v) if isinstance(v, list) else int(v.get("hidden", 0)) for _z, v in held if v)
        tip = label + "".join(f"; {z}: {len(v) if isinstance(v, list) else v.get('hidden', 0)}" for z, v in held if v)
        count = f"×{len(same)}" if len(same) > 1 else (f"({inside})" if inside else "")
        c.out.append(f'<g class="piece" {c.ref(same)}><title>{escape(tip)}{" ×" + str(len(same)) if len(same) > 1 else ""}'
                     f'</title><rect x="{px}" y="{py}" width="9" height="9" style="fill:{fill}"/>'
                     f'<text class="count" x="{px + 10}" y="{py + 8}">{count}</text></g>')
    if len(stacks) > 3 * STACKS_PER_ROW:
        c.out.append(f'<text class="more" x="{x}" y="{y + 3 * 13 + 8}">+{len(stacks) - 3 * STACKS_PER_ROW}</text>')


def _area(c: Canvas, zone: str, x: float, y: float, w: float, h: float, title: str, item: Any) -> None:
    """A box with a zone's items, a line per group; a zone per entity: a line per entity."""
    zones = c.view["zones"]
    lines: list[str] = []
    if zone in zones:  # one zone: an item (or a stack of identical ones) per line
        lines.extend(c.items_parts(zones[zone], item, limit=40))
    else:
        for key, items in zones.items():
            name, _, owner = key.partition("@")
            if name == zone and items and not (isinstance(items, dict) and not items.get("hidden")):
                lines.append(f'<tspan class="owner">{c.label(owner)}:</tspan> {c.items_text(items, item)}')
    c.out.append(f'<g class="area"><rect class="areabox" x="{x}" y="{y}" width="{w}" height="{h}"/>'
                 f'<text class="areatitle" x="{x + 5}" y="{y + 13}">{escape(title)}</text>')
    room = max(int((h - 18) // LINE), 1)
    shown = lines[:room]
    if len(lines) > room:
        shown[-1] = f'<tspan class="hidden">+{len(lines) - room + 1} more</tspan>'
    for i, line in enumerate(shown):
        c.out.append(f'<text class="line" x="{x + 8}" y="{y + 28 + i * LINE}">{line}</text>')
    c.out.append("</g>")


def _tracks(c: Canvas, y: float) -> float:
    """A bar per player for each track, its length the value over the track's end."""
    width = c.board.size[0]
    players = c.game.players
    for label, fn, most in c.board.tracks.values():
        c.out.append(f'<g class="track"><text class="tracktitle" x="10" y="{y + 12}">{escape(label)}</text>')
        y += 18
        for p in players:
            value = _value(fn, c.vg, {"p": p})
            known = isinstance(value, int) and not isinstance(value, bool)
            span = width - 260
            filled = span * min(max(value, 0), most) / most if known else 0
            c.out.append(f'<text class="who" x="10" y="{y + 11}" style="fill:{c.colours[p]}">{c.label(p)}</text>'
                         f'<rect class="trackbox" x="150" y="{y + 2}" width="{span}" height="11"/>'
                         f'<rect class="trackbar" x="150" y="{y + 2}" width="{round(filled, 1)}" height="11" '
                         f'style="fill:{c.colours[p]}"/>'
                         f'<text class="value" x="{160 + span}" y="{y + 11}">{value if known else "?"} / {most}</text>')
            y += TRACK_ROW
        c.out.append("</g>")
        y += 6
    return y


def _mats(c: Canvas, y: float) -> float:
    """Each player's mat, side by side: his fields, then his zones (hidden ones by their size)."""
    board = c.board
    if not (board.mat_zones or board.mat_fields):
        return y
    players = c.game.players
    width = board.size[0]
    w = (width - 10) / max(len(players), 1) - 10
    ents = c.view["entities"]
    tallest = 0
    for i, p in enumerate(players):
        x = 10 + i * (w + 10)
        lines = []
        rec = ents.get(p, {})
        for fname in board.mat_fields:
            lines.append(f'<tspan class="field">{escape(fname.replace("_", " "))}:</tspan> {escape(_text(c.vg, rec.get(fname)))}')
        for zone in board.mat_zones:
            items = c.view["zones"].get(f"{zone}@{p}")
            if items is None:
                continue
            lines.append(f'<tspan class="field">{escape(zone.replace("_", " "))}:</tspan>')
            if isinstance(items, list) and items:
                groups = c.groups(items)
                for label, same in groups[:8]:
                    count = f" ×{len(same)}" if len(same) > 1 else ""
                    lines.append(f'  <tspan class="entry" {c.ref(same)}>{escape(label)}{count}</tspan>')
                if len(groups) > 8:
                    lines.append(f'  <tspan class="hidden">+{len(groups) - 8} more</tspan>')
            else:
                lines.append("  " + c.items_text(items))  # hidden: its size only
        lines = lines[:MAT_LINES]
        height = 24 + len(lines) * LINE
        tallest = max(tallest, height)
        c.out.append(f'<g class="mat" data-player="{escape(p)}">'
                     f'<rect class="matbox" x="{x}" y="{y}" width="{round(w, 1)}" height="{height}" '
                     f'style="stroke:{c.colours[p]}"/>'
                     f'<text class="mattitle" x="{x + 6}" y="{y + 15}" style="fill:{c.colours[p]}">{c.label(p)}</text>')
        for j, line in enumerate(lines):
            indent = 16 if line.startswith("  ") else 6
            c.out.append(f'<text class="line" x="{x + indent}" y="{y + 32 + j * LINE}">{line.strip()}</text>')
        c.out.append("</g>")
    return y + tallest + 10

