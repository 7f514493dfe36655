"""A differentially private companion to a release: noisy answers to a declared workload
(issue 39), computed with OpenDP.

A steward who knows the counts analysts will ask for can publish them beside the k-anonymous
release with a formal, quantified promise: ``RELEASE.dp.json`` holds the answers of a workload
of count queries (each a mapping column → value or inclusive ``[lo, hi]`` range) and of
marginals of named columns, under (ε, δ)-differential privacy with respect to adding or
removing one person's row. The noise and the privacy accounting are OpenDP's (Laplace for
ε-DP, Gaussian through zero-concentrated DP for δ > 0; one noise scale for every measurement,
found by OpenDP's binary search so that their composition spends exactly ε): nothing here draws
noise by hand.

The companion is DP; the microdata release beside it is not. The pair is only as strong as the
k-anonymous release against re-identification, and a marginal's categories are the labels the
release publishes (public once the release is). See ``docs/cli.md`` ("A differentially private
companion").

References
----------
Dwork, C., McSherry, F., Nissim, K., Smith, A. "Calibrating noise to sensitivity in private
data analysis". TCC 2006.
Bun, M., Steinke, T. "Concentrated differential privacy: simplifications, extensions, and
lower bounds". TCC 2016.
The OpenDP Library, https://docs.opendp.org (measurements, composition, ``binary_search_param``).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError

COMPANION_SCHEMA = "anonymatch-dp/1"
"""The ``schema`` of a DP companion file ``RELEASE.dp.json``."""

COMPANION_SUFFIX = ".dp.json"
"""The companion of release ``r.csv`` is ``r.csv.dp.json``."""

MAX_QUERIES = 10_000
"""The most count queries (and marginals) one workload may declare."""

CAVEAT = (
    "Only these answers are differentially private. The microdata release beside them is "
    "k-anonymous, not DP: the pair is only as strong as the k-anonymous release against "
    "re-identification, and a marginal's categories are the labels the release publishes."
)

Value = str | int | float | bool
Condition = Value | tuple[float, float]


@dataclass(frozen=True)
class Workload:
    """A declared workload: count queries (each a mapping column → a value or an inclusive
    ``(lo, hi)`` range; a row counts when it meets every condition) and marginals (tuples of
    column names)."""

    queries: tuple[Mapping[str, Condition], ...]
    marginals: tuple[tuple[str, ...], ...] = ()

    def columns(self) -> list[str]:
        """Every column the workload names, in order of first mention. O(size)."""
        names = [c for q in self.queries for c in q] + [c for m in self.marginals for c in m]
        return list(dict.fromkeys(names))

    def to_dict(self) -> dict[str, Any]:
        return {
            "queries": [
                {c: list(v) if isinstance(v, tuple) else v for c, v in q.items()}
                for q in self.queries
            ],
            "marginals": [list(m) for m in self.marginals],
        }


def _condition(value: object, where: str) -> Condition:
    if isinstance(value, str | bool) or (
        isinstance(value, int | float) and math.isfinite(float(value))
    ):
        return value
    if isinstance(value, list) and len(value) == 2:
        lo, hi = value
        if all(isinstance(x, int | float) and not isinstance(x, bool) for x in (lo, hi)) and (
            math.isfinite(float(lo)) and math.isfinite(float(hi)) and float(lo) <= float(hi)
        ):
            return (float(lo), float(hi))
        raise InputError(f"{where}: a range is [lo, hi] with numbers lo ≤ hi, got {value!r}")
    raise InputError(f"{where}: a condition is a value or an inclusive [lo, hi], got {value!r}")


def parse_workload(document: object) -> Workload:
    """A workload from its JSON document, checked strictly.

    Parameters
    ----------
    document : list or dict
        A list of count queries, or ``{"queries": [...], "marginals": [[col, ...], ...]}``;
        a query is a non-empty object mapping a column to a value (text, number, bool) or to
        an inclusive ``[lo, hi]`` range of numbers.

    Returns
    -------
    Workload
        The queries, each a mapping column → value or ``(lo, hi)``, and the marginals.

    Raises
    ------
    InputError
        Anything else (unknown keys, an empty query, a bad range, too many queries), naming
        the query.

    Notes
    -----
    Time O(size of the document).

    Examples
    --------
    >>> w = parse_workload([{"sex": "Female", "age": [30, 39]}])
    >>> w.queries[0]["age"], w.marginals
    ((30.0, 39.0), ())
    """
    marginals: object = []
    if isinstance(document, dict):
        unknown = set(document) - {"queries", "marginals"}
        if unknown:
            raise InputError(f"the workload has unknown keys: {', '.join(sorted(unknown))}")
        queries, marginals = document.get("queries", []), document.get("marginals", [])
    else:
        queries = document
    if not isinstance(queries, list) or not isinstance(marginals, list):
        raise InputError("the workload is a list of queries, or {queries: [...], marginals: [...]}")
    if len(queries) + len(marginals) > MAX_QUERIES:
        raise InputError(f"the workload has more than {MAX_QUERIES} queries and marginals")
    parsed: list[dict[str, Condition]] = []
    for i, query in enumerate(queries):
        where = f"query {i + 1}"
        if not isinstance(query, dict) or not query:
            raise InputError(f"{where} is not a non-empty object of column → condition")
        parsed.append({str(c): _condition(v, f"{where}, column {c!r}") for c, v in query.items()})
    margins: list[tuple[str, ...]] = []
    for i, names in enumerate(marginals):
        if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
            raise InputError(f"marginal {i + 1} is not a non-empty list of column names")
        if len(set(names)) != len(names):
            raise InputError(f"marginal {i + 1} names a column twice")
        margins.append(tuple(names))
    if not parsed and not margins:
        raise InputError("the workload declares no query and no marginal")
    return Workload(tuple(parsed), tuple(margins))


def load_workload(path: str | os.PathLike[str]) -> Workload:
    """:func:`parse_workload` of a JSON file, read by the bounded reader. O(file size)."""
    from anonymatch.core.documents import load_json

    return parse_workload(load_json(path, "workload"))


def _as_numbers(column: pd.Series) -> np.ndarray:
    return pd.to_numeric(column, errors="coerce").to_numpy(float)


def query_mask(frame: pd.DataFrame, query: Mapping[str, Condition]) -> np.ndarray:
    """The rows of a plain table (the original, a draw) that meet every condition of a query.

    A range holds numbers inside ``[lo, hi]``; a value equals the cell (as a number when both
    are numbers, else as text). InputError for a column the table lacks. O(n·|query|)."""
    hit = np.ones(len(frame), bool)
    for name, cond in query.items():
        if name not in frame.columns:
            raise InputError(f"the table has no column {name!r} (named by the workload)")
        column = frame[name]
        if isinstance(cond, tuple):
            x = _as_numbers(column)
            hit &= (x >= cond[0]) & (x <= cond[1])
        elif isinstance(cond, int | float) and not isinstance(cond, bool):
            numbers = _as_numbers(column)
            text = column.astype(str).to_numpy()
            hit &= np.where(np.isnan(numbers), text == str(cond), numbers == float(cond))
        else:
            hit &= column.astype(str).to_numpy() == str(cond)
    return hit


def exact_answers(frame: pd.DataFrame, workload: Workload) -> list[int]:
    """The true counts of the workload's queries on a plain table. O(n·size)."""
    return [int(query_mask(frame, q).sum()) for q in workload.queries]


def _interval_probability(column: pd.Series, cond: Condition) -> np.ndarray:
    """P(cell meets cond) for a range column, its value uniform inside the cell."""
    from anonymatch.tables.models.features import cell_bounds

    lo, hi = cell_bounds(column)
    integral = isinstance(column.dtype, pd.IntervalDtype) and np.issubdtype(
        column.dtype.subtype, np.integer
    )
    if isinstance(cond, tuple):
        a, b = cond
    elif isinstance(cond, int | float) and not isinstance(cond, bool):
        a = b = float(cond)
    else:
        return np.zeros(len(column))
    if integral:  # integers lo..hi, each equally likely
        width = hi - lo + 1
        inside = np.minimum(hi, np.floor(b)) - np.maximum(lo, np.ceil(a)) + 1
        p = np.clip(inside, 0, None) / width
    else:
        width = hi - lo
        overlap = np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0, None)
        point = (lo >= a) & (hi <= b)
        p = np.where(width > 0, overlap / np.where(width > 0, width, 1), point.astype(float))
    return np.where(np.isnan(lo), np.nan, p)


def _set_probability(column: pd.Series, cond: Condition) -> np.ndarray:
    """P(cell meets cond) for a value-set (or exact) column, its label uniform in the set."""
    out = np.full(len(column), np.nan)
    for i, cell in enumerate(column):
        if isinstance(cell, frozenset | set):
            labels = [str(v) for v in cell]
        elif cell is None or cell is pd.NA or (isinstance(cell, float) and np.isnan(cell)):
            continue
        else:
            labels = [str(cell)]
        if not labels:
            continue
        if isinstance(cond, tuple):
            x = pd.to_numeric(pd.Series(labels), errors="coerce").to_numpy(float)
            good = (x >= cond[0]) & (x <= cond[1])
        elif isinstance(cond, int | float) and not isinstance(cond, bool):
            x = pd.to_numeric(pd.Series(labels), errors="coerce").to_numpy(float)
            good = np.where(np.isnan(x), np.array(labels) == str(cond), x == float(cond))
        else:
            good = np.array(labels) == str(cond)
        out[i] = float(np.mean(good))
    return out


def release_answers(release: pd.DataFrame, workload: Workload) -> list[float]:
    """The expected counts of the workload's queries on a typed release
    (:func:`~anonymatch.tables.io.release.read_release`): each row's value uniform inside its
    cell, the columns independent within a row; a suppressed cell takes the column's mean
    probability over the cells that are not. O(n·size)."""
    answers = []
    for query in workload.queries:
        p = np.ones(len(release))
        for name, cond in query.items():
            if name not in release.columns:
                raise InputError(f"the release has no column {name!r} (named by the workload)")
            column = release[name]
            if isinstance(column.dtype, pd.IntervalDtype):
                q = _interval_probability(column, cond)
            else:
                q = _set_probability(column, cond)
            gone = np.isnan(q)
            if gone.any():
                q[gone] = float(np.nanmean(q)) if (~gone).any() else 0.0
            p *= q
        answers.append(float(p.sum()))
    return answers


def marginal_categories(release: pd.DataFrame, column: str) -> list[str]:
    """The labels a release publishes for ``column`` (a marginal's categories), sorted.

    A value-set QI's labels (text ``a|b`` cells or frozensets), or a kept column's values;
    a range column has no categories (InputError: ask range queries instead). O(n)."""
    from anonymatch.core.cells import STAR, split_cell

    if column not in release.columns:
        raise InputError(f"the release has no column {column!r} (named by a marginal)")
    values = release[column]
    if isinstance(values.dtype, pd.IntervalDtype) or column in (release.attrs.get("ranges") or ()):
        raise InputError(f"column {column!r} is published as ranges: ask range queries of it")
    labels: set[str] = set()
    qi = set(release.attrs.get("qi") or ())
    for cell in values.dropna().unique():
        if isinstance(cell, frozenset | set):
            labels.update(str(v) for v in cell)
        elif column in qi and isinstance(cell, str):
            if cell != STAR:
                labels.update(split_cell(cell))
        else:
            labels.add(str(cell))
    if ".." in "".join(labels) and column in qi:
        raise InputError(f"column {column!r} is published as ranges: ask range queries of it")
    return sorted(labels)


def _opendp() -> Any:
    try:
        import opendp.prelude as dp
    except ImportError as exc:
        raise InputError(
            "the DP companion needs OpenDP: pip install 'anonymatch[dp]' (opendp)"
        ) from exc
    dp.enable_features("contrib")
    return dp


def _bounds(measurements: int, epsilon: float, delta: float) -> tuple[float, float]:
    """A bracket of the noise scale for OpenDP's search: around Q/ε (Laplace) or the σ of
    ρ-zCDP with ε = ρ + 2√(ρ·ln(1/δ)) (Gaussian); the search itself is OpenDP's. O(1)."""
    if delta == 0:
        guess = measurements / epsilon
    else:
        log = math.log(1 / delta)
        rho = (math.sqrt(log + epsilon) - math.sqrt(log)) ** 2
        guess = math.sqrt(measurements / (2 * rho))
    return guess / 4, guess * 4


def _text(x: object) -> str:
    return str(x)


def companion(
    original: pd.DataFrame,
    release: pd.DataFrame,
    workload: Workload,
    *,
    epsilon: float,
    delta: float = 0.0,
) -> dict[str, Any]:
    """Noisy answers to ``workload`` on ``original`` under (ε, δ)-DP, with OpenDP.

    Parameters
    ----------
    original : pandas.DataFrame
        The table the release was made from (the rows counted).
    release : pandas.DataFrame
        The release (as published or as read by ``read_release``): the categories of each
        marginal are the labels it publishes (:func:`marginal_categories`).
    workload : Workload
        The queries and marginals (:func:`parse_workload`).
    epsilon : float
        The privacy-loss budget ε > 0 of the whole companion.
    delta : float, default 0
        0: pure ε-DP, discrete Laplace noise; in (0, 1): (ε, δ)-DP, discrete Gaussian noise
        accounted in zero-concentrated DP and converted.

    Returns
    -------
    dict
        The companion document (``schema`` ``anonymatch-dp/1``): ``epsilon`` and ``delta``
        as OpenDP's privacy map states them for one person's row added or removed,
        ``mechanism``, ``noise_scale``, ``queries`` and ``answers`` (in the workload's order),
        ``marginals`` (columns, categories, counts), ``library`` and ``caveat``. Answers are
        unbiased integers, possibly negative.

    Raises
    ------
    InputError
        A bad budget, a column the original or the release lacks, a marginal of a range
        column, OpenDP missing.

    Notes
    -----
    Every query is a chain of OpenDP transformations (select the query's indicator column,
    clamp to [0, 1], sum: sensitivity 1) and a marginal a ``count_by_categories`` (L1 and
    L2 sensitivity 1, the rows outside the categories in OpenDP's null category, not
    published); they are composed by ``make_composition``, and the one noise scale is
    OpenDP's ``binary_search_param`` for the composition's privacy map to meet (ε, δ). The
    rows' indicators are computed here (a function of each row alone: a 1-stable row-by-row
    map) and handed to OpenDP as text. OpenDP draws its noise from the operating system's
    cryptographic generator: no seed reaches it. Time O(n·(q + M)) for n rows, q queries and
    M marginals, plus OpenDP's search (≈ 40 evaluations of the privacy map).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["F", "M"] * 50, "age": list(range(100))})
    >>> rel = pd.DataFrame({"sex": ["F|M"] * 100, "age": ["0..99"] * 100})
    >>> rel.attrs.update(qi=["sex", "age"], ranges=["age"])
    >>> doc = companion(df, rel, parse_workload({"queries": [{"age": [0, 49]}],
    ...                 "marginals": [["sex"]]}), epsilon=1.0)
    >>> doc["epsilon"], len(doc["answers"]), doc["marginals"][0]["categories"]
    (1.0, 1, [['F'], ['M']])
    """
    if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be a number > 0, got {epsilon!r}")
    if not (isinstance(delta, int | float) and 0 <= delta < 1):
        raise InputError(f"delta must be in [0, 1), got {delta!r}")
    for name in workload.columns():
        if name not in original.columns:
            raise InputError(f"the input has no column {name!r} (named by the workload)")
    dp = _opendp()
    columns: list[np.ndarray] = [
        query_mask(original, q).astype(np.int8).astype(str) for q in workload.queries
    ]
    categories: list[list[tuple[str, ...]]] = []
    for margin in workload.marginals:
        per = [marginal_categories(release, c) for c in margin]
        combos: list[tuple[str, ...]] = [()]
        for labels in per:
            combos = [(*c, label) for c in combos for label in labels]
        index = {combo: i for i, combo in enumerate(combos)}
        keys = zip(*(original[c].map(_text) for c in margin), strict=True)
        columns.append(np.array([str(index.get(tuple(k), -1)) for k in keys]))
        categories.append(combos)
    names = [f"c{i}" for i in range(len(columns))]
    data = "\n".join(",".join(row) for row in zip(*columns, strict=True))
    gaussian = delta > 0
    noise = dp.m.then_gaussian if gaussian else dp.m.then_laplace
    with warnings.catch_warnings():  # OpenDP's vector dataframe API (deprecated for Polars)
        warnings.simplefilter("ignore", DeprecationWarning)
        frame = dp.t.make_split_dataframe(separator=",", col_names=names)

        def measurement(i: int, scale: float) -> Any:
            chain = frame >> dp.t.make_select_column(key=names[i], TOA=str)
            if i < len(workload.queries):
                chain = (chain >> dp.t.then_is_equal("1") >> dp.t.then_cast_default(TOA=int)
                         >> dp.t.then_clamp((0, 1)) >> dp.t.then_sum())  # fmt: skip
            else:
                labels = [str(j) for j in range(len(categories[i - len(workload.queries)]))]
                metric = dp.L2Distance[int] if gaussian else dp.L1Distance[int]
                chain = chain >> dp.t.then_count_by_categories(categories=labels, MO=metric)
            return chain >> noise(scale)

        def composed(scale: float, proxy: bool = False) -> Any:
            # proxy: the first measurement composed len(names) times — the same privacy map
            # (every measurement has sensitivity 1), built once per step of the search
            parts = (
                [measurement(0, scale)] * len(names)
                if proxy
                else [measurement(i, scale) for i in range(len(names))]
            )
            whole = dp.c.make_composition(parts)
            if gaussian:
                whole = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(whole), delta)
            return whole

        budget = (float(epsilon), float(delta)) if gaussian else float(epsilon)
        scale = float(
            dp.binary_search_param(
                lambda s: composed(s, proxy=True),
                d_in=1,
                d_out=budget,
                bounds=_bounds(len(names), float(epsilon), float(delta)),
            )
        )
        meas = composed(scale)
        spent = meas.map(1)  # the real composition's own privacy map: it must meet the budget
        pair = tuple(spent) if gaussian else (spent, 0.0)
        within = pair[0] <= epsilon and pair[1] <= delta
        if not within:  # pragma: no cover - the proxy's map is the composition's
            raise InputError(f"OpenDP states a privacy loss {spent} above the budget {budget}")
        released = meas(data)
    eps_spent, delta_spent = pair
    q = len(workload.queries)
    from importlib.metadata import version

    return {
        "schema": COMPANION_SCHEMA,
        "epsilon": float(eps_spent),
        "delta": float(delta_spent),
        "neighbours": "one person's row added or removed",
        "mechanism": "discrete gaussian (zCDP → (ε, δ))" if gaussian else "discrete laplace",
        "noise_scale": scale,
        "queries": workload.to_dict()["queries"],
        "answers": [int(a) for a in released[:q]],
        "marginals": [
            {
                "columns": list(workload.marginals[j]),
                "categories": [list(c) for c in categories[j]],
                "counts": [int(x) for x in released[q + j][: len(categories[j])]],
            }
            for j in range(len(workload.marginals))
        ],
        "library": f"opendp {version('opendp')}",
        "caveat": CAVEAT,
    }


def companion_path(release_path: str | os.PathLike[str]) -> str:
    """Where the companion of a release is published: ``RELEASE.dp.json``. O(1)."""
    return str(release_path) + COMPANION_SUFFIX


def summary(document: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The manifest's ``dp_companion`` block of a companion document. O(1)."""
    from pathlib import Path

    return {
        "path": Path(path).name,
        "epsilon": document["epsilon"],
        "delta": document["delta"],
        "mechanism": document["mechanism"],
        "queries": len(document["answers"]),
        "marginals": [m["columns"] for m in document["marginals"]],
        "library": document["library"],
        "caveat": CAVEAT,
    }


def median_relative_error(answers: Sequence[float], truth: Sequence[float]) -> float:
    """The median of |answer − truth| / max(truth, 1) over a workload. O(q log q)."""
    a, t = np.asarray(answers, float), np.asarray(truth, float)
    if not len(a):
        return float("nan")
    return float(np.median(np.abs(a - t) / np.maximum(t, 1)))
