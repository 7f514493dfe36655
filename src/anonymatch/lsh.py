"""Min-hash ordering of sparse rows for chunked anonymization (Esfandiari et al., App. D).

For every row, 8 independent min-hash values over its set of columns (hash h(c) = the 64-bit
murmur3 finalizer of c XOR a random key: a linear hash (a·c + b) mod p is measurably biased on
consecutive column ids, e.g. 0.43 instead of 0.5 collisions for two sets of Jaccard 0.5);
rows are sorted by the lexicographic order of their min-hashes (shingle sorting, Chierichetti
et al. 2009) and the order is cut into consecutive chunks of about
``chunk_rows`` rows (none shorter), each anonymized on its own. Rows with similar column sets
share their first min-hashes with high probability (P[h_min(A) = h_min(B)] = J(A, B)), so they
land in the same chunk. Empty rows sort last. O(h·nnz + n log n) time, O(h·n) memory.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .order import split_even

EMPTY = np.iinfo(np.int64).max


def mix64(values: np.ndarray, key: np.uint64) -> np.ndarray:
    """murmur3's 64-bit finalizer of ``values ^ key``, as non-negative int64 (a 63-bit hash)."""
    v = values.astype(np.uint64) ^ key
    v ^= v >> np.uint64(33)
    v *= np.uint64(0xFF51AFD7ED558CCD)
    v ^= v >> np.uint64(33)
    v *= np.uint64(0xC4CEB9FE1A85EC53)
    v ^= v >> np.uint64(33)
    return (v >> np.uint64(1)).astype(np.int64)


def minhash_signatures(
    x: sp.csr_array | sp.csr_matrix,
    hashes: int = 8,
    seed: int | np.random.SeedSequence | None = None,
) -> np.ndarray:
    """(n, hashes) int64 min-hash values of the rows' column sets (EMPTY for empty rows)."""
    x = sp.csr_array(x)
    x.eliminate_zeros()
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, np.iinfo(np.int64).max, size=hashes, dtype=np.int64).astype(np.uint64)
    n = x.shape[0]
    out = np.full((n, hashes), EMPTY, np.int64)
    nonempty = np.flatnonzero(np.diff(x.indptr) > 0)
    if nonempty.size == 0:
        return out
    cols = x.indices.astype(np.int64)
    starts = x.indptr[:-1][nonempty]
    for h in range(hashes):
        values = mix64(cols, keys[h])
        out[nonempty, h] = np.minimum.reduceat(values, starts)
    return out


def minhash_order(
    x: sp.csr_array | sp.csr_matrix,
    hashes: int = 8,
    seed: int | np.random.SeedSequence | None = None,
) -> np.ndarray:
    """Row permutation sorting the rows by their min-hash signatures (first hash primary)."""
    sig = minhash_signatures(x, hashes, seed)
    return np.lexsort(tuple(sig[:, h] for h in range(hashes - 1, -1, -1))).astype(np.int64)


def minhash_chunks(
    x: sp.csr_array | sp.csr_matrix,
    chunk_rows: int,
    hashes: int = 8,
    seed: int | np.random.SeedSequence | None = None,
) -> list[np.ndarray]:
    """Row ids of each chunk: consecutive pieces of the min-hash order, ⌊n/chunk_rows⌋ of them
    (one if n < chunk_rows), each of ≥ chunk_rows rows."""
    order = minhash_order(x, hashes, seed)
    return [order[part] for part in split_even(x.shape[0], chunk_rows)]
