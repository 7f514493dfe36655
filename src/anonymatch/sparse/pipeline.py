"""The sparse binary pipeline: chunk (min-hash) → cluster (per chunk, on the shared runner) →
vote → verify → report. See methods/smooth.py for the algorithm and verify_sparse.py for the
guarantee checked before anything is written.

Methods: ``smooth`` (Alg₂ + majority vote: smooth k-anonymity), ``nonsmooth`` (same clusters,
intersection: k-anonymity by suppression), ``mondrian`` (Mondrian on binary columns,
intersection) and ``rr`` (randomized response, ε edge- or node-DP; not a k-anonymity method,
so there is nothing to verify from the data — DP is a property of the mechanism).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from anonymatch.core.manifest import rename_keys
from anonymatch.core.release import Produced, publish
from anonymatch.core.runner import Placement, default_workers, run_partitions
from anonymatch.sparse.job import SparseJob, check_rows
from anonymatch.sparse.methods.mondrian import mondrian_labels
from anonymatch.sparse.methods.randomized_response import flip_probability, randomized_response
from anonymatch.sparse.methods.smooth import cluster, vote
from anonymatch.sparse.metrics import edge_metrics
from anonymatch.sparse.order import minhash_chunks
from anonymatch.sparse.verify import SparseVerificationReport, verify_sparse


@dataclass
class SparseRelease:
    """A verified release: the published matrix (row i = user i), the cluster label of every
    row (None for rr), the verification report (None for rr) and the JSON report."""

    published: sp.csr_array
    labels: np.ndarray | None
    verification: SparseVerificationReport | None
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def release(self) -> sp.csr_array:
        """The published matrix (the same object as ``published``)."""
        return self.published


def _cluster_chunk(
    job: tuple[sp.csr_array, int, float, int, int], seed: np.random.SeedSequence
) -> tuple[np.ndarray, dict[str, float]]:
    """One chunk (a runner job): cluster labels local to the chunk, and its figures; the
    chunk's Meyerson runs on ``threads`` threads (the last field of the job)."""
    x, k, beta, runs, threads = job
    c = cluster(x, k, beta=beta, runs=runs, seed=seed, threads=threads)
    stats = {
        "facility_cost": c.facility_cost,
        "facilities_opened": c.facilities_opened,
        "facilities_closed": c.facilities_closed,
        "clusters_split": c.clusters_split,
    }
    return c.labels, stats


def anonymize_sparse(
    x: sp.spmatrix | sp.sparray, k: int, method: str = "smooth", **keywords: Any
) -> SparseRelease:
    """:func:`run_job` on a job built from ``k``, ``method`` and ``keywords``
    (``SparseJob.build``: ``beta``, ``runs``, ``chunk_rows``, ``executor``, ``scheduler``,
    ``workers``, ``seed``, ``epsilon``, ``dp``, ``refine``, ``progress``)."""
    return run_job(x, SparseJob.build(dict(k=k, method=method, **keywords)))


def run_job(x: sp.spmatrix | sp.sparray, job: SparseJob) -> SparseRelease:
    """Anonymize a binary matrix in memory by ``job`` and verify the result (VerificationError
    if it fails).

    The chunks run on ``job.execution``: ``auto`` = inline for one chunk, else a Dask cluster
    (a local one unless a scheduler is given); or ``threads``/``processes``/``dask``/``inline``.
    Results depend on the seed only (OS entropy when None), not on the executor. ``refine``: the
    min-hash order with the support refinement key (default) or the paper's plain order
    (``sparse.order``)."""
    x = sp.csr_array(x, dtype=np.int8, copy=True)
    x.sum_duplicates()
    x.eliminate_zeros()
    x.data[:] = 1
    x.sort_indices()
    n, m = x.shape
    check_rows(job, n)
    method, k, seed = job.method, job.k, job.seed
    beta, runs, chunk_rows, refine = job.beta, job.runs, job.chunk_rows, job.refine
    scheduler, workers = job.execution.scheduler, job.execution.workers
    executor = None if job.execution.executor == "auto" else job.execution.executor
    root = np.random.SeedSequence(seed)
    lsh_seed, work_seed = root.spawn(2)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    parameters: dict[str, Any] = {"columns": m}
    guarantee: dict[str, Any] = {"model": method.model, "k": k}
    extra: dict[str, Any] = {}
    labels: np.ndarray | None = None
    verification: SparseVerificationReport | None = None
    if method.epsilon:
        epsilon, dp = float(job.epsilon), job.dp  # type: ignore[arg-type]
        p = flip_probability(epsilon, dp, m)
        published = randomized_response(x, epsilon, dp, seed=work_seed)
        seconds["anonymize"] = time.perf_counter() - started
        guarantee = {
            "model": method.model,
            "epsilon": job.epsilon,
            "dp_level": dp,
            "flip_probability": p,
        }
        checked: dict[str, Any] = {
            "passed": None,
            "reason": "randomized response is ε-DP by construction; nothing to check from data",
        }
    else:
        if not method.partitioned:
            labels = mondrian_labels(x, k)
            parameters["chunks"] = 1
        else:
            chunks = (
                minhash_chunks(x, chunk_rows, seed=lsh_seed, refine=refine)
                if n >= 2 * chunk_rows
                else [np.arange(n, dtype=np.int64)]
            )
            if executor is None:
                executor = "inline" if len(chunks) == 1 and not scheduler else "dask"
            # one chunk in this process: its Meyerson runs on all cores; several chunks: the
            # chunks share the cores, one thread each
            alone = executor == "inline" or (
                len(chunks) == 1 and not scheduler and executor != "dask"
            )
            threads = (workers or default_workers()) if alone else 1
            jobs = [(x[ids], k, beta, runs, threads) for ids in chunks]
            results = run_partitions(
                _cluster_chunk,
                jobs,
                placement=Placement(executor, scheduler, workers),
                seed=work_seed,
                progress=job.execution.progress,
                desc=f"{method.name} chunks",
            )
            del jobs
            labels = np.empty(n, np.int64)
            offset = 0
            totals: dict[str, float] = {}
            for ids, (local, stats) in zip(chunks, results, strict=True):
                labels[ids] = local + offset
                offset += int(local.max()) + 1 if local.size else 0
                for key, value in stats.items():
                    totals[key] = totals.get(key, 0) + value
            parameters.update(
                chunks=len(chunks),
                chunk_rows=chunk_rows,
                lsh={"hashes": 8, "refine": refine},
                executor="dask" if scheduler else executor,
                beta=beta,
                alpha=1 / beta,
                runs=runs,
            )
            extra["facility_location"] = totals
        seconds["cluster"] = time.perf_counter() - started
        t = time.perf_counter()
        published = vote(x, labels, method.vote)  # type: ignore[arg-type]
        seconds["vote"] = time.perf_counter() - t
        t = time.perf_counter()
        verification = verify_sparse(published, x, k, method.rule)  # type: ignore[arg-type]
        seconds["verify"] = time.perf_counter() - t
        extra["clusters"] = int(labels.max()) + 1 if n else 0
        checked = rename_keys(verification.to_dict(), {"rows": "records"})
    produced = Produced(
        kind="sparse",
        method=method.name,
        parameters=parameters,
        guarantee=guarantee,
        verification=checked,
        loss={**edge_metrics(x, published).to_dict(), **extra},
        seconds={**seconds, "wall": time.perf_counter() - started},
        seeded=seed is not None,
        records_in=n,
        records_out=n,
    )
    report = publish(produced)  # refuses a release that failed verification
    return SparseRelease(published, labels, verification, report)
