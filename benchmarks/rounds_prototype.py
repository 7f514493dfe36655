"""Issue 26, last construction tried: hungarian's own k rounds as a fixed decomposition.

A prototype, not a method of the package. Within each partition of the lexicographic order
(hungarian's partitions of 20·k ≥ 300 records), hungarian builds k rounds: σ₁ = identity and
σ₂ … σ_k its successive minimum-cost assignments (person i → published row σ_t(i)). Drawing one
round σ_{t*} uniformly as the true assignment (instead of a random decomposition) makes row j
show the value of σ_{t*}⁻¹(j), so person i's rows N(i) = {σ_t(i)} show the people
{σ_{t*}⁻¹σ_t(i) : t}. Every draw is safe iff that multiset of values satisfies the model for
every pair (i, t*) — the condition of docs/guarantees/sensitive.md §6 for a fixed
decomposition (for a ring the shown people are a window, whatever t*).

Measured on Adult (30,162 rows), k = 10, 7 QIs, ``occupation`` sensitive, (10, 4) distinct
ℓ-diversity:

* ``plain``: plain hungarian rounds; the share of (i, t*) pairs that fail, and of partitions
  whose every pair passes;
* ``fallback``: per partition, the rounds if every pair passes, else the class construction
  (``diverse_clusters``, same partitions) — a release safe for every draw;
* ``penalized λ``: each round's assignment cost gets λ per earlier draw t* under which the new
  edge i → j adds a value already shown on N(i) while N(i) still shows fewer than ℓ values
  (the edge makes a failing shown set likelier); then the same fallback. With re-solves, each
  round is also re-solved with λ more on the rows of the people who fail if this very round
  is drawn (the draw the first penalty cannot see).

GCP of the assembled release (rounds or classes per partition), beside plain hungarian and the
class construction. Command (2 cores, shared; about 2 minutes):

    cd benchmarks && ANONYMATCH_DATA=/work/shared/datasets python rounds_prototype.py

Prints a Markdown table and writes benchmarks/results/rounds_prototype.json.
"""

from __future__ import annotations

import time

import numpy as np
from _common import dump
from sensitive_adult import NUMERIC, QI7, load_adult

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.methods import freeform_partition_size, partitions
from anonymatch.tables.methods.diverse import diverse_clusters
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.models.disclosure import build_models
from anonymatch.tables.order import lexicographic_order
from anonymatch.tables.pipeline import prepare, sensitive_target
from anonymatch.tables.recode import recode

K, L = 10, 4
VARIANTS = [(0.0, 0), (0.003, 0), (0.01, 0), (0.03, 0), (0.1, 0), (0.03, 3)]
"""(λ, re-solves per round) of each run; (0, 0) is plain hungarian."""


class Rounds:
    """An ``ExtraCost`` for ``build_freeform`` that records the rounds (local order) and, with
    ``penalty`` > 0, prices the edges that repeat a value on a person's rows under an earlier
    draw while that person's rows show fewer than ℓ values."""

    def __init__(self, codes: np.ndarray, penalty: float) -> None:
        self.codes = codes  # sensitive code of each record, in the shell's local order
        self.penalty = penalty
        m = len(codes)
        self.rounds = [np.arange(m)]

    def weights(self) -> np.ndarray:
        m = len(self.codes)
        out = np.zeros((m, m))
        if not self.penalty:
            return out
        values = int(self.codes.max()) + 1
        rounds = np.stack(self.rounds)  # (r, m): person i → row
        for inv in (np.argsort(r) for r in self.rounds):  # draw t*: row j shows person inv[j]
            shown = self.codes[inv[rounds]]  # (r, m): values on N(i) under t*
            seen = np.zeros((m, values), bool)
            seen[np.tile(np.arange(m), len(rounds)), shown.ravel()] = True
            short = seen.sum(1) < L
            row_value = self.codes[inv]  # value row j shows under t*
            out += short[:, None] * seen[:, row_value]
        return self.penalty * out

    def grow(self, match: np.ndarray) -> None:
        self.rounds.append(np.asarray(match, np.int64))


def rounds_shell(part, codes: np.ndarray, penalty: float, repairs: int) -> np.ndarray:
    """``freeform.build_freeform``'s loop with hungarian's step on ``part`` (already in the
    shell's lexicographic order, sensitive ``codes`` in the same order), each round's cost
    raised by ``Rounds.weights`` (λ = ``penalty``) and then, up to ``repairs`` times, re-solved
    with λ more on the edges i' → j that put a value already shown twice on the rows of a
    person who fails under the draw of this very round. Returns the (k, m) rounds."""
    from anonymatch.core.lap import lapjv
    from anonymatch.tables.methods.freeform import singleton_cells
    from anonymatch.tables.metrics import PublishedCells, TreeTables, gcp_increase_weights

    m = part.n
    lo, hi, member, local_qi = singleton_cells(part)
    num_star, cat_star = part.num_missing.copy(), part.cat_missing.copy()
    trees = TreeTables.build(part)
    level = np.zeros(part.cat.shape, np.int64)
    used = np.eye(m, dtype=bool)
    tracker = Rounds(codes, penalty)
    values = int(codes.max()) + 1
    for _ in range(K - 1):
        cells = PublishedCells(lo, hi, member, part.cat, level, num_star, cat_star)
        w = gcp_increase_weights(local_qi, cells, trees, part.cat, used)
        w = w + tracker.weights()
        w[used] = m * float(w[~used].max()) + 1.0
        match = lapjv(w)
        for _ in range(repairs):  # the draw of this round: who fails, and on which rows
            trial = np.stack([*tracker.rounds, match])
            inv = np.argsort(match)
            shown = codes[inv[trial]]  # (r + 1, m): values on N(i) if this round is drawn
            seen = np.zeros((m, values), np.int64)
            np.add.at(seen, (np.tile(np.arange(m), len(trial)), shown.ravel()), 1)
            short = (seen > 0).sum(1) < L
            if not short.any():
                break
            extra = np.zeros((m, m))
            for i in np.flatnonzero(short):  # rows of i: discourage a repeated value there
                rows = trial[:, i]
                twice = seen[i] >= 2
                extra[:, rows] += np.where(twice[codes], penalty, 0.0)[:, None]
            w = np.where(used, w, w + extra)
            match = lapjv(w)
        tracker.grow(match)
        used[np.arange(m), match] = True
        if lo.shape[1]:
            np.minimum.at(lo, match, np.where(part.num_missing, np.inf, part.num))
            np.maximum.at(hi, match, np.where(part.num_missing, -np.inf, part.num))
        for mat, cat in zip(member, local_qi.cat.T, strict=True):
            mat[match, cat] = True
    return np.stack(tracker.rounds)


def failing_pairs(rounds: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """(k, m) booleans: the pair (i, t*) fails distinct ℓ = L (fewer than L values shown on
    N(i) under draw t*). O(k²·m)."""
    k, m = rounds.shape
    out = np.zeros((k, m), bool)
    for t_star in range(k):
        inv = np.argsort(rounds[t_star])
        shown = codes[inv[rounds]]  # (k, m)
        out[t_star] = np.array([len(set(col)) < L for col in shown.T])
    return out


def main() -> None:
    data = load_adult()
    models = build_models(["occupation"], L)
    target = sensitive_target(data, models)
    _, enc, _ = prepare(data, Schema.build(QI7, NUMERIC, sensitive=["occupation"]))
    codes = target.codes[:, 0]
    size = freeform_partition_size(K)
    parts = partitions(enc, size)
    t0 = time.perf_counter()
    class_graph, _ = diverse_clusters(enc, K, target, size)
    t_classes = time.perf_counter() - t0
    labels = np.asarray(class_graph.classes[0])
    sizes = np.bincount(labels)
    own = [  # partitions whose classes stay inside them (not merged), as sensitive_build
        np.bincount(labels[ids], minlength=len(sizes))[labels[ids]].sum()
        == sizes[labels[ids]].sum()
        for ids in parts
    ]
    gcp = lambda g: information_loss(recode(g, enc), enc).gcp  # noqa: E731
    rows = []
    for penalty, repairs in VARIANTS:
        t0 = time.perf_counter()
        edges_r, edges_c = [], []
        plain_r, plain_c = [], []
        fail, pairs, clean = 0, 0, 0
        for ids, inside in zip(parts, own, strict=True):
            local = ids[lexicographic_order(enc.take(ids))]  # the shell's order
            rounds = rounds_shell(enc.take(local), codes[local], penalty, repairs)
            bad = failing_pairs(rounds, codes[local])
            fail += int(bad.sum())
            pairs += bad.size
            r, c = np.tile(local, K), local[rounds.ravel()]
            plain_r.append(r)
            plain_c.append(c)
            if not bad.any() and inside:
                clean += 1
                edges_r.append(r)
                edges_c.append(c)
            else:  # the partition's classes
                members = np.flatnonzero(np.isin(labels, np.unique(labels[ids])))
                lab = labels[members]
                for g in np.unique(lab):
                    mem = members[lab == g]
                    edges_r.append(np.repeat(mem, len(mem)))
                    edges_c.append(np.tile(mem, len(mem)))
        seconds = time.perf_counter() - t0
        rounds_graph = GeneralizationGraph.from_edges(
            np.concatenate(plain_r), np.concatenate(plain_c), enc.n
        )
        rr, cc = np.concatenate(edges_r), np.concatenate(edges_c)
        mixed = GeneralizationGraph.from_edges(rr, cc, enc.n)
        row = {
            "penalty": penalty,
            "repairs": repairs,
            "failing_pairs": fail / pairs,
            "clean_partitions": clean,
            "partitions": len(parts),
            "rounds_gcp": gcp(rounds_graph),
            "fallback_gcp": gcp(mixed),
            "seconds": seconds,
        }
        rows.append(row)
        print(row, flush=True)
    classes = gcp(class_graph)
    print(f"classes GCP {classes:.4%} ({t_classes:.1f} s)")
    dump("rounds_prototype", {"rows": rows, "classes_gcp": classes})
    print("| rounds | failing (i, t*) pairs | partitions all pass | rounds GCP | fallback GCP |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        name = "plain hungarian" if not r["penalty"] else f"penalized λ = {r['penalty']:g}"
        if r["repairs"]:
            name += f", {r['repairs']} re-solves per round"
        print(
            f"| {name} | {100 * r['failing_pairs']:.1f}% | {r['clean_partitions']} / "
            f"{r['partitions']} | {100 * r['rounds_gcp']:.2f}% | {100 * r['fallback_gcp']:.2f}% |"
        )


if __name__ == "__main__":
    main()
