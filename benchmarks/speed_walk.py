"""Issue 17, privacy step: the closed walk before and after, on Adult's hungarian partitions.

- ``kernel``: the generalization graphs of a few partitions of UCI Adult (30,162 complete rows,
  the 8 QIs of ``make run``; lexicographic partitions, hungarian) at k = 10 (P = 300) and
  k = 50, 100 (P = 1,000); on each, the closed-walk kernel as it was before issue 17
  (``tests/core/walk_reference.py``: two scans of all of a node's edges per hop, a call per hop,
  ``rng.integers``) and the current one (``anonymatch.core.assignment._closed_walk_rounds``),
  interleaved (old, new, old, new, …), one thread, CPU seconds (``time.process_time``);
  then ``random_assignments`` (chunks on the thread pool) on the union of those partitions,
  with the module's kernel swapped for the old one and back, wall and CPU seconds;
- ``cli``: the whole ``anonymatch anonymize --k 50`` run on Adult (hungarian) with the code of
  ``--base`` (default 64091f2, the commit before this change; checked out in a temporary git
  worktree) and with this tree, interleaved, warm caches (a first run of each is discarded);
  wall and CPU seconds, GCP.

Results: benchmarks/results/speed_walk.json and docs/results.md (section speed_walk).
Usage: python benchmarks/speed_walk.py [--steps kernel,cli] [--repeats 3] [--base REV]
(``--steps none`` only rewrites the docs/results.md section from the JSON.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from _common import (
    ADULT_CLI,
    ADULT_NAMES,
    ADULT_QI,
    ROOT,
    adult_path,
    machine,
    timed_process,
    update_results,
)

sys.path.insert(0, str(ROOT))  # tests.core.walk_reference: the kernel before issue 17

from anonymatch.core import assignment  # noqa: E402
from anonymatch.core.graph import GeneralizationGraph  # noqa: E402
from anonymatch.tables.columns.schema import Schema  # noqa: E402
from anonymatch.tables.methods import BuildOptions, partitions  # noqa: E402
from anonymatch.tables.methods.freeform import hungarian  # noqa: E402
from anonymatch.tables.pipeline import prepare  # noqa: E402
from tests.core.walk_reference import closed_walk_rounds as old_kernel  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "speed_walk.json"
CASES = [(10, 300), (50, 1000), (100, 1000)]
ENTRY = "import sys; from anonymatch.cli import entry; sys.argv[0] = 'anonymatch'; entry()"


def adult_graphs(k: int, size: int, count: int = 3) -> list[GeneralizationGraph]:
    """Hungarian graphs of ``count`` partitions of Adult (first, middle, last)."""
    frame = pd.read_csv(
        adult_path(), names=ADULT_NAMES.split(","), skipinitialspace=True, dtype=str
    )
    schema = Schema.build(ADULT_QI.split(","), ["age", "education-num"], ["income"])
    _, enc, _ = prepare(frame, schema, ["?"], drop_missing=True)
    parts = partitions(enc, size)
    picks = sorted({0, len(parts) // 2, len(parts) - 1})[:count]
    return [hungarian(enc.take(parts[i]), k, BuildOptions()) for i in picks]


def arrays(
    graph: GeneralizationGraph, index: type = np.int64
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The kernels' arguments; ``index`` the dtype of ``indices`` (the old kernel got int64,
    ``random_assignments`` now passes int32)."""
    m = graph.matrix
    degree = np.diff(m.indptr).astype(np.int64)
    return m.indptr.astype(np.int64), m.indices.astype(index), degree, int(degree.max())


def cpu_seconds(fn, *args) -> float:
    started = time.process_time()
    fn(*args)
    return time.process_time() - started


def step_kernel(repeats: int) -> list[dict]:
    rows = []
    for k, size in CASES:
        graphs = adult_graphs(k, size)
        old, new = [], []
        for g, graph in enumerate(graphs):
            a, a32 = arrays(graph), arrays(graph, np.int32)
            old_kernel(*a, np.random.default_rng(0))  # compile / load the caches
            assignment._closed_walk_rounds(*a32, np.random.default_rng(0))
            reps = 20 if k == 10 else 1  # small partitions: time 20 calls per sample
            o, n = [], []
            for r in range(repeats):
                seeds = [np.random.default_rng(1000 * r + s) for s in range(reps)]
                o.append(sum(cpu_seconds(old_kernel, *a, rng) for rng in seeds) / reps)
                seeds = [np.random.default_rng(1000 * r + s) for s in range(reps)]
                n.append(
                    sum(cpu_seconds(assignment._closed_walk_rounds, *a32, rng) for rng in seeds)
                    / reps
                )
            old.append(float(np.median(o)))
            new.append(float(np.median(n)))
            print(
                f"k={k} P={size} partition {g}: old {old[-1]:.4f} s, new {new[-1]:.4f} s",
                flush=True,
            )
        union = GeneralizationGraph(sp.block_diag([g.matrix for g in graphs], format="csr"))
        whole = {"old": [], "new": []}
        current = assignment._closed_walk_rounds
        for r in range(repeats):
            for name, kernel in (("old", old_kernel), ("new", current)):
                assignment._closed_walk_rounds = kernel
                try:
                    wall = time.perf_counter()
                    cpu = time.process_time()
                    assignment.random_assignments(union, np.random.default_rng(r))
                    whole[name].append((time.perf_counter() - wall, time.process_time() - cpu))
                finally:
                    assignment._closed_walk_rounds = current
        rows.append(
            {
                "k": k,
                "P": size,
                "partitions": len(graphs),
                "records": int(sum(g.n for g in graphs)),
                "kernel_old_s": old,
                "kernel_new_s": new,
                "speedup": [o / n for o, n in zip(old, new, strict=True)],
                "random_assignments_old": [
                    float(np.median([w[i] for w in whole["old"]])) for i in (0, 1)
                ],
                "random_assignments_new": [
                    float(np.median([w[i] for w in whole["new"]])) for i in (0, 1)
                ],
            }
        )
    return rows


def cli_run(src: Path, out: Path, k: int) -> dict:
    report = out / "r.json"
    argv = [
        sys.executable, "-c", ENTRY, "anonymize", adult_path(), "-o", str(out / "o.csv"),
        "--k", str(k), "--method", "hungarian", "--sensitive", "income", "--report", str(report),
        "--force", "-q", *ADULT_CLI,
    ]  # fmt: skip
    measured = timed_process(argv, {**os.environ, "PYTHONPATH": str(src)})
    gcp = json.loads(report.read_text())["loss"]["gcp"]
    return {**measured, "gcp": gcp}


def step_cli(base: str, repeats: int, k: int = 50) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), base],
            check=True, capture_output=True,
        )  # fmt: skip
        try:
            srcs = {"base": tree / "src", "this": ROOT / "src"}
            out = Path(tmp) / "out"
            out.mkdir()
            for src in srcs.values():  # warm numba's and Python's caches
                cli_run(src, out, k)
            runs: dict[str, list[dict]] = {name: [] for name in srcs}
            for r in range(repeats):
                for name, src in srcs.items():
                    runs[name].append(cli_run(src, out, k))
                    print(f"cli k={k} {name} run {r}: {runs[name][-1]}", flush=True)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                check=False, capture_output=True,
            )  # fmt: skip
    base_rev = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", base], capture_output=True, text=True
    ).stdout.strip()
    return {"k": k, "base": base_rev, "runs": runs}


def median(values: list[float]) -> float:
    return float(np.median(values))


def render(results: dict) -> str:
    lines = [
        "## Privacy step: the closed walk before and after (issue 17)",
        "",
        f"Command: `python benchmarks/speed_walk.py`. Machine: {results['machine']}. "
        + "; ".join(
            f"{step} step run {results[step + '_when']} (load average "
            f"{results[step + '_load']:.1f} at its start)"
            for step in ("kernel", "cli")
            if step in results
        )
        + ". The 2 cores were shared with other jobs: compare the ratios within a step.",
        "",
    ]
    kernel = results.get("kernel")
    if kernel:
        lines += [
            "Closed-walk kernel on single Adult partitions (hungarian graphs; first, middle and "
            "last partition of the lexicographic order), one thread, CPU seconds, median of "
            f"{results['repeats']} interleaved runs. *Before*: the kernel of 64091f2 "
            "(`tests/core/walk_reference.py`); *after*: `core/assignment.py`.",
            "",
            "| k | P | before, s per partition | after, s per partition | speed-up |",
            "|---|---|---|---|---|",
        ]
        for row in kernel:
            old = " / ".join(f"{x:.3f}" for x in row["kernel_old_s"])
            new = " / ".join(f"{x:.4f}" for x in row["kernel_new_s"])
            up = " / ".join(f"{x:.1f}×" for x in row["speedup"])
            lines.append(f"| {row['k']} | {row['P']} | {old} | {new} | {up} |")
        lines += [
            "",
            "`random_assignments` (the privacy step's extraction, chunks on the thread pool) on "
            "the union of those partitions, wall / CPU seconds:",
            "",
            "| k | records | before | after | speed-up (CPU) |",
            "|---|---|---|---|---|",
        ]
        for row in kernel:
            o, n = row["random_assignments_old"], row["random_assignments_new"]
            lines.append(
                f"| {row['k']} | {row['records']:,} | {o[0]:.3f} / {o[1]:.3f} | "
                f"{n[0]:.3f} / {n[1]:.3f} | {o[1] / n[1]:.1f}× |"
            )
    cli = results.get("cli")
    if cli:
        b, t = cli["runs"]["base"], cli["runs"]["this"]
        lines += [
            "",
            f"Whole CLI run, Adult hungarian k = {cli['k']} (`anonymatch anonymize … --k "
            f"{cli['k']} --sensitive income`, the options of `make run`), warm caches, "
            f"{len(b)} interleaved pairs, medians (each run listed in the JSON):",
            "",
            "| code | wall s (median; each run) | CPU s (median; each run) | GCP |",
            "|---|---|---|---|",
        ]
        for label, runs in ((f"{cli['base']} (before)", b), ("this branch", t)):
            walls = ", ".join(f"{r['wall']:.1f}" for r in runs)
            cpus = ", ".join(f"{r['cpu']:.1f}" for r in runs)
            lines.append(
                f"| {label} | {median([r['wall'] for r in runs]):.1f} ({walls}) | "
                f"{median([r['cpu'] for r in runs]):.1f} ({cpus}) | {runs[0]['gcp']:.4%} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", default="kernel,cli")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base", default="64091f2")
    args = parser.parse_args()
    steps = args.steps.split(",")
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for step in ("kernel", "cli"):
        if step not in steps:
            continue
        results.update(machine=machine(), repeats=args.repeats)
        results[f"{step}_when"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        results[f"{step}_load"] = os.getloadavg()[0]
        results[step] = (
            step_kernel(args.repeats) if step == "kernel" else step_cli(args.base, args.repeats)
        )
        RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    update_results("speed_walk", render(results))
    print(render(results))


if __name__ == "__main__":
    main()
