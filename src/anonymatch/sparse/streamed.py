"""Out-of-core smooth k-anonymity of a Parquet edge list (Esfandiari et al., App. D heuristic).

The matrix is never held in memory as a whole. The edge list is read batch by batch and

1. *staged*: every edge is appended to the raw file of its row-range shard (2¹⁸ rows), then each
   shard is turned into a canonical CSR (duplicates once) saved as ``.npy`` — one shard in
   memory at a time;
2. *ordered*: the min-hash signatures and the support refinement key of every row are computed
   shard by shard (``sparse.order.shard_order``; O(8·n) integers in memory plus one hash's
   (bucket, column) counts; the per-edge scores on disk) and the order is cut into chunks of
   ``chunk_rows`` rows;
3. *routed*: every shard's edges are appended to the file of their row's chunk;
4. *anonymized*: each chunk is a job of ``runner.run_partitions`` (a local Dask cluster by
   default, or ``scheduler``): the job loads its chunk, clusters it (Alg₂), votes, **verifies
   the chunk** and writes its published edges as a Parquet part; it returns only figures;
5. *written*: the parts are streamed into the output (Parquet or CSV edge list) through
   ``write_atomically``; nothing is written if any chunk failed verification.

Verification chunk by chunk is sufficient for the whole release: classes of identical published
rows of the whole release are unions of the chunks' classes, and both conditions add up over a
union (sizes ≥ k; a published 1 held by ≥ half, or all, of each part is held by ≥ half, or
all, of the union). The in-memory path (``sparse.pipeline.anonymize_sparse``) computes the same
order, the same chunks and the same per-chunk seeds, so for one seed both paths publish the same
edges (tested).

Peak memory: O(n·h) integers for the order, one shard (2¹⁸ rows) or one chunk per process, and
the distinct (bucket, column) pairs of one min-hash (≤ nnz) while the refinement key is built.
Workers must see ``workdir`` (it defaults to a directory beside the output; give a shared
path when ``scheduler`` is a remote cluster).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

from anonymatch.core import lifecycle
from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.core.params import check_dimensions
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.core.runner import Placement, default_workers, run_partitions, split_even
from anonymatch.sparse.io import binary_csr, iter_parquet_edges, sparse_format
from anonymatch.sparse.job import SparseJob, check_rows, check_streamable
from anonymatch.sparse.methods.smooth import cluster, vote
from anonymatch.sparse.order import SHARD_ROWS, Shard, shard_order
from anonymatch.sparse.verify import verify_sparse

_SCHEMA = pa.schema([("row", pa.int64()), ("col", pa.int64())])


def _append(path: Path, rows: np.ndarray, cols: np.ndarray) -> None:
    with path.open("ab") as handle:
        np.column_stack([rows, cols]).astype(np.int64).tofile(handle)


def _load_pairs(path: Path) -> tuple[np.ndarray, np.ndarray]:
    if not path.exists():
        return np.empty(0, np.int64), np.empty(0, np.int64)
    pairs = np.fromfile(path, dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def _split_by(
    keys: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(key, rows, cols) groups of the edges by ``keys``."""
    order = np.argsort(keys, kind="stable")
    keys, rows, cols = keys[order], rows[order], cols[order]
    cuts = np.flatnonzero(np.diff(keys)) + 1
    starts = np.concatenate([[0], cuts])
    stops = np.concatenate([cuts, [keys.size]])
    return [(int(keys[a]), rows[a:b], cols[a:b]) for a, b in zip(starts, stops, strict=True)]


class StagedMatrix:
    """A binary matrix staged on disk as row-range shards of canonical CSR (``.npy`` files)."""

    def __init__(self, directory: Path, n: int, m: int, shard_rows: int, nnz: int) -> None:
        self.directory, self.n, self.m, self.shard_rows, self.nnz = (
            directory,
            n,
            m,
            shard_rows,
            nnz,
        )

    def load(self, s: int) -> sp.csr_array:
        start = s * self.shard_rows
        rows = min(self.shard_rows, self.n - start)
        indptr = np.load(self.directory / f"shard-{s:06d}.indptr.npy")
        indices = np.load(self.directory / f"shard-{s:06d}.indices.npy")
        return sp.csr_array((np.ones(indices.size, np.int8), indices, indptr), shape=(rows, self.m))

    def shards(self) -> list[Shard]:
        def loader(s: int) -> Callable[[], sp.csr_array]:
            return lambda: self.load(s)

        count = max(1, math.ceil(self.n / self.shard_rows))
        return [(s * self.shard_rows, loader(s)) for s in range(count)]


def stage_parquet(path: str | Path, directory: Path, shard_rows: int = SHARD_ROWS) -> StagedMatrix:
    """Pass over the Parquet edge list: route the edges to row-range shards on disk, then make
    each shard a canonical CSR. O(E log E) time, O(batch + shard) memory."""
    n = m = edges = 0
    for rows, cols in iter_parquet_edges(path):
        if rows.size == 0:
            continue
        n = max(n, int(rows.max()) + 1)
        m = max(m, int(cols.max()) + 1)
        edges += rows.size
        for s, r, c in _split_by(rows // shard_rows, rows, cols):
            _append(directory / f"shard-{s:06d}.raw", r, c)
    check_dimensions(n, m, edges, str(path))  # before n / shard_rows shards are made
    nnz = 0
    for s in range(max(1, math.ceil(n / shard_rows))):
        raw = directory / f"shard-{s:06d}.raw"
        rows, cols = _load_pairs(raw)
        start = s * shard_rows
        block = binary_csr(rows - start, cols, (max(0, min(shard_rows, n - start)), m))
        nnz += block.nnz
        np.save(directory / f"shard-{s:06d}.indptr.npy", block.indptr)
        np.save(directory / f"shard-{s:06d}.indices.npy", block.indices)
        raw.unlink(missing_ok=True)
    return StagedMatrix(directory, n, m, shard_rows, nnz)


def _chunk_job(
    job: tuple[str, int, int, int, int, float, int, str, str, int], seed: np.random.SeedSequence
) -> dict[str, Any]:
    """One chunk (a runner job): load it, cluster (its Meyerson runs on ``threads`` threads,
    the last field), vote by the method's rule, verify by its rule, write its Parquet part."""
    directory, c, size, m, k, beta, runs, rule_vote, rule_check, threads = job
    base = Path(directory)
    ids = np.load(base / f"chunk-{c:06d}.ids.npy")
    local, cols = _load_pairs(base / f"chunk-{c:06d}.raw")
    x = binary_csr(local, cols, (size, m))
    clustering = cluster(x, k, beta=beta, runs=runs, seed=seed, threads=threads)
    published = vote(x, clustering.labels, rule_vote)
    report = verify_sparse(published, x, k, rule_check)
    rows = ids[np.repeat(np.arange(size, dtype=np.int64), np.diff(published.indptr))]
    order = np.lexsort((published.indices, rows))
    table = pa.table(
        {"row": rows[order], "col": published.indices.astype(np.int64)[order]}, schema=_SCHEMA
    )
    pq.write_table(table, base / f"part-{c:06d}.parquet")
    common = int(x.multiply(published).nnz)
    return {
        "clusters": clustering.n_clusters,
        "facility_cost": clustering.facility_cost,
        "facilities_opened": clustering.facilities_opened,
        "facilities_closed": clustering.facilities_closed,
        "clusters_split": clustering.clusters_split,
        "edges_original": int(x.nnz),
        "edges_published": int(published.nnz),
        "edges_common": common,
        "verification": report.to_dict(),
    }


def _write_parts(tmp: Path, parts: list[Path], fmt: str) -> None:
    if fmt == "parquet":
        with pq.ParquetWriter(str(tmp), _SCHEMA) as writer:
            for part in parts:
                for batch in pq.ParquetFile(part).iter_batches(batch_size=1 << 20):
                    writer.write_table(pa.Table.from_batches([batch], schema=_SCHEMA))
        return
    with tmp.open("w") as handle:
        handle.write("row,col\n")
        for part in parts:
            for batch in pq.ParquetFile(part).iter_batches(batch_size=1 << 20):
                pairs = np.column_stack([batch.column(0).to_numpy(), batch.column(1).to_numpy()])
                if pairs.size:
                    np.savetxt(handle, pairs, fmt="%d", delimiter=",")


def anonymize_sparse_stream(
    input_path: str | Path,
    output: str | Path,
    job: SparseJob,
    *,
    workdir: str | Path | None = None,
) -> dict[str, Any]:
    """Anonymize the Parquet edge list ``input_path`` out of core by ``job`` and write the
    verified release to ``output`` (a Parquet or CSV edge list) atomically; returns the JSON
    report. ``workdir``: the scratch directory (default: beside the output). Raises InputError
    on bad input or a method that does not stream, InfeasibleError if k exceeds the rows,
    VerificationError (nothing written) if a chunk fails verification."""
    started = time.perf_counter()
    check_streamable(job)
    method, k, seed = job.method, job.k, job.seed
    beta, runs, chunk_rows, refine = job.beta, job.runs, job.chunk_rows, job.refine
    scheduler, workers = job.execution.scheduler, job.execution.workers
    executor = None if job.execution.executor == "auto" else job.execution.executor
    if sparse_format(input_path) != "parquet":
        raise InputError(f"the streaming path reads a Parquet edge list, not {input_path}")
    out_fmt = sparse_format(output)
    if out_fmt not in ("parquet", "edges"):
        raise InputError("the streaming path writes a Parquet or CSV edge list")
    if not Path(input_path).is_file():
        raise InputError(f"input file not found: {input_path}")
    out_dir = Path(output).parent if str(Path(output).parent) else Path(".")
    if not out_dir.is_dir():
        raise InputError(f"output directory does not exist: {out_dir}")
    base = Path(workdir) if workdir else out_dir
    base.mkdir(parents=True, exist_ok=True)
    # private (0700, locked, removed on every exit path; swept by the next run after a SIGKILL)
    work = lifecycle.private_dir(".anonymatch-stream-", base)
    root = np.random.SeedSequence(seed)
    lsh_seed, work_seed = root.spawn(2)
    seconds: dict[str, float] = {}
    try:
        t = time.perf_counter()
        staged = stage_parquet(input_path, work)
        n, m = staged.n, staged.m
        seconds["stage"] = time.perf_counter() - t
        check_rows(job, n)
        t = time.perf_counter()
        shards = staged.shards()
        if n >= 2 * chunk_rows:
            order = shard_order(shards, n, m, seed=lsh_seed, refine=refine, scratch=work)
            chunks = [order[part] for part in split_even(n, chunk_rows)]
            del order
        else:
            chunks = [np.arange(n, dtype=np.int64)]
        seconds["order"] = time.perf_counter() - t
        t = time.perf_counter()
        chunk_of = np.empty(n, np.int64)
        position = np.empty(n, np.int64)
        for c, ids in enumerate(chunks):
            chunk_of[ids] = c
            position[ids] = np.arange(ids.size)
            np.save(work / f"chunk-{c:06d}.ids.npy", ids)
        sizes = [int(ids.size) for ids in chunks]
        del chunks
        for offset, load in shards:
            block = load()
            rows = offset + np.repeat(
                np.arange(block.shape[0], dtype=np.int64), np.diff(block.indptr)
            )
            cols = block.indices.astype(np.int64)
            for c, r, col in _split_by(chunk_of[rows], rows, cols):
                _append(work / f"chunk-{c:06d}.raw", position[r], col)
        del chunk_of, position
        seconds["route"] = time.perf_counter() - t
        t = time.perf_counter()
        if executor is None:
            executor = "inline" if len(sizes) == 1 and not scheduler else "dask"
        # one chunk, or chunks one after another here: each chunk's Meyerson runs use all cores
        alone = executor == "inline" or (len(sizes) == 1 and not scheduler and executor != "dask")
        threads = (workers or default_workers()) if alone else 1
        jobs = [
            (str(work), c, size, m, k, beta, runs, method.vote, method.rule, threads)
            for c, size in enumerate(sizes)
        ]
        results = run_partitions(
            _chunk_job,
            jobs,
            placement=Placement(executor, scheduler, workers),
            seed=work_seed,
            progress=job.execution.progress,
            desc=f"{method.name} chunks",
        )
        seconds["anonymize"] = time.perf_counter() - t
        failed = [r["verification"] for r in results if not r["verification"]["passed"]]
        if failed:  # before anything is written
            refuse(False, failed[0]["reason"])
        t = time.perf_counter()
        parts = [work / f"part-{c:06d}.parquet" for c in range(len(sizes))]
        write_atomically(output, lambda tmp: _write_parts(tmp, parts, out_fmt))
        seconds["write"] = time.perf_counter() - t
    finally:
        lifecycle.remove_temp(work)
    e = sum(r["edges_original"] for r in results)
    p = sum(r["edges_published"] for r in results)
    common = sum(r["edges_common"] for r in results)
    union = e + p - common
    checks = [r["verification"] for r in results]
    produced = Produced(
        kind="sparse",
        method=method.name,
        parameters={
            "columns": m,
            "streamed": True,
            "chunks": len(sizes),
            "chunk_rows": chunk_rows,
            "lsh": {"hashes": 8, "refine": refine},
            "executor": "dask" if scheduler else executor,
            "beta": beta,
            "alpha": 1 / beta,
            "runs": runs,
        },
        guarantee={"model": method.model, "k": k},
        verification={
            "passed": True,
            "scope": "every chunk (sufficient for the whole release)",
            "k": k,
            "rule": checks[0]["rule"],
            "records": n,
            "classes": sum(int(v["classes"]) for v in checks),
            "smallest_class": min(int(v["smallest_class"]) for v in checks),
            "published_ones": p,
            "unsupported_ones": 0,
            "reason": "ok",
        },
        loss={
            "jaccard": common / union if union else 1.0,
            "suppressed": (e - common) / max(1, e),
            "created": (p - common) / max(1, e),
            "edges_original": e,
            "edges_published": p,
            "edges_common": common,
            "clusters": sum(r["clusters"] for r in results),
            "facility_location": {
                key: sum(r[key] for r in results)
                for key in (
                    "facility_cost",
                    "facilities_opened",
                    "facilities_closed",
                    "clusters_split",
                )
            },
        },
        seconds={**seconds, "wall": time.perf_counter() - started},
        seeded=seed is not None,
        records_in=n,
        records_out=n,
    )
    return publish(produced)
