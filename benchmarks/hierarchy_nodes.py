"""Hierarchy cells as nodes (issue 25, "Remove the cliffs"): CPU seconds and peak memory of
``anonymatch verify`` and ``anonymatch anonymize`` when a QI's hierarchy is large, for this
tree and for the tree given by ``--before`` (e.g. main's ``src``), alternating, ``--repeat``
runs each (median).

* cup_subset (6,344 rows) at k = 5 with ARX's hierarchies for ZIP (100,000 leaves), AGE,
  GENDER and STATE: ``anonymize`` (hungarian, seed 1; the command of
  ``honest_releases.py --speed``) and ``verify`` of the release ``before``'s tree wrote.
* A synthetic deeper case: a 1,000,000-leaf hierarchy (six-digit codes, a level per digit)
  and 50,000 rows drawn uniformly among its leaves; the release publishes each row's
  ancestor ``--levels`` up (10, 100, 1,000 leaves per node): ``verify`` at k = 5. Before,
  verification listed rows × leaves-per-node labels; now it reads one rank interval per
  distinct node, so its peak should not grow with the level.

Peak memory is the process's VmHWM (peak resident set), CPU the user + system seconds of the
process (``os.wait4``); the machine is shared, so CPU seconds compare better than wall time.
Writes docs/results.md (section hierarchy_nodes), docs/img/hierarchy_nodes.png and
benchmarks/results/hierarchy_nodes.json.

Usage: ANONYMATCH_DATA=/work/shared/datasets python benchmarks/hierarchy_nodes.py
       --before ../main/src [--repeat 3] [--levels 1,2,3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import ROOT, data_file, dump, machine, update_results

CUP_QI = ["ZIP", "AGE", "GENDER", "STATE"]
WRAPPER = (
    "import re, sys; from anonymatch.cli import main; rc = main(sys.argv[1:]); "
    "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1); "
    "sys.stderr.write('\\nPEAK_RSS_KB=%s\\n' % hwm); sys.exit(rc)"
)


def run_cpu(src: str, args: list[str]) -> dict[str, float]:
    """``run`` with the CPU seconds of the process (its rusage from ``os.wait4``)."""
    env = {**os.environ, "PYTHONPATH": src}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    match = re.search(r"PEAK_RSS_KB=(\d+)", err)
    if proc.returncode not in (0, 4) or not match:
        sys.exit(f"anonymatch {' '.join(args)} failed:\n{err}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mib": int(match.group(1)) / 1024,
        "rc": proc.returncode,
    }


def cup_args(out: Path) -> tuple[list[str], list[str]]:
    """(anonymize, verify) arguments of cup_subset at k = 5 with ARX's hierarchies."""
    data = data_file("arx_cup/cup_subset.csv", "cup_subset")
    trees = Path(data).parent / "hierarchies"
    tree_args: list[str] = []
    for q in CUP_QI:
        tree_args += ["--hierarchy", f"{q}={trees / f'cup_hierarchy_{q}.csv'}"]
    common = ["--k", "5", "--sep", ";", "--qi", ",".join(CUP_QI), *tree_args]
    anonymize = ["anonymize", data, "-o", str(out / "cup.csv"), "--force", "--seed", "1",
                 "--report", str(out / "cup.json"), "--quiet", *common]  # fmt: skip
    verify = ["verify", data, str(out / "cup_release.csv"), *common]
    return anonymize, verify


def synthetic(out: Path, rows: int, levels: list[int], seed: int = 7) -> dict[int, list[str]]:
    """Write the 1,000,000-leaf hierarchy, the original and one release per level; return
    the ``verify`` arguments per level. Leaves ``dddddd``; the node ``level`` up from leaf
    ``123456`` is ``123***`` for level 3 (10^level leaves)."""
    digits = 6
    leaves = [f"{v:06d}" for v in range(10**digits)]
    tree = out / "six_digits.csv"
    with tree.open("w") as fh:
        for leaf in leaves:
            ups = [leaf[: digits - level] + "*" * level for level in range(1, digits)]
            fh.write(";".join([leaf, *ups, "*"]) + "\n")
    rng = np.random.default_rng(seed)
    picked = np.asarray(leaves)[rng.integers(0, len(leaves), rows)]
    original = out / "six_original.csv"
    pd.DataFrame({"code": picked, "row": np.arange(rows)}).to_csv(original, index=False)
    args: dict[int, list[str]] = {}
    for level in levels:
        cells = np.array([f"~{s[: digits - level]}{'*' * level}" for s in picked.tolist()])
        release = out / f"six_release_{level}.csv"
        text = pd.Series(cells).str.replace("*", "\\*", regex=False)
        pd.DataFrame({"code": text, "row": np.arange(rows)}).to_csv(release, index=False)
        args[level] = ["verify", str(original), str(release), "--k", "5", "--qi", "code",
                       "--hierarchy", f"code={tree}"]  # fmt: skip
    return args


def median(runs: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "cpu": statistics.median(r["cpu"] for r in runs),
        "peak_mib": statistics.median(r["peak_mib"] for r in runs),
        "wall": statistics.median(r["wall"] for r in runs),
        "rc": runs[0]["rc"],
        "cpus": [round(r["cpu"], 2) for r in runs],
        "peaks": [round(r["peak_mib"]) for r in runs],
    }


def measure(before: str, repeat: int, levels: list[int], rows: int) -> dict[str, Any]:
    trees = {"before": str(Path(before).resolve()), "after": str(ROOT / "src")}
    figures: dict[str, Any] = {"cup": {}, "synthetic": {}, "rows": rows}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        anonymize, verify = cup_args(out)
        run_cpu(trees["before"], anonymize)  # the release both trees verify
        (out / "cup.csv").rename(out / "cup_release.csv")
        (out / "cup.csv.schema.json").rename(out / "cup_release.csv.schema.json")
        for name, argv in (("anonymize", anonymize), ("verify", verify)):
            runs: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
            for _ in range(repeat):
                for tree, src in trees.items():
                    runs[tree].append(run_cpu(src, argv))
            figures["cup"][name] = {t: median(r) for t, r in runs.items()}
            print(name, figures["cup"][name], flush=True)
        per_level = synthetic(out, rows, levels)
        for level, argv in per_level.items():
            runs = {t: [] for t in trees}
            for _ in range(repeat):
                for tree, src in trees.items():
                    runs[tree].append(run_cpu(src, argv))
            figures["synthetic"][str(level)] = {t: median(r) for t, r in runs.items()}
            print(level, figures["synthetic"][str(level)], flush=True)
    return figures


def plot(figures: dict[str, Any]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = sorted(figures["synthetic"], key=int)
    per_node = [10 ** int(v) for v in levels]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for tree, style in (("before", "o--"), ("after", "s-")):
        ax.plot(per_node, [figures["synthetic"][v][tree]["peak_mib"] for v in levels], style,
                label=tree)  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("leaves per published node (1,000,000-leaf hierarchy)")
    ax.set_ylabel("peak RSS of verify (MiB)")
    ax.set_title(f"verify, {figures['rows']:,} rows, k = 5")
    ax.legend()
    fig.tight_layout()
    path = ROOT / "docs" / "img" / "hierarchy_nodes.png"
    fig.savefig(path, dpi=110)
    return path


def render(figures: dict[str, Any], before: str, repeat: int) -> str:
    load = os.getloadavg()[0]
    lines = [
        "### Hierarchy cells as nodes: verification linear in the distinct nodes (issue 25)",
        "",
        f"{machine()}; 2 cores shared with other jobs (load average {load:.1f} at the end). "
        f"Command: `python benchmarks/hierarchy_nodes.py --before {before} --repeat {repeat}`. "
        "Whole CLI processes, the two trees alternating; median of "
        f"{repeat} runs: CPU seconds (user + system) and peak resident memory (VmHWM).",
        "",
        "Before, a published hierarchy node was expanded into its leaves for every row "
        "(parsing, verification, loss, leakage, headline, risk, report): memory and time "
        "grew with rows × leaves under the nodes. Now a node is held as its id "
        "(`recode.NodeCells`) and checked as the interval of depth-first leaf ranks it covers "
        "(`Hierarchy.spans`) on the kernel's numeric path; only the leaves of the *distinct* "
        "nodes are ever listed (leakage and headline figures).",
        "",
        "cup_subset (6,344 rows), k = 5, QIs ZIP (100,000-leaf hierarchy), AGE, GENDER, "
        "STATE with ARX's hierarchies; `verify` reads the release `before` wrote:",
        "",
        "| command | before CPU s | after CPU s | before peak MiB | after peak MiB |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, f in figures["cup"].items():
        b, a = f["before"], f["after"]
        lines.append(
            f"| `{name}` | {b['cpu']:.2f} | {a['cpu']:.2f} | {b['peak_mib']:,.0f} "
            f"| {a['peak_mib']:,.0f} |"
        )
    lines += [
        "",
        f"Synthetic: a 1,000,000-leaf hierarchy (six-digit codes, one level per digit), "
        f"{figures['rows']:,} rows drawn uniformly among its leaves, each published as its "
        "ancestor *level* digits up; `verify --k 5` (exit 0 pass, 4 fail: the lowest level "
        "leaves fewer than 5 rows under most nodes). Rows × leaves is what the old path "
        "listed.",
        "",
        "| leaves per node | distinct nodes | rows × leaves | verdict | before CPU s "
        "| after CPU s | before peak MiB | after peak MiB |",
        "|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for level in sorted(figures["synthetic"], key=int):
        f = figures["synthetic"][level]
        b, a = f["before"], f["after"]
        per = 10 ** int(level)
        verdict = "pass" if a["rc"] == 0 else "fail"
        lines.append(
            f"| {per:,} | {min(10**6 // per, figures['rows']):,} (at most) "
            f"| {figures['rows'] * per:,} | {verdict} | {b['cpu']:.1f} | {a['cpu']:.1f} "
            f"| {b['peak_mib']:,.0f} | {a['peak_mib']:,.0f} |"
        )
    lines += ["", "![verify peak memory by node size](img/hierarchy_nodes.png)"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="src directory of the tree to compare")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--rows", type=int, default=50_000)
    args = parser.parse_args()
    levels = [int(v) for v in args.levels.split(",")]
    figures = measure(args.before, args.repeat, levels, args.rows)
    dump("hierarchy_nodes", figures)
    plot(figures)
    update_results("hierarchy_nodes", render(figures, args.before, args.repeat))


if __name__ == "__main__":
    main()
