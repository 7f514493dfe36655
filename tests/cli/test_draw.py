"""``anonymatch draw``, ``evaluate --estimate/--queries`` and ``anonymize --dp-queries``
(issue 39; cli/draw.py)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.tables.io.release import read_release

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "manifest.schema.json").read_text())
QI = ["--qi", "age,job,sex", "--numeric", "age"]
SEED = "424242"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("draw")
    rng = np.random.default_rng(4)
    n = 60
    age = rng.integers(18, 80, n)
    frame = pd.DataFrame(
        {
            "age": age,
            "job": [f"j{x}" for x in rng.integers(0, 3, n)],
            "sex": [("F", "M")[x] for x in rng.integers(0, 2, n)],
            "hours": (20 + 0.4 * age + rng.normal(0, 2, n)).round(1),
        }
    )
    frame.to_csv(d / "t.csv", index=False)
    (d / "q.json").write_text(
        json.dumps(
            {"queries": [{"sex": "F"}, {"age": [30, 49], "job": "j1"}], "marginals": [["job"]]}
        )  # fmt: skip
    )
    code = main(["anonymize", str(d / "t.csv"), "-o", str(d / "r.csv"), "--k", "4", *QI,
                 "--report", str(d / "r.json"), "--dp-queries", str(d / "q.json"),
                 "--epsilon", "2", "-q"])  # fmt: skip
    assert code == 0
    return {"dir": d, "table": d / "t.csv", "release": d / "r.csv", "manifest": d / "r.json",
            "queries": d / "q.json", "frame": frame}  # type: ignore[dict-item]  # fmt: skip


def test_companion_is_published_and_stated(data: dict[str, Path]) -> None:
    doc = json.loads((data["dir"] / "r.csv.dp.json").read_text())
    assert doc["schema"] == "anonymatch-dp/1" and len(doc["answers"]) == 2
    assert doc["epsilon"] <= 2 and doc["delta"] == 0 and "not DP" in doc["caveat"]
    assert doc["marginals"][0]["categories"] == [["j0"], ["j1"], ["j2"]]
    manifest = json.loads(data["manifest"].read_text())
    jsonschema.validate(manifest, SCHEMA)
    block = manifest["dp_companion"]
    assert block["path"] == "r.csv.dp.json" and block["epsilon"] == doc["epsilon"]
    assert block["queries"] == 2 and block["marginals"] == [["job"]]


def test_dp_flags_refused_cleanly(data: dict[str, Path], tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r.csv"
    base = ["anonymize", str(data["table"]), "-o", str(out), "--k", "4", *QI, "-q"]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"age": [9, 1]}]')
    for extra, message in (
        (["--dp-queries", str(data["queries"])], "needs --epsilon"),
        (["--epsilon", "1"], "give --dp-queries"),
        (["--dp-queries", str(bad), "--epsilon", "1"], "lo ≤ hi"),
        (["--dp-queries", str(data["queries"]), "--epsilon", "0"], "--epsilon must be"),
        (["--dp-queries", str(data["queries"]), "--epsilon", "1", "--delta", "1"], "--delta"),
    ):
        code, stdout, err = run([*base, *extra], capsys)
        assert code == 2 and err.count("\n") == 1 and message in err, err
        assert list(tmp_path.iterdir()) == [bad]
    (tmp_path / "r.csv.dp.json").write_text("{}")  # the companion is claimed with the release
    code, _, err = run([*base, "--dp-queries", str(data["queries"]), "--epsilon", "1"], capsys)
    assert code == 2 and "r.csv.dp.json exists" in err and not out.exists()


def test_draws_are_plain_typed_and_inside_their_cells(
    data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "draws"
    code, stdout, err = run(["draw", str(data["release"]), "-m", "3", "-o", str(out),
                             "--manifest", str(data["manifest"]), "--seed", SEED,
                             "--estimate", "mean(age)"], capsys)  # fmt: skip
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == [
        "draw_1.csv", "draw_2.csv", "draw_3.csv", "draws.json"]  # fmt: skip
    assert "3 draws (anchored)" in stdout and "mean(age)" in stdout
    meta = json.loads((out / "draws.json").read_text())
    assert meta["schema"] == "anonymatch-draws/1" and meta["weights"] == "anchored"
    assert meta["degree"] == 4 and meta["guarantee"]["k"] == 4
    assert "no more" in meta["statement"] and meta["randomness"] == {"source": "seed"}
    assert SEED not in (out / "draws.json").read_text()
    release = read_release(data["release"])
    for i in (1, 2, 3):
        draw = pd.read_csv(out / f"draw_{i}.csv")
        assert list(draw.columns) == list(release.columns)
        assert draw["age"].dtype == np.int64 and draw["hours"].dtype == np.float64
        lo, hi = release["age"].array.left, release["age"].array.right
        assert ((draw["age"] >= lo) & (draw["age"] <= hi)).all()
        assert all(v in cell for v, cell in zip(draw["job"], release["job"], strict=True))


def test_draw_refusals_leave_nothing(
    data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "d"
    code, _, err = run(["draw", str(data["release"]), "-o", str(out), "--weights", "anchored"],
                       capsys)  # fmt: skip
    assert code == 2 and "--manifest" in err and not out.exists()
    code, _, err = run(["draw", str(data["release"]), "-o", str(out), "--estimate", "eval(x)"],
                       capsys)  # fmt: skip
    assert code == 2 and "cannot read the estimate" in err and not out.exists()
    code, _, err = run(["draw", str(data["release"]), "-o", str(out), "--estimate", "mean(nope)"],
                       capsys)  # fmt: skip
    assert code == 2 and "nope" in err and not out.exists()
    out.mkdir()
    (out / "draw_1.csv").write_text("keep")
    code, _, err = run(["draw", str(data["release"]), "-o", str(out), "-m", "2"], capsys)
    assert code == 2 and "exists" in err
    assert sorted(p.name for p in out.iterdir()) == ["draw_1.csv"]


def test_evaluate_estimate_and_queries(
    data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "draws"
    assert main(["draw", str(data["release"]), "-m", "4", "-o", str(out), "-q",
                 "--manifest", str(data["manifest"])]) == 0  # fmt: skip
    capsys.readouterr()
    base = ["evaluate", str(data["table"]), *QI]
    code, stdout, err = run([*base, str(out), "--estimate", "mean(age)", "--estimate",
                             "ols(hours ~ age + sex)", "--json"], capsys)  # fmt: skip
    assert code == 0, err
    rows = json.loads(stdout)
    assert [r["term"] for r in rows] == ["mean(age)", "(intercept)", "age", "sex[M]"]
    frame = data["frame"]
    assert rows[0]["original"] == pytest.approx(frame["age"].mean())  # type: ignore[union-attr]
    assert all(r["m"] == 4 and 0 <= r["fraction_missing"] <= 1 for r in rows)
    code, stdout, err = run([*base, str(data["release"]), str(out), "--queries",
                             str(data["queries"]), "--json"], capsys)  # fmt: skip
    assert code == 0, err
    table = json.loads(stdout)
    assert set(table["answers"]) == {"r.csv", "r.csv.dp.json (ε=2)", "draws/ (mean of 4)"}
    assert table["original"][0] == int((frame["sex"] == "F").sum())  # type: ignore[index]
    code, stdout, _ = run([*base, str(data["release"]), "--queries", str(data["queries"])],
                          capsys)  # fmt: skip
    assert code == 0 and "median relative error" in stdout


def test_report_states_the_companion_and_its_caveat(
    data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html = tmp_path / "r.html"
    code, _, err = run(["report", "--manifest", str(data["manifest"]), "-o", str(html)], capsys)
    assert code == 0, err
    text = " ".join(html.read_text().split())
    assert "differentially private companion, r.csv.dp.json" in text
    assert "k-anonymous, not DP" in text


def test_report_puts_release_draws_and_companion_side_by_side(
    data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html = tmp_path / "r.html"
    args = ["report", str(data["table"]), str(data["release"]), "--manifest",
            str(data["manifest"]), "-o", str(html)]  # fmt: skip
    code, _, err = run(args, capsys)
    assert code == 0, err
    text = " ".join(html.read_text().split())
    assert "count error (median)" in text and "5 draws (mean count)" in text
    assert "the DP companion (r.csv.dp.json)" in text and "k-anonymity, k = 4" in text


def test_a_job_file_declares_the_companion(
    data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job.toml"
    job.write_text(
        'schema = "anonymatch-job/1"\nkind = "table"\n'
        f'[input]\npath = "{data["table"]}"\n'
        '[columns.age]\nrole = "qi"\ntype = "numeric"\n'
        '[columns.job]\nrole = "qi"\n[columns.sex]\nrole = "qi"\n[columns.hours]\nrole = "other"\n'
        "[model]\nk = 4\n"
        f'[output]\npath = "r.csv"\nreport = "r.json"\ndp_queries = "{data["queries"]}"\n'
        "epsilon = 0.5\ndelta = 1e-6\n"
    )
    code, _, err = run(["anonymize", "--config", str(job), "-q"], capsys)
    assert code == 0, err
    block = json.loads((tmp_path / "r.json").read_text())["dp_companion"]
    assert block["epsilon"] <= 0.5 and block["delta"] == pytest.approx(1e-6)
    assert (tmp_path / "r.csv.dp.json").is_file()
    job.write_text(job.read_text().replace("epsilon = 0.5", "epsilon = 0"))
    code, _, err = run(["anonymize", "--config", str(job), "-q", "--force"], capsys)
    assert code == 2 and "epsilon" in err


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A release of a table with a label to predict, three seeded draws of it, a test table."""
    d = tmp_path_factory.mktemp("learn")
    rng = np.random.default_rng(39)
    n = 240
    age = rng.integers(18, 80, n)
    sex = rng.choice(["F", "M"], n)
    rich = (age + 8 * (sex == "M") + rng.normal(0, 8, n)) > 52
    frame = pd.DataFrame({"age": age, "sex": sex, "job": rng.choice(["a", "b", "c"], n),
                          "y": np.where(rich, "yes", "no")})  # fmt: skip
    frame.iloc[:160].to_csv(d / "t.csv", index=False)
    frame.iloc[160:].to_csv(d / "test.csv", index=False)
    assert main(["anonymize", str(d / "t.csv"), "-o", str(d / "r.csv"), "--k", "4", *QI,
                 "--report", str(d / "r.json"), "--seed", SEED, "-q"]) == 0  # fmt: skip
    assert main(["draw", str(d / "r.csv"), "-m", "3", "-o", str(d / "draws"), "--manifest",
                 str(d / "r.json"), "--seed", "7", "-q"]) == 0  # fmt: skip
    return {"dir": d, "table": d / "t.csv", "release": d / "r.csv", "manifest": d / "r.json",
            "test": d / "test.csv", "draws": d / "draws"}  # fmt: skip


def _rows(html: str, first: str) -> dict[str, list[str]]:
    """The table of ``html`` whose header starts with ``first``: label → the other cells."""
    import re

    for table in re.findall(r"<table.*?</table>", html, flags=re.S):
        cells = [
            [re.sub(r"<[^>]+>", "", c).strip()
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, flags=re.S)]
            for r in re.findall(r"<tr.*?</tr>", table, flags=re.S)
        ]  # fmt: skip
        if cells and cells[0] and cells[0][0] == first:
            return {row[0]: row[1:] for row in cells[1:]}
    raise AssertionError(f"no table headed {first!r}")


def test_report_models_equal_evaluates_on_the_same_draws(
    labelled: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The side-by-side page's accuracies are evaluate --classify's on the same files and seed:
    the release, each draw, their mean and the original."""
    d = labelled
    code, stdout, err = run(["evaluate", str(d["table"]), str(d["release"]), str(d["draws"]),
                             *QI, "--classify", "y", "--test", str(d["test"]), "--json"],
                            capsys)  # fmt: skip
    assert code == 0, err
    printed = json.loads(stdout)
    assert [Path(r["path"]).name for r in printed["releases"]] == [
        "r.csv", "draw_1.csv", "draw_2.csv", "draw_3.csv"]  # fmt: skip
    html = tmp_path / "r.html"
    code, _, err = run(["report", str(d["table"]), str(d["release"]), "--manifest",
                        str(d["manifest"]), "-o", str(html), "--test", str(d["test"]),
                        "--classify", "y", "--draws", str(d["draws"])], capsys)  # fmt: skip
    assert code == 0, err
    page = _rows(html.read_text(), "trained on")

    def shown(scores: dict[str, float]) -> list[str]:
        return [f"{100 * scores[m]:.2f}%" for m in ("logistic", "gradient_boosting")]

    assert page["the release (r.csv)"] == shown(printed["releases"][0]["classify"])
    for i in (1, 2, 3):
        assert page[f"draw_{i}.csv"] == shown(printed["releases"][i]["classify"])
    mean = {m: float(np.mean([r["classify"][m] for r in printed["releases"][1:]]))
            for m in ("logistic", "gradient_boosting")}  # fmt: skip
    assert page["the draws: mean of 3"] == shown(mean)
    assert page["the original (ceiling)"] == shown(printed["original"]["classify"])
    assert page["majority class (floor)"][0] == f"{100 * printed['majority']:.2f}%"
    # each draw file alone is read the same way
    code, stdout, err = run(["evaluate", str(d["table"]), str(d["draws"] / "draw_2.csv"), *QI,
                             "--classify", "y", "--test", str(d["test"]), "--json"],
                            capsys)  # fmt: skip
    assert code == 0, err
    assert json.loads(stdout)["releases"][0]["classify"] == printed["releases"][2]["classify"]


def test_report_without_draws_dir_trains_on_fresh_draws(
    labelled: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = labelled
    html = tmp_path / "r.html"
    code, _, err = run(["report", str(d["table"]), str(d["release"]), "--manifest",
                        str(d["manifest"]), "-o", str(html), "--test", str(d["test"]),
                        "--classify", "y"], capsys)  # fmt: skip
    assert code == 0, err
    page = _rows(html.read_text(), "trained on")
    assert [f"draw {i} (fresh)" in page for i in range(1, 6)] == [True] * 5
    assert "the draws: mean of 5" in page and "the release (r.csv)" in page


def test_report_refuses_draws_of_another_release(
    labelled: dict[str, Path], data: dict[str, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    other = tmp_path / "other"
    assert main(["draw", str(data["release"]), "-m", "2", "-o", str(other), "-q"]) == 0
    d = labelled
    html = tmp_path / "r.html"
    base = ["report", str(d["table"]), str(d["release"]), "--manifest", str(d["manifest"]),
            "-o", str(html)]  # fmt: skip
    for extra, message in (
        (["--draws", str(other)], "not drawn from this release"),
        (["--draws", str(tmp_path / "none")], "not a directory of draws"),
    ):
        code, _, err = run([*base, *extra], capsys)
        assert code == 2 and err.count("\n") == 1 and message in err, err
        assert not html.exists()
    code, _, err = run(["report", "--manifest", str(d["manifest"]), "-o", str(html),
                        "--draws", str(d["draws"])], capsys)  # fmt: skip
    assert code == 2 and "--draws needs ORIGINAL" in err and not html.exists()


def test_draw_reads_the_release_and_manifest_of_a_job_file(
    data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``draw --config JOB``: the release is the job's output.path and the manifest its
    output.report, so the draws are anchored with the release's k."""
    job = tmp_path / "job.toml"
    job.write_text(
        'schema = "anonymatch-job/1"\nkind = "table"\n'
        f'[input]\npath = "{data["table"]}"\n'
        '[columns.age]\nrole = "qi"\ntype = "numeric"\n'
        '[columns.job]\nrole = "qi"\n[columns.sex]\nrole = "qi"\n[columns.hours]\nrole = "other"\n'
        '[model]\nk = 4\n[output]\npath = "r.csv"\nreport = "r.json"\n'
    )
    assert main(["anonymize", "--config", str(job), "-q"]) == 0
    code, stdout, err = run(["draw", "--config", str(job), "-o", str(tmp_path / "d"), "-m", "2"],
                            capsys)  # fmt: skip
    assert code == 0, err
    assert "2 draws (anchored) of r.csv" in stdout
    meta = json.loads((tmp_path / "d" / "draws.json").read_text())
    assert meta["degree"] == 4 and meta["release"]["path"] == "r.csv"
    # the job file may say how many draws and where ([output] draws, draws_dir: relative to
    # the job file's directory); the command line still wins
    job.write_text(job.read_text() + 'draws = 3\ndraws_dir = "jd"\n')
    code, stdout, err = run(["draw", "--config", str(job)], capsys)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "jd").iterdir()) == [
        "draw_1.csv", "draw_2.csv", "draw_3.csv", "draws.json",
    ]  # fmt: skip
    code, _, err = run(["draw", "--config", str(job), "-m", "2", "-o", str(tmp_path / "e")],
                       capsys)  # fmt: skip
    assert code == 0, err
    assert len(list((tmp_path / "e").glob("draw_*.csv"))) == 2
