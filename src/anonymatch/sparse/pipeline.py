"""The sparse binary pipeline: chunk (min-hash) → cluster (per chunk, on the shared runner) →
vote → verify → report. See methods/smooth.py for the algorithm and verify_sparse.py for the
guarantee checked before anything is written.

Methods: ``smooth`` (Alg₂ + majority vote: smooth k-anonymity), ``nonsmooth`` (same clusters,
intersection: k-anonymity by suppression), ``mondrian`` (Mondrian on binary columns,
intersection) and ``rr`` (randomized response, ε edge- or node-DP; not a k-anonymity method,
so there is nothing to verify from the data — DP is a property of the mechanism).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from anonymatch.core.errors import InputError, VerificationError
from anonymatch.core.manifest import new_manifest, rename_keys
from anonymatch.core.params import check_level_fits
from anonymatch.core.runner import EXECUTORS, default_workers, run_partitions
from anonymatch.sparse.methods.mondrian import mondrian_labels
from anonymatch.sparse.methods.randomized_response import (
    LEVELS,
    flip_probability,
    randomized_response,
)
from anonymatch.sparse.methods.smooth import cluster, vote
from anonymatch.sparse.metrics import edge_metrics
from anonymatch.sparse.order import minhash_chunks
from anonymatch.sparse.verify import SparseVerificationReport, verify_sparse

SPARSE_METHODS: tuple[str, ...] = ("smooth", "nonsmooth", "mondrian", "rr")
DEFAULT_CHUNK_ROWS = 100_000


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


def sparse_model(method: str) -> str:
    """The manifest's ``guarantee.model`` of a sparse method."""
    if method == "rr":
        return "randomized-response"
    return "smooth-k-anonymity" if method == "smooth" else "k-anonymity"


def validate(
    n: int,
    k: int,
    method: str,
    epsilon: float | None,
    dp: str,
    beta: float,
    runs: int,
    chunk_rows: int,
) -> None:
    """Parameter checks shared by the API and the CLI; InputError on the first bad one."""
    if method not in SPARSE_METHODS:
        raise InputError(f"unknown method {method!r} (expected one of {SPARSE_METHODS})")
    if method == "rr":
        if epsilon is None:
            raise InputError("method rr needs `epsilon`")
        flip_probability(epsilon, dp)
    elif epsilon is not None and not (epsilon > 0 and math.isfinite(epsilon)):
        raise InputError(f"epsilon must be a positive number, got {epsilon}")
    if dp not in LEVELS:
        raise InputError(f"unknown DP level {dp!r} (expected one of {LEVELS})")
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if not beta > 1:
        raise InputError(f"beta must be greater than 1, got {beta}")
    if runs < 1:
        raise InputError(f"runs must be at least 1, got {runs}")
    if chunk_rows < 2 * k:
        raise InputError(f"chunk rows must be at least 2k = {2 * k}, got {chunk_rows}")
    if n >= 0 and method != "rr":
        check_level_fits(k, n)


def anonymize_sparse(
    x: sp.spmatrix | sp.sparray,
    k: int,
    method: str = "smooth",
    *,
    beta: float = 2.0,
    runs: int = 10,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    executor: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    seed: int | None = None,
    epsilon: float | None = None,
    dp: str = "edge",
    refine: bool = True,
    progress: bool = False,
) -> SparseRelease:
    """Anonymize a binary matrix and verify the result (VerificationError if it fails).

    ``executor`` for the chunks: None = inline for one chunk, else a Dask cluster (a local one
    unless ``scheduler``); or ``threads``/``processes``/``dask``/``inline``. Results depend on
    ``seed`` only (OS entropy when None), not on the executor. ``refine``: the min-hash order
    with the support refinement key (default) or the paper's plain order (``sparse.order``)."""
    x = sp.csr_array(x, dtype=np.int8, copy=True)
    x.sum_duplicates()
    x.eliminate_zeros()
    x.data[:] = 1
    x.sort_indices()
    n, m = x.shape
    validate(n, k, method, epsilon, dp, beta, runs, chunk_rows)
    if executor is not None and executor not in EXECUTORS:
        raise InputError(f"unknown executor {executor!r} (expected one of {EXECUTORS})")
    root = np.random.SeedSequence(seed)
    lsh_seed, work_seed = root.spawn(2)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    parameters: dict[str, Any] = {"columns": m}
    guarantee: dict[str, Any] = {"model": sparse_model(method), "k": k}
    extra: dict[str, Any] = {}
    labels: np.ndarray | None = None
    verification: SparseVerificationReport | None = None
    if method == "rr":
        p = flip_probability(float(epsilon), dp, m)  # type: ignore[arg-type]
        published = randomized_response(x, float(epsilon), dp, seed=work_seed)  # type: ignore[arg-type]
        seconds["anonymize"] = time.perf_counter() - started
        guarantee = {
            "model": sparse_model(method),
            "epsilon": epsilon,
            "dp_level": dp,
            "flip_probability": p,
        }
        checked: dict[str, Any] = {
            "passed": None,
            "reason": "randomized response is ε-DP by construction; nothing to check from data",
        }
    else:
        if method == "mondrian":
            labels = mondrian_labels(x, k)
            parameters["chunks"] = 1
            rule_vote, rule_check = "all", "nonsmooth"
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
                executor=executor,  # type: ignore[arg-type]
                scheduler=scheduler,
                workers=workers,
                seed=work_seed,
                progress=progress,
                desc=f"{method} chunks",
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
            rule_vote = "majority" if method == "smooth" else "all"
            rule_check = "smooth" if method == "smooth" else "nonsmooth"
        seconds["cluster"] = time.perf_counter() - started
        t = time.perf_counter()
        published = vote(x, labels, rule_vote)
        seconds["vote"] = time.perf_counter() - t
        t = time.perf_counter()
        verification = verify_sparse(published, x, k, rule_check)
        seconds["verify"] = time.perf_counter() - t
        extra["clusters"] = int(labels.max()) + 1 if n else 0
        checked = rename_keys(verification.to_dict(), {"rows": "records"})
        if not verification.passed:
            raise VerificationError(f"the release failed verification: {verification.reason}")
    report = new_manifest(
        data_kind="sparse",
        method=method,
        parameters=parameters,
        guarantee=guarantee,
        verification=checked,
        loss={**edge_metrics(x, published).to_dict(), **extra},
        seconds={**seconds, "wall": time.perf_counter() - started},
        randomness_seeded=seed is not None,
        input_records=n,
        output_records=n,
    )
    return SparseRelease(published, labels, verification, report)
