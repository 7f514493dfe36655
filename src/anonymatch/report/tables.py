"""Report sections of a table release (k-anonymity, sensitive models, adaptive anonymity,
(k,ℓ)-anonymity): columns by role, risk figures (``tables.risk.risk.assess``), loss per attribute,
suppressed cells and the original against the release per quasi-identifier.

The release's distribution of a QI is the expectation an analyst gets by spreading every
published cell uniformly over what it covers: a range ``lo..hi`` over its values (integers
lo…hi for integral columns), a value set over its values, a suppressed cell over the whole
domain. Cost: reading both files, O(n·d) for the cells and the distributions
(O(n·bins) per numeric QI), plus the risk figures (O(pairs·√n), see ``tables.risk.risk``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anonymatch.app.tablejob import claimed_population, unchecked_claims
from anonymatch.core.errors import InputError
from anonymatch.report import plots
from anonymatch.report.check import ClaimCheck, compare
from anonymatch.report.model import (
    NEEDS_FILES,
    Figure,
    Inputs,
    KindSections,
    Section,
    Table,
    read_original,
)
from anonymatch.tables.columns.qitypes import QITypes
from anonymatch.tables.columns.schema import (
    EncodedQI,
    MissingCodes,
    Schema,
)
from anonymatch.tables.io import CsvOptions, read_table
from anonymatch.tables.recode import GeneralizedQI, cat_distinct, cat_nodes
from anonymatch.tables.risk.headline import Headline
from anonymatch.tables.risk.leakage import LeakageReport
from anonymatch.tables.risk.risk import RiskReport, assess_cells

if TYPE_CHECKING:
    from anonymatch.report.analyst import LearningInputs
    from anonymatch.tables.job import ReleaseCheck, TableJob

UNIQUE_FLAG_SHARE = 0.05
"""A column released unchanged is flagged when at least this share of records hold a value
no other record has: on its own it singles those people out."""

MAX_ROWS = 500_000
"""Above this many released rows (or for a release in parts) the report holds what the manifest
says: the file-based figures (risk on the compatibility graph) would take longer than the
release itself."""

TOP_VALUES = 12
"""Categorical values drawn one by one in a distribution plot; the rest are summed."""


def sections(manifest: Mapping[str, Any], inputs: Inputs, published: Section) -> KindSections:
    """The table sections; without the original and the release only what the manifest says."""
    params = manifest.get("parameters") or {}
    guarantee = Section("guarantee-kind", "")
    guarantee.bullets += dp_companion_lines(manifest)  # anonymize --dp-queries (issue 39)
    risk = Section("risk", "Re-identification and disclosure risk")
    utility = Section("utility", "Utility: what the release keeps")
    limits = _limits(manifest)
    loss = manifest.get("loss") or {}
    if loss.get("gcp") is not None:
        utility.facts.append(("information loss (GCP)", f"{100 * float(loss['gcp']):.2f}%"))
    if loss.get("stars") is not None:
        utility.facts.append(("suppressed cells (stars)", loss["stars"]))
    output = manifest.get("output") or {}
    large = int(output.get("records") or 0) > MAX_ROWS or output.get("layout") == "partitioned"
    if not inputs.complete or large:
        note = (
            f"not done for releases of more than {MAX_ROWS:,} rows or in parts"
            if large
            else NEEDS_FILES
        )
        risk.missing = note
        utility.missing = f"the distributions and suppressed cells {note}"
        _manifest_leakage(risk, limits, manifest.get("leakage"))
        ncp = loss.get("ncp") or {}
        if ncp:
            utility.figures.append(
                Figure(
                    "Loss per attribute (NCP)", plots.bars(list(ncp), list(ncp.values()), "NCP (%)")
                )
            )
        return KindSections(published, guarantee, risk, utility, limits)

    schema = Schema.build(
        params.get("qi") or [],
        params.get("numeric") or [],
        params.get("sensitive") or [],
        params.get("identifiers") or [],
        params.get("weights") or {},
        _qi_types(params),
    )
    options = inputs.options
    original, (csv, na, drop_missing) = read_original(manifest, inputs)
    assert inputs.release is not None
    release = read_table(inputs.release, _release_reading(manifest, inputs.release, options))
    from anonymatch.report.series import published_mask

    series_kept = published_mask(manifest, original, options, len(release))
    if series_kept is not None:  # a series release that suppressed people: by its map
        original = original.loc[series_kept].reset_index(drop=True)
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.models.kl import MODEL as KL_MODEL
    from anonymatch.tables.models.kl import kl_encoded
    from anonymatch.tables.pipeline import prepare

    kl = (manifest.get("guarantee") or {}).get("model") == KL_MODEL  # missing labels published
    data, enc, _ = (kl_encoded if kl else prepare)(original, schema, na, drop_missing)
    cells = parse_cells(release, enc)
    kept = _published_people(manifest, enc, cells.n)
    if kept is not None:  # records suppressed under the limit: report on the published people
        data, enc = data.loc[kept].reset_index(drop=True), enc.take(np.flatnonzero(kept))
    if cells.n != enc.n:
        raise InputError(f"the release does not match the original: {cells.n} rows against {enc.n}")
    level_column = params.get("k_column")
    from anonymatch.tables.risk.headline import headline
    from anonymatch.tables.risk.leakage import check_leakage

    leakage = check_leakage(data, enc, cells, release, schema)
    published.tables.append(_columns(original, release, schema, level_column, leakage))
    _leak_limits(limits, leakage)
    check = _reverify(manifest, original, release, schema, na, drop_missing,
                      0 if series_kept is None else int((~series_kept).sum()))  # fmt: skip
    # the claimed k is verified already (the certificate); it is passed only for the
    # mechanism-aware bound on sensitive values
    k = _claimed_k(manifest) if schema.sensitive else None
    figures = assess_cells(data, enc, cells, release, schema, k, inputs.threshold)
    figures = _certified_risk(figures, manifest, (data, enc, cells, release, schema))
    _risk(risk, figures, limits, bool((manifest.get("guarantee") or {}).get("sensitive")))
    _population(risk, manifest, (data, release), schema, options, (na, drop_missing))
    _leakage_table(risk, leakage)
    keeps = headline(cells, enc)
    _utility(utility, cells, enc, data, schema)
    _headline_facts(utility, keeps)
    learning = None
    if options.get("test") is not None and options.get("classify"):
        complete = _complete(original, schema, na) if drop_missing else original
        learning = _learning(complete, options, (csv, schema, na, drop_missing))
    from anonymatch.report.analyst import side_by_side  # issue 39: release, draws, companion

    side_by_side(utility, manifest, original, inputs.release, draws_dir=options.get("draws"),
                 learning=learning)  # fmt: skip
    return KindSections(published, guarantee, risk, utility, limits, check, keeps.to_dict())


def _release_reading(
    manifest: Mapping[str, Any], release: Any, options: Mapping[str, Any]
) -> CsvOptions | None:
    """How to read a release: a database release is the table ``options["release_table"]``
    (``report --release-table``) or else its manifest names (``output.table``); a file as its
    name says (None)."""
    from anonymatch.tables.io.sql import is_database_url

    if not is_database_url(str(release)):
        return None
    table = options.get("release_table") or (manifest.get("output") or {}).get("table")
    if not isinstance(table, str):
        raise InputError("the release is a database URL; its manifest names no output.table")
    return CsvOptions(table=table)


def _learning(
    original: pd.DataFrame,
    options: Mapping[str, Any],
    reading: tuple[CsvOptions, Schema, MissingCodes, bool],
) -> LearningInputs:
    """What the models table trains and tests on (issue 27; the table itself is
    ``report.analyst.models_table``, beside the draws): the original, the test table
    ``options["test"]`` read with ``options["test_csv"]`` (default the original's options,
    ``reading[0]``) and the label ``options["classify"]``. When the release dropped rows with a
    missing QI (``reading[3]``), the test table's such rows are dropped too (``original`` comes
    without them). O(n·d)."""
    from anonymatch.report.analyst import LearningInputs

    csv, schema, na, drop_missing = reading
    test = read_table(options["test"], options.get("test_csv") or csv)
    if drop_missing:
        test = _complete(test, schema, na)
    return LearningInputs(original, test, str(options["classify"]))


def _complete(frame: pd.DataFrame, schema: Schema, na: MissingCodes) -> pd.DataFrame:
    """``frame`` without its rows with a missing QI (``--drop-missing``). O(n·|qi|)."""
    from anonymatch.tables.columns.schema import missing_qi_mask

    schema.check_columns(frame)
    return frame.loc[~missing_qi_mask(frame, schema, na)].reset_index(drop=True)


def _reverify(
    manifest: Mapping[str, Any],
    original: pd.DataFrame,
    release: pd.DataFrame,
    schema: Schema,
    na: MissingCodes,
    drop_missing: bool,
    suppressed: int = 0,
) -> ClaimCheck:
    """Re-run the verifier of the manifest's model on the files, with the claimed k (or the
    levels column) and sensitive models, and compare its certificate with the manifest's
    ``verification`` block (what ``verify --manifest`` checks). A (k,ℓ) claim is re-checked by
    its criterion (``KLAnonymity.check``: a truthful generalization, and the (k,ℓ) counts).
    ``suppressed``: people of the input a series release left out (``original`` is its
    published people), counted as the publishing run counts them."""
    g = manifest.get("guarantee") or {}
    v = manifest.get("verification") or {}
    params = manifest.get("parameters") or {}
    model = g.get("model")
    if not isinstance(v, Mapping):
        v = {}
    try:
        if model == "k-anonymity":
            from anonymatch.app.tablejob import manifest_job
            from anonymatch.tables.pipeline import verify_release

            job = manifest_job(manifest)  # the claimed level and models, validated as a job
            assert job.k is not None
            certificate = g.get("certificate") if job.models else None
            check = dataclasses.replace(
                job.check,
                schema=schema,
                na=na,
                drop_missing=drop_missing,
                certificate=certificate if isinstance(certificate, Mapping) else None,
            )
            verified = verify_release(release, original, check)
            if suppressed:  # as the series run's certificate: the input's people, some left out
                verified = dataclasses.replace(
                    verified, n_original=verified.n_original + suppressed, suppressed=suppressed
                )
            rerun = verified.to_dict()
            rerun.update(_recheck_criteria(job, original, release, check))
        elif model == "adaptive-anonymity" and params.get("k_column"):
            from anonymatch.tables.job import ReleaseCheck
            from anonymatch.tables.models.adaptive import verify_adaptive_release
            from anonymatch.tables.models.disclosure import SensitiveModels

            column = str(params["k_column"])
            adaptive_schema = Schema.build(schema.qi, schema.numeric, identifiers=[column])
            adaptive = ReleaseCheck(
                adaptive_schema, None, column, SensitiveModels(), 0.0, na, drop_missing, None
            )
            rerun = verify_adaptive_release(release, original, adaptive).to_dict()
        elif model == "(k,l)-anonymity":
            from anonymatch.tables.models import KL_CRITERIA
            from anonymatch.tables.models.kl import recheck_claim

            claims = KL_CRITERIA.claims(g)
            _, verdict = recheck_claim(claims, original, release, schema, na, drop_missing)
            rerun = {"passed": verdict.passed, **verdict.figures}
        else:
            return ClaimCheck("unchecked", f"this report does not re-verify {model} releases")
    except InputError as exc:
        return ClaimCheck("mismatch", problems=[f"the verifier cannot check the claim: {exc}"])
    population = job.population if model == "k-anonymity" else None
    problems = compare(v, rerun) + [
        f"unchecked: {claim}"
        for claim in unchecked_claims(manifest, population if isinstance(population, str) else None)
    ]
    return ClaimCheck("mismatch" if problems else "checked", verification=rerun, problems=problems)


def _recheck_criteria(
    job: TableJob, original: pd.DataFrame, release: pd.DataFrame, check: ReleaseCheck
) -> dict[str, Any]:
    """The verdicts of the criteria a manifest claims (``tables.models.CRITERIA``) on the
    files, against the population it names (``verification.<name>`` blocks). O(that of
    ``population_risk``)."""
    if not job.criteria or not isinstance(job.population, str):
        return {}
    from anonymatch.tables.risk.population import PopulationInput, population_risk

    view = population_risk(original, release, read_table(job.population), PopulationInput.of(check))
    return {c.name: c.check(view).to_dict() for c in job.criteria}


def _qi_types(params: Mapping[str, Any]) -> QITypes | None:
    """The ordinal, date and hierarchical QIs a table manifest records (``Schema.roles``), so
    that ``~node`` cells and label ranges are read as the release meant them; hierarchies are
    read again from the path recorded (as given to ``anonymize``)."""
    ordinal, dates = params.get("ordinal") or {}, params.get("dates") or {}
    trees = {
        str(a): str(h["path"])
        for a, h in (params.get("hierarchies") or {}).items()
        if isinstance(h, Mapping) and h.get("path")
    }
    if not (ordinal or dates or trees):
        return None
    from anonymatch.tables.columns.qitypes import build_types

    return build_types(ordinal, dates, trees, str(params.get("hierarchy_cells") or "node"))


def _published_people(
    manifest: Mapping[str, Any], enc: EncodedQI, n_published: int
) -> np.ndarray | None:
    """For a release made under a suppression limit that dropped records
    (``input.suppressed``), which originals it publishes: the records ``anonymize`` keeps,
    recomputed by the same rule from the original's QIs (``tables.models.suppress``), as
    ``verify --manifest`` does. None for a release without suppressed records, or when the
    rule does not give ``n_published`` people (the row-count check then refuses it)."""
    params = manifest.get("parameters") or {}
    limit = float(params.get("suppression_limit") or 0.0)
    suppressed = int((manifest.get("input") or {}).get("suppressed") or 0)
    k = (manifest.get("guarantee") or {}).get("k")
    if not (limit > 0 and suppressed and n_published < enc.n and isinstance(k, int)):
        return None
    from anonymatch.tables.models.suppress import choose_outliers

    size = params.get("partition_size")
    keep = ~choose_outliers(enc, k, limit, int(size) if size else None)
    return keep if int(keep.sum()) == n_published else None


def _leak_limits(limits: list[str], leakage: LeakageReport) -> None:
    """The flagged kept columns first among what the release does not protect against."""
    for line in reversed(leakage.lines()):
        limits.insert(
            0,
            f"Leak: {line[0].upper()}{line[1:]}. Whatever k, the attacker reads the kept value "
            "beside the generalized cells.",
        )


def _manifest_leakage(section: Section, limits: list[str], block: object) -> None:
    """A report without the files' figures (a streamed release, or no files): the leakage
    table and lines of the manifest's ``leakage`` block, checked when the release was made."""
    if not isinstance(block, Mapping):
        return
    try:
        leakage = LeakageReport.from_dict(block)
    except (AttributeError, KeyError, TypeError, ValueError):
        return  # a block of another shape: nothing shown rather than a wrong figure
    _leak_limits(limits, leakage)
    _leakage_table(section, leakage)
    section.tables[-1:] = [
        dataclasses.replace(t, caption=f"{t.caption} From the manifest: checked when the "
                            "release was made.")
        for t in section.tables[-1:]
    ]  # fmt: skip


def _leakage_table(section: Section, leakage: LeakageReport) -> None:
    """The columns released unchanged against the QIs (``tables.risk.leakage``)."""
    if not leakage.columns:
        return
    n = leakage.rows
    rows, flagged = [], set()
    for i, c in enumerate(leakage.columns):
        worst = c.worst()
        rows.append(
            [
                c.column,
                c.role,
                _share(c.leaked_rows, n),
                _share(c.pinned_rows, n),
                f"{worst.qi} ({worst.narrowed:,})" if worst else "—",
                _share(c.unique_rows, n),
                c.free_text or "—",
            ]
        )
        if c.flagged:
            flagged.add(i)
    section.tables.append(
        Table(
            ["column released unchanged", "role", "rows it narrows a QI cell in",
             "pinned to one value", "QI most narrowed (rows)", "rows with a value of their own",
             "free text"],
            rows,
            caption="What the columns released unchanged give away about the quasi-identifiers: "
            "a row counts when its kept value leaves at most half the values of one of its "
            "published QI cells (rules learnt from the original: values the kept value's rows "
            "never or almost never show although they would be expected to). Flagged: at least "
            f"{100 * leakage.options.flag_share:g}% of the rows narrowed, "
            f"{100 * leakage.options.unique_share:g}% unique, or free text.",
            flagged=frozenset(flagged),
        )
    )  # fmt: skip


def _headline_facts(section: Section, kept: Headline) -> None:
    """The utility headline (``tables.risk.headline``) first among the utility facts."""
    facts = [
        ("utility", kept.verdict),
        ("cells published exactly", f"{100 * kept.exact_cells:.1f}%"),
        ("rows fully generalized", f"{100 * kept.rows_fully_generalized:.1f}%"),
        ("distinct values never published alone",
         f"{100 * kept.codes_merged:.1f}% of {kept.codes:,}"),
        ("loss on the values present", f"{100 * kept.loss_present:.2f}%"),
    ]  # fmt: skip
    section.facts[:0] = facts


def _columns(
    original: pd.DataFrame,
    release: pd.DataFrame,
    schema: Schema,
    level_column: str | None,
    leakage: LeakageReport | None = None,
) -> Table:
    """One row per input column: role, how it is published, distinct values, flag (a kept
    column the leakage check flags, with its reasons)."""
    reasons = {c.column: c.reasons for c in leakage.flagged} if leakage is not None else {}
    rows: list[list[Any]] = []
    flagged: set[int] = set()
    n = max(len(original), 1)
    for name in (str(c) for c in original.columns):
        values = original[name].astype(str)
        counts = values.value_counts()
        distinct = len(counts)
        unique_records = int((counts == 1).sum())
        if name in schema.identifiers:
            role, how = "identifier", "dropped"
        elif name == level_column:
            role, how = "privacy level", "dropped"
        elif name in schema.qi:
            numeric = name in schema.numeric
            role = "quasi-identifier (numeric)" if numeric else "quasi-identifier (categorical)"
            how = "generalized to ranges" if numeric else "generalized to value sets"
            tree = schema.types.hierarchies.get(name)
            if tree is not None and not numeric:  # no machine path: the file's name
                how = f"generalized to nodes of the hierarchy {Path(tree.source).name}"
            elif name in schema.types.scaled:
                how = "generalized to ranges of its labels"
        elif name in schema.sensitive:
            role, how = "sensitive", "released unchanged, attached through the true match"
        else:
            role, how = "other", "released unchanged"
        if name not in release.columns and how != "dropped":
            how = "not in the release"
        note = ""
        if how.startswith("released unchanged") and name in reasons:
            note = "; ".join(reasons[name])
            flagged.add(len(rows))
        elif how.startswith("released unchanged") and unique_records >= UNIQUE_FLAG_SHARE * n:
            note = f"{unique_records} records have a value of their own"
            flagged.add(len(rows))
        rows.append([name, role, how, distinct, note])
    return Table(
        ["column", "role", "published as", "distinct values", "flag"],
        rows,
        caption="Columns by role; flagged: released unchanged and identifying on its own or "
        "giving quasi-identifiers away (the risk section has the figures).",
        flagged=frozenset(flagged),
    )


def _claimed_k(manifest: Mapping[str, Any]) -> int | None:
    """The k a manifest's guarantee claims (None: none, or not a level)."""
    k = (manifest.get("guarantee") or {}).get("k")
    return k if isinstance(k, int) and not isinstance(k, bool) and k >= 1 else None


def _risk(section: Section, report: RiskReport, limits: list[str], modelled: bool) -> None:
    """The risk section from the figures of ``tables.risk`` (``assess_cells``); ``modelled``:
    the release claims sensitive models (no advice to add them)."""
    threshold = report.threshold
    cand, pr, base = report.candidates, report.prosecutor, report.original
    people = report.people
    section.paragraphs.append(
        "A person's candidates are the published rows that can be theirs given everything "
        "published: rows whose cells contain the person's values and that some way of pairing "
        "everyone with their own row gives them. The attacker knows everyone's quasi-identifiers "
        "and sees the whole release."
    )
    section.tables.append(
        Table(
            ["figure", "release", "original QIs published unchanged"],
            [
                ["candidates per person: min", cand.min, base.class_size.min],
                ["candidates per person: median", f"{cand.median:g}",
                 f"{base.class_size.median:g}"],
                ["candidates per person: mean", f"{cand.mean:.2f}", f"{base.class_size.mean:.2f}"],
                ["prosecutor risk: max", f"{pr.max:.4f}", f"{base.prosecutor.max:.4f}"],
                ["prosecutor risk: mean", f"{pr.mean:.4f}", f"{base.prosecutor.mean:.4f}"],
                [f"records above risk {threshold:g}", _share(pr.above, people),
                 _share(base.prosecutor.above, people)],
                ["unique records (1 candidate)", _share(cand.histogram.get(1, 0), people),
                 _share(base.sample_uniques, people)],
                ["identical QI rows (class k)", report.class_k, base.class_size.min],
            ],
            caption=f"{people} people; prosecutor risk = 1 / candidates.",
        )
    )  # fmt: skip
    section.figures.append(
        Figure(
            "Candidates per person",
            plots.count_histogram(cand.histogram, "candidate rows", mark=report.k),
            "How many published rows could be each person's; the dashed line is k.",
        )
    )
    rows = []
    for s in report.sensitive:
        rows.append(
            [
                s.column,
                _share(s.homogeneous, people),
                _posterior_text(s.posterior_max, s.posterior_mean, s.prior_max),
                f"{s.prior_max:.3f}",
                f"{s.distance_max:.3f}",
                s.min_distinct,
                _bound_text(s.mechanism_disclosed, people),
            ]
        )
        if s.homogeneous and not modelled:
            limits.insert(
                0,
                f"Sensitive values: {s.homogeneous} people ({100 * s.homogeneous_share:.1f}%) "
                f"show one {s.column} value on all their candidate rows, so it is disclosed "
                "although they are hidden among k rows. Drop --l 1 (a named sensitive column "
                "then gets ℓ = 2), or give --l or --t.",
            )
    if rows:
        section.tables.append(
            Table(
                ["sensitive column", "homogeneous records", "largest posterior max / mean",
                 "most common in the table", "distance to the table (max)", "fewest distinct",
                 "bound min(1, c/k) at 1"],
                rows,
                caption=(
                    "Homogeneous records: every candidate shows the same value, so the "
                    "attacker learns it."
                    if report.basis == "candidates"
                    else "Over the graph the manifest's ring certificate proves (a ring "
                    "window's k rows, a class's rows), the same for every draw: a person's "
                    "posterior is each value's share there; homogeneous: one value only."
                ),
            )
        )  # fmt: skip
    known_person(section, report.known)
    section.bullets += list(report.explanation)


def known_person(section: Section, known: Any) -> None:
    """The known-person figures (``tables.risk.known``): what one person's true row gives
    away about the others of their class, ring or component; nothing when not computed."""
    if known is None:
        return
    err = (
        f" The freeform components of {known.sampled_people} people were sampled "
        f"({known.samples} hypotheses): the mean share carries its standard error, the most "
        "is the most seen, and the largest posterior is not computed there (1 when a row "
        "became certain)."
        if known.samples
        else ""
    )
    rows = []
    for what, fig in [("rows", known.rows)] + [
        (f"{c} values", f) for c, f in known.sensitive.items()
    ]:
        share = f"{100 * fig['share_mean']:.2f}%"
        if known.samples:
            share += f" ± {100 * fig['share_mean_standard_error']:.2f}"
        rows.append([what, fig["certain_max"], f"{fig['certain_mean']:.2f}", share,
                     f"{fig['posterior_max']:.3f}"])  # fmt: skip
    section.tables.append(
        Table(
            ["made certain", "most others, one known person", "mean others", "mean share of "
             "their part", "largest posterior"],
            rows,
            caption="The attacker who also knows one person's true row (a data subject, or "
            "one person re-identified elsewhere): the other people of that person's class, "
            "ring or component whose row — or value — becomes certain, and the largest "
            f"posterior it gives (docs/guarantees/known-person.md).{err}",
        )
    )  # fmt: skip


def _certified_risk(
    figures: RiskReport, manifest: Mapping[str, Any], inputs: tuple[Any, ...]
) -> RiskReport:
    """A ring release's sensitive figures over the graph its manifest's certificate proves
    (``risk.certified_sensitive``, what ``risk --manifest`` prints); the candidate-based
    ``figures`` otherwise, or when the certificate does not fit (the verification section
    says so)."""
    certificate = (manifest.get("guarantee") or {}).get("certificate")
    if not figures.sensitive or not isinstance(certificate, Mapping):
        return figures
    from anonymatch.tables.risk.risk import CertifiedInput, certified_sensitive

    try:
        return certified_sensitive(figures, CertifiedInput(*inputs), certificate)
    except InputError:
        return figures


def _posterior_text(post_max: float, post_mean: float, prior: float) -> str:
    """The largest posterior (max / mean), called what it is when it equals the table's most
    common share: the candidates teach nothing beyond the table's distribution (which is also
    what a release that generalizes everything gives)."""
    text = f"{post_max:.3f} / {post_mean:.3f}"
    if abs(post_max - prior) <= 1e-9:
        return f"{text} (= the table's frequency: nothing learnt beyond it)"
    return text


def _bound_text(disclosed: int | None, people: int) -> str:
    """The share of people whose mechanism bound min(1, c/k) is 1; when it is everybody the
    bound proves nothing and says so rather than a bare 100 %."""
    if disclosed is None:
        return "—"
    if people and disclosed >= people:
        return "everyone: the bound is 1, it proves nothing here"
    return _share(disclosed, people)


def _population(
    section: Section,
    manifest: Mapping[str, Any],
    tables: tuple[pd.DataFrame, pd.DataFrame],
    schema: Schema,
    options: Mapping[str, Any],
    missing: tuple[MissingCodes, bool],
) -> None:
    """Figures against a population (``tables.risk.population``) when one is known: the
    ``population`` option (a path or DataFrame), else a k-map release's population (by path in
    the manifest); the sampling fraction (``sampling_fraction``) or survey weights
    (``weights``) for the estimates. Nothing without either. O(that of
    ``assess_population``)."""
    from anonymatch.tables.risk.population import (
        PopulationInput,
        PopulationSource,
        assess_population,
    )

    source = options.get("population")
    if source is None:  # the population a criterion was counted against (a DataFrame: none)
        source = claimed_population(manifest.get("guarantee") or {})
    fraction, weights = options.get("sampling_fraction"), options.get("weights")
    if source is None and fraction is None and weights is None:
        return
    table = source if source is None or isinstance(source, pd.DataFrame) else read_table(source)
    data, release = tables
    numeric = tuple(a for a in schema.qi if a in schema.numeric)
    report: dict[str, Any] = assess_population(
        data,
        release,
        PopulationInput(schema.qi, numeric, schema.types, missing[0], missing[1]),
        PopulationSource(table, fraction, weights),
    ).to_dict()
    rows: list[list[Any]] = []
    if table is not None:
        section.paragraphs.append(
            "Against the population table: an attacker holds a register of the population "
            "with the same quasi-identifiers and links a published row to one of the register's "
            "records that fit it. These figures assume the register lists the sample's people "
            "with the same values; a noisier or larger register makes them lower."
        )
        j = report["journalist_risk"]
        u = report["uniques"]
        rows += [
            ["population records", f"{report['records']:,}"],
            ["k-map: fewest population records a published row fits", report["kmap"]],
            ["journalist risk: max / mean", f"{j['max']:.4f} / {j['mean']:.4f}"],
            ["marketer risk (expected share of correct links)", f"{report['marketer_risk']:.4f}"],
            ["original QIs: unique in the sample", _share(u["sample_uniques"], u["records"])],
            ["original QIs: unique in the population",
             _share(u["population_uniques"], u["records"])],
        ]  # fmt: skip
        presence = report["presence"]
        if presence is not None:
            rows.append(
                ["δ-presence: min / max of (sample / population) per row",
                 f"{presence['delta_min']:.3f} / {presence['delta_max']:.3f}"]
            )  # fmt: skip
    est = report["estimates"]
    chosen = est["dankar"]
    share = chosen["share"]
    section.paragraphs.append(_estimate_assumptions(report["sampling_fraction"], weights))
    rows.append(
        [f"population uniques estimated from the sample ({chosen['model']}, f = "
         f"{report['sampling_fraction']:.3g})",
         "no estimate" if share is None else f"{100 * share:.1f}%"]
    )  # fmt: skip
    ind = report["individual_risk"]
    rows.append(
        ["individual risk of the original's QI rows (sdcMicro): max / mean",
         f"{ind['max']:.4f} / {ind['mean']:.4f}"]
    )  # fmt: skip
    section.tables.append(
        Table(
            ["population figure", "value"],
            rows,
            caption="The sample against the population it was drawn from "
            "(docs/guarantees/population.md).",
        )
    )


def _estimate_assumptions(fraction: float, weights: str | None) -> str:
    """The estimates' assumptions in plain words (``docs/guarantees/population.md``). O(1)."""
    drawn = (
        f"each record stands for as many people as its weight in column {weights}"
        if weights is not None
        else f"the original is a simple random sample of {100 * fraction:.3g}% of the population"
    )
    return (
        f"Estimated from the sample alone: {drawn}. Pitman, Zayatz and SNB model how often each "
        "combination of quasi-identifiers occurs in the population; Dankar's rule picks the "
        "model to trust. An estimate, not a count: a clustered or stratified sample, or a "
        "wrong fraction, makes it wrong in either direction."
    )


def _utility(
    section: Section, cells: GeneralizedQI, enc: EncodedQI, data: pd.DataFrame, schema: Schema
) -> None:
    from anonymatch.tables.metrics import information_loss

    loss = information_loss(cells, enc)
    names = list(loss.ncp)
    section.figures.append(
        Figure(
            "Loss per attribute (NCP)",
            plots.bars(names, [loss.ncp[a] for a in names], "NCP (%)"),
            "Normalized certainty penalty: 0% = published exactly, 100% = fully suppressed.",
        )
    )
    n = cells.n
    stars = []
    for a, name in enumerate(enc.num_names):
        stars.append((name, int(cells.num_star[:, a].sum())))
    for a, name in enumerate(enc.cat_names):
        stars.append((name, int(cells.cat_star[:, a].sum())))
    order = {name: i for i, name in enumerate(enc.names)}
    stars.sort(key=lambda item: order[item[0]])
    total = sum(s for _, s in stars)
    section.facts.append(("suppressed cells", f"{total} of {n * len(stars)}"))
    section.tables.append(
        Table(
            ["quasi-identifier", "NCP", "suppressed cells"],
            [[name, f"{100 * loss.ncp[name]:.2f}%", _share(s, n)] for name, s in stars],
        )
    )
    for a, name in enumerate(enc.num_names):
        edges, orig, rel = numeric_distributions(enc, cells, a)
        section.figures.append(Figure(name, plots.compare_numeric(edges, orig, rel, name), ""))
    for a, name in enumerate(enc.cat_names):
        labels, orig, rel = categorical_distributions(enc, cells, a)
        tree = name in schema.types.hierarchies
        spread = "hierarchy nodes spread" if tree else "value sets spread"
        uri = plots.compare_categorical(labels, orig, rel, name, spread)
        section.figures.append(Figure(name, uri, ""))
    order_fig = {name: i for i, name in enumerate(enc.names)}
    head = [f for f in section.figures if f.title not in order_fig]
    tail = sorted((f for f in section.figures if f.title in order_fig),
                  key=lambda f: order_fig[f.title])  # fmt: skip
    section.figures[:] = head + tail


def numeric_distributions(
    enc: EncodedQI, cells: GeneralizedQI, a: int, max_bins: int = 40
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bins of numeric QI ``a``, the original's counts and the release's expected counts
    (every range spread uniformly over it; a star over the whole domain). Integral columns of
    a small span get one bin per integer. O(n·bins).

    Missing values (``docs/guarantees/missing.md``) are left out of both: the m people
    missing the attribute stand behind m of the release's stars, the other stars are spread.

    Returns
    -------
    edges, original, release : ndarray
        ``len(edges) = bins + 1``; both count arrays sum to n − m.
    """
    present = ~enc.num_missing[:, a]
    values = enc.num[present, a]
    star = cells.num_star[:, a]
    if not len(values):  # nothing but missing values: nothing to compare
        return np.array([0.0, 1.0]), np.zeros(1), np.zeros(1)
    shown_lo, shown_hi = cells.num_lo[~star, a], cells.num_hi[~star, a]
    # the bins cover the original's values and every published range (another tool's ranges
    # may reach beyond the values seen)
    lo_v = float(min(values.min(), shown_lo.min(initial=np.inf)))
    hi_v = float(max(values.max(), shown_hi.max(initial=-np.inf)))
    integral = bool(enc.num_integral[a])
    if integral and hi_v - lo_v + 1 <= max_bins:
        edges = np.arange(lo_v, hi_v + 2)
    elif integral:  # integer edges: each value's unit interval falls in one bin
        edges = np.unique(np.linspace(lo_v, hi_v + 1, max_bins + 1).round())
    elif hi_v > lo_v:
        edges = np.linspace(lo_v, hi_v, max_bins + 1)
    else:
        edges = np.array([lo_v, lo_v + 1.0])
    original, _ = np.histogram(values, bins=edges)
    lo = np.where(star, values.min(), cells.num_lo[:, a])
    hi = np.where(star, values.max(), cells.num_hi[:, a])
    if integral:
        hi = hi + 1.0  # integer values lo…hi = the interval [lo, hi + 1)
    width = hi - lo
    spread = width > 0
    left = np.maximum(edges[None, :-1], lo[spread, None])
    right = np.minimum(edges[None, 1:], hi[spread, None])
    release = (np.clip(right - left, 0, None) / width[spread, None]).sum(axis=0)
    points, _ = np.histogram(lo[~spread], bins=edges)
    release = release + points
    gone = int((~present).sum())
    if gone:  # m stars stand for the missing values: spread only the others
        top = float(values.max()) + (1.0 if integral else 0.0)
        release = release - min(gone, int(star.sum())) * _one_star(float(values.min()), top, edges)
    return edges, original.astype(float), release


def _one_star(lo: float, hi: float, edges: np.ndarray) -> np.ndarray:
    """What one star adds to the bins: [lo, hi) spread uniformly (a point if empty)."""
    if hi <= lo:
        points, _ = np.histogram(np.full(1, lo), bins=edges)
        return points.astype(float)
    return np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0, None) / (hi - lo)


def categorical_distributions(
    enc: EncodedQI, cells: GeneralizedQI, a: int, top: int = TOP_VALUES
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Labels of categorical QI ``a`` (the ``top`` most common, then the rest summed), the
    original's counts and the release's expected counts (a value set spread uniformly over
    its values; a star over the whole domain). O(n + Σ set sizes)."""
    card = int(enc.cat_card[a])
    domain = [str(v) for v in enc.cat_domains[a]]
    present = ~enc.cat_missing[:, a]  # missing values: left out, as numeric_distributions does
    original = np.bincount(enc.cat[present, a], minlength=card).astype(float)
    star = cells.cat_star[:, a]
    if cat_nodes(cells, a) is not None:  # hierarchy nodes: each distinct node's leaves once
        _, group, sets = cat_distinct(cells, a)
        rows = np.bincount(group[~star], minlength=sets.shape[0]).astype(float)
    else:
        sets, rows = cells.cat_sets[a], (~star).astype(float)
    sizes = np.diff(sets.indptr)
    weights = np.repeat(np.where(sizes > 0, rows / np.maximum(sizes, 1), 0.0), sizes)
    keep = sets.indices < card
    counts = np.bincount(sets.indices[keep], weights=weights[keep], minlength=card)[:card]
    spread = int(star.sum()) - min(int((~present).sum()), int(star.sum()))
    release = counts.astype(float) + spread / max(card, 1)
    order = np.argsort(-original, kind="stable")
    if card > top + 1:
        shown, rest = order[:top], order[top:]
        labels = [domain[i] for i in shown] + [f"({len(rest)} others)"]
        return (
            labels,
            np.append(original[shown], original[rest].sum()),
            np.append(release[shown], release[rest].sum()),
        )
    return [domain[i] for i in order], original[order], release[order]


def unprotected_limits(manifest: Mapping[str, Any]) -> list[str]:
    """The sensitive columns a release publishes without protection: ``guarantee.unprotected``
    (``--l 1`` asked for; a named sensitive column otherwise gets distinct ℓ = 2), or, in a
    manifest written before that default, every named column without a model. O(columns)."""
    g = manifest.get("guarantee") or {}
    named = (manifest.get("parameters") or {}).get("sensitive") or []
    modelled = {m.get("column") for m in g.get("sensitive") or [] if isinstance(m, Mapping)}
    columns = g.get("unprotected") or [c for c in named if c not in modelled]
    return [
        f"Sensitive column {c} published without protection (--l 1): nothing bounds what an "
        "attacker learns about it from a person's candidate rows — a person whose candidate "
        "rows all show one value has it disclosed. Without --l 1 a named sensitive column gets "
        "distinct ℓ = 2."
        for c in columns
    ]


def _limits(manifest: Mapping[str, Any]) -> list[str]:
    g = manifest.get("guarantee") or {}
    params = manifest.get("parameters") or {}
    out = []
    model = g.get("model")
    if model == "(k,l)-anonymity":
        out.append(
            f"An attacker who knows more than {g.get('known')} attributes of a person is not "
            "covered: combinations of more values may be rare."
        )
    if model == "adaptive-anonymity":
        out.append(
            "Each person is protected at their own level only: a person whose level is 1 is "
            "not hidden at all."
        )
    out += unprotected_limits(manifest)
    if g.get("construction") == "rings":
        out.append(
            "An insider (this release was made of sensitive rings, --structure rings): a "
            "person who knows their own sensitive value and finds it among their rows learns "
            "every ring member's value — the ring's decomposition is public and its draw is one "
            "shift. Classes (the default structure) have no such weakness."
        )
    out.append(
        "Attributes not declared as quasi-identifiers are not generalized: the guarantee holds "
        "against an attacker who knows the listed quasi-identifiers "
        f"({', '.join(params.get('qi') or [])}) only."
    )
    return out


def _share(count: int, total: int) -> str:
    return f"{count} ({100 * count / max(total, 1):.1f}%)"


def dp_companion_lines(manifest: Mapping[str, Any]) -> list[str]:
    """The DP companion a release was published with (``dp_companion``), its privacy loss and
    its caveat, in words; none without one. O(1)."""
    block = manifest.get("dp_companion")
    if not isinstance(block, Mapping):
        return []
    return [
        f"A differentially private companion, {block.get('path')}, was published beside the "
        f"release: {block.get('queries')} count queries and {len(block.get('marginals') or [])} "
        f"marginals under (ε = {float(block.get('epsilon') or 0):.4g}, δ = "
        f"{float(block.get('delta') or 0):.3g})-DP ({block.get('library')}). "
        + str(block.get("caveat") or "")
    ]
