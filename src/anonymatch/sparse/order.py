"""Min-hash ordering of sparse rows for chunked anonymization (Esfandiari et al., App. D).

For every row, 8 independent min-hash values over its set of columns (hash h(c) = the 64-bit
murmur3 finalizer of c XOR a random key: a linear hash (a·c + b) mod p is measurably biased on
consecutive column ids, e.g. 0.43 instead of 0.5 collisions for two sets of Jaccard 0.5);
rows are sorted by the lexicographic order of their min-hashes (shingle sorting, Chierichetti
et al. 2009) and the order is cut into consecutive chunks of about
``chunk_rows`` rows (none shorter), each anonymized on its own. Rows with similar column sets
share their first min-hashes with high probability (P[h_min(A) = h_min(B)] = J(A, B)), so they
land in the same chunk. Empty rows sort last. O(h·nnz + n log n) time, O(h·n) memory.

Refinement (default; ``refine=False`` gives the paper's plain order). Sorting by the first
min-hash only keeps together the rows that share the single column of smallest hash: a user with
~17 interests, some of them off its community's, lands in the bucket of a random one of them, so
a community of similar users is scattered over many buckets and hence over many chunks
(measured on the scale generator, 200,000 rows in chunks of 20,000: a user finds 50 of its 200
community mates in its chunk, against 20 for random chunks; Jaccard 22.8 % chunked against
34.2 % unchunked). The refinement puts one sort key in front of the 8 min-hashes: every row is
keyed by the column of its own with the largest *excess support* over its 8 min-hash buckets,
Σ_h [count of the column among the rows of its h-th bucket − |bucket|·df(column)/n] (the
bucket's defining column and columns held by one row of the bucket excepted): the column most
over-represented among the rows that collide with it, which for most members of a community is
the same favourite column, so the community becomes contiguous (200,000 rows: 131 of 200 mates
per chunk; 2,000,000 rows in chunks of 100,000: 120 against 45). Ties go to the smallest column
hash, so a row without support keys on a min-hash of its own columns. A community still
spreads over a few keys (its top favourites), so in a second stage the rows sharing a key form
a group, each group points to the column held by at least half of it with the largest excess
count (when that column is itself a key), and the groups linked by these pointers (connected
components) are sorted together: 178 of 200 mates at 200,000 rows, 160 at 2,000,000 (largest
linked group 64,038 rows, below a chunk). Cost: two passes over the
edges per hash, O(h·nnz) time, O(n·h + pairs + nnz) memory (pairs ≤ nnz: the distinct
(bucket, column) pairs of one hash; the nnz edge scores can live on disk).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from anonymatch.core.runner import split_even

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


# A shard: (offset of its first row, a loader returning its rows as a canonical 0/1 CSR array).
# The whole pipeline reads the matrix shard by shard, so that the streaming path (Parquet input
# routed to row-range shards on disk) and the in-memory path compute the same keys.
Shard = tuple[int, Callable[[], sp.csr_array]]
SHARD_ROWS = 1 << 18


def hash_keys(
    hashes: int, seed: int | np.random.SeedSequence | None
) -> tuple[np.ndarray, np.uint64]:
    """The ``hashes`` min-hash keys and the key of the refinement's column hash (drawn last)."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, np.iinfo(np.int64).max, size=hashes, dtype=np.int64).astype(np.uint64)
    column_key = np.uint64(rng.integers(0, np.iinfo(np.int64).max, dtype=np.int64))
    return keys, column_key


def memory_shards(x: sp.csr_array, rows: int = SHARD_ROWS) -> list[Shard]:
    """Row-range shards of an in-memory matrix (slices taken when loaded)."""
    n = x.shape[0]

    def loader(start: int) -> Callable[[], sp.csr_array]:
        return lambda: sp.csr_array(x[start : min(start + rows, n)])

    return [(s, loader(s)) for s in range(0, n, rows)] or [(0, lambda: x)]


def _block_signatures(x: sp.csr_array, keys: np.ndarray) -> np.ndarray:
    out = np.full((x.shape[0], keys.size), EMPTY, np.int64)
    nonempty = np.flatnonzero(np.diff(x.indptr) > 0)
    if nonempty.size == 0:
        return out
    cols = x.indices.astype(np.int64)
    starts = x.indptr[:-1][nonempty]
    for h in range(keys.size):
        out[nonempty, h] = np.minimum.reduceat(mix64(cols, keys[h]), starts)
    return out


def minhash_signatures(
    x: sp.csr_array | sp.csr_matrix,
    hashes: int = 8,
    seed: int | np.random.SeedSequence | None = None,
) -> np.ndarray:
    """(n, hashes) int64 min-hash values of the rows' column sets (EMPTY for empty rows)."""
    x = sp.csr_array(x)
    x.eliminate_zeros()
    return _block_signatures(x, hash_keys(hashes, seed)[0])


def shard_signatures(shards: Sequence[Shard], n: int, keys: np.ndarray) -> np.ndarray:
    """Min-hash signatures of all rows, shard by shard. O(h·nnz) time, O(h·n) memory."""
    out = np.full((n, keys.size), EMPTY, np.int64)
    for offset, load in shards:
        block = load()
        out[offset : offset + block.shape[0]] = _block_signatures(block, keys)
    return out


def _edges(block: sp.csr_array, offset: int) -> tuple[np.ndarray, np.ndarray]:
    rows = offset + np.repeat(np.arange(block.shape[0], dtype=np.int64), np.diff(block.indptr))
    return rows, block.indices.astype(np.int64)


def support_keys(
    shards: Sequence[Shard],
    n: int,
    m: int,
    sig: np.ndarray,
    keys: np.ndarray,
    column_key: np.uint64,
    scratch: Path | None = None,
) -> np.ndarray:
    """The refinement key of every row (see the module docstring): the hash of its column with
    the largest excess support over its min-hash buckets. Edge scores are kept per shard, in
    memory or as ``.npy`` files in ``scratch``. O(h·nnz) time."""
    colhash_all = None if m > 1 << 24 else mix64(np.arange(m, dtype=np.int64), column_key)

    def colhash(c: np.ndarray) -> np.ndarray:
        return colhash_all[c] if colhash_all is not None else mix64(c, column_key)

    df = np.zeros(m, np.int64)
    for _, load in shards:
        block = load()
        df += np.bincount(block.indices, minlength=m)
    held: list[np.ndarray] = []

    def get_score(s: int, size: int) -> np.ndarray:
        if scratch is None:
            if s == len(held):
                held.append(np.zeros(size))
            return held[s]
        path = scratch / f"support-{s:06d}.npy"
        return np.load(path) if path.exists() else np.zeros(size)

    def put_score(s: int, score: np.ndarray) -> None:
        if scratch is not None:
            np.save(scratch / f"support-{s:06d}.npy", score)

    for h in range(sig.shape[1]):
        values, bucket = np.unique(sig[:, h], return_inverse=True)
        bucket = bucket.ravel().astype(np.int64)
        size = np.bincount(bucket, minlength=values.size)
        size[values == EMPTY] = 0  # empty rows form no bucket
        # pass 1: (bucket, column) counts over buckets of ≥ 2 rows, defining column excepted
        pairs: list[np.ndarray] = []
        counts: list[np.ndarray] = []
        for offset, load in shards:
            rows, cols = _edges(load(), offset)
            b = bucket[rows]
            ok = (size[b] >= 2) & (mix64(cols, keys[h]) != sig[rows, h])
            pair, count = np.unique(b[ok] * m + cols[ok], return_counts=True)
            keep = count >= 2 if len(shards) == 1 else np.ones(pair.size, bool)
            pairs.append(pair[keep])
            counts.append(count[keep])
        pair = np.concatenate(pairs)
        count = np.concatenate(counts)
        del pairs, counts
        if len(shards) > 1:
            pair, inverse = np.unique(pair, return_inverse=True)
            count = np.bincount(inverse.ravel(), weights=count, minlength=pair.size)
            keep = count >= 2
            pair, count = pair[keep], count[keep].astype(np.int64)
        if pair.size == 0:
            continue
        # pass 2: every edge (u, c) gains count(bucket of u, c) − |bucket|·df(c)/n
        for s, (offset, load) in enumerate(shards):
            rows, cols = _edges(load(), offset)
            score = get_score(s, rows.size)
            q = bucket[rows] * m + cols
            pos = np.minimum(np.searchsorted(pair, q), pair.size - 1)
            hit = (pair[pos] == q) & (mix64(cols, keys[h]) != sig[rows, h])
            expected = size[bucket[rows[hit]]] * df[cols[hit]] / max(1, n)
            score[hit] += count[pos[hit]] - expected
            put_score(s, score)
    out = np.full(n, EMPTY, np.int64)
    for s, (offset, load) in enumerate(shards):
        rows, cols = _edges(load(), offset)
        if rows.size == 0:
            continue
        score = get_score(s, rows.size)
        ch = colhash(cols)
        order = np.lexsort((ch, -score, rows))
        first = order[np.concatenate([[True], rows[order][1:] != rows[order][:-1]])]
        out[rows[first]] = ch[first]
    return out


def group_keys(
    shards: Sequence[Shard], n: int, m: int, key: np.ndarray, column_key: np.uint64
) -> np.ndarray:
    """Second stage of the refinement: the rows sharing a key form a group; every group points
    to the column (other than its key) held by at least half of it with the largest excess
    count, when that column is itself a group's key; the groups linked this way (connected
    components of the pointer graph) share the returned key (the smallest key hash among them).
    O(nnz + g) time for g groups."""
    from scipy.sparse.csgraph import connected_components

    kv, kid = np.unique(key, return_inverse=True)
    kid = kid.ravel().astype(np.int64)
    groups = kv.size
    gsize = np.bincount(kid, minlength=groups)
    df = np.zeros(m, np.int64)
    pairs: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for offset, load in shards:
        rows, cols = _edges(load(), offset)
        df += np.bincount(cols, minlength=m)
        pair, count = np.unique(kid[rows] * m + cols, return_counts=True)
        pairs.append(pair)
        counts.append(count)
    pair = np.concatenate(pairs)
    count = np.concatenate(counts)
    del pairs, counts
    if len(shards) > 1:
        pair, inverse = np.unique(pair, return_inverse=True)
        count = np.bincount(inverse.ravel(), weights=count, minlength=pair.size)
    pg, pc = pair // m, pair % m
    ch = mix64(pc, column_key)
    ok = (ch != kv[pg]) & (2 * count >= gsize[pg])
    excess = count - gsize[pg] * df[pc] / max(1, n)
    order = np.lexsort((ch, -excess, pg))
    order = order[ok[order]]
    if order.size == 0:
        return key.copy()
    first = order[np.concatenate([[True], pg[order][1:] != pg[order][:-1]])]
    source, target = pg[first], ch[first]
    pos = np.minimum(np.searchsorted(kv, target), groups - 1)
    link = kv[pos] == target
    graph = sp.coo_array(
        (np.ones(int(link.sum())), (source[link], pos[link])), shape=(groups, groups)
    )
    _, comp = connected_components(graph, directed=False)
    comp_key = np.full(int(comp.max()) + 1, EMPTY, np.int64)
    np.minimum.at(comp_key, comp, kv)
    return comp_key[comp][kid]


def shard_order(
    shards: Sequence[Shard],
    n: int,
    m: int,
    hashes: int = 8,
    seed: int | np.random.SeedSequence | None = None,
    refine: bool = True,
    scratch: Path | None = None,
) -> np.ndarray:
    """Row permutation: by the group key and the support key (if ``refine``), then
    lexicographically by the ``hashes`` min-hashes (first hash primary); empty rows last."""
    keys, column_key = hash_keys(hashes, seed)
    sig = shard_signatures(shards, n, keys)
    sort_keys = [sig[:, h] for h in range(hashes - 1, -1, -1)]
    if refine:
        key = support_keys(shards, n, m, sig, keys, column_key, scratch)
        sort_keys.append(key)
        sort_keys.append(group_keys(shards, n, m, key, column_key))
    return np.lexsort(tuple(sort_keys)).astype(np.int64)


def minhash_order(
    x: sp.csr_array | sp.csr_matrix,
    hashes: int = 8,
    seed: int | np.random.SeedSequence | None = None,
    refine: bool = True,
) -> np.ndarray:
    """Row permutation of an in-memory matrix (see ``shard_order``)."""
    from anonymatch.sparse.io import as_binary_csr

    x = as_binary_csr(x)
    return shard_order(memory_shards(x), x.shape[0], x.shape[1], hashes, seed, refine)


def minhash_chunks(
    x: sp.csr_array | sp.csr_matrix,
    chunk_rows: int,
    hashes: int = 8,
    seed: int | np.random.SeedSequence | None = None,
    refine: bool = True,
) -> list[np.ndarray]:
    """Row ids of each chunk: consecutive pieces of the min-hash order, ⌊n/chunk_rows⌋ of them
    (one if n < chunk_rows), each of ≥ chunk_rows rows."""
    order = minhash_order(x, hashes, seed, refine)
    return [order[part] for part in split_even(x.shape[0], chunk_rows)]
