"""Set-valued pipeline (Xue et al., KDD 2012 §4): order → graph → privacy step → bit voting →
verify → (the caller writes).

Methods:
- ``gray-tsp`` (default): Gray-TSP order; k: ring graph over it; ℓ: ring graph over a
  label-interleaved version of it (no label twice within 2ℓ−1 consecutive records).
- ``gray``: the same on the Gray order only (the paper's ablation).

Departure for ℓ-diversity (see docs/guarantees/sets.md): the paper builds the ℓ-regular graph by
greedy extraction (Alg. 2, ``methods.sets.greedy_assignments``) so that each original's ℓ
matches have distinct labels *as matches of the identity*, then re-extracts ℓ random
assignments and attaches labels through the chosen one. Labels attached through any other
assignment need not stay distinct (a counterexample is the paper's own Figure 1 ring with the
labels of Table 1), and on real data such releases fail the check. On a ring over an order with
no label repeated within 2ℓ−1 consecutive records, every perfect matching of the graph puts ℓ
distinct labels on every original's matches (the preimages of i's matches lie in a window of
2ℓ−1 records), so the random closed-walk re-extraction and uniform choice are kept unchanged.
The price is (2ℓ−1)-eligibility instead of ℓ-eligibility.
- ``cahd``: CAHD groups (ℓ only), published with the same bit-voting model.

The privacy step is the core's ``choose_assignment`` (random closed-walk extraction of the
graph's disjoint assignments, one chosen uniformly); the chosen assignment attaches the labels;
published records are shuffled. Every release is checked by ``verify_sets`` before it is
returned; a failing release raises VerificationError.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonymatch.core.assignment import choose_assignment
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.release import Produced, publish
from anonymatch.sets.io import SetRelease, Transactions
from anonymatch.sets.job import SetJob, check_data
from anonymatch.sets.methods.cahd import cahd_groups, group_graph
from anonymatch.sets.methods.nonreciprocal import bit_vote, interleaved_order, ring_graph
from anonymatch.sets.metrics import error_rate, total_hamming
from anonymatch.sets.order import OrderReport, gray_tsp_order, ring_length
from anonymatch.sets.verify import SetVerificationReport, verify_sets


@dataclass
class SetAnonymization:
    """A verified release plus what produced it. ``assignment[i]`` is the row of ``release``
    that is original i's true match; ``rows[j]`` the row holding the graph's published record
    j (records are shuffled)."""

    release: SetRelease
    graph: GeneralizationGraph
    assignment: np.ndarray
    rows: np.ndarray
    order: np.ndarray | None
    order_report: OrderReport | None
    verification: SetVerificationReport
    report: dict[str, object] = field(default_factory=dict)


def anonymize_sets(t: Transactions, *, verify: bool = True, **keywords: Any) -> SetAnonymization:
    """:func:`run_job` on a job built from ``keywords`` (``SetJob.build``: ``k``, ``ell``,
    ``method``, ``segment``, ``seed``)."""
    return run_job(t, SetJob.build(keywords), verify=verify)


def run_job(t: Transactions, job: SetJob, *, verify: bool = True) -> SetAnonymization:
    """Anonymize set-valued records for k-anonymity (``job.k``) or ℓ-diversity (``job.ell``).

    Raises InputError (ℓ without labels), InfeasibleError (level above the number of records,
    or not ℓ-eligible), VerificationError (the release fails the independent check — never
    expected). Randomness: OS entropy unless ``job.seed`` (which lets anyone who knows it redo
    the choice of the true assignment)."""
    check_data(job, t)
    k, ell, method, segment, seed = job.k, job.ell, job.method, job.segment, job.seed
    level = job.level
    rng = np.random.default_rng(seed)
    seconds: dict[str, float] = {}
    clock = started = time.perf_counter()
    order, order_report, interleaved_length = None, None, None
    if not method.ordered:
        groups = cahd_groups(t.matrix, t.labels, level)  # type: ignore[arg-type]
        graph = group_graph(groups, t.n)
        seconds["order_and_graph"] = time.perf_counter() - clock
    else:
        order, order_report = gray_tsp_order(t.matrix, segment, tsp=method.tsp)
        seconds["order"] = time.perf_counter() - clock
        clock = time.perf_counter()
        if k is not None:
            graph = ring_graph(order, level)
        else:
            order = interleaved_order(t.matrix, t.labels, order, 2 * level - 1)  # type: ignore[arg-type]
            interleaved_length = ring_length(t.matrix, order)
            graph = ring_graph(order, level)
        seconds["graph"] = time.perf_counter() - clock
    clock = time.perf_counter()
    assignment = choose_assignment(graph, rng)
    seconds["privacy_step"] = time.perf_counter() - clock
    clock = time.perf_counter()
    base, unc, thresholds = bit_vote(t.matrix, graph)
    labels = None
    if t.labels is not None:
        labels = np.empty(t.n, dtype=object)
        labels[assignment] = t.labels  # the true match of i carries i's label
    shuffle = rng.permutation(t.n)  # published position of published record j
    inv = np.argsort(shuffle)
    release = SetRelease(
        base[inv],
        unc[inv],
        thresholds[inv],
        None if labels is None else labels[inv],
        list(t.items),
        t.integer_items,
    )
    published_of = shuffle[assignment]  # row of the release that is i's true match
    seconds["publish"] = time.perf_counter() - clock
    clock = time.perf_counter()
    if verify:
        report = verify_sets(release, t, k=k, ell=ell)  # publish refuses a failure
    else:  # pragma: no cover - benchmarks only
        report = SetVerificationReport(False, "", level, t.n, t.n, 0, 0, None, 0, 0, 0, "skipped")
    seconds["verify"] = time.perf_counter() - clock
    er = error_rate(t.matrix, release.base, published_of)
    guarantee: dict[str, object] = (
        {"model": "k-anonymity", "k": k} if k is not None else {"model": "l-diversity", "l": ell}
    )
    checked = report.to_dict()
    if not verify:  # pragma: no cover - benchmarks only: nothing checked, never a pass
        checked["passed"] = None
    produced = Produced(
        kind="transactions",
        method=method.name,
        parameters={"segment": list(segment), "labels": t.labels is not None},
        guarantee=guarantee,
        verification=checked,
        loss={
            "error_rate": er,
            "hamming_published_to_original": total_hamming(t.matrix, release.base, published_of),
            "mean_max_errors": float(np.mean(thresholds)),
            "order": order_report.to_dict() if order_report else None,
            "hamming_interleaved": interleaved_length,
        },
        seconds={**seconds, "wall": time.perf_counter() - started},
        seeded=seed is not None,
        records_in=t.n,
        records_out=t.n,
        input_extra={"items": t.n_items, "duplicates_removed": t.duplicates_removed},
    )
    manifest = publish(produced)
    return SetAnonymization(
        release, graph, published_of, shuffle, order, order_report, report, manifest
    )
