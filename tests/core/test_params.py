"""Validation at the public boundary (anonymatch.core.params)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonymatch.core.errors import InputError
from anonymatch.core.params import (
    check_seed,
    check_weights,
    column_list,
    integer,
    number,
    optional_integer,
    require_frame,
)

# column names as users write them: no commas, no surrounding blanks, not empty
NAMES = st.text(
    alphabet=st.characters(blacklist_characters=",", blacklist_categories=("Cs", "Z", "Cc")),
    min_size=1,
    max_size=12,
)


@given(st.lists(NAMES, max_size=8))
def test_comma_string_equals_the_list(names: list[str]) -> None:
    assert column_list(",".join(names), "qi") == names
    assert column_list(names, "qi") == names
    assert column_list(tuple(names), "qi") == names


@given(st.lists(NAMES, max_size=8), st.lists(st.sampled_from([" ", "  ", "\t"]), max_size=3))
def test_blanks_around_names_and_empty_items_are_dropped(names: list[str], pad: list[str]) -> None:
    blank = "".join(pad)
    text = ",".join(f"{blank}{n}{blank}" for n in names) + ("," if names else "")
    assert column_list(text, "numeric") == names


def test_column_list_examples() -> None:
    assert column_list("age,sex", "qi") == ["age", "sex"]
    assert column_list("age", "qi") == ["age"]
    assert column_list("", "qi") == []
    assert column_list(None, "sensitive") == []
    assert column_list(iter(["a", "b"]), "qi") == ["a", "b"]
    assert column_list(pd.Index(["a", "b"]), "qi") == ["a", "b"]


@pytest.mark.parametrize("bad", [3, 2.5, True, b"age", {"age": 1}, object()])
def test_non_iterables_raise_type_error_naming_the_parameter(bad: object) -> None:
    with pytest.raises(TypeError, match="^identifiers must be"):
        column_list(bad, "identifiers")


def test_non_string_items_raise_type_error() -> None:
    with pytest.raises(TypeError, match="qi must hold column names"):
        column_list(["age", 3], "qi")


def test_require_frame() -> None:
    frame = pd.DataFrame({"a": [1]})
    assert require_frame(frame) is frame
    with pytest.raises(TypeError, match=r"^data must be a pandas DataFrame, got list$"):
        require_frame([[1, 2]])
    with pytest.raises(TypeError, match=r"^original must be a pandas DataFrame, got ndarray$"):
        require_frame(np.zeros((2, 2)), "original")


@given(st.integers(min_value=1, max_value=10**12))
def test_positive_ints_are_valid_k(k: int) -> None:
    assert integer(k, "k") == k
    assert integer(np.int64(k), "k") == k


@pytest.mark.parametrize("bad", [0, -1, True, False, 2.0, "3", None, np.float64(3)])
def test_bad_k_is_an_input_error(bad: object) -> None:
    with pytest.raises(InputError, match="^`k` must be an integer of at least 1, got "):
        integer(bad, "k")


def test_integer_minimum() -> None:
    assert integer(0, "iterations", minimum=0) == 0
    with pytest.raises(InputError, match="^`iterations` must be an integer of at least 0, got -1$"):
        integer(-1, "iterations", minimum=0)


def test_optional_level() -> None:
    assert optional_integer(None, "ell") is None
    assert optional_integer(2, "ell") == 2
    with pytest.raises(InputError, match="^`ell` must"):
        optional_integer(0, "ell")


@given(st.one_of(st.none(), st.integers(min_value=0, max_value=2**64)))
def test_valid_seeds(seed: int | None) -> None:
    assert check_seed(seed) == seed


@pytest.mark.parametrize("bad", [-1, True, False, "1", 1.0, [1]])
def test_bad_seed_is_an_input_error_naming_seed(bad: object) -> None:
    with pytest.raises(InputError, match="^seed must be None or a non-negative integer"):
        check_seed(bad)


@given(
    st.dictionaries(
        NAMES,
        st.one_of(
            st.integers(min_value=0, max_value=10**6),
            st.floats(min_value=0, max_value=1e6, allow_nan=False),
        ),
        max_size=5,
    )
)
def test_valid_weights_become_floats(weights: dict[str, float]) -> None:
    out = check_weights(weights)
    assert out == {k: float(v) for k, v in weights.items()}
    assert out is not weights


@pytest.mark.parametrize(
    "bad",
    [
        {"a": -1},
        {"a": math.nan},
        {"a": math.inf},
        {"a": "2"},
        {"a": True},
        {3: 1.0},
        [("a", 1.0)],
        "a=1",
    ],
)
def test_bad_weights_are_input_errors(bad: object) -> None:
    with pytest.raises(InputError, match="weights"):
        check_weights(bad)


@pytest.mark.parametrize("bad", [0, -1.5, math.inf, math.nan, True, "60"])
def test_positive_numbers(bad: object) -> None:
    assert number(2, "time_limit") == 2.0
    with pytest.raises(InputError, match=r"^`time_limit` must (be a number|be in \(0, ∞\))"):
        number(bad, "time_limit")


def test_no_weights() -> None:
    assert check_weights(None) is None
