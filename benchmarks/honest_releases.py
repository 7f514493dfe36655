"""Honest releases (issue 25): what kept columns leak, before and after the roles are fixed,
and the utility headline of each release.

Three jobs, each run twice through the Python API (``anonymatch.anonymize``, hungarian, fixed
seed), with the roles *before* and *after* this issue:

* Adult (30,162 complete rows), k = 10, sensitive income: before, ``make run``'s old roles
  (QIs age, workclass, education-num, marital-status, occupation, race, sex, native-country;
  every other column kept); after, the Makefile's new roles (relationship a QI, education and
  fnlwgt dropped as identifiers).
* fars_subset (10,093 rows) and cup_subset (6,344 rows), k = 5: before, the roles of
  ``anonymatch init``'s draft on main before this issue (fars: QIs iage, irace, ideathmon;
  cup: QIs ZIP, AGE, GENDER; the rest kept); after, the roles of ``init``'s draft now (it
  proposes the kept columns that give QIs away as QIs or identifiers).

For each release: leaked rows per kept column (``anonymatch.tables.risk.leakage``: rows whose
QI cell the kept value narrows to at most half its values), the flagged columns, GCP and the
utility headline (``anonymatch.tables.risk.headline``), and the time of the leakage check.
Writes docs/results.md (section honest_releases) and benchmarks/results/honest_releases.json.

With ``--speed``: the time of ``anonymatch anonymize`` on cup_subset at k = 5 with ARX's
hierarchies for ZIP (100,000 leaves), AGE, GENDER and STATE (the QIs of ``init --hierarchies``'s
draft), whole CLI process, wall and CPU seconds and the manifest's stage seconds, for this tree
and for the tree given by ``--before SRC`` (e.g. main's ``src``), alternating, ``--repeat``
times each (the median is reported).

With ``--useless``: the issue's useless release — fars_subset at k = 5 and t = 0.2 on iinjury
(QIs iage, irace, ideathmon, ideathday, isex, ihispanic, istatenum; about 1 s; the run recorded
before the verifier worked on groups took 238 s, docs/results.md "sensitive_speed"): its GCP,
utility headline and verdict, and the kept columns flagged.

Usage: ANONYMATCH_DATA=/work/shared/datasets python benchmarks/honest_releases.py
       [--speed [--before ../main/src] [--repeat 3]] [--useless]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
from _common import data_file, dump, machine, update_results

import anonymatch
from anonymatch.app.infer import infer_job
from anonymatch.tables.io import CsvOptions, read_table

ADULT_NAMES = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
]  # fmt: skip
ADULT_BEFORE = "age,workclass,education-num,marital-status,occupation,race,sex,native-country"
ADULT_AFTER = (
    "age,workclass,education-num,marital-status,occupation,relationship,race,sex,native-country"
)


def _init_roles(path: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """QIs, numeric QIs, sensitive and identifier columns of ``anonymatch init``'s draft."""
    job = infer_job(path)
    return list(job.qi), list(job.numeric), list(job.sensitive), list(job.identifiers)


def jobs() -> list[dict[str, Any]]:
    adult = read_table(data_file("adult/adult.data", "adult"), CsvOptions(names=ADULT_NAMES))
    common = {"k": 10, "sensitive": ["income"], "na_values": ["?"], "drop_missing": True}
    out: list[dict[str, Any]] = [
        {
            "data": "Adult",
            "roles": "before",
            "frame": adult,
            "args": {**common, "qi": ADULT_BEFORE.split(","), "numeric": ["age", "education-num"]},
        },
        {
            "data": "Adult",
            "roles": "after",
            "frame": adult,
            "args": {
                **common,
                "qi": ADULT_AFTER.split(","),
                "numeric": ["age", "education-num"],
                "identifiers": ["fnlwgt", "education"],
            },
        },
    ]
    before = {
        "fars_subset": (["iage", "irace", "ideathmon"], ["iage"]),
        "cup_subset": (["ZIP", "AGE", "GENDER"], ["ZIP", "AGE"]),
    }
    for name, rel in (
        ("fars_subset", "arx_fars/fars_subset.csv"),
        ("cup_subset", "arx_cup/cup_subset.csv"),
    ):
        path = data_file(rel, name)
        frame = read_table(path, CsvOptions(sep=";"))
        qi, numeric = before[name]
        out.append(
            {
                "data": name,
                "roles": "before",
                "frame": frame,
                "args": {"k": 5, "qi": qi, "numeric": numeric},
            }
        )
        qi, numeric, sensitive, ids = _init_roles(path)
        out.append(
            {
                "data": name,
                "roles": "after",
                "frame": frame,
                "args": {
                    "k": 5,
                    "qi": qi,
                    "numeric": numeric,
                    "sensitive": sensitive,
                    "identifiers": ids,
                },
            }
        )
    return out


def run(job: dict[str, Any]) -> dict[str, Any]:
    frame: pd.DataFrame = job["frame"]
    started = time.perf_counter()
    release = anonymatch.anonymize(frame, seed=1, method="hungarian", **job["args"])
    wall = time.perf_counter() - started
    report = release.report
    leakage = report["leakage"]
    return {
        "data": job["data"],
        "roles": job["roles"],
        "qi": job["args"]["qi"],
        "identifiers": job["args"].get("identifiers", []),
        "rows": leakage["rows"],
        "leaked": {c["column"]: c["leaked_rows"] for c in leakage["columns"]},
        "pinned": {c["column"]: c["pinned_rows"] for c in leakage["columns"]},
        "unique": {c["column"]: c["unique_rows"] for c in leakage["columns"]},
        "flagged": leakage["flagged"],
        "determined": [
            [c["column"], q["qi"], q["determined_rows"], q["narrowed_rows"]]
            for c in leakage["columns"]
            for q in c["by_qi"]
            if q["determined_rows"] >= 0.01 * leakage["rows"]
        ],
        "gcp": report["loss"]["gcp"],
        "headline": report["loss"]["headline"],
        "seconds": wall,
        "leakage_seconds": report["seconds"]["leakage"],
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def render(results: list[dict[str, Any]]) -> str:
    lines = [
        "## Honest releases (issue 25): what kept columns leak, what a release keeps",
        "",
        f"Machine: {machine()} (2 cores, shared, Python 3.11). Command: "
        "`ANONYMATCH_DATA=/work/shared/datasets python benchmarks/honest_releases.py`; "
        "hungarian, seed 1, through `anonymatch.anonymize`.",
        "",
        "**Leaked rows per kept column**, before → after the roles were fixed (Adult: `make "
        "run`'s roles; fars/cup: `anonymatch init`'s draft before and after this issue). A row "
        "leaks when its kept value narrows one of its published QI cells to at most half its "
        "values (`anonymatch.tables.risk.leakage`, docs/guarantees/leakage.md); in brackets the "
        "rows pinned to one value; *unique*: rows whose value no other row has; **bold**: "
        "flagged (≥ 1 % of the rows leak, ≥ 5 % unique, or free text). A column the new roles "
        "generalize (QI) or drop (identifier) reads *QI* / *dropped*.",
        "",
        "| data | kept column | before: leaked (pinned) | before: unique | after |",
        "|---|---|---:|---:|---|",
    ]
    by = {(r["data"], r["roles"]): r for r in results}
    for data in dict.fromkeys(r["data"] for r in results):
        b, a = by[(data, "before")], by[(data, "after")]
        for col in b["leaked"]:
            mark = "**" if col in b["flagged"] else ""
            if col in a["leaked"]:
                am = "**" if col in a["flagged"] else ""
                after = f"{am}{a['leaked'][col]:,} ({a['pinned'][col]:,}){am}"
            elif col in a["qi"]:
                after = "*QI*"
            else:
                after = "*dropped*"
            lines.append(
                f"| {data} | {mark}{col}{mark} | {b['leaked'][col]:,} ({b['pinned'][col]:,}) "
                f"| {b['unique'][col]:,} | {after} |"
            )
    told = [
        f"{r['data']} ({r['roles']}): {col} → {qi} in {det:,} rows ({nar:,} of them narrowed)"
        for r in results
        for col, qi, det, nar in r["determined"]
    ]
    lines += [
        "",
        "What a kept column tells on its own — rows whose kept value leaves one value of a QI, "
        "published exactly or not (≥ 1 % of the rows): " + ("; ".join(told) or "none") + ". "
        "A QI published exactly loses nothing to it (Adult's `sex` is never generalized at "
        "k = 10, so `relationship` leaks no row of it although it determines it), which is why "
        "the leak counts narrowed rows.",
    ]
    lines += [
        "",
        "**Utility headline** of the same releases (`anonymatch.tables.risk.headline`): exact "
        "cells, rows whose every QI cell covers all values present, distinct values never "
        "published alone, the loss counted on the values present (GCP counts declared "
        "domains), the verdict (useless from 90 %, poor from 50 %), and the seconds of the run "
        "and of the leakage check.",
        "",
        "| data | roles | QIs | GCP | exact cells | rows fully generalized | codes merged "
        "| loss on values present | verdict | flagged | run s | leakage s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|",
    ]
    for r in results:
        h = r["headline"]
        lines.append(
            f"| {r['data']} | {r['roles']} | {len(r['qi'])} | {_pct(r['gcp'])} "
            f"| {_pct(h['exact_cells'])} | {_pct(h['rows_fully_generalized'])} "
            f"| {_pct(h['codes_merged'])} of {h['codes']:,} | {_pct(h['loss_present'])} "
            f"| {h['verdict']} | {', '.join(r['flagged']) or '—'} | {r['seconds']:.1f} "
            f"| {r['leakage_seconds']:.2f} |"
        )
    return "\n".join(lines)


CUP_QI = ["ZIP", "AGE", "GENDER", "STATE"]


def _cup_cli(src: str, out: Path) -> dict[str, Any]:
    """One CLI run of cup_subset at k = 5 with ARX's hierarchies, PYTHONPATH=src."""
    data = data_file("arx_cup/cup_subset.csv", "cup_subset")
    trees = Path(data).parent / "hierarchies"
    cli = str(Path(sys.executable).parent / "anonymatch")
    argv = [cli, "anonymize", data, "-o", str(out / "r.csv"), "--force", "--k", "5",
            "--sep", ";", "--qi", ",".join(CUP_QI), "--seed", "1",
            "--report", str(out / "r.json"), "--quiet"]  # fmt: skip
    for q in CUP_QI:
        argv += ["--hierarchy", f"{q}={trees / f'cup_hierarchy_{q}.csv'}"]
    env = {**os.environ, "PYTHONPATH": src}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    manifest = json.loads((out / "r.json").read_text())
    return {"wall": wall, "cpu": cpu, "stages": manifest["seconds"]}


def speed(before: str | None, repeat: int) -> dict[str, Any]:
    trees = {"this branch": str(Path(__file__).resolve().parents[1] / "src")}
    if before:
        trees = {"before (" + before + ")": str(Path(before).resolve()), **trees}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            for name, src in trees.items():
                runs[name].append(_cup_cli(src, Path(tmp)))
    out = {}
    for name, rs in runs.items():
        out[name] = {
            "wall": statistics.median(r["wall"] for r in rs),
            "cpu": statistics.median(r["cpu"] for r in rs),
            "walls": [r["wall"] for r in rs],
            "stages": {
                k: statistics.median(r["stages"].get(k, 0.0) for r in rs) for k in rs[0]["stages"]
            },
        }
    return out


def render_speed(figures: dict[str, Any]) -> str:
    load = os.getloadavg()[0]
    lines = [
        "### cup_subset at k = 5 with ARX's hierarchies (ZIP: 100,000 leaves)",
        "",
        f"`anonymatch anonymize` (hungarian, seed 1), QIs {', '.join(CUP_QI)} each with its "
        "ARX hierarchy, whole CLI process; median of the runs (alternating trees). Command: "
        "`python benchmarks/honest_releases.py --speed --before ../main/src`. The machine was "
        f"shared (load average {load:.1f} on 2 cores at the end of the runs): wall times are "
        "inflated and noisy, CPU seconds (user + system of the process) compare better.",
        "",
        "| tree | wall s (runs) | CPU s | build s | verify s | leakage s | pipeline wall s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, f in figures.items():
        st = f["stages"]
        walls = ", ".join(f"{w:.1f}" for w in f["walls"])
        lines.append(
            f"| {name} | {f['wall']:.1f} ({walls}) | {f['cpu']:.1f} | {st.get('build', 0):.2f} "
            f"| {st.get('verify', 0):.2f} | {st.get('leakage', 0):.2f} | {st.get('wall', 0):.2f} |"
        )
    return "\n".join(lines)


FARS_QI = ["iage", "irace", "ideathmon", "ideathday", "isex", "ihispanic", "istatenum"]


def useless() -> dict[str, Any]:
    frame = read_table(data_file("arx_fars/fars_subset.csv", "fars_subset"), CsvOptions(sep=";"))
    started = time.perf_counter()
    release = anonymatch.anonymize(
        frame, k=5, qi=FARS_QI, numeric=["iage", "ideathday"], sensitive=["iinjury"], t=0.2,
        seed=1,
    )  # fmt: skip
    report = release.report
    sensitive = next(c for c in report["leakage"]["columns"] if c["column"] == "iinjury")
    return {
        "seconds": time.perf_counter() - started,
        "gcp": report["loss"]["gcp"],
        "headline": report["loss"]["headline"],
        "flagged": report["leakage"]["flagged"],
        "iinjury": sensitive,
    }


def render_useless(r: dict[str, Any]) -> str:
    h = r["headline"]
    worst = max(r["iinjury"]["by_qi"], key=lambda q: q["narrowed_rows"], default=None)
    leak = (
        f"; its sensitive column `iinjury` still narrows the published `{worst['qi']}` cell in "
        f"{worst['narrowed_rows']:,} rows ({worst['pinned_rows']:,} to one value) although "
        "every QI cell is `*`"
        if worst
        else ""
    )
    return "\n".join(
        [
            "### The useless release of the issue: fars_subset, k = 5, t = 0.2",
            "",
            "`python benchmarks/honest_releases.py --useless` (QIs "
            f"{', '.join(FARS_QI)}; sensitive iinjury; hungarian with t-closeness, seed 1): "
            f"{r['seconds']:.0f} s. GCP {100 * r['gcp']:.1f}%, exact cells "
            f"{100 * h['exact_cells']:.1f}%, rows fully generalized "
            f"{100 * h['rows_fully_generalized']:.1f}%, codes merged "
            f"{100 * h['codes_merged']:.1f}% of {h['codes']}, loss on the values present "
            f"{100 * h['loss_present']:.1f}%: verdict **{h['verdict']}** — the CLI warns, the "
            "report's Utility card reads *useless* and its verification card adds \"but the "
            f'release is useless"{leak}. Flagged: {", ".join(r["flagged"]) or "none"}.',
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--before", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--useless", action="store_true")
    args = parser.parse_args()
    if args.useless:
        figures = useless()
        print(json.dumps(figures, indent=2))
        dump("honest_releases_useless", figures)
        update_results("honest_releases_useless", render_useless(figures))
        return
    if args.speed:
        figures = speed(args.before, args.repeat)
        print(json.dumps(figures, indent=2))
        dump("honest_releases_speed", figures)
        update_results("honest_releases_speed", render_speed(figures))
        return
    results = [run(job) for job in jobs()]
    for r in results:
        print(r["data"], r["roles"], r["flagged"], r["leaked"], f"{r['seconds']:.1f}s")
    dump("honest_releases", results)
    update_results("honest_releases", render(results))


if __name__ == "__main__":
    main()
