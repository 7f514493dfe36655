"""The typed set-valued job: one validated value describes an ``anonymize-sets`` run.

The Python front (``anonymatch.sets.anonymize``), the ``anonymize-sets`` command and the
keyword form of the pipeline (``anonymatch.sets.pipeline.anonymize_sets``) all build a
:class:`SetJob`, as the tables build a ``TableJob``:

- :meth:`SetJob.build` makes every check that needs only the parameters, once: strict types
  (``anonymatch.core.params``: a bool or a string is never a level), exactly one of ``k`` and
  ``ell``, and what the method can do, read from its capabilities in the registry
  (``anonymatch.sets.methods``);
- :func:`check_data` makes the checks that need the records (the level against their number —
  ``InfeasibleError``, exit 3 —, labels for ℓ-diversity, the labels' eligibility).

Messages name the parameter as a Python caller writes it (```ell```); the command line prints
its flag (``--l``). Every function is O(1) but :func:`check_data` (O(n)).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anonymatch.core.errors import InputError
from anonymatch.core.params import (
    check_level_fits,
    check_seed,
    optional_integer,
    param,
    with_defaults,
)
from anonymatch.core.registry import lookup
from anonymatch.sets.methods import SetMethod, names, registry

if TYPE_CHECKING:
    from anonymatch.sets.io import Transactions

PARAMETERS: dict[str, Any] = {
    "k": None,
    "ell": None,
    "method": "gray-tsp",
    "segment": (300, 350),
    "seed": None,
}
"""Every parameter of a set-valued job and its default (the names ``SetJob.build`` takes)."""


@dataclass(frozen=True)
class SetJob:
    """A validated ``anonymize-sets`` run: level, method, TSP segments, seed.

    Build it with :meth:`build` (from the parameters by name), never field by field: the fields
    are trusted by the pipeline (``anonymatch.sets.pipeline.run_job``).

    Attributes
    ----------
    k : int or None
        Level of k-anonymity (exactly one of ``k`` and ``ell`` is set).
    ell : int or None
        Level of ℓ-diversity on the sensitive labels.
    method : SetMethod
        The registered method (with its capabilities).
    segment : tuple of int
        Segment length bounds (low, high) of the TSP improvement.
    seed : int or None
        Seed of the privacy step (None: OS entropy).
    """

    k: int | None
    ell: int | None
    method: SetMethod
    segment: tuple[int, int]
    seed: int | None
    keywords: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, values: Mapping[str, Any]) -> SetJob:
        """Validate a run's parameters (those of :func:`anonymatch.sets.anonymize` but the data
        and its labels).

        Raises
        ------
        InputError
            The first problem, naming the parameter (```k``` must be an integer of at least 1,
            got True); an unknown parameter; both or neither of ``k`` and ``ell``; a level the
            method does not offer.
        """
        p = with_defaults(values, PARAMETERS)
        methods = {name: registry()[name] for name in names(command="anonymize-sets")}
        method = lookup(methods, p["method"])
        k, ell = levels(p["k"], p["ell"])
        if k is not None and not method.anonymity:
            raise InputError(
                f"method {method.name!r} is an ℓ-diversity baseline: give {param('ell')}, or "
                f"{param('method')} {' or '.join(names(anonymity=True))} for {param('k')}"
            )
        if ell is not None and not method.sensitive:
            raise InputError(
                f"method {method.name!r} does not do ℓ-diversity ({param('ell')}); use one of "
                f"{', '.join(names(sensitive=True))}"
            )
        return cls(k, ell, method, segment(p["segment"]), check_seed(p["seed"]), dict(values))

    @property
    def level(self) -> int:
        """The level asked for (k or ℓ)."""
        return self.k if self.k is not None else self.ell  # type: ignore[return-value]

    @property
    def level_name(self) -> str:
        """``k`` or ``ℓ``, as the messages on the data write it."""
        return "k" if self.k is not None else "ℓ"

    def replace(self, changes: Mapping[str, Any]) -> SetJob:
        """A copy with some parameters changed (``changes``: parameter → value), validated
        again."""
        return SetJob.build({**self.keywords, **changes})


def levels(k: object, ell: object) -> tuple[int | None, int | None]:
    """``k`` and ``ell`` checked: integers ≥ 1, exactly one of them given."""
    k_, ell_ = optional_integer(k, "k"), optional_integer(ell, "ell")
    if (k_ is None) == (ell_ is None):
        raise InputError(
            f"give exactly one of {param('k')} (k-anonymity) and {param('ell')} (ℓ-diversity)"
        )
    return k_, ell_


def segment(value: object) -> tuple[int, int]:
    """``segment`` checked: two integers 1 ≤ low ≤ high."""
    if (
        not isinstance(value, tuple | list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        or not 1 <= value[0] <= value[1]
    ):
        raise InputError(f"{param('segment')} must be two integers 1 ≤ low ≤ high, got {value!r}")
    return int(value[0]), int(value[1])


def check_data(job: SetJob, t: Transactions) -> None:
    """Check a job against its records.

    Raises
    ------
    InfeasibleError
        The level is larger than the number of records (exit code 3), or the labels are not
        ℓ-eligible (ℓ for a method that is not ``ordered``, else 2ℓ−1).
    InputError
        ℓ-diversity without labels.
    """
    check_level_fits(job.level, t.n, job.level_name, "records")
    if job.ell is None:
        return
    if t.labels is None:
        raise InputError(f"ℓ-diversity needs sensitive labels ({param('labels')})")
    from anonymatch.sets.methods.nonreciprocal import check_eligible

    check_eligible(t.labels, 2 * job.ell - 1 if job.method.ordered else job.ell)
