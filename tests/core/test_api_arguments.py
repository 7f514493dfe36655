"""One validation layer for the Python API (issue 15 item 11): every public front and the
lower-level public functions answer a bad argument with an ``InputError`` naming it (also a
``TypeError`` for a wrong type), never an ``AttributeError`` or a numpy error from deep inside."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from anonymatch import graphs, sets, sparse, tables
from anonymatch.core.errors import ArgumentTypeError, InputError
from anonymatch.sets.km import anonymize_km
from anonymatch.tables.models.adaptive import anonymize_adaptive
from anonymatch.tables.models.kl import anonymize_kl, check_kl

DF = pd.DataFrame({"age": [20, 30, 40, 50, 60, 70], "sex": list("MFMFMF"), "s": list("abcabc")})
M = sp.csr_array(np.eye(6, dtype=np.int8))
TX = [[1, 2], [2, 3], [1, 3], [1, 2], [2, 3], [1, 3]]
QI = ["age", "sex"]

FRONTS: dict[str, Callable[..., Any]] = {
    "tables.anonymize": lambda data=DF, **kw: tables.anonymize(data, k=2, qi=QI, **kw),
    "anonymize_adaptive": lambda data=DF, **kw: anonymize_adaptive(data, QI, 2, **kw),
    "anonymize_kl": lambda data=DF, **kw: anonymize_kl(data, 2, 1, QI, **kw),
    "sets.anonymize": lambda data=TX, **kw: sets.anonymize(data, k=2, **kw),
    "anonymize_km": lambda data=None, **kw: anonymize_km(
        sp.csr_array(np.ones((4, 3), np.int8)) if data is None else data, None, 2, 1, **kw
    ),
    "sparse.anonymize": lambda data=M, **kw: sparse.anonymize(data, k=2, **kw),
}
SEEDED = list(FRONTS)


@pytest.mark.parametrize("front", SEEDED)
@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True, [1]])
def test_a_bad_seed_is_an_input_error(front: str, seed: object) -> None:
    with pytest.raises(InputError, match="seed must be None or a non-negative integer"):
        FRONTS[front](seed=seed)


@pytest.mark.parametrize("front", SEEDED)
@pytest.mark.parametrize("data", [[[1, 2]], "table.csv", None, 3])
def test_a_wrong_data_type_is_an_input_error_and_a_type_error(front: str, data: object) -> None:
    if front == "sets.anonymize" and isinstance(data, list):
        data = pd.DataFrame({"a": [1]})  # a list of lists is valid set-valued data
    if front == "anonymize_km" and data is None:
        data = [[1, 2]]
    with pytest.raises(ArgumentTypeError) as info:
        FRONTS[front](data=data)
    assert isinstance(info.value, InputError) and isinstance(info.value, TypeError)
    assert "must be" in str(info.value)


def test_an_ndarray_is_refused_with_a_hint_of_what_is_expected() -> None:
    with pytest.raises(ArgumentTypeError, match="data must be a pandas DataFrame, got ndarray"):
        tables.anonymize(DF.to_numpy(), k=2, qi=QI)


@pytest.mark.parametrize("front", ["tables.anonymize", "anonymize_adaptive", "anonymize_kl"])
@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"age": "x"}, "must be a number"),
        ({"age": float("nan")}, "finite and non-negative"),
        ({"age": -1}, "finite and non-negative"),
        ({1: 2.0}, "keyed by column names"),
        ([("age", 1.0)], "must map column names"),
    ],
)
def test_bad_weights_are_input_errors(front: str, weights: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        FRONTS[front](weights=weights)


@pytest.mark.parametrize("k", [0, -3, 2.5, "2", None, True])
def test_a_bad_k_is_an_input_error_on_every_table_front(k: object) -> None:
    for call in (
        lambda: tables.anonymize(DF, k=k, qi=QI),  # type: ignore[arg-type]
        lambda: anonymize_kl(DF, k, 1, QI),  # type: ignore[arg-type]
        lambda: check_kl(DF, k, 1, QI),  # type: ignore[arg-type]
        lambda: sparse.anonymize(M, k=k),  # type: ignore[arg-type]
        lambda: graphs.anonymize(M, k=k),  # type: ignore[arg-type]
    ):
        with pytest.raises(InputError):
            call()
    if k is not None:  # anonymize_adaptive: k=None means "levels from k_column"
        with pytest.raises(InputError):
            anonymize_adaptive(DF, QI, k)  # type: ignore[arg-type]


@pytest.mark.parametrize("qi", [5, [1, 2], {"age": 1}, b"age"])
def test_bad_column_lists(qi: object) -> None:
    for call in (
        lambda: tables.anonymize(DF, k=2, qi=qi),  # type: ignore[arg-type]
        lambda: anonymize_kl(DF, 2, 1, qi),  # type: ignore[arg-type]
        lambda: check_kl(DF, 2, 1, qi),  # type: ignore[arg-type]
        lambda: anonymize_adaptive(DF, qi, 2),  # type: ignore[arg-type]
    ):
        with pytest.raises(ArgumentTypeError, match="qi must"):
            call()


def test_a_comma_separated_string_is_a_column_list_everywhere() -> None:
    assert anonymize_kl(DF, 2, 1, "age,sex", seed=1).table.shape[0] == 6
    assert check_kl(DF, 1, 1, "age,sex").passed
