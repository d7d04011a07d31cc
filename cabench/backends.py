"""Where work runs: one parallel map for every command (``run``, ``tune``, ``plot``).

Four backends: ``loky`` (worker processes), ``threading``, ``sequential`` (in this process) and
``dask`` (a local cluster of ``n_jobs`` worker processes, started on first use and kept until the
process ends, as loky keeps its workers; or the running cluster whose scheduler is at
``scheduler_address``). A task is a pure function of its arguments (streams are keyed by seed,
repetition and arm, never by worker), and results come back to the calling process, which writes
every file; so what a command writes never depends on the backend or the worker count.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import signal
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import joblib
from joblib.externals.loky.process_executor import BrokenProcessPool, TerminatedWorkerError

from cabench.errors import CabenchError
from cabench.interrupts import handling, signals_set

BACKENDS = ("loky", "threading", "sequential", "dask")


@dataclass(frozen=True)
class Backend:
    """A backend (one of :data:`BACKENDS`), its worker count (``-1``: every core, or every worker of a
    joined Dask cluster) and, for Dask, the scheduler to join (``None``: start a local cluster)."""

    name: str = "loky"
    n_jobs: int = 1
    scheduler_address: str | None = None

    @property
    def in_process(self) -> bool:
        """Whether tasks run one after another in this process (no pool to start)."""
        return self.name == "sequential" or (self.n_jobs == 1 and self.name != "dask")

    @property
    def pickles(self) -> bool:
        """Whether tasks are sent to other processes, pickled (loky's and Dask's workers; threads share this one)."""
        return not self.in_process and self.name in ("loky", "dask")


def check_sendable(methods: dict[str, Any], backend: Backend) -> None:
    """Refuse, in one line before any task is sent, a method (by name) that cannot be sent to ``backend``'s worker
    processes: an object of one's own holding a lock, an open file or a generator ended in joblib's pickling
    traceback. Nothing to check where tasks stay in this process (``sequential``, ``threading``, one job)."""
    if not backend.pickles:
        return
    from joblib.externals.loky.backend.reduction import dumps  # cloudpickle, as loky (and Dask) send tasks

    for name, method in methods.items():
        try:
            dumps(method)
        except Exception as exc:  # pickling raises TypeError, PicklingError, AttributeError, or the object's own
            why = (str(exc).strip().splitlines() or [""])[0]
            raise CabenchError(f"methods: {name} cannot be sent to the {backend.name} worker processes "
                               f"({type(exc).__name__}: {why}); run it in this process (backend: threading, or "
                               "n_jobs: 1 with backend loky), or keep what it holds out of the object") from None


#: The local Dask cluster's client of each worker count, started on first use and closed when the process ends: a
#: command that runs several experiments (``cabench run A.yaml B.yaml``) starts its workers once.
_LOCAL: dict[int, Any] = {}


#: What the local cluster leaves out, for it shares the machine's cores with the runs it serves: each worker's
#: statistical profiler (a thread that takes the GIL every 10 ms to sample the task's stack), work stealing (tasks are
#: sized by cabench; moving one between two workers only delays it) and the memory monitor (``memory_limit=0``: a
#: task's memory is bounded by its cell, as in loky's workers).
_QUIET_CLUSTER = {"distributed.worker.profile.enabled": False, "distributed.scheduler.work-stealing": False}


def _no_ctrl_c() -> Any:
    """Ignore Ctrl-C (SIGINT, which the terminal sends to the whole process group) while processes start, so that
    they ignore it too: an ignored disposition is inherited through exec (a handler or a blocked mask in this
    thread is not: Dask spawns from its own thread), and Python keeps an ignored SIGINT ignored. The cabench
    process alone then stops on Ctrl-C and closes the cluster; each Dask process printed its own KeyboardInterrupt
    traceback. A Ctrl-C in the second or two the cluster takes to start is lost (press it again). Only in the main
    thread, where signals can be set."""
    return signals_set(signal.SIG_IGN, signal.SIGINT)


@contextlib.contextmanager
def _ctrl_c_kept_from_new_workers() -> Iterator[None]:
    """Block Ctrl-C (SIGINT) in this thread while loky starts its worker processes (when the map's first tasks are
    sent, from this thread): a blocked signal stays blocked through exec, so the workers never get the terminal's
    Ctrl-C, which goes to the whole process group; a worker still importing when it came printed its traceback
    (17-49 lines in all under cabench's one line). This process alone stops, and joblib ends the workers. A Ctrl-C
    while blocked here is not lost: it is raised as this block ends. The resource trackers are running already
    (:func:`_start_trackers`): the standard library's unblocks SIGINT in the thread that starts it."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _start_trackers() -> None:
    """Start loky's and the standard library's resource trackers (where not running) without their warnings: a
    tracker cleaning up after a worker that ended abruptly warned on stderr (``resource_tracker: ...:
    FileNotFoundError``) of a file joblib had removed, under the one line that says how the worker ended (about one
    run in ten under load). A tracker's process reads its warning filter from the environment it starts with;
    cabench's own environment is left as it was."""
    from multiprocessing import resource_tracker

    from joblib.externals.loky.backend import resource_tracker as loky_tracker

    before = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = ",".join(filter(None, (before, "ignore:resource_tracker:UserWarning")))
    try:
        for tracker in (resource_tracker, loky_tracker):
            tracker.ensure_running()
    finally:
        if before is None:
            del os.environ["PYTHONWARNINGS"]
        else:
            os.environ["PYTHONWARNINGS"] = before


def _local_client(workers: int) -> Any:
    """The client of the process's local cluster of ``workers`` worker processes (started if there is none).

    Its workers get the environment Dask gives them (one BLAS thread each) except ``MALLOC_TRIM_THRESHOLD_``: at
    Dask's 64 KiB, glibc hands every large array the engines free back to the system and faults it in again on the
    next phase, which made the paper's configs 1.3-1.4x slower than in loky's workers (whose allocator keeps them)."""
    import dask
    from dask.distributed import Client, LocalCluster

    client = _LOCAL.get(workers)
    if client is None or client.status != "running":
        environ = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items()
                   if k != "MALLOC_TRIM_THRESHOLD_"}
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ, **_QUIET_CLUSTER}), _no_ctrl_c():
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=":0", memory_limit=0)
        client = _LOCAL[workers] = Client(cluster)
        client.register_plugin(_quiet_cancellations_plugin(), name="cabench-quiet-cancellations")
        atexit.register(_close, client, cluster)
    for name in _CLUSTER_LOGGERS:  # this process runs the local cluster's scheduler and nannies
        logging.getLogger(name).setLevel(logging.ERROR)
    return client


#: Loggers of the local cluster's scheduler, nannies and client, which run in the cabench process. Their warnings
#: when a worker dies and Dask recovers (lost tasks recomputed, a worker restarted) are no news; their errors stay:
#: a task whose workers die on every retry is said there ("marked as failed because 4 workers died") before the
#: map ends in one line (:func:`_failures_delivered`).
_CLUSTER_LOGGERS = ("distributed.scheduler", "distributed.nanny", "distributed.client", "distributed.core",
                    "distributed.worker")


def _quiet_cancellations() -> None:
    """In a worker of the local cluster: tasks cancelled when a run stops (Ctrl-C, an error saving a result) are no
    news; each worker logged a warning line per cancelled task ("Async instruction ... ended with CancelledError")
    after cabench's own "interrupted: ..." line. A task's error still reaches the run as its exception. The
    worker's load warnings ("Event loop was unresponsive in Worker for 3.2s", full garbage collections) are no news
    either on a busy two-core machine, and went to the run's standard error."""
    for name in ("distributed.worker.state_machine", "distributed.core", "distributed.utils_perf"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _quiet_cancellations_plugin() -> Any:
    """A Dask worker plugin that runs :func:`_quiet_cancellations` on every worker, those Dask starts again after
    one dies included (a ``client.run`` reached only the workers running at the time)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class QuietCancellations(WorkerPlugin):  # type: ignore[misc]
        def setup(self, worker: Any) -> None:
            _quiet_cancellations()

    return QuietCancellations()


def _close(client: Any, cluster: Any) -> None:
    with _no_ctrl_c():  # closing at exit takes a moment: a Ctrl-C then would leave the workers and a traceback
        client.close()
        cluster.close()


@contextlib.contextmanager
def _dask(backend: Backend, shared: tuple[Any, ...] = ()) -> Iterator[None]:
    """joblib's Dask backend on the process's local cluster or, given ``scheduler_address``, on a client of that
    scheduler that lives as long as the map; the ``shared`` objects are sent to the workers once per map
    (scattered), and a task argument that is one of them travels as a reference."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise CabenchError("backend 'dask' needs the optional extra: pip install 'cabench[dask]'") from None
    remote = None
    if backend.scheduler_address:
        try:
            remote = Client(backend.scheduler_address, timeout="20s")
        except OSError as exc:
            raise CabenchError(f"scheduler_address: cannot reach {backend.scheduler_address} ({exc})") from None
    workers = workers_for(backend.n_jobs)
    client = remote if remote is not None else _local_client(workers)
    try:
        joblib.register_parallel_backend(_DASK, _failures_delivered())
        with client.as_current(), joblib.parallel_config(backend=_DASK, scatter=list(shared) or None):
            yield
    finally:
        if remote is not None:
            remote.close()


#: The name cabench registers joblib's Dask backend under, as :func:`_failures_delivered` amends it.
_DASK = "cabench-dask"


def _failures_delivered() -> Any:
    """joblib's Dask backend, amended so that a task Dask gives up on reaches the map as its error.

    Dask marks a task failed when every worker that ran it died (``KilledWorker``, after its allowed retries) and
    the future the backend returns holds that error; the backend hands joblib's completion callback the results of
    tasks only. Here the callback also receives the error, which joblib raises in the map (:func:`_dask_lost` words
    it), so the map ends rather than waits for the task."""
    from joblib._dask import DaskDistributedBackend

    class FailuresDelivered(DaskDistributedBackend):  # type: ignore[misc]
        def submit(self, func: Any, callback: Any = None) -> Any:
            future = super().submit(func, callback)

            def failed(done: Any) -> None:  # a result reaches the callback as ever; a cancelled task is no news
                if callback is not None and not done.cancelled() and done.exception() is not None:
                    callback(done.exception())

            future.add_done_callback(failed)
            return future

    return FailuresDelivered


def workers_for(n_jobs: int) -> int:
    """The workers a map starts for ``n_jobs``: all cores for -1, and never more than the cores (the results do not
    depend on it; 100,000 asked for started a process per task until memory ran out)."""
    cores = joblib.cpu_count() or 1  # the cores this process may use (affinity, cgroup limits), as joblib counts
    return cores if n_jobs == -1 else min(n_jobs, cores)


def parallel_map(function: Callable[..., Any], tasks: Iterable[tuple[Any, ...]], backend: Backend,
                 ordered: bool = True, shared: tuple[Any, ...] = ()) -> Iterator[Any]:
    """``function(*args)`` for every ``args`` of ``tasks``, run on ``backend``.

    Results come in task order, or with ``ordered=False`` as each finishes (for callers that save
    each result at once, so a crash loses only the tasks still running). ``shared`` names arguments
    every task receives (the problem of an experiment): Dask sends them to the workers once.
    """
    if backend.in_process:
        with handling():  # Ctrl-C waits for a compiled kernel running here to return (:mod:`cabench.interrupts`)
            for args in tasks:
                yield function(*args)
        return
    pool = _dask(backend, shared) if backend.name == "dask" else contextlib.nullcontext()
    options = ({"n_jobs": -1} if backend.name == "dask"
               else {"backend": backend.name, "n_jobs": workers_for(backend.n_jobs)})
    loky = backend.name == "loky"
    if loky:
        _start_trackers()  # before joblib starts loky's (as it enters its pool) and before SIGINT is blocked
    with pool, warnings.catch_warnings():
        # stopped early (an error saving a result, Ctrl-C): joblib's note on the tasks done or cancelled is no news
        warnings.filterwarnings("ignore", message=".*You could benefit from adjusting the input task iterator")
        with joblib.Parallel(return_as="generator" if ordered else "generator_unordered", **options) as parallel:
            outputs = None
            try:
                with _ctrl_c_kept_from_new_workers() if loky else contextlib.nullcontext():
                    outputs = parallel(joblib.delayed(function)(*args) for args in tasks)  # sends the first tasks
                yield from outputs
            except TerminatedWorkerError as exc:
                raise WorkerEnded(_how_ended(str(exc))) from None
            except BrokenProcessPool as exc:
                if "A task has failed to un-serialize" not in str(exc):  # (not a result, which is a fault here)
                    raise
                raise TasksNotLoaded("the worker processes could not load a task") from None
            except Exception as exc:
                how = _dask_lost(exc) if backend.name == "dask" else None
                if how is None:
                    raise
                raise WorkerEnded(how) from None
            except KeyboardInterrupt:  # a Ctrl-C held while the workers started: joblib stops the tasks it sent
                if outputs is not None:
                    outputs.close()
                raise


class TasksNotLoaded(CabenchError):
    """loky's worker processes could not unpickle a task: a function it names is in a module they cannot import
    (one made by ``exec``, or one put on the path after they started: loky keeps its workers for the process's
    next maps)."""


class WorkerEnded(CabenchError):
    """A worker process ended abruptly while running tasks (killed: by the system when memory runs out, or by a
    signal; or a task ended its process). ``how`` says with which exit codes or signals, where known."""

    def __init__(self, how: str) -> None:
        self.how = how
        super().__init__(f"a worker process ended abruptly{f' ({how})' if how else ''}")


def _dask_lost(exc: BaseException) -> str | None:
    """How a Dask worker's death reached the map, or None for any other error (a task's own goes through as it is):
    a task cancelled because the worker holding its input (the scattered problem) died, or ``KilledWorker`` where
    it reaches the map (from a task; a scheduler's own ``KilledWorker`` does not: see :data:`_CLUSTER_LOGGERS`)."""
    kind = type(exc)
    if not kind.__module__.startswith("distributed."):
        return None
    if kind.__name__ == "KilledWorker":
        return "on Dask, each worker that ran one of its tasks died"
    if kind.__name__ == "FutureCancelledError":
        return "on Dask, a worker died and its tasks were lost"
    return None


def _how_ended(message: str) -> str:
    """How the workers ended, from loky's message (``The exit codes of the workers are {SIGKILL(-9), EXIT(3)}``):
    ``killed by SIGKILL, exit code 3``; empty where it does not say."""
    found = re.search(r"exit codes of the workers are \{([^}]*)\}", message)
    ways = []
    for name, code in re.findall(r"(\w+)\((-?\d+)\)", found.group(1) if found else ""):
        way = f"killed by {name}" if name.startswith("SIG") else f"exit code {code}"
        if way not in ways:
            ways.append(way)
    return ", ".join(ways)
