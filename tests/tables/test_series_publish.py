"""Publishing a release series (issue 40): ``tables.anonymize(series=…, person_id=…)``, the series
directory and ``anonymize --series DIR --person-id COLUMN``.

The composition attacker (``verify_series``, from the releases and the originals only) finds
nobody below ℓ values — value changed or not — in a series published under the running
intersection, while the same years released independently leave people below ℓ; a person
whose intersection no class can keep at ℓ values is suppressed and counted, a case signature
equality had to suppress is now published; ``series.repair`` keeps classes ≥ k, ℓ-diverse and
every constrained person's intersection; a modified directory or other settings exit 2; the
private map is 0600 in a 0700 directory and no published file holds a person id.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.tables import anonymize
from anonymatch.tables.series import verify_series
from anonymatch.tables.series.store import MAP, PRIVATE
from tests.factories import random_frame, series_years, suppressing_years

QI = ["n0", "n1", "c0", "c1"]
KW = {"k": 5, "qi": QI, "numeric": ["n0", "n1"], "sensitive": "s", "l": 3}
CHECK = {"person_id": "pid", "qi": QI, "numeric": ["n0", "n1"], "sensitive": "s", "k": 5, "l": 3}


def published_originals(directory: Path, years: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Each year's people the series published (the attacker knows who is in which
    release), from the private map."""
    mapped = pd.read_parquet(directory / PRIVATE / MAP)
    return [
        year[
            year["pid"].isin(set(mapped.loc[mapped["release"] == t + 1, "person_id"]))
        ].reset_index(drop=True)
        for t, year in enumerate(years)
    ]


def publish_all(directory: Path, years: list[pd.DataFrame], **extra: object) -> list:
    return [anonymize(y, series=directory, person_id="pid", **KW, **extra) for y in years]


def test_series_passes_the_composition_attacker_where_independent_releases_fail(
    tmp_path: Path,
) -> None:
    years = series_years(300, seed=3)
    made = publish_all(tmp_path / "S", years)
    report = verify_series(
        published_originals(tmp_path / "S", years), [r.table for r in made], **CHECK
    )
    assert report.passed, report.reason
    counts = report.counts()
    assert counts["strong"]["below_l"] == 0 and counts["weak"]["below_l"] == 0
    assert counts["in_two_or_more"] >= 250  # the series really repeats people (300 at most)
    assert counts["min_candidates"] >= 5
    independent = [anonymize(y, identifiers="pid", **KW).table for y in years]
    alone = verify_series(years, independent, **CHECK)
    assert not alone.passed and alone.counts()["strong"]["below_l"] > 0
    # the manifests count the people: 90 leave and 90 arrive each year
    for t, r in enumerate(made):
        block = r.report["series"]
        assert block["release"] == t + 1 and block["verification"]["passed"] is True
        c = block["counts"]
        assert c["continuing"] + c["new"] + c["changed"] == 300
        assert c["departed"] == (0 if t == 0 else 90)
        assert c["new"] == (300 if t == 0 else 90)
        assert r.report["input"]["suppressed"] == c["suppressed"] == 300 - len(r.table)
        assert len(block["previous_sha256"]) == t
        assert r.report["guarantee"]["construction"] == "classes"


def test_changed_values_are_counted_apart_and_everyone_keeps_l_values(
    tmp_path: Path,
) -> None:
    years = series_years(300, seed=5, changed=0.1)
    made = publish_all(tmp_path / "S", years)
    assert sum(r.report["series"]["counts"]["changed"] for r in made) > 0
    report = verify_series(
        published_originals(tmp_path / "S", years), [r.table for r in made], **CHECK
    )
    assert report.passed, report.reason
    counts = report.counts()
    assert counts["changed"] > 0 and counts["changed_below_l"] == 0
    assert counts["strong"]["below_l"] == 0
    assert (report.strong_values[report.present.any(axis=1)] >= 3).all()


def running_values(directory: Path) -> dict[str, set[str]]:
    """Each published person's R_p, worked out here from the series directory: per release,
    the values shown on the rows of the person's class (private map → rows of the release
    file), intersected over the person's releases."""
    from anonymatch.tables.io.cells import read_release_text

    mapped = pd.read_parquet(directory / PRIVATE / MAP)
    out: dict[str, set[str]] = {}
    for number, part in mapped.groupby("release"):
        shown = read_release_text(directory / f"{int(number):03d}.release.csv")["s"].astype(str)
        values = {c: set(shown.iloc[g["row"]]) for c, g in part.groupby("class")}
        for pid, c in zip(part["person_id"], part["class"], strict=True):
            out[pid] = out[pid] & values[c] if pid in out else set(values[c])
    return out


def test_a_case_signature_equality_suppressed_is_now_published(tmp_path: Path) -> None:
    # two classes of exactly k = 5 apart in age; one person of the old {c, d} class leaves and
    # nobody arrives: signature equality could not form a class of 5 showing {c, d} and
    # suppressed the four left; the running intersection puts all nine in one class showing
    # {a, b, c, d}, which keeps two values of everyone's earlier class
    first = pd.DataFrame(
        {
            "age": [20, 21, 22, 23, 24, 60, 61, 62, 63, 64],
            "s": list("ababacdcdc"),
            "pid": [f"p{i}" for i in range(10)],
        }
    )
    second = first.drop(index=5).reset_index(drop=True)
    kw = {"k": 5, "qi": "age", "numeric": "age", "sensitive": "s", "l": 2, "seed": 0}
    anonymize(first, series=tmp_path / "S", person_id="pid", **kw)
    made = anonymize(second, series=tmp_path / "S", person_id="pid", **kw)
    counts = made.report["series"]["counts"]
    assert counts["suppressed"] == 0 and counts["departed"] == 1 and counts["continuing"] == 9
    assert len(made.table) == 9 and made.report["input"]["suppressed"] == 0
    assert made.report["series"]["verification"]["people_checked"] == 9
    assert all(len(v) >= 2 for v in running_values(tmp_path / "S").values())
    check = {"person_id": "pid", "qi": ["age"], "numeric": ["age"], "sensitive": "s"}
    report = verify_series([first, second], [first_table(tmp_path), made.table], **check, k=5, l=2)
    assert report.passed, report.reason


def test_a_person_whose_intersection_cannot_be_kept_is_suppressed_and_counted(
    tmp_path: Path,
) -> None:
    # p0 was shown {a, b}; this year nobody holds b and p0 is the only a: no class can show two
    # values of {a, b}, so p0 alone is suppressed (counted, not in the map for release 2)
    first, second = suppressing_years()
    kw = {"k": 5, "qi": "age", "numeric": "age", "sensitive": "s", "l": 2, "seed": 0}
    anonymize(first, series=tmp_path / "S", person_id="pid", **kw)
    made = anonymize(second, series=tmp_path / "S", person_id="pid", **kw)
    counts = made.report["series"]["counts"]
    assert counts["suppressed"] == 1 and counts["departed"] == 4 and counts["new"] == 4
    assert len(made.table) == 9 and made.report["verification"]["suppressed"] == 1
    mapped = pd.read_parquet(tmp_path / "S" / PRIVATE / MAP)
    assert "p0" not in set(mapped.loc[mapped["release"] == 2, "person_id"])
    check = {"person_id": "pid", "qi": ["age"], "numeric": ["age"], "sensitive": "s"}
    years = [first, second]
    report = verify_series(
        published_originals(tmp_path / "S", years), [first_table(tmp_path), made.table],
        **check, k=5, l=2,
    )  # fmt: skip
    assert report.passed, report.reason


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    k=st.integers(2, 5),
    ell=st.integers(2, 3),
    tight=st.floats(0.0, 1.0),
)
def test_repair_keeps_classes_valid_and_every_intersection(
    seed: int, k: int, ell: int, tight: float
) -> None:
    from anonymatch.tables.series.repair import repair
    from tests.factories import encode_frame

    rng = np.random.default_rng(seed)
    n, n_values = 60, 5
    frame = random_frame(n, seed).drop(columns="s")
    codes = rng.integers(0, n_values, n)
    labels = np.arange(n) // max(k, 2 * ell)  # consecutive blocks, made valid below
    while True:
        ok = [
            np.sum(labels == c) >= k and len(set(codes[labels == c])) >= ell
            for c in range(labels.max() + 1)
        ]
        if all(ok) or labels.max() == 0:
            break
        bad = ok.index(False)  # merged with a neighbouring block
        labels[labels == bad] = bad - 1 if bad else 1
        labels = np.unique(labels, return_inverse=True)[1]
    if not all(ok):  # the whole table is not ℓ-diverse: no independent release to repair
        return
    # R_p: ell..n_values values for a share ``tight`` of the people, always holding their own
    kept = np.ones((n, n_values), dtype=bool)
    for r in np.flatnonzero(rng.random(n) < tight):
        others = rng.permutation([v for v in range(n_values) if v != codes[r]])
        kept[r] = False
        kept[r, [codes[r], *others[: rng.integers(ell - 1, n_values)]]] = True
    out, done = repair(encode_frame(frame), codes, labels, kept, np.arange(n), k, ell)
    published = out >= 0
    assert done["suppressed"] == n - published.sum()
    for c in np.unique(out[published]):
        members = np.flatnonzero(out == c)
        shown = np.zeros(n_values, dtype=bool)
        shown[codes[members]] = True
        assert len(members) >= k and shown.sum() >= ell
        assert ((kept[members] & shown).sum(axis=1) >= ell).all()
    # only a constrained person is suppressed for their own sake: the unconstrained are
    # published unless the last class fell apart
    assert published[kept.all(axis=1)].all() or not published.any()
    assert done["suppressed"] == 0 or (~kept[~published].all(axis=1)).any()


def first_table(tmp_path: Path) -> pd.DataFrame:
    from anonymatch.tables.io.cells import read_release_text

    return read_release_text(tmp_path / "S" / "001.release.csv")


def test_a_modified_series_directory_or_other_settings_are_refused(tmp_path: Path) -> None:
    years = series_years(120, seed=7, years=2)
    publish_all(tmp_path / "S", years[:1])
    with pytest.raises(InputError, match="the series was published with k 5"):
        anonymize(years[1], series=tmp_path / "S", person_id="pid", **{**KW, "k": 6})
    with pytest.raises(InputError, match="sensitive"):
        anonymize(
            years[1].rename(columns={"s": "t"}), series=tmp_path / "S", person_id="pid",
            **{**KW, "sensitive": "t"},
        )  # fmt: skip
    release = tmp_path / "S" / "001.release.csv"
    text = release.read_text()
    release.write_text(text.replace("s1", "s2", 1))
    with pytest.raises(InputError, match="was modified since it was published"):
        anonymize(years[1], series=tmp_path / "S", person_id="pid", **KW)
    release.write_text(text)
    os.chmod(tmp_path / "S" / PRIVATE / MAP, 0o644)
    with pytest.raises(InputError, match="must not be readable by others"):
        anonymize(years[1], series=tmp_path / "S", person_id="pid", **KW)
    os.chmod(tmp_path / "S" / PRIVATE / MAP, 0o600)
    anonymize(years[1], series=tmp_path / "S", person_id="pid", **KW)  # restored: runs
    index = json.loads((tmp_path / "S" / "series.json").read_text())
    assert [e["release"] for e in index["releases"]] == [1, 2]


def test_jobs_a_series_cannot_run_are_refused(tmp_path: Path) -> None:
    year = series_years(60, seed=1, years=1)[0]
    cases = [
        ({**KW, "t": 0.5}, "distinct l-diversity only"),
        ({**KW, "diversity": "entropy"}, "distinct l-diversity"),
        ({**KW, "structure": "rings"}, "publishes classes"),
        ({**KW, "method": "mondrian"}, "not `method` mondrian"),  # the Python words
        ({**KW, "time_limit": 5.0}, "`time_limit`"),
        ({**KW, "suppression_limit": 0.1}, "`suppression_limit`"),
        ({k: v for k, v in KW.items() if k not in ("sensitive", "l")}, "one sensitive column"),
    ]
    for keywords, message in cases:
        with pytest.raises(InputError, match=message):
            anonymize(year, series=tmp_path / "S", person_id="pid", **keywords)
    with pytest.raises(InputError, match="neither a QI"):
        anonymize(year, series=tmp_path / "S", person_id="n0", **KW)
    twice = year.assign(pid=["same"] * len(year))
    with pytest.raises(InputError, match="holds a person twice"):
        anonymize(twice, series=tmp_path / "S", person_id="pid", **KW)
    assert not (tmp_path / "S").exists()  # nothing written


def _files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file()]


def test_the_map_is_private_and_no_published_file_holds_a_person_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    years = series_years(150, seed=11)
    args = ["-k", "5", "--qi", ",".join(QI), "--numeric", "n0,n1", "--sensitive", "s", "--l", "3"]
    for t, year in enumerate(years):
        year.to_csv(tmp_path / f"y{t}.csv", index=False)
        code = main(["anonymize", str(tmp_path / f"y{t}.csv"), "-o", str(tmp_path / f"r{t}.csv"),
                     "--report", str(tmp_path / f"r{t}.json"), *args, "--series",
                     str(tmp_path / "S"), "--person-id", "pid", "-q"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
    private = tmp_path / "S" / PRIVATE
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert stat.S_IMODE((private / MAP).stat().st_mode) == 0o600
    mapped = pd.read_parquet(private / MAP)
    assert list(mapped.columns) == ["person_id", "release", "row", "class"]
    ids = set(pd.concat(years)["pid"])
    assert set(mapped["person_id"]) <= ids and len(mapped) > 0
    published = [p for p in _files(tmp_path / "S") if private not in p.parents]
    published += [tmp_path / f"r{t}.{ext}" for t in range(3) for ext in ("csv", "json")]
    for path in published:
        text = path.read_text()
        assert not any(pid in text for pid in ids), path
        assert "map.parquet" not in text and str(private) not in text
    for t in range(3):  # the copy in DIR is the release written
        assert (tmp_path / f"r{t}.csv").read_bytes() == (
            tmp_path / "S" / f"{t + 1:03d}.release.csv"
        ).read_bytes()
        manifest = json.loads((tmp_path / f"r{t}.json").read_text())
        assert manifest["series"]["release"] == t + 1
        assert json.loads((tmp_path / "S" / f"{t + 1:03d}.manifest.json").read_text()) == manifest


def test_cli_refusals_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    year = series_years(60, seed=2, years=1)[0]
    year.to_csv(tmp_path / "y.csv", index=False)
    base = ["anonymize", str(tmp_path / "y.csv"), "-o", str(tmp_path / "r.csv"), "-k", "5",
            "--qi", ",".join(QI), "--numeric", "n0,n1", "--sensitive", "s"]  # fmt: skip
    series = ["--series", str(tmp_path / "S"), "--person-id", "pid"]
    cases = [
        ([*base, "--l", "3", "--series", str(tmp_path / "S")], "go together"),
        ([*base, "--l", "3", "--person-id", "pid"], "go together"),
        ([*base, "--t", "0.5", *series], "distinct l-diversity"),
        ([*base, "--l", "3", "--executor", "processes", *series], "streamed path"),
        ([*base, "--l", "3", "--time-limit", "5", *series], "--time-limit"),
        ([*base, "--l", "3", "--structure", "rings", *series], "publishes classes"),
    ]
    for args, message in cases:
        code = main(args)
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "S").exists() and not (tmp_path / "r.csv").exists()
    (tmp_path / "S").mkdir()
    (tmp_path / "S" / "other.txt").write_text("not a series")
    assert main([*base, "--l", "3", *series]) == 2
    assert "not a series directory" in capsys.readouterr().err


def test_a_job_file_series_block_runs_the_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    years = series_years(90, seed=4, years=2)
    for t, year in enumerate(years):
        year.to_csv(tmp_path / f"y{t}.csv", index=False)
    job = """
[input]
path = "y0.csv"
[columns]
n0 = { role = "qi", type = "numeric" }
n1 = { role = "qi", type = "numeric" }
c0 = { role = "qi" }
c1 = { role = "qi" }
s = { role = "sensitive" }
pid = { role = "identifier" }
[model]
k = 5
l = 3
[series]
dir = "S"
person_id = "pid"
"""
    (tmp_path / "job.toml").write_text(job)
    for t in range(2):
        job_file, out = str(tmp_path / "job.toml"), str(tmp_path / f"r{t}.csv")
        code = main(["anonymize", str(tmp_path / f"y{t}.csv"), "--config", job_file, "-o", out])
        shown = capsys.readouterr()
        assert code == 0, shown.err
        assert f"release {t + 1} (" in shown.out and "suppressed)" in shown.out
    index = json.loads((tmp_path / "S" / "series.json").read_text())
    assert index["person_id"] == "pid" and len(index["releases"]) == 2
    (tmp_path / "bad.toml").write_text(job.replace('person_id = "pid"\n', ""))
    assert main(["anonymize", str(tmp_path / "y0.csv"), "--config", str(tmp_path / "bad.toml"),
                 "-o", str(tmp_path / "x.csv")]) == 2  # fmt: skip
    assert "series.person_id: a series needs both dir and person_id" in capsys.readouterr().err


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    changed=st.sampled_from([0.0, 0.2]),
    k=st.integers(2, 6),
    ell=st.integers(2, 4),
)
def test_every_series_keeps_everyone_at_l_values_or_more(
    tmp_path_factory: pytest.TempPathFactory, seed: int, changed: float, k: int, ell: int
) -> None:
    directory = tmp_path_factory.mktemp("series") / "S"
    years = series_years(80, seed=seed, changed=changed)
    kw = {**KW, "k": k, "l": ell}
    made = [anonymize(y, series=directory, person_id="pid", **kw) for y in years]
    report = verify_series(
        published_originals(directory, years), [r.table for r in made],
        **{**CHECK, "k": k, "l": ell},
    )  # fmt: skip
    assert report.passed, report.reason
    assert report.counts()["strong"]["below_l"] == 0
    assert report.counts()["changed_below_l"] == 0
    assert all(len(v) >= ell for v in running_values(directory).values())
    for r in made:
        assert r.report["series"]["counts"]["suppressed"] == 80 - len(r.table)


def test_job_file_series_keys_are_checked_and_the_web_app_refuses_them(tmp_path: Path) -> None:
    from anonymatch.app.jobfile import parse_job, render_toml
    from anonymatch.ui.data import Dataset, Settings

    base = {
        "input": {"path": "y.csv"},
        "columns": {"age": {"role": "qi", "type": "numeric"}, "s": {"role": "sensitive"},
                    "pid": {"role": "identifier"}},
        "model": {"k": 2},
    }  # fmt: skip
    job = parse_job({**base, "series": {"dir": "S", "person_id": "pid"}})
    assert parse_job(tomllib.loads(render_toml(job))) == job  # round trip
    with pytest.raises(InputError, match="series.dir: a series needs both"):
        parse_job({**base, "series": {"person_id": "pid"}})
    with pytest.raises(InputError, match="never published"):
        parse_job({**base, "series": {"dir": "S", "person_id": "age"}})
    (tmp_path / "y.csv").write_text("age,s,pid\n30,a,p1\n40,b,p2\n")
    dataset = Dataset(path=tmp_path / "y.csv", name="y.csv", size=1, columns=["age", "s", "pid"])
    with pytest.raises(InputError, match="the web app publishes no release series"):
        Settings.from_job(job, dataset)
    Settings.from_job(parse_job(base), dataset)  # without the block: opened


def test_new_people_too_few_for_a_class_join_one_showing_their_value(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    first = pd.DataFrame(
        {
            "age": rng.integers(20, 70, 40),
            "s": [f"v{x}" for x in rng.integers(0, 3, 40)],
            "pid": [f"p{i}" for i in range(40)],
        }
    )
    arrivals = pd.DataFrame({"age": [33, 58], "s": ["v0", "v0"], "pid": ["new1", "new2"]})
    second = pd.concat([first, arrivals], ignore_index=True)
    kw = {"k": 5, "qi": "age", "numeric": "age", "sensitive": "s", "l": 2}
    anonymize(first, series=tmp_path / "S", person_id="pid", **kw)
    made = anonymize(second, series=tmp_path / "S", person_id="pid", **kw)
    counts = made.report["series"]["counts"]
    assert counts["new"] == 2 and counts["continuing"] == 40 and counts["suppressed"] == 0
    assert len(made.table) == 42
    report = verify_series(
        [first, second], [first_table(tmp_path), made.table], person_id="pid", qi=["age"],
        numeric=["age"], sensitive="s", k=5, l=2,
    )  # fmt: skip
    assert report.passed, report.reason


def test_the_in_run_check_finds_anyone_below_l_in_the_running_intersection() -> None:
    from anonymatch.tables.series.publish import check_intersections, running_intersection

    obj = np.asarray
    first = (obj(["a", "b", "c", "d"], dtype=object), obj([0, 0, 1, 1]), obj(list("xyxz")))
    # release 2: a and c change class; a's class shows {x, z}: R_a = {x, y} ∩ {x, z} = {x}
    fine = (obj(["a", "b", "c"], dtype=object), obj([0, 0, 0]), obj(list("xyz")))
    apart = (obj(["a", "b", "c", "e"], dtype=object), obj([0, 1, 0, 1]), obj(list("xyzy")))
    running = running_intersection([first, apart])
    kept = dict(zip(running.person_ids, running.kept.sum(axis=1), strict=True))
    assert kept == {"a": 1, "b": 1, "c": 2, "d": 2, "e": 1}
    assert check_intersections([first], fine, 2) == {
        "passed": True,
        "method": "running intersections from the published files and the private map",
        "people_checked": 3,
    }
    failed = check_intersections([first], apart, 2)
    assert failed["passed"] is False
    assert failed["reason"] == (
        "3 people keep fewer than l = 2 values after intersecting their classes' values (fewest 1)"
    )


def test_kept_columns_are_refused_in_a_series_first_release_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a column published unchanged in every release links a person's rows across releases:
    # refused (exit 2, one line naming the columns and the fix), nothing written, no DIR
    year = series_years(60, seed=3, years=1)[0]
    year = year.assign(fnlwgt=np.arange(len(year)) * 7 + 1000, income=["<=50K"] * len(year))
    with pytest.raises(InputError, match=r"kept columns \('fnlwgt', 'income'\)"):
        anonymize(year, series=tmp_path / "S", person_id="pid", **KW)
    assert not (tmp_path / "S").exists()
    year.to_csv(tmp_path / "y.csv", index=False)
    base = ["anonymize", str(tmp_path / "y.csv"), "-o", str(tmp_path / "r.csv"), "-k", "5",
            "--qi", ",".join(QI), "--numeric", "n0,n1", "--sensitive", "s", "--l", "3",
            "--series", str(tmp_path / "S"), "--person-id", "pid"]  # fmt: skip
    assert main(base) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'fnlwgt', 'income'" in err, err
    assert "--identifiers" in err and "--qi" in err
    assert not (tmp_path / "S").exists() and not (tmp_path / "r.csv").exists()
    # the fix: drop one as an identifier, the other still refused; both dropped: published
    assert main([*base, "--identifiers", "fnlwgt"]) == 2
    err = capsys.readouterr().err
    assert "'income'" in err and "fnlwgt" not in err
    assert main([*base, "--identifiers", "fnlwgt,income"]) == 0, capsys.readouterr().err
    published = pd.read_csv(tmp_path / "r.csv")
    assert not {"fnlwgt", "income", "pid"} & set(published.columns)
    # the job file shares the path: same refusal
    job = f"""
[input]
path = "y.csv"
[columns]
n0 = {{ role = "qi", type = "numeric" }}
n1 = {{ role = "qi", type = "numeric" }}
c0 = {{ role = "qi" }}
c1 = {{ role = "qi" }}
s = {{ role = "sensitive" }}
pid = {{ role = "identifier" }}
[model]
k = 5
l = 3
[series]
dir = "{tmp_path / "J"}"
person_id = "pid"
"""
    (tmp_path / "job.toml").write_text(job)
    out = str(tmp_path / "j.csv")
    assert main(["anonymize", str(tmp_path / "y.csv"), "--config", str(tmp_path / "job.toml"),
                 "-o", out]) == 2  # fmt: skip
    assert "kept columns ('fnlwgt', 'income')" in capsys.readouterr().err
    assert not (tmp_path / "J").exists() and not (tmp_path / "j.csv").exists()
