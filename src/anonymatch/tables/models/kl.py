"""(k,ℓ)-anonymous table releases: anonymize → write cells → verify (Stokes, PSD 2012).

A release is verified from what is published and the original only, before anything is written:
(1) the published cells are a truthful generalization of the original — every original record
is covered by its own published row (a perfect matching; for a global recoding the cells of an
attribute partition its values and the check is a multiset comparison) — and (2) the published
table passes the (k,ℓ) checker, generalized cells counting as their generalized value.

Rows are published in random order (OS entropy unless a seed is given). There is no privacy
step of random assignments here: the guarantee of (k,ℓ)-anonymity is the counting condition,
and every published row carries its own record's sensitive and other columns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.cells import STAR, canonical_cell
from anonymatch.core.counting import AnonymityReport, check_k, check_kl_codes, check_level
from anonymatch.core.errors import InputError
from anonymatch.core.params import accept_keywords, check_seed, column_list, param, require_frame
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.core.view import group_rows
from anonymatch.tables.columns.schema import (
    EncodedQI,
    MissingCodes,
    encode_qi,
)
from anonymatch.tables.io.cells import _parse_numeric_column, format_cells, parse_cells
from anonymatch.tables.job import ReleaseCheck
from anonymatch.tables.methods.kl import generalized_cells, kl_anonymize
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.pipeline import prepare
from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.verify import verify


@dataclass
class KLRelease:
    """A verified (k,ℓ) release: ``table`` (published rows, QI cells as text), ``cells`` (the
    same as arrays), ``qi`` (encoded original QIs), ``report`` (JSON-serializable manifest)."""

    table: pd.DataFrame
    cells: GeneralizedQI
    qi: EncodedQI
    report: dict[str, object] = field(default_factory=dict)


def anonymize_kl(
    data: pd.DataFrame,
    k: int,
    level: int,
    qi: str | Sequence[str],
    *,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
    **columns: Any,
) -> KLRelease:
    """Publish ``data`` (k,ℓ)-anonymous by global generalization (``methods.kl``), verified.

    ``columns``: the other roles and reading options, as ``tables.anonymize`` takes them
    (``numeric``, ``sensitive``, ``identifiers``, ``weights``, ``na_values``,
    ``drop_missing``). Raises InputError (bad parameters: k < 1, ℓ < 1 or ℓ > number of QIs,
    …), InfeasibleError (k > n), VerificationError (the release failed verification; should
    never happen). ``seed`` only fixes the row shuffle. Complexity: see
    ``methods.kl.kl_anonymize``.
    """
    accept_keywords("anonymize_kl", columns, KL_COLUMNS)
    data = require_frame(data)
    check = ReleaseCheck.build(dict(k=k, qi=qi, **columns))
    return kl_release(data, check, level, seed=check_seed(seed), progress=progress)


KL_COLUMNS = ("numeric", "sensitive", "identifiers", "weights", "na_values", "drop_missing")
"""The keywords of :func:`anonymize_kl` beyond k, ℓ and the QIs."""


def kl_release(
    data: pd.DataFrame,
    check: ReleaseCheck,
    level: int,
    *,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> KLRelease:
    """:func:`anonymize_kl` for a validated ``check`` (its k, columns and missing values)."""
    started = time.perf_counter()
    if check.k is None:
        raise InputError(f"missing {param('k')}")
    k, schema = check.k, check.schema
    level = check_level(level, len(schema.qi))
    data, enc, dropped = prepare(data, schema, check.na, check.drop_missing)
    if enc.cat_missing.any() and not enc.num_missing.any():
        # Global recoding publishes no '*': a categorical missing value stays a label of its
        # own here (the adversary knows it), as before missing values were published as '*'.
        labels = data.astype({name: str for name in enc.cat_names})
        enc = encode_qi(labels, schema, MissingCodes(()))
    enc.require_complete("(k,ℓ)-anonymization")
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    rec = kl_anonymize(enc, k, level, progress)
    t_build = time.perf_counter() - t0
    shuffle = rng.permutation(enc.n)
    cells = generalized_cells(rec, enc).take(shuffle)
    text = format_cells(cells, enc)
    columns = {}
    for name in schema.output_columns([str(c) for c in data.columns]):
        columns[name] = text[name] if name in text else data[name].to_numpy()[shuffle]
    table = pd.DataFrame(columns)
    t0 = time.perf_counter()
    truthful, how = verify_generalization(parse_cells(table, enc), enc)
    kl = check_kl(table, k, level, list(schema.qi), [a for a in schema.qi if a in schema.numeric])
    t_verify = time.perf_counter() - t0
    refuse(truthful, how)
    refuse(kl.passed, f"{kl.n_violations} rare combinations")
    loss = information_loss(cells, enc)
    produced = Produced(
        kind="table",
        method="kl-hypergraph",
        parameters=schema.roles(),
        # (k,ℓ) generalization puts no model on a sensitive column: published unprotected,
        # flagged (the default ℓ = 2 of the other table paths has no (k,ℓ) counterpart)
        guarantee={
            "model": "(k,l)-anonymity",
            "k": k,
            "known": level,
            **({"unprotected": list(schema.sensitive)} if schema.sensitive else {}),
        },
        verification={"passed": True, "truthful": how, "kl": kl.to_dict()},
        loss={
            **loss.to_dict(),
            "merges": rec.merges,
            "groups_per_attribute": dict(zip(rec.names, rec.n_groups(), strict=True)),
        },
        seconds={
            "build": t_build,
            "verify": t_verify,
            "wall": time.perf_counter() - started,
        },
        seeded=seed is not None,
        records_in=enc.n + dropped,
        records_out=enc.n,
        input_extra={"dropped_missing": dropped},
    )
    from anonymatch.tables.risk.checks import ReleaseView, release_checks

    published = parse_cells(table, enc)  # the kept columns against the QIs, as anonymize
    report = publish(produced, checks=release_checks("table", "kl", schema.identifiers),
                     shown=ReleaseView.of(data, enc, published, table, schema))  # fmt: skip
    return KLRelease(table, cells, enc, report)


def verify_generalization(cells: GeneralizedQI, qi: EncodedQI) -> tuple[bool, str]:
    """Is every original record covered by its own published row (a perfect matching between
    originals and published rows, each published cell containing the original's value)?

    Fast path for global recodings: when the distinct published cells of every attribute are
    disjoint, each original value lies in exactly one of them, and the check is whether the
    multiset of generalized originals equals the multiset of published rows — O(n·d log n).
    Otherwise the core verifier decides (a 1-factor by max-flow, ``verify.verify`` with k = 1).
    Returns (passed, how it was decided).
    """
    n = qi.n
    if cells.n != n:
        return False, f"{cells.n} published rows for {n} originals"
    orig_cols, pub_cols = [], []
    for a in range(qi.num.shape[1]):
        if cells.num_star[:, a].any():
            return _fallback(cells, qi)
        pairs = np.column_stack([cells.num_lo[:, a], cells.num_hi[:, a]])
        uniq, pub, _ = group_rows(pairs)
        order = np.argsort(uniq[:, 0], kind="stable")
        uniq = uniq[order]
        if np.any(uniq[1:, 0] <= uniq[:-1, 1]):
            return _fallback(cells, qi)  # overlapping ranges: not a global recoding
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        v = qi.num[:, a]
        pos = np.searchsorted(uniq[:, 0], v, side="right") - 1
        inside = (pos >= 0) & (v <= uniq[np.maximum(pos, 0), 1])
        if not inside.all():
            return False, f"a value of {qi.num_names[a]!r} lies in no published range"
        orig_cols.append(pos)
        pub_cols.append(rank[pub.reshape(-1)])
    for a in range(qi.cat.shape[1]):
        if cells.cat_star[:, a].any():
            return _fallback(cells, qi)
        sets = sp.csr_array(cells.cat_sets[a])
        sets.sort_indices()
        keys = [tuple(sets.indices[sets.indptr[j] : sets.indptr[j + 1]].tolist()) for j in range(n)]
        uniq_keys = sorted(set(keys))
        cell_of = {key: i for i, key in enumerate(uniq_keys)}
        owner = np.full(max(sets.shape[1], 1), -1, np.int64)
        for i, key in enumerate(uniq_keys):
            for c in key:
                if owner[c] != -1:
                    return _fallback(cells, qi)  # overlapping sets
                owner[c] = i
        mapped = owner[qi.cat[:, a]]
        if np.any(mapped < 0):
            return False, f"a value of {qi.cat_names[a]!r} lies in no published set"
        orig_cols.append(mapped)
        pub_cols.append(np.array([cell_of[key] for key in keys], np.int64))
    if not orig_cols:
        return True, "no quasi-identifiers"
    o = np.column_stack(orig_cols)
    p = np.column_stack(pub_cols)
    o = o[np.lexsort(o.T[::-1])]
    p = p[np.lexsort(p.T[::-1])]
    if np.array_equal(o, p):
        return True, "global recoding: published rows = generalized originals"
    return False, "the published rows are not the generalized original records"


def _fallback(cells: GeneralizedQI, qi: EncodedQI) -> tuple[bool, str]:
    report = verify(cells, qi, 1)
    return report.passed, f"perfect matching by max-flow: {report.reason}"


# --------------------------------------------------------------------------------------------
# transactions


def _canonical_numeric(column: pd.Series, name: str) -> np.ndarray:
    """One canonical text per numeric cell (value, ``lo..hi`` or ``*``), parsed by the release
    format's own parser (CSV text or typed Parquet cells)."""
    lo, hi, star = _parse_numeric_column(column, name)
    out = np.empty(len(column), object)
    for i, (a, b, s) in enumerate(zip(lo.tolist(), hi.tolist(), star.tolist(), strict=True)):
        if s:
            out[i] = STAR
        else:
            x = str(int(a)) if np.isfinite(a) and a == int(a) else repr(a)  # inf: 1e400
            y = str(int(b)) if np.isfinite(b) and b == int(b) else repr(b)
            out[i] = x if a == b else f"{x}..{y}"
    return out


def encode_cells(
    frame: pd.DataFrame, qi: Sequence[str], numeric: Iterable[str] = ()
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Integer codes (n × d) of the QI cells of a table or a release, every generalized cell
    counted as its generalized value (canonical text), and each column's value labels.
    Numeric columns: ``5`` and ``5..5`` are the same value. O(n·d)."""
    numeric = set(numeric)
    cols, labels = [], []
    for name in qi:
        if name not in frame.columns:
            raise InputError(f"unknown column {name!r}; the input has: {', '.join(frame.columns)}")
        column = frame[name]
        if name in numeric:
            text = _canonical_numeric(column, name)
        else:  # canonicalize each distinct cell text once
            raw_codes, raw_uniques = pd.factorize(column.astype(str))
            canon = np.array([canonical_cell(str(u)) for u in raw_uniques], dtype=object)
            text = canon[raw_codes] if len(raw_codes) else np.array([], dtype=object)
        codes, uniques = pd.factorize(pd.Series(text), sort=True)
        cols.append(codes.astype(np.int64))
        labels.append(np.asarray(uniques, dtype=object))
    n = len(frame)
    return (np.column_stack(cols) if cols else np.empty((n, 0), np.int64)), labels


def check_kl(
    frame: pd.DataFrame,
    k: int,
    level: int,
    qi: Sequence[str],
    numeric: Iterable[str] = (),
    max_report: int = 1000,
) -> AnonymityReport:
    """Is the table (or release) ``frame`` (k,ℓ)-anonymous w.r.t. the attributes ``qi``?

    Complexity: O(Σ_{s≤ℓ} C(d,s) · n log n) worst case, less with pruning.
    Reference: Stokes, "On computational anonymity", PSD 2012 (definition of (k,ℓ)-anonymity).
    """
    frame = require_frame(frame, "frame")
    qi = column_list(qi, "qi")
    numeric = column_list(numeric, "numeric")
    if not qi:
        raise InputError("at least one attribute is required (`qi`)")
    if len(set(qi)) != len(qi):
        raise InputError("an attribute is listed twice in `qi`")
    k = check_k(k)
    level = check_level(level, len(qi))
    codes, labels = encode_cells(frame, qi, numeric)
    return check_kl_codes(codes, labels, qi, k, level, max_report)
