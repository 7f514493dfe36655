"""The ℓ/t and report paths against the plain run (issue 25, "remove the cliffs").

Whole CLI processes (``anonymatch anonymize`` then ``anonymatch report`` on its release, with
ORIGINAL and RELEASE so that the report re-verifies), hungarian, seed 1, for each job:

* fars_subset (10,093 rows; QIs iage, irace, ideathmon, ideathday, isex, ihispanic, istatenum,
  numeric iage, ideathday; sensitive iinjury), k = 5: plain, t = 0.2, distinct ℓ = 3;
* Adult (30,162 complete rows), QIs age, workclass, education-num, marital-status, race, sex,
  native-country, sensitive occupation: plain k = 10 and (10, 4) distinct;
* Adult, the 8 QIs of ``make run``, sensitive income: plain k = 10 and t = 0.2.

Each command runs against this tree and against the tree given by ``--before SRC`` (e.g.
main's ``src``), alternating, ``--repeat`` times each (median reported), with wall and CPU
seconds (user + system of the process: the machine is shared, CPU compares better).
Untimed warm-up runs per tree (fars plain and ℓ = 3) first compile numba's caches. Writes
docs/results.md (section sensitive_speed) and benchmarks/results/sensitive_speed.json.

Usage: ANONYMATCH_DATA=/work/shared/datasets python benchmarks/sensitive_speed.py
       [--before ../main/src] [--repeat 3] [--jobs fars,fars_t,...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import ADULT_NAMES, data_file, dump, machine, timed_process, update_results

FARS_QI = "iage,irace,ideathmon,ideathday,isex,ihispanic,istatenum"
QI7 = "age,workclass,education-num,marital-status,race,sex,native-country"
QI8 = "age,workclass,education-num,marital-status,occupation,race,sex,native-country"


def _fars() -> list[str]:
    return [data_file("arx_fars/fars_subset.csv", "fars_subset"), "--sep", ";"]


def _adult() -> list[str]:
    return [data_file("adult/adult.data", "Adult"), "--names", ADULT_NAMES, "--na-values", "?",
            "--drop-missing"]  # fmt: skip


FARS = f"--k 5 --qi {FARS_QI} --numeric iage,ideathday --sensitive iinjury"
ADULT_OCC = f"--k 10 --qi {QI7} --numeric age,education-num --sensitive occupation"
ADULT_INC = f"--k 10 --qi {QI8} --numeric age,education-num --sensitive income"
# name → (data label, anonymize options, plain job it compares with)
JOBS: dict[str, tuple[str, str, str]] = {
    "fars": ("fars_subset", FARS, "fars"),
    "fars_t": ("fars_subset", FARS + " --t 0.2", "fars"),
    "fars_l": ("fars_subset", FARS + " --l 3", "fars"),
    "adult_occ": ("Adult", ADULT_OCC, "adult_occ"),
    "adult_l": ("Adult", ADULT_OCC + " --l 4", "adult_occ"),
    "adult_inc": ("Adult", ADULT_INC, "adult_inc"),
    "adult_t": ("Adult", ADULT_INC + " --t 0.2", "adult_inc"),
}
LABEL = {
    "fars": "plain k = 5",
    "fars_t": "k = 5, t = 0.2",
    "fars_l": "k = 5, distinct ℓ = 3",
    "adult_occ": "plain k = 10 (sensitive occupation)",
    "adult_l": "(10, 4) distinct on occupation",
    "adult_inc": "plain k = 10 (sensitive income)",
    "adult_t": "k = 10, t = 0.2 on income",
}


def _inputs(name: str) -> list[str]:
    return _fars() if JOBS[name][0] == "fars_subset" else _adult()


def one(name: str, src: str, out: Path) -> dict[str, Any]:
    """Anonymize, then report on the release, for job ``name`` with PYTHONPATH=src."""
    cli = str(Path(sys.executable).parent / "anonymatch")
    env = {**os.environ, "PYTHONPATH": src}
    data, *opts = _inputs(name)
    release, manifest, html = out / f"{name}.csv", out / f"{name}.json", out / f"{name}.html"
    anonymize = f"-o {release} --force --seed 1 --report {manifest} --quiet".split()
    anon = timed_process([cli, "anonymize", data, *opts, *JOBS[name][1].split(), *anonymize], env)
    report = f"--manifest {manifest} -o {html} --force --quiet".split()
    rep = timed_process([cli, "report", data, str(release), *opts, *report], env)
    return {"anonymize": anon, "report": rep}


def measure(names: list[str], trees: dict[str, str], repeat: int) -> dict[str, Any]:
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {t: {n: [] for n in names} for t in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for src in trees.values():  # warm-up: numba caches of each tree, plain and ℓ
            one("fars", src, Path(tmp))
            one("fars_l", src, Path(tmp))
        for _ in range(repeat):
            for name in names:
                for tree, src in trees.items():
                    r = one(name, src, Path(tmp))
                    runs[tree][name].append(r)
                    print(tree, name, {k: f"{v['wall']:.1f}/{v['cpu']:.1f}" for k, v in r.items()},
                          flush=True)  # fmt: skip
    out: dict[str, Any] = {}
    for tree, by in runs.items():
        out[tree] = {}
        for name, rs in by.items():
            out[tree][name] = {
                step: {
                    "wall": statistics.median(r[step]["wall"] for r in rs),
                    "cpu": statistics.median(r[step]["cpu"] for r in rs),
                }
                for step in ("anonymize", "report")
            }
    return out


def render(figures: dict[str, Any], repeat: int) -> str:
    load = os.getloadavg()[0]
    trees = list(figures)
    lines = [
        "## The ℓ/t and report paths against the plain run (issue 25)",
        "",
        f"Machine: {machine()} (2 cores, shared with other jobs: load average {load:.1f} at the "
        "end of the runs; Python 3.11). Command: `ANONYMATCH_DATA=/work/shared/datasets python "
        "benchmarks/sensitive_speed.py --before ../main/src`. Whole CLI processes, hungarian, "
        f"seed 1: `anonymatch anonymize` (with `--report`), then `anonymatch report` with "
        f"ORIGINAL and RELEASE (it re-verifies); median of {repeat} runs per tree, the trees "
        "alternating; seconds as wall / CPU (user + system). *× plain*: CPU of the anonymize "
        "run over the plain run's on the same data and k; *report × run*: CPU of the report "
        "over the CPU of its anonymize run.",
        "",
        "| data | job | tree | anonymize s | × plain | report s | report × run |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for name in figures[trees[0]]:
        for tree in trees:
            f = figures[tree][name]
            plain = figures[tree].get(JOBS[name][2])
            a, r = f["anonymize"], f["report"]
            ratio = f"{a['cpu'] / plain['anonymize']['cpu']:.2f}" if plain else "–"
            lines.append(
                f"| {JOBS[name][0]} | {LABEL[name]} | {tree} | {a['wall']:.1f} / {a['cpu']:.1f} "
                f"| {ratio} | {r['wall']:.1f} / {r['cpu']:.1f} | {r['cpu'] / a['cpu']:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", default=",".join(JOBS))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    trees = {"this branch": str(Path(__file__).resolve().parents[1] / "src")}
    if args.before:
        trees = {"before": str(Path(args.before).resolve()), **trees}
    names = args.jobs.split(",")
    figures = measure(names, trees, args.repeat)
    if args.no_write:
        return
    dump("sensitive_speed", figures)
    update_results("sensitive_speed", render(figures, args.repeat))


if __name__ == "__main__":
    main()
