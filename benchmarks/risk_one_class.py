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

NUMERIC = ("age", "education-num")


def one_class_release(original: Path, out: Path) -> int:
    """Write the release of one class: every row shows the whole domain of every QI."""
    names = ADULT_CLI[ADULT_CLI.index("--names") + 1].split(",")
    qi = ADULT_CLI[ADULT_CLI.index("--qi") + 1].split(",")
    frame = pd.read_csv(original, names=names, skipinitialspace=True, dtype=str)
    frame = frame[~frame[qi].isin(["?"]).any(axis=1)].reset_index(drop=True)
    release = frame.copy()
    for column in qi:
        if column in NUMERIC:
            values = frame[column].astype(int)
            release[column] = f"{values.min()}..{values.max()}"
        else:
            escaped = sorted(
                v.replace("\\", "\\\\").replace("|", "\\|") for v in set(frame[column])
            )
            release[column] = "|".join(escaped)
    release.sample(frac=1.0, random_state=0).to_csv(out, index=False)
    return len(release)


def main() -> None:
    original = Path(adult_path())
    with tempfile.TemporaryDirectory() as tmp:
        release = Path(tmp) / "one_class.csv"
        n = one_class_release(original, release)
        common = [str(original), str(release), "--k", str(n), *ADULT_CLI]
        runs = {
            "verify": run_cli(["verify", *common]),
            "risk": run_cli(["risk", *common, "--sensitive", "income", "--json"]),
        }
    dump("risk_one_class", {"rows": n, "runs": runs, "machine": machine()})
    lines = [
        f"One class of {n:,} identical generalized rows (Adult; every QI cell covers its whole "
        f"domain), so {n:,}² compatible person–row pairs. {machine()}.",
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
