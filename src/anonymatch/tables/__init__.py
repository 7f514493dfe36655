"""Tables: k-anonymous publication of a DataFrame by freeform generalization (Doka et al. 2015).

The front of the kind — the same three functions as ``anonymatch.sets``, ``anonymatch.sparse``
and ``anonymatch.graphs``, original always before release::

    result = anonymatch.tables.anonymize(df, k=10, qi="age,sex", numeric="age")
    result.release          # the published DataFrame (also ``result.table``)
    result.report           # the JSON-able manifest
    anonymatch.tables.verify(df, result.release, k=10, qi="age,sex", numeric="age").passed
    anonymatch.tables.evaluate(df, result.release, qi="age,sex", numeric="age").to_dict()
    anonymatch.tables.risk(df, result.release, qi="age,sex", numeric="age").to_dict()

The functions validate their arguments (``anonymatch.core.params``) and delegate to
``anonymatch.tables.pipeline``; heavy modules are imported on first call, so importing this
package is cheap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from anonymatch.core.errors import InputError
from anonymatch.core.front import keep_functions
from anonymatch.core.params import accept_keywords, param, require_frame
from anonymatch.tables.models import CRITERIA, SENSITIVE_CRITERIA
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.tables.columns.hierarchy import Hierarchy
    from anonymatch.tables.columns.schema import MissingCodes
    from anonymatch.tables.job import TableJob
    from anonymatch.tables.metrics import InformationLoss
    from anonymatch.tables.pipeline import Release
    from anonymatch.tables.risk.risk import RiskReport
    from anonymatch.tables.verify import VerificationReport


__all__ = ["anonymize", "evaluate", "risk", "run_job", "verify"]


def _published(release: Any) -> pd.DataFrame:
    """The published DataFrame of ``release`` (a DataFrame, or a result of ``anonymize``)."""
    from anonymatch.tables.pipeline import Release

    if isinstance(release, Release):
        return release.table
    return require_frame(release, "release")


def anonymize(
    data: pd.DataFrame,
    *,
    k: int,
    qi: str | Iterable[str],
    numeric: str | Iterable[str] | None = None,
    sensitive: str | Iterable[str] | None = None,
    identifiers: str | Iterable[str] | None = None,
    method: str = "hungarian",
    partition_size: int | None = None,
    seed: int | None = None,
    weights: Mapping[str, float] | None = None,
    na_values: str | Iterable[str] | Mapping[str, Iterable[object]] | MissingCodes | None = None,
    drop_missing: bool = False,
    time_limit: float | None = None,
    workers: int | None = None,
    progress: bool = False,
    ordinal: Mapping[str, str | Sequence[str]] | None = None,
    dates: Mapping[str, str] | None = None,
    hierarchies: Mapping[str, str | os.PathLike[str] | Hierarchy] | None = None,
    hierarchy_cells: str = "node",
    suppression_limit: float = 0.0,
    structure: str = "classes",
    series: str | os.PathLike[str] | None = None,
    person_id: str | None = None,
    **criteria: object,
) -> Release:
    """Publish a table under k-anonymity by freeform generalization, verified.

    Every original record becomes compatible with exactly k published rows (a k-regular
    generalization graph); one of k disjoint assignments, chosen uniformly at random, attaches
    the non-QI columns, and rows are shuffled. The release is checked by the independent
    verifier before it is returned.

    Parameters
    ----------
    data : pandas.DataFrame
        The original table, one row per person.
    k : int
        Anonymity level, 1 ≤ k ≤ number of rows.
    qi : str or iterable of str
        Quasi-identifier columns; a string is a comma-separated list (``"age,sex"``).
    numeric : str or iterable of str, optional
        QIs generalized to ranges ``lo..hi`` (the others become value sets ``a|b``).
    sensitive : str or iterable of str, optional
        Columns published as they are, attached through the chosen assignment. A sensitive
        column with neither ``l`` nor ``t`` is protected by distinct ℓ = 2 by default (no
        person's candidate rows all show one value; the manifest's model says ``default``);
        ``l=1`` publishes it unprotected, which the manifest (``guarantee.unprotected``) and
        the report flag.
    identifiers : str or iterable of str, optional
        Columns dropped from the release.
    method : str, default "hungarian"
        Graph builder: ``hungarian``, ``sortgreedy``, ``greedy``, ``mip``, ``mondrian`` or
        ``ring`` (see ``anonymatch.tables.methods.registry``).
    partition_size : int, optional
        Records per partition (≥ 2k) for the partitioned methods; default depends on method.
    seed : int, optional
        Seed of the privacy step. None draws OS entropy; a fixed seed lets anyone who knows it
        redo the choice of the true assignment — for tests and experiments only.
    weights : mapping of str to float, optional
        Per-QI weights of the information loss (finite, non-negative).
    na_values : str, iterable of str, mapping or MissingCodes, optional
        Cell texts read as missing in every column (default: the library's usual set), or a
        mapping column → codes (e.g. ``{"EDUCYEAR": [-1, -7, -8, -9]}``) added to the default
        tokens. A missing QI value is kept and published as a suppressed cell ``*``
        (``docs/guarantees/missing.md``).
    drop_missing : bool, default False
        Drop rows with a missing QI instead.
    time_limit : float, optional
        Seconds: per partition for the exact ``mip`` method (default 60); for the freeform
        methods, the run's budget — the rounds stop where what follows them must start, and
        the partitions not done are published as blocks (``methods.blocks``), stated in the
        manifest's ``plan`` block. None: no limit (the plan publishes blocks by itself where
        the rounds are estimated to take minutes: ``structure``).
    workers : int, optional
        Processes for the partitions (None: one per core when worthwhile).
    progress : bool, default False
        Show a progress bar on stderr.
    ordinal : mapping of str to str or sequence of str, optional
        Ordinal QIs and their values, lowest first (``{"Installs": "0+|1+|5+"}``): published
        as ranges over the order (``1+..5+``), scored on ranks. See ``tables.qitypes``.
    dates : mapping of str to str, optional
        Date/datetime QIs and their granularity (``{"Last Updated": "month"}``): published as
        date ranges (``2018-01..2018-06``).
    hierarchies : mapping of str to path or Hierarchy, optional
        Generalization hierarchies of categorical QIs, ARX's format (``tables.hierarchy``).
    hierarchy_cells : {"node", "set"}, default "node"
        Publish the lowest hierarchy node covering each cell (``~label``), or value sets.
    suppression_limit : float, default 0.0
        Share of the records, in [0, 1), that may be dropped from the release as outliers when
        that lowers the loss (ARX's suppression limit; ``anonymatch.tables.models.suppress``). The
        guarantee holds for the published people; ``report["input"]["suppressed"]`` counts the
        others.
    structure : {"classes", "rings", "blocks"}, default "classes"
        What the freeform methods publish under ``l``/``t``: classes that satisfy the models,
        or ``"rings"`` — sensitive rings where they cost less GCP, classes elsewhere, with a
        certificate in the manifest (``docs/guarantees/sensitive.md`` §6). Rings are weaker
        against an insider: a person who knows their own sensitive value and finds it among
        their rows learns every ring member's value. ``"rings"`` needs ``l`` or ``t`` and a
        partitioned method (``hungarian``, ``sortgreedy``, ``greedy``, ``mip``).
        ``"blocks"`` (k-anonymity only, ``hungarian``/``sortgreedy``/``greedy``): the whole
        table as classes of k … 2k − 1 consecutive records of a serpentine sort order, cut at
        the least GCP (``methods.blocks``), instead of the assignment rounds — seconds at any
        k, a class release (no insider weakness), more loss than the rounds where they can
        run. Without ``l``/``t`` the plan chooses blocks by itself when the rounds are
        estimated to cost more than 4 ms of CPU a record (k ≳ 470 with the default
        partitions: Adult at k = 1,000 in seconds, GCP 43.6 % against Mondrian's 64.9 %);
        the manifest's ``plan.blocks`` says so (``why``: ``estimate``). A ``time_limit``
        runs the rounds instead, up to the limit.
    series : path-like, optional
        Publish the next release of the series in this directory (created by the first
        release), with ``person_id``: every person's classes keep ≥ ``l`` of their values
        across the series' releases (``docs/guarantees/series.md``;
        ``tables.series.publish.publish_series``). Needs one ``sensitive`` column with
        distinct ``l``, classes in memory, no kept column; the release, its manifest and the
        private map are recorded in the directory.
    person_id : str, optional
        With ``series``: the steward's column linking a person across the releases (never
        published, kept only in the directory's private map).
    **criteria
        The criteria (``anonymatch.tables.models.CRITERIA``): the sensitive models on the
        ``sensitive`` columns (``docs/guarantees/sensitive.md``; the method builds releases
        that satisfy them), and the criteria counted against a population table (rows they
        refuse are widened after the method); k-anonymity and every criterion are verified;
        InfeasibleError when no release can meet one; and the release checks' options
        (``anonymatch.tables.risk.leakcheck.CHECK_OPTIONS``: ``strict=True`` raises
        ``LeakRefused``, an InputError, for a release whose kept columns leak, and returns
        nothing):

        {criteria}

    Returns
    -------
    Release
        ``release`` (alias ``table``): the published DataFrame; ``report``: the JSON-able
        manifest (method, parameters, information loss, verification); ``graph``: the
        generalization graph; ``cells``: the QI cells as arrays.

    Raises
    ------
    TypeError
        ``data`` is not a DataFrame or a column list is not a list of names.
    InputError
        Bad parameter or data (unknown column or method, k < 1, negative seed, bad weights,
        non-positive partition_size, time_limit or workers…); with ``strict``, a release
        whose kept columns leak (``LeakRefused``, nothing returned).
    InfeasibleError
        k is larger than the number of rows.
    VerificationError
        The release failed the independent verification (never expected).

    See Also
    --------
    verify : Check a release against the original.
    evaluate : Measure the utility of a release.
    anonymatch.tables.models.adaptive.anonymize_adaptive : Per-record levels by b-matching.

    Notes
    -----
    Time: that of the method — Hungarian O(k·P³) per partition of P records, greedy
    O(k·P²) — plus O(n·k) for the privacy step and recoding and the verification's max-flow on
    the compatibility graph. Memory: O(P²) per partition and O(n·k) overall; no n×n
    structure is built.

    References
    ----------
    .. [1] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform
       generalization", ASIA CCS 2015.
    .. [2] K. Choromanski, T. Jebara, K. Tang, "Adaptive anonymity via b-matching",
       NIPS 2013 (per-record levels and suppression: ``anonymize_adaptive``).

    Examples
    --------
    >>> import pandas as pd
    >>> import anonymatch
    >>> df = pd.DataFrame({"age": [23, 25, 31, 35, 41, 47],
    ...                    "sex": ["F", "M", "F", "M", "F", "M"],
    ...                    "disease": ["flu", "cold", "flu", "asthma", "cold", "flu"]})
    >>> result = anonymatch.tables.anonymize(df, k=2, qi="age,sex", numeric="age",
    ...                                      sensitive="disease", seed=0)
    >>> result.report["verification"]["passed"]
    True
    >>> list(result.release.columns)
    ['age', 'sex', 'disease']
    """
    from anonymatch.tables.job import TableJob

    options = (*CRITERIA.parameters(), *CHECK_OPTIONS.parameters())
    accept_keywords("anonymize", criteria, [p.name for p in options])
    job = TableJob.build(dict(
        k=k, qi=qi, numeric=numeric, sensitive=sensitive, identifiers=identifiers,
        method=method, partition_size=partition_size, seed=seed, weights=weights,
        na_values=na_values, drop_missing=drop_missing, time_limit=time_limit,
        workers=workers, progress=progress, ordinal=ordinal, dates=dates, hierarchies=hierarchies,
        hierarchy_cells=hierarchy_cells, suppression_limit=suppression_limit,
        structure=structure, **criteria,
    ))  # fmt: skip
    if series is not None or person_id is not None:
        from anonymatch.tables.series.publish import publish_series

        if series is None or person_id is None:
            raise InputError(f"{param('series')} and {param('person_id')} go together")
        return publish_series(data, job, series, person_id)
    return run_job(require_frame(data, "data"), job)


def run_job(data: pd.DataFrame, job: TableJob) -> Release:
    """Run a validated :class:`~anonymatch.tables.job.TableJob` on a DataFrame: the in-memory
    path, or the adaptive path for a suppression method (``job.method.levels``).

    Parameters
    ----------
    data : pandas.DataFrame
        The original table.
    job : TableJob
        The run (``TableJob.build``).

    Returns
    -------
    Release
        As :func:`anonymize`.
    """
    if job.method.levels:
        from anonymatch.tables.models.adaptive import anonymize_adaptive

        return anonymize_adaptive(data, job=job)
    from anonymatch.tables.pipeline import anonymize as run

    return run(data, job)


def verify(
    original: pd.DataFrame,
    release: pd.DataFrame | Release,
    *,
    k: int,
    qi: str | Iterable[str],
    numeric: str | Iterable[str] | None = None,
    identifiers: str | Iterable[str] | None = None,
    na_values: str | Iterable[str] | Mapping[str, Iterable[object]] | MissingCodes | None = None,
    drop_missing: bool = False,
    sensitive: str | Iterable[str] | None = None,
    ordinal: Mapping[str, str | Sequence[str]] | None = None,
    dates: Mapping[str, str] | None = None,
    hierarchies: Mapping[str, str | os.PathLike[str] | Hierarchy] | None = None,
    hierarchy_cells: str = "node",
    suppression_limit: float = 0.0,
    certificate: Mapping[str, object] | None = None,
    **criteria: object,
) -> VerificationReport:
    """Check that a published table is k-anonymous with respect to the original.

    The verifier sees what an attacker sees: the published cells and the original QI values.
    It rebuilds the compatibility graph (original i is compatible with published row j iff
    every cell of j contains i's value, ``*`` containing everything) and checks that it has a
    k-factor — k disjoint perfect matchings — by maximum flow.

    Parameters
    ----------
    original : pandas.DataFrame
        The original table (only its QI columns are read).
    release : pandas.DataFrame or Release
        The published table, or the result of ``anonymize``.
    k : int
        Anonymity level to check.
    qi : str or iterable of str
        Quasi-identifier columns; a string is a comma-separated list.
    numeric : str or iterable of str, optional
        Numeric QIs (their cells are ranges ``lo..hi``).
    identifiers : str or iterable of str, optional
        Identifier columns: the release fails if it publishes any of them.
    na_values : str or iterable of str, optional
        Cell texts read as missing in the original.
    drop_missing : bool, default False
        Drop original rows with a missing QI, as ``anonymize`` did.
    sensitive : str or iterable of str, optional
        Sensitive columns whose models (``l``/``diversity``/``c``/``t``, as in ``anonymize``)
        are checked: from the values the release shows on each person's candidate rows
        (``docs/guarantees/sensitive.md``).
    ordinal : mapping of str to str or sequence of str, optional
        Ordinal QIs and their orders, as in ``anonymize``.
    dates : mapping of str to str, optional
        Date QIs and their granularity, as in ``anonymize``.
    hierarchies : mapping of str to path or Hierarchy, optional
        Hierarchies of categorical QIs, as in ``anonymize`` (needed to read ``~node`` cells).
    hierarchy_cells : {"node", "set"}, default "node"
        As in ``anonymize``.
    suppression_limit : float, default 0.0
        The suppression limit the release was made with: a release with fewer rows than the
        original passes only if at most ⌊limit·n⌋ people are missing from it and the others
        have a k-factor to the published rows.
    certificate : mapping, optional
        The ring certificate of a release made of sensitive rings (its manifest's
        ``guarantee.certificate``; taken from ``release.report`` when ``release`` is a
        ``Release``): the models are then checked for every draw of the privacy step
        (``docs/guarantees/sensitive.md`` §6).
    **criteria
        The sensitive models to check, as in ``anonymize`` (``anonymatch.tables.models.
        SENSITIVE_CRITERIA``): a ``sensitive`` column with neither ``l`` nor ``t`` is checked for
        distinct ℓ = 2, what ``anonymize`` gives it by default; ``l=1`` checks nothing on it:

        {criteria}

    Returns
    -------
    VerificationReport
        ``passed`` (bool), the figures of the check and a ``reason``; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` or ``release`` is not a DataFrame.
    InputError
        Bad parameter, or a QI column missing or unparsable.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time O(c + n·k·log n) for c compatible pairs (found through per-attribute indexes, never
    n×n) plus the max-flow; memory O(c).

    References
    ----------
    .. [1] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform
       generalization", ASIA CCS 2015, §2.2 and §3.

    Examples
    --------
    >>> import pandas as pd
    >>> import anonymatch
    >>> df = pd.DataFrame({"age": [23, 25, 31, 35], "sex": ["F", "M", "F", "M"]})
    >>> result = anonymatch.tables.anonymize(df, k=2, qi="age,sex", numeric="age", seed=1)
    >>> anonymatch.tables.verify(df, result.release, k=2, qi="age,sex", numeric="age").passed
    True
    >>> anonymatch.tables.verify(df, df, k=2, qi="age,sex", numeric="age").passed
    False
    """
    keywords: dict[str, object] = dict(
        k=k, qi=qi, numeric=numeric, identifiers=identifiers, na_values=na_values,
        drop_missing=drop_missing, sensitive=sensitive, ordinal=ordinal, dates=dates,
        hierarchies=hierarchies, hierarchy_cells=hierarchy_cells,
        suppression_limit=suppression_limit, certificate=certificate, **criteria,
    )  # fmt: skip
    accept_keywords("verify", criteria, [p.name for p in SENSITIVE_CRITERIA.parameters()])
    from anonymatch.tables.job import ReleaseCheck
    from anonymatch.tables.pipeline import Release, verify_release

    if certificate is None and isinstance(release, Release):  # a ring release's own (§6)
        guarantee = release.report.get("guarantee")
        if isinstance(guarantee, dict):
            keywords["certificate"] = guarantee.get("certificate")
    check = ReleaseCheck.build(keywords)
    return verify_release(_published(release), require_frame(original, "original"), check)


def evaluate(
    original: pd.DataFrame,
    release: pd.DataFrame | Release,
    *,
    qi: str | Iterable[str],
    numeric: str | Iterable[str] | None = None,
    weights: Mapping[str, float] | None = None,
    na_values: str | Iterable[str] | Mapping[str, Iterable[object]] | MissingCodes | None = None,
    drop_missing: bool = False,
    ordinal: Mapping[str, str | Sequence[str]] | None = None,
    dates: Mapping[str, str] | None = None,
    hierarchies: Mapping[str, str | os.PathLike[str] | Hierarchy] | None = None,
    hierarchy_cells: str = "node",
) -> InformationLoss:
    """Information loss of a published table: GCP overall and mean NCP per QI.

    The NCP of a cell is its width (numeric: range over the domain's range; categorical: values
    beyond one over the domain size), a suppressed cell counting 1; the GCP averages the NCPs,
    weighted per attribute, over all cells.

    Parameters
    ----------
    original : pandas.DataFrame
        The original table (its QI domains normalise the loss).
    release : pandas.DataFrame or Release
        The published table, or the result of ``anonymize``.
    qi : str or iterable of str
        Quasi-identifier columns; a string is a comma-separated list.
    numeric : str or iterable of str, optional
        Numeric QIs.
    weights : mapping of str to float, optional
        Per-QI weights of the GCP (finite, non-negative).
    na_values : str or iterable of str, optional
        Cell texts read as missing in the original.
    drop_missing : bool, default False
        Drop original rows with a missing QI, as ``anonymize`` did.

    ordinal : mapping of str to str or sequence of str, optional
        Ordinal QIs and their orders, as in ``anonymize``.
    dates : mapping of str to str, optional
        Date QIs and their granularity, as in ``anonymize``.
    hierarchies : mapping of str to path or Hierarchy, optional
        Hierarchies of categorical QIs, as in ``anonymize`` (needed to read ``~node`` cells).
    hierarchy_cells : {"node", "set"}, default "node"
        As in ``anonymize``.

    Returns
    -------
    InformationLoss
        ``gcp`` in [0, 1] and ``ncp`` per attribute; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` or ``release`` is not a DataFrame.
    InputError
        Bad parameter, or a QI column missing or unparsable.

    See Also
    --------
    anonymize : Publish a verified release.
    verify : Check a release against the original.

    Notes
    -----
    Time and memory O(n·d) for n rows and d QIs (plus the size of categorical cells).

    References
    ----------
    .. [1] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform
       generalization", ASIA CCS 2015, eq. (1)–(3).

    Examples
    --------
    >>> import pandas as pd
    >>> import anonymatch
    >>> df = pd.DataFrame({"age": [23, 25, 31, 35], "sex": ["F", "M", "F", "M"]})
    >>> anonymatch.tables.evaluate(df, df, qi="age,sex", numeric="age").gcp
    0.0
    >>> result = anonymatch.tables.anonymize(df, k=2, qi="age,sex", numeric="age", seed=1)
    >>> loss = anonymatch.tables.evaluate(df, result.release, qi="age,sex", numeric="age")
    >>> 0.0 < loss.gcp <= 1.0
    True
    """
    keywords: dict[str, object] = dict(
        qi=qi, numeric=numeric, weights=weights, na_values=na_values, drop_missing=drop_missing,
        ordinal=ordinal, dates=dates, hierarchies=hierarchies, hierarchy_cells=hierarchy_cells,
    )  # fmt: skip
    from anonymatch.tables.job import ReleaseCheck
    from anonymatch.tables.pipeline import evaluate_release

    check = ReleaseCheck.build(keywords)
    return evaluate_release(_published(release), require_frame(original, "original"), check)


def risk(
    original: pd.DataFrame,
    release: pd.DataFrame | Release,
    *,
    qi: str | Iterable[str],
    numeric: str | Iterable[str] | None = None,
    sensitive: str | Iterable[str] | None = None,
    k: int | None = None,
    threshold: float = 0.2,
    na_values: str | Iterable[str] | Mapping[str, Iterable[object]] | MissingCodes | None = None,
    drop_missing: bool = False,
    ordinal: Mapping[str, str | Sequence[str]] | None = None,
    dates: Mapping[str, str] | None = None,
    hierarchies: Mapping[str, str | os.PathLike[str] | Hierarchy] | None = None,
    hierarchy_cells: str = "node",
    certificate: Mapping[str, object] | None = None,
) -> RiskReport:
    """Re-identification and attribute-disclosure risk of a release, against the original.

    Works for every table release, including releases anonymatch did not make: only the
    published cells and the original are read. A person's candidates are the published rows
    that can be theirs in some world consistent with the release (compatible rows lying in some
    perfect matching of people to rows); every figure is computed over them, and the same
    figures are given for the original alone (its QIs published unchanged) as a baseline.

    Parameters
    ----------
    original : pandas.DataFrame
        The original table (its QI and sensitive columns are read).
    release : pandas.DataFrame or Release
        The published table (cells ``lo..hi``, ``a|b``, ``*``), or the result of ``anonymize``.
    qi : str or iterable of str
        Quasi-identifier columns; a string is a comma-separated list.
    numeric : str or iterable of str, optional
        Numeric QIs (their cells are ranges), and sensitive columns whose values are ordered
        numbers (distance with the ordered ground distance).
    sensitive : str or iterable of str, optional
        Sensitive columns: homogeneity, posterior, distance to the table, ℓ figures.
    k : int, optional
        The anonymity the release claims: checked (k-factor), and the bound min(1, c_v / k) on
        the posterior of an attacker who knows the release was made by choosing one of k
        disjoint assignments uniformly.
    threshold : float, default 0.2
        Prosecutor risk above which a record is at risk, in (0, 1] (0.2: fewer than 5
        candidates).
    na_values : str or iterable of str, optional
        Cell texts read as missing in the original.
    drop_missing : bool, default False
        Drop original rows with a missing QI, as ``anonymize`` did.

    ordinal : mapping of str to str or sequence of str, optional
        Ordinal QIs and their orders, as in ``anonymize``.
    dates : mapping of str to str, optional
        Date QIs and their granularity, as in ``anonymize``.
    hierarchies : mapping of str to path or Hierarchy, optional
        Hierarchies of categorical QIs, as in ``anonymize`` (needed to read ``~node`` cells).
    hierarchy_cells : {"node", "set"}, default "node"
        As in ``anonymize``.
    certificate : mapping, optional
        The ring certificate of a release made of sensitive rings (its manifest's
        ``guarantee.certificate``; taken from ``release.report`` when ``release`` is a
        ``Release``): the sensitive figures are then those of the attacker who knows the
        certified graph — a person's posterior is the share of each value among the k rows of
        their ring window, the same under every draw (docs/guarantees/sensitive.md §6) — and
        ``basis`` is ``"certificate"``; without it they are over each person's candidates.

    Returns
    -------
    RiskReport
        ``candidates`` (distribution per person), ``prosecutor`` (1 / candidates: max, mean,
        records above the threshold), ``class_k`` (the k an equivalence-class checker reports),
        ``sensitive`` (per column), ``original`` (the baseline) and ``explanation``;
        ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` or ``release`` is not a DataFrame, or a column list is not a list of names.
    InputError
        Bad parameter (threshold outside (0, 1], k < 1), a column missing or unparsable, or a
        release that cannot be a release of this original (another number of rows, no
        one-to-one pairing of records with compatible rows, other sensitive values).

    See Also
    --------
    verify : Check the k-anonymity a release claims.
    anonymatch.tables.models.sensitive.candidates : The candidate matrix behind every figure.

    Notes
    -----
    Time O(c·√n) for the candidates (Hopcroft–Karp on the c compatible pairs, then
    Dulmage–Mendelsohn in O(n + c)), O(c log c) for the sensitive figures (plus O(n·m) for an
    ordered column of m values), O(n·d log n) for the classes; with ``k`` the max-flow of
    ``verify``. Memory O(c + n·d).

    References
    ----------
    .. [1] K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008
       (prosecutor risk, records at risk).
    .. [2] A. Machanavajjhala et al., "l-diversity: privacy beyond k-anonymity", TKDD 2007
       (homogeneity, distinct and entropy ℓ).
    .. [3] N. Li, T. Li, S. Venkatasubramanian, "t-closeness", ICDE 2007 (EMD).
    .. [4] M. Xue, P. Karras, C. Raïssi, J. Vaidya, K.-L. Tan, "Anonymizing set-valued data by
       nonreciprocal recoding", KDD 2012 (k disjoint assignments, one chosen uniformly).

    Examples
    --------
    >>> import pandas as pd
    >>> import anonymatch
    >>> df = pd.DataFrame({"age": [23, 25, 31, 35], "sex": ["F", "M", "F", "M"],
    ...                    "disease": ["flu", "flu", "cold", "flu"]})
    >>> figures = anonymatch.tables.risk(df, df, qi="age,sex", numeric="age")
    >>> figures.candidates.min, figures.prosecutor.max, figures.original.sample_uniques
    (1, 1.0, 4)
    >>> result = anonymatch.tables.anonymize(df, k=2, qi="age,sex", numeric="age",
    ...                                      sensitive="disease", seed=1)
    >>> figures = anonymatch.tables.risk(df, result, qi="age,sex", numeric="age",
    ...                                  sensitive="disease", k=2)
    >>> figures.candidates.min >= 2, figures.prosecutor.max <= 0.5
    (True, True)
    """
    keywords: dict[str, object] = dict(
        qi=qi, numeric=numeric, sensitive=sensitive, k=k, na_values=na_values,
        drop_missing=drop_missing, ordinal=ordinal, dates=dates, hierarchies=hierarchies,
        hierarchy_cells=hierarchy_cells, certificate=certificate,
    )  # fmt: skip
    from anonymatch.tables.job import ReleaseCheck
    from anonymatch.tables.pipeline import Release
    from anonymatch.tables.risk.risk import assess

    if certificate is None and isinstance(release, Release):  # a ring release's own (§6)
        guarantee = release.report.get("guarantee")
        if isinstance(guarantee, dict) and guarantee.get("certificate") is not None:
            keywords["certificate"] = guarantee["certificate"]

    check = ReleaseCheck.build(keywords)
    return assess(require_frame(original, "original"), _published(release), check, threshold)


# The analyst's side (issue 27), imported on first use so that ``import anonymatch`` stays cheap:
# name -> module under anonymatch.tables.
_LAZY = {
    "read_release": "io.release",
    "midpoints": "io.release",
    "mean_bounds": "io.release",
    "uniform_histogram": "io.release",
    "ReleaseFeatures": "models.features",
    "learn": "models.learn",
    "draw_microdata": "models.imputation",
    "rubin_combine": "models.imputation",
    "rubin_mean": "models.imputation",
    "rubin_proportion": "models.imputation",
    "rubin_coefficient": "models.imputation",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"anonymatch.tables.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


anonymize.__doc__ = (anonymize.__doc__ or "").replace(
    "        {criteria}", CRITERIA.docs() + "\n" + CHECK_OPTIONS.docs()
)
verify.__doc__ = (verify.__doc__ or "").replace("        {criteria}", SENSITIVE_CRITERIA.docs())
keep_functions(__name__, __all__)  # ``verify`` is also a submodule name
