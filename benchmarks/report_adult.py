"""HTML report on UCI Adult at k = 10: generation time beyond the anonymization, file size.

Runs, each in a fresh process after one warm-up (numba's on-disk cache):
1. ``anonymize … --report-html`` (hungarian, k = 10, sensitive income): the report's own time,
   which the command prints (``report: PATH (S s)``: reading both files, risk figures on the
   compatibility graph already built by the verification, plots, rendering, atomic write);
2. ``anonymatch report ORIGINAL RELEASE --manifest`` afterwards: the whole standalone command
   (a fresh process: imports, the compatibility graph computed again).
Reports the median of ``--repeats`` runs and the HTML size. Writes docs/results.md (section
report_adult).

Usage: python benchmarks/report_adult.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ADULT_CLI, adult_path, dump, machine, update_results

CLI = [sys.executable, "-c", "import sys; from anonymatch.cli import main; sys.exit(main())"]
# the same command, with the report's wall and CPU time measured around build_report (the
# machine is shared: CPU time is the steadier figure)
TIMED = [
    sys.executable,
    "-c",
    "import json, sys, time; import anonymatch.report as r; from anonymatch.cli import main\n"
    "build = r.build_report; seen = {}\n"
    "def timed(*a, **k):\n"
    "    t, c = time.perf_counter(), time.process_time()\n"
    "    try: return build(*a, **k)\n"
    "    finally: seen.update(wall=time.perf_counter() - t, cpu=time.process_time() - c)\n"
    "r.build_report = timed\n"
    "code = main(); print('TIMED ' + json.dumps(seen)); sys.exit(code)",
]


def run(args: list[str], cli: list[str] = CLI) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run([*cli, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"anonymatch {' '.join(args)} failed:\n{proc.stderr}")
    return time.perf_counter() - started, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = adult_path()
    inline, cpu, standalone, sizes, walls = [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        base = ["anonymize", data, "-o", str(out / "r.csv"), "--k", "10", *ADULT_CLI]
        base += ["--sensitive", "income", "--report", str(out / "r.json"), "--force"]
        run([*base, "--report-html", str(out / "r.html")])  # warm-up
        for _ in range(args.repeats):
            wall, stdout = run([*base, "--report-html", str(out / "r.html")], TIMED)
            found = re.search(r"^TIMED (.*)$", stdout, re.M)
            assert found, stdout
            timed = json.loads(found.group(1))
            inline.append(timed["wall"])
            cpu.append(timed["cpu"])
            walls.append(wall)
            sizes.append((out / "r.html").stat().st_size)
            names = [a for a in ADULT_CLI if a != "--drop-missing"]
            wall, _ = run(["report", data, str(out / "r.csv"), "--manifest", str(out / "r.json"),
                           "-o", str(out / "s.html"), "--force", *names[: names.index("--qi")],
                           "--na-values", "?", "-q"])  # fmt: skip
            standalone.append(wall)
    figures = {
        "report_seconds_inline": statistics.median(inline),
        "report_cpu_seconds_inline": statistics.median(cpu),
        "anonymize_with_report_wall": statistics.median(walls),
        "report_command_wall": statistics.median(standalone),
        "html_bytes": statistics.median(sizes),
        "runs": args.repeats,
        "load_average": os.getloadavg()[0],
    }
    dump("report_adult", figures)
    rows = [
        ("report time beyond the anonymization (`anonymize --report-html`): wall",
         f"{figures['report_seconds_inline']:.1f} s"),
        ("the same, CPU time of the process",
         f"{figures['report_cpu_seconds_inline']:.1f} s"),
        ("`anonymize --report-html` wall time (whole command)",
         f"{figures['anonymize_with_report_wall']:.1f} s"),
        ("`anonymatch report ORIGINAL RELEASE --manifest` wall time (fresh process)",
         f"{figures['report_command_wall']:.1f} s"),
        ("report size", f"{figures['html_bytes'] / 1024:.0f} KiB"),
    ]  # fmt: skip
    table = "\n".join(f"| {a} | {b} |" for a, b in rows)
    body = f"""## HTML report on Adult

`python benchmarks/report_adult.py --repeats {args.repeats}` — {machine()}; load average
{figures["load_average"]:.1f} at the end (the machine was shared).

| figure | value |
|---|---|
{table}

Adult, 30,162 rows, hungarian k = 10, sensitive income; median of {args.repeats} runs. Targets:
≤ 3 s beyond the anonymization, ≤ 2 MB."""
    update_results("report_adult", body)
    print(body)


if __name__ == "__main__":
    main()
