"""Issue 15 targets: how fast a signal ends a run, and what it leaves behind.

- ``memory``: the in-memory path on UCI Adult (k = 10 and k = 50, the default hungarian method,
  one process; numba kernels run most of the time). SIGINT (Ctrl-C) ``--delays`` seconds after
  the start; time from the signal to the exit, the exit code and the stderr line.
- ``streamed``: the streamed path on a synthetic census table (``tables.synth``, ``--rows``
  rows) on local processes (``--executor processes --workers 2 --chunk-rows 2000``): SIGTERM
  and SIGINT 2 s after the pool started; time to exit, the pool processes still alive 0.5 s
  after the exit, entries left in the private ``$TMPDIR`` and beside the output. SIGKILL: the
  same plus what the next run sweeps.

Each run gets its own ``$TMPDIR``; the release goes to an empty directory, so anything left
there is counted. Results: docs/results.md (section hardening-interrupts) and
benchmarks/results/interrupts.json.
Usage: python benchmarks/interrupts.py [--rows 100000] [--delays 4,8,12]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from _common import ADULT_CLI, ROOT, adult_path, dump, machine, update_results

sys.path.insert(0, str(ROOT / "src"))
from anonymatch.tables.synth import example_census_frame

CLI = [sys.executable, "-c", "from anonymatch.cli import entry; entry()"]
CENSUS = ["--qi", "age,workclass,education-num,marital-status,occupation,race,sex,native-country"]
CENSUS += ["--numeric", "age,education-num", "--sensitive", "income"]


def _run(args: list[str], sig: int, after: float, pool: int = 0) -> dict[str, object]:
    """Start the CLI, wait until ``pool`` worker processes exist (if any) and ``after`` more
    seconds, send ``sig``; measure."""
    work = Path(tempfile.mkdtemp(prefix="interrupts-"))
    tmp, out = work / "tmp", work / "out"
    tmp.mkdir()
    out.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT / "src")}
    args = [a.replace("{out}", str(out)) for a in args]
    proc = subprocess.Popen([*CLI, *args], stderr=subprocess.PIPE, text=True, env=env)
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + 120
    while pool and len(me.children(recursive=True)) < pool and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(after)
    children = me.children(recursive=True)
    finished_early = proc.poll() is not None
    t0 = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=300)
    seconds = time.monotonic() - t0
    time.sleep(0.5)
    alive = [c.pid for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    for pid in alive:  # never leave them behind, even when the run failed
        os.kill(pid, signal.SIGKILL)
    result = {
        "signal": signal.Signals(sig).name,
        "after_s": after,
        "exit_code": proc.returncode,
        "exit_s": round(seconds, 3),
        "stderr": err.strip(),
        "finished_before_signal": finished_early,
        "workers_before": len(children),
        "workers_left": len(alive),
        "tmp_left": sorted(p.name for p in tmp.iterdir()),
        "tmp_files_left": sum(1 for p in tmp.rglob("*") if p.is_file()),
        "out_left": sorted(p.name for p in out.iterdir()),
    }
    if sig == signal.SIGKILL:  # the next run sweeps what a SIGKILL left
        from anonymatch.core.lifecycle import sweep_stale

        result["swept_by_next_run"] = [p.name for p in sweep_stale(tmp, "anonymatch-")]
    print(result, flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--delays", default="4,8,12")
    parser.add_argument("--steps", default="memory,streamed")
    opts = parser.parse_args()
    steps = opts.steps.split(",")
    results: dict[str, list[dict[str, object]]] = {"memory": [], "streamed": []}
    if "memory" in steps:
        adult = adult_path()
        for k in (10, 50):
            for delay in (float(d) for d in opts.delays.split(",")):
                args = ["anonymize", adult, "-o", "{out}/adult.csv", "--k", str(k), "-q"]
                res = _run([*args, *ADULT_CLI], signal.SIGINT, delay)
                results["memory"].append({"k": k, **res})
    if "streamed" in steps:
        data = Path(tempfile.mkdtemp(prefix="interrupts-data-")) / "census.csv"
        example_census_frame(opts.rows, seed=1).to_csv(data, index=False)
        args = ["anonymize", str(data), "-o", "{out}/release.csv", "--k", "10", *CENSUS, "-q"]
        args += ["--executor", "processes", "--workers", "2", "--chunk-rows", "2000"]
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
            results["streamed"].append(_run(args, sig, 2.0, pool=2))
        data.unlink()
        data.parent.rmdir()
    dump("interrupts", results)
    lines = [
        "Machine: " + machine() + ".",
        "Command: `python benchmarks/interrupts.py` (each run in its own `$TMPDIR`).",
        "",
        "| path | k | signal | sent after | exit code | signal → exit | workers left "
        "| files left in $TMPDIR | entries left beside the output |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for path, runs in results.items():
        for r in runs:
            lines.append(
                f"| {path} | {r.get('k', 10)} | {r['signal']} | {r['after_s']:g} s "
                f"| {r['exit_code']} | {r['exit_s']:.2f} s | {r['workers_left']} "
                f"of {r['workers_before']} | {r['tmp_files_left']} | {len(r['out_left'])} |"  # type: ignore[arg-type]
            )
    update_results("hardening-interrupts", "\n".join(lines))


if __name__ == "__main__":
    main()
