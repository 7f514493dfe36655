"""The relational-transaction pipeline: encode → joint order and partitions → build graph →
privacy step → recode both parts → verify from the text → manifest.

The table part reuses the tables' encoding, recoding and cell grammar
(``anonymatch.tables.columns.schema``, ``tables.recode``, ``tables.io.cells``), the set part the
sets' bit voting (``anonymatch.sets.methods.nonreciprocal.bit_vote``), the privacy step is the
one of every kind (``anonymatch.core.classes.privacy_step``) and the release is verified by the
independent verifier (``anonymatch.relational.verify``) on what is written.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.classes import privacy_step
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.core.runner import Placement, run_partitions
from anonymatch.relational.io import People, RelationalRelease
from anonymatch.relational.job import RelationalJob, check_data
from anonymatch.relational.methods.joint import classes, cover_vote, freeform
from anonymatch.relational.metrics import mean_uncertain
from anonymatch.relational.order import joint_partitions
from anonymatch.relational.verify import RelationalVerificationReport, verify_relational
from anonymatch.sets.io import SetRelease
from anonymatch.sets.methods.nonreciprocal import bit_vote
from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, EncodedQI, MissingCodes, Schema
from anonymatch.tables.io.cells import format_cells, parse_cells
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.models.levels import KAnonymity
from anonymatch.tables.pipeline import prepare
from anonymatch.tables.recode import recode

if TYPE_CHECKING:
    from anonymatch.core.criteria import Verdict
    from anonymatch.tables.models.widening import Widening
    from anonymatch.tables.risk.population import PopulationInput, PopulationRisk
from anonymatch.tables.risk.checks import ReleaseView, release_checks


@dataclass
class RelationalAnonymization:
    """A verified relational-transaction release and how it was made.

    ``release``: the RelationalRelease (publication order); ``report``: the JSON-able manifest;
    ``graph`` (original person → published position), ``assignment`` (``assignment[i]`` = the
    published position of person i's true record) and ``qi`` (the encoded QIs): the hidden
    truth, for experiments only."""

    release: RelationalRelease
    graph: GeneralizationGraph
    assignment: np.ndarray
    qi: EncodedQI
    verification: RelationalVerificationReport
    report: dict[str, object] = field(default_factory=dict)


def encode(people: People, schema: Schema, na: MissingCodes | None = None) -> EncodedQI:
    """The people's QIs encoded by the tables' ``prepare`` (the id column and the identifiers
    never published; ``na`` the missing-value tokens and per-column codes, default the
    tables')."""
    ids = tuple(dict.fromkeys((*schema.identifiers, people.id_column)))
    full = dataclasses.replace(schema, identifiers=ids)
    _, enc, _ = prepare(people.table, full, DEFAULT_NA_VALUES if na is None else na)
    return enc


def build_graph(
    enc: EncodedQI, people: People, job: RelationalJob
) -> tuple[GeneralizationGraph, int]:
    """The generalization graph of the job's method and its number of partitions: freeform on
    the joint cost per partition of the joint order (threads), or the baseline's classes; with
    sensitive models, classes that satisfy them (the tables' ``diverse_clusters``, as for the
    tables' freeform methods). Memory O(P²) per running partition of P people."""
    method = job.method
    items = people.items.matrix
    if job.models:
        from anonymatch.tables.methods.diverse import diverse_clusters
        from anonymatch.tables.pipeline import sensitive_target

        target = sensitive_target(people.table, job.models)
        assert target is not None
        return diverse_clusters(enc, job.k, target, job.size_for(enc.n))
    if method.classes:
        return classes(enc, job.k), 1
    parts = joint_partitions(enc, items, job.size_for(enc.n))
    x = sp.csr_array(items)
    work: Callable[[np.ndarray], GeneralizationGraph] = lambda ids: freeform(  # noqa: E731
        enc.take(ids), sp.csr_array(x[ids]), job.k, method.step, job.item_weight
    )
    graphs = run_partitions(
        work,
        parts,
        placement=Placement("threads", workers=job.workers),
        desc=f"{method.name} partitions",
    )
    return GeneralizationGraph.block_diagonal(list(zip(parts, graphs, strict=True)), enc.n), len(
        parts
    )


def _published_table(
    people: People,
    enc: EncodedQI,
    cells_text: dict[str, list[str]],
    source: np.ndarray,
    identifiers: tuple[str, ...],
) -> pd.DataFrame:
    """QI cells as text, then the other columns (not the id, not the ``identifiers``) of the
    true preimage ``source[p]`` of published position p."""
    columns: dict[str, object] = {}
    for name in enc.names:
        columns[name] = cells_text[name]
    never = {people.id_column, *identifiers}
    for name in people.table.columns:
        if name in enc.names or name in never:
            continue
        columns[name] = people.table[name].to_numpy()[source]
    return pd.DataFrame(columns)


def run_job(people: People, job: RelationalJob) -> RelationalAnonymization:
    """Publish ``people`` under freeform k-anonymity over the joint compatibility graph,
    verified.

    Raises InfeasibleError (k larger than the number of people), InputError (bad columns) and
    VerificationError (never expected: the release failed the independent verifier; nothing
    is returned).

    Complexity: the method's (Hungarian O(k·P³) per partition of P people) plus O(n·k) for the
    privacy step and the recoding and the verification's.
    """
    started = time.perf_counter()
    check_data(job, people)
    enc = encode(people, job.schema, job.na)
    n, k = enc.n, job.k
    rng = np.random.default_rng(job.seed)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    graph, n_parts = build_graph(enc, people, job)
    seconds["build"] = time.perf_counter() - clock
    clock = time.perf_counter()
    assigned = privacy_step(graph, rng, job.workers)
    truth_of = np.empty(n, np.int64)
    truth_of[assigned] = np.arange(n)
    cells = recode(graph, enc)
    if job.method.classes or graph.classes is not None:
        base, unc, t = cover_vote(people.items.matrix, graph)
    else:
        base, unc, t = bit_vote(people.items.matrix, graph)
    shuffle = rng.permutation(n)  # published position p shows record shuffle[p]
    position = np.empty(n, np.int64)
    position[shuffle] = np.arange(n)
    shown = cells.take(shuffle)
    table = _published_table(
        people, enc, format_cells(shown, enc), truth_of[shuffle], job.schema.identifiers
    )
    items = people.items
    sets = SetRelease(
        sp.csr_array(base[shuffle]),
        sp.csr_array(unc[shuffle]),
        t[shuffle],
        None,
        list(items.items),
        items.integer_items,
    )
    release = RelationalRelease(table, sets, enc.names)
    published_graph = graph.with_published_order(position)
    seconds["publish"] = time.perf_counter() - clock
    clock = time.perf_counter()
    check = verify_relational(
        release, people, enc, k, blocks=published_graph.blocks(), models=job.models
    )
    seconds["verify"] = time.perf_counter() - clock
    widening, view, source = None, None, None
    if job.criteria:  # widen the QI cells the population criteria refuse; verified again
        refuse(check.passed, check.reason)
        table, widened, view, source = _widen(people, release, job)
        widening = widened.to_dict()
        release = RelationalRelease(table, sets, enc.names)
        shown = parse_cells(table, enc)
        check = verify_relational(release, people, enc, k, models=job.models)
    loss = information_loss(shown, enc)
    produced = Produced(
        kind="relational",
        method=job.method.name,
        parameters={
            **job.schema.roles(),
            "id_column": people.id_column,
            "item_column": people.item_column,
            "item_weight": job.item_weight,
            "partition_size": None if job.method.classes else job.size_for(n),
            "partitions": n_parts,
        },
        guarantee={**KAnonymity(k).describe(), "over": "joint compatibility"},
        verification=check.to_dict(),
        loss={
            **loss.to_dict(),
            "mean_uncertain": mean_uncertain(sets),
            "mean_max_errors": float(np.mean(t)) if n else 0.0,
        },
        seconds={**seconds, "wall": time.perf_counter() - started},
        seeded=job.seed is not None,
        records_in=n,
        records_out=n,
        input_extra={
            "items": items.n_items,
            "item_rows": int(items.matrix.nnz),
            "people_without_items": int(np.sum(np.diff(items.matrix.indptr) == 0)),
            "duplicates_removed": people.duplicates_removed,
        },
        models=job.sensitive_models.describe(),
    )
    report = publish(  # refuses a release that failed verification
        produced,
        criteria=job.criteria,
        view=view,
        source=source,
        widening=widening,
        checks=release_checks(
            "relational", "memory", (*job.schema.identifiers, people.id_column), job.strict
        ),
        shown=ReleaseView.of(people.table, enc, shown, table, job.schema),  # the tables' checks
    )
    return RelationalAnonymization(release, published_graph, position[assigned], enc, check, report)


def _widen(
    people: People, release: RelationalRelease, job: RelationalJob
) -> tuple[pd.DataFrame, Widening, PopulationRisk, dict[str, object]]:
    """The release's table part widened until the job's population criteria hold against its
    population of people's QIs (``tables.models.widening``: only QI cells widen, so the joint
    compatibility only grows). O(that of ``apply_population``)."""
    from anonymatch.tables.models.widening import apply_population

    assert job.population is not None
    return apply_population(
        people.table, release.table, job.criteria, job.population, _population_input(job)
    )


def check_criteria(
    people: People, release: RelationalRelease, job: RelationalJob
) -> dict[str, Verdict]:
    """The verdict of each of the job's population criteria on ``release``, from its QI cells,
    the people and the population alone (``tables.risk.population``): what ``verify-rt`` and
    ``report`` re-check. O(that of ``population_risk``)."""
    if not job.criteria:
        return {}
    from anonymatch.tables.io import read_table
    from anonymatch.tables.risk.population import population_risk

    source = job.population
    assert source is not None  # the job asks for it with its criteria
    table = source if isinstance(source, pd.DataFrame) else read_table(source)
    view = population_risk(people.table, release.table, table, _population_input(job))
    return {c.name: c.check(view) for c in job.criteria}


def _population_input(job: RelationalJob) -> PopulationInput:
    """How the population criteria read the people's QIs (and the population's)."""
    from anonymatch.tables.risk.population import PopulationInput

    schema = job.schema
    numeric = tuple(a for a in schema.qi if a in schema.numeric)
    return PopulationInput(schema.qi, numeric, schema.types, job.na, False)
