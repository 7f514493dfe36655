"""Run the public Mondrian of qiyuangong/Mondrian on a table; write an anonymatch release.

The peer is Qiyuan Gong's Python implementation of strict multidimensional Mondrian (LeFevre,
DeWitt, Ramakrishnan, ICDE 2006), https://github.com/qiyuangong/Mondrian (MIT licence). It is not
on PyPI; fetch it beside the repository (``/work/peers/Mondrian``, or set ``MONDRIAN_PEER``)::

    git clone https://github.com/qiyuangong/Mondrian ../peers/Mondrian

What it does on Adult, read from its own code (``utils/read_adult_data.py``, ``mondrian.py``):

* **rows and QIs**: its loader drops every line containing ``?`` (30,162 rows left, the same
  rows as ``anonymatch … --na-values '?' --drop-missing``) and keeps the QI columns 0, 1, 4, 5,
  6, 8, 9, 13 — age, workclass, education-num, marital-status, occupation, race, sex,
  native-country, numeric: age and education-num — exactly the 8 QIs of ``make run``;
* **categorical values** are numbered in order of first appearance in the file and cut like
  numbers; a group publishes the *range* of that order between its smallest and largest code
  (``covert_to_raw``: every value of the range, joined by ``~``), which can include values none
  of its records has;
* **strict cuts** at the median value, attributes tried by decreasing normalized width.

Python 3 compatibility: the code runs on Python 3.11 unchanged except its loader, which opens
the file with mode ``'rU'`` (removed in Python 3.11, ``ValueError``). The adapter gives the
loader module an ``open`` that drops the ``U``; nothing else is patched (``is not ''`` only
warns). The loader reads the relative path ``data/adult.data``, so the run happens in a private
temporary directory holding a symlink to the Adult file used by our own runs.

``main`` is one whole peer process (``python benchmarks/_mondrian_peer.py --k K --out R.csv``):
load with the peer's loader, run its ``mondrian(data, k)`` (strict), convert its cells to raw
values with its own ``covert_to_raw``, then rewrite them in anonymatch's published-cell grammar
(``anonymatch.tables.io.cells``) so that our verifier and our GCP judge it like our releases:
``lo~hi`` → ``lo..hi`` for numeric QIs, ``a~b~c`` → the value set ``a|b|c`` (each value
escaped, sorted) for categorical ones; the income column is attached to each row. The rewrite
and the CSV write are timed apart from the peer's own work (``seconds``: ``load``,
``mondrian``, ``convert`` by the peer, ``rewrite_write`` by us), printed as one JSON line.

**Any other table** (``--table T.csv --qi a,b --numeric a --label y``, used for heart_cleveland
and FARS): the peer's Adult loader has Adult's file name, columns and types written into it,
so ``load_table`` does what it does — the same loop, on a CSV with a header — for the given
QIs: numeric QIs read as integers, categorical ones numbered in order of first appearance.
The record's last field, which the peer carries through untouched (its sensitive attribute on
Adult), is the row's number in the input instead: the output (QI cells, then ``row``) maps each
published row back to its original, so the caller attaches the label and the other columns and
restores the input's order. The peer's ``mondrian`` and ``covert_to_raw`` run unchanged.

Usage: python benchmarks/_mondrian_peer.py --k 10 --out /tmp/peer.csv [--data adult.data]
       python benchmarks/_mondrian_peer.py --k 10 --out /tmp/peer.csv --table T.csv
           --qi age,sex --numeric age --label y
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import csv
import io
import json
import os
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QI = [
    "age",
    "workclass",
    "education-num",
    "marital-status",
    "occupation",
    "race",
    "sex",
    "native-country",
]
NUMERIC = {"age", "education-num"}


def peer_dir() -> Path:
    """Where the peer's checkout is: ``$MONDRIAN_PEER`` or ``../peers/Mondrian``."""
    path = Path(os.environ.get("MONDRIAN_PEER", str(ROOT.parent / "peers" / "Mondrian")))
    if not (path / "mondrian.py").is_file():
        sys.exit(
            f"qiyuangong/Mondrian not found at {path}; "
            "git clone https://github.com/qiyuangong/Mondrian there or set MONDRIAN_PEER"
        )
    return path


def _escape(label: str) -> str:
    # anonymatch.core.cells.escape_label, inlined so that the peer's process does not pay for
    # importing our package
    return label.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")


def rewrite_cell(cell: str, numeric: bool) -> str:
    """One peer cell (``v``, ``lo~hi`` or ``a~b~c``) in anonymatch's published-cell grammar."""
    parts = cell.split("~")
    if numeric:
        return parts[0] if len(parts) == 1 else f"{parts[0]}..{parts[-1]}"
    return "|".join(sorted(_escape(p) for p in set(parts)))


def load_table(path: Path, qi: list[str], numeric: set[str]) -> tuple[list[list], list[list]]:
    """The peer's Adult loader (``utils/read_adult_data.read_data``) for any CSV with a header.

    Same loop: numeric QIs as ``int``, categorical ones numbered in order of first appearance
    (``intuitive_order``); the record's last field is the row's number (text) where the Adult
    loader puts the sensitive value.

    Parameters
    ----------
    path : Path
        CSV with a header row; every QI complete.
    qi : list of str
        The QIs, in the order the peer will see them.
    numeric : set of str
        The integer QIs.

    Returns
    -------
    data, intuitive_order
        As the peer's loader returns them. O(n · |qi|).
    """
    data: list[list] = []
    order: list[list] = [[] for _ in qi]
    codes: list[dict[str, int]] = [{} for _ in qi]
    with open(path, newline="") as fh:
        for number, row in enumerate(csv.DictReader(fh)):
            record: list = []
            for i, name in enumerate(qi):
                cell = row[name].strip()
                if name in numeric:
                    record.append(int(float(cell)))
                    continue
                if cell not in codes[i]:
                    codes[i][cell] = len(order[i])
                    order[i].append(cell)
                record.append(codes[i][cell])
            record.append(str(number))
            data.append(record)
    return data, order


def run_peer(
    data_path: Path, k: int, table: tuple[list[str], set[str]] | None = None
) -> tuple[list[list[str]], dict[str, float]]:
    """The peer's own pipeline on ``data_path``: (rows of QI cells + income, seconds); with
    ``table`` (QIs, numeric QIs), on any CSV via ``load_table``: QI cells + row number."""
    sys.path.insert(0, str(peer_dir()))
    import anonymizer  # the peer's script module: covert_to_raw
    import mondrian as peer
    from utils import read_adult_data

    if table is not None:
        t0 = time.perf_counter()
        data, order = load_table(data_path, *table)
        return _mondrian(peer, anonymizer, data, order, k, {"load": time.perf_counter() - t0})

    def open_without_u(file, mode="r", *args, **kwargs):  # 'rU' is gone in Python 3.11
        return builtins.open(file, mode.replace("U", ""), *args, **kwargs)

    read_adult_data.open = open_without_u  # type: ignore[attr-defined]
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "data").mkdir()
        (Path(tmp) / "data" / "adult.data").symlink_to(data_path.resolve())
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            t0 = time.perf_counter()
            data, order = read_adult_data.read_data()
            seconds["load"] = time.perf_counter() - t0
        finally:
            os.chdir(cwd)
    return _mondrian(peer, anonymizer, data, order, k, seconds)


def _mondrian(
    peer: types.ModuleType,
    anonymizer: types.ModuleType,
    data: list[list],
    order: list[list],
    k: int,
    seconds: dict[str, float],
) -> tuple[list[list[str]], dict[str, float]]:
    """The peer's strict ``mondrian`` and ``covert_to_raw`` on loaded records, timed."""
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        result, (ncp, _) = peer.mondrian(data, k, False)
    seconds["mondrian"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    anonymizer.INTUITIVE_ORDER = order
    raw = anonymizer.covert_to_raw(result)
    seconds["convert"] = time.perf_counter() - t0
    seconds["peer_ncp_percent"] = ncp
    return raw, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--k", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--data", default=None, help="Adult file (default: $ANONYMATCH_DATA)")
    parser.add_argument("--table", default=None, help="Any other table: CSV with a header.")
    parser.add_argument("--qi", default=None, help="--table's QIs, comma-separated.")
    parser.add_argument("--numeric", default="", help="--table's integer QIs.")
    args = parser.parse_args()
    base = os.environ.get("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets"))
    data_path = Path(args.data or Path(base) / "adult" / "adult.data")
    qi, numeric, last = QI, NUMERIC, "income"
    table = None
    if args.table:
        qi, numeric, last = args.qi.split(","), set(filter(None, args.numeric.split(","))), "row"
        data_path, table = Path(args.table), (qi, numeric)
    started = time.perf_counter()
    raw, seconds = run_peer(data_path, args.k, table)
    t0 = time.perf_counter()
    memo: dict[tuple[str, bool], str] = {}  # a group's cells repeat on every one of its rows
    with open(args.out, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([*qi, last])
        for record in raw:
            cells = []
            for c, name in zip(record, qi, strict=False):
                key = (str(c), name in numeric)
                if key not in memo:
                    memo[key] = rewrite_cell(*key)
                cells.append(memo[key])
            writer.writerow([*cells, record[-1]])
    seconds["rewrite_write"] = time.perf_counter() - t0
    seconds["total_in_process"] = time.perf_counter() - started
    print(json.dumps({"k": args.k, "rows": len(raw), "seconds": seconds}))


if __name__ == "__main__":
    main()
