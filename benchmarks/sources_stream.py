"""Issue 30: a 1 M-row PostgreSQL table anonymized through the streamed path, against the
same rows read from Parquet.

A synthetic census table (``anonymatch generate-census``, fitted to Adult; 1,000,000 rows by
default) is written as Parquet and loaded into a throwaway PostgreSQL server
(``tests/pgserver.py``: initdb in a temporary directory, Unix socket only) with ``COPY``. Then,
alternating the two sources, ``--repeats`` times each (after one warm-up run of each):

- ``parquet``: ``anonymize census.parquet -o release.parquet``;
- ``postgresql``: ``anonymize postgresql://… --table census -o release.parquet`` — batches of
  100,000 rows through a server-side cursor (``tables.io.sql.iter_sql_batches``), never the
  whole table;

hungarian, k = 10, 8 QIs, the default streamed executor (local processes). Reported: median
wall seconds and peak resident memory of anonymatch's whole process tree (driver and workers,
sampled every 0.25 s; the PostgreSQL server's own processes are not counted), the ratio of the
two. (The releases differ: a table's rows come in the server's heap order, which ``COPY`` need
not keep, and the release depends on the input order.) Writes
docs/results.md (section sources_stream) and benchmarks/results/sources_stream.json; the data
lives in ``--data-dir`` (default /tmp/anonymatch-sources-stream), never in the repository.

Usage: python benchmarks/sources_stream.py [--rows 1000000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import pandas as pd
import sqlalchemy
from _common import ROOT, adult_path, dump, machine, run_cli_tree, update_results

sys.path.insert(0, str(ROOT))
from tests import pgserver  # noqa: E402

QI = "age,workclass,education-num,marital-status,occupation,race,sex,native-country"
JOB = ["--k", "10", "--qi", QI, "--numeric", "age,education-num", "--sensitive", "income"]
JOB += ["--method", "hungarian", "--seed", "1", "-q"]


def generate(data: Path, rows: int) -> Path:
    path = data / f"census_{rows}.parquet"
    if not path.exists():
        args = ["generate-census", "-o", str(path), "--rows", str(rows), "--seed", "1", "-q"]
        run_cli_tree([*args, "--source", adult_path()])
    return path


def load(url: str, parquet: Path) -> float:
    """Create table ``census`` from the Parquet file with COPY; returns the seconds taken."""
    started = time.perf_counter()
    frame = pd.read_parquet(parquet)
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    frame.head(0).to_sql("census", engine, index=False, if_exists="replace")
    csv = parquet.with_suffix(".csv")
    frame.to_csv(csv, index=False)
    with engine.begin() as connection:
        cursor = connection.connection.driver_connection.cursor()
        statement = "COPY census FROM STDIN WITH (FORMAT csv, HEADER true)"
        with cursor.copy(statement) as copy, open(csv, "rb") as fh:
            while block := fh.read(1 << 20):
                copy.write(block)
    engine.dispose()
    csv.unlink()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--data-dir", default="/tmp/anonymatch-sources-stream")
    args = parser.parse_args()
    reason = pgserver.unavailable()
    if reason is not None:
        sys.exit(reason)
    data = Path(args.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    parquet = generate(data, args.rows)
    runs: dict[str, list[dict[str, float]]] = {"parquet": [], "postgresql": [], "to_table": []}
    loads = [os.getloadavg()[0]]
    with pgserver.postgres_server() as sockets:
        url = pgserver.url(sockets)
        load_s = load(url, parquet)
        table = [url, "--table", "census"]
        sources = {
            "parquet": [str(parquet), "-o", str(data / "release_parquet.parquet")],
            "postgresql": [*table, "-o", str(data / "release_postgresql.parquet")],
            "to_table": [*table, "-o", url, "--output-table", "census_k10"],
        }
        for attempt in range(args.repeats + 1):  # the first round is a warm-up
            for name, io in sources.items():
                run = run_cli_tree(["anonymize", *io, *JOB, "--force"])
                if run["rc"] != 0:
                    sys.exit(f"anonymize from {name} failed")
                print(f"{name} run {attempt}: {run['wall']:.1f} s, {run['peak_mib']:.0f} MiB")
                loads.append(os.getloadavg()[0])
                if attempt:
                    runs[name].append({"wall": run["wall"], "peak_mib": run["peak_mib"]})
    figures = {
        name: {
            "wall_s": statistics.median(r["wall"] for r in rs),
            "peak_mib": statistics.median(r["peak_mib"] for r in rs),
            "runs": rs,
        }
        for name, rs in runs.items()
    }
    pg, pa_, tt = figures["postgresql"], figures["parquet"], figures["to_table"]
    time_ratio = pg["wall_s"] / pa_["wall_s"]
    memory_ratio = pg["peak_mib"] / pa_["peak_mib"]
    dump(
        "sources_stream",
        {
            "rows": args.rows,
            "load_s": load_s,
            **figures,
            "time_ratio": time_ratio,
            "memory_ratio": memory_ratio,
            "load_average": loads,
            "machine": machine(),
        },
    )
    body = "\n".join(
        [
            "## A 1 M-row PostgreSQL table through the streamed path (issue 30)",
            "",
            f"`python benchmarks/sources_stream.py --rows {args.rows} --repeats "
            f"{args.repeats}`: a synthetic census table of {args.rows:,} rows "
            "(`generate-census`, fitted to Adult), hungarian, k = 10, 8 QIs, the default "
            "streamed executor (local processes), `-o release.parquet` (last row: the release "
            "inserted batch by batch into a table, `tables.io.sql.SqlReleaseWriter`). The "
            "PostgreSQL source "
            "is read in batches of 100,000 rows through a server-side cursor "
            "(`tables.io.sql.iter_sql_batches`); the server (`tests/pgserver.py`, Unix socket) "
            f"got the table by `COPY` in {load_s:.0f} s. Median of {args.repeats} runs each, "
            "alternating, after a warm-up; peak memory is the summed resident memory of "
            "anonymatch's process tree (driver and workers; not the server's).",
            "",
            "| source | wall (s) | peak memory (MiB) |",
            "|---|---:|---:|",
            f"| Parquet file | {pa_['wall_s']:.1f} | {pa_['peak_mib']:.0f} |",
            f"| PostgreSQL table | {pg['wall_s']:.1f} | {pg['peak_mib']:.0f} |",
            f"| ratio | {time_ratio:.2f} × | {memory_ratio:.2f} × |",
            f"| PostgreSQL table → table (`--output-table`, one transaction) | "
            f"{tt['wall_s']:.1f} | {tt['peak_mib']:.0f} |",
            "",
            f"Targets (issue 30): time within 1.5 × the Parquet path's "
            f"({'met' if time_ratio <= 1.5 else 'not met'}), the same memory "
            f"({memory_ratio:.2f} ×).",
            "",
            f"Machine: {machine()}; 2 cores shared with other jobs (1-minute load average "
            f"{min(loads):.1f}–{max(loads):.1f} between the runs: compare the two sources "
            "with each other, not with the idle-machine timings of other sections).",
        ]
    )
    update_results("sources_stream", body)


if __name__ == "__main__":
    main()
