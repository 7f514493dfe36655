"""Method registry: every way of building a generalization graph for a table.

A builder takes the encoded QIs of the records it must anonymize, k and the build options, and
returns a generalization graph over those records (published record j generalizes original j).
``partitioned`` builders run once per partition of the lexicographic order (Doka §8.1); the
others see the whole table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..graph import GeneralizationGraph
from ..schema import EncodedQI


@dataclass(frozen=True)
class BuildOptions:
    """Options some builders use. ``time_limit`` bounds one exact MIP solve, in seconds."""

    time_limit: float = 60.0


Builder = Callable[[EncodedQI, int, BuildOptions], GeneralizationGraph]


@dataclass(frozen=True)
class Method:
    """A registered method. ``regular``: the graph is k-regular (otherwise every vertex has equal
    in- and out-degree ≥ k, as in Mondrian's bicliques). ``default_partition_size`` applies to
    partitioned methods; it was chosen with benchmarks/partition_size.py (docs/results.md)."""

    name: str
    build: Builder
    partitioned: bool
    regular: bool
    default_partition_size: int | None
    summary: str


def registry() -> dict[str, Method]:
    """All methods by name (imported lazily so that importing the package stays cheap)."""
    from . import exact, freeform, mondrian, ring

    methods = [
        Method(
            "hungarian",
            freeform.hungarian,
            True,
            True,
            300,
            "k−1 exact minimum-cost assignments on GCP-increase weights (Doka §7)",
        ),
        Method(
            "sortgreedy",
            freeform.sortgreedy,
            True,
            True,
            300,
            "greedy assignments over edges sorted by weight (Doka §6, Algorithm 2)",
        ),
        Method(
            "greedy",
            freeform.greedy,
            True,
            True,
            300,
            "greedy assignments in lexicographic vertex order (Doka §5, Algorithm 1)",
        ),
        Method(
            "mip",
            exact.mip,
            True,
            True,
            12,
            "exact mixed-integer program of Doka §4 (HiGHS), small partitions only",
        ),
        Method(
            "mondrian",
            mondrian.mondrian,
            False,
            False,
            None,
            "strict multidimensional Mondrian (LeFevre et al. 2006), baseline",
        ),
        Method(
            "ring",
            ring.ring,
            False,
            True,
            None,
            "NH ring generalization over partitions of k…2k−1 records (Wong et al. 2010)",
        ),
    ]
    return {m.name: m for m in methods}


METHOD_NAMES = ("hungarian", "sortgreedy", "greedy", "mip", "mondrian", "ring")
