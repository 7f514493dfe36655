"""Issue 17: the fixed cost of a whole CLI run, before/after, beside the public Mondrian.

Whole processes on the 2-core machine, interleaved (before, after, peer, before, after, peer …)
so that the load of other jobs hits every variant alike; medians of ``--runs`` runs:

- ``warm``: ``anonymatch anonymize`` on UCI Adult (30,162 complete rows, the 8 QIs of
  ``make run``, ``--sensitive income``), hungarian k = 10, numba cache warm, beside
  qiyuangong/Mondrian at k = 10 (``_mondrian_peer.py``, its whole process);
- ``cold``: the same run with empty numba and bytecode caches (``NUMBA_CACHE_DIR`` and
  ``PYTHONPYCACHEPREFIX`` in a fresh directory: the first run after install), then twice warm
  on the same caches; cold ÷ warm per variant;
- ``version``: ``anonymatch --version``.

``--before SRC`` names a source tree of the baseline (a ``src`` directory holding
``anonymatch``, e.g. ``git archive <commit> src | tar -x -C /tmp/base``); the current tree is
``after``. Each variant runs with its tree first on ``PYTHONPATH`` and gets one untimed warm-up
run (numba cache, bytecode). ``PYTHONDONTWRITEBYTECODE`` is dropped from the children's
environment: with it set (as in some sandboxes) every run recompiles the package's bytecode,
which no installed copy does; the cold step also needs it off to write its bytecode cache at all
(otherwise its "warm" runs are cold too).

Results: benchmarks/results/speed_overhead.json and a table on stdout (copied by hand into
docs/results.md, section "Fixed cost of a CLI run").
Usage: python benchmarks/speed_overhead.py [--before /tmp/base/src] [--runs 5]
[--steps warm,cold,version]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import ADULT_CLI, ROOT, adult_path, machine, timed_process

PEER = Path(__file__).resolve().parent / "_mondrian_peer.py"
OUT = ROOT / "benchmarks" / "results" / "speed_overhead.json"
ENTRY = "import sys; from anonymatch.cli import entry; sys.argv[0] = 'anonymatch'; entry()"


def child_env(src: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = src
    return {**env, **(extra or {})}


def anonymize(out: Path, src: str, extra: dict[str, str] | None = None) -> dict[str, float]:
    args = ["anonymize", adult_path(), "-o", str(out / "r.csv"), "--k", "10", "--force", "-q"]
    argv = [sys.executable, "-c", ENTRY, *args, "--sensitive", "income", *ADULT_CLI]
    return timed_process(argv, child_env(src, extra))


def peer(out: Path) -> dict[str, float]:
    argv = [sys.executable, "-W", "ignore", str(PEER), "--k", "10", "--out", str(out / "p.csv")]
    return timed_process([*argv, "--data", adult_path()], child_env(None))


def median(runs: list[dict[str, float]], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 3)


def step_warm(variants: dict[str, str], runs: int, out: Path) -> dict[str, object]:
    for src in variants.values():
        anonymize(out, src)  # warm-up: numba cache and bytecode of this tree
    results: dict[str, list[dict[str, float]]] = {name: [] for name in [*variants, "peer"]}
    for _ in range(runs):
        for name, src in variants.items():
            results[name].append(anonymize(out, src))
        results["peer"].append(peer(out))
    return {
        name: {"wall": median(r, "wall"), "cpu": median(r, "cpu"), "runs": r}
        for name, r in results.items()
    }


def step_cold(variants: dict[str, str], runs: int, out: Path) -> dict[str, object]:
    results: dict[str, list[dict[str, object]]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, src in variants.items():
            with tempfile.TemporaryDirectory() as caches:
                env = {"NUMBA_CACHE_DIR": f"{caches}/numba", "PYTHONPYCACHEPREFIX": f"{caches}/pyc"}
                cold = anonymize(out, src, env)
                warm = [anonymize(out, src, env) for _ in range(2)]
            results[name].append({"cold": cold, "warm": warm})
    summary: dict[str, object] = {}
    for name, r in results.items():
        cold_wall = statistics.median(x["cold"]["wall"] for x in r)  # type: ignore[index]
        warm_wall = statistics.median(w["wall"] for x in r for w in x["warm"])  # type: ignore[attr-defined]
        cold_cpu = statistics.median(x["cold"]["cpu"] for x in r)  # type: ignore[index]
        warm_cpu = statistics.median(w["cpu"] for x in r for w in x["warm"])  # type: ignore[attr-defined]
        summary[name] = {
            "cold_wall": round(cold_wall, 3),
            "warm_wall": round(warm_wall, 3),
            "cold_cpu": round(cold_cpu, 3),
            "warm_cpu": round(warm_cpu, 3),
            "ratio_wall": round(cold_wall / warm_wall, 2),
            "runs": r,
        }
    return summary


def step_version(variants: dict[str, str], runs: int) -> dict[str, object]:
    results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, src in variants.items():
            argv = [sys.executable, "-c", ENTRY, "--version"]
            results[name].append(timed_process(argv, child_env(src)))
    return {
        name: {"wall": median(r, "wall"), "cpu": median(r, "cpu")} for name, r in results.items()
    }


def report(results: dict[str, object]) -> str:
    lines = [f"{results['machine']}; load {results['load']} at start; {results['date']}"]
    warm = results.get("warm")
    if isinstance(warm, dict):
        peer_wall = warm["peer"]["wall"]
        lines.append("| variant | warm wall (s) | CPU (s) | ÷ peer wall |")
        lines.append("|---|---|---|---|")
        for name, r in warm.items():
            ratio = r["wall"] / peer_wall
            lines.append(f"| {name} | {r['wall']:.2f} | {r['cpu']:.2f} | {ratio:.1f}× |")
    cold = results.get("cold")
    if isinstance(cold, dict):
        lines.append("| variant | cold wall (s) | warm wall (s) | cold ÷ warm | CPU cold | warm |")
        lines.append("|---|---|---|---|---|---|")
        for name, r in cold.items():
            lines.append(
                f"| {name} | {r['cold_wall']:.2f} | {r['warm_wall']:.2f} | "
                f"{r['ratio_wall']:.2f}× | {r['cold_cpu']:.2f} | {r['warm_cpu']:.2f} |"
            )
    version = results.get("version")
    if isinstance(version, dict):
        for name, r in version.items():
            lines.append(f"`anonymatch --version` ({name}): {r['wall']:.3f} s wall")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", help="src directory of the baseline tree")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--steps", default="warm,cold,version")
    args = parser.parse_args()
    variants = {"after": str(ROOT / "src")}
    if args.before:
        variants = {"before": args.before, **variants}
    results: dict[str, object] = json.loads(OUT.read_text()) if OUT.exists() else {}
    results.update(
        machine=machine(),
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        load=round(os.getloadavg()[0], 1),
    )
    steps = args.steps.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        if "warm" in steps:
            results["warm"] = step_warm(variants, args.runs, out)
        if "cold" in steps:
            results["cold"] = step_cold(variants, args.cold_runs, out)
        if "version" in steps:
            results["version"] = step_version(variants, args.runs)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))


if __name__ == "__main__":
    main()
