"""heart_statlog and UCI Adult round trips through PostgreSQL, SQLite, SPSS and Stata files
against the CSV path.

Starts a throwaway PostgreSQL server (``tests/pgserver.py``: initdb in a temporary directory,
Unix socket only), loads each data set into a table, then times in fresh processes (after one
warm-up run of each):

- ``csv``: ``anonymize DATA.csv -o release.csv`` (the file path);
- ``postgresql``: ``anonymize postgresql://… --table T -o postgresql://… --output-table R``
  (read through SQLAlchemy + psycopg, release written in one transaction);
- ``sqlite``: the same with a SQLite file;

each followed by ``verify`` of the release (read back from the database for the SQL runs,
through the CSV path's file for the CSV run). hungarian, k = 10 (Adult: its usual QIs, missing
values dropped; heart_statlog: age, sex, cp, trestbps), in-memory path (``--executor threads``)
for all. Reports the median wall time of ``--repeats`` runs. Writes docs/results.md (section
sources_roundtrip).

Usage: python benchmarks/sources_roundtrip.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import sqlalchemy
from _common import ADULT_NAMES, ROOT, adult_path, data_file, dump, machine, update_results

sys.path.insert(0, str(ROOT))
from tests import pgserver  # noqa: E402

CLI = [sys.executable, "-c", "import sys; from anonymatch.cli import main; sys.exit(main())"]
HEART_COLUMNS = "age sex cp trestbps chol fbs restecg thalach exang oldpeak slope ca thal target"


def run(args: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run([*CLI, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"anonymatch {' '.join(args[:3])} … failed:\n{proc.stderr}")
    return time.perf_counter() - started


def engine(url: str) -> sqlalchemy.Engine:
    return sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def datasets() -> dict[str, tuple[pd.DataFrame, list[str]]]:
    heart = pd.read_csv(
        data_file("heart_statlog/heart.dat", "heart_statlog"),
        sep=" ",
        header=None,
        names=HEART_COLUMNS.split(),
    )
    adult = pd.read_csv(
        adult_path(),
        header=None,
        names=ADULT_NAMES.split(","),
        dtype=str,
        skipinitialspace=True,
    )
    adult_qi = "age,workclass,education-num,marital-status,occupation,race,sex,native-country"
    return {
        "heart_statlog": (
            heart,
            ["--qi", "age,sex,cp,trestbps", "--numeric", "age,trestbps", "--sensitive", "target"],
        ),
        "adult": (
            adult,
            [
                "--qi",
                adult_qi,
                "--numeric",
                "age,education-num",
                "--sensitive",
                "income",
                "--na-values",
                "?",
                "--drop-missing",
            ],
        ),
    }


LABELS = {"sex": {0: "female", 1: "male"}, "target": {1: "absent", 2: "present"}}
"""heart_statlog's value labels in its SPSS and Stata files (the release must show them)."""


def write_stats(frame: pd.DataFrame, name: str, tmp: Path) -> dict[str, str]:
    """``frame`` as an SPSS ``.sav`` and a Stata ``.dta`` file with value labels on sex and
    target and variable labels; {kind: path}. heart_statlog only: Adult's column names
    (``education-num``) are not legal SPSS/Stata names."""
    import pyreadstat

    if name != "heart_statlog":
        return {}
    labels = LABELS
    paths = {kind: str(tmp / f"{name}.{kind}") for kind in ("sav", "dta")}
    pyreadstat.write_sav(frame, paths["sav"], variable_value_labels=labels,
                         column_labels={c: c.upper() for c in frame.columns})  # fmt: skip
    pyreadstat.write_dta(frame, paths["dta"], variable_value_labels=labels)
    return paths


def check_labels(name: str, release: str) -> None:
    """The release shows the value labels (``female``, not ``0``); exits otherwise."""
    if name != "heart_statlog":
        return
    import pyreadstat

    read = pyreadstat.read_sav if release.endswith(".sav") else pyreadstat.read_dta
    frame, _ = read(release)
    if set(frame["sex"].astype(str)) != {"female", "male"}:
        sys.exit(f"{release}: value labels lost (sex shows {sorted(set(frame['sex']))[:4]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    reason = pgserver.unavailable()
    if reason is not None:
        sys.exit(reason)
    rows, results = [], {}
    with pgserver.postgres_server() as sockets, tempfile.TemporaryDirectory() as tmp:
        pg = pgserver.url(sockets)
        lite = f"sqlite:///{Path(tmp) / 'data.db'}"
        for name, (frame, options) in datasets().items():
            csv = Path(tmp) / f"{name}.csv"
            frame.to_csv(csv, index=False)
            for url in (pg, lite):
                e = engine(url)
                frame.to_sql(name, e, index=False, if_exists="replace")
                e.dispose()
            job = ["-k", "10", "--method", "hungarian", "--executor", "threads", "--seed", "1"]
            job += options
            qi_only = [options[0], options[1], options[2], options[3]]
            na = ["--na-values", "?", "--drop-missing"] if name == "adult" else []
            release = str(Path(tmp) / f"{name}_release.csv")
            stats = write_stats(frame, name, Path(tmp))
            paths = {
                "csv": (
                    [str(csv), "-o", release],
                    ["verify", str(csv), release, "-k", "10", *qi_only, *na],
                ),
                "postgresql": (
                    [pg, "--table", name, "-o", pg, "--output-table", f"{name}_release"],
                    None,
                ),
                "sqlite": (
                    [lite, "--table", name, "-o", lite, "--output-table", f"{name}_release"],
                    None,
                ),
                **{
                    kind: (
                        [path, "-o", f"{path}.release.{kind}"],
                        ["verify", path, f"{path}.release.{kind}", "-k", "10", *qi_only, *na],
                    )
                    for kind, path in stats.items()
                },
            }
            for path, (io, verify) in paths.items():
                times, verify_times = [], []
                for attempt in range(args.repeats + 1):  # the first is a warm-up
                    seconds = run(["anonymize", *io, *job, "--force", "-q"])
                    if verify is None:  # the release read back from the database
                        url = io[0]
                        back = Path(tmp) / f"{name}_{path}_back.csv"
                        e = engine(url)
                        pd.read_sql_table(f"{name}_release", e).to_csv(back, index=False)
                        e.dispose()
                        check = ["verify", url, str(back), "--table", name, "-k", "10"]
                        check += [*qi_only, *na]
                    else:
                        check = verify
                    verify_seconds = run(check)
                    if attempt:
                        times.append(seconds)
                        verify_times.append(verify_seconds)
                if path in stats:
                    check_labels(name, f"{stats[path]}.release.{path}")
                results[f"{name}/{path}"] = {
                    "anonymize_s": statistics.median(times),
                    "verify_s": statistics.median(verify_times),
                    "rows": len(frame),
                }
                rows.append(
                    f"| {name} | {path} | {len(frame)} | {statistics.median(times):.2f} | "
                    f"{statistics.median(verify_times):.2f} |"
                )
    dump("sources_roundtrip", results)
    body = "\n".join(
        [
            "## Round trips through PostgreSQL, SQLite, SPSS and Stata (issue 30)",
            "",
            "`python benchmarks/sources_roundtrip.py --repeats "
            f"{args.repeats}`: hungarian, k = 10, in-memory path (`--executor threads`), "
            "median wall seconds of fresh processes after a warm-up. *anonymize* reads the "
            "table (`--table`) and writes the release to a table in one transaction "
            "(`--output-table`) for the SQL rows, CSV file to CSV file for the csv rows; "
            "*verify* checks the release (read back from the database for the SQL rows) "
            "against the original read from the same source. PostgreSQL: a local server on a "
            "Unix socket (`tests/pgserver.py`). sav/dta (heart_statlog only; Adult's column "
            "names are not legal SPSS/Stata names): the data written by pyreadstat with "
            "value labels on sex and target, the release written in the "
            "same format; the run checks that the release shows the labels (`female`, not `0`).",
            "",
            "| data | source | rows | anonymize (s) | verify (s) |",
            "|---|---|---:|---:|---:|",
            *rows,
            "",
            f"Machine: {machine()}.",
        ]
    )
    update_results("sources_roundtrip", body)


if __name__ == "__main__":
    main()
