"""Issue 38, memory: peak RSS of whole ``anonymatch anonymize`` processes on UCI Adult at large k.

Adult (30,162 complete rows, the 8 QIs of ``make run``, no sensitive column), k = 10, 50 and
100, hungarian and greedy, for this tree and optionally a tree before a change (``--before
SRC``, e.g. a worktree of main), one process after the other. The peak is the process's own
high-water mark (VmHWM, read by an exit handler, as ``speed_tables.anonymatch`` reads it); each
release is written with ``--report`` as ``make run`` does. Peaks move by a few tens of MiB from
run to run (the allocator, the threads' arenas); the target of issue 38 is ≤ 600 MB at k = 100.

Results: benchmarks/results/memory_largek.json and printed lines; the table of docs/results.md
("Memory at large k (issue 38)") was written from them by hand.
Usage: python benchmarks/memory_largek.py [--before ../main/src] [--ks 10,50,100]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import ADULT_CLI, ROOT, adult_path, dump, machine
from speed_tables import anonymatch

TARGET_MIB = 600e6 / 2**20  # issue 38: ≤ 600 MB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="source tree of the code before")
    parser.add_argument("--ks", default="10,50,100")
    parser.add_argument("--methods", default="hungarian,greedy")
    args = parser.parse_args()
    trees = [("after", str(ROOT / "src"))] + ([("before", args.before)] if args.before else [])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for k in (int(x) for x in args.ks.split(",")):
            for method in args.methods.split(","):
                for tree, src in trees[::-1]:
                    release, report = out / "r.csv", out / "r.json"
                    argv = ["anonymize", adult_path(), "-o", str(release), "--k", str(k)]
                    argv += ["--method", method, "--report", str(report), "--force", "-q"]
                    r = anonymatch([*argv, *ADULT_CLI], {"PYTHONPATH": src})
                    row = {"k": k, "method": method, "tree": tree, "wall": r["wall"],
                           "peak_mib": r["peak_mib"]}  # fmt: skip
                    rows.append(row)
                    mark = ""
                    if k == 100 and tree == "after":
                        met = r["peak_mib"] <= TARGET_MIB
                        mark = "  (target met)" if met else "  (over target)"
                    print(f"k={k:4d} {method:10s} {tree:6s} peak {r['peak_mib']:7.0f} MiB "
                          f"wall {r['wall']:6.1f} s{mark}", flush=True)  # fmt: skip
    dump("memory_largek", {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "machine": machine(), "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
