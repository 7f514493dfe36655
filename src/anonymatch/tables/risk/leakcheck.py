"""The kept-column leakage check as a release check (``core.criteria.Check``), and its
parameter ``strict``, declared once.

A light module (no numpy at import): the typed jobs (``tables.job``, ``relational.job``), the
job file's ``[model]`` keys (``app.jobfile``), the Python fronts' keywords and the command
line's ``--strict`` derive from :data:`CHECK_OPTIONS` without loading the figures, which
``leakage`` computes when a release is checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anonymatch.core.criteria import Check, Parameter, Registry, Verdict

if TYPE_CHECKING:
    from anonymatch.tables.risk.leakage import LeakageOptions


class Leakage(Check):
    """The release check of the columns a release keeps unchanged (``risk.leakage``'s
    figures): the manifest's top-level ``leakage`` block on every table and relational
    release, in memory and streamed, and (k,ℓ)'s; with ``strict`` a flagged column refuses the
    release (``leakage.LeakRefused``, exit 2, nothing written). Checked on a
    ``tables.risk.checks.ReleaseView``; time and memory as ``leakage.leakage_of``."""

    name = "leakage"
    title = "kept-column leakage"
    parameters = (
        Parameter(
            name="strict",
            kind="flag",
            default=False,
            help="Refuse (exit 2, nothing written) a release whose columns released unchanged "
            "give QIs away, single people out or hold free text (docs/guarantees/leakage.md); "
            "without it they are warned about.",
        ),
    )
    kinds = ("table", "relational")
    paths = ("memory", "streamed", "kl")
    at = ("leakage",)
    seconds = "leakage"
    reference = "Machanavajjhala et al., ICDE 2006, §3; Wong et al., VLDB 2007"

    def __init__(self, strict: bool = False, options: LeakageOptions | None = None) -> None:
        from anonymatch.tables.risk.leakage import LeakageOptions

        self.strict, self.options = strict, options or LeakageOptions()

    def check(self, view: Any) -> Verdict:
        from anonymatch.tables.risk.leakage import leakage_of

        report = leakage_of(view.kept(), view.enc, view.rows, view.schema.sensitive, self.options)
        flagged = [c.column for c in report.flagged]
        reason = f"kept columns give QIs away: {', '.join(flagged)}" if flagged else "ok"
        return Verdict(not (self.strict and flagged), reason, report.to_dict(), report)

    def refuse(self, verdict: Verdict) -> None:
        from anonymatch.tables.risk.leakage import LeakRefused

        if not verdict.passed:
            raise LeakRefused(verdict.detail)


CHECK_OPTIONS = Registry(Leakage)
"""The release checks whose parameters are options of a run rather than a column role
(``strict``; the ``identifiers`` check reads the columns' role): the typed jobs' fields, the
Python fronts' keywords, the command line's flags and the job file's ``[model]`` keys derive
from it (``Registry.parameters``, ``Registry.defaults``, ``Registry.docs``)."""

STRICT = CHECK_OPTIONS.parameters()[0]
"""``strict``: refuse a release whose kept columns leak (the leakage check's parameter)."""
