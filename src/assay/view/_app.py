"""The viewer's web app: routes, the security headers every response carries, rendering.

Why no script at all: every page is rendered on the server (filters and paging are GET
forms and links), so the Content-Security-Policy can forbid every script and every
fetch, and one stylesheet is served from the viewer itself. Every value reaches the page
through Jinja's autoescaping. Blocking work (reading a run, building its table,
verifying) runs on worker threads, so one slow page does not stall the others.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from assay.errors import EvidenceError
from assay.view._rows import PER_PAGE, SORTS, Query
from assay.view._runs import RunCatalog
from assay.view._tables import TableCache
from assay.view._verified import VerifyCache

if TYPE_CHECKING:
    import jinja2
    from aiohttp import web

log = logging.getLogger("assay.view")

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
"""No script, no inline style, no request to anything but this server."""

RAW_CSP = "default-src 'none'; sandbox"
"""A raw artifact is shown as text; the sandbox keeps it inert even if a browser sniffs."""


class Viewer:
    """The state the pages share: the runs' catalog, their tables and their verdicts."""

    def __init__(self, root: Path, quick_from_bytes: int) -> None:
        self.root = root
        self.quick_from_bytes = quick_from_bytes
        self.catalog = RunCatalog(root)
        self.tables = TableCache()
        self.verdicts = VerifyCache()

    def run_path(self, name: str) -> Path:
        """The run called *name* (only a run the catalog lists: no path from a URL)."""
        from aiohttp import web

        path = self.catalog.runs().get(name)
        if path is None:
            raise web.HTTPNotFound(text=f"no run called {name!r} under {self.root}")
        return path


def build_app(root: Path, *, quick_from_bytes: int | None = None) -> web.Application:
    """The viewer over the runs under *root*. *quick_from_bytes*: the plan size from which
    a run's first sample-table pages are read through the indexes while its table is
    built (default ``assay.view._quick.QUICK_FROM_BYTES``; 0: every sealed run)."""
    from aiohttp import web

    from assay.view._quick import QUICK_FROM_BYTES

    viewer = Viewer(root, QUICK_FROM_BYTES if quick_from_bytes is None else quick_from_bytes)
    app = web.Application(middlewares=[_middleware()])
    app[_viewer_key()] = viewer
    app.router.add_get("/", _runs_page)
    app.router.add_get("/view.css", _stylesheet)
    app.router.add_get("/runs/{run}/", _run_page)
    app.router.add_get("/runs/{run}", _to_run_page)  # a URL typed without its last slash
    app.router.add_get("/runs/{run}/trials", _trials_page)
    app.router.add_get("/runs/{run}/trials/{trial}", _trial_page)
    app.router.add_get("/runs/{run}/artifacts/{sha}", _artifact)
    app.router.add_get("/compare", _compare_page)
    app.on_cleanup.append(_close)
    return app


@cache
def _viewer_key() -> web.AppKey[Viewer]:
    from aiohttp import web

    return web.AppKey("viewer", Viewer)


async def _close(app: web.Application) -> None:
    app[_viewer_key()].verdicts.close()


def _middleware() -> Any:
    """Security headers on every response, errors included (made here, where aiohttp is
    imported: ``import assay.view`` must not need it)."""
    from aiohttp import web

    @web.middleware
    async def headers(request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            response: web.StreamResponse = await handler(request)
        except web.HTTPException as exc:  # not a response since aiohttp 3.9: make one
            response = web.Response(status=exc.status, text=exc.text, headers=exc.headers)
        except Exception as exc:  # a bug: one line in the page, the headers still sent
            log.exception("assay view: %s %s failed", request.method, request.path)
            text = f"internal error: {type(exc).__name__} (the server's log has the traceback)"
            response = web.Response(status=500, text=text)
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    return headers


def _viewer(request: web.Request) -> Viewer:
    return request.app[_viewer_key()]


async def _html(template: str, status: int = 200, **values: Any) -> web.Response:
    from aiohttp import web

    text = await asyncio.to_thread(_render, template, values)
    return web.Response(text=text, content_type="text/html", charset="utf-8", status=status)


def _render(name: str, values: dict[str, Any]) -> str:
    return _environment().get_template(name).render(**values)


@cache
def _environment() -> jinja2.Environment:
    """The pages' templates: autoescaped, strict about missing values, and compiled once
    per template version into the report's bytecode cache (a new server does not pay
    the compile on its first pages)."""
    import jinja2

    from assay.report._html import compiled_templates

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("assay.view", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=compiled_templates(),
    )
    env.filters["seg"] = lambda value: quote(str(value), safe="")
    env.filters["when"] = _when
    env.globals["query_url"] = _query_url
    return env


def _when(stamp: float) -> str:
    if not stamp:
        return "-"
    moment = datetime.datetime.fromtimestamp(stamp, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _query_url(base: str, query: Query, **changes: Any) -> str:
    """*base* with the query's parameters, some changed (defaults left out)."""
    values = {
        "target": query.target,
        "state": query.state,
        "scorer": query.scorer,
        "status": query.status,
        "q": query.q,
        "sort": query.sort,
        "page": query.page,
    }
    values.update(changes)
    kept = {k: v for k, v in values.items() if v not in ("", None) and (k, v) != ("sort", "index")}
    if kept.get("page") == 1:
        kept.pop("page")
    return base + ("?" + urlencode(kept) if kept else "")


# -- pages ------------------------------------------------------------------------------


async def _stylesheet(request: web.Request) -> web.Response:
    from aiohttp import web

    css = resources.files("assay.view").joinpath("static/view.css").read_text("utf-8")
    return web.Response(text=css, content_type="text/css", charset="utf-8")


async def _runs_page(request: web.Request) -> web.Response:
    viewer = _viewer(request)
    runs = await asyncio.to_thread(viewer.catalog.summaries)
    return await _html("runs.html.j2", runs=runs, root=str(viewer.root))


async def _to_run_page(request: web.Request) -> web.Response:
    from aiohttp import web

    raise web.HTTPFound(request.rel_url.path + "/")


async def _run_page(request: web.Request) -> web.Response:
    from assay.report._chart import interval_chart
    from assay.report._render import cost_text, gate_note, grading_rows, has_usage

    viewer = _viewer(request)
    name = request.match_info["run"]
    path = viewer.run_path(name)
    summary = await asyncio.to_thread(viewer.catalog.summary, name, path)
    viewer.tables.warm(path)
    verdict = await asyncio.to_thread(
        viewer.verdicts.verdict, path, summary.status, summary.planned
    )
    report = viewer.catalog.report(path)
    others = [run for run in viewer.catalog.runs() if run != name]
    return await _html(
        "run.html.j2",
        run=summary,
        verdict=verdict,
        report=report,
        chart=interval_chart(report) if report else None,
        gate_note=gate_note(report) if report else "",
        usage=has_usage(report) if report else False,
        grading_rows=grading_rows(report) if report else [],
        cost_text=cost_text,
        others=others,
    )


def _query(request: web.Request) -> Query:
    params = request.query
    try:
        page = max(1, int(params.get("page", "1")))
    except ValueError:
        page = 1
    sort = params.get("sort", "index")
    if sort.lstrip("-") not in SORTS:
        sort = "index"
    return Query(
        target=params.get("target", ""),
        state=params.get("state", ""),
        scorer=params.get("scorer", ""),
        status=params.get("status", ""),
        q=params.get("q", "").strip(),
        sort=sort,
        page=page,
        per=PER_PAGE,
    )


async def _trials_page(request: web.Request) -> web.Response:
    from assay.view._quick import can_serve, quick_page

    viewer = _viewer(request)
    name = request.match_info["run"]
    path = viewer.run_path(name)
    query = _query(request)
    table = viewer.tables.ready(path)
    try:
        if table is None and can_serve(
            path, query, viewer.quick_from_bytes
        ):  # rows through the indexes, then
            page = await asyncio.to_thread(quick_page, path, query)
            viewer.tables.warm(path)  # the table, on a background thread
        else:
            table = await asyncio.to_thread(viewer.tables.table, path)
            page = await asyncio.to_thread(table.page, query)
    except EvidenceError as exc:
        return await _evidence_error(name, exc)
    return await _html(
        "trials.html.j2", name=name, table=table, page=page, query=query, sorts=SORTS
    )


async def _trial_page(request: web.Request) -> web.Response:
    from aiohttp import web

    from assay.view._trial import trial_page

    viewer = _viewer(request)
    name, trial_id = request.match_info["run"], request.match_info["trial"]
    path = viewer.run_path(name)
    try:
        events_page = int(request.query.get("events", "1"))
    except ValueError:
        events_page = 1
    try:
        table = await asyncio.to_thread(viewer.tables.table, path)
        found = await asyncio.to_thread(trial_page, table, trial_id, events_page)
    except EvidenceError as exc:
        return await _evidence_error(name, exc)
    if found is None:
        raise web.HTTPNotFound(text=f"run {name!r} has no trial {trial_id!r}")
    return await _html("trial.html.j2", name=name, trial=found)


async def _artifact(request: web.Request) -> web.Response:
    from aiohttp import web

    from assay.view._artifacts import SHA256, read_artifact

    viewer = _viewer(request)
    path = viewer.run_path(request.match_info["run"])
    sha = request.match_info["sha"]
    if not SHA256.fullmatch(sha):
        raise web.HTTPNotFound(text="an artifact is named by 64 lowercase hex digits")
    try:
        data = await asyncio.to_thread(read_artifact, path, sha)
    except EvidenceError as exc:
        return await _evidence_error(request.match_info["run"], exc)
    response = web.Response(body=data, content_type="text/plain", charset="utf-8")
    response.headers["Content-Security-Policy"] = RAW_CSP
    return response


async def _compare_page(request: web.Request) -> web.Response:
    from aiohttp import web

    from assay.view._compare import compare_page

    viewer = _viewer(request)
    a, b = request.query.get("a", ""), request.query.get("b", "")
    if not a or not b:
        raise web.HTTPBadRequest(text="compare needs two runs: /compare?a=RUN&b=RUN")
    path_a, path_b = viewer.run_path(a), viewer.run_path(b)
    try:
        found = await asyncio.to_thread(compare_page, viewer, a, path_a, b, path_b)
    except EvidenceError as exc:
        return await _evidence_error(b, exc)
    return await _html("compare.html.j2", page=found)


async def _evidence_error(name: str, exc: EvidenceError) -> web.Response:
    """A page whose evidence does not check: the banner alone, naming what changed."""
    return await _html("changed.html.j2", status=409, name=name, message=exc.one_line())
