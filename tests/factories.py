"""Shared fixtures: small encoded tables generated on the fly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.tables import run_job
from anonymatch.tables.columns.schema import EncodedQI, Schema, encode_qi
from anonymatch.tables.job import TableJob
from anonymatch.tables.methods import names
from anonymatch.tables.pipeline import Release


def one_per_shape() -> tuple[str, ...]:
    """One generalization method of each graph shape, from the tables' registry: the first
    k-regular one (freeform) and the first publishing classes (``regular`` False), for the
    suites that sample the methods for time rather than run every one."""
    return tuple(names(levels=False, regular=regular)[0] for regular in (True, False))


def random_frame(n: int, seed: int, n_num: int = 2, n_cat: int = 2, card: int = 4) -> pd.DataFrame:
    """A random table with numeric QIs n0.., categorical QIs c0.. and a sensitive column s."""
    rng = np.random.default_rng(seed)
    cols: dict[str, object] = {}
    for a in range(n_num):
        cols[f"n{a}"] = rng.integers(0, 30, n)
    for a in range(n_cat):
        cols[f"c{a}"] = [f"v{x}" for x in rng.integers(0, card, n)]
    cols["s"] = [f"s{x}" for x in rng.integers(0, 3, n)]
    return pd.DataFrame(cols)


def encode_frame(frame: pd.DataFrame) -> EncodedQI:
    qi = [c for c in frame.columns if c != "s"]
    numeric = [c for c in qi if c.startswith("n")]
    return encode_qi(frame, Schema.build(qi, numeric=numeric, sensitive=["s"]))


def planted(blocks: int, size: int, items: int, noise: float, seed: int) -> sp.csr_array:
    """``blocks`` groups of ``size`` rows; group b holds items b*items..(b+1)*items−1 (each with
    probability 1 − noise) — well separated clusters."""
    rng = np.random.default_rng(seed)
    n, m = blocks * size, blocks * items
    x = np.zeros((n, m), np.int8)
    for b in range(blocks):
        x[b * size : (b + 1) * size, b * items : (b + 1) * items] = 1
    flip = rng.random((n, m)) < noise
    return sp.csr_array(np.where(flip, 1 - x, x).astype(np.int8))


def dense_compatibility(
    frame: pd.DataFrame, published: pd.DataFrame, qi: list[str], numeric: list[str]
) -> np.ndarray:
    """Original i × published j compatibility, cell by cell, for integer ranges ``a..b``,
    value sets ``a|b`` and ``*``: the brute force the verifier's indexed search is tested on."""
    n, m = len(frame), len(published)
    want = np.ones((n, m), dtype=bool)
    for col in qi:
        orig = frame[col].to_numpy()
        for j, cell in enumerate(published[col]):
            if cell == "*":
                continue
            if col in numeric:
                a, _, b = cell.partition("..")
                want[:, j] &= (orig >= int(a)) & (orig <= int(b or a))
            else:
                want[:, j] &= np.isin(orig.astype(str), cell.split("|"))
    return want


def table_job(schema: Schema, k: int | None, **keywords: object) -> TableJob:
    """The typed job of ``schema`` at level ``k`` (other parameters as keywords)."""
    roles = schema.roles()
    return TableJob.build(
        dict(
            qi=list(schema.qi),
            numeric=roles["numeric"],
            sensitive=list(schema.sensitive),
            identifiers=list(schema.identifiers),
            weights=dict(schema.weights) or None,
            types=schema.types or None,
            k=k,
            **keywords,
        ),
    )


def anonymize_table(
    data: pd.DataFrame,
    k: int,
    qi: Sequence[str],
    numeric: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    identifiers: Sequence[str] = (),
    **keywords: object,
) -> Release:
    """The in-memory path on ``data`` (positional roles, as the tests write them)."""
    schema = Schema.build(qi, numeric, sensitive, identifiers, types=keywords.pop("types", None))  # type: ignore[arg-type]
    return run_job(data, table_job(schema, k, **keywords))


def stream_file(
    source: object, output: object, k: int, schema: Schema, **keywords: object
) -> dict[str, object]:
    """The streamed path from ``source`` to ``output`` (job parameters as keywords)."""
    from anonymatch.tables.streamed import anonymize_file

    csv = keywords.pop("csv", None)
    replace = bool(keywords.pop("replace", False))
    return anonymize_file(
        source, output, table_job(schema, k, **keywords), csv=csv, replace=replace
    )  # type: ignore[arg-type]


def person_compatibility(
    published: object, original: EncodedQI
) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    """(U × n_published compatibility, counts, inverse) of a table release's attacker's view
    (``tables.verify.attacker_view``): originals grouped, one column per published row."""
    from anonymatch.tables.verify import attacker_view

    view = attacker_view(published, original)  # type: ignore[arg-type]
    return view.expanded(), view.counts, view.inverse


def person_candidates(published: object, original: EncodedQI) -> sp.csr_array | None:
    """Person × published-row 0/1 matrix of every person's candidates (the attacker's view's
    ``candidates().person_matrix()``), or None without a perfect matching."""
    from anonymatch.tables.verify import attacker_view

    cand = attacker_view(published, original).candidates()  # type: ignore[arg-type]
    return None if cand is None else cand.person_matrix()


def series_years(n: int, seed: int, years: int = 3, changed: float = 0.0) -> list[pd.DataFrame]:
    """``years`` tables of n people each: 30 % of a year's people leave the next year and as
    many arrive, ages (``n0``) advance by one, a share ``changed`` of those staying get
    another sensitive value; 8 sensitive values."""
    rng = np.random.default_rng(seed)
    step = int(0.3 * n)
    base = random_frame(n + step * (years - 1), seed)
    base["s"] = [f"s{x}" for x in rng.integers(0, 8, len(base))]
    base["pid"] = [f"person{i:05d}" for i in range(len(base))]
    out = []
    for t in range(years):
        year = base.iloc[t * step : t * step + n].copy().reset_index(drop=True)
        year["n0"] = year["n0"] + t
        flip = rng.random(n) < changed
        year.loc[flip, "s"] = [f"s{x}" for x in rng.integers(0, 8, int(flip.sum()))]
        out.append(year)
    return out


def suppressing_years() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two years of a series (``age`` QI, sensitive ``s``, person id ``pid``) whose second
    forces one suppression under the running intersection (k = 5, ℓ = 2): p0 was shown
    {a, b}; in the second year nobody else holds a or b, so no class can show two values of
    {a, b}."""
    first = pd.DataFrame(
        {
            "age": [20, 21, 22, 23, 24, 60, 61, 62, 63, 64],
            "s": list("ababacdcdc"),
            "pid": [f"p{i}" for i in range(10)],
        }
    )
    arrivals = pd.DataFrame(
        {"age": [30, 31, 32, 33], "s": list("ecde"), "pid": ["n1", "n2", "n3", "n4"]}
    )
    second = pd.concat([first.iloc[[0, 5, 6, 7, 8, 9]], arrivals], ignore_index=True)
    return first, second
