"""The analyst's side: models trained on releases, tested on original rows; Rubin's estimates.

Parts (``--parts``, default all):

* ``full``: Adult — train on a release of adult.data (30,162 complete rows; the 8 QIs of the
  GCP table, numeric age and education-num), test on the 15,060 complete original rows of
  adult.test (first line skipped, the label's trailing "." dropped). Features: every column of
  the release but the label, ``income``, and ``education`` (the text twin of the QI
  education-num, kept exact: using it would bypass the generalization). Methods: ours
  (hungarian, sortgreedy, mondrian) and ANJANA (global recoding over ARX's hierarchies,
  ``_anjana.py``; its release keeps the input's row order, so the kept columns are attached).
* ``qi``: the same with the 8 QIs as the only features — the public Mondrian
  (qiyuangong/Mondrian, ``_mondrian_peer.py``) publishes only the QIs and the label, in its own
  row order, so this is the table where every tool is compared on equal features.
* ``models``: k = 10 with income as the sensitive attribute: distinct ℓ = 2 and t = 0.2
  (ours: hungarian, mondrian; ANJANA's own ℓ-diversity and t-closeness).
* ``tables``: heart_cleveland (297 complete rows; QIs age, sex, cp, trestbps, chol; label
  disease = num > 0) and FARS (arx_fars/fars_subset.csv, 10,093 rows; QIs iage, isex,
  istatenum; label iinjury, 7 classes; race, Hispanic origin and the death month and day
  dropped: recorded from death certificates, they give the fatal class away). No separate test
  file: a seeded 30 % of the rows is held out and the release is made of the other 70 %.
  Methods (``--table-methods``): hungarian, our mondrian, ANJANA (``_anjana.run_anjana`` with
  ``table_hierarchies``: ARX's FARS hierarchies; for heart_cleveland, which has none,
  intervals for the numeric QIs and suppression for the categorical ones) and the public
  Mondrian (``_mondrian_peer.py --table``: the peer on any CSV, rows mapped back by number).
  Every peer release is checked by our verifier (``verify_release``; column ``verified``).
* ``rubin``: ``--repeats`` hungarian releases of Adult at k = 10 (seeds 1…R), m = ``--m`` draws
  inside the cells each (uniform, the release's marginal, and anchored with degree 10 —
  ``draw_microdata(weights="anchored")``), Rubin-combined estimates of the mean age, the share
  of income >50K and the OLS coefficient of age in hours-per-week ~ age + education-num, with
  the coverage of their 95 % intervals of the original's value.

* ``draws`` (issue 39): hungarian releases of Adult (the 8 QIs and income; all columns) at
  k = ``--draw-ks``: what ``anonymatch draw -m 5`` costs against anonymizing (``plain_draws``
  with anchored weights, plus writing the five CSV files), the accuracy of the models trained on
  a draw (the mean over three draws) beside those trained on the release, and 20 random 2-way
  count queries (seeded) answered by the release (expected counts), the mean of the five draws
  and the DP companion at ε = 1 (``tables.models.dp.companion``, OpenDP); then ``--repeats``
  random halves of adult.data at k = 10, ``--m`` anchored draws each, and how often the Rubin
  intervals of ``combine`` cover the half's mean age and its OLS age coefficient in
  hours-per-week ~ age + sex.
* ``coverage`` (issue 39): that coverage measurement alone, on ``--coverage-repeats`` releases
  (one fresh seed each, from ``--first-seed``) of each of ``--coverage-data``: random halves of
  adult.data (the data change with the seed) and the whole of adult.data (the seed draws the
  published assignment and the draws); the intervals are drawn per release in a figure.

Models: logistic regression and gradient boosting (scikit-learn, ``anonymatch.tables.learn``),
beside the same models trained on the original (ceiling) and the majority class (floor).
Writes docs/results.md (section analyst_adult), benchmarks/results/analyst_adult.json and
docs/img/analyst_adult.png. The public Mondrian needs its checkout (``_mondrian_peer.py``),
ANJANA its package (``pip install anjana``, see ``_anjana.py``); a part's peer is skipped when
it is absent.

Usage: python benchmarks/analyst_adult.py [--ks 5,10,20,50,100] [--qi-ks 10,50,100]
       [--methods hungarian,sortgreedy,mondrian,anjana] [--repeats 20] [--m 10]
       [--parts full,qi,models,tables,rubin,halves,draws,coverage] [--from-json]
       [--coverage-repeats 50] [--first-seed 1] [--coverage-data halves,whole]
       [--table-methods hungarian,mondrian,anjana,mondrian-public]
       [--model-methods hungarian,mondrian,anjana]
The peers need ANJANA importable (e.g. PYTHONPATH=/tmp/a2/pylib, installed --no-deps with
pycanon and beartype) and the public Mondrian's checkout ($MONDRIAN_PEER).
Parts run by separate invocations (or processes) add up in benchmarks/results/analyst_adult.json;
the docs section is rendered from it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# one OpenMP thread: scikit-learn's gradient boosting on a shared 2-core machine otherwise
# spends most of its time in thread contention (33 s instead of 1 s on heart's 208 rows)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd
from _common import (
    ADULT_NAMES,
    ADULT_QI,
    ROOT,
    adult_path,
    data_file,
    dump,
    machine,
    update_results,
)

import anonymatch
from anonymatch.tables.datasets import load_adult
from anonymatch.tables.io.release import midpoints, read_release
from anonymatch.tables.io.sidecar import RELEASE_SCHEMA, kept_column_dtype, schema_path
from anonymatch.tables.models.imputation import (
    draw_microdata,
    ols,
    rubin_coefficient,
    rubin_mean,
    rubin_proportion,
)
from anonymatch.tables.models.learn import learn, split

LABEL = "income"
RICH = ">50K"
QI = ADULT_QI.split(",")
NUMERIC = ["age", "education-num"]
PARTS = ("full", "qi", "models", "tables", "rubin", "halves", "draws", "coverage")
PEERS = ("anjana", "mondrian-public")
METHOD_ORDER = ("hungarian", "sortgreedy", "mondrian", *PEERS)  # ours first, in the tables
WEIGHTS = ("uniform", "marginal", "anchored")


def adult_test() -> pd.DataFrame:
    frame = pd.read_csv(
        data_file("adult/adult.test", "Adult test"),
        names=ADULT_NAMES.split(","),
        skiprows=1,
        dtype=str,
        skipinitialspace=True,
    )
    frame = frame.loc[~(frame == "?").any(axis=1)].reset_index(drop=True)
    frame[LABEL] = frame[LABEL].str.rstrip(".")
    return frame


def typed(frame: pd.DataFrame, qi: list[str], numeric: list[str], path: Path) -> pd.DataFrame:
    """A text release (cells ``lo..hi``, ``a|b``, ``*``) as ``read_release`` types it: written
    to CSV with its sidecar, read back."""
    frame.to_csv(path, index=False)
    columns: list[dict[str, object]] = []
    for name in map(str, frame.columns):
        if name in numeric:
            floats = frame[name].astype(str).str.contains(r"(?:^|[^.])\.\d", regex=True).any()
            values = "float" if floats else "integer"
            columns.append({"name": name, "role": "qi", "cell": "range", "values": values})
        elif name in qi:
            columns.append({"name": name, "role": "qi", "cell": "set"})
        else:
            columns.append({"name": name, "role": "kept", "dtype": kept_column_dtype(frame[name])})
    doc = {"schema": RELEASE_SCHEMA, "columns": columns}
    Path(schema_path(path)).write_text(json.dumps(doc))
    release = read_release(path)
    release.attrs["path"] = str(path)  # the text release, for the verifier
    return release


def ours(
    data: pd.DataFrame,
    spec: dict[str, object],
    k: int,
    method: str,
    out: Path,
    seed: int = 0,
    model: dict[str, object] | None = None,
) -> tuple[pd.DataFrame, float]:
    qi, numeric = list(spec["qi"]), list(spec["numeric"])  # type: ignore[call-overload]
    started = time.perf_counter()
    extra: dict[str, object] = dict(model or {})
    if extra:
        extra["sensitive"] = spec["label"]
    rel = anonymatch.tables.anonymize(
        data, k=k, qi=qi, numeric=numeric, method=method, seed=seed, **extra
    ).release
    wall = time.perf_counter() - started
    return typed(rel, qi, numeric, out / f"{spec['name']}_{method}_{k}_{seed}.csv"), wall


def anjana(
    data: pd.DataFrame,
    k: int,
    out: Path,
    kind: str = "k",
    value: float = 0,
    spec: dict[str, object] | None = None,
) -> tuple[pd.DataFrame, float]:
    """ANJANA's release of ``data`` with the kept columns attached (same rows, same order).
    Adult (no ``spec``): ARX's Adult hierarchies (``anjana_release``). Any other table:
    ``table_hierarchies`` — ARX's files in ``spec["hierarchies"]`` where there are some,
    else intervals for a numeric QI and suppression for a categorical one."""
    from _anjana import AnjanaJob, anjana_release, run_anjana, table_hierarchies

    if spec is None:
        qi, numeric, name = QI, NUMERIC, "adult"
        rel, seconds = anjana_release(data, QI, NUMERIC, LABEL, k, kind, value)
    else:
        qi, numeric, name = list(spec["qi"]), list(spec["numeric"]), str(spec["name"])  # type: ignore[call-overload]
        files = spec.get("hierarchies")
        tables = table_hierarchies(data, qi, numeric, data_dir(str(files)) if files else None)
        job = AnjanaJob(qi, numeric, str(spec["label"]), k, kind, value)
        rel, seconds = run_anjana(data, job, tables)
    for c in data.columns:  # same rows in the same order: attach the kept columns
        if c not in rel.columns:
            rel[c] = data[c].to_numpy()
    rel = rel[list(data.columns)]
    return typed(rel, qi, numeric, out / f"anjana_{name}_{kind}_{k}.csv"), seconds


def data_dir(relative: str) -> Path:
    """A directory under ``$ANONYMATCH_DATA``."""
    base = os.environ.get("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets"))
    return Path(base) / relative


def public_mondrian(
    k: int, out: Path, spec: dict[str, object] | None = None, data: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, float]:
    """The public Mondrian's release: of adult.data by its own loader (no ``spec``), or of
    ``data`` (``_mondrian_peer.py --table``), mapped back to ``data``'s rows by the row number
    the peer carries, with the other columns attached, in ``data``'s order."""
    name = "adult" if spec is None else str(spec["name"])
    path = out / f"public_{name}_{k}.csv"
    command = [sys.executable, str(ROOT / "benchmarks" / "_mondrian_peer.py")]
    command += ["--k", str(k), "--out", str(path)]
    qi, numeric = QI, NUMERIC
    if spec is not None and data is not None:
        qi, numeric = list(spec["qi"]), list(spec["numeric"])  # type: ignore[call-overload]
        table = out / f"{name}_train.csv"
        data.to_csv(table, index=False)
        command += ["--table", str(table), "--qi", ",".join(qi), "--numeric", ",".join(numeric)]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1])
    wall = time.perf_counter() - started
    rel = pd.read_csv(path, dtype=str, keep_default_na=False)
    if data is not None:
        rel = rel.set_index(rel.pop("row").astype(int)).sort_index()
        assert list(rel.index) == list(range(len(data))), "the peer lost or repeated rows"
        for c in data.columns:
            if c not in rel.columns:
                rel[c] = data[c].to_numpy()
        rel = rel[list(data.columns)].reset_index(drop=True)
    release = typed(rel, qi, numeric, path)
    release.attrs["aligned"] = data is not None  # Adult: the peer's own row order
    return release, wall


def verified(
    rel: pd.DataFrame,
    data: pd.DataFrame,
    spec: dict[str, object],
    k: int,
    model: dict[str, object] | None = None,
) -> object:
    """Our independent verifier on a peer's release: True or False (k, and ``model`` — ℓ or
    t on the label — when given). ``verify_release`` runs in a child capped at 4 GiB; if it
    needs more, ``_anjana.class_check`` (smallest class ≥ k, every cell truthful: a proof of
    k for a class-based release whose rows are in ``data``'s order; with a model, every class
    satisfying it too: ``sensitive_adult.class_check``) decides, reported as "classes", or
    "unverified" when the rows are in the peer's own order."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from _anjana import _cap_memory, class_check

    from anonymatch.tables.columns.schema import Schema
    from anonymatch.tables.job import ReleaseCheck

    qi, numeric = list(spec["qi"]), list(spec["numeric"])  # type: ignore[call-overload]
    text = pd.read_csv(rel.attrs["path"], dtype=str, keep_default_na=False)
    schema = Schema.build(qi, numeric, [str(spec["label"])] if model else [])
    check = ReleaseCheck.of(schema, dict(k=k, **(model or {})))
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, context, _cap_memory, (4 * 2**30,)) as pool:
        try:
            return bool(pool.submit(_passes, text, data, check).result())
        except (MemoryError, BrokenProcessPool):
            pass
    if not rel.attrs.get("aligned", True):
        return "unverified"
    if model:  # class by class: ≥ k rows, truthful, and the model (sensitive_adult's check)
        from sensitive_adult import class_check as class_models

        from anonymatch.tables.models.disclosure import build_models

        label = str(spec["label"])
        models = build_models([label], model.get("l"), "distinct", None, model.get("t"))
        passed, _ = class_models(text, data, qi, numeric, label, k, models)
        return "classes" if passed else False
    smallest, truthful = class_check(text, data, qi, numeric)
    return "classes" if smallest >= k and truthful else False


def _passes(text: pd.DataFrame, data: pd.DataFrame, check: object) -> bool:
    from anonymatch.tables.pipeline import verify_release

    return bool(verify_release(text, data, check).passed)  # type: ignore[arg-type]


def have_anjana() -> bool:
    try:
        import anjana  # noqa: F401
    except ImportError:
        return False
    return True


def have_peer() -> bool:
    base = os.environ.get("MONDRIAN_PEER", str(ROOT.parent / "peers" / "Mondrian"))
    return (Path(base) / "mondrian.py").is_file()


def score(
    train: pd.DataFrame,
    rel: pd.DataFrame,
    test: pd.DataFrame,
    spec: dict[str, object],
    exclude: list[str],
) -> tuple[dict[str, float], dict[str, float], float]:
    rep = learn(train, [rel], target=str(spec["label"]), test=test, exclude=exclude)
    return rep.releases[0]["scores"], rep.original, float(rep.floor or 0.0)


ADULT = {"name": "adult", "qi": QI, "numeric": NUMERIC, "label": LABEL}


def part_accuracy(args: argparse.Namespace, out: Path, qi_only: bool) -> dict[str, object]:
    train, test = load_adult(adult_path()), adult_test()
    exclude = [c for c in train.columns if c not in QI and c != LABEL] if qi_only else ["education"]
    methods = [m for m in args.methods.split(",") if m != "anjana" or have_anjana()]
    if qi_only:
        methods = [m for m in methods if m != "sortgreedy"]
        if have_peer():
            methods.append("mondrian-public")
    rows: list[dict[str, object]] = []
    ceiling: dict[str, float] = {}
    floor = 0.0
    for k in [int(x) for x in (args.qi_ks if qi_only else args.ks).split(",")]:
        for method in methods:
            if method == "anjana":
                rel, wall = anjana(train, k, out)
            elif method == "mondrian-public":
                rel, wall = public_mondrian(k, out)
            else:
                rel, wall = ours(train, ADULT, k, method, out)
            row: dict[str, object] = {"k": k, "method": method, "anonymize_s": wall}
            if method in PEERS:  # ours verify every release they make; the peers do not
                row["verified"] = verified(rel, train, ADULT, k)
            scores, ceiling, floor = score(train, rel, test, ADULT, exclude)
            rows.append({**row, **scores})
            progress(f"{'qi' if qi_only else 'full'}", rows, ceiling, floor)
            print(
                "qi" if qi_only else "full",
                k,
                method,
                scores,
                f"{wall:.1f}s",
                file=sys.stderr,
                flush=True,
            )
    return {"rows": rows, "original": ceiling, "majority": floor}


def progress(part: str, rows: list[dict[str, object]], ceiling: object, floor: float) -> None:
    """What a part has done so far (benchmarks/results/analyst_adult.PART.partial.json): a run
    stopped midway keeps its finished releases."""
    data = {"rows": rows, "original": ceiling, "majority": floor}
    dump(f"analyst_adult.{part}.partial", data)


def part_models(args: argparse.Namespace, out: Path) -> dict[str, object]:
    train, test = load_adult(adult_path()), adult_test()
    models = [("ℓ = 2 (distinct)", {"l": 2}, "distinct", 2.0), ("t = 0.2", {"t": 0.2}, "t", 0.2)]
    rows: list[dict[str, object]] = []
    for name, model, kind, value in models:
        for method in args.model_methods.split(","):
            if method == "anjana" and not have_anjana():
                continue
            row: dict[str, object] = {"model": name, "method": method}
            if method == "anjana":
                rel, wall = anjana(train, 10, out, kind, value)
                row["verified"] = verified(rel, train, ADULT, 10, model)
            else:
                rel, wall = ours(train, ADULT, 10, method, out, model=model)
            scores, ceiling, floor = score(train, rel, test, ADULT, ["education"])
            rows.append({**row, "anonymize_s": wall, **scores})
            progress("models", rows, ceiling, floor)
            print("models", name, method, scores, file=sys.stderr, flush=True)
    return {"rows": rows, "original": ceiling, "majority": floor}


def heart() -> pd.DataFrame:
    names = "age,sex,cp,trestbps,chol,fbs,restecg,thalach,exang,oldpeak,slope,ca,thal,num"
    frame = pd.read_csv(
        data_file("heart_cleveland/processed.cleveland.data", "heart"),
        names=names.split(","),
        dtype=str,
    )
    frame = frame.loc[~(frame == "?").any(axis=1)].reset_index(drop=True)
    for c in ("age", "trestbps", "chol"):
        frame[c] = pd.to_numeric(frame[c]).astype(int).astype(str)
    frame["disease"] = np.where(frame.pop("num") == "0", "no", "yes")
    return frame


def fars() -> pd.DataFrame:
    frame = pd.read_csv(data_file("arx_fars/fars_subset.csv", "FARS"), sep=";", dtype=str)
    # race, Hispanic origin and the death date come from death certificates: known only for
    # the dead, they give the fatal class away (a first run predicted it at 100 %)
    return frame.drop(columns=["ideathmon", "ideathday", "irace", "ihispanic"])


TABLES = {
    "heart_cleveland": (
        {
            "name": "heart",
            "qi": ["age", "sex", "cp", "trestbps", "chol"],
            "numeric": ["age", "trestbps", "chol"],
            "label": "disease",
        },
        heart,
        [5, 10, 20],
    ),
    "fars": (
        {
            "name": "fars",
            "qi": ["iage", "isex", "istatenum"],
            "numeric": ["iage"],
            "label": "iinjury",
            "hierarchies": "arx_fars/hierarchies",  # ARX's FARS hierarchies, for ANJANA
        },
        fars,
        [5, 10, 20, 50, 100],
    ),
}


def part_tables(args: argparse.Namespace, out: Path) -> dict[str, object]:
    rows: list[dict[str, object]] = []
    result: dict[str, object] = {"rows": rows}
    methods = [
        m
        for m in args.table_methods.split(",")
        if (m != "anjana" or have_anjana()) and (m != "mondrian-public" or have_peer())
    ]
    for table, (spec, loader, ks) in TABLES.items():
        frame = loader()
        train, test = split(frame, 0.3, 0)
        train, test = train.reset_index(drop=True), test.reset_index(drop=True)
        for k in ks:
            for method in methods:
                row: dict[str, object] = {"table": table, "k": k, "method": method}
                if method == "anjana":
                    rel, wall = anjana(train, k, out, spec=spec)
                elif method == "mondrian-public":
                    rel, wall = public_mondrian(k, out, spec, train)
                else:
                    rel, wall = ours(train, spec, k, method, out)
                if method in PEERS:  # ours verify every release they make; the peers do not
                    row["verified"] = verified(rel, train, spec, k)
                scores, ceiling, floor = score(train, rel, test, spec, [])
                rows.append({**row, "anonymize_s": wall, **scores})
                progress("tables", rows, ceiling, floor)
                print(table, k, method, scores, row.get("verified"), file=sys.stderr, flush=True)
        result[table] = {
            "original": ceiling,
            "majority": floor,
            "train": len(train),
            "test": len(test),
        }
    return result


def truths(train: pd.DataFrame) -> dict[str, float]:
    """The original's values of the three estimands."""
    truth = {
        "mean age": float(pd.to_numeric(train["age"]).mean()),
        "share >50K": float(np.mean(train[LABEL] == RICH)),
    }
    num = train[["hours-per-week", "age", "education-num"]].apply(pd.to_numeric)
    coef, _ = ols(
        num["hours-per-week"].to_numpy(float), num[["age", "education-num"]].to_numpy(float)
    )
    truth["coef age (hours ~ age + edu-num)"] = float(coef[1])
    return truth


def part_rubin(args: argparse.Namespace, out: Path, halves: bool = False) -> dict[str, object]:
    """Rubin's estimates over repeated releases: of the whole of adult.data with seeds 1…R
    (the cells are the same in every one: the seed only draws the assignment), or, with
    ``halves``, of R random halves of it (different data, different cells; truth = the half's)."""
    full = load_adult(adult_path())
    train, truth = full, truths(full)
    estimates: list[dict[str, object]] = []
    for seed in range(1, args.repeats + 1):
        if halves:
            train = full.sample(frac=0.5, random_state=seed).reset_index(drop=True)
            truth = truths(train)
        rel, _ = ours(train, ADULT, 10, "hungarian", out, seed=seed)
        mid = pd.DataFrame(
            {
                "age": midpoints(rel, "age"),
                "education-num": midpoints(rel, "education-num"),
                "hours-per-week": rel["hours-per-week"],
            }
        )
        mc, _ = ols(
            mid["hours-per-week"].to_numpy(float), mid[["age", "education-num"]].to_numpy(float)
        )
        for weights in ("uniform", "anchored") if halves else WEIGHTS:
            started = time.perf_counter()
            degree = 10 if weights == "anchored" else None
            tables = draw_microdata(rel, m=args.m, seed=seed, weights=weights, degree=degree)
            found = {
                "mean age": (rubin_mean(tables, "age"), float(mid["age"].mean())),
                "share >50K": (
                    rubin_proportion(tables, LABEL, RICH),
                    float(np.mean(rel[LABEL].astype(str) == RICH)),
                ),
                "coef age (hours ~ age + edu-num)": (
                    rubin_coefficient(tables, "hours-per-week", ["age", "education-num"]),
                    float(mc[1]),
                ),
            }
            seconds = time.perf_counter() - started
            for name, (est, midpoint) in found.items():
                estimates.append(
                    {
                        "seed": seed,
                        "weights": weights,
                        "estimand": name,
                        "truth": truth[name],
                        "midpoint": midpoint,
                        "seconds": seconds,
                        **est.to_dict(),
                        "covered": bool(est.interval[0] <= truth[name] <= est.interval[1]),
                    }
                )
        print("repeat", seed, file=sys.stderr, flush=True)
    return {"estimates": estimates}


DRAW_M = 5


def random_workload(
    train: pd.DataFrame, count: int = 20, seed: int = 39
) -> list[dict[str, object]]:
    """``count`` random 2-way count queries over the QIs and income: two distinct columns, a
    value of each drawn from the data (a range of 10 years of age, 3 levels of education-num)."""
    rng = np.random.default_rng(seed)
    columns = [*QI, LABEL]
    queries: list[dict[str, object]] = []
    for _ in range(count):
        query: dict[str, object] = {}
        for name in rng.choice(columns, 2, replace=False):
            value = train[str(name)].iloc[int(rng.integers(len(train)))]
            if name == "age":
                query[str(name)] = [int(value) - 4, int(value) + 5]
            elif name == "education-num":
                query[str(name)] = [int(value) - 1, int(value) + 1]
            else:
                query[str(name)] = str(value)
        queries.append(query)
    return queries


def part_draws(args: argparse.Namespace, out: Path) -> dict[str, object]:
    """Issue 39: draws, their models and counts, the DP companion; Rubin coverage on halves."""
    from anonymatch.tables.models.dp import (
        companion,
        exact_answers,
        median_relative_error,
        parse_workload,
        release_answers,
    )
    from anonymatch.tables.models.draws import plain_draws, write_table

    full, test = load_adult(adult_path()), adult_test()
    queries = random_workload(full)
    workload = parse_workload(queries)
    rows: list[dict[str, object]] = []
    for columns in ("QIs + income", "all"):
        data = full[[*QI, LABEL]] if columns != "all" else full
        exclude = ["education"] if columns == "all" else []
        truth = exact_answers(data, workload)
        for k in [int(x) for x in args.draw_ks.split(",")]:
            rel, anonymize_s = ours(data, ADULT, k, "hungarian", out)
            started = time.perf_counter()
            tables = plain_draws(rel, DRAW_M, weights="anchored", degree=k)
            for i, table in enumerate(tables, 1):
                write_table(out / f"draw_{i}.csv", table)
            draw_s = time.perf_counter() - started
            started = time.perf_counter()
            doc = companion(data, rel, workload, epsilon=1.0)
            dp_s = time.perf_counter() - started
            rel_scores, _, _ = score(data, rel, test, ADULT, exclude)
            draw_scores = [score(data, t, test, ADULT, exclude)[0] for t in tables[:3]]
            drawn = np.mean([exact_answers(t, workload) for t in tables], axis=0)
            row: dict[str, object] = {
                "columns": columns,
                "k": k,
                "anonymize_s": anonymize_s,
                "draw_s": draw_s,
                "dp_s": dp_s,
                "release_scores": rel_scores,
                "draw_scores": {m: float(np.mean([d[m] for d in draw_scores])) for m in rel_scores},
                "count_error_release": median_relative_error(release_answers(rel, workload), truth),
                "count_error_draws": median_relative_error(list(drawn), truth),
                "count_error_dp": median_relative_error(doc["answers"], truth),
                "dp_epsilon": doc["epsilon"],
            }
            rows.append(row)
            print("draws", columns, k, row, file=sys.stderr, flush=True)
    coverage = coverage_rows(full, range(1, args.repeats + 1), args.m, "halves", out)
    return {"rows": rows, "queries": queries, "coverage": coverage, "m": args.m}


def coverage_rows(
    full: pd.DataFrame, seeds: range, m: int, data: str, out: Path, part: str | None = None
) -> list[dict[str, object]]:
    """Rubin coverage: for each seed, a hungarian release at k = 10 of adult.data (``data`` =
    "whole", the seed drawing only the published assignment and the draws) or of the seed's
    random half ("halves": the data change too), ``m`` anchored draws, and whether the
    intervals of ``combine`` hold the data's own mean age and OLS age coefficient (hours ~ age
    + sex). With ``part``, the rows so far are dumped after every release (a partial run)."""
    from anonymatch.tables.models.draws import (
        combine,
        complete_data,
        estimate_levels,
        parse_estimate,
        plain_draws,
    )

    specs = [parse_estimate("mean(age)"), parse_estimate("ols(hours-per-week ~ age + sex)")]
    coverage: list[dict[str, object]] = []
    for seed in seeds:
        own_data = full if data == "whole" else full.sample(frac=0.5, random_state=seed)
        own_data = own_data.reset_index(drop=True)
        started = time.perf_counter()
        rel, _ = ours(own_data, ADULT, 10, "hungarian", out, seed=seed)
        tables = plain_draws(rel, m, weights="anchored", degree=10, seed=seed)
        for spec in specs:
            own = complete_data(own_data, spec, estimate_levels(tables, spec))
            for term, est in combine(tables, spec).items():
                if term not in ("mean(age)", "age"):
                    continue
                covered = bool(est.interval[0] <= own[term] <= est.interval[1])
                coverage.append(
                    {"seed": seed, "data": data, "estimand": spec.text, "term": term,
                     "truth": own[term], **est.to_dict(), "covered": covered,
                     "seconds": time.perf_counter() - started}
                )  # fmt: skip
        (out / f"adult_hungarian_10_{seed}.csv").unlink(missing_ok=True)
        print("coverage", data, seed, file=sys.stderr, flush=True)
        if part is not None:
            dump(f"analyst_adult.{part}.partial", {"coverage": coverage, "m": m})
    return coverage


def part_coverage(args: argparse.Namespace, out: Path) -> dict[str, object]:
    """Issue 39's coverage target on its own: ``--coverage-repeats`` releases (seeds
    ``--first-seed`` onwards, one fresh seed per release) for each of ``--coverage-data``."""
    full = load_adult(adult_path())
    seeds = range(args.first_seed, args.first_seed + args.coverage_repeats)
    coverage: list[dict[str, object]] = []
    for data in args.coverage_data.split(","):
        coverage += coverage_rows(full, seeds, args.m, data, out, part="coverage")
        dump("analyst_adult.coverage.partial", {"coverage": coverage, "m": args.m})
    return {"coverage": coverage, "m": args.m}


def draws_lines(part: dict[str, object]) -> list[str]:
    rows = list(part["rows"])  # type: ignore[call-overload]
    lines = [
        "",
        "### Plain draws and a DP companion (issue 39)",
        "",
        'Hungarian releases of adult.data; `draw -m 5` is `plain_draws(weights="anchored")`',
        "and writing the five CSV files, against `anonymize` in the same process (seconds).",
        "Accuracy (logistic / gradient boosting) of the models trained on the release and on a",
        "draw (mean of three), tested on adult.test. Count error: median |answer − truth| /",
        "truth over 20 random 2-way count queries (seeded; QIs and income) — the release's",
        "expected counts (values uniform in the cells), the mean of the five draws, and the DP",
        "companion at ε = 1 (OpenDP, discrete Laplace; the 20 answers share the budget).",
        "",
        "| columns | k | anonymize s | draw -m 5 s | companion s | release | draws |"
        " count error: release | draws | DP ε = 1 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        rs, ds = r["release_scores"], r["draw_scores"]
        lines.append(
            f"| {r['columns']} | {r['k']} | {r['anonymize_s']:.1f} | {r['draw_s']:.1f} |"
            f" {r['dp_s']:.1f} | {pct(rs['logistic'])} / {pct(rs['gradient_boosting'])} |"
            f" {pct(ds['logistic'])} / {pct(ds['gradient_boosting'])} |"
            f" {100 * r['count_error_release']:.1f} % | {100 * r['count_error_draws']:.1f} % |"
            f" {100 * r['count_error_dp']:.1f} % |"
        )
    cov = pd.DataFrame(part["coverage"])
    if len(cov):
        repeats = int(cov["seed"].max())
        parts = []
        for term, g in cov.groupby("term", sort=False):
            name = "mean age" if term == "mean(age)" else "the age coefficient of hours ~ age + sex"
            parts.append(
                f"{name} in {int(g['covered'].sum())} of {len(g)} "
                f"({100 * g['covered'].mean():.0f} %; mean half-width "
                f"{np.mean([(b - a) / 2 for a, b in g['interval']]):.3g}, λ "
                f"{g['fraction_missing'].mean():.2f})"
            )
        lines += [
            "",
            f"Rubin intervals of `combine` over m = {part['m']} anchored draws of {repeats}"
            f" releases of random halves of adult.data (k = 10, seeds 1–{repeats}) covered"
            " the half's " + " and ".join(parts) + ".",
        ]
    return lines


COVERAGE_TERMS = {"mean(age)": "mean age", "age": "age coefficient (hours ~ age + sex)"}
COVERAGE_DATA = {"halves": "random halves of adult.data", "whole": "the whole of adult.data"}


def coverage_lines(part: dict[str, object]) -> list[str]:
    """The coverage part: a table per data and estimand, the target, the figure."""
    cov = pd.DataFrame(part["coverage"])
    if cov.empty:
        return []
    lines = [
        "",
        f"### Coverage of Rubin's intervals over {cov['seed'].nunique()} releases (issue 39)",
        "",
        f"Hungarian releases at k = 10, one fresh seed each (seeds {int(cov['seed'].min())}–"
        f"{int(cov['seed'].max())}); m = {part['m']} anchored draws of each"
        ' (`plain_draws(weights="anchored", degree=10)`, what `anonymatch draw --manifest`'
        " makes); `combine` (Rubin's rules, Barnard–Rubin df) gives the 95 % interval of the"
        " mean age and of the age coefficient in OLS hours-per-week ~ age + sex; covered ="
        " the interval holds the value on the data released. Halves: each seed draws another"
        " random half of adult.data (15,081 rows), so the data and the cells change; whole:"
        " adult.data (30,162 rows) every time, the seed drawing the published assignment and"
        " the draws (the cells stay the same, so its releases are not independent).",
        "",
        "| data | estimand | releases | covered | coverage | mean error | mean half-width |"
        " λ (between share) | seconds per release |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for (data, term), g in cov.groupby(["data", "term"], sort=False):
        half = np.mean([(b - a) / 2 for a, b in g["interval"]])
        rate = float(g["covered"].mean())
        lines.append(
            f"| {COVERAGE_DATA.get(str(data), data)} | {COVERAGE_TERMS.get(str(term), term)} |"
            f" {len(g)} | {int(g['covered'].sum())} | {100 * rate:.0f} % |"
            f" {np.mean(np.abs(g['estimate'] - g['truth'])):.4g} | {half:.4g} |"
            f" {g['fraction_missing'].mean():.2f} | {g['seconds'].mean():.1f} |"
        )
        verdicts.append(rate)
    met = all(r >= 0.9 for r in verdicts)
    lines += [
        "",
        "Target (≥ 90 % of 50 releases for the mean age and the OLS coefficient): "
        f"**{'met' if met else 'not met'}** (lowest {100 * min(verdicts):.0f} %).",
    ]
    image = plot_coverage(cov)
    if image:
        lines += ["", f"![Rubin intervals of 50 releases around the value on the data]({image})"]
    return lines


def plot_coverage(cov: pd.DataFrame) -> str | None:
    """One panel per data and estimand: each release's interval minus the value on its data
    (0 = the truth), covered in blue, missed in red."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(cov.groupby(["data", "term"], sort=False))
    if not groups:
        return None
    fig, axes = plt.subplots(1, len(groups), figsize=(3.6 * len(groups), 3.6), squeeze=False)
    for ax, ((data, term), g) in zip(axes[0], groups, strict=True):
        g = g.assign(error=g["estimate"] - g["truth"]).sort_values("error")
        lo = np.array([a for a, _ in g["interval"]]) - g["truth"].to_numpy()
        hi = np.array([b for _, b in g["interval"]]) - g["truth"].to_numpy()
        mid = g["estimate"].to_numpy() - g["truth"].to_numpy()
        x = np.arange(len(g))
        colors = np.where(g["covered"].to_numpy(bool), "tab:blue", "tab:red")
        ax.vlines(x, lo, hi, colors=colors, lw=1.2)
        ax.scatter(x, mid, s=6, c=colors)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xlabel("release (sorted by estimate − value)")
        ax.set_ylabel("interval − value on the data")
        name = "mean age" if term == "mean(age)" else "age coefficient"
        ax.set_title(f"{name}, {data}: {int(g['covered'].sum())}/{len(g)}", fontsize=9)
    fig.tight_layout()
    path = ROOT / "docs" / "img" / "analyst_coverage.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return "img/analyst_coverage.png"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ks", default="5,10,20,50,100")
    parser.add_argument("--qi-ks", default="10,50,100", help="The ks of the QI-only part.")
    parser.add_argument("--methods", default="hungarian,sortgreedy,mondrian,anjana")
    parser.add_argument(
        "--table-methods",
        default="hungarian,mondrian,anjana,mondrian-public",
        help="The methods of the tables part.",
    )
    parser.add_argument(
        "--model-methods", default="hungarian,mondrian,anjana", help="The methods of models."
    )
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--m", type=int, default=10)
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--draw-ks", default="10,50", help="The ks of the draws part.")
    parser.add_argument(
        "--coverage-repeats", type=int, default=50, help="Releases per data of the coverage part."
    )
    parser.add_argument(
        "--first-seed", type=int, default=1, help="The coverage part's first seed (one a release)."
    )
    parser.add_argument(
        "--coverage-data", default="halves,whole", help="The coverage part's data: halves, whole."
    )
    parser.add_argument(
        "--from-json",
        action="store_true",
        help="Rewrite the docs section from benchmarks/results/analyst_adult.json, no runs.",
    )
    args = parser.parse_args()
    saved_path = ROOT / "benchmarks" / "results" / "analyst_adult.json"
    if args.from_json:
        saved = json.loads(saved_path.read_text()) if saved_path.exists() else {}
        for part in PARTS:  # a part stopped midway: the releases it finished
            partial = saved_path.with_name(f"analyst_adult.{part}.partial.json")
            if part not in saved and partial.exists():
                saved[part] = {**json.loads(partial.read_text()), "partial": True}
        write(saved)
        return
    parts = args.parts.split(",")
    # runs of different parts (in parallel processes, or one after another) add up in one JSON
    saved = json.loads(saved_path.read_text()) if saved_path.exists() else {}
    saved = {key: value for key, value in saved.items() if key in PARTS}
    command = " ".join(["python benchmarks/analyst_adult.py", *sys.argv[1:]])
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        runs = {
            "full": lambda: part_accuracy(args, out, False),
            "qi": lambda: part_accuracy(args, out, True),
            "models": lambda: part_models(args, out),
            "tables": lambda: part_tables(args, out),
            "rubin": lambda: part_rubin(args, out),
            "halves": lambda: part_rubin(args, out, halves=True),
            "draws": lambda: part_draws(args, out),
            "coverage": lambda: part_coverage(args, out),
        }
        for part in parts:
            t0 = time.perf_counter()
            result = runs[part]()
            result["seconds"] = time.perf_counter() - t0
            result["command"] = command
            if saved_path.exists():  # another process may have added its parts meanwhile
                saved = {**json.loads(saved_path.read_text()), **saved}
            saved[part] = merged_rows(saved.get(part), result)
            saved["machine"] = machine()
            dump("analyst_adult", saved)
    write(saved)


def merged_rows(old: object, new: dict[str, object]) -> dict[str, object]:
    """A part's new result, keeping the old result's rows (k, method) this run did not redo:
    runs of other k or methods add up instead of replacing each other."""
    if not isinstance(old, dict) or "rows" not in new or "rows" not in old:
        return new
    redone = {row_key(r) for r in new["rows"]}  # type: ignore[union-attr]
    kept = [r for r in old["rows"] if row_key(r) not in redone]
    order = list(TABLES)
    rows = sorted(
        [*kept, *new["rows"]],
        key=lambda r: (
            order.index(r["table"]) if r.get("table") in order else -1,
            r.get("k") or 0,
            str(r.get("method")),
        ),
    )
    return {**new, "rows": rows, "command": f"{old.get('command')}; {new.get('command')}"}


def row_key(row: dict[str, object]) -> tuple[object, ...]:
    """What identifies a row of a part: its table (tables), k or model (models), method."""
    return (row.get("table"), row.get("k"), row.get("model"), row.get("method"))


def pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def accuracy_table(part: dict[str, object], index: str = "k") -> list[str]:
    table = pd.DataFrame(part["rows"])
    methods = sorted(
        dict.fromkeys(table["method"]),
        key=lambda m: METHOD_ORDER.index(m) if m in METHOD_ORDER else len(METHOD_ORDER),
    )
    lines = ["| " + index + " | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for key in dict.fromkeys(table[index]):
        cells = []
        for method in methods:
            r = table[(table[index] == key) & (table.method == method)]
            if r.empty:
                cells.append("—")
                continue
            row = r.iloc[0]
            mark = {"False": " ✗", "classes": " ᶜ", "unverified": " ?"}.get(
                str(row.get("verified")), ""
            )
            cells.append(f"{pct(row['logistic'])} / {pct(row['gradient_boosting'])}{mark}")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    ceiling = part["original"]
    lines += [
        f"| original (ceiling) | {pct(ceiling['logistic'])} / {pct(ceiling['gradient_boosting'])}"
        + " |" * len(methods),
        f"| majority (floor) | {pct(part['majority'])}" + " |" * len(methods),
    ]
    return lines


def plot(saved: dict[str, object]) -> str | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(p, t) for p, t in (("full", "all columns"), ("qi", "the 8 QIs only")) if p in saved]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (part, title) in zip(axes[0], panels, strict=True):
        data = saved[part]
        table = pd.DataFrame(data["rows"])
        for method, g in table.groupby("method", sort=False):
            ax.plot(g["k"], 100 * g["logistic"], marker="o", label=method)
        ax.axhline(100 * data["original"]["logistic"], color="k", ls="--", label="original")
        ax.axhline(100 * data["majority"], color="grey", ls=":", label="majority")
        ax.set_xscale("log")
        ax.set_xticks(sorted(set(table["k"])), [str(k) for k in sorted(set(table["k"]))])
        ax.set_xlabel("k")
        ax.set_ylabel("accuracy on adult.test, logistic (%)")
        ax.set_title(f"Adult, trained on releases: {title}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = ROOT / "docs" / "img" / "analyst_adult.png"
    fig.savefig(path, dpi=110)
    return "img/analyst_adult.png"


def write(saved: dict[str, object]) -> None:
    lines = [
        "## The analyst's side on UCI Adult: models trained on releases, Rubin's estimates",
        "",
        "Commands (some run in parallel): "
        + "; ".join(
            f"`{c}`"
            for c in dict.fromkeys(
                piece
                for p in PARTS
                if p in saved and "command" in saved[p]
                for piece in str(saved[p]["command"]).split("; ")
            )
        )
        + f". Machine: {saved.get('machine', machine())}, loaded by other jobs (load ≈ 10)."
        + " Minutes per part (its last run): "
        + ", ".join(
            f"{p} {float(saved[p]['seconds']) / 60:.1f}"
            for p in PARTS
            if p in saved and "seconds" in saved[p]
        )
        + "."
        + "".join(
            f" Part {p} was stopped by the session's deadline: its tables show the releases it"
            " finished."
            for p in PARTS
            if p in saved and saved[p].get("partial")
        ),
        "Train on a release of adult.data (30,162 complete rows, the 8 QIs of the GCP table",
        "above), test on the 15,060 complete original rows of adult.test; test rows are",
        "featurized like the release's cells by `ReleaseFeatures` (ranges → midpoint and width,",
        "value sets → fractional one-hot). Cells: accuracy predicting income >50K, logistic",
        "regression / gradient boosting.",
    ]
    if "full" in saved:
        lines += [
            "",
            "Features: every column but `income` and `education` (the exact text twin",
            "of the QI education-num). ANJANA keeps the input's row order, so its release",
            "gets the same kept columns.",
            "",
            *accuracy_table(saved["full"]),
        ]
        lines += targets(saved["full"])
    if "qi" in saved:
        lines += [
            "",
            "Features: the 8 QIs only (the public Mondrian publishes only these and",
            "the label):",
            "",
            *accuracy_table(saved["qi"]),
        ]
    adult = [pd.DataFrame(saved[p]["rows"]) for p in ("full", "qi", "models") if p in saved]
    note = verification_note(pd.concat(adult, ignore_index=True)) if adult else ""
    if note:
        lines += ["", "Adult: " + note]
    image = plot(saved)
    if image:
        lines += ["", f"![Accuracy of models trained on Adult releases vs k]({image})"]
    if "models" in saved:
        lines += [
            "",
            "With a privacy model on income (the label itself as the sensitive",
            "attribute), k = 10, all columns but `education`:",
            "",
            *accuracy_table(saved["models"], "model"),
        ]
    if "tables" in saved:
        tables = pd.DataFrame(saved["tables"]["rows"])
        for table, g in tables.groupby("table", sort=False):
            info = saved["tables"][table]
            spec = TABLES[str(table)][0]
            lines += [
                "",
                f"{table}: trained on a release of {info['train']} rows, tested on the",
                f"{info['test']} held-out original rows; label `{spec['label']}`, QIs",
                ", ".join(f"`{c}`" for c in spec["qi"]) + ":",
                "",
                *accuracy_table({**info, "rows": g.to_dict("records")}),
            ]
        lines += peer_lines(tables)
        image = plot_tables(saved["tables"])
        if image:
            lines += [
                "",
                f"![Accuracy of models trained on heart_cleveland and FARS releases]({image})",
            ]
    if "rubin" in saved:
        lines += rubin_lines(saved["rubin"], False)
    if "halves" in saved:
        lines += rubin_lines(saved["halves"], True)
    if "draws" in saved:
        lines += draws_lines(saved["draws"])
    if "coverage" in saved:
        lines += coverage_lines(saved["coverage"])
    lines += ["", READING]
    update_results("analyst_adult", "\n".join(lines))


def verification_note(rows: pd.DataFrame) -> str:
    """What our verifier said of the peers' releases among ``rows`` ("" if none recorded)."""
    if "verified" not in rows.columns:
        return ""
    peers = rows[rows["method"].isin(PEERS) & rows["verified"].notna()]
    if peers.empty:
        return ""
    said = peers["verified"].astype(str)
    count = {v: int((said == v).sum()) for v in ("True", "classes", "False", "unverified")}
    passed = count["True"] + count["classes"]
    out = (
        f"{passed} of the {len(peers)} peer releases passed our verifier"
        if passed < len(peers)
        else f"Every one of the {len(peers)} peer releases passed our verifier"
    )
    out += " (ours verify every release they make): "
    parts = [f"{count['True']} by `verify_release` (k, and the model where one is claimed)"]
    if count["classes"]:
        parts.append(
            f"{count['classes']} (ᶜ), too large for it in 4 GiB, by the class check (every"
            " class of identical rows has ≥ k rows and meets the model, every cell holds its"
            " row's value: for a class-based release, a proof)"
        )
    if count["False"]:
        parts.append(f"{count['False']} **fail** it (✗)")
    if count["unverified"]:
        parts.append(f"{count['unverified']} could not be checked in 4 GiB (?)")
    return out + "; ".join(parts) + "."


def peer_lines(tables: pd.DataFrame) -> list[str]:
    """How the peers ran on the other tables, and what our verifier said of their releases."""
    said = verification_note(tables)
    if not said:
        return []
    return [
        "",
        "Peers on these tables: ANJANA (k-anonymity, `supp_level` 0 as on Adult) with ARX's FARS",
        "hierarchies (`arx_fars/hierarchies`); heart_cleveland has none, so its hierarchies are",
        "derived the way Adult's education-num's is (`_anjana.table_hierarchies`): aligned",
        "intervals of width 2, 4, 8, … for the numeric QIs (`age`, `trestbps`, `chol`) and",
        "suppression (the value, then `*`) for `sex` and `cp`. The public Mondrian: its own",
        "strict `mondrian` and `covert_to_raw` on records loaded the way its Adult loader loads",
        "them (`_mondrian_peer.py --table`), the row number carried in its sensitive slot so",
        "that the label and the other columns are attached to the right rows. " + said,
    ]


def plot_tables(part: dict[str, object]) -> str | None:
    """Logistic accuracy vs k on heart_cleveland and FARS, one panel per table."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = pd.DataFrame(part["rows"])
    names = list(dict.fromkeys(rows["table"]))
    fig, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        info = part[name]
        table = rows[rows["table"] == name]
        for method, g in table.groupby("method", sort=False):
            ax.plot(g["k"], 100 * g["logistic"], marker="o", label=method)
        ax.axhline(100 * info["original"]["logistic"], color="k", ls="--", label="original")
        ax.axhline(100 * info["majority"], color="grey", ls=":", label="majority")
        ax.set_xscale("log")
        ax.set_xticks(sorted(set(table["k"])), [str(k) for k in sorted(set(table["k"]))])
        ax.minorticks_off()
        ax.set_xlabel("k")
        ax.set_ylabel("accuracy on held-out rows, logistic (%)")
        ax.set_title(f"{name} ({TABLES[name][0]['label']}), trained on releases")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / "img" / "analyst_tables.png", dpi=110)
    return "img/analyst_tables.png"


def targets(part: dict[str, object]) -> list[str]:
    table = pd.DataFrame(part["rows"])
    if "hungarian" not in set(table.method):
        return []
    h = table[table.method == "hungarian"].set_index("k")
    ceiling = part["original"]
    gaps = {k: 100 * (ceiling["logistic"] - h.loc[k, "logistic"]) for k in h.index if k <= 50}
    met = all(g <= 1 for g in gaps.values())
    out = [
        "",
        "Target: logistic on a hungarian release within 1 point of the original at every "
        "k ≤ 50 — gaps "
        + ", ".join(f"k = {k}: {g:+.2f}" for k, g in gaps.items())
        + f" points: **{'met' if met else 'not met'}**.",
    ]
    if "mondrian" in set(table.method) and 50 in h.index:
        m50 = table[(table.k == 50) & (table.method == "mondrian")].iloc[0]
        diff = 100 * (h.loc[50, "logistic"] - m50["logistic"])
        out.append(
            f"At k = 50 hungarian vs our mondrian (logistic): {diff:+.2f} points (target ≥ +2):"
            f" **{'met' if diff >= 2 else 'not met'}**."
        )
    return out


def rubin_lines(part: dict[str, object], halves: bool) -> list[str]:
    est = pd.DataFrame(part["estimates"])
    repeats = int(est["seed"].max())
    m = int(est["m"].iloc[0])
    if halves:
        return [
            "",
            f"The same over releases of {repeats} different data sets: random halves of",
            f"adult.data (15,081 rows; seeds 1–{repeats}), hungarian at k = 10, m = {m}; the",
            "original's value is the half's own (each half has its own cells):",
            "",
            *rubin_table(est),
        ]
    lines = [
        "",
        f"Rubin's rules over {repeats} hungarian releases at k = 10 (seeds 1–{repeats}), m = {m}"
        " draws inside the cells each; 95 % intervals with Barnard–Rubin df. The seed only draws",
        f"which of the k assignments is published: the {repeats} releases have the same multiset",
        "of QI cells (only the pairing of cells with the kept columns changes), so coverage over",
        "them is close to all-or-nothing; the halves below vary the cells too. Weights: uniform,",
        'the release\'s marginal, and anchored (`draw_microdata(weights="anchored", degree=10)`:',
        "each end of a range is a neighbour's value, taken with probability 1/10; the interior",
        "drawn from the column's self-consistent distribution raised to γ ~ U(0, 1), refitted on",
        "a Bayesian bootstrap of the cells for every table). Error = mean |estimate − original's",
        "value| over the releases; midpoint = the plain estimate on range midpoints. Seconds:",
        "drawing m tables and the three estimates, per release.",
        "",
        *rubin_table(est),
    ]
    return lines


def rubin_table(est: pd.DataFrame) -> list[str]:
    lines = [
        "| estimand | original | weights | mean estimate | error | midpoint error | mean se |"
        " between-var share λ | coverage | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, weights), g in est.groupby(["estimand", "weights"], sort=False):
        truth = g["truth"]  # one value, or each half's own
        lines.append(
            f"| {name} | {truth.mean():.4f} | {weights} | {g['estimate'].mean():.4f} |"
            f" {np.mean(np.abs(g['estimate'] - truth)):.4f} |"
            f" {np.mean(np.abs(g['midpoint'] - truth)):.4f} | {g['std_error'].mean():.4f} |"
            f" {g['fraction_missing'].mean():.3f} | {100 * g['covered'].mean():.0f} % |"
            f" {g['seconds'].mean():.1f} |"
        )
    lines.append("")
    for weights, g in est.groupby("weights", sort=False):
        cov = g.groupby("estimand")["covered"].mean()
        lines.append(
            f"Target (≥ 90 % coverage for every estimand), {weights}: "
            f"**{'met' if bool((cov >= 0.9).all()) else 'not met'}** (lowest "
            f"{100 * cov.min():.0f} %)."
        )
    return lines


READING = """\
Reading (hand-written with the run; the figures above are generated).

- **All columns.** Hungarian stays within 0.3 point (logistic) and 0.6 point (gradient boosting)
  of the model trained on the original at every k up to 100, sortgreedy likewise up to k = 50:
  hungarian 84.59 % at k = 100, above the 83.1 % the issue quotes as the best published figure
  for class-based releases at that k. Our mondrian falls to 82.38 % at k = 50 and 82.67 % at k =
  100 (−2.2 and −1.9 points from hungarian). At k = 10 the three are within 0.11 point of each
  other: below k = 20 the freeform release buys nothing an analyst would notice. ANJANA's global
  recoding over ARX's hierarchies costs 1.6 points (logistic) and 5.9 points (gradient boosting)
  against the original already at k = 10 and reaches the same lattice node at k = 50 and 100
  (identical figures). Sortgreedy, run for every k in the lead's second pass, tracks hungarian
  within 0.2 point (84.55 % at k = 100).
- **QIs only** (k = 50, the public Mondrian's terms; k = 10 and 100 in the table): hungarian
  loses 0.3 point against the original's QI-only ceiling (0.6 at k = 100), our mondrian 5.3, the
  public Mondrian 11.2 (8.5 at k = 100) (its categorical ranges
  over first-appearance order mix unrelated values) and ANJANA 1.5. ANJANA's gradient boosting
  falls below the majority class (60.3 %): trained on coarse nodes only, it meets exact test
  values it never saw — a limit of training on any recoded release and testing on exact rows,
  worst for global recoding.
- **ℓ/t on the label.** Distinct ℓ = 2 on income is nearly free for ours (−0.1 to −0.2 point). t
  = 0.2 is where the freeform release does *not* win: against the original, hungarian loses 3.7
  points (81.09 %), our mondrian 1.4 (83.43 %) — with a model the freeform methods publish
  classes built by greedy k-member clustering, and t-closeness on the label flattens exactly the
  association the model needs; mondrian's median cuts keep more of it here. ANJANA: 79.92 %.
- **heart_cleveland** (89 test rows: one row is 1.1 points, so differences below ~5 points are
  noise): hungarian stays at or above the original's logistic figure (83.15 %) up to k = 10 and
  loses 2.2 points at k = 20, while our mondrian loses 4.5, 13.5 and 20.2 points at k = 5, 10,
  20 (logistic; gradient boosting, weaker on so few rows, is closer). The peers put this in
  proportion. ANJANA's greedy global recoding (no suppression) raises every QI to `*` before its
  classes reach k = 5 (on the derived hierarchies, sex and cp have no level between the value
  and `*`), so its 82.02 % at every k is the model on the eight kept clinical columns alone:
  the QIs are worth 1.1 points (one test row) on the original, and hungarian's lead over a
  release that publishes none of them is +2.2 points at k ≤ 10 and −1.1 at k = 20, all within
  the noise. The public Mondrian: 77.53 %, 80.90 %, 61.80 % at k = 5, 10, 20. Where the
  freeform release wins here is against the Mondrians' cells: at k = 20 both Mondrians are
  18–19 points below hungarian and 19–20 below the release without QIs — wide cells that mix
  classes mislead the logistic model more than no cells — while hungarian stays within two
  test rows of the original and of the QI-less release at every k.
- **FARS** is a task the freeform release does *not* win, and no release does: age, sex and
  state barely predict the injury class (the original's models: 42.83 % and 41.31 %, against
  42.24 % for the majority class; the standard error of an accuracy near 42 % on 3,028 test
  rows is 0.9 point). The best release figure, the public Mondrian's gradient boosting at k =
  50, is 1.1 points above the majority, ANJANA's logistic at k = 5 and 10 (age `*`, sex exact,
  states in three ARX groups) 0.8; at k ≥ 20 ANJANA publishes only the three state groups and
  its models predict the majority exactly. The coarsest releases do best because they leave
  the models nothing to overfit, and ANJANA beats hungarian at every k. Hungarian's logistic
  stays within 1.8 points of the original up to k = 10 and falls to 29.0 % at k = 100 (our
  mondrian's to 28–30 % from k = 20 on); hungarian's gradient boosting is the lowest
  gradient-boosting figure at every k ≥ 20 (27.5 %, 34.3 %, 36.2 % at k = 20, 50, 100): its
  narrow, varied cells give the models positions and widths to fit that mean nothing on exact
  test rows. Our mondrian's gradient boosting and the
  public Mondrian's stay near the majority by predicting it.
- **Rubin's intervals.** Uniform draws miss the original's mean age in every release (+0.31
  years on the whole of adult.data, +0.37 on the halves) and marginal draws in every release
  (−0.21); anchored draws cover it in every release measured — 5 releases of adult.data and 20
  of random halves — with an error of +0.07 / +0.08 years. The price is width: ±0.38 years
  (halves: ±0.42) against ±0.16 (±0.23) for uniform draws, λ ≈ 0.8 (most of the variance is the
  interior's unknown shape γ, which the release does not identify). Measured against the
  original (one release, its graph known), the interior neighbours' mean sits 65–80 % of the way
  from the flat model's (γ = 0) to the column's distribution's (γ = 1), inside the prior's
  range; a method whose neighbours spread inside the cells flatter than uniformly or more peaked
  than the column's distribution could break coverage, so the intervals are a model's, not a
  guarantee (`mean_bounds` is the guarantee: 34.5 to 43.0 years). The coefficient is covered by
  uniform and anchored draws, not by marginal ones; the share >50K is of a kept (exact) column,
  so every method covers it trivially.
- **Plain draws and the DP companion (issue 39).** Models trained on an anchored draw are
  within 0.35 point of those trained on the release at k = 10 and 50 (target 0.5: met), so
  an analyst loses nothing by taking plain rows. On the 20 random 2-way counts the draws
  (mean of five) cut the release's expected-count error from 4.3 % to 1.1–1.3 % at k = 10
  and from 19.3 % to 2.6–4.2 % at k = 50; the DP companion at ε = 1 answers them within
  0.3–0.5 % (target ≤ 3 % at k = 50: met) — for a workload declared in advance, and under a
  formal promise the release does not carry. `draw -m 5` took 1.1–1.6× the in-process
  anonymize time at k = 10 and a tenth of it at k = 50 (target within 2×: met; on the
  command line, Adult at k = 10: anonymize 8.9 s, `draw -m 5` 12.3 s, both under load ≈ 6–9),
  after reading each distinct cell once instead of once per row (`distinct_labels`: the
  anchored draws of Adult fell from 5.9 to 1.6 s). Rubin intervals from five anchored draws
  covered the half's mean age and age coefficient in all 20 releases of random halves.
- **Coverage over 50 releases (issue 39).** Fifty fresh-seed releases of random halves and
  fifty of the whole of adult.data (k = 10, five anchored draws each): every one of the 200
  intervals covered the value on the data released (target ≥ 90 %: met). 100 % against a
  nominal 95 % says the intervals are conservative, not exact: were they exact, 50 of 50 would
  happen 8 % of the time (0.95⁵⁰), and the mean errors (0.06–0.08 years of age, 0.004 for the
  coefficient) are a sixth to a quarter of the half-widths (0.43–0.50 years, 0.015–0.019). Most
  of the width is the between-draw variance (λ 0.71–0.79 for the mean age, 0.37–0.45 for the
  coefficient): the interior's unknown shape that the anchored model draws afresh for every
  table. The estimates lean one way: above the value in 74–96 % of the releases (mean signed
  error +0.04 to +0.06 years of age, +0.004 for the coefficient; the figure's points mostly
  above zero): a small bias the width absorbs here, and the reason the intervals are a
  model's, not a guarantee (see Rubin's intervals above). The whole-data releases share
  their cells (the seed draws the published assignment and the draws), so they are 50 draws
  of one release's uncertainty, not 50 independent releases; the halves are."""


if __name__ == "__main__":
    main()
