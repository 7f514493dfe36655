"""Run the peer tool ANJANA on UCI Adult and turn its output into an anonymatch release.

ANJANA (PyPI ``anjana``, Sáinz-Pardo Díaz & López García) anonymizes a table by *global*
recoding over user hierarchies: while the privacy model is unmet it raises by one level the
hierarchy of the quasi-identifier with the most distinct values left (a greedy walk up the
lattice, not an optimal search), and it suppresses whole equivalence classes only when they hold
at most ``supp_level`` % of the rows (so with ``supp_level = 0`` it never suppresses). Its
models: ``k_anonymity``; ``l_diversity`` (distinct ℓ: every class has ≥ ℓ sensitive values);
``entropy_l_diversity`` (first distinct ℓ, then ⌊exp(H)⌋ ≥ ℓ for the entropy H of every class);
``t_closeness`` (k-anonymity first, then the EMD of every class ≤ t; for a categorical sensitive
attribute the "equal distance" EMD, i.e. half the L1 distance). ℓ must be an integer. The last
three take k too; here they run with the same k as the plain model.

``anjana_release`` feeds it the QI and sensitive columns, times the call alone, and rewrites the
generalized QI cells into anonymatch's published-cell grammar (``anonymatch.tables.io.cells``) so
that ``verify_release`` and ``evaluate_release`` judge and score it like any of our releases:

* a hierarchy node becomes the set of hierarchy *leaves* under it — for a categorical QI the
  value set (``Non-Government`` → ``Private|Self-emp-inc|Self-emp-not-inc``), for a numeric QI
  the range ``min..max`` of its leaves (the leaves under a node must be consecutive integers);
* the root ``*`` becomes ``*`` (a suppressed cell; NCP 1, as the full domain would be);
* a row ANJANA suppressed (dropped) comes back with ``*`` in every QI and its own sensitive
  value, so the release keeps all n rows in the input's order.

A node is scored as the whole interval / value set it stands for, not shrunk to the values of its
equivalence class. Two consequences worth knowing:

* ARX's Adult age hierarchy labels are off by one: the leaves under ``20-24`` are 21…25 (``5``
  is under ``0-4``, ``100`` under ``95-99``). Taken at their word the labels would not even
  contain their rows (verification fails); read as their leaves they are truthful, so a cell
  ``20-24`` is published as ``21..25``.
* Some nodes reach beyond the data's domain (age leaves run 1…100, Adult's ages 17…90;
  ``Unemployed`` also covers ``Never-worked``, which no complete Adult row has). By default the
  node is published as the hierarchy defines it (``80-99`` → ``81..100``, NCP (100 − 81)/(90 − 17)
  — our NCP clips a cell at 1); ``clip_to_domain=True`` intersects each node with the original
  data's range / value set instead (``81..90``), the reading under which a node costs no more
  than the values it can actually stand for.

Hierarchies are ARX's Adult files (``$ANONYMATCH_DATA/adult/arx_hierarchies``, semicolon CSV, one
row per leaf, one column per level). ARX ships none for ``education-num``; the one used here is
numeric intervals in the style of age — leaves 1…16, then aligned blocks of width 2, 4 and 8
(``1-2``, ``1-4``, ``1-8``; labels inclusive and exact), then ``*``. Deriving it from the
education hierarchy through the 1:1 education ↔ education-num map was rejected: its level-1
groups are not intervals (``Undergraduate`` = {10, 13}, ``Professional Education`` = {11, 12,
15}), so as ranges they would overlap and the numeric QI could not publish them.

Any other table: ``run_anjana(data, AnjanaJob(...), table_hierarchies(data, qi, numeric,
files))`` — ARX's hierarchy files where ``files`` has one for a QI (FARS:
``arx_fars/hierarchies``), else derived as education-num's is: aligned intervals of width 2, 4,
8, … for a numeric QI (``interval_hierarchy``), the value then ``*`` for a categorical one
(``suppression_hierarchy``).

Installing: ``pip install anjana`` (the ``bench`` extra) pins numpy 2.0.2, pandas 2.3.3 and
scipy 1.15.3 (exact pins of anjana 1.2.3 / pycanon 1.3.5). ANJANA itself also runs on pandas 3
if installed with ``--no-deps`` (plus pycanon and beartype): its type checks reject pandas 3's
``str`` arrays, so the call runs with object text columns (``_object_text``); the smoke run gives
the same releases and numbers on pandas 2.3.3 and 3.1.1.

Usage: python benchmarks/_anjana.py (a smoke run of the four models on Adult, k = 10).
"""

from __future__ import annotations

import contextlib
import io
import os
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from anonymatch.core.cells import STAR, escape_label, split_cell

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("k", "distinct", "entropy", "t")
ROOT_LABEL = "*"


def hierarchy_dir() -> Path:
    """Directory of ARX's Adult hierarchies (``$ANONYMATCH_DATA/adult/arx_hierarchies``).

    Returns
    -------
    Path
        The directory; it need not exist.
    """
    base = os.environ.get("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets"))
    return Path(base) / "adult" / "arx_hierarchies"


def education_num_hierarchy(top: int = 16) -> pd.DataFrame:
    """Interval hierarchy for ``education-num``: leaves 1…top, blocks of width 2, 4, 8, ``*``.

    Parameters
    ----------
    top : int
        Largest leaf (Adult: 16).

    Returns
    -------
    pandas.DataFrame
        One row per leaf, one column per level (level 0 = the leaf), all text.
    """
    leaves = np.arange(1, top + 1)
    levels = [leaves.astype(str)]
    for width in (2, 4, 8):
        lo = (leaves - 1) // width * width + 1
        hi = np.minimum(lo + width - 1, top)
        levels.append(np.array([f"{a}-{b}" for a, b in zip(lo, hi, strict=True)]))
    levels.append(np.full(top, ROOT_LABEL))
    return pd.DataFrame({i: col for i, col in enumerate(levels)})


def load_hierarchy(name: str, directory: Path | None = None) -> pd.DataFrame:
    """The hierarchy of one Adult attribute as a leaf × level table of text.

    Parameters
    ----------
    name : str
        Adult column name; ``education-num`` gets ``education_num_hierarchy``, every other
        attribute ARX's ``adult_hierarchy_<name>.csv``.
    directory : Path, optional
        Where the ARX files are (default ``hierarchy_dir()``).

    Returns
    -------
    pandas.DataFrame
        Columns 0…L (0 = leaf), cells stripped of surrounding whitespace.

    Raises
    ------
    FileNotFoundError
        If there is no hierarchy file for ``name``.
    """
    if name == "education-num":
        return education_num_hierarchy()
    path = (directory or hierarchy_dir()) / f"adult_hierarchy_{name}.csv"
    if not path.is_file():
        raise FileNotFoundError(f"no hierarchy for {name!r}: {path}")
    table = pd.read_csv(path, sep=";", header=None, dtype=str, keep_default_na=False)
    return table.apply(lambda col: col.str.strip())


def interval_hierarchy(values: pd.Series, width: int = 2) -> pd.DataFrame:
    """Interval hierarchy for an integer QI with no hierarchy of its own: education-num's rule.

    Leaves are every integer from the column's smallest to its largest value; level j groups
    them in blocks of width ``width``·2^(j−1) aligned at multiples of that width (labels
    ``lo-hi``, inclusive, clipped to the leaves' range), until one block would hold every
    leaf; then ``*``.

    Parameters
    ----------
    values : pandas.Series
        The column (integer values, as numbers or text).
    width : int
        Width of the first level's blocks.

    Returns
    -------
    pandas.DataFrame
        One row per leaf, one column per level (level 0 = the leaf), all text.

    Notes
    -----
    O(range · levels), levels = ⌈log2(range / width)⌉ + 2.
    """
    numbers = pd.to_numeric(values.astype(str).str.strip(), errors="raise")
    bottom, top = int(numbers.min()), int(numbers.max())
    leaves = np.arange(bottom, top + 1)
    levels = [leaves.astype(str)]
    while True:
        lo = np.maximum(leaves // width * width, bottom)
        hi = np.minimum(leaves // width * width + width - 1, top)
        if lo[0] == bottom and hi[-1] == top and len(np.unique(lo)) == 1:
            break
        labels = [str(a) if a == b else f"{a}-{b}" for a, b in zip(lo, hi, strict=True)]
        levels.append(np.array(labels))
        width *= 2
    levels.append(np.full(len(leaves), ROOT_LABEL))
    return pd.DataFrame({i: col for i, col in enumerate(levels)})


def suppression_hierarchy(values: pd.Series) -> pd.DataFrame:
    """Two-level hierarchy for a categorical QI with no hierarchy of its own: value or ``*``.

    Parameters
    ----------
    values : pandas.Series
        The column.

    Returns
    -------
    pandas.DataFrame
        One row per distinct value: the value (stripped text), then ``*``. O(n).
    """
    leaves = sorted(set(values.astype(str).str.strip()))
    return pd.DataFrame({0: leaves, 1: [ROOT_LABEL] * len(leaves)})


def table_hierarchies(
    data: pd.DataFrame, qi: list[str], numeric: list[str], files: Path | None = None
) -> dict[str, pd.DataFrame]:
    """Hierarchies of any table's QIs, the way the Adult runs get theirs.

    A QI with a hierarchy file ``files/*_hierarchy_<name>.csv`` (ARX's format: semicolon CSV,
    one row per leaf, one column per level) gets it, as Adult's QIs get ARX's Adult files
    (FARS: ``arx_fars/hierarchies``); one without gets ``interval_hierarchy`` if numeric (as
    Adult's education-num) and ``suppression_hierarchy`` if categorical.

    Parameters
    ----------
    data : pandas.DataFrame
        The original table.
    qi : list of str
        Quasi-identifiers.
    numeric : list of str
        The numeric ones.
    files : Path, optional
        Directory of ARX hierarchy files (none: every hierarchy is derived).

    Returns
    -------
    dict of str to pandas.DataFrame
        QI → leaf × level table of text. O(n · |qi| + size of the files).
    """
    out: dict[str, pd.DataFrame] = {}
    for name in qi:
        found = sorted(files.glob(f"*_hierarchy_{name}.csv")) if files is not None else []
        if found:
            table = pd.read_csv(found[0], sep=";", header=None, dtype=str, keep_default_na=False)
            out[name] = table.apply(lambda col: col.str.strip())
        elif name in numeric:
            out[name] = interval_hierarchy(data[name])
        else:
            out[name] = suppression_hierarchy(data[name])
    return out


@dataclass(frozen=True)
class _Node:
    """What a published label stands for: a value set, or a range of a numeric QI."""

    leaves: frozenset[str]
    lo: float = np.nan
    hi: float = np.nan


def _node_map(table: pd.DataFrame, numeric: bool, name: str) -> dict[str, _Node]:
    """Label → node over every level of a hierarchy; raises if a label means two things."""
    leaves = table[0].to_numpy()
    out: dict[str, _Node] = {}
    for level in table.columns:
        for label, rows in table.groupby(level, sort=False).groups.items():
            cover = frozenset(leaves[table.index.get_indexer(rows)])
            if numeric:
                values = np.array(sorted(float(v) for v in cover))
                if np.any(values != np.round(values)) or np.any(np.diff(values) != 1):
                    raise ValueError(
                        f"{name}: node {label!r} does not cover consecutive integers, so it "
                        "cannot be published as a range"
                    )
                node = _Node(cover, values[0], values[-1])
            else:
                node = _Node(cover)
            if out.setdefault(str(label), node) != node:
                raise ValueError(f"{name}: label {label!r} names two different nodes")
    return out


def _leaf_text(column: pd.Series, numeric: bool) -> pd.Series:
    """Data values as the hierarchy's leaf text (numbers without a trailing ``.0``)."""
    text = column.astype(str).str.strip()
    if numeric:
        values = pd.to_numeric(text, errors="raise")
        if np.all(values == np.round(values)):
            return values.astype(np.int64).astype(str)
        return values.astype(str)
    return text


def _cell_text(
    node: _Node, numeric: bool, clip: tuple[float, float] | set[str] | None
) -> str | None:
    """Published cell of a node in anonymatch's grammar; None if clipping leaves it empty."""
    if numeric:
        lo, hi = node.lo, node.hi
        if clip is not None:
            assert isinstance(clip, tuple)
            lo, hi = max(lo, clip[0]), min(hi, clip[1])
            if lo > hi:
                return None
        lo_t, hi_t = str(int(lo)), str(int(hi))
        return lo_t if lo == hi else f"{lo_t}..{hi_t}"
    values = sorted(node.leaves if clip is None else node.leaves & clip)  # type: ignore[operator]
    if not values:
        return None
    return "|".join(escape_label(v) for v in values)


@contextlib.contextmanager
def _object_text() -> Iterator[None]:
    """Keep text in object columns while ANJANA runs.

    pandas ≥ 3 stores text as ``str`` (Arrow) arrays, whose ``.values`` ANJANA's type checks
    reject (it wants a list or an ndarray); ``future.infer_string = False`` (deprecated, there
    until pandas 4) restores object columns. A no-op on pandas 2.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*future.infer_string.*")
        try:
            infer = bool(pd.get_option("future.infer_string"))
        except (KeyError, pd.errors.OptionError):
            infer = False
        with pd.option_context("future.infer_string", False) if infer else contextlib.nullcontext():
            yield


def _run_anjana(
    frame: pd.DataFrame,
    qi: list[str],
    sensitive: str,
    k: int,
    model: str,
    value: float,
    supp_level: float,
    hierarchies: dict[str, pd.DataFrame],
) -> tuple[pd.DataFrame, float, str]:
    """One ANJANA call; returns (its output, seconds of the call, what it printed)."""
    import anjana.anonymity as aa

    # ANJANA turns hierarchy lists into Series in place: hand it fresh dicts every call.
    hier = {a: {int(lv): list(t[lv]) for lv in t.columns} for a, t in hierarchies.items()}
    if model in ("distinct", "entropy"):
        if float(value) != int(value):
            raise ValueError(f"ANJANA takes an integer ℓ, got {value}")
        value = int(value)
    calls = {
        "k": lambda: aa.k_anonymity(frame, [], qi, k, supp_level, hier),
        "distinct": lambda: aa.l_diversity(frame, [], qi, sensitive, k, value, supp_level, hier),
        "entropy": lambda: aa.entropy_l_diversity(
            frame, [], qi, sensitive, k, value, supp_level, hier
        ),
        "t": lambda: aa.t_closeness(frame, [], qi, sensitive, k, float(value), supp_level, hier),
    }
    if model not in calls:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
    said = io.StringIO()
    with _object_text():
        frame = frame.astype(object)
        started = time.perf_counter()
        with contextlib.redirect_stdout(said):
            out = calls[model]()
    return out, time.perf_counter() - started, said.getvalue()


def anjana_release(
    data: pd.DataFrame,
    qi: list[str],
    numeric: list[str],
    sensitive: str,
    k: int,
    model: str,
    value: float,
    supp_level: float = 0.0,
    *,
    clip_to_domain: bool = False,
    directory: Path | None = None,
) -> tuple[pd.DataFrame, float]:
    """Anonymize ``data`` with ANJANA and return the release in anonymatch's cell format.

    Parameters
    ----------
    data : pandas.DataFrame
        The original table (e.g. ``load_adult()``); values of the QIs must be leaves of their
        hierarchies. Rows are used in order; the index is ignored.
    qi : list of str
        Quasi-identifiers, each with a hierarchy (see ``load_hierarchy``).
    numeric : list of str
        The QIs published as ranges (their hierarchy nodes must cover consecutive integers).
    sensitive : str
        Sensitive attribute, carried through unchanged.
    k : int
        k of k-anonymity (every model enforces it).
    model : {"k", "distinct", "entropy", "t"}
        Plain k-anonymity, distinct ℓ-diversity, entropy ℓ-diversity or t-closeness.
    value : float
        ℓ (an integer) or t; ignored for ``"k"``.
    supp_level : float
        ANJANA's cap on suppressed rows, in percent of the rows (0 to 100).
    clip_to_domain : bool
        Intersect every published node with the original data's range (numeric) or value set
        (categorical) instead of publishing the node as the hierarchy defines it.
    directory : Path, optional
        Directory of the ARX hierarchy files (default ``hierarchy_dir()``).

    Returns
    -------
    release : pandas.DataFrame
        n rows in the input's order: the QI columns as published cells (``lo..hi``, ``a|b``,
        ``*``), then ``sensitive``. Rows ANJANA suppressed have ``*`` in every QI; their count
        and what ANJANA printed are in ``release.attrs["anjana"]``.
    seconds : float
        Wall time of the ANJANA call alone (no loading or conversion).

    Raises
    ------
    ValueError
        Bad model or ℓ, a value missing from its hierarchy, or a malformed hierarchy.
    RuntimeError
        ANJANA could not reach the model (it returns an empty table then).
    """
    job = AnjanaJob(qi, numeric, sensitive, k, model, value, supp_level, clip_to_domain)
    return run_anjana(data, job, {a: load_hierarchy(a, directory) for a in qi})


@dataclass(frozen=True)
class AnjanaJob:
    """One ANJANA run on any table (the parameters of ``anjana_release`` but the data).

    Attributes
    ----------
    qi, numeric, sensitive, k, model, value, supp_level, clip_to_domain
        As in ``anjana_release``.
    """

    qi: list[str]
    numeric: list[str]
    sensitive: str
    k: int
    model: str = "k"
    value: float = 0.0
    supp_level: float = 0.0
    clip_to_domain: bool = False


def run_anjana(
    data: pd.DataFrame, job: AnjanaJob, tables: dict[str, pd.DataFrame]
) -> tuple[pd.DataFrame, float]:
    """``anjana_release`` with the hierarchies given (``table_hierarchies`` for any table).

    Parameters
    ----------
    data : pandas.DataFrame
        The original table.
    job : AnjanaJob
        QIs, model and the rest.
    tables : dict of str to pandas.DataFrame
        Hierarchy of every QI, leaf × level text (``load_hierarchy``, ``table_hierarchies``).

    Returns
    -------
    release, seconds
        As in ``anjana_release``.

    Raises
    ------
    ValueError, RuntimeError
        As in ``anjana_release``.

    Notes
    -----
    ANJANA's cost (a greedy walk up the lattice, one pass over the data per step) plus O(n·|qi|)
    for the rewrite.
    """
    qi, numeric, sensitive, k = job.qi, job.numeric, job.sensitive, job.k
    model, value, supp_level, clip_to_domain = (
        job.model,
        job.value,
        job.supp_level,
        job.clip_to_domain,
    )
    unknown = set(numeric) - set(qi)
    if unknown:
        raise ValueError(f"numeric attributes that are not QIs: {sorted(unknown)}")
    n = len(data)
    columns = {a: _leaf_text(data[a], a in numeric).to_numpy() for a in qi}
    frame = pd.DataFrame(columns | {sensitive: data[sensitive].to_numpy()})
    for a in qi:
        missing = set(frame[a]) - set(tables[a][0])
        if missing:
            raise ValueError(f"values of {a!r} missing from its hierarchy: {sorted(missing)[:5]}")
    out, seconds, said = _run_anjana(frame, qi, sensitive, k, model, value, supp_level, tables)
    if out.empty:
        raise RuntimeError(f"ANJANA found no {model} release: {said.strip()}")
    # After a suppression ANJANA reset_index()es: column "index" holds the original row labels.
    kept = out["index"].to_numpy(np.int64) if "index" in out.columns else np.arange(len(out))
    if len(out) != n and "index" not in out.columns:
        raise RuntimeError("cannot map ANJANA's rows back to the input")
    release = pd.DataFrame({a: np.full(n, STAR, dtype=object) for a in qi})
    for a in qi:
        is_num = a in numeric
        nodes = _node_map(tables[a], is_num, a)
        clip: tuple[float, float] | set[str] | None = None
        if clip_to_domain:
            col = frame[a]
            clip = (
                (float(pd.to_numeric(col).min()), float(pd.to_numeric(col).max()))
                if is_num
                else set(col)
            )
        labels = out[a].astype(str).to_numpy()
        text: dict[str, str] = {}
        for label in pd.unique(labels):
            if label == ROOT_LABEL:
                text[label] = STAR
                continue
            if label not in nodes:
                raise RuntimeError(f"ANJANA published {label!r} in {a!r}, not in its hierarchy")
            cell = _cell_text(nodes[label], is_num, clip)
            if cell is None:
                raise RuntimeError(f"node {label!r} of {a!r} holds no value of the data")
            text[label] = cell
        release.loc[kept, a] = [text[x] for x in labels]
    release[sensitive] = frame[sensitive].to_numpy()
    release.attrs["anjana"] = {"suppressed": n - len(out), "said": said.strip()}
    return release, seconds


def class_check(
    release: pd.DataFrame, data: pd.DataFrame, qi: list[str], numeric: list[str]
) -> tuple[int, bool]:
    """Cheap check of a release from global recoding: smallest class and truthfulness.

    If every published row contains its own original (row i of ``release`` ↔ row i of
    ``data``) and every group of identical published rows has at least k rows, then each group
    is a complete bipartite block of the compatibility graph, which holds a k-regular subgraph:
    ``verify_release`` at k must pass. Costs O(n·d) where the verifier can need far more.

    Parameters
    ----------
    release : pandas.DataFrame
        Output of ``anjana_release`` (rows in the input's order).
    data : pandas.DataFrame
        The original table.
    qi : list of str
        Quasi-identifiers.
    numeric : list of str
        The numeric ones (cells ``lo..hi``).

    Returns
    -------
    smallest : int
        Rows in the smallest group of identical published QI vectors.
    truthful : bool
        Whether every published cell contains the original value of its row.
    """
    truthful = True
    for a in qi:
        cells = release[a].astype(str).to_numpy()
        values = _leaf_text(data[a], a in numeric).to_numpy()
        for cell, value in zip(cells, values, strict=True):
            if cell == STAR:
                continue
            if a in numeric:
                lo, _, hi = cell.partition("..")
                ok = float(lo) <= float(value) <= float(hi or lo)
            else:
                ok = value in split_cell(cell)
            if not ok:
                truthful = False
                break
    return int(release.groupby(qi).size().min()), truthful


def _cap_memory(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def verify_capped(
    release: pd.DataFrame, data: pd.DataFrame, k: int, schema: object, limit_gib: float = 12.0
) -> bool | None:
    """``verify_release`` in a child process whose address space is capped.

    The verifier's memory grows with the compatible (original, published row) pairs, about
    110 bytes each at its peak, and a coarse release makes them many: on Adult, ANJANA's
    distinct ℓ = 4 release has 7·10⁷ (7.4 GiB peak), its t = 0.2 release 3·10⁸ (≈ 30 GiB,
    more than this machine has).

    Parameters
    ----------
    release, data : pandas.DataFrame
        Published and original tables.
    k : int
        k to verify.
    schema : anonymatch.tables.columns.schema.Schema
        Roles of the columns.
    limit_gib : float
        Address-space cap of the child, GiB.

    Returns
    -------
    bool or None
        Whether the release passed, or None if the verifier ran out of memory.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from anonymatch.tables.job import ReleaseCheck
    from anonymatch.tables.pipeline import verify_release

    context = multiprocessing.get_context("fork")
    limit = int(limit_gib * 2**30)
    with ProcessPoolExecutor(1, context, _cap_memory, (limit,)) as pool:
        try:
            check = ReleaseCheck.of(schema, dict(k=k))
            return bool(pool.submit(verify_release, release, data, check).result().passed)
        except (MemoryError, BrokenProcessPool):
            return None


def _smoke() -> None:
    from anonymatch.tables.columns.schema import Schema
    from anonymatch.tables.datasets import ADULT_NUMERIC, ADULT_QI, load_adult
    from anonymatch.tables.job import ReleaseCheck
    from anonymatch.tables.pipeline import evaluate_release

    base = os.environ.get("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets"))
    data = load_adult(Path(base) / "adult" / "adult.data")
    qi8 = list(ADULT_QI)
    qi7 = [a for a in qi8 if a != "occupation"]
    numeric = list(ADULT_NUMERIC)
    runs = [  # model, QIs, sensitive, ℓ or t, suppression cap (%)
        ("k", qi8, "income", 0.0, 0.0),
        ("distinct", qi7, "occupation", 4, 0.0),
        ("entropy", qi7, "occupation", 4, 0.0),
        ("t", qi8, "income", 0.2, 0.0),
        ("k", qi8, "income", 0.0, 5.0),
    ]
    k = 10
    for model, qi, sensitive, value, supp in runs:
        release, seconds = anjana_release(data, qi, numeric, sensitive, k, model, value, supp)
        schema = Schema.build(qi, numeric, [sensitive])
        gcp = evaluate_release(release, data, ReleaseCheck.of(schema)).gcp
        clipped, _ = anjana_release(
            data, qi, numeric, sensitive, k, model, value, supp, clip_to_domain=True
        )
        gcp_clip = evaluate_release(clipped, data, ReleaseCheck.of(schema)).gcp
        verified = verify_capped(release, data, k, schema)
        smallest, truthful = class_check(release, data, qi, numeric)
        print(
            f"{model:8s} value={value!s:4s} supp≤{supp:g}% |QI|={len(qi)} "
            f"sensitive={sensitive:10s} {seconds:5.1f} s  GCP {100 * gcp:6.2f}% "
            f"(clipped to domain {100 * gcp_clip:6.2f}%)  "
            f"verify_release(k={k})="
            f"{'out of memory (12 GiB)' if verified is None else verified}  "
            f"smallest class {smallest}, truthful {truthful}  "
            f"suppressed {release.attrs['anjana']['suppressed']}",
            flush=True,
        )


if __name__ == "__main__":
    _smoke()
