"""Issue 38: cheaper ways to the hungarian's loss at large k, tried in process on UCI Adult.

Adult (30,162 complete rows, the 8 QIs of ``make run``), k = 50 by default. Each variant builds
the freeform graph of a partition with the shell of ``tables.methods.freeform`` (weights of
``tables.metrics.gcp_increase_weights``, assignments of ``core.lap.lapjv`` or the Greedy
iteration) and scores it with the GCP of the published cells (mean weighted NCP of the boxes).

* ``partitions``: hungarian on the lexicographic partitions (today's) against partitions of
  the relaxed Mondrian split (``methods._partition.relaxed_partition``, regions of P … 2P − 1
  records), over the whole table;
* ``assignment``: hungarian's rounds solved exactly (``core.lap.lapjv``) and by the
  two-stage assignment (``core.lap.two_stage``: LAPJV's initialization keeps the rows it
  assigns, the rows left free are solved exactly over the columns left), whole table, the
  default partitions, at each k of ``--ks`` — the measurements behind
  ``freeform.TWO_STAGE_MIN_K``;
* ``rounds``: on a few partitions of the lexicographic order (P = 1,000), hungarian, Greedy,
  hungarian for the first h rounds then Greedy, and **round re-optimization** after the build:
  round t's matching is removed and re-solved exactly given the k − 2 others (each published
  record's box without its round-t member, used edges forbidden). The total loss is then
  Σ_j cost(box_j without round t) + the assignment's cost, so a re-solve never increases it:
  block coordinate descent over the rounds; one *pass* re-solves rounds 1 … k − 1.

CPU seconds are ``time.process_time`` of this process (one thread for the rounds). Usage:
python benchmarks/rounds_variants.py [--k 50] [--steps partitions,rounds,assignment]
[--parts 3] [--ks 10,20,30,40,50,100]
Results: benchmarks/results/rounds_variants.json and printed lines.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from _common import ADULT_NAMES, ADULT_QI, adult_path, dump, machine

from anonymatch.core.lap import lapjv
from anonymatch.tables.columns.schema import EncodedQI, Schema
from anonymatch.tables.methods import freeform_partition_size, partitions
from anonymatch.tables.methods._partition import relaxed_partition
from anonymatch.tables.methods.freeform import (
    _greedy_step,
    _hungarian_step,
    _two_stage_step,
    singleton_cells,
)
from anonymatch.tables.metrics import PublishedCells, TreeTables, gcp_increase_weights
from anonymatch.tables.order import lexicographic_order
from anonymatch.tables.pipeline import prepare

Step = Callable[[np.ndarray, np.ndarray], np.ndarray]


def exact(w: np.ndarray, used: np.ndarray) -> np.ndarray:
    return lapjv(w)


def load() -> EncodedQI:
    frame = pd.read_csv(
        adult_path(), names=ADULT_NAMES.split(","), skipinitialspace=True, na_values="?"
    )
    frame = frame.dropna().reset_index(drop=True)
    frame = frame.astype({c: str for c in frame.columns if frame[c].dtype == object})
    return prepare(frame, Schema.build(ADULT_QI.split(","), ["age", "education-num"]))[1]


class Shell:
    """One partition (local lexicographic order) and the boxes of a list of rounds."""

    def __init__(self, part: EncodedQI) -> None:
        self.part = part.take(lexicographic_order(part))
        self.lo, self.hi, self.member, self.local = singleton_cells(self.part)
        self.trees = TreeTables.build(self.part)
        self.m = self.part.n

    def boxes(self, rounds: list[np.ndarray], skip: int = -1):
        part, local = self.part, self.local
        lo, hi = part.num.astype(float), part.num.astype(float)
        member = [np.zeros_like(mat) for mat in self.member]
        for t, match in enumerate(rounds):
            if t == skip:
                continue
            np.minimum.at(lo, match, part.num)
            np.maximum.at(hi, match, part.num)
            for mat, codes in zip(member, local.cat.T, strict=True):
                mat[match, codes] = True
        return lo, hi, member

    def weights(self, lo, hi, member, used) -> np.ndarray:
        part = self.part
        cells = PublishedCells(
            lo,
            hi,
            member,
            part.cat,
            np.zeros(part.cat.shape, np.int64),
            np.zeros(part.num.shape, bool),
            np.zeros(part.cat.shape, bool),
        )
        return gcp_increase_weights(self.local, cells, self.trees, part.cat, used)

    def loss(self, rounds: list[np.ndarray]) -> float:
        """Sum over published records of their weighted NCP (GCP × m)."""
        lo, hi, member = self.boxes(rounds)
        num, cat = self.part.ncp_scales()
        total = ((hi - lo) * num).sum()
        for a, mat in enumerate(member):
            total += ((mat.sum(axis=1) - 1) * cat[a]).sum()
        return float(total)

    def build(self, k: int, step: Callable[[int], Step]) -> list[np.ndarray]:
        """k − 1 rounds; ``step(t)`` is round t's assignment routine."""
        m = self.m
        lo, hi = self.lo.copy(), self.hi.copy()
        member = [mat.copy() for mat in self.member]
        used = np.eye(m, dtype=bool)
        rounds = [np.arange(m)]
        for t in range(k - 1):
            match = step(t)(self.weights(lo, hi, member, used), used)
            rounds.append(match)
            used[np.arange(m), match] = True
            np.minimum.at(lo, match, self.part.num)
            np.maximum.at(hi, match, self.part.num)
            for mat, codes in zip(member, self.local.cat.T, strict=True):
                mat[match, codes] = True
        return rounds

    def reoptimize(self, rounds: list[np.ndarray]) -> list[np.ndarray]:
        """One pass of round re-optimization (never increases the loss)."""
        m = self.m
        rounds = list(rounds)
        for t in range(1, len(rounds)):
            used = np.zeros((m, m), bool)
            for s, match in enumerate(rounds):
                if s != t:
                    used[np.arange(m), match] = True
            rounds[t] = lapjv(self.weights(*self.boxes(rounds, skip=t), used))
        return rounds


def step_partitions(qi: EncodedQI, k: int) -> list[dict]:
    rows = []
    for how, size in (("lexicographic", 1000), ("lexicographic", 500), ("relaxed Mondrian", 700)):
        if how == "lexicographic":
            groups = partitions(qi, size)
        else:
            split = relaxed_partition(qi, size)
            bounds = zip(split.bounds[:-1], split.bounds[1:], strict=True)
            groups = [split.order[a:b] for a, b in bounds]
        started, total = time.process_time(), 0.0
        for ids in groups:
            shell = Shell(qi.take(ids))
            total += shell.loss(shell.build(k, lambda t: exact))
        row = {
            "partitions": how,
            "P": size,
            "groups": len(groups),
            "mean size": float(np.mean([len(g) for g in groups])),
            "gcp": total / qi.n,
            "cpu": time.process_time() - started,
        }
        print(row, flush=True)
        rows.append(row)
    return rows


def step_rounds(qi: EncodedQI, k: int, n_parts: int) -> list[dict]:
    groups = partitions(qi, 1000)
    picks = np.linspace(0, len(groups) - 1, n_parts).astype(int)
    variants: dict[str, tuple[Callable[[int], Step], int]] = {
        "hungarian": (lambda t: exact, 2),
        "greedy": (lambda t: _greedy_step, 1),
        "hungarian 10 rounds, then greedy": (lambda t: exact if t < 10 else _greedy_step, 0),
        "hungarian 25 rounds, then greedy": (lambda t: exact if t < 25 else _greedy_step, 0),
    }
    rows = []
    for name, (step, passes) in variants.items():
        losses = np.zeros(passes + 1)
        cpu = np.zeros(passes + 1)
        size = 0
        for g in picks:
            shell = Shell(qi.take(groups[g]))
            size += shell.m
            started = time.process_time()
            rounds = shell.build(k, step)
            cpu[0] += time.process_time() - started
            losses[0] += shell.loss(rounds)
            for p in range(1, passes + 1):
                started = time.process_time()
                rounds = shell.reoptimize(rounds)
                cpu[p] += time.process_time() - started
                losses[p] += shell.loss(rounds)
        for p in range(passes + 1):
            row = {
                "variant": name + (f" + {p} re-optimization pass(es)" if p else ""),
                "gcp": float(losses[p] / size),
                "cpu": float(cpu[: p + 1].sum()),
            }
            print(row, flush=True)
            rows.append(row)
    return rows


def step_assignment(qi: EncodedQI, ks: list[int]) -> list[dict]:
    rows = []
    for k in ks:
        size = max(freeform_partition_size(k), 2 * k)
        groups = partitions(qi, size)
        for name, step in (("exact", _hungarian_step), ("two-stage", _two_stage_step)):
            started, total = time.process_time(), 0.0
            for ids in groups:
                shell = Shell(qi.take(ids))
                total += shell.loss(shell.build(k, lambda t, step=step: step))
            row = {
                "k": k,
                "P": size,
                "assignment": name,
                "gcp": total / qi.n,
                "cpu": time.process_time() - started,
            }
            print(row, flush=True)
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--steps", default="partitions,rounds,assignment")
    parser.add_argument("--parts", type=int, default=3, help="partitions for the rounds step")
    parser.add_argument("--ks", default="10,20,30,40,50,100", help="k of the assignment step")
    args = parser.parse_args()
    qi = load()
    lapjv(np.zeros((2, 2)))  # compile outside the timings
    out: dict[str, object] = {"k": args.k, "machine": machine()}
    if "partitions" in args.steps:
        out["partitions"] = step_partitions(qi, args.k)
    if "rounds" in args.steps:
        out["rounds"] = step_rounds(qi, args.k, args.parts)
    if "assignment" in args.steps:
        out["assignment"] = step_assignment(qi, [int(k) for k in args.ks.split(",")])
    dump("rounds_variants", out)


if __name__ == "__main__":
    main()
