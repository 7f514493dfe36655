"""Risk figures of table releases: exact small cases, class releases, every method's releases,
the original-table baseline, bad inputs, and a brute-force oracle (hypothesis)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import format_cells
from anonymatch.tables.job import ReleaseCheck
from anonymatch.tables.methods import names
from anonymatch.tables.models.adaptive import anonymize_adaptive
from anonymatch.tables.recode import recode
from anonymatch.tables.risk.risk import Distribution, assess
from tests.factories import random_frame

QI = "n0,n1,c0,c1"
NUMERIC = "n0,n1"


def _hand_made() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Five people; row r3 fits only person 2, so person 2's other compatible row (r2) lies in
    no perfect matching and person 2 has one candidate. True match: 0→r0, 1→r1, 2→r3, 3→r2,
    4→r4."""
    original = pd.DataFrame(
        {
            "age": [20, 21, 30, 31, 40],
            "sex": ["F", "F", "M", "M", "M"],
            "disease": ["flu", "flu", "cold", "flu", "cold"],
            "score": [1, 2, 3, 1, 3],
        }
    )
    release = pd.DataFrame(
        {
            "age": ["20..21", "20..21", "30..40", "30", "31..40"],
            "sex": ["F", "F", "M", "M", "M"],
            "disease": ["flu", "flu", "flu", "cold", "cold"],
            "score": [1, 2, 1, 3, 3],
        }
    )
    return original, release


def test_hand_made_release_exact_figures() -> None:
    original, release = _hand_made()
    report = anonymatch.risk(
        original, release, qi="age,sex", numeric="age,score", sensitive="disease,score", k=2
    )
    assert report.people == 5
    assert report.candidates == Distribution(1, 1.8, 2.0, 2, {1: 1, 2: 4})
    assert report.prosecutor.max == 1.0
    assert report.prosecutor.mean == pytest.approx(0.6)
    assert report.prosecutor.above == 5 and report.prosecutor.above_share == 1.0
    assert (report.class_k, report.identical_groups) == (1, 4)  # r0 and r1 are identical
    assert report.k == 2 and report.k_holds is False  # r3 fits one person only

    disease, score = report.sensitive
    assert disease.column == "disease" and disease.ground_distance == "equal"
    assert (disease.values, disease.prior_max) == (2, 0.6)
    assert disease.homogeneous == 3 and disease.homogeneous_share == 0.6  # people 0, 1, 2
    assert disease.posterior_max == 1.0
    assert disease.posterior_mean == pytest.approx(0.8)
    assert (disease.posterior_half_share, disease.posterior_one_share) == (1.0, 0.6)
    # equal distance: person 0 (flu only) 0.4, person 2 (cold only) 0.6, people 3, 4 0.1
    assert disease.distance_max == pytest.approx(0.6)
    assert disease.distance_mean == pytest.approx(0.32)
    assert (disease.min_distinct, disease.min_effective_l) == (1, 1.0)
    # mechanism bound min(1, c_v / 2): people 0 and 1 have two candidates showing flu
    assert (disease.mechanism_bound_max, disease.mechanism_disclosed) == (1.0, 2)

    # ordered distance over the values 1 < 2 < 3 (table 0.4, 0.2, 0.4), divided by m − 1 = 2:
    # person 0 {1, 2} 0.25, person 2 {3} 0.5, people 3 and 4 {1, 3} 0.1
    assert score.ground_distance == "ordered" and score.values == 3
    assert score.distance_max == pytest.approx(0.5)
    assert score.distance_mean == pytest.approx(0.24)
    assert score.min_effective_l == 1.0 and score.homogeneous == 1

    base = report.original
    assert (base.records, base.classes, base.sample_uniques) == (5, 5, 5)
    assert base.prosecutor.max == base.prosecutor.mean == 1.0


def test_threshold_is_strict() -> None:
    original, release = _hand_made()
    report = assess(
        original, release, ReleaseCheck.build(dict(qi=["age", "sex"], numeric=["age"])), 0.5
    )
    assert report.prosecutor.above == 1  # risk 1 (person 2); 0.5 is not above 0.5
    assert report.to_dict()["release"]["prosecutor"]["above_threshold"] == 1  # type: ignore[index]


def test_to_dict_is_json_ready() -> None:
    import json

    original, release = _hand_made()
    out = anonymatch.risk(original, release, qi="age,sex", numeric="age", sensitive="disease")
    data = json.loads(json.dumps(out.to_dict()))
    assert data["schema"] == "anonymatch-risk/1"
    assert set(data) == {
        "schema", "people", "parameters", "release", "sensitive", "original", "known_person",
        "explanation",
    }  # fmt: skip
    assert data["release"]["candidates"]["histogram"] == {"1": 1, "2": 4}
    assert "claimed_k" not in data["release"]
    assert "mechanism" not in data["sensitive"]["disease"]
    assert data["parameters"]["k"] is None and data["parameters"]["threshold"] == 0.2
    assert any("pyCANON" in line for line in data["explanation"])


def test_class_release_risk_is_one_over_class_size() -> None:
    frame = random_frame(60, 4)
    result = anonymatch.anonymize(
        frame, k=4, qi=QI, numeric=NUMERIC, sensitive="s", method="mondrian", seed=2
    )
    report = anonymatch.risk(frame, result, qi=QI, numeric=NUMERIC, sensitive="s", k=4)
    sizes = result.release.groupby(QI.split(","), sort=False).size().to_numpy()
    per_record = np.repeat(sizes, sizes)  # each person's class is the class's own size
    assert report.candidates == Distribution.of(per_record)
    assert report.class_k == report.candidates.min >= 4
    assert report.identical_groups == len(sizes)
    assert report.prosecutor.max == pytest.approx(1 / sizes.min())
    assert report.prosecutor.mean == pytest.approx(len(sizes) / 60)
    assert report.k_holds is True
    assert any("identical rows" in line for line in report.explanation)
    # homogeneous people are exactly those of classes showing a single sensitive value
    one_value = result.release.groupby(QI.split(","), sort=False)["s"].nunique().to_numpy() == 1
    assert report.sensitive[0].homogeneous == int(sizes[one_value].sum())


@pytest.mark.parametrize("method", names(levels=False, regular=True))
def test_freeform_release_has_k_candidates(method: str) -> None:
    frame = random_frame(12 if method == "mip" else 30, 5)
    k = 3
    result = anonymatch.anonymize(
        frame, k=k, qi=QI, numeric=NUMERIC, sensitive="s", method=method, seed=1, time_limit=2.0,
        l=1,  # the method's own graph: s unprotected
    )  # fmt: skip
    report = anonymatch.risk(frame, result, qi=QI, numeric=NUMERIC, sensitive="s", k=k)
    assert report.candidates.min >= k
    assert report.prosecutor.max <= 1 / k
    assert report.prosecutor.above == 0 or 1 / k > report.threshold
    assert report.k_holds is True
    assert report.sensitive[0].mechanism_bound_max is not None


@pytest.mark.parametrize("method", names(levels=True))
def test_suppression_release_has_level_candidates(method: str) -> None:
    frame = random_frame(24, 6)
    release = anonymize_adaptive(
        frame, QI.split(","), 3, method=method, numeric=NUMERIC, sensitive="s", seed=3, l=1
    )
    report = anonymatch.risk(frame, release.table, qi=QI, numeric=NUMERIC, sensitive="s", k=3)
    assert report.candidates.min >= 3 and report.prosecutor.max <= 1 / 3


def test_original_baseline_sample_uniques() -> None:
    # classes on (a, b): (1,x)×3, (1,y)×2, (2,x)×1, (3,y)×1 → 2 sample uniques
    original = pd.DataFrame(
        {"a": [1, 1, 1, 1, 1, 2, 3], "b": ["x", "x", "x", "y", "y", "x", "y"], "s": list("ppqpqqp")}
    )
    report = anonymatch.risk(original, original, qi="a,b", numeric="a", threshold=0.4)
    base = report.original
    assert (base.records, base.classes, base.sample_uniques) == (7, 4, 2)
    assert base.sample_unique_share == pytest.approx(2 / 7)
    assert base.class_size == Distribution(1, 15 / 7, 2.0, 3, {1: 2, 2: 2, 3: 3})
    assert base.prosecutor.max == 1.0 and base.prosecutor.mean == pytest.approx(4 / 7)
    assert base.prosecutor.above == 4  # risks 1, 1, 1/2, 1/2 exceed 0.4; 1/3 does not
    # the original published as is: candidates are the classes
    assert report.candidates == base.class_size and report.class_k == 1


def test_drop_missing_and_row_count_hint() -> None:
    frame = random_frame(20, 7)
    frame.loc[3, "c0"] = "?"
    result = anonymatch.anonymize(frame, k=2, qi=QI, numeric=NUMERIC, drop_missing=True, seed=1)
    report = anonymatch.risk(frame, result, qi=QI, numeric=NUMERIC, drop_missing=True)
    assert report.people == 19 and report.to_dict()["parameters"]["dropped_missing"] == 1  # type: ignore[index]
    with pytest.raises(InputError, match="19 rows, the original 20.*`drop_missing`"):
        anonymatch.risk(frame, result, qi=QI, numeric=NUMERIC)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"threshold": 0}, InputError, r"^threshold must be in \(0, 1\], got 0$"),
        ({"threshold": 1.5}, InputError, "threshold must be in"),
        ({"threshold": float("nan")}, InputError, "threshold must be in"),
        ({"threshold": True}, InputError, "threshold must be a number"),
        ({"threshold": "0.2"}, InputError, "threshold must be a number"),
        ({"k": 0}, InputError, "^`k` must be an integer of at least 1"),
        ({"qi": 3}, TypeError, "^qi must be"),
        ({"sensitive": "nope"}, InputError, "unknown column 'nope'"),
        ({"numeric": "age,disease"}, InputError, "sensitive column 'disease' has the non-number"),
        ({"numeric": "age,other"}, InputError, "neither a quasi-identifier nor sensitive"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], error: type, message: str) -> None:
    original, release = _hand_made()
    args: dict[str, object] = {"qi": "age,sex", "numeric": "age", "sensitive": "disease"}
    args.update(kwargs)
    with pytest.raises(error, match=message):
        anonymatch.risk(original, release, **args)  # type: ignore[arg-type]


def test_release_that_cannot_be_of_this_original() -> None:
    original, release = _hand_made()
    args = {"qi": "age,sex", "numeric": "age", "sensitive": "disease"}
    with pytest.raises(InputError, match="4 rows, the original 5$"):
        anonymatch.risk(original, release.iloc[:4], **args)  # type: ignore[arg-type]
    no_match = release.assign(age=["20..21", "20..21", "30", "30", "31..40"])  # 2 rows fit 1
    with pytest.raises(InputError, match="cannot be paired one to one"):
        anonymatch.risk(original, no_match, **args)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no column 'disease'"):
        anonymatch.risk(original, release.drop(columns="disease"), **args)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no column 'sex'"):
        anonymatch.risk(original, release.drop(columns="sex"), **args)  # type: ignore[arg-type]
    altered = release.assign(disease=["flu"] * 5)
    with pytest.raises(InputError, match="are not the original's"):
        anonymatch.risk(original, altered, **args)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="malformed numeric cell"):
        anonymatch.risk(original, release.assign(age="x"), **args)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^release must be a pandas DataFrame"):
        anonymatch.risk(original, [1, 2], **args)  # type: ignore[arg-type]


def test_numeric_sensitive_schema_only_relaxes_sensitive_columns() -> None:
    assert Schema.build(["a"], ["a", "s"], ["s"]).numeric == {"a", "s"}
    with pytest.raises(InputError, match="'b' is neither a quasi-identifier"):
        Schema.build(["a"], ["b"], ["s"])


# --------------------------------------------------------------- brute-force oracle (hypothesis)


@st.composite
def _releases(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A tiny original and a release of it built from a random generalization graph that holds
    a perfect matching (the true one), sensitive values attached through it."""
    n = draw(st.integers(1, 6))
    ages = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    jobs = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    values = draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n))
    truth = draw(st.permutations(range(n)))  # person i's row is truth[i]
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=8))
    original = pd.DataFrame({"age": ages, "job": jobs, "s": values})
    enc = encode_qi(original, Schema.build(["age", "job"], ["age"], ["s"]))
    rows = np.array(list(range(n)) + [i for i, _ in extra], dtype=np.int64)
    cols = np.array(list(truth) + [j for _, j in extra], dtype=np.int64)
    cells = recode(GeneralizationGraph.from_edges(rows, cols, n), enc)
    release = pd.DataFrame(format_cells(cells, enc))
    shown = np.empty(n, dtype=object)
    shown[np.array(truth)] = values
    release["s"] = shown
    return original, release


def _contains(cell: str, value: object) -> bool:
    if ".." in cell:
        lo, hi = cell.split("..")
        return float(lo) <= float(value) <= float(hi)  # type: ignore[arg-type]
    return str(value) in cell.split("|") or cell == str(value)


@settings(max_examples=60, deadline=None)
@given(_releases())
def test_figures_match_brute_force(case: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    original, release = case
    n = len(original)
    fits = [
        [
            _contains(release["age"][j], original["age"][i])
            and _contains(release["job"][j], original["job"][i])
            for j in range(n)
        ]
        for i in range(n)
    ]
    cand = np.zeros((n, n), dtype=bool)
    for perm in itertools.permutations(range(n)):
        if all(fits[i][perm[i]] for i in range(n)):
            cand[np.arange(n), perm] = True
    sizes = cand.sum(axis=1)
    report = anonymatch.risk(original, release, qi="age,job", numeric="age", sensitive="s", k=2)
    assert report.candidates == Distribution.of(sizes)
    assert report.prosecutor.max == pytest.approx(1 / sizes.min())
    assert report.prosecutor.mean == pytest.approx(float(np.mean(1 / sizes)))
    shown = release["s"].to_numpy()
    distinct = np.array([len(set(shown[cand[i]])) for i in range(n)])
    top = np.array([max(list(shown[cand[i]]).count(v) for v in shown[cand[i]]) for i in range(n)])
    s = report.sensitive[0]
    assert s.homogeneous == int((distinct == 1).sum())
    assert s.min_distinct == distinct.min()
    assert s.posterior_max == pytest.approx(float((top / sizes).max()))
    assert s.mechanism_disclosed == int((top >= 2).sum())
    assert s.min_effective_l <= distinct.min() + 1e-9  # exp(entropy) ≤ number of values
    assert math.isclose(s.posterior_one_share, s.homogeneous_share)
    # the k-factor decided on the candidate graph is the verifier's
    assert (
        report.k_holds
        == anonymatch.verify(original, release, k=2, qi="age,job", numeric="age").passed
    )


def test_ring_release_figures_are_over_its_certified_graph(tmp_path, monkeypatch, capsys):
    import functools
    import json

    from anonymatch.cli import main
    from anonymatch.tables.methods import circulant

    monkeypatch.setattr(
        circulant,
        "sensitive_build",
        functools.partial(circulant.sensitive_build, prefer_rings=True),
    )
    rng = np.random.default_rng(1)
    data = pd.DataFrame(
        {
            "age": rng.integers(20, 60, 120),
            "zip": rng.choice(list("abcd"), 120),
            "s": rng.choice([f"v{i}" for i in range(4)], 120),
        }
    )
    kw = {"qi": "age,zip", "numeric": "age", "sensitive": "s"}
    result = anonymatch.tables.anonymize(
        data, k=4, l=2, diversity="entropy", seed=1, structure="rings", **kw
    )
    certificate = result.report["guarantee"]["certificate"]
    # the posterior of the attacker who knows the graph, by hand: a ring window's k rows
    shown = result.release["s"].to_numpy()
    in_ring = np.zeros(len(shown), bool)
    largest, homogeneous = 0.0, 0
    for ring in certificate["rings"]:
        in_ring[ring] = True
        for p in range(len(ring)):
            window = [shown[ring[(p - a) % len(ring)]] for a in range(4)]
            top = max(window.count(v) for v in set(window))
            largest, homogeneous = max(largest, top / 4), homogeneous + (top == 4)
    assert in_ring.all()  # rings everywhere (prefer_rings on this table)
    figures = anonymatch.tables.risk(data, result, k=4, **kw)  # the certificate of the report
    assert figures.basis == "certificate" and figures.to_dict()["parameters"]["sensitive_basis"]
    (s,) = figures.sensitive
    assert s.posterior_max == pytest.approx(largest) and s.homogeneous == homogeneous
    plain = anonymatch.tables.risk(data, result.release, k=4, **kw)
    assert plain.basis == "candidates"
    # the command line: candidate-based without the manifest, said so; certified with it
    source, release, report = tmp_path / "p.csv", tmp_path / "r.csv", tmp_path / "r.json"
    data.to_csv(source, index=False)
    result.release.to_csv(release, index=False)
    report.write_text(json.dumps(result.report))
    args = ["risk", str(source), str(release), "--qi", "age,zip", "--numeric", "age"]
    capsys.readouterr()
    assert main([*args, "--sensitive", "s", "-q"]) == 0
    assert "candidate-based" in capsys.readouterr().out
    assert main(["risk", str(source), str(release), "--manifest", str(report), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["parameters"]["sensitive_basis"] == "certificate"
    assert document["sensitive"]["s"]["posterior"]["max"] == pytest.approx(largest)
    assert main(["risk", str(source), str(release), "--manifest", str(report), "-q"]) == 0
    assert "certificate proves" in capsys.readouterr().out
    # a certificate whose ring graph does not fit: bad input
    manifest = json.loads(report.read_text())
    ring = manifest["guarantee"]["certificate"]["rings"][0]
    manifest["guarantee"]["certificate"]["rings"][0] = ring[::2] + ring[1::2]
    report.write_text(json.dumps(manifest))
    assert main(["risk", str(source), str(release), "--manifest", str(report)]) == 2
