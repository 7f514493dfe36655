"""The typed jobs from a job file or from a release's manifest, typed all the way.

Every entry point of a kind builds the same typed job (``TableJob``, ``SetJob``,
``SparseJob``, ``GraphJob``, ``RelationalJob``): the Python front from its keywords, a command
from its flags, and — here — a job file (one function per kind, :data:`JOB_KEYWORDS`; a
command given ``--config`` takes them, flags given on the command line win:
``cli.config.with_job_file``) and a table manifest (:func:`manifest_keywords`, what a release
says it was made with). The values go from the job file's or the manifest's typed form straight
to the job's ``build``: a number stays a number, a list stays a list, a column name keeps its
commas, nothing is turned into command-line text and parsed again.
``tests/app/test_tablejob.py`` checks that the sources build equal jobs.

Every function is O(number of columns).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from anonymatch.core.errors import InputError
from anonymatch.tables.models import (
    ALL_CRITERIA,
    CRITERIA,
    POPULATION_CRITERIA,
    SAMPLE_CRITERIA,
)
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS

if TYPE_CHECKING:
    from anonymatch.app.jobfile import Job
    from anonymatch.tables.job import TableJob

EXECUTION = ("executor", "workers", "scheduler", "chunk_rows")
"""The ``[execution]`` keys, keywords of the typed jobs by the same names."""

ROLE_FILTERED = (
    "numeric", "weights", "ordinal", "dates", "hierarchies",
    *(p.name for p in CRITERIA.parameters() if p.per_column),  # l, t: per sensitive column
)  # fmt: skip
"""Per-column keywords restricted to the columns that have the role in the run (a flag such as
``--qi a,b`` on the command line overrides the job's QIs; the job's per-column values for other
columns then no longer apply)."""


def job_file_keywords(
    job: Job, qi: Iterable[str] | None = None, sensitive: Iterable[str] | None = None
) -> dict[str, Any]:
    """The ``TableJob.build`` keywords a table job file gives.

    Parameters
    ----------
    job : Job
        A validated, resolved job file of kind ``table`` (``anonymatch.app.jobfile``).
    qi, sensitive : iterable of str, optional
        The run's QIs and sensitive columns when the command line overrides the job's: the
        per-column values (``ROLE_FILTERED``) are kept for those columns only.

    Returns
    -------
    dict
        Keyword → typed value, only for what the job says (defaults are ``TableJob``'s).
    """
    from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, MissingCodes

    if job.kind != "table":
        raise InputError(f'a job of kind = "{job.kind}" is not a table job')
    quasi = list(job.qi) if qi is None else list(qi)
    sens = list(job.sensitive) if sensitive is None else list(sensitive)
    columns, model, method, run = job.columns, job.model, job.method, job.execution
    out: dict[str, Any] = {
        "qi": quasi,
        "numeric": [n for n in job.numeric if n in quasi or n in sens],
        "sensitive": sens,
        "identifiers": list(job.identifiers),
        "weights": {n: c.weight for n, c in columns.items() if c.weight is not None and n in quasi}
        or None,
        "ordinal": {
            n: list(c.order)
            for n, c in columns.items()
            if c.type == "ordinal" and c.order and (n in quasi or n in sens)
        }
        or None,
        "dates": {
            n: c.granularity or ("day" if c.type == "date" else "second")
            for n, c in columns.items()
            if c.type in ("date", "datetime") and n in quasi
        }
        or None,
        "hierarchies": {
            n: c.hierarchy for n, c in columns.items() if c.hierarchy is not None and n in quasi
        }
        or None,
        "drop_missing": job.input.drop_missing,
    }
    codes = {n: tuple(c.na) for n, c in columns.items() if c.na is not None}
    tokens = tuple(job.input.na) if job.input.na is not None else DEFAULT_NA_VALUES
    if codes or job.input.na is not None:
        out["na_values"] = MissingCodes(tokens, codes)
    if model.suppression_limit is not None:
        out["suppression_limit"] = model.suppression_limit
    # the level, the sensitive models, the population's; the release checks' (strict)
    for p in (*CRITERIA.parameters(), *CHECK_OPTIONS.parameters()):
        value = getattr(model, p.name)
        if p.per_column and isinstance(value, Mapping):  # for the run's sensitive columns
            value = {n: v for n, v in value.items() if n in sens} or None
        if value is not None:
            out[p.name] = value
    if method.name is not None:
        out["method"] = method.name
    for key in ("partition_size", "time_limit", "neighbours", "hierarchy_cells", "structure"):
        if getattr(method, key) is not None:
            out[key] = getattr(method, key)
    if method.epsilons is not None:
        out["epsilons"] = tuple(method.epsilons)
    for key in EXECUTION:
        if getattr(run, key) is not None:
            out[key] = getattr(run, key)
    return out


KIND_KEYS: dict[str, dict[str, str]] = {
    "transactions": {"k": "model.k", "ell": "model.l", "m": "model.m", "method": "method.name",
                     "segment": "method.segment"},
    "sparse": {"k": "model.k", "method": "method.name", "epsilon": "method.epsilon",
               "dp": "method.dp", "beta": "method.beta", "runs": "method.runs",
               "refine": "method.lsh", **{k: f"execution.{k}" for k in EXECUTION}},
    "graph": {"k": "model.k", "closed": "method.closed", "iterations": "method.iterations",
              "method": "method.name", "keep_ids": "method.keep_ids"},
}  # fmt: skip
"""The typed job's keyword → the job file's key, of the set, sparse and graph jobs (``m`` of
the k^m commands and the graph's ``keep_ids`` beside them)."""


def kind_keywords(job: Job) -> dict[str, Any]:
    """The typed job's keywords a set, sparse or graph job file gives (:data:`KIND_KEYS`;
    ``refine`` is ``method.lsh = "support"``)."""
    out: dict[str, Any] = {}
    for keyword, key in KIND_KEYS[job.kind].items():
        section, name = key.split(".")
        value = getattr(getattr(job, section), name)
        if value is not None:
            out[keyword] = value == "support" if keyword == "refine" else value
    return out


def relational_job_keywords(
    job: Job, qi: Iterable[str] | None = None, sensitive: Iterable[str] | None = None
) -> dict[str, Any]:
    """The ``RelationalJob.build`` keywords a relational job file gives: the tables' ones
    (:func:`job_file_keywords` over the people's columns) with the typed QIs as ``ordinal``,
    ``dates``, ``hierarchies`` and ``hierarchy_cells`` (:func:`with_types` makes them
    ``types``), ``na_values`` every column's codes (the item column's mean "no item"),
    ``item_weight``, and the execution keys. ``qi``/``sensitive`` as for
    :func:`job_file_keywords`."""
    if job.kind != "relational":
        raise InputError(f'a job of kind = "{job.kind}" is not a relational job')
    out = job_file_keywords(job.model_copy(update={"kind": "table"}), qi, sensitive)
    for key in ("weights", "k_column", "suppression_limit", "drop_missing", "time_limit",
                "neighbours", "epsilons", "structure"):  # fmt: skip
        out.pop(key, None)  # refused in a relational job (jobfile), or not a relational key
    if job.method.item_weight is not None:
        out["item_weight"] = job.method.item_weight
    return out


def with_types(keywords: Mapping[str, Any]) -> dict[str, Any]:
    """``keywords`` with the typed QIs' keys (``ordinal``, ``dates``, ``hierarchies``,
    ``hierarchy_cells``) as one ``types`` (``tables.job.qi_types``; hierarchy files read)."""
    from anonymatch.tables.job import qi_types

    pieces = ("ordinal", "dates", "hierarchies", "hierarchy_cells")
    out = {key: value for key, value in keywords.items() if key not in pieces}
    get = keywords.get
    out["types"] = qi_types(get("ordinal"), get("dates"), get("hierarchies"),
                            get("hierarchy_cells") or "node")  # fmt: skip
    return out


def manifest_keywords(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The ``TableJob.build`` keywords a table release's manifest records.

    The manifest holds what is needed to check the release again — roles, level, sensitive
    models, method, partition size, suppression limit, missing-value codes — but not how the
    work ran (executor, workers) nor the seed, which is never written.

    Parameters
    ----------
    manifest : mapping
        A manifest (``docs/manifest.md``) of ``anonymize`` on a table.

    Returns
    -------
    dict
        Keyword → value.

    Raises
    ------
    InputError
        Not a table manifest, or a block of the wrong type.
    """
    parameters, guarantee = manifest.get("parameters"), manifest.get("guarantee")
    if not isinstance(parameters, Mapping) or not isinstance(guarantee, Mapping):
        raise InputError("the manifest has no parameters/guarantee objects")
    if manifest.get("data_kind") not in (None, "table"):
        raise InputError(f"a manifest of a {manifest.get('data_kind')} release is not a table job")
    out: dict[str, Any] = {}
    if manifest.get("method") != "kl-hypergraph":  # anonymize-kl's, no method of the job
        out["method"] = manifest.get("method")
    for key in ("qi", "numeric", "sensitive", "identifiers"):
        out[key] = list(parameters.get(key) or [])
    out["weights"] = dict(parameters.get("weights") or {}) or None
    for key in ("ordinal", "dates", "hierarchy_cells"):
        if parameters.get(key):
            out[key] = parameters[key]
    trees = parameters.get("hierarchies")
    if isinstance(trees, Mapping) and trees:
        out["hierarchies"] = {c: h.get("path") for c, h in trees.items() if isinstance(h, Mapping)}
    # the level and the sensitive models, read back by their criteria (``claimed_in``); the
    # level column is an identifier of the release's schema, not of the job
    out.update(SAMPLE_CRITERIA.claims(guarantee, {"sensitive": out["sensitive"]}))
    if out.get("k_column") is not None:
        out["identifiers"] = [c for c in out["identifiers"] if c != out["k_column"]]
    if parameters.get("suppression_limit"):
        out["suppression_limit"] = parameters["suppression_limit"]
    population = claimed_population(guarantee)
    if population is not None:  # the criteria counted against a population given by path
        out.update(POPULATION_CRITERIA.claims(guarantee), population=population)
    plan = manifest.get("plan")
    if isinstance(plan, Mapping) and plan.get("partition_size") is not None:
        out["partition_size"] = plan["partition_size"]
    missing = parameters.get("missing")
    read = parameters.get("input_options")
    if isinstance(missing, Mapping):
        from anonymatch.tables.columns.schema import MissingCodes

        columns = missing.get("columns") or {}
        out["na_values"] = MissingCodes(
            tuple(missing.get("tokens") or ()), {c: tuple(v) for c, v in columns.items()}
        )
        out["drop_missing"] = bool(missing.get("drop"))
    elif isinstance(read, Mapping):  # a manifest written before parameters.missing
        from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, MissingCodes

        tokens = read.get("na_values")
        codes = read.get("na") or {}
        out["na_values"] = MissingCodes(
            tuple(tokens) if tokens is not None else DEFAULT_NA_VALUES,
            {c: tuple(v) for c, v in codes.items()},
        )
        out["drop_missing"] = bool(read.get("drop_missing"))
    return out


def claimed_population(guarantee: Mapping[str, Any]) -> str | None:
    """The population file a manifest's criteria were counted against (their blocks'
    ``population``), or None (no such criterion, or a population given as a DataFrame)."""
    for block in guarantee.values():
        if isinstance(block, Mapping) and isinstance(block.get("population"), str):
            return block["population"]
    return None


CHECKED_CLAIMS = ("model", "certificate", "construction", "over")
"""The ``guarantee`` keys of a table (or relational) manifest that ``verify`` (``verify-rt``)
re-checks besides the criteria's own keys (``tables.models.ALL_CRITERIA``: ``k``,
``levels``, ``sensitive``, the population criteria's, (k,ℓ)'s ``known``): the level's model,
the sensitive models' ring certificate and construction, the relational joint compatibility
(``over``)."""

WARNING_KEYS = ("insider_weakness", "unprotected")
"""The ``guarantee`` keys that state a weakness, not a claim (a ring release's
``insider_weakness``, the sensitive columns published ``unprotected``): nothing to re-verify,
never reported as unchecked."""


def unchecked_claims(manifest: Mapping[str, Any] | None, population: str | None) -> list[str]:
    """The claims of a table manifest's ``guarantee`` that a check cannot re-verify, one line
    each: a key no check knows, a criterion whose population was not given by path, or whose
    population file is not the one the manifest names (its SHA-256 differs). Empty without a
    manifest. A check reports these as UNCHECKED and fails (exit 4): a claim is never passed
    unread. O(claims + reading the population file once for its digest)."""
    if manifest is None:
        return []
    guarantee = manifest.get("guarantee")
    if not isinstance(guarantee, Mapping):
        return ["the manifest has no guarantee object"]
    by_name = {c.name: c for c in ALL_CRITERIA.criteria}  # (k,ℓ)'s ``known`` too
    out = []
    digest: object = None
    for key, block in guarantee.items():
        if key in CHECKED_CLAIMS or key in WARNING_KEYS:
            continue
        criterion = by_name.get(key)
        if criterion is None:
            out.append(f"guarantee.{key}: no check of this tool re-verifies this claim")
        elif criterion.level and key != "k" and not criterion.claimed_in(guarantee, {}):
            # e.g. a known without the (k,l) model: no check reads it (``k`` is every level
            # model's: k-anonymity's, an adaptive release's common level, (k,l)'s)
            out.append(
                f"guarantee.{key}: claimed without the {criterion.title} model; no check "
                "re-verifies it"
            )
        elif not criterion.needs_population:  # from the release and the original alone
            continue
        elif not isinstance(block, Mapping) or not isinstance(block.get("population"), str):
            out.append(
                f"{criterion.title}: the manifest names no population file to check it "
                "against (it was given as a DataFrame)"
            )
        elif population is not None and block.get("population_sha256") is not None:
            from anonymatch.core.manifest import file_digest

            digest = file_digest(population) if digest is None else digest
            if digest != block["population_sha256"]:
                out.append(
                    f"{criterion.title}: the population {population} is not the file the "
                    "manifest names (its SHA-256 differs)"
                )
    return out


def manifest_job(manifest: Mapping[str, Any]) -> TableJob:
    """The typed job a manifest records, validated as any job: a level written as ``true`` or
    ``"10"`` is refused, never read as a number. The manifest's typed QIs (ordinal, dates,
    hierarchies) are left out: a check takes them from its own options, and their hierarchy
    files are not read here.

    Raises
    ------
    InputError
        ``the manifest does not describe a valid job: …`` with the first problem.
    """
    from anonymatch.tables.job import TableJob

    try:
        keywords = manifest_keywords(manifest)
        for key in ("ordinal", "dates", "hierarchies", "hierarchy_cells"):
            keywords.pop(key, None)
        return TableJob.build(keywords)
    except (InputError, TypeError, AttributeError, KeyError) as exc:
        raise InputError(f"the manifest does not describe a valid job: {exc}") from None


JOB_KEYWORDS: dict[str, Callable[..., dict[str, Any]]] = {
    "table": job_file_keywords,
    **dict.fromkeys(KIND_KEYS, kind_keywords),
    "relational": relational_job_keywords,
}
"""Kind → the function mapping a job file of that kind to its typed job's keywords."""
