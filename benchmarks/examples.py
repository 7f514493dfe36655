"""Release the example jobs (examples/*.toml) end to end on their real data.

For each job: ``anonymatch anonymize --config JOB`` into a temporary directory, then the rows
read, dropped for a missing QI and published, GCP and wall time from the manifest. Results go
to ``benchmarks/results/examples.json``; docs/results.md ("Job files") quotes them.

    ANONYMATCH_DATA=../shared/datasets .venv/bin/python benchmarks/examples.py
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from anonymatch.cli import main

ROOT = Path(__file__).resolve().parents[1]
JOBS = ("heart_statlog", "googleplay", "informs")


def run(name: str, workdir: Path) -> dict[str, object]:
    out, report = workdir / f"{name}.csv", workdir / f"{name}.json"
    started = time.perf_counter()
    code = main(
        ["anonymize", "--config", str(ROOT / "examples" / f"{name}.toml"), "-o", str(out),
         "--report", str(report), "-q"]
    )  # fmt: skip
    wall = time.perf_counter() - started
    if code != 0:
        return {"job": name, "exit": code}
    manifest = json.loads(report.read_text())
    return {
        "job": name,
        "exit": code,
        "records": manifest["input"]["records"],
        "dropped_missing": manifest["input"]["dropped_missing"],
        "published": manifest["output"]["records"],
        "gcp": manifest["loss"]["gcp"],
        "ncp": manifest["loss"]["ncp"],
        "k": manifest["guarantee"]["k"],
        "seconds": wall,
    }


def main_() -> None:
    if "ANONYMATCH_DATA" not in os.environ:
        os.environ["ANONYMATCH_DATA"] = str(ROOT.parent / "shared" / "datasets")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run(name, Path(tmp)) for name in JOBS]
    result = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "python": sys.version.split()[0],
        "jobs": rows,
    }
    target = ROOT / "benchmarks" / "results" / "examples.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main_()
