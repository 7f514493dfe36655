"""Issue 7 targets: tables of millions of rows through the streamed, partitioned path.

Synthetic census tables (``anonymatch generate-census``, fitted to Adult; docs/synthetic.md) of
100 k, 1 M and 10 M rows, 8 QIs, k = 10, hungarian:

- ``100k``/``1m``: read → anonymize → verify → write on local processes (the default for large
  inputs): time, peak memory of the whole process tree, time(1 M)/time(100 k);
- ``dask1``/``dask2``: the 1 M run on a local Dask cluster of 1 and of 2 worker processes;
- ``10m``: 10 M rows, Parquet in, a directory of Parquet parts out, on a local Dask cluster of 2
  workers;
- ``slices``: GCP of the 1 M partitioned release vs the same method on its ten 100 k slices;
- ``memory100k``: the in-memory path on the 100 k table (same partitions, so the same GCP);
- ``verify1m``/``verify10m``: ``anonymatch verify --manifest`` on the releases.

Each figure is cached in benchmarks/results/scale_tables.json (``--steps`` reruns some);
the data lives in ``--data-dir`` (default /tmp/anonymatch-scale), never in the repository.
Usage: python benchmarks/scale_tables.py [--steps 100k,1m,...] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from _common import ROOT, adult_path, machine, run_cli_tree, update_results

sys.path.insert(0, str(ROOT / "src"))
from anonymatch.tables.streamed import DEFAULT_CHUNK_ROWS, memory_bound

CACHE = ROOT / "benchmarks" / "results" / "scale_tables.json"
QI = "age,workclass,education-num,marital-status,occupation,race,sex,native-country"
SCHEMA = ["--qi", QI, "--numeric", "age,education-num", "--sensitive", "income", "--l", "1"]
STEPS = ("100k", "memory100k", "1m", "dask1", "dask2", "slices", "verify1m", "10m", "verify10m")


def generate(data: Path, rows: int, suffix: str) -> Path:
    path = data / f"census_{rows}.{suffix}"
    if not path.exists():
        args = ["generate-census", "-o", str(path), "--rows", str(rows), "--seed", "1", "-q"]
        run_cli_tree([*args, "--source", adult_path()])
    return path


def anonymize(src: Path, out: Path, *extra: str) -> dict[str, object]:
    report = out.with_suffix(".json") if out.suffix else out.parent / f"{out.name}.json"
    args = ["anonymize", str(src), "-o", str(out), "--k", "10", *SCHEMA, "--seed", "1", "-q"]
    run = run_cli_tree([*args, "--report", str(report), *extra])
    manifest = json.loads(report.read_text())
    return {
        "wall": run["wall"],
        "peak_mib": run["peak_mib"],
        "gcp": manifest["loss"]["gcp"],
        "partitions": manifest["parameters"]["partitions"],
        "scan_and_order": manifest["seconds"].get("scan_and_order"),
        "manifest": str(report),
    }


def verify(src: Path, out: Path, manifest: str, *extra: str) -> dict[str, object]:
    args = ["verify", str(src), str(out), "--k", "10", "--qi", QI, "--numeric"]
    run = run_cli_tree([*args, "age,education-num", "--manifest", manifest, *extra])
    return {"wall": run["wall"], "peak_mib": run["peak_mib"], "passed": run["rc"] == 0}


def slices(src: Path, data: Path) -> dict[str, object]:
    """The 1 M table cut into ten 100 k slices, each anonymized on its own."""
    lines = src.read_text().splitlines(keepends=True)
    header, body = lines[0], lines[1:]
    gcps = []
    for i in range(10):
        part = data / f"slice_{i}.csv"
        part.write_text(header + "".join(body[i * 100_000 : (i + 1) * 100_000]))
        gcps.append(anonymize(part, data / f"slice_{i}_out.csv", "--executor", "processes")["gcp"])
        part.unlink()
    return {"gcp": gcps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default=",".join(STEPS))
    parser.add_argument("--data-dir", default="/tmp/anonymatch-scale")
    args = parser.parse_args()
    data = Path(args.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    cache = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    steps = [s for s in args.steps.split(",") if s]
    for step in steps:
        if step not in STEPS:
            sys.exit(f"unknown step {step!r}; choose from {', '.join(STEPS)}")
    c100k, c1m = data / "census_100000.csv", data / "census_1000000.csv"
    if any(s in steps for s in STEPS[:-2]):
        generate(data, 100_000, "csv")
        generate(data, 1_000_000, "csv")
    for step in steps:
        print(f"running {step} …", flush=True)
        if step == "100k":
            cache[step] = anonymize(c100k, data / "out_100k.csv", "--executor", "processes")
        elif step == "memory100k":
            cache[step] = anonymize(c100k, data / "out_100k_memory.csv")  # under 200k: in memory
        elif step == "1m":
            cache[step] = anonymize(c1m, data / "out_1m.csv", "--executor", "processes")
        elif step in ("dask1", "dask2"):
            workers = step[-1]
            cache[step] = anonymize(c1m, data / f"out_1m_{step}.csv", "--workers", workers)
        elif step == "slices":
            cache[step] = slices(c1m, data)
        elif step == "verify1m":
            cache[step] = verify(c1m, data / "out_1m.csv", str(cache["1m"]["manifest"]))
        elif step == "10m":
            c10m = generate(data, 10_000_000, "parquet")
            cache[step] = anonymize(c10m, data / "out_10m", "--workers", "2")
        elif step == "verify10m":
            c10m = generate(data, 10_000_000, "parquet")
            manifest = str(cache["10m"]["manifest"])
            cache[step] = verify(c10m, data / "out_10m", manifest, "--workers", "2")
        print(json.dumps(cache[step]), flush=True)
        CACHE.parent.mkdir(exist_ok=True)
        CACHE.write_text(json.dumps(cache, indent=2) + "\n")
    update_results("scale_tables", render(cache))


def _cell(cache: dict[str, dict[str, object]], step: str, key: str, fmt: str) -> str:
    value = cache.get(step, {}).get(key)
    return format(value, fmt) if isinstance(value, int | float) else "not run"


def render(cache: dict[str, dict[str, object]]) -> str:
    def bound(rows: int, workers: int) -> str:
        return f"{memory_bound(rows, 8, DEFAULT_CHUNK_ROWS, workers) / 2**20:,.0f}"

    rows = [
        ("100 k CSV → CSV, 2 local processes", "100k", 100_000, 2, "≤ 1/11 of 1 M"),
        ("1 M CSV → CSV, 2 local processes", "1m", 1_000_000, 2, "≤ 600 s, ≤ 4,096 MiB"),
        ("1 M, Dask local cluster, 1 worker", "dask1", 1_000_000, 1, ""),
        ("1 M, Dask local cluster, 2 workers", "dask2", 1_000_000, 2, "≥ 1.6× faster than 1"),
        ("10 M Parquet → Parquet parts, Dask 2 workers", "10m", 10_000_000, 2, "≤ 8,192 MiB"),
        ("verify 1 M (--manifest, 2 processes)", "verify1m", 1_000_000, 2, ""),
        ("verify 10 M (--manifest, Dask 2 workers)", "verify10m", 10_000_000, 2, ""),
    ]
    lines = [
        "## Scale-out: tables of millions of rows (issue 7)",
        "",
        f"Machine: {machine()}. Synthetic census tables (`anonymatch generate-census --seed 1`, "
        "a Chow–Liu tree fitted to Adult, docs/synthetic.md), 8 QIs, k = 10, hungarian, "
        "partitions of 300 records, chunks of 50,000 rows, whole CLI runs (read → anonymize → "
        "verify every partition → write). Peak = summed RSS of the process tree (driver, "
        "worker processes, Dask scheduler and nannies) sampled every 0.25 s; bound = "
        "`scale.memory_bound` (docs/guarantees/scale.md).",
        "",
        "Command: `python benchmarks/scale_tables.py` (cached per step in "
        "benchmarks/results/scale_tables.json).",
        "",
        "| run | wall (s) | peak (MiB) | bound (MiB) | GCP | target |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for label, step, n, workers, target in rows:
        gcp = cache.get(step, {}).get("gcp")
        lines.append(
            f"| {label} | {_cell(cache, step, 'wall', ',.1f')} | "
            f"{_cell(cache, step, 'peak_mib', ',.0f')} | {bound(n, workers)} | "
            f"{'' if gcp is None else f'{100 * float(gcp):.3f} %'} | {target} |"  # type: ignore[arg-type]
        )
    t100k, t1m = cache.get("100k", {}).get("wall"), cache.get("1m", {}).get("wall")
    d1, d2 = cache.get("dask1", {}).get("wall"), cache.get("dask2", {}).get("wall")
    contended = [label for label, step, *_ in rows if cache.get(step, {}).get("contended")]
    if contended:
        lines.append("")
        lines.append(
            "Runs measured while another engineer's benchmark held one of the two cores (so on "
            f"about one core; memory unaffected): {'; '.join(contended)}."
        )
    earlier = cache.get("10m_contended", {})
    if isinstance(earlier.get("wall"), float):
        lines.append("")
        lines.append(
            f"An earlier 10 M run while another engineer's benchmark held one core took "
            f"{earlier['wall']:,.0f} s at {earlier['peak_mib']:,.0f} MiB (same release)."
        )
    lines.append("")
    if isinstance(t100k, float) and isinstance(t1m, float):
        lines.append(f"- time(1 M) / time(100 k) = {t1m / t100k:.2f} (target ≤ 11).")
    if isinstance(d1, float) and isinstance(d2, float):
        lines.append(f"- Dask, 2 workers vs 1: {d1 / d2:.2f}× faster (target ≥ 1.6×).")
    sl, full = cache.get("slices", {}).get("gcp"), cache.get("1m", {}).get("gcp")
    if isinstance(sl, list) and isinstance(full, float):
        mean = sum(sl) / len(sl)
        lines.append(
            f"- GCP of the 1 M partitioned release {100 * full:.3f} % vs {100 * mean:.3f} % "
            f"on average over its ten 100 k slices anonymized separately "
            f"(range {100 * min(sl):.3f}–{100 * max(sl):.3f} %): relative difference "
            f"{100 * abs(full - mean) / mean:.1f} % (target ≤ 5 %)"
            + (
                " — in the partitioned release's favour: ten times the rows make each 300-record "
                "partition of the sorted order span far narrower QI ranges, so the target, read "
                "as 'no worse than slices', holds by a wide margin, and read literally it fails."
                if full < mean
                else "."
            )
        )
    mem, streamed = cache.get("memory100k", {}).get("gcp"), cache.get("100k", {}).get("gcp")
    if isinstance(mem, float) and isinstance(streamed, float):
        lines.append(
            f"- Same 100 k rows, in-memory path vs streamed path: GCP {100 * mem:.4f} % vs "
            f"{100 * streamed:.4f} % (same partitions, so the same graphs)."
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
