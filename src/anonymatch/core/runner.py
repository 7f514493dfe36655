"""Partitioned execution (Doka §8.1; Esfandiari et al. App. D): partitions anonymized
independently, results combined in partition order.

``iter_partitions`` (and its list form ``run_partitions``) is the one runner of the package: it
maps a function over jobs in this process, on a thread pool, a process pool or a Dask cluster
(a local one, or an existing ``dask.distributed`` scheduler), keeps the results in job order
and, when given a seed, hands each job its own child seed (``numpy.random.SeedSequence.spawn``),
so that the results depend on the seed only, never on the executor or the number of workers.
Users: the in-memory table path (``tables.methods.build_graph``, threads: the heavy kernels —
numba with ``nogil``, scipy's assignment solver — release the GIL), the streamed table path
(``tables.streamed``), the streamed relational path (``relational.streamed``) and the
min-hash chunks of sparse matrices (``sparse.pipeline``, ``sparse.streamed``).

Tables: each partition's graph is k-regular over its own records, so the union is k-regular over
all records.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
from tqdm import tqdm

from anonymatch.core import lifecycle
from anonymatch.core.errors import InputError, WorkerError

R = TypeVar("R")
ExecutorName = Literal["inline", "threads", "processes", "dask"]
EXECUTORS: tuple[str, ...] = ("inline", "threads", "processes", "dask")
SeedLike = int | np.random.SeedSequence


@dataclass(frozen=True)
class Placement:
    """Where ``run_partitions`` runs its jobs: a resolved ``executor`` (no ``auto``), the
    ``scheduler`` address of a Dask cluster (implies dask) and the number of ``workers``
    (None: the default). Unlike ``core.params.Execution`` (the validated user setting, which
    may say ``auto``), this is what a path decided."""

    executor: ExecutorName = "threads"
    scheduler: str | None = None
    workers: int | None = None


def default_workers() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def child_seeds(seed: SeedLike | None, count: int) -> list[np.random.SeedSequence]:
    """``count`` independent child seeds of ``seed`` (OS entropy if None), one per job."""
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return root.spawn(count)


DEFAULT_CONNECT_TIMEOUT = 10.0
_connect_timeout = [DEFAULT_CONNECT_TIMEOUT]


@contextmanager
def connect_timeout(seconds: float | None) -> Iterator[None]:
    """Within the block, give up connecting to a Dask scheduler after ``seconds`` (None: the
    default, 10 s); the CLI's ``--connect-timeout``."""
    if seconds is not None and not seconds > 0:
        raise InputError(f"`connect_timeout` must be positive, got {seconds}")
    previous = _connect_timeout[0]
    _connect_timeout[0] = DEFAULT_CONNECT_TIMEOUT if seconds is None else float(seconds)
    try:
        yield
    finally:
        _connect_timeout[0] = previous


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` on ``scheduler`` (an address such as ``tcp://host:8786``), or on
    a fresh local cluster of ``workers`` single-threaded worker processes (default: all cores),
    closed on exit.

    A scheduler that does not complete Dask's handshake within the connect timeout (10 s;
    ``connect_timeout``) — a peer that accepts and never answers, one that answers with other
    bytes — is an InputError naming the address (exit 2), never a hang or a MemoryError. A
    local cluster gets a private directory (``lifecycle.private_dir``: mode 0700, an
    unpredictable name, removed at exit) as its ``local_directory`` and Dask's
    ``temporary-directory``, instead of the predictable ``$TMPDIR/dask-scratch-space``, where
    Dask opens lock files without refusing symbolic links."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise InputError("the dask executor needs the 'distributed' package") from exc
    if scheduler:
        timeout = _connect_timeout[0]
        try:
            _handshake(scheduler, timeout)
            client = Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(
                f"cannot connect to the Dask scheduler {scheduler} within {timeout:g} s: "
                f"{_first_line(exc) or type(exc).__name__}"
            ) from None
        except (MemoryError, EOFError, TypeError, KeyError) as exc:  # garbage for a frame
            raise InputError(
                f"{scheduler} did not answer as a Dask scheduler ({type(exc).__name__})"
            ) from None
        token = lifecycle.register_pool(client.close)
        try:
            yield client
        finally:
            lifecycle.forget_pool(token)
            client.close()
        return
    with lifecycle.private_directory("anonymatch-dask-") as scratch:
        # Dask starts workers with MALLOC_TRIM_THRESHOLD_=65536, which disables glibc's adaptive
        # mmap threshold: every array above 128 KiB is then mapped and unmapped on each use,
        # and the partitions' O(P²) matrices ran ~2× slower than in plain worker processes.
        settings = {
            "distributed.nanny.pre-spawn-environ": {},
            "temporary-directory": str(scratch),
        }
        with dask.config.set(settings):
            try:
                cluster = LocalCluster(
                    n_workers=workers or default_workers(),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    local_directory=str(scratch),
                )
            except (RuntimeError, OSError, TimeoutError) as exc:  # a worker died starting
                lifecycle.check()
                raise WorkerError(
                    f"the local Dask cluster failed to start: {_first_line(exc)}"
                ) from None
            client = Client(cluster)
            try:
                yield client
            finally:
                client.close()
                cluster.close()


def _handshake(address: str, timeout: float) -> None:
    """Open a comm to ``address`` and complete Dask's handshake within ``timeout`` seconds,
    then close it. ``Client(timeout=…)`` bounds only the TCP connect: a peer that accepts and
    never answers would hold it for ever. Raises TimeoutError, OSError or whatever reading a
    non-Dask answer raises (MemoryError for a garbage frame length)."""
    import asyncio

    from distributed.comm import connect
    from distributed.security import Security

    async def probe() -> None:
        args = Security().get_connection_args("client")
        comm = await asyncio.wait_for(connect(address, timeout=timeout, **args), timeout)
        await comm.close()

    try:
        asyncio.run(probe())
    except TimeoutError:
        raise TimeoutError("no Dask handshake") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def iter_partitions(
    fn: Callable[[Any], R],
    jobs: Iterable[Any],
    *,
    executor: ExecutorName = "threads",
    scheduler: str | None = None,
    workers: int | None = None,
    window: int | None = None,
    retries: int = 2,
) -> Iterator[R]:
    """Yield ``fn(job)`` for every job, in job order, as results become available.

    Jobs are drawn lazily and at most ``window`` (default: 2 per worker) are in flight, so the
    memory held is that of a few jobs and results whatever the number of jobs. ``processes``:
    a worker process that dies (killed, out of memory) breaks the pool; the pool is restarted
    and the unfinished jobs resubmitted, each at most ``retries`` times. ``dask``: the scheduler
    reruns the tasks of a lost worker itself (``distributed.scheduler.allowed-failures``).
    ``fn`` and the jobs must be picklable for ``processes`` and ``dask``."""
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor {executor!r} (expected one of {EXECUTORS})")
    if workers is not None and workers < 1:
        raise InputError(f"workers must be at least 1, got {workers}")
    if scheduler:
        executor = "dask"
    if executor == "inline":
        for job in jobs:
            lifecycle.check()
            yield fn(job)
        return
    if executor == "dask":
        from distributed.scheduler import KilledWorker

        with dask_client(scheduler, workers) as client:
            n_workers = workers or max(1, len(client.scheduler_info().get("workers", {})))
            submit = lambda job: client.submit(fn, job, pure=False)  # noqa: E731
            try:
                yield from _windowed(submit, jobs, window or 2 * n_workers)
            except KilledWorker as exc:
                raise WorkerError(f"Dask workers kept dying on the same task: {exc}") from None
        return
    size = workers or default_workers()
    if executor == "threads":
        with ThreadPoolExecutor(max_workers=size) as pool:
            yield from _windowed(lambda job: pool.submit(fn, job), jobs, window or 2 * size)
        return
    pools = _ProcessPools(size)
    try:
        submit = lambda job: pools.submit(fn, job)  # noqa: E731
        yield from _windowed(submit, jobs, window or 2 * size, pools.restart, retries)
    finally:
        pools.close()


class _ProcessPools:
    """A process pool that can be replaced after a worker died (``BrokenProcessPool``). Its
    workers start with ``lifecycle.worker_init`` (they die with this process, even on
    SIGKILL, and ignore Ctrl-C) and are killed at once if the run is cancelled."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pool = self._new()
        self.token = lifecycle.register_pool(self.kill)

    def _new(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.size, initializer=lifecycle.worker_init, initargs=(os.getpid(),)
        )

    def submit(self, fn: Callable[[Any], R], job: Any) -> Future[R]:
        return self.pool.submit(fn, job)

    def restart(self) -> None:
        lifecycle.check()  # a pool killed by a cancellation is not restarted
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool = self._new()

    def kill(self) -> None:
        """Kill the workers now (a cancellation), without waiting for their jobs."""
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        for process in processes:
            with contextlib.suppress(OSError, ValueError):
                process.kill()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        lifecycle.forget_pool(self.token)
        if lifecycle.cancelled() is not None:
            self.kill()
            return
        self.pool.shutdown(wait=True, cancel_futures=True)


def _windowed(
    submit: Callable[[Any], Any],
    jobs: Iterable[Any],
    window: int,
    restart: Callable[[], None] | None = None,
    retries: int = 0,
) -> Iterator[Any]:
    """Keep ``window`` submitted jobs in flight and yield their results in order. With
    ``restart``, a broken process pool (a worker died) is replaced and every unfinished job
    resubmitted, each job at most ``retries`` times; then WorkerError."""
    pending: deque[list[Any]] = deque()  # [job, future, attempts]

    def resubmit_all() -> None:
        if restart is None:
            raise
        restart()
        for item in pending:
            item[2] += 1
            if item[2] > retries + 1:
                raise WorkerError(
                    f"a worker process died {retries + 1} times on the same job "
                    "(out of memory? try a smaller `chunk_rows` or fewer `workers`)"
                ) from None
            item[1] = submit(item[0])

    source = iter(jobs)
    exhausted = False
    while True:
        lifecycle.check()  # a cancelled run submits nothing more
        while not exhausted and len(pending) < window:
            job = next(source, _DONE)
            if job is _DONE:
                exhausted = True
                break
            pending.append([job, None, 1])
            try:
                pending[-1][1] = submit(job)
            except BrokenProcessPool:
                pending[-1][2] = 0
                resubmit_all()
        if not pending:
            return
        try:
            result = pending[0][1].result()
        except BrokenProcessPool:
            resubmit_all()
            continue
        pending.popleft()
        yield result


_DONE = object()


def run_partitions(
    fn: Callable[..., R],
    jobs: Sequence[Any],
    *,
    placement: Placement = Placement(),
    seed: SeedLike | None = None,
    seeded: bool = False,
    progress: bool = False,
    desc: str = "partitions",
) -> list[R]:
    """Apply ``fn`` to every job and return the results in job order.

    With ``seeded`` (or a ``seed``), ``fn`` is called as ``fn(job, child_seed)`` with the job's
    own ``SeedSequence`` spawned from ``seed`` (OS entropy when ``seed`` is None), else as
    ``fn(job)``. ``placement.executor``: ``inline`` (this thread), ``threads`` (GIL-releasing
    kernels), ``processes`` (``fn`` and jobs must be picklable) or ``dask`` (tasks on the
    cluster at ``placement.scheduler``, or on a local cluster of ``placement.workers``
    processes). A scheduler implies dask. The output does not depend on the executor or on
    the workers."""
    executor, scheduler, workers = placement.executor, placement.scheduler, placement.workers
    seeded = seeded or seed is not None
    seeds = child_seeds(seed, len(jobs)) if seeded else [None] * len(jobs)
    if len(jobs) <= 1 and executor != "dask" and not scheduler:
        executor = "inline"
    call = functools.partial(_call_seeded, fn) if seeded else fn
    items = list(zip(jobs, seeds, strict=True)) if seeded else list(jobs)
    bar = tqdm(
        total=len(jobs), desc=desc, unit="part", disable=not progress, delay=1.0, leave=False
    )
    results: list[R] = []
    try:
        for result in iter_partitions(
            call, items, executor=executor, scheduler=scheduler, workers=workers
        ):
            results.append(result)
            bar.update()
    finally:
        bar.close()
    return results


def _call_seeded(fn: Callable[..., R], item: tuple[Any, np.random.SeedSequence]) -> R:
    return fn(*item)


def partition_bounds(n: int, size: int) -> np.ndarray:
    """Cut positions 0..n−1 into ⌊n/size⌋ contiguous parts of nearly equal length, so that no
    part is shorter than ``size`` (the short tail is spread over the others; one part if
    n < size). Returns the boundaries 0 = b₀ < b₁ < … < b_m = n."""
    return partition_bounds_count(n, max(1, n // size))


def partition_bounds_count(n: int, parts: int) -> np.ndarray:
    """Boundaries of ``parts`` contiguous parts of n positions, the first n mod parts one
    longer (as ``numpy.array_split``)."""
    base, extra = divmod(n, parts)
    sizes = np.full(parts, base, dtype=np.int64)
    sizes[:extra] += 1
    return np.concatenate([[0], np.cumsum(sizes)])


def split_even(n: int, size: int) -> list[np.ndarray]:
    """The positions of each part of ``partition_bounds(n, size)``."""
    bounds = partition_bounds(n, size)
    return [np.arange(bounds[p], bounds[p + 1], dtype=np.int64) for p in range(len(bounds) - 1)]
