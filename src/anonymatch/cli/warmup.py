"""``anonymatch warmup``: compile the numba kernels of the table commands ahead of the first run.

numba compiles a kernel on its first call and keeps the machine code in its cache
(``cache=True``: ``__pycache__`` beside the package, or ``NUMBA_CACHE_DIR``); every later process
loads it from there. Without this step the first ``anonymize`` after an installation spends ~10 s
compiling (docs/results.md, speed section). ``make install`` runs it once; after a plain
``pip install``, run it yourself. It anonymizes small generated tables in memory (nothing is
written) along the paths of a table run: hungarian and mondrian, with and without missing values
and a sensitive model, each verified, so that the same kernels, with the same argument types,
are compiled and cached.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from anonymatch.cli.options import verbosity_options
from anonymatch.cli.steps import command

if TYPE_CHECKING:
    import pandas as pd


def _table(n: int, seed: int, missing: bool) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(str),
            "hours": rng.integers(1, 60, n).astype(str),
            "job": [f"j{x}" for x in rng.integers(0, 6, n)],
            "sex": [("F", "M")[x] for x in rng.integers(0, 2, n)],
            "disease": [f"d{x}" for x in rng.integers(0, 4, n)],
        }
    )
    if missing:
        frame.loc[rng.random(n) < 0.1, "job"] = "?"
    return frame


def warm_tables() -> None:
    """Run each table path once on small generated data (O(1) work besides compilation)."""
    from anonymatch.tables import anonymize

    qi, numeric, sensitive = ["age", "hours", "job", "sex"], ["age", "hours"], ["disease"]
    for missing in (False, True):
        data = _table(60, 1, missing)
        for method in ("hungarian", "mondrian"):
            anonymize(data, k=3, qi=qi, numeric=numeric, sensitive=sensitive, method=method,
                      seed=1, l=1)  # fmt: skip  # the plain paths (missing values kept as *)
    anonymize(_table(60, 2, False), k=3, qi=qi, numeric=numeric, sensitive=sensitive, seed=1, l=2)


@command("warmup")
@verbosity_options
def warmup_cmd(quiet: bool) -> None:
    """Compile and cache the numba kernels once.

    Run once after installing (``make install`` does): the table commands then load their
    kernels from numba's cache instead of compiling them in their first run."""
    started = time.perf_counter()
    warm_tables()
    if not quiet:
        click.echo(f"kernels compiled and cached in {time.perf_counter() - started:.1f} s")


COMMANDS = [warmup_cmd]
