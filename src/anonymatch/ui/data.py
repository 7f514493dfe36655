"""The web app's dataset: reading an uploaded or picked table, its preview, the inferred roles
and types of its columns, the CLI arguments of a run and the job file that reproduces it.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anonymatch.core.errors import InputError
from anonymatch.core.files import human_size as human_size

SEPARATORS = {"auto": None, "comma": ",", "semicolon": ";", "tab": "\t", "space": " ", "pipe": "|"}
ROLES = ("qi", "sensitive", "identifier", "other")
TYPES = ("numeric", "categorical")
PREVIEW_ROWS = 10
SAMPLE_ROWS = 20_000
"""Rows read for the preview and the role inference of a table too large to read whole."""
TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".dat", ".data", ".parquet", ".pq")
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


METHODS = {
    "hungarian": "Freeform generalization with an exact assignment per step: the least "
    "information loss (default).",
    "sortgreedy": "Freeform, sorted greedy assignment: faster, a little more loss.",
    "greedy": "Freeform, plain greedy assignment: fastest freeform method.",
    "mondrian": "Equivalence classes (groups of ≥ k identical rows), as ARX or sdcMicro make "
    "them: for tools that need classes; more loss.",
}


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
    inferred_by: str = ""

    @property
    def separator(self) -> str | None:
        """The separator character, guessed from the first lines when ``sep`` is auto."""
        if self.parquet:
            return None
        return SEPARATORS.get(self.sep) or sniff_separator(self.path)

    @property
    def parquet(self) -> bool:
        return self.path.suffix.lower() in (".parquet", ".pq")

    def reading_argv(self) -> list[str]:
        """The CLI options that read this file."""
        argv: list[str] = []
        sep = self.separator
        if sep is not None:
            argv += ["--format", "csv", "--sep", "\\t" if sep == "\t" else sep]
        if not self.header and self.names:
            argv += ["--names", ",".join(self.names)]
        return argv


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


def load(dataset: Dataset, limits: Limits | None = None, workdir: Path | None = None) -> Dataset:
    """Read the table with the dataset's options: columns, row count, preview, inferred roles.
    Bounded by ``limits``: a table past the cell or decompressed-byte budget is refused, and a
    large one is read only in part (its first :data:`SAMPLE_ROWS` rows; a CSV's rows are then
    counted by lines, ``rows_exact`` False). ``workdir`` (default: the table's directory) holds
    a Parquet sample for the inference for a moment.

    Raises
    ------
    anonymatch.core.errors.InputError
        One line saying why the file cannot be read as a table, or is past a budget.
    """
    from anonymatch.tables.io import CsvOptions, read_table

    limits = limits or Limits()
    if not dataset.header and not dataset.names:
        raise InputError("the file has no header line: give the column names")
    if dataset.parquet:
        frame, rows, width = _parquet_sample(dataset, limits)
        exact = True
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
    dataset.rows, dataset.rows_exact = rows, exact
    dataset.preview = [
        [str(v) for v in row] for row in frame.head(PREVIEW_ROWS).itertuples(index=False)
    ]
    if dataset.parquet:  # the inference reads a sample file, never the whole table
        where = workdir or dataset.path.parent
        sample = where / f"sample-{secrets.token_hex(8)}.parquet"
        try:
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
    :data:`SAMPLE_ROWS` rows; ``sample``: a file of them to read instead of the table): a date
    is offered as numeric (ranges), every other type as categorical."""
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
    for c in dataset.columns:
        column = job.columns.get(c)
        roles[c] = column.role if column is not None else "other"
        numeric = column is not None and column.type in ("numeric", "date", "datetime")
        types[c] = "numeric" if numeric else "categorical"
    return roles, types, "the job-file inference (anonymatch init)"


@dataclass
class Settings:
    """What the steward chose on the dataset page."""

    roles: dict[str, str]
    types: dict[str, str]
    k: int
    method: str
    l: int | None = None  # noqa: E741 - the model's own name
    t: float | None = None
    na_values: str = ""
    drop_missing: bool = False

    @classmethod
    def from_form(cls, form: Mapping[str, Any], columns: Sequence[str]) -> Settings:
        """Parse the dataset page's form; InputError (one line) on a bad value."""
        roles = {c: str(form.get(f"role:{c}", "other")) for c in columns}
        types = {c: str(form.get(f"type:{c}", "categorical")) for c in columns}
        for c in columns:
            if roles[c] not in ROLES or types[c] not in TYPES:
                raise InputError(f"column {c!r}: unknown role or type")
        if not any(r == "qi" for r in roles.values()):
            raise InputError("choose at least one quasi-identifier")
        method = str(form.get("method", "hungarian"))
        if method not in METHODS:
            raise InputError(f"unknown method {method!r}")
        k = _number(form.get("k"), int, "k")
        if k is None or k < 1:
            raise InputError("k must be a whole number of at least 1")
        l_value = _number(form.get("l"), int, "l")
        t_value = _number(form.get("t"), float, "t")
        if (l_value is not None or t_value is not None) and not any(
            r == "sensitive" for r in roles.values()
        ):
            raise InputError("l-diversity and t-closeness need a sensitive column")
        return cls(
            roles,
            types,
            k,
            method,
            l_value,
            t_value,
            str(form.get("na_values", "")).strip(),
            form.get("drop_missing") in ("on", "true", "1"),
        )

    def of_role(self, role: str) -> list[str]:
        return [c for c, r in self.roles.items() if r == role]

    def argv(self, dataset: Dataset, outdir: Path, cwd: Path | None = None) -> list[str]:
        """The ``anonymatch anonymize`` arguments of this run (outputs in ``outdir``; paths
        under ``cwd``, the run's working directory, are given relative to it, so the manifest
        and the report name the files, not the app's private directory)."""

        def shown(path: Path) -> str:
            if cwd is not None and path.is_relative_to(cwd):
                return str(path.relative_to(cwd))
            return str(path)

        numeric = [c for c in self.of_role("qi") if self.types[c] == "numeric"]
        argv = [
            "anonymize",
            "-o",
            shown(outdir / "release.csv"),
            "--k",
            str(self.k),
            "--qi",
            ",".join(self.of_role("qi")),
            "--method",
            self.method,
            "--report",
            shown(outdir / "manifest.json"),
            "--report-html",
            shown(outdir / "report.html"),
            "--force",
            *dataset.reading_argv(),
        ]
        if numeric:
            argv += ["--numeric", ",".join(numeric)]
        for flag, role in (("--sensitive", "sensitive"), ("--identifiers", "identifier")):
            if self.of_role(role):
                argv += [flag, ",".join(self.of_role(role))]
        if self.l is not None:
            argv += ["--l", str(self.l)]
        if self.t is not None:
            argv += ["--t", repr(self.t)]
        if self.na_values:
            argv += ["--na-values", self.na_values]
        if self.drop_missing:
            argv.append("--drop-missing")
        # the table last, after `--`: whatever its name, never read as an option
        return [*argv, "--", shown(dataset.path)]

    def job_toml(self, dataset: Dataset) -> str:
        """The job file (TOML, ``anonymatch-job/1``) that reproduces the run: ``anonymatch
        anonymize --config JOB`` beside the table (paths relative to the job file)."""
        from anonymatch.app.jobfile import parse_job, render_toml

        sep = dataset.separator
        source: dict[str, Any] = {"path": dataset.name}
        if sep is not None:
            source.update(format="csv", sep=sep)
        if not dataset.header:
            source.update(header=False, names=list(dataset.names))
        if self.na_values:
            source["na"] = [v.strip() for v in self.na_values.split(",")]
        if self.drop_missing:
            source["drop_missing"] = True
        columns = {
            c: {"role": r, "type": self.types[c]} if r == "qi" else {"role": r}
            for c, r in self.roles.items()
        }
        model: dict[str, Any] = {"k": self.k}
        if self.l is not None:
            model["l"] = self.l
        if self.t is not None:
            model["t"] = self.t
        job = parse_job(
            {
                "input": source,
                "columns": columns,
                "model": model,
                "method": {"name": self.method},
                "output": {"path": "release.csv", "report": "manifest.json"},
            },
            "the web app's job",
        )
        return render_toml(job)


def _number(value: Any, kind: type, name: str) -> Any:
    if value is None or str(value).strip() == "":
        return None
    try:
        return kind(str(value).strip())
    except ValueError:
        raise InputError(f"{name} must be a number, got {value!r}") from None


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
