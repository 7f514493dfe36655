"""The web app's dataset: reading an uploaded or picked table, its preview, the inferred roles
and types of its columns, the CLI arguments of a run and the job file that reproduces it."""

from __future__ import annotations

import csv
import io
import os
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
    preview: list[list[str]] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    inferred_by: str = ""

    @property
    def separator(self) -> str | None:
        """The separator character, guessed from the first lines when ``sep`` is auto."""
        if self.path.suffix.lower() in (".parquet", ".pq"):
            return None
        return SEPARATORS.get(self.sep) or sniff_separator(self.path)

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
            lines = [line.rstrip("\r\n") for _, line in zip(range(20), fh, strict=False)]
    except OSError as exc:
        raise InputError(f"cannot read {path.name}: {exc.strerror}") from None
    lines = [line for line in lines if line.strip()]
    for sep in (",", ";", "\t", "|", " "):
        counts = {len(next(csv.reader(io.StringIO(line), delimiter=sep))) for line in lines}
        if len(counts) == 1 and counts.pop() > 1:
            return sep
    return ","


def load(dataset: Dataset) -> Dataset:
    """Read the table with the dataset's options: columns, row count, preview, inferred roles.

    Raises
    ------
    anonymatch.core.errors.InputError
        One line saying why the file cannot be read as a table.
    """
    from anonymatch.tables.io import CsvOptions, read_table

    if not dataset.header and not dataset.names:
        raise InputError("the file has no header line: give the column names")
    sep = dataset.separator
    options = CsvOptions(
        sep=sep,
        names=None if dataset.header else list(dataset.names),
        fmt="auto" if sep is None else "csv",
    )
    frame = read_table(dataset.path, options)
    if frame.shape[1] < 2:
        raise InputError(
            f"{dataset.name} has {frame.shape[1]} column; check the separator "
            "(or the file is not a table)"
        )
    dataset.columns = [str(c) for c in frame.columns]
    dataset.rows = len(frame)
    dataset.preview = [
        [str(v) for v in row] for row in frame.head(PREVIEW_ROWS).itertuples(index=False)
    ]
    roles, types, by = infer_roles(dataset, frame)
    dataset.roles, dataset.types, dataset.inferred_by = roles, types, by
    return dataset


def infer_roles(dataset: Dataset, frame: Any) -> tuple[dict[str, str], dict[str, str], str]:
    """Each column's suggested role and type, from the job-file inference
    (:func:`anonymatch.app.infer.infer_job`, what ``anonymatch init`` drafts): a date is
    offered as numeric (ranges), every other type as categorical."""
    from anonymatch.app.infer import infer_job

    job = infer_job(
        dataset.path,
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
            shown(dataset.path),
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
        return argv

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


def safe_name(filename: str) -> str:
    """A file name safe to create in the private directory (no path, no odd characters)."""
    base = os.path.basename(filename.replace("\\", "/")) or "upload"
    cleaned = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in base).lstrip(".")
    return cleaned[:120] or "upload"
