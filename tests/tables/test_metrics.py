"""GCP/NCP exactly as Doka eq. (1)–(3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.tables.columns.schema import EncodedQI, Schema, encode_qi
from anonymatch.tables.methods.freeform import singleton_cells
from anonymatch.tables.metrics import PublishedCells, forbidden_cost, gcp_increase_weights

ORIGINAL = pd.DataFrame(
    {"age": [20, 30, 40, 60], "sex": ["F", "M", "F", "M"], "job": ["a", "b", "c", "d"]}
)


def test_ncp_and_gcp_by_hand() -> None:
    published = pd.DataFrame(
        {
            "age": ["20..30", "20..30", "40..60", "*"],
            "sex": ["F|M", "F|M", "F", "M"],
            "job": ["a|b", "a|b", "c|d", "*"],
        }
    )
    loss = anonymatch.evaluate(ORIGINAL, published, qi=["age", "sex", "job"], numeric=["age"])
    age = (10 / 40 + 10 / 40 + 20 / 40 + 1) / 4  # U − L = 40; a star counts 1
    sex = (1 + 1 + 0 + 0) / 4  # (count − 1)/(|A| − 1) with |A| = 2
    job = (1 / 3 + 1 / 3 + 1 / 3 + 1) / 4  # |A| = 4
    assert loss.ncp == pytest.approx({"age": age, "sex": sex, "job": job})
    assert loss.gcp == pytest.approx((age + sex + job) / 3)
    weighted = anonymatch.evaluate(
        ORIGINAL, published, qi="age,sex,job", numeric="age", weights={"age": 2, "sex": 0, "job": 1}
    )
    assert weighted.gcp == pytest.approx((2 * age + job) / 3)


def test_identity_release_has_zero_loss() -> None:
    published = ORIGINAL.astype(str)
    assert (
        anonymatch.evaluate(ORIGINAL, published, qi=["age", "sex", "job"], numeric=["age"]).gcp
        == 0.0
    )


def _random_part(data: st.DataObject, missing: bool) -> EncodedQI:
    m = data.draw(st.integers(1, 12), label="m")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, m),
            "hours": rng.integers(1, 5, m),
            "job": [f"j{x}" for x in rng.integers(0, 4, m)],
            "sex": [("F", "M")[x] for x in rng.integers(0, 2, m)],
        }
    ).astype(object)
    if missing:
        frame = frame.mask(rng.random(frame.shape) < 0.2, "?")
    schema = Schema.build(["age", "hours", "job", "sex"], ["age", "hours"])
    return encode_qi(frame, schema, ["?"])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_increase_weights_match_the_grown_cells_ncp(data: st.DataObject) -> None:
    """w[i, j] is the weighted NCP of published record j's cell grown to cover original i minus
    that of its cell now, computed cell by cell from the definition (Doka eq. 1–2, a missing value
    suppressing the cell); forbidden entries get ``forbidden_cost``, above any assignment's."""
    part = _random_part(data, missing=data.draw(st.booleans(), label="missing"))
    m = part.n
    rng = np.random.default_rng(m)
    lo, hi, member, local_qi = singleton_cells(part)
    num_star, cat_star = part.num_missing.copy(), part.cat_missing.copy()
    for j in range(m):  # grow each published cell over a few random originals first
        for i in rng.choice(m, size=int(rng.integers(0, 3)), replace=True):
            lo[j] = np.fmin(lo[j], np.where(part.num_missing[i], np.inf, part.num[i]))
            hi[j] = np.fmax(hi[j], np.where(part.num_missing[i], -np.inf, part.num[i]))
            num_star[j] |= part.num_missing[i]
            cat_star[j] |= part.cat_missing[i]
            for a, mat in enumerate(member):
                mat[j, local_qi.cat[i, a]] = True
    forbidden = rng.random((m, m)) < 0.3
    cells = PublishedCells(lo, hi, member, num_star=num_star, cat_star=cat_star)
    w = gcp_increase_weights(local_qi, cells, forbidden=forbidden)
    num_scale, cat_scale = part.ncp_scales()
    num_full, cat_full = part.star_scales()

    def cell_cost(j: int, extra: int | None) -> float:
        total = 0.0
        for a in range(part.num.shape[1]):
            star = num_star[j, a] or (extra is not None and part.num_missing[extra, a])
            if star:
                total += num_full[a]
                continue
            low, high = lo[j, a], hi[j, a]
            if extra is not None:
                low, high = min(low, part.num[extra, a]), max(high, part.num[extra, a])
            total += (high - low) * num_scale[a]
        for a, mat in enumerate(member):
            star = cat_star[j, a] or (extra is not None and part.cat_missing[extra, a])
            if star:
                total += cat_full[a]
                continue
            values = set(np.flatnonzero(mat[j]).tolist())
            if extra is not None:
                values.add(int(local_qi.cat[extra, a]))
            total += (len(values) - 1) * cat_scale[a]
        return total

    for i in range(m):
        for j in range(m):
            if forbidden[i, j]:
                assert w[i, j] == forbidden_cost(m)
            else:
                assert w[i, j] == pytest.approx(cell_cost(j, i) - cell_cost(j, None), abs=1e-12)
                assert 0.0 <= w[i, j] <= 1.0 + 1e-12
    assert forbidden_cost(m) > m * 1.0


def test_non_finite_allowed_weights_are_refused() -> None:
    part = encode_qi(pd.DataFrame({"x": [1, 2]}).astype(object), Schema.build(["x"], ["x"]))
    lo, hi, member, local_qi = singleton_cells(part)
    hi[1, 0] = np.nan  # (the encoder refuses spans that overflow; this stands for one)
    with pytest.raises(ValueError, match="non-finite"):
        gcp_increase_weights(
            local_qi, PublishedCells(lo, hi, member), forbidden=np.eye(2, dtype=bool)
        )
