"""The web app's pages (Starlette, server-rendered Jinja2 templates, a few lines of JS that
poll the progress of a run).

Access: every request needs the app's token, given once in the address (``/?token=…``, as
Jupyter does), then kept in a cookie (HttpOnly, SameSite=Strict); anything else gets 403.
Each browser gets its own session (a random cookie): its dataset, its run (one at a time) and a
private directory under the app's own (mode 0700).
"""

from __future__ import annotations

import os
import secrets
import shutil
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
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

from anonymatch.core.errors import AnonymatchError, InputError
from anonymatch.ui import data
from anonymatch.ui.runner import Run, quote_argv

TOKEN_COOKIE = "anonymatch_token"
SESSION_COOKIE = "anonymatch_session"
FORBIDDEN = (
    "403 forbidden: open the address that `anonymatch ui` printed when it started "
    "(it carries the access token)\n"
)
UPLOAD_CHUNK = 1 << 20


@dataclass
class Session:
    """One browser's work: a private directory, the dataset, the current or last run."""

    id: str
    directory: Path
    dataset: data.Dataset | None = None
    settings: data.Settings | None = None
    run: Run | None = None
    error: str | None = None

    def run_dir(self) -> Path:
        out = self.directory / "run"
        out.mkdir(mode=0o700, exist_ok=True)
        return out


@dataclass
class AppState:
    """The app: its token, private directory, optional directory of files to pick from."""

    token: str
    directory: Path
    data_dir: Path | None = None
    sessions: dict[str, Session] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def session(self, request: Request) -> Session:
        sid = request.cookies.get(SESSION_COOKIE, "")
        with self.lock:
            if sid not in self.sessions:
                raise InputError("no session: open the address printed at start again")
            return self.sessions[sid]

    def new_session(self) -> Session:
        sid = secrets.token_urlsafe(16)
        directory = self.directory / f"session-{len(self.sessions)}"
        directory.mkdir(mode=0o700)
        with self.lock:
            self.sessions[sid] = Session(sid, directory)
        return self.sessions[sid]

    def pickable(self) -> list[Path]:
        """Tables in the data directory (CSV, TSV, DAT, Parquet), by name."""
        if self.data_dir is None:
            return []
        suffixes = {".csv", ".tsv", ".txt", ".dat", ".data", ".parquet", ".pq"}
        return sorted(
            p for p in self.data_dir.iterdir() if p.is_file() and p.suffix.lower() in suffixes
        )

    def stop_all(self) -> None:
        """Stop every run and remove every session's files."""
        for session in list(self.sessions.values()):
            if session.run is not None:
                session.run.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


class TokenMiddleware(BaseHTTPMiddleware):
    """403 without the token; ``?token=`` sets the cookies and redirects to a clean address."""

    def __init__(self, app: Any, state: AppState) -> None:
        super().__init__(app)
        self.state = state

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        token = self.state.token
        given = request.query_params.get("token")
        if given is not None and secrets.compare_digest(given, token):
            response = RedirectResponse(request.url.remove_query_params("token"), 303)
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
            if request.cookies.get(SESSION_COOKIE) not in self.state.sessions:
                session = self.state.new_session()
                response.set_cookie(SESSION_COOKIE, session.id, httponly=True, samesite="strict")
            return response
        cookie = request.cookies.get(TOKEN_COOKIE, "")
        if not secrets.compare_digest(cookie, token):
            return PlainTextResponse(FORBIDDEN, 403)
        if request.cookies.get(SESSION_COOKIE) not in self.state.sessions:
            response = RedirectResponse(request.url, 303)
            session = self.state.new_session()
            response.set_cookie(SESSION_COOKIE, session.id, httponly=True, samesite="strict")
            return response
        return await call_next(request)


def create_app(state: AppState) -> Starlette:
    """The Starlette application of ``state``."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("anonymatch.ui", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(env.get_template(name).render(**context), status)

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
        files = [(p.name, data.human_size(p.stat().st_size)) for p in state.pickable()]
        return page("index.html.j2", session=session, files=files, error=error,
                    separators=list(data.SEPARATORS))  # fmt: skip

    def reading(form: Any, dataset: data.Dataset) -> data.Dataset:
        dataset.header = form.get("header") in ("on", "true", "1")
        sep = str(form.get("sep", "auto"))
        if sep not in data.SEPARATORS:
            raise InputError(f"unknown separator {sep!r}")
        dataset.sep = sep
        dataset.names = [n.strip() for n in str(form.get("names", "")).split(",") if n.strip()]
        return data.load(dataset)

    async def upload(request: Request) -> Response:
        session = state.session(request)
        form = await request.form(max_files=1, max_fields=20)
        try:
            item = form.get("file")
            if item is None or isinstance(item, str) or not item.filename:
                raise InputError("choose a file to upload")
            target = session.directory / data.safe_name(item.filename)
            with open(target, "wb", opener=_private_opener) as fh:
                while chunk := await item.read(UPLOAD_CHUNK):
                    fh.write(chunk)
            await item.close()
            if target.stat().st_size == 0:
                raise InputError(f"{item.filename} is empty")
            dataset = data.Dataset(target, target.name, target.stat().st_size)
            session.dataset = reading(form, dataset)
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
            return go("/")
        finally:
            await form.close()
        return go("/dataset")

    async def pick(request: Request) -> Response:
        session = state.session(request)
        form = await request.form(max_files=0, max_fields=20)
        name = str(form.get("name", ""))
        try:
            chosen = next((p for p in state.pickable() if p.name == name), None)
            if chosen is None:
                raise InputError(f"no such file to pick: {name!r}")
            dataset = data.Dataset(chosen, chosen.name, chosen.stat().st_size)
            session.dataset = reading(form, dataset)
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
            return go("/")
        return go("/dataset")

    async def reread(request: Request) -> Response:
        session = state.session(request)
        if session.dataset is None:
            return go("/")
        form = await request.form(max_files=0, max_fields=20)
        try:
            reading(form, session.dataset)
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
        return go("/dataset")

    async def dataset(request: Request) -> Response:
        session = state.session(request)
        if session.dataset is None:
            return go("/")
        error, session.error = session.error, None
        return page(
            "dataset.html.j2",
            session=session,
            ds=session.dataset,
            size=data.human_size(session.dataset.size),
            settings=session.settings,
            methods=data.METHODS,
            roles=data.ROLES,
            types=data.TYPES,
            separators=list(data.SEPARATORS),
            error=error,
        )

    async def run(request: Request) -> Response:
        session = state.session(request)
        if session.dataset is None:
            return go("/")
        if session.run is not None and session.run.state == "running":
            session.error = "error: a run is already going on; wait for it to finish"
            return go("/job")
        form = await request.form(max_files=0, max_fields=4 * len(session.dataset.columns) + 20)
        try:
            settings = data.Settings.from_form(form, session.dataset.columns)
        except AnonymatchError as exc:
            session.error = f"error: {exc}"
            return go("/dataset")
        session.settings = settings
        out = session.run_dir()
        for old in out.iterdir():
            old.unlink()
        outputs = {
            "release": out / "release.csv",
            "manifest": out / "manifest.json",
            "report": out / "report.html",
        }
        session.run = Run(settings.argv(session.dataset, out, session.directory), outputs)
        session.run.start(session.directory)
        return go("/job")

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
        assert session.dataset is not None and session.settings is not None
        return page("result.html.j2", session=session, run=session.run,
                    summary=shown(session, "\n".join(session.run.summary)),
                    command=shown(session, quote_argv(session.run.argv)))  # fmt: skip

    async def report(request: Request) -> Response:
        session = state.session(request)
        if session.run is None or session.run.state != "done":
            return go("/")
        return FileResponse(session.run.outputs["report"], media_type="text/html")

    async def download(request: Request) -> Response:
        session = state.session(request)
        what = request.path_params["what"]
        if session.run is None or session.run.state != "done" or session.dataset is None:
            return go("/")
        stem = Path(session.dataset.name).stem
        if what == "job":
            assert session.settings is not None
            text = session.settings.job_toml(session.dataset)
            return Response(text, media_type="application/toml", headers={
                "Content-Disposition": f'attachment; filename="{stem}_job.toml"'})  # fmt: skip
        if what not in session.run.outputs:
            return PlainTextResponse("404 not found\n", 404)
        path = session.run.outputs[what]
        return FileResponse(path, filename=f"{stem}_{what}{path.suffix}")

    async def failure(request: Request, exc: Exception) -> Response:
        line = f"error: {exc}" if isinstance(exc, AnonymatchError) else (
            f"internal error: {type(exc).__name__}: {exc}")  # fmt: skip
        return page("error.html.j2", 400 if isinstance(exc, AnonymatchError) else 500,
                    error=line)  # fmt: skip

    routes = [
        Route("/", index),
        Route("/upload", upload, methods=["POST"]),
        Route("/pick", pick, methods=["POST"]),
        Route("/read", reread, methods=["POST"]),
        Route("/dataset", dataset),
        Route("/run", run, methods=["POST"]),
        Route("/job", job),
        Route("/status", status),
        Route("/result", result),
        Route("/report", report),
        Route("/download/{what}", download),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(TokenMiddleware, state=state)],
        exception_handlers={Exception: failure},
    )


def _private_opener(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)
