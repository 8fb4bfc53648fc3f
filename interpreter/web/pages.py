"""The HTML of ``ludus serve``: built with plain strings, every text escaped.

Names, labels and narration come from rulesets and logs written by strangers, so each goes
through :func:`html.escape` on its way in. A seat's page is built from that seat's view,
its own legal choices and its narration only (see :func:`seat_parts`); the same parts are
what the page's script polls (``/api/game/ID/SEAT/KEY``). The seat's key is in its own forms and
links only; the links of the other seats are on the first human seat's page alone (the one the
game's starter is sent to), to be handed out.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import TYPE_CHECKING, Any

from ..play import prompt_of
from ..seat import status_lines
from .board import draw

if TYPE_CHECKING:
    from ..model import Ruleset
    from ..runtime import Game
    from .rooms import Room

HUMAN_KINDS = ("human", "random", "greedy", "mcts")
MAX_IDS = 200  # strings of one choice's value looked at for ids on the board

STYLE = """
body{font-family:system-ui,sans-serif;margin:0;background:#faf7f0;color:#222}
header{background:#3b2f2f;color:#fff;padding:.5em 1em}header a{color:#ffd}
main{display:flex;gap:1em;padding:1em;align-items:flex-start}
.boardarea{flex:3;min-width:0}.side{flex:2;min-width:18em;max-width:34em}
svg.board{width:100%;height:auto;border:1px solid #bba;background:#fff}
svg .bg{fill:#eef3f6}svg .link0{stroke:#889;stroke-width:2}svg .link1{stroke:#58a;stroke-dasharray:6 4}
svg .link2{stroke:#a85;stroke-dasharray:2 4}svg .spot{stroke:#333;stroke-width:1.5}
svg text{font-size:12px;text-anchor:middle;pointer-events:none}svg .count{font-size:10px;fill:#555}
svg .piece rect{stroke:#111}svg .more{font-size:10px}
svg .detail{font-size:9px;fill:#444}svg .count{text-anchor:start}svg .line,svg .areatitle,svg .tracktitle,
svg .who,svg .value,svg .mattitle{text-anchor:start;font-size:11px}svg .areatitle,svg .tracktitle,svg .mattitle{font-weight:bold}
svg .areabox,svg .matbox{fill:#fffdf6;stroke:#bba;stroke-width:1.5}svg .trackbox{fill:#fff;stroke:#999}
svg tspan.hidden{fill:#777;font-style:italic}svg tspan.field{fill:#666}svg tspan.entry{pointer-events:auto}
svg tspan.entry.clickable{fill:#e00;font-weight:bold;text-decoration:underline}svg .piece text{font-size:9px}
.allzones{margin-top:.5em}img.plot{max-width:100%;border:1px solid #ccc}figure{margin:.5em 0}
table.games td,table.games th{padding:0 .5em;text-align:left;font-size:.9em}table.games form{display:inline}
pre.summary{background:#fff;border:1px solid #ccc;padding:.5em;overflow-x:auto;font-size:12px}
.clickable{cursor:pointer}svg .place.clickable .spot{stroke:#e00;stroke-width:4}
svg .piece.clickable rect{stroke:#e00;stroke-width:3}.item.clickable{outline:2px solid #e00}
.zones ul{list-style:none;padding-left:0;margin:.2em 0}.zones h3{margin:.6em 0 .2em;font-size:1em}
.zone{font-weight:bold;margin-right:.4em}.item{display:inline-block;border:1px solid #999;border-radius:3px;
padding:0 .3em;margin:1px;background:#fff;font-size:.85em}.hidden,.empty,.more{color:#777;font-style:italic}
.choices form{display:inline}.choices button{margin:2px;padding:.3em .6em;text-align:left}
.choices.filtered button:not(.match){display:none}
.log{height:22em;overflow-y:auto;background:#fff;border:1px solid #ccc;padding:.4em;font:12px monospace;
white-space:pre-wrap}.note{background:#ffd;border:1px solid #cc8;padding:.3em}
table.status td{padding:0 .5em 0 0;vertical-align:top}table.status td:first-child{color:#666}
.rulesets li{margin-bottom:1em}.error pre{background:#fee;border:1px solid #c99;padding:.5em;white-space:pre-wrap}
"""


def page(title: str, body: str, attrs: str = "", script: bool = True) -> str:
    """A whole page: no external resource, the only script served by this server."""
    tail = '<script src="/static/ludus.js"></script>' if script else ""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<style>{STYLE}</style></head><body{attrs}>'
            f'<header><a href="/">Ludus</a> · <a href="/replay">Replay a log</a> · '
            f'<a href="/report">Balance reports</a> · {escape(title)}</header>'
            f'{body}{tail}</body></html>')


def error_page(status: int, message: str) -> str:
    return page(f"Error {status}", f'<main class="error"><div><h2>Error {status}</h2>'
                f'<pre>{escape(message)}</pre><p><a href="/">Back to the list of games</a></p></div></main>')


# ====================================================================== index
def index_page(rulesets: list[tuple[str, Ruleset | None, str]]) -> str:
    """The rulesets this server offers, each with a form to start a game.

    ``rulesets``: (key, ruleset or None, the load error if it failed).
    """
    items = []
    for key, rs, problem in rulesets:
        if rs is None:
            items.append(f'<li><b>{escape(key)}</b>: cannot be loaded<pre>{escape(problem)}</pre></li>')
            continue
        counts = "".join(f'<option value="{n}"{" selected" if n == rs.max_players else ""}>{n}</option>'
                         for n in range(rs.min_players, rs.max_players + 1))
        seats = []
        for i, seat in enumerate(rs.seat_names(rs.max_players)):
            opts = "".join(f'<option{" selected" if (k == "human") == (i == 0) else ""}>{k}</option>'
                           for k in HUMAN_KINDS)
            extra = f' <small>(seat {i + 1}; unused with fewer players)</small>' if i >= rs.min_players else ""
            seats.append(f'<label>{escape(seat)} <select name="seat_{escape(seat)}">{opts}</select></label>{extra}<br>')
        if rs.umpire:
            seats.append('<label>umpire <select name="seat_umpire"><option>umpire</option><option>human</option>'
                         '</select></label> <small>(rules where the text is silent)</small><br>')
        players = (f"{rs.min_players}" if rs.min_players == rs.max_players
                   else f"{rs.min_players} to {rs.max_players}")
        items.append(f'<li><b>{escape(rs.title)}</b> <code>{escape(key)}</code>, {players} players'
                     f'<details><summary>Start a game</summary>'
                     f'<form method="post" action="/new" class="newgame">'
                     f'<input type="hidden" name="ruleset" value="{escape(key)}">'
                     f'<label>players <select name="players">{counts}</select></label> '
                     f'<label>seed <input name="seed" size="8" placeholder="fresh"></label><br>'
                     f'{"".join(seats)}<button type="submit">Start</button></form></details></li>')
    return page("Games", '<main><div><h2>Rulesets</h2><ul class="rulesets">' + "".join(items)
                + '</ul><p><a href="/replay">Replay a log</a></p></div></main>')


# ====================================================================== a seat's page
def ids_in(value: Any, limit: int = MAX_IDS) -> list[str]:
    """The strings in a choice's value (an entity id, an action's arguments...)."""
    out: list[str] = []
    todo = [value]
    while todo and len(out) < limit:
        v = todo.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            todo.extend(v.get("args", {}).values() if "action" in v else v.values())
        elif isinstance(v, list | tuple):
            todo.extend(v)
    return out


def _status_html(game: Game, seat: str) -> str:
    lines = status_lines(game, seat)
    if not lines:
        return ""
    rows = "".join(f"<tr><td>{escape(label)}</td><td>{escape(value)}</td></tr>" for label, value in lines)
    return f'<table class="status">{rows}</table>'


def result_html(game: Game) -> str:
    """The final ranking, as ``ludus play`` ends with it."""
    result = game.result or {}
    winners = set(result.get("winners", []))
    rows = "".join(f"<tr><td>{i}</td><td>{escape(game.label_of(p))}</td><td>{escape(str(result['scores'][p]))}"
                   f"</td><td>{'winner' if p in winners else ''}</td></tr>"
                   for i, p in enumerate(result.get("ranking", []), 1))
    return f'<h3 class="result">Game over: {escape(str(result.get("reason")))}</h3><table class="status">{rows}</table>'


def _decision_html(room: Room, seat: str, drawn: set[str]) -> str:
    from .rooms import seat_url

    game = room.game
    note = room.notes.get(seat, "")
    out = [f'<p class="note">{escape(note)}</p>'] if note else []
    base = escape(seat_url(room.gid, seat, room.keys.get(seat, "")))
    if game.over:
        out.append(result_html(game))
        return "".join(out)
    deciders = game.deciders()
    if seat not in deciders:
        waiting = ", ".join(escape(game.label_of(p)) for p in deciders)
        out.append(f'<p class="waiting">Waiting for {waiting}.</p>')
    else:
        out.append(f'<h3 class="prompt">{escape(prompt_of(game, seat))}</h3><div class="choices" id="choices">')
        firsts: dict[str, int] = {}
        values: dict[str, set[str]] = {}
        counts: dict[str, int] = {}
        for c in game.choices(seat):  # identical labels merged, as at a terminal
            firsts.setdefault(c.label, c.index)
            counts[c.label] = counts.get(c.label, 0) + 1
            values.setdefault(c.label, set()).update(v for v in ids_in(c.value) if v in drawn)
        for label, index in firsts.items():
            n = f" (×{counts[label]})" if counts[label] > 1 else ""
            vals = escape(" ".join(sorted(values[label])))
            out.append(f'<form method="post" action="{base}/choose"><input type="hidden" name="index" value="{index}">'
                       f'<input type="hidden" name="version" value="{room.version}">'
                       f'<button type="submit" class="choice" data-values="{vals}">{escape(label)}{n}</button></form>')
        out.append('</div><p class="filter" hidden>Choices about what you clicked. '
                   '<button type="button" class="showall">Show all</button></p>')
    problem = room.undo_problem(seat)
    title = escape(problem or "take back your last decision")
    out.append(f'<form method="post" action="{base}/undo"><button type="submit" class="undo" title="{title}"'
               f'{" disabled" if problem else ""}>Undo</button></form>')
    return "".join(out)


def narration_html(lines: Iterable[str]) -> str:
    return "".join(f"<div>{escape(line)}</div>" for line in lines)


def seat_parts(room: Room, seat: str) -> dict[str, Any]:
    """What one seat is sent: the board from its view, its status, its own choices, the
    narration it may read. Nothing else of the game: no state, no seed, no other hand."""
    from .rooms import narration

    game = room.game
    drawing = draw(game, game.view(seat, copy=False))
    return {"version": room.version, "over": game.over,
            "deciding": (not game.over) and seat in game.deciders(),
            "board": drawing.svg, "lists": drawing.lists, "status": _status_html(game, seat),
            "decision": _decision_html(room, seat, drawing.ids),
            "log": narration_html(narration(room, seat))}


def links_html(room: Room, seat: str) -> str:
    """On the first human seat's page: the links of the game's other human seats, to hand out."""
    humans = [p for p, k in room.seats.items() if k == "human"]
    if len(humans) < 2 or seat != humans[0]:
        return ""
    game = room.game
    rows = "".join(f'<li>{escape(game.label_of(p))}: <a class="seatlink" data-seat="{escape(p)}" '
                   f'href="{escape(url)}">{escape(url)}</a></li>'
                   for p, url in room.links([p for p in humans if p != seat]).items())
    return ('<details class="links" open><summary>The other players&#x27; links</summary>'
            '<p>Give each player his link, privately (hot seat: open them in other tabs). '
            'Whoever has a link plays that seat, and sees what that seat sees; without it, '
            'no one can open the seat. This list is on your page only.</p>'
            f'<ul>{rows}</ul></details>')


def seat_page(room: Room, seat: str, key: str) -> str:
    """The page of one human seat of a game, opened with the seat's key (checked by the caller)."""
    from .rooms import seat_url

    game = room.game
    parts = seat_parts(room, seat)
    replay = (f'<p><a href="/replay/open?log={room.gid}.jsonl">Replay this game\'s log</a></p>'
              if game.over else "")
    body = (f'<main><section class="boardarea"><div id="board">{parts["board"]}</div>'
            f'<div id="lists">{parts["lists"]}</div></section>'
            f'<aside class="side"><h2>{escape(game.label_of(seat))}</h2>{links_html(room, seat)}'
            f'<div id="status">{parts["status"]}</div><div id="decision">{parts["decision"]}</div>'
            f'<h3>Narration</h3><div id="log" class="log">{parts["log"]}</div>{replay}</aside></main>')
    attrs = f' data-api="/api{escape(seat_url(room.gid, seat, key))}" data-version="{room.version}"'
    return page(f"{game.rs.title}: {game.label_of(seat)}", body, attrs)


# ====================================================================== replay
def replay_index(logs: list[str], message: str = "") -> str:
    """Choose a log: from the logs folder, or uploaded."""
    links = "".join(f'<li><a href="/replay/open?log={escape(name)}">{escape(name)}</a></li>' for name in logs)
    note = f'<pre class="error">{escape(message)}</pre>' if message else ""
    body = (f'<main><div>{note}<h2>Replay a log</h2>'
            '<p><label>A log file (JSON Lines, as written by <code>ludus play --log</code>): '
            '<input type="file" id="upload" accept=".jsonl,.json,.txt"></label></p>'
            f'<h3>Games of this server</h3><ul>{links or "<li>none yet</li>"}</ul></div></main>')
    return page("Replay", body)


def replay_page(rid: str, game: Game, n: int, total: int, lines: list[str], name: str) -> str:
    """The position after decision ``n`` of a replayed log, seen as a spectator."""
    drawing = draw(game, game.view(None, copy=False))
    nav = []
    for label, to in (("|< start", 0), ("< back", max(n - 1, 0)), ("forward >", min(n + 1, total)),
                      ("end >|", total)):
        nav.append(f'<a class="step" href="/replay/{rid}?n={to}">{label}</a>')
    status = "".join(f"<h4>{escape(game.label_of(p))}</h4>{_status_html(game, p)}" for p in game.players)
    where = ("the end of the log" + (f": {escape(str((game.result or {}).get('reason')))}" if game.over else ""))\
        if n == total else (f"waiting for {escape(', '.join(game.label_of(p) for p in game.deciders()))}: "
                            f"{escape(prompt_of(game, game.deciders()[0]))}" if game.deciders() else "")
    body = (f'<main><section class="boardarea"><div id="board">{drawing.svg}</div>'
            f'<div id="lists">{drawing.lists}</div></section>'
            f'<aside class="side"><h2>{escape(name)}</h2>'
            f'<p class="position">decision <b id="decision-n">{n}</b> of {total}; {where}</p>'
            f'<p class="nav">{" · ".join(nav)}</p>{result_html(game) if game.over else ""}'
            f'<form method="get" action="/replay/{rid}"><label>go to decision '
            f'<input name="n" size="6" value="{n}"></label> <button type="submit">Go</button></form>'
            f'<h3>Narration</h3><div id="log" class="log">{narration_html(lines)}</div>'
            f'<details><summary>Status of every player</summary>{status}</details></aside></main>')
    return page(f"Replay of {name}", body)
