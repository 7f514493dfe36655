"""Issue 30: a Dask DataFrame on the streamed path without collecting it, against the same rows
streamed from Parquet parts and against collecting the frame first.

A generated table (``--rows`` rows, default 1,000,000: age, 6 categorical QIs, a sensitive and
an id column) is written as ``--parts`` Parquet parts. Three runs, each in a fresh process
(hungarian, k = 10, ``executor="inline"``: everything in the measured process), each measured
for wall seconds and peak resident memory (VmHWM):

- ``parquet``: ``anonymize_file(directory of parts, …)``;
- ``dask``: ``anonymize_file(dd.read_parquet(parts), …)`` — partitions computed one at a time;
- ``collected``: the same Dask frame ``compute()``-d into pandas first (what the in-memory
  fronts' ``require_frame`` does), then streamed from it (``dd.from_pandas``).

Writes docs/results.md (section dask_stream) and benchmarks/results/dask_stream.json; the data
lives in ``--data-dir`` (default /tmp/anonymatch-dask-stream).

Usage: python benchmarks/dask_stream.py [--rows 1000000] [--parts 20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from _common import ROOT, dump, machine, update_results

CHILD = r"""
import json, re, sys, time
import dask.dataframe as dd
from anonymatch.tables.job import TableJob
from anonymatch.tables.streamed import anonymize_file
mode, parts, out = sys.argv[1:4]
job = TableJob.build(dict(qi=["age", "c0", "c1", "c2", "c3", "c4", "c5"], numeric=["age"],
                          sensitive=["dx"], k=10, method="hungarian", executor="inline",
                          progress=False, seed=1))
t0 = time.perf_counter()
source = parts
if mode != "parquet":
    source = dd.read_parquet(parts)
    if mode == "collected":
        source = dd.from_pandas(source.compute(), npartitions=source.npartitions, sort=False)
manifest = anonymize_file(source, out, job, replace=True)
wall = time.perf_counter() - t0
peak = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024
print(json.dumps({"seconds": wall, "peak_mib": peak,
                  "passed": manifest["verification"]["passed"]}))
"""


def generate(rows: int, parts: int, where: Path) -> Path:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": np.arange(rows), "age": rng.integers(17, 91, rows)})
    for i, size in enumerate((2, 5, 7, 9, 14, 16)):
        frame[f"c{i}"] = rng.integers(0, size, rows).astype(str)
    frame["dx"] = rng.choice(["a", "b", "c", "d"], rows)
    out = where / f"people-{rows}"
    out.mkdir(parents=True, exist_ok=True)
    for i, chunk in enumerate(np.array_split(np.arange(rows), parts)):
        frame.iloc[chunk].to_parquet(out / f"part-{i:05d}.parquet", index=False)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--parts", type=int, default=20)
    parser.add_argument("--data-dir", default="/tmp/anonymatch-dask-stream")
    args = parser.parse_args()
    where = Path(args.data_dir)
    parts = generate(args.rows, args.parts, where)
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    runs = {}
    for mode in ("parquet", "dask", "collected"):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, mode, str(parts), str(where / f"{mode}.csv")],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        runs[mode] = json.loads(done.stdout.strip().splitlines()[-1])
        print(mode, runs[mode], flush=True)
    base = runs["parquet"]
    lines = [
        f"{args.rows:,} generated rows (age + 6 categorical QIs, k = 10, hungarian, inline "
        f"executor), {args.parts} Parquet parts; one fresh process per run. {machine()}.",
        "",
        "| source | seconds | peak MiB | time vs Parquet | memory vs Parquet |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for mode, label in (("parquet", "Parquet parts (path)"),
                        ("dask", "Dask DataFrame, streamed (never collected)"),
                        ("collected", "Dask DataFrame collected first")):  # fmt: skip
        r = runs[mode]
        lines.append(
            f"| {label} | {r['seconds']:.1f} | {r['peak_mib']:.0f} | "
            f"{r['seconds'] / base['seconds']:.2f}× | {r['peak_mib'] / base['peak_mib']:.2f}× |"
        )
    lines += ["", f"Command: `python benchmarks/dask_stream.py --rows {args.rows} "
              f"--parts {args.parts}`"]  # fmt: skip
    update_results("dask_stream", "## A Dask DataFrame on the streamed path (issue 30)\n\n"
                   + "\n".join(lines))  # fmt: skip
    dump("dask_stream", {"rows": args.rows, "parts": args.parts, "runs": runs})


if __name__ == "__main__":
    main()
