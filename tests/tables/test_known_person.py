"""The known-person attacker (``tables.risk.known``) against brute force: every perfect matching
of hand-built classes, rings and small freeform graphs listed, conditioned on one known pair."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from anonymatch.core.view import AttackerView
from anonymatch.tables.risk.known import known_person


def brute(c: np.ndarray, shown: np.ndarray) -> dict[str, dict[str, float]]:
    """Every figure by listing the perfect matchings of the person × row matrix ``c``: for
    each person a and each row r some world gives a, the worlds pairing them, equally likely;
    the others are the people of a's component; certain = newly certain."""
    n = len(c)
    perms = np.array(list(itertools.permutations(range(n))))
    worlds = perms[c[np.arange(n), perms].all(axis=1)]
    cand = np.zeros_like(c, dtype=bool)
    cand[np.repeat(np.arange(n), len(worlds)), worlds.T.reshape(-1)] = True
    graph = sp.bmat(
        [[None, sp.csr_array(cand.astype(int))], [sp.csr_array(cand.T.astype(int)), None]]
    )
    _, label = connected_components(graph, directed=False)
    out = {}
    for name, f in (("rows", lambda w: w), ("s", lambda w: shown[w])):
        before = (f(worlds) == f(worlds[:1])).all(axis=0)
        worst, share_worst, post, means, shares = 0, 0.0, 0.0, [], []
        for a in range(n):
            others = [b for b in range(n) if b != a and label[b] == label[a]]
            rs = np.unique(worlds[:, a])
            got = []
            for r in rs:
                v = f(worlds[worlds[:, a] == r])
                certain = sum(bool((v[:, b] == v[0, b]).all()) and not before[b] for b in others)
                got.append(certain)
                worst = max(worst, certain)
                share_worst = max(share_worst, certain / len(others) if others else 0.0)
                for b in others:
                    post = max(post, np.unique(v[:, b], return_counts=True)[1].max() / len(v))
            means.append(np.mean(got))
            shares.append(np.mean(got) / len(others) if others else 0.0)
        out[name] = {"certain_max": worst, "certain_mean": float(np.mean(means)),
                     "share_max": share_worst, "share_mean": float(np.mean(shares)),
                     "posterior_max": post}  # fmt: skip
    return out


def view_of(c: np.ndarray) -> AttackerView:
    cand = AttackerView.singletons(sp.csr_array(c)).candidates()
    assert cand is not None
    return cand


def same(fig: dict[str, object], want: dict[str, float], posterior: bool = True) -> None:
    for key, value in want.items():
        if key == "posterior_max" and not posterior:
            continue
        assert fig[key] == pytest.approx(value), key


@st.composite
def graphs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """A small compatibility matrix with a perfect matching (a random permutation plus random
    edges), its rows shuffled into blocks sometimes (classes), and values per row."""
    n = draw(st.integers(2, 6))
    perm = np.array(draw(st.permutations(list(range(n)))))
    bits = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    c = np.array(bits, dtype=bool).reshape(n, n)
    c[np.arange(n), perm] = True
    shown = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    return c, shown


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_exact_listing_matches_brute_force(case: tuple[np.ndarray, np.ndarray]) -> None:
    c, shown = case
    fig = known_person(view_of(c), {"s": shown})
    want = brute(c, shown)
    assert fig.units["freeform_sampled"] == 0
    same(fig.rows, want["rows"])
    same(fig.sensitive["s"], want["s"])


@settings(max_examples=40, deadline=None)
@given(graphs())
def test_dulmage_mendelsohn_path_matches_brute_force(case: tuple[np.ndarray, np.ndarray]) -> None:
    """exact_max = 0: every component goes through the hypotheses' Dulmage–Mendelsohn path,
    all of them computed (fewer than ``samples``): the certain figures are exact."""
    c, shown = case
    fig = known_person(view_of(c), {"s": shown}, exact_max=0, samples=1000)
    want = brute(c, shown)
    assert fig.samples == 0
    same(fig.rows, want["rows"], posterior=False)
    same(fig.sensitive["s"], want["s"], posterior=False)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(2, 4), min_size=1, max_size=2), st.data())
def test_classes_match_brute_force(sizes: list[int], data: st.DataObject) -> None:
    """Complete bicliques (classes): the closed form equals the listing."""
    n = sum(sizes)
    c = np.zeros((n, n), bool)
    start = 0
    for m in sizes:
        c[start : start + m, start : start + m] = True
        start += m
    shown = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    fig = known_person(view_of(c), {"s": shown})
    assert fig.units["classes"] == len(sizes)
    want = brute(c, shown)
    same(fig.rows, want["rows"])
    same(fig.sensitive["s"], want["s"])


@settings(max_examples=40, deadline=None)
@given(graphs(), st.data())
def test_grouped_views_match_brute_force(
    case: tuple[np.ndarray, np.ndarray], data: st.DataObject
) -> None:
    """People with identical QIs and identical published rows are groups of the view (as
    ``risk`` builds it): the figures are those of the person-level listing."""
    c, shown = case
    n = len(c)
    inverse = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n)))
    inverse = np.unique(inverse, return_inverse=True)[1]  # people grouped: same QIs
    person = np.array([c[np.flatnonzero(inverse == inverse[i])].any(axis=0) for i in range(n)])
    group = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n)))
    group = np.unique(group, return_inverse=True)[1]  # rows grouped: same cells
    person = np.array([person[:, group == group[j]].any(axis=1) for j in range(n)]).T
    counts, mult = np.bincount(inverse), np.bincount(group)
    first = [np.flatnonzero(group == g)[0] for g in range(len(mult))]
    groups = np.array([person[np.flatnonzero(inverse == u)[0], first] for u in range(len(counts))])
    matrix = sp.csr_array(groups.astype(np.int8))
    cand = AttackerView.build(matrix, counts, inverse, mult, group).candidates()
    if cand is None:  # the grouping lost every perfect matching
        return
    fig = known_person(cand, {"s": shown})
    want = brute(person, shown)
    same(fig.rows, want["rows"])
    same(fig.sensitive["s"], want["s"])
    fig = known_person(cand, {"s": shown}, exact_max=0, samples=1000)
    same(fig.rows, want["rows"], posterior=False)
    same(fig.sensitive["s"], want["s"], posterior=False)


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 9), st.integers(2, 4), st.data())
def test_a_ring_is_unlocked_by_one_known_person(m: int, k: int, data: st.DataObject) -> None:
    """A ring of m rows (the certificate's worlds are its k shifts): the known person fixes the
    shift, so every other member's row is certain; a value is made certain unless the member's
    window already showed one value — checked against the shifts listed."""
    k = min(k, m)
    shown = np.array(data.draw(st.lists(st.integers(0, 2), min_size=m, max_size=m)))
    c = np.zeros((m, m), bool)
    for p in range(m):
        c[p, (p - np.arange(k)) % m] = True  # position p's k rows
    fig = known_person(view_of(c), {"s": shown}, certificate=(k, [np.arange(m)]))
    assert fig.units == {"classes": 0, "rings": 1, "freeform_exact": 0, "freeform_sampled": 0}
    assert fig.rows["certain_max"] == m - 1 and fig.rows["share_mean"] == 1.0
    # brute force over the k shifts: person p has row p − t under shift t
    worlds = np.array([(np.arange(m) - t) % m for t in range(k)])
    before = (shown[worlds] == shown[worlds[0]]).all(axis=0)
    certain = [(m - 1) - int(before[np.arange(m) != a].sum()) for a in range(m)]
    assert fig.sensitive["s"]["certain_max"] == max(certain)
    assert fig.sensitive["s"]["certain_mean"] == pytest.approx(np.mean(certain))
    assert fig.sensitive["s"]["posterior_max"] == 1.0


def test_the_sample_agrees_with_every_hypothesis() -> None:
    """On a 3-regular circulant graph of 40 people, 100 sampled hypotheses estimate the mean
    that all 120 give, within four standard errors."""
    n = 40
    c = np.zeros((n, n), bool)
    for t in (0, 1, 5):
        c[np.arange(n), (np.arange(n) + t) % n] = True
    shown = (np.arange(n) * 7 % 5 == 0).astype(int)
    every = known_person(view_of(c), {"s": shown}, samples=1000)
    sampled = known_person(view_of(c), {"s": shown}, samples=100, seed=3)
    assert every.samples == 0 and sampled.samples == 100
    for a, b in ((every.rows, sampled.rows), (every.sensitive["s"], sampled.sensitive["s"])):
        se = max(b["share_mean_standard_error"], 1e-9)
        assert abs(a["share_mean"] - b["share_mean"]) <= 4 * se + 1e-12
        assert b["certain_max"] <= a["certain_max"]


def test_sampling_states_its_error() -> None:
    """A freeform component too large to list, more hypotheses than the budget: they are
    sampled, and the mean comes with a standard error."""
    n = 12
    c = np.zeros((n, n), bool)
    for t in (0, 1, 3):
        c[np.arange(n), (np.arange(n) + t) % n] = True
    shown = np.arange(n) % 3
    fig = known_person(view_of(c), {"s": shown}, samples=10)
    assert fig.units["freeform_sampled"] == 1 and fig.samples == 10
    assert fig.sampled_people == n
    assert fig.rows["share_mean_standard_error"] >= 0
    exact = known_person(view_of(c), {"s": shown}, exact_max=0, samples=1000)
    assert fig.rows["certain_max"] <= exact.rows["certain_max"]
    json.dumps(fig.to_dict())


def test_cli_risk_json_text_and_rings(tmp_path, monkeypatch, capsys) -> None:
    """``risk --json`` carries ``known_person``: on a class release (mondrian) every unit is
    a class; with a ring release's manifest, a known ring member unlocks the whole ring."""
    import functools

    import anonymatch
    from anonymatch.cli import main
    from anonymatch.tables.methods import circulant
    from tests.factories import random_frame

    data = tmp_path / "people.csv"
    frame = random_frame(60, 3)
    frame["s"] = [f"v{i % 4}" for i in range(60)]
    frame.to_csv(data, index=False)
    roles = ["--qi", "n0,n1,c0,c1", "--numeric", "n0,n1", "--sensitive", "s"]
    classes = tmp_path / "classes.csv"
    args = ["anonymize", str(data), "-o", str(classes), "--k", "3", *roles, "--seed", "1", "-q"]
    assert main([*args, "--method", "mondrian"]) == 0
    capsys.readouterr()
    assert main(["risk", str(data), str(classes), *roles, "--json"]) == 0
    known = json.loads(capsys.readouterr().out)["known_person"]
    assert known["units"]["freeform_exact"] == known["units"]["freeform_sampled"] == 0
    assert known["units"]["classes"] >= 1 and known["people"] == 60
    front = anonymatch.risk(
        pd.read_csv(data), pd.read_csv(classes), qi="n0,n1,c0,c1", numeric="n0,n1", sensitive="s"
    )
    assert front.to_dict()["known_person"] == known
    assert main(["risk", str(data), str(classes), *roles]) == 0
    text = capsys.readouterr().out
    assert "one known person makes certain the rows of up to" in text
    assert "one known person makes certain the s values of up to" in text
    # a ring release, read with its manifest: the rings are unlocked by one member
    monkeypatch.setattr(
        circulant,
        "sensitive_build",
        functools.partial(circulant.sensitive_build, prefer_rings=True),
    )
    rings, report = tmp_path / "rings.csv", tmp_path / "rings.json"
    assert main(["anonymize", str(data), "-o", str(rings), "--report", str(report), "--k", "3",
                 *roles, "--l", "2", "--structure", "rings", "--seed", "1", "-q"]) == 0  # fmt: skip
    cert = json.loads(report.read_text())["guarantee"]["certificate"]
    capsys.readouterr()
    assert main(["risk", str(data), str(rings), "--manifest", str(report), "--json"]) == 0
    known = json.loads(capsys.readouterr().out)["known_person"]
    assert known["units"]["rings"] == len(cert["rings"]) >= 1
    biggest = max(len(r) for r in cert["rings"])
    assert known["rows"]["certain_max"] == biggest - 1 and known["rows"]["posterior_max"] == 1.0


def test_cli_risk_rt_reports_the_known_person(tmp_path, capsys) -> None:
    """``risk-rt``: the known-person figures on the joint graph, in JSON and in words."""
    from anonymatch.cli import main

    people = pd.DataFrame({"pid": [f"p{i}" for i in range(12)], "age": list(range(30, 42)),
                           "sex": list("FM") * 6, "dis": list("abc") * 4})  # fmt: skip
    items = pd.DataFrame({"pid": [f"p{i % 12}" for i in range(20)],
                          "code": [str(i % 4) for i in range(20)]})  # fmt: skip
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    read = ["--items", str(tmp_path / "items.csv"), "--id", "pid", "--item-column", "code",
            "--qi", "age,sex", "--numeric", "age", "--sensitive", "dis"]  # fmt: skip
    out = tmp_path / "r.jsonl"
    assert main(["anonymize-rt", str(tmp_path / "people.csv"), *read, "-k", "3", "-o", str(out),
                 "-q", "--seed", "1"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["risk-rt", str(tmp_path / "people.csv"), str(out), *read, "--json"]) == 0
    known = json.loads(capsys.readouterr().out)["known_person"]
    assert known["people"] == 12 and set(known["sensitive"]) == {"dis"}
    assert 0 <= known["rows"]["share_mean"] <= 1
    assert main(["risk-rt", str(tmp_path / "people.csv"), str(out), *read]) == 0
    assert "one known person makes certain the dis values" in capsys.readouterr().out


def test_the_manifest_risk_block_is_risk_s_figure() -> None:
    """``anonymize`` records ``risk.known_person`` in its manifest: the figures ``risk``
    computes from the release and the original."""
    import anonymatch
    from tests.factories import random_frame

    frame = random_frame(50, 4)
    frame["s"] = [f"v{i % 3}" for i in range(50)]
    kw = {"qi": "n0,n1,c0,c1", "numeric": "n0,n1", "sensitive": "s"}
    result = anonymatch.anonymize(frame, k=3, seed=1, **kw)
    block = result.report["risk"]["known_person"]
    assert block == anonymatch.risk(frame, result.release, **kw).to_dict()["known_person"]
    assert block["people"] == 50 and set(block["sensitive"]) == {"s"}


@st.composite
def grouped_views(draw: st.DrawFn) -> tuple[AttackerView, np.ndarray, np.ndarray]:
    """A candidate view on groups (people with identical QIs, rows with identical cells) of
    up to 40 people, from a planted perfect matching plus random pairs between groups, and
    two sensitive columns shown by the rows."""
    n = draw(st.integers(2, 40))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    n_u, n_g = int(rng.integers(1, n + 1)), int(rng.integers(1, n + 1))
    inverse = np.r_[np.arange(n_u), rng.integers(0, n_u, n - n_u)]
    group = np.r_[np.arange(n_g), rng.integers(0, n_g, n - n_g)]
    truth = rng.permutation(n)  # person i's row truth[i]
    pairs = rng.random((n_u, n_g)) < draw(st.floats(0.0, 0.5))
    pairs[inverse, group[truth]] = True
    view = AttackerView.build(
        sp.csr_array(pairs.astype(np.int8)),
        np.bincount(inverse),
        inverse,
        np.bincount(group, minlength=n_g),
        group,
    )
    cand = view.candidates(truth)
    assert cand is not None
    return cand, rng.integers(0, 2, n), rng.integers(0, 4, n)


@settings(max_examples=60, deadline=None)
@given(grouped_views())
def test_conditioning_matches_the_max_flow_reference(
    case: tuple[AttackerView, np.ndarray, np.ndarray],
) -> None:
    """Every hypothesis (a, r) of ``_Part.certain`` (alternating path, compiled Tarjan on the
    groups, early-exit counts) against the person-level reference: a max-flow and scipy's
    components on the graph without a and r, the people left with one candidate row (or
    value) and not already so."""
    from anonymatch.tables.risk.known import _Part

    cand, s, t = case
    part = _Part(cand, {"s": s, "t": t})
    person = cand.person_matrix().toarray().astype(bool)
    n = len(person)
    shown = {"s": s, "t": t}

    def single(matrix: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
        out = {"rows": matrix.sum(axis=1) == 1}
        for name, v in shown.items():
            out[name] = np.array([len(set(v[rows[m]].tolist())) == 1 for m in matrix])
        return out

    before = single(person, np.arange(n))
    for a, r in zip(*np.nonzero(person), strict=True):
        who, rows = np.flatnonzero(np.arange(n) != a), np.flatnonzero(np.arange(n) != r)
        left = AttackerView.singletons(sp.csr_array(person[np.ix_(who, rows)].astype(np.int8)))
        left_cand = left.candidates()
        assert left_cand is not None  # r is a candidate of a: some world pairs them
        after = single(left_cand.person_matrix().toarray().astype(bool), rows)
        got = part.certain(int(a), int(r))
        for name in ("rows", "s", "t"):
            assert got[name] == int((after[name] & ~before[name][who]).sum()), (a, r, name)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 12), st.integers(0, 12), st.floats(0.0, 0.6), st.integers(0, 2**31))
def test_bipartite_components_are_scipy_s_labels(n_u: int, n_g: int, p: float, seed: int) -> None:
    """The compiled components of a U × G pattern carry scipy's labels exactly (the same
    numbering, by smallest node: the units are then visited, and sampled, in the same order),
    isolated rows and columns included."""
    from anonymatch.core.view import component_labels

    rng = np.random.default_rng(seed)
    c = sp.csr_array((rng.random((n_u, n_g)) < p).astype(np.int8))
    c.sort_indices()
    graph = sp.bmat([[None, c], [c.T, None]], format="csr") if n_u and n_g else None
    if graph is None:  # no pairs possible: every node alone
        expected = np.arange(n_u + n_g)
    else:
        expected = connected_components(graph, directed=False)[1]
    got = component_labels(c.indptr, c.indices, n_u + n_g, n_u)
    assert got.tolist() == expected.tolist()
