"""What the default protection of a named sensitive column costs (issue 36, item 3).

Since issue 36 a column named ``sensitive`` with neither ``l`` nor ``t`` gets distinct ℓ = 2
(no person's candidate rows all show one value; ``build_models``). This measures its GCP against
the plain k release (``l = 1``: the column published unprotected, the behaviour before), at
k = 10, for

* our default method (hungarian) and ``method="mondrian"``, each plain and with the default;
* the public Mondrian (qiyuangong/Mondrian, ``_mondrian_peer.py --table``: the peer on the same
  rows and QIs, its rows mapped back by number), which has no ℓ: its plain GCP.

on four jobs:

* **adult-income**: Adult, the 30,162 complete rows; the 8 QIs of the public Mondrian's own
  Adult loader (age, workclass, education-num, marital-status, occupation, race, sex,
  native-country; numeric age, education-num); sensitive ``income`` (2 values);
* **adult-occupation**: the same rows; 7 QIs (the 8 without occupation); sensitive
  ``occupation`` (14 values);
* **heart**: heart_statlog (270 rows); QIs age, sex, chest_pain, resting_bp, cholesterol
  (numeric age, resting_bp, cholesterol); sensitive ``disease`` (2 values);
* **fars**: fars_subset (10,093 rows); QIs iage, irace, ideathmon, ideathday, isex, ihispanic,
  istatenum (numeric iage, ideathday); sensitive ``iinjury`` (7 values).

GCP is ours for every tool (``anonymatch.tables.evaluate``). Every release is verified by
``anonymatch.tables.verify`` with the same arguments it was made with — the default release
with ``sensitive`` and no ``l`` (so the verifier checks the default ℓ = 2 from the release and
the original alone, without a manifest), the plain ones with ``l=1`` — and the peer's for k
(``analyst_adult.verified``). "homog." is the share of people whose candidate rows all show
one sensitive value (``sensitive_adult.homogeneous_share``).

Writes benchmarks/results/sensitive_default.json and the section sensitive_default of
docs/results.md.

Usage: ANONYMATCH_DATA=/work/shared/datasets MONDRIAN_PEER=../peers/Mondrian \
       python benchmarks/sensitive_default.py [--jobs adult-income,heart] [--rewrite]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pandas as pd
from _common import ROOT, data_file, dump, machine, update_results
from sensitive_adult import NUMERIC, QI7, QI8, homogeneous_share, load_adult, load_heart

import anonymatch

K = 10
FARS_QI = ["iage", "irace", "ideathmon", "ideathday", "isex", "ihispanic", "istatenum"]
JOBS: dict[str, dict[str, object]] = {
    "adult-income": {"qi": QI8, "numeric": NUMERIC, "label": "income"},
    "adult-occupation": {"qi": QI7, "numeric": NUMERIC, "label": "occupation"},
    "heart": {
        "qi": ["age", "sex", "chest_pain", "resting_bp", "cholesterol"],
        "numeric": ["age", "resting_bp", "cholesterol"],
        "label": "disease",
    },
    "fars": {"qi": FARS_QI, "numeric": ["iage", "ideathday"], "label": "iinjury"},
}


def load(job: str) -> pd.DataFrame:
    if job.startswith("adult"):
        return load_adult()
    if job == "heart":  # integer-valued floats in the file; the peer reads integers
        heart = load_heart()
        return heart.astype({c: int for c in ["age", "sex", "chest_pain", "resting_bp",
                                              "cholesterol", "disease"]})  # fmt: skip
    frame = pd.read_csv(data_file("arx_fars/fars_subset.csv", "fars_subset"), sep=";")
    return frame.astype({c: str for c in frame.columns if frame[c].dtype == object})


def ours(data: pd.DataFrame, job: str, method: str, protected: bool) -> dict[str, object]:
    spec = JOBS[job]
    qi, numeric, label = spec["qi"], spec["numeric"], spec["label"]
    model = {} if protected else {"l": 1}  # the default, or the explicit opt-out
    started = time.perf_counter()
    result = anonymatch.tables.anonymize(
        data, k=K, qi=qi, numeric=numeric, sensitive=label, method=method, **model
    )
    seconds = time.perf_counter() - started
    release = result.release
    report = anonymatch.tables.verify(
        data, release, k=K, qi=qi, numeric=numeric, sensitive=label, **model
    )
    guarantee = result.report["guarantee"]
    return {
        "job": job,
        "tool": method,
        "model": "default ℓ = 2" if protected else "plain (l = 1)",
        "guarantee_sensitive": guarantee.get("sensitive"),
        "unprotected": guarantee.get("unprotected"),
        "gcp": float(anonymatch.tables.evaluate(data, release, qi=qi, numeric=numeric).gcp),
        "seconds": seconds,
        "verified": bool(report.passed),
        "homogeneous": homogeneous_share(release, data, qi, numeric, label),
    }


def peer(data: pd.DataFrame, job: str, tmp: Path) -> dict[str, object]:
    from analyst_adult import public_mondrian, verified

    spec = {"name": job, **JOBS[job]}
    qi, numeric, label = spec["qi"], spec["numeric"], spec["label"]
    release, wall = public_mondrian(K, tmp, spec, data)
    passed = verified(release, data, spec, K)
    text = pd.read_csv(release.attrs["path"], dtype=str, keep_default_na=False)
    try:
        homogeneous: float | None = homogeneous_share(text, data, qi, numeric, label)
    except MemoryError:
        homogeneous = None
    return {
        "job": job,
        "tool": "mondrian-public",
        "model": "plain (no ℓ)",
        "gcp": float(anonymatch.tables.evaluate(data, text, qi=qi, numeric=numeric).gcp),
        "seconds": wall,
        "verified": passed if isinstance(passed, str) else bool(passed),
        "homogeneous": homogeneous,
    }


def render(rows: list[dict]) -> str:
    by = {(r["job"], r["tool"], r["model"].split(" ")[0]): r for r in rows}
    people = {"adult-income": 30162, "adult-occupation": 30162, "heart": 270, "fars": 10093}

    def cell(r: dict | None) -> str:
        if r is None:
            return "–"
        mark = "" if r["verified"] is True else f" ({r['verified']})" if r["verified"] else " ✗"
        return f"{100 * r['gcp']:.2f}%{mark}"

    def homog(r: dict | None) -> str:
        share = None if r is None else r.get("homogeneous")
        return "–" if share is None else f"{100 * share:.1f}%"

    lines = [
        "Command: `ANONYMATCH_DATA=../shared/datasets MONDRIAN_PEER=../peers/Mondrian python "
        "benchmarks/sensitive_default.py` — machine: " + machine() + ", shared with other jobs.",
        "",
        f"k = {K}. **plain**: the sensitive column published unprotected (`--l 1`, the behaviour",
        "before issue 36); **default**: the column named with no model, which now gets distinct",
        "ℓ = 2 (no person's candidate rows all show one value). GCP is ours for every tool; every",
        "release passed `verify` with the arguments it was made with (the default release without",
        "`--l`, so the verifier checks ℓ = 2 from the release and the original alone) unless",
        "marked ✗. The public Mondrian (qiyuangong/Mondrian, same rows and QIs) has no ℓ: its",
        "plain release. homog.: people whose candidate rows all show one sensitive value.",
        "",
        "| job (rows; sensitive) | hungarian plain | hungarian default | × | mondrian plain "
        "| mondrian default | × | public Mondrian | hungarian default / public "
        "| homog. plain / default / public |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for job, spec in JOBS.items():
        hp, hd = by.get((job, "hungarian", "plain")), by.get((job, "hungarian", "default"))
        mp, md = by.get((job, "mondrian", "plain")), by.get((job, "mondrian", "default"))
        pub = by.get((job, "mondrian-public", "plain"))
        if not any((hp, hd, mp, md, pub)):
            continue

        def ratio(a: dict | None, b: dict | None) -> str:
            return "–" if a is None or b is None else f"{b['gcp'] / a['gcp']:.2f}"

        lines.append(
            f"| {job} ({people[job]:,}; {spec['label']}) | {cell(hp)} | {cell(hd)} | "
            f"{ratio(hp, hd)} | {cell(mp)} | {cell(md)} | {ratio(mp, md)} | {cell(pub)} | "
            f"{ratio(pub, hd)} | {homog(hp)} / {homog(hd)} / {homog(pub)} |"
        )
    lines += [
        "",
        "Reading. ×: the default's GCP over the plain release's, per method. What the default",
        "costs follows how many people it has to move: on income and FARS' injury, where a",
        "third and 42 % of the people see one value on all their candidate rows when unprotected,",
        "hungarian pays 1.6× and 2.1× (with a model it publishes classes, docs/guarantees/",
        "sensitive.md §3, and the classes must mix values) and our mondrian 1.9× and 2.5×; on",
        "heart (13 % homogeneous) 1.11×, and on occupation (14 values, < 0.5 % homogeneous)",
        "1.13× — there hungarian pays for the class structure, not the model, and our mondrian,",
        "already made of classes, pays almost nothing. Before the cheaper classes of issue 36",
        "item 4 (section above) hungarian paid 2.49× (income), 3.13× (FARS), 1.21× (heart) and",
        "1.25× (occupation). In every job hungarian with the default",
        "loses less than the public Mondrian without any protection (ratio column < 1), whose",
        "releases leave 29 % (income) and 42 % (FARS) of the people with one sensitive value on",
        "all their candidate rows. GCP is the same from run to run (the graphs are",
        "deterministic); the plain releases' homog. depends on the draw (OS entropy): income",
        "33.3 % and 32.7 % in two runs.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", default=",".join(JOBS))
    parser.add_argument("--rewrite", action="store_true", help="only rewrite docs/results.md")
    args = parser.parse_args()
    path = ROOT / "benchmarks" / "results" / "sensitive_default.json"
    rows: list[dict] = json.loads(path.read_text()) if path.exists() else []
    if not args.rewrite:
        jobs = args.jobs.split(",")
        rows = [r for r in rows if r["job"] not in jobs]
        with tempfile.TemporaryDirectory() as tmp:
            for job in jobs:
                data = load(job)
                for method in ("hungarian", "mondrian"):
                    for protected in (False, True):
                        rows.append(ours(data, job, method, protected))
                        print(rows[-1], flush=True)
                        dump("sensitive_default", rows)
                rows.append(peer(data, job, Path(tmp)))
                print(rows[-1], flush=True)
                dump("sensitive_default", rows)
    update_results("sensitive_default", render(rows))


if __name__ == "__main__":
    main()
