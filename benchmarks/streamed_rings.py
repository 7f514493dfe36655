"""Issue 26 on the streamed path: sensitive rings per partition, against classes only.

Adult (30,162 complete rows) written to a temporary CSV and anonymized by the streamed,
partitioned path (``tables.streamed.anonymize_file``, executor ``inline``, hungarian; default
partitions of 300 records) with ``occupation`` sensitive (7 QIs): (10, 4) and (5, 3) distinct,
(10, 4) and (5, 3) entropy ℓ-diversity (a model that some partition cannot satisfy even as one
class is reported infeasible, as the run exits 3). Each model twice: ``auto`` (a ring per
partition where cheaper than its classes, the default) and ``classes`` (rings switched off:
the streamed release before this change). Every release is verified on the whole release with
its certificate (``anonymatch.tables.verify(..., certificate=...)``, what ``verify
--manifest`` runs); the records in rings and the GCP are printed.

Command (2 cores, shared; about 2 minutes):

    cd benchmarks && ANONYMATCH_DATA=/work/shared/datasets python streamed_rings.py

Prints a Markdown table and writes benchmarks/results/streamed_rings.json.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from _common import dump
from sensitive_adult import NUMERIC, QI7, load_adult

import anonymatch
from anonymatch.core.errors import InfeasibleError
from anonymatch.tables.job import TableJob
from anonymatch.tables.methods import circulant
from anonymatch.tables.streamed import anonymize_file, release_frame

CASES = [
    ("occupation", QI7, {"l": 4}),
    ("occupation", QI7, {"l": 3, "k": 5}),
    ("occupation", QI7, {"l": 4, "diversity": "entropy"}),
    ("occupation", QI7, {"l": 3, "k": 5, "diversity": "entropy"}),
]
"""t = 0.2 on income is not among them: partitions of 300 (and of 3,000) records of the QI
order include some whose income shares are too far from the table's even as one class, and the
streamed path never merges partitions (InfeasibleError, exit 3)."""


def run(source: Path, out: Path, column: str, qi: list[str], model: dict) -> dict:
    k = int(model.pop("k", 10))
    job = TableJob.build(dict(qi=qi, numeric=NUMERIC, sensitive=[column], k=k, **model))
    started = time.perf_counter()
    manifest = anonymize_file(source, out, job, executor="inline")
    seconds = time.perf_counter() - started
    guarantee = manifest["guarantee"]
    assert isinstance(guarantee, dict)
    certificate = guarantee.get("certificate")
    data = load_adult()
    verified = anonymatch.tables.verify(
        data,
        release_frame(out),
        k=k,
        qi=qi,
        numeric=NUMERIC,
        sensitive=column,
        certificate=certificate,
        **model,
    ).passed
    verification = manifest["verification"]
    loss = manifest["loss"]
    assert isinstance(verification, dict) and isinstance(loss, dict)
    return {
        "gcp": float(loss["gcp"]),
        "seconds": seconds,
        "ring_records": int(verification["ring_records"]),
        "records": len(data),
        "verified": bool(verified),
    }


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "adult.csv"
        load_adult().to_csv(source, index=False)
        for column, qi, model in CASES:
            for variant in ("auto", "classes"):
                cheaper = circulant.cheaper_ring
                if variant == "classes":
                    circulant.cheaper_ring = lambda *a: None  # rings off
                try:
                    row = run(source, Path(tmp) / f"{variant}.csv", column, qi, dict(model))
                except InfeasibleError:  # a partition fails even as one class (never merged)
                    row = {"infeasible": True}
                finally:
                    circulant.cheaper_ring = cheaper
                rows.append({"column": column, **model, "variant": variant, **row})
                print(rows[-1], flush=True)
    dump("streamed_rings", rows)
    print("| sensitive | model | variant | GCP | ring records | s | verified |")
    print("|---|---|---|---:|---:|---:|---|")
    for r in rows:
        model = f"({r.get('k', 10)}, {r['l']}) {r.get('diversity', 'distinct')}"
        if r.get("infeasible"):
            print(f"| {r['column']} | {model} | {r['variant']} | infeasible | – | – | – |")
            continue
        print(
            f"| {r['column']} | {model} | {r['variant']} | {100 * r['gcp']:.2f}% | "
            f"{100 * r['ring_records'] / r['records']:.0f}% | {r['seconds']:.1f} | "
            f"{'yes' if r['verified'] else 'NO'} |"
        )


if __name__ == "__main__":
    main()
