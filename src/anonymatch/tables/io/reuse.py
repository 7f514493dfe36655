"""Work shared between a release's verification and its report, within one command.

``anonymize --report-html`` parses its release and builds the compatibility graph to verify it,
then the HTML report parses the same release read back from the file and measures its risk on
the same graph. Within :func:`reuse_parsed_release` both are computed once: each is looked up by
a BLAKE2 digest of its inputs' content (O(n·d)), so a different release or original is never
mistaken for the cached one. Outside the block nothing is cached.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.tables.columns.schema import EncodedQI
    from anonymatch.tables.recode import GeneralizedQI

T = TypeVar("T")

_CACHE: ContextVar[dict[bytes, Any] | None] = ContextVar("anonymatch_reuse", default=None)


@contextmanager
def reuse_parsed_release() -> Iterator[None]:
    """Within the block, ``cells.parse_cells`` and ``verify.attacker_view`` of inputs with the
    same content are computed once. A block inside another shares the outer one's cache.

    Yields
    ------
    None
    """
    if _CACHE.get() is not None:
        yield
        return
    token = _CACHE.set({})
    try:
        yield
    finally:
        _CACHE.reset(token)


def cached(key: Callable[[], bytes | None], compute: Callable[[], T]) -> T:
    """``compute()``, or its earlier result for the same ``key()`` inside
    :func:`reuse_parsed_release` (``key`` None: not cacheable)."""
    cache = _CACHE.get()
    if cache is None:
        return compute()
    digest = key()
    if digest is None:
        return compute()
    if digest not in cache:
        cache[digest] = compute()
    return cache[digest]


def _update(h: Any, array: Any) -> None:
    a = np.ascontiguousarray(array)
    h.update(f"{a.dtype}{a.shape}".encode())
    h.update(a.tobytes())


def _encoded(h: Any, original: EncodedQI) -> None:
    from pandas.util import hash_array

    for array in (
        original.num,
        original.cat,
        original.cat_card,
        original.num_integral,
        original.num_missing,
        original.cat_missing,
    ):
        _update(h, array)
    for domain in original.cat_domains:
        _update(h, hash_array(np.asarray(domain, dtype=object).astype(str)))


def cells_key(frame: pd.DataFrame, qi: EncodedQI) -> bytes | None:
    """Digest of a release's QI text columns and the original's domains (None for typed,
    e.g. Parquet, columns)."""
    from pandas.util import hash_array

    h = hashlib.blake2b(b"cells", digest_size=32)
    for name in qi.names:
        if name not in frame.columns:
            return None
        values = np.asarray(frame[name], dtype=object)
        if len(values) and not isinstance(values[0], str):
            return None
        h.update(name.encode() + b"\0")
        _update(h, hash_array(values))
    _encoded(h, qi)
    return h.digest()


def compatibility_key(published: GeneralizedQI, original: EncodedQI) -> bytes:
    """Digest of published cells and the original's encoded QIs."""
    from anonymatch.tables.recode import cat_nodes

    h = hashlib.blake2b(b"compatibility", digest_size=32)
    for array in (published.num_lo, published.num_hi, published.num_star, published.cat_star):
        _update(h, array)
    for a in range(len(published.cat_sets)):
        held = cat_nodes(published, a)  # hierarchy nodes: their ids, not their leaves
        if held is not None:
            h.update(b"nodes" + held.tree.sha256.encode() + str(id(held.tree)).encode())
            _update(h, held.nodes)
            continue
        sets = published.cat_sets[a]
        for array in (sets.indptr, sets.indices, np.asarray(sets.shape)):
            _update(h, array)
    _encoded(h, original)
    return h.digest()
