"""GCP/NCP exactly as Doka eq. (1)–(3)."""

from __future__ import annotations

import pandas as pd
import pytest

import anonymatch

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
