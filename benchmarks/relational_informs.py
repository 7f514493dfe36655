"""Relational-transaction releases of INFORMS 2008 (33,961 people, their ICD-9 codes): freeform
k-anonymity on the joint cost vs the class baseline, with the table alone and the sets alone for
reference (issue 29).

For k = 5, 10, 20, each release is made by the command line in a fresh process (wall time and
peak RSS of that process): ``anonymize-rt`` (method ``hungarian``, the default λ, and method
``classes``), ``anonymize`` on the people table alone (same QIs, Hungarian) and
``anonymize-sets`` on the item sets alone (the 26,854 people holding an item: the set kind
refuses empty records). The relational releases are then measured from their files
(``anonymatch.relational.metrics``: relational GCP, uncertain items per record, mean relative
error of 1,000 count queries with two attribute predicates and one item predicate, seed 0).
A λ sweep at k = 10 shows the trade between the two parts.

Usage: ANONYMATCH_DATA=../shared/datasets python benchmarks/relational_informs.py
(writes docs/results.md section "relational_informs", docs/img/relational_informs.png and
benchmarks/results/relational_informs.json; ``--replot`` redraws both from the JSON)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))
from _common import ROOT, data_file, dump, machine, run_cli, update_results  # noqa: E402

from anonymatch.relational.io import read_relational, read_release  # noqa: E402
from anonymatch.relational.job import DEFAULT_ITEM_WEIGHT  # noqa: E402
from anonymatch.relational.metrics import relational_utility  # noqa: E402
from anonymatch.relational.pipeline import encode  # noqa: E402
from anonymatch.tables.columns.schema import Schema  # noqa: E402

KS = (5, 10, 20)
SWEEP = (0.0, 0.002, 0.005, 0.01, 0.02)
QI = "DOBMM,DOBYY,SEX,RACEX,EDUCYEAR,marry,income"
NUMERIC = "DOBYY,EDUCYEAR,income"
NA = ("-1", "-7", "-8", "-9")


def main() -> None:
    if "--replot" in sys.argv:
        saved = json.loads(
            (ROOT / "benchmarks" / "results" / "relational_informs.json").read_text()
        )
        plot(saved["rows"], saved["sweep"])
        write(saved["rows"], saved["sweep"])
        return
    people_csv = data_file("informs/demographics05test.csv", "INFORMS")
    items_csv = data_file("informs/conditions05.csv", "INFORMS")
    people = read_relational(people_csv, items_csv, "DUPERSID", "ICD9CODX", NA)
    schema = Schema.build(QI.split(","), NUMERIC.split(","))
    enc = encode(people, schema)
    common = [
        people_csv, "--items", items_csv, "--id", "DUPERSID", "--item-column", "ICD9CODX",
        "--na", "ICD9CODX=" + "|".join(NA), "--qi", QI, "--numeric", NUMERIC, "-q", "--force",
    ]  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="relational_informs_"))
    # the sets alone: the people holding an item, one (person, code) row each
    long = pd.read_csv(items_csv, dtype=str)
    long = long[~long["ICD9CODX"].isin(NA)].drop_duplicates(["DUPERSID", "ICD9CODX"])
    sets_csv = tmp / "sets.csv"
    long[["DUPERSID", "ICD9CODX"]].to_csv(sets_csv, index=False)

    def relational(k: int, method: str, weight: float) -> dict[str, float]:
        out, report = tmp / f"rt_{method}_{k}_{weight}.jsonl", tmp / "rt.json"
        args = ["anonymize-rt", *common, "-k", str(k), "--method", method, "-o", str(out)]
        run = run_cli([*args, "--item-weight", str(weight), "--report", str(report), "--seed", "0"])
        manifest = json.loads(report.read_text())
        assert manifest["verification"]["passed"]
        release = read_release(out, people, schema.qi)
        u = relational_utility(people, release, enc)
        return {
            "wall": run["wall"],
            "peak_mib": run["peak_mib"],
            "seconds": manifest["seconds"],
            "gcp": u.relational_gcp,
            "uncertain": u.mean_uncertain,
            "max_errors": u.mean_max_errors,
            "query_error": u.query_error,
            "query_error_median": u.query_error_median,
            "min_candidates": u.min_candidates,
            "median_candidates": u.median_candidates,
        }

    rows = []
    for k in KS:
        row: dict[str, object] = {"k": k}
        row["freeform"] = relational(k, "hungarian", DEFAULT_ITEM_WEIGHT)
        row["classes"] = relational(k, "classes", DEFAULT_ITEM_WEIGHT)
        report = tmp / "table.json"
        run = run_cli(
            ["anonymize", people_csv, "--qi", QI, "--numeric", NUMERIC, "-k", str(k), "--seed",
             "0", "-o", str(tmp / "table.csv"), "--report", str(report), "-q", "--force"]
        )  # fmt: skip
        row["table"] = {**run, "gcp": json.loads(report.read_text())["loss"]["gcp"]}
        out = tmp / "sets.jsonl"
        run = run_cli(
            ["anonymize-sets", str(sets_csv), "--format", "long", "--id-column", "DUPERSID",
             "--item-column", "ICD9CODX", "-k", str(k), "--seed", "0", "-o", str(out),
             "--report", str(report), "-q", "--force"]
        )  # fmt: skip
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        row["sets"] = {
            **run,
            "uncertain": sum(len(x["uncertain"]) for x in lines) / len(lines),
            "error_rate": json.loads(report.read_text())["loss"]["error_rate"],
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    sweep = []
    for weight in SWEEP:
        figures = relational(10, "hungarian", weight)
        sweep.append({"item_weight": weight, **figures})
        print(json.dumps(sweep[-1]), flush=True)
    dump("relational_informs", {"rows": rows, "sweep": sweep})
    plot(rows, sweep)
    write(rows, sweep)


def plot(rows: list[dict], sweep: list[dict]) -> None:  # type: ignore[type-arg]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    ks = [r["k"] for r in rows]
    for name, style in (("freeform", "o-"), ("classes", "s--")):
        axes[0].plot(ks, [100 * r[name]["gcp"] for r in rows], style, label=f"relational {name}")
        axes[1].plot(ks, [r[name]["uncertain"] for r in rows], style, label=name)
        axes[2].plot(ks, [r[name]["query_error"] for r in rows], style, label=name)
    axes[0].plot(ks, [100 * r["table"]["gcp"] for r in rows], "^:", label="table alone")
    axes[1].plot(ks, [r["sets"]["uncertain"] for r in rows], "^:", label="sets alone")
    axes[0].set(xlabel="k", ylabel="GCP of the QI cells (%)", title="relational GCP")
    axes[1].set(xlabel="k", ylabel="uncertain items per record", title="set part")
    axes[2].set(xlabel="k", ylabel="mean relative error", title="1,000 count queries")
    for ax in axes:
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle("INFORMS 2008, 33,961 people: freeform (λ = default) vs class baseline")
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / "img" / "relational_informs.png", dpi=110)


def write(rows: list[dict], sweep: list[dict]) -> None:  # type: ignore[type-arg]
    lines = [
        "## Relational-transaction data: INFORMS 2008 (issue 29)",
        "",
        f"Machine: {machine()}; 2 cores shared with other sessions. Command:",
        "`ANONYMATCH_DATA=../shared/datasets python benchmarks/relational_informs.py`.",
        "All 33,961 people of `demographics05test.csv` with their codes of `conditions05.csv`",
        "(ICD-9 codes −1, −7, −8, −9 read as 'no item': 96,766 distinct (person, code) pairs",
        "over 599 codes; 7,107 people hold none). QIs DOBMM, DOBYY, SEX, RACEX, EDUCYEAR,",
        "marry, income (DOBYY, EDUCYEAR, income numeric). Every relational release passed the",
        "independent verifier (joint compatibility, k-factor) inside `anonymize-rt`.",
        "Time and peak memory: the whole command in a fresh process (read, build, privacy",
        "step, verification, write). Query error: mean |estimate − answer| / max(answer, 34)",
        "over 1,000 count queries, each two attribute predicates and one item (seed 0).",
        "Candidates: the records a person matches on the joint compatibility graph.",
        "The sets alone: `anonymize-sets` (Gray-TSP) on the 26,854 people holding an item.",
        "",
        "![INFORMS relational](img/relational_informs.png)",
        "",
        "| k | method | relational GCP | uncertain / record | max_errors | query error"
        " (mean / median) | candidates (min / median) | time | peak memory |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for name in ("freeform", "classes"):
            f = r[name]
            lines.append(
                f"| {r['k']} | {'freeform (hungarian)' if name == 'freeform' else 'classes'} |"
                f" {100 * f['gcp']:.2f} % | {f['uncertain']:.2f} | {f['max_errors']:.2f} |"
                f" {f['query_error']:.3f} / {f['query_error_median']:.3f} |"
                f" {f['min_candidates']} / {f['median_candidates']:.0f} | {f['wall']:.1f} s |"
                f" {f['peak_mib']:.0f} MiB |"
            )
        t, s = r["table"], r["sets"]
        lines.append(
            f"| {r['k']} | table alone (`anonymize`) | {100 * t['gcp']:.2f} % | – | – | – | – |"
            f" {t['wall']:.1f} s | {t['peak_mib']:.0f} MiB |"
        )
        lines.append(
            f"| {r['k']} | sets alone (`anonymize-sets`) | – | {s['uncertain']:.2f} | – | – | – |"
            f" {s['wall']:.1f} s | {s['peak_mib']:.0f} MiB |"
        )
    ten = next(r for r in rows if r["k"] == 10)
    ratio = ten["freeform"]["gcp"] / ten["table"]["gcp"]
    lines += [
        "",
        f"At k = 10 the freeform release's relational GCP is {ratio:.2f}× the table-only"
        f" release's (target ≤ 1.5×) and its query error {ten['freeform']['query_error']:.3f}"
        f" against the class baseline's {ten['classes']['query_error']:.3f} (target: below);"
        f" the whole `anonymize-rt` run takes {ten['freeform']['wall']:.1f} s (target < 60 s).",
        "The load average of the machine was 10–13 during the run (other sessions on the same",
        "2 cores), so the times are upper bounds: the same k = 10 freeform run took 14.2 s in",
        "the λ sweep below. Reading: the freeform release pays 0.7–1.7 points of GCP over the",
        "table alone to keep the set part close to the sets alone (whose 26,854 people all hold",
        "items, where the relational release also covers the 7,107 without), and answers the",
        "mixed queries 2–3× better than the class baseline, whose classes ignore the items. Each",
        "person matches exactly k records on the joint graph (candidates min = median = k): the",
        "release adds no match beyond the graph. λ trades GCP for uncertain items; the default",
        "0.005 keeps the GCP within 1.25× of the table alone at k = 10.",
        "",
        "λ (`--item-weight`, the price of one uncertain item in GCP units) at k = 10:",
        "",
        "| λ | relational GCP | uncertain / record | query error | time |",
        "|---|---|---|---|---|",
    ]
    for s in sweep:
        lines.append(
            f"| {s['item_weight']} | {100 * s['gcp']:.2f} % | {s['uncertain']:.2f} |"
            f" {s['query_error']:.3f} | {s['wall']:.1f} s |"
        )
    update_results("relational_informs", "\n".join(lines))


if __name__ == "__main__":
    main()
