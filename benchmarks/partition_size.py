"""Choose the default partition size of each freeform method: GCP and time vs P on Adult, k=10.

Usage: python benchmarks/partition_size.py [--sizes 100,200,300,500,800] [--k 10]
Writes docs/results.md (section partition_size).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _common import ADULT_CLI, adult_path, dump, machine, run_cli, update_results

METHODS = ["hungarian", "sortgreedy", "greedy"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,200,300,500,800")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    data = adult_path()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        run_cli(["anonymize", data, "-o", str(out / "w.csv"), "--k", "2", "-q", *ADULT_CLI])
        for method in METHODS:
            for p in sizes:
                report = out / "r.json"
                m = run_cli(
                    [
                        "anonymize",
                        data,
                        "-o",
                        str(out / "o.csv"),
                        "--k",
                        str(args.k),
                        "--method",
                        method,
                        "--partition-size",
                        str(p),
                        "--report",
                        str(report),
                        "-q",
                        *ADULT_CLI,
                    ]
                )
                gcp = json.loads(report.read_text())["loss"]["gcp"]
                rows.append(
                    {
                        "method": method,
                        "P": p,
                        "gcp": gcp,
                        "wall_s": m["wall"],
                        "peak_mib": m["peak_mib"],
                    }
                )
                print(
                    f"{method:10s} P={p:4d} GCP {100 * gcp:.2f}% {m['wall']:.1f} s "
                    f"{m['peak_mib']:.0f} MiB",
                    flush=True,
                )
    dump("partition_size", {"rows": rows, "k": args.k, "machine": machine()})
    lines = [
        f"## Partition size (Adult, k = {args.k})",
        "",
        f"Command: `python benchmarks/partition_size.py`. Machine: {machine()}.",
        "GCP / wall seconds of the whole CLI run per partition size P:",
        "",
        "| method | " + " | ".join(f"P = {p}" for p in sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for method in METHODS:
        lines.append(
            f"| {method} | "
            + " | ".join(
                f"{100 * r['gcp']:.2f} % / {r['wall_s']:.1f} s"
                for p in sizes
                for r in rows
                if r["method"] == method and r["P"] == p
            )
            + " |"
        )
    update_results("partition_size", "\n".join(lines))


if __name__ == "__main__":
    main()
