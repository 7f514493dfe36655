"""Adult with ARX's generalization hierarchies (issue 14): hungarian vs mondrian vs ANJANA.

Adult, the 30,162 complete rows; the 8 QIs of ``make run`` (numeric: age, education-num). The
six categorical QIs (workclass, marital-status, occupation, race, sex, native-country) get ARX's
Adult hierarchies (``$ANONYMATCH_DATA/adult/arx_hierarchies``), so every release is scored by
the same metric: NCP of a categorical cell = (leaves under its node − 1)/(|A| − 1) with |A| the
hierarchy's leaves (ARX's Loss), of a numeric cell (hi − lo)/(U − L); GCP the mean.

* ``hungarian`` and ``mondrian``: ``anonymatch.anonymize(..., types=hierarchies)``, publishing
  the lowest node covering each cell (``--hierarchy-cells node``); hungarian's assignment costs
  are the Loss metric's increases. Verified by ``tables.verify`` before being returned.
* ``anjana``: ANJANA's global recoding over the same hierarchies (plus the age hierarchy and an
  interval hierarchy for education-num, ``_anjana.py``), rewritten into our grammar; a node
  becomes the leaves under it, which our hierarchy metric scores exactly as the node. Checked
  with ``_anjana.class_check`` (truthful cells, smallest class ≥ k), the full verifier being too
  memory-hungry on coarse releases. Its age nodes reach beyond Adult's ages (81..100); the
  ``clipped`` column intersects every node with the data's range first.
* ``hungarian (value sets)``: the release without hierarchies, for reference; its cells are
  free value sets scored as sets, (values − 1)/(|A| − 1) — not the hierarchy metric — and, in
  brackets, the hierarchy metric of the same release with every value set widened to its lowest
  covering node (what publishing nodes costs without hierarchy-aware assignment weights).

Writes docs/results.md (section hierarchies_adult), benchmarks/results/hierarchies_adult.json
and docs/img/hierarchies_gcp.png.

Usage: python benchmarks/hierarchies_adult.py [--no-anjana] [--k 5,10,50] [--replot]
"""

from __future__ import annotations

import argparse
import json
import time

import pandas as pd
from _common import ROOT, adult_path, dump, machine, update_results

import anonymatch
from anonymatch.tables.columns.qitypes import build_types
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.datasets import ADULT_NUMERIC, ADULT_QI
from anonymatch.tables.datasets import load_adult as load_complete_adult
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.job import ReleaseCheck
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.pipeline import evaluate_release
from anonymatch.tables.recode import GeneralizedQI

QI = list(ADULT_QI)
NUMERIC = list(ADULT_NUMERIC)
CATEGORICAL = [a for a in QI if a not in NUMERIC]
# The columns pandas reads as integers from adult.data; the package loader reads text.
INTEGER = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def load_adult() -> pd.DataFrame:
    """The 30,162 complete rows of Adult (the package's loader), the integer columns as int64
    as this script always read them, the others as text."""
    return load_complete_adult(adult_path()).astype(dict.fromkeys(INTEGER, "int64"))


def as_nodes(release: pd.DataFrame, data: pd.DataFrame, schema: Schema) -> float:
    """GCP of a value-set release if each categorical cell were widened to its lowest covering
    hierarchy node (the hierarchy metric applied to a release made without hierarchies)."""
    enc = encode_qi(data, schema)
    cells = parse_cells(release, enc)
    trees = enc.cat_hierarchies()
    closed = tuple(
        s if t is None else t.close(s) for s, t in zip(cells.cat_sets, trees, strict=True)
    )
    widened = GeneralizedQI(cells.num_lo, cells.num_hi, cells.num_star, closed, cells.cat_star)
    return information_loss(widened, enc).gcp


def run_ours(
    data: pd.DataFrame, k: int, method: str, hierarchies: bool, schema: Schema
) -> dict[str, object]:
    from _anjana import hierarchy_dir

    files = {a: str(hierarchy_dir() / f"adult_hierarchy_{a}.csv") for a in CATEGORICAL}
    started = time.perf_counter()
    release = anonymatch.anonymize(
        data,
        k=k,
        qi=QI,
        numeric=NUMERIC,
        sensitive=["income"],
        method=method,
        seed=1,
        hierarchies=files if hierarchies else None,
    )
    seconds = time.perf_counter() - started
    loss = release.report["loss"]
    assert isinstance(loss, dict)
    verification = release.report["verification"]
    assert isinstance(verification, dict) and verification["passed"]
    out = {"gcp": loss["gcp"], "ncp": loss["ncp"], "seconds": seconds, "verified": True}
    if not hierarchies:
        out["gcp_as_nodes"] = as_nodes(release.table, data, schema)
    return out


def run_anjana(data: pd.DataFrame, k: int, schema: Schema) -> dict[str, object]:
    from _anjana import anjana_release, class_check

    release, seconds = anjana_release(data, QI, NUMERIC, "income", k, "k", 0.0)
    loss = evaluate_release(release, data, ReleaseCheck.of(schema))
    clipped, _ = anjana_release(data, QI, NUMERIC, "income", k, "k", 0.0, clip_to_domain=True)
    smallest, truthful = class_check(release, data, QI, NUMERIC)
    return {
        "gcp": loss.gcp,
        "ncp": loss.ncp,
        "gcp_clipped": evaluate_release(clipped, data, ReleaseCheck.of(schema)).gcp,
        "seconds": seconds,
        "verified": bool(truthful and smallest >= k),
        "smallest_class": smallest,
        "suppressed": release.attrs["anjana"]["suppressed"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-anjana", action="store_true")
    parser.add_argument("--k", default="5,10,50")
    parser.add_argument(
        "--replot", action="store_true", help="Rewrite the section and plot from the JSON only."
    )
    args = parser.parse_args()
    if args.replot:
        saved = json.loads((ROOT / "benchmarks" / "results" / "hierarchies_adult.json").read_text())
        write_section(saved["runs"], saved["rows"], saved["machine"])
        return
    from _anjana import hierarchy_dir

    data = load_adult()
    files = {a: str(hierarchy_dir() / f"adult_hierarchy_{a}.csv") for a in CATEGORICAL}
    schema = Schema.build(QI, NUMERIC, types=build_types(hierarchies=files))
    rows = []
    for k in (int(x) for x in args.k.split(",")):
        for label, method, hier in (
            ("hungarian", "hungarian", True),
            ("mondrian", "mondrian", True),
            ("hungarian (value sets)", "hungarian", False),
        ):
            row = {"k": k, "tool": label, **run_ours(data, k, method, hier, schema)}
            print(row, flush=True)
            rows.append(row)
        if not args.no_anjana:
            row = {"k": k, "tool": "anjana", **run_anjana(data, k, schema)}
            print(row, flush=True)
            rows.append(row)
    dump("hierarchies_adult", {"machine": machine(), "rows": len(data), "runs": rows})
    write_section(rows, len(data), machine())


def plot(rows: list[dict[str, object]], tools: list[str], ks: list[int]) -> None:
    """Grouped bars: GCP (hierarchy metric) by k for each tool → docs/img/hierarchies_gcp.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by = {(r["tool"], r["k"]): float(r["gcp"]) for r in rows}  # type: ignore[arg-type]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    width = 0.8 / len(tools)
    for i, tool in enumerate(tools):
        xs = [j + i * width for j in range(len(ks))]
        ax.bar(xs, [100 * by.get((tool, k), 0.0) for k in ks], width, label=tool)
    ax.set_xticks([j + width * (len(tools) - 1) / 2 for j in range(len(ks))])
    ax.set_xticklabels([f"k = {k}" for k in ks])
    ax.set_ylabel("GCP, hierarchy metric (%)")
    ax.set_title("Adult with ARX hierarchies")
    ax.legend(frameon=False)
    fig.tight_layout()
    (ROOT / "docs" / "img").mkdir(exist_ok=True)
    fig.savefig(ROOT / "docs" / "img" / "hierarchies_gcp.png", dpi=110)


def write_section(rows: list[dict[str, object]], n: int, where: str) -> None:
    ks = sorted({int(r["k"]) for r in rows})  # type: ignore[call-overload]
    tools = ["hungarian", "mondrian", "anjana", "hungarian (value sets)"]
    present = [t for t in tools if any(r["tool"] == t for r in rows)]
    by = {(r["tool"], r["k"]): r for r in rows}
    lines = [
        "## Hierarchies on Adult",
        "",
        f"Command: `python benchmarks/hierarchies_adult.py` — machine: {where}.",
        "",
        f"Adult, {n:,} complete rows, the 8 QIs of `make run` (age, education-num numeric), ARX's "
        "hierarchies for the six categorical QIs. GCP under one metric for every tool: a "
        "categorical cell costs (leaves under its hierarchy node − 1)/(|A| − 1) (ARX's Loss), a "
        "range its width over the domain's. `hungarian` and `mondrian` publish lowest covering "
        "nodes (`--hierarchy`), verified; ANJANA (global recoding, `benchmarks/_anjana.py`) "
        "publishes hierarchy nodes, checked class by class (truthful cells, smallest class ≥ k); "
        "in brackets its GCP with every node clipped to the data's domain (its age nodes reach "
        "100). `hungarian (value sets)` is the release without hierarchies, scored as sets "
        "(reference only: not the hierarchy metric), and in brackets the hierarchy metric of "
        "that release with each value set widened to its lowest covering node (what nodes cost "
        "without the hierarchy-aware assignment weights). Wall seconds in square brackets "
        "(the 2 cores were shared with other jobs during the run, so times are indicative).",
        "",
        "| k | " + " | ".join(present) + " |",
        "|---|" + "---|" * len(present),
    ]
    for k in ks:
        cells = []
        for t in present:
            r = by.get((t, k))
            if r is None:
                cells.append("–")
                continue
            text = f"{100 * float(r['gcp']):.2f}%"  # type: ignore[arg-type]
            if t == "anjana":
                text += f" ({100 * float(r['gcp_clipped']):.2f}%)"  # type: ignore[arg-type]
            if "gcp_as_nodes" in r:
                text += f" ({100 * float(r['gcp_as_nodes']):.2f}% as nodes)"  # type: ignore[arg-type]
            text += f" [{float(r['seconds']):.0f} s]"  # type: ignore[arg-type]
            cells.append(text)
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    lines += ["", "NCP per attribute at k = 10:", ""]
    lines += ["| attribute | " + " | ".join(present) + " |", "|---|" + "---|" * len(present)]
    for a in QI:
        vals = []
        for t in present:
            r = by.get((t, 10))
            ncp = r["ncp"] if r else None
            vals.append(f"{100 * ncp[a]:.2f}%" if isinstance(ncp, dict) else "–")
        lines.append(f"| {a} | " + " | ".join(vals) + " |")
    scored = [t for t in ("hungarian", "mondrian", "anjana") if t in present]
    plot(rows, scored, ks)
    lines += ["", "![GCP on Adult with hierarchies](img/hierarchies_gcp.png)"]
    update_results("hierarchies_adult", "\n".join(lines))


if __name__ == "__main__":
    main()
