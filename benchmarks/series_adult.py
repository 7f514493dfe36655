"""A release series on Adult (issue 40): three yearly releases, and the composition attacker.

Adult, the 30,162 complete rows, one person each (person id ``pid``: the row number), split into
three yearly originals of 20,000 people: year 1 is 20,000 people drawn at random; year 2 keeps
14,000 of them (70 %) and adds 6,000 people not in year 1; year 3 keeps 14,000 of year 2's
(70 %) and adds 6,000 people not in year 2 — drawn among everyone else, so a person who left
after year 1 may come back (30,162 people cannot fill 32,000 new places). Ages advance by one
each year; the other values stay (so nobody's occupation changes). QIs (7): age, workclass,
education-num, marital-status, race, sex, native-country (numeric: age, education-num);
sensitive ``occupation`` (14 values) with distinct ℓ = 3, k = 10.

Modes:

- ``--independent``: three ordinary releases, each a whole ``anonymatch anonymize`` process
  (``--sensitive occupation --l 3 -k 10``: classes, issue 36), as a steward does today.
- ``--series DIR``: the same three years through ``anonymatch anonymize --series DIR
  --person-id pid`` (issue 40, the publishing side: the running intersection, each year's
  independent classes repaired); each year's release is read back from the series directory
  (``DIR/series.json``, ``NNN.release.csv``).

Then the composition attacker (``anonymatch.tables.series.verify_series``, from the releases and
each release's people): people in ≥ 2 releases, people left below ℓ after intersection by the
weak attacker (compatible rows) and the strong one (candidate rows), certain (one value), the
largest posterior, the fewest candidates of any release, the people with an unchanged value
left with fewer than k candidates after intersection (candidate rows showing a value of the
intersection) in some release, GCP per release and times. Writes
``benchmarks/results/series_adult.json`` (the mode's entry) and the section ``series_adult``
of docs/results.md from the entries present.

Usage: python benchmarks/series_adult.py --independent | --series DIR [--seed N]
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
from _common import ROOT, adult_path, machine, run_cli, update_results

from anonymatch.tables.datasets import load_adult
from anonymatch.tables.io.cells import read_release_text
from anonymatch.tables.series import verify_series

QI = ["age", "workclass", "education-num", "marital-status", "race", "sex", "native-country"]
NUMERIC = ["age", "education-num"]
SENSITIVE, K, L, YEARS, SIZE, KEEP = "occupation", 10, 3, 3, 20_000, 14_000
RESULTS_JSON = ROOT / "benchmarks" / "results" / "series_adult.json"


def yearly_originals(seed: int) -> list[pd.DataFrame]:
    """The three yearly originals (module docstring): person id, the QIs (ages advanced), the
    sensitive column. O(n)."""
    adult = load_adult(adult_path())
    adult.insert(0, "pid", [f"p{i:05d}" for i in range(len(adult))])
    adult = adult[["pid", *QI, SENSITIVE]]
    rng = np.random.default_rng(seed)
    everyone = np.arange(len(adult))
    people = rng.choice(everyone, SIZE, replace=False)
    years = [people]
    for _ in range(1, YEARS):
        kept = rng.choice(years[-1], KEEP, replace=False)
        others = np.setdiff1d(everyone, years[-1])
        years.append(np.concatenate([kept, rng.choice(others, SIZE - KEEP, replace=False)]))
    frames = []
    for t, rows in enumerate(years):
        frame = adult.iloc[np.sort(rows)].reset_index(drop=True)
        frame["age"] = (frame["age"].astype(int) + t).astype(str)
        frames.append(frame)
    return frames


def anonymize_args(original: Path, output: Path, report: Path, series: Path | None) -> list[str]:
    """The ``anonymize`` command line of one year: pid never published (an identifier; with
    ``--series`` the person id, an identifier by definition)."""
    person = ["--identifiers", "pid"] if series is None else []
    person += [] if series is None else ["--series", str(series), "--person-id", "pid"]
    return [
        "anonymize",
        str(original),
        "-o",
        str(output),
        "--qi",
        ",".join(QI),
        "--numeric",
        ",".join(NUMERIC),
        *person,
        "--sensitive",
        SENSITIVE,
        "--l",
        str(L),
        "-k",
        str(K),
        "--report",
        str(report),
        "--quiet",
    ]


def publish(frames: list[pd.DataFrame], work: Path, series: Path | None) -> list[dict]:
    """Run the three ``anonymize`` processes (with ``--series`` when given); per year the
    release, its published people, GCP and wall time."""
    out = []
    for t, frame in enumerate(frames, start=1):
        original = work / f"year{t}.csv"
        frame.to_csv(original, index=False)
        release, report = work / f"year{t}.release.csv", work / f"year{t}.manifest.json"
        run = run_cli(anonymize_args(original, release, report, series))
        if run["rc"] != 0:
            sys.exit(f"anonymize of year {t} failed (exit {run['rc']})")
        manifest = json.loads(report.read_text())
        published = read_release_text(release)
        people = frame
        if series is not None:  # the people the series published this year (suppressed: not)
            people = published_people(frame, series, t)
        out.append(
            {
                "release": published,
                "people": people,
                "gcp": float(manifest["loss"]["gcp"]),
                "suppressed": int(
                    manifest.get("series", {}).get("counts", {}).get("suppressed", 0)
                ),
                "seconds": run["wall"],
                "repairs": manifest.get("series", {}).get("repairs", {}),
                "manifest": manifest,
            }
        )
    return out


def published_people(frame: pd.DataFrame, series: Path, release: int) -> pd.DataFrame:
    """The people of series release ``release``: the year's people minus the ones the series
    suppressed, read from the series' private map (``DIR/private/map.parquet``: this benchmark
    is the steward). The attacker is assumed to know them (docs/guarantees/series.md)."""
    rows = pd.read_parquet(series / "private" / "map.parquet", columns=["person_id", "release"])
    ids = set(rows.loc[rows["release"] == release, "person_id"].astype(str))
    return frame.loc[frame["pid"].astype(str).isin(ids)].reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--independent", action="store_true")
    mode.add_argument("--series", type=Path, metavar="DIR")
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    if args.series is not None and args.series.exists() and any(args.series.iterdir()):
        sys.exit(f"--series {args.series}: give a new or empty directory (a fresh series)")
    frames = yearly_originals(args.seed)
    name = "independent" if args.independent else "series"
    with tempfile.TemporaryDirectory() as tmp:
        years = publish(frames, Path(tmp), args.series)
    started = time.perf_counter()
    report = verify_series(
        [y["people"] for y in years],
        [y["release"] for y in years],
        person_id="pid",
        qi=QI,
        numeric=NUMERIC,
        sensitive=SENSITIVE,
        k=K,
        l=L,
    )
    verify_seconds = time.perf_counter() - started
    figures = report.to_dict()
    entry = {
        "mode": name,
        "seed": args.seed,
        "machine": machine(),
        "gcp": [y["gcp"] for y in years],
        "anonymize_seconds": [y["seconds"] for y in years],
        "verify_series_seconds": verify_seconds,
        "published": [len(y["release"]) for y in years],
        "suppressed": [y["suppressed"] for y in years],
        "repairs": [y["repairs"] for y in years],
        "figures": figures,
    }
    stored = json.loads(RESULTS_JSON.read_text()) if RESULTS_JSON.exists() else {}
    stored[name] = entry
    RESULTS_JSON.parent.mkdir(exist_ok=True)
    RESULTS_JSON.write_text(json.dumps(stored, indent=2) + "\n")
    update_results("series_adult", section(stored))
    print(section(stored))


def section(stored: dict) -> str:
    """The docs/results.md section from the stored entries (and the series' ratios to the
    independent releases when both are there)."""
    lines = [
        "## Release series on Adult (issue 40)",
        "",
        "Adult's 30,162 complete rows split into three yearly originals of 20,000 people (70 % "
        "kept from one year to the next, ages +1 a year, a person who left may return), QIs "
        + ", ".join(QI)
        + f"; sensitive occupation, distinct ℓ = {L}, k = {K}. `python "
        "benchmarks/series_adult.py --independent` (three ordinary `anonymize` processes) and "
        "`--series DIR` (`anonymize --series DIR --person-id pid`); the attacker's figures are "
        "`verify_series`'s over each release's published people (weak: compatible rows, "
        "strong: candidate rows, intersected over a person's releases; below ℓ and certain "
        "among the people in two releases or more; below k after ∩: people in two releases "
        "or more with an unchanged value left with fewer than k candidate rows showing a "
        "value of the intersection in some release, and the fewest / median of each person's "
        "fewest).",
        "",
        "| mode | in ≥ 2 releases | below ℓ weak | certain weak | below ℓ strong | "
        "certain strong | largest posterior / share | fewest candidates | suppressed | "
        "below k after ∩ | fewest / median after ∩ | GCP per release | anonymize s | "
        "verify-series s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("independent", "series"):
        if name not in stored:
            continue
        e = stored[name]
        f = e["figures"]
        post, share = f["strong"]["largest_posterior"], f["strong"].get("largest_share")
        shown = "—" if post is None else f"{post:.3f}"
        shown += "" if share is None else f" / {share:.3f}"
        after = f.get("candidates_after_intersection") or {}
        fewest = "—" if after.get("min") is None else f"{after['min']} / {after['median']:g}"
        lines.append(
            f"| {name} | {f['in_two_or_more']:,} | {f['weak']['below_l']:,} | "
            f"{f['weak']['certain']:,} | {f['strong']['below_l']:,} | "
            f"{f['strong']['certain']:,} | {shown} | "
            f"{f['min_candidates']} | {sum(e.get('suppressed', [0])):,} | "
            f"{'—' if 'below_k' not in after else format(after['below_k'], ',')} | {fewest} | "
            f"{', '.join(f'{g:.4f}' for g in e['gcp'])} | "
            f"{sum(e['anonymize_seconds']):.1f} | {e['verify_series_seconds']:.1f} |"
        )
    if "independent" in stored and "series" in stored:
        ind, ser = stored["independent"], stored["series"]
        gcp = sum(ser["gcp"]) / sum(ind["gcp"])
        secs = sum(ser["anonymize_seconds"]) / sum(ind["anonymize_seconds"])
        lines += [
            "",
            f"Series over independent: GCP {gcp:.2f}× (goal ≤ 1.3×), anonymize time "
            f"{secs:.2f}× (goal ≤ 2×), strong attacker below ℓ "
            f"{ser['figures']['strong']['below_l']} (goal 0); below k after intersection "
            f"{format(ser['figures']['candidates_after_intersection']['below_k'], ',')} "
            "(reported, not enforced: docs/guarantees/series.md §3).",
        ]
        repairs = [r for r in ser.get("repairs", []) if r]
        if repairs:
            lines += [
                "",
                "The series' repairs of the independent classes (releases 2 on): "
                + "; ".join(", ".join(f"{n:,} {what}" for what, n in r.items()) for r in repairs)
                + ".",
            ]
    lines += ["", f"Machine: {next(iter(stored.values()))['machine']}."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
