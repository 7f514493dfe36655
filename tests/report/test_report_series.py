"""The report's series section (issue 40): a release of a series shows its manifest's
``series`` block (release number, previous releases, continuing / new / changed / departed /
suppressed, the in-run check) and, with ``report --series DIR --series-original …``, the
composition attacker's figures, equal to ``risk --series --json``'s; a release outside a series
has no such section; a series release that suppressed people is read against its published
people by the directory's private map."""

from __future__ import annotations

import html as htmllib
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from anonymatch.cli import main
from tests.cli.test_risk_series import LEVELS, ROLES
from tests.factories import series_years, suppressing_years

SECTION = '<section id="series">'


def section_of(page: str) -> str:
    start = page.index(SECTION)
    return page[start : page.index("</section>", start)]


def text(fragment: str) -> str:
    return htmllib.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def facts(section: str) -> dict[str, str]:
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section, re.S)
    return {text(k): text(v) for k, v in pairs}


def tables(section: str) -> list[list[list[str]]]:
    out = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", section, re.S):
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
        out.append([[text(c) for c in re.findall(r"<td>(.*?)</td>", r, re.S)] for r in rows])
    return out


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three releases of a series with their manifests (r{t}.json), the inputs y{t}.csv and
    each release's published people p{t}.csv."""
    d = tmp_path_factory.mktemp("report_series")
    years = series_years(150, seed=11, changed=0.1)
    for t, year in enumerate(years):
        year.to_csv(d / f"y{t}.csv", index=False)
        code = main(["anonymize", str(d / f"y{t}.csv"), "-o", str(d / f"r{t}.csv"), "--report",
                     str(d / f"r{t}.json"), *ROLES, *LEVELS, "--series", str(d / "S"),
                     "--person-id", "pid", "-q"])  # fmt: skip
        assert code == 0
    mapped = pd.read_parquet(d / "S" / "private" / "map.parquet")
    for t, year in enumerate(years):
        people = set(mapped.loc[mapped["release"] == t + 1, "person_id"])
        year[year["pid"].isin(people)].to_csv(d / f"p{t}.csv", index=False)
    return d


def test_series_section_has_the_manifest_block_and_the_attackers_figures(
    series: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = series
    manifest = json.loads((d / "r2.json").read_text())["series"]
    joined = ["--series", str(d / "S"), "--series-original", str(d / "y0.csv"),
              "--series-original", str(d / "y1.csv")]  # fmt: skip
    out = tmp_path / "r2.html"
    code, _, err = run(["report", "--manifest", str(d / "r2.json"), str(d / "y2.csv"),
                        str(d / "r2.csv"), "-o", str(out), *joined], capsys)  # fmt: skip
    assert code == 0, err
    page = out.read_text()
    assert page.count(SECTION) == 1 and 'href="#series"' in page
    section = section_of(page)
    shown = facts(section)
    assert int(shown["release number"]) == manifest["release"] == 3
    assert int(shown["previous releases"]) == len(manifest["previous_sha256"]) == 2
    for key, value in manifest["counts"].items():
        (label,) = [k for k in shown if k.startswith(f"{key} (")]
        assert int(shown[label]) == value, key
    assert shown["in-run check of the signatures"] == "passed"
    assert shown["how it was checked"] == manifest["verification"]["method"]
    digests, attacker, per_release = tables(section)
    assert [row[1] for row in digests] == manifest["previous_sha256"]
    # the attacker's figures are risk --series's (the release's people: p2.csv)
    code, stdout, err = run(["risk", str(d / "p2.csv"), str(d / "r2.csv"), *ROLES, "--json",
                             *joined], capsys)  # fmt: skip
    assert code == 0, err
    figures = json.loads(stdout)["series"]
    table = dict((row[0], row[1]) for row in attacker)
    assert table["verdict"] == "passed" and figures["passed"]
    assert table["people in the series"] == str(figures["people"])
    assert table["people in two releases or more"] == str(figures["in_two_or_more"])
    assert table["below ℓ on candidates (strong)"] == str(figures["strong"]["below_l"])
    assert table["homogeneous on compatible rows (one value)"] == str(figures["weak"]["certain"])
    assert table["largest posterior (strong)"] == f"{figures['strong']['largest_posterior']:.4f}"
    assert table["largest share (strong)"] == f"{figures['strong']['largest_share']:.4f}"
    assert table["changed value, counted apart"] == str(figures["changed"])
    after = figures["after_intersection"]["strong"]
    key = "values after intersection, candidates: fewest / median"
    assert table[key] == f"{after['fewest']} / {after['median']:g}"
    assert table["this release's people"] == str(figures["this_release"]["people"])
    assert [[int(x) for x in row[:5]] for row in per_release] == [
        [r["release"], r["people"], r["min_candidates"], r["below_k"], r["min_compatible"]]
        for r in figures["releases"]
    ]


def test_manifest_alone_shows_the_block_and_says_what_the_figures_need(
    series: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r0.html"
    code, _, err = run(["report", str(series / "r0.json"), "-o", str(out)], capsys)
    assert code == 0, err
    section = section_of(out.read_text())
    shown = facts(section)
    assert shown["release number"] == "1"
    assert shown["previous releases"].startswith("none")
    assert "--series DIR --series-original" in text(section)
    assert len(tables(section)) == 0


def test_a_release_outside_a_series_has_no_series_section(
    series: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = series
    release, manifest, page = tmp_path / "ind.csv", tmp_path / "ind.json", tmp_path / "ind.html"
    code, _, err = run(["anonymize", str(d / "y2.csv"), "-o", str(release), "--report",
                        str(manifest), "--report-html", str(page), *ROLES, *LEVELS,
                        "--identifiers", "pid", "-q"], capsys)  # fmt: skip
    assert code == 0, err
    assert SECTION not in page.read_text() and "Release series" not in page.read_text()
    out = tmp_path / "again.html"
    code, _, err = run(["report", "--manifest", str(manifest), str(d / "y2.csv"), str(release),
                        "-o", str(out), "--series", str(d / "S"), "--series-original",
                        str(d / "p0.csv")], capsys)  # fmt: skip
    assert code == 2 and "records no release of a series" in err and err.count("\n") == 1
    assert not out.exists()


def test_a_release_that_suppressed_people_is_read_by_the_private_map(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an unavoidable suppression under the ℓ rule: p0 was shown {a, b}; this year nobody
    # else holds a or b, so no class can show two values of {a, b}: p0 alone is suppressed
    first, second = suppressing_years()
    first.to_csv(tmp_path / "y0.csv", index=False)
    second.to_csv(tmp_path / "y1.csv", index=False)
    roles = ["--qi", "age", "--numeric", "age", "--sensitive", "s", "-k", "5", "--l", "2"]
    for t in range(2):
        code, _, err = run(["anonymize", str(tmp_path / f"y{t}.csv"), "-o",
                            str(tmp_path / f"r{t}.csv"), "--report", str(tmp_path / f"r{t}.json"),
                            *roles, "--series", str(tmp_path / "S"), "--person-id", "pid",
                            "--seed", "0", "-q"], capsys)  # fmt: skip
        assert code == 0, err
    manifest = json.loads((tmp_path / "r1.json").read_text())
    assert manifest["series"]["counts"]["suppressed"] == 1
    base = ["report", "--manifest", str(tmp_path / "r1.json"), str(tmp_path / "y1.csv"),
            str(tmp_path / "r1.csv"), "-o", str(tmp_path / "r1.html")]  # fmt: skip
    code, _, err = run(base, capsys)
    assert code == 2 and "--series DIR reads them" in err and err.count("\n") == 1
    assert not (tmp_path / "r1.html").exists()
    code, out, err = run([*base, "--series", str(tmp_path / "S"), "--series-original",
                          str(tmp_path / "y0.csv")], capsys)  # fmt: skip
    assert code == 0, err
    assert "claims: re-verified on the files" in out
    section = section_of((tmp_path / "r1.html").read_text())
    assert facts(section)["suppressed (in this input, not published)"] == "1"
    attacker: dict[str, Any] = dict((r[0], r[1]) for r in tables(section)[1])
    assert attacker["this release's people"] == "9" and attacker["verdict"] == "passed"
