"""Set-valued data (transactions, bitmaps): nonreciprocal k-anonymity and ℓ-diversity.

The front of the kind — the same three functions as ``anonymatch.tables``, original first::

    result = anonymatch.sets.anonymize(records, k=5, seed=0)
    result.release          # the SetRelease (base, uncertain items, thresholds, labels)
    anonymatch.sets.verify(records, result.release, k=5).passed
    anonymatch.sets.evaluate(records, result.release).to_dict()

``records`` is a ``Transactions`` (``anonymatch.sets.io.read_transactions``) or any sequence of
item collections. Heavy modules are imported on first call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from anonymatch.core.errors import ArgumentTypeError, InputError
from anonymatch.core.front import keep_functions
from anonymatch.core.params import check_seed, type_name

if TYPE_CHECKING:
    from anonymatch.sets.io import SetRelease, Transactions
    from anonymatch.sets.metrics import SetUtility
    from anonymatch.sets.pipeline import SetAnonymization
    from anonymatch.sets.verify import SetVerificationReport

__all__ = ["anonymize", "evaluate", "verify"]


def _transactions(value: object, labels: Sequence[object] | None, name: str) -> Transactions:
    """``value`` as Transactions: kept as is, or built from a sequence of item collections."""
    from anonymatch.sets.io import Transactions, from_sets

    if isinstance(value, Transactions):
        if labels is not None:
            if len(labels) != value.n:
                raise InputError(f"labels has {len(labels)} entries, {name} {value.n} records")
            return value.with_labels([str(x) for x in labels])
        return value
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ArgumentTypeError(
            f"{name} must be Transactions or a sequence of item collections, got {type_name(value)}"
        )
    for i, record in enumerate(value):
        if isinstance(record, str | bytes) or not hasattr(record, "__iter__"):
            raise ArgumentTypeError(
                f"{name}[{i}] must be a collection of items, got {type_name(record)}"
            )
    if labels is not None and len(labels) != len(value):
        raise InputError(f"labels has {len(labels)} entries, {name} {len(value)} records")
    return from_sets([list(r) for r in value], labels, where=name)


def _release(value: object) -> SetRelease:
    from anonymatch.sets.io import SetRelease
    from anonymatch.sets.pipeline import SetAnonymization

    if isinstance(value, SetAnonymization):
        return value.release
    if not isinstance(value, SetRelease):
        raise ArgumentTypeError(f"release must be a SetRelease, got {type_name(value)}")
    return value


def anonymize(
    data: Transactions | Sequence[Any],
    *,
    k: int | None = None,
    ell: int | None = None,
    labels: Sequence[object] | None = None,
    method: str = "gray-tsp",
    segment: tuple[int, int] = (300, 350),
    seed: int | None = None,
) -> SetAnonymization:
    """Publish set-valued records under k-anonymity or ℓ-diversity by a nonreciprocal graph.

    Records are ordered (Gray code + TSP), joined by a ring graph in which each record is
    compatible with k (or ℓ) published records, and each published record is a bit vote of its
    compatible originals (certain items, uncertain items and an error threshold). The true
    assignment is one of the graph's disjoint assignments chosen uniformly at random. The
    release is checked by the independent verifier before it is returned.

    Parameters
    ----------
    data : Transactions or sequence of item collections
        The original records, e.g. ``[["bread", "milk"], ["beer"], ...]``.
    k : int, optional
        Level of k-anonymity; give exactly one of ``k`` and ``ell``.
    ell : int, optional
        Level of ℓ-diversity on the sensitive labels (needs labels).
    labels : sequence, optional
        One sensitive label per record (replaces the labels of a Transactions).
    method : str, default "gray-tsp"
        ``gray-tsp`` (Gray order improved by TSP), ``gray`` (Gray order only) or ``cahd``
        (CAHD groups, an ℓ-diversity baseline): ``anonymatch.sets.methods.names(command=
        "anonymize-sets")``.
    segment : tuple of int, default (300, 350)
        Segment length bounds of the TSP improvement.
    seed : int, optional
        Seed of the privacy step; None draws OS entropy. Anyone who knows the seed can redo
        the choice of the true assignment.

    Returns
    -------
    SetAnonymization
        ``release``: the SetRelease; ``report``: the JSON-able manifest (error rate,
        verification …); ``assignment``, ``graph``: the hidden truth, for experiments.

    Raises
    ------
    TypeError
        ``data`` is not records.
    InputError
        Bad parameter (both or neither of k and ell, level < 1 or > records, unknown method,
        negative seed, ℓ without labels, empty record…).
    InfeasibleError
        The labels are not ℓ-eligible.
    VerificationError
        The release failed the independent verification (never expected).

    See Also
    --------
    verify : Check a release against the original.
    evaluate : Measure the utility of a release.

    Notes
    -----
    Time O(n log n · b̄) for the Gray order, O(n · s) for the TSP over segments of s records and
    O(n·k·b̄) for the graph, bit voting and verification (b̄ = mean record size); memory
    O(n·k + total items).

    References
    ----------
    .. [1] M. Xue, P. Karras, C. Raïssi, J. Vaidya, K.-L. Tan, "Anonymizing set-valued data
       by nonreciprocal recoding", KDD 2012.

    Examples
    --------
    >>> import anonymatch
    >>> records = [["a", "b"], ["a", "b", "c"], ["a", "c"], ["b", "d"], ["c", "d"], ["d"]]
    >>> result = anonymatch.sets.anonymize(records, k=2, seed=0)
    >>> result.report["verification"]["passed"]
    True
    >>> result.release.n
    6
    """
    from anonymatch.sets.job import SetJob
    from anonymatch.sets.pipeline import run_job

    job = SetJob.build(dict(k=k, ell=ell, method=method, segment=segment, seed=seed))
    return run_job(_transactions(data, labels, "data"), job)


def verify(
    original: Transactions | Sequence[Any],
    release: SetRelease | SetAnonymization,
    *,
    k: int | None = None,
    ell: int | None = None,
    labels: Sequence[object] | None = None,
) -> SetVerificationReport:
    """Check a set-valued release for k-anonymity or ℓ-diversity against the original.

    The verifier reads only the published records and the original sets: original r is
    compatible with published record j iff r agrees with j's certain items up to j's error
    threshold; a k-factor (ℓ-factor with ℓ distinct labels per original) is sought by max-flow.

    Parameters
    ----------
    original : Transactions or sequence of item collections
        The original records.
    release : SetRelease or SetAnonymization
        The published records, or the result of ``anonymize``.
    k : int, optional
        Level of k-anonymity to check; give exactly one of ``k`` and ``ell``.
    ell : int, optional
        Level of ℓ-diversity to check (needs labels on the original).
    labels : sequence, optional
        One sensitive label per original record.

    Returns
    -------
    SetVerificationReport
        ``passed`` (bool), the flow figures and a ``reason``; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` is not records or ``release`` not a SetRelease.
    InputError
        Both or neither of k and ell, or a level < 1.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time O(Σ_j |candidates(j)| · b̄) to find the compatible pairs (inverted item index, never
    n×n) plus the max-flow; memory O(pairs + total items).

    References
    ----------
    .. [1] M. Xue, P. Karras, C. Raïssi, J. Vaidya, K.-L. Tan, "Anonymizing set-valued data
       by nonreciprocal recoding", KDD 2012, §3.

    Examples
    --------
    >>> import anonymatch
    >>> records = [["a", "b"], ["a", "b", "c"], ["a", "c"], ["b", "d"], ["c", "d"], ["d"]]
    >>> result = anonymatch.sets.anonymize(records, k=2, seed=0)
    >>> anonymatch.sets.verify(records, result.release, k=2).passed
    True
    """
    from anonymatch.sets.job import levels
    from anonymatch.sets.verify import verify_sets

    k_, ell_ = levels(k, ell)
    published = _release(release)
    return verify_sets(published, _transactions(original, labels, "original"), k=k_, ell=ell_)


def evaluate(
    original: Transactions | Sequence[Any],
    release: SetRelease | SetAnonymization,
    *,
    queries: int = 500,
    in_size: int = 3,
    ex_size: int = 4,
    seed: int | None = 0,
) -> SetUtility:
    """Utility of a set-valued release: query error and expected error rate.

    The error rate of Xue §5.1 needs each record's true match, which the release hides; this
    reports its expectation over the compatible published records of each original (the exact
    figure is ``anonymize(...).report["error_rate"]``).

    Parameters
    ----------
    original : Transactions or sequence of item collections
        The original records.
    release : SetRelease or SetAnonymization
        The published records, or the result of ``anonymize``.
    queries : int, default 500
        Random count queries of each type.
    in_size : int, default 3
        Items required by a Type I query (records ⊇ In).
    ex_size : int, default 4
        Items excluded by a Type II query (records ∩ Ex = ∅).
    seed : int or None, default 0
        Seed of the random queries (the same queries for every release); None: OS entropy.

    Returns
    -------
    SetUtility
        ``query_error_type1``, ``query_error_type2``, ``expected_error_rate``,
        ``mean_max_errors``, ``mean_uncertain``; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` is not records or ``release`` not a SetRelease.
    InputError
        ``queries``, ``in_size`` or ``ex_size`` < 1, or a negative seed.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time O(q · total items) for q queries plus the compatibility search of ``verify``; memory
    O(q·(in_size + ex_size) + pairs).

    References
    ----------
    .. [1] M. Xue, P. Karras, C. Raïssi, J. Vaidya, K.-L. Tan, "Anonymizing set-valued data
       by nonreciprocal recoding", KDD 2012, §5.

    Examples
    --------
    >>> import anonymatch
    >>> records = [["a", "b"], ["a", "b", "c"], ["a", "c"], ["b", "d"], ["c", "d"], ["d"]]
    >>> result = anonymatch.sets.anonymize(records, k=2, seed=0)
    >>> figures = anonymatch.sets.evaluate(records, result.release, queries=50)
    >>> sorted(figures.to_dict())[:2]
    ['expected_error_rate', 'mean_max_errors']
    >>> 0.0 <= figures.query_error_type1 <= 1.0
    True
    """
    from anonymatch.core.params import integer
    from anonymatch.sets.metrics import set_utility

    published = _release(release)
    t = _transactions(original, None, "original")
    sizes = {"queries": queries, "in_size": in_size, "ex_size": ex_size}
    for name, value in sizes.items():
        integer(value, name)
    return set_utility(t, published, queries, in_size, ex_size, check_seed(seed))


keep_functions(__name__, __all__)  # ``verify`` is also a submodule name
