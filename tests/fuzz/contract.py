"""The fuzzing contract (issue 15) and its bookkeeping.

Every run of a command must either succeed — and then whatever it published passes the
independent verifier — or exit with a documented code (2, 3, 4, 5, 6; 130/143 for signals)
with exactly one line on stderr (warnings aside) and nothing at the output path, the report
path, beside them or in the temporary directory. For ``verify*``/``check-*`` exit 4 is the
verdict "the release fails the check", printed on stdout (and silenced by ``-q``).

``run`` runs the CLI in-process (``cli.main``) with a private ``$TMPDIR``; ``STATS`` counts
the cases tried and the contract breaks per command; the session prints them (``conftest.py``)
and, with ``ANONYMATCH_FUZZ_REPORT=path``, writes them as JSON.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings

from anonymatch.cli import main

EXAMPLES = int(os.environ.get("ANONYMATCH_FUZZ_EXAMPLES", "6"))
settings.register_profile(
    "fuzz",
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("ANONYMATCH_FUZZ_RANDOM") is None and EXAMPLES <= 10,
    suppress_health_check=list(HealthCheck),
    database=None,
)
FUZZ = settings.get_profile("fuzz")
DOCUMENTED = {2, 3, 4, 5, 6, 130, 143}
SOAK = os.environ.get("ANONYMATCH_FUZZ_SOAK") is not None  # record every break, raise none
# commands whose exit 4 is their verdict "the release fails the check" (docs/cli.md, exit codes)
CHECKERS = {"verify", "check-kl", "check-km", "check-graph", "verify-sets", "verify-sparse"}
# commands whose exit 4 is that verdict with their output written: the report of a manifest
# whose claims do not hold says why (docs/cli.md, anonymatch report)
REPORTS_ON_FAILURE = {"report"}


@dataclass
class Tally:
    tried: int = 0
    passed: int = 0
    known: int = 0
    refused: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    reasons: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    breaks: list[str] = field(default_factory=list)


STATS: dict[str, Tally] = defaultdict(Tally)


@dataclass
class Outcome:
    code: int
    stdout: str
    errors: list[str]  # stderr lines, warnings ("anonymatch: warning: …") left out


@contextlib.contextmanager
def private_tmp() -> Iterator[Path]:
    """A fresh, empty ``$TMPDIR`` for one run (``tempfile`` honours it after a reset)."""
    saved_env, saved = os.environ.get("TMPDIR"), tempfile.tempdir
    with tempfile.TemporaryDirectory(prefix="fuzz-tmp-") as base:
        os.environ["TMPDIR"] = base
        tempfile.tempdir = None
        try:
            yield Path(base)
        finally:
            tempfile.tempdir = saved
            if saved_env is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = saved_env


def run(argv: Sequence[str]) -> tuple[Outcome, list[str]]:
    """Run the CLI in-process; returns the outcome and what it left in its ``$TMPDIR``."""
    out, err = io.StringIO(), io.StringIO()
    with private_tmp() as tmp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
        left = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*"))
    lines = [
        line
        for line in err.getvalue().splitlines()
        if line.strip() and not line.startswith("anonymatch: warning:")
    ]
    return Outcome(code, out.getvalue(), lines), left


def check(
    command: str,
    argv: Sequence[str],
    written: Sequence[Path] = (),
    verify: Sequence[str] | None = None,
    keep: bool = False,
) -> Outcome:
    """Run ``argv`` and hold it to the contract; ``written`` are the paths it may create
    (output, report), ``verify`` the command that must pass on a successful release. Records
    the case in ``STATS`` and returns the outcome (``keep``: a verified output stays, for
    the commands that read releases); a break is recorded, not raised (the tests
    assert on ``STATS`` so that a soak counts every break)."""
    tally = STATS[command]
    tally.tried += 1
    outcome, left = run(argv)
    problems = []
    if left:
        problems.append(f"left in $TMPDIR: {left}")
    if outcome.code == 0:
        missing = [str(p) for p in written[:1] if not p.exists()]
        if missing:
            problems.append(f"exit 0 but no output {missing}")
        elif verify is not None:
            checked, _ = run(verify)
            if checked.code != 0:
                problems.append(
                    f"release fails the verifier: {checked.errors or checked.stdout[-300:]}"
                )
    else:
        if outcome.code not in DOCUMENTED:
            problems.append(f"exit {outcome.code}")
        if len(outcome.errors) != 1:
            problems.append(f"{len(outcome.errors)} stderr lines")
        present = [str(p) for p in written if p.exists()]
        if present and not (outcome.code == 4 and str(argv[0]) in REPORTS_ON_FAILURE):
            problems.append(f"failed run left {present}")
        tally.refused[outcome.code] += 1
        if outcome.errors:
            reason = (
                outcome.errors[0].split(":")[2][:60]
                if outcome.errors[0].count(":") > 1
                else outcome.errors[0][:60]
            )
            tally.reasons[reason.strip()] += 1
    for path in written:  # hidden temporaries beside the outputs
        hidden = (
            [p.name for p in path.parent.glob(f".{path.name}.*")] if path.parent.exists() else []
        )
        if hidden:
            problems.append(f"temporaries beside the output: {hidden}")
    ran = {command, str(argv[0]) if argv else command}  # a tally may group several commands
    if outcome.code == 4 and ran & (CHECKERS | REPORTS_ON_FAILURE):  # a verdict, not an error
        problems = [p for p in problems if p != f"{len(outcome.errors)} stderr lines"]
        if len(outcome.errors) > 1:
            problems.append(f"{len(outcome.errors)} stderr lines")
        tally.known += 1
    if problems:
        message = "; ".join(problems)
        first = outcome.errors[0] if outcome.errors else ""
        tally.breaks.append(f"{' '.join(map(str, argv))[:400]} -> {message} [{first[:200]}]")
        _keep_inputs(argv)
        if SOAK is False:
            raise AssertionError(f"contract broken: {tally.breaks[-1]}")
    else:
        tally.passed += outcome.code == 0
    for path in [] if keep and outcome.code == 0 and not problems else written:
        if path.is_dir():
            import shutil

            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    return outcome


def _keep_inputs(argv: Sequence[str]) -> None:
    """With ``ANONYMATCH_FUZZ_KEEP=DIR``, copy the files a breaking run was given into
    ``DIR/<n>/`` (the soak's inputs are otherwise removed with their case directory)."""
    target = os.environ.get("ANONYMATCH_FUZZ_KEEP")
    if not target:
        return
    base = Path(target) / str(sum(len(t.breaks) for t in STATS.values()))
    for arg in argv:
        path = Path(str(arg))
        if len(str(arg)) < 4096 and path.is_absolute() and path.is_file():
            base.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, base / path.name)


def breaks(command: str) -> list[str]:
    return list(STATS[command].breaks)


_CASES: list[Path] = []


def case_dir(prefix: str = "fuzz-case-") -> Path:
    """A fresh directory for one example's files, removed after the test (conftest.py)."""
    _CASES.append(Path(tempfile.mkdtemp(prefix=prefix)))
    return _CASES[-1]


def remove_case_dirs() -> None:
    """Remove the directories :func:`case_dir` made."""
    while _CASES:
        shutil.rmtree(_CASES.pop(), ignore_errors=True)
