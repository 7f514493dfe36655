"""The web app's dataset and job: reading an uploaded or picked table, its preview, the
inferred roles and types of its columns; the form as a job file (:class:`Settings`, an
``anonymatch.app.jobfile.Job``: what the run executes with ``anonymatch anonymize --config`` and
what the steward downloads); the result's guarantee and risk headline.

Reading is bounded (:class:`Limits`): a table whose rows × columns or decompressed size (a
Parquet file's footer says it before anything is decompressed) is past the budget is refused in
one line, and the preview and the role inference read only the first rows (Parquet: record
batches of the first row group, never the whole file).
"""

from __future__ import annotations

import csv
import io
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anonymatch.core.errors import InputError
from anonymatch.core.files import human_size as human_size
from anonymatch.tables.models import CRITERIA, POPULATION_CRITERIA
from anonymatch.tables.models.disclosure import DIVERSITY
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS

if TYPE_CHECKING:
    from anonymatch.app.jobfile import Job
    from anonymatch.tables.risk.risk import RiskReport

SEPARATORS = {"auto": None, "comma": ",", "semicolon": ";", "tab": "\t", "space": " ", "pipe": "|"}
ROLES = ("qi", "sensitive", "identifier", "other")
TYPES = ("numeric", "categorical", "ordinal", "date", "datetime")
GRANULARITIES = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")
DIVERSITIES = DIVERSITY.choices

FORM_CRITERIA = CRITERIA.where(lambda c: not c.level)
"""The criteria whose fields the form reads by their declarations (the level is the page's
own: k, or a level column where the method takes one)."""

CHECK_FLAGS = tuple(p for p in CHECK_OPTIONS.parameters() if p.kind == "flag")
"""The release checks' options the form shows as check boxes (``strict``), by their
declarations: a table or relational job's ``[model]`` keys, so that a job file opened with
``strict = true`` keeps it through the form, and the run (``anonymize --config``) honours it."""
PREVIEW_ROWS = 10
SAMPLE_ROWS = 20_000
"""Rows read for the preview and the role inference of a table too large to read whole."""
DOCUMENT_SUFFIXES = (".sav", ".zsav", ".dta", ".xlsx")
"""SPSS and Stata files (value labels applied) and Excel workbooks (the first sheet): read
whole by ``tables.io.read_table``, within the budgets (:func:`_document_sample`)."""
TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".dat", ".data", ".parquet", ".pq", *DOCUMENT_SUFFIXES)
MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """The web app's bounds. ``max_upload_bytes``: the largest upload (larger requests are
    refused with 413 before their body is read, or as soon as it passes the bound);
    ``max_cells``: rows × columns of a table; ``max_table_bytes``: a table's size once
    decompressed (a CSV's file size; a Parquet file's uncompressed size, from its footer);
    ``exact_rows_bytes``: CSV files up to this size are read whole (exact row count), larger ones
    are sampled and their lines counted."""

    max_upload_bytes: int = 200 * MiB
    max_cells: int = 50_000_000
    max_table_bytes: int = 1024 * MiB
    exact_rows_bytes: int = 64 * MiB


@dataclass
class Dataset:
    """A table the steward works on: where it is, how it is read and what it holds."""

    path: Path
    name: str
    size: int
    header: bool = True
    sep: str = "auto"
    names: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: int = 0
    rows_exact: bool = True
    preview: list[list[str]] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    granularities: dict[str, str] = field(default_factory=dict)
    inferred_by: str = ""
    items: Dataset | None = None
    """Relational runs: the long items table uploaded beside (``ui.relational``), None for a
    table run; ``id_column`` and ``item_column`` the form's first choices."""
    id_column: str = ""
    item_column: str = ""
    distinct: dict[str, int] = field(default_factory=dict)
    """Distinct values per column in the rows read (the id column's guess)."""

    @property
    def separator(self) -> str | None:
        """The separator character, guessed from the first lines when ``sep`` is auto."""
        if self.parquet or self.document:
            return None
        return SEPARATORS.get(self.sep) or sniff_separator(self.path)

    @property
    def parquet(self) -> bool:
        return self.path.suffix.lower() in (".parquet", ".pq")

    @property
    def document(self) -> bool:
        """An SPSS/Stata file or an Excel workbook (typed by its format: no separator)."""
        return self.path.suffix.lower() in DOCUMENT_SUFFIXES


def sniff_separator(path: Path) -> str:
    """The separator among ``, ; tab | space`` that splits the first lines into the same
    number (> 1) of fields; ``,`` when none does."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(1 << 16)  # the first lines, however long they are
    except OSError as exc:
        raise InputError(f"cannot read {path.name}: {exc.strerror}") from None
    lines = [line for line in head.splitlines()[:20] if line.strip()]
    for sep in (",", ";", "\t", "|", " "):
        counts = {len(next(csv.reader(io.StringIO(line), delimiter=sep))) for line in lines}
        if len(counts) == 1 and counts.pop() > 1:
            return sep
    return ","


def load(
    dataset: Dataset,
    limits: Limits | None = None,
    workdir: Path | None = None,
    infer: bool = True,
) -> Dataset:
    """Read the table with the dataset's options: columns, row count, preview, inferred roles.
    Bounded by ``limits``: a table past the cell or decompressed-byte budget is refused, and a
    large one is read only in part (its first :data:`SAMPLE_ROWS` rows; a CSV's rows are then
    counted by lines, ``rows_exact`` False). ``workdir`` (default: the table's directory) holds
    a Parquet sample for the inference for a moment. ``infer`` False reads without inferring
    roles (a relational run's items table: an id and codes, no quasi-identifier).

    Raises
    ------
    anonymatch.core.errors.InputError
        One line saying why the file cannot be read as a table, or is past a budget.
    """
    from anonymatch.tables.io import CsvOptions, read_table

    limits = limits or Limits()
    if dataset.document:
        dataset.header, dataset.names = True, []  # the format names the columns
    if not dataset.header and not dataset.names:
        raise InputError("the file has no header line: give the column names")
    if dataset.parquet:
        frame, rows, width = _parquet_sample(dataset, limits)
        exact = True
    elif dataset.document:
        frame = _document_sample(dataset, limits)
        rows, width, exact = len(frame), frame.shape[1], True
    else:
        if dataset.size > limits.max_table_bytes:
            raise InputError(_too_large(dataset.name, dataset.size, limits))
        sep = dataset.separator
        options = CsvOptions(
            sep=sep, names=None if dataset.header else list(dataset.names), fmt="csv"
        )
        exact = dataset.size <= limits.exact_rows_bytes
        frame = read_table(dataset.path, options, nrows=None if exact else SAMPLE_ROWS)
        width = frame.shape[1]
        rows = len(frame) if exact else _count_lines(dataset.path) - int(dataset.header)
    if width < 2:
        raise InputError(
            f"{dataset.name} has {width} column; check the separator (or the file is not a table)"
        )
    if rows * width > limits.max_cells:
        raise InputError(
            f"{dataset.name} has {rows:,} rows × {width} columns, more than the web app's "
            f"budget of {limits.max_cells:,} cells (anonymatch ui --max-cells; or use the CLI, "
            "which streams large tables)"
        )
    dataset.columns = [str(c) for c in frame.columns]
    dataset.distinct = {str(c): int(frame[c].nunique()) for c in frame.columns}
    dataset.rows, dataset.rows_exact = rows, exact
    dataset.preview = [
        [str(v) for v in row] for row in frame.head(PREVIEW_ROWS).itertuples(index=False)
    ]
    if not infer:
        return dataset
    if dataset.parquet or dataset.document:  # the inference reads a sample file
        where = workdir or dataset.path.parent
        sample = where / f"sample-{secrets.token_hex(8)}.parquet"
        try:
            if dataset.document:  # labelled codes and numbers may share a column
                frame = frame.head(SAMPLE_ROWS).astype(
                    {c: "string" for c in frame.columns if frame[c].dtype == object}
                )
            frame.to_parquet(sample, index=False)
            os.chmod(sample, 0o600)
            roles, types, by = infer_roles(dataset, frame, sample)
        finally:
            sample.unlink(missing_ok=True)
    else:
        roles, types, by = infer_roles(dataset, frame)
    dataset.roles, dataset.types, dataset.inferred_by = roles, types, by
    return dataset


def _too_large(name: str, size: int, limits: Limits) -> str:
    return (
        f"{name} takes {human_size(size)} once decompressed, more than the web app's budget of "
        f"{human_size(limits.max_table_bytes)} (anonymatch ui --max-table-mb; or use the CLI, "
        "which streams large tables)"
    )


def _document_sample(dataset: Dataset, limits: Limits) -> Any:
    """The whole table of an SPSS/Stata file or Excel workbook, read only when its budgets
    allow: the bytes it expands to (a workbook's zip members; a compressed ``.zsav`` read from
    its header) and its cells (from the file's metadata) are checked before the data is read.
    InputError (one line, naming the upload) otherwise."""
    from anonymatch.tables.io import read_table

    suffix = dataset.path.suffix.lower()
    expanded = dataset.size
    if suffix == ".xlsx":
        import zipfile

        try:
            with zipfile.ZipFile(dataset.path) as book:
                expanded = sum(member.file_size for member in book.infolist())
        except (OSError, zipfile.BadZipFile) as exc:
            raise InputError(f"cannot read Excel file {dataset.name}: {exc}") from None
    elif suffix in (".sav", ".zsav", ".dta"):
        try:
            import pyreadstat

            reader = pyreadstat.read_dta if suffix == ".dta" else pyreadstat.read_sav
            _, meta = reader(str(dataset.path), metadataonly=True)
            cells = int(meta.number_rows or 0) * int(meta.number_columns or 0)
        except ImportError:
            raise InputError("reading .sav/.dta files needs the stats extra") from None
        except Exception as exc:  # pyreadstat.ReadstatError and friends
            raise InputError(f"cannot read {dataset.name}: {exc}") from None
        if cells > limits.max_cells:
            raise InputError(
                f"{dataset.name} has {cells:,} cells, more than the web app's budget of "
                f"{limits.max_cells:,} cells (anonymatch ui --max-cells; or use the CLI)"
            )
        expanded = max(expanded, cells * 8)
    if expanded > limits.max_table_bytes:
        raise InputError(_too_large(dataset.name, expanded, limits))
    try:
        return read_table(dataset.path)
    except InputError as exc:
        raise InputError(str(exc).replace(str(dataset.path), dataset.name)) from None


def _parquet_sample(dataset: Dataset, limits: Limits) -> tuple[Any, int, int]:
    """The first rows of a Parquet file, its row count and its width, checked against the
    budgets from the footer before anything is decompressed."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(dataset.path)
        meta = parquet.metadata
        expanded = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if expanded > limits.max_table_bytes:
            raise InputError(_too_large(dataset.name, expanded, limits))
        if meta.num_rows * meta.num_columns > limits.max_cells:
            raise InputError(
                f"{dataset.name} has {meta.num_rows:,} rows × {meta.num_columns} columns, more "
                f"than the web app's budget of {limits.max_cells:,} cells (anonymatch ui "
                "--max-cells; or use the CLI, which streams large tables)"
            )
        batch = next(parquet.iter_batches(batch_size=SAMPLE_ROWS), None)
        if batch is None or meta.num_rows == 0:
            raise InputError(f"{dataset.name} has no data rows")
        frame = batch.to_pandas()
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises many types for corrupt files
        line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read Parquet file {dataset.name}: {line}") from None
    return frame, int(meta.num_rows), int(meta.num_columns)


def _count_lines(path: Path) -> int:
    """Lines of a text file, counted in binary chunks (a field with a line break inside
    quotes counts twice: the row count of a large CSV is approximate)."""
    count, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def infer_roles(
    dataset: Dataset, frame: Any, sample: Path | None = None
) -> tuple[dict[str, str], dict[str, str], str]:
    """Each column's suggested role and type, from the job-file inference
    (:func:`anonymatch.app.infer.infer_job`, what ``anonymatch init`` drafts, on its first
    :data:`SAMPLE_ROWS` rows; ``sample``: a file of them to read instead of the table); a date
    column's suggested granularity goes to ``dataset.granularities``."""
    from anonymatch.app.infer import infer_job

    job = infer_job(
        sample or dataset.path,
        sample_rows=SAMPLE_ROWS,
        sep=dataset.separator,
        names=None if dataset.header else list(dataset.names),
        header=dataset.header,
    )
    roles: dict[str, str] = {}
    types: dict[str, str] = {}
    dataset.granularities = {}
    for c in dataset.columns:
        column = job.columns.get(c)
        roles[c] = column.role if column is not None else "other"
        types[c] = column.type if column is not None else "categorical"
        if column is not None and column.granularity is not None:
            dataset.granularities[c] = column.granularity
    return roles, types, "the job-file inference (anonymatch init)"


# ------------------------------------------------------------------------------ the job


def methods() -> dict[str, Any]:
    """The table methods the form offers: the registry's (``anonymatch.tables.methods``), with
    their summaries and capabilities (``sensitive``: ℓ/t; ``levels``: a level column and no
    suppression limit; ``partitioned``: a partition size; ``typed``: ordinal, date and
    hierarchy QIs)."""
    from anonymatch.tables.methods import registry

    return registry()


@dataclass
class HierarchyFile:
    """An uploaded hierarchy (ARX CSV): stored under a generated name in the session's
    directory; ``name`` is the uploaded file's name, as shown and as written in a downloaded
    job file."""

    path: Path
    name: str


def stored_hierarchy_name() -> str:
    """The generated name a hierarchy upload is stored under."""
    return f"hierarchy-{secrets.token_hex(8)}.csv"


def check_hierarchy(upload: HierarchyFile) -> None:
    """Read an uploaded hierarchy as a run would (``read_hierarchy``); InputError (one line,
    naming the uploaded file, never the stored one) if it is not a valid ARX hierarchy."""
    from anonymatch.tables.columns.hierarchy import read_hierarchy

    try:
        read_hierarchy(upload.path)
    except InputError as exc:
        raise InputError(str(exc).replace(str(upload.path), upload.name)
                         .replace(upload.path.name, upload.name)) from None  # fmt: skip


def _text(form: Mapping[str, Any], key: str) -> str:
    value = form.get(key)
    return value.strip() if isinstance(value, str) else ""


def _tokens(text: str, sep: str = ",") -> list[str]:
    return [v.strip() for v in text.split(sep) if v.strip()]


def column_spec(
    form: Mapping[str, Any], c: str, role: str, hierarchies: Mapping[str, HierarchyFile]
) -> dict[str, Any]:
    """A column's entry of a job's ``columns`` table from the dataset page's form: its role,
    and for a QI or sensitive column its type, order, granularity and hierarchy; its missing
    codes. O(1)."""
    column: dict[str, Any] = {"role": role}
    if role in ("qi", "sensitive"):
        kind = _text(form, f"type:{c}") or "categorical"
        column["type"] = kind
        if kind == "ordinal":
            order = _tokens(_text(form, f"order:{c}"), "|")
            if order:
                column["order"] = order
        if kind in ("date", "datetime") and _text(form, f"granularity:{c}"):
            column["granularity"] = _text(form, f"granularity:{c}")
        if role == "qi" and kind == "categorical" and c in hierarchies:
            column["hierarchy"] = hierarchies[c].name
    na = _tokens(_text(form, f"na:{c}"))
    if na:
        column["na"] = na
    return column


def dataset_input(dataset: Dataset, path: str) -> dict[str, Any]:
    """The ``[input]`` keys that read ``dataset`` (its path given as ``path``)."""
    source: dict[str, Any] = {"path": path}
    sep = dataset.separator
    if sep is not None:
        source.update(format="csv", sep=sep)
    if not dataset.header:
        source.update(header=False, names=list(dataset.names))
    return source


CARRIED = {"method": ("time_limit", "epsilons", "neighbours"),
           "execution": ("executor", "workers", "chunk_rows")}  # fmt: skip
"""Keys of an opened job file that the form does not show but keeps (the scheduler address
and file paths such as ``cell_weights`` are not kept)."""


@dataclass
class Settings:
    """What the steward chose on the dataset page, as a validated job file
    (:class:`anonymatch.app.jobfile.Job`): ``job`` reads the dataset (``input.path`` is its
    name) and names each hierarchy by its uploaded file's name; ``hierarchies`` are the
    uploaded files; ``carried`` the keys of an opened job the form does not show."""

    job: Job
    hierarchies: dict[str, HierarchyFile] = field(default_factory=dict)
    carried: dict[str, dict[str, Any]] = field(default_factory=dict)
    population: HierarchyFile | None = None
    """An uploaded population table (its stored file and shown name): the result's population
    headline (:func:`population_headline`)."""
    sampling_fraction: float | None = None
    """The share of the population in the table, for the estimated population uniques."""

    @classmethod
    def from_form(
        cls,
        form: Mapping[str, Any],
        dataset: Dataset,
        hierarchies: Mapping[str, HierarchyFile] | None = None,
        carried: Mapping[str, dict[str, Any]] | None = None,
    ) -> Settings:
        """The dataset page's form as a job, validated twice: by the job file's models
        (:func:`~anonymatch.app.jobfile.parse_job`: the first problem as one located line,
        ``the form: columns.edu.order: …``) and as the run's typed job
        (:meth:`anonymatch.tables.job.TableJob.build`: what the method can do, the
        hierarchies). InputError (one line) on a problem."""
        hierarchies = dict(hierarchies or {})
        method = _text(form, "method") or "hungarian"
        known = methods()
        if method not in known:
            raise InputError(f"unknown method {method!r}")
        capabilities = known[method]
        columns: dict[str, dict[str, Any]] = {}
        for c in dataset.columns:
            role = _text(form, f"role:{c}") or "other"
            column = column_spec(form, c, role, hierarchies)
            weight = _number(form.get(f"weight:{c}"), float, f"the weight of {c!r}")
            if role == "qi" and weight is not None:
                column["weight"] = weight
            columns[c] = column
        used = {c for c, col in columns.items() if "hierarchy" in col}
        hierarchies = {c: h for c, h in hierarchies.items() if c in used}
        model: dict[str, Any] = {}
        k_column = _text(form, "k_column")
        if capabilities.levels and k_column:
            model["k_column"] = k_column
        else:
            k = _number(form.get("k"), int, "k")
            if k is None or k < 1:
                raise InputError("k must be a whole number of at least 1")
            model["k"] = k
        model.update(criteria_values(form))
        limit = _number(form.get("suppression_limit"), float, "the suppression limit")
        if limit:
            model["suppression_limit"] = limit
        method_keys: dict[str, Any] = {"name": method}
        size = _number(form.get("partition_size"), int, "the partition size")
        if size is not None:
            method_keys["partition_size"] = size
        if hierarchies and _text(form, "hierarchy_cells") == "set":
            method_keys["hierarchy_cells"] = "set"
        structure = _text(form, "structure")
        if structure and structure != "classes":  # rings by name only (the job checks it)
            method_keys["structure"] = structure
        source = dataset_input(dataset, dataset.name)
        na_values = _tokens(_text(form, "na_values"))
        if na_values:
            source["na"] = na_values
        if form.get("drop_missing") in ("on", "true", "1"):
            source["drop_missing"] = True
        carried = {s: dict(v) for s, v in (carried or {}).items() if v}
        mapping: dict[str, Any] = {
            "input": source,
            "columns": columns,
            "model": model,
            "method": {**carried.get("method", {}), **method_keys},
            "output": {"path": "release.csv", "report": "manifest.json"},
        }
        if carried.get("execution"):
            mapping["execution"] = carried["execution"]
        from anonymatch.app.jobfile import parse_job

        settings = cls(parse_job(mapping, "the form"), hierarchies, carried)
        settings.table_job(dataset, criteria=False)  # the run's own checks, before the run
        return settings

    @classmethod
    def from_job(
        cls, job: Job, dataset: Dataset, hierarchies: Mapping[str, HierarchyFile] | None = None
    ) -> Settings:
        """An opened job file's columns, model and method on ``dataset`` (its input path and
        reading options are the dataset's; its missing-value tokens are kept). A column of the
        job the table lacks is refused (one located line); a column of the table the job does
        not name is ``other``."""
        from anonymatch.app.jobfile import _loc_text

        if job.kind != "table":
            raise InputError(f"kind: the web app runs table jobs, not {job.kind!r}")
        if job.series.dir is not None:  # never dropped in silence
            raise InputError("series: the web app publishes no release series (anonymize --series)")
        for name in job.columns:
            if name not in dataset.columns:
                raise InputError(
                    f"columns.{_loc_text([name])}: unknown column; {dataset.name} has: "
                    f"{', '.join(dataset.columns)}"
                )
        hierarchies = dict(hierarchies or {})
        columns = {}
        for c in dataset.columns:
            column = job.columns.get(c)
            if column is None:
                columns[c] = {"role": "other"}
                continue
            values = column.model_dump(exclude_defaults=True)
            values["role"] = column.role
            if column.hierarchy is not None:
                if c in hierarchies:
                    values["hierarchy"] = hierarchies[c].name
                else:
                    values.pop("hierarchy")
            columns[c] = values
        source = dataset_input(dataset, dataset.name)
        if job.input.na is not None:
            source["na"] = list(job.input.na)
        if job.input.drop_missing:
            source["drop_missing"] = True
        carried: dict[str, dict[str, Any]] = {}
        for section, keys in CARRIED.items():
            given = getattr(job, section).model_dump(exclude_defaults=True)
            kept = {key: given[key] for key in keys if key in given}
            if kept:
                carried[section] = kept
        method = job.method.model_dump(exclude_defaults=True)
        method = {key: method[key] for key in ("name", "partition_size", "hierarchy_cells",
                                               "structure") if key in method}  # fmt: skip
        mapping: dict[str, Any] = {
            "input": source,
            "columns": columns,
            "model": job.model.model_dump(exclude_defaults=True),
            "method": {**carried.get("method", {}), **method},
            "output": {"path": "release.csv", "report": "manifest.json"},
        }
        if carried.get("execution"):
            mapping["execution"] = carried["execution"]
        used = {c for c, col in columns.items() if "hierarchy" in col}
        from anonymatch.app.jobfile import parse_job

        return cls(parse_job(mapping, "the job"), {c: h for c, h in hierarchies.items()
                                                   if c in used}, carried)  # fmt: skip

    def run_job(self, dataset: Dataset, directory: Path) -> Job:
        """The job a run executes: paths relative to ``directory`` (the session's, where the
        job file is written): the stored upload and hierarchies, outputs in ``run/``."""

        def relative(path: Path) -> str:
            return str(path.relative_to(directory)) if path.is_relative_to(directory) else str(path)

        items = None if dataset.items is None else relative(dataset.items.path)
        return self._with_paths(
            relative(dataset.path),
            {c: relative(h.path) for c, h in self.hierarchies.items()},
            "run/release.jsonl" if items is not None else "run/release.csv",
            "run/manifest.json",
            items,
        ).model_copy(update={"model": self.criteria_model(relative)})

    def table_job(self, dataset: Dataset, criteria: bool = True) -> Any:
        """The run's :class:`~anonymatch.tables.job.TableJob` (built from the job as the CLI's
        ``--config`` does; the hierarchies read from their stored files), with the criteria
        counted against the uploaded population (``criteria``: False checks the rest before
        the population is stored)."""
        from anonymatch.tables.job import TableJob

        job = self._with_paths(
            str(dataset.path), {c: str(h.path) for c, h in self.hierarchies.items()}, None, None
        )
        if criteria:
            job = job.model_copy(update={"model": self.criteria_model(str)})
        else:
            keys = {p.name: None for p in POPULATION_CRITERIA.parameters()}
            job = job.model_copy(update={"model": job.model.model_copy(update=keys)})
        from anonymatch.app.tablejob import job_file_keywords

        return TableJob.build(job_file_keywords(job))

    def criteria_model(self, path: Callable[[Path], str]) -> Any:
        """The job's ``[model]`` with the uploaded population table (by ``path`` of its stored
        file) when a criterion is asked for: the form's population is its population."""
        model = self.job.model
        asked = any(getattr(model, p.name) is not None for p in POPULATION_CRITERIA.parameters())
        if not asked:
            return model
        if self.population is None:
            names = ", ".join(
                c.title for c in POPULATION_CRITERIA.criteria if c.asked(model.__dict__)
            )
            raise InputError(f"{names}: upload the population table it is counted against")
        return model.model_copy(update={"population": path(self.population.path)})

    def job_toml(self, dataset: Dataset) -> str:
        """The job file (TOML, ``anonymatch-job/1``) that reproduces the run: ``anonymatch
        anonymize --config JOB`` beside the table and the hierarchy files (paths relative to
        the job file, as uploaded)."""
        from anonymatch.app.jobfile import render_toml

        return render_toml(self.job)

    def _with_paths(
        self,
        input_path: str,
        trees: Mapping[str, str],
        output: str | None,
        report: str | None,
        items_path: str | None = None,
    ) -> Job:
        columns = {
            c: col.model_copy(update={"hierarchy": trees[c]}) if c in trees else col
            for c, col in self.job.columns.items()
        }
        return self.job.model_copy(
            update={
                "input": self.job.input.model_copy(
                    update={"path": input_path}
                    if items_path is None
                    else {"path": input_path, "items": items_path}
                ),
                "columns": columns,
                "output": self.job.output.model_copy(update={"path": output, "report": report}),
            }
        )


def criteria_values(form: Mapping[str, Any]) -> dict[str, Any]:
    """The form's fields of the criteria (one per parameter of :data:`FORM_CRITERIA` but the
    population, which is the form's upload), each read by its declaration
    (``Parameter.parse``: ``l`` and ``t`` one number or ``column=value,…``): the ``[model]``
    keys they give, a field left empty or at its default giving none. The sensitive models'
    ``diversity`` and ``c`` refine ``l``: without ``l`` they are not read. InputError when a
    field is not a number. The release checks' check boxes (:data:`CHECK_FLAGS`) give
    ``true`` when ticked. O(fields)."""
    values: dict[str, Any] = {
        p.name: True for p in CHECK_FLAGS if form.get(p.name) in ("on", "true", "1")
    }
    for p in FORM_CRITERIA.parameters():
        text = _text(form, p.name)
        if p.kind == "table" or not text or text == p.default:
            continue
        if p.refines is not None and not _text(form, p.refines):
            continue  # the page shows them beside the parameter they refine
        values[p.name] = p.parse(text)
    return values


def read_job_text(raw: bytes, name: str) -> Job:
    """An uploaded job file, validated (``name: key.path: message`` on the first problem)."""
    import tomllib

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name}: not UTF-8 text") from None
    try:
        mapping = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{name}: not valid TOML: {exc}") from None
    from anonymatch.app.jobfile import parse_job

    return parse_job(mapping, name)


def inside(value: str, root: Path | None) -> Path | None:
    """A job's path (``${VAR}`` expanded, relative to ``root``) resolved, if it is a file inside
    ``root``; None otherwise (nothing is read)."""
    from anonymatch.app.jobfile import expand_path

    if root is None:
        return None
    try:
        path = Path(expand_path(value, root, "path")).resolve()
    except (InputError, OSError, ValueError):
        return None
    base = root.resolve()
    return path if path.is_relative_to(base) and path.is_file() else None


def separator_key(sep: str | None) -> str:
    """The reading form's separator choice of a job's ``sep`` (InputError if it has none)."""
    if sep is None:
        return "auto"
    for key, char in SEPARATORS.items():
        if char == sep:
            return key
    raise InputError(f"input.sep: the web app reads , ; tab space or |, got {sep!r}")


# ------------------------------------------------------------------------------ the result


def guarantee(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What a finished run guarantees, from its manifest: the model, k (or the per-record
    levels), ℓ/t per sensitive column, the suppression, the plan (path, partition size),
    whether the release was verified, and what it keeps and leaks (``app.honest``: the utility
    headline and its verdict, the kept columns that give QIs away, a ring release's insider
    weakness, a sensitive column published unprotected)."""
    g = manifest.get("guarantee") or {}
    plan = manifest.get("plan") or {}
    verification = manifest.get("verification") or {}
    inputs = manifest.get("input") or {}
    sensitive = []
    for entry in g.get("sensitive") or []:
        parts = []
        if entry.get("l") is not None:
            kind = entry.get("diversity") or "distinct"
            c = f", c = {entry['c']:g}" if entry.get("c") is not None else ""
            default = " (applied by default; ℓ = 1 publishes it unprotected)"
            parts.append(f"{kind} ℓ-diversity, ℓ = {entry['l']}{c}")
            parts[-1] += default if entry.get("default") else ""
        if entry.get("t") is not None:
            parts.append(f"t-closeness, t = {entry['t']:g}")
        sensitive.append((str(entry.get("column", "")), "; ".join(parts) or "kept as is"))
    for column in g.get("unprotected") or []:
        sensitive.append((str(column), "published without protection (ℓ = 1)"))
    levels = g.get("levels") or g.get("k_column")
    from anonymatch.app.honest import (
        headline_of,
        headline_text,
        insider_warning,
        leakage_lines,
        unprotected_warning,
        utility_warning,
    )

    kept = headline_of(manifest)
    return {
        "headline": headline_text(manifest),
        "verdict": kept.get("verdict") if kept else None,
        "utility_warning": utility_warning(manifest),
        "insider_warning": insider_warning(manifest),
        "unprotected_warning": unprotected_warning(manifest),
        "leaks": leakage_lines(manifest),
        "model": g.get("model", "?"),
        "k": g.get("k"),
        "levels": levels,
        "sensitive": sensitive,
        "path": plan.get("path"),
        "partition_size": plan.get("partition_size"),
        "passed": verification.get("passed"),
        "records": inputs.get("records"),
        "suppressed": int(inputs.get("suppressed") or 0),
        "dropped": int(inputs.get("dropped_missing") or 0),
        "suppression_limit": (manifest.get("parameters") or {}).get("suppression_limit"),
    }


def risk_headline(settings: Settings, dataset: Dataset, release: Path,
                  manifest: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
    """The release's re-identification risk headline (``anonymatch.tables.risk``, as the
    report computes it): max and mean prosecutor risk (1 / candidates per person) and the share
    of records at the top risk, beside publishing the QIs unchanged. Records suppressed under a
    limit are not published: the figures are over the published people, chosen by the run's
    own rule. Raises InputError when the figures cannot be computed."""
    import numpy as np

    from anonymatch.report.tables import MAX_ROWS
    from anonymatch.tables.io import CsvOptions, read_table
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.models.suppress import choose_outliers
    from anonymatch.tables.pipeline import prepare
    from anonymatch.tables.risk.risk import DEFAULT_THRESHOLD, assess_cells

    records = int((manifest.get("output") or {}).get("records") or 0)
    if records > MAX_ROWS:
        raise InputError(f"not measured on releases of more than {MAX_ROWS:,} rows")
    job = settings.table_job(dataset)
    typed = dataset.parquet or dataset.document
    options = CsvOptions(sep=dataset.separator, fmt="auto" if typed else "csv",
                         names=None if dataset.header else list(dataset.names))  # fmt: skip
    original = read_table(dataset.path, options)
    published = read_table(release)
    data, enc, dropped = prepare(original, job.schema, job.na, job.drop_missing)
    cells = parse_cells(published, enc)
    k = (manifest.get("guarantee") or {}).get("k")
    if cells.n < enc.n and job.suppression_limit and isinstance(k, int):
        size = (manifest.get("plan") or {}).get("partition_size")
        keep = ~choose_outliers(enc, k, job.suppression_limit, size)
        data, enc = data.loc[keep].reset_index(drop=True), enc.take(np.flatnonzero(keep))
    if cells.n != enc.n:
        raise InputError(f"the release has {cells.n} rows against {enc.n} published people")
    report = assess_cells(data, enc, cells, published, job.schema, None, DEFAULT_THRESHOLD,
                          dropped)  # fmt: skip
    return risk_summary(report)


def risk_summary(report: RiskReport) -> dict[str, Any]:
    """The result page's risk figures of a risk report (tables' or the joint graph's): the
    prosecutor risk, the fewest candidates and how many people have them, beside the
    baseline of publishing unchanged. O(1)."""
    cand, pr, base = report.candidates, report.prosecutor, report.original
    top = cand.histogram.get(cand.min, 0)
    return {
        "people": report.people,
        "max": pr.max,
        "mean": pr.mean,
        "fewest": cand.min,
        "top": top,
        "top_share": top / report.people if report.people else 0.0,
        "threshold": pr.threshold,
        "above": pr.above,
        "base_max": base.prosecutor.max,
        "base_mean": base.prosecutor.mean,
        "base_uniques": base.sample_uniques,
    }


def _number(value: Any, kind: type, name: str) -> Any:
    if value is None or str(value).strip() == "":
        return None
    try:
        return kind(str(value).strip())
    except ValueError:
        raise InputError(f"{name} must be a number, got {value!r}") from None


def database_name(url: str, table: str, data_dir: Path | None) -> str:
    """The name a database table is shown under (``table 'T' in URL``, the URL without its
    password), once the source is checked: a database URL, a table name, and a SQLite/DuckDB
    file only inside the data directory ``data_dir`` (the app reads no other file).
    InputError (one line, no password) otherwise."""
    from anonymatch.tables.io.sql import _url, check_identifier, is_database_url, redact_url

    if not is_database_url(url):
        raise InputError("a database URL starts with postgresql://, sqlite:/// or duckdb:///")
    check_identifier(table, "the table")
    parsed = _url(url)
    if not parsed.drivername.startswith("postgresql"):
        inside = False
        if data_dir is not None and parsed.database:
            found = Path(parsed.database).resolve()
            inside = found.is_relative_to(data_dir.resolve()) and found.is_file()
        if not inside:
            raise InputError("a SQLite or DuckDB file is read only from the app's data directory")
    return f"table {table!r} in {redact_url(url)}"


def copy_database_table(url: str, table: str, target: Path, limits: Limits) -> None:
    """Copy ``table`` of the database ``url`` into the private Parquet file ``target`` (the
    session's copy, removed with the session's uploads): its rows are counted on the server
    first and a table past the cell budget is refused before it is read. InputError (one line,
    the password never shown) on an unreachable server, wrong credentials, a missing table or
    no rows. O(rows)."""
    from anonymatch.tables.io.sql import count_sql_rows, read_sql_source

    width = read_sql_source(url, table=table, nrows=1).shape[1]
    rows = count_sql_rows(url, table=table)
    if rows * width > limits.max_cells:
        raise InputError(
            f"table {table!r} has {rows:,} rows × {width} columns, more than the app's "
            f"{limits.max_cells:,} cells"
        )
    frame = read_sql_source(url, table=table)
    try:
        frame.to_parquet(target, index=False)
    except (ValueError, TypeError, OverflowError) as exc:  # pyarrow: a column of mixed types
        text = str(exc).strip().splitlines()
        raise InputError(f"cannot hold table {table!r}: {text[0] if text else exc}") from None
    os.chmod(target, 0o600)


def stored_name(filename: str) -> str:
    """The name an upload is stored under: generated (``upload-`` and 16 random hex digits),
    with the original's suffix when it is a table's (``.csv``, ``.parquet``…, lower-cased), so
    nothing of a hostile name (``--help``, ``../x``, ``run``) reaches the file system or the
    CLI; the original is kept only as the name shown."""
    suffix = os.path.splitext(filename.replace("\\", "/").rsplit("/", 1)[-1])[1].lower()
    return f"upload-{secrets.token_hex(8)}{suffix if suffix in TABLE_SUFFIXES else ''}"


def shown_name(filename: str) -> str:
    """An upload's name as shown: its last path component, control characters dropped, at
    most 200 characters (escaped by the templates)."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "".join(ch for ch in base if ch.isprintable()).strip()
    return cleaned[:200] or "upload"


def form_view(dataset: Dataset, settings: Settings | None) -> dict[str, Any]:
    """What the dataset page's form shows: the settings' job, else the inferred roles and
    types (k = 5, the default method); with an items table also the relational choices (id and
    item columns, the codes meaning "no item", the item weight)."""
    view = _table_view(dataset, settings)
    if dataset.items is None:
        return view
    job = settings.job if settings is not None else None
    if job is None or job.kind != "relational":
        view.update(id_column=dataset.id_column, item_column=dataset.item_column, item_na="",
                    item_weight="")  # fmt: skip
        for c, col in view["columns"].items():
            if c == dataset.id_column:
                col["role"] = "identifier"
        return view
    item_column = job.input.item_column or dataset.item_column
    codes = job.columns.get(item_column)
    weight = job.method.item_weight
    view.update(
        id_column=job.input.id_column or dataset.id_column,
        item_column=item_column,
        item_na=",".join(codes.na or ()) if codes is not None else "",
        item_weight="" if weight is None else f"{weight:g}",
    )
    return view


def _table_view(dataset: Dataset, settings: Settings | None) -> dict[str, Any]:
    """:func:`form_view` of a table run."""
    columns: dict[str, dict[str, Any]] = {}
    job = settings.job if settings is not None else None
    for c in dataset.columns:
        col = job.columns.get(c) if job is not None else None
        if col is None:
            columns[c] = {"role": dataset.roles.get(c, "other"),
                          "type": dataset.types.get(c, "categorical"), "order": "",
                          "granularity": dataset.granularities.get(c, ""), "na": "",
                          "weight": "", "hierarchy": ""}  # fmt: skip
            continue
        tree = settings.hierarchies.get(c) if settings is not None else None
        columns[c] = {
            "role": col.role,
            "type": col.type,
            "order": "|".join(col.order or ()),
            "granularity": col.granularity or "",
            "na": ",".join(col.na or ()),
            "weight": "" if col.weight is None else f"{col.weight:g}",
            "hierarchy": tree.name if tree is not None else "",
        }

    def shown(value: Any, default: Any) -> str:
        """A criterion's value as its field shows it (``column=value,…`` per column)."""
        if value is None:
            return "" if default is None else str(default)
        if isinstance(value, Mapping):
            return ",".join(f"{c}={v:g}" for c, v in value.items())
        return value if isinstance(value, str) else f"{value:g}"

    fields = [p for p in FORM_CRITERIA.parameters() if p.kind != "table"]  # population: upload
    if job is None:
        return {"columns": columns, "k": 5, "k_column": "", "suppression_limit": "",
                "method": "hungarian",
                "partition_size": "", "hierarchy_cells": "node", "na_values": "",
                "drop_missing": False, "carried": "", "structure": "classes",
                **{p.name: shown(None, p.default) for p in fields},
                **{p.name: bool(p.default) for p in CHECK_FLAGS}}  # fmt: skip
    model, method = job.model, job.method
    carried = "; ".join(f"{section}.{key} = {value}" for section, keys in
                        (settings.carried if settings else {}).items()
                        for key, value in keys.items())  # fmt: skip
    return {
        "columns": columns,
        "k": "" if model.k is None else model.k,
        "k_column": model.k_column or "",
        "suppression_limit": f"{model.suppression_limit:g}" if model.suppression_limit else "",
        "method": method.name or "hungarian",
        "partition_size": method.partition_size or "",
        "hierarchy_cells": method.hierarchy_cells or "node",
        "structure": method.structure or "classes",
        "na_values": ",".join(job.input.na or ()),
        "drop_missing": job.input.drop_missing,
        "carried": carried,
        **{p.name: shown(getattr(model, p.name), p.default) for p in fields},
        **{p.name: bool(getattr(model, p.name)) for p in CHECK_FLAGS},
    }


# ------------------------------------------------------------------------------ the population


def stored_population_name(filename: str) -> str:
    """The generated name a population upload is stored under (``population-`` and 16 random
    hex digits, the suffix of a table's name kept as for :func:`stored_name`)."""
    return "population-" + stored_name(filename).removeprefix("upload-")


def check_population(
    upload: HierarchyFile, settings: Settings, limits: Limits, workdir: Path
) -> None:
    """Read an uploaded population table within the data upload's budgets (:func:`load`) and
    check that it has every quasi-identifier of ``settings``; InputError (one line, naming the
    uploaded file, never the stored one) otherwise. O(:data:`SAMPLE_ROWS` rows) beyond the
    budget checks: the whole table is read by :func:`population_headline`."""
    table = Dataset(upload.path, upload.name, upload.path.stat().st_size)
    try:
        load(table, limits, workdir)
    except InputError as exc:
        raise InputError(f"population: {str(exc).replace(str(upload.path), upload.name)}") from None
    qi = [c for c, col in settings.job.columns.items() if col.role == "qi"]
    missing = [c for c in qi if c not in table.columns]
    if missing:
        raise InputError(
            f"population: {upload.name} lacks the quasi-identifier(s) {', '.join(missing)}"
        )


def population_choice(
    form: Mapping[str, Any], previous: Settings | None, upload: HierarchyFile | None
) -> tuple[HierarchyFile | None, float | None]:
    """The form's population table (a new ``upload``, else the previous settings' unless
    ``population_clear``) and sampling fraction (checked in (0, 1]; InputError otherwise)."""
    from anonymatch.tables.risk.estimators import check_fraction

    kept = previous.population if previous is not None else None
    if form.get("population_clear") in ("on", "true", "1"):
        kept = None
    fraction = _number(form.get("sampling_fraction"), float, "the sampling fraction")
    if fraction is not None:
        fraction = check_fraction(fraction, "the sampling fraction")
    return upload or kept, fraction


def population_headline(
    settings: Settings, dataset: Dataset, release: Path, manifest: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The release's population headline (``tables.risk.population.assess_population``, as
    ``anonymatch risk --population / --sampling-fraction`` computes it): k-map, max and mean
    journalist risk and marketer risk against the uploaded population table; the population
    uniques estimated by Dankar et al.'s rule (its chosen model named) from the sampling
    fraction, else at f = n / N. None without a population or a fraction; InputError when the
    figures cannot be computed. O(that of ``assess_population``)."""
    if settings.population is None and settings.sampling_fraction is None:
        return None
    from anonymatch.report.tables import MAX_ROWS
    from anonymatch.tables.io import CsvOptions, read_table
    from anonymatch.tables.risk.population import (
        PopulationInput,
        PopulationSource,
        assess_population,
    )

    records = int((manifest.get("output") or {}).get("records") or 0)
    if records > MAX_ROWS:
        raise InputError(f"not measured on releases of more than {MAX_ROWS:,} rows")
    job = settings.table_job(dataset)
    typed = dataset.parquet or dataset.document
    options = CsvOptions(sep=dataset.separator, fmt="auto" if typed else "csv",
                         names=None if dataset.header else list(dataset.names))  # fmt: skip
    original = read_table(dataset.path, options)
    table = None
    if settings.population is not None:
        shown = Dataset(settings.population.path, settings.population.name, 0)
        table = read_table(shown.path, CsvOptions(sep=shown.separator))
    report = assess_population(
        original,
        read_table(release),
        PopulationInput.of(job),
        PopulationSource(table, settings.sampling_fraction),
    )
    chosen = next(e for e in report.estimates.estimates if e.name == "dankar")
    out: dict[str, Any] = {
        "fraction": report.estimates.fraction,
        "model": chosen.model,
        "uniques": chosen.uniques,
        "share": chosen.share,
        "exact": None,
    }
    exact = report.exact
    if exact is not None:
        out["exact"] = {
            "records": exact.population,
            "kmap": exact.kmap,
            "journalist_max": exact.journalist_max,
            "journalist_mean": exact.journalist_mean,
            "marketer": exact.marketer,
            "population_uniques": exact.uniques.population_uniques,
        }
    return out
