"""Partitioned execution (Doka §8.1; Esfandiari et al. App. D): partitions anonymized
independently, results combined in partition order.

``run_partitions`` is the one runner of the package: it maps a function over jobs on a thread
pool, a process pool or a Dask cluster (a local one by default, or an existing
``dask.distributed`` scheduler), keeps the results in job order and, when given a seed, hands
each job its own child seed (``numpy.random.SeedSequence.spawn``), so that the results depend
on the seed only, never on the executor or the number of workers.

Tables: each partition's graph is k-regular over its own records, so the union is k-regular over
all records. Partitions run on a thread pool by default: the heavy kernels (numba with
``nogil``, scipy's assignment solver, large numpy operations) release the GIL.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

import numpy as np
from tqdm import tqdm

from .errors import InputError
from .graph import GeneralizationGraph
from .methods import BuildOptions, Method
from .order import lexicographic_order, split_even
from .schema import EncodedQI

R = TypeVar("R")
ExecutorName = Literal["inline", "threads", "processes", "dask"]
EXECUTORS: tuple[str, ...] = ("inline", "threads", "processes", "dask")
SeedLike = int | np.random.SeedSequence


def partitions(qi: EncodedQI, size: int) -> list[np.ndarray]:
    """Record ids of each partition: segments of the lexicographic order of about ``size``
    records, none shorter than ``size`` (the tail is spread over the others). O(n·d log n)."""
    order = lexicographic_order(qi)
    return [order[part] for part in split_even(qi.n, size)]


def default_workers() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def child_seeds(seed: SeedLike | None, count: int) -> list[np.random.SeedSequence]:
    """``count`` independent child seeds of ``seed`` (OS entropy if None), one per job."""
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return root.spawn(count)


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` on ``scheduler`` (an address such as ``tcp://host:8786``), or on
    a fresh local cluster of ``workers`` single-threaded worker processes (default: all cores),
    closed on exit."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise InputError("the dask executor needs the 'distributed' package") from exc
    if scheduler:
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot connect to the Dask scheduler {scheduler}: {exc}") from None
        try:
            yield client
        finally:
            client.close()
        return
    cluster = LocalCluster(
        n_workers=workers or default_workers(),
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def run_partitions(
    fn: Callable[..., R],
    jobs: Sequence[Any],
    *,
    executor: ExecutorName = "threads",
    scheduler: str | None = None,
    workers: int | None = None,
    seed: SeedLike | None = None,
    seeded: bool = False,
    progress: bool = False,
    desc: str = "partitions",
) -> list[R]:
    """Apply ``fn`` to every job and return the results in job order.

    With ``seeded`` (or a ``seed``), ``fn`` is called as ``fn(job, child_seed)`` with the job's
    own ``SeedSequence`` spawned from ``seed`` (OS entropy when ``seed`` is None), else as
    ``fn(job)``. ``executor``: ``inline`` (this thread), ``threads`` (GIL-releasing kernels),
    ``processes`` (``fn`` and jobs must be picklable) or ``dask`` (tasks on the cluster at
    ``scheduler``, or on a local cluster of ``workers`` processes). ``scheduler`` implies dask.
    The output does not depend on the executor or on ``workers``."""
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor {executor!r} (expected one of {EXECUTORS})")
    if workers is not None and workers < 1:
        raise InputError(f"workers must be at least 1, got {workers}")
    if scheduler:
        executor = "dask"
    seeded = seeded or seed is not None
    seeds: list[np.random.SeedSequence] = child_seeds(seed, len(jobs)) if seeded else []
    args: list[tuple[Any, ...]] = [
        (job, seeds[i]) if seeded else (job,) for i, job in enumerate(jobs)
    ]
    bar = tqdm(
        total=len(jobs), desc=desc, unit="part", disable=not progress, delay=1.0, leave=False
    )
    results: list[R] = []
    try:
        if executor == "inline" or (len(jobs) <= 1 and executor != "dask"):
            for a in args:
                results.append(fn(*a))
                bar.update()
        elif executor == "dask":
            with dask_client(scheduler, workers) as client:
                data = client.scatter([a[0] for a in args])
                if seeded:
                    futures = client.map(fn, data, seeds, pure=False)
                else:
                    futures = client.map(fn, data, pure=False)
                for future in futures:
                    results.append(future.result())
                    bar.update()
        else:
            pool: Executor
            if executor == "processes":
                pool = ProcessPoolExecutor(max_workers=workers or default_workers())
            else:
                pool = ThreadPoolExecutor(max_workers=workers or default_workers())
            with pool:
                for result in pool.map(fn, *zip(*args, strict=True)):
                    results.append(result)
                    bar.update()
    finally:
        bar.close()
    return results


def build_graph(
    qi: EncodedQI,
    k: int,
    method: Method,
    partition_size: int | None,
    options: BuildOptions,
    workers: int | None = None,
    progress: bool = False,
) -> tuple[GeneralizationGraph, int]:
    """Run ``method`` on the whole table or on its partitions; returns the graph and the number
    of partitions. Memory: O(P²) per running partition of P records (never n²)."""
    if not method.partitioned:
        return method.build(qi, k, options), 1
    size = partition_size or method.partition_size(k) or qi.n
    parts = partitions(qi, size)
    work: Callable[[np.ndarray], GeneralizationGraph] = lambda ids: method.build(  # noqa: E731
        qi.take(ids), k, options
    )
    graphs = run_partitions(
        work,
        parts,
        executor="threads",
        workers=workers,
        progress=progress,
        desc=f"{method.name} partitions",
    )
    blocks = list(zip(parts, graphs, strict=True))
    return GeneralizationGraph.block_diagonal(blocks, qi.n), len(parts)
