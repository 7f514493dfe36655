"""Missing values and suppression: INFORMS released with its missing-value codes kept (before:
the rows with a code dropped), and Adult at k = 10 with a suppression limit of 0, 1 % and 5 %.

Every run goes through the CLI (``anonymize`` with ``--report``; the manifest gives the rows,
GCP and time) and every release is checked again by ``anonymatch verify``.

Writes docs/results.md (section missing_suppression) and
benchmarks/results/missing_suppression.json.

Usage: python benchmarks/missing_suppression.py [--rewrite]   (--rewrite: the section from the
saved JSON, without running)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from _common import ADULT_CLI, ROOT, adult_path, data_file, dump, machine, run_cli, update_results

INFORMS_QI = "DOBMM,DOBYY,SEX,RACEX,EDUCYEAR,marry,income"
INFORMS_NUMERIC = "DOBMM,DOBYY,EDUCYEAR,income"
INFORMS_CODES = ["--na", "EDUCYEAR=-1|-7|-8|-9", "--na", "marry=-7|-8|-9"]
K = 10


def informs_path() -> str:
    return data_file("informs/demographics05test.csv", "INFORMS")


def release(name: str, source: str, args: list[str], verify_args: list[str], tmp: Path) -> dict:
    out, report = tmp / f"{name}.csv", tmp / f"{name}.json"
    run = run_cli(["anonymize", source, "-o", str(out), "--report", str(report), "-q", *args])
    manifest = json.loads(report.read_text())
    check = run_cli(["verify", source, str(out), "--manifest", str(report), *verify_args])
    return {
        "name": name,
        "records": manifest["input"]["records"],
        "published": manifest["output"]["records"],
        "dropped_missing": manifest["input"]["dropped_missing"],
        "suppressed": manifest["input"].get("suppressed", 0),
        "missing_values": manifest["input"].get("missing_values", 0),
        "star_cells": manifest["loss"].get("suppressed_cells", 0),
        "gcp": manifest["loss"]["gcp"],
        "gcp_with_suppressed": manifest["loss"].get("gcp_with_suppressed", manifest["loss"]["gcp"]),
        "seconds": run["wall"],
        "verified": check["rc"] == 0,
    }


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        informs = informs_path()
        common = ["--k", str(K), "--qi", INFORMS_QI, "--numeric", INFORMS_NUMERIC,
                  "--identifiers", "DUID,PID,DUPERSID", "--seed", "1"]  # fmt: skip
        check = ["--k", str(K), "--qi", INFORMS_QI, "--numeric", INFORMS_NUMERIC]
        before = ["--na-values", "-1,-7,-8,-9", "--drop-missing"]
        rows.append(release("informs, codes dropped", informs, common + before, check + before,
                            tmp))  # fmt: skip
        rows.append(release("informs, codes kept as *", informs, common + INFORMS_CODES,
                            check + INFORMS_CODES, tmp))  # fmt: skip
        for method in ("mondrian",):
            rows.append(
                release(
                    f"informs, codes dropped, {method}",
                    informs,
                    common + before + ["--method", method],
                    check + before,
                    tmp,
                )
            )
            rows.append(release(f"informs, codes kept as *, {method}", informs,
                                common + INFORMS_CODES + ["--method", method],
                                check + INFORMS_CODES, tmp))  # fmt: skip
        adult = adult_path()
        adult_check = ["--k", str(K), *ADULT_CLI]
        for limit in (0.0, 0.01, 0.05):
            args = ["--k", str(K), *ADULT_CLI, "--seed", "1", "--suppression-limit", str(limit)]
            rows.append(release(f"adult, suppression limit {limit:g}", adult, args, adult_check,
                                tmp))  # fmt: skip
            print(rows[-1], flush=True)
    dump("missing_suppression", rows)
    write_results(rows)


def write_results(rows: list[dict]) -> None:
    lines = [
        "## Missing values and suppression",
        "",
        "Command: `python benchmarks/missing_suppression.py` (hungarian unless named, k = 10, "
        "`--seed 1`; every release re-checked by `anonymatch verify --manifest`) — machine: "
        + machine()
        + " (shared with other jobs while measured: times are indicative).",
        "",
        "INFORMS (`informs/demographics05test.csv`, 33,961 people; QIs "
        f"{INFORMS_QI.replace(',', ', ')}; numeric {INFORMS_NUMERIC.replace(',', ', ')}): "
        "before, the survey codes −1/−7/−8/−9 could only be dropped with the row "
        "(`--na-values -1,-7,-8,-9 --drop-missing`); now `--na EDUCYEAR=-1|-7|-8|-9 --na "
        "marry=-7|-8|-9` keeps every person and publishes the missing values as `*` "
        "(docs/guarantees/missing.md). Adult (`adult.data`, `?` rows dropped as in every "
        "other Adult figure): `--suppression-limit` lets up to that share of the records be "
        "dropped as outliers; GCP is over the published rows, and in the last column each "
        "dropped record counts as a row of `*` (NCP 1), as ARX's loss counts it.",
        "",
        "| release | people | published | dropped (missing) | suppressed | missing values "
        "kept | `*` cells | GCP | GCP, suppressed as `*` | time | verify |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['records']:,} | {r['published']:,} | {r['dropped_missing']:,} "
            f"({100 * r['dropped_missing'] / r['records']:.1f} %) | {r['suppressed']:,} | "
            f"{r['missing_values']:,} | {r['star_cells']:,} | {100 * r['gcp']:.2f} % | "
            f"{100 * r['gcp_with_suppressed']:.2f} % | {r['seconds']:.0f} s | "
            f"{'PASS' if r['verified'] else 'FAIL'} |"
        )
    by_name = {r["name"]: r for r in rows}
    dropped, kept = by_name["informs, codes dropped"], by_name["informs, codes kept as *"]
    plain = by_name["adult, suppression limit 0"]
    lines += [
        "",
        f"INFORMS keeps all {kept['published']:,} people instead of {dropped['published']:,}; "
        f"its {kept['missing_values']:,} missing values cost {kept['star_cells']:,} `*` cells "
        "(records missing the same attributes are linked together), and GCP — now over "
        f"{kept['published'] - dropped['published']:,} more people, whose missing cells count "
        f"NCP 1 — goes from {100 * dropped['gcp']:.2f} % to {100 * kept['gcp']:.2f} %. On Adult "
        "the suppression limit lowers the GCP of the published rows ("
        + ", ".join(
            f"{100 * r['gcp']:.2f} % at {r['name'].rsplit(' ', 1)[1]}"
            for r in rows
            if r["name"].startswith("adult")
        )
        + "); counted as ARX counts suppressed records (a row of `*` each) the loss rises instead "
        f"(from {100 * plain['gcp']:.2f} %), because freeform rows are already narrow: "
        "suppression pays for the people published, not for the table as a whole.",
    ]
    update_results("missing_suppression", "\n".join(lines))


if __name__ == "__main__":
    if "--rewrite" in sys.argv:
        write_results(
            json.loads((ROOT / "benchmarks" / "results" / "missing_suppression.json").read_text())
        )
    else:
        main()
