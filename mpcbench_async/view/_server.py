"""The viewer's web server: aiohttp on 127.0.0.1, read-only, pages rendered from the index per request.

Why aiohttp: already a dependency (the native transport and the sim use it),
so the viewer adds nothing to install. Only GET routes exist, but for saving a
label (``_labels``: off unless the viewer was started with an annotator; it appends
to ``labels.jsonl``, never to the sweep's records). The index may still be building when the
first request arrives (``BackgroundIndex``): the overview needs only the
summary, and the pages that query the index wait a moment for it, then show a
small page saying how far the build is, which reloads itself until it is done.

Security (``_guard``): the viewer answers only requests whose ``Host`` names
loopback — ``localhost``, ``127.0.0.1``, ``[::1]`` or the address it is bound to,
any port (an ``ssh -L`` tunnel arrives as ``localhost:<its port>``). A web page
whose host name an attacker points at 127.0.0.1 (DNS rebinding) sends its own name
and gets 421, so it cannot read a sweep through the victim's browser. Every
response carries a Content-Security-Policy with no inline script or style and
nothing from another origin: the pages link their CSS and JS from ``/static/``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import partial

from aiohttp import web

from ..report import SCRIPT, SCRIPT_PATH, STYLESHEET, STYLESHEET_PATH, esc
from ..report import page as _page
from ._background import BackgroundIndex
from ._index import SweepIndex
from ._labels import enable_labels, labels_block
from ._levels import levels_run_body, levels_runs_body
from ._pages import PER_PAGE, RunsQuery, compare_body, overview_body, run_body, runs_body

__all__ = ["make_app"]

STATE_KEY: web.AppKey[BackgroundIndex] = web.AppKey("index", BackgroundIndex)
CHAPTERS_KEY: web.AppKey[Mapping[str, str]] = web.AppKey("chapters", Mapping)
GRACE_KEY: web.AppKey[float] = web.AppKey("grace", float)
HOSTS_KEY: web.AppKey[frozenset[str]] = web.AppKey("hosts", frozenset)
REFRESH_S = 1  # how often the indexing page reloads itself
_MB = 1024 * 1024
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
                    "Cross-Origin-Resource-Policy": "same-origin"}
_MISDIRECTED = ("421 Misdirected Request: this viewer answers only at localhost, 127.0.0.1 or [::1] (or the address "
                "it is bound to), and this request names another host; open the address `mpcbench-async view` "
                "printed.\n")
page = partial(_page, assets="linked")  # the viewer's CSP allows no inline CSS or JS
_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _host_name(host: str) -> str | None:
    """The name a ``Host`` header value addresses (lower case, no port, no trailing dot); None when malformed."""
    host = host.strip().lower()
    if host.startswith("["):
        name, closed, rest = host[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    else:
        name, _, port = host.partition(":")
    if not name or (port and not (port.isascii() and port.isdigit())):
        return None
    return name.removesuffix(".")


@web.middleware
async def _guard(request: web.Request, handler: _Handler) -> web.StreamResponse:
    """Refuse a request whose ``Host`` names no loopback address (DNS rebinding) before any page is rendered.

    A request without ``Host`` (no browser sends one) is addressed to the socket, which is on loopback.
    """
    host = request.headers.get("Host")
    if host is not None and _host_name(host) not in request.app[HOSTS_KEY]:
        return web.Response(text=_MISDIRECTED, status=421, content_type="text/plain",
                            headers={"Cache-Control": "no-store"})
    return await handler(request)


async def _secure(_request: web.Request, response: web.StreamResponse) -> None:
    """The security headers, on every response (aiohttp's own error pages included)."""
    response.headers.update(SECURITY_HEADERS)


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8",
                        headers={"Cache-Control": "no-store"})


def _int(request: web.Request, name: str, default: int) -> int:
    """A positive whole-number parameter; anything else (absent, malformed, < 1) is the default."""
    try:
        value = int(request.query.get(name, default))
    except ValueError:
        return default
    return value if value >= 1 else default


def _waiting(state: BackgroundIndex) -> web.Response:
    """The page shown while the index is being built (it reloads itself), or why the build failed."""
    if state.error is not None:
        return _html(page("Index failed", f'<p id="index-error">The index of this sweep could not be built: '
                                          f"{esc(type(state.error).__name__)}: {esc(state.error)}</p>"), status=500)
    p = state.progress
    if p.stage == "reading" and p.total:
        what = f"indexing {p.done / _MB:,.0f} of {p.total / _MB:,.0f} MB of runs.jsonl and judgements.jsonl …"
    elif p.stage == "reading":
        what = "opening the index …"
    else:
        what = f"{p.stage} the index …"
    return _html(page("Indexing the sweep", f'<p id="indexing">{esc(what)}</p><p class="muted">The first start on '
                      "a new or changed sweep reads its records once; this page reloads itself until the index "
                      "is ready.</p>", refresh_s=REFRESH_S))


async def _index(request: web.Request) -> SweepIndex | web.Response:
    """The ready index, after waiting a moment for a build to end (a small sweep's takes less); else the page
    saying how far it is."""
    state = request.app[STATE_KEY].start()  # a page needs it: open or build it now, if not yet started
    if state.index is None:
        await state.wait(request.app[GRACE_KEY])
    state.refresh()  # a live sweep: the newest index that is ready
    return state.index if state.index is not None else _waiting(state)


async def live(request: web.Request) -> web.Response:
    """``{"version": N}``: N grows each time records a running sweep appended are in the index; the pages poll it
    and reload (or offer to) when it changes."""
    state = request.app[STATE_KEY]
    version = state.refresh() if state.done else 0
    return web.json_response({"version": version}, headers={"Cache-Control": "no-store"})


async def overview(request: web.Request) -> web.Response:
    state = request.app[STATE_KEY]
    if not state.has_summary:  # no fresh summary.json: the build computes the summary
        await state.start().wait(request.app[GRACE_KEY])
        if not state.has_summary:
            return _waiting(state)
    if state.done:
        state.refresh()  # a live sweep: the summary of the newest index that is ready
    body = overview_body(state, request.app[CHAPTERS_KEY])
    state.start()  # rendered: the index's build may take the CPU now (until then it would halve this page's share)
    return _html(page(f"Sweep {state.out_dir.name}", body))


async def runs(request: web.Request) -> web.Response:
    index = await _index(request)
    if isinstance(index, web.Response):
        return index
    q = request.query
    query = RunsQuery(model=q.get("model", ""), task=q.get("task", ""), family=q.get("family", ""),
                      status=q.get("status", ""), page=_int(request, "page", 1),
                      per_page=min(1000, _int(request, "per_page", PER_PAGE)), sort=q.get("sort", ""),
                      desc=q.get("desc", "") not in ("", "0"), q=q.get("q", "")[:200])
    return _html(page("Runs", runs_body(index, query)))


async def run(request: web.Request) -> web.Response:
    index = await _index(request)
    if isinstance(index, web.Response):
        return index
    key = request.match_info["key"]
    body = run_body(index, key)
    if body is None:
        return not_found_page(f"No kept run with key {key} in this sweep.")
    row = index.run(key)
    assert row is not None  # run_body found it
    return _html(page(f"Run {key}", body + labels_block(request.app, index, row, request.query)))


async def compare(request: web.Request) -> web.Response:
    index = await _index(request)
    if isinstance(index, web.Response):
        return index
    a, b = request.query.get("a", ""), request.query.get("b", "")
    return _html(page("Compare agent models", compare_body(index, a, b)))


async def settings(request: web.Request) -> web.Response:
    from ._settings import settings_body

    return _html(page("Settings", settings_body(request.app[STATE_KEY].out_dir)))


async def levels_runs(request: web.Request) -> web.Response:
    q = request.query
    body = levels_runs_body(request.app[STATE_KEY].out_dir, model=q.get("model", ""), level=q.get("level", ""))
    return _html(page("MPCBench levels runs", body))


async def levels_run(request: web.Request) -> web.Response:
    key = request.match_info["key"]
    body = levels_run_body(request.app[STATE_KEY].out_dir, key)
    if body is None:
        return not_found_page(f"No kept levels run with key {key} in this sweep.")
    return _html(page(f"Levels run {key}", body))


def _asset(text: str, content_type: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def serve(_request: web.Request) -> web.Response:
        return web.Response(text=text, content_type=content_type, charset="utf-8",
                            headers={"Cache-Control": "no-cache"})

    return serve


def not_found_page(message: str) -> web.Response:
    return _html(page("Not found", f'<p id="not-found">{esc(message)}</p><p><a href="/runs">All runs</a></p>'),
                 status=404)


async def not_found(request: web.Request) -> web.Response:
    return not_found_page(f"No page at {request.path}.")


def make_app(index: SweepIndex | BackgroundIndex, chapters: Mapping[str, str] | None = None, *,
             grace_s: float = 2.0, bound_host: str | None = None, annotator: str | None = None) -> web.Application:
    """The viewer's application over ``index`` — open, or being opened in the background (``chapters``: case id →
    HTS chapter, for the tariff tables; ``grace_s``: how long a page waits for a build before saying how far it is;
    ``bound_host``: the address it listens on, served besides the loopback names; ``annotator``: who labels runs,
    which turns on writing ``labels.jsonl``, the one thing the viewer writes besides its index; see ``_labels``).
    """
    app = web.Application(middlewares=[_guard])
    app.on_response_prepare.append(_secure)
    bound = _host_name(f"[{bound_host}]" if bound_host and ":" in bound_host else bound_host or "")
    app[HOSTS_KEY] = LOOPBACK_HOSTS | ({bound} if bound else set())
    app[STATE_KEY] = index if isinstance(index, BackgroundIndex) else BackgroundIndex(index.out_dir, index=index)
    app[CHAPTERS_KEY] = dict(chapters or {})
    app[GRACE_KEY] = grace_s
    app.router.add_get("/", overview)
    app.router.add_get("/runs", runs)
    app.router.add_get("/run/{key}", run)
    app.router.add_get("/compare", compare)
    app.router.add_get("/settings", settings)
    app.router.add_get("/live", live)
    app.router.add_get("/levels", levels_runs)
    app.router.add_get("/levels/{key}", levels_run)
    app.router.add_get(STYLESHEET_PATH, _asset(STYLESHEET, "text/css"))
    app.router.add_get(SCRIPT_PATH, _asset(SCRIPT, "text/javascript"))
    enable_labels(app, _index, page, annotator)
    app.router.add_route("*", "/{tail:.*}", not_found)
    return app
