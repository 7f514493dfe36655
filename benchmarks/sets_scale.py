"""Scale targets for set-valued data, end to end through the CLI in a fresh process (read,
order, anonymize, verify, write), with wall time and peak RSS:

- full retail (88,162 × 16,470) at k = 10: target ≤ 2 min, ≤ 4 GiB;
- INFORMS diagnoses (26,854 persons × 601 ICD-9 codes) at ℓ = 6, label = birth year (DOBYY,
  86 values): target ≤ 2 min;
- BMS1 (59,602 × 497) at k = 10, for reference.

INFORMS is written once to a JSON Lines file (items + label) in a temporary directory.

Usage: python benchmarks/sets_scale.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _common import ROOT, dump, machine, run_cli, update_results  # noqa: E402

from anonymatch.sets.datasets import load_informs


def main() -> None:
    data = Path(os.environ.setdefault("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        informs = Path(tmp) / "informs.jsonl"
        t = load_informs("DOBYY")
        m = t.matrix
        with informs.open("w") as fh:
            for i in range(t.n):
                items = [t.items[j] for j in m.indices[m.indptr[i] : m.indptr[i + 1]]]
                fh.write(json.dumps({"items": items, "DOBYY": t.labels[i]}) + "\n")  # type: ignore[index]
        jobs = [
            ("retail", "k = 10", [str(data / "fimi" / "retail.dat"), "--k", "10"], 120),
            (
                "INFORMS",
                "ℓ = 6",
                [str(informs), "--l", "6", "--sensitive", "DOBYY"],
                120,
            ),
            ("BMS1", "k = 10", [str(data / "fimi" / "BMS1.dat"), "--k", "10"], None),
        ]
        for name, level, args, target in jobs:
            out, rep = Path(tmp) / f"{name}.jsonl", Path(tmp) / f"{name}.json"
            run = run_cli(["anonymize-sets", *args, "-o", str(out), "--report", str(rep), "-q"])
            report = json.loads(rep.read_text())
            row = {
                "dataset": name,
                "level": level,
                "records": report["input"]["records"],
                "items": report["input"]["items"],
                "wall": run["wall"],
                "peak_mib": run["peak_mib"],
                "seconds": report["seconds"],
                "error_rate": report["loss"]["error_rate"],
                "verified": report["verification"]["passed"],
                "target_s": target,
            }
            rows.append(row)
            print(row, flush=True)
    dump("sets_scale", rows)
    lines = [
        "## Set-valued data: scale (full datasets, end to end)",
        "",
        f"Command: `python benchmarks/sets_scale.py`. Machine: {machine()}.",
        "One CLI run each (`anonymize-sets … --report`), in a fresh process: read, Gray-TSP",
        "order, graph, closed-walk privacy step, bit voting, independent verification, atomic",
        "write. Wall time includes Python start-up and numba cache loading; the 2 cores are",
        "shared with other jobs, so times are noisy.",
        "",
        "| dataset | level | records × items | wall | peak RSS | order | privacy step |"
        " verify | ER | verified | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r["seconds"]
        target = "—"
        if r["target_s"]:
            ok = r["wall"] <= r["target_s"] and (r["dataset"] != "retail" or r["peak_mib"] <= 4096)
            target = (
                ("met" if ok else "missed")
                + f" (≤ {r['target_s']} s"
                + (", ≤ 4 GiB)" if r["dataset"] == "retail" else ")")
            )
        lines.append(
            f"| {r['dataset']} | {r['level']} | {r['records']:,} × {r['items']:,} |"
            f" {r['wall']:.1f} s | {r['peak_mib']:.0f} MiB | {s['order']:.1f} s |"
            f" {s['privacy_step']:.1f} s | {s['verify']:.1f} s | {100 * r['error_rate']:.1f} % |"
            f" {'yes' if r['verified'] else 'no'} | {target} |"
        )
    update_results("sets_scale", "\n".join(lines))


if __name__ == "__main__":
    main()
