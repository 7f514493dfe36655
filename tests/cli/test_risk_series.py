"""``anonymatch risk ORIGINAL RELEASE --series DIR --series-original FILE …`` (issue 40): the
composition attacker's figures of a release joined to a series directory are
``verify_series``'s, key by key, for a release of the directory, a release joined after it, and
whole inputs narrowed to their published people by the private map; the refusals are one line,
exit 2, with nothing written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.cli import main
from anonymatch.core.files import sha256_file
from anonymatch.tables.io.cells import read_release_text
from anonymatch.tables.series import SeriesReport, verify_series
from anonymatch.tables.series.store import MAP, PRIVATE
from tests.factories import series_years

QI = "n0,n1,c0,c1"
ROLES = ["--qi", QI, "--numeric", "n0,n1", "--sensitive", "s"]
LEVELS = ["-k", "5", "--l", "3"]
CHECK = {"person_id": "pid", "qi": QI.split(","), "numeric": ["n0", "n1"], "sensitive": "s",
         "k": 5, "l": 3}  # fmt: skip


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-release series made by ``anonymize --series`` (y{t}.csv the inputs, r{t}.csv
    the releases, p{t}.csv each release's published people from the private map) and an
    independent release of the third year (ind.csv)."""
    d = tmp_path_factory.mktemp("series")
    years = series_years(150, seed=11, changed=0.1)
    for t, year in enumerate(years):
        year.to_csv(d / f"y{t}.csv", index=False)
        code = main(["anonymize", str(d / f"y{t}.csv"), "-o", str(d / f"r{t}.csv"), *ROLES,
                     *LEVELS, "--series", str(d / "S"), "--person-id", "pid", "-q"])  # fmt: skip
        assert code == 0
    mapped = pd.read_parquet(d / "S" / PRIVATE / MAP)
    for t, year in enumerate(years):
        people = set(mapped.loc[mapped["release"] == t + 1, "person_id"])
        year[year["pid"].isin(people)].to_csv(d / f"p{t}.csv", index=False)
    code = main(["anonymize", str(d / "y2.csv"), "-o", str(d / "ind.csv"), *ROLES, *LEVELS,
                 "--identifiers", "pid", "-q"])  # fmt: skip
    assert code == 0
    return d


def risk_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["risk", *args, *ROLES, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def expected(d: Path, people: list[str], releases: list[Path]) -> SeriesReport:
    return verify_series(
        [pd.read_csv(d / p) for p in people], [read_release_text(r) for r in releases], **CHECK
    )


def same_figures(figures: dict[str, Any], report: SeriesReport) -> None:
    want = report.to_dict()
    for key, value in want.items():
        assert figures[key] == value, key
    # the values left after intersection, over the people in two releases or more whose value
    # did not change, from the report's per-person arrays
    steady = report.repeated & ~report.changed
    for side, values in (("strong", report.strong_values), ("weak", report.weak_values)):
        got = figures["after_intersection"][side]
        assert got["fewest"] == int(values[steady].min())
        assert got["median"] == float(np.median(values[steady]))
    assert figures["after_intersection"]["strong"]["fewest"] == want["strong"]["min_values"]


def test_risk_series_figures_are_verify_series(
    series: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = series
    joined = ["--series", str(d / "S"), "--series-original", str(d / "p0.csv"),
              "--series-original", str(d / "p1.csv")]  # fmt: skip
    document = risk_json([str(d / "p2.csv"), str(d / "r2.csv"), *joined], capsys)
    figures = document["series"]
    report = expected(d, ["p0.csv", "p1.csv", "p2.csv"], [d / f"r{t}.csv" for t in range(3)])
    named = document["input"]["series_originals"]  # the earlier releases' people, by SHA-256
    assert [x["path"] for x in named] == [str(d / "p0.csv"), str(d / "p1.csv")]
    assert [x["sha256"] for x in named] == [sha256_file(d / f"p{t}.csv") for t in range(2)]
    same_figures(figures, report)
    assert figures["release"] == 3 and figures["in_directory"] and figures["directory"] == "S"
    assert figures["in_two_or_more"] > 50 and figures["changed"] > 0  # a real series
    assert figures["strong"]["below_l"] == 0 and figures["min_candidates"] >= 5
    mine = figures["this_release"]
    assert mine["people"] == len(pd.read_csv(d / "p2.csv"))
    present = report.present[:, 2]
    assert mine["in_an_earlier_release"] == int((present & report.present[:, :2].any(1)).sum())
    # the release's own risk figures are still there, and the text shows the series lines
    code = main(["risk", str(d / "p2.csv"), str(d / "r2.csv"), *ROLES, "-q", *joined])
    out = capsys.readouterr().out
    assert code == 0 and out.splitlines()[0].startswith(f"{mine['people']} people")
    assert "series S: release 3 of 3" in out
    assert f"{figures['in_two_or_more']} in two releases or more" in out
    after = figures["after_intersection"]["strong"]
    assert f"candidates fewest {after['fewest']}, median {after['median']:g}" in out


def test_an_earlier_release_of_the_directory_is_joined_to_those_before_it(
    series: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = series
    figures = risk_json([str(d / "p1.csv"), str(d / "r1.csv"), "--series", str(d / "S"),
                         "--series-original", str(d / "p0.csv")], capsys)["series"]  # fmt: skip
    assert figures["release"] == 2 and figures["in_directory"]
    same_figures(figures, expected(d, ["p0.csv", "p1.csv"], [d / "r0.csv", d / "r1.csv"]))


def test_a_release_not_in_the_directory_follows_its_releases(
    series: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the third year released independently, joined after the series' three releases
    d = series
    originals = [a for t in range(3) for a in ("--series-original", str(d / f"p{t}.csv"))]
    figures = risk_json(
        [str(d / "y2.csv"), str(d / "ind.csv"), "--series", str(d / "S"), *originals], capsys
    )["series"]
    assert figures["release"] == 4 and not figures["in_directory"]
    report = expected(
        d, ["p0.csv", "p1.csv", "p2.csv", "y2.csv"], [*(d / f"r{t}.csv" for t in range(3)),
                                                       d / "ind.csv"]
    )  # fmt: skip
    same_figures(figures, report)
    assert figures["strong"]["below_l"] > 0  # independent: the intersection narrows people


def test_whole_inputs_are_narrowed_to_the_published_people_by_the_map(
    series: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = series
    head = [str(d / "p2.csv"), str(d / "r2.csv"), "--series", str(d / "S")]
    published = risk_json([*head, "--series-original", str(d / "p0.csv"),
                           "--series-original", str(d / "p1.csv")], capsys)["series"]  # fmt: skip
    whole = risk_json([*head, "--series-original", str(d / "y0.csv"),
                       "--series-original", str(d / "y1.csv")], capsys)["series"]  # fmt: skip
    assert whole == published


def test_refusals_are_one_line_exit_2_and_write_nothing(
    series: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = series
    modified = tmp_path / "M"
    modified.mkdir()
    for f in (d / "S").iterdir():
        if f.is_file():
            (modified / f.name).write_bytes(f.read_bytes())
    with (modified / "002.release.csv").open("a") as f:
        f.write("\n")
    (tmp_path / "bare").mkdir()
    base = [str(d / "p2.csv"), str(d / "r2.csv")]
    two = ["--series-original", str(d / "p0.csv"), "--series-original", str(d / "p1.csv")]
    report = tmp_path / "risk.json"
    cases = [
        ([*base, *ROLES, "--series", str(d / "S"), *two[:2]], "give one --series-original per"),
        ([*base, *ROLES, "--series", str(d / "S")], "(2, in the series' order), not 0"),
        ([*base, *ROLES, "--series", str(tmp_path / "bare"), *two], "not a series directory"),
        ([*base, *ROLES, "--series", str(modified), *two], "was modified since it was published"),
        ([*base, "--qi", QI, "--numeric", "n0,n1", "--series", str(d / "S"), *two],
         "needs the series' sensitive column"),
        ([*base, "--qi", "n0,n1,c0", "--numeric", "n0,n1", "--sensitive", "s", "--series",
          str(d / "S"), *two], "the series' QIs are"),
        ([*base, *ROLES, *two], "--series-original goes with --series"),
    ]  # fmt: skip
    for args, message in cases:
        code = main(["risk", *args, "--report", str(report)])
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert message in err and err.count("\n") == 1, err
        assert not report.exists()


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ("not json", "series index"),
        (json.dumps({"format": "other/1"}), "is not an anonymatch-series/1 index"),
        (json.dumps({"format": "anonymatch-series/1", "person_id": "pid", "qi": ["n0"],
                     "sensitive": "s", "k": 0, "l": 2, "releases": []}), "no valid settings"),
        (json.dumps({"format": "anonymatch-series/1", "person_id": "pid", "qi": ["n0"],
                     "sensitive": "s", "k": 5, "l": 2, "releases": []}), "lists no release"),
        (json.dumps({"format": "anonymatch-series/1", "person_id": "pid", "qi": ["n0"],
                     "sensitive": "s", "k": 5, "l": 2, "releases": [{"release": 1}]}),
         "entry 1 is malformed"),
    ],
)  # fmt: skip
def test_a_damaged_index_is_refused(tmp_path: Path, index: str, message: str) -> None:
    from anonymatch.core.errors import InputError
    from anonymatch.tables.series.risk import open_published

    (tmp_path / "series.json").write_text(index)
    with pytest.raises(InputError, match=re.escape(message)):
        open_published(tmp_path)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 30),
    data=st.data(),
)
def test_the_map_narrows_an_input_to_exactly_the_people_it_lists(
    tmp_path: Path, n: int, data: st.DataObject
) -> None:
    from anonymatch.tables.series.risk import PublishedSeries
    from anonymatch.tables.series.store import SeriesSettings

    ids = [f"p{i}" for i in range(n)]
    listed = data.draw(st.lists(st.sampled_from(ids), unique=True), "listed")
    other = data.draw(st.lists(st.sampled_from(ids), unique=True), "in release 2")
    private = tmp_path / PRIVATE
    private.mkdir(exist_ok=True)
    rows = [(p, 1) for p in listed] + [(p, 2) for p in other]
    pd.DataFrame({"person_id": [r[0] for r in rows], "release": [r[1] for r in rows],
                  "row": range(len(rows)), "class": 0}).astype(
        {"person_id": str, "release": "int64", "row": "int64", "class": "int64"}
    ).to_parquet(private / MAP, index=False)  # fmt: skip
    table = pd.DataFrame({"pid": ids, "x": range(n)})
    series = PublishedSeries(tmp_path, SeriesSettings("pid", ("x",), "s", 1, 1), ())
    narrowed = series.people(1, table, len(listed))
    if len(listed) < n:  # the input's people the release published, in the input's order
        assert list(narrowed["pid"]) == [p for p in ids if p in set(listed)]
    else:  # no more rows than the release: unchanged
        assert narrowed is table
    # a count the map does not give leaves the table as it is (verify_series then refuses it)
    if 0 < len(listed) < n - 1:
        assert series.people(1, table, len(listed) + 1) is table
