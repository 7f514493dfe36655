"""Graphs: k-anonymity with respect to vertex neighbourhoods (structural equivalence).

The front of the kind — the same three functions as ``anonymatch.tables``, original first::

    result = anonymatch.graphs.anonymize(adjacency, k=3)
    result.release          # the published adjacency (also ``result.adjacency``)
    anonymatch.graphs.verify(adjacency, result.release, k=3).passed
    anonymatch.graphs.evaluate(adjacency, result.release).to_dict()

``adjacency`` is a symmetric 0/1 matrix (scipy sparse or numpy) with a zero diagonal, e.g.
``anonymatch.graphs.io.read_edge_list(path).adjacency``.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

from anonymatch.core.errors import ArgumentTypeError, InputError
from anonymatch.core.front import keep_functions
from anonymatch.core.params import type_name

if TYPE_CHECKING:
    import scipy.sparse as sp

    from anonymatch.graphs.metrics import GraphMetrics
    from anonymatch.graphs.pipeline import GraphAnonymization
    from anonymatch.graphs.verify import GraphAnonymityReport

__all__ = ["anonymize", "evaluate", "verify"]


def _adjacency(value: object, name: str) -> Any:
    """``value`` as a CSR adjacency, checked: square, symmetric, 0/1, no self-loops."""
    import numpy as np
    import scipy.sparse as sp

    from anonymatch.graphs.pipeline import GraphAnonymization

    if isinstance(value, GraphAnonymization):
        return value.adjacency
    if sp.issparse(value) or (isinstance(value, np.ndarray) and value.ndim == 2):
        a = sp.csr_array(value)
    else:
        raise ArgumentTypeError(
            f"{name} must be a scipy sparse matrix or a 2-D numpy array, got {type_name(value)}"
        )
    a.sum_duplicates()
    a.eliminate_zeros()
    if a.shape[0] != a.shape[1]:
        raise InputError(f"{name} must be square, got shape {a.shape}")
    if a.nnz and not np.all(a.data == 1):
        raise InputError(f"{name} must be a 0/1 adjacency matrix")
    if a.diagonal().any():
        raise InputError(f"{name} has self-loops (non-zero diagonal)")
    if (a != a.T).nnz:
        raise InputError(f"{name} must be symmetric (an undirected graph)")
    a.sort_indices()
    return a


def anonymize(
    data: sp.spmatrix | sp.sparray | Any,
    *,
    k: int,
    closed: bool = False,
    iterations: int = 10,
) -> GraphAnonymization:
    """Publish a graph that is k-anonymous with respect to open (or closed) neighbourhoods.

    Vertices are clustered into groups of ≥ k with similar adjacency rows; each group becomes
    an independent set (open) or a clique (closed), and two groups are joined completely iff
    most of their original pairs were edges. Every vertex then shares its neighbourhood with
    ≥ k − 1 others. The release is checked by the verifier before it is returned.

    Parameters
    ----------
    data : scipy sparse matrix or 2-D numpy array
        Symmetric 0/1 adjacency matrix with a zero diagonal.
    k : int
        Anonymity level, 1 ≤ k ≤ vertices.
    closed : bool, default False
        Anonymize closed neighbourhoods N(v) ∪ {v} instead of open ones.
    iterations : int, default 10
        Rounds of k-means-style refinement of the groups (≥ 0).

    Returns
    -------
    GraphAnonymization
        ``release`` (alias ``adjacency``): the published CSR adjacency, vertices keeping their
        indices; ``report``: the JSON-able manifest; ``groups``; ``metrics``;
        ``verification``.

    Raises
    ------
    TypeError
        ``data`` is not a matrix.
    InputError
        k < 1, iterations < 0, or the matrix is not a simple undirected graph.
    InfeasibleError
        k is larger than the number of vertices.
    VerificationError
        The release failed the verifier (never expected).

    See Also
    --------
    verify : Check a release against the original.
    evaluate : Measure the utility of a release.

    Notes
    -----
    Time O(iterations · (m + n·g) + n²/k + m·d̄) for n vertices, m edges, g groups and mean
    degree d̄; memory O(m + g² + edges written). Vertices keep their indices: relabel them
    randomly before publishing if the indices identify people (the CLI does so by default).
    The procedure has no random step.

    References
    ----------
    .. [1] K. Stokes, V. Torra, "Reidentification and k-anonymity: a model for disclosure
       risk in graphs", Soft Computing 2012; K. Stokes, "Graph k-anonymity through k-means
       and as modular decomposition", NORDSEC 2013.

    Examples
    --------
    >>> import numpy as np
    >>> import anonymatch
    >>> star = np.zeros((6, 6), dtype=int)
    >>> star[0, 1:] = star[1:, 0] = 1
    >>> result = anonymatch.graphs.anonymize(star, k=2)
    >>> result.report["verification"]["passed"]
    True
    >>> anonymatch.graphs.verify(star, result.release, k=2).passed
    True
    """
    from anonymatch.core.release import refuse
    from anonymatch.graphs.job import GraphJob
    from anonymatch.graphs.pipeline import run_job
    from anonymatch.graphs.verify import check_graph

    started = time.perf_counter()
    adj = _adjacency(data, "data")
    job = GraphJob.build(dict(k=k, closed=closed, iterations=iterations))
    result = run_job(adj, job)
    check = check_graph(result.adjacency, job.k, job.closed)
    refuse(check.passed, check.reason)
    result.verification = check
    result.report = {
        "kind": "graphs",
        "method": job.method.name,
        "k": job.k,
        "closed": job.closed,
        "iterations": job.iterations,
        "vertices": int(adj.shape[0]),
        "groups": int(result.groups.max()) + 1 if adj.shape[0] else 0,
        "metrics": result.metrics,
        "verification": check.to_dict(),
        "seconds": {"total": time.perf_counter() - started},
    }
    return result


def verify(
    original: sp.spmatrix | sp.sparray | Any,
    release: sp.spmatrix | sp.sparray | GraphAnonymization | Any,
    *,
    k: int,
    closed: bool = False,
) -> GraphAnonymityReport:
    """Check that a published graph is k-anonymous with respect to vertex neighbourhoods.

    Vertices with equal open (closed) neighbourhoods form classes; the release passes iff it
    has as many vertices as the original and every class has ≥ k vertices. Only the release's
    structure is examined; the original fixes the vertex count.

    Parameters
    ----------
    original : scipy sparse matrix or 2-D numpy array
        The original adjacency.
    release : scipy sparse matrix, 2-D numpy array or GraphAnonymization
        The published adjacency, or the result of ``anonymize``.
    k : int
        Anonymity level to check.
    closed : bool, default False
        Check closed neighbourhoods N(v) ∪ {v} instead of open ones.

    Returns
    -------
    GraphAnonymityReport
        ``passed`` (bool), the class sizes and a ``reason``; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` or ``release`` is not a matrix.
    InputError
        k < 1, or a matrix that is not a simple undirected graph.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time O(n + m) expected (neighbourhoods hashed, buckets confirmed exactly); memory O(n + m).

    References
    ----------
    .. [1] K. Stokes, "Graph k-anonymity through k-means and as modular decomposition",
       NORDSEC 2013 (k-anonymity w.r.t. neighbourhoods; twin classes).

    Examples
    --------
    >>> import numpy as np
    >>> import anonymatch
    >>> square = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]])
    >>> anonymatch.graphs.verify(square, square, k=2).passed
    True
    >>> anonymatch.graphs.verify(square, square, k=3).passed
    False
    """
    from anonymatch.core.params import integer
    from anonymatch.graphs.verify import check_graph

    n = int(_adjacency(original, "original").shape[0])
    published = _adjacency(release, "release")
    report = check_graph(published, integer(k, "k"), closed)
    if published.shape[0] != n:
        reason = f"the release has {published.shape[0]} vertices, the original {n}"
        return dataclasses.replace(report, passed=False, reason=reason)
    return report


def evaluate(
    original: sp.spmatrix | sp.sparray | Any,
    release: sp.spmatrix | sp.sparray | GraphAnonymization | Any,
) -> GraphMetrics:
    """Utility of a published graph: edge-set Jaccard, edges added/removed, degree distances.

    Both graphs must be on the same vertex indices (as ``anonymize`` returns them). The degree
    distributions are compared by the earth mover's distance and the total variation.

    Parameters
    ----------
    original : scipy sparse matrix or 2-D numpy array
        The original adjacency.
    release : scipy sparse matrix, 2-D numpy array or GraphAnonymization
        The published adjacency on the same vertex indices, or the result of ``anonymize``.

    Returns
    -------
    GraphMetrics
        ``jaccard``, ``edges_added``, ``edges_removed``, ``degree_emd``, ``degree_tv`` and the
        edge counts and mean degrees; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` or ``release`` is not a matrix.
    InputError
        A matrix that is not a simple undirected graph, or different vertex counts.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time O(m log m), memory O(n + m).

    References
    ----------
    .. [1] K. Stokes, "Graph k-anonymity through k-means and as modular decomposition",
       NORDSEC 2013.

    Examples
    --------
    >>> import numpy as np
    >>> import anonymatch
    >>> path = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    >>> figures = anonymatch.graphs.evaluate(path, path)
    >>> figures.jaccard, figures.edges_added, figures.edges_removed
    (1.0, 0, 0)
    """
    from anonymatch.graphs.metrics import GraphMetrics, graph_metrics

    before = _adjacency(original, "original")
    after = _adjacency(release, "release")
    if before.shape != after.shape:
        raise InputError(
            f"the release has {after.shape[0]} vertices, the original {before.shape[0]}"
        )
    return GraphMetrics.from_figures(graph_metrics(before, after))


keep_functions(__name__, __all__)  # ``verify`` is also a submodule name
