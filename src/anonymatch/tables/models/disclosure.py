"""The sensitive models as one criterion: ℓ-diversity (distinct, entropy, recursive) and
t-closeness on the sensitive columns, declared once.

:class:`SensitiveModels` is the :class:`~anonymatch.core.criteria.Criterion` of every sensitive
column's protection: its parameters (``l``, ``diversity``, ``c``, ``t``) are declared here as
:class:`~anonymatch.core.criteria.Parameter` data — the command line's ``--l``/``--diversity``/
``--c``/``--t``, the job file's ``[model]`` keys, the web form's fields and the Python fronts'
keywords derive from them —, it builds the per-column models (:func:`build_models`, **where the
default distinct ℓ = 2 of a named sensitive column is decided, for every entry point**),
states them in the manifest (:meth:`SensitiveModels.describe`: ``guarantee.sensitive`` and
``guarantee.unprotected``), reads them back from a manifest
(:meth:`SensitiveModels.claimed_in`) and checks them on a release
(:meth:`SensitiveModels.check`, over ``tables.models.sensitive.check_release``).

**One criterion for the ℓ family and t-closeness, not one per model kind**, because they are
one claim: a column's default (ℓ = 2) depends on whether *either* ``l`` or ``t`` names it, so
two criteria would each need the other's parameters to decide it; ``diversity`` and ``c``
apply to every column's ℓ; the manifest states one entry per column carrying both (``guarantee.
sensitive``) and the columns left unprotected by ``l = 1`` beside it; and the verifier computes
each person's candidates once for all of them. The models stay per column
(:class:`SensitiveModel`): the criterion is their set.

The module is light (no numpy, pandas or numba: the command line reads the parameters at
start-up); the statistics are in ``tables.models.sensitive``.

References
----------
.. [1] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity: privacy
   beyond k-anonymity", TKDD 2007 (§4.1 distinct, Definitions 4.1 entropy and 4.2 recursive).
.. [2] N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity and
   l-diversity", ICDE 2007.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from anonymatch.core.criteria import Criterion, Parameter, Verdict
from anonymatch.core.errors import InputError

DIVERSITY_KINDS = ("distinct", "entropy", "recursive")
DEFAULT_L = 2
"""The distinct ℓ a sensitive column gets when it is named with neither ``l`` nor ``t``
(``build_models``): no person's candidates all show one value. ``l = 1`` opts out."""
UNPROTECTED_L = 1
"""``l = 1``: the column is published without ℓ-diversity — with no ``t``, unprotected."""


@dataclass(frozen=True)
class SensitiveModel:
    """The privacy model on one sensitive column.

    ``l`` with ``diversity`` (distinct|entropy|recursive, ``c`` for recursive) and/or ``t``
    (t-closeness; ``ordered`` picks the ordered ground distance of a numeric column)."""

    column: str
    l: int | None = None  # noqa: E741 - the model's own name
    diversity: str = "distinct"
    c: float | None = None
    t: float | None = None
    ordered: bool = False
    default: bool = field(default=False, compare=False)
    """Applied by default: the column was named sensitive with neither ``l`` nor ``t``, so it
    got distinct ℓ = :data:`DEFAULT_L` (``build_models``)."""

    def describe(self) -> dict[str, object]:
        """JSON-ready description (for manifests): ``default`` true when applied by
        default."""
        out: dict[str, object] = {"column": self.column}
        if self.l is not None:
            out["diversity"] = self.diversity
            out["l"] = self.l
            if self.diversity == "recursive":
                out["c"] = self.c
        if self.t is not None:
            out["t"] = self.t
            out["ground_distance"] = "ordered" if self.ordered else "equal"
        if self.default:
            out["default"] = True
        return out


def build_models(
    sensitive: Sequence[str],
    l: int | Mapping[str, int] | None = None,  # noqa: E741
    diversity: str = "distinct",
    c: float | None = None,
    t: float | Mapping[str, float] | None = None,
    ordered: Sequence[str] = (),
) -> tuple[SensitiveModel, ...]:
    """Validate the model parameters and return one model per protected sensitive column.

    ``l`` and ``t`` are either one value for every sensitive column or a mapping column → value.
    **The default is decided here, for every entry point**: a sensitive column with neither
    ``l`` nor ``t`` gets distinct ℓ = :data:`DEFAULT_L` (``SensitiveModel.default``); ``l = 1``
    for a column means no ℓ-diversity, so a column with ``l = 1`` and no ``t`` gets no model:
    it is published unprotected (:func:`unprotected_columns`), which the manifest records
    (``guarantee.unprotected``) and the report flags.
    Raises InputError: a model without a sensitive column, ℓ < 1, t outside (0, 1], an unknown
    diversity kind, c ≤ 0 or c missing for recursive diversity, ``diversity``/``c`` with
    ℓ = 1, a mapping naming a column that is not sensitive."""
    if diversity not in DIVERSITY_KINDS:
        raise InputError(
            f"unknown diversity {diversity!r}; choose one of: {', '.join(DIVERSITY_KINDS)}"
        )
    if (l is not None or t is not None) and not sensitive:
        raise InputError("`l` and `t` protect a sensitive column: name it with `sensitive`")
    if l is None and (diversity != "distinct" or c is not None):
        raise InputError("`diversity` and `c` need `l`")
    if diversity == "recursive":
        if c is None:
            raise InputError("recursive (c, l)-diversity needs `c`")
        if not (math.isfinite(c) and c > 0):
            raise InputError(f"`c` must be a positive number, got {c}")
    elif c is not None:
        raise InputError("`c` applies to `diversity` recursive only")
    per_l = _per_column("`l`", l, sensitive)
    per_t = _per_column("`t`", t, sensitive)
    for name, value in per_l.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise InputError(f"`l` must be an integer of at least 1, got {value} for {name!r}")
        if value == UNPROTECTED_L and (diversity != "distinct" or c is not None):
            raise InputError(
                f"`l` = 1 publishes {name!r} without ℓ-diversity: `diversity` and `c` need "
                "`l` of at least 2"
            )
    for name, value in per_t.items():
        if not (isinstance(value, float | int) and 0 < value <= 1):
            raise InputError(f"`t` must be in (0, 1], got {value} for {name!r}")
    models = []
    for name in sensitive:
        ell = int(per_l[name]) if name in per_l else None
        if ell == UNPROTECTED_L:
            ell = None
        if name not in per_l and name not in per_t:  # named, no model: the default
            models.append(SensitiveModel(name, DEFAULT_L, ordered=name in ordered, default=True))
        elif ell is not None or name in per_t:
            models.append(
                SensitiveModel(
                    column=name,
                    l=ell,
                    diversity=diversity,
                    c=float(c) if c is not None and ell is not None else None,
                    t=float(per_t[name]) if name in per_t else None,
                    ordered=name in ordered,
                )
            )
    return tuple(models)


def unprotected_columns(
    sensitive: Sequence[str], models: Sequence[SensitiveModel]
) -> tuple[str, ...]:
    """The sensitive columns published without protection: those without a model, which
    ``build_models`` leaves only when asked by ``l = 1`` (and no ``t``). O(columns)."""
    protected = {m.column for m in models}
    return tuple(name for name in sensitive if name not in protected)


def only_default(models: Sequence[SensitiveModel]) -> bool:
    """Whether every model was applied by default (none asked for): a path that cannot run
    sensitive models then says how to opt out (``l = 1``) rather than that ``l`` was given."""
    return bool(models) and all(m.default for m in models)


def _per_column(flag: str, value: object, sensitive: Sequence[str]) -> dict[str, int | float]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        for name in value:
            if name not in sensitive:
                raise InputError(f"{flag} names {name!r}, which is not a `sensitive` column")
        return dict(value)
    return {name: value for name in sensitive}  # type: ignore[misc]


L = Parameter(
    name="l",
    kind="integer",
    per_column=True,
    metavar="L",
    help="l-diversity of the sensitive columns: every person's candidate rows show >= l values "
    "(one number, or column=l pairs). Default 2 for a column with neither l nor t; l = 1 "
    "publishes it unprotected (flagged).",
)
DIVERSITY = Parameter(
    name="diversity",
    kind="choice",
    choices=DIVERSITY_KINDS,
    default="distinct",
    refines="l",
    metavar="KIND",
    help="Which l-diversity (Machanavajjhala et al. 2007): distinct, entropy or recursive.",
)
C = Parameter(
    name="c", kind="positive", refines="l", metavar="C", help="c of recursive (c, l)-diversity."
)
T = Parameter(
    name="t",
    kind="fraction",
    per_column=True,
    metavar="T",
    help="t-closeness, 0 < t <= 1: every person's candidates show values within earth "
    "mover's distance t of the table's (one number, or column=t pairs; ordered distance for "
    "sensitive columns also numeric).",
)


class ColumnCheck(Protocol):
    """One sensitive column's check on a release (``sensitive.SensitiveCheck``)."""

    @property
    def passed(self) -> bool: ...

    @property
    def reason(self) -> str: ...

    def to_dict(self) -> dict[str, object]: ...


class SensitiveEvidence(Protocol):
    """What the models are checked on: the release as its attacker sees it, which computes
    each model's per-column check (``certified.SensitiveView``: each person's candidates, or
    every draw of a ring release's certificate). The statistics live with the view, beside
    the attacker's view they need; this module stays light."""

    def checks(self, models: Sequence[SensitiveModel]) -> Sequence[ColumnCheck]: ...


@dataclass(frozen=True)
class SensitiveModels(Criterion):
    """ℓ-diversity and t-closeness on every sensitive column (module docstring: why one
    criterion).

    Attributes
    ----------
    models : tuple of SensitiveModel
        One per protected sensitive column (:func:`build_models`).
    unprotected : tuple of str
        The sensitive columns published without protection (``l = 1``, no ``t``).
    """

    models: tuple[SensitiveModel, ...] = ()
    unprotected: tuple[str, ...] = ()
    name: ClassVar[str] = "sensitive"
    title: ClassVar[str] = "sensitive models"
    parameters: ClassVar[tuple[Parameter, ...]] = (L, DIVERSITY, C, T)
    kinds: ClassVar[tuple[str, ...]] = ("table", "relational")
    paths: ClassVar[tuple[str, ...]] = ("memory", "streamed")
    reference: ClassVar[str] = (
        "Machanavajjhala et al., TKDD 2007; Li, Li, Venkatasubramanian, ICDE 2007"
    )

    @classmethod
    def asked(cls, values: Mapping[str, object]) -> bool:
        """A named sensitive column asks for its models (the default ℓ), as does any of the
        parameters."""
        return bool(values.get("sensitive")) or super().asked(values)

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> SensitiveModels:
        """The models of the run's ``sensitive`` columns (the ordered distance for those also
        in ``numeric``). O(columns)."""
        sensitive = [str(c) for c in values.get("sensitive") or ()]  # type: ignore[attr-defined]
        numeric = {str(c) for c in values.get("numeric") or ()}  # type: ignore[attr-defined]
        models = build_models(
            sensitive,
            values.get("l"),  # type: ignore[arg-type]
            str(values.get("diversity") or DIVERSITY.default),
            values.get("c"),  # type: ignore[arg-type]
            values.get("t"),  # type: ignore[arg-type]
            [c for c in sensitive if c in numeric],
        )
        return cls(models, unprotected_columns(sensitive, models))

    def describe(self) -> dict[str, Any]:
        """The claims on the sensitive columns, keys of the manifest's ``guarantee`` block:
        ``sensitive`` (each model's :meth:`SensitiveModel.describe`) and ``unprotected`` (the
        columns published without protection), each only when non-empty. O(columns)."""
        out: dict[str, Any] = {}
        if self.models:
            out["sensitive"] = [m.describe() for m in self.models]
        if self.unprotected:
            out["unprotected"] = list(self.unprotected)
        return out

    @classmethod
    def claimed_in(
        cls, guarantee: Mapping[str, Any], roles: Mapping[str, Any]
    ) -> dict[str, object]:
        """The ``l``/``diversity``/``c``/``t`` a manifest's ``guarantee`` claims (the inverse
        of :meth:`describe`): a model applied by default is left to the default again; a
        named sensitive column (``roles["sensitive"]``) without a model was published
        unprotected (``l`` = 1; also a manifest written before the default, issue 36).
        InputError on a malformed ``guarantee.sensitive``. O(columns)."""
        sens = guarantee.get("sensitive") or []
        if not isinstance(sens, list) or not all(
            isinstance(m, Mapping) and isinstance(m.get("column"), str) for m in sens
        ):
            raise InputError(f"malformed sensitive models in the manifest: {sens!r}")
        out: dict[str, object] = {}
        asked = [m for m in sens if not m.get("default")]
        ells: dict[str, Any] = {m["column"]: m["l"] for m in asked if m.get("l") is not None}
        if ells:
            first = next(m for m in asked if m.get("l") is not None)
            out["diversity"] = first.get("diversity", DIVERSITY.default)
            if first.get("c") is not None:
                out["c"] = first["c"]
        modelled = {m["column"] for m in sens}
        named = roles.get("sensitive") or ()
        ells.update({c: UNPROTECTED_L for c in named if c not in modelled})
        if ells:
            out["l"] = ells
        if any(m.get("t") is not None for m in asked):
            out["t"] = {m["column"]: m["t"] for m in asked if m.get("t") is not None}
        return out

    def check(self, view: SensitiveEvidence) -> Verdict:
        """Every model on the release the view shows (``view.checks``: on each person's
        candidates, ``sensitive.check_release``, or for every draw of a ring release's
        certificate, ``certified.check_certified``, docs/guarantees/sensitive.md §6). The
        figures' ``checks`` are the per-column checks (``SensitiveCheck.to_dict``). Cost: the
        candidates once, then O(pairs between groups · values) per model."""
        return self.verdict(view.checks(self.models))

    @staticmethod
    def verdict(checks: Sequence[ColumnCheck]) -> Verdict:
        """The verdict of per-column checks (:meth:`check`'s, or a streamed release's merged
        over its partitions): passed iff every check passed, the first failure's reason.
        O(columns)."""
        failed = [c for c in checks if not c.passed]
        reason = failed[0].reason if failed else "every sensitive model holds"
        return Verdict(not failed, reason, {"checks": [c.to_dict() for c in checks]})
