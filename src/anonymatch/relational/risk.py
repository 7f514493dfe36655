"""Risk figures of a relational-transaction release, on the joint compatibility graph.

The attacker knows each person's quasi-identifiers (QIs) *and* their items, and sees the whole
release. Person i's **candidates** are the published records that can be i's in some world
consistent with the release: the records whose QI cells cover i's values and whose set part
agrees with i's items (the attacker's view of ``relational.verify.joint_view``, rebuilt from
the published records and the originals only) that lie in some perfect matching of people to
records (Dulmage–Mendelsohn on groups of identical people,
``core.view.AttackerView.candidates``). An attacker who knows only part of a person's items
has at least as many candidates, so every figure below is the worst case.

The figures are those of the table ``risk`` (``tables.risk.risk``), in the same
``RiskReport`` (schema ``anonymatch-risk/1``):

* candidates per person (distribution), prosecutor risk 1 / candidates (max, mean, people
  above a threshold; El Emam & Dankar, JAMIA 2008);
* ``class_k``: the smallest group of identical published records (QI cells and set part),
  what an equivalence-class checker reports;
* per sensitive column: homogeneous people, the largest posterior, distance to the table,
  distinct and effective ℓ, and with a claimed k the mechanism-aware bound min(1, c_v / k);
* with a claimed k: whether the joint graph has the k-factor (as ``verify-rt``);
* the original alone as a baseline: people with identical QIs *and* identical item sets form
  a class; sample uniques, class size and prosecutor risk.

Complexity: the verifier's joint compatibility (O(QI-compatible group pairs · set size)), then
Dinic's max-flow and a strongly-connected-components pass on the contracted graph (groups of
identical people × records), O(pairs log pairs) for the sensitive figures; memory O(n·d +
joint pairs). Never n × n.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from anonymatch.core.errors import InputError
from anonymatch.core.view import AttackerView
from anonymatch.relational.io import People, RelationalRelease
from anonymatch.tables.columns.schema import EncodedQI, MissingCodes, Schema
from anonymatch.tables.risk.known import known_figures
from anonymatch.tables.risk.risk import (
    DEFAULT_THRESHOLD,
    Distribution,
    ProsecutorRisk,
    RiskReport,
    SensitiveRisk,
    _baseline,
    _sensitive_risk,
    check_threshold,
)

if TYPE_CHECKING:
    from anonymatch.tables.risk.leakage import LeakageReport


@dataclass(frozen=True)
class RiskQuestion:
    """What a relational risk assessment is asked: the columns (``schema``: QIs, numeric QIs
    and ordered sensitive columns, typed QIs, sensitive columns), the QIs' missing codes
    (``na``), the level the release claims (``k``, or None) and the prosecutor-risk
    ``threshold`` in (0, 1]."""

    schema: Schema
    na: MissingCodes
    k: int | None = None
    threshold: float = DEFAULT_THRESHOLD


def joint_candidates(release: RelationalRelease, people: People, enc: EncodedQI) -> AttackerView:
    """Every person's candidates on the joint graph, on groups of identical people (same QI
    vector and item set; published records ungrouped).

    Raises InputError when the joint compatibility graph has no perfect matching: the release
    cannot be a release of these people. Time: the verifier's joint compatibility, then a
    max-flow on O(U + n + joint pairs) arcs; memory O(joint pairs)."""
    from anonymatch.relational.verify import joint_view

    if release.n != people.n:
        raise InputError(
            f"the release does not match the original: it has {release.n} records, the "
            f"original {people.n} people"
        )
    cand = joint_view(release, people, enc).candidates()
    if cand is None:
        raise InputError(
            "the release does not match the original: its records cannot be paired one to one "
            "with the people whose QI cells and items they match (another items table, "
            "missing codes or `qi`?)"
        )
    return cand


def identical_records(release: RelationalRelease) -> tuple[int, int]:
    """(smallest group, number of groups) of published records identical in their QI cells and
    their set part (items, uncertain items, max_errors). O(n · (d + set sizes))."""
    if release.n == 0:
        return 0, 0
    frame = release.table[list(release.qi)].astype(str).reset_index(drop=True)
    frame.columns = list(range(frame.shape[1]))  # no clash with the set part's keys
    sets = release.sets
    frame["items"] = _rows_text(sets.base)
    frame["uncertain"] = _rows_text(sets.uncertain)
    frame["max_errors"] = np.asarray(sets.max_errors)
    counts = frame.value_counts(dropna=False)
    return int(counts.min()), len(counts)


def _rows_text(matrix: object) -> list[str]:
    """Each row's sorted column indices as text. O(nnz log)."""
    import scipy.sparse as sp

    m = sp.csr_array(matrix)
    m.sort_indices()
    return [m.indices[m.indptr[j] : m.indptr[j + 1]].tobytes().hex() for j in range(m.shape[0])]


def assess_relational(
    people: People, release: RelationalRelease, question: RiskQuestion
) -> RiskReport:
    """Risk figures of a relational-transaction release against the original people.

    Parameters
    ----------
    people : People
        The original people (row + item set each).
    release : RelationalRelease
        The published records (made by any method: freeform, class baseline, another tool).
    question : RiskQuestion
        Columns, missing codes, claimed k and threshold.

    Returns
    -------
    RiskReport
        The table ``risk``'s figures computed on the joint graph; ``original`` is the baseline
        of publishing the QIs and the item sets unchanged.

    Raises
    ------
    InputError
        A bad threshold or level, a missing sensitive column, or a release that cannot be a
        release of these people (another count, no perfect matching on the joint graph).

    Notes
    -----
    Time: the verifier's joint compatibility plus Dinic's max-flow and a strongly connected
    components pass on the contracted joint graph (and a second max-flow for a claimed k);
    memory O(n·d + joint pairs).

    References
    ----------
    .. [1] K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008.
    .. [2] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform
       generalization", ASIACCS 2015 (candidates in some perfect matching).
    """
    from anonymatch.relational.pipeline import encode

    threshold = check_threshold(question.threshold)
    schema, k = question.schema, question.k
    for name in schema.sensitive:
        if name not in release.table.columns:
            raise InputError(f"the release has no sensitive column {name!r}")
        if name not in people.table.columns:
            raise InputError(f"the people table has no sensitive column {name!r}")
    enc = encode(people, schema, question.na)
    cand = joint_candidates(release, people, enc)
    sizes = cand.per_original()[cand.inverse]
    # decided on the candidates: a k-factor uses candidate edges only (as the table ``risk``)
    k_holds = None if k is None else cand.has_k_factor(int(k))
    class_k, groups = identical_records(release)
    num = set(schema.numeric)
    sens = tuple(
        _sensitive_risk(cand, name, release.table[name], people.table[name], name in num, k)
        for name in schema.sensitive
    )
    dist = Distribution.of(sizes)
    return RiskReport(
        people=people.n,
        qi=schema.qi,
        numeric=tuple(
            a
            for a in (*schema.qi, *schema.sensitive)
            if a in schema.numeric and a not in schema.types.scaled
        ),
        dropped_missing=0,
        k=None if k is None else int(k),
        k_holds=k_holds,
        candidates=dist,
        prosecutor=ProsecutorRisk.of(sizes, threshold),
        class_k=class_k,
        identical_groups=groups,
        sensitive=sens,
        original=_baseline(cand.counts, cand.inverse, threshold),
        explanation=explain(dist.min, class_k, sens),
        known=known_figures(cand, release.table, people.table, schema),
    )


def explain(
    min_candidates: int, class_k: int, sensitive: tuple[SensitiveRisk, ...]
) -> tuple[str, ...]:
    """Plain-language lines for a relational release. O(number of sensitive columns)."""
    lines = [
        "Freeform k-anonymity over the joint graph: every person matches at least k published "
        "records on their quasi-identifiers and their items together, through k disjoint ways "
        "of pairing all people with all records, one of which is the true one.",
        "The baseline ('original') publishes the quasi-identifiers and the item sets unchanged: "
        "people with the same values and the same items form a class.",
    ]
    if class_k < min_candidates:
        lines.append(
            "Equivalence-class checkers count groups of identical records; here records are "
            f"mostly all different, so they report k = {class_k} although every person has at "
            f"least {min_candidates} candidate records."
        )
    else:
        lines.append(
            "This release is made of groups of identical records (equivalence classes), so "
            f"class-based checkers report the same k = {class_k}."
        )
    if any(s.homogeneous for s in sensitive):
        lines.append(
            "Homogeneous people show their sensitive value on every candidate record: being "
            "hidden among k records does not hide that value (protect it with l-diversity or "
            "t-closeness)."
        )
    return tuple(lines)


def release_leakage(
    people: People, release: RelationalRelease, question: RiskQuestion
) -> LeakageReport:
    """What the columns a relational release keeps unchanged give away about its QIs: the
    tables' leakage check (``tables.risk.leakage.check_leakage``) with rules drawn from the
    people table and applied to the published records (their QI cells parsed from the text,
    ``tables.io.cells.parse_cells``, beside the kept values they show). The set part is not
    a kept column; the id column and identifiers are never published, so never checked.

    Parameters
    ----------
    people : People
        The original people.
    release : RelationalRelease
        The published records.
    question : RiskQuestion
        The QIs, their types and missing codes, the sensitive columns (their ``role``).

    Returns
    -------
    LeakageReport
        Per kept column: unique rows, free text, rows narrowed and pinned per QI, the flags.

    Notes
    -----
    Time and memory: ``check_leakage``'s, O(c·d·(n log n + nnz)) for c kept columns and d
    QIs.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.relational import anonymize
    >>> from anonymatch.relational.io import from_frames
    >>> from anonymatch.tables.columns.schema import MissingCodes, Schema
    >>> rows = pd.DataFrame({"id": list("abcd"), "age": [30, 31, 40, 41]})
    >>> people = from_frames(rows, pd.DataFrame({"id": list("abcd"), "code": list("xxyy")}),
    ...                      "id", "code")
    >>> result = anonymize(people, k=2, qi=["age"], numeric=["age"], seed=0)
    >>> question = RiskQuestion(Schema.build(["age"], ["age"]), MissingCodes())
    >>> release_leakage(people, result.release, question).flagged
    []
    """
    from anonymatch.relational.pipeline import encode
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.risk.leakage import check_leakage

    enc = encode(people, question.schema, question.na)
    cells = parse_cells(release.table.loc[:, list(release.qi)], enc)
    return check_leakage(people.table, enc, cells, release.table, question.schema)
