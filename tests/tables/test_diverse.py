"""The greedy k-member clustering under a sensitive model (``methods.diverse._cluster``): its
scan with the per-step value table, the list of records left and the early stop (issue 25,
"remove the cliffs") gives the classes of the plain scan it replaced, kept here as the
reference, record for record."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.tables.methods.diverse import _cluster, _cost
from anonymatch.tables.models.sensitive import SensitiveModel, SensitiveTarget, column_ok, row_ok

MODELS = [
    SensitiveModel("s", l=2),
    SensitiveModel("s", l=3),
    SensitiveModel("s", l=2, diversity="entropy"),
    SensitiveModel("s", l=2, diversity="recursive", c=2.0),
    SensitiveModel("s", t=0.2),
    SensitiveModel("s", t=0.35, ordered=True),
    SensitiveModel("s", l=2, t=0.4),
]


def _helps(counts, size, k, codes_r, models, avail):  # type: ignore[no-untyped-def]
    """The per-record miss of the scan before issue 25 (the reference), with issue 36's
    keeping of rare values for the classes to come (distinct ℓ): ``avail`` counts the records
    left per value slot."""
    offsets, kinds, ls, cs, ts, ordered, q = models
    left = int(avail[offsets[0] : offsets[1]].sum())
    g = max(left - 1 - max(k - size - 1, 0), 0) // k
    miss = 0
    for s in range(offsets.shape[0] - 1):
        a, b = offsets[s], offsets[s + 1]
        v = a + codes_r[s]
        met = column_ok(counts[a:b], kinds[s], ls[s], cs[s], ts[s], ordered[s], q[a:b])
        have = counts[v]
        good = True
        if not met:
            if kinds[s] == 1 and have > 0:
                good = ls[s] - int(np.count_nonzero(counts[a:b])) < k - size
            if (kinds[s] == 2 or kinds[s] == 3) and (have + 1) * ls[s] > size + 1:
                good = False
            if ts[s] >= 0 and size > 0 and have >= q[v] * (size + 1):
                good = False
        if good and kinds[s] == 1 and (met or have > 0) and 0 < avail[v] <= g:
            room = int(np.minimum(avail[a:b], g).sum()) - ls[s] * g
            good = room - 1 >= 0  # taking it keeps the records left room for their classes
        miss += 0 if good else 1
    return miss


def _reference(records, scales, card_max, codes, k, models):  # type: ignore[no-untyped-def]
    """The clustering before issue 25: every record left is scanned at every step."""
    num, cat = records
    num_scale, cat_scale = scales
    offsets, kinds, ls, cs, ts, ordered, q = models
    m, dn, dc = num.shape[0], num.shape[1], cat.shape[1]
    label = np.full(m, -1, np.int64)
    groups = m // k + 1
    glo, ghi = np.zeros((groups, dn)), np.zeros((groups, dn))
    gmem = np.zeros((groups, dc, card_max), np.bool_)
    gcnt = np.zeros((groups, offsets[-1]), np.int64)
    n_groups, free = 0, m

    def ok(counts):  # type: ignore[no-untyped-def]
        return row_ok(counts, offsets, kinds, ls, cs, ts, ordered, q)

    def add(g, r):  # type: ignore[no-untyped-def]
        glo[g] = np.minimum(glo[g], num[r])
        ghi[g] = np.maximum(ghi[g], num[r])
        gmem[g, np.arange(dc), cat[r]] = True
        gcnt[g, offsets[:-1] + codes[r]] += 1

    for seed in range(m):
        if label[seed] >= 0:
            continue
        if free < k:
            break
        g = n_groups
        glo[g], ghi[g] = num[seed], num[seed]
        add(g, seed)
        members, label[seed], size = [seed], g, 1
        while not (size >= k and ok(gcnt[g])) and size < 3 * k:
            best, best_miss, best_cost = -1, 1 << 30, np.inf
            avail = np.zeros(offsets[-1], np.int64)
            for r in np.flatnonzero(label < 0):
                avail[offsets[:-1] + codes[r]] += 1
            for r in range(seed + 1, m):
                if label[r] >= 0:
                    continue
                miss = _helps(gcnt[g], size, k, codes[r], models, avail)
                if miss > best_miss:
                    continue
                cost = _cost(r, glo[g], ghi[g], num, num_scale, cat, cat_scale, gmem[g])
                if miss < best_miss or cost < best_cost:
                    best, best_miss, best_cost = r, miss, cost
            if best < 0:
                break
            members.append(best)
            label[best], size = g, size + 1
            add(g, best)
        if size >= k and ok(gcnt[g]):
            n_groups, free = n_groups + 1, free - size
        else:
            label[members] = -1
            gcnt[g], gmem[g] = 0, False
            break
    if n_groups == 0:
        return np.full(m, -1, np.int64)
    for r in range(m):
        if label[r] >= 0:
            continue
        best, best_cost = -1, np.inf
        for g in range(n_groups):
            trial = gcnt[g].copy()
            trial[offsets[:-1] + codes[r]] += 1
            if not ok(trial):
                continue
            cost = _cost(r, glo[g], ghi[g], num, num_scale, cat, cat_scale, gmem[g])
            if cost < best_cost:
                best, best_cost = g, cost
        if best < 0:
            return np.full(m, -1, np.int64)
        label[r] = best
        add(best, r)
    return label


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(2, 45),
    k=st.integers(2, 5),
    dn=st.integers(0, 2),
    dc=st.integers(0, 2),
    values=st.integers(1, 5),
    columns=st.integers(1, 2),
    model=st.sampled_from(MODELS),
)
def test_clustering_is_the_plain_scan(
    seed: int,
    m: int,
    k: int,
    dn: int,
    dc: int,
    values: int,
    columns: int,
    model: SensitiveModel,
) -> None:
    """Same classes as the reference on random segments: few distinct QI values (many ties and
    zero-cost records, where the scan stops early), skewed sensitive values (where a model
    fails and the clustering fails with it), one or two sensitive columns."""
    rng = np.random.default_rng(seed)
    num = rng.integers(0, 4, (m, dn)).astype(np.float64)
    cat = rng.integers(0, 3, (m, dc)).astype(np.int64)
    skew = rng.dirichlet(np.full(values, 0.7))
    codes = [rng.choice(values, m, p=skew) for _ in range(columns)]
    target = SensitiveTarget.build(codes, [values] * columns, (model,) * columns)
    records = (num, cat)
    scales = (rng.random(dn), rng.random(dc))
    models = (target.offsets, target.kinds, target.ls, target.cs, target.ts, target.ordered,
              target.q)  # fmt: skip
    card_max = 3
    got = _cluster(records, scales, card_max, target.codes, k, models)
    want = _reference(records, scales, card_max, target.codes, k, models)
    assert np.array_equal(got, want), (got.tolist(), want.tolist())
    if got[0] >= 0:  # a valid answer: classes of >= k records that satisfy the models
        for g in np.unique(got):
            members = np.flatnonzero(got == g)
            assert len(members) >= k
            assert target.ok(target.counts(members)[None])[0]
