"""Relational-transaction data (people with a row and a set): freeform k-anonymity over the
joint compatibility graph.

The front of the kind — the same three functions as ``anonymatch.tables``, original first::

    people = anonymatch.relational.io.read_relational("people.csv", "items.csv", "id", "code")
    result = anonymatch.relational.anonymize(people, k=10, qi=["age", "sex"], numeric=["age"])
    anonymatch.relational.verify(people, result.release, k=10, qi=["age", "sex"],
                                 numeric=["age"]).passed
    anonymatch.relational.evaluate(people, result.release, qi=["age", "sex"],
                                   numeric=["age"]).to_dict()
    anonymatch.relational.risk(people, result.release, qi=["age", "sex"], numeric=["age"],
                               k=10).to_dict()

``people`` is a ``People`` (``anonymatch.relational.io.read_relational`` or ``from_frames``).
Heavy modules are imported on first call. Guarantee and adversary model:
docs/guarantees/relational.md; release format: docs/release-format.md. Inputs larger than
memory: ``anonymatch.relational.streamed.anonymize_files`` (``anonymize-rt --stream``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from anonymatch.core.errors import ArgumentTypeError
from anonymatch.core.front import keep_functions
from anonymatch.core.params import type_name

if TYPE_CHECKING:
    from anonymatch.relational.io import People, RelationalRelease
    from anonymatch.relational.metrics import RelationalUtility
    from anonymatch.relational.pipeline import RelationalAnonymization
    from anonymatch.relational.verify import RelationalVerificationReport
    from anonymatch.tables.risk.risk import RiskReport

__all__ = ["anonymize", "evaluate", "risk", "verify"]


def _people(value: object, name: str) -> People:
    from anonymatch.relational.io import People

    if not isinstance(value, People):
        raise ArgumentTypeError(
            f"{name} must be People (anonymatch.relational.io.from_frames or read_relational), "
            f"got {type_name(value)}"
        )
    return value


def _release(value: object) -> RelationalRelease:
    from anonymatch.relational.io import RelationalRelease
    from anonymatch.relational.pipeline import RelationalAnonymization

    if isinstance(value, RelationalAnonymization):
        return value.release
    if not isinstance(value, RelationalRelease):
        raise ArgumentTypeError(f"release must be a RelationalRelease, got {type_name(value)}")
    return value


def anonymize(
    people: People,
    *,
    k: int,
    qi: Sequence[str],
    numeric: Sequence[str] = (),
    method: str = "hungarian",
    item_weight: float | None = None,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> RelationalAnonymization:
    """Publish people with a row and a set of items under freeform k-anonymity, verified.

    People are put in a joint order (QIs lexicographically, refined by their items) and cut
    into partitions; in each, the tables' freeform shell joins them by k disjoint assignments
    on the joint cost (GCP increase of the cells + ``item_weight`` × the uncertain items
    added). Each published record shows the covering cells of its preimages (table grammar)
    and their bit vote (``items``, ``uncertain``, ``max_errors``); the true assignment is one
    of the graph's disjoint assignments chosen uniformly at random. The release is checked by
    the independent verifier (joint compatibility, k-factor) before it is returned.

    Parameters
    ----------
    people : People
        The original people (row + item set each).
    k : int
        Level of k-anonymity: every person matches ≥ k records through k disjoint
        assignments.
    qi : sequence of str
        The quasi-identifier columns of the people table.
    numeric : sequence of str, default ()
        The QIs published as ranges (the others as value sets).
    method : str, default "hungarian"
        ``hungarian`` or ``sortgreedy`` (freeform on the joint cost) or ``classes`` (Mondrian
        classes, the baseline): ``anonymatch.relational.methods.names()``.
    item_weight : float, optional
        The price λ ≥ 0 of one uncertain item in GCP units (default
        ``anonymatch.relational.job.DEFAULT_ITEM_WEIGHT``, 0.005).
    seed : int, optional
        Seed of the privacy step; None draws OS entropy.
    options : mapping, optional
        Further keywords of the typed job (``anonymatch.relational.job.PARAMETERS``):
        ``partition_size`` (people per partition, default 20·k within [300, 1000]),
        ``identifiers`` (columns of the people table never published, as the tables'; the id
        column never is: list the columns that rebuild it, as INFORMS' ``DUID`` and ``PID``),
        ``weights`` (per-QI weights of the GCP), ``types`` (a ``QITypes`` of ordinal, date and
        hierarchy QIs, as for tables), ``na_values`` (missing-value tokens or per-column codes
        of the QIs, published as ``*``), ``workers`` (threads building partitions), and the
        sensitive models ``sensitive`` (columns), ``l``, ``diversity``, ``c``, ``t`` as for
        tables — the release is then made of classes that satisfy them, checked on the joint
        graph —, and the population criteria of ``anonymatch.tables.models.CRITERIA``
        (``kmap``, ``journalist_risk``, ``delta_max``, ``delta_min`` with ``population``: a
        DataFrame or path of the people's QIs), enforced on the QI cells, and the release
        checks' options (``anonymatch.tables.risk.leakcheck.CHECK_OPTIONS``): ``strict``
        (bool, default False) refuses a release whose kept columns leak (``LeakRefused``, an
        InputError; nothing returned).

    Returns
    -------
    RelationalAnonymization
        ``release`` (RelationalRelease), ``report`` (manifest), ``verification``.

    Raises
    ------
    TypeError
        ``people`` is not People.
    InputError
        Bad parameter or column; with ``strict``, a release whose kept columns leak.
    InfeasibleError
        k larger than the number of people.
    VerificationError
        The release failed verification (never expected).

    See Also
    --------
    verify : Check a release against the original people.
    evaluate : Measure the utility of a release.

    Notes
    -----
    Time O(k·P³) per partition of P people for Hungarian (O(k·P²·(d + b')) for the weights),
    plus O(n·k) for the privacy step and recoding, plus the verification; memory O(P² + n·k).

    References
    ----------
    .. [1] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform
       generalization", ASIACCS 2015.
    .. [2] M. Xue, P. Karras, C. Raïssi, J. Vaidya, K.-L. Tan, "Anonymizing set-valued data by
       nonreciprocal recoding", KDD 2012.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.relational import anonymize
    >>> from anonymatch.relational.io import from_frames
    >>> rows = pd.DataFrame({"id": list("abcdef"), "age": [30, 31, 32, 40, 41, 42]})
    >>> items = pd.DataFrame({"id": list("abcdeff"), "code": list("xxyyzzx")})
    >>> people = from_frames(rows, items, "id", "code")
    >>> result = anonymize(people, k=2, qi=["age"], numeric=["age"], seed=0)
    >>> result.verification.passed
    True
    """
    from anonymatch.relational.job import DEFAULT_ITEM_WEIGHT, RelationalJob
    from anonymatch.relational.pipeline import run_job

    job = RelationalJob.build(
        {
            **dict(options or {}),
            "k": k,
            "qi": qi,
            "numeric": numeric,
            "method": method,
            "item_weight": DEFAULT_ITEM_WEIGHT if item_weight is None else item_weight,
            "seed": seed,
        }
    )
    people = _people(people, "people")
    result = run_job(people, job)
    from anonymatch.relational.io import manifest_inputs

    # what ``anonymatch report`` needs to read the originals again (as anonymize-rt records)
    given, missing = manifest_inputs(people, job.na)
    report = cast(dict[str, Any], result.report)
    report["input"] = {**report["input"], **given}
    report["parameters"] = {**report["parameters"], "missing": missing}
    return result


def verify(
    original: People,
    release: RelationalRelease | RelationalAnonymization,
    *,
    k: int,
    qi: Sequence[str],
    numeric: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
) -> RelationalVerificationReport:
    """Check a relational-transaction release for k-anonymity against the original people.

    Person i matches published record j iff its QI values lie in j's cells and its items agree
    with j's set part; the release passes iff this joint compatibility graph has a k-factor.

    Parameters
    ----------
    original : People
        The original people.
    release : RelationalRelease or RelationalAnonymization
        The published records.
    k : int
        The level to check.
    qi : sequence of str
        The QI columns (as given to ``anonymize``).
    numeric : sequence of str, default ()
        The QIs published as ranges.
    options : mapping, optional
        As given to ``anonymize``: the QIs' ``types`` and ``na_values``, and the sensitive
        models ``sensitive``, ``l``, ``diversity``, ``c``, ``t`` to check on the joint graph.

    Returns
    -------
    RelationalVerificationReport
        ``passed``, the flow figures and a ``reason``.

    Raises
    ------
    TypeError
        ``original`` is not People or ``release`` not a RelationalRelease.
    InputError
        A bad level or column.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time: the tables' candidate search, the set rule on the QI-compatible pairs and a
    max-flow; memory O(pairs).

    References
    ----------
    .. [1] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform
       generalization", ASIACCS 2015, §2.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.relational import anonymize, verify
    >>> from anonymatch.relational.io import from_frames
    >>> rows = pd.DataFrame({"id": list("abcd"), "age": [30, 31, 40, 41]})
    >>> people = from_frames(rows, pd.DataFrame({"id": list("abcd"), "code": list("xxyy")}),
    ...                      "id", "code")
    >>> result = anonymize(people, k=2, qi=["age"], numeric=["age"], seed=0)
    >>> verify(people, result, k=2, qi=["age"], numeric=["age"]).passed
    True
    """
    from anonymatch.relational.job import RelationalJob
    from anonymatch.relational.pipeline import encode
    from anonymatch.relational.verify import verify_relational
    from anonymatch.tables.models import SENSITIVE_CRITERIA

    people = _people(original, "original")
    published = _release(release)
    extra = dict(options or {})
    known = ("types", "na_values", "sensitive", *(p.name for p in SENSITIVE_CRITERIA.parameters()))
    for name in extra:
        if name not in known:
            raise TypeError(
                f"verify() got an unexpected option {name!r}; known: {', '.join(known)}"
            )
    job = RelationalJob.build(dict(**extra, k=k, qi=qi, numeric=numeric))
    enc = encode(people, job.schema, job.na)
    return verify_relational(published, people, enc, job.k, models=job.models)


def evaluate(
    original: People,
    release: RelationalRelease | RelationalAnonymization,
    *,
    qi: Sequence[str],
    numeric: Sequence[str] = (),
    queries: int = 1000,
    attributes: int = 2,
    seed: int | None = 0,
) -> RelationalUtility:
    """Utility of a relational-transaction release, measured from the files.

    The relational GCP, the uncertain items per record, the relative error of a workload of
    count queries mixing attribute ranges and item predicates, and the candidates per person on
    the joint compatibility graph (``anonymatch.relational.metrics``).

    Parameters
    ----------
    original : People
        The original people.
    release : RelationalRelease or RelationalAnonymization
        The published records.
    qi : sequence of str
        The QI columns (as given to ``anonymize``).
    numeric : sequence of str, default ()
        The QIs published as ranges (as given to ``anonymize``).
    queries : int, default 1000
        Count queries of the workload.
    attributes : int, default 2
        Attribute predicates per query.
    seed : int or None, default 0
        Seed of the workload (the same queries for every release).

    Returns
    -------
    RelationalUtility
        ``relational_gcp``, ``ncp``, ``mean_uncertain``, ``mean_max_errors``,
        ``query_error`` (mean, and ``query_error_median``), ``min_candidates``,
        ``median_candidates``; ``to_dict()`` for JSON.

    Raises
    ------
    TypeError
        ``original`` is not People or ``release`` not a RelationalRelease.
    InputError
        ``queries`` or ``attributes`` < 1, a negative seed or a bad column.

    See Also
    --------
    anonymize : Publish a verified release.

    Notes
    -----
    Time O(queries · n · d) plus the joint compatibility of ``verify``.

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan, "Workload-aware anonymization", KDD
       2006 (relative error with a sanity bound).
    .. [2] G. Poulis, G. Loukides, A. Gkoulalas-Divanis, S. Skiadopoulos, "Anonymizing data
       with relational and transaction attributes", ECML PKDD 2013.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.relational import anonymize, evaluate
    >>> from anonymatch.relational.io import from_frames
    >>> rows = pd.DataFrame({"id": list("abcd"), "age": [30, 31, 40, 41]})
    >>> people = from_frames(rows, pd.DataFrame({"id": list("abcd"), "code": list("xxyy")}),
    ...                      "id", "code")
    >>> result = anonymize(people, k=2, qi=["age"], numeric=["age"], seed=0)
    >>> figures = evaluate(people, result, qi=["age"], numeric=["age"], queries=20)
    >>> 0.0 <= figures.relational_gcp <= 1.0
    True
    """
    from anonymatch.core.params import check_seed, integer
    from anonymatch.relational.metrics import relational_utility
    from anonymatch.relational.pipeline import encode
    from anonymatch.tables.columns.schema import Schema

    people = _people(original, "original")
    published = _release(release)
    enc = encode(people, Schema.build(qi, numeric))
    return relational_utility(
        people,
        published,
        enc,
        integer(queries, "queries"),
        integer(attributes, "attributes"),
        check_seed(seed),
    )


def risk(
    original: People,
    release: RelationalRelease | RelationalAnonymization,
    *,
    qi: Sequence[str],
    numeric: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    k: int | None = None,
    threshold: float = 0.2,
    options: Mapping[str, Any] | None = None,
) -> RiskReport:
    """Re-identification and attribute-disclosure risk of a relational release, on the joint
    graph.

    A person's candidates are the published records whose QI cells cover their values *and*
    whose set part agrees with their items, and that lie in some perfect matching of people to
    records (the verifier's joint compatibility, rebuilt from the published records and the
    originals only). The figures are the table ``risk``'s: candidates per person, prosecutor
    risk 1 / candidates, people above ``threshold``, identical records (``class_k``), the
    sensitive columns' posterior figures, and the original alone (QIs and item sets published
    unchanged) as a baseline.

    Parameters
    ----------
    original : People
        The original people.
    release : RelationalRelease or RelationalAnonymization
        The published records (any method).
    qi : sequence of str
        The QI columns (as given to ``anonymize``).
    numeric : sequence of str, default ()
        The QIs published as ranges, and sensitive columns whose values are ordered numbers.
    sensitive : sequence of str, default ()
        Sensitive columns: homogeneity, posterior, distance to the table, ℓ figures.
    k : int, optional
        The anonymity the release claims: checked (k-factor of the joint graph), and the bound
        min(1, c_v / k) on the posterior of an attacker who knows the mechanism.
    threshold : float, default 0.2
        Prosecutor risk above which a person is at risk, in (0, 1] (0.2: fewer than 5
        candidates).
    options : mapping, optional
        ``types`` (a ``QITypes`` of ordinal, date and hierarchy QIs) and ``na_values`` (the
        QIs' missing-value tokens or codes), as given to ``anonymize``.

    Returns
    -------
    RiskReport
        As ``anonymatch.tables.risk``: ``candidates``, ``prosecutor``, ``class_k``,
        ``sensitive``, ``original`` and ``explanation``; ``to_dict()`` for JSON
        (``anonymatch-risk/1``).

    Raises
    ------
    TypeError
        ``original`` is not People or ``release`` not a RelationalRelease, or an unknown
        option.
    InputError
        A bad threshold, level or column, or a release that cannot be a release of these
        people (another count, no one-to-one pairing on the joint graph).

    See Also
    --------
    verify : Check the k-anonymity a release claims.
    anonymatch.tables.risk : The same figures for a table release.

    Notes
    -----
    Time: the verifier's joint compatibility, then Dinic's max-flow and a strongly connected
    components pass on the graph contracted over identical people (a second max-flow with
    ``k``), O(pairs log pairs) for the sensitive figures; memory O(n·d + joint pairs).

    References
    ----------
    .. [1] K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008
       (prosecutor risk, records at risk).
    .. [2] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform
       generalization", ASIACCS 2015 (candidates in some perfect matching).

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.relational import anonymize, risk
    >>> from anonymatch.relational.io import from_frames
    >>> rows = pd.DataFrame({"id": list("abcd"), "age": [30, 31, 40, 41]})
    >>> people = from_frames(rows, pd.DataFrame({"id": list("abcd"), "code": list("xxyy")}),
    ...                      "id", "code")
    >>> result = anonymize(people, k=2, qi=["age"], numeric=["age"], seed=0)
    >>> figures = risk(people, result, qi=["age"], numeric=["age"], k=2)
    >>> figures.candidates.min, figures.prosecutor.max, figures.k_holds
    (2, 0.5, True)
    """
    from anonymatch.core.params import optional_integer
    from anonymatch.relational.risk import RiskQuestion, assess_relational
    from anonymatch.tables.columns.schema import Schema
    from anonymatch.tables.job import missing, qi_types

    people = _people(original, "original")
    published = _release(release)
    extra = dict(options or {})
    for name in extra:
        if name not in ("types", "na_values"):
            raise TypeError(f"risk() got an unexpected option {name!r}; known: types, na_values")
    schema = Schema.build(
        qi, numeric, sensitive=sensitive, types=qi_types(types=extra.get("types"))
    )
    question = RiskQuestion(
        schema, missing(extra.get("na_values")), optional_integer(k, "k"), threshold
    )
    return assess_relational(people, published, question)


keep_functions(__name__, __all__)  # ``verify`` is also a submodule name
