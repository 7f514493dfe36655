"""Issue 38: blocks against the hungarian rounds by k — the measurements behind the plan's
choice of blocks at large k (``tables.job.plan``, ``methods.BLOCKS_ABOVE``).

UCI Adult (30,162 complete rows, the 8 QIs of ``make run``), in process: for each k the
hungarian build over the default partitions (``methods.build_graph``, build CPU seconds) and
the blocks of ``methods.blocks`` (the whole table cut at the least GCP, CPU seconds), each
scored by the GCP of its recoded cells, and the plan's estimate of the rounds and what follows
them (CPU seconds a record, against ``BLOCKS_ABOVE``). The rounds are built only up to
``--rounds-max`` (above, minutes). Then random subsets of Adult (``--subsets``) at a few k:
whether blocks catch up with the rounds depends on the table's size, which is why the plan
chooses by time, not by k alone.

CPU seconds are ``time.process_time`` of this process (the build's threads included), so they
hold on a shared machine. Usage: python benchmarks/blocks_vs_rounds.py [--ks 50,100,…]
[--rounds-max 450] [--subsets 3000,10000] [--subset-ks 350,450]
[--rewrite: only redo the docs and the plot from the JSON]
Results: benchmarks/results/blocks_vs_rounds.json, docs/results.md (section blocks_vs_rounds),
docs/img/blocks_vs_rounds.png.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd
from _common import ADULT_NAMES, ADULT_QI, ROOT, adult_path, dump, machine, update_results

from anonymatch.tables.columns.schema import EncodedQI, Schema
from anonymatch.tables.methods import (
    BLOCKS_ABOVE,
    BuildOptions,
    after_build_seconds,
    build_graph,
    registry,
    rounds_seconds,
    too_long_for_rounds,
)
from anonymatch.tables.methods.blocks import blocks
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.pipeline import prepare
from anonymatch.tables.recode import recode


def load() -> pd.DataFrame:
    frame = pd.read_csv(
        adult_path(), names=ADULT_NAMES.split(","), skipinitialspace=True, na_values="?"
    )
    frame = frame.dropna().reset_index(drop=True)
    return frame.astype({c: str for c in frame.columns if frame[c].dtype == object})


def encode(frame: pd.DataFrame) -> EncodedQI:
    return prepare(frame, Schema.build(ADULT_QI.split(","), ["age", "education-num"]))[1]


def measure(qi: EncodedQI, k: int, rounds: bool) -> dict[str, object]:
    """GCP and CPU of the blocks and (with ``rounds``) of the hungarian build at level k."""
    method = registry()["hungarian"]
    size = method.partition_size_for(k)
    assert size is not None
    per_record = (rounds_seconds(method, qi.n, k, size) + after_build_seconds(qi.n, k)) / qi.n
    row: dict[str, object] = {"n": qi.n, "k": k, "partition_size": size}
    row["estimate_ms_per_record"] = 1000 * per_record
    row["plan"] = "blocks" if per_record > BLOCKS_ABOVE else "rounds"
    started = time.process_time()
    graph = blocks(qi, k)
    row["blocks_cpu"] = time.process_time() - started
    row["blocks_gcp"] = information_loss(recode(graph, qi), qi).gcp
    if rounds:
        started = time.process_time()
        built = build_graph(qi, k, method, size, BuildOptions())
        row["rounds_cpu"] = time.process_time() - started
        row["rounds_gcp"] = information_loss(recode(built.graph, qi), qi).gcp
    return row


def lines(results: dict) -> list[str]:
    out = [
        "Command: `python benchmarks/blocks_vs_rounds.py`. Machine: "
        f"{results['machine']}. Run {results['date']}. In process, CPU seconds "
        "(`time.process_time`, the build's threads included); GCP of the recoded cells; "
        "'estimate' is the plan's CPU a record for the rounds and what follows them "
        f"(blocks above {1000 * BLOCKS_ABOVE:.0f} ms).",
        "",
        "| rows | k | P | hungarian GCP | build CPU s | blocks GCP | blocks CPU s | blocks vs "
        "hungarian | estimate ms/record | plan |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        rounds = "rounds_gcp" in r
        gcp = f"{100 * r['rounds_gcp']:.2f} %" if rounds else "—"
        cpu = f"{r['rounds_cpu']:.1f}" if rounds else "—"
        rel = f"{r['blocks_gcp'] / r['rounds_gcp'] - 1:+.1%}" if rounds else ""
        out.append(
            f"| {r['n']:,} | {r['k']:,} | {r['partition_size']:,} | {gcp} | {cpu} | "
            f"{100 * r['blocks_gcp']:.2f} % | {r['blocks_cpu']:.2f} | {rel} | "
            f"{r['estimate_ms_per_record']:.2f} | {r['plan']} |"
        )
    return [*out, ""]


def plot(results: dict) -> None:
    """docs/img/blocks_vs_rounds.png: GCP against k on the whole of Adult, the rounds where
    they were built and the blocks everywhere, the plan's switch marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted((r for r in results["rows"] if r["n"] == max(x["n"] for x in results["rows"])),
                  key=lambda r: r["k"])  # fmt: skip
    fig, ax = plt.subplots(figsize=(6.5, 4))
    built = [r for r in rows if "rounds_gcp" in r]
    ax.plot([r["k"] for r in built], [100 * r["rounds_gcp"] for r in built], marker="o",
            label="hungarian rounds")  # fmt: skip
    ax.plot([r["k"] for r in rows], [100 * r["blocks_gcp"] for r in rows], marker="s",
            label="blocks")  # fmt: skip
    n, method = rows[0]["n"], registry()["hungarian"]
    switch = next(
        (
            k
            for k in range(2, n + 1)
            if too_long_for_rounds(method, n, k, method.partition_size_for(k))
        ),
        None,
    )  # the plan's first k of blocks (methods.BLOCKS_ABOVE)
    if switch is not None:
        ax.axvline(switch, color="grey", linestyle="--", label=f"plan: blocks from k = {switch}")
    ax.set_xscale("log")
    ax.set_xticks([r["k"] for r in rows], [str(r["k"]) for r in rows])
    ax.set_xlabel("k")
    ax.set_ylabel("GCP (%)")
    ax.set_title("UCI Adult, 30,162 rows: blocks against the rounds")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / "img" / "blocks_vs_rounds.png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ks", default="50,100,150,200,300,450,1000,2000")
    parser.add_argument("--rounds-max", type=int, default=450)
    parser.add_argument("--subsets", default="3000,10000")
    parser.add_argument("--subset-ks", default="350,450")
    parser.add_argument("--rewrite", action="store_true", help="only redo the docs and plot")
    args = parser.parse_args()
    if args.rewrite:
        results = json.loads((ROOT / "benchmarks/results/blocks_vs_rounds.json").read_text())
        update_results("blocks_vs_rounds", "\n".join(lines(results)))
        plot(results)
        return
    frame = load()
    qi = encode(frame)
    blocks(qi.take(np.arange(100)), 10)  # numba's caches
    rows = []
    for k in (int(x) for x in args.ks.split(",")):
        rows.append(measure(qi, k, k <= args.rounds_max))
        print(rows[-1], flush=True)
    rng = np.random.default_rng(0)
    for n in (int(x) for x in args.subsets.split(",") if x):
        sub = encode(frame.iloc[np.sort(rng.choice(len(frame), n, replace=False))])
        for k in (int(x) for x in args.subset_ks.split(",")):
            rows.append(measure(sub, k, True))
            print(rows[-1], flush=True)
    results = {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "rows": rows,
    }
    dump("blocks_vs_rounds", results)
    update_results("blocks_vs_rounds", "\n".join(lines(results)))
    plot(results)


if __name__ == "__main__":
    main()
