"""``ludus serve``: the Starlette application and the server that runs it (uvicorn).

Routes (every answer is HTML unless it says JSON):

- ``GET /``: the rulesets, each with a form to start a game (``POST /new``);
- ``GET /game/ID/SEAT/KEY``: one human seat's page; ``GET /api/game/ID/SEAT/KEY``: the same, as
  JSON, polled; ``POST /game/ID/SEAT/KEY/choose`` (``index``, ``version``) and
  ``POST /game/ID/SEAT/KEY/undo``. KEY is the seat's secret key (see rooms.py): a missing or
  wrong one is a 403 and nothing of the game;
- ``GET /replay``: choose a log; ``GET /replay/open?log=NAME`` (a log of the logs folder) and
  ``POST /replay/upload`` (the log as the request's body) open one; ``GET /replay/RID?n=N``
  shows the position after decision N;
- ``GET /report``: the runs of ``--results DIR``; ``GET /report/run?name=RUN`` one run's summary,
  plots (``/report/plot?name=RUN&plot=NAME.png``) and games; ``POST /report/open`` (``name``,
  ``game``) plays one of its games again from its seed and bots and opens it in the replay.

Requests are untrusted: a form's ruleset must be one the server offers (no path from the
browser is ever opened), bodies are read up to a limit, names are checked against patterns,
and every failure is a page with a 4xx status and a message, never a traceback. A seat is
opened only with its key: whoever holds a seat's link plays that seat, and no one else.
"""

from __future__ import annotations

import contextlib
import re
import sys
import tempfile
import traceback
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..bots import bot_problem
from ..diagnostics import LudusError
from ..gamelog import MAX_LOG_BYTES
from ..loader import bundled_names, load_ruleset
from ..model import UMPIRE, Ruleset
from ..play import MAX_SEED
from . import pages
from .replays import Replays
from .results import Results, game_to_open
from .results import index_page as report_index
from .results import run_page as report_run
from .rooms import Room, Rooms, WebError, seat_url
from .script import SCRIPT

MAX_FORM_BYTES = 64_000
LOG_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,120}\.jsonl$")
REPLAY_ID = re.compile(r"^[a-z0-9]{12}$")
# A seat's answers carry its key (in links and forms): never cached, never sent on as a Referer.
SEAT_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
MAX_REPLAY_LINES = 2000  # the most recent lines of narration a replay page shows


class Server:
    """What one ``ludus serve`` holds: the rulesets it offers, its games and replays."""

    def __init__(self, rulesets: list[str], logs: Path, results: Path | None = None) -> None:
        # The rulesets named on the command line, then the bundled ones; a form names one by key.
        self.specs: dict[str, str] = {}
        for spec in rulesets:
            self.specs[spec] = spec
        for name in bundled_names():
            self.specs.setdefault(name, name)
        self.loaded: dict[str, tuple[Ruleset | None, str]] = {}
        self.logs = logs
        self.rooms = Rooms(logs)
        self.replays = Replays()
        self.uploads = Path(tempfile.mkdtemp(prefix="ludus-serve-"))
        self.results = Results(results)

    def ruleset(self, key: str) -> tuple[Ruleset | None, str]:
        if key not in self.loaded:
            try:
                self.loaded[key] = (load_ruleset(self.specs[key]), "")
            except LudusError as exc:
                self.loaded[key] = (None, exc.render())
        return self.loaded[key]


async def _read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) past ``limit`` bytes."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise WebError(413, f"too large: at most {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _form(request: Request) -> dict[str, str]:
    """An url-encoded form (each field's first value)."""
    body = await _read_body(request, MAX_FORM_BYTES)
    try:
        fields = parse_qs(body.decode("utf-8"), max_num_fields=200)
    except (UnicodeDecodeError, ValueError):
        raise WebError(400, "a form that cannot be read") from None
    return {k: v[0] for k, v in fields.items() if v}


def _number(text: str | None, what: str, hi: int) -> int | None:
    if text is None or not text.strip():
        return None
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(hi)) or int(text) > hi:
        raise WebError(400, f"{what} must be a whole number from 0 to {hi}, not '{text[:40]}'")
    return int(text)


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "") or request.url.path.startswith("/api/")


def build_app(rulesets: list[str], logs: Path, results: Path | None = None) -> Starlette:
    """The web application for these rulesets (names or folders), writing game logs to ``logs``;
    ``results``: a folder of simulate/compare results shown on /report."""
    server = Server(rulesets, logs, results)

    async def index(request: Request) -> Response:
        listed = await run_in_threadpool(lambda: [(k, *server.ruleset(k)) for k in server.specs])
        return HTMLResponse(pages.index_page(listed))

    async def new_game(request: Request) -> Response:
        form = await _form(request)
        key = form.get("ruleset", "")
        if key not in server.specs:
            raise WebError(400, f"this server offers no ruleset '{key[:60]}'")
        rs, problem = await run_in_threadpool(server.ruleset, key)
        if rs is None:
            raise WebError(400, problem)
        players = _number(form.get("players"), "players", 1000) or rs.max_players
        if rs.player_count_problem(players):
            raise WebError(400, rs.player_count_problem(players))
        seed = _number(form.get("seed"), "the seed", MAX_SEED)
        seats: dict[str, str] = {}
        names = rs.seat_names(players) + ([UMPIRE] if rs.umpire else [])
        for name in names:
            kind = form.get(f"seat_{name}", "umpire" if name == UMPIRE else "random")
            allowed = ("umpire", "human") if name == UMPIRE else pages.HUMAN_KINDS
            if kind not in allowed or (kind != "human" and bot_problem(kind)):
                raise WebError(400, f"seat {name}: '{kind[:40]}' is not one of {', '.join(allowed)}")
            seats[name] = kind
        room = await run_in_threadpool(server.rooms.create, server.specs[key], players, seats, seed)
        humans = [p for p, k in seats.items() if k == "human"]
        if not humans:  # bots only: the game is over already; watch it
            return RedirectResponse(f"/replay/open?log={room.gid}.jsonl", status_code=303)
        # the starter plays the first human seat; its page lists the other seats' links to hand out
        return RedirectResponse(seat_url(room.gid, humans[0], room.keys[humans[0]]), status_code=303,
                                headers=SEAT_HEADERS)

    def _seat(request: Request) -> tuple[Room, str, str]:
        """The game and seat of the request, its key checked (403 on a missing or wrong one)."""
        gid, seat = request.path_params["gid"], request.path_params["seat"]
        key = request.path_params.get("key", "")
        room = server.rooms.get(gid)
        room.check_key(seat, key)
        return room, seat, key

    async def game_page(request: Request) -> Response:
        def build() -> str:
            room, seat, key = _seat(request)
            with room.lock:
                return pages.seat_page(room, seat, key)
        return HTMLResponse(await run_in_threadpool(build), headers=SEAT_HEADERS)

    async def game_api(request: Request) -> Response:
        def build() -> dict[str, Any]:
            room, seat, _ = _seat(request)
            with room.lock:
                return pages.seat_parts(room, seat)
        return JSONResponse(await run_in_threadpool(build), headers=SEAT_HEADERS)

    async def choose(request: Request) -> Response:
        room, seat, key = await run_in_threadpool(_seat, request)
        form = await _form(request)
        index = _number(form.get("index"), "the choice", 1_000_000)
        if index is None:
            raise WebError(400, "no choice given")
        version = _number(form.get("version"), "the version", 10**12)
        await run_in_threadpool(room.choose, seat, index, version)
        return _back(request, seat_url(room.gid, seat, key))

    async def undo(request: Request) -> Response:
        room, seat, key = await run_in_threadpool(_seat, request)
        await _read_body(request, MAX_FORM_BYTES)
        problem = await run_in_threadpool(room.undo, seat)
        if problem and _wants_json(request):
            raise WebError(409, f"cannot undo: {problem}")
        return _back(request, seat_url(room.gid, seat, key))

    def _back(request: Request, url: str) -> Response:
        if _wants_json(request):
            return JSONResponse({"ok": True, "url": url}, headers=SEAT_HEADERS)
        return RedirectResponse(url, status_code=303, headers=SEAT_HEADERS)

    def _finished(path: Path) -> bool:
        """Whether the log ends with the game's end: a game still being played is not offered
        for replay, since a replay shows every seat's narration and secret decisions."""
        try:
            with open(path, "rb") as fh:
                fh.seek(max(0, path.stat().st_size - 65536))  # an end line holds the result: scores
                last = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        except OSError:
            return False
        return b'"type": "end"' in last or b'"type":"end"' in last

    def _log_names() -> list[str]:
        try:
            files = sorted(server.logs.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return []
        return [p.name for p in files[:100] if LOG_NAME.match(p.name) and _finished(p)]

    async def replay_index(request: Request) -> Response:
        return HTMLResponse(pages.replay_index(await run_in_threadpool(_log_names)))

    async def replay_open(request: Request) -> Response:
        name = request.query_params.get("log", "")
        if not LOG_NAME.match(name):
            raise WebError(400, "give the name of a .jsonl log of the logs folder")
        path = server.logs / name
        if not path.is_file():
            raise WebError(404, f"no log {name} in {server.logs}")
        if not await run_in_threadpool(_finished, path):
            raise WebError(403, f"the game of {name} is still being played: its log can be replayed "
                                "when it is over (a replay shows every seat's narration and secrets)")
        rid = await run_in_threadpool(server.replays.add, path, name)
        return RedirectResponse(f"/replay/{rid}", status_code=303)

    async def replay_upload(request: Request) -> Response:
        body = await _read_body(request, MAX_LOG_BYTES)
        shown = request.query_params.get("name", "uploaded log")[:80]
        fd, tmp = tempfile.mkstemp(suffix=".jsonl", dir=server.uploads)
        with open(fd, "wb") as fh:
            fh.write(body)
        try:
            rid = await run_in_threadpool(server.replays.add, Path(tmp), shown)
        finally:
            Path(tmp).unlink(missing_ok=True)
        return _back(request, f"/replay/{rid}")

    async def replay_at(request: Request) -> Response:
        rid = request.path_params["rid"]
        if not REPLAY_ID.match(rid):
            raise WebError(404, "no such replay")
        rep = server.replays.get(rid)
        n = _number(request.query_params.get("n"), "the decision", 10**9)
        n = min(rep.total if n is None else n, rep.total)

        def build() -> str:
            game = rep.position(n)
            return pages.replay_page(rid, game, n, rep.total, rep.narration(n)[-MAX_REPLAY_LINES:], rep.name)
        return HTMLResponse(await run_in_threadpool(build))

    async def report_list(request: Request) -> Response:
        return HTMLResponse(await run_in_threadpool(report_index, server.results))

    async def report_page(request: Request) -> Response:
        name = request.query_params.get("name", "")
        return HTMLResponse(await run_in_threadpool(report_run, server.results, name, server.specs))

    async def report_plot(request: Request) -> Response:
        data = await run_in_threadpool(server.results.plot, request.query_params.get("name", ""),
                                       request.query_params.get("plot", ""))
        return Response(data, media_type="image/png")

    async def report_open(request: Request) -> Response:
        form = await _form(request)
        index = _number(form.get("game"), "the game", 10**9)
        if index is None:
            raise WebError(400, "no game given")
        key, players, bots, seed = await run_in_threadpool(game_to_open, server.results, form.get("name", ""),
                                                           index, server.specs)
        rs, problem = await run_in_threadpool(server.ruleset, key)
        if rs is None:
            raise WebError(400, problem)
        run_digest = ((await run_in_threadpool(_run_info, form.get("name", ""))).get("ruleset") or {}).get("digest")
        if run_digest != rs.digest:
            raise WebError(409, f"the ruleset '{key}' has changed since this run (digest {str(run_digest)[:12]}, now "
                                f"{rs.digest[:12]}): its games would not be the same")
        seats = {s: k for s, k in bots.items() if s in rs.seat_names(players)}
        if rs.umpire:
            seats[UMPIRE] = "umpire"
        room = await run_in_threadpool(server.rooms.create, server.specs[key], players, seats, seed)
        return RedirectResponse(f"/replay/open?log={room.gid}.jsonl", status_code=303)

    def _run_info(name: str) -> dict[str, Any]:
        from .results import plan_of

        return plan_of(server.results.run(name))

    async def script(request: Request) -> Response:
        return Response(SCRIPT, media_type="text/javascript")

    async def web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        if _wants_json(request):
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        return HTMLResponse(pages.error_page(exc.status, exc.message), status_code=exc.status)

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        return HTMLResponse(pages.error_page(status, "no such page"), status_code=status)

    async def crash(request: Request, exc: Exception) -> Response:
        # A bug of the engine or the rules: told on the server's terminal, not to the browser.
        traceback.print_exception(exc, file=sys.stderr)
        message = exc.render() if isinstance(exc, LudusError) else "the server failed on this request"
        return HTMLResponse(pages.error_page(500, message), status_code=500)

    routes = [
        Route("/", index), Route("/new", new_game, methods=["POST"]),
        Route("/game/{gid}/{seat}/{key}", game_page), Route("/api/game/{gid}/{seat}/{key}", game_api),
        Route("/game/{gid}/{seat}/{key}/choose", choose, methods=["POST"]),
        Route("/game/{gid}/{seat}/{key}/undo", undo, methods=["POST"]),
        # a seat's address without its key (as before seats had keys): 403, not "no such page"
        Route("/game/{gid}/{seat}", game_page), Route("/api/game/{gid}/{seat}", game_api),
        Route("/game/{gid}/{seat}/choose", choose, methods=["POST"]),
        Route("/game/{gid}/{seat}/undo", undo, methods=["POST"]),
        Route("/replay", replay_index), Route("/replay/open", replay_open),
        Route("/replay/upload", replay_upload, methods=["POST"]), Route("/replay/{rid}", replay_at),
        Route("/report", report_list), Route("/report/run", report_page), Route("/report/plot", report_plot),
        Route("/report/open", report_open, methods=["POST"]),
        Route("/static/ludus.js", script),
    ]
    handlers: dict[Any, Any] = {WebError: web_error, 404: not_found, 405: not_found, Exception: crash}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        server.rooms.close()  # every log is flushed after each decision already; this closes the files

    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    app.state.server = server
    return app


def serve(rulesets: list[str], host: str, port: int, logs: Path, results: Path | None = None) -> None:
    """Run the application with uvicorn until Ctrl-C."""
    import uvicorn

    app = build_app(rulesets, logs, results)
    uvicorn.run(app, host=host, port=port, log_level="warning")
