"""``anonymatch warmup``: compile the numba kernels of every data kind ahead of the first run.

numba compiles a kernel on its first call and keeps the machine code in its cache
(``cache=True``: ``__pycache__`` beside the package, or ``NUMBA_CACHE_DIR``); every later process
loads it from there. Without this step the first ``anonymize`` after an installation spends ~10 s
compiling (docs/results.md, speed section). ``make install`` runs it once; after a plain
``pip install``, run it yourself. It anonymizes small generated tables in memory (nothing is
written) along the paths of a table run — hungarian (exact rounds, and the two-stage rounds on
float32 weights of k ≥ 50), the greedy heuristics' rounds (both float types), the blocks and
mondrian, with and without missing values and a sensitive model, each verified — and then runs
each other kind's front once (transactions by every set method, sparse matrices, people with
items, graphs), so that the same kernels, with the same argument types, are compiled and
cached. It also writes the
package's own bytecode (``__pycache__/*.pyc``, as ``pip install`` does for a wheel): an
editable install run with ``PYTHONDONTWRITEBYTECODE`` set otherwise compiles every imported
module of the package from source in every process (≈ 0.1 s of each run's start, issue 38).
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
    from anonymatch.tables.methods.freeform import TWO_STAGE_MIN_K

    qi, numeric, sensitive = ["age", "hours", "job", "sex"], ["age", "hours"], ["disease"]
    for missing in (False, True):
        data = _table(60, 1, missing)
        for method in ("hungarian", "mondrian"):
            anonymize(data, k=3, qi=qi, numeric=numeric, sensitive=sensitive, method=method,
                      seed=1, l=1)  # fmt: skip  # the plain paths (missing values kept as *)
        anonymize(data, k=3, qi=qi, numeric=numeric, sensitive=sensitive, structure="blocks",
                  seed=1, l=1)  # fmt: skip  # the plan's blocks at large k
        anonymize(_table(120, 4, missing), k=TWO_STAGE_MIN_K, qi=qi, numeric=numeric,
                  sensitive=sensitive, seed=1, l=1)  # fmt: skip  # two-stage rounds: float32
    for method in ("sortgreedy", "greedy"):  # the heuristics' rounds, float64 and float32
        for n, k in ((60, 3), (120, TWO_STAGE_MIN_K)):
            anonymize(_table(n, 5, False), k=k, qi=qi, numeric=numeric, method=method, seed=1)
    anonymize(_table(60, 2, False), k=3, qi=qi, numeric=numeric, sensitive=sensitive, seed=1, l=2)


def warm_other_kinds() -> None:
    """Run each other kind's front once on small generated data, verified (O(1) work besides
    compilation): transactions by every set method (k and ℓ), sparse matrices (smooth
    k-anonymity), people with items (hungarian) and graphs."""
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp

    from anonymatch import graphs, relational, sets, sparse
    from anonymatch.relational.io import from_frames
    from anonymatch.sets.methods import names as set_methods

    rng = np.random.default_rng(3)
    baskets = [sorted({int(x) for x in rng.integers(0, 12, 4)}) for _ in range(80)]
    labels = [f"s{x}" for x in rng.integers(0, 4, len(baskets))]
    for method in set_methods(anonymity=True, command="anonymize-sets"):
        sets.anonymize(baskets, k=3, method=method, seed=1)
    for method in set_methods(sensitive=True, command="anonymize-sets"):
        sets.anonymize(baskets, ell=2, labels=labels, method=method, seed=1)
    matrix = sp.random_array((120, 30), density=0.15, rng=rng, format="csr")
    sparse.anonymize((matrix > 0).astype(np.int8), k=3, seed=1)
    people = pd.DataFrame({"id": range(60), "age": rng.integers(18, 80, 60)})
    items = pd.DataFrame({"id": rng.integers(0, 60, 150), "item": rng.integers(0, 9, 150)})
    relational.anonymize(from_frames(people, items, "id", "item"), k=3, qi=["age"],
                         numeric=["age"], seed=1)  # fmt: skip
    upper = sp.triu(sp.random_array((40, 40), density=0.2, rng=rng), 1)
    graphs.anonymize(((upper + upper.T) > 0).astype(np.int8), k=3)


def write_bytecode() -> bool:
    """Compile the package's modules to bytecode beside their sources (``sys.pycache_prefix``
    when set), skipping those whose bytecode is current; False if some could not be written
    (a read-only installation: the interpreter then compiles them at import, as before).

    Python reads existing bytecode even under ``PYTHONDONTWRITEBYTECODE``; it only never
    writes it. O(size of the package) the first time, a stat per module after."""
    import compileall
    from pathlib import Path

    import anonymatch

    return bool(compileall.compile_dir(Path(anonymatch.__file__).parent, quiet=2))


@command("warmup")
@verbosity_options
def warmup_cmd(quiet: bool) -> None:
    """Compile the numba kernels and bytecode once, ahead of runs.

    Run once after installing (``make install`` does): the data commands then load their
    kernels from numba's cache instead of compiling them in their first run."""
    started = time.perf_counter()
    warm_tables()
    warm_other_kinds()
    write_bytecode()
    if not quiet:
        click.echo(f"kernels compiled and cached in {time.perf_counter() - started:.1f} s")


COMMANDS = [warmup_cmd]
