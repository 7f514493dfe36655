"""anonymatch: k-anonymous publication by freeform generalization, verified on every release.

Public API::

    release = anonymatch.anonymize(df, k=10, qi=[...], numeric=[...], method="hungarian")
    release.table, release.graph, release.report
    anonymatch.verify(published_df, original_df, k=10, qi=[...], numeric=[...])
    anonymatch.evaluate(published_df, original_df, qi=[...], numeric=[...])
"""

from __future__ import annotations

__version__ = "0.1.0"

from collections.abc import Iterable, Mapping, Sequence  # noqa: E402

import pandas as pd  # noqa: E402

from anonymatch.core.errors import (  # noqa: E402
    AnonymatchError,
    InfeasibleError,
    InputError,
    VerificationError,
)
from anonymatch.sparse.io import read_sparse, write_sparse  # noqa: E402
from anonymatch.sparse.metrics import EdgeMetrics, downstream_accuracy, edge_metrics  # noqa: E402
from anonymatch.sparse.pipeline import SparseRelease, anonymize_sparse  # noqa: E402
from anonymatch.sparse.streamed import anonymize_sparse_stream  # noqa: E402
from anonymatch.sparse.verify import SparseVerificationReport, verify_sparse  # noqa: E402
from anonymatch.tables.metrics import InformationLoss  # noqa: E402
from anonymatch.tables.pipeline import Release, anonymize, evaluate_release, verify_release  # noqa: E402
from anonymatch.tables.schema import DEFAULT_NA_VALUES, Schema  # noqa: E402
from anonymatch.tables.verify import VerificationReport  # noqa: E402


def verify(
    published: pd.DataFrame,
    original: pd.DataFrame,
    k: int,
    qi: Sequence[str],
    numeric: Iterable[str] = (),
    na_values: Iterable[str] = DEFAULT_NA_VALUES,
    drop_missing: bool = False,
) -> VerificationReport:
    """Check a release from the published table and the original QIs (``report.passed``)."""
    return verify_release(
        published, original, k, Schema.build(qi, numeric), na_values, drop_missing
    )


def evaluate(
    published: pd.DataFrame,
    original: pd.DataFrame,
    qi: Sequence[str],
    numeric: Iterable[str] = (),
    weights: Mapping[str, float] | None = None,
    na_values: Iterable[str] = DEFAULT_NA_VALUES,
    drop_missing: bool = False,
) -> InformationLoss:
    """GCP overall and mean NCP per QI of a release (Doka eq. 1–3)."""
    schema = Schema.build(qi, numeric, weights=weights)
    return evaluate_release(published, original, schema, na_values, drop_missing)


__all__ = [
    "AnonymatchError",
    "InfeasibleError",
    "InformationLoss",
    "InputError",
    "Release",
    "VerificationError",
    "VerificationReport",
    "anonymize",
    "evaluate",
    "verify",
    "__version__",
]

__all__ += [
    "EdgeMetrics",
    "SparseRelease",
    "SparseVerificationReport",
    "anonymize_sparse",
    "anonymize_sparse_stream",
    "downstream_accuracy",
    "edge_metrics",
    "read_sparse",
    "verify_sparse",
    "write_sparse",
]
