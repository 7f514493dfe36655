"""k^m-anonymous transaction releases: anonymize → write items → verify (Terrovitis et al. 2008;
the hypergraph algorithm of Stokes' slides §2 applied to itemsets).

A release is verified from what is published and the original only, before anything is written:
(1) the published item groups are a truthful generalization of the original — every original
transaction is covered by its own published row — and (2) the published transactions pass the
k^m checker (``core.counting.check_km``), a generalized item counting as its group.

Rows are published in random order (OS entropy unless a seed is given).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from anonymatch.core.cells import split_cell
from anonymatch.core.counting import check_k, check_km
from anonymatch.core.errors import ArgumentTypeError, InputError
from anonymatch.core.params import check_seed, type_name
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.sets.methods.km import group_labels, item_ncp, km_anonymize, transactions_matrix

# --------------------------------------------------------------------------------------------
# transactions


@dataclass
class KMRelease:
    """A verified k^m release: ``transactions`` (lists of generalized item labels, in published
    order), ``report`` (manifest)."""

    transactions: list[list[str]]
    report: dict[str, object] = field(default_factory=dict)

    def jsonl(self) -> str:
        return "".join(json.dumps({"items": t}) + "\n" for t in self.transactions)


KM_FORMATS = ("auto", "dat", "jsonl", "basket", "long")


def sniff_km_format(path: str) -> str:
    """The format ``auto`` stands for: ``jsonl`` by the extension (``.jsonl``/``.json``), else
    ``dat`` — unless the file is a CSV (``.csv``/``.tsv`` or a first line holding ``,``, ``;``
    or a tab), which is never read as FIMI transactions: InputError naming `fmt`. O(one line).
    """
    name = str(path).lower()
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            first = next((line for line in fh if line.strip()), "").rstrip("\r\n")
    except FileNotFoundError:
        raise InputError(f"input file not found: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    if name.endswith((".csv", ".tsv")) or any(c in first for c in ",;\t"):
        shown = first if len(first) <= 40 else first[:37] + "..."
        raise InputError(
            f"{path} looks like a CSV (first line {shown!r}), not FIMI transactions; give `fmt` "
            "long (one (record, item) row each, with a header) or basket (one record a line)"
        )
    return "dat"


def read_transactions(
    path: str,
    fmt: str = "auto",
    *,
    item_sep: str = ",",
    id_column: str | None = None,
    item_column: str | None = None,
    dedupe: bool = False,
) -> tuple[sp.csr_array, np.ndarray]:
    """Transactions from a FIMI ``.dat`` file, a k^m release (JSON Lines with ``items``; a
    generalized item ``a|b`` is one item), a basket CSV (items separated by ``item_sep``) or a
    long CSV (one (record, item) row each: ``id_column``, ``item_column``, ``dedupe`` as
    ``sets.io.read_long``). Empty transactions are kept (FIMI, JSON Lines). ``fmt`` ``auto``
    decides by :func:`sniff_km_format` (a CSV is refused, never read as FIMI). O(file size)."""
    from anonymatch.sets.methods.km import read_fimi

    if fmt not in KM_FORMATS:
        raise InputError(f"unknown format {fmt!r} (expected one of {', '.join(KM_FORMATS)})")
    if fmt == "auto":
        fmt = sniff_km_format(path)
    if fmt in ("basket", "long"):
        from anonymatch.sets import io

        t = (
            io.read_basket(path, item_sep)
            if fmt == "basket"
            else io.read_long(path, id_column, item_column, dedupe=dedupe)
        )
        m = sp.csr_array(t.matrix)
        items = np.asarray(t.items, dtype=object)
        sets = [items[m.indices[m.indptr[r] : m.indptr[r + 1]]].tolist() for r in range(t.n)]
        return transactions_matrix([[str(x) for x in r] for r in sets])
    if fmt == "jsonl":
        rows: list[list[str]] = []
        try:
            with open(path, encoding="utf-8") as fh:
                for number, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                        items = obj["items"]
                        if not isinstance(items, list):
                            raise TypeError
                    except (ValueError, KeyError, TypeError, RecursionError):
                        raise InputError(
                            f"{path} line {number}: expected a JSON object with a list 'items'"
                        ) from None
                    rows.append([_canonical_item(str(x)) for x in items])
        except FileNotFoundError:
            raise InputError(f"input file not found: {path}") from None
        return transactions_matrix(rows)
    return read_fimi(path)


def _canonical_item(label: str) -> str:
    from anonymatch.core.cells import canonical_cell

    return canonical_cell(label)


def anonymize_km(
    matrix: sp.csr_array,
    labels: np.ndarray,
    k: int,
    m: int,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> KMRelease:
    """Publish set-valued data k^m-anonymous by global item grouping, verified.

    Raises InputError / InfeasibleError / VerificationError as ``anonymize_kl``.
    Complexity: see ``methods.kl.km_anonymize``.
    """
    started = time.perf_counter()
    if not sp.issparse(matrix) or matrix.ndim != 2:
        raise ArgumentTypeError(
            f"matrix must be a 2-D scipy sparse matrix, got {type_name(matrix)}"
        )
    seed = check_seed(seed)
    k = check_k(k)
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:
        raise InputError(f"m must be a positive integer, got {m!r}")
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    grouping = km_anonymize(matrix, k, int(m), progress)
    t_build = time.perf_counter() - t0
    text = group_labels(labels, grouping.group_of)
    mat = sp.csr_array(matrix)
    shuffle = rng.permutation(mat.shape[0])
    published = []
    for r in shuffle.tolist():
        items = text[mat.indices[mat.indptr[r] : mat.indptr[r + 1]]]
        published.append(sorted(set(items.tolist())))
    t0 = time.perf_counter()
    ok, how = verify_item_generalization(mat, labels, published)
    pub_matrix, pub_labels = transactions_matrix(published)
    check = check_km(pub_matrix, pub_labels, k, int(m))
    t_verify = time.perf_counter() - t0
    refuse(ok, how)
    refuse(check.passed, f"{check.n_violations} rare itemsets")
    produced = Produced(
        kind="transactions",
        method="km-hypergraph",
        parameters={},
        guarantee={"model": "k^m-anonymity", "k": k, "m": int(m)},
        verification={"passed": True, "truthful": how, "km": check.to_dict()},
        loss={
            "item_ncp": item_ncp(mat, grouping.group_of),
            "item_groups": int(len(np.unique(grouping.group_of))),
            "merges": grouping.merges,
        },
        seconds={
            "build": t_build,
            "verify": t_verify,
            "wall": time.perf_counter() - started,
        },
        seeded=seed is not None,
        records_in=int(mat.shape[0]),
        records_out=len(published),
        input_extra={"items": int(mat.shape[1])},
    )
    report = publish(produced)
    return KMRelease(published, report)


def verify_item_generalization(
    matrix: sp.csr_array, labels: np.ndarray, published: list[list[str]]
) -> tuple[bool, str]:
    """Is ``published`` the original transactions with items replaced by disjoint item groups
    (a global generalization), as a multiset? O(nnz log nnz)."""
    if len(published) != matrix.shape[0]:
        return False, f"{len(published)} published transactions for {matrix.shape[0]} originals"
    index = {str(x): i for i, x in enumerate(labels.tolist())}
    owner = np.full(len(labels), -1, np.int64)
    group_ids: dict[str, int] = {}
    for t in published:
        for g in t:
            if g in group_ids:
                continue
            gid = len(group_ids)
            group_ids[g] = gid
            for item in split_cell(g):
                i = index.get(item)
                if i is None:
                    return False, f"published item {item!r} is not in the original"
                if owner[i] != -1:
                    return False, f"item {item!r} belongs to two published groups"
                owner[i] = gid
    mat = sp.csr_array(matrix)
    orig = []
    for r in range(mat.shape[0]):
        groups = owner[mat.indices[mat.indptr[r] : mat.indptr[r + 1]]]
        if np.any(groups < 0):
            return False, "an original item is in no published group"
        orig.append(tuple(sorted(set(groups.tolist()))))
    pub = [tuple(sorted(group_ids[g] for g in t)) for t in published]
    if sorted(orig) == sorted(pub):
        return True, "global item grouping: published = generalized originals"
    return False, "the published transactions are not the generalized originals"
