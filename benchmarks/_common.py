"""Shared helpers for benchmark scripts: machine description, subprocess runs with peak memory,
and rewriting one section of docs/results.md."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results.md"
ADULT_NAMES = (
    "age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,"
    "sex,capital-gain,capital-loss,hours-per-week,native-country,income"
)
ADULT_QI = "age,workclass,education-num,marital-status,occupation,race,sex,native-country"
ADULT_CLI = [
    "--names",
    ADULT_NAMES,
    "--qi",
    ADULT_QI,
    "--numeric",
    "age,education-num",
    "--na-values",
    "?",
    "--drop-missing",
]


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}"
    )


def data_file(relative: str, name: str) -> str:
    """``$ANONYMATCH_DATA/relative`` (default ``../shared/datasets``); exits naming ``name``
    when the file is not there."""
    base = os.environ.get("ANONYMATCH_DATA", str(ROOT.parent / "shared" / "datasets"))
    path = Path(base) / relative
    if not path.is_file():
        sys.exit(f"{name} not found at {path}; set ANONYMATCH_DATA")
    return str(path)


def adult_path() -> str:
    return data_file("adult/adult.data", "Adult")


def run_cli(args: list[str], timeout: float | None = None) -> dict[str, float]:
    """Run ``anonymatch ARGS`` in a fresh process; return wall seconds, peak RSS (MiB), rc.
    After ``timeout`` seconds the run is killed and reported with rc = −1 (peak unknown: 0)."""
    # VmHWM (peak RSS of this process image) rather than ru_maxrss, which Linux carries over
    # from a large parent across fork + exec.
    wrapper = (
        "import re, sys; from anonymatch.cli import main; rc = main(sys.argv[1:]); "
        "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1); "
        "sys.stderr.write('\\nPEAK_RSS_KB=%s\\n' % hwm); sys.exit(rc)"
    )
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", wrapper, *args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"wall": time.perf_counter() - started, "peak_mib": 0.0, "rc": -1}
    wall = time.perf_counter() - started
    match = re.search(r"PEAK_RSS_KB=(\d+)", proc.stderr)
    if proc.returncode not in (0, 1) or not match:
        sys.exit(f"anonymatch {' '.join(args)} failed:\n{proc.stderr}")
    return {"wall": wall, "peak_mib": int(match.group(1)) / 1024, "rc": proc.returncode}


def timed_process(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    """Wall and CPU seconds (user + system of the process and its children) of one run of
    ``argv``; exits with its stderr if it fails. Runs must be sequential (CPU is the growth of
    ``RUSAGE_CHILDREN``)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu}


def _tree_rss_kib(root: int) -> int:
    """Resident memory (KiB) of process ``root`` and all its descendants, now."""
    parent: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            status = (entry / "status").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        parent[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        found = re.search(r"VmRSS:\s+(\d+)", status)
        rss[pid] = int(found.group(1)) if found else 0
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(child for child, ppid in parent.items() if ppid == pid)
    return total


def run_cli_tree(
    args: list[str], timeout: float | None = None, every: float = 0.25
) -> dict[str, float]:
    """Run ``anonymatch ARGS`` and sample the summed RSS of its whole process tree (driver,
    worker processes, a local Dask cluster) every ``every`` seconds. Returns wall seconds, the
    peak of that sum (MiB) and the exit code; fails loudly on an error exit."""
    exe = Path(sys.executable).with_name("anonymatch")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_kib(proc.pid))
        if timeout is not None and time.perf_counter() - started > timeout:
            proc.kill()
            proc.wait()
            return {"wall": time.perf_counter() - started, "peak_mib": peak / 1024, "rc": -1}
        time.sleep(every)
    wall = time.perf_counter() - started
    out, err = proc.communicate()
    if proc.returncode not in (0, 1):
        sys.exit(f"anonymatch {' '.join(args)} failed:\n{err}")
    return {"wall": wall, "peak_mib": peak / 1024, "rc": proc.returncode, "stdout": out}


def update_results(section: str, body: str) -> None:
    """Replace (or append) the block between the markers of ``section`` in docs/results.md."""
    begin, end = f"<!-- begin {section} -->", f"<!-- end {section} -->"
    text = RESULTS.read_text() if RESULTS.exists() else "# Results\n"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)


def dump(name: str, data: object) -> None:
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
