"""Job files: a dataset and a release described once, in TOML (schema ``anonymatch-job/1``).

A job file says where the data is and how to read it, what each column is (its role and type),
the privacy model, the method, where the work runs and where the release goes. Every command
given ``--config job.toml`` takes its arguments from it; flags given on the command line win
(``anonymatch.cli.config``). ``anonymatch init DATA`` drafts one from the data
(:func:`anonymatch.app.infer.infer_job`). The format is documented in ``docs/jobs.md``; the
JSON Schema generated from these models is ``docs/job.schema.json``.

A minimal table job::

    [input]
    path = "${ANONYMATCH_DATA}/heart_statlog/heart.dat"
    format = "csv"
    sep = " "
    header = false            # column names: the [columns] keys, in order

    [columns]
    age = { role = "qi", type = "numeric" }
    sex = { role = "qi" }     # type = "categorical" is the default
    disease = { role = "sensitive" }

    [model]
    k = 5
    l = 2

    [output]
    path = "heart_k5.csv"

The pydantic models check the shape and the types, never by hand: the first problem becomes
one located line, ``job.toml: columns.age.type: expected one of numeric, categorical, …``
(:func:`load_job` raises :class:`anonymatch.core.errors.InputError`, exit code 2). The rules on
the values a typed job checks itself (``partition_size`` at least 2k, ``workers`` at least 1,
``t`` in (0, 1], …) are not re-stated here: the command's typed job gives the error, at the
file's key (``job.toml: method.partition_size: …``, :func:`job_key`). Paths may use
environment variables (``${ANONYMATCH_DATA}``, ``$HOME``); relative paths are resolved against
the job file's directory (:func:`resolve_paths`).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    create_model,
    model_validator,
)

from anonymatch.core.criteria import Parameter
from anonymatch.core.errors import InputError
from anonymatch.tables.models import ALL_CRITERIA
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS

SCHEMA: Literal["anonymatch-job/1"] = "anonymatch-job/1"
"""The value of a job file's ``schema`` key."""

KINDS = ("table", "transactions", "sparse", "graph", "relational")
ROLES = ("identifier", "qi", "sensitive", "other")
TYPES = ("numeric", "categorical", "ordinal", "date", "datetime")
GRANULARITIES = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")
FORMATS = {
    "table": ("auto", "csv", "tsv", "parquet"),
    "transactions": ("auto", "dat", "basket", "long", "jsonl"),
    "sparse": ("auto", "edges", "parquet", "mtx", "dat"),
    "graph": ("auto", "edges"),
    "relational": ("auto", "csv", "tsv", "parquet"),
}


@cache
def methods() -> dict[str, tuple[str, ...]]:
    """Method names per data kind, derived from the kinds' registries (``kl-hypergraph``:
    ``anonymize-kl``; ``km-hypergraph``: ``anonymize-km``; these commands have no ``--method``
    and ignore the key). Read on first use (the tables' registry imports numpy): also as
    ``METHODS``."""
    from anonymatch.graphs.methods import names as graph_methods
    from anonymatch.relational.methods import names as relational_methods
    from anonymatch.sets.methods import names as set_methods
    from anonymatch.sparse.methods import names as sparse_methods
    from anonymatch.tables.methods import names as table_methods

    return {
        "table": (*table_methods(), "kl-hypergraph"),
        "transactions": set_methods(),
        "sparse": sparse_methods(),
        "graph": graph_methods(),
        "relational": relational_methods(),
    }


def __getattr__(name: str) -> Any:
    if name == "METHODS":  # derived from the registries on first use
        return methods()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _token(value: Any) -> Any:
    """A missing-value code or ordinal category: TOML numbers are taken as their text."""
    if isinstance(value, bool):
        return value  # rejected by the str type: true is no category
    if isinstance(value, int | float):
        return str(value)
    return value


Token = Annotated[str, BeforeValidator(_token)]
"""A value of the data as text; ``-9`` and ``"-9"`` are the same token."""


class _Strict(BaseModel):
    # strict: a TOML boolean or string is never taken as a number (k = true is refused, not
    # read as k = 1), unknown keys are refused
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Input(_Strict):
    """``[input]``: the data and how to read it."""

    path: str = Field(
        description="The data file (or directory of Parquet parts); ${VAR} expanded, "
        "relative to the job file's directory."
    )
    format: str = Field(
        default="auto",
        description="Reader: table auto|csv|tsv|parquet; transactions auto|dat|basket|long|"
        "jsonl; sparse auto|edges|parquet|mtx|dat; graph auto|edges; relational auto|csv|tsv|"
        "parquet (the people and the items tables alike). auto decides by extension.",
    )
    sep: str | None = Field(
        default=None,
        min_length=1,
        description="CSV field separator (default: tab for .tsv, else ',').",
    )
    header: bool = Field(
        default=True,
        description="Whether the CSV's first line names the columns; without one the names "
        "are `names`, else the [columns] keys in order.",
    )
    names: list[str] | None = Field(
        default=None, description="Column names of a CSV file without header (header = false)."
    )
    quotechar: str = Field(
        default='"', min_length=1, max_length=1, description="CSV quote character."
    )
    na: list[Token] | None = Field(
        default=None,
        description="Tokens meaning 'missing' in every column (default: '', NA, N/A, NaN, nan, "
        "null, NULL, ?).",
    )
    drop_missing: bool = Field(default=False, description="Drop rows with a missing QI value.")
    item_sep: str | None = Field(
        default=None, min_length=1, description="Transactions: basket separator."
    )
    id_column: str | None = Field(
        default=None,
        description="Transactions, long format: record id column. Relational: the person id "
        "column (required).",
    )
    item_column: str | None = Field(
        default=None,
        description="Transactions, long format: item column. Relational: the item column of "
        "`items` (or of the one long table; required).",
    )
    items: str | None = Field(
        default=None,
        description="Relational: the long items table (one row per person id and item), joined "
        "on id_column; without it `path` is one long table with each person's attributes "
        "repeated on their rows.",
    )
    sensitive_file: str | None = Field(
        default=None, description="Transactions: a file with one sensitive label per record."
    )
    dedupe: bool = Field(
        default=False, description="Transactions, long format: drop repeated (record, item) rows."
    )
    adjacency: Literal["none", "directed", "undirected"] | None = Field(
        default=None, description="Sparse: read an edge list as a square adjacency matrix."
    )
    vertices: int | None = Field(default=None, ge=1, description="Graphs: vertices are 0 … N−1.")
    table: str | None = Field(
        default=None,
        min_length=1,
        description="Tables, a database path (postgresql://user@host/db, sqlite:///file.db): "
        "the table read. The password comes from ${VAR} in the URL, PGPASSWORD or ~/.pgpass "
        "and is never recorded.",
    )
    query: str | None = Field(
        default=None,
        min_length=1,
        description="Tables, a database path: the SELECT whose rows are read (instead of `table`).",
    )
    sheet: str | None = Field(
        default=None,
        min_length=1,
        description="Tables, an Excel path (.xlsx): the worksheet read (default: the first).",
    )

    @model_validator(mode="after")
    def _database_source(self) -> Input:
        if self.table is not None and self.query is not None:
            raise _located(("query",), "give either table or query, not both")
        from anonymatch.tables.io.sql import is_database_url

        database = is_database_url(self.path)
        for key in ("table", "query"):
            if getattr(self, key) is not None and not database:
                raise _located(
                    (key,), "reads a database path (postgresql://…, sqlite:///…), not a file"
                )
        if database and self.table is None and self.query is None:
            raise _located(("path",), "a database path needs table or query")
        if self.sheet is not None and not self.path.lower().endswith((".xlsx", ".xlsm")):
            raise _located(("sheet",), "reads an Excel path (.xlsx)")
        return self

    @model_validator(mode="after")
    def _names_need_no_header(self) -> Input:
        if self.names is not None and self.header:
            raise _located(("names",), "given for a file with a header: set header = false")
        if self.names is not None and len(set(self.names)) != len(self.names):
            dup = next(x for x in self.names if self.names.count(x) > 1)
            raise _located(("names",), f"column {dup!r} is listed twice")
        return self


class Column(_Strict):
    """``[columns.NAME]``: one column's role and type."""

    role: Literal["identifier", "qi", "sensitive", "other"] = Field(
        default="other",
        description="identifier (dropped), qi (quasi-identifier, generalized), sensitive "
        "(kept, protected by the model's l/t) or other (kept as it is).",
    )
    type: Literal["numeric", "categorical", "ordinal", "date", "datetime"] = Field(
        default="categorical",
        description="numeric (ranges), categorical (value sets or hierarchy nodes), ordinal "
        "(ranges over `order`), date/datetime (date ranges at `granularity`).",
    )
    order: list[Token] | None = Field(
        default=None, description="Ordinal: every category, lowest first.", min_length=1
    )
    granularity: (
        Literal["year", "quarter", "month", "week", "day", "hour", "minute", "second"] | None
    ) = Field(default=None, description="Date/datetime: the unit of the published ranges.")
    hierarchy: str | None = Field(
        default=None,
        description="Categorical: an ARX hierarchy file (value;level1;…;*, one row per leaf).",
    )
    na: list[Token] | None = Field(
        default=None,
        description="Tokens meaning 'missing' in this column (e.g. survey codes -9, -8).",
    )
    weight: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="QI weight in the information loss (GCP).",
    )

    @model_validator(mode="after")
    def _fields_fit_type(self) -> Column:
        if self.type == "ordinal" and self.order is None:
            raise _located(("order",), 'type = "ordinal" needs order = [lowest, …, highest]')
        if self.order is not None:
            if self.type != "ordinal":
                raise _located(
                    ("order",), f'order is given for type = "{self.type}"; use type = "ordinal"'
                )
            seen: set[str] = set()
            for value in self.order:
                if value in seen:
                    raise _located(("order",), f"lists {value!r} twice")
                seen.add(value)
        if self.granularity is not None and self.type not in ("date", "datetime"):
            raise _located(
                ("granularity",), f'given for type = "{self.type}"; it needs "date" or "datetime"'
            )
        if self.hierarchy is not None and self.type != "categorical":
            raise _located(
                ("hierarchy",), f'given for type = "{self.type}"; it needs "categorical"'
            )
        if self.weight is not None and self.role != "qi":
            raise _located(("weight",), 'applies to quasi-identifiers only (role = "qi")')
        return self


def _criterion_field(p: Parameter) -> Any:
    """A job-file key of a criterion's parameter (``core.criteria``): its type, bounds and
    description, from the parameter's declaration (a per-column one: one value, or a table
    ``{column = value}``, whose bounds the typed job's ``build`` checks, located at the key)."""
    bounds: dict[str, Any] = {
        "integer": {"ge": p.minimum}, "fraction": {"gt": 0, "le": 1}, "share": {"ge": 0, "le": 1},
        "positive": {"gt": 0}, "choice": {}, "column": {"min_length": 1}, "table": {},
        "flag": {},
    }  # fmt: skip
    text = p.help + (" Relative to the job file's directory." if p.kind == "table" else "")
    kind: Any = Literal[p.choices] if p.choices else p.python_type
    if p.per_column:
        return (kind | dict[str, kind] | None, Field(default=None, description=text))
    return (kind | None, Field(default=None, description=text, **bounds[p.kind]))


class _Model(_Strict):
    """``[model]``: the guarantee (:data:`PrivacyModel` adds its keys: the criteria's first,
    from their registry, then :data:`_MODEL_KEYS`)."""


_MODEL_KEYS: dict[str, Any] = {
    "m": (
        int | None,
        Field(default=None, ge=1, description="k^m-anonymity: items the adversary knows."),
    ),
    "suppression_limit": (
        float | None,
        Field(
            default=None,
            ge=0,
            lt=1,
            description="Share of records that may be dropped as outliers when it lowers the loss.",
        ),
    ),
}
"""The ``[model]`` keys that are no table criterion's parameters (other kinds', the
suppression limit)."""

PrivacyModel: Any = create_model(
    "PrivacyModel",
    __base__=_Model,
    __doc__="``[model]``: the guarantee, and the keys of the table criteria (the level, the "
    "sensitive models, k-map, journalist risk, δ-presence, the population, (k,l)'s known) "
    "and of the release checks (strict), derived from their registries: never listed here.",
    **{p.name: _criterion_field(p) for p in ALL_CRITERIA.parameters()},
    **{p.name: _criterion_field(p) for p in CHECK_OPTIONS.parameters()},
    **_MODEL_KEYS,
)


class Method(_Strict):
    """``[method]``: the algorithm and its settings."""

    name: str | None = Field(default=None, description="The algorithm (default per command).")
    partition_size: int | None = Field(default=None, description="Records per partition (≥ 2k).")
    time_limit: float | None = Field(
        default=None,
        description="Seconds per exact MIP solve; the freeform methods' rounds' budget.",
    )
    epsilons: list[float] | None = Field(
        default=None, description="b-matching: the ε values swept."
    )
    neighbours: int | None = Field(default=None, description="b-matching: candidate neighbours.")
    cell_weights: str | None = Field(
        default=None, description="b-matching/agglomerative: CSV of the cost of starring each cell."
    )
    segment: tuple[Annotated[int, Field(ge=2)], Annotated[int, Field(ge=2)]] | None = Field(
        default=None,
        strict=False,  # a TOML array; its items are still strict ints
        description="Transactions, gray-tsp: segment sizes [min, max].",
    )
    epsilon: float | None = Field(default=None, description="Sparse rr: ε of randomized response.")
    dp: Literal["edge", "node"] | None = Field(default=None, description="Sparse rr: DP level.")
    beta: float | None = Field(default=None, description="Sparse smooth: β > 1.")
    runs: int | None = Field(default=None, description="Sparse smooth: Meyerson runs.")
    lsh: Literal["support", "minhash"] | None = Field(
        default=None, description="Sparse: chunk order."
    )
    closed: bool | None = Field(default=None, description="Graphs: closed neighbourhoods.")
    iterations: int | None = Field(default=None, ge=1, description="Graphs: k-means rounds.")
    keep_ids: bool | None = Field(default=None, description="Graphs: keep the input's vertex ids.")
    hierarchy_cells: Literal["node", "set"] | None = Field(
        default=None,
        description="Tables with hierarchies: publish the lowest covering node, or value sets.",
    )
    item_weight: float | None = Field(
        default=None,
        description="Relational: price of one uncertain item in GCP units (default 0.005).",
    )
    structure: Literal["classes", "rings", "blocks"] | None = Field(
        default=None,
        description="Tables with l/t, freeform methods: publish classes (default), or rings "
        "where cheaper (rings: a person who knows their own sensitive value and finds it among "
        "their rows learns every ring member's value). Without l/t: blocks, classes of k…2k−1 "
        "consecutive records of a sort order instead of the rounds (seconds at any k; the "
        "default where the rounds would take minutes).",
    )


class Execution(_Strict):
    """``[execution]``: where the work runs."""

    executor: Literal["auto", "inline", "threads", "processes", "dask"] | None = None
    workers: int | None = None
    scheduler: str | None = Field(
        default=None, description="Address of a dask.distributed scheduler."
    )
    chunk_rows: int | None = Field(default=None, description="Rows per job of the streamed path.")


class Output(_Strict):
    """``[output]``: where the release and its manifest go."""

    path: str | None = Field(
        default=None, description="The release file (.csv, .tsv, .parquet, …)."
    )
    report: str | None = Field(default=None, description="The audit manifest (JSON).")
    table: str | None = Field(
        default=None,
        min_length=1,
        description="Tables, a database path (postgresql://…, sqlite:///…): the release table, "
        "created in one transaction (an existing one only with --force).",
    )
    dp_queries: str | None = Field(
        default=None,
        description="Tables: a workload (JSON count queries) whose noisy answers are published "
        "beside the release as RELEASE.dp.json (OpenDP; anonymize --dp-queries).",
    )
    epsilon: float | None = Field(
        default=None, gt=0, description="The DP companion's privacy budget ε (with dp_queries)."
    )
    delta: float | None = Field(
        default=None, ge=0, lt=1, description="The DP companion's δ (default 0: pure ε-DP)."
    )
    draws: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Tables: how many plain tables `anonymatch draw --config` draws from the "
        "release (its -m; default 5).",
    )
    draws_dir: str | None = Field(
        default=None,
        description="Tables: the directory of those draws (draw -o: DIR/draw_1.EXT … and "
        "DIR/draws.json).",
    )

    @model_validator(mode="after")
    def _database_release(self) -> Output:
        from anonymatch.tables.io.sql import is_database_url

        database = self.path is not None and is_database_url(self.path)
        if self.table is not None and not database:
            raise _located(("table",), "writes to a database path (postgresql://…, sqlite:///…)")
        if database and self.table is None:
            raise _located(("path",), "a database path needs table (the release table)")
        return self


class Series(_Strict):
    """``[series]``: the release series the release belongs to (tables, ``anonymize``;
    docs/series.md): the series directory and the person-id column (never published)."""

    dir: str | None = Field(
        default=None,
        description="The series directory (series.json, the releases, the private map); "
        "anonymize --series.",
    )
    person_id: str | None = Field(
        default=None,
        min_length=1,
        description="The column identifying a person across releases (never published); "
        "anonymize --person-id.",
    )


class Job(_Strict):
    """A job file (``anonymatch-job/1``).

    Examples
    --------
    >>> job = Job.model_validate({"input": {"path": "people.csv"},
    ...                           "columns": {"age": {"role": "qi", "type": "numeric"}},
    ...                           "model": {"k": 5}})
    >>> job.qi, job.numeric
    (['age'], ['age'])
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        json_schema_extra={"$id": "https://anonymatch.invalid/job.schema.json"},
        title="anonymatch job file (anonymatch-job/1)",
    )

    schema_: Literal["anonymatch-job/1"] = Field(default=SCHEMA, alias="schema")
    kind: Literal["table", "transactions", "sparse", "graph", "relational"] = "table"
    input: Input
    columns: dict[str, Column] = Field(default_factory=dict)
    model: PrivacyModel = PrivacyModel()
    method: Method = Method()
    execution: Execution = Execution()
    output: Output = Output()
    series: Series = Series()

    _comments: dict[str, list[str]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> Job:
        if self.input.format not in FORMATS[self.kind]:
            raise _located(
                ("input", "format"),
                f"expected one of {', '.join(FORMATS[self.kind])} for kind = "
                f'"{self.kind}", got {self.input.format!r}',
            )
        known = methods()[self.kind]
        if self.method.name is not None and self.method.name not in known:
            raise _located(
                ("method", "name"),
                f"expected one of {', '.join(known)} for kind = "
                f'"{self.kind}", got {self.method.name!r}',
            )
        for name in self.columns:  # verify & co. list a table's columns comma-separated
            if "," in name and self.kind == "table":
                raise _located(("columns", name), "a column name cannot contain ','")
        for i, token in enumerate(self.input.na or ()):
            if "," in token:
                raise _located(("input", "na", str(i)), "a missing-value token cannot contain ','")
        names = self.input.names
        if names is not None:
            for name in self.columns:
                if name not in names:
                    raise _located(
                        ("columns", name), f"unknown column; input.names has: {', '.join(names)}"
                    )
        if (self.series.dir is None) != (self.series.person_id is None):
            key = "person_id" if self.series.person_id is None else "dir"
            raise _located(("series", key), "a series needs both dir and person_id")
        if self.series.dir is not None and self.kind != "table":
            raise _located(("series",), 'read by kind = "table" only')
        role = self.columns.get(self.series.person_id or "")
        if role is not None and role.role in ("qi", "sensitive"):
            raise _located(
                ("series", "person_id"),
                f"{self.series.person_id!r} has role = {role.role!r}; the person id is never "
                'published: an "identifier" column',
            )
        if self.input.items is not None and self.kind != "relational":
            raise _located(("input", "items"), 'read by kind = "relational" only')
        if self.kind == "relational":
            self._relational()
        elif self.kind != "table":
            for key in ("table", "query", "sheet"):
                if getattr(self.input, key) is not None:
                    raise _located(("input", key), 'read by kind = "table" only')
            return self
        if not self.qi:
            raise _located(("columns",), 'no column has role = "qi" (a quasi-identifier)')
        model = self.model
        for key in ("l", "t"):
            value = getattr(model, key)
            if isinstance(value, dict):
                for name in value:
                    if name not in self.sensitive:
                        raise _located(
                            ("model", key, name),
                            f'{name!r} is not a column with role = "sensitive"',
                        )
        if (model.l is not None or model.t is not None) and not self.sensitive:
            raise _located(("model",), 'l and t need a column with role = "sensitive"')
        if model.k_column is not None:
            column = self.columns.get(model.k_column)
            if column is not None and column.role in ("qi", "sensitive"):
                raise _located(
                    ("model", "k_column"),
                    f"{model.k_column!r} has role = {column.role!r}; the level column must be "
                    'an "identifier" or "other" column',
                )
        return self

    def _relational(self) -> None:
        """The keys a relational job needs, and those the relational commands do not read."""
        inp = self.input
        for key in ("id_column", "item_column"):
            if getattr(inp, key) is None:
                raise _located(("input", key), 'required for kind = "relational"')
        unread = {
            ("input", "table"): inp.table, ("input", "query"): inp.query,
            ("input", "sheet"): inp.sheet, ("input", "sep"): inp.sep,
            ("input", "names"): inp.names, ("input", "sensitive_file"): inp.sensitive_file,
            ("input", "na"): inp.na, ("model", "k_column"): self.model.k_column,
            ("model", "known"): self.model.known, ("model", "m"): self.model.m,
        }  # fmt: skip
        for loc, value in unread.items():
            if value is not None:
                hint = " (per-column codes: columns.NAME.na)" if loc[1] == "na" else ""
                raise _located(loc, f'not read by kind = "relational"{hint}')
        if not inp.header:
            raise _located(("input", "header"), 'kind = "relational" reads files with a header')
        if inp.drop_missing or inp.dedupe:
            key = "drop_missing" if inp.drop_missing else "dedupe"
            raise _located(("input", key), 'not read by kind = "relational"')
        for name, column in self.columns.items():
            if column.weight is not None:
                raise _located(("columns", name, "weight"), 'not read by kind = "relational"')

    @property
    def qi(self) -> list[str]:
        """Quasi-identifiers, in the order of ``[columns]``."""
        return [name for name, c in self.columns.items() if c.role == "qi"]

    @property
    def numeric(self) -> list[str]:
        """QIs and sensitive columns of type numeric (ranges; ordered t-closeness distance)."""
        return [
            name
            for name, c in self.columns.items()
            if c.type == "numeric" and c.role in ("qi", "sensitive")
        ]

    @property
    def sensitive(self) -> list[str]:
        return [name for name, c in self.columns.items() if c.role == "sensitive"]

    @property
    def identifiers(self) -> list[str]:
        return [name for name, c in self.columns.items() if c.role == "identifier"]

    @property
    def comments(self) -> dict[str, list[str]]:
        """Notes for :func:`render_toml`: dotted key path (``""`` = top, ``"input"``,
        ``"columns.age"``) → comment lines. Set by :func:`anonymatch.app.infer.infer_job`;
        never read from a file."""
        return self._comments


_KEYS = {"ell": "model.l", "method": "method.name", "refine": "method.lsh",
         "drop_missing": "input.drop_missing", "na_values": "columns"}  # fmt: skip


def job_key(keyword: str) -> str:
    """The job file's key that sets a typed job's ``keyword`` (``partition_size`` →
    ``method.partition_size``; a role or a column's type → ``columns``). O(1)."""
    if keyword in _KEYS:
        return _KEYS[keyword]
    for section, model in (("model", PrivacyModel), ("method", Method), ("execution", Execution)):
        if keyword in model.model_fields:
            return f"{section}.{keyword}"
    return "columns"


class _LocatedError(ValueError):
    """A cross-field problem with the exact key path it belongs to."""

    def __init__(self, loc: tuple[str, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


def _located(loc: tuple[str, ...], message: str) -> _LocatedError:
    return _LocatedError(loc, message)


def _loc_text(loc: Sequence[Any]) -> str:
    parts = []
    for item in loc:
        text = str(item)
        if item == "schema_":
            text = "schema"
        if re.fullmatch(r"[A-Za-z0-9_-]+", text):
            parts.append(text)
        else:
            parts.append(json.dumps(text, ensure_ascii=False))
    return ".".join(parts)


def _known_keys(loc: Sequence[Any]) -> list[str]:
    """The keys allowed at the table holding ``loc[-1]`` (for 'did you mean')."""
    models: dict[tuple[str, ...], type[BaseModel]] = {
        (): Job,
        ("input",): Input,
        ("model",): PrivacyModel,
        ("method",): Method,
        ("execution",): Execution,
        ("output",): Output,
    }
    parent = tuple(str(x) for x in loc[:-1])
    if len(parent) == 2 and parent[0] == "columns":
        model: type[BaseModel] | None = Column
    else:
        model = models.get(parent)
    if model is None:
        return []
    return [f.alias or name for name, f in model.model_fields.items()]


def describe_error(error: Mapping[str, Any]) -> tuple[str, str]:
    """One pydantic error as (dotted key path, message in plain words)."""
    loc = list(error.get("loc", ()))
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    if kind == "value_error" and isinstance(ctx.get("error"), _LocatedError):
        located = ctx["error"]
        return _loc_text([*loc, *located.loc]), located.message
    # a union (l = 3 or {col = 3}) reports each branch: the int/float branch tag is noise
    loc = [x for x in loc if x not in ("int", "float", "dict[str,int]", "dict[str,float]")]
    loc = [x for x in loc if not (isinstance(x, str) and x.startswith("dict["))]
    given = error.get("input")
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return _loc_text(loc), f"expected one of {', '.join(expected)}, got {given!r}"
    if kind == "extra_forbidden":
        name = str(loc[-1]) if loc else ""
        known = _known_keys(loc)
        hint = difflib.get_close_matches(name, known, n=1)
        tail = f"; did you mean {hint[0]!r}?" if hint else f"; known keys: {', '.join(known)}"
        return _loc_text(loc), "unknown key" + (tail if known else "")
    if kind == "missing":
        return _loc_text(loc), "required key is missing"
    message = str(error.get("msg", "invalid value"))
    message = message.removeprefix("Value error, ")
    if message and message[0].isupper() and not message[:2].isupper():
        message = message[0].lower() + message[1:]
    if kind not in ("value_error", "assertion_error") and "input" in error:
        message += f", got {given!r}"
    return _loc_text(loc), message


def format_validation_error(source: str, exc: ValidationError) -> str:
    """The first problem of a job file as one line: ``source: key.path: message``."""
    errors = exc.errors()
    # an unknown key first (a typo explains the missing key that follows from it); within a
    # union (l = 3 or {col = 3}) the deepest error, i.e. the branch the value was written for
    unknown = [e for e in errors if e.get("type") == "extra_forbidden"]
    first = unknown[0] if unknown else errors[0]
    top = tuple(first["loc"][:2])
    same = [e for e in errors if tuple(e["loc"][:2]) == top]
    if not unknown:
        first = max(same, key=lambda e: len(e["loc"]))
    located = errors
    loc, message = describe_error(first)
    more = len({tuple(e["loc"][:2]) for e in located}) - 1
    where = f"{loc}: " if loc else ""
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else ""
    return f"{source}: {where}{message}{suffix}"


def parse_job(data: Mapping[str, Any], source: str = "job") -> Job:
    """Validate a job given as a mapping (e.g. parsed TOML, or built by a program).

    Parameters
    ----------
    data : mapping
        The job's keys (see ``docs/jobs.md``).
    source : str, default "job"
        Name used at the start of an error message (the file name).

    Returns
    -------
    Job
        The validated job (paths as written: see :func:`resolve_paths`).

    Raises
    ------
    anonymatch.core.errors.InputError
        One line ``source: key.path: message`` for the first problem.
    """
    try:
        return Job.model_validate(dict(data))
    except ValidationError as exc:
        raise InputError(format_validation_error(source, exc)) from None


MAX_JOB_BYTES = 1024 * 1024
"""Largest job file read (1 MiB: a job describing thousands of columns is a few hundred KiB)."""


def load_job(path: str | os.PathLike[str]) -> Job:
    """Read, validate and resolve a TOML job file.

    Parameters
    ----------
    path : path-like
        The job file.

    Returns
    -------
    Job
        The job with environment variables expanded and relative paths made absolute against
        the job file's directory (:func:`resolve_paths`).

    Raises
    ------
    anonymatch.core.errors.InputError
        If the file is missing, not a regular file, larger than :data:`MAX_JOB_BYTES`, cannot
        be read, is not TOML, is nested more than ``MAX_DEPTH`` levels deep
        (``anonymatch.core.documents``), or does not validate (one located line).

    Notes
    -----
    Time O(size of the file).
    """
    from anonymatch.core.documents import parse_toml, read_document

    p = Path(path)
    name = p.name or str(path)
    # a regular file of at most MAX_JOB_BYTES, nested at most MAX_DEPTH levels: else one line
    data = parse_toml(read_document(p, "job file", MAX_JOB_BYTES), name)
    job = parse_job(data, name)
    return resolve_paths(job, p.resolve().parent, name)


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")

PATH_FIELDS: tuple[tuple[str, str], ...] = (
    ("input", "path"),
    ("input", "sensitive_file"),
    ("input", "items"),
    ("method", "cell_weights"),
    *(("model", p.name) for p in ALL_CRITERIA.parameters() if p.kind == "table"),
    ("output", "path"),
    ("output", "report"),
    ("output", "dp_queries"),
    ("output", "draws_dir"),
    ("series", "dir"),
)
"""The path-valued keys outside ``[columns]`` (each column's ``hierarchy`` is one too)."""


def expand_path(value: str, base: Path, where: str) -> str:
    """``value`` with ``${VAR}``/``$VAR`` expanded and made absolute against ``base``.

    Raises InputError (located by ``where``) for an unset variable."""

    def replace(match: re.Match[str]) -> str:
        var = match.group(1) or match.group(2)
        if var not in os.environ:
            raise InputError(f"{where}: environment variable {var} is not set")
        return os.environ[var]

    expanded = _VAR.sub(replace, value)
    from anonymatch.tables.io.sql import is_database_url

    if is_database_url(expanded):  # a server's URL as it is; a SQLite file by the job file
        head, _, rest = expanded.partition(":///")
        local = head.split("+", 1)[0].lower() in ("sqlite", "duckdb")
        if local and rest and not rest.startswith("/") and rest != ":memory:":
            return f"{head}:///{base / os.path.expanduser(rest)}"
        return expanded
    expanded = os.path.expanduser(expanded)
    return str(base / expanded) if not os.path.isabs(expanded) else expanded


def resolve_paths(job: Job, base: str | os.PathLike[str], source: str = "job") -> Job:
    """A copy of ``job`` whose paths are expanded and absolute.

    Parameters
    ----------
    job : Job
        A validated job.
    base : path-like
        The directory relative paths are taken from (the job file's).
    source : str, default "job"
        The job file's name, for error messages.

    Returns
    -------
    Job
        The same job with every path key (``input.path``, ``output.path``, ``output.report``,
        ``input.sensitive_file``, ``method.cell_weights``, ``model.population``,
        ``columns.*.hierarchy``) resolved.

    Raises
    ------
    anonymatch.core.errors.InputError
        If a path names an environment variable that is not set.
    """
    root = Path(base)
    sections: dict[str, Any] = {}
    for section, key in PATH_FIELDS:
        value = getattr(getattr(job, section), key)
        if value is not None:
            resolved = expand_path(value, root, f"{source}: {section}.{key}")
            sections.setdefault(section, {})[key] = resolved
    update: dict[str, Any] = {
        section: getattr(job, section).model_copy(update=keys) for section, keys in sections.items()
    }
    columns = {}
    for name, column in job.columns.items():
        if column.hierarchy is not None:
            where = f"{source}: columns.{_loc_text([name])}.hierarchy"
            column = column.model_copy(
                update={"hierarchy": expand_path(column.hierarchy, root, where)}
            )
        columns[name] = column
    update["columns"] = columns
    resolved_job = job.model_copy(update=update)
    resolved_job._comments = dict(job.comments)
    return resolved_job


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of job files, generated from the pydantic models.

    Returns
    -------
    dict
        The schema written to ``docs/job.schema.json``.
    """
    schema = Job.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


# ------------------------------------------------------------------------------ writing TOML


def toml_string(value: str) -> str:
    """A TOML basic string (double quotes; control characters escaped)."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_key(key: str) -> str:
    """A TOML key: bare when possible, else quoted."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_string(key)


def toml_value(value: Any) -> str:
    """A TOML value of a str, bool, int, float, list or mapping (inline)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write {value} to a job file")
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, Iterable):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _comment_lines(lines: Iterable[str]) -> list[str]:
    out = []
    for line in lines:
        for part in str(line).splitlines() or [""]:
            # a line starting with '#=' is a commented-out key: written as '# key = …'
            out.append("#" + (" " + part if part else ""))
    return out


def render_toml(job: Job, comments: Mapping[str, Sequence[str]] | None = None) -> str:
    """The job as TOML text, with comments a steward can read and edit.

    Parameters
    ----------
    job : Job
        The job to write.
    comments : mapping, optional
        Dotted key path → comment lines placed above that table or key: ``""`` (the top of the
        file), ``"input"``, ``"columns.age"``, ``"model"``, …; a path ending in ``.after``
        (e.g. ``"columns.age.after"``) puts its lines after that table's keys (for
        commented-out keys such as ``# na = ["-9"]``). Defaults to ``job.comments``.

    Returns
    -------
    str
        TOML that :func:`parse_job` reads back as ``job`` (checked by the tests).
    """
    notes: Mapping[str, Sequence[str]] = job.comments if comments is None else comments
    lines: list[str] = _comment_lines(notes.get("", []))
    lines.append(f"schema = {toml_string(SCHEMA)}")
    lines.append(f"kind = {toml_string(job.kind)}")

    def table(header: str, path: str, values: Mapping[str, Any]) -> None:
        lines.append("")
        lines.extend(_comment_lines(notes.get(path, [])))
        lines.append(f"[{header}]")
        for key, value in values.items():
            if value is None:
                continue
            lines.extend(_comment_lines(notes.get(f"{path}.{key}", [])))
            lines.append(f"{toml_key(key)} = {toml_value(value)}")
        lines.extend(_comment_lines(notes.get(f"{path}.after", [])))

    def fields(model: BaseModel) -> dict[str, Any]:
        return model.model_dump(exclude_defaults=True, by_alias=True)

    input_values = job.input.model_dump(exclude_defaults=True)
    input_values = {"path": job.input.path, **input_values}
    table("input", "input", input_values)
    if notes.get("columns"):
        lines.append("")
        lines.extend(_comment_lines(notes["columns"]))
    for name, column in job.columns.items():
        values = column.model_dump(exclude_defaults=True)
        values = {"role": column.role, **values}
        if column.role in ("qi", "sensitive"):
            values = {"role": column.role, "type": column.type, **values}
        path = f"columns.{name}"
        table(f"columns.{toml_key(name)}", path, values)
    for section in ("model", "method", "execution", "output", "series"):
        values = fields(getattr(job, section))
        if values or notes.get(section) or notes.get(f"{section}.after"):
            table(section, section, values)
    return "\n".join(lines) + "\n"


def main() -> None:  # pragma: no cover - `python -m anonymatch.app.jobfile > docs/job.schema.json`
    print(json.dumps(json_schema(), indent=2, ensure_ascii=False))


if __name__ == "__main__":  # pragma: no cover
    main()
