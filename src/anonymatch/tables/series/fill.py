"""Completing the signature buckets of a series release with new people, at least cost.

A bucket (``tables.series.publish``) is the continuing people of one signature σ. To be
published it needs every value of σ and at least k people: it has **slots** — one per value of
σ no member holds (only a new person holding that value fills it) and, up to k people, slots
any new person holding a value of σ fills. Filling the buckets one after the other hands the
people near the first buckets to them and sends the later ones far away (on Adult: 2.7× the
GCP of an independent release); here every slot of every bucket is filled at once by a
minimum-cost assignment of new people to slots (``scipy.sparse.csgraph.
min_weight_full_bipartite_matching``, LAPJVsp):

- the cost of new person r in bucket b is the GCP the bucket's published cell gains with r
  (the widening of its numeric ranges and the categorical values r adds, GCP weights, times the
  bucket's size);
- each slot is joined to its :data:`CANDIDATES` cheapest eligible people among the
  :data:`WINDOW` new people nearest the bucket in the lexicographic order of the QIs (the
  order the classes are built in), or among all new holders of a missing value when the
  window has none;
- each slot also has a private dummy (leaving it unfilled), so that a full assignment always
  exists; a bucket with a slot left on its dummy cannot be completed: its people are released
  and the assignment runs again without it (``_assign``: the buckets that publish more people
  per person taken win where slots compete).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from anonymatch.tables.columns.schema import EncodedQI

CANDIDATES = 32
"""Eligible new people joined to each slot (the cheapest)."""
WINDOW = 2000
"""New people nearest a bucket in the lexicographic order among whom its candidates are
sought."""
UNFILLED = 1e6
"""The cost of leaving a slot unfilled: above any sum of real costs, so that the assignment
fills as many slots as it can."""


def _costs(
    enc: EncodedQI,
    box: tuple[np.ndarray, np.ndarray, list[np.ndarray]],
    rows: np.ndarray,
) -> np.ndarray:
    """GCP a bucket's cell gains per row it takes: ``box`` = (lo, hi, categorical membership per
    attribute) of one bucket (or arrays of buckets aligned with ``rows``' first axis);
    ``rows`` the candidates (same leading shape). Non-finite costs (missing values) count 1.
    O(rows · d)."""
    lo, hi, member = box
    num_scale, cat_scale = enc.ncp_scales()
    cost = np.zeros(rows.shape)
    for a in range(enc.num.shape[1]):
        if num_scale[a] == 0:
            continue
        x = enc.num[rows, a]
        low, high = lo[..., a, None], hi[..., a, None]
        cost += (np.maximum(high, x) - np.minimum(low, x) - (high - low)) * num_scale[a]
    for a in range(enc.cat.shape[1]):
        if cat_scale[a] == 0:
            continue
        seen = member[a]
        code = enc.cat[rows, a]
        if seen.ndim == 1:
            cost += ~seen[code] * cat_scale[a]
        else:
            cost += ~np.take_along_axis(seen, code, axis=1) * cat_scale[a]
    return np.where(np.isfinite(cost), cost, 1.0)


def fill_buckets(
    enc: EncodedQI,
    codes: np.ndarray,
    members: Sequence[np.ndarray],
    signatures: Sequence[np.ndarray],
    fresh: np.ndarray,
    k: int,
) -> list[np.ndarray | None]:
    """The new people each bucket takes (module docstring), or None for a bucket that cannot
    be completed (suppressed: then it takes nobody).

    Parameters
    ----------
    enc : EncodedQI
        Everyone's encoded QIs.
    codes : numpy.ndarray
        Everyone's sensitive value code.
    members : sequence of numpy.ndarray
        Each bucket's continuing people.
    signatures : sequence of numpy.ndarray
        Each bucket's signature, as value codes.
    fresh : numpy.ndarray of bool
        The new people (those a bucket may take).
    k : int
        The fewest people of a class.

    Returns
    -------
    list of numpy.ndarray or None
        Per bucket, the new people it takes (disjoint), or None.

    Notes
    -----
    Time O(B·(WINDOW·d + CANDIDATES log)) to build the candidates of B buckets, plus the
    assignment on S slots and S·CANDIDATES edges (LAPJVsp: O(S²·log) worst case, near linear on
    these sparse graphs). Memory O(B·WINDOW + S·CANDIDATES).
    """
    from anonymatch.tables.order import lexicographic_order

    out: list[np.ndarray | None] = [np.empty(0, np.int64) for _ in members]
    slot_bucket: list[int] = []
    slot_value: list[int] = []
    for b, (mem, sig) in enumerate(zip(members, signatures, strict=True)):
        missing = np.setdiff1d(sig, codes[mem])
        slot_bucket += [b] * max(k - len(mem), len(missing))
        slot_value += [*missing.tolist(), *[-1] * (k - len(mem) - len(missing))]
    if not slot_bucket:
        return out
    rank = np.empty(enc.n, dtype=np.int64)
    rank[lexicographic_order(enc)] = np.arange(enc.n)
    pool = np.flatnonzero(fresh)
    pool = pool[np.argsort(rank[pool], kind="stable")]  # the new people in scan order
    needy = sorted(set(slot_bucket))
    if len(pool) == 0:
        for b in needy:
            out[b] = None
        return out
    boxes = _boxes(enc, [members[b] for b in needy])
    width = min(WINDOW, len(pool))
    sizes = np.array([len(members[b]) for b in needy], dtype=np.int64)
    owner = np.repeat(np.arange(len(needy)), sizes)
    every = np.concatenate([members[b] for b in needy]).astype(np.int64)
    centre = np.bincount(owner, rank[every], len(needy)) / np.maximum(sizes, 1)  # mean rank
    start = np.clip(np.searchsorted(rank[pool], centre) - width // 2, 0, len(pool) - width)
    window = start[:, None] + np.arange(width)[None, :]  # positions in ``pool``, no repeats
    open_slots = Counter(b for b, v in zip(slot_bucket, slot_value, strict=True) if v < 0)
    slots_of = Counter(slot_bucket)
    size = np.array([len(members[b]) + slots_of[b] for b in needy], dtype=np.float64)
    cost = _costs(enc, boxes, pool[window]) * size[:, None]
    row_of = {b: i for i, b in enumerate(needy)}
    holders = {int(v): np.flatnonzero(codes[pool] == v) for v in set(slot_value) if v >= 0}
    shown = codes[pool[window]]  # (buckets, width): the value of each candidate
    # the open slots of a bucket share its cheapest holders of a value of its signature:
    # as many as it has open slots, and CANDIDATES more
    wanted = np.zeros((len(needy), int(codes.max()) + 1), dtype=bool)
    for i, b in enumerate(needy):
        wanted[i, signatures[b]] = True
    anyone = np.where(np.take_along_axis(wanted, shown, axis=1), cost, np.inf)
    top = min(width, CANDIDATES + max(open_slots.values(), default=0))
    best = np.argpartition(anyone, top - 1, axis=1)[:, :top] if top < width else None
    edges_r: list[np.ndarray] = []
    edges_c: list[np.ndarray] = []
    edges_w: list[np.ndarray] = []
    for s, (b, v) in enumerate(zip(slot_bucket, slot_value, strict=True)):
        i = row_of[b]
        if v < 0:
            near = best[i] if best is not None else np.arange(width)
            w = anyone[i][near]
            keep = np.isfinite(w)
            cols, w = window[i][near[keep]], w[keep]
        else:
            ok = shown[i] == v
            cols, w = window[i][ok], cost[i][ok]
            if len(cols) == 0 and len(holders[v]):  # none near: every holder of v
                cols = holders[v]
                box = (boxes[0][i], boxes[1][i], [m[i] for m in boxes[2]])
                w = _costs(enc, box, pool[cols]) * size[i]
            if len(w) > CANDIDATES:
                near = np.argpartition(w, CANDIDATES - 1)[:CANDIDATES]
                cols, w = cols[near], w[near]
        edges_r.append(np.full(len(cols), s))
        edges_c.append(cols)
        edges_w.append(w + 1.0)  # > 0: an explicit edge
    chosen = _assign(
        np.array(slot_bucket), np.concatenate(edges_r), np.concatenate(edges_c),
        np.concatenate(edges_w), len(pool),
        np.array([len(m) for m in members], dtype=np.float64),
    )  # fmt: skip
    for b in needy:
        got = chosen.get(b)
        out[b] = None if got is None else pool[np.array(got, dtype=np.int64)]
    return out


def _assign(
    slot_bucket: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    weights: np.ndarray,
    n_pool: int,
    people: np.ndarray,
) -> dict[int, list[int]]:
    """Fill the slots (``slot_bucket``: each slot's bucket; edges ``rows`` slot → ``cols``
    pool position, of cost ``weights``) in rounds of a minimum-cost full assignment with a
    dummy per slot: a bucket whose every slot is filled keeps its people; a bucket of which no
    slot is filled is given up; the buckets partly filled, whose people are released, try again
    without them (a bucket filled in part publishes nobody). Leaving a slot unfilled costs
    :data:`UNFILLED` times (1 + the people of its bucket per slot), so that where slots compete
    the buckets that publish more people per person taken win. Returns the pool positions each
    completed bucket takes. O(rounds × the assignment), at most :data:`ROUNDS` rounds."""
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    slots_of = np.bincount(slot_bucket)
    active = np.ones(len(slot_bucket), dtype=bool)
    taken = np.zeros(n_pool, dtype=bool)
    done: dict[int, list[int]] = {}
    for _ in range(ROUNDS):
        live = np.flatnonzero(active)
        if len(live) == 0:
            break
        index = np.full(len(slot_bucket), -1)
        index[live] = np.arange(len(live))
        keep = active[rows] & ~taken[cols]
        r, c, w = index[rows[keep]], cols[keep], weights[keep]
        bucket = slot_bucket[live]
        dummy = UNFILLED * (1.0 + people[bucket] / slots_of[bucket])
        graph = sp.csr_array(
            (np.concatenate([w, dummy]),
             (np.concatenate([r, np.arange(len(live))]),
              np.concatenate([c, n_pool + np.arange(len(live))]))),
            shape=(len(live), n_pool + len(live)),
        )  # fmt: skip
        _, match = min_weight_full_bipartite_matching(graph)
        filled = match < n_pool
        full = np.bincount(bucket[filled], minlength=len(slots_of)) == slots_of
        some = np.bincount(bucket[filled], minlength=len(slots_of)) > 0
        for j in np.flatnonzero(filled & full[bucket]):
            done.setdefault(int(bucket[j]), []).append(int(match[j]))
            taken[match[j]] = True
        # the complete and the hopeless are settled; the partly filled try again
        active[live] = ~full[bucket] & some[bucket]
        if not (some & ~full).any():
            break
    return done


ROUNDS = 4
"""Rounds of :func:`_assign`."""


def _boxes(
    enc: EncodedQI, members: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Each bucket's numeric bounds (B, d_num) and categorical membership per attribute
    (B, card): what its published cell covers before it takes anyone. O(Σ|members|·d)."""
    sizes = np.array([len(m) for m in members], dtype=np.int64)
    every = np.concatenate(members).astype(np.int64)
    bucket = np.repeat(np.arange(len(members)), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    num = enc.num[every]
    lo = np.minimum.reduceat(num, starts, axis=0) if num.shape[1] else num[: len(members)]
    hi = np.maximum.reduceat(num, starts, axis=0) if num.shape[1] else num[: len(members)]
    member = []
    for a in range(enc.cat.shape[1]):
        seen = np.zeros((len(members), int(enc.cat[:, a].max()) + 1), dtype=bool)
        seen[bucket, enc.cat[every, a]] = True
        member.append(seen)
    return lo, hi, member
