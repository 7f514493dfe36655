"""One anonymization run of the web app: the CLI in a child process, watched by a thread.

The app runs exactly what a steward would type (``anonymatch anonymize …``) in a child
process, so the page never blocks, a run can be stopped at exit, and an error is the CLI's own
one line (``error: …``), never a traceback. Progress comes from the CLI's progress bars on
stderr (``12%|…``), parsed as they are drawn.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_PERCENT = re.compile(r"(?:^|\s)(\d{1,3})%\|")
_STAGE = re.compile(r"^([^:|]{1,60}):\s*\d{1,3}%")


def cli_command() -> list[str]:
    """The argv prefix that runs this installation's CLI with the current interpreter."""
    return [sys.executable, "-c", "from anonymatch.cli import entry; entry()"]


def child_env(tmpdir: Path) -> dict[str, str]:
    """The child's environment: this package importable, temporary files in the app's private
    directory, no progress-bar delay tricks."""
    import anonymatch

    env = dict(os.environ)
    root = str(Path(anonymatch.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env["TMPDIR"] = str(tmpdir)
    env.pop("ANONYMATCH_DEBUG", None)  # errors stay one line
    return env


@dataclass
class Run:
    """A run of the CLI: ``state`` is ``running``, ``done`` or ``failed``; ``progress`` in
    [0, 1] (None while unknown), ``stage`` the current bar's name (``failed`` once failed),
    ``error`` the CLI's error line, ``exit_code`` its exit status, ``summary`` its stdout lines,
    ``seconds`` the wall time. ``finish``, if given, runs once the CLI has succeeded (on the
    watching thread, before the run is ``done``): its value is ``finished``, or its one-line
    error ``finish_error`` (the release stands either way)."""

    argv: list[str]
    outputs: dict[str, Path]
    finish: Callable[[], Any] | None = None
    finished: Any = None
    finish_error: str | None = None
    exit_code: int | None = None
    state: str = "running"
    progress: float | None = None
    stage: str = "starting"
    error: str | None = None
    summary: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    seconds: float | None = None
    _process: subprocess.Popen[bytes] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, tmpdir: Path) -> None:
        """Start the child process and the threads that read its output."""
        self._process = subprocess.Popen(
            [*cli_command(), *self.argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(tmpdir),
            cwd=tmpdir,
        )
        threading.Thread(target=self._read_stderr, daemon=True).start()
        threading.Thread(target=self._wait, daemon=True).start()

    def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        buffer = b""
        lines: list[str] = []
        while True:
            chunk = self._process.stderr.read1(4096)  # type: ignore[attr-defined]
            if not chunk:
                break
            buffer += chunk
            parts = re.split(rb"[\r\n]", buffer)
            buffer = parts.pop()
            for raw in parts:
                line = raw.decode("utf-8", "replace").strip()
                if line:
                    self._note(line, lines)
        if buffer.strip():
            self._note(buffer.decode("utf-8", "replace").strip(), lines)
        with self._lock:
            self._stderr = lines

    def _note(self, line: str, lines: list[str]) -> None:
        percent = _PERCENT.search(line)
        with self._lock:
            if percent:
                self.progress = min(int(percent.group(1)), 100) / 100
                stage = _STAGE.match(line)
                if stage:
                    self.stage = stage.group(1).strip()
            else:
                lines.append(line)
                if line.startswith(("anonymatch: error:", "anonymatch: internal error:")):
                    self._last_message = line.removeprefix("anonymatch: ")

    def _wait(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        out = self._process.stdout.read().decode("utf-8", "replace")
        code = self._process.wait()
        time.sleep(0.05)  # let the stderr reader finish its last lines
        if code == 0 and self.finish is not None:
            with self._lock:
                self.stage, self.progress = "measuring the risk", None
            try:
                value = self.finish()
            except Exception as exc:  # the headline is extra: the release stands
                line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                with self._lock:
                    self.finish_error = line or type(exc).__name__
            else:
                with self._lock:
                    self.finished = value
        with self._lock:
            self.seconds = time.monotonic() - self.started
            self.summary = [line for line in out.splitlines() if line.strip()]
            self.exit_code = code
            if code == 0:
                self.state, self.progress, self.stage = "done", 1.0, "done"
            else:
                self.state, self.stage = "failed", "failed"
                message = getattr(self, "_last_message", None)
                if code < 0:
                    message = "the run was stopped"
                self.error = message or f"the run failed (exit code {code})"

    def status(self) -> dict[str, object]:
        """A JSON-ready snapshot for the progress page."""
        with self._lock:
            return {
                "state": self.state,
                "progress": self.progress,
                "stage": self.stage,
                "error": self.error,
                "exit_code": self.exit_code,
                "seconds": round(
                    self.seconds if self.seconds is not None else time.monotonic() - self.started,
                    1,
                ),
            }

    def stop(self) -> None:
        """Terminate the child (then kill it if it does not exit within 5 s)."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def quote_argv(argv: Sequence[str]) -> str:
    """The command line of a run, as a shell would take it."""
    import shlex

    return "anonymatch " + " ".join(shlex.quote(a) for a in argv)
