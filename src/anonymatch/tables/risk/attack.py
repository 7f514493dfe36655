"""Attack analysis: an adversary who already knows c true matches (Choromanski et al. §4).

The adversary sees the compatibility graph between the original records and the published rows
and knows c pairs of the true matching M (side information or earlier successful attacks). For
every other person v, the published rows that can still be v's record are those u for which
some perfect matching uses (v, u) together with all c known pairs — the effective anonymity of
v. Lemma 4.3 (cliques, i.e. k-anonymity) and Lemma 4.5 (graphs symmetric w.r.t. M) guarantee at
least δᵥ − c; an asymmetric δ-regular graph only guarantees it for all but a few people
(Theorem 4.1). A random attack — pick an unknown person uniformly, guess one of their candidate
rows uniformly — succeeds with probability mean(1 / candidates).

Computation per trial: drop the known pairs' rows and columns (a perfect matching containing
them is a perfect matching of the rest: ``core.view.AttackerView.restrict``), then count each
remaining person's candidates, with the true matching as the known perfect matching
(``AttackerView.candidates``, on groups of identical people and rows). O(trials · (n + pairs
between groups)).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.view import AttackerView


class Adversary(NamedTuple):
    """What the simulated adversary knows: ``known`` true (person, row) pairs, drawn afresh in
    each of ``trials`` trials; ``key`` is a column with a unique value per person, kept in the
    release, that gives the true pairing to score the attack against."""

    key: str
    known: int
    trials: int = 100


@dataclass(frozen=True)
class AttackReport:
    """Aggregated over trials. ``candidates_histogram[x]``: how many (trial, unknown person)
    pairs had x candidate rows; ``below_guarantee``: how many had fewer than δᵥ − c;
    ``min_slack``: the smallest candidates − (δᵥ − c) seen; ``success_probability``: mean over
    trials of the random attack's success probability (and its worst trial)."""

    known: int
    trials: int
    people: int
    min_candidates: int
    mean_candidates: float
    min_slack: int
    below_guarantee: int
    below_guarantee_fraction: float
    success_probability: float
    worst_trial_success_probability: float
    candidates_histogram: dict[int, int]

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def candidate_counts(
    c: sp.csr_array | AttackerView, truth: np.ndarray, known: np.ndarray
) -> np.ndarray:
    """For an n×n compatibility graph ``c`` (original × published, or the attacker's view)
    whose true matching is ``truth`` (original i ↔ published truth[i], which must be edges of
    c), and the boolean mask ``known`` of originals whose true pair the adversary knows: the
    number of candidate rows of each unknown original (in the order of
    ``np.flatnonzero(~known)``)."""
    view = c if isinstance(c, AttackerView) else AttackerView.singletons(c)
    keep = np.flatnonzero(~known)
    col_keep = np.ones(view.n_published, bool)
    col_keep[truth[known]] = False
    new_col = np.cumsum(col_keep) - 1
    sub = view.restrict(keep, np.flatnonzero(col_keep))
    cand = sub.candidates(matching=new_col[truth[keep]])
    assert cand is not None  # a matching was given
    return cand.per_original()[sub.inverse]


def simulate_attack(
    c: sp.csr_array | AttackerView,
    truth: np.ndarray,
    delta: np.ndarray,
    known: int,
    trials: int,
    rng: np.random.Generator,
) -> AttackReport:
    """Repeat ``trials`` times: the adversary learns ``known`` true pairs chosen uniformly at
    random; measure every other person's candidate rows. Raises InputError on bad parameters
    or if the true matching is not in the graph. ``c``: the n×n compatibility graph or the
    attacker's view (every trial then works on its groups)."""
    view = c if isinstance(c, AttackerView) else AttackerView.singletons(c)
    n = view.n
    truth = np.asarray(truth, np.int64)
    delta = np.asarray(delta, np.int64)
    if not 0 <= known < n:
        raise InputError(f"`known` must be between 0 and n − 1 = {n - 1}, got {known}")
    if trials < 1:
        raise InputError(f"`trials` must be at least 1, got {trials}")
    if len(truth) != n or not view.compatible(np.arange(n), truth).all():
        raise InputError("the true matching is not contained in the compatibility graph")
    hist: dict[int, int] = {}
    min_slack, below, total, people = np.iinfo(np.int64).max, 0, 0.0, 0
    success = []
    for _ in range(trials):
        mask = np.zeros(n, bool)
        mask[rng.choice(n, size=known, replace=False)] = True
        counts = candidate_counts(view, truth, mask)
        slack = counts - (delta[~mask] - known)
        min_slack = min(min_slack, int(slack.min()))
        below += int((slack < 0).sum())
        total += float(counts.sum())
        people += len(counts)
        success.append(float(np.mean(1.0 / counts)))
        for value, count in zip(*np.unique(counts, return_counts=True), strict=True):
            hist[int(value)] = hist.get(int(value), 0) + int(count)
    return AttackReport(
        known=known,
        trials=trials,
        people=n - known,
        min_candidates=min(hist),
        mean_candidates=total / people,
        min_slack=int(min_slack),
        below_guarantee=below,
        below_guarantee_fraction=below / people,
        success_probability=float(np.mean(success)),
        worst_trial_success_probability=float(np.max(success)),
        candidates_histogram=dict(sorted(hist.items())),
    )
