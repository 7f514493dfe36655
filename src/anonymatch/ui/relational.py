"""The web app's relational-transaction runs (people with a row and a set, ``anonymize-rt``):
an items table uploaded beside the people table turns the dataset page into a relational job.

The upload form takes an optional long items table (one row per person id and item) beside the
people table; both are stored under generated names in the session's private directory (mode
0600) and read within the same limits as a table (:func:`attach_items`). The dataset page then
offers the id and item columns, the item codes meaning "no item", the item weight λ and the
relational methods (``anonymatch.relational.methods``); :func:`settings_from_form` turns the form
into a job file of ``kind = "relational"`` validated by the job file's models and as the run's
``RelationalJob``. The run is ``anonymize-rt --config job.toml -o run/release.jsonl --report
run/manifest.json --report-html run/report.html --force -- PEOPLE`` (the items table named by the
job, relative to the private directory). After the run :func:`headline` measures the release
from the files as ``risk-rt`` and ``evaluate-rt`` do: candidates per person on the joint graph
(prosecutor risk) and the relational utility (relational GCP, uncertain items per record, the
relative error of 1,000 count queries mixing attribute ranges and items).

No seed is offered or written (every run draws OS entropy). Every function is O(1) but
:func:`attach_items` (reading a sample of the items table) and :func:`headline` (the verifier's
joint compatibility and the query workload).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from anonymatch.core.errors import InputError
from anonymatch.ui.data import (
    Dataset,
    HierarchyFile,
    Settings,
    _number,
    _text,
    _tokens,
    column_spec,
    criteria_values,
    risk_summary,
)

SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
"""What the relational commands read (by extension, with a header line)."""
RELEASE = "release.jsonl"
"""The run's release (JSON Lines, one person a line)."""
MAX_PEOPLE = 500_000
"""The result page's figures are not measured past this many people (as the table headline)."""


def methods() -> dict[str, Any]:
    """The relational methods the form offers (the registry's names and summaries)."""
    from anonymatch.relational.methods import registry

    return registry()


def check_readable(dataset: Dataset, what: str) -> None:
    """InputError unless the relational commands can read ``dataset`` as it is: CSV (comma),
    TSV (tab) or Parquet, with a header line."""
    suffix = dataset.path.suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(
            f"{what} {dataset.name}: the relational runs read CSV, TSV or Parquet files "
            "(by their extension)"
        )
    if not dataset.header:
        raise InputError(f"{what} {dataset.name}: the relational runs read files with a header")
    expected = {".csv": ",", ".tsv": "\t"}.get(suffix)
    if expected is not None and dataset.separator != expected:
        raise InputError(
            f"{what} {dataset.name}: a {suffix} file of a relational run is separated by "
            f"{'commas' if expected == ',' else 'tabs'}"
        )


def attach_items(people: Dataset, items: Dataset) -> Dataset:
    """``people`` with its items table (read already, ``data.load``): the id column guessed as
    ``anonymatch init`` guesses it (``app.infer.guess_id_column``: of the columns both tables
    have, the one with the most distinct values among the people), the item column as the
    items table's first column the people table lacks; the id column's role set to identifier
    (it is never published). InputError (one line) when the tables share no column or the
    items table has no other column."""
    check_readable(people, "the people table")
    check_readable(items, "the items table")
    shared = [c for c in people.columns if c in items.columns]
    if not shared:
        raise InputError(
            f"the items table {items.name} shares no column with {people.name}: it needs the "
            "person id column"
        )
    from anonymatch.app.infer import guess_id_column

    id_column = guess_id_column(people.distinct, shared)
    rest = [c for c in items.columns if c not in people.columns]
    if not rest:
        raise InputError(
            f"the items table {items.name} has no column besides the people table's: it needs "
            "an item column"
        )
    people.items, people.id_column, people.item_column = items, id_column, rest[0]
    people.roles[id_column] = "identifier"
    return people


def settings_from_form(
    cls: type[Settings],
    form: Mapping[str, Any],
    dataset: Dataset,
    hierarchies: Mapping[str, HierarchyFile],
) -> Settings:
    """The dataset page's form as a relational job (``kind = "relational"``), validated by the
    job file's models (one located line, ``the form: …``) and as the run's ``RelationalJob``
    (:func:`relational_job`). The people table's columns give roles, types and per-column
    missing codes (``columns.NAME.na``); the item column's codes mean "no item"; the model
    takes k and the sensitive models, the method its name, λ and the partition size."""
    from anonymatch.app.jobfile import parse_job

    assert dataset.items is not None
    items = dataset.items
    id_column = _text(form, "id_column") or dataset.id_column
    item_column = _text(form, "item_column") or dataset.item_column
    if id_column not in dataset.columns or id_column not in items.columns:
        raise InputError(f"the id column {id_column!r} must be a column of both tables")
    if item_column not in items.columns or item_column == id_column:
        raise InputError(f"the item column {item_column!r} must be another column of the items")
    method = _text(form, "method") or "hungarian"
    if method not in methods():
        raise InputError(f"unknown relational method {method!r}")
    columns: dict[str, dict[str, Any]] = {}
    for c in dataset.columns:
        role = "identifier" if c == id_column else (_text(form, f"role:{c}") or "other")
        columns[c] = column_spec(form, c, role, hierarchies)
    no_item = _tokens(_text(form, "item_na"))
    if no_item:
        columns[item_column] = {"na": no_item}
    model: dict[str, Any] = {}
    k = _number(form.get("k"), int, "k")
    if k is not None:
        model["k"] = k  # checked by the job file's models and the RelationalJob
    model.update(criteria_values(form))  # the sensitive models; the population's
    method_keys: dict[str, Any] = {"name": method}
    weight = _number(form.get("item_weight"), float, "the item weight")
    if weight is not None:
        method_keys["item_weight"] = weight
    size = _number(form.get("partition_size"), int, "the partition size")
    if size is not None:
        method_keys["partition_size"] = size
    mapping: dict[str, Any] = {
        "kind": "relational",
        "input": {
            "path": dataset.name,
            "items": items.name,
            "id_column": id_column,
            "item_column": item_column,
        },
        "columns": columns,
        "model": model,
        "method": method_keys,
        "output": {"path": RELEASE, "report": "manifest.json"},
    }
    used = {c for c, col in columns.items() if "hierarchy" in col}
    settings = cls(parse_job(mapping, "the form"), {c: h for c, h in hierarchies.items()
                                                    if c in used})  # fmt: skip
    relational_job(settings, criteria=False)  # the run's own checks, before the run
    return settings


def relational_job(settings: Settings, criteria: bool = True) -> Any:
    """The run's ``RelationalJob`` from the settings' job file (the hierarchies read from their
    stored files), as ``anonymize-rt --config`` builds it, with the population criteria
    counted against the uploaded population (``criteria``: False checks the rest before the
    population is stored). InputError (one line) on a problem."""
    from anonymatch.app.tablejob import relational_job_keywords, with_types
    from anonymatch.relational.job import PARAMETERS, RelationalJob
    from anonymatch.tables.columns.schema import MissingCodes
    from anonymatch.tables.models import POPULATION_CRITERIA

    job = settings.job
    columns = {
        c: col.model_copy(update={"hierarchy": str(settings.hierarchies[c].path)})
        if c in settings.hierarchies
        else col
        for c, col in job.columns.items()
    }
    keywords = with_types(relational_job_keywords(job.model_copy(update={"columns": columns})))
    codes = keywords.get("na_values") or MissingCodes()
    item_column = job.input.item_column
    keywords["na_values"] = MissingCodes(codes.tokens, {c: v for c, v in codes.columns.items()
                                                        if c != item_column})  # fmt: skip
    for name in POPULATION_CRITERIA.parameters():  # the uploaded population's, below
        keywords.pop(name.name, None)
    keywords = {key: value for key, value in keywords.items() if key in PARAMETERS}
    return RelationalJob.build({**keywords, **(_criteria(settings) if criteria else {})})


def _criteria(settings: Settings) -> dict[str, Any]:
    """The job's population criteria and the uploaded population's stored file."""
    from anonymatch.tables.models import POPULATION_CRITERIA

    model = settings.criteria_model(str)
    return {p.name: getattr(model, p.name) for p in POPULATION_CRITERIA.parameters()}


def headline(settings: Settings, dataset: Dataset, release: Path) -> dict[str, Any]:
    """The result page's figures of a relational release, from the files: the risk of
    ``risk-rt`` (candidates per person on the joint graph, prosecutor risk, beside publishing
    the QIs and item sets unchanged) and the utility of ``evaluate-rt`` (relational GCP,
    uncertain items per record, mean relative error of 1,000 count queries, query seed 0).
    InputError when they cannot be computed (past :data:`MAX_PEOPLE` people)."""
    from anonymatch.relational.io import read_relational, read_release
    from anonymatch.relational.metrics import relational_utility
    from anonymatch.relational.pipeline import encode
    from anonymatch.relational.risk import RiskQuestion, assess_relational

    assert dataset.items is not None
    job = relational_job(settings)
    if dataset.rows > MAX_PEOPLE:
        raise InputError(f"not measured on more than {MAX_PEOPLE:,} people")
    codes = settings.job.columns.get(settings.job.input.item_column or "")
    people = read_relational(
        dataset.path,
        dataset.items.path,
        settings.job.input.id_column or "",
        settings.job.input.item_column or "",
        tuple(codes.na or ()) if codes is not None else (),
    )
    published = read_release(release, people, job.schema.qi)
    report = assess_relational(people, published, RiskQuestion(job.schema, job.na))
    utility = relational_utility(people, published, encode(people, job.schema, job.na))
    return {
        "risk": risk_summary(report),
        "utility": {
            "gcp": utility.relational_gcp,
            "uncertain": utility.mean_uncertain,
            "max_errors": utility.mean_max_errors,
            "query_error": utility.query_error,
            "query_error_median": utility.query_error_median,
            "queries": utility.queries,
        },
    }
