"""``risk --population/--sampling-fraction/--weights`` and ``anonymize --kmap --population``:
the figures in the JSON, k-map releases checked from the files, one line + exit 2 or 3 on
error with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from tests.factories import random_frame

ROLES = ["--qi", "n0,n1,c0,c1", "--numeric", "n0,n1"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path]:
    """A sample, a population containing it, and a k = 3 release of the sample."""
    sample = random_frame(60, 5).assign(w=15.0)
    sample_path, population = tmp_path / "sample.csv", tmp_path / "register.csv"
    sample.to_csv(sample_path, index=False)
    pd.concat([sample, random_frame(240, 6)], ignore_index=True).drop(columns="w").to_csv(
        population, index=False
    )
    release = tmp_path / "release.csv"
    args = ["anonymize", str(sample_path), "-o", str(release), "--k", "3", *ROLES]
    code, _, err = run([*args, "--seed", "1", "-q"], capsys)
    assert code == 0, err
    return sample_path, release, population


def test_risk_population_json(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    sample, release, population = files
    code, out, err = run(
        ["risk", str(sample), str(release), *ROLES, "--population", str(population), "--json"],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    figures = data["population"]
    assert figures["kmap"] >= 3 and figures["records"] == 300
    assert set(figures["journalist_risk"]) >= {"max", "mean"}
    assert figures["journalist_risk"]["max"] == pytest.approx(1 / figures["kmap"])
    assert {"marketer_risk", "uniques", "presence", "estimates"} <= set(figures)
    assert figures["sampling_fraction"] == pytest.approx(60 / 300)
    assert data["input"]["population"]["sha256"]
    code, out, err = run(
        ["risk", str(sample), str(release), *ROLES, "--population", str(population)], capsys
    )
    assert (
        code == 0
        and f"k-map (fewest population records per published row)  {figures['kmap']}" in out
    )


def test_risk_estimates_from_fraction_or_weights(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    sample, release, _ = files
    shares = []
    for extra in (["--sampling-fraction", "0.2"], ["--weights", "w"]):
        code, out, err = run(["risk", str(sample), str(release), *ROLES, *extra, "--json"], capsys)
        assert code == 0, err
        figures = json.loads(out)["population"]
        assert "kmap" not in figures and set(figures["estimates"]) == {
            "pitman", "zayatz", "snb", "dankar"
        }  # fmt: skip
        shares.append(figures["individual_risk"]["mean"])
    assert shares[1] == pytest.approx(json.loads(out)["population"]["individual_risk"]["mean"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--population", "MISSING_QI"], "the population has no column 'c1'"),
        (["--sampling-fraction", "1.5"], "--sampling-fraction must be in (0, 1]"),
        (["--sampling-fraction", "0"], "--sampling-fraction must be in (0, 1]"),
        (["--weights", "c0"], "must be positive numbers; row 1 has 'v"),
        (["--weights", "nope"], "no weights column 'nope'"),
    ],
)
def test_risk_bad_population_input(
    files: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    sample, release, population = files
    if extra[1] == "MISSING_QI":
        bad = tmp_path / "bad.csv"
        pd.read_csv(population).drop(columns="c1").to_csv(bad, index=False)
        extra = ["--population", str(bad)]
    report = tmp_path / "risk.json"
    args = ["risk", str(sample), str(release), *ROLES, *extra, "--report", str(report)]
    code, _, err = run(args, capsys)
    assert code == 2 and message in err and err.count("\n") == 1
    assert not report.exists()


def test_anonymize_kmap(files: tuple[Path, Path, Path], tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    sample, _, population = files
    out, manifest = tmp_path / "kmap.csv", tmp_path / "kmap.json"
    args = ["anonymize", str(sample), "-o", str(out), "--k", "2", *ROLES, "--kmap", "15"]
    args += ["--population", str(population), "--report", str(manifest), "-q"]
    code, _, err = run(args, capsys)
    assert code == 0, err
    written = json.loads(manifest.read_text())
    block, figures = written["guarantee"]["kmap"], written["verification"]["kmap"]
    assert block["k"] == 15 and figures["achieved"] >= 15 and block["population_sha256"]
    code, _, err = run(["verify", str(sample), str(out), "--k", "2", *ROLES], capsys)
    assert code == 0, err
    # the verifier checks k-map from the release and the population alone
    checked = ["verify", str(sample), str(out), "--k", "2", *ROLES, "--population"]
    code, text, err = run([*checked, str(population), "--kmap", "15"], capsys)
    assert code == 0 and "k-map: PASS" in text, err
    code, text, _ = run([*checked, str(population), "--kmap", "10000", "--json"], capsys)
    figures = json.loads(text)
    assert code == 4 and not figures["passed"] and figures["kmap"]["achieved"] >= 15
    code, _, err = run([*checked, str(population)], capsys)
    assert code == 2 and "--population is only read with --kmap or" in err
    code, text, _ = run(
        ["risk", str(sample), str(out), *ROLES, "--population", str(population), "--json"],
        capsys,
    )
    assert json.loads(text)["population"]["kmap"] >= 15
    # more than the population: exit 3, nothing written
    other = tmp_path / "none.csv"
    args[args.index(str(out))] = str(other)
    args[args.index("15")] = "301"
    args[args.index(str(manifest))] = str(tmp_path / "none.json")
    code, _, err = run(args, capsys)
    assert code == 3 and "--kmap = 301 cannot be met" in err and not other.exists()


def test_anonymize_journalist_risk(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample, _, population = files
    out = tmp_path / "avg.csv"
    args = ["anonymize", str(sample), "-o", str(out), "--k", "2", *ROLES, "-q"]
    code, _, err = run([*args, "--journalist-risk", "0.1", "--population", str(population)], capsys)
    assert code == 0, err
    code, text, _ = run(
        ["risk", str(sample), str(out), *ROLES, "--population", str(population), "--json"],
        capsys,
    )
    assert json.loads(text)["population"]["journalist_risk"]["mean"] <= 0.1
    args[args.index(str(out))] = str(tmp_path / "none.csv")
    code, _, err = run([*args, "--journalist-risk", "1.5", "--population", str(population)], capsys)
    assert code == 2 and "--journalist-risk" in err and err.count("\n") == 1


def test_report_population_figures_and_assumptions(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report --population`` shows the same k-map and journalist risk as ``risk --population``
    and says what it assumes; ``--sampling-fraction`` and ``--weights`` the estimates."""
    sample, release, population = files
    manifest = tmp_path / "release.json"
    args = ["anonymize", str(sample), "-o", str(tmp_path / "r2.csv"), "--k", "3", *ROLES]
    code, _, err = run([*args, "--seed", "1", "-q", "--report", str(manifest)], capsys)
    assert code == 0, err
    release = tmp_path / "r2.csv"
    code, out, err = run(
        ["risk", str(sample), str(release), *ROLES, "--population", str(population), "--json"],
        capsys,
    )
    assert code == 0, err
    figures = json.loads(out)["population"]
    html_path = tmp_path / "report.html"
    base = ["report", str(sample), str(release), "--manifest", str(manifest), "-o", str(html_path)]
    code, _, err = run([*base, "--population", str(population), "-q"], capsys)
    assert code == 0, err
    html = html_path.read_text()
    kmap_row = "<td>k-map: fewest population records a published row fits</td>"
    assert f"{kmap_row}<td>{figures['kmap']}<" in html
    assert f"{figures['journalist_risk']['max']:.4f}" in html
    assert "an attacker holds a register of the population" in html
    code, _, err = run([*base, "--force", "--sampling-fraction", "0.05", "-q"], capsys)
    assert code == 0, err
    html = html_path.read_text()
    assert "simple random sample of 5% of the population" in html and kmap_row not in html
    code, _, err = run([*base, "--force", "--weights", "w", "-q"], capsys)
    assert code == 0, err
    assert "as many people as its weight in column w" in html_path.read_text()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--sampling-fraction", "0"], "--sampling-fraction must be in (0, 1]"),
        (["--sampling-fraction", "1.5"], "--sampling-fraction must be in (0, 1]"),
        (["--sampling-fraction", "0.1", "--weights", "w"], "not both"),
        (["--weights", "nope"], "no weights column 'nope'"),
        (["--population", "MISSING"], "input file not found"),
        (["--population", "NOQI"], "c1"),
        (["--manifest-only", "--sampling-fraction", "0.1"], "need ORIGINAL and RELEASE"),
    ],
)
def test_report_population_bad_input_exit_2(
    files: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    message: str,
) -> None:
    sample, release, population = files
    manifest = tmp_path / "release.json"
    args = ["anonymize", str(sample), "-o", str(tmp_path / "r2.csv"), "--k", "3", *ROLES]
    code, _, err = run([*args, "--seed", "1", "-q", "--report", str(manifest)], capsys)
    assert code == 0, err
    noqi = tmp_path / "noqi.csv"
    pd.read_csv(population).drop(columns="c1").to_csv(noqi, index=False)
    swap = {"MISSING": str(tmp_path / "missing.csv"), "NOQI": str(noqi)}
    flags = [swap.get(f, f) for f in flags]
    files_args = [str(sample), str(tmp_path / "r2.csv")]
    if flags[0] == "--manifest-only":
        files_args, flags = [], flags[1:]
    out = tmp_path / "report.html"
    code, _, err = run(
        ["report", *files_args, "--manifest", str(manifest), "-o", str(out), *flags], capsys
    )
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_verify_manifest_rechecks_every_claim(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A manifest's criteria are checked again by ``verify --manifest`` (against the population
    it names, by SHA-256); an edited claim fails, a claim no check reads is UNCHECKED: exit 4,
    never PASS."""
    sample, _, population = files
    out, manifest = tmp_path / "kmap.csv", tmp_path / "kmap.json"
    args = ["anonymize", str(sample), "-o", str(out), "--k", "2", *ROLES, "--kmap", "15"]
    args += ["--delta-max", "0.5", "--population", str(population), "--report", str(manifest)]
    code, _, err = run([*args, "-q"], capsys)
    assert code == 0, err
    written = json.loads(manifest.read_text())
    assert written["verification"]["presence"]["achieved_max"] <= 0.5
    verify = ["verify", str(sample), str(out), "--manifest"]
    code, text, err = run([*verify, str(manifest)], capsys)
    assert code == 0 and "k-map: PASS" in text and "delta-presence: PASS" in text, err

    def edited(name: str, change: dict[str, object]) -> Path:
        copy = json.loads(manifest.read_text())
        for key, value in change.items():
            *where, last = key.split(".")
            block = copy
            for part in where:
                block = block[part]
            block[last] = value
        path = tmp_path / name
        path.write_text(json.dumps(copy))
        return path

    claims_more = edited("more.json", {"guarantee.kmap.k": 5000})
    code, text, _ = run([*verify, str(claims_more)], capsys)
    assert code == 4 and "k-map: FAIL" in text
    unknown = edited("unknown.json", {"guarantee.dpresence": {"delta": 0.1}})
    code, text, _ = run([*verify, str(unknown)], capsys)
    assert code == 4 and "UNCHECKED: guarantee.dpresence" in text
    frame = edited("frame.json", {"guarantee.kmap.population": None})
    code, text, _ = run([*verify, str(frame)], capsys)
    assert code == 4 and "UNCHECKED: k-map: the manifest names no population file" in text
    other = tmp_path / "other.csv"
    pd.read_csv(population).iloc[:-1].to_csv(other, index=False)
    code, text, _ = run([*verify, str(manifest), "--population", str(other)], capsys)
    assert code == 4 and "is not the file the manifest names" in text


def test_delta_presence_refusals(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample, _, population = files
    out = tmp_path / "d.csv"
    base = ["anonymize", str(sample), "-o", str(out), "--k", "2", *ROLES, "-q"]
    code, _, err = run([*base, "--delta-max", "0.5"], capsys)
    assert (
        code == 2
        and err == "anonymatch: error: --delta-max needs --population (a table of the population)\n"
    )
    code, _, err = run([*base, "--delta-max", "0.1", "--population", str(population)], capsys)
    assert code == 3 and "delta-presence [0, 0.1] cannot be met" in err and not out.exists()
    code, _, err = run(
        [*base, "--delta-max", "0.5", "--population", str(population), "--executor", "processes"],
        capsys,
    )
    assert code == 2 and "--delta-max runs in memory only" in err and not out.exists()


def test_report_rechecks_the_criteria(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report`` re-checks a manifest's criteria like ``verify --manifest``: an edited k-map
    claim or an unknown claim ends with exit 4."""
    sample, _, population = files
    out, manifest = tmp_path / "kmap.csv", tmp_path / "kmap.json"
    args = ["anonymize", str(sample), "-o", str(out), "--k", "2", *ROLES, "--kmap", "15"]
    code, _, err = run([*args, "--population", str(population), "--report", str(manifest)], capsys)
    assert code == 0, err
    html = tmp_path / "r.html"
    base = ["report", str(sample), str(out), "-o", str(html), "--force", "--manifest"]
    code, _, err = run([*base, str(manifest)], capsys)
    assert code == 0, err
    for name, change in (("more", {"k": 5000}), ("unknown", None)):
        edited = json.loads(manifest.read_text())
        if change is None:
            edited["guarantee"]["dpresence"] = {"delta": 0.1}
        else:
            edited["guarantee"]["kmap"].update(change)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(edited))
        code, _, err = run([*base, str(path)], capsys)
        assert code == 4, (name, err)
