"""(k,ℓ)-anonymity as a criterion, and (k,ℓ)-anonymous table releases (Stokes, PSD 2012).

:class:`KLAnonymity` is the model, whole: its parameters (``k``, shared with k-anonymity, and
``known``, the ℓ attributes the adversary may know) declared once as
:class:`~anonymatch.core.criteria.Parameter` data — the ``-k``/``--known`` flags of
``anonymize-kl`` and ``check-kl``, the job file's ``[model] known`` key and the front's keywords
derive from them (``tables.models.KL_CRITERIA``) —, ``describe`` (the manifest's
``guarantee.model``, ``k``, ``known``), ``claimed_in`` (read back by ``verify --manifest`` and
``report``) and ``check``, the verifier every path runs.

A release is verified from what is published and the original only, before anything is written:
(1) the published cells are a truthful generalization of the original — every original record
is covered by its own published row (a perfect matching; for a global recoding the cells of an
attribute partition its values and the check is a multiset comparison) — and (2) the published
table passes the (k,ℓ) checker, generalized cells counting as their generalized value.

Rows are published in random order (OS entropy unless a seed is given). There is no privacy
step of random assignments here: the guarantee of (k,ℓ)-anonymity is the counting condition,
and every published row carries its own record's sensitive and other columns.

The module is light (the command line reads the parameters at start-up, the job file's schema
too): numpy, pandas and the table machinery are imported where they run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from anonymatch.core.criteria import Criterion, Parameter, Verdict
from anonymatch.core.errors import InputError
from anonymatch.core.params import accept_keywords, check_seed, column_list, param, require_frame
from anonymatch.tables.models.levels import K
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from anonymatch.core.counting import AnonymityReport
    from anonymatch.tables.columns.schema import EncodedQI, MissingCodes, Schema
    from anonymatch.tables.job import ReleaseCheck
    from anonymatch.tables.recode import GeneralizedQI

KNOWN = Parameter(
    name="known",
    kind="integer",
    metavar="L",
    help="Attributes the adversary may know (the ℓ of (k,ℓ)-anonymity).",
)
"""ℓ of (k,ℓ)-anonymity: ``--known`` (``--l`` is ℓ-diversity everywhere else)."""

MODEL = "(k,l)-anonymity"
"""The manifest's ``guarantee.model`` of a (k,ℓ) release."""


@dataclass(frozen=True)
class KLView:
    """What a (k,ℓ) claim is checked on: the release as published (``table``, its QI cells as
    text or typed Parquet cells), the same cells parsed against the original
    (``cells``), the original's encoded QIs (``original``), and the QI columns, numeric ones
    apart (their order is the report's)."""

    table: pd.DataFrame
    cells: GeneralizedQI
    original: EncodedQI
    qi: tuple[str, ...]
    numeric: tuple[str, ...]


@dataclass(frozen=True)
class KLAnonymity(Criterion):
    """(k,ℓ)-anonymity: every combination of at most ``known`` (ℓ) published QI values occurs
    in no row or in at least ``k`` rows, and the release is a truthful generalization of the
    original (Stokes, PSD 2012, Definition 1).

    It is the release's level (``level``: a release claims exactly one), so its claim is the
    manifest's ``guarantee`` itself (``model``, ``k``, ``known``, as :class:`KAnonymity`'s),
    and its name is that of the key only it claims (``known``); its figures are
    ``verification.truthful`` and ``verification.kl``.

    Only ``anonymize-kl`` (``kl_release``) enforces it and ``check-kl``, ``verify --manifest``
    and ``report`` check it; ``anonymize`` and ``verify`` take no ``--known``. Why: the guarantee
    is a counting condition on a *global* recoding (every value of an attribute generalized
    the same way in every row), which only the kl-hypergraph algorithm produces; the methods of
    ``anonymize`` publish freeform (per-record) cells whose guarantee is a k-factor of the
    compatibility graph, and none of its other parts — the sensitive models (ℓ-diversity by
    default on a named sensitive column), the population criteria, suppression, per-record
    levels, the streamed path — has a (k,ℓ) counterpart: ``anonymize --known`` would take one
    method and refuse nearly every other flag of the command, a second command under one
    name. ``verify`` checks a k-factor; ``check-kl`` is the (k,ℓ) check and ``verify
    --manifest`` re-checks a (k,ℓ) manifest's claim through this criterion.

    Reference: K. Stokes, "On computational anonymity", PSD 2012.
    """

    k: int
    known: int
    name: ClassVar[str] = "known"
    title: ClassVar[str] = "(k,ℓ)-anonymity"
    parameters: ClassVar[tuple[Parameter, ...]] = (K, KNOWN)
    level: ClassVar[bool] = True
    reference: ClassVar[str] = "Stokes, PSD 2012"

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> KLAnonymity:
        """Both parameters are needed: InputError ``missing --known`` (or ``-k``)."""
        for p in cls.parameters:
            if values.get(p.name) is None:
                raise InputError(f"missing {param(p.name)}")
        return cls(int(values["k"]), int(values["known"]))  # type: ignore[call-overload]

    @classmethod
    def build(cls, values: Mapping[str, object]) -> KLAnonymity:
        """The criterion from its parameters' values (``k``, ``known``), each checked by its
        :class:`Parameter`; InputError naming a missing or bad one. O(1)."""
        from anonymatch.core.criteria import Registry

        built = Registry(cls).build(values)
        return built[0] if built else cls.from_values(values)  # type: ignore[return-value]

    def describe(self) -> dict[str, Any]:
        """The manifest's ``guarantee`` keys: ``model``, ``k`` and ``known``."""
        return {"model": MODEL, "k": self.k, "known": self.known}

    @classmethod
    def claimed_in(
        cls, guarantee: Mapping[str, Any], roles: Mapping[str, Any]
    ) -> dict[str, object]:
        """``k`` and ``known`` of a release whose ``guarantee.model`` is (k,ℓ)-anonymity."""
        if guarantee.get("model") != MODEL:
            return {}
        return {"k": guarantee.get("k"), "known": guarantee.get("known")}

    def check(self, view: KLView) -> Verdict:
        """A truthful generalization (:func:`verify_generalization`) whose published table is
        (k,ℓ)-anonymous (:func:`check_kl`); figures ``truthful`` (how the first was decided)
        and ``kl`` (the checker's report). InputError when ``known`` exceeds the number of
        QIs. O(n·d log n) for a global recoding (a max-flow otherwise) plus
        O(Σ_{s≤ℓ} C(d,s)·n log n)."""
        truthful, how = verify_generalization(view.cells, view.original)
        kl = check_kl(view.table, self.k, self.known, view.qi, view.numeric)
        if not truthful:
            reason = how
        elif not kl.passed:
            reason = f"{kl.n_violations} rare combinations"
        else:
            reason = "truthful generalization; no rare combination of ≤ ℓ values"
        return Verdict(truthful and kl.passed, reason, {"truthful": how, "kl": kl.to_dict()}, kl)


def kl_view(
    original: pd.DataFrame,
    release: pd.DataFrame,
    schema: Schema,
    na: MissingCodes,
    drop_missing: bool,
) -> KLView:
    """The view of a release against its original, as :func:`kl_release` built it (rows with a
    missing QI dropped when asked; a categorical missing value a label of its own when no
    numeric QI has one). InputError when the files do not fit each other. O(n·d)."""
    from anonymatch.tables.io.cells import parse_cells

    _, enc, _ = kl_encoded(original, schema, na, drop_missing)
    cells = parse_cells(release, enc)
    numeric = tuple(a for a in schema.qi if a in schema.numeric)
    return KLView(release, cells, enc, tuple(schema.qi), numeric)


def recheck_claim(
    claims: Mapping[str, object],
    original: pd.DataFrame,
    release: pd.DataFrame,
    schema: Schema,
    na: MissingCodes,
    drop_missing: bool,
) -> tuple[KLAnonymity, Verdict]:
    """A manifest's (k,ℓ) claim (``claims``: ``k``, ``known``) re-checked on the files, as
    ``verify --manifest`` and ``report`` do: no identifier column of ``schema`` published, and
    :meth:`KLAnonymity.check` on :func:`kl_view`. InputError for a claim that is no valid
    criterion (``known`` above the number of QIs, a missing one). O(that of the check)."""
    criterion = KLAnonymity.build(claims)
    verdict = criterion.check(kl_view(original, release, schema, na, drop_missing))
    shown = [c for c in schema.identifiers if c in set(map(str, release.columns))]
    if shown:  # an identifier is never published, whatever the QIs show
        reason = f"the identifier column {shown[0]!r} is published"
        verdict = Verdict(False, reason, verdict.figures, verdict.detail)
    return criterion, verdict


def kl_encoded(
    data: pd.DataFrame, schema: Schema, na: MissingCodes, drop_missing: bool
) -> tuple[pd.DataFrame, EncodedQI, int]:
    """``data`` prepared for (k,ℓ) (``pipeline.prepare``), its encoded QIs and the rows
    dropped. Global recoding publishes no '*': a categorical missing value stays a label of its
    own (the adversary knows it), as before missing values were published as '*'. O(n·d)."""
    from anonymatch.tables.columns.schema import MissingCodes, encode_qi
    from anonymatch.tables.pipeline import prepare

    data, enc, dropped = prepare(data, schema, na, drop_missing)
    if enc.cat_missing.any() and not enc.num_missing.any():
        labels = data.astype({name: str for name in enc.cat_names})
        enc = encode_qi(labels, schema, MissingCodes(()))
    enc.require_complete("(k,ℓ)-anonymization")
    return data, enc, dropped


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
    known: int,
    qi: str | Sequence[str],
    *,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
    **columns: Any,
) -> KLRelease:
    """Publish ``data`` (k,ℓ)-anonymous by global generalization (``methods.kl``), verified.

    ``k`` and ``known`` (ℓ, the attributes the adversary may know) are :class:`KLAnonymity`'s
    parameters. ``columns``: the other roles and reading options, as ``tables.anonymize``
    takes them (``numeric``, ``sensitive``, ``identifiers``, ``weights``, ``na_values``,
    ``drop_missing``), and the release checks' options (``risk.leakcheck.CHECK_OPTIONS``:
    ``strict=True`` refuses a release whose kept columns leak, ``LeakRefused``, nothing
    returned). Raises InputError (bad parameters: k < 1, ℓ < 1 or ℓ > number of QIs, …;
    a leak under ``strict``), InfeasibleError (k > n), VerificationError (the release failed
    verification; should never happen). ``seed`` only fixes the row shuffle. Complexity: see
    ``methods.kl.kl_anonymize``.
    """
    from anonymatch.tables.job import ReleaseCheck

    accept_keywords("anonymize_kl", columns, KL_COLUMNS)
    data = require_frame(data)
    criterion = KLAnonymity.build({"k": k, "known": known})
    check = ReleaseCheck.build(dict(qi=qi, **columns))
    return kl_release(data, check, criterion, seed=check_seed(seed), progress=progress)


KL_COLUMNS = (
    "numeric", "sensitive", "identifiers", "weights", "na_values", "drop_missing",
    *CHECK_OPTIONS.defaults(),
)  # fmt: skip
"""The keywords of :func:`anonymize_kl` beyond k, ℓ and the QIs (the release checks' options
among them: ``strict``)."""


def kl_release(
    data: pd.DataFrame,
    check: ReleaseCheck,
    criterion: KLAnonymity,
    *,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> KLRelease:
    """:func:`anonymize_kl` for a validated ``check`` (its columns and missing values) and
    ``criterion``: the release is verified by the criterion's :meth:`KLAnonymity.check`, and
    the manifest states its claim (:meth:`KLAnonymity.describe`) and figures."""
    import numpy as np
    import pandas as pd

    from anonymatch.core.counting import check_level
    from anonymatch.core.release import Produced, publish, refuse
    from anonymatch.tables.io.cells import format_cells, parse_cells
    from anonymatch.tables.methods.kl import generalized_cells, kl_anonymize
    from anonymatch.tables.metrics import information_loss
    from anonymatch.tables.risk.checks import ReleaseView, release_checks

    started = time.perf_counter()
    k, schema = criterion.k, check.schema
    level = check_level(criterion.known, len(schema.qi))
    data, enc, dropped = kl_encoded(data, schema, check.na, check.drop_missing)
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
    published = parse_cells(table, enc)  # what an attacker reads: verified, and leakage's input
    numeric = tuple(a for a in schema.qi if a in schema.numeric)
    verdict = criterion.check(KLView(table, published, enc, tuple(schema.qi), numeric))
    t_verify = time.perf_counter() - t0
    refuse(verdict.passed, verdict.reason)
    loss = information_loss(cells, enc)
    produced = Produced(
        kind="table",
        method="kl-hypergraph",
        parameters=schema.roles(),
        # (k,ℓ) generalization puts no model on a sensitive column: published unprotected,
        # flagged (the default ℓ = 2 of the other table paths has no (k,ℓ) counterpart)
        guarantee={
            **criterion.describe(),
            **({"unprotected": list(schema.sensitive)} if schema.sensitive else {}),
        },
        verification={"passed": verdict.passed, **verdict.figures},
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
    checks = release_checks("table", "kl", schema.identifiers, check.strict)  # strict: refused
    report = publish(
        produced, checks=checks, shown=ReleaseView.of(data, enc, published, table, schema)
    )
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
    import numpy as np
    import scipy.sparse as sp

    from anonymatch.core.view import group_rows

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
    from anonymatch.tables.verify import verify

    report = verify(cells, qi, 1)
    return report.passed, f"perfect matching by max-flow: {report.reason}"


# --------------------------------------------------------------------------------------------
# transactions


def _canonical_numeric(column: pd.Series, name: str) -> np.ndarray:
    """One canonical text per numeric cell (value, ``lo..hi`` or ``*``), parsed by the release
    format's own parser (CSV text or typed Parquet cells)."""
    import numpy as np

    from anonymatch.core.cells import STAR
    from anonymatch.tables.io.cells import _parse_numeric_column

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
    import numpy as np
    import pandas as pd

    from anonymatch.core.cells import canonical_cell

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
    from anonymatch.core.counting import check_k, check_kl_codes, check_level

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
