"""Write the tally of a fuzzing soak (``make fuzz``: tests/fuzz with ANONYMATCH_FUZZ_REPORT)
into docs/results.md (section hardening-fuzz).

Usage: python benchmarks/fuzz_results.py out/fuzz.json [examples per test]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _common import machine, update_results


def main() -> None:
    tally = json.loads(Path(sys.argv[1]).read_text())
    examples = sys.argv[2] if len(sys.argv) > 2 else "?"
    lines = [
        "Machine: " + machine() + ".",
        f"Command: `make fuzz FUZZ_EXAMPLES={examples}` (hypothesis, random; each command "
        "run in-process with its own `$TMPDIR`).",
        "",
        "| command | cases | succeeded, verified | refused 2 | refused 3 | check failed "
        "(exit 4) | contract breaks |",
        "|---|---|---|---|---|---|---|",
    ]
    total = breaks = 0
    for command, t in sorted(tally.items()):
        if command == "known":
            continue
        refused = {int(k): v for k, v in t["refused"].items()}
        total += t["tried"]
        breaks += len(t["breaks"])
        lines.append(
            f"| {command} | {t['tried']} | {t['verified']} | {refused.get(2, 0)} "
            f"| {refused.get(3, 0)} | {t.get('check_failed', 0)} | {len(t['breaks'])} |"
        )
    lines.append(f"| **all** | **{total}** | | | | | **{breaks}** |")
    known = tally.get("known", {}).get("breaks", [])
    lines += [
        "",
        f"Cases of issue 15 part A (`test_known_hardening_cases`): {len(known)} break the "
        "contract.",
    ]
    update_results("hardening-fuzz", "\n".join(lines))


if __name__ == "__main__":
    main()
