"""k^m-anonymity of transactions: the hypergraph algorithm with itemsets as points.

chess (3,196 transactions, 75 items) and BMS1 (BMS-WebView-1, 59,602 transactions, 497 items),
m ∈ {1, 2, 3}, k ∈ {5, 10, 20}. Items are grouped globally (no hierarchy); information loss is
the item NCP (mean over item occurrences of (|group| − 1)/(|I| − 1)). Also the time of the
k^m checker on the original data. Every release passed its verifier (truthful grouping + check).
Writes docs/results.md (section kl_transactions), docs/img/kl_transactions.png and
benchmarks/results/kl_transactions.json.

Usage: python benchmarks/kl_transactions.py [--ks 5,10,20] [--ms 1,2,3]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from _common import ROOT, dump, machine, update_results

from anonymatch.core.counting import check_km
from anonymatch.sets.km import anonymize_km, read_transactions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ks", default="5,10,20")
    parser.add_argument("--ms", default="1,2,3")
    parser.add_argument("--datasets", default="chess,BMS1")
    parser.add_argument(
        "--render", action="store_true", help="only rewrite the markdown and plot from the JSON"
    )
    args = parser.parse_args()
    if args.render:
        saved = json.loads((ROOT / "benchmarks" / "results" / "kl_transactions.json").read_text())
        write_markdown(saved["rows"], saved["checks"])
        plot(saved["rows"])
        return
    ks = [int(x) for x in args.ks.split(",")]
    ms = [int(x) for x in args.ms.split(",")]
    base = Path(os.environ.get("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets")))
    rows, checks = [], []
    for name in args.datasets.split(","):
        matrix, labels = read_transactions(str(base / "fimi" / f"{name}.dat"))
        for m in ms:
            t0 = time.perf_counter()
            rep = check_km(matrix, labels, 10, m)
            checks.append(
                {
                    "dataset": name,
                    "m": m,
                    "seconds": time.perf_counter() - t0,
                    "violations_k10": rep.n_violations,
                }
            )
            print(checks[-1], flush=True)
        for k in ks:
            for m in ms:
                t0 = time.perf_counter()
                rel = anonymize_km(matrix, labels, k, m, seed=0)
                r = rel.report
                row = {
                    "dataset": name,
                    "transactions": int(matrix.shape[0]),
                    "items": int(matrix.shape[1]),
                    "k": k,
                    "m": m,
                    "item_ncp": r["loss"]["item_ncp"],  # type: ignore[index]
                    "groups": r["loss"]["item_groups"],  # type: ignore[index]
                    "seconds": time.perf_counter() - t0,
                }
                rows.append(row)
                print(row, flush=True)
                dump("kl_transactions", {"rows": rows, "checks": checks, "machine": machine()})
    write_markdown(rows, checks)
    plot(rows)


def write_markdown(rows: list[dict], checks: list[dict]) -> None:
    lines = [
        "## k^m-anonymity of transactions (issue 6)",
        "",
        "Command: `python benchmarks/kl_transactions.py`. Machine: " + machine() + ".",
        "Global item grouping by the hypergraph algorithm (points = itemsets of ≤ m items), no",
        "hierarchy. Item NCP = mean over item occurrences of (|group| − 1)/(|I| − 1); groups =",
        "published item groups (of |I| items). Every release passed its verifier. Times are",
        "wall seconds of one process on the shared 2-core machine (noisy).",
        "",
        "| dataset | k | m = 1 | m = 2 | m = 3 |",
        "|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(r["dataset"] for r in rows):
        for k in sorted({r["k"] for r in rows if r["dataset"] == name}):
            cells = []
            for m in (1, 2, 3):
                hit = [r for r in rows if r["dataset"] == name and r["k"] == k and r["m"] == m]
                cells.append(
                    f"{100 * hit[0]['item_ncp']:.2f} %, {hit[0]['groups']}/{hit[0]['items']}"
                    f" groups ({hit[0]['seconds']:.0f} s)"
                    if hit
                    else "–"
                )
            lines.append(f"| {name} | {k} | " + " | ".join(cells) + " |")
    lines += ["", "Checker on the original data (k = 10):", ""]
    lines += ["| dataset | m | minimal violations | seconds |", "|---|---|---|---|"]
    for c in checks:
        lines.append(f"| {c['dataset']} | {c['m']} | {c['violations_k10']} | {c['seconds']:.1f} |")
    lines += ["", "![item NCP vs k](img/kl_transactions.png)"]
    update_results("kl_transactions", "\n".join(lines))


def plot(rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 3.6), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        for m in sorted({r["m"] for r in rows}):
            pts = sorted(
                (r["k"], 100 * r["item_ncp"]) for r in rows if r["dataset"] == name and r["m"] == m
            )
            ax.plot(*np.array(pts).T, marker="o", label=f"m = {m}")
        ax.set_xscale("log")
        ks = sorted({r["k"] for r in rows})
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("k")
        ax.set_ylabel("item NCP (%)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend()
    img = ROOT / "docs" / "img"
    img.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(img / "kl_transactions.png", dpi=120)


if __name__ == "__main__":
    main()
