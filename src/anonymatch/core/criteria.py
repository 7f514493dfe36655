"""Criteria: each privacy model or release check, whole, in one object.

A release promises what its criteria say. A criterion (the shape ARX gives each model in its
``criteria`` package) declares, once, as data:

- its **parameters** (:class:`Parameter`: name, how a value is checked, help), from which the
  command line's flags, the job file's keys, the web form's fields, the Python fronts' keywords
  and the manifest's claims are all derived — nothing lists them again;
- what it **needs** (a population table) and where it can be **checked** (the data kinds and
  run paths: a path that cannot check a criterion refuses it, exit 2, before anything runs);
- ``check(view)``: the verdict from what an attacker sees (the release, the original QIs, and
  the population for the population criteria), used by the pipelines, ``verify``, ``verify
  --manifest`` and ``report`` alike;
- ``describe()``: the manifest's claim (``guarantee.<name>``), and :meth:`Criterion.claimed`,
  which reads that claim back so that every claim a manifest makes is re-checked by the same
  code that made it.

Adding a model is one module that subclasses :class:`Criterion` and one entry in its kind's
:class:`Registry`;
adding a parameter to a model is one :class:`Parameter` entry.

References
----------
.. [1] F. Prasser, F. Kohlmayer, "Putting statistical disclosure control into practice: the ARX
   data anonymization tool", 2015 (privacy models as criteria).
.. [2] scikit-learn's ``_parameter_constraints`` (parameters declared as data).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from anonymatch.core.errors import InputError
from anonymatch.core.params import choice, column_list, integer, number, param

Kind = Literal[
    "integer", "fraction", "share", "positive", "choice", "column", "columns", "flag", "table"
]
"""How a parameter's value is checked: ``integer`` ≥ ``minimum``; ``fraction`` in (0, 1];
``share`` in [0, 1]; ``positive`` a number > 0; ``choice`` one of ``choices``; ``column`` a
column name; ``columns`` a list of them (a role: ``identifiers``); ``flag`` a bool; ``table`` a
file path or a DataFrame. A ``per_column`` parameter takes one such
value or a mapping column → value (``l``, ``t``)."""


@dataclass(frozen=True, kw_only=True)
class Parameter:
    """One parameter of one or more criteria, declared once.

    Attributes
    ----------
    name : str
        The Python keyword and job-file key (``delta_max``); the flag is ``--delta-max``.
    kind : {"integer", "fraction", "share", "positive", "choice", "column", "columns", "flag", \
"table"}
        How a value is checked (:meth:`check`).
    help : str
        One sentence for ``--help``, the job file's schema and the web form.
    minimum : int
        The smallest value of an ``integer``.
    metavar : str
        The placeholder of the flag's value in ``--help``.
    short : str or None
        A short flag beside the long one (``-k``).
    per_column : bool
        One value for every column of the role, or ``column=value,…`` (a mapping in Python
        and job files): ``l`` and ``t`` per sensitive column.
    choices : tuple of str
        The values of a ``choice``.
    default : object
        The value when not given (None: not asked); a criterion is asked for by a value
        other than its default (:meth:`Criterion.asked`).
    refines : str or None
        The parameter this one refines, read only with it (``diversity`` and ``c`` refine
        ``l``): a form leaves it out without that one.
    """

    name: str
    kind: Kind
    help: str
    minimum: int = 1
    metavar: str = "X"
    short: str | None = None
    per_column: bool = False
    choices: tuple[str, ...] = ()
    default: object = None
    refines: str | None = None

    @property
    def flag(self) -> str:
        """The command-line flag (``--delta-max``)."""
        return "--" + self.name.replace("_", "-")

    def check(self, value: object) -> object:
        """``value`` checked as the parameter's kind (``InputError`` naming the parameter; a
        per-column value names the column: ```l['disease']```). O(columns)."""
        if self.per_column and isinstance(value, Mapping):
            for column, v in value.items():
                if not isinstance(column, str):
                    raise InputError(
                        f"{param(self.name)} must be keyed by column names, got {column!r}"
                    )
                self._check_one(v, f"{self.name}[{column!r}]")
            return dict(value)
        return self._check_one(value, self.name)

    def _check_one(self, value: object, name: str) -> object:
        if self.kind == "integer":
            return integer(value, name, minimum=self.minimum)
        if self.kind == "fraction":
            return number(value, name, high=1.0)
        if self.kind == "share":
            return number(value, name, low_open=False, high=1.0)
        if self.kind == "positive":
            return number(value, name)
        if self.kind == "choice":
            return choice(value, name, self.choices)
        if self.kind == "column":
            if not isinstance(value, str) or not value:
                raise InputError(f"{param(name)} must be a column name, got {value!r}")
            return value
        if self.kind == "columns":
            try:
                return tuple(column_list(value, name))
            except TypeError as exc:
                raise InputError(str(exc)) from None
        if self.kind == "flag":
            if not isinstance(value, bool):
                raise InputError(f"{param(name)} must be true or false, got {value!r}")
            return value
        import pandas as pd

        if isinstance(value, str | os.PathLike | pd.DataFrame):
            return value
        raise InputError(
            f"{param(name)} must be a file path or a DataFrame, got {type(value).__name__}"
        )

    def parse(self, text: str) -> object:
        """A value from text (a command-line flag, a web form's field): a number of the
        parameter's type, or for a per-column parameter ``3`` (every column) or
        ``occupation=4,disease=2``; checked later by :meth:`check`. InputError naming the
        parameter (the command line shows its flag) when a number does not parse.
        O(len(text))."""
        converters: dict[str, Callable[[str], object]] = {
            "integer": int, "fraction": float, "share": float, "positive": float,
            "flag": lambda t: t.strip().lower() in ("1", "true", "yes", "on"),
        }  # fmt: skip
        convert = converters.get(self.kind, str)
        try:
            if not self.per_column or "=" not in text:
                return convert(text.strip())
            out = {}
            for item in (part.strip() for part in text.split(",")):
                if item:
                    name, _, value = item.partition("=")
                    out[name.strip()] = convert(value.strip())
            return out
        except ValueError:
            what = (
                "expects a number or column=number pairs" if self.per_column else "must be a number"
            )
            raise InputError(f"{param(self.name)} {what}, got {text!r}") from None

    @property
    def python_type(self) -> type:
        """The type of one value in a job file (``int``, ``float`` or ``str``)."""
        return {"integer": int, "flag": bool}.get(
            self.kind, float if self.kind in ("fraction", "share", "positive") else str
        )


POPULATION = Parameter(
    name="population",
    kind="table",
    help="The population table the original was sampled from (CSV/TSV or Parquet with the QI "
    "columns): k-map, journalist risk and delta-presence are counted against it.",
    metavar="FILE",
)
"""The population table, shared by every population criterion (read once)."""


@dataclass(frozen=True)
class Verdict:
    """A criterion's verdict on a release: ``passed``, the ``reason`` (one line), the
    figures that support it (the manifest's ``verification.<name>`` block) and ``detail``, the
    kind's own report of the check for its callers (never written: not in :meth:`to_dict`)."""

    passed: bool
    reason: str
    figures: Mapping[str, Any] = field(default_factory=dict)
    detail: Any = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "reason": self.reason, **self.figures}


class Criterion(ABC):
    """A privacy model or release check over the attacker's view.

    Subclasses declare the class attributes and implement :meth:`from_values`, :meth:`check`
    and :meth:`describe`. A family that can repair a release says what the repair needs on a
    base of its own (``tables.models.kmap.PopulationCriterion``: the rows it accepts, whether
    it is feasible), and its kind's module runs the repair.

    Class attributes
    ----------------
    name : str
        The manifest's key (``guarantee.<name>``, ``verification.<name>``).
    title : str
        Its name for people (``delta-presence``).
    parameters : tuple of Parameter
        Its own parameters: any of them given asks for the criterion (:meth:`asked`); the
        first names it in messages.
    needs_population : bool
        Counted against a population table (:data:`POPULATION`).
    level : bool
        The release's level (k for everyone, or per-record levels): a release claims exactly
        one.
    kinds : tuple of str
        The data kinds that run and check it.
    paths : tuple of str
        The run paths that can enforce it (others refuse it, exit 2).
    reference : str
        The paper.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    parameters: ClassVar[tuple[Parameter, ...]]
    needs_population: ClassVar[bool] = False
    level: ClassVar[bool] = False
    kinds: ClassVar[tuple[str, ...]] = ("table",)
    paths: ClassVar[tuple[str, ...]] = ("memory",)
    reference: ClassVar[str] = ""

    @classmethod
    def asked(cls, values: Mapping[str, object]) -> bool:
        """Whether ``values`` ask for this criterion (any of its own parameters given, other
        than its default)."""
        return any(values.get(p.name) not in (None, p.default) for p in cls.parameters)

    @classmethod
    @abstractmethod
    def from_values(cls, values: Mapping[str, object]) -> Criterion:
        """The criterion from its parameters' checked values (``None`` for those not given)
        and the run's other values (the columns' roles, for a criterion on columns);
        ``InputError`` naming the parameter when they do not fit together."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The manifest's claim (``guarantee.<name>``): the parameters, never the data."""

    @classmethod
    def claimed(cls, block: Mapping[str, Any]) -> dict[str, object]:
        """The parameters a manifest's ``guarantee.<name>`` block claims (the inverse of
        :meth:`describe`), to re-check the release with. O(parameters)."""
        return {p.name: block.get(p.name) for p in cls.parameters}

    @classmethod
    def claimed_in(
        cls, guarantee: Mapping[str, Any], roles: Mapping[str, Any]
    ) -> dict[str, object]:
        """The parameters the manifest's whole ``guarantee`` block claims for this criterion
        (``roles``: the release's columns by role, ``Schema.roles``); by default
        :meth:`claimed` of its ``guarantee.<name>`` block, nothing without one. A criterion
        whose claim spans several keys (the sensitive models) overrides it."""
        block = guarantee.get(cls.name)
        return cls.claimed(block) if isinstance(block, Mapping) else {}

    @abstractmethod
    def check(self, view: Any) -> Verdict:
        """The verdict on the release the view shows (the view's type is the kind's)."""


class Check(Criterion):
    """A release check: what every release of its kinds and paths is checked for beside its
    privacy model (identifiers never published, the kept columns' leakage, the utility
    headline).

    A criterion's shape — parameters declared once, the kinds and paths that run it,
    ``check(view)``, ``describe()`` — with three differences: it runs on every release of its
    kinds and paths, asked for or not (:meth:`asked`), and a path that cannot run it refuses
    only a run that asks for it by a parameter (:meth:`demanded`: ``--strict``); what the
    manifest states is its verdict's figures, at :attr:`at` (:meth:`block`), beside the
    parameters the run records (``describe()``: never written twice); a failed verdict refuses
    the release (:meth:`refuse`), nothing written.

    Class attributes
    ----------------
    at : tuple of str
        Where :meth:`block` is written in the manifest: ``("leakage",)`` (top level, after
        ``plan``), ``("loss", "headline")``; ``()``: nowhere (a check that only refuses).
    seconds : str or None
        The ``seconds`` key its time is added to (None: not timed).
    """

    at: ClassVar[tuple[str, ...]] = ()
    seconds: ClassVar[str | None] = None
    paths: ClassVar[tuple[str, ...]] = ("memory", "streamed")

    @classmethod
    def asked(cls, values: Mapping[str, object]) -> bool:
        """Always: a check runs on every release of its kinds and paths."""
        return True

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> Check:
        """The check built with its parameters' values as keywords (defaults when not given)."""
        given = {p.name: values.get(p.name) for p in cls.parameters}
        return cls(**{p.name: p.default if given[p.name] is None else given[p.name]
                      for p in cls.parameters})  # fmt: skip

    def describe(self) -> dict[str, Any]:
        """Its parameters' values (the run records them, e.g. ``parameters.identifiers``)."""
        return {p.name: getattr(self, p.name) for p in self.parameters}

    @classmethod
    def demanded(cls, values: Mapping[str, object]) -> bool:
        """Whether ``values`` ask for the check by one of its parameters (other than its
        default): a path that cannot run it then refuses the run."""
        return super().asked(values)

    @classmethod
    def runs(cls, kind: str, path: str) -> bool:
        """Whether releases of ``kind`` made on ``path`` run this check."""
        return kind in cls.kinds and path in cls.paths

    def block(self, verdict: Verdict) -> dict[str, Any]:
        """The manifest's block at :attr:`at` (default: the verdict's figures)."""
        return dict(verdict.figures)

    def refuse(self, verdict: Verdict) -> None:
        """Raise the check's own error for a failed ``verdict`` (default: none; a release that
        failed a check is then refused by ``core.release.refuse``, ``VerificationError``)."""


class Registry:
    """A data kind's criteria, in the order they run (one registration each).

    Everything else derives from it: :meth:`parameters` (the flags, job-file keys, form
    fields and fronts' keywords), :meth:`build` (the checked criteria a run asks for) and
    :meth:`claims` (the criteria a manifest claims, to re-check them). Every method is
    O(number of parameters).
    """

    def __init__(self, *criteria: type[Criterion]) -> None:
        names = [c.name for c in criteria]
        assert len(set(names)) == len(names), "a criterion is registered twice"
        self.criteria = criteria

    def where(self, test: Callable[[type[Criterion]], bool]) -> Registry:
        """The criteria passing ``test``, in order (``needs_population``: the population
        criteria, which a form reads with the population's upload)."""
        return Registry(*(c for c in self.criteria if test(c)))

    def for_release(self, values: Mapping[str, object], kind: str, path: str) -> tuple[Check, ...]:
        """The checks that run on a release of ``kind`` made on ``path``, built from
        ``values`` (:meth:`build`); ``InputError`` (exit 2) when ``values`` ask for one
        (:meth:`Check.demanded`) that this path does not run. O(parameters)."""
        for c in self.criteria:
            if issubclass(c, Check) and c.demanded(values) and not c.runs(kind, path):
                raise InputError(
                    f"{param(c.parameters[0].name)} is not checked on the {path} path of "
                    f"{kind} releases (only: {', '.join(c.paths)})"
                )
        chosen = self.where(lambda c: issubclass(c, Check) and c.runs(kind, path))
        return tuple(c for c in chosen.build(values) if isinstance(c, Check))

    def parameters(self) -> tuple[Parameter, ...]:
        """Every criterion's parameters, each once (the population once), in order."""
        seen: dict[str, Parameter] = {}
        for c in self.criteria:
            for p in (*c.parameters, *((POPULATION,) if c.needs_population else ())):
                seen.setdefault(p.name, p)
        return tuple(seen.values())

    def docs(self, indent: str = "        ") -> str:
        """The parameters as a numpydoc bullet list, each with its criterion's paper (a
        front's ``**criteria`` entry is completed with it, so that its docs never list them
        by hand)."""
        lines, seen = [], set()
        for c in self.criteria:
            own = [(p, c.reference) for p in c.parameters]
            shared = [(POPULATION, "")] if c.needs_population else []
            for p, reference in own + shared:
                if p.name in seen:
                    continue
                seen.add(p.name)
                kind = (
                    "path or DataFrame" if p.kind == "table"
                    else "{" + ", ".join(f'"{c}"' for c in p.choices) + "}" if p.choices
                    else p.python_type.__name__
                )  # fmt: skip
                if p.per_column:
                    kind += f" or mapping of str to {kind}"
                if p.default is not None:
                    kind += f", default {p.default!r}"
                cite = f" ({reference})" if reference else ""
                lines.append(f"{indent}- ``{p.name}`` ({kind}): {p.help}{cite}")
        return "\n".join(lines)

    def defaults(self) -> dict[str, object]:
        """Every parameter with its default (None: not asked)."""
        return {p.name: p.default for p in self.parameters()}

    def build(self, values: Mapping[str, object]) -> tuple[Criterion, ...]:
        """The criteria that ``values`` ask for, checked: every value by its
        :class:`Parameter`, a population given exactly when a population criterion is asked
        for.

        Parameters
        ----------
        values : mapping
            Parameter name → value (None: not given); the other names are the run's (the
            columns' roles: ``sensitive``, ``numeric``), passed to the criteria.

        Returns
        -------
        tuple of Criterion

        Raises
        ------
        InputError
            A bad value, or a population without a population criterion (and the reverse).
        """
        checked = {
            p.name: None if values.get(p.name) is None else p.check(values[p.name])
            for p in self.parameters()
        }
        context = {**values, **checked}
        chosen = [c for c in self.criteria if c.asked(context)]
        wanted = [c for c in chosen if c.needs_population]
        if wanted and checked.get("population") is None:
            names = " / ".join(param(c.parameters[0].name) for c in wanted)
            raise InputError(f"{names} needs {param('population')} (a table of the population)")
        if not wanted and checked.get("population") is not None:
            asked = " or ".join(
                param(c.parameters[0].name) for c in self.criteria if c.needs_population
            )
            raise InputError(f"{param('population')} is only read with {asked}")
        return tuple(c.from_values(context) for c in chosen)

    def claims(
        self, guarantee: Mapping[str, Any], roles: Mapping[str, Any] | None = None
    ) -> dict[str, object]:
        """The parameters of every criterion a manifest's ``guarantee`` block claims (read
        back by :meth:`Criterion.claimed_in`; ``roles``: the release's columns by role)."""
        out: dict[str, object] = {}
        for c in self.criteria:
            claimed = c.claimed_in(guarantee, roles or {})
            out.update({k: v for k, v in claimed.items() if v is not None})
        return out


def record(
    manifest: Mapping[str, Any],
    criteria: Iterable[Criterion],
    view: Any,
    source: Mapping[str, Any] | None = None,
) -> list[Verdict]:
    """Write each criterion's claim (``guarantee.<name>``: :meth:`Criterion.describe`, and the
    ``source`` it was counted against, e.g. the population's path and SHA-256) and its verdict
    on ``view`` (``verification.<name>``) into ``manifest``. Returns the verdicts, in order.
    The one place a manifest states a criterion. O(criteria + their checks)."""
    guarantee, verification = manifest["guarantee"], manifest["verification"]
    verdicts = []
    for c in criteria:
        verdict = c.check(view)
        guarantee[c.name] = {**c.describe(), **(source or {})}
        verification[c.name] = verdict.to_dict()
        verdicts.append(verdict)
    return verdicts


def refuse_unsupported(criteria: Iterable[Criterion], path: str, what: str) -> None:
    """Refuse (``InputError``, exit 2) the criteria that the run path ``path`` cannot enforce
    or check, saying where they run instead (``what``: "in memory only …"). O(criteria)."""
    for c in criteria:
        if path not in c.paths:
            raise InputError(f"{param(c.parameters[0].name)} runs {what}")
