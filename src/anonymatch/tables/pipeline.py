"""The table pipeline: validate → encode → build graph → privacy step → recode → verify.

``anonymize`` is the one front for every table method; ``verify_release`` and
``evaluate_release`` check and measure a release from published data and original QIs only.
"""

from __future__ import annotations

import contextvars
import dataclasses
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anonymatch.core.classes import privacy_step
from anonymatch.core.criteria import Verdict
from anonymatch.core.errors import InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import param, require_frame
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.tables.columns.schema import (
    DEFAULT_NA_VALUES,
    EncodedQI,
    NAValues,
    Schema,
    check_missing_codes,
    encode_qi,
    missing_codes,
    missing_qi_mask,
)
from anonymatch.tables.io.cells import format_cells, parse_cells
from anonymatch.tables.io.reuse import reuse_parsed_release
from anonymatch.tables.job import (
    RINGS_WEAKNESS,
    Plan,
    ReleaseCheck,
    TableJob,
    plan,
)
from anonymatch.tables.methods import BuildOptions, after_build_seconds, build_graph
from anonymatch.tables.metrics import InformationLoss, information_loss
from anonymatch.tables.models.certified import SensitiveView, ring_certificate
from anonymatch.tables.models.disclosure import SensitiveModel, SensitiveModels
from anonymatch.tables.models.levels import KAnonymity, LevelView
from anonymatch.tables.models.sensitive import SensitiveTarget, encode_sensitive
from anonymatch.tables.models.suppress import choose_outliers
from anonymatch.tables.recode import GeneralizedQI, recode
from anonymatch.tables.risk.checks import Identifiers, ReleaseView, release_checks
from anonymatch.tables.verify import VerificationReport, verify

if TYPE_CHECKING:
    import pyarrow as pa

    from anonymatch.tables.methods.circulant import RingRelease


@dataclass
class Release:
    """A verified release. ``table`` (alias ``release``): published rows (QI cells as text,
    other columns attached through the chosen assignment, rows shuffled). ``cells``: the same
    QI cells as arrays.
    ``graph``: the generalization graph, original record i → published row position.
    ``report``: the audit manifest (JSON-serializable)."""

    table: pd.DataFrame
    cells: GeneralizedQI
    graph: GeneralizationGraph
    qi: EncodedQI
    report: dict[str, object] = field(default_factory=dict)

    @property
    def release(self) -> pd.DataFrame:
        """The published table (the same object as ``table``); every kind's result has it."""
        return self.table

    def to_arrow(self) -> pa.Table:
        """The release as a typed Arrow table, the layout of a Parquet release: numeric QIs
        as ``struct<lo, hi>``, categorical QIs as ``list<string>``, null for ``*``, the other
        columns as they are (``tables.io.cells.release_arrow_table``). O(cells)."""
        from anonymatch.tables.io.cells import release_arrow_table

        return release_arrow_table(self.table, self.cells, self.qi)

    def to_polars(self) -> Any:
        """The release as a Polars DataFrame (the typed layout of :meth:`to_arrow`); needs
        polars installed. O(cells)."""
        try:
            import polars as pl
        except ImportError as exc:
            raise InputError("Release.to_polars needs polars: pip install polars") from exc
        return pl.from_arrow(self.to_arrow())


def prepare(
    data: pd.DataFrame,
    schema: Schema,
    na_values: NAValues | None = DEFAULT_NA_VALUES,
    drop_missing: bool = False,
) -> tuple[pd.DataFrame, EncodedQI, int]:
    """Check the schema against the table, drop rows with missing QIs if asked, encode the QIs
    (missing values kept and marked otherwise). Returns (rows kept, encoded QIs, number of rows
    dropped). ``data`` must be a DataFrame (``ArgumentTypeError`` otherwise): the common entry
    of every table pipeline."""
    data = require_frame(data)
    schema.check_columns(data)
    check_missing_codes(na_values, [str(c) for c in data.columns])
    na = missing_codes(na_values)
    dropped = 0
    if drop_missing:
        mask = missing_qi_mask(data, schema, na)
        dropped = int(mask.sum())
        data = data.loc[~mask].reset_index(drop=True)
    if len(data) == 0:
        raise InputError("no rows left to anonymize" if dropped else "input has no data rows")
    return data, encode_qi(data, schema, na), dropped


def anonymize(data: pd.DataFrame, job: TableJob) -> Release:
    """Publish ``data`` under k-anonymity by generalization, verified: the in-memory path of a
    validated :class:`~anonymatch.tables.job.TableJob`.

    Missing QI values (``job.na``: tokens, and per-column codes) are kept and published as
    suppressed cells ``*`` (docs/guarantees/missing.md) unless ``job.drop_missing``.
    ``job.suppression_limit`` s ∈ [0, 1) lets up to ⌊s·n⌋ outlier records be dropped from the
    release when that lowers the loss (``tables.suppress``); the manifest counts them
    (``input.suppressed``) and the guarantee covers the published people. ``job.models`` put
    ℓ-diversity and/or t-closeness on the sensitive columns (``tables.sensitive``); the release is
    then made of classes that satisfy them (``methods.diverse``) and is checked from the release
    alone — or, with ``job.structure`` ``rings`` and a partitioned method, of sensitive rings
    where cheaper (``methods.circulant``), checked from their certificate. ``job.seed`` None
    draws the privacy randomness from OS entropy; a fixed seed makes the release reproducible
    and lets anyone who knows the seed redo the random choice of the true assignment — use it
    only for tests and experiments.

    Raises InputError (data the job cannot run on), InfeasibleError (k larger than the table)
    and VerificationError (the release failed verification; should never happen).
    Complexity: that of the method (e.g. Hungarian O(k·P³) per partition of P records) plus
    O(n·k) for the privacy step and recoding and the verification cost (see ``verify``).
    """
    started = time.perf_counter()
    assert job.k is not None and not job.method.levels, "the adaptive path runs this job"
    k, spec, schema, models = job.k, job.method, job.schema, job.models
    data, enc, dropped = prepare(data, schema, job.na, job.drop_missing)
    n = enc.n
    run = plan(job, rows=n, missing=int(enc.missing_records().sum()) if enc.has_missing else 0)
    suppressed = 0
    if job.suppression_limit > 0:
        drop = choose_outliers(enc, k, job.suppression_limit, run.partition_size)
        suppressed = int(drop.sum())
        if suppressed:  # the kept records keep the whole table's spans and domains
            data = data.loc[~drop].reset_index(drop=True)
            enc = enc.take(np.flatnonzero(~drop))
            n = enc.n
    target = sensitive_target(data, models)
    rng = np.random.default_rng(job.seed)
    workers, progress = job.execution.workers, job.execution.progress
    long_run = run.warning()
    if long_run and progress:  # with the progress bar (not under --quiet): stderr
        from tqdm import tqdm

        tqdm.write(f"anonymatch: warning: {long_run}", file=sys.stderr)

    t0 = time.perf_counter()
    rings: RingRelease | None = None
    freeform = target is not None and spec.partitioned  # classes, or rings where asked (§6)
    if target is not None and freeform and job.structure == "rings":  # rings where cheaper
        from anonymatch.tables.methods.circulant import sensitive_build

        rings = sensitive_build(enc, k, target, run.partition_size or n)
        graph, n_parts, n_blocks = rings.graph, rings.parts, 0
    else:
        deadline = None
        if run.limit is not None:  # the rounds stop where what follows them must start
            deadline = started + run.limit - after_build_seconds(n, k)
        graph, n_parts, n_blocks = build_graph(
            enc,
            k,
            spec,
            run.partition_size,
            BuildOptions(job.time_limit, target, blocks=run.blocks is not None, deadline=deadline),
            workers,
            progress,
        )
    t_build = time.perf_counter() - t0
    # Privacy step: published record j is true-matched to original truth_of[j]. Recoding
    # needs the graph only, not the privacy step's draws: it runs meanwhile in this thread
    # (numpy/scipy, single-threaded) while the walks run on the pool (numba, nogil).
    with ThreadPoolExecutor(max_workers=1) as side:
        if rings is not None and rings.rings:  # one of each ring's k shifts (§6)
            from anonymatch.tables.methods.circulant import shift_assignment

            private = side.submit(shift_assignment, rings, rng)
        else:
            private = side.submit(privacy_step, graph, rng)
        recoded = recode(graph, enc)
        assigned = private.result()
    truth_of = np.empty(n, dtype=np.int64)
    truth_of[assigned] = np.arange(n)
    shuffle = rng.permutation(n)  # output position p shows published record shuffle[p]
    position = np.empty(n, dtype=np.int64)
    position[shuffle] = np.arange(n)
    cells = recoded.take(shuffle)
    table = _release_table(data, schema, enc, cells, truth_of[shuffle])

    published_graph = graph.with_published_order(position)
    del graph, recoded  # the published order's copies are what is kept (peak memory, issue 38)

    t0 = time.perf_counter()
    published = parse_cells(table, enc)  # what is written is what is verified
    # One attacker's view of the cells (the verifier's, rebuilt from the cells and the
    # original) serves the checks and the known-person figures (issue 38). The blocks of our
    # own graph (its partitions, classes or components) only tell the verifier where a
    # k-factor may be found piece by piece (faster), and a k-regular graph of ours is a
    # k-factor to check pair by pair against the cells (faster still); a pass is still proven
    # on the graph rebuilt from the cells.
    factor = published_graph.matrix if published_graph.classes is None else None
    with reuse_parsed_release():
        check = verify(published, enc, k, blocks=published_graph.blocks(), factor=factor)
        refuse(check.passed, check.reason)
        ring_rows = [position[r] for r in rings.rings] if rings is not None else None
        if ring_rows is None and freeform:  # classes: the construction is named, no certificate
            ring_rows = []
        # every draw of a ring release's privacy step, from its certificate (§6); else each
        # person's candidates
        certificate = ring_certificate(k, ring_rows) if ring_rows else None
        view = SensitiveView(published, enc, table, data, certificate)
        sensitive = job.check.sensitive_models.check(view) if models else None
        t_verify = time.perf_counter() - t0
        if sensitive is not None:
            refuse(sensitive.passed, sensitive.reason)
        widening, population_view, source = None, None, None
        if job.criteria:  # widen the rows a population criterion refuses; all verified again
            from anonymatch.tables.models.widening import apply_population
            from anonymatch.tables.risk.population import PopulationInput

            assert job.population is not None
            table, widened, population_view, source = apply_population(  # k is verified here, once:
                data, table, job.criteria, job.population, PopulationInput.of(job)
            )
            widening = widened.to_dict()
            cells = published = parse_cells(table, enc)  # the widened cells, verified again
            check = verify(published, enc, k)  # (publish refuses a failure; the manifest's figures)
        truth = position[assigned]  # original i's true row of the release
        parsed = contextvars.copy_context()  # this parsed release, for the figures' thread
    # the known-person figures on a worker thread while publish runs the release's checks
    # (numba and numpy there, pandas here: issue 38)
    spent: dict[str, float] = {}

    def figures() -> Mapping[str, Any]:
        clock = time.perf_counter()
        known = _known_person(published, enc, table, data, schema, (k, ring_rows or []), truth)
        spent["known_person"] = time.perf_counter() - clock
        return {"known_person": known}

    seconds = {
        "build": t_build,
        "verify": t_verify,
        "leakage": 0.0,  # publish's checks (leakage, headline) add their time
        "known_person": 0.0,  # measured beside them (below)
        "wall": time.perf_counter() - started,
    }
    models_claim, models_figures = sensitive_claims(
        job.check.sensitive_models, sensitive, k, ring_rows
    )
    suppression, run_plan = plan_blocks(run, job, n_blocks)
    na = missing_codes(job.na)
    loss = release_loss(cells, enc, suppressed)
    produced = Produced(
        kind="table",
        method=spec.name,
        parameters={
            **schema.roles(),
            "partition_size": run.partition_size,
            "partitions": n_parts,
            **suppression,
            **({"na_codes": {c: list(v) for c, v in na.columns.items()}} if na.columns else {}),
        },
        guarantee={
            **KAnonymity(k).describe(),
        },
        # the original's people, as the verifier counts them (verify_release): the published
        # ones have a k-factor, ``suppressed`` were left out under the limit
        verification=dataclasses.replace(
            check, n_original=check.n_original + suppressed, suppressed=suppressed
        ).to_dict(),
        loss=loss,
        seconds=seconds,
        seeded=job.seed is not None,
        records_in=n + dropped + suppressed,
        records_out=n,
        input_extra=input_counts(enc, dropped, suppressed),
        models=models_claim,
        model_figures=models_figures,
        plan=run_plan,
    )
    with ThreadPoolExecutor(max_workers=1) as side:  # joined on every exit (a refusal too)
        risk = side.submit(parsed.run, figures)
        report = publish(
            produced,
            criteria=job.criteria,
            view=population_view,
            source=source,
            widening=widening,
            checks=release_checks("table", "memory", schema.identifiers, job.strict),
            shown=ReleaseView.of(data, enc, published, table, schema),
            risk=risk,
        )
    report["seconds"]["known_person"] = spent["known_person"]
    return Release(table, cells, published_graph, enc, report)


def release_loss(cells: GeneralizedQI, enc: EncodedQI, suppressed: int) -> dict[str, Any]:
    """The manifest's ``loss`` block of a table release: the information loss of its ``cells``
    (``metrics.information_loss``), its suppressed cells, and with ``suppressed`` people left
    out the GCP counting each of them as a row of NCP 1 (as ARX's loss counts them).
    O(n·d)."""
    figures = information_loss(cells, enc)
    loss = figures.to_dict()
    loss["suppressed_cells"] = int(cells.num_star.sum() + cells.cat_star.sum())
    if suppressed:
        n = enc.n
        loss["gcp_with_suppressed"] = (float(figures.gcp) * n + suppressed) / (n + suppressed)
    return loss


def input_counts(enc: EncodedQI, dropped: int, suppressed: int) -> dict[str, int]:
    """The manifest's ``input`` counts of a table release: rows dropped for a missing QI,
    people suppressed, missing QI values published. O(n·d)."""
    return {
        "dropped_missing": dropped,
        "suppressed": suppressed,
        "missing_values": int(enc.num_missing.sum() + enc.cat_missing.sum()),
    }


def _known_person(
    published: GeneralizedQI,
    enc: EncodedQI,
    table: pd.DataFrame,
    data: pd.DataFrame,
    schema: Schema,
    certificate: tuple[int, list[np.ndarray]],
    truth: np.ndarray | None = None,
) -> dict[str, object]:
    """The manifest's ``risk.known_person``: what one person's true row reveals about the
    others (``risk.known``), over the candidate graph, or over the rings of ``certificate``
    (k, rings) when there are any. O(pairs·√n) for the candidates plus ``known_person``.

    ``truth`` (optional): the release's own perfect matching (original i's true row). The
    candidates — the pairs in some perfect matching — do not depend on which matching they
    are found from, so it only replaces the max-flow (issue 38: at k = 100 on Adult the
    max-flow over millions of pairs was the run's peak memory); the figures are the same."""
    from anonymatch.tables.risk.known import known_figures
    from anonymatch.tables.verify import attacker_view

    view = attacker_view(published, enc)
    if certificate[1]:
        return known_figures(view, table, data, schema, certificate).to_dict()
    rows = np.arange(view.n)
    if truth is not None and view.compatible(rows, truth).all():
        cand = view.candidates(truth)
    else:
        cand = view.candidates()
    assert cand is not None  # verified: a k-factor exists
    return known_figures(cand, table, data, schema).to_dict()


def sensitive_target(
    data: pd.DataFrame, models: Sequence[SensitiveModel]
) -> SensitiveTarget | None:
    """The sensitive values of ``data`` packed for the builders, or None without models."""
    if not models:
        return None
    encoded = [
        encode_sensitive(m.column, data[m.column], data[m.column], m.ordered) for m in models
    ]
    return SensitiveTarget.build(
        [e.original for e in encoded], [e.m for e in encoded], tuple(models)
    )


def _release_table(
    data: pd.DataFrame, schema: Schema, enc: EncodedQI, cells: GeneralizedQI, source: np.ndarray
) -> pd.DataFrame:
    """Published rows: QI cells as text; every other kept column taken from original
    ``source[p]`` (the true preimage of output row p)."""
    text = format_cells(cells, enc)
    columns: dict[str, object] = {}
    for name in schema.output_columns([str(c) for c in data.columns]):
        if name in text:
            columns[name] = text[name]
        elif data[name].dtype == _ARROW_TEXT:  # stays Arrow: the dtype inferred below anyway
            columns[name] = data[name].take(source).reset_index(drop=True)
        else:
            columns[name] = data[name].to_numpy()[source]
    return pd.DataFrame(columns)


_ARROW_TEXT = pd.StringDtype("pyarrow", na_value=np.nan)
"""pandas' default text dtype (``str``), what CSV input columns are read as; taking rows of
such a column keeps it, and converting them to objects and back (as for other dtypes) costs
about 5 ms per column on Adult."""


def sensitive_claims(
    criterion: SensitiveModels,
    verdict: Verdict | None,
    k: int,
    rings: Sequence[np.ndarray] | None,
) -> tuple[dict[str, object], dict[str, object]]:
    """What a table release states about its sensitive models, in memory and streamed alike
    (``core.release.Produced.models`` and ``model_figures``): the criterion's claims
    (:meth:`SensitiveModels.describe`: ``guarantee.sensitive``, each model, and
    ``guarantee.unprotected``, the columns published without protection, ``l = 1``) and
    ``verification.sensitive`` (its verdict's checks, ``verdict``: None without models); with a
    freeform construction (``rings``: every sensitive ring's release rows, in ring order; None
    for a method without one) also ``guarantee.construction`` (rings or classes),
    ``verification.ring_records`` and, with rings, ``guarantee.certificate``
    (``models.certified.ring_certificate``), which ``verify --manifest`` checks every draw
    with, and ``guarantee.insider_weakness`` (the rings' weakness in plain words,
    ``job.RINGS_WEAKNESS``). O(models + ring records)."""
    claims: dict[str, object] = criterion.describe()
    if not criterion.models:
        return claims, {}
    assert verdict is not None  # the models were checked
    figures: dict[str, object] = {"sensitive": list(verdict.figures["checks"])}
    if rings is not None:
        claims["construction"] = "rings" if rings else "classes"
        figures["ring_records"] = int(sum(len(r) for r in rings))
        if rings:
            claims["certificate"] = ring_certificate(k, rings)
            claims["insider_weakness"] = RINGS_WEAKNESS
    return claims, figures


def plan_blocks(
    run: Plan, job: TableJob, blocks: int = 0
) -> tuple[dict[str, object], dict[str, object]]:
    """What the plan states in a table manifest (``Plan.record``): the parameters it adds
    (``suppression_limit``, ``missing``) and the ``plan`` block (with ``blocks``: the
    partitions the build published as blocks, 1 for the whole table). O(columns)."""
    written: dict[str, object] = {"parameters": {}}
    run.record(written, job, blocks)
    parameters, block = written["parameters"], written["plan"]
    assert isinstance(parameters, dict) and isinstance(block, dict)
    return parameters, block


def verify_release(
    published: pd.DataFrame, original: pd.DataFrame, check: ReleaseCheck
) -> VerificationReport:
    """Verify a published table against the original table: no identifier column of the check
    published, k-anonymity from the QIs, and each sensitive model from the release's sensitive
    columns (``sensitive.check_release``), as ``check`` claims them. Passes iff everything
    passes; the reason is the first failure's.

    A release with fewer rows than the original passes only within the check's
    ``suppression_limit``, if some of the original's people — the published ones — have a
    k-factor to its rows. They are
    first taken to be the people ``anonymize`` keeps under that limit (``suppress``'s rule,
    with the check's ``partition_size``, default the freeform one; the rule
    reads the original's QIs only, which the adversary is assumed to know, so recomputing it
    reveals nothing); if those people have no k-factor, ``verify.verify`` searches for others
    (docs/guarantees/missing.md). Either way a pass is a proof: the k-factor is checked.
    The check's ``certificate`` (a ring release's manifest's ``guarantee.certificate``) checks
    the models for every draw of the privacy step (``models.certified``) instead of on the
    candidates."""
    if check.k is None:
        raise InputError(f"missing {param('k')}")
    k, limit, models = check.k, check.suppression_limit, check.models
    data, enc, _ = prepare(original, check.schema, check.na, check.drop_missing)
    cells = parse_cells(published, enc)
    named = Identifiers(check.schema.identifiers).check(
        ReleaseView.of(data, enc, cells, published, check.schema)
    )
    if not named.passed:  # an identifier is never published, whatever the QIs show
        return dataclasses.replace(verify(cells, enc, k, limit), passed=False, reason=named.reason)
    report = None
    if limit > 0 and cells.n < enc.n:
        keep = ~choose_outliers(enc, k, limit, check.partition_size)
        if int(keep.sum()) == cells.n:
            kept = verify(cells, enc.take(np.flatnonzero(keep)), k)
            if kept.passed:
                report = dataclasses.replace(kept, n_original=enc.n, suppressed=enc.n - cells.n)
                data = data.loc[keep].reset_index(drop=True)
                enc = enc.take(np.flatnonzero(keep))
    if report is None:  # the level's criterion (``models.levels``): a k-factor
        report = KAnonymity(k).check(LevelView(cells, enc, data, limit)).detail
        if models and report.passed and report.suppressed:
            raise InputError(
                f"checking {param('l')}/{param('t')} on a release with suppressed records needs "
                "the published "
                "people, which are not the ones anonymize keeps; verify the k-anonymity alone"
            )
    if not models or not report.passed:
        return report
    # a ring release: every draw, from its certificate (§6); else each person's candidates
    view = SensitiveView(cells, enc, published, data, check.certificate)
    verdict = check.sensitive_models.check(view)
    checks = verdict.figures["checks"]
    reason = verdict.reason if not verdict.passed else report.reason
    if check.certificate is None and any(
        not c["passed"] and (m.t is not None or m.diversity != "distinct")
        for c, m in zip(checks, models, strict=True)
    ):
        reason += RING_HINT
    return dataclasses.replace(
        report, passed=verdict.passed, reason=reason, sensitive=tuple(checks)
    )


RING_HINT = (
    "; if the release was made of sensitive rings, its manifest carries a certificate "
    "(guarantee.certificate): pass it as `certificate` — without it a person's candidates "
    "are checked, which can fail a ring release whose every draw passes "
    "(docs/guarantees/sensitive.md §6)"
)
"""Appended to a failed entropy, recursive or t check made without a certificate: such a
check is sound (it never passes an unsafe release) but can reject a ring release."""


def evaluate_release(
    published: pd.DataFrame, original: pd.DataFrame, check: ReleaseCheck
) -> InformationLoss:
    """GCP and per-attribute NCP of a published table, normalised by the original's domains
    (the check's columns, weights and missing values)."""
    _, enc, _ = prepare(original, check.schema, check.na, check.drop_missing)
    return information_loss(parse_cells(published, enc), enc)
