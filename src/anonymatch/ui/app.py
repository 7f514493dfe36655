"""The web app's pages (Starlette, server-rendered Jinja2 templates, a few lines of JS served
from the app itself that poll the progress of a run).

Access (docs/webapp.md has the threat model). One pure-ASGI guard in front of every route:

- **Host.** The ``Host`` header must be one this instance answers to (the bound address and
  port): a page whose domain was rebound to 127.0.0.1 (DNS rebinding) gets 403.
- **Origin.** A state-changing request (POST…) must come from the app's own origin (``Origin``,
  else ``Referer``); a page on another local port is same-*site* for the browser (cookies are not
  scoped by port, SameSite does not help), but never same-*origin*: 403.
- **Token.** Every request needs the app's token, given once in the address (``/?token=…``, as
  Jupyter does), then kept in a cookie; the cookie names carry this instance's random id, so two
  instances in one browser never share or overwrite each other's cookies (HttpOnly,
  SameSite=Strict, Path=/).
- **CSRF token.** Each session has its own; every form carries it in a hidden field and every
  POST handler reads its form through :func:`posted`, which compares it in constant time.
- **Bounds.** A request body past the upload limit is refused with 413 before it is read (or as
  soon as it passes the limit); other forms are bounded too.
- **Headers.** Every response carries a Content-Security-Policy (``default-src 'self';
  frame-ancestors 'none'``; the report's own, stricter one), X-Frame-Options DENY,
  X-Content-Type-Options nosniff, a Referrer-Policy, Cross-Origin-Resource/Opener-Policy
  same-origin and ``Cache-Control: no-store`` (pages and downloads hold personal data).

Each browser gets its own session: its dataset, its run (one at a time, bound to its own copy of
the dataset and settings) and a private directory under the app's own (mode 0700). Uploads are
stored under generated names (the original is only shown); reading a table is done off the
event loop.
"""

from __future__ import annotations

import copy
import os
import secrets
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, Headers
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from anonymatch.app.jobfile import render_toml
from anonymatch.core.errors import AnonymatchError, InputError
from anonymatch.core.manifest import load_manifest
from anonymatch.ui import data, relational
from anonymatch.ui.runner import Run, quote_argv

FORBIDDEN = (
    "403 forbidden: open the address that `anonymatch ui` printed when it started "
    "(it carries the access token)\n"
)
UPLOAD_CHUNK = 1 << 20
FORM_BYTES = 1 << 20
"""The largest body of a form that is not an upload."""
FORM_SLACK = 16 << 10
"""An upload's request may exceed the file's limit by this much (the form's other fields)."""
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSP = (
    "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; "
    "object-src 'none'"
)
REPORT_CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'; sandbox"
)
REFERRER_POLICY = "same-origin"
"""Not ``no-referrer``: under it browsers send ``Origin: null`` with the app's own form posts
(Fetch, "serializing a request origin"), which the origin check must refuse. ``same-origin``
sends nothing to any other origin either."""
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": REFERRER_POLICY,
    "cross-origin-resource-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "cache-control": "no-store",
}
STATIC = {
    "app.css": "text/css",
    "job.js": "text/javascript",
    "upload.js": "text/javascript",
    "dataset.js": "text/javascript",
}
UPLOADS = frozenset({"/upload", "/run"})
"""Requests that may carry files up to the upload limit (a table; the hierarchies of the run
form); any other body is bounded by :data:`FORM_BYTES` (an opened job file too)."""


class Refused(Exception):
    """A request refused with 403 (its message is the page's one line)."""


class TooLarge(Exception):
    """A request body past its bound (413)."""


def same(given: str, expected: str) -> bool:
    """Constant-time comparison of two secrets, any characters (``secrets.compare_digest``
    refuses non-ASCII ``str``)."""
    return secrets.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())


@dataclass
class Session:
    """One browser's work: a private directory, the dataset, the current or last run (with the
    dataset and settings it was started with: a new upload during a run relabels nothing)."""

    id: str
    directory: Path
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    dataset: data.Dataset | None = None
    settings: data.Settings | None = None
    run: Run | None = None
    run_dataset: data.Dataset | None = None
    run_settings: data.Settings | None = None
    error: str | None = None
    notice: str | None = None

    def run_dir(self) -> Path:
        out = self.directory / "run"
        out.mkdir(mode=0o700, exist_ok=True)
        return out

    def running(self) -> bool:
        return self.run is not None and self.run.state == "running"

    def tidy_uploads(self, pending: Iterable[Path] = ()) -> None:
        """Remove the uploads (tables, hierarchies) no longer in use: neither the dataset's,
        the settings', a running run's nor ``pending`` (those being checked)."""
        running = self.running()
        keep = {d.path for d in (self.dataset, self.run_dataset if running else None) if d}
        for d in (self.dataset, self.run_dataset if running else None):
            if d is not None and d.items is not None:
                keep.add(d.items.path)  # a relational run's items table
        for settings in (self.settings, self.run_settings if running else None):
            if settings is not None:
                keep.update(h.path for h in settings.hierarchies.values())
                if settings.population is not None:
                    keep.add(settings.population.path)
        keep.update(pending)
        for pattern in ("upload-*", "hierarchy-*", "population-*"):
            for path in self.directory.glob(pattern):
                if path not in keep:
                    path.unlink(missing_ok=True)


@dataclass
class AppState:
    """The app: its token, private directory, the origins it answers on (``http://host:port``;
    their host:port are the only Host headers accepted), an optional directory of files to
    pick from, its limits, and a random id that names its cookies."""

    token: str
    directory: Path
    data_dir: Path | None = None
    origins: tuple[str, ...] = ()
    limits: data.Limits = field(default_factory=data.Limits)
    instance: str = field(default_factory=lambda: secrets.token_hex(6))
    sessions: dict[str, Session] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def token_cookie(self) -> str:
        return f"anonymatch_{self.instance}_token"

    @property
    def session_cookie(self) -> str:
        return f"anonymatch_{self.instance}_session"

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset(urlsplit(o).netloc.lower() for o in self.origins)

    def session(self, request: Request) -> Session:
        sid = request.cookies.get(self.session_cookie, "")
        with self.lock:
            if sid not in self.sessions:
                raise InputError("no session: open the address printed at start again")
            return self.sessions[sid]

    def new_session(self) -> Session:
        sid = secrets.token_urlsafe(16)
        with self.lock:
            directory = self.directory / f"session-{secrets.token_hex(6)}"
            directory.mkdir(mode=0o700)
            self.sessions[sid] = Session(sid, directory)
            return self.sessions[sid]

    def pickable(self) -> list[tuple[str, Path]]:
        """Tables in the data directory (CSV, TSV, DAT, Parquet): their names and resolved
        paths, by name; a symbolic link is followed only to a file inside the directory."""
        if self.data_dir is None:
            return []
        root = self.data_dir.resolve()
        found = []
        for entry in sorted(os.scandir(root), key=lambda e: e.name):
            if not entry.name.lower().endswith(data.TABLE_SUFFIXES):
                continue
            path = Path(entry.path).resolve()
            if path.is_relative_to(root) and path.is_file():
                found.append((entry.name, path))
        return found

    def stop_all(self) -> None:
        """Stop every run and remove every session's files."""
        for session in list(self.sessions.values()):
            if session.run is not None:
                session.run.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


class Guard:
    """Host, origin, token and size checks on every request, security headers on every
    response, and the error page of an unexpected exception (pure ASGI, outermost)."""

    def __init__(
        self, app: ASGIApp, state: AppState, error_page: Callable[[str, int], Response]
    ) -> None:
        assert state.origins, "the app needs the origins it answers on"
        self.app = app
        self.state = state
        self.error_page = error_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_guarded(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in SECURITY_HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        request = Request(scope)
        response = self.check(request)
        if response is not None:
            await response(scope, receive, send_guarded)
            return
        bound = self.state.limits.max_upload_bytes + FORM_SLACK
        bound = bound if scope["path"] in UPLOADS else FORM_BYTES
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > bound:
            await self.too_large(scope, receive, send_guarded)
            return
        seen = 0

        async def receive_bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > bound:
                    raise TooLarge
            return message

        try:
            await self.app(scope, receive_bounded, send_guarded)
        except TooLarge:
            if started:
                raise
            await self.too_large(scope, receive, send_guarded)
        except Exception as exc:
            if started:
                raise
            line = f"internal error: {type(exc).__name__}: {exc}"
            await self.error_page(line, 500)(scope, receive, send_guarded)

    async def too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = data.human_size(self.state.limits.max_upload_bytes)
        line = (
            f"error: the upload is larger than the limit of {limit} (anonymatch ui --max-upload-mb)"
            if scope["path"] in UPLOADS
            else "error: the form is too large"
        )
        await self.error_page(line, 413)(scope, receive, send)

    def check(self, request: Request) -> Response | None:
        """The refusal or redirect this request gets before any route sees it (None: none)."""
        state = self.state
        if request.headers.get("host", "").lower() not in state.hosts:
            return PlainTextResponse(
                "403 forbidden: this address is not the app's own (Host header)\n", 403
            )
        if request.method in UNSAFE_METHODS and not self.same_origin(request.headers):
            return PlainTextResponse(
                "403 forbidden: a request from another site (or another local port) is refused "
                "(Origin check)\n",
                403,
            )
        given = request.query_params.get("token")
        if given is not None:
            if not same(given, state.token) or request.method != "GET":
                return PlainTextResponse(FORBIDDEN, 403)
            response: Response = RedirectResponse(request.url.remove_query_params("token"), 303)
            set_cookie(response, state.token_cookie, state.token)
            if request.cookies.get(state.session_cookie) not in state.sessions:
                set_cookie(response, state.session_cookie, state.new_session().id)
            return response
        if not same(request.cookies.get(state.token_cookie, ""), state.token):
            return PlainTextResponse(FORBIDDEN, 403)
        if request.cookies.get(state.session_cookie) not in state.sessions:
            if request.method in UNSAFE_METHODS:
                return PlainTextResponse("403 forbidden: no session; reload the page\n", 403)
            response = RedirectResponse(request.url, 303)
            set_cookie(response, state.session_cookie, state.new_session().id)
            return response
        return None

    def same_origin(self, headers: Headers) -> bool:
        """Whether a state-changing request comes from one of the app's origins: its Origin
        header, else its Referer's origin; neither (or ``Origin: null``) is refused."""
        origin = headers.get("origin")
        if origin is None:
            referer = headers.get("referer")
            if referer is None:
                return False
            parts = urlsplit(referer)
            origin = f"{parts.scheme}://{parts.netloc}"
        return origin.lower() in {o.lower() for o in self.state.origins}


def set_cookie(response: Response, name: str, value: str) -> None:
    response.set_cookie(name, value, httponly=True, samesite="strict", path="/")


async def posted(
    request: Request, session: Session, *, max_files: int = 0, max_fields: int = 20
) -> FormData:
    """The request's form, once its CSRF token is checked (constant time): every POST handler
    reads its form through here. Raises ``Refused`` (403) on a missing or wrong token."""
    form = await request.form(max_files=max_files, max_fields=max_fields)
    given = form.get("csrf")
    if not isinstance(given, str) or not same(given, session.csrf):
        await form.close()
        raise Refused("403 forbidden: the form's CSRF token is missing or wrong; reload the page")
    return form


def attachment(filename: str) -> str:
    """A Content-Disposition for a download named ``filename`` (any characters: an ASCII
    fallback and the UTF-8 name, RFC 6266)."""
    fallback = "".join(ch if ch.isascii() and ch.isalnum() or ch in "._-" else "_"
                       for ch in filename)  # fmt: skip
    return f"attachment; filename=\"{fallback}\"; filename*=utf-8''{quote(filename, safe='')}"


def create_app(state: AppState) -> Starlette:
    """The Starlette application of ``state``."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("anonymatch.ui", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    limits = state.limits

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        session = context.get("session")
        context.setdefault("csrf", session.csrf if session is not None else "")
        return HTMLResponse(env.get_template(name).render(**context), status)

    def error_page(line: str, status: int) -> Response:
        return page("error.html.j2", status, error=line)

    def shown(session: Session, text: str) -> str:
        """``text`` without the private directory's paths (file names are enough)."""
        for prefix in (session.directory / "run", session.directory):
            text = text.replace(f"{prefix}{os.sep}", "")
        return text

    def go(path: str) -> RedirectResponse:
        return RedirectResponse(path, 303)

    async def index(request: Request) -> Response:
        session = state.session(request)
        error, session.error = session.error, None
        notice, session.notice = session.notice, None
        files = [(name, data.human_size(p.stat().st_size)) for name, p in state.pickable()]
        return page("index.html.j2", session=session, files=files, error=error, notice=notice,
                    separators=list(data.SEPARATORS),
                    max_upload=limits.max_upload_bytes,
                    max_upload_shown=data.human_size(limits.max_upload_bytes))  # fmt: skip

    async def reading(form: Any, dataset: data.Dataset, session: Session) -> data.Dataset:
        dataset.header = form.get("header") in ("on", "true", "1")
        sep = str(form.get("sep", "auto"))
        if sep not in data.SEPARATORS:
            raise InputError(f"unknown separator {sep!r}")
        dataset.sep = sep
        dataset.names = [n.strip() for n in str(form.get("names", "")).split(",") if n.strip()]
        # parsing a table takes seconds on a large one: off the event loop
        dataset = await run_in_threadpool(data.load, dataset, limits, session.directory)
        if dataset.items is not None:  # read again: the relational choices again
            dataset = relational.attach_items(dataset, dataset.items)
        return dataset

    async def store_items(item: Any, session: Session) -> data.Dataset:
        """The upload form's items table (relational runs): stored under a generated name
        (mode 0600) and read within the table limits; removed again if it cannot be read."""
        name = data.shown_name(item.filename)
        target = session.directory / data.stored_name(item.filename)
        try:
            with open(target, "xb", opener=_private_opener) as fh:
                while chunk := await item.read(UPLOAD_CHUNK):
                    fh.write(chunk)
            if target.stat().st_size == 0:
                raise InputError(f"{name} is empty")
            items = data.Dataset(target, name, target.stat().st_size)
            return await run_in_threadpool(data.load, items, limits, session.directory, False)
        except BaseException:
            target.unlink(missing_ok=True)
            raise

    async def upload(request: Request) -> Response:
        session = state.session(request)
        form = await posted(request, session, max_files=2)
        target: Path | None = None
        items: data.Dataset | None = None
        try:
            item = form.get("file")
            if item is None or isinstance(item, str) or not item.filename:
                raise InputError("choose a file to upload")
            name = data.shown_name(item.filename)
            target = session.directory / data.stored_name(item.filename)
            with open(target, "xb", opener=_private_opener) as fh:
                while chunk := await item.read(UPLOAD_CHUNK):
                    fh.write(chunk)
            if target.stat().st_size == 0:
                raise InputError(f"{name} is empty")
            dataset = data.Dataset(target, name, target.stat().st_size)
            dataset = await reading(form, dataset, session)
            extra = form.get("items")  # relational: a long items table beside the people
            if extra is not None and not isinstance(extra, str) and extra.filename:
                items = await store_items(extra, session)
                dataset = relational.attach_items(dataset, items)
            session.dataset = dataset
            target = items = None  # kept: they are the dataset now
            session.tidy_uploads()
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
            return go("/")
        finally:
            await form.close()
            for left in (target, items.path if items is not None else None):
                if left is not None:
                    left.unlink(missing_ok=True)
        return go("/dataset")

    async def pick(request: Request) -> Response:
        session = state.session(request)
        form = await posted(request, session)
        name = str(form.get("name", ""))
        try:
            chosen = dict(state.pickable()).get(name)
            if chosen is None:
                raise InputError(f"no such file to pick: {name!r}")
            dataset = data.Dataset(chosen, name, chosen.stat().st_size)
            session.dataset = await reading(form, dataset, session)
            session.tidy_uploads()
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
            return go("/")
        return go("/dataset")

    async def database(request: Request) -> Response:
        """A database table as the source: checked (``data.database_name``), copied into a
        private Parquet file of the session (``data.copy_database_table``) and read like an
        upload. The URL's password is used for that read only: never stored, shown or
        logged (the name shown and every message carry the URL without it)."""
        session = state.session(request)
        form = await posted(request, session)
        target: Path | None = None
        try:
            url, table = str(form.get("url", "")).strip(), str(form.get("table", "")).strip()
            name = data.database_name(url, table, state.data_dir)
            target = session.directory / data.stored_name("table.parquet")
            await run_in_threadpool(data.copy_database_table, url, table, target, limits)
            dataset = data.Dataset(target, name, target.stat().st_size)  # Parquet: a header
            session.dataset = await run_in_threadpool(data.load, dataset, limits, session.directory)
            target = None  # kept: it is the dataset now
            session.tidy_uploads()
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
            return go("/")
        finally:
            if target is not None:
                target.unlink(missing_ok=True)
        return go("/dataset")

    async def reread(request: Request) -> Response:
        session = state.session(request)
        form = await posted(request, session)
        if session.dataset is None:
            return go("/")
        try:
            # a copy: the dataset stays as it was if the new options cannot read it
            session.dataset = await reading(form, copy.deepcopy(session.dataset), session)
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
        return go("/dataset")

    async def dataset(request: Request) -> Response:
        session = state.session(request)
        if session.dataset is None:
            return go("/")
        error, session.error = session.error, None
        notice, session.notice = session.notice, None
        ds = session.dataset
        return page(
            "dataset.html.j2",
            session=session,
            ds=ds,
            size=data.human_size(ds.size),
            view=data.form_view(ds, session.settings),
            methods=relational.methods() if ds.items is not None else data.methods(),
            roles=data.ROLES,
            types=data.TYPES,
            granularities=data.GRANULARITIES,
            diversities=data.DIVERSITIES,
            criteria=[p for p in data.POPULATION_CRITERIA.parameters() if p.kind != "table"],
            check_flags=data.CHECK_FLAGS,
            separators=list(data.SEPARATORS),
            error=error,
            notice=notice,
        )

    async def store_hierarchies(
        form: FormData, session: Session, columns: list[str]
    ) -> dict[str, data.HierarchyFile]:
        """The run form's hierarchies: the settings' own, replaced by a new upload or removed
        when asked; each new upload stored under a generated name and read (one line naming
        the uploaded file if it is no ARX hierarchy)."""
        kept = dict(session.settings.hierarchies) if session.settings is not None else {}
        added: list[Path] = []
        try:
            for c in columns:
                if form.get(f"hierarchy_clear:{c}") in ("on", "true", "1"):
                    kept.pop(c, None)
                item = form.get(f"hierarchy:{c}")
                if item is None or isinstance(item, str) or not item.filename:
                    continue
                upload = data.HierarchyFile(
                    session.directory / data.stored_hierarchy_name(), data.shown_name(item.filename)
                )
                added.append(upload.path)
                with open(upload.path, "xb", opener=_private_opener) as fh:
                    while chunk := await item.read(UPLOAD_CHUNK):
                        fh.write(chunk)
                await run_in_threadpool(data.check_hierarchy, upload)
                kept[c] = upload
        except BaseException:
            for path in added:
                path.unlink(missing_ok=True)
            raise
        return kept

    async def store_population(form: FormData, session: Session, settings: data.Settings) -> None:
        """The run form's population table and sampling fraction into ``settings``: a new
        upload stored under a generated name and read within the data upload's budgets, with
        every quasi-identifier (one line naming the uploaded file otherwise); else the previous
        settings' table unless removed."""
        item = form.get("population")
        upload = None
        if item is not None and not isinstance(item, str) and item.filename:
            name = data.shown_name(item.filename)
            upload = data.HierarchyFile(session.directory / data.stored_population_name(name), name)
            try:
                with open(upload.path, "xb", opener=_private_opener) as fh:
                    while chunk := await item.read(UPLOAD_CHUNK):
                        fh.write(chunk)
                await run_in_threadpool(
                    data.check_population, upload, settings, limits, session.directory
                )
            except BaseException:
                upload.path.unlink(missing_ok=True)
                raise
        settings.population, settings.sampling_fraction = data.population_choice(
            form, session.settings, upload
        )
        if settings.population is not None and upload is None:  # kept: its QIs again
            await run_in_threadpool(
                data.check_population, settings.population, settings, limits, session.directory
            )

    async def run(request: Request) -> Response:
        session = state.session(request)
        columns = session.dataset.columns if session.dataset is not None else []
        form = await posted(request, session, max_files=len(columns) + 1,
                            max_fields=10 * len(columns) + 40)  # fmt: skip
        try:
            if session.dataset is None:
                return go("/")
            if session.running():
                session.error = "error: a run is already going on; wait for it to finish"
                return go("/job")
            ds = session.dataset
            carried = session.settings.carried if session.settings is not None else {}
            try:
                trees = await store_hierarchies(form, session, columns)
                if ds.items is not None:  # people with a row and a set: a relational job
                    settings = await run_in_threadpool(relational.settings_from_form,
                                                       data.Settings, form, ds, trees)  # fmt: skip
                else:
                    settings = await run_in_threadpool(data.Settings.from_form, form, ds, trees,
                                                       carried)  # fmt: skip
                await store_population(form, session, settings)
                if ds.items is None:  # the criteria checked with the population stored
                    await run_in_threadpool(settings.table_job, ds)
                else:
                    await run_in_threadpool(relational.relational_job, settings)
            except AnonymatchError as exc:
                session.error = f"error: {exc}"
                session.tidy_uploads()
                return go("/dataset")
        finally:
            await form.close()
        session.settings = settings
        session.tidy_uploads()
        out = session.run_dir()
        for old in out.iterdir():
            old.unlink()
        rt = ds.items is not None  # people with a row and a set: anonymize-rt
        outputs = {
            "release": out / (relational.RELEASE if rt else "release.csv"),
            "manifest": out / "manifest.json",
            "report": out / "report.html",
        }
        # the run keeps its own copies: an upload or new settings meanwhile relabel nothing
        session.run_dataset = run_ds = copy.deepcopy(ds)
        session.run_settings = run_settings = copy.deepcopy(settings)
        job_file = session.directory / "job.toml"
        job_file.unlink(missing_ok=True)
        with open(job_file, "x", encoding="utf-8", opener=_private_opener) as fh:
            fh.write(render_toml(run_settings.run_job(run_ds, session.directory)))

        def measure() -> dict[str, Any]:
            manifest = load_manifest(outputs["manifest"])
            found: dict[str, Any] = {"guarantee": data.guarantee(manifest)}
            if rt:
                try:
                    found.update(relational.headline(run_settings, run_ds, outputs["release"]))
                except Exception as exc:  # the release stands; the page says why
                    line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                    found["risk_error"] = line or type(exc).__name__
                return found
            try:
                found["risk"] = data.risk_headline(run_settings, run_ds, outputs["release"],
                                                   manifest)  # fmt: skip
            except Exception as exc:  # the release stands; the page says why
                found["risk_error"] = str(exc).strip().splitlines()[0] if str(exc).strip() \
                    else type(exc).__name__  # fmt: skip
            try:
                found["population"] = data.population_headline(
                    run_settings, run_ds, outputs["release"], manifest
                )
            except Exception as exc:  # the release stands; the page says why
                line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                found["population_error"] = line or type(exc).__name__
            return found

        def relative(path: Path) -> str:  # a picked table stays where it is
            inside = path.is_relative_to(session.directory)
            return str(path.relative_to(session.directory)) if inside else str(path)

        # the job says everything; the command line adds only where the app wants the outputs
        # (relative paths: the manifest and the report name files, not the private directory)
        # and the table (after `--`: whatever its name, never read as an option)
        argv = ["anonymize-rt" if rt else "anonymize", "--config", relative(job_file),
                "-o", relative(outputs["release"]), "--report", relative(outputs["manifest"]),
                "--report-html", relative(outputs["report"]), "--force",
                "--", relative(run_ds.path)]  # fmt: skip
        session.run = Run(argv, outputs, finish=measure)
        session.run.start(session.directory)
        return go("/job")

    async def open_job(request: Request) -> Response:
        """Open a job file: validated (one located line), its columns, model and method fill
        the form. Its input is the current table, unless it names a table of the data
        directory (that one is read, with the job's reading options); no other path is read."""
        session = state.session(request)
        form = await posted(request, session, max_files=1)
        try:
            item = form.get("job")
            if item is None or isinstance(item, str) or not item.filename:
                raise InputError("choose a job file (TOML) to open")
            name = data.shown_name(item.filename)
            job = data.read_job_text(await item.read(FORM_BYTES), name)
            if job.kind != "table":
                raise InputError(f"{name}: kind: the web app runs table jobs, not {job.kind!r}")
            chosen = data.inside(job.input.path, state.data_dir)
            pickable = {path: shown for shown, path in state.pickable()}
            notes = []
            if chosen is not None and chosen in pickable:
                ds = data.Dataset(chosen, pickable[chosen], chosen.stat().st_size)
                ds.header = job.input.header
                ds.sep = data.separator_key(job.input.sep)
                names = job.input.names or (None if job.input.header else list(job.columns))
                ds.names = list(names or [])
                ds = await run_in_threadpool(data.load, ds, limits, session.directory)
            elif session.dataset is not None:
                ds = session.dataset
                notes.append(f"its input ({job.input.path}) is not a table of the data "
                             f"directory: the job is applied to {ds.name}")  # fmt: skip
                if ds.items is not None:  # a table job: the items table is set aside
                    ds = copy.deepcopy(ds)
                    ds.items = None
                    notes.append("the items table is set aside (a table job)")
            else:
                raise InputError(
                    f"{name}: input.path: {job.input.path} is not a table of the data directory; "
                    "choose the table first, then open the job"
                )
            trees: dict[str, data.HierarchyFile] = {}
            for c, column in job.columns.items():
                if column.hierarchy is None or column.role != "qi":
                    continue
                found = data.inside(column.hierarchy, state.data_dir)
                if found is None or found.stat().st_size > limits.max_upload_bytes:
                    notes.append(f"columns.{c}.hierarchy ({column.hierarchy}) is not in the data "
                                 "directory: upload it on the form")  # fmt: skip
                    continue
                stored = session.directory / data.stored_hierarchy_name()
                with open(stored, "xb", opener=_private_opener) as fh:
                    fh.write(found.read_bytes())
                trees[c] = data.HierarchyFile(stored, found.name)
                try:
                    await run_in_threadpool(data.check_hierarchy, trees[c])
                except AnonymatchError:
                    stored.unlink(missing_ok=True)
                    raise
            try:
                settings = data.Settings.from_job(job, ds, trees)
            except AnonymatchError as exc:
                for tree in trees.values():
                    tree.path.unlink(missing_ok=True)
                raise InputError(f"{name}: {exc}") from None
            session.dataset, session.settings = ds, settings
            session.tidy_uploads()
            session.notice = f"opened {name}" + (f"; {'; '.join(notes)}" if notes else "")
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
            return go("/dataset" if session.dataset is not None else "/")
        finally:
            await form.close()
        return go("/dataset")

    async def job(request: Request) -> Response:
        session = state.session(request)
        if session.run is None:
            return go("/")
        error, session.error = session.error, None
        return page("job.html.j2", session=session, run=session.run,
                    command=shown(session, quote_argv(session.run.argv)),
                    error=error)  # fmt: skip

    async def status(request: Request) -> Response:
        session = state.session(request)
        if session.run is None:
            return JSONResponse({"state": "none"})
        return JSONResponse(session.run.status())

    async def result(request: Request) -> Response:
        session = state.session(request)
        if session.run is None or session.run.state != "done":
            return go("/job" if session.run else "/")
        assert session.run_dataset is not None and session.run_settings is not None
        finished = session.run.finished or {}
        return page("result.html.j2", session=session, run=session.run,
                    ds=session.run_dataset, guarantee=finished.get("guarantee"),
                    risk=finished.get("risk"),
                    risk_error=finished.get("risk_error") or session.run.finish_error,
                    population=finished.get("population"),
                    population_error=finished.get("population_error"),
                    utility=finished.get("utility"),
                    summary=shown(session, "\n".join(session.run.summary)),
                    command=shown(session, quote_argv(session.run.argv)))  # fmt: skip

    async def report(request: Request) -> Response:
        session = state.session(request)
        if session.run is None or session.run.state != "done":
            return go("/")
        return FileResponse(session.run.outputs["report"], media_type="text/html",
                            headers={"content-security-policy": REPORT_CSP})  # fmt: skip

    async def download(request: Request) -> Response:
        session = state.session(request)
        what = request.path_params["what"]
        ran, settings = session.run_dataset, session.run_settings
        if session.run is None or session.run.state != "done" or ran is None:
            return go("/")
        stem = Path(ran.name).stem
        if what == "job":
            assert settings is not None
            disposition = {"content-disposition": attachment(f"{stem}_job.toml")}
            return Response(settings.job_toml(ran), media_type="application/toml",
                            headers=disposition)  # fmt: skip
        if what == "draws" and "draws" not in session.run.outputs and ran.items is None:
            # issue 39: five anchored draws of the release, made on the first request by
            # `anonymatch draw` (a child process, as the run), kept for the next ones
            target = session.run.outputs["release"].parent / "draws.zip"
            await run_in_threadpool(draws_zip, session.run.outputs, target, session.directory)
            session.run.outputs["draws"] = target
        if what not in session.run.outputs:
            return PlainTextResponse("404 not found\n", 404)
        path = session.run.outputs[what]
        return FileResponse(path, headers={
            "content-disposition": attachment(f"{stem}_{what}{path.suffix}")})  # fmt: skip

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return PlainTextResponse("404 not found\n", 404)
        text = resources.files("anonymatch.ui").joinpath("templates", name).read_text("utf-8")
        return Response(text, media_type=STATIC[name])

    async def refused(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(f"{exc}\n", 403)

    async def failure(request: Request, exc: Exception) -> Response:
        return error_page(f"error: {exc}", 400)

    routes = [
        Route("/", index),
        Route("/upload", upload, methods=["POST"]),
        Route("/pick", pick, methods=["POST"]),
        Route("/database", database, methods=["POST"]),
        Route("/read", reread, methods=["POST"]),
        Route("/dataset", dataset),
        Route("/run", run, methods=["POST"]),
        Route("/open", open_job, methods=["POST"]),
        Route("/job", job),
        Route("/status", status),
        Route("/result", result),
        Route("/report", report),
        Route("/download/{what}", download),
        Route("/static/{name}", static),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={Refused: refused, AnonymatchError: failure},
    )
    app.add_middleware(Guard, state=state, error_page=error_page)
    return app


DRAWS = 5
"""Plain draws in the result page's ZIP (``anonymatch draw -m 5``)."""


def draws_zip(outputs: dict[str, Path], target: Path, tmpdir: Path) -> None:
    """Run ``anonymatch draw RELEASE -m 5 --manifest MANIFEST`` in a child process (fresh
    randomness, anchored draws with the release's k) and pack the draws and their
    ``draws.json`` into the ZIP ``target`` (mode 0600). InputError with the CLI's error line
    when the draw fails. O(the draws' size)."""
    import subprocess
    import tempfile
    import zipfile

    from anonymatch.ui.runner import child_env, cli_command

    work = Path(tempfile.mkdtemp(dir=tmpdir))
    try:
        out = work / "draws"
        argv = ["draw", str(outputs["release"]), "-m", str(DRAWS), "-o", str(out),
                "--manifest", str(outputs["manifest"]), "-q"]  # fmt: skip
        done = subprocess.run([*cli_command(), *argv], stdin=subprocess.DEVNULL,
                              capture_output=True, env=child_env(tmpdir), cwd=tmpdir,
                              check=False)  # fmt: skip
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise InputError((lines[-1] if lines else "draw failed").removeprefix(
                "anonymatch: error: "))  # fmt: skip
        target.unlink(missing_ok=True)
        with open(target, "xb", opener=_private_opener) as fh, zipfile.ZipFile(
                fh, "w", zipfile.ZIP_DEFLATED) as archive:  # fmt: skip
            for path in sorted(out.iterdir()):
                archive.write(path, path.name)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _private_opener(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
