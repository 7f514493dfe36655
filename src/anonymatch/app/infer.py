"""Drafting a job file from a table: types, cardinalities, roles, missing-value tokens.

:func:`infer_job` reads a sample of a table and proposes a :class:`anonymatch.app.jobfile.Job`
with comments for the data steward (``anonymatch init`` writes it; the web UI shows it). It
guesses, and says so: every suggestion comes with the evidence (cardinality, examples, the rule
that fired), and what cannot be inferred (the order of ordinal categories, missing-value codes
such as ``-9``) is written as a commented-out line to check and enable.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.app.jobfile import Job, parse_job, toml_value
from anonymatch.core.errors import InputError
from anonymatch.core.params import param
from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES
from anonymatch.tables.io import CsvOptions, csv_separator, is_excel, is_parquet, read_table
from anonymatch.tables.io.sql import SqlSource, without_password
from anonymatch.tables.io.stats import is_stats_file

SEPARATORS = (",", ";", "\t", "|", " ")
"""Field separators tried when none is given, in this order of preference."""

IDENTIFIER_WORDS = ("id", "ssn", "name", "email", "mail", "phone", "tel", "address", "uuid")
"""Column-name words of direct identifiers (whole words; ``…ID`` in upper case counts too)."""
QI_PREFIXES = (
    "age",
    "sex",
    "gender",
    "race",
    "ethnic",
    "zip",
    "postcode",
    "postal",
    "birth",
    "dob",
    "marital",
    "marri",
    "marry",
    "educ",
    "occupation",
    "job",
    "country",
    "nationality",
    "native",
    "city",
    "county",
    "region",
    "language",
    "workclass",
    "state",
    "province",
    "hispan",
    "fips",
)
"""Column-name word beginnings of demographic quasi-identifiers. A word also matches after one
leading letter of the survey prefixes ``NAME_STEMS`` (FARS' ``isex``, ``istatenum``)."""
NAME_STEMS = ("i", "r", "x")
"""One-letter prefixes that survey files put before a variable's stem (imputed, recoded):
``isex`` is read as ``sex`` when the stem is a demographic word."""
CODE_WORDS = ("zip", "postcode", "postal", "plz", "fips", "icd", "naics", "code")
"""Column-name word beginnings of codes: digits that are labels, never numbers (``01852``)."""
US_STATES = frozenset(
    [
        "al", "ak", "az", "ar", "ca", "co", "ct", "de", "dc", "fl", "ga", "hi", "id", "il", "in",
        "ia", "ks", "ky", "la", "me", "md", "ma", "mi", "mn", "ms", "mo", "mt", "ne", "nv", "nh",
        "nj", "nm", "ny", "nc", "nd", "oh", "ok", "or", "pa", "ri", "sc", "sd", "tn", "tx", "ut",
        "vt", "va", "wa", "wv", "wi", "wy", "pr", "gu", "vi", "as", "mp", "alabama", "alaska",
        "arizona", "arkansas", "california", "colorado", "connecticut", "delaware", "florida",
        "georgia", "hawaii", "idaho", "illinois", "indiana", "iowa", "kansas", "kentucky",
        "louisiana", "maine", "maryland", "massachusetts", "michigan", "minnesota", "mississippi",
        "missouri", "montana", "nebraska", "nevada", "ohio", "oklahoma", "oregon", "pennsylvania",
        "tennessee", "texas", "utah", "vermont", "virginia", "washington", "wisconsin", "wyoming",
        "new hampshire", "new jersey", "new mexico", "new york", "north carolina", "north dakota",
        "rhode island", "south carolina", "south dakota", "west virginia", "dist of columbia",
        "district of columbia", "puerto rico", "guam", "virgin islands",
    ]
)  # fmt: skip
CODE_DICTIONARIES: dict[str, frozenset[str]] = {
    "sex": frozenset(["male", "female", "m", "f", "man", "woman", "unknown", "u", "other"]),
    "US state": US_STATES,
    "Hispanic origin": frozenset(
        ["hispanic", "non-hispanic", "not hispanic", "mexican", "puerto rican", "cuban",
         "unknown", "other/unk hisp", "central/so amer", "no specified/oth", "not a fatal(n/a)"]
    ),
    "race": frozenset(
        ["white", "black", "asian", "american indian", "amer-indian-eskimo",
         "asian-pac-islander", "pacific islander", "other", "unknown", "hispanic"]
    ),
}  # fmt: skip
"""Values of common demographic codes (lower case): a text column whose values are mostly one
of these is proposed as a quasi-identifier whatever its name."""
DICTIONARY_SHARE = 0.8
"""Share of a column's distinct values that must belong to a dictionary of ``CODE_DICTIONARIES``."""
NINES = (9, 99, 999, 9999)
"""All-nines values that surveys use for "unknown": flagged as candidate missing codes when
they stand apart (a spike or a gap above the other values)."""
SENSITIVE_PREFIXES = (
    "diagnos",
    "disease",
    "illness",
    "icd",
    "condition",
    "income",
    "salary",
    "wage",
    "health",
    "medical",
    "treatment",
    "drug",
    "hiv",
    "religio",
    "poverty",
    "credit",
    "debt",
)
"""Column-name word beginnings of likely sensitive attributes (suggested in a comment only)."""

UNIQUE_SHARE = 0.8
"""A text column with at least this share of distinct values (and > 100 of them) is free text
or a key: a likely identifier, and useless as a categorical QI."""
CODE_CARDINALITY = 10
"""Numbers with at most this many distinct values are taken as category codes."""


def _words(name: str) -> list[tuple[str, str]]:
    """(original, lower-case) words of a column name: split at non-alphanumerics and camelCase."""
    parts = re.split(r"[^A-Za-z0-9]+", name)
    words = []
    for part in parts:
        for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", part) or [part]:
            if w:
                words.append((w, w.lower()))
    return words


def _is_identifier_name(name: str) -> bool:
    for orig, low in _words(name):
        if low in IDENTIFIER_WORDS:
            return True
        if orig.isupper() and orig.endswith("ID"):
            return True
    return False


def _matches(name: str, prefixes: Sequence[str]) -> bool:
    """Whether a word of ``name`` starts with one of ``prefixes``, also after one leading
    letter of ``NAME_STEMS`` (``isex``, ``istatenum``; the stem must be 3+ letters)."""
    for _, low in _words(name):
        stems = [low]
        if len(low) > 3 and low[0] in NAME_STEMS:
            stems.append(low[1:])
        if any(stem.startswith(p) for stem in stems for p in prefixes):
            return True
    return False


def _dictionary(values: Sequence[str]) -> str | None:
    """The name of the code dictionary most of ``values`` (distinct) belong to, else None."""
    low = {v.strip().lower() for v in values}
    if len(low) < 2:
        return None
    for name, words in CODE_DICTIONARIES.items():
        if len(low & words) >= DICTIONARY_SHARE * len(low):
            return name
    return None


@dataclass
class ColumnProfile:
    """What the sample shows of one column."""

    name: str
    rows: int
    missing: dict[str, int]
    cardinality: int
    kind: str  # "numeric", "date", "datetime" or "text"
    integral: bool = False
    low: float | None = None
    high: float | None = None
    examples: list[str] = field(default_factory=list)
    negative_codes: list[str] = field(default_factory=list)
    ordered_hint: list[str] | None = None
    code_text: str | None = None  # why digits are kept as text (leading zeros, a code name)
    nines: list[str] = field(default_factory=list)  # candidate all-nines missing codes
    dictionary: str | None = None  # the code dictionary its values belong to

    @property
    def present(self) -> int:
        return self.rows - sum(self.missing.values())

    @property
    def unique_share(self) -> float:
        return self.cardinality / self.present if self.present else 0.0


def _leading_number(text: str) -> float | None:
    match = re.search(r"-?\d[\d,]*(?:\.\d+)?", text)
    if match is None:
        return None
    try:
        return float(match.group().replace(",", ""))
    except ValueError:
        return None


def profile_column(name: str, values: pd.Series, na: Sequence[str]) -> ColumnProfile:
    """Profile one column of text cells (types, cardinality, missing tokens, codes).

    Complexity: O(n log n) for n rows of the sample."""
    text = values.astype(str).str.strip()
    is_na = text.isin(list(na))
    missing = {str(k): int(v) for k, v in text[is_na].value_counts().items()}
    live = text[~is_na]
    counts = live.value_counts()
    profile = ColumnProfile(name, len(text), missing, int(len(counts)), "text")
    profile.examples = [str(v) for v in counts.index[:5]]
    if len(live) == 0:
        return profile
    digits = live.str.fullmatch(r"\d+")
    if bool(digits.all()):
        zeros = live[live.str.len() > 1].str.startswith("0")
        if bool(zeros.any()):
            example = str(live[live.str.len().gt(1) & live.str.startswith("0")].iloc[0])
            profile.code_text = f"digits with leading zeros (e.g. {example!r}): a code"
        elif _matches(name, CODE_WORDS) and live.str.len().nunique() == 1:
            profile.code_text = "fixed-width digits named like a code"
        if profile.code_text is not None:  # labels, never numbers: ZIP 01852 stays 01852
            return profile
    numbers = pd.to_numeric(live, errors="coerce")
    if numbers.notna().all() and np.isfinite(numbers.to_numpy(float)).all():
        arr = numbers.to_numpy(float)
        profile.kind = "numeric"
        profile.integral = bool(np.all(arr == np.round(arr)))
        profile.low, profile.high = float(arr.min()), float(arr.max())
        negatives = np.unique(arr[arr < 0])
        if (
            profile.integral
            and 0 < len(negatives) <= 5
            and negatives.min() >= -99
            and (arr >= 0).mean() >= 0.5
        ):
            profile.negative_codes = [str(int(v)) for v in negatives[::-1]]
        if profile.integral:
            profile.nines = _nines(arr)
        return profile
    if live.str.contains(r"\d").mean() > 0.95 and live.str.contains(r"[-/ ,:]").mean() > 0.95:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                dates = pd.to_datetime(live, errors="coerce", format="mixed")
            except (ValueError, TypeError):
                dates = pd.Series(pd.NaT, index=live.index)
        if dates.notna().mean() >= 0.95:
            ok = dates.dropna()
            midnight = (ok.dt.hour == 0) & (ok.dt.minute == 0) & (ok.dt.second == 0)
            profile.kind = "date" if bool(midnight.all()) else "datetime"
            return profile
    profile.dictionary = _dictionary([str(v) for v in counts.index[:200]])
    if profile.cardinality <= 50:
        keys = {v: _leading_number(v) for v in counts.index}
        if all(x is not None for x in keys.values()) and profile.cardinality > 2:
            profile.ordered_hint = sorted(keys, key=lambda v: (keys[v], v))
    return profile


def _nines(values: np.ndarray) -> list[str]:
    """The all-nines maximum (9, 99, 999, 9999) of integral ``values`` when it stands apart
    from the others: at least 3× as frequent as the median of the five values below it (a
    spike), or more than 1.5× the next value (a gap). O(n log n)."""
    keys, counts = np.unique(values, return_counts=True)
    if len(keys) < 3 or int(keys[-1]) not in NINES:
        return []
    below = counts[-6:-1]
    spike = counts[-1] >= 3 * max(float(np.median(below)), 1.0)
    gap = keys[-2] > 0 and keys[-1] > 1.5 * keys[-2]
    return [str(int(keys[-1]))] if spike or gap else []


def _sniff_separator(lines: Sequence[str], quotechar: str) -> str:
    """The separator giving the same number (> 1) of fields on every sampled line."""
    best, best_fields = ",", 1
    for sep in SEPARATORS:
        counts = {
            len(
                next(
                    csv.reader([line], delimiter=sep, quotechar=quotechar, skipinitialspace=True),
                    [],
                )
            )  # fmt: skip
            for line in lines
            if line.strip()
        }
        if len(counts) == 1:
            (fields,) = counts
            if fields > best_fields:
                best, best_fields = sep, fields
    return best


def _first_lines(path: Path, count: int = 50) -> list[str]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            return [line.rstrip("\r\n") for _, line in zip(range(count), fh, strict=False)]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None


def _looks_like_header(rows: list[list[str]]) -> bool:
    """A first line is a header unless one of its fields is a number or it repeats a field."""
    if not rows:
        return True
    first = [x.strip() for x in rows[0]]
    return not any(_is_number(x) for x in first) and len(set(first)) == len(first)


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


@dataclass(frozen=True)
class InferOptions:
    """How :func:`infer_job` reads the table and what it drafts (every field optional).

    ``sep``, ``names``, ``header``, ``quotechar``, ``fmt``: the CSV reading options (guessed
    when None); ``sample_rows``: rows read; ``k``: the draft's k; ``hierarchies``: a directory
    of ARX hierarchy files (``value;level1;…;*``) matched to the columns by file name, else by
    their values."""

    sep: str | None = None
    names: Sequence[str] | None = None
    header: bool | None = None
    quotechar: str = '"'
    fmt: str = "auto"
    sample_rows: int = 20_000
    k: int = 10
    hierarchies: str | os.PathLike[str] | None = None


def infer_job(
    path: str | os.PathLike[str] | SqlSource,
    options: InferOptions | None = None,
    *,
    job_dir: str | os.PathLike[str] | None = None,
    **keywords: Any,
) -> Job:
    """Draft a job file for a table from a sample of its rows.

    Parameters
    ----------
    path : path-like or SqlSource
        The table: CSV/TSV, Parquet, an SPSS/Stata/SAS file or an Excel workbook (its first
        sheet), or a database table or query (:class:`anonymatch.tables.io.sql.SqlSource`: the
        draft's ``input.path`` is the URL without its password, with ``input.table`` or
        ``input.query``).
    options : InferOptions, optional
        The reading options and the draft's k (defaults: guessed, k = 10); its fields may
        also be given as keywords (``infer_job(path, sep=";")``).
    job_dir : path-like, optional
        Where the job file will be written: the input path is written relative to it (or with
        ``${ANONYMATCH_DATA}`` when the input lies under that directory). Default: absolute.
    **keywords : object
        Fields of :class:`InferOptions`, overriding ``options``: ``sep`` (the CSV separator,
        guessed from the first lines when None: ``, ; tab | space``), ``names`` (column names
        for a file without header), ``header`` (whether the first line holds the column names;
        guessed when None: a line with a number in it is data), ``quotechar`` (default ``"``),
        ``fmt`` (``auto``, ``csv``, ``tsv`` or ``parquet``; ``auto`` decides by the
        extension), ``sample_rows`` (rows read, the first ones; 20,000), ``k`` (the draft's k;
        10) and ``hierarchies`` (a directory of ARX hierarchy files: each categorical or code
        column gets the file whose name holds the column's name, ``cup_hierarchy_ZIP.csv``,
        else the one whose leaves hold ≥ 95 % of its values; a QI is then published as the
        hierarchy's nodes, another column gets the match as a commented suggestion).

    Returns
    -------
    Job
        The draft, validated; ``job.comments`` holds the notes :func:`anonymatch.app.jobfile.
        render_toml` writes beside each key.

    Raises
    ------
    anonymatch.core.errors.InputError
        If the table cannot be read, or no column can serve as a quasi-identifier.

    Notes
    -----
    The rules, in order, for each column: a name word such as ``id``, ``name``, ``ssn`` (or an
    upper-case ``…ID``), or a text column of > 100 values with ≥ 80 % distinct, is an
    identifier; a demographic name (age, sex, race, zip, birth, marital, education, …) is a QI;
    numbers with more than 10 distinct values are numeric, fewer are category codes; text that
    parses as dates for ≥ 95 % of the rows is a date; a sensitive-looking name (diagnosis,
    disease, income, …) is suggested as sensitive in a comment only. Without a demographic name,
    up to three columns of 2–100 values are suggested as QIs. Time O(n log n · d) for the n
    sampled rows and d columns.
    """
    try:
        opts = dataclasses.replace(options or InferOptions(), **keywords)
    except TypeError:
        unknown = sorted(set(keywords) - {f.name for f in dataclasses.fields(InferOptions)})
        raise InputError(f"unknown option(s) of infer_job: {', '.join(unknown)}") from None
    sep, names, header, quotechar = opts.sep, opts.names, opts.header, opts.quotechar
    fmt, sample_rows, k = opts.fmt, opts.sample_rows, opts.k
    database = path if isinstance(path, SqlSource) else None
    p = Path(database.table or "query") if database is not None else Path(path)  # type: ignore[arg-type]
    if database is None and not p.exists():
        raise InputError(f"input file not found: {path}")
    parquet = fmt == "parquet" or (fmt == "auto" and is_parquet(p))
    typed = database is not None or (fmt == "auto" and (is_stats_file(p) or is_excel(p)))
    notes: dict[str, list[str]] = {}
    input_keys: dict[str, Any] = {"format": "parquet" if parquet else "csv"}
    if fmt == "tsv":
        input_keys["format"] = "tsv"
    if typed:  # read by their format (value labels applied), or from the server (LIMIT)
        input_keys = {"format": "auto"}
        if database is not None:
            input_keys.update(table=database.table, query=database.query)
            input_keys = {k: v for k, v in input_keys.items() if v is not None}
            source = CsvOptions(table=database.table, query=database.query)
            frame = read_table(database.text, source, nrows=sample_rows)
        else:
            frame = read_table(p, CsvOptions(), nrows=sample_rows)
        frame = frame.astype(str).where(frame.notna(), "")
    elif parquet:
        frame = read_table(p, CsvOptions(fmt="parquet"), nrows=sample_rows)
        frame = frame.astype(str).where(frame.notna(), "")
    else:
        lines = _first_lines(p)
        if sep is None and fmt != "tsv":
            sep = _sniff_separator(lines[:50], quotechar)
            if sep != ("\t" if p.suffix.lower() in (".tsv", ".tab") else ","):  # explicit
                input_keys["sep"] = sep
        elif sep is not None:
            input_keys["sep"] = sep
        actual_sep = sep if sep is not None else csv_separator(p, CsvOptions(fmt=fmt))
        rows = [
            next(
                csv.reader(
                    [line], delimiter=actual_sep, quotechar=quotechar, skipinitialspace=True
                ),
                [],
            )  # fmt: skip
            for line in lines[:20]
            if line.strip()
        ]
        if names is None:
            if header is None:
                header = _looks_like_header(rows)
            if not header:
                width = len(rows[0]) if rows else 0
                names = [f"column_{i + 1}" for i in range(width)]
                notes["input.header"] = [
                    "no header line: the columns are named column_1 … in order; rename them",
                    "(keep every column, in the file's order)",
                ]
        elif header:
            raise InputError("`names` is for a file without header; drop `header`")
        if names is not None:
            input_keys["header"] = False
        if quotechar != '"':
            input_keys["quotechar"] = quotechar
        csv_options = CsvOptions(sep=sep, names=names, quotechar=quotechar, fmt=fmt)
        frame = read_table(p, csv_options, nrows=sample_rows)
    columns_ordered = [str(c) for c in frame.columns]
    na = list(DEFAULT_NA_VALUES)
    profiles = [profile_column(c, frame[c], na) for c in columns_ordered]
    n = len(frame)
    # ---------------------------------------------------------------- roles and types
    columns: dict[str, dict[str, Any]] = {}
    qi_count = 0
    for prof in profiles:
        col: dict[str, Any] = {"role": "other"}
        why: list[str] = [_evidence(prof)]
        after: list[str] = []
        demographic = _matches(prof.name, QI_PREFIXES)
        if _is_identifier_name(prof.name):
            col["role"] = "identifier"
            why.append("identifier? the name looks like a key or a name: dropped from the release")
        elif prof.kind == "text" and prof.cardinality > 100 and prof.unique_share >= UNIQUE_SHARE:
            col["role"] = "identifier"
            why.append(
                f"identifier? {100 * prof.unique_share:.0f}% of the values are distinct: a key "
                "or free text, dropped from the release"
            )
        elif prof.kind == "numeric" and prof.cardinality == prof.present and prof.present > 100:
            why.append('every value is distinct: an identifier? (set role = "identifier")')
        if col["role"] != "identifier" and demographic and prof.cardinality > 1:
            col["role"] = "qi"
            qi_count += 1
            why.append("quasi-identifier: a demographic attribute an adversary may know")
        elif col["role"] == "other" and prof.dictionary is not None:
            col["role"] = "qi"
            qi_count += 1
            why.append(
                f"quasi-identifier: its values are {prof.dictionary} codes, a demographic "
                "attribute an adversary may know"
            )
        if prof.code_text is not None:
            why.append(f"{prof.code_text}, kept as text (a number would lose its zeros)")
        if prof.kind == "numeric":
            if prof.cardinality > CODE_CARDINALITY or _matches(prof.name, ("age",)):
                col["type"] = "numeric"
            else:
                col["type"] = "categorical"
            if col["type"] == "categorical" and col["role"] == "qi":
                why.append(
                    f"only {prof.cardinality} distinct numbers: taken as category codes "
                    '(type = "numeric" would publish ranges)'
                )
        elif prof.kind in ("date", "datetime"):
            col["type"] = prof.kind
            col["granularity"] = "day" if prof.kind == "date" else "hour"
            why.append(
                f"parses as {'dates' if prof.kind == 'date' else 'date-times'}: published as "
                "ranges at this granularity (year, quarter, month, week, day, …)"
            )
        else:
            col["type"] = "categorical"
        if prof.ordered_hint is not None and col.get("type") == "categorical":
            after.append("the values look ordered (each holds a number); if they are, use")
            after.append('type = "ordinal"')
            after.append(f"order = {toml_value(prof.ordered_hint)}")
        if prof.nines:
            after.append(
                f"{prof.nines[0]} stands apart from the other values: a survey code for "
                "'unknown'? then"
            )
            after.append(f"na = {toml_value(prof.nines)}")
        if prof.negative_codes:
            after.append(
                f"negative codes {', '.join(prof.negative_codes)} among non-negative values: "
                "survey missing-value codes? then"
            )
            after.append(f"na = {toml_value(prof.negative_codes)}")
        if _matches(prof.name, SENSITIVE_PREFIXES) and col["role"] == "other":
            why.append('sensitive? set role = "sensitive" to protect it with model.l / model.t')
        if col["role"] == "identifier":
            col.pop("type", None)
            col.pop("granularity", None)
        columns[prof.name] = col
        notes[f"columns.{prof.name}"] = why
        if after:
            notes[f"columns.{prof.name}.after"] = after
    if qi_count == 0:
        picked = [
            prof
            for prof in profiles
            if columns[prof.name]["role"] == "other" and 2 <= prof.cardinality <= 100
        ][:3]
        if not picked:
            raise InputError(
                f"no column of {path} looks like a quasi-identifier (2-100 values); write the "
                "job by hand (see docs/jobs.md)"
            )
        for prof in picked:
            columns[prof.name]["role"] = "qi"
            columns[prof.name].setdefault("type", "categorical")
            notes[f"columns.{prof.name}"].append(
                "quasi-identifier? no demographic column name was recognised: picked for its "
                "few values; check"
            )
    _propose_leaking(frame, profiles, columns, notes)
    if opts.hierarchies is not None:
        _attach_hierarchies(Path(opts.hierarchies), frame, profiles, columns, notes, job_dir)
    # ---------------------------------------------------------------- missing values
    seen: dict[str, int] = {}
    for prof in profiles:
        for token, count in prof.missing.items():
            seen[token] = seen.get(token, 0) + count
    if seen:
        input_keys["na"] = sorted(seen)
        notes["input.na"] = [
            "missing-value tokens seen: "
            + ", ".join(f"{t!r} in {c} cells" for t, c in sorted(seen.items()))
        ]
        numeric_missing = [
            prof.name
            for prof in profiles
            if prof.missing
            and columns[prof.name]["role"] == "qi"
            and columns[prof.name].get("type") == "numeric"
        ]
        if numeric_missing:
            input_keys["drop_missing"] = True
            notes["input.drop_missing"] = [
                f"numeric QIs with missing values ({', '.join(numeric_missing)}): such rows are "
                "dropped (a missing categorical value is an ordinary value)"
            ]
    # ---------------------------------------------------------------- the rest
    shown = _shown_path(p, job_dir) if database is None else without_password(database.text)
    data: dict[str, Any] = {
        "schema": "anonymatch-job/1",
        "kind": "table",
        "input": {"path": shown, **input_keys},
        "columns": columns,
        "model": {"k": k},
        "method": {"name": "hungarian"},
        "output": {"path": f"{p.stem}_k{k}.csv", "report": f"{p.stem}_k{k}.json"},
    }
    sampled = f"the first {n:,} rows" if n >= sample_rows else f"all {n:,} rows"
    notes[""] = [
        f"anonymatch job file drafted by `anonymatch init` from {sampled} of {p.name}.",
        "Every role and type below is a guess with its evidence: review them before releasing.",
        "Roles: identifier (dropped), qi (generalized), sensitive (kept; model.l / model.t),",
        "other (kept as is). Types: numeric, categorical, ordinal (order = [...]), date and",
        "datetime (granularity = ...). Reference: docs/jobs.md; run it with",
        "  anonymatch anonymize --config THIS_FILE",
    ]
    notes["input"] = ["paths: ${VAR} is expanded; a relative path is relative to this file"]
    notes["model"] = [
        "k: every person matches at least k published rows. With a sensitive column add",
        "l = 2 (l-diversity) or t = 0.2 (t-closeness), one number or { column = value }.",
    ]
    notes["method"] = ["hungarian (default), sortgreedy, greedy, mip, mondrian, ring"]
    notes["output"] = ["the release and its audit manifest"]
    job = parse_job(data, p.name)
    job._comments = notes
    return job


HIERARCHY_COVER = 0.95
"""Share of a column's distinct values that must be leaves of a hierarchy file matched by its
values (not its name)."""


def _attach_hierarchies(
    directory: Path,
    frame: pd.DataFrame,
    profiles: Sequence[ColumnProfile],
    columns: dict[str, dict[str, Any]],
    notes: dict[str, list[str]],
    job_dir: str | os.PathLike[str] | None,
) -> None:
    """Give each column its ARX hierarchy file from ``directory``: the file whose name holds
    the column's name as a word (``cup_hierarchy_ZIP.csv``, case-insensitive), else the file
    whose leaves (first field) hold ≥ ``HIERARCHY_COVER`` of the column's values. A matched QI
    becomes categorical, published as hierarchy nodes; another column gets the match as a
    commented suggestion. O(files · leaves)."""
    if not directory.is_dir():
        raise InputError(f"`hierarchies`: {directory} is not a directory")
    files = sorted(
        f for f in directory.iterdir() if f.is_file() and f.suffix.lower() in (".csv", ".txt")
    )
    leaves: dict[Path, set[str]] = {}

    def leaf_set(f: Path) -> set[str]:
        if f not in leaves:
            with open(f, encoding="utf-8-sig", errors="replace") as fh:
                leaves[f] = {line.split(";", 1)[0].strip() for line in fh if line.strip()}
        return leaves[f]

    taken: set[Path] = set()
    for prof in profiles:
        col = columns[prof.name]
        if col["role"] == "identifier":
            continue
        values = set(frame[prof.name].astype(str).str.strip()) - set(prof.missing)
        low = prof.name.lower()
        by_name = [
            f for f in files if low in re.split(r"[^a-z0-9]+", f.stem.lower()) and f not in taken
        ]
        match, why = (by_name[0], "its name") if by_name else (None, "")
        if match is None:
            for f in files:
                if (
                    f not in taken
                    and values
                    and len(values & leaf_set(f)) >= HIERARCHY_COVER * len(values)
                ):
                    match, why = f, "its leaves (the column's values)"
                    break
        if match is None:
            continue
        shown = _shown_path(match, job_dir)
        if not values <= leaf_set(match):
            notes.setdefault(f"columns.{prof.name}", []).append(
                f"hierarchy {match.name} matched by {why} lacks some of the values: not used"
            )
            continue
        taken.add(match)
        if col["role"] != "qi":  # a hierarchy is for a QI: suggest it, do not change the role
            notes.setdefault(f"columns.{prof.name}.after", []).extend(
                [
                    f"hierarchy {match.name} matches (by {why}); as a QI published as its nodes:",
                    'role = "qi"',
                    'type = "categorical"',
                    f"hierarchy = {toml_value(shown)}",
                ]
            )
            continue
        col.update({"type": "categorical", "hierarchy": shown})
        col.pop("granularity", None)
        notes.setdefault(f"columns.{prof.name}", []).append(
            f"hierarchy {match.name} (matched by {why}): published as its nodes"
        )


def _propose_leaking(
    frame: pd.DataFrame,
    profiles: Sequence[ColumnProfile],
    columns: dict[str, dict[str, Any]],
    notes: dict[str, list[str]],
) -> None:
    """Propose as QIs or identifiers the columns the draft keeps unchanged that would give its
    QIs away (``tables.risk.leakage`` on the sample, every QI cell taken as fully generalized:
    the worst case of any release), with the figures as evidence. Columns the check cannot
    encode (a numeric QI that does not parse) leave the draft as it is. O(leakage check)."""
    from anonymatch.tables.columns.schema import Schema, encode_qi
    from anonymatch.tables.recode import GeneralizedQI
    from anonymatch.tables.risk.leakage import check_leakage

    qi = [p.name for p in profiles if columns[p.name]["role"] == "qi"]
    kept = [p.name for p in profiles if columns[p.name]["role"] == "other"]
    if not qi or not kept or len(frame) == 0:
        return
    numeric = [a for a in qi if columns[a].get("type") == "numeric"]
    try:
        schema = Schema.build(qi, numeric)
        enc = encode_qi(frame[qi + kept], schema, list(DEFAULT_NA_VALUES))
    except InputError:
        return
    n = enc.n
    dn, dc = len(enc.num_names), len(enc.cat_names)
    import scipy.sparse as sp

    stars = GeneralizedQI(
        np.zeros((n, dn)),
        np.zeros((n, dn)),
        np.ones((n, dn), bool),
        tuple(sp.csr_array((n, int(m))) for m in enc.cat_card),
        np.ones((n, dc), bool),
    )
    report = check_leakage(frame, enc, stars, frame[qi + kept], schema)
    for column in report.flagged:
        role = column.proposed_role
        col = columns[column.column]
        col["role"] = role
        if role == "identifier":
            col.pop("type", None)
            col.pop("granularity", None)
        why = notes.setdefault(f"columns.{column.column}", [])
        why.append(
            f"{'identifier' if role == 'identifier' else 'quasi-identifier'}? kept unchanged, "
            f"{'; '.join(column.reasons)} (were those QIs fully generalized)"
        )


def _evidence(prof: ColumnProfile) -> str:
    """One comment line: the kind of values, cardinality, range or examples, missing cells."""
    parts = [f"{prof.cardinality} distinct"]
    if prof.kind == "numeric":
        lo, hi = prof.low, prof.high
        fmt = (lambda v: str(int(v))) if prof.integral else (lambda v: f"{v:g}")
        parts.append(f"numbers {fmt(lo)} … {fmt(hi)}" if lo is not None else "numbers")
    elif prof.kind in ("date", "datetime"):
        parts.append(f"{prof.kind}s, e.g. {', '.join(prof.examples[:2])}")
    else:
        shown = ", ".join(_short(v) for v in prof.examples[:4])
        parts.append(f"e.g. {shown}")
    if prof.missing:
        parts.append(f"{sum(prof.missing.values())} missing")
    return "; ".join(parts)


def _short(value: str, width: int = 24) -> str:
    return repr(value if len(value) <= width else value[: width - 1] + "…")


def _shown_path(path: Path, job_dir: str | os.PathLike[str] | None) -> str:
    """The input path as the job file should hold it: under ``$ANONYMATCH_DATA`` as
    ``${ANONYMATCH_DATA}/…``, else relative to the job's directory when below it, else
    absolute."""
    absolute = path.resolve()
    data = os.environ.get("ANONYMATCH_DATA")
    if data:
        root = Path(data).resolve()
        if absolute.is_relative_to(root):
            return "${ANONYMATCH_DATA}/" + absolute.relative_to(root).as_posix()
    if job_dir is not None:
        base = Path(job_dir).resolve()
        if absolute.is_relative_to(base):
            return absolute.relative_to(base).as_posix()
    return str(absolute)


ID_SEPARATORS = ("", "-", "_", ".", "/", ":", " ")
"""What may stand between the two parts of an id built by concatenation (``DUID`` ⧺ ``PID``)."""


def _as_integers(values: pd.Series) -> pd.Series | None:
    """The values as integers when every one is a run of digits (a code padded with zeros
    and the same code unpadded compare equal), else None. O(n)."""
    text = values.str.strip()
    if not bool(text.str.fullmatch(r"[0-9]{1,18}").all()):
        return None
    return text.astype(np.int64)


def _concatenation(
    ids: pd.Series, sample: pd.DataFrame, candidates: Sequence[str]
) -> tuple[str, str, str] | None:
    """The first pair of ``candidates`` whose texts, a first, then a separator of
    :data:`ID_SEPARATORS`, then b (possibly padded with zeros), give every id of the sample,
    as (a, separator, b); None without one. O(c² · n) for c candidates."""
    for a in candidates:
        head = sample[a].str.strip()
        if head.nunique() < 2 or not all(map(str.startswith, ids, head)):
            continue
        rest = pd.Series([i[len(h) :] for i, h in zip(ids, head, strict=True)], index=ids.index)
        for sep in ID_SEPARATORS:
            if sep and not bool(rest.str.startswith(sep).all()):
                continue
            tail = rest.str.slice(len(sep))
            if tail.str.len().nunique() != 1 or (tail == "").any():
                continue  # a fixed-width part only: else a ⧺ b would not parse back
            numbers = _as_integers(tail)
            for b in candidates:
                if b == a or sample[b].nunique() < 2:
                    continue
                same = bool((tail == sample[b].str.strip()).all())
                if not same and numbers is not None:
                    other = _as_integers(sample[b])
                    same = other is not None and bool((numbers == other).all())
                if same:
                    return a, sep, b
    return None


def id_rebuilding(
    sample: pd.DataFrame, id_column: str, roles: dict[str, str], item_column: str | None = None
) -> dict[str, str]:
    """The columns of a people table that together rebuild its id column, to be marked
    identifiers (never published), each with the evidence.

    The rule, on the people sample (every value read as text):

    1. **Concatenation** — two columns a, b (any role) whose texts, a then b (b possibly
       zero-padded to the fixed width it has in the id, with at most one separator between
       them), equal the id on every row: a and b rebuild the id, as ``DUID`` ⧺ ``PID`` is
       INFORMS' ``DUPERSID`` (``30002`` ⧺ ``019``). Both are parts of the id, not attributes:
       generalized as QIs they would still publish the person's household.
    2. **Key** — one or two columns the draft publishes unchanged (role ``other`` or
       ``sensitive``), none constant, whose values (the pair's combinations) are distinct on
       every row: a key of the people table, so it determines the id (each row is one
       person) and singles every person out whatever k. QIs are left out: a key of QIs is
       what the generalization is for.

    Why this rule: a set of published columns that determines the id *is* the id, so it is
    sound to drop it; requiring it on every row of the sample (not on most) keeps false
    alarms rare — a sample key may still not be a key of the whole table, which the draft's
    comment says. Cheap: O(c² · n) for c columns of n sample rows, c ≤ a few tens.

    Parameters
    ----------
    sample : pandas.DataFrame
        The people sample, every column as text.
    id_column : str
        The person id column.
    roles : dict
        Column → role of the draft (``identifier`` columns are skipped).
    item_column : str, optional
        The item column (skipped).

    Returns
    -------
    dict
        Column → the evidence line (empty when no set rebuilds the id).

    Examples
    --------
    >>> import pandas as pd
    >>> people = pd.DataFrame({"person": ["100101", "100102", "100201"],
    ...                        "household": ["1001", "1001", "1002"], "member": ["1", "2", "1"],
    ...                        "age": ["30", "41", "52"]})
    >>> sorted(id_rebuilding(people, "person", {"age": "qi"}))
    ['household', 'member']
    """
    skip = {id_column, item_column}
    columns = [
        str(c) for c in sample.columns if c not in skip and roles.get(str(c)) != "identifier"
    ]
    if id_column not in sample.columns or not len(sample):
        return {}
    found: dict[str, str] = {}
    ids = sample[id_column].str.strip()
    joined = _concatenation(ids, sample, columns)
    if joined is not None:
        a, sep, b = joined
        how = f"{a} ⧺ {sep!r} ⧺ {b}" if sep else f"{a} ⧺ {b}"
        for name in (a, b):
            found[name] = f"rebuilds the id {id_column!r} with another column: {how} = {id_column}"
    kept = [
        c for c in columns
        if c not in found and roles.get(c) in ("other", "sensitive") and sample[c].nunique() > 1
    ]  # fmt: skip
    n = len(sample)
    for a in kept:
        if sample[a].nunique() == n:
            found[a] = (
                f"a key of the people sample (every value distinct): it determines {id_column!r}"
            )
    kept = [c for c in kept if c not in found]
    for i, a in enumerate(kept):
        for b in kept[i + 1 :]:
            if a in found or b in found:
                continue
            if not sample.duplicated(subset=[a, b]).any():
                for name, other in ((a, b), (b, a)):
                    found[name] = (
                        f"with {other!r}, a key of the people sample (every pair distinct): "
                        f"together they determine {id_column!r}"
                    )
    return found


def guess_id_column(distinct: Mapping[str, int], shared: Sequence[str]) -> str:
    """The person id column of a people table and an items table: of the columns both have
    (``shared``, non-empty), the one with the most ``distinct`` values among the people
    (DUPERSID, not the dwelling's DUID that it extends; the first on a tie). ``init`` and the
    web app guess it alike. O(len(shared))."""
    return str(max(shared, key=lambda c: distinct.get(c, 0)))


def relational_job(
    job: Job,
    people: str | os.PathLike[str],
    items: str | os.PathLike[str],
    *,
    id_column: str | None = None,
    item_column: str | None = None,
    sample_rows: int = 20_000,
    job_dir: str | os.PathLike[str] | None = None,
) -> Job:
    """Turn the table draft of a people table into a relational job with its items table
    (``anonymatch init PEOPLE --items ITEMS``).

    Parameters
    ----------
    job : Job
        The draft of the people table (:func:`infer_job`).
    people, items : path-like
        The people table and the long items table (one row per person id and item), CSV, TSV
        or Parquet with a header.
    id_column, item_column : str, optional
        The person id and item columns; guessed when None: the id column is the column of both
        tables whose values are the most distinct in the people sample, the item column the
        items table's column of the most distinct values among those the people table lacks.
    sample_rows : int, default 20000
        Rows of each table read (the first ones).
    job_dir : path-like, optional
        Where the job file will be written (paths shown as for :func:`infer_job`).

    Returns
    -------
    Job
        A validated job of ``kind = "relational"``: the people's roles and types, the id column
        an identifier, and so are the columns that together rebuild it (:func:`id_rebuilding`:
        parts of the id by concatenation, keys of the people sample published unchanged),
        the item column's negative survey codes (at most five, ≥ -99) as its ``na`` ("no
        item"), the output a JSON Lines release; comments give the evidence.

    Raises
    ------
    anonymatch.core.errors.InputError
        An items table that cannot be read, an id or item column it lacks, no column the two
        tables share, or a people draft with reading options the relational commands do not
        take (a separator other than the format's, no header).

    Notes
    -----
    Time O(sample_rows · d) for the two samples.

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> pd.DataFrame({"pid": range(6), "age": [30, 41, 52, 33, 44, 55],
    ...               "sex": list("FMFMFM")}).to_csv(os.path.join(d, "p.csv"), index=False)
    >>> pd.DataFrame({"pid": [0, 0, 1, 2, 5], "code": ["a", "b", "-1", "c", "a"]}).to_csv(
    ...     os.path.join(d, "i.csv"), index=False)
    >>> draft = infer_job(os.path.join(d, "p.csv"), k=2)
    >>> rt = relational_job(draft, os.path.join(d, "p.csv"), os.path.join(d, "i.csv"))
    >>> rt.kind, rt.input.id_column, rt.input.item_column, rt.columns["code"].na
    ('relational', 'pid', 'code', ['-1'])
    """
    p, q = Path(people), Path(items)
    if not q.is_file():
        raise InputError(f"items file not found: {items}")
    for key in ("sep", "names", "table", "query", "sheet"):
        if getattr(job.input, key) is not None:
            raise InputError(
                f"{param('items')}: the relational commands read the people table by its "
                f"extension, with a header; this draft needs input.{key}"
            )
    if not job.input.header:
        raise InputError(
            f"{param('items')}: the relational commands read tables with a header line"
        )
    sample = read_table(p, CsvOptions(fmt=job.input.format), nrows=sample_rows).astype(str)
    fmt = "parquet" if is_parquet(q) else "auto"
    listed = read_table(q, CsvOptions(fmt=fmt), nrows=sample_rows).astype(str)
    columns = {k: v.model_dump(exclude_defaults=True) for k, v in job.columns.items()}
    notes = {key: list(value) for key, value in job.comments.items()}
    shared = [c for c in listed.columns if c in sample.columns]
    if id_column is None:
        if not shared:
            raise InputError(f"{p.name} and {q.name} share no column: give {param('id_column')}")
        id_column = guess_id_column({c: sample[c].nunique() for c in shared}, shared)
        notes["input.id_column"] = [
            f"guessed: of the columns both tables have ({', '.join(map(str, shared))}), the one "
            f"with the most distinct values in {p.name}; check"
        ]
    for name, frame, where in ((id_column, sample, p), (id_column, listed, q)):
        if name not in frame.columns:
            raise InputError(f"{param('id_column')}: {where.name} has no column {name!r}")
    if item_column is None:
        own = [c for c in listed.columns if c not in sample.columns]
        if not own:
            raise InputError(
                f"{q.name} has no column of its own for the items: give {param('item_column')}"
            )
        item_column = str(max(own, key=lambda c: listed[c].nunique()))
        notes["input.item_column"] = [
            f"guessed: the column of {q.name} with the most distinct values; check"
        ]
    if item_column not in listed.columns:
        raise InputError(f"{param('item_column')}: {q.name} has no column {item_column!r}")
    roles = {name: str(c.get("role", "other")) for name, c in columns.items()}
    rebuilding = id_rebuilding(sample, id_column, roles, item_column)
    for name in (id_column, *rebuilding):
        columns.setdefault(name, {})["role"] = "identifier"
        for key in ("type", "weight", "order", "granularity", "hierarchy", "na"):
            columns[name].pop(key, None)
    for name, evidence in rebuilding.items():
        notes[f"columns.{name}"] = [
            f"identifier: {evidence}; dropped from the release (anonymize-rt --identifiers)"
        ]
    values = listed[item_column]
    negatives = sorted({v for v in values if re.fullmatch(r"-[1-9][0-9]?", v.strip())}, key=int)
    if 0 < len(negatives) <= 5 and len(negatives) < values.nunique():
        columns[item_column] = {"na": negatives[::-1]}
        notes[f"columns.{item_column}"] = [
            f"the item column; negative codes {', '.join(negatives[::-1])} among the items: "
            'survey codes meaning "no item"'
        ]
    if job.input.na is not None:
        notes["input"] = [*notes.get("input", []), "missing-value tokens: the defaults (per-column "
                          "codes go in columns.NAME.na)"]  # fmt: skip
    stem = p.stem
    data: dict[str, Any] = {
        "schema": "anonymatch-job/1",
        "kind": "relational",
        "input": {
            "path": job.input.path,
            "format": job.input.format,
            "items": _shown_path(q, job_dir),
            "id_column": id_column,
            "item_column": item_column,
        },
        "columns": columns,
        "model": job.model.model_dump(exclude_defaults=True),
        "method": {"name": "hungarian"},
        "output": {"path": f"{stem}_k{job.model.k}.jsonl", "report": f"{stem}_k{job.model.k}.json"},
    }
    if job.input.drop_missing:  # the relational commands publish a missing QI value as *
        notes["input"] = [*notes.get("input", []), "rows with a missing numeric QI are kept: "
                          "anonymize-rt publishes the missing value as *"]  # fmt: skip
    rt = parse_job(data, q.name)
    notes[""] = [
        line.replace("anonymatch anonymize --config", "anonymatch anonymize-rt --config")
        for line in notes.get("", [])
    ] + [f"People with a row and a set: the items of {q.name}, one row per person and item."]
    notes["method"] = ["hungarian (default), sortgreedy, classes (the class baseline)"]
    notes["output"] = ["the release (JSON Lines, one person a line) and its audit manifest"]
    notes.pop("input.na", None)
    rt._comments = notes
    return rt
