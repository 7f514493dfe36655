"""The "everywhere a kind appears" parts of issue 29 on INFORMS 2008 (33,961 people, 96,766
(person, ICD-9 code) rows): the example job `examples/informs_rt.toml` run through
``anonymize-rt --config``, ``verify-rt --config`` and ``evaluate-rt --config``; the HTML report
of its release (``anonymatch report``: the guarantee re-verified from the files, candidates on
the joint graph, the utility of evaluate-rt); ``anonymatch.read_release`` on the release typed by
its manifest; and ``anonymatch init PEOPLE --items ITEMS`` drafting a job that is then run as is.
Each command runs in a fresh process (wall time, peak RSS).

Usage: ANONYMATCH_DATA=../shared/datasets python benchmarks/relational_apps.py
(writes docs/results.md section "relational_apps" and benchmarks/results/relational_apps.json)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _common import ROOT, data_file, dump, machine, run_cli, update_results  # noqa: E402


def main() -> None:
    people = data_file("informs/demographics05test.csv", "INFORMS")
    items = data_file("informs/conditions05.csv", "INFORMS")
    job = str(ROOT / "examples" / "informs_rt.toml")
    tmp = Path(tempfile.mkdtemp(prefix="relational_apps_"))
    out, manifest = tmp / "informs_rt.jsonl", tmp / "informs_rt.json"
    rows: dict[str, dict[str, float]] = {}
    io = ["-o", str(out), "--report", str(manifest), "--force", "-q"]
    rows["anonymize-rt --config (k = 10)"] = run_cli(["anonymize-rt", "--config", job, *io])
    rows["verify-rt --config"] = run_cli(["verify-rt", "--config", job, people, str(out), "-q"])
    rows["evaluate-rt --config"] = run_cli(["evaluate-rt", "--config", job, people, str(out)])
    html = tmp / "informs_rt.html"
    rows["report (re-verified)"] = run_cli(
        ["report", people, str(out), "--manifest", str(manifest), "-o", str(html), "--force"]
    )
    started = time.perf_counter()
    code = (
        "import anonymatch, sys; df = anonymatch.read_release(sys.argv[1], sys.argv[2]); "
        "print(len(df), df.attrs['kind'])"
    )
    subprocess.run([sys.executable, "-c", code, str(out), str(manifest)], check=True)
    rows["read_release (process)"] = {"wall": time.perf_counter() - started, "peak_mib": 0.0}
    draft = tmp / "draft.toml"
    rows["init --items"] = run_cli(["init", people, "--items", items, "-o", str(draft), "-q"])
    drafted = tmp / "drafted.jsonl"
    rows["anonymize-rt --config draft"] = run_cli(
        ["anonymize-rt", "--config", str(draft), "-o", str(drafted), "--force", "-q"]
    )
    figures = json.loads(manifest.read_text())
    size = html.stat().st_size / 1024
    dump("relational_apps", {"rows": rows, "report_kib": size, "gcp": figures["loss"]["gcp"]})
    lines = [
        "## Relational jobs, report, read_release and init on INFORMS (issue 29)",
        "",
        "The example job `examples/informs_rt.toml` (7 QIs, k = 10, ICD-9 codes as items) through "
        "the three relational commands, the HTML report of its release (guarantee re-verified "
        "from the people, items and release; candidates on the joint graph; 1,000 count "
        "queries), `anonymatch.read_release` typing the JSONL by its manifest, and "
        "`init --items` drafting a job from the two tables that then runs unchanged. Each "
        f"command in a fresh process. Machine: {machine()}.",
        "",
        "| step | wall (s) | peak RSS (MiB) |",
        "|---|---:|---:|",
    ]
    for name, r in rows.items():
        peak = f"{r['peak_mib']:.0f}" if r.get("peak_mib") else "—"
        lines.append(f"| {name} | {r['wall']:.1f} | {peak} |")
    lines += [
        "",
        f"Report: {size:.0f} KiB, self-contained. Release of the example job: relational GCP "
        f"{100 * figures['loss']['gcp']:.2f}%, {figures['loss']['mean_uncertain']:.2f} uncertain "
        "items per record.",
        "",
        "Command: `ANONYMATCH_DATA=../shared/datasets .venv/bin/python "
        "benchmarks/relational_apps.py`",
    ]
    update_results("relational_apps", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
