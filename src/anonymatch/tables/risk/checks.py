"""The release checks of table and relational releases, as criteria (``core.criteria.Check``).

Beside its privacy model, every table and relational release is checked for what its columns
give away, by three checks that ``core.release.publish`` runs on every path that has them (in
memory, streamed, (k,ℓ); relational in memory and streamed) and states where every path states
them:

- :class:`Identifiers`: no identifier column is published (for relational releases, neither
  the id column, which with the identifiers rebuilds the person); a release showing one is
  refused (``VerificationError``, exit 4, nothing written), and ``verify`` fails it;
- ``leakcheck.Leakage``: what the kept columns give away about the QIs (the manifest's
  ``leakage`` block; ``strict`` refuses a flagged release, exit 2);
- ``headline.Kept``: what the release keeps (``loss.headline``).

They read one :class:`ReleaseView`: the original's QIs, the published cells and the kept
columns beside them, which the in-memory paths build from their frames (:meth:`ReleaseView.of`)
and the streamed paths from their spill files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from anonymatch.core.criteria import Check, Parameter, Registry, Verdict
from anonymatch.tables.columns.schema import EncodedQI, Schema
from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.risk.headline import Kept
from anonymatch.tables.risk.leakage import RowCells, kept_columns
from anonymatch.tables.risk.leakcheck import STRICT, Leakage

Column = tuple[str, pd.Series, "pd.Series | None"]


@dataclass(frozen=True)
class ReleaseView:
    """What the release checks read of a table release: the originals' encoded QIs ``enc``,
    the published QI ``rows`` (each row's cell; ``risk.leakage.RowCells``), the ``schema``
    (the roles), the published ``columns`` and ``kept``, which yields each column released
    unchanged as (name, original values aligned with ``enc``, published values or None when
    row i shows original i's)."""

    enc: EncodedQI
    rows: RowCells
    schema: Schema
    columns: tuple[str, ...]
    kept: Callable[[], Iterable[Column]]

    @classmethod
    def of(
        cls,
        data: pd.DataFrame,
        enc: EncodedQI,
        cells: GeneralizedQI,
        table: pd.DataFrame,
        schema: Schema,
    ) -> ReleaseView:
        """The view of an in-memory release: the original rows ``data`` (aligned with
        ``enc``), the published ``table`` and its parsed QI ``cells``. O(columns)."""
        names = kept_columns(table.columns, data, schema)
        return cls(
            enc,
            RowCells(cells),
            schema,
            tuple(map(str, table.columns)),
            lambda: ((n, data[n], table[n]) for n in names),
        )


class Identifiers(Check):
    """No identifier column is published: the release check behind the ``identifiers`` role
    (for relational releases, the id column too: with the identifiers it rebuilds the
    person). Every path drops them; this check states it from what is published, refuses a
    release that shows one (``VerificationError``) and fails it in ``verify``. O(columns)."""

    name = "identifiers"
    title = "identifiers never published"
    parameters = (
        Parameter(
            name="identifiers",
            kind="columns",
            default=(),
            help="Identifier columns: never published (dropped).",
            metavar="COLUMNS",
        ),
    )
    kinds = ("table", "relational")
    paths = ("memory", "streamed", "kl", "adaptive")

    def __init__(self, identifiers: Iterable[str] = ()) -> None:
        self.identifiers = tuple(identifiers)

    def check(self, view: Any) -> Verdict:
        shown = [c for c in self.identifiers if c in set(view.columns)]
        if shown:
            return Verdict(False, f"the identifier column {shown[0]!r} is published")
        return Verdict(True, "ok")


CHECKS = Registry(Identifiers, Leakage, Kept)
"""The release checks, in the order :func:`core.release.publish` runs them."""


def release_checks(
    kind: str, path: str, identifiers: Iterable[str], strict: bool
) -> tuple[Check, ...]:
    """The checks a release of ``kind`` made on ``path`` runs (``CHECKS.for_release``), for its
    ``identifiers`` (a relational release's id column among them) and its job's ``strict``
    (a flagged leak refuses the release); InputError (exit 2) when ``strict`` is asked on a
    path without the leakage check. O(checks)."""
    values = {"identifiers": tuple(identifiers), STRICT.name: strict}
    return CHECKS.for_release(values, kind, path)
