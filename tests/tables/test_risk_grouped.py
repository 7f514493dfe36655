"""Risk figures on groups of identical rows (issue 24, item 5): the class-aware candidates and
statistics give exactly the person-level figures (the earlier implementation, kept here as the
reference, and a brute force over all perfect matchings), in memory linear in the release."""

from __future__ import annotations

import dataclasses
import itertools
import sys
import tracemalloc

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.view import AttackerView
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import format_cells, parse_cells
from anonymatch.tables.job import ReleaseCheck
from anonymatch.tables.models.disclosure import SensitiveModel
from anonymatch.tables.models.sensitive import (
    check_model,
    check_release,
    encode_sensitive,
    grouped_person_stats,
    person_stats,
)
from anonymatch.tables.pipeline import verify_release
from anonymatch.tables.recode import recode
from anonymatch.tables.risk.risk import assess
from anonymatch.tables.verify import attacker_view
from tests.factories import dense_compatibility

QI, NUMERIC = ["age", "job"], ["age"]


@st.composite
def _releases(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A small original with repeated QI vectors and a release of it with repeated rows: the
    true matching, random extra edges and some complete classes, sensitive values (a
    categorical and a numeric one) attached through the true matching."""
    n = draw(st.integers(1, 8))
    ages = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    jobs = draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n))
    values = draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n))
    numbers = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    truth = draw(st.permutations(range(n)))
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=10))
    labels = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    original = pd.DataFrame({"age": ages, "job": jobs, "s": values, "v": numbers})
    enc = encode_qi(original, Schema.build(QI, NUMERIC, ["s", "v"]))
    pairs = [(i, truth[i]) for i in range(n)] + list(extra)
    if draw(st.booleans()):  # complete classes: person i with every row of its class
        pairs += [(i, truth[j]) for i in range(n) for j in range(n) if labels[i] == labels[j]]
    rows = np.array([i for i, _ in pairs], dtype=np.int64)
    cols = np.array([j for _, j in pairs], dtype=np.int64)
    cells = recode(GeneralizationGraph.from_edges(rows, cols, n), enc)
    release = pd.DataFrame(format_cells(cells, enc))
    for name, shown in (("s", values), ("v", numbers)):
        column = np.empty(n, dtype=object)
        column[np.array(truth)] = shown
        release[name] = column if name == "s" else column.astype(np.int64)
    return original, release


def _brute_force(original: pd.DataFrame, release: pd.DataFrame) -> np.ndarray:
    """Person × row: the pairs that lie in some perfect matching, by enumeration."""
    fits = dense_compatibility(original, release.astype({"age": str}), QI, NUMERIC)
    n = len(original)
    cand = np.zeros((n, n), dtype=bool)
    for perm in itertools.permutations(range(n)):
        if all(fits[i, perm[i]] for i in range(n)):
            cand[np.arange(n), perm] = True
    return cand


def _person_level(published: object, original: object) -> AttackerView | None:
    """The candidates computed person by person (every person and every row a group of its
    own, on the expanded person × row graph): the reference the grouped computation must
    reproduce."""
    view = attacker_view(published, original)  # type: ignore[arg-type]
    return AttackerView.singletons(view.person_matrix()).candidates()


class _PersonLevelView(AttackerView):
    """The table's view, whose candidates are computed person by person."""

    def candidates(self, matching: np.ndarray | None = None) -> AttackerView | None:
        return AttackerView.singletons(self.person_matrix()).candidates(matching)


def _person_level_view(published: object, original: object) -> AttackerView:
    view = attacker_view(published, original)  # type: ignore[arg-type]
    return _PersonLevelView(view.c, view.counts, view.inverse, view.mult, view.group)


def _person_matrix(published: object, original: object) -> sp.csr_array | None:
    cand = _person_level(published, original)
    return None if cand is None else cand.person_matrix()


@settings(max_examples=80, deadline=None)
@given(_releases(), st.sampled_from([None, 1, 2, 3]))
def test_grouped_risk_is_the_person_level_risk(
    case: tuple[pd.DataFrame, pd.DataFrame], k: int | None
) -> None:
    original, release = case
    schema = Schema.build(QI, [*NUMERIC, "v"], ["s", "v"])
    enc = encode_qi(original, schema)
    cells = parse_cells(release, enc)
    # the candidates: grouped = person-level (earlier implementation) = brute force
    grouped = attacker_view(cells, enc).candidates()
    assert grouped is not None
    expected = _brute_force(original, release)
    person_level = _person_matrix(cells, enc)
    assert person_level is not None
    assert np.array_equal(person_level.toarray().astype(bool), expected)
    assert np.array_equal(grouped.person_matrix().toarray().astype(bool), expected)
    # the per-person statistics: the same arrays, bit for bit
    for name, ordered in (("s", False), ("v", True)):
        sens = encode_sensitive(name, release[name], original[name], ordered)
        model = SensitiveModel(name, t=1.0, ordered=ordered)
        new, old = (
            grouped_person_stats(grouped, sens, model),
            person_stats(person_level, sens, model),
        )
        for f in dataclasses.fields(old):
            a, b = getattr(new, f.name), getattr(old, f.name)
            assert (a is None and b is None) or np.array_equal(a, b), f.name
    # the whole report: the same JSON as with the person-level candidates
    kwargs = dict(qi=QI, numeric=[*NUMERIC, "v"], sensitive=["s", "v"], k=k)
    report = assess(original, release, ReleaseCheck.build(kwargs))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys.modules[assess.__module__], "attacker_view", _person_level_view)
        reference = assess(original, release, ReleaseCheck.build(kwargs))
    assert report.to_dict() == reference.to_dict()


def test_one_class_release_in_linear_memory() -> None:
    """Every published row the same generalized row: one class of n people (k = n). The
    person-level candidates are n² pairs (36 million here, hundreds of MB); grouped they are
    one pair per distinct original QI vector."""
    n = 6000
    rng = np.random.default_rng(0)
    original = pd.DataFrame(
        {"age": rng.integers(17, 91, n), "job": rng.choice(list("abcdefgh"), n),
         "s": rng.choice(list("xyz"), n)}
    )  # fmt: skip
    release = pd.DataFrame({"age": ["17..90"] * n, "job": ["a|b|c|d|e|f|g|h"] * n})
    release["s"] = original["s"].to_numpy()[rng.permutation(n)]
    tracemalloc.start()
    try:
        report = assess(
            original,
            release,
            ReleaseCheck.build(dict(qi=QI, numeric=NUMERIC, sensitive=["s"], k=n)),
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.candidates.min == report.candidates.max == n
    assert report.k_holds and report.class_k == n
    assert report.sensitive[0].min_distinct == 3
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.0f} MiB"


VERIFY_MODELS = [
    SensitiveModel("s", l=2),
    SensitiveModel("s", l=2, diversity="entropy"),
    SensitiveModel("s", l=2, diversity="recursive", c=1.5),
    SensitiveModel("s", t=0.3),
    SensitiveModel("v", t=0.2, ordered=True),
    SensitiveModel("v", l=3, t=0.5, ordered=True),
]


@settings(max_examples=80, deadline=None)
@given(_releases())
def test_grouped_verification_is_the_person_level_verification(
    case: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    """``check_release`` on groups (issue 25: the verifier of ℓ/t releases) gives the checks of
    the person-level candidates, figure for figure, reason for reason."""
    original, release = case
    schema = Schema.build(QI, [*NUMERIC, "v"], ["s", "v"])
    enc = encode_qi(original, schema)
    cells = parse_cells(release, enc)
    new = check_release(cells, enc, release, original, VERIFY_MODELS)
    person_level = _person_matrix(cells, enc)
    assert person_level is not None
    old = []
    for model in VERIFY_MODELS:
        sens = encode_sensitive(model.column, release[model.column], original[model.column],
                                model.ordered)  # fmt: skip
        old.append(check_model(person_level, sens, model))
    assert [c.to_dict() for c in new] == [c.to_dict() for c in old]


def test_one_class_verification_in_linear_memory() -> None:
    """The release of one class of n people (what t-closeness leaves of fars_subset at k = 5):
    the verifier of its models works on groups, not on the n² person × row pairs."""
    n = 6000
    rng = np.random.default_rng(0)
    original = pd.DataFrame(
        {"age": rng.integers(17, 91, n), "job": rng.choice(list("abcdefgh"), n),
         "s": rng.choice(list("xyz"), n)}
    )  # fmt: skip
    release = pd.DataFrame({"age": ["17..90"] * n, "job": ["a|b|c|d|e|f|g|h"] * n})
    release["s"] = original["s"].to_numpy()[rng.permutation(n)]
    check = ReleaseCheck.build(dict(qi=QI, numeric=NUMERIC, sensitive=["s"], k=5, t=0.01, l=3))
    tracemalloc.start()
    try:
        report = verify_release(release, original, check)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.passed, report.reason
    (sens,) = report.sensitive
    assert sens["people"] == n and sens["worst_l"] == 3 and sens["worst_emd"] == 0
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.0f} MiB"
