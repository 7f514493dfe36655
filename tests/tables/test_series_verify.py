"""verify_series (issue 40): the composition attacker of a release series, against brute force.

Tiny series are built by hand: each release is made of classes (every member's cells the class's
range of ages and set of sexes, each row showing its own person's value). The oracle enumerates
every assignment of people to rows (all permutations) for the strong attacker's candidates and
tests cell containment directly for the weak attacker's compatible rows.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.tables.series import verify_series

VALUES = "abcde"


def release_of(year: pd.DataFrame, classes: list[list[int]], seed: int = 0) -> pd.DataFrame:
    """The release of ``year`` made of ``classes`` (lists of row positions): each member's row
    carries the class's cells and the member's own value; rows shuffled."""
    rows = []
    for members in classes:
        part = year.iloc[members]
        lo, hi = int(part["age"].min()), int(part["age"].max())
        age = str(lo) if lo == hi else f"{lo}..{hi}"
        sex = "|".join(sorted(set(part["sex"])))
        rows += [{"age": age, "sex": sex, "dx": dx} for dx in part["dx"]]
    frame = pd.DataFrame(rows, columns=["age", "sex", "dx"])
    order = np.random.default_rng(seed).permutation(len(frame))
    return frame.iloc[order].reset_index(drop=True)


def check(years: list[pd.DataFrame], releases: list[pd.DataFrame], k: int, l: int):  # noqa: E741
    return verify_series(
        years, releases, person_id="pid", qi=["age", "sex"], numeric=["age"], sensitive="dx",
        k=k, l=l,
    )  # fmt: skip


def compatible(year: pd.DataFrame, release: pd.DataFrame) -> np.ndarray:
    """Person × row: the row's cells contain the person's age and sex (direct parsing)."""
    out = np.zeros((len(year), len(release)), bool)
    for j, (age, sex) in enumerate(zip(release["age"], release["sex"], strict=True)):
        lo, _, hi = str(age).partition("..")
        low, high = int(lo), int(hi or lo)
        ages = year["age"].astype(int).to_numpy()
        out[:, j] = (ages >= low) & (ages <= high) & year["sex"].isin(sex.split("|")).to_numpy()
    return out


def candidates(comp: np.ndarray) -> np.ndarray | None:
    """Person × row: the pair lies in some perfect matching (all permutations); None when
    there is none."""
    n = comp.shape[0]
    cand = np.zeros_like(comp)
    for perm in itertools.permutations(range(n)):
        if all(comp[i, perm[i]] for i in range(n)):
            cand[np.arange(n), list(perm)] = True
    return cand if cand.any() or n == 0 else None


def oracle(years, releases, k, l):  # noqa: E741
    """Per person id: (strong values, weak values, largest posterior, changed, releases, largest
    share, fewest candidates after intersection), and the verdict, computed directly."""
    shown: dict[str, list] = {}
    ok = True
    for year, release in zip(years, releases, strict=True):
        comp = compatible(year, release)
        cand = candidates(comp)
        if cand is None:
            ok = False
            cand = comp
        ok &= bool(cand.sum(axis=1).min() >= k)
        dx = release["dx"].to_numpy()
        for i, pid in enumerate(year["pid"]):
            strong = dx[cand[i]]
            shares = {v: float(np.mean(strong == v)) for v in set(strong)}
            shown.setdefault(pid, []).append(
                (set(strong), set(dx[comp[i]]), shares, year["dx"].iloc[i], list(strong))
            )
    out = {}
    for pid, parts in shown.items():
        strong = set.intersection(*(p[0] for p in parts))
        weak = set.intersection(*(p[1] for p in parts))
        mass = {v: np.prod([p[2][v] for p in parts]) for v in strong}
        post = max(mass.values()) / sum(mass.values()) if mass else np.nan
        inside = [[p[2][v] for v in strong] for p in parts]
        share = max(max(c) / sum(c) for c in inside) if strong else np.nan
        changed = len({p[3] for p in parts}) > 1
        # the candidate rows of each release whose value survives the intersection
        after = min(sum(v in strong for v in p[4]) for p in parts)
        out[pid] = (len(strong), len(weak), post, changed, len(parts), share, after)
        if len(strong) < l:  # changed value or not
            ok = False
    return out, ok


@st.composite
def tiny_series(draw):
    """2 or 3 releases of 2–6 people drawn from 8, each split into random classes; ages +1 a
    release; a value may change."""
    n = 8
    base = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "age": draw(st.lists(st.integers(20, 23), min_size=n, max_size=n)),
            "sex": draw(st.lists(st.sampled_from("FM"), min_size=n, max_size=n)),
            "dx": draw(st.lists(st.sampled_from(VALUES[:3]), min_size=n, max_size=n)),
        }
    )
    years, releases = [], []
    for t in range(draw(st.integers(2, 3))):
        people = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=6, unique=True))
        year = base.iloc[sorted(people)].reset_index(drop=True)
        year["age"] = year["age"] + t
        if draw(st.booleans()):
            year.loc[0, "dx"] = draw(st.sampled_from(VALUES[:3]))
        cuts = sorted(draw(st.sets(st.integers(1, len(year) - 1), max_size=3)))
        bounds = [0, *cuts, len(year)]
        order = draw(st.permutations(range(len(year))))
        classes = [list(order[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        years.append(year.astype({"age": str}))
        releases.append(release_of(year, classes, seed=t))
    return years, releases, draw(st.integers(1, 3)), draw(st.integers(1, 3))


@settings(max_examples=60, deadline=None)
@given(tiny_series())
def test_figures_match_brute_force_over_all_assignments(series) -> None:
    years, releases, k, l = series  # noqa: E741
    report = check(years, releases, k, l)
    expected, ok = oracle(years, releases, k, l)
    assert report.passed == ok
    for p, pid in enumerate(report.person_ids):
        strong, weak, post, changed, count, share, after = expected[pid]
        assert report.strong_values[p] == strong, pid
        assert report.fewest_after[p] == after, pid
        assert (report.after[p] <= report.candidates[p]).all()
        assert report.weak_values[p] == weak, pid
        assert report.changed[p] == changed
        assert report.present[p].sum() == count
        assert report.weak_values[p] >= report.strong_values[p]  # candidates ⊆ compatible
        if np.isnan(post):
            assert np.isnan(report.posterior[p]) and np.isnan(report.share[p])
        else:
            assert report.posterior[p] == pytest.approx(post)
            assert report.share[p] == pytest.approx(share)
    counts = report.counts()
    multi = report.repeated & ~report.changed
    assert counts["strong"]["below_l"] == sum(
        expected[pid][0] < l for pid in report.person_ids[multi]
    )
    assert counts["weak"]["certain"] == sum(
        expected[pid][1] == 1 for pid in report.person_ids[multi]
    )
    narrow = counts["candidates_after_intersection"]
    assert narrow["below_k"] == sum(expected[pid][6] < k for pid in report.person_ids[multi])
    changed = report.repeated & report.changed
    assert narrow["changed_below_k"] == sum(
        expected[pid][6] < k for pid in report.person_ids[changed]
    )


@st.composite
def invariant_series(draw):
    """Two releases of classes where every continuing person keeps their class's signature:
    departures, arrivals with a value of the signature, ages +1, cells recomputed."""
    l = draw(st.integers(2, 3))  # noqa: E741
    k = draw(st.integers(l, 4))
    sigs = [
        draw(st.lists(st.sampled_from(VALUES), min_size=l, max_size=l, unique=True))
        for _ in range(draw(st.integers(1, 3)))
    ]
    fresh = itertools.count()

    def person(dx: str, age: int | None = None) -> dict:
        return {"pid": f"p{next(fresh)}", "age": draw(st.integers(20, 60)) if age is None
                else age, "sex": draw(st.sampled_from("FM")), "dx": dx}  # fmt: skip

    first, second = [], []
    for sig in sigs:
        size = draw(st.integers(k, k + 2))
        members = [person(v) for v in sig]
        members += [person(draw(st.sampled_from(sig))) for _ in range(size - len(sig))]
        first.append(members)
        stay = [dict(m, age=m["age"] + 1) for m in members if draw(st.booleans())]
        for v in sig:  # arrivals cover what the departures took
            if all(m["dx"] != v for m in stay):
                stay.append(person(v))
        while len(stay) < k:
            stay.append(person(draw(st.sampled_from(sig))))
        second.append(stay)
    years, releases = [], []
    for t, classes in enumerate((first, second)):
        year = pd.DataFrame([m for c in classes for m in c])
        bounds = np.cumsum([0] + [len(c) for c in classes])
        members = [list(range(a, b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        releases.append(release_of(year, members, seed=t))
        years.append(year.astype({"age": str}))
    return years, releases, k, l


@settings(max_examples=60, deadline=None)
@given(invariant_series())
def test_releases_keeping_signatures_pass(series) -> None:
    years, releases, k, l = series  # noqa: E741
    report = check(years, releases, k, l)
    assert report.passed, report.reason
    assert report.counts()["strong"]["below_l"] == 0
    both = report.repeated
    assert (report.strong_values[both] >= l).all()
    assert (report.candidates[report.present] >= k).all()


@st.composite
def class_series(draw):
    """2 or 3 releases of classes of ≥ k people drawn from 12, any person in any class each
    release (no invariant kept), ages +1 a release, values changing at random; with each
    person's R_p, the values shown by all their classes, worked out here."""
    l = draw(st.integers(2, 3))  # noqa: E741
    k = draw(st.integers(2, 4))
    n = 12
    base = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "age": draw(st.lists(st.integers(20, 60), min_size=n, max_size=n)),
            "sex": draw(st.lists(st.sampled_from("FM"), min_size=n, max_size=n)),
            "dx": draw(st.lists(st.sampled_from(VALUES[:4]), min_size=n, max_size=n)),
        }
    )
    years, releases, kept, held = [], [], {}, {}
    for t in range(draw(st.integers(2, 3))):
        people = draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=n, unique=True))
        year = base.iloc[sorted(people)].reset_index(drop=True)
        year["age"] = year["age"] + t
        for i in range(len(year)):
            if draw(st.integers(0, 4)) == 0:
                year.loc[i, "dx"] = draw(st.sampled_from(VALUES[:4]))
        count = draw(st.integers(1, len(year) // k))
        order = draw(st.permutations(range(len(year))))
        classes = [list(order[c::count]) for c in range(count)]  # each ≥ k people
        for members in classes:
            shown = set(year["dx"].iloc[members])
            for pid in year["pid"].iloc[members]:
                kept[pid] = kept[pid] & shown if pid in kept else shown
                held.setdefault(pid, []).append(list(year["dx"].iloc[members]))
        releases.append(release_of(year, classes, seed=t))
        years.append(year.astype({"age": str}))
    return years, releases, k, l, kept, held


@settings(max_examples=80, deadline=None)
@given(class_series())
def test_the_strong_intersection_holds_the_running_intersection(series) -> None:
    # candidates ⊇ own class rows ⇒ V(p) ⊇ R_p: every person keeps ≥ |R_p| values, and a
    # series keeping every R_p at ≥ ℓ values passes, changed values included
    # and the class rows with a value of R_p are candidates after intersection (reported,
    # not part of the pass rule)
    years, releases, k, l, kept, held = series  # noqa: E741
    report = check(years, releases, k, l)
    rows = {pid: min(sum(v in kept[pid] for v in c) for c in held[pid]) for pid in held}
    for p, pid in enumerate(report.person_ids):
        assert report.strong_values[p] >= len(kept[pid])
        assert report.fewest_after[p] >= rows[pid]
    assert (report.candidates[report.present] >= k).all()
    if min(len(v) for v in kept.values()) >= l:
        assert report.passed, report.reason
        assert report.counts()["changed_below_l"] == 0


def swapped() -> tuple[list[pd.DataFrame], list[pd.DataFrame]]:
    """Four people, two classes of two each year, with disjoint cells; the second release
    pairs them differently: p0's values {a, b} then {a, c}, so the intersection is {a}."""
    year1 = pd.DataFrame({"pid": ["p0", "p1", "p2", "p3"], "age": ["20", "21", "40", "41"],
                          "sex": ["F", "F", "F", "F"], "dx": ["a", "b", "c", "d"]})  # fmt: skip
    year2 = year1.assign(age=["21", "51", "22", "52"])
    releases = [release_of(year1, [[0, 1], [2, 3]]), release_of(year2, [[0, 2], [1, 3]])]
    return [year1, year2.astype({"age": str})], releases


def test_a_continuing_person_left_with_one_value_fails_and_is_counted() -> None:
    years, releases = swapped()
    report = check(years, releases, 2, 2)
    assert not report.passed
    assert "fewer than l = 2" in report.reason
    counts = report.counts()
    assert counts["strong"] == {"below_l": 4, "certain": 4, "min_values": 1,
                                "largest_posterior": 1.0, "largest_share": 1.0}  # fmt: skip
    assert counts["in_two_or_more"] == 4 and counts["changed"] == 0
    # each release alone is 2-anonymous and 2-diverse
    assert all(r.min_candidates == 2 and r.below_k == 0 for r in report.releases)


def test_a_changed_value_is_counted_apart_and_fails_below_l() -> None:
    years, releases = swapped()
    years[1].loc[years[1]["pid"] == "p0", "dx"] = "z"
    releases[1].loc[releases[1]["dx"] == "a", "dx"] = "z"
    report = check(years, releases, 2, 2)
    assert not report.passed and "fewer than l = 2" in report.reason
    counts = report.counts()
    assert counts["changed"] == 1 and counts["changed_below_l"] == 1
    p0 = list(report.person_ids).index("p0")
    assert report.changed[p0] and report.strong_values[p0] == 0
    assert np.isnan(report.posterior[p0])
    assert counts["strong"]["below_l"] == 3  # the three others, still certain


def test_only_a_changed_person_below_l_fails_the_series() -> None:
    # p0's value changes (a → c) and p0 moves to a class showing {c, d}: R_p0 = {a, b} ∩ {c, d}
    # is empty; everyone else keeps {a, b} (p4 is new and sees {c, d})
    year1 = pd.DataFrame({"pid": ["p0", "p1", "p2", "p3"], "age": [20, 21, 22, 23],
                          "sex": ["F"] * 4, "dx": ["a", "b", "a", "b"]})  # fmt: skip
    year2 = pd.DataFrame({"pid": ["p0", "p1", "p2", "p3", "p4"], "age": [21, 22, 23, 24, 20],
                          "sex": ["F", "F", "F", "F", "M"],
                          "dx": ["c", "b", "a", "b", "d"]})  # fmt: skip
    releases = [release_of(year1, [[0, 1, 2, 3]]), release_of(year2, [[0, 4], [1, 2, 3]])]
    years = [year1.astype({"age": str}), year2.astype({"age": str})]
    report = check(years, releases, 2, 2)
    assert not report.passed and "1 people in two releases" in report.reason
    counts = report.counts()
    assert counts["strong"]["below_l"] == 0 and counts["changed_below_l"] == 1
    # the same people in one class showing {a, b, c, d}: everyone keeps {a, b}
    fixed = [releases[0], release_of(year2, [[0, 1, 2, 3, 4]])]
    assert check(years, fixed, 2, 2).passed


def test_bad_inputs_are_one_line_errors_naming_rows_not_ids() -> None:
    years, releases = swapped()
    with pytest.raises(InputError, match="2 originals but 1 releases"):
        check(years, releases[:1], 2, 2)
    twice = years[0].assign(pid=["x", "secret", "y", "secret"])
    with pytest.raises(InputError, match=r"repeats a person id \(rows 2 and 4\)") as err:
        check([twice, years[1]], releases, 2, 2)
    assert "secret" not in str(err.value)
    with pytest.raises(InputError, match="no person-id column 'id'"):
        verify_series(years, releases, person_id="id", qi=["age"], sensitive="dx", k=2, l=2)
    with pytest.raises(InputError, match="3 rows but original 1 has 4"):
        check(years, [releases[0].iloc[:3], releases[1]], 2, 2)


def write_series(tmp: Path, years, releases) -> list[str]:
    args = []
    for t, (year, release) in enumerate(zip(years, releases, strict=True), start=1):
        year.to_csv(tmp / f"y{t}.csv", index=False)
        release.to_csv(tmp / f"r{t}.csv", index=False)
        args += ["--original", str(tmp / f"y{t}.csv"), "--release", str(tmp / f"r{t}.csv")]
    return args + ["--person-id", "pid", "--qi", "age,sex", "--numeric", "age",
                   "--sensitive", "dx", "-k", "2", "-q"]  # fmt: skip


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    years, releases = swapped()
    args = write_series(tmp_path, years, releases)
    # ℓ = 1 holds; each person's one value left narrows them to 1 row of 2 a release:
    # reported, not part of the pass rule
    assert main(["verify-series", *args, "--l", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: ok; k = 2, l = 1, 2 releases, 4 people")
    assert (
        "candidates after intersection (unchanged value, in two releases or more): 4 below k, "
        "fewest 1" in out
    )
    assert main(["verify-series", *args, "--l", "2"]) == 4
    out = capsys.readouterr().out
    assert out.startswith("FAIL: 4 people in two releases or more")
    assert main(["verify-series", *args, "--l", "2", "--json"]) == 4
    assert '"below_l": 4' in capsys.readouterr().out
    assert main(["verify-series", *args[2:], "--l", "1"]) == 2  # one original, two releases
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "1 --original but 2 --release" in err
    years[0].assign(pid=["a", "a", "b", "c"]).to_csv(tmp_path / "y1.csv", index=False)
    assert main(["verify-series", *args, "--l", "1"]) == 2
    years[0].drop(columns="pid").to_csv(tmp_path / "y1.csv", index=False)
    assert main(["verify-series", *args, "--l", "1"]) == 2
    assert "no person-id column" in capsys.readouterr().err


def test_a_published_person_id_fails(tmp_path: Path) -> None:
    years, releases = swapped()
    releases[0] = releases[0].assign(pid=["p0", "p1", "p2", "p3"])
    report = check(years, releases, 2, 1)
    assert not report.passed and report.reason == "release 1 publishes the person-id column"


def test_posterior_counts_each_release_and_share_one_release() -> None:
    # one class of 8 a, 1 b, 1 c published three times: the product of shares counts the same
    # evidence three times (0.8³ / (0.8³ + 2 · 0.1³)); the largest share stays one release's 0.8
    ten = range(10)
    year = pd.DataFrame({"pid": [f"p{i}" for i in ten], "age": [str(30 + i) for i in ten],
                         "sex": ["F"] * 10, "dx": list("aaaaaaaabc")})  # fmt: skip
    release = release_of(year.astype({"age": int}), [list(range(10))])
    report = check([year] * 3, [release] * 3, 10, 3)
    assert report.passed
    strong = report.counts()["strong"]
    assert strong["largest_posterior"] == pytest.approx(0.512 / 0.514)
    assert strong["largest_share"] == pytest.approx(0.8)
    assert strong["min_values"] == 3
