"""The command line: a full round trip, and one clear line + exit code for each bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from tests.factories import random_frame

QI = "n0,n1,c0,c1"


@pytest.fixture()
def table(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    random_frame(40, 5).to_csv(path, index=False)
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_round_trip_csv_and_parquet(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("rel.csv", "rel.parquet"):
        out = tmp_path / name
        report = tmp_path / f"{name}.json"
        code, stdout, err = run(
            [
                "anonymize",
                str(table),
                "-o",
                str(out),
                "--k",
                "3",
                "--qi",
                QI,
                "--numeric",
                "n0,n1",
                "--sensitive",
                "s",
                "--seed",
                "1",
                "--report",
                str(report),
            ],
            capsys,
        )
        assert code == 0, err
        assert "PASS" in stdout
        manifest = json.loads(report.read_text())
        assert manifest["randomness"] == {"source": "seed"}
        assert manifest["verification"]["passed"] and len(manifest["output"]["sha256"]) == 64
        code, stdout, _ = run(
            ["verify", str(table), str(out), "--k", "3", "--qi", QI, "--numeric", "n0,n1"], capsys
        )
        assert code == 0 and stdout.startswith("PASS")
        code, stdout, _ = run(
            [
                "verify",
                str(table),
                str(out),
                "--k",
                "4",
                "--qi",
                QI,
                "--numeric",
                "n0,n1",
                "--json",
            ],
            capsys,
        )
        assert code == 4 and json.loads(stdout)["passed"] is False
        code, stdout, _ = run(
            ["evaluate", str(table), str(out), "--qi", QI, "--numeric", "n0,n1", "--json"], capsys
        )
        assert code == 0
        assert json.loads(stdout)[str(out)]["gcp"] == pytest.approx(manifest["loss"]["gcp"])


def test_no_seed_reports_os_entropy(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    code, _, _ = run(
        [
            "anonymize",
            str(table),
            "-o",
            str(tmp_path / "o.csv"),
            "--k",
            "2",
            "--qi",
            QI,
            "--numeric",
            "n0,n1",
            "--report",
            str(report),
            "-q",
        ],
        capsys,
    )
    assert code == 0 and json.loads(report.read_text())["randomness"] == {"source": "os-entropy"}


def _bad_inputs(tmp: Path, table: Path) -> list[tuple[list[str], int, str]]:
    malformed = tmp / "malformed.csv"
    malformed.write_text("a,b\n1,2\n3,4,5\n")
    dup = tmp / "dup.csv"
    dup.write_text("a,a\n1,2\n")
    empty = tmp / "empty.csv"
    empty.write_text("")
    header_only = tmp / "header.csv"
    header_only.write_text("n0,c0\n")
    text_in_numeric = tmp / "text.csv"
    pd.DataFrame({"n0": [1, 2, "x"], "c0": ["a", "b", "c"]}).to_csv(text_in_numeric, index=False)
    missing_numeric = tmp / "missing.csv"
    pd.DataFrame({"n0": ["1", "?", "3"], "c0": ["a", "b", "c"]}).to_csv(
        missing_numeric, index=False
    )
    base = ["--qi", QI, "--numeric", "n0,n1"]
    t = str(table)
    return [
        ([str(tmp / "nope.csv"), "--k", "2", *base], 2, "not found"),
        ([str(tmp), "--k", "2", *base], 2, "directory"),
        ([str(malformed), "--k", "1", "--qi", "a"], 2, "malformed CSV"),
        ([str(dup), "--k", "1", "--qi", "a"], 2, "appears twice"),
        ([t, "--k", "2", "--qi", "n0,nope"], 2, "unknown column 'nope'"),
        ([t, "--k", "2", "--qi", "n0,c0,n0"], 2, "listed twice"),
        ([t, "--k", "0", *base], 2, "--k must be an integer of at least 1, got 0"),
        ([t, "--k", "41", *base], 3, "infeasible"),
        (
            [str(text_in_numeric), "--k", "1", "--qi", "n0,c0", "--numeric", "n0"],
            2,
            "non-numeric value 'x'",
        ),
        (
            [
                str(missing_numeric),
                "--k",
                "1",
                "--qi",
                "n0,c0",
                "--numeric",
                "n0",
                "--method",
                "mip",
            ],
            2,
            "does not handle missing QI values",
        ),  # fmt: skip
        ([t, "--k", "2", *base, "--na", "n0"], 2, "--na expects COLUMN=CODE"),
        ([t, "--k", "2", *base, "--na", "n0=1|"], 2, "--na expects COLUMN=CODE"),
        ([t, "--k", "2", *base, "--na", "nope=-9"], 2, "unknown column 'nope'"),
        ([t, "--k", "2", *base, "--suppression-limit", "1.5"], 2, "must be in [0, 1)"),
        (
            [t, "--k", "2", *base, "--suppression-limit", "0.1", "--executor", "inline"],
            2,
            "in memory only",
        ),
        ([str(empty), "--k", "1", "--qi", "n0"], 2, "empty"),
        ([str(header_only), "--k", "1", "--qi", "n0"], 2, "no data rows"),
        ([t, "--k", "5", "--partition-size", "9", *base], 2, "at least 2k"),
        ([t, "--k", "2", "--method", "magic", *base], 2, "magic"),
        ([t, "--k", "2", "--qi", "n0", "--numeric", "c0"], 2, "neither a quasi-identifier"),
        ([t, "--k", "2", "--weights", "n0", *base], 2, "name=number"),
    ]


def test_bad_inputs_one_line_exit_code_and_no_output(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args, expected_code, message in _bad_inputs(tmp_path, table):
        out = tmp_path / "release.csv"
        report = tmp_path / "report.json"
        code, _, err = run(
            ["anonymize", *args[:1], "-o", str(out), "--report", str(report), *args[1:]], capsys
        )
        assert code == expected_code, (args, err)
        assert message in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err
        assert not out.exists() and not report.exists()
        assert not list(tmp_path.glob(".release.csv.*"))  # no temporary left behind


def test_drop_missing_and_na_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.csv"
    frame = random_frame(30, 1).astype(str)
    frame.loc[3, "n0"] = "?"
    frame.loc[5, "c0"] = "?"
    frame.to_csv(path, index=False)
    out = tmp_path / "o.csv"
    code, stdout, err = run(
        [
            "anonymize",
            str(path),
            "-o",
            str(out),
            "--k",
            "2",
            "--qi",
            QI,
            "--numeric",
            "n0,n1",
            "--na-values",
            "?",
            "--drop-missing",
        ],
        capsys,
    )
    assert code == 0, err
    assert "(2 dropped" in stdout and len(pd.read_csv(out)) == 28
    # without --drop-missing a missing value is kept and published as '*'
    frame.to_csv(path, index=False)
    code, _, err = run(
        [
            "anonymize",
            str(path),
            "-o",
            str(out),
            "--k",
            "2",
            "--qi",
            QI,
            "--numeric",
            "n0,n1",
            "--na-values",
            "?",
            "-q",
            "--force",  # replaces the release of the run above
        ],
        capsys,
    )
    assert code == 0, err
    published = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(published) == 30  # nobody dropped; each missing value stars its k rows
    assert (published["n0"] == "*").sum() >= 2 and (published["c0"] == "*").sum() >= 2


def test_names_and_separator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.tsv"
    random_frame(20, 2).to_csv(path, index=False, header=False, sep="\t")
    out = tmp_path / "o.csv"
    code, _, err = run(
        [
            "anonymize",
            str(path),
            "-o",
            str(out),
            "--k",
            "2",
            "--names",
            "n0,n1,c0,c1,s",
            "--qi",
            QI,
            "--numeric",
            "n0,n1",
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    assert list(pd.read_csv(out).columns) == ["n0", "n1", "c0", "c1", "s"]


def test_na_codes_and_suppression_limit_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = random_frame(120, 4).astype(str)
    frame.loc[[2, 9, 30, 31], "n0"] = "-9"
    frame.loc[[5, 40], "c0"] = "-8"
    source = tmp_path / "t.csv"
    frame.to_csv(source, index=False)
    out, report = tmp_path / "o.csv", tmp_path / "o.json"
    roles = ["--qi", QI, "--numeric", "n0,n1", "--na", "n0=-9,c0=-8|-7"]
    code, stdout, err = run(
        ["anonymize", str(source), "-o", str(out), "--report", str(report), "--k", "3",
         "--suppression-limit", "0.02", "--seed", "2", *roles],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["parameters"]["na_codes"] == {"n0": ["-9"], "c0": ["-8", "-7"]}
    assert manifest["parameters"]["suppression_limit"] == 0.02
    suppressed = manifest["input"]["suppressed"]
    assert manifest["input"]["records"] == 120 and manifest["input"]["dropped_missing"] == 0
    assert len(pd.read_csv(out)) == 120 - suppressed == manifest["output"]["records"]
    assert "missing QI values kept" in stdout
    verify = ["verify", str(source), str(out), "--k", "3", *roles]
    code, _, _ = run([*verify, "--manifest", str(report)], capsys)
    assert code == 0
    if suppressed:  # without the limit a shorter release fails
        code, stdout, _ = run(verify, capsys)
        assert code == 4 and "rows but the original has 120" in stdout


def test_leaking_kept_column_is_warned_and_refused_with_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25: a kept column that recodes a generalized QI is warned about on stderr (with the
    utility headline on stdout); --strict refuses the release, exit 2, nothing written."""
    n = 600
    frame = pd.DataFrame({"num": [i % 3 for i in range(n)], "x": [i % 5 for i in range(n)]})
    frame["word"] = "w" + frame["num"].astype(str)
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "r.csv"
    args = ["anonymize", str(data), "-o", str(out), "--k", "250", "--qi", "num",
            "--numeric", "num", "--method", "mondrian", "--seed", "1"]  # fmt: skip
    code, stdout, err = run(args, capsys)
    assert code == 0, err
    assert "what the release keeps: exact cells" in stdout
    assert "warning: column 'word' is released unchanged but its value narrows" in err
    out.unlink()
    (tmp_path / "r.csv.schema.json").unlink()
    code, stdout, err = run([*args, "--strict"], capsys)
    assert code == 2 and "refused (--strict): column 'word'" in err
    assert [ln for ln in err.splitlines() if "error" in ln] == [err.splitlines()[-1]]
    assert not out.exists()
    assert not (tmp_path / "r.csv.schema.json").exists()
    code, _, err = run([*args, "--strict", "--identifiers", "word"], capsys)
    assert code == 0 and "column 'word'" not in err
    assert "warning: the release is useless" in err  # one QI, all of it merged


def test_verify_fails_a_release_that_publishes_an_identifier(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An identifier is never published (issue 37: verify had no --identifiers): a release
    that keeps the column fails verify --identifiers and verify --manifest of a run that named
    it an identifier; the release without it passes both."""
    import anonymatch

    frame = random_frame(40, 7)
    frame["pid"] = [f"p{i}" for i in range(40)]
    src = tmp_path / "o.csv"
    frame.to_csv(src, index=False)
    base = ["--k", "3", "--qi", "n0,c0", "--numeric", "n0"]
    leaky, clean, manifest = tmp_path / "leaky.csv", tmp_path / "clean.csv", tmp_path / "m.json"
    assert main(["anonymize", str(src), "-o", str(leaky), *base, "-q", "--seed", "1"]) == 0
    args = ["anonymize", str(src), "-o", str(clean), *base, "--identifiers", "pid", "-q"]
    assert main([*args, "--report", str(manifest)]) == 0
    capsys.readouterr()
    assert main(["verify", str(src), str(leaky), *base, "--identifiers", "pid"]) == 4
    assert "the identifier column 'pid' is published" in capsys.readouterr().out
    assert main(["verify", str(src), str(leaky), "--manifest", str(manifest)]) == 4
    assert main(["verify", str(src), str(clean), "--manifest", str(manifest)]) == 0
    assert main(["verify", str(src), str(clean), *base, "--identifiers", "pid"]) == 0
    released = pd.read_csv(leaky, dtype=str, keep_default_na=False)
    keywords = {"k": 3, "qi": "n0,c0", "numeric": "n0", "identifiers": "pid"}
    assert not anonymatch.tables.verify(frame, released, **keywords).passed


def test_blocks_are_said_in_the_summary_and_windows_are_refused(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["anonymize", str(table), "-o", str(tmp_path / "o.csv"), "--k", "4", "--qi", QI]
    base += ["--numeric", "n0,n1", "--seed", "1", "--force"]
    code, out, _ = run([*base, "--structure", "blocks"], capsys)
    assert code == 0
    assert "published as blocks (classes of k…2k−1 consecutive records): the whole table" in out
    code, out, _ = run(base, capsys)  # k = 4 on 40 rows: the rounds, nothing said
    assert code == 0 and "published as blocks" not in out
    code, _, err = run([*base, "--structure", "windows"], capsys)
    assert code == 2 and "windows" in err
