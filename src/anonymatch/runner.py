"""Partitioned execution (Doka §8.1): lexicographic order, fixed-size partitions, each
anonymized independently, union of the per-partition graphs.

Each partition's graph is k-regular over its own records, so the union is k-regular over all
records. Partitions run on a thread pool: the heavy kernels (numba with ``nogil``, scipy's
assignment solver, large numpy operations) release the GIL.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from tqdm import tqdm

from .graph import GeneralizationGraph
from .methods import BuildOptions, Method
from .order import lexicographic_order, split_even
from .schema import EncodedQI


def partitions(qi: EncodedQI, size: int) -> list[np.ndarray]:
    """Record ids of each partition: segments of the lexicographic order of about ``size``
    records, none shorter than ``size`` (the tail is spread over the others). O(n·d log n)."""
    order = lexicographic_order(qi)
    return [order[part] for part in split_even(qi.n, size)]


def default_workers() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


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
    bar = tqdm(
        total=len(parts),
        desc=f"{method.name} partitions",
        unit="part",
        disable=not progress,
        delay=1.0,
        leave=False,
    )
    blocks = []
    try:
        with ThreadPoolExecutor(max_workers=workers or default_workers()) as pool:
            for ids, graph in zip(parts, pool.map(work, parts), strict=True):
                blocks.append((ids, graph))
                bar.update()
    finally:
        bar.close()
    return GeneralizationGraph.block_diagonal(blocks, qi.n), len(parts)
