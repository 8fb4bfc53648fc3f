"""The ``board:`` section: checked against the ruleset's kinds, zones and fields, and compiled.

The board is presentation only (``ludus serve`` draws it; see docs/board.md): it is left out of
the ruleset's digest, so adding or changing one does not invalidate saved games and logs. Its
names and expressions are still checked when the ruleset loads, with located errors, as every
other section's are: a board that names a zone the rules do not have is a typo to be told.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .diagnostics import did_you_mean
from .dsl import types as T
from .model import PLAYER_KIND, BoardDef

if TYPE_CHECKING:
    from .builder import RuleTexts

SHAPES = ("circle", "rect")
DEFAULT_SIZE = (1000, 640)


def check_board(b: RuleTexts) -> None:
    """Build ``rs.board`` from the ``board:`` entry, reporting every problem at its place."""
    spec = b.data.get("board")
    if not isinstance(spec, dict):
        return
    rs = b.rs
    board = BoardDef()
    size = spec.get("size") or list(DEFAULT_SIZE)
    board.size = (int(size[0]), int(size[1]))
    seats = rs.seats or rs.seat_names(rs.max_players)
    for seat, colour in (spec.get("players") or {}).items():
        if seat not in seats:
            b.err(("board", "players", seat), f"no seat '{seat}' in this ruleset", did_you_mean(seat, seats)
                  or f"the seats are {', '.join(seats)}", key=True)
        board.colours[str(seat)] = str(colour)
    regions = spec.get("regions")
    if isinstance(regions, dict):
        _regions(b, board, regions)
    for tid, track in (spec.get("tracks") or {}).items():
        text, origin = b.text(("board", "tracks", tid, "value"))
        fn, _ = b.compiler.expression(text, origin, {"p": T.ent(PLAYER_KIND)}, T.INT, f"the track '{tid}'")
        if fn is not None:
            label = str(track.get("label", str(tid).replace("_", " ").capitalize()))
            board.tracks[str(tid)] = (label, fn, int(track.get("max", 10)))
    mats = spec.get("mats") or {}
    player_zones = [z for z, zd in rs.zones.items() if zd.per == PLAYER_KIND]
    for i, zone in enumerate(mats.get("zones") or []):
        if zone not in player_zones:
            b.err(("board", "mats", "zones", i), f"no zone '{zone}' per player", did_you_mean(str(zone), player_zones)
                  or "a mat shows the zones declared with 'per: player'")
        else:
            board.mat_zones.append(zone)
    pkind = rs.kinds.get(PLAYER_KIND)
    player_fields = list(pkind.fields) if pkind is not None else []
    for i, name in enumerate(mats.get("fields") or []):
        if name not in player_fields:
            b.err(("board", "mats", "fields", i), f"the player has no field '{name}'",
                  did_you_mean(str(name), player_fields) or "a mat shows fields of the kind 'player'")
        else:
            board.mat_fields.append(name)
    for aid, area in (spec.get("areas") or {}).items():
        _area(b, board, str(aid), area)
    rs.board = board


def _inside(b: RuleTexts, board: BoardDef, path: tuple[Any, ...], xy: Any) -> tuple[float, float] | None:
    x, y = float(xy[0]), float(xy[1])
    w, h = board.size
    if not (0 <= x <= w and 0 <= y <= h):
        b.err(path, f"({xy[0]}, {xy[1]}) is outside the board ({w} by {h})", "use a point within 'size'")
        return None
    return (x, y)


def _regions(b: RuleTexts, board: BoardDef, spec: dict[str, Any]) -> None:
    rs = b.rs
    kind = str(spec.get("kind", ""))
    if kind not in rs.kinds or kind == PLAYER_KIND:
        b.err(("board", "regions", "kind"), f"no kind '{kind}'",
              did_you_mean(kind, [k for k in rs.kinds if k != PLAYER_KIND]) or "name the kind of the places")
        return
    board.kind = kind
    kdef = rs.kinds[kind]
    board.shape = str(spec.get("shape", "circle"))
    size = spec.get("size", 14)
    board.place_size = (float(size[0]), float(size[1])) if isinstance(size, list) else (2.0 * size, 2.0 * size)
    places = [e for e, rec in rs.entities.items() if rec.get("kind") == kind]
    for eid, xy in (spec.get("at") or {}).items():
        if eid not in places:
            b.err(("board", "regions", "at", eid), f"no {kind} '{eid}'", did_you_mean(str(eid), places), key=True)
            continue
        point = _inside(b, board, ("board", "regions", "at", eid), xy)
        if point is not None:
            board.at[str(eid)] = point
    missing = [e for e in places if e not in (spec.get("at") or {})]
    if missing:
        b.err(("board", "regions", "at"), f"no point for the {kind} {', '.join(missing[:5])}"
              + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""),
              "give every place of the kind a point: 'ID: [x, y]'")
    for i, name in enumerate(spec.get("links") or []):
        f = kdef.fields.get(name)
        if f is None or f.type not in (T.Type("list", T.ent(kind)), T.ent(kind)):
            own = [n for n, fd in kdef.fields.items() if fd.type in (T.Type("list", T.ent(kind)), T.ent(kind))]
            b.err(("board", "regions", "links", i), f"'{name}' is not a field of {kind} naming other {kind}s",
                  did_you_mean(str(name), own) or f"the fields that can be links: {', '.join(own) or 'none'}")
        else:
            board.links.append(name)
    for i, zone in enumerate(spec.get("pieces") or []):
        if zone not in kdef.zones:
            b.err(("board", "regions", "pieces", i), f"no zone '{zone}' per {kind}",
                  did_you_mean(str(zone), kdef.zones) or f"pieces are zones declared with 'per: {kind}'")
        else:
            board.pieces.append(zone)
    for i, where in enumerate(spec.get("located") or []):
        other, _, fname = str(where).partition(".")
        odef = rs.kinds.get(other)
        if odef is None:
            b.err(("board", "regions", "located", i), f"no kind '{other}'", did_you_mean(other, rs.kinds))
        elif fname not in odef.fields or odef.fields[fname].type != T.ent(kind):
            own = [n for n, fd in odef.fields.items() if fd.type == T.ent(kind)]
            b.err(("board", "regions", "located", i), f"'{fname}' is not a field of {other} naming a {kind}",
                  did_you_mean(fname, own) or f"write KIND.FIELD, a field of type {kind}")
        else:
            board.located.append((other, fname))
    scope = {"it": T.ent(kind)}
    if "owner" in spec:
        text, origin = b.text(("board", "regions", "owner"))
        board.owner, _ = b.compiler.expression(text, origin, scope, T.ent(PLAYER_KIND), "the owner of a place")
    if "detail" in spec:
        text, origin = b.text(("board", "regions", "detail"))
        board.detail, _ = b.compiler.expression(text, origin, scope, None, "the detail of a place")


def _area(b: RuleTexts, board: BoardDef, aid: str, spec: dict[str, Any]) -> None:
    rs = b.rs
    zone = str(spec.get("zone", ""))
    zdef = rs.zones.get(zone)
    if zdef is None:
        b.err(("board", "areas", aid, "zone"), f"no zone '{zone}'", did_you_mean(zone, rs.zones))
        return
    point = _inside(b, board, ("board", "areas", aid, "at"), spec.get("at") or [0, 0])
    size = spec.get("size") or [220, 120]
    item = None
    if "item" in spec:
        text, origin = b.text(("board", "areas", aid, "item"))
        it = T.ent(zdef.holds) if zdef.holds in rs.kinds else T.ANY
        item = b.compiler.template(text, origin, {"it": it})
    if point is not None:
        title = str(spec.get("label", zone.replace("_", " ").capitalize()))
        board.areas[aid] = (zone, point[0], point[1], float(size[0]), float(size[1]), title, item)
