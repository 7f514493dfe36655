"""Print (and with ANONYMATCH_FUZZ_REPORT, save) the fuzzing tally at the end of the session."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fuzz.contract import STATS, remove_case_dirs


@pytest.fixture(autouse=True)
def _remove_case_dirs() -> Iterator[None]:
    yield
    remove_case_dirs()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not STATS:
        return
    write = terminalreporter.write_line
    write("fuzz contract: command, cases tried, succeeded (verified), refusals by exit code, ")
    write("  failed checks (exit 4 of verify*/check-*), contract breaks")
    for command, tally in sorted(STATS.items()):
        refused = ", ".join(f"{code}: {n}" for code, n in sorted(tally.refused.items()))
        write(
            f"  {command:18} {tally.tried:6} {tally.passed:6}  [{refused}]  "
            f"{tally.known}  {len(tally.breaks)}"
        )
        if os.environ.get("ANONYMATCH_FUZZ_VERBOSE"):
            for reason, n in sorted(tally.reasons.items(), key=lambda x: -x[1])[:8]:
                write(f"      refused {n}: {reason}")
        for item in tally.breaks[:5]:
            write(f"      break: {item}")
    target = os.environ.get("ANONYMATCH_FUZZ_REPORT")
    if target:
        data = {
            c: {
                "tried": t.tried,
                "verified": t.passed,
                "refused": dict(t.refused),
                "check_failed": t.known,
                "reasons": dict(t.reasons),
                "breaks": t.breaks,
            }
            for c, t in STATS.items()
        }
        Path(target).write_text(json.dumps(data, indent=2) + "\n")
