"""Smooth k-anonymity's clustering (sparse/methods/smooth.py: opening costs, then 10
independent Meyerson runs, the cheapest kept) on one thread (``threads=1``, what every sparse
command did before) and on all cores (the default now: opening costs in row blocks, the runs
side by side), on the data of benchmarks/sparse_jaccard.py (retail, user × item)
and benchmarks/sparse_scale.py (the power-law interest matrix, 100,000 rows unchunked), k = 8,
seed 1. Wall and CPU seconds of ``cluster`` (steps 1–5: opening costs, the runs, closing,
splitting); the two results must be identical (same labels, same cost).

    python benchmarks/parallel_restarts.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, update_results  # noqa: E402

from anonymatch.sparse.datasets import fimi_matrix, powerlaw_interests
from anonymatch.sparse.methods.smooth import cluster


def timed(x, threads: int) -> tuple[float, float, np.ndarray, float]:  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    c = cluster(x, 8, runs=10, seed=1, threads=threads)
    return time.perf_counter() - wall, time.process_time() - cpu, c.labels, c.facility_cost


def main() -> None:
    data = {
        "retail (88,162 × 16,470)": fimi_matrix("retail"),
        "power-law interests (100,000 × 100,000)": powerlaw_interests(
            100_000, n_cols=100_000, mean_degree=32.0, seed=1
        ),
    }
    cluster(data["retail (88,162 × 16,470)"][:2000], 8, runs=2, seed=0)  # compile/load numba
    lines = [
        "## Sparse data: smooth k-anonymity's clustering on both cores",
        "",
        "`cluster(x, k=8, runs=10, seed=1)` on one thread (`threads=1`, the previous"
        " behaviour) and on a thread pool (default: all cores; the numba kernels release the"
        " GIL): the opening costs (each row's βk nearest rows) in row blocks, then the 10"
        " Meyerson runs side by side. Random orders and coins are drawn first in run order from"
        " the one seed, so both give the same clustering.",
        "",
        "| data | sequential wall / CPU | parallel wall / CPU | speed-up (wall) | identical |",
        "|---|---|---|---|---|",
    ]
    for name, x in data.items():
        w1, c1, l1, f1 = timed(x, 1)
        w2, c2, l2, f2 = timed(x, 2)
        same = bool(np.array_equal(l1, l2) and f1 == f2)
        print(name, w1, c1, w2, c2, same, flush=True)
        lines.append(
            f"| {name} | {w1:.1f} s / {c1:.1f} s | {w2:.1f} s / {c2:.1f} s | {w1 / w2:.2f}× |"
            f" {'yes' if same else '**no**'} |"
        )
    lines += [
        "",
        "Command: `python benchmarks/parallel_restarts.py`; machine: " + machine() + ".",
        "The 2 cores were shared with other jobs, so wall times are noisy; CPU = process time"
        " of all threads.",
    ]
    update_results("parallel_restarts", "\n".join(lines))


if __name__ == "__main__":
    main()
