"""Features of a release for a learner: the analyst's side of a freeform release (issue 27).

:class:`ReleaseFeatures` is a scikit-learn transformer turning the typed cells of
:func:`anonymatch.tables.io.release.read_release` — ranges, value sets, hierarchy nodes and
suppressed cells — into a numeric matrix, and exact values (the original rows of a test table)
into the same columns, so that a model trained on a release can be tested on original rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from anonymatch.core.cells import NODE_MARK
from anonymatch.core.errors import InputError

if TYPE_CHECKING:
    from anonymatch.tables.columns.hierarchy import Hierarchy


def _is_missing(cell: object) -> bool:
    if cell is None or cell is pd.NA:
        return True
    return isinstance(cell, float) and np.isnan(cell)


def cell_bounds(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) float arrays of a numeric column: ranges, or exact numbers (lo = hi).

    Accepts an interval column of a read release, numbers, text numbers and text ranges
    (``40..45``); a suppressed or missing cell is NaN on both sides. O(n).
    """
    if isinstance(column.dtype, pd.IntervalDtype):
        array = column.array
        return np.asarray(array.left, float), np.asarray(array.right, float)
    if pd.api.types.is_numeric_dtype(column.dtype):
        values = column.to_numpy(float, na_value=np.nan)
        return values, values.copy()
    lo = np.full(len(column), np.nan)
    hi = np.full(len(column), np.nan)
    for i, cell in enumerate(column):
        if _is_missing(cell):
            continue
        if isinstance(cell, pd.Interval):
            lo[i], hi[i] = float(cell.left), float(cell.right)
            continue
        text = str(cell).strip()
        if text == "*":
            continue
        a, sep, b = text.partition("..")
        try:
            lo[i] = float(a)
            hi[i] = float(b) if sep else lo[i]
        except ValueError:
            raise InputError(
                f"column {column.name!r}: {text!r} (row {i + 1}) is neither a number nor a range"
            ) from None
    return lo, hi


def _cell_labels(cell: object) -> frozenset[str] | None:
    """The labels of a categorical cell; None for a suppressed or missing one."""
    if _is_missing(cell):
        return None
    if isinstance(cell, frozenset | set | list | tuple):
        return frozenset(str(v) for v in cell)
    text = str(cell)
    return None if text == "*" else frozenset([text])


def distinct_labels(values: pd.Series) -> tuple[np.ndarray, list[frozenset[str]]]:
    """Codes of the rows into their distinct label sets (−1: suppressed or missing) and those
    sets, in order of first appearance. Each distinct cell is read once: O(n) hashing plus
    O(distinct cells) parsing."""
    try:
        raw_codes, raw = pd.factorize(values.astype(object), use_na_sentinel=True)
    except TypeError:  # unhashable cells (lists): read every row
        cells = [_cell_labels(c) for c in values]
        codes, uniques = pd.factorize(pd.Series(cells, dtype=object), use_na_sentinel=True)
        return np.asarray(codes), list(uniques)
    labels = pd.Series([_cell_labels(c) for c in raw], dtype=object)
    label_codes, uniques = pd.factorize(labels, use_na_sentinel=True)
    lookup = np.append(np.asarray(label_codes, dtype=np.int64), -1)  # raw −1 → −1
    return lookup[np.asarray(raw_codes)], list(uniques)


class ReleaseFeatures(TransformerMixin, BaseEstimator):
    """Featurize a table release (or original rows) for a scikit-learn model.

    A numeric column becomes two features, the midpoint and the width of each cell's range
    (an exact value: itself and 0); a categorical column becomes a fractional one-hot over its
    leaves — a value set of s labels puts 1/s on each, a hierarchy node ``~label`` spreads 1
    evenly over the leaves under it, an exact value is a plain one-hot. A suppressed cell
    (``*``, NA) is replaced by the prior: the column's marginal in the fitted release (the
    mean midpoint and the column's full span as width for a numeric one; the average
    fractional one-hot for a categorical one).

    Parameters
    ----------
    columns : sequence of str, optional
        The columns to featurize, in order; default every column seen in ``fit``.
    numeric : sequence of str, optional
        Columns to treat as numeric beyond those detected in ``fit`` (interval or numeric
        dtype).
    hierarchies : mapping of str to Hierarchy, optional
        Per categorical column, the hierarchy whose leaves a node cell ``~label`` stands for
        (and whose leaves form the column's domain). Without one a node is a label of its own.

    Attributes
    ----------
    columns_ : list of str
        The featurized columns.
    numeric_ : list of str
        The numeric ones among them.
    domains_ : dict of str to list of str
        The leaves of each categorical column (sorted), the one-hot's columns.
    prior_ : dict of str to numpy.ndarray
        Each column's prior: (midpoint, width) for a numeric one, the marginal over the leaves
        for a categorical one.

    Notes
    -----
    Time O(n·d + u·L) for ``fit`` and ``transform``, n rows, d columns, u distinct cells of a
    categorical column and L its leaves (cells are featurized once per distinct value and
    gathered); memory O(n·F) for the F output features (a dense array).

    References
    ----------
    Doka, K., Xue, M., Tsoumakos, D., Karras, P. "k-Anonymization by Freeform
    Generalization". ASIACCS 2015 (the release cells).

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.tables.models.features import ReleaseFeatures
    >>> rel = pd.DataFrame({"age": ["30..40", "30..40", "*"],
    ...                     "sex": [frozenset("FM"), frozenset("F"), frozenset("M")]})
    >>> f = ReleaseFeatures(numeric=["age"]).fit(rel)
    >>> f.get_feature_names_out().tolist()
    ['age_mid', 'age_width', 'sex=F', 'sex=M']
    >>> f.transform(pd.DataFrame({"age": [33], "sex": ["M"]})).tolist()
    [[33.0, 0.0, 0.0, 1.0]]
    """

    def __init__(
        self,
        columns: Sequence[str] | None = None,
        numeric: Sequence[str] | None = None,
        hierarchies: Mapping[str, Hierarchy] | None = None,
    ) -> None:
        self.columns = columns
        self.numeric = numeric
        self.hierarchies = hierarchies

    # -- fitting -------------------------------------------------------------------------

    def _frame(self, X: Any) -> pd.DataFrame:
        if not isinstance(X, pd.DataFrame):
            raise InputError("ReleaseFeatures needs a pandas DataFrame (a release or a table)")
        return X

    def _expand(self, column: str, labels: frozenset[str]) -> frozenset[str]:
        tree = (self.hierarchies or {}).get(column)
        if tree is None or not any(x.startswith(NODE_MARK) for x in labels):
            return labels
        out: set[str] = set()
        for label in labels:
            if label.startswith(NODE_MARK):
                node = tree.node(label[len(NODE_MARK) :])
                out.update(str(x) for x in tree.leaves[tree.node_leaves[[node]].indices])
            else:
                out.add(label)
        return frozenset(out)

    def _distinct(self, column: str, values: pd.Series) -> tuple[np.ndarray, list[Any]]:
        """Codes of the rows into their distinct cells (−1: suppressed) and those cells."""
        codes, uniques = distinct_labels(values)
        return codes, [self._expand(column, u) for u in uniques]

    def fit(self, X: pd.DataFrame, y: Any = None) -> ReleaseFeatures:
        """Learn the columns, their kinds, the leaves and the priors from a release. O(n·d)."""
        X = self._frame(X)
        columns = list(self.columns) if self.columns is not None else [str(c) for c in X.columns]
        missing = [c for c in columns if c not in X.columns]
        if missing:
            raise InputError(f"the table has no column {missing[0]!r}")
        extra = set(self.numeric or ())
        self.columns_ = columns
        self.numeric_ = [
            c
            for c in columns
            if c in extra
            or isinstance(X[c].dtype, pd.IntervalDtype)
            or (pd.api.types.is_numeric_dtype(X[c].dtype) and not pd.api.types.is_bool_dtype(X[c]))
        ]
        self.domains_: dict[str, list[str]] = {}
        self.prior_: dict[str, np.ndarray] = {}
        for c in columns:
            if c in self.numeric_:
                lo, hi = cell_bounds(X[c])
                ok = ~np.isnan(lo)
                if ok.any():
                    mid = float(np.mean((lo[ok] + hi[ok]) / 2))
                    span = float(np.max(hi[ok]) - np.min(lo[ok]))
                else:
                    mid, span = 0.0, 0.0
                self.prior_[c] = np.array([mid, span])
                continue
            codes, cells = self._distinct(c, X[c])
            tree = (self.hierarchies or {}).get(c)
            if tree is not None:
                leaves = sorted(str(x) for x in tree.leaves)
            else:
                leaves = sorted(set().union(*cells)) if cells else []
            self.domains_[c] = leaves
            onehot = self._onehot(c, cells, with_prior=False)
            counts = np.bincount(codes[codes >= 0], minlength=len(cells)).astype(float)
            total = counts @ onehot if len(cells) else np.zeros(len(leaves))
            mass = total.sum()
            self.prior_[c] = (
                total / mass if mass > 0 else np.full(len(leaves), 1 / max(len(leaves), 1))
            )
        self.n_features_in_ = len(columns)
        self.feature_names_in_ = np.asarray(columns, dtype=object)
        return self

    def _onehot(self, column: str, cells: list[Any], with_prior: bool = True) -> np.ndarray:
        """(len(cells) × leaves) fractional one-hot of distinct cells; a cell of no known leaf
        gets the prior (or zeros while fitting)."""
        leaves = self.domains_[column]
        index = {x: j for j, x in enumerate(leaves)}
        out = np.zeros((len(cells), len(leaves)))
        for i, cell in enumerate(cells):
            hits = [index[x] for x in cell if x in index]
            if hits:
                out[i, hits] = 1.0 / len(hits)
            elif with_prior:
                out[i] = self.prior_[column]
        return out

    # -- transforming --------------------------------------------------------------------

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        """Featurize a release or original rows into the fitted columns. O(n·F)."""
        X = self._frame(X)
        missing = [c for c in self.columns_ if c not in X.columns]
        if missing:
            raise InputError(f"the table has no column {missing[0]!r}")
        blocks: list[np.ndarray] = []
        for c in self.columns_:
            if c in self.numeric_:
                lo, hi = cell_bounds(X[c])
                mid, width = (lo + hi) / 2, hi - lo
                gone = np.isnan(mid)
                mid[gone], width[gone] = self.prior_[c]
                blocks.append(np.column_stack([mid, width]))
                continue
            codes, cells = self._distinct(c, X[c])
            table = np.vstack([self._onehot(c, cells), self.prior_[c][None, :]])
            blocks.append(table[np.where(codes >= 0, codes, len(cells))])
        if not blocks:
            return np.zeros((len(X), 0))
        return np.hstack(blocks)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """``NAME_mid``, ``NAME_width`` for a numeric column; ``NAME=LEAF`` per leaf."""
        names: list[str] = []
        for c in self.columns_:
            if c in self.numeric_:
                names += [f"{c}_mid", f"{c}_width"]
            else:
                names += [f"{c}={x}" for x in self.domains_[c]]
        return np.asarray(names, dtype=object)
