"""Datasets of Choromanski et al. §5, binarized as the paper describes.

"We discretized each numerical dimension into a binary attribute by finding all elements above
and below the median and mapped categorical values into a binary code (potentially increasing
the dimensionality)." Our reading: a numeric column becomes one bit (value > median of the
present values); a categorical column with two values one bit, with more values a one-hot
code. Missing values (`?`) become initial stars of every bit of that column (footnote 4).
Facebook profiles (7 attributes, 0 = missing) get a binary code of ⌈log2(#values)⌉ bits per
attribute, missing as initial stars.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from anonymatch.tables.methods.bmatching import SuppressionProblem

ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    return Path(os.environ.get("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets")))


@dataclass
class Binarized:
    name: str
    codes: np.ndarray  # n × d in {0, 1}
    forced: np.ndarray  # n × d initial stars

    def problem(self, delta: np.ndarray | int) -> SuppressionProblem:
        """A missing value is its own value (−1), as in a release of the table."""
        n = len(self.codes)
        d = np.broadcast_to(np.asarray(delta, np.int64), (n,)).copy()
        codes = np.ascontiguousarray(np.where(self.forced, -1, self.codes))
        return SuppressionProblem(codes, self.forced, np.ones(self.codes.shape), d)


def _binarize(frame: pd.DataFrame, categorical: list[str]) -> tuple[np.ndarray, np.ndarray]:
    bits, stars = [], []
    for col in frame.columns:
        text = frame[col].astype(str).str.strip()
        missing = (text == "?").to_numpy()
        if col in categorical:
            values = sorted(set(text[~missing]))
            if len(values) <= 2:
                bits.append((text == values[-1]).to_numpy()[:, None])
                stars.append(missing[:, None])
            else:
                onehot = np.column_stack([(text == v).to_numpy() for v in values])
                bits.append(onehot)
                stars.append(np.repeat(missing[:, None], len(values), axis=1))
        else:
            x = pd.to_numeric(text.where(~missing), errors="coerce").to_numpy(float)
            med = np.nanmedian(x)
            bits.append((np.nan_to_num(x, nan=med) > med)[:, None])
            stars.append(missing[:, None])
    codes = np.column_stack(bits).astype(np.int64)
    forced = np.column_stack(stars)
    return np.ascontiguousarray(codes), np.ascontiguousarray(forced)


def _read(relative: str, **kw) -> pd.DataFrame:
    path = data_dir() / relative
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; set ANONYMATCH_DATA")
    return pd.read_csv(path, dtype=str, **kw)


def uci(name: str) -> Binarized:
    """One of bupa, wine, heart, ecoli, hepatitis, forestfires."""
    if name == "bupa":
        frame, cat = _read("bupa/bupa.data", header=None), [6]
    elif name == "wine":
        frame, cat = _read("wine/wine.data", header=None), [0]
    elif name == "heart":
        frame = _read("heart_statlog/heart.dat", header=None, sep=r"\s+")
        cat = [1, 2, 5, 6, 8, 10, 11, 12, 13]
    elif name == "ecoli":
        frame = _read("ecoli/ecoli.data", header=None, sep=r"\s+").drop(columns=[0])
        cat = [8]
    elif name == "hepatitis":
        frame = _read("hepatitis/hepatitis.data", header=None)
        cat = [0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 19]
    elif name == "forestfires":
        frame, cat = _read("forestfires/forestfires.csv"), ["X", "Y", "month", "day"]
    else:
        raise ValueError(name)
    codes, forced = _binarize(frame, cat)
    return Binarized(name, codes, forced)


UCI_NAMES = ("bupa", "wine", "heart", "ecoli", "hepatitis", "forestfires")


def facebook(school: str) -> tuple[Binarized, np.ndarray]:
    """(profiles binarized, friend counts) of Caltech36 or Reed98."""
    nodes = _read(f"facebook100/{school}_nodes.csv").astype(np.int64).sort_values("id")
    edges = _read(f"facebook100/{school}_edges.csv").astype(np.int64)
    n = len(nodes)
    friends = np.bincount(edges.to_numpy().reshape(-1), minlength=n)
    bits, stars = [], []
    for col in nodes.columns[1:]:
        x = nodes[col].to_numpy()
        values, inv = np.unique(x[x != 0], return_inverse=True)
        width = max(1, int(np.ceil(np.log2(max(2, len(values))))))
        code = np.zeros(n, np.int64)
        code[x != 0] = inv
        bits.append((code[:, None] >> np.arange(width)) & 1)
        stars.append(np.repeat((x == 0)[:, None], width, axis=1))
    codes = np.ascontiguousarray(np.column_stack(bits))
    return Binarized(school, codes, np.ascontiguousarray(np.column_stack(stars))), friends


def facebook_levels(friends: np.ndarray, delta: int) -> np.ndarray:
    """δᵢ = δ − (F − ⌊log fᵢ⌋), F = maxᵢ ⌊log fᵢ⌋ (natural log; f = 0 counts as 1), at least
    1: people with fewer friends ask for more anonymity (§5)."""
    logs = np.floor(np.log(np.maximum(friends, 1))).astype(np.int64)
    return np.maximum(1, delta - (logs.max() - logs))
