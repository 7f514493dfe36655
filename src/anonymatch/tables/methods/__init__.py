"""Method registry: every way of publishing a table, with what each method can do.

A builder takes the encoded QIs of the records it must anonymize, k and the build options, and
returns a generalization graph over those records (published record j generalizes original j).
``partitioned`` builders run once per partition of the lexicographic order (Doka §8.1); the
others see the whole table. The suppression methods with per-record levels (Choromanski et al.)
are registered too; they run on the adaptive path (``anonymatch.tables.models.adaptive``).

Each method declares its capabilities (:class:`Method`, a kind of
:class:`anonymatch.core.registry.Method`); the command line's choices, the job file's
enumeration, the typed job's checks (``anonymatch.tables.job``) and the tests'
parametrizations are derived from the registry with :func:`names`, never listed again.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from anonymatch.core import registry as core
from anonymatch.core.errors import InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import param
from anonymatch.core.runner import Placement, run_partitions, split_even
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.order import lexicographic_order

if TYPE_CHECKING:
    from anonymatch.tables.models.sensitive import SensitiveTarget


@dataclass(frozen=True)
class BuildOptions:
    """Options some builders use. ``time_limit`` bounds one exact MIP solve, in seconds;
    ``sensitive`` (the sensitive values and their models) makes the builder publish classes
    that satisfy the models (``methods.diverse``); ``rings`` (the job's ``structure``
    ``rings``) lets the partitioned methods publish a sensitive ring instead of a partition's
    classes where it costs less GCP (``methods.circulant``). ``blocks`` (the plan's
    ``Plan.blocks``) publishes blocks instead of running the rounds (``methods.blocks``: in
    memory the whole table, on the streamed path each partition). ``tick`` (optional) is
    called with 1 after each assignment round of the methods that run rounds
    (``Method.rounds``): the progress bar of :func:`build_graph`, in rounds. ``deadline``
    (optional, a ``time.perf_counter()`` value) is when the run's time limit stops those
    rounds: a
    partition not finished by then raises :class:`TimeUp`, and :func:`build_graph` publishes
    it as blocks (``methods.blocks``)."""

    time_limit: float = 60.0
    sensitive: SensitiveTarget | None = None
    rings: bool = False
    blocks: bool = False
    tick: Callable[[int], object] | None = field(default=None, compare=False)
    deadline: float | None = None


class TimeUp(Exception):
    """A partition's assignment rounds reached ``BuildOptions.deadline`` (the run's time
    limit) before they were done; caught by :func:`build_graph`."""


Builder = Callable[[EncodedQI, int, BuildOptions], GeneralizationGraph]


@dataclass(frozen=True, kw_only=True)
class Method(core.Method):
    """A registered table method: the capabilities every kind shares and the tables' own.

    Attributes
    ----------
    name, summary, sensitive, streamable, verified
        As :class:`anonymatch.core.registry.Method` (``sensitive``: ℓ-diversity and
        t-closeness on sensitive columns; ``streamable``: the streamed, partitioned path for
        inputs larger than memory).
    partitioned : bool
        Runs once per partition of the lexicographic order (``partition_size`` applies).
    build : Builder or None
        The graph builder (None for the suppression methods, run by ``tables.adaptive``).
    regular : bool
        The graph is k-regular (otherwise every vertex has equal in- and out-degree ≥ k, as in
        Mondrian's bicliques).
    partition_size : callable
        ``partition_size(k)``: the default partition size of a partitioned method (before the
        floor of 2k that ``anonymatch.tables.job.effective_partition_size`` applies).
    missing : bool
        Accepts missing QI values (published as ``*``).
    levels : bool
        Per-record levels (``k_column``) and suppression: the adaptive path.
    typed : bool
        Supports ordinal and date QIs and hierarchies.
    rounds : bool
        Builds a partition in k − 1 assignment rounds (the freeform methods): progress is shown
        in rounds, and :func:`estimated_seconds` knows its cost.
    """

    build: Builder | None
    regular: bool
    partition_size: Callable[[int], int] = field(default=lambda k: 0)
    missing: bool = True
    levels: bool = False
    typed: bool = True
    rounds: bool = False

    def partition_size_for(self, k: int, given: int | None = None) -> int | None:
        """The partition size a run of this method uses: the one formula of every path.

        Parameters
        ----------
        k : int
            The level (k, or max δᵢ on the adaptive path).
        given : int, optional
            The size the user asked for (``partition_size``).

        Returns
        -------
        int or None
            ``given``, else ``max(self.partition_size(k), 2k)``; None for a method that sees the
            whole table.

        Raises
        ------
        InputError
            ``given`` for a method that is not partitioned, or below 2k (a partition must hold
            two k-anonymous groups' worth of records). O(1).
        """
        if not self.partitioned:
            if given is not None:
                raise InputError(f"method {self.name!r} does not use {param('partition_size')}")
            return None
        if given is None:
            return max(self.partition_size(k), 2 * k)
        if given < 2 * k:
            raise InputError(
                f"{param('partition_size')} must be at least 2k = {2 * k}, got {given}"
            )
        return given


def freeform_partition_size(k: int) -> int:
    """Default partition size of the freeform heuristics: 20·k records, at least 300 and at most
    1000. Chosen with benchmarks/partition_size.py on Adult (docs/results.md): P = 300 gives
    most of the utility at k = 10 (larger P gains < 0.2 points of GCP for 2–5× the time), while
    at k = 50 partitions of 6k records cost 1 point of GCP that P = 1000 recovers. The cost per
    partition grows as P² (weights) to P³ (Hungarian), so P is capped."""
    return min(max(300, 20 * k), 1000)


ROUND_SECONDS = 1.2e-8
"""CPU seconds of one freeform round per squared partition size P², times max(1, P/1000): the
weights and the assignment are O(P²) per round, and the assignment's augmenting paths grow
with P. Fitted on Adult (2 shared cores, hungarian, whole partitions: P = 604, k = 300: 3.7 ms
a round; P = 1006, k = 50 … 400: 10–13 ms; P = 2011, k = 100: 92 ms in mid-run; docs/results.md,
speed at large k)."""

EDGE_SECONDS = 3.0e-6
"""CPU seconds per edge of a k-regular graph for what follows the build (the closed walk of the
privacy step, recoding, the verifier's k-factor), measured with ``ROUND_SECONDS``."""


TWO_STAGE_COST = 0.45
"""CPU of hungarian's two-stage rounds (``freeform.TWO_STAGE_MIN_K``) relative to its exact
ones, which ``ROUND_SECONDS`` prices: 0.49 at k = 50 and 0.43 at k = 100 on Adult
(benchmarks/rounds_variants.py)."""


def estimated_seconds(method: Method, rows: int, k: int, size: int | None, workers: int) -> float:
    """Wall seconds a run of ``method`` on ``rows`` = n records at level k with partitions of
    ``size`` = P is expected to take on ``workers`` cores, for the methods that run rounds
    (``Method.rounds``; 0 for the others): (n/P)·(k − 1)·ROUND_SECONDS·P²·max(1, P/1000) for
    the rounds plus EDGE_SECONDS·n·k, divided among the workers. A figure for a warning, good
    to a factor of about 2 (the machine's load and the data change it: ties in the weights
    make rounds cheaper). O(1)."""
    if not method.rounds or size is None or rows == 0:
        return 0.0
    size = min(size, rows)
    cpu = rounds_seconds(method, rows, k, size) + EDGE_SECONDS * rows * k
    return cpu / max(1, min(workers, rows // size))


BLOCKS_ABOVE = 4e-3
"""CPU seconds a record above which the plan publishes blocks (``methods.blocks``) instead of
the assignment rounds (:func:`too_long_for_rounds`): 2 minutes of CPU, a minute on two cores,
for UCI Adult's 30,162 records. Per record, so that the choice depends on k and the partition
size, not on the size of the table: the rounds cost O(k·P) a record, the blocks O(k·d)."""


def too_long_for_rounds(method: Method, rows: int, k: int, size: int | None) -> bool:
    """Whether the rounds of ``method`` and what follows them are estimated to cost more than
    ``BLOCKS_ABOVE`` CPU seconds a record (:func:`rounds_seconds` plus
    :func:`after_build_seconds`, over ``rows``): the plan then publishes blocks. False for a
    method without rounds. With the default partitions this is k ≥ 477 (P = 1,000 up to
    k = 500, two-stage rounds). O(1)."""
    if not method.rounds or size is None or rows == 0:
        return False
    cpu = rounds_seconds(method, rows, k, size) + after_build_seconds(rows, k)
    return cpu > BLOCKS_ABOVE * rows


def after_build_seconds(rows: int, k: int) -> float:
    """Seconds expected for what follows the build of a k-regular graph on ``rows`` records
    (the second term of :func:`estimated_seconds`, EDGE_SECONDS·n·k): what a time limit keeps
    back from the rounds (``tables.pipeline.anonymize``). O(1)."""
    return EDGE_SECONDS * rows * k


def rounds_seconds(method: Method, rows: int, k: int, size: int | None) -> float:
    """CPU seconds of the assignment rounds alone (the first term of
    :func:`estimated_seconds`): (n/P)·(k − 1)·ROUND_SECONDS·P²·max(1, P/1000), times
    ``TWO_STAGE_COST`` for two-stage rounds; 0 for a method without rounds. The plan's cost
    model (``tables.job.plan``) compares it with its budget. O(1)."""
    if not method.rounds or size is None or rows == 0:
        return 0.0
    from anonymatch.tables.methods.freeform import round_assignment

    size = min(size, rows)
    cost = TWO_STAGE_COST if round_assignment(method.name, k) == "two-stage" else 1.0
    per_round = ROUND_SECONDS * size * size * max(1.0, size / 1000) * cost
    return rows / size * max(k - 1, 0) * per_round


ADAPTIVE_PARTITION = 500
"""Records per part of the adaptive (b-matching) path, chosen by benchmark
(benchmarks/adaptive_speed.py, docs/results.md)."""


def adaptive_partition_size(k: int) -> int:
    """Default part size of the suppression methods (before the 2·max δ floor)."""
    return ADAPTIVE_PARTITION


@functools.cache
def registry() -> dict[str, Method]:
    """All methods by name, built once (the same ``Method`` values for every caller, so two jobs
    naming one method compare equal). Each method's module is imported on its first build, so
    importing the package, or running one method, stays cheap: ``exact`` alone pulls in scipy's
    MILP solver. Do not mutate the returned mapping."""
    exact = _Lazy("exact")
    freeform = _Lazy("freeform")
    mondrian = _Lazy("mondrian")
    ring = _Lazy("ring")

    return core.registry_of(
        *(
            Method(
                name=name,
                summary=summary,
                build=getattr(freeform, name),
                partitioned=True,
                regular=True,
                partition_size=freeform_partition_size,
                sensitive=True,
                streamable=True,
                rounds=True,
            )
            for name, summary in (
                (
                    "hungarian",
                    "k−1 minimum-cost assignments on GCP-increase weights (Doka §7;"
                    " two-stage from k = 50)",
                ),
                (
                    "sortgreedy",
                    "greedy assignments over edges sorted by weight (Doka §6, Algorithm 2)",
                ),
                (
                    "greedy",
                    "greedy assignments in lexicographic vertex order (Doka §5, Algorithm 1)",
                ),
            )
        ),
        # HiGHS proves optimality within seconds up to ~8 records and hits a 60 s limit from 10
        # records on (k ≥ 3), hence partitions of max(8, 2k) records by default.
        Method(
            name="mip",
            summary="exact mixed-integer program of Doka §4 (HiGHS), small partitions only",
            build=exact.mip,
            partitioned=True,
            regular=True,
            partition_size=lambda k: max(8, 2 * k),
            sensitive=True,
            missing=False,
            streamable=True,
        ),
        Method(
            name="mondrian",
            summary="strict multidimensional Mondrian (LeFevre et al. 2006), baseline",
            build=mondrian.mondrian,
            regular=False,
            sensitive=True,
        ),
        Method(
            name="ring",
            summary="NH ring generalization over partitions of k…2k−1 records (Wong et al. 2010)",
            build=ring.ring,
            regular=True,
        ),
        *(
            Method(
                name=name,
                summary=summary,
                build=None,
                partitioned=True,
                regular=False,
                partition_size=adaptive_partition_size,
                levels=True,
                typed=False,
            )
            for name, summary in (
                ("bmatching", "per-record levels by variational b-matching (Choromanski §4)"),
                (
                    "bmatching-symmetric",
                    "symmetric b-matching by an integer program (Choromanski Algorithm 2)",
                ),
                ("agglomerative", "k-anonymity with suppression by agglomeration, baseline"),
            )
        ),
    )


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


def names(
    *,
    partitioned: bool | None = None,
    sensitive: bool | None = None,
    streamable: bool | None = None,
    verified: bool | None = None,
    regular: bool | None = None,
    missing: bool | None = None,
    levels: bool | None = None,
    typed: bool | None = None,
) -> tuple[str, ...]:
    """Names of the table methods with the given capabilities (None: any), in registry order
    (``names(levels=False)``: the generalization methods; ``names(streamable=True)``: those
    of the streamed path)."""
    return tuple(
        m.name
        for m in core.matching(
            registry(),
            partitioned=partitioned,
            sensitive=sensitive,
            streamable=streamable,
            verified=verified,
        )
        if core.fits(m.regular, regular)
        and core.fits(m.missing, missing)
        and core.fits(m.levels, levels)
        and core.fits(m.typed, typed)
    )


# Up to this many records the b-matching sees every pair (Algorithm 1: a min-cost flow on n² arcs
# takes ~0.1 s at n = 400). Algorithm 2's integer program is far costlier per pair (bupa, n = 345,
# δ = 10: 73 s on all pairs vs 16 s on 40 neighbours, with 1 % fewer stars on the neighbours).
ALL_PAIRS_MAX_N = 400
SYMMETRIC_ALL_PAIRS_MAX_N = 100
# The ε sweep of the variational b-matching (Choromanski et al. §5), here rather than in
# ``methods.bmatching`` so that reading a job's defaults does not import OR-Tools and HiGHS.
DEFAULT_EPSILONS = tuple(2.0**-e for e in range(1, 11))


def partitions(qi: EncodedQI, size: int) -> list[np.ndarray]:
    """Record ids of each partition: segments of the lexicographic order of about ``size``
    records, none shorter than ``size`` (the tail is spread over the others). O(n·d log n)."""
    order = lexicographic_order(qi)
    return [order[part] for part in split_even(qi.n, size)]


class Built(NamedTuple):
    """What :func:`build_graph` made: the graph, its number of partitions, and how many of
    them were published as blocks (``methods.blocks``) instead of the method's rounds — the
    whole table when the plan chose blocks (``BuildOptions.blocks``: one partition), or the
    partitions past the run's time limit."""

    graph: GeneralizationGraph
    partitions: int
    blocks: int = 0


def build_graph(
    qi: EncodedQI,
    k: int,
    method: Method,
    size: int | None,
    options: BuildOptions,
    workers: int | None = None,
    progress: bool = False,
) -> Built:
    """Run ``method`` on the whole table or on its partitions. ``size`` is the partition size
    of the run's plan (:meth:`Method.partition_size_for`; None for a method that sees the whole
    table). Memory: O(P²) per running partition of P records (never n²).

    With ``options.sensitive`` the methods with the ``sensitive`` capability form classes that
    satisfy the models: the freeform methods by ``diverse_clusters`` on partitions of the same
    size, Mondrian by cutting only where both sides satisfy them (the typed job refuses the
    models for the other methods).

    ``options.blocks`` (the plan's choice at large k, ``tables.job.plan``) publishes the whole
    table as consecutive classes of k … 2k − 1 records cut at the least GCP along its serpentine
    order (``methods.blocks``, O(n·k·d)) instead of running rounds. With
    ``options.deadline`` (the run's time limit), a partition whose rounds are not done by
    then is published as the blocks of its own records: each partition's graph stays
    k-regular or a union of bicliques of ≥ k records, and the release is verified as any
    other. When every partition is past the limit (or the limit is past before the first
    round) the whole table is cut instead, which loses less than each partition's own cut
    (no partition boundaries: UCI Adult, k = 1,000: 43.6 % against 45.9 % GCP).
    ``Built.blocks`` counts the partitions published as blocks."""
    if options.sensitive is not None and method.partitioned:
        from anonymatch.tables.methods.diverse import diverse_clusters

        graph, parts_made = diverse_clusters(qi, k, options.sensitive, size or qi.n)
        return Built(graph, parts_made)
    assert method.build is not None, f"{method.name} runs on the adaptive path"
    from anonymatch.tables.methods.blocks import block_labels

    def whole_table() -> GeneralizationGraph:
        return GeneralizationGraph.from_classes(block_labels(qi, k, progress, workers))

    if options.blocks:  # no rounds: the whole table cut into classes at once
        return Built(whole_table(), 1, 1)
    build = method.build
    if size is None:
        return Built(build(qi, k, options), 1)
    parts = partitions(qi, size)
    if options.deadline is not None and time.perf_counter() >= options.deadline:
        return Built(whole_table(), len(parts), len(parts))  # past the limit before a round
    rounds = None
    if progress and method.rounds and k > 1:  # a bar in rounds: it moves within a partition
        from tqdm import tqdm

        rounds = tqdm(
            total=len(parts) * (k - 1), desc=f"{method.name} rounds", unit="round", delay=1.0,
            leave=False,
        )  # fmt: skip
        options = dataclasses.replace(options, tick=rounds.update)
    fallen: set[int] = set()  # first records of the partitions past the limit (atomic adds)

    def work(ids: np.ndarray) -> GeneralizationGraph:
        sub = qi.take(ids)
        try:
            return build(sub, k, options)
        except TimeUp:  # the time limit: this partition as blocks
            pass
        fallen.add(int(ids[0]))
        return GeneralizationGraph.from_classes(block_labels(sub, k))

    try:
        graphs = run_partitions(
            work,
            parts,
            placement=Placement("threads", workers=workers),
            progress=progress and rounds is None,
            desc=f"{method.name} partitions",
        )
    finally:
        if rounds is not None:
            rounds.close()
    if len(fallen) == len(parts):  # every partition past the limit: the whole table's cut
        return Built(whole_table(), len(parts), len(parts))
    graph = GeneralizationGraph.block_diagonal(list(zip(parts, graphs, strict=True)), qi.n)
    return Built(graph, len(parts), len(fallen))
