"""Downstream accuracy of table releases: train on a release, test on original rows (issue 27).

:func:`learn` trains a logistic regression (or a ridge regression, for ``task="regress"``) and
a gradient-boosted model on each release — its cells featurized by
:class:`~anonymatch.tables.models.features.ReleaseFeatures` — and scores them on original rows,
beside the same models trained on the original (the ceiling) and the majority class or the mean
(the floor).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.tables.models.features import ReleaseFeatures, cell_bounds

MODELS = ("logistic", "gradient_boosting")
REGRESSORS = ("linear", "gradient_boosting")


@dataclass
class LearningReport:
    """Scores of models trained on releases, the original and the floor, on the same test rows.

    ``task`` is ``"classify"`` (accuracy) or ``"regress"`` (R²); ``releases`` holds, per release
    in order, its name and a mapping model → score; ``original`` the same models trained on the
    original training rows; ``floor`` the majority class's accuracy (or 0 for the mean's R²,
    computed: slightly below 0 when the test mean differs from the training one).
    """

    task: str
    target: str
    test_rows: int
    train_rows: int
    test_source: str
    releases: list[dict[str, Any]] = field(default_factory=list)
    original: dict[str, float] = field(default_factory=dict)
    floor: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``releases`` (each ``path`` and ``classify``/``regress``), ``original``,
        ``majority`` (or ``mean`` for a regression)."""
        key = self.task
        return {
            "task": key,
            "target": self.target,
            "test": {"source": self.test_source, "rows": self.test_rows},
            "train_rows": self.train_rows,
            "releases": [{"path": r["path"], key: r["scores"]} for r in self.releases],
            "original": {key: self.original},
            ("majority" if key == "classify" else "mean"): self.floor,
        }


def _models(task: str, seed: int) -> dict[str, Any]:
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.linear_model import LogisticRegression, RidgeCV

    if task == "classify":
        return {
            "logistic": LogisticRegression(max_iter=2000),
            "gradient_boosting": HistGradientBoostingClassifier(random_state=seed),
        }
    return {
        "linear": RidgeCV(),
        "gradient_boosting": HistGradientBoostingRegressor(random_state=seed),
    }


def _pipeline(model: Any, columns: list[str], numeric: list[str], hierarchies: Any) -> Any:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    features = ReleaseFeatures(columns=columns, numeric=numeric, hierarchies=hierarchies)
    return make_pipeline(features, StandardScaler(), model)


def _target(frame: pd.DataFrame, column: str, task: str, where: str) -> np.ndarray:
    if column not in frame.columns:
        raise InputError(f"{where} has no column {column!r}")
    values = frame[column]
    if task == "classify":
        if (
            isinstance(values.dtype, pd.IntervalDtype)
            or values.map(lambda v: isinstance(v, frozenset) and len(v) > 1).any()
        ):
            raise InputError(
                f"column {column!r} of {where} is generalized (a quasi-identifier): "
                "classify a kept column"
            )
        return np.asarray(
            values.map(lambda v: next(iter(v)) if isinstance(v, frozenset) else v).astype(str)
        )
    lo, hi = cell_bounds(values)
    if np.isnan(lo).any():
        raise InputError(f"column {column!r} of {where} has missing or suppressed values")
    return (lo + hi) / 2


def _same_labels(truth: np.ndarray, trained: np.ndarray, where: str) -> None:
    """Raise InputError if the labels a model is trained on are one value only (no classifier
    can be trained), or if the test rows' labels share none with them (``>50K.`` in adult.test
    against ``>50K`` in adult.data, ``1.0`` against ``1``): every accuracy would be 0,
    silently. O(n log n)."""
    labels = np.unique(trained)
    if len(labels) == 1:
        raise InputError(
            f"{where}'s labels are all {labels[0]!r}: a classifier needs at least two labels"
        )
    if len(truth) and not np.isin(truth, labels).any():
        seen = ", ".join(repr(v) for v in np.unique(trained)[:3])
        tested = ", ".join(repr(v) for v in np.unique(truth)[:3])
        raise InputError(
            f"the test table's labels ({tested}) are none of {where}'s ({seen}): "
            "write them the same way"
        )


def _score(task: str, truth: np.ndarray, guess: np.ndarray) -> float:
    if task == "classify":
        return float(np.mean(truth == guess))
    from sklearn.metrics import r2_score

    return float(r2_score(truth, guess))


def idle_cores() -> int:
    """The cores not busy with other work (CPU count minus the 1-minute load average), at
    least 1: the OpenMP threads of the gradient-boosted models. Each OpenMP thread spins while
    it waits, so on a shared, loaded machine more threads than idle cores make a fit an order of
    magnitude slower (Adult: 28 s with 2 threads against 1.6 s with 1 at a load of 4 on 2
    cores). O(1)."""
    import os

    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available on this platform
        return cores
    return max(1, min(cores, cores - round(load)))


def _fit_score(
    pipe: Any, train: pd.DataFrame, y: np.ndarray, test: pd.DataFrame, truth: np.ndarray, task: str
) -> float:
    """Fit ``pipe`` on ``train``/``y`` and score its predictions of ``test`` against ``truth``,
    with at most :func:`idle_cores` OpenMP threads."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=idle_cores(), user_api="openmp"):
        pipe.fit(train, y)
        return _score(task, truth, np.asarray(pipe.predict(test)))


def split(frame: pd.DataFrame, test_size: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A deterministic (train, test) split of ``frame``'s rows by a seeded permutation. O(n)."""
    if not 0 < test_size < 1:
        raise InputError(f"test_size must be between 0 and 1, got {test_size}")
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = len(frame) - max(1, round(test_size * len(frame)))
    return (
        frame.iloc[np.sort(order[:cut])].reset_index(drop=True),
        frame.iloc[np.sort(order[cut:])].reset_index(drop=True),
    )


def learn(
    original: pd.DataFrame,
    releases: Sequence[pd.DataFrame],
    *,
    target: str,
    task: str = "classify",
    test: pd.DataFrame | None = None,
    names: Sequence[str] | None = None,
    numeric: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    hierarchies: Any = None,
    test_size: float = 0.3,
    seed: int = 0,
) -> LearningReport:
    """Train models on each release and on the original; score them on original rows.

    Parameters
    ----------
    original : pandas.DataFrame
        The original table (text or typed values).
    releases : sequence of pandas.DataFrame
        Releases of ``original`` as read by
        :func:`~anonymatch.tables.io.release.read_release` (typed cells).
    target : str
        The column to predict: a kept (non-QI) column of every release.
    task : {"classify", "regress"}
        Accuracy of a logistic regression and a gradient-boosted classifier, or R² of a ridge
        regression and a gradient-boosted regressor.
    test : pandas.DataFrame, optional
        Original rows to test on. Without it the test rows are a held-out part
        (``test_size``, seeded by ``seed``) of ``original``; the original models are then trained
        on the rest — but the releases still saw those rows (they are releases of the whole
        table), so pass a separate test table when you can.
    names : sequence of str, optional
        The releases' names in the report (default ``release 1``, …).
    numeric : sequence of str, optional
        Columns to treat as numbers beyond those typed numeric in the first release.
    exclude : sequence of str
        Columns not used as features (identifiers, say).
    hierarchies : mapping, optional
        Per categorical QI, the :class:`~anonymatch.tables.columns.hierarchy.Hierarchy` of its
        node cells.
    test_size : float
        The held-out share when no ``test`` is given.
    seed : int
        Seeds the split and the gradient-boosted models.

    Returns
    -------
    LearningReport

    Raises
    ------
    anonymatch.core.errors.InputError
        A target missing from a table, a generalized target, a feature column missing from the
        test table, test labels none of which the original (or a release) has, an unknown
        task.

    Notes
    -----
    Features are the release's columns shared with the test table, minus the target and
    ``exclude``. Time: one fit per model and release, O(n·F) for the features, plus the
    models' own cost (L-BFGS iterations, boosting rounds).

    Examples
    --------
    >>> import numpy as np, pandas as pd, anonymatch
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"age": rng.integers(20, 70, 200), "sex": rng.choice(["F", "M"], 200)})
    >>> df["rich"] = np.where(df["age"] > 45, "yes", "no")
    >>> from anonymatch.tables.models.learn import learn
    >>> rep = learn(df, [df], target="rich", seed=1)
    >>> rep.original["logistic"] > 0.9
    True
    """
    if task not in ("classify", "regress"):
        raise InputError(f"task must be 'classify' or 'regress', got {task!r}")
    if not releases:
        raise InputError("give at least one release")
    names = list(names) if names is not None else [f"release {i + 1}" for i in range(len(releases))]
    if target not in original.columns:
        raise InputError(f"the original has no column {target!r}")
    if test is None:
        train, test = split(original, test_size, seed)
        source = f"held-out {test_size:.0%} of the original (seed {seed})"
    else:
        train, source = original, "test table"
    truth = _target(test, target, task, "the test table")
    if task == "classify":  # before any model is trained
        _same_labels(truth, _target(train, target, task, "the original"), "the original")
    drop = {target, *exclude}
    extra = list(numeric or [])
    report = LearningReport(task, target, len(test), len(train), source)
    for name, release in zip(names, releases, strict=True):
        y = _target(release, target, task, f"release {name}")
        if task == "classify":
            _same_labels(truth, y, f"release {name}")
        columns = [c for c in map(str, release.columns) if c not in drop]
        absent = [c for c in columns if c not in test.columns]
        if absent:
            raise InputError(f"the test table has no column {absent[0]!r} (of release {name})")
        scores: dict[str, float] = {}
        for label, model in _models(task, seed).items():
            pipe = _pipeline(model, columns, extra, hierarchies)
            scores[label] = _fit_score(pipe, release, y, test, truth, task)
        report.releases.append({"path": name, "scores": scores})
    # the ceiling: the same models on the original training rows, the same features
    first = releases[0]
    columns = [c for c in map(str, first.columns) if c not in drop]
    numeric_first = [
        c
        for c in columns
        if isinstance(first[c].dtype, pd.IntervalDtype)
        or pd.api.types.is_numeric_dtype(first[c].dtype)
    ]
    y = _target(train, target, task, "the original")
    for label, model in _models(task, seed).items():
        pipe = _pipeline(model, columns, [*extra, *numeric_first], hierarchies)
        report.original[label] = _fit_score(pipe, train, y, test, truth, task)
    if task == "classify":
        values, counts = np.unique(y, return_counts=True)
        report.floor = float(np.mean(truth == values[np.argmax(counts)]))
    else:
        report.floor = _score(task, truth, np.full(len(truth), float(np.mean(y))))
    return report
