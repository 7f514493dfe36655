"""δ-presence releases (issue 35): what hiding *membership* costs on top of k-anonymity.

UCI Adult's 45,222 complete rows (adult.data and adult.test, 8 QIs) are the population; a 10 %
random sample (seed 1) is the release's original. For k = 5 and k = 10, a plain release (the
sample's hungarian and mondrian releases) is measured against the population (δ max of
f_j / F_j over published rows, k-map), then releases made with ``delta_max`` D ∈ {0.5, 0.3, 0.2}
(the typed job, what ``anonymize --k K --delta-max D --population ADULT`` runs): GCP, the δ range
reached, the rows widened and the wall time of the whole job (method, verification, widening and
its checks), next to the plain job's time in the same session. The floor is n / N = 0.1: a
bound below it is infeasible.

Usage: ``python benchmarks/presence.py`` (needs $ANONYMATCH_DATA/adult); writes docs/results.md
(section ``presence``) and benchmarks/results/presence.json.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from _common import ADULT_CLI, ADULT_NAMES, adult_path, dump, machine, update_results

QI = ADULT_CLI[ADULT_CLI.index("--qi") + 1].split(",")
NUMERIC = ["age", "education-num"]


def population() -> pd.DataFrame:
    """Adult's complete rows, training and test files together."""
    names = ADULT_NAMES.split(",")
    frames = []
    for path in (adult_path(), adult_path().replace("adult.data", "adult.test")):
        frame = pd.read_csv(path, names=names, skipinitialspace=True, na_values="?", comment="|")
        frame["income"] = frame["income"].str.rstrip(".")
        frames.append(frame.dropna(subset=QI))
    return pd.concat(frames, ignore_index=True).astype({"age": int, "education-num": int})


def run(sample: pd.DataFrame, people: pd.DataFrame, k: int, method: str, delta: float | None):
    import anonymatch
    from anonymatch.tables.risk.population import PopulationInput, population_risk

    extra = {} if delta is None else {"delta_max": delta, "population": people}
    started = time.perf_counter()
    made = anonymatch.tables.anonymize(
        sample, k=k, qi=QI, numeric=NUMERIC, method=method, seed=1, **extra
    )
    wall = time.perf_counter() - started
    figures = population_risk(
        sample, made.release, people, PopulationInput(tuple(QI), tuple(NUMERIC))
    )
    assert figures.presence is not None
    widening = made.report["loss"].get("widening", {})  # type: ignore[union-attr]
    return {
        "k": k,
        "method": method,
        "delta_max": delta,
        "gcp": made.report["loss"]["gcp"],  # type: ignore[index]
        "presence_min": figures.presence.min,
        "presence_max": figures.presence.max,
        "kmap": figures.kmap,
        "widened_rows": widening.get("widened_rows", 0),
        "seconds": wall,
    }


def main() -> None:
    people = population()
    rng = np.random.default_rng(1)
    sample = people.iloc[np.sort(rng.choice(len(people), len(people) // 10, replace=False))]
    sample = sample.reset_index(drop=True)
    rows = []
    for k in (5, 10):
        for method in ("hungarian", "mondrian"):
            for delta in (None, 0.5, 0.3, 0.2):
                row = run(sample, people, k, method, delta)
                rows.append(row)
                print(row, flush=True)
    dump(
        "presence",
        {"machine": machine(), "rows": rows, "sample": len(sample), "population": len(people)},
    )
    lines = [
        "## δ-presence releases (issue 35)",
        "",
        f"`python benchmarks/presence.py` on {machine()}. Population: Adult's {len(people):,} "
        f"complete rows (adult.data + adult.test), 8 QIs; original: a 10 % sample "
        f"({len(sample):,} rows, seed 1), so n / N = {len(sample) / len(people):.3f} is the "
        "lowest feasible δ max. Each release is checked against the population afterwards "
        "(`population_risk`, the verifier's figures); seconds are the whole typed job "
        "(method, verification, widening and its checks).",
        "",
        "| k | method | δ max asked | GCP | δ range reached | k-map | rows widened | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        asked = "— (plain)" if r["delta_max"] is None else f"{r['delta_max']:g}"
        lines.append(
            f"| {r['k']} | {r['method']} | {asked} | {100 * r['gcp']:.2f} % | "
            f"{r['presence_min']:.3f}–{r['presence_max']:.3f} | {r['kmap']} | "
            f"{r['widened_rows']:,} | {r['seconds']:.1f} |"
        )
    update_results("presence", "\n".join(lines))


if __name__ == "__main__":
    main()
