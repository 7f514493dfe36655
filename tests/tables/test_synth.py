"""Synthetic census generator: the Chow–Liu tree against brute force, sampled frequencies
against the fitted CPTs (chi-square), reproducibility independent of the write batch, JSON
round trip, atomic writes, and the CLI's bad inputs."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from scipy import stats
from sklearn.metrics import mutual_info_score

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.tables.synth import (
    BLOCK_ROWS,
    CENSUS_COLUMNS,
    CensusModel,
    example_census_frame,
    fit_adult,
    fit_census_model,
    write_census,
)


def tree_table(n: int, seed: int, sizes: tuple[int, ...] = (3, 4, 2, 5, 3)) -> pd.DataFrame:
    """Columns x0..x{d-1} generated along a random tree: each child copies a function of its
    parent with probability 0.3-0.8 (a different strength per edge), else is uniform."""
    rng = np.random.default_rng(seed)
    d = len(sizes)
    parents = [-1] + [int(rng.integers(0, i)) for i in range(1, d)]
    strength = rng.uniform(0.3, 0.8, d)
    cols: list[np.ndarray] = []
    for i in range(d):
        uniform = rng.integers(0, sizes[i], n)
        if parents[i] < 0:
            cols.append(uniform)
            continue
        mapping = rng.integers(0, sizes[i], sizes[parents[i]])
        copy = rng.random(n) < strength[i]
        cols.append(np.where(copy, mapping[cols[parents[i]]], uniform))
    frame = pd.DataFrame({f"x{i}": [f"v{v}" for v in c] for i, c in enumerate(cols)})
    frame["x1"] = cols[1] * 5 + 18  # one integer column
    return frame


@pytest.fixture(scope="module")
def small_model() -> CensusModel:
    return fit_census_model(tree_table(3000, 11, sizes=(4, 6, 3, 30, 5)), root="x2")


def brute_force_trees(weights: np.ndarray) -> list[tuple[float, frozenset[frozenset[int]]]]:
    d = weights.shape[0]
    pairs = list(itertools.combinations(range(d), 2))
    out = []
    for edges in itertools.combinations(pairs, d - 1):
        g = nx.Graph(list(edges))
        g.add_nodes_from(range(d))
        if nx.is_tree(g):
            out.append((sum(weights[e] for e in edges), frozenset(frozenset(e) for e in edges)))
    return sorted(out, key=lambda t: -t[0])


def miller_madow_mi(x: pd.Series, y: pd.Series) -> float:
    """Independent oracle: Ha + Hb − Hab, each entropy plus (non-empty cells − 1)/2n."""

    def h(counts: np.ndarray) -> float:
        counts = counts[counts > 0]
        return float(stats.entropy(counts) + (len(counts) - 1) / (2 * counts.sum()))

    joint = pd.crosstab(x, y).to_numpy()
    return h(joint.sum(axis=1)) + h(joint.sum(axis=0)) - h(joint.ravel())


@pytest.mark.parametrize("estimator", ["plugin", "miller-madow"])
@pytest.mark.parametrize("seed", range(6))
def test_chow_liu_is_the_brute_force_maximum_spanning_tree(seed: int, estimator: str) -> None:
    frame = tree_table(1500, seed)
    model = fit_census_model(frame, estimator=estimator)
    cols = list(frame.columns)
    d = len(cols)
    mi = np.zeros((d, d))
    oracle = mutual_info_score if estimator == "plugin" else miller_madow_mi
    for i, j in itertools.combinations(range(d), 2):
        mi[i, j] = mi[j, i] = oracle(frame[cols[i]], frame[cols[j]])
    trees = brute_force_trees(mi)
    assert len(trees) == d ** (d - 2)  # Cayley
    best_weight, best = trees[0]
    assert best_weight - trees[1][0] > 1e-9  # the maximum is unique on these tables
    got = frozenset(frozenset((cols.index(p), cols.index(c))) for p, c, _ in model.edges)
    assert got == best
    for p, c, w in model.edges:
        assert w == pytest.approx(mi[cols.index(p), cols.index(c)], abs=1e-12)
    # the orientation: a tree rooted at the first column, parents before children
    assert model.root == cols[0] and model.order[0] == cols[0]
    assert all(model.order.index(p) < model.order.index(c) for p, c, _ in model.edges)
    assert model.integer == ("x1",) and model.values["x1"] == sorted(model.values["x1"])


def test_fit_counts_are_the_data_counts(small_model: CensusModel) -> None:
    frame = tree_table(3000, 11, sizes=(4, 6, 3, 30, 5))
    for p, c, _ in small_model.edges:
        expected = pd.crosstab(frame[p], frame[c])
        expected = expected.reindex(index=small_model.values[p], columns=small_model.values[c])
        assert np.array_equal(small_model.counts[c], expected.to_numpy())
    root = small_model.root
    assert np.array_equal(
        small_model.counts[root], frame[root].value_counts()[small_model.values[root]].to_numpy()
    )


def _chi2_pvalue(observed: np.ndarray, probs: np.ndarray) -> float:
    live = probs > 0
    assert observed[~live].sum() == 0  # a value never seen under this parent is never drawn
    return float(stats.chisquare(observed[live], observed.sum() * probs[live]).pvalue)


def test_sampled_marginals_and_conditionals_match_the_cpts(small_model: CensusModel) -> None:
    n = 300_000
    sample = small_model.sample(n, seed=2024)
    assert len(sample) == n and list(sample.columns) == list(small_model.columns)
    codes = {c: pd.Index(small_model.values[c]).get_indexer(sample[c]) for c in small_model.columns}
    assert all((v >= 0).all() for v in codes.values())
    pvalues = []
    root = small_model.root
    obs = np.bincount(codes[root], minlength=len(small_model.values[root]))
    pvalues.append(_chi2_pvalue(obs, small_model.cpt(root)))
    power = []
    for p, c, _ in small_model.edges:
        table = small_model.cpt(c)
        for r in range(table.shape[0]):
            child = codes[c][codes[p] == r]
            obs = np.bincount(child, minlength=table.shape[1])
            if obs.sum() * table[r][table[r] > 0].min() < 5:
                continue  # too few draws under this parent value for the chi-square test
            pvalues.append(_chi2_pvalue(obs, table[r]))
            marginal = small_model.marginal(c) / small_model.rows_fitted
            if np.abs(marginal - table[r]).sum() > 0.2:  # the test detects a wrong CPT row
                power.append(stats.chisquare(obs, obs.sum() * marginal).pvalue)
    assert len(pvalues) > 20
    assert min(pvalues) > 1e-4 / len(pvalues)  # Bonferroni, family-wise 1e-4
    assert power and max(power) < 1e-6


def test_output_depends_only_on_seed_and_rows(tmp_path: Path, small_model: CensusModel) -> None:
    rows, seed = 2 * BLOCK_ROWS + 123, 7
    expected = small_model.sample(rows, seed)
    for chunk in (1000, 50_000, 10**6):
        path = tmp_path / f"s{chunk}.parquet"
        write_census(small_model, path, rows, seed, chunk_rows=chunk)
        meta = pq.ParquetFile(path).metadata
        assert meta.num_row_groups == -(-rows // chunk) and meta.num_rows == rows
        back = pd.read_parquet(path)
        pd.testing.assert_frame_equal(back, expected)
    texts = set()
    for chunk in (999, 65_536, 10**6):
        path = tmp_path / f"s{chunk}.csv"
        write_census(small_model, path, rows, seed, chunk_rows=chunk)
        texts.add(path.read_bytes())
    assert len(texts) == 1
    back = pd.read_csv(tmp_path / "s999.csv", dtype={"x1": "int64"})
    assert back["x1"].dtype == np.int64
    pd.testing.assert_frame_equal(back.astype(str), expected.astype(str))
    other = small_model.sample(rows, seed + 1)
    assert not other.equals(expected)
    # block i's randomness is child i of SeedSequence(seed)
    children = np.random.SeedSequence(seed).spawn(3)
    for i, child in enumerate(children):
        direct = np.random.SeedSequence(seed, spawn_key=(i,))
        assert np.array_equal(direct.generate_state(8), child.generate_state(8))


def test_parquet_types(tmp_path: Path) -> None:
    frame = tree_table(500, 3)
    frame["x3"] = frame["x3"].str[1:].astype(int)  # numeric text: integer
    model = fit_census_model(frame)
    path = tmp_path / "t.parquet"
    write_census(model, path, 100, 1)
    schema = pq.read_schema(path)
    assert {f.name: str(f.type) for f in schema} == {
        "x0": "string",
        "x1": "int64",
        "x2": "string",
        "x3": "int64",
        "x4": "string",
    }


def test_json_round_trip(tmp_path: Path, small_model: CensusModel) -> None:
    path = tmp_path / "m.json"
    small_model.save(path)
    back = CensusModel.load(path)
    assert back.to_dict() == small_model.to_dict()
    assert json.loads(path.read_text())["format"] == "anonymatch-census-model"
    pd.testing.assert_frame_equal(back.sample(5000, 3), small_model.sample(5000, 3))


def _tampered(model: CensusModel, edit: object) -> str:
    data = model.to_dict()
    edit(data)  # type: ignore[operator]
    return json.dumps(data)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(format="other"),
        lambda d: d["counts"][d["order"][1]][0].__setitem__(
            0, d["counts"][d["order"][1]][0][0] + 1
        ),
        lambda d: d["counts"].pop(d["order"][2]),
        lambda d: d["parent"].__setitem__(d["order"][1], d["order"][1]),
        lambda d: d["columns"][0].update(kind="float"),
        lambda d: d.update(rows_fitted="many"),
        lambda d: d["columns"][1]["values"].__setitem__(1, d["columns"][1]["values"][0]),
        lambda d: d["counts"].__setitem__(d["order"][0], [[1, 2], [3]]),
    ],
)
def test_malformed_models_are_rejected(small_model: CensusModel, edit: object) -> None:
    with pytest.raises(InputError, match="invalid census model"):
        CensusModel.from_json(_tampered(small_model, edit))
    with pytest.raises(InputError, match="not JSON"):
        CensusModel.from_json("{")


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_interrupted_write_leaves_nothing(
    tmp_path: Path, small_model: CensusModel, ext: str
) -> None:
    target = tmp_path / f"out.{ext}"

    def interrupt(rows: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_census(small_model, target, 3 * BLOCK_ROWS, 1, chunk_rows=1000, progress=interrupt)
    assert list(tmp_path.iterdir()) == []
    target.write_text("previous")
    with pytest.raises(KeyboardInterrupt):
        write_census(small_model, target, 3 * BLOCK_ROWS, 1, chunk_rows=1000, progress=interrupt)
    assert list(tmp_path.iterdir()) == [target] and target.read_text() == "previous"


def test_fit_input_errors() -> None:
    frame = tree_table(200, 1)
    with pytest.raises(InputError, match="no column"):
        fit_census_model(frame, ["x0", "nope"])
    with pytest.raises(InputError, match="root"):
        fit_census_model(frame, ["x0", "x1"], root="x2")
    with pytest.raises(InputError, match="not integer-valued"):
        fit_census_model(frame, integer=["x0"])
    with pytest.raises(InputError, match="no complete rows"):
        fit_census_model(frame.assign(x0="?"))
    with pytest.raises(InputError, match="rows must be"):
        fit_census_model(frame).sample(0, 1)
    holes = frame.copy()
    holes.loc[:9, "x0"] = "?"
    holes.loc[10:14, "x2"] = None
    assert fit_census_model(holes).rows_fitted == len(frame) - 15


def test_example_census_frame_needs_no_data(tmp_path: Path) -> None:
    frame = example_census_frame(5000, seed=3)
    assert list(frame.columns) == list(CENSUS_COLUMNS) and len(frame) == 5000
    model = fit_census_model(frame, root="age")
    assert model.integer == ("age", "education-num", "hours-per-week")
    assert len(model.edges) == len(CENSUS_COLUMNS) - 1
    pd.testing.assert_frame_equal(example_census_frame(5000, seed=3), frame)
    write_census(model, tmp_path / "e.parquet", 1000, 1)
    assert pq.ParquetFile(tmp_path / "e.parquet").metadata.num_rows == 1000


# ----------------------------------------------------------------------------------- CLI
def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_generates_from_a_saved_model(
    tmp_path: Path, small_model: CensusModel, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "m.json"
    small_model.save(model)
    out = tmp_path / "o.parquet"
    args = ["generate-census", "-o", str(out), "--rows", "5000", "--model", str(model)]
    code, stdout, err = run([*args, "--seed", "9"], capsys)
    assert code == 0, err
    assert "seed 9" in stdout and "5000 synthetic rows" in stdout
    pd.testing.assert_frame_equal(pd.read_parquet(out), small_model.sample(5000, 9))
    # default seed: OS entropy, printed, and reproducing the file
    args.append("--force")  # replace the file of the run before
    code, stdout, err = run(args, capsys)
    assert code == 0, err
    seed = int(stdout.split("seed ")[1].split()[0])
    pd.testing.assert_frame_equal(pd.read_parquet(out), small_model.sample(5000, seed))
    code, stdout, _ = run([*args, "--seed", "9", "-q"], capsys)
    assert code == 0 and stdout == ""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rows", "0"], "--rows must be at least 1"),
        (["--rows", "-5"], "--rows must be at least 1"),
        (["-o", "OUT/x.txt"], "unsupported extension .txt; supported: .csv, .parquet"),
        (["-o", "OUT/missing/x.csv"], "output directory does not exist"),
        (["-o", "OUT/file.txt/x.csv"], "output directory does not exist"),
        (["-o", "OUT/dir.csv"], "dir.csv exists; pass --force to replace it"),
        (["-o", "OUT/dir.csv", "--force"], "is a directory"),
        (["--source", "OUT/adult.data"], "dataset file not found"),
        (["--model", "OUT/none.json"], "model file not found"),
        (["--model", "OUT/bad.json"], "invalid census model"),
        (["--model", "OUT/m.json", "--source", "x"], "cannot be combined"),
        (["--model", "OUT/m.json", "--estimator", "plugin"], "cannot be combined"),
        (["--seed", "-1"], "--seed must be a non-negative"),
        (["--chunk-rows", "0"], "--chunk-rows must be at least 1"),
        (["--model-out", "OUT/x.csv", "--source", "OUT/adult.data"], "same file"),
    ],
)
def test_cli_bad_inputs(
    tmp_path: Path,
    small_model: CensusModel,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    small_model.save(tmp_path / "m.json")
    (tmp_path / "bad.json").write_text('{"format": "anonymatch-census-model"}')
    (tmp_path / "file.txt").write_text("")
    (tmp_path / "dir.csv").mkdir()
    before = sorted(tmp_path.iterdir())
    args = {"-o": str(tmp_path / "x.csv"), "--rows": "10"}
    extra = [x.replace("OUT", str(tmp_path)) for x in extra]
    i = 0
    rest = []
    while i < len(extra):
        if extra[i] in args:
            args[extra[i]] = extra[i + 1]
            i += 2
        else:
            rest.append(extra[i])
            i += 1
    if "--model" not in rest and "--source" not in rest:
        rest += ["--model", str(tmp_path / "m.json")]
    argv = ["generate-census", *itertools.chain(*args.items()), *rest]
    code, out, err = run(argv, capsys)
    assert code == 2, (argv, out, err)
    assert err.count("\n") == 1 and message in err, err
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_cli_unwritable_directory(
    tmp_path: Path, small_model: CensusModel, capsys: pytest.CaptureFixture[str]
) -> None:
    small_model.save(tmp_path / "m.json")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    argv = ["generate-census", "-o", str(locked / "x.csv"), "--rows", "5"]
    code, _, err = run([*argv, "--model", str(tmp_path / "m.json")], capsys)
    assert code == 2 and "not writable" in err


# ----------------------------------------------------------------------------- real data
@pytest.mark.skipif(not os.environ.get("ANONYMATCH_DATA"), reason="needs ANONYMATCH_DATA")
def test_fit_adult_and_sample() -> None:
    model = fit_adult()
    assert model.rows_fitted == 30_162 and model.columns == CENSUS_COLUMNS
    assert model.estimator == "miller-madow"
    assert {"occupation", "sex"} in [{p, c} for p, c, _ in model.edges]
    assert len(model.edges) == len(CENSUS_COLUMNS) - 1
    assert model.integer == ("age", "education-num", "hours-per-week")
    assert len(model.values["age"]) == 72 and len(model.values["native-country"]) == 41
    sample = model.sample(100_000, 5)
    assert sample["age"].dtype == np.int64 and sample["age"].between(17, 90).all()
    for c in model.columns:
        real = model.marginal(c) / model.rows_fitted
        synth = sample[c].value_counts(normalize=True).reindex(model.values[c], fill_value=0)
        assert 0.5 * np.abs(real - synth.to_numpy()).sum() < 0.02, c
