"""Issue 17, our ``--method mondrian`` beside qiyuangong/Mondrian, before and after the
verifier's contraction of identical published rows (a restricted ``speed_tables.py`` step k).

One session, whole processes, interleaved: for each k in 5, 10, 25, 50, 100 and each repetition,
``anonymatch anonymize <Adult> --method mondrian`` from a *before* source tree (``--before``,
e.g. a checkout of main without the change; numba's cache warmed first), the same from this
tree (*after*), and the public Mondrian (``_mondrian_peer.py``). The 2 cores are shared with
other jobs, so each cell is the median wall time and the median CPU time (user + system) of the
repetitions, and the ratios to the peer are taken within the run. GCP and our verifier's verdict
are computed once per release kind (``speed_tables.score``).

``--change`` names the change measured (its title and description in docs/results.md, its
section and its JSON): ``verifier`` (the contracted verifier, section speed_mondrian) or
``classes`` (Mondrian's graph stored as classes, section speed_mondrian_classes).

Results: benchmarks/results/speed_mondrian[_classes].json and docs/results.md.
Usage: python benchmarks/speed_mondrian.py --before /path/to/old/src [--change classes]
[--before-commit SHA] [--ks 5,10] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import ADULT_CLI, ROOT, adult_path, machine, update_results
from speed_tables import anonymatch, clean, peer, score

RESULTS = ROOT / "benchmarks" / "results"
# change measured: (section of docs/results.md, title, what before and after are)
CHANGES = {
    "verifier": (
        "speed_mondrian",
        "before/after the contracted verifier",
        "*Before*: main (verification on the graph of n × class-size compatible pairs); "
        "*after*: identical published rows contracted into one node with a multiplicity "
        "(docs/guarantees/freeform.md); cells recoded once per distinct member list and "
        "formatted, CSV-escaped and typed for the sidecar once per distinct value; no cyclic "
        "GC during the command's imports. Same releases byte for byte (with `--seed`), same "
        "verification figures in the manifest.",
    ),
    "classes": (
        "speed_mondrian_classes",
        "before/after storing its graph as classes",
        "*Before*: main with Mondrian's graph stored edge by edge (Σ m² edges over classes of "
        "m records, 4.7 M at k = 100, built, sorted, read by the privacy step and recoded), "
        "and the global k-factor max-flow in the verifier; *after*: the graph stored as the "
        "class of each record (`GeneralizationGraph.from_classes`, O(n)), the privacy step "
        "drawn from the class labels (`core/classes.py`, the same draws as `choose_assignment`), "
        "cells recoded once per class from its member list, and the verifier's k-factor proven "
        "class by class from the anonymizer's hint (docs/guarantees/freeform.md). With `--seed`: "
        "the same release byte for byte where no class of more than 4k identical records "
        "existed (k ≥ 25 on Adult); at k = 5 and 10 the same rows in another order (those "
        "groups, rings before, are bicliques now, which draws other random numbers).",
    ),
}


def ours(k: int, release: Path, src: str) -> dict:
    args = ["anonymize", adult_path(), "-o", str(release), "--k", str(k), "--method", "mondrian"]
    return clean(anonymatch([*args, "-q", "--force", *ADULT_CLI], env={"PYTHONPATH": src}))


def measure(ks: list[int], reps: int, before: str, out: Path) -> list[dict]:
    after = str(ROOT / "src")
    for src in (before, after):  # warm numba's cache of each tree
        ours(2, out / "warm.csv", src)
    rows = []
    for k in ks:
        runs: dict[str, list[dict]] = {"before": [], "after": [], "peer": []}
        for _ in range(reps):
            for tool in runs:
                release = out / f"{tool}_{k}.csv"
                if tool == "peer":
                    r = clean(peer(k, release))
                else:
                    r = ours(k, release, before if tool == "before" else after)
                runs[tool].append(r)
        for tool, got in runs.items():
            row = {
                "k": k,
                "tool": tool,
                "wall": statistics.median(r["wall"] for r in got),
                "cpu": statistics.median(r["cpu"] for r in got),
                "walls": [r["wall"] for r in got],
                "cpus": [r["cpu"] for r in got],
                **score(out / f"{tool}_{k}.csv", k),
            }
            rows.append(row)
            print(
                f"k={k:3d} {tool:6s} wall {row['wall']:6.2f} s  cpu {row['cpu']:6.2f} s  "
                f"GCP {100 * row['gcp']:6.2f} %  verified={row['verified']}",
                flush=True,
            )
    return rows


def write_markdown(results: dict) -> None:
    by = {(r["k"], r["tool"]): r for r in results["rows"]}
    ks = sorted({r["k"] for r in results["rows"]})
    change = results.get("change", "verifier")
    section, title, description = CHANGES[change]
    option = "" if change == "verifier" else f" --change {change}"
    lines = [
        f"## Our mondrian beside the public Mondrian, {title} (issue 17)",
        "",
        "Command: `python benchmarks/speed_mondrian.py --before <src of main at "
        f"{results.get('before_commit', '?')}>{option} --reps {results['reps']}`. Machine: "
        f"{results['machine']}. Run {results['date']}, load average {results['load']} at the "
        "start (2 cores shared with other helpers' jobs): each figure is the median of "
        f"{results['reps']} interleaved whole-process runs; compare the ratios within the run.",
        "",
        description,
        "",
        "| k | before wall / CPU s | after wall / CPU s | peer wall / CPU s | before ÷ peer "
        "wall (CPU) | after ÷ peer wall (CPU) | GCP ours / peer |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in ks:
        b, a, p = by[k, "before"], by[k, "after"], by[k, "peer"]
        lines.append(
            f"| {k} | {b['wall']:.2f} / {b['cpu']:.2f} | {a['wall']:.2f} / {a['cpu']:.2f} | "
            f"{p['wall']:.2f} / {p['cpu']:.2f} | {b['wall'] / p['wall']:.1f}× "
            f"({b['cpu'] / p['cpu']:.1f}×) | {a['wall'] / p['wall']:.1f}× "
            f"({a['cpu'] / p['cpu']:.1f}×) | {100 * a['gcp']:.2f} % / {100 * p['gcp']:.2f} % |"
        )
    worst = max(by[k, "after"]["wall"] / by[k, "peer"]["wall"] for k in ks)
    worst_cpu = max(by[k, "after"]["cpu"] / by[k, "peer"]["cpu"] for k in ks)
    verdict = "met" if worst <= 3 else "**not met**"
    lines += [
        "",
        f"Target *our mondrian within 3× of the public one at every k*: worst {worst:.1f}× wall, "
        f"{worst_cpu:.1f}× CPU — {verdict}. Every release passed our verifier: "
        f"{all(r['verified'] for r in results['rows'])}.",
        "",
    ]
    update_results(section, "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", required=True, help="src directory of the code before")
    parser.add_argument("--before-commit", default="?")
    parser.add_argument("--ks", default="5,10,25,50,100")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--change", choices=sorted(CHANGES), default="verifier")
    parser.add_argument("--rewrite", action="store_true", help="only redo docs from the JSON")
    args = parser.parse_args()
    cache = RESULTS / f"{CHANGES[args.change][0]}.json"
    if args.rewrite:
        results = json.loads(cache.read_text())
    else:
        results = {
            "machine": machine(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": round(os.getloadavg()[0], 1),
            "reps": args.reps,
            "before_commit": args.before_commit,
            "change": args.change,
        }
        with tempfile.TemporaryDirectory() as tmp:
            ks = [int(k) for k in args.ks.split(",")]
            results["rows"] = measure(ks, args.reps, args.before, Path(tmp))
        cache.parent.mkdir(exist_ok=True)
        cache.write_text(json.dumps(results, indent=2) + "\n")
    write_markdown(results)


if __name__ == "__main__":
    main()
