"""Sparse binary matrices (users × items, bipartite graphs): smooth k-anonymity.

The front of the kind — the same three functions as ``anonymatch.tables``, original first::

    result = anonymatch.sparse.anonymize(x, k=10, seed=0)
    result.release          # the published CSR matrix (also ``result.published``)
    anonymatch.sparse.verify(x, result.release, k=10).passed
    anonymatch.sparse.evaluate(x, result.release).to_dict()

Heavy modules (numba kernels, Dask) are imported on first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anonymatch.core.errors import ArgumentTypeError, InputError
from anonymatch.core.front import keep_functions
from anonymatch.core.params import type_name

if TYPE_CHECKING:
    import scipy.sparse as sp

    from anonymatch.sparse.metrics import EdgeMetrics
    from anonymatch.sparse.pipeline import SparseRelease
    from anonymatch.sparse.verify import SparseVerificationReport

__all__ = ["anonymize", "evaluate", "verify"]


def _matrix(value: object, name: str) -> Any:
    """``value`` as a CSR array if it is a scipy sparse matrix or a 2-D numpy array."""
    import numpy as np
    import scipy.sparse as sp

    from anonymatch.sparse.pipeline import SparseRelease

    if isinstance(value, SparseRelease):
        return value.published
    if sp.issparse(value):
        matrix = sp.csr_array(value)
    elif isinstance(value, np.ndarray):
        if value.ndim != 2:
            raise InputError(f"{name} must be 2-D, got {value.ndim} dimension(s)")
        matrix = sp.csr_array(value)
    else:
        raise ArgumentTypeError(
            f"{name} must be a scipy sparse matrix or a 2-D numpy array, got {type_name(value)}"
        )
    if matrix.nnz and not np.isin(matrix.data, (0, 1)).all():
        raise InputError(f"{name} must be binary (0/1 entries)")
    return matrix


def anonymize(
    data: sp.spmatrix | sp.sparray | Any,
    *,
    k: int,
    method: str = "smooth",
    beta: float = 2.0,
    runs: int = 10,
    chunk_rows: int | None = None,
    executor: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    seed: int | None = None,
    epsilon: float | None = None,
    dp: str = "edge",
    refine: bool = True,
    progress: bool = False,
) -> SparseRelease:
    """Publish a binary matrix under smooth k-anonymity (or a baseline), verified.

    Rows are clustered into groups of ≥ k similar rows (facility location, per min-hash chunk);
    every row of a group publishes the group's majority vote (``smooth``) or intersection
    (``nonsmooth``). Row i of the release stays user i. The verifier checks the release before
    it is returned.

    Parameters
    ----------
    data : scipy sparse matrix or 2-D numpy array
        The original binary matrix (rows = users, columns = items).
    k : int
        Anonymity level (smallest class of identical published rows), 1 ≤ k ≤ rows.
    method : str, default "smooth"
        ``smooth`` (majority vote: smooth k-anonymity), ``nonsmooth`` (intersection:
        k-anonymity by suppression), ``mondrian`` (binary Mondrian) or ``rr`` (randomized
        response, ε-DP; nothing to verify from the data): ``anonymatch.sparse.methods.names()``.
    beta : float, default 2.0
        Facility-location cost parameter (> 1).
    runs : int, default 10
        Independent clustering runs per chunk; the cheapest is kept.
    chunk_rows : int, optional
        Rows per min-hash chunk (≥ 2k); default 100,000.
    executor : str, optional
        ``inline``, ``threads``, ``processes`` or ``dask`` for the chunks (None: inline for one
        chunk, Dask otherwise). The release does not depend on it.
    scheduler : str, optional
        Address of a Dask scheduler.
    workers : int, optional
        Local workers.
    seed : int, optional
        Seed of every random step; None draws OS entropy.
    epsilon : float, optional
        Privacy budget of ``rr`` (needed by it, refused by the other methods).
    dp : str, default "edge"
        DP level of ``rr``: ``edge`` or ``node``.
    refine : bool, default True
        Min-hash order with the support refinement key (else the paper's plain order).
    progress : bool, default False
        Show a progress bar on stderr.

    Returns
    -------
    SparseRelease
        ``release`` (alias ``published``): the published CSR matrix; ``report``: the JSON-able
        manifest (utility, verification); ``labels``: the cluster of every row.

    Raises
    ------
    TypeError
        ``data`` is not a sparse matrix or 2-D array.
    InputError
        Bad parameter (unknown method, k < 1 or > rows, beta ≤ 1, negative seed…), or a
        non-binary matrix.
    VerificationError
        The release failed the independent verification (never expected).

    See Also
    --------
    verify : Check a release against the original.
    evaluate : Measure the utility of a release.

    Notes
    -----
    Time O(runs · Σ_chunks C²·d̄) for chunks of C rows of mean support d̄ (facility location
    inside a chunk) plus O(nnz·h) for the min-hash order; memory O(nnz + C²) per worker.

    References
    ----------
    .. [1] A. Esfandiari, V. Mirrokni, et al., "Smooth anonymity for sparse graphs"
       (smooth k-anonymity by facility-location clustering and majority vote), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import anonymatch
    >>> x = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 0, 0],
    ...               [0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 0]])
    >>> result = anonymatch.sparse.anonymize(x, k=3, seed=0)
    >>> result.report["verification"]["passed"]
    True
    >>> result.release.shape
    (6, 4)
    """
    from anonymatch.sparse.job import SparseJob
    from anonymatch.sparse.pipeline import run_job

    x = _matrix(data, "data")
    job = SparseJob.build(
        dict(
            k=k,
            method=method,
            beta=beta,
            runs=runs,
            chunk_rows=chunk_rows,
            executor=executor,
            scheduler=scheduler,
            workers=workers,
            seed=seed,
            epsilon=epsilon,
            dp=dp,
            refine=refine,
            progress=progress,
        ),
    )
    return run_job(x, job)


def verify(
    original: sp.spmatrix | sp.sparray | Any,
    release: sp.spmatrix | sp.sparray | SparseRelease | Any,
    *,
    k: int,
    rule: str = "smooth",
) -> SparseVerificationReport:
    """Check that a published binary matrix is (smooth) k-anonymous.

    Published rows are grouped into classes of identical rows; every class must have ≥ k rows,
    and every published 1 must be supported by the original rows of its class (by a majority
    for ``smooth``, by all of them for ``nonsmooth``).

    Parameters
    ----------
    original : scipy sparse matrix or 2-D numpy array
        The original binary matrix.
    release : scipy sparse matrix, 2-D numpy array or SparseRelease
        The published matrix (row i = user i), or the result of ``anonymize``.
    k : int
        Anonymity level to check.
    rule : str, default "smooth"
        ``smooth`` (majority support) or ``nonsmooth`` (unanimous support).

    Returns
    -------
    SparseVerificationReport
        ``passed`` (bool), class figures and a ``reason``; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` or ``release`` is not a matrix.
    InputError
        k < 1, an unknown rule or a non-binary matrix.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time O(nnz log nnz) (rows hashed into classes, then column counts per class); memory
    O(nnz).

    References
    ----------
    .. [1] A. Esfandiari, V. Mirrokni, et al., "Smooth anonymity for sparse graphs", 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import anonymatch
    >>> x = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0], [0, 1, 1]])
    >>> anonymatch.sparse.verify(x, x, k=2).passed   # two rows are unique
    False
    >>> majority = np.array([[1, 1, 0], [1, 1, 0], [1, 1, 0], [1, 1, 0]])
    >>> anonymatch.sparse.verify(x, majority, k=2).passed
    True
    """
    from anonymatch.core.params import choice, integer
    from anonymatch.sparse.methods import rules
    from anonymatch.sparse.verify import verify_sparse

    choice(rule, "rule", rules())
    x = _matrix(original, "original")
    p = _matrix(release, "release")
    return verify_sparse(p, x, integer(k, "k"), rule)


def evaluate(
    original: sp.spmatrix | sp.sparray | Any,
    release: sp.spmatrix | sp.sparray | SparseRelease | Any,
) -> EdgeMetrics:
    """Utility of a published binary matrix: Jaccard similarity, suppressed and created ones.

    Both matrices are read as sets of (row, column) ones on the same rows and columns; the
    figures are normalised by the original's number of ones.

    Parameters
    ----------
    original : scipy sparse matrix or 2-D numpy array
        The original binary matrix.
    release : scipy sparse matrix, 2-D numpy array or SparseRelease
        The published matrix, or the result of ``anonymize``.

    Returns
    -------
    EdgeMetrics
        ``jaccard``, ``suppressed`` and ``created`` (fractions of the original ones) and the
        edge counts; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` or ``release`` is not a matrix.
    InputError
        A non-binary matrix.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time and memory O(nnz).

    References
    ----------
    .. [1] A. Esfandiari, V. Mirrokni, et al., "Smooth anonymity for sparse graphs", 2022
       (Jaccard similarity of the edge sets as the utility measure).

    Examples
    --------
    >>> import numpy as np
    >>> import anonymatch
    >>> x = np.array([[1, 1, 0], [0, 1, 1]])
    >>> figures = anonymatch.sparse.evaluate(x, np.array([[1, 0, 0], [0, 1, 1]]))
    >>> figures.edges_common, figures.edges_original
    (3, 4)
    >>> anonymatch.sparse.evaluate(x, x).jaccard
    1.0
    """
    from anonymatch.sparse.metrics import edge_metrics

    return edge_metrics(_matrix(original, "original"), _matrix(release, "release"))


keep_functions(__name__, __all__)  # ``verify`` is also a submodule name
