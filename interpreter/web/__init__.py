"""``ludus serve``: the board in the browser (docs/serve.md).

Needs the optional dependencies of ``pip install 'ludus[web]'`` (Starlette and uvicorn); the
rest of the engine never imports this package. Modules: :mod:`.app` (the routes and the
server), :mod:`.rooms` (the games being played, what each seat may read), :mod:`.board` (the
generic board as SVG), :mod:`.pages` (the HTML), :mod:`.replays` (logs stepped through) and
:mod:`.script` (the pages' one script).
"""
