"""Synthetic census-like tables at scale (issue 7): fit the Chow–Liu tree model on UCI Adult
(8 QIs + hours-per-week + income), generate 1 M and 10 M rows to Parquet through the CLI in a
subprocess (wall time, peak RSS, file size), and compare the synthetic data with Adult:
total-variation distance of every column's marginal, and the mutual information of every pair
of columns in Adult and in the 1 M sample — tree edges keep theirs, the other pairs keep only
what flows along the tree path.

Run: nice -n 19 python benchmarks/synth_census.py [--rows 1000000,10000000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import adult_path, dump, machine, run_cli, update_results  # noqa: E402

from anonymatch.tables.datasets import ADULT_QI, load_adult
from anonymatch.tables.synth import CENSUS_COLUMNS, fit_adult

SEED = 20261121


def codes_of(frame: pd.DataFrame, values: dict[str, list[object]]) -> dict[str, np.ndarray]:
    return {c: pd.Index(values[c]).get_indexer(frame[c]) for c in values}


def mi(a: np.ndarray, b: np.ndarray, ka: int, kb: int) -> tuple[float, float]:
    """Plug-in mutual information (nats) and its Miller–Madow bias-corrected value."""
    joint = np.bincount(a * kb + b, minlength=ka * kb).reshape(ka, kb).astype(float)
    n = joint.sum()
    p = joint / n
    pa, pb = p.sum(axis=1), p.sum(axis=0)
    nz = p > 0
    plug = float(np.sum(p[nz] * np.log(p[nz] / np.outer(pa, pb)[nz])))
    # Miller–Madow: H ≈ H_plugin + (m − 1)/(2n) for m non-empty cells; MI = Ha + Hb − Hab
    bias = ((pa > 0).sum() - 1 + (pb > 0).sum() - 1 - (nz.sum() - 1)) / (2 * n)
    return plug, plug + bias


def tvd_of_file(path: Path, model_values: dict[str, list[object]], real: pd.DataFrame) -> dict:
    """Per-column total-variation distance between the file's marginals and Adult's, reading
    one column at a time (the 10 M file is never loaded whole)."""
    out = {}
    for c in model_values:
        col = pq.read_table(path, columns=[c]).column(c).to_pandas()
        synth = col.value_counts(normalize=True)
        adult = real[c].value_counts(normalize=True)
        both = synth.index.union(adult.index)
        out[c] = 0.5 * float(
            np.abs(synth.reindex(both, fill_value=0) - adult.reindex(both, fill_value=0)).sum()
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    sizes = [int(x) for x in args.rows.split(",")]
    source = adult_path()
    model = fit_adult(source)
    adult = load_adult(source)
    real = adult[list(CENSUS_COLUMNS)].copy()
    for c in model.integer:
        real[c] = real[c].astype(np.int64)
    tmp = tempfile.TemporaryDirectory(dir=args.workdir, prefix="synth_census_")
    work = Path(tmp.name)
    baseline = run_cli(["--version"])  # peak RSS of starting the CLI and importing it
    runs = []
    for rows in sizes:
        out = work / f"census_{rows}.parquet"
        cmd = ["generate-census", "-o", str(out), "--rows", str(rows)]
        cmd += ["--seed", str(SEED), "--source", source, "-q"]
        stats = run_cli(cmd)
        assert stats["rc"] == 0, stats
        meta = pq.ParquetFile(out).metadata
        assert meta.num_rows == rows
        runs.append(
            {
                "rows": rows,
                "wall": stats["wall"],
                "peak_mib": stats["peak_mib"],
                "bytes": out.stat().st_size,
                "row_groups": meta.num_row_groups,
                "tvd": tvd_of_file(out, model.values, real),
            }
        )
        print(f"{rows} rows: {stats['wall']:.1f} s, {stats['peak_mib']:.0f} MiB", flush=True)
    csv_rows = min(sizes)
    csv_out = work / f"census_{csv_rows}.csv"
    csv_stats = run_cli(
        ["generate-census", "-o", str(csv_out), "--rows", str(csv_rows), "--seed", str(SEED)]
        + ["--source", source, "-q"]
    )
    csv_stats["bytes"] = csv_out.stat().st_size
    csv_out.unlink()

    # Mutual information of every pair: Adult (30,162 rows) vs the smallest synthetic file.
    synth = pd.read_parquet(work / f"census_{csv_rows}.parquet")
    sizes_k = {c: len(model.values[c]) for c in CENSUS_COLUMNS}
    real_codes, synth_codes = codes_of(real, model.values), codes_of(synth, model.values)
    edges = {frozenset((p, c)) for p, c, _ in model.edges}
    pairs = []
    for a, b in itertools.combinations(CENSUS_COLUMNS, 2):
        ra, rmm = mi(real_codes[a], real_codes[b], sizes_k[a], sizes_k[b])
        sa, smm = mi(synth_codes[a], synth_codes[b], sizes_k[a], sizes_k[b])
        pairs.append(
            {
                "a": a,
                "b": b,
                "qi_pair": a in ADULT_QI and b in ADULT_QI,
                "tree_edge": frozenset((a, b)) in edges,
                "mi_adult": ra,
                "mi_adult_mm": rmm,
                "mi_synth": sa,
                "mi_synth_mm": smm,
            }
        )
    pairs.sort(key=lambda r: -r["mi_adult_mm"])
    # Both edge weightings, each sampled in-process (smallest size) and scored the same way.
    trees = {}
    for estimator in ("plugin", "miller-madow"):
        alt = fit_adult(source, estimator)
        alt_codes = codes_of(alt.sample(csv_rows, SEED), model.values)
        alt_edges = {frozenset((p, c)) for p, c, _ in alt.edges}
        kept = {"all": [0.0, 0.0], "qi": [0.0, 0.0], "off": [0.0, 0.0]}
        for r in pairs:
            a, b = r["a"], r["b"]
            synth_mm = mi(alt_codes[a], alt_codes[b], sizes_k[a], sizes_k[b])[1]
            # capped at Adult's value: an edge's surplus (its plug-in bias, reproduced by the
            # model) must not hide what another pair lost
            got = min(synth_mm, r["mi_adult_mm"])
            for key, inside in (
                ("all", True),
                ("qi", r["qi_pair"]),
                ("off", frozenset((a, b)) not in alt_edges),
            ):
                if inside:
                    kept[key][0] += got
                    kept[key][1] += r["mi_adult_mm"]
        trees[estimator] = {
            "edges": [f"{p} → {c}" for p, c, _ in alt.edges],
            **{k: v[0] / v[1] for k, v in kept.items()},
        }
    tmp.cleanup()
    dump(
        "synth_census",
        {"baseline": baseline, "runs": runs, "csv": csv_stats, "pairs": pairs, "trees": trees},
    )

    lines = [
        "## Synthetic census-like tables (issue 7)",
        "",
        "`nice -n 19 python benchmarks/synth_census.py` — "
        f"{machine()}. Shared machine (2 cores, other engineers' jobs running): timings are "
        "noisy. The data is **synthetic** (docs/synthetic.md): a Chow–Liu tree Bayesian network "
        f"fitted on Adult's {model.rows_fitted:,} complete rows over the 8 QIs, hours-per-week and "
        "income, generated by `anonymatch generate-census --rows N --seed "
        f"{SEED} --source adult.data -o census_N.parquet` (a fresh process; wall time includes "
        "the fit, ~0.3 s, and interpreter start-up; peak = VmHWM of the process, of which "
        f"{baseline['peak_mib']:.0f} MiB is `anonymatch --version`, i.e. the interpreter and the "
        "imported libraries; generation itself holds one write batch of 262,144 rows and one "
        "block, whatever the row count). Edge weights: Miller–Madow corrected mutual information "
        "(the default; see below for plain plug-in Chow–Liu).",
        "",
        "Tree (root age): " + ", ".join(f"{p} → {c}" for p, c, _ in model.edges) + ".",
        "",
        "| rows | wall (s) | peak RSS (MiB) | Parquet size | row groups | max TVD of a marginal |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        worst = max(r["tvd"], key=r["tvd"].get)
        lines.append(
            f"| {r['rows']:,} | {r['wall']:.1f} | {r['peak_mib']:.0f} |"
            f" {r['bytes'] / 2**20:.1f} MiB | {r['row_groups']} |"
            f" {r['tvd'][worst]:.4f} ({worst}) |"
        )
    lines += [
        "",
        f"The same {csv_rows:,} rows as CSV: {csv_stats['bytes'] / 2**20:.1f} MiB in "
        f"{csv_stats['wall']:.1f} s (peak {csv_stats['peak_mib']:.0f} MiB).",
        "",
        "Total-variation distance between each column's marginal in Adult and in the synthetic "
        "file (sampling noise only: the model reproduces every marginal exactly in expectation):",
        "",
        "| column | " + " | ".join(f"{r['rows']:,} rows" for r in runs) + " |",
        "|---|" + "---:|" * len(runs),
    ]
    for c in CENSUS_COLUMNS:
        lines.append(f"| {c} | " + " | ".join(f"{r['tvd'][c]:.4f}" for r in runs) + " |")
    lines += [
        "",
        f"Mutual information (nats) of the 15 most dependent pairs in Adult, in Adult and in the "
        f"{csv_rows:,}-row synthetic file. Plug-in estimates are biased upwards by about "
        "(|A|−1)(|B|−1)/2n — up to 0.05 nats for age × native-country on Adult's 30,162 rows — "
        "so the Miller–Madow corrected value (MM) is shown too. On a tree edge the model "
        "reproduces Adult's empirical pair table, plug-in bias included, so 'kept' (synthetic "
        "MM / Adult MM) exceeds 100 % on edges between many-valued columns.",
        "",
        "| pair | QI pair | tree edge | Adult | Adult (MM) | synthetic | synthetic (MM) | kept |",
        "|---|:-:|:-:|---:|---:|---:|---:|---:|",
    ]
    for r in pairs[:15]:
        kept = r["mi_synth_mm"] / r["mi_adult_mm"] if r["mi_adult_mm"] > 0 else float("nan")
        lines.append(
            f"| {r['a']} × {r['b']} | {'yes' if r['qi_pair'] else ''} |"
            f" {'yes' if r['tree_edge'] else ''} | {r['mi_adult']:.4f} | {r['mi_adult_mm']:.4f} |"
            f" {r['mi_synth']:.4f} | {r['mi_synth_mm']:.4f} | {100 * kept:.0f}% |"
        )
    on = [r for r in pairs if r["tree_edge"]]
    off = [r for r in pairs if not r["tree_edge"]]
    qi_off = [r for r in off if r["qi_pair"]]
    strongest = max(off, key=lambda r: r["mi_adult_mm"])

    def kept_total(rows: list[dict]) -> float:
        return sum(r["mi_synth_mm"] for r in rows) / sum(r["mi_adult_mm"] for r in rows)

    lines += [
        "",
        f"Summed over the pairs (MM values): the {len(on)} tree edges keep "
        f"{100 * kept_total(on):.0f}% of their mutual information, the {len(off)} other pairs "
        f"{100 * kept_total(off):.0f}% (the {len(qi_off)} non-edge QI pairs: "
        f"{100 * kept_total(qi_off):.0f}%). The most dependent pair that is not a tree edge, "
        f"{strongest['a']} × {strongest['b']}, has {strongest['mi_adult_mm']:.4f} nats in Adult "
        f"and {strongest['mi_synth_mm']:.4f} in the synthetic data: a tree keeps a non-edge's "
        "dependence only as far as it flows along the tree path (at most the weakest edge on "
        "it, by the data-processing inequality); direct interactions off the tree and every "
        "higher-order interaction are lost. Good enough for scale tests of anonymization (the "
        "QI combinations are realistic and skewed); not a substitute for the real data in "
        "utility studies.",
        "",
        f"Edge weighting (the same {csv_rows:,}-row comparison, each pair's synthetic MI capped "
        "at "
        "Adult's so that an edge's reproduced bias does not hide another pair's loss; MM values):",
        "",
        "| edge weight | tree | MI kept, all 45 pairs | 28 QI pairs | non-edges |",
        "|---|---|---:|---:|---:|",
    ]
    for estimator, t in trees.items():
        lines.append(
            f"| {estimator} | {', '.join(t['edges'])} | {100 * t['all']:.0f}% |"
            f" {100 * t['qi']:.0f}% | {100 * t['off']:.0f}% |"
        )
    lines += [
        "",
        "Plain Chow–Liu (plug-in) spends an edge on occupation × hours-per-week, whose "
        "plug-in MI is inflated by hours-per-week's 94 values, and loses occupation × sex; the "
        "bias-corrected weights keep it, hence the default.",
    ]
    update_results("synth", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
