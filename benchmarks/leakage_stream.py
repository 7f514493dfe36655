"""Issue 25: what the leakage check of kept columns costs on the streamed path, 1 M rows.

A synthetic census table (``anonymatch generate-census``, fitted to Adult; 1,000,000 rows by
default, Parquet) is anonymized through the streamed path — hungarian, k = 10, the 8 QIs of
``scale_tables``, ``income`` sensitive, ``hours-per-week`` kept as it is, the default executor
(local processes), ``-o release.parquet`` — alternately by two copies of the package:

- ``before``: without the check (``--base``, default /work/main/src: the branch point, whose
  streamed path has no leakage check);
- ``after``: this tree (workers send each chunk's distinct cells; the driver checks the kept
  columns before committing, ``tables.streamed._leakage``).

``--repeats`` runs each (after one warm-up of each). Reported: median wall seconds and peak
resident memory of the whole process tree (driver and workers, sampled every 0.25 s), the
driver's check seconds (the manifest's ``seconds.leakage``) and the flagged columns. Writes
docs/results.md (section leakage_stream) and benchmarks/results/leakage_stream.json; the data
lives in ``--data-dir`` (default /tmp/anonymatch-leakage-stream), never in the repository.

With ``--chunks N``: in this process, the first N chunks (50,000 rows each) of the table's
lexicographic order anonymized by ``tables.streamed.anonymize_chunk`` as a worker does, with
the seconds of ``risk.leakage.distinct_cells`` (the workers' share of the check) against the
chunk's; section leakage_stream_chunks.

Usage: python benchmarks/leakage_stream.py [--rows 1000000] [--repeats 2] [--base DIR]
       python benchmarks/leakage_stream.py --chunks 4
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path

from _common import ROOT, adult_path, dump, machine, run_cli_tree, update_results

QI = "age,workclass,education-num,marital-status,occupation,race,sex,native-country"
JOB = ["--k", "10", "--qi", QI, "--numeric", "age,education-num", "--sensitive", "income"]
JOB += ["--method", "hungarian", "--seed", "1", "-q"]


def generate(data: Path, rows: int) -> Path:
    path = data / f"census_{rows}.parquet"
    if not path.exists():
        args = ["generate-census", "-o", str(path), "--rows", str(rows), "--seed", "1", "-q"]
        run_cli_tree([*args, "--source", adult_path()])
    return path


def run(source: Path, data: Path, src: str, name: str) -> dict[str, object]:
    """One streamed run with the package at ``src`` first on the path."""
    out, manifest = data / f"release_{name}.parquet", data / f"manifest_{name}.json"
    os.environ["PYTHONPATH"] = src
    result = run_cli_tree(
        ["anonymize", str(source), "-o", str(out), *JOB, "--force", "--report", str(manifest)]
    )
    report = json.loads(manifest.read_text())
    leakage = report.get("leakage") or {}
    return {
        "wall": result["wall"],
        "peak_mib": result["peak_mib"],
        "check_seconds": (report.get("seconds") or {}).get("leakage"),
        "flagged": leakage.get("flagged"),
        "columns": [
            {k: c[k] for k in ("column", "leaked_rows", "unique_rows", "distinct")}
            for c in leakage.get("columns") or ()
        ],
    }


def chunk_share(source: Path, count: int) -> None:
    """Seconds of ``distinct_cells`` against the whole chunk, for the first ``count`` chunks."""
    import sys
    import time

    sys.path.insert(0, str(ROOT / "src"))
    from anonymatch.core.runner import child_seeds, partition_bounds
    from anonymatch.tables import streamed
    from anonymatch.tables.job import TableJob, plan
    from anonymatch.tables.methods import BuildOptions
    from anonymatch.tables.order import lexicographic_order

    job = TableJob.build(
        dict(qi=QI.split(","), numeric=["age", "education-num"], sensitive=["income"], k=10,
        method="hungarian"),
    )  # fmt: skip
    table = streamed.scan_table(source, job.schema)
    qi, order = table.qi, lexicographic_order(table.qi)
    size = plan(job, rows=qi.n, streamed=True).partition_size
    assert size is not None
    bounds = partition_bounds(qi.n, size)
    chunks = streamed.chunk_ranges(bounds, streamed.DEFAULT_CHUNK_ROWS)[:count]
    build = streamed.ChunkBuild(10, "hungarian", BuildOptions(job.time_limit), True)
    spent: list[float] = []
    original = streamed.distinct_cells

    def timed(cells):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        out = original(cells)
        spent.append(time.perf_counter() - started)
        return out

    streamed.distinct_cells = timed  # type: ignore[assignment]
    rows = []
    for chunk in streamed._chunk_jobs(
        qi, order, bounds, chunks, child_seeds(1, len(bounds) - 1), build
    ):
        started = time.perf_counter()
        streamed.anonymize_chunk(chunk)
        rows.append((chunk.qi.n, time.perf_counter() - started, spent[-1]))
    body = "\n".join(
        f"| {n:,} | {whole:.2f} | {part:.3f} | {100 * part / whole:.1f} % |"
        for n, whole, part in rows
    )
    text = f"""`python benchmarks/leakage_stream.py --chunks {count}`: the workers' share of the
check — the first {count} chunks of the {qi.n:,}-row census's order, anonymized in this process
as a worker does (`anonymize_chunk`), and the seconds of `distinct_cells` (the chunk's distinct
cells for the driver) within them. {machine()}.

| chunk rows | chunk (s) | distinct_cells (s) | share |
|---:|---:|---:|---:|
{body}
"""
    update_results("leakage_stream_chunks", text)
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--base", default="/work/main/src")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/anonymatch-leakage-stream"))
    parser.add_argument("--chunks", type=int, default=0)
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    source = generate(args.data_dir, args.rows)
    if args.chunks:
        chunk_share(source, args.chunks)
        return
    trees = {"before": args.base, "after": str(ROOT / "src")}
    base_commit = subprocess.run(
        ["git", "-C", args.base, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in trees}
    for name, src in trees.items():  # warm-up
        run(source, args.data_dir, src, name)
    for _ in range(args.repeats):
        for name, src in trees.items():
            runs[name].append(run(source, args.data_dir, src, name))
    med = {
        name: {
            key: statistics.median(float(r[key]) for r in rs)  # type: ignore[arg-type]
            for key in ("wall", "peak_mib")
        }
        for name, rs in runs.items()
    }
    check = statistics.median(float(r["check_seconds"]) for r in runs["after"])  # type: ignore[arg-type]
    last = runs["after"][-1]
    dump("leakage_stream", {"rows": args.rows, "base": base_commit, "runs": runs, "median": med})
    b, a = med["before"], med["after"]
    added, grown = a["wall"] - b["wall"], a["peak_mib"] - b["peak_mib"]
    columns = ", ".join(
        f"`{c['column']}` ({c['distinct']:,} values, {c['leaked_rows']:,} rows narrowed, "
        f"{c['unique_rows']:,} unique)"
        for c in last["columns"]  # type: ignore[union-attr]
    )
    body = f"""## The leakage check on the streamed path, 1 M rows (issue 25)

`python benchmarks/leakage_stream.py --rows {args.rows} --repeats {args.repeats}`: a synthetic
census table of {args.rows:,} rows (`generate-census`, fitted to Adult, Parquet), hungarian,
k = 10, 8 QIs, `income` sensitive and `hours-per-week` kept as they are, the default streamed
executor (local processes), `-o release.parquet`. *Before*: main at {base_commit},
whose streamed path has no leakage check; *after*: the workers send each chunk's distinct
cells and the driver checks the kept columns (read one at a time from the spill file) before
committing. Median of {args.repeats} runs each, alternating, after a warm-up of each; peak memory
is the summed resident memory of the process tree (driver and workers, sampled every 0.25 s).
{machine()}; 2 cores shared with other jobs, so wall times carry several seconds of noise.

| run | wall (s) | peak memory (MiB) |
|---|---:|---:|
| before (no check) | {b["wall"]:.1f} | {b["peak_mib"]:,.0f} |
| after (check) | {a["wall"]:.1f} | {a["peak_mib"]:,.0f} |
| difference | {added:+.1f} ({100 * added / b["wall"]:+.1f} %) | {grown:+,.0f} |

The driver's check itself (the manifest's `seconds.leakage`, median): {check:.2f} s, or
{100 * check / a["wall"]:.1f} % of the run. Kept columns: {columns}; flagged:
{", ".join(f"`{c}`" for c in last["flagged"]) or "none"}.
"""  # type: ignore[index]
    update_results("leakage_stream", body)
    print(body)


if __name__ == "__main__":
    main()
