"""The analyst's side on UCI Adult: models trained on releases, tested on original rows; Rubin.

Train on a release of adult.data (30,162 complete rows; QIs age, workclass, education-num,
marital-status, occupation, race, sex, native-country, numeric age and education-num), test on
the 15,060 complete original rows of adult.test (its first line skipped, the label's trailing
"." dropped). Features: every column of the release but the label, `income`, and `education`
(the text twin of the QI education-num, kept exact in these releases: using it would bypass the
generalization). Models: logistic regression and gradient boosting (scikit-learn,
`anonymatch.tables.learn`), beside the same models trained on the original (ceiling) and the
majority class (floor). Then, at k = 10, --repeats hungarian releases with different seeds:
Rubin-combined estimates from m = 10 draws inside the cells (uniform, and the release's
marginal) of the mean age, the share of income >50K and the OLS coefficient of age in
hours-per-week ~ age + education-num, with the coverage of their 95 % intervals of the
original's value. Writes docs/results.md (section analyst_adult).

Usage: python benchmarks/analyst_adult.py [--ks 5,10,20,50] [--methods hungarian,mondrian]
       [--repeats 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import (
    ADULT_CLI,
    ADULT_NAMES,
    ROOT,
    adult_path,
    data_file,
    dump,
    machine,
    run_cli,
    update_results,
)

from anonymatch.tables.datasets import load_adult
from anonymatch.tables.io.release import midpoints, read_release
from anonymatch.tables.models.imputation import (
    draw_microdata,
    ols,
    rubin_coefficient,
    rubin_mean,
    rubin_proportion,
)
from anonymatch.tables.models.learn import learn

LABEL = "income"
RICH = ">50K"


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


def release(data: str, out: Path, k: int, method: str, seed: int) -> tuple[pd.DataFrame, float]:
    path = out / f"{method}_{k}_{seed}.csv"
    args = ["anonymize", data, "-o", str(path), "--k", str(k), "-q", "--seed", str(seed)]
    m = run_cli([*args, "--method", method, *ADULT_CLI])
    return read_release(path), m["wall"]


def pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ks", default="5,10,20,50")
    parser.add_argument("--methods", default="hungarian,mondrian")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--m", type=int, default=10)
    parser.add_argument(
        "--from-json",
        action="store_true",
        help="Rewrite the docs section from benchmarks/results/analyst_adult.json, no runs.",
    )
    args = parser.parse_args()
    ks = [int(x) for x in args.ks.split(",")]
    methods = args.methods.split(",")
    if args.from_json:
        saved = json.loads((ROOT / "benchmarks" / "results" / "analyst_adult.json").read_text())
        write(
            saved["accuracy"],
            saved["original"],
            saved["majority"],
            saved["rubin"],
            ks,
            methods,
            float(saved.get("seconds", 0.0)),
            args,
        )
        return
    data = adult_path()
    train = load_adult(data)
    test = adult_test()
    started = time.perf_counter()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for k in ks:
            for method in methods:
                rel, wall = release(data, out, k, method, 0)
                rep = learn(train, [rel], target=LABEL, test=test, exclude=["education"])
                scores = rep.releases[0]["scores"]
                rows.append({"k": k, "method": method, "anonymize_s": wall, **scores})
                print(k, method, scores, f"{wall:.1f}s", file=sys.stderr, flush=True)
        ceiling, floor = rep.original, rep.floor
        # Rubin: repeated releases at k = 10
        truth = {
            "mean age": float(pd.to_numeric(train["age"]).mean()),
            "share >50K": float(np.mean(train[LABEL] == RICH)),
        }
        num = train[["hours-per-week", "age", "education-num"]].apply(pd.to_numeric)
        coef, _ = ols(
            num["hours-per-week"].to_numpy(float), num[["age", "education-num"]].to_numpy(float)
        )
        truth["coef age (hours ~ age + edu-num)"] = float(coef[1])
        estimates: list[dict[str, object]] = []
        for seed in range(1, args.repeats + 1):
            rel, _ = release(data, out, 10, "hungarian", seed)
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
            for weights in ("uniform", "marginal"):
                tables = draw_microdata(rel, m=args.m, seed=seed, weights=weights)
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
                for name, (est, midpoint) in found.items():
                    estimates.append(
                        {
                            "seed": seed,
                            "weights": weights,
                            "estimand": name,
                            "truth": truth[name],
                            "midpoint": midpoint,
                            **est.to_dict(),
                            "covered": bool(est.interval[0] <= truth[name] <= est.interval[1]),
                        }
                    )
            print("repeat", seed, file=sys.stderr, flush=True)
    total = time.perf_counter() - started
    dump(
        "analyst_adult",
        {
            "accuracy": rows,
            "original": ceiling,
            "majority": floor,
            "rubin": estimates,
            "seconds": total,
        },
    )
    write(rows, ceiling, floor, estimates, ks, methods, total, args)


def write(
    rows: list[dict[str, object]],
    ceiling: dict[str, float],
    floor: float,
    estimates: list[dict[str, object]],
    ks: list[int],
    methods: list[str],
    total: float,
    args: argparse.Namespace,
) -> None:
    table = pd.DataFrame(rows)
    lines = [
        "## The analyst's side on UCI Adult: models trained on releases, Rubin's estimates",
        "",
        f"Command: `python benchmarks/analyst_adult.py --ks {args.ks} --methods {args.methods} "
        f"--repeats {args.repeats}`. Machine: {machine()}. Whole run {total / 60:.1f} min.",
        "Train on a release of adult.data (30,162 complete rows, the 8 QIs of the GCP table",
        "above), test on the 15,060 complete original rows of adult.test. Features: the",
        "release's",
        "columns but `income` and `education` (the exact text twin of the QI education-num),",
        "featurized by `ReleaseFeatures` (ranges → midpoint and width, value sets → fractional",
        "one-hot); test rows featurized the same way as exact values.",
        "",
        "Accuracy predicting income >50K (logistic regression / gradient boosting):",
        "",
        "| k | " + " | ".join(methods) + " |",
        "|---|" + "---|" * len(methods),
    ]
    for k in ks:
        cells = []
        for method in methods:
            r = table[(table.k == k) & (table.method == method)].iloc[0]
            cells.append(f"{pct(r['logistic'])} / {pct(r['gradient_boosting'])}")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    lines += [
        f"| original (ceiling) | {pct(ceiling['logistic'])} / {pct(ceiling['gradient_boosting'])}"
        + " |" * (len(methods) - 1),
        f"| majority (floor) | {pct(floor)}" + " |" * (len(methods) - 1),
        "",
    ]
    if "hungarian" in methods and "mondrian" in methods:
        diffs = []
        for k in ks:
            pair = table[table.k == k].set_index("method")
            d_log = 100 * (pair.loc["hungarian", "logistic"] - pair.loc["mondrian", "logistic"])
            d_gb = 100 * (
                pair.loc["hungarian", "gradient_boosting"]
                - pair.loc["mondrian", "gradient_boosting"]
            )
            diffs.append(f"k = {k}: {d_log:+.2f} / {d_gb:+.2f}")
        lines.append(
            "Hungarian minus our mondrian, points (logistic / gradient boosting): "
            + "; ".join(diffs)
            + "."
        )
    if "hungarian" in methods:
        h = table[table.method == "hungarian"].set_index("k")
        gaps = {k: 100 * (ceiling["logistic"] - h.loc[k, "logistic"]) for k in ks if k <= 50}
        met = all(g <= 1 for g in gaps.values())
        lines.append(
            "Target: logistic on a hungarian release within 1 point of the original at every "
            "k ≤ 50 — gaps "
            + ", ".join(f"k = {k}: {g:+.2f}" for k, g in gaps.items())
            + f" points: **{'met' if met else 'not met'}**."
        )
        if "mondrian" in methods and 50 in ks:
            m50 = table[(table.k == 50) & (table.method == "mondrian")].iloc[0]
            diff = 100 * (h.loc[50, "logistic"] - m50["logistic"])
            lines.append(
                f"At k = 50 hungarian vs our mondrian (logistic): {diff:+.2f} points (target ≥ +2):"
                f" **{'met' if diff >= 2 else 'not met'}**."
            )
    est = pd.DataFrame(estimates)
    lines += [
        "",
        f"Rubin's rules over {args.repeats} hungarian releases at k = 10 (seeds 1–{args.repeats}),"
        f" m = {args.m} draws inside the cells each; 95 % intervals with Barnard–Rubin df.",
        "Error = mean |estimate − original's value| over the releases; midpoint = the plain",
        "estimate on range midpoints (no interval).",
        "",
        "| estimand | original | weights | mean estimate | error | midpoint error | mean se |"
        " between-var share λ | coverage |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, weights), g in est.groupby(["estimand", "weights"], sort=False):
        truth = float(g["truth"].iloc[0])
        lines.append(
            f"| {name} | {truth:.4f} | {weights} | {g['estimate'].mean():.4f} |"
            f" {np.mean(np.abs(g['estimate'] - truth)):.4f} |"
            f" {np.mean(np.abs(g['midpoint'] - truth)):.4f} | {g['std_error'].mean():.4f} |"
            f" {g['fraction_missing'].mean():.3f} | {100 * g['covered'].mean():.0f} % |"
        )
    cov = est.groupby("estimand")["covered"].mean()
    lines += [
        "",
        f"Target: intervals covering the original's value in ≥ 90 % of releases: "
        f"**{'met' if bool((cov >= 0.9).all()) else 'not met'}** (lowest {100 * cov.min():.0f} %)."
        "",
        "",
        "Reading (hand-written with the run; the figures above are generated): at k ≤ 20 the",
        "two methods are indistinguishable downstream (within 0.15 point, below the noise of",
        "one test set); freeform pulls ahead only at k = 50, where mondrian's boxes get coarse.",
        "Gradient boosting on hungarian stays within 0.5 point of the original's; on mondrian",
        "it drops 1.1 points at k = 50. The mean age",
        "fails the coverage target outright: a freeform release's ranges are not placed at",
        "random around the values (at the young end of a skewed column they can only extend",
        "upward), so drawing uniformly inside them biases the mean by about +0.3 years and",
        "drawing from the release's marginal by about −0.2, several standard errors of a",
        "30,162-row mean (the iterated marginal, Turnbull's NPMLE, tried by hand on one release,",
        "gives 38.16: no better). Rubin's intervals carry the sampling and between-draw variance,",
        "not this imputation-model bias; `mean_bounds` gives sure (wide) bounds instead. The",
        "regression coefficient is covered with uniform draws and badly biased with marginal",
        "ones; the share >50K is of a kept (exact) column, so its between-imputation variance",
        "is 0. Not run: k = 100, sortgreedy, the public Mondrian, ANJANA, ℓ/t models, and",
        "other tables (heart, FARS).",
    ]
    update_results("analyst_adult", "\n".join(lines))


if __name__ == "__main__":
    main()
