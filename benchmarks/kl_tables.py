"""(k,ℓ)-anonymity vs full k-anonymity on wide tables: information loss (GCP).

Adult (30,162 complete rows) with all 14 attributes public (numeric: age, fnlwgt, education-num,
capital-gain, capital-loss, hours-per-week; income is the sensitive column) and the Google Play
table (9,366 apps with a rating; 12 public attributes, App is the identifier). For
k ∈ {5, 10, 20}: the hypergraph (k,ℓ) anonymizer for ℓ = 1…4 against full k-anonymity by the
core's `hungarian` (freeform, Doka et al.) and `mondrian`. Every release passed its verifier.
Library calls in this process (the same code paths as the CLI commands anonymize-kl/anonymize).
Writes docs/results.md (section kl_tables), docs/img/kl_gcp.png, benchmarks/results/kl_tables.json.

Usage: python benchmarks/kl_tables.py [--ks 5,10,20] [--levels 1,2,3,4]
       [--datasets adult,googleplay]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import ROOT, dump, machine, update_results

from anonymatch.tables.datasets import ADULT_COLUMNS, load_adult
from anonymatch.tables.models.kl import anonymize_kl
from anonymatch.tables.pipeline import anonymize

ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
GP_NUMERIC = ["Rating", "Reviews", "Installs", "Price", "Last Updated"]


def data_dir() -> Path:
    return Path(os.environ.get("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets")))


def adult() -> tuple[pd.DataFrame, list[str], list[str], list[str]]:
    frame = load_adult(data_dir() / "adult" / "adult.data")
    qi = [c for c in ADULT_COLUMNS if c != "income"]
    return frame, qi, ADULT_NUMERIC, ["income"]


def googleplay() -> tuple[pd.DataFrame, list[str], list[str], list[str]]:
    """Google Play apps with a rating; the malformed row (no Category) dropped; numbers parsed:
    Installs '10,000+' → 10000, Price '$4.99' → 4.99, Last Updated → days since 1970."""
    path = data_dir() / "googleplay" / "googleplaystore.csv"
    df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    df = df[df["Rating"].str.strip() != "NaN"]
    df = df[pd.to_numeric(df["Rating"], errors="coerce").between(0, 5)]
    when = pd.to_datetime(df["Last Updated"], format="%B %d, %Y", errors="coerce")
    df = df[when.notna()].reset_index(drop=True)  # the malformed row (fields shifted)
    df["Installs"] = df["Installs"].str.replace(r"[+,]", "", regex=True)
    df["Price"] = df["Price"].str.replace("$", "", regex=False)
    when = pd.to_datetime(df["Last Updated"], format="%B %d, %Y")
    df["Last Updated"] = (when - pd.Timestamp("1970-01-01")).dt.days.astype(str)
    qi = [c for c in df.columns if c != "App"]
    return df, qi, GP_NUMERIC, []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ks", default="5,10,20")
    parser.add_argument("--levels", default="1,2,3,4")
    parser.add_argument("--datasets", default="adult,googleplay")
    parser.add_argument(
        "--append",
        action="store_true",
        help="keep the rows of benchmarks/results/kl_tables.json, run only the missing ones",
    )
    parser.add_argument("--baselines", default="hungarian,mondrian")
    parser.add_argument(
        "--render", action="store_true", help="only rewrite the markdown and plot from the JSON"
    )
    args = parser.parse_args()
    if args.render:
        saved_rows = json.loads((ROOT / "benchmarks" / "results" / "kl_tables.json").read_text())
        write_markdown(saved_rows["rows"])
        plot(saved_rows["rows"])
        return
    ks = [int(x) for x in args.ks.split(",")]
    rows: list[dict] = []
    saved = ROOT / "benchmarks" / "results" / "kl_tables.json"
    if args.append and saved.exists():
        rows = json.loads(saved.read_text())["rows"]
    done = {(r["dataset"], r["k"], r["method"]) for r in rows}
    for name in args.datasets.split(","):
        frame, qi, numeric, sensitive = {"adult": adult, "googleplay": googleplay}[name]()
        ids = ["App"] if name == "googleplay" else []
        # "d" = all public attributes: (k, d)-anonymity is k-anonymity (by global recoding)
        levels = [len(qi) if x == "d" else int(x) for x in args.levels.split(",")]
        for k in ks:
            for level in levels:
                if (name, k, method_name(level, qi)) in done:
                    continue
                t0 = time.perf_counter()
                rel = anonymize_kl(
                    frame,
                    k,
                    level,
                    qi,
                    numeric=numeric,
                    sensitive=sensitive,
                    identifiers=ids,
                    seed=0,
                )
                row = {
                    "dataset": name,
                    "rows": len(frame),
                    "attributes": len(qi),
                    "k": k,
                    "method": method_name(level, qi),
                    "gcp": rel.report["loss"]["gcp"],  # type: ignore[index]
                    "seconds": time.perf_counter() - t0,
                    "merges": rel.report["loss"]["merges"],  # type: ignore[index]
                }
                rows.append(row)
                print(row, flush=True)
                dump("kl_tables", {"rows": rows, "machine": machine()})
            for method in args.baselines.split(","):
                if not method or (name, k, method) in done:
                    continue
                t0 = time.perf_counter()
                rel2 = anonymize(frame, k, qi, numeric, sensitive, ids, method=method, seed=0)
                row = {
                    "dataset": name,
                    "rows": len(frame),
                    "attributes": len(qi),
                    "k": k,
                    "method": method,
                    "gcp": rel2.report["loss"]["gcp"],  # type: ignore[index]
                    "seconds": time.perf_counter() - t0,
                }
                rows.append(row)
                print(row, flush=True)
                dump("kl_tables", {"rows": rows, "machine": machine()})
    write_markdown(rows)
    plot(rows)


def method_name(level: int, qi: list[str]) -> str:
    return "kl l=d (global k-anon.)" if level == len(qi) else f"kl l={level}"


def write_markdown(rows: list[dict]) -> None:
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = sorted(dict.fromkeys(r["method"] for r in rows), key=_method_order)
    lines = [
        "## (k,ℓ)-anonymity vs k-anonymity on wide tables (issue 6)",
        "",
        "Command: `python benchmarks/kl_tables.py`. Machine: " + machine() + ".",
        "Adult: 30,162 complete rows, all 14 attributes public (6 numeric), income sensitive.",
        "Google Play: 9,366 apps with a rating, 12 public attributes (5 numeric), App dropped as",
        "identifier. `kl l=ℓ`: the hypergraph algorithm of Stokes' slides, global generalization",
        "(value sets, ranges), (k,ℓ)-anonymous; `hungarian`/`mondrian`: full k-anonymity on all",
        "public attributes. Every release passed its verifier. GCP (lower is better), seconds in",
        "brackets (single process, library calls; the 2-core machine was shared with other",
        "jobs, so times are noisy):",
        "",
    ]
    for name in datasets:
        ks = sorted({r["k"] for r in rows if r["dataset"] == name})
        lines += [f"**{name}**", "", "| k | " + " | ".join(methods) + " |"]
        lines.append("|---|" + "---|" * len(methods))
        for k in ks:
            cells = []
            for m in methods:
                hit = [r for r in rows if r["dataset"] == name and r["k"] == k and r["method"] == m]
                cells.append(
                    f"{100 * hit[0]['gcp']:.2f} % ({hit[0]['seconds']:.0f} s)" if hit else "–"
                )
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += reading(rows)
    lines.append("![GCP of (k,ℓ) vs k-anonymity](img/kl_gcp.png)")
    update_results("kl_tables", "\n".join(lines))


def reading(rows: list[dict]) -> list[str]:
    """A few sentences comparing the figures at k = 10."""
    out = ["Reading (k = 10):", ""]
    for name in dict.fromkeys(r["dataset"] for r in rows):
        by = {r["method"]: r["gcp"] for r in rows if r["dataset"] == name and r["k"] == 10}
        full = by.get("kl l=d (global k-anon.)")
        parts = [
            f"(k,{lv}) {100 * by[f'kl l={lv}']:.2f} %" for lv in (1, 2, 3, 4) if f"kl l={lv}" in by
        ]
        text = f"- {name}: " + ", ".join(parts)
        if full is not None:
            text += f"; global k-anonymity by the same algorithm (ℓ = all) {100 * full:.2f} %"
            if by.get("kl l=2"):
                text += f" ({full / by['kl l=2']:.0f}× the loss of (k,2))"
        if "hungarian" in by and "mondrian" in by:
            text += (
                f"; local-recoding k-anonymity: hungarian {100 * by['hungarian']:.2f} %,"
                f" mondrian {100 * by['mondrian']:.2f} %."
            )
        out.append(text)
    out += [
        "",
        "(k,ℓ) for small ℓ costs a fraction of k-anonymity *by global recoding* — the setting of",
        "the slides: (k,1) is almost free and (k,2) many times cheaper than (k,d) — but with 12–14",
        "public attributes, near-unique ones among them (fnlwgt, capital-gain, Reviews, Current",
        "Ver), every global value merge hits all records, and from ℓ = 3–4 on it is as lossy as",
        "full global k-anonymity (at ℓ = 4 the greedy merges already reach a k-anonymous table,",
        "hence equal figures; the greedy is not monotone in k, e.g. Adult ℓ = 4 at k = 10 vs 20).",
        "The local-recoding k-anonymity of the core (hungarian: a k-regular generalization",
        "graph; Mondrian: local groups) loses about as much as (k,2) on Adult and less on Google",
        "Play, where a few attributes are near-unique. The",
        "guarantees differ: a hungarian release is k-anonymous in the nonreciprocal sense",
        "(every person matches ≥ k rows, the true one hidden among k assignments), not",
        "(k,ℓ)-anonymous in the counting sense; (k,ℓ) only assumes ≤ ℓ known attributes.",
        "",
    ]
    return out


def _method_order(m: str) -> tuple[int, str]:
    return (0 if m.startswith("kl l=") and m[5].isdigit() else 1 if m.startswith("kl") else 2, m)


def plot(rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4), squeeze=False)
    for ax, name in zip(axes[0], datasets, strict=True):
        sub = [r for r in rows if r["dataset"] == name]
        every = sorted(dict.fromkeys(r["method"] for r in rows), key=_method_order)
        for i, m in enumerate(every):
            pts = sorted((r["k"], 100 * r["gcp"]) for r in sub if r["method"] == m)
            if pts:
                style = "--" if m in ("hungarian", "mondrian") else "-"
                ax.plot(*np.array(pts).T, style, marker="o", label=m, color=f"C{i}")
        ax.set_xscale("log")
        ks = sorted({r["k"] for r in sub})
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("k")
        ax.set_ylabel("GCP (%)")
        ax.set_title(f"{name}: {sub[0]['rows']} rows, {sub[0]['attributes']} public attributes")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    img = ROOT / "docs" / "img"
    img.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(img / "kl_gcp.png", dpi=120)


if __name__ == "__main__":
    main()
