"""Report sections of a relational-transaction release (``anonymize-rt``): people with a row and
a set.

With the files, the people table (ORIGINAL), the items table (the manifest's
``input.items_path``, or ``--items``) and the release, the guarantee is re-verified as
``verify-rt`` does (``relational.verify.verify_relational``: the joint compatibility graph
from the published records and the originals only, its k-factor, ℓ-diversity / t-closeness)
with the manifest's k and models, and compared with the manifest's certificate. Risk: the
figures of ``risk-rt`` (``relational.risk``): the candidates of every person on the joint graph
(the published records whose QI cells *and* set part they match, in some one-to-one pairing),
prosecutor risk 1 / candidates, identical records and the original as a baseline; and the
columns the release keeps unchanged against the QIs (the tables' leakage check,
``relational.risk.release_leakage``; without the files, the manifest's ``leakage`` block), each
flagged column first among the limits. Utility: the
figures of ``evaluate-rt`` (relational GCP, uncertain items per record, relative error of
1,000 count queries mixing attribute ranges and items, fixed query seed 0).

Cost: the verifier's joint compatibility (O(QI-compatible group pairs · set size)), the
k-factor, and O(queries · n · (d + set sizes)) for the workload: about a minute on INFORMS
2008 (33,961 people) on 2 cores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anonymatch.core.errors import InputError
from anonymatch.core.params import param
from anonymatch.report import plots
from anonymatch.report.check import ClaimCheck, compare
from anonymatch.report.model import (
    NEEDS_FILES,
    Figure,
    Inputs,
    KindSections,
    Section,
    Table,
    file_name,
)
from anonymatch.report.tables import (
    _leak_limits,
    _leakage_table,
    _manifest_leakage,
    known_person,
    unprotected_limits,
)

QUERIES = 1000
"""Count queries of the utility workload (``evaluate-rt``'s default)."""


def sections(manifest: Mapping[str, Any], inputs: Inputs, published: Section) -> KindSections:
    """Published facts, the re-verified guarantee, risk and utility of a relational release.

    Parameters
    ----------
    manifest : mapping
        A checked manifest of ``anonymize-rt``.
    inputs : Inputs
        The files; ``options`` may give ``items`` (the items table, else the manifest's
        ``input.items_path``), ``id_column``, ``item_column`` and ``fmt``.
    published : Section
        The shared "what was published" section, completed here.

    Returns
    -------
    KindSections
        With ``check`` the re-verification (None without the files).

    Raises
    ------
    InputError
        No items table known, an items table whose SHA-256 differs from the manifest's, or
        unreadable data.

    Notes
    -----
    Time and memory: see the module docstring.

    References
    ----------
    Doka et al., freeform generalization (the k-factor of the compatibility graph); Xue et al.,
    nonreciprocal recoding of set-valued data (the set part's matching rule).
    """
    g = manifest.get("guarantee") or {}
    loss = manifest.get("loss") or {}
    source = manifest.get("input") or {}
    params = manifest.get("parameters") or {}
    published.facts += [
        ("items table", file_name(source.get("items_path") or "") or "(one long table: PEOPLE)"),
        ("distinct items", source.get("items")),
        ("(person, item) rows", source.get("item_rows")),
        ("people without items", source.get("people_without_items")),
    ]
    risk = Section("risk", "Re-identification and disclosure risk")
    utility = Section("utility", "Utility: what the release keeps")
    utility.facts += [
        ("relational GCP (from the run)", _percent(loss.get("gcp"))),
        ("uncertain items per record (from the run)", _number(loss.get("mean_uncertain"))),
        ("mean threshold max_errors (from the run)", _number(loss.get("mean_max_errors"))),
        ("item weight λ", params.get("item_weight")),
    ]
    limits = [
        "The guarantee covers an adversary who knows a person's quasi-identifiers and any of "
        "their items: every person matches at least k published records through k disjoint "
        "assignments. Columns published unchanged (neither QI nor sensitive) are not protected.",
        *unprotected_limits(manifest),
    ]
    if g.get("sensitive"):
        limits.append(
            "ℓ-diversity / t-closeness bound what the candidates reveal about the sensitive "
            "columns; the frequencies of their values in the whole data are still published."
        )
    guarantee = Section("guarantee-kind", "")
    parts = KindSections(published, guarantee, risk, utility, limits)
    if not inputs.complete:
        risk.missing = utility.missing = NEEDS_FILES
        _manifest_leakage(risk, limits, manifest.get("leakage"))
        return parts
    job, people, release, enc = _read(manifest, inputs)
    from anonymatch.app.tablejob import unchecked_claims
    from anonymatch.relational.metrics import relational_utility
    from anonymatch.relational.pipeline import check_criteria
    from anonymatch.relational.verify import verify_relational

    claimed = manifest.get("verification") or {}
    rerun = verify_relational(release, people, enc, job.k, models=job.models).to_dict()
    rerun.update({n: v.to_dict() for n, v in check_criteria(people, release, job).items()})
    population = job.population if isinstance(job.population, str) else None
    problems = compare(claimed if isinstance(claimed, Mapping) else {}, rerun) + [
        f"unchecked: {claim}" for claim in unchecked_claims(manifest, population)
    ]
    parts.check = ClaimCheck(
        "mismatch" if problems else "checked", verification=rerun, problems=problems
    )
    guarantee.bullets.append(
        "Re-verified as verify-rt does: the joint compatibility graph (QI cells and set part) "
        "rebuilt from the release and the originals only, and its k-factor."
    )
    from anonymatch.relational.risk import RiskQuestion, assess_relational, release_leakage

    question = RiskQuestion(job.schema, job.na)
    _risk(risk, assess_relational(people, release, question), job.k)
    leakage = release_leakage(people, release, question)
    _leak_limits(limits, leakage)
    _leakage_table(risk, leakage)
    u = relational_utility(people, release, enc, QUERIES, 2, 0)
    utility.tables.append(
        Table(
            ["figure", "value"],
            [
                ["relational GCP (from the files)", _percent(u.relational_gcp)],
                ["uncertain items per record", f"{u.mean_uncertain:.2f}"],
                ["mean threshold max_errors", f"{u.mean_max_errors:.2f}"],
                ["query error, mean relative", f"{u.query_error:.4f}"],
                ["query error, median relative", f"{u.query_error_median:.4f}"],
            ]
            + [[f"NCP of {a}", _percent(x)] for a, x in u.ncp.items()],
            caption=f"{people.n} people; {u.queries} count queries with two attribute "
            "predicates and one item predicate (fixed query seed 0), as evaluate-rt.",
        )
    )
    sizes_o = np.diff(people.items.matrix.indptr)
    base = release.sets.base
    sizes_r = np.diff(base.indptr) if hasattr(base, "indptr") else np.zeros(release.n, int)
    utility.figures.append(
        Figure(
            "Items per person and per record",
            plots.two_histograms(sizes_o, sizes_r, ("original", "release (base items)"),
                                 "items", "Items per person / record"),
        )
    )  # fmt: skip
    return parts


def _risk(section: Section, figures: Any, k: int) -> None:
    """The figures of ``risk-rt`` (``relational.risk``: candidates per person on the joint
    graph, prosecutor risk, identical records, the original as a baseline): facts and the
    candidates' histogram."""
    cand, pr, base = figures.candidates, figures.prosecutor, figures.original
    section.facts += [
        ("candidates per person: min", cand.min),
        ("median", cand.median),
        ("mean", f"{cand.mean:.2f}"),
        ("people with fewer than k", sum(c for v, c in cand.histogram.items() if v < k)),
        ("prosecutor risk (1 / candidates): max", f"{pr.max:.3f}"),
        ("prosecutor risk: mean", f"{pr.mean:.3f}"),
        (f"people above {pr.threshold:g}", pr.above),
        ("identical records (class k)", figures.class_k),
        ("publishing QIs and item sets unchanged: unique people", base.sample_uniques),
    ]
    section.paragraphs.append(
        "A person's candidates are the published records they could be: each QI value lies in "
        "the record's cell, their item set agrees with the record's items outside its "
        "uncertain ones and differs from them in at most max_errors items, and the record lies "
        "in some one-to-one pairing of people with records (as anonymatch risk-rt computes "
        "them)."
    )
    section.figures.append(
        Figure(
            "Candidates per person on the joint graph",
            plots.count_histogram(dict(cand.histogram), "candidate records", "people", k),
        )
    )
    known_person(section, figures.known)


def _read(manifest: Mapping[str, Any], inputs: Inputs) -> tuple[Any, Any, Any, Any]:
    """The job the manifest records, the people, the release and the encoded QIs."""
    from anonymatch.app.tablejob import manifest_keywords
    from anonymatch.relational.io import read_relational, read_release
    from anonymatch.relational.job import RelationalJob
    from anonymatch.relational.pipeline import encode
    from anonymatch.report.tables import _qi_types
    from anonymatch.tables.columns.schema import MissingCodes
    from anonymatch.tables.io import CsvOptions
    from anonymatch.tables.models import RELATIONAL_CRITERIA

    params = manifest.get("parameters") or {}
    source = manifest.get("input") or {}
    options = inputs.options
    id_column = options.get("id_column") or params.get("id_column")
    item_column = options.get("item_column") or params.get("item_column")
    if not isinstance(id_column, str) or not isinstance(item_column, str):
        raise InputError(
            "the manifest names no id column and item column (input.id_column, "
            "input.item_column): give them with the report's id and item column options"
        )
    items = options.get("items") or source.get("items_path")
    if items is None and source.get("from_frames"):  # the Python front, given DataFrames
        if source.get("frames_items", True):
            raise InputError(
                "the release was made from DataFrames (anonymatch.relational.anonymize on "
                "from_frames): the manifest names no file; give ORIGINAL (the people table), "
                "RELEASE and `items` (the items table) as files"
            )
    elif items is None and "items_path" not in source:  # an older manifest of the Python front
        raise InputError(
            f"the manifest records no items table (input.items_path): give {param('items')}"
        )
    if items is not None:
        _check_items(str(items), source.get("items_sha256"))
    try:
        keywords = manifest_keywords({**manifest, "data_kind": "table"})
        codes = keywords.get("na_values") or MissingCodes()
        qi_codes = MissingCodes(
            codes.tokens, {c: v for c, v in codes.columns.items() if c != item_column}
        )
        claims = (
            "k",
            "qi",
            "numeric",
            "sensitive",
            *RELATIONAL_CRITERIA.defaults(),
        )  # fmt: skip  (the criteria: the sensitive models, the population's)
        recorded = {key: keywords[key] for key in claims if keywords.get(key) is not None}
        job = RelationalJob.build({**recorded, "types": _qi_types(params), "na_values": qi_codes})
    except (InputError, TypeError, KeyError) as exc:
        raise InputError(f"the manifest does not describe a valid relational job: {exc}") from None
    assert inputs.original is not None and inputs.release is not None
    people = read_relational(
        inputs.original,
        None if items is None else str(items),
        id_column,
        item_column,
        codes.for_column(item_column),
        CsvOptions(fmt=str(options.get("fmt") or source.get("format") or "auto")),
    )
    release = read_release(inputs.release, people, job.schema.qi)
    return job, people, release, encode(people, job.schema, job.na)


def _check_items(path: str, expected: Any) -> None:
    """InputError if the items table is missing or not the one the manifest names."""
    import os

    if not os.path.exists(path):
        raise InputError(f"items table not found: {path} (give {param('items')})")
    if expected:
        from anonymatch.core.manifest import file_digest

        if file_digest(path) != expected:
            raise InputError(
                f"{path} is not the items table the manifest describes (its SHA-256 differs)"
            )


def _percent(value: Any) -> str:
    return "—" if value is None else f"{100 * float(value):.2f}%"


def _number(value: Any) -> str:
    return "—" if value is None else f"{float(value):.2f}"
