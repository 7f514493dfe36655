"""Memory of ``risk`` and ``report`` on a release of one class, beside ``verify`` (issue 24).

The release publishes every Adult record (30,162 after dropping rows with missing QIs) as the
same generalized row — each QI cell covers the whole domain — so the compatibility graph is
complete: 30,162² person–row pairs. ``verify`` checks it on groups of identical rows; ``risk``
and ``report`` used to expand the groups into person × row blocks (MemoryError at 9.6 GB) and
now use the same grouped computation. Each command runs in a fresh process; the figure is its
peak resident memory (VmHWM) and wall time.

Usage: ``python benchmarks/risk_one_class.py`` (needs $ANONYMATCH_DATA/adult/adult.data);
writes docs/results.md (section ``risk-one-class``) and benchmarks/results/risk_one_class.json.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
from _common import ADULT_CLI, adult_path, dump, machine, run_cli, update_results


def main() -> None:
    original = adult_path()
    with tempfile.TemporaryDirectory() as tmp:
        release, manifest = Path(tmp) / "one_class.csv", Path(tmp) / "one_class.json"
        names = ADULT_CLI[ADULT_CLI.index("--names") + 1].split(",")
        qi = ADULT_CLI[ADULT_CLI.index("--qi") + 1].split(",")
        frame = pd.read_csv(original, names=names, skipinitialspace=True, dtype=str)
        n = int((~frame[qi].isin(["?"]).any(axis=1)).sum())  # left after --drop-missing
        made = ["anonymize", str(original), *ADULT_CLI, "-o", str(release), "--k", str(n)]
        made += ["--method", "mondrian"]
        runs = {"anonymize (mondrian, k = n)": run_cli(
            [*made, "--report", str(manifest), "--force", "--seed", "1", "-q"]
        )}  # fmt: skip
        common = [str(original), str(release), "--k", str(n), *ADULT_CLI]
        runs["verify"] = run_cli(["verify", *common])
        runs["risk"] = run_cli(["risk", *common, "--sensitive", "income", "--json"])
        runs["report"] = run_cli(
            ["report", str(original), str(release), "--manifest", str(manifest),
             "-o", str(Path(tmp) / "r.html"), *ADULT_CLI[:2], *ADULT_CLI[-3:]]
        )  # fmt: skip
    dump("risk_one_class", {"rows": n, "runs": runs, "machine": machine()})
    lines = [
        f"One class of {n:,} identical generalized rows (Adult, Mondrian at k = n), so {n:,}² "
        f"compatible person–row pairs. {machine()}.",
        "",
        "Command: `python benchmarks/risk_one_class.py`. Before the grouped computation "
        "(b01f4c8), `risk` on this release failed with MemoryError after 30.6 s at a peak of "
        "9.58 GB (measured in the same session under a 12 GB limit).",
        "",
        "| command | wall (s) | peak RSS (MiB) |",
        "|---|---|---|",
    ]
    for name, r in runs.items():
        lines.append(f"| `{name}` | {r['wall']:.2f} | {r['peak_mib']:.0f} |")
    update_results("risk-one-class", "\n".join(lines))


if __name__ == "__main__":
    main()
