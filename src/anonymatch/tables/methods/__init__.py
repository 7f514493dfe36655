"""Method registry: every way of building a generalization graph for a table.

A builder takes the encoded QIs of the records it must anonymize, k and the build options, and
returns a generalization graph over those records (published record j generalizes original j).
``partitioned`` builders run once per partition of the lexicographic order (Doka §8.1); the
others see the whole table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from anonymatch.core.errors import InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.runner import run_partitions, split_even
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.order import lexicographic_order

if TYPE_CHECKING:
    from anonymatch.tables.models.sensitive import SensitiveTarget


@dataclass(frozen=True)
class BuildOptions:
    """Options some builders use. ``time_limit`` bounds one exact MIP solve, in seconds;
    ``sensitive`` (the sensitive values and their models) makes the builder publish classes
    that satisfy the models (``methods.diverse``)."""

    time_limit: float = 60.0
    sensitive: SensitiveTarget | None = None


Builder = Callable[[EncodedQI, int, BuildOptions], GeneralizationGraph]


@dataclass(frozen=True)
class Method:
    """A registered method. ``regular``: the graph is k-regular (otherwise every vertex has equal
    in- and out-degree ≥ k, as in Mondrian's bicliques). ``partition_size(k)`` is the default
    partition size of a partitioned method."""

    name: str
    build: Builder
    partitioned: bool
    regular: bool
    summary: str
    partition_size: Callable[[int], int] = field(default=lambda k: 0)


def freeform_partition_size(k: int) -> int:
    """Default partition size of the freeform heuristics: 20·k records, at least 300 and at most
    1000. Chosen with benchmarks/partition_size.py on Adult (docs/results.md): P = 300 gives
    most of the utility at k = 10 (larger P gains < 0.2 points of GCP for 2–5× the time), while
    at k = 50 partitions of 6k records cost 1 point of GCP that P = 1000 recovers. The cost per
    partition grows as P² (weights) to P³ (Hungarian), so P is capped."""
    return min(max(300, 20 * k), 1000)


def registry() -> dict[str, Method]:
    """All methods by name (each method's module is imported on its first build, so that
    importing the package, or running one method, stays cheap: ``exact`` alone pulls in
    scipy's MILP solver)."""
    exact = _Lazy("exact")
    freeform = _Lazy("freeform")
    mondrian = _Lazy("mondrian")
    ring = _Lazy("ring")

    methods = [
        Method(
            "hungarian",
            freeform.hungarian,
            True,
            True,
            "k−1 exact minimum-cost assignments on GCP-increase weights (Doka §7)",
            freeform_partition_size,
        ),
        Method(
            "sortgreedy",
            freeform.sortgreedy,
            True,
            True,
            "greedy assignments over edges sorted by weight (Doka §6, Algorithm 2)",
            freeform_partition_size,
        ),
        Method(
            "greedy",
            freeform.greedy,
            True,
            True,
            "greedy assignments in lexicographic vertex order (Doka §5, Algorithm 1)",
            freeform_partition_size,
        ),
        # HiGHS proves optimality within seconds up to ~8 records and hits a 60 s limit from 10
        # records on (k ≥ 3), hence partitions of max(8, 2k) records by default.
        Method(
            "mip",
            exact.mip,
            True,
            True,
            "exact mixed-integer program of Doka §4 (HiGHS), small partitions only",
            lambda k: max(8, 2 * k),
        ),
        Method(
            "mondrian",
            mondrian.mondrian,
            False,
            False,
            "strict multidimensional Mondrian (LeFevre et al. 2006), baseline",
        ),
        Method(
            "ring",
            ring.ring,
            False,
            True,
            "NH ring generalization over partitions of k…2k−1 records (Wong et al. 2010)",
        ),
    ]
    return {m.name: m for m in methods}


class _Lazy:
    """``_Lazy("freeform").hungarian`` is a builder that imports
    ``anonymatch.tables.methods.freeform`` when first called."""

    def __init__(self, module: str) -> None:
        self.module = module

    def __getattr__(self, name: str) -> Builder:
        module = self.module

        def build(qi: EncodedQI, k: int, options: BuildOptions) -> GeneralizationGraph:
            import importlib

            builder = getattr(importlib.import_module(f"anonymatch.tables.methods.{module}"), name)
            return builder(qi, k, options)

        build.__name__ = build.__qualname__ = name
        return build


METHOD_NAMES = ("hungarian", "sortgreedy", "greedy", "mip", "mondrian", "ring")
# The freeform (nonreciprocal) methods of Doka et al.
FREEFORM_METHODS = ("hungarian", "sortgreedy", "greedy", "mip")
# Suppression methods with per-record levels (Choromanski et al.);
# front: anonymatch.tables.models.adaptive.
SUPPRESSION_METHODS = ("bmatching", "bmatching-symmetric", "agglomerative")
# Up to this many records the b-matching sees every pair (Algorithm 1: a min-cost flow on n² arcs
# takes ~0.1 s at n = 400). Algorithm 2's integer program is far costlier per pair (bupa, n = 345,
# δ = 10: 73 s on all pairs vs 16 s on 40 neighbours, with 1 % fewer stars on the neighbours).
ALL_PAIRS_MAX_N = 400
SYMMETRIC_ALL_PAIRS_MAX_N = 100


def partitions(qi: EncodedQI, size: int) -> list[np.ndarray]:
    """Record ids of each partition: segments of the lexicographic order of about ``size``
    records, none shorter than ``size`` (the tail is spread over the others). O(n·d log n)."""
    order = lexicographic_order(qi)
    return [order[part] for part in split_even(qi.n, size)]


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
    of partitions. Memory: O(P²) per running partition of P records (never n²).

    With ``options.sensitive`` the freeform methods form classes by ``diverse_clusters`` on
    partitions of the same size, and Mondrian cuts only where both sides satisfy the models; the
    other methods do not support sensitive models (InputError)."""
    if options.sensitive is not None:
        from anonymatch.tables.methods.diverse import diverse_clusters

        if method.name in FREEFORM_METHODS:
            size = partition_size or method.partition_size(k) or qi.n
            return diverse_clusters(qi, k, options.sensitive, max(size, 2 * k))
        if method.name != "mondrian":
            raise InputError(
                f"method {method.name!r} does not support --l/--t; use one of: "
                f"{', '.join((*FREEFORM_METHODS, 'mondrian'))}"
            )
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
