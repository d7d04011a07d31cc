"""The parallel map of run, tune and plot: every backend gives the same files, a real Dask cluster included."""

from __future__ import annotations

import ast
import gzip
import os
import signal
import subprocess
import sys

import pytest

from cabench.backends import Backend, parallel_map
from cabench.config import parse_config
from cabench.runner import run_experiment
from cabench.tune import run_tuning
from tests.conftest import DATA, ROOT, SAFETY_S, wait_for

PSI = {"name": "b_psi", "dataset": str(DATA / "piqa"), "setting": "psi", "arms": {"preset": "paper-subset"},
       "rho": [20, 100], "methods": ["copsi", "uniform"], "cost_modes": ["deterministic", "stochastic"],
       "repetitions": 6, "chunk_size": 2}
TUNE = {"name": "b_tune", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["cohv-ucb"],
        "tune": {"s_r": [0.01, 0.1], "s_c": [0.01, 0.1], "eta": [0.05], "repetitions": 3}}


def _power(base: int, exponent: int) -> int:
    return base**exponent


def _files(folder, names=("runs.csv", "selections.csv.gz")) -> dict[str, bytes]:
    """The files' contents (a compressed table decompressed: its content is what must not depend on the backend)."""
    raw = {name: (folder / name).read_bytes() for name in names}
    return {name: gzip.decompress(data) if name.endswith(".gz") else data for name, data in raw.items()}


def _run(raw, out, **overrides):
    run_experiment(parse_config({**raw, "output": str(out)}, "b.yaml", overrides=overrides), quiet=True)
    return _files(out)


def _tune(out, **overrides):
    run_tuning(parse_config({**TUNE, "output": str(out)}, "t.yaml", overrides=overrides), quiet=True)
    return _files(out, ("tune.csv", "tune.yaml"))


def test_the_map_returns_every_result_in_task_order_on_every_local_backend():
    tasks = [(b, e) for b in range(7) for e in range(3)]
    expected = [b**e for b, e in tasks]
    for backend in (Backend("sequential", 2), Backend("loky", 1), Backend("threading", 3), Backend("loky", 2)):
        assert list(parallel_map(_power, tasks, backend)) == expected, backend
        assert sorted(parallel_map(_power, tasks, backend, ordered=False)) == sorted(expected), backend


def test_tuning_does_not_depend_on_the_backend(tmp_path):
    expected = _tune(tmp_path / "one", n_jobs=1)
    assert _tune(tmp_path / "threads", backend="threading", n_jobs=2) == expected


@pytest.fixture
def dask_cluster(tmp_path):
    """A ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (ephemeral ports), killed at the end."""
    distributed = pytest.importorskip("distributed")
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    file = str(tmp_path / "scheduler.json")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "cwd": tmp_path}
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--dashboard-address", ":0", "--scheduler-file", file], **quiet)]
    try:
        processes += [subprocess.Popen([dask, "worker", "--scheduler-file", file, "--host", "127.0.0.1",
                                        "--nthreads", "1", "--no-dashboard", "--no-nanny"], **quiet)
                      for _ in range(2)]
        with distributed.Client(scheduler_file=file, timeout=f"{SAFETY_S}s") as client:  # waits for the file
            client.wait_for_workers(2, timeout=SAFETY_S)  # the scheduler's worker count
            yield client.scheduler.address
    finally:
        for process in processes:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_dask_scheduler_and_workers_give_the_files_of_loky(tmp_path, dask_cluster):
    expected = _run(PSI, tmp_path / "loky", n_jobs=2)
    assert _run(PSI, tmp_path / "joined", backend="dask", scheduler_address=dask_cluster) == expected
    assert _run(PSI, tmp_path / "local", backend="dask", n_jobs=2) == expected  # a local cluster of 2
    assert _tune(tmp_path / "tuned", backend="dask", scheduler_address=dask_cluster) == _tune(tmp_path / "t1")


_WORKERS = """
import os
from cabench.backends import Backend, parallel_map
os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
for _ in range(3):  # three maps, as three experiments of one `cabench run`
    print(sorted(set(parallel_map(os.getpid, [()] * 8, Backend("dask", 2)))), flush=True)
print(list(parallel_map(os.environ.get, [("MALLOC_TRIM_THRESHOLD_",)] * 2, Backend("dask", 2))), flush=True)


def ignores_ctrl_c():
    import signal
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


import signal
print(list(parallel_map(ignores_ctrl_c, [()] * 2, Backend("dask", 2))), ignores_ctrl_c(),
      signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)


def cancellations_logged():
    import logging
    return logging.getLogger("distributed.worker.state_machine").isEnabledFor(logging.WARNING)


print(list(parallel_map(cancellations_logged, [()] * 2, Backend("dask", 2))), flush=True)


def dies_once(marker):
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(3)
    return os.getpid()


import sys, tempfile
from cabench.backends import _LOCAL, WorkerEnded
marker = os.path.join(tempfile.mkdtemp(), "died")
print(len(list(parallel_map(dies_once, [(marker,)] * 2, Backend("dask", 2)))), flush=True)  # Dask runs it again
_LOCAL[2].wait_for_workers(2)  # the one started in place of the worker that died too
print(sorted(_LOCAL[2].run(cancellations_logged).values()), flush=True)


def raises(kind):
    if kind == "killed":
        from distributed.scheduler import KilledWorker
        raise KilledWorker("batch-1", "tcp://127.0.0.1:1", 3)
    raise ValueError("the task's own error")


for kind in ("killed", "own"):
    try:
        list(parallel_map(raises, [(kind,)], Backend("dask", 2)))
    except (WorkerEnded, ValueError) as exc:
        print(type(exc).__name__, exc, flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_a_local_dask_cluster_serves_every_map_of_a_process_and_ends_with_it():
    """Like loky's workers, the local cluster starts once per process (the worker processes of three maps are the
    same two), its workers keep glibc's own threshold for giving memory back (Dask's 64 KiB made the engines slower),
    leave Ctrl-C to the process that started them (each printed its own traceback), do not log the tasks a stopped
    run cancels (a warning line per task followed cabench's "interrupted" line), workers started again after one
    dies included, and end when it does; a worker's death is one line."""
    done = subprocess.run([sys.executable, "-c", _WORKERS], capture_output=True, text=True, timeout=SAFETY_S,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    *lines, environ, ctrl_c, cancellations, survived, restarted, killed, own = done.stdout.splitlines()
    assert ctrl_c == "[True, True] False True"  # the workers ignore SIGINT; this process keeps its handler
    assert cancellations == "[False, False]"
    # a worker that dies: Dask runs its task again, the worker started in its place is as quiet (a worker plugin:
    # `client.run` reached only the workers of the time), and this process's scheduler and nannies warn of none of it
    assert (survived, restarted) == ("2", "[False, False]") and "distributed" not in done.stderr
    # Dask's KilledWorker where it reaches the map: one line (WorkerEnded), not its traceback; a task's own error goes
    # through as it is
    assert killed == "WorkerEnded a worker process ended abruptly (on Dask, each worker that ran one of its tasks died)"
    assert own == "ValueError the task's own error"
    assert ast.literal_eval(environ) == [None, None]
    maps = [set(ast.literal_eval(line)) for line in lines]
    workers = set().union(*maps)
    assert len(maps) == 3 and 1 <= len(workers) <= 2 and done.returncode == 0
    wait_for(lambda: not any(_alive(pid) for pid in workers), "the cluster's workers to end")


_DIES_EVERY_TIME = """
import os, signal
from cabench.backends import Backend, WorkerEnded, parallel_map


def dies():
    os.kill(os.getpid(), signal.SIGKILL)


try:
    list(parallel_map(dies, [()] * 2, Backend("dask", 2)))
except WorkerEnded as exc:
    print(exc, flush=True)
"""


@pytest.mark.slow
def test_a_task_whose_workers_die_on_every_retry_ends_the_map_in_one_line():
    """A task that kills every worker that runs it: Dask gives up on it after its retries (``KilledWorker``), but
    joblib's Dask backend never told the map, which waited for ever (until Ctrl-C). Now the map ends with
    WorkerEnded; the process's timeout is only the guard against the old wait."""
    done = subprocess.run([sys.executable, "-c", _DIES_EVERY_TIME], capture_output=True, text=True,
                          timeout=SAFETY_S, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "a worker process ended abruptly (on Dask, each worker that ran one of its tasks died)\n"
    assert "marked as failed because" in done.stderr  # the scheduler's own word, kept (its count is Dask's setting)


def test_a_map_starts_no_more_workers_than_cores_and_plot_checks_its_workers(tmp_path, monkeypatch):
    """--n-jobs 100000 started a loky process per task until memory ran out, and plot --n-jobs 0 ended in joblib's
    traceback (exit 1). A map starts at most one worker per core (the results do not depend on it), and plot refuses
    0 and below -1 in one line, as a config's n_jobs is."""
    import joblib
    from typer.testing import CliRunner

    from cabench.backends import workers_for
    from cabench.cli import app

    monkeypatch.setattr(joblib, "cpu_count", lambda: 2)  # the cores this process may use
    assert [workers_for(n) for n in (1, 2, 3, 100_000, -1)] == [1, 2, 2, 2, 2]
    pids = set(parallel_map(os.getpid, [()] * 8, Backend("loky", n_jobs=100_000)))
    assert 1 <= len(pids) <= 2 and os.getpid() not in pids
    for n in ("0", "-7"):
        done = CliRunner().invoke(app, ["plot", str(tmp_path), "--n-jobs", n])
        assert done.exit_code == 2 and done.stderr == (f"error: --n-jobs {n}: must be a positive number of processes, "
                                                       "or -1 for all cores\n")


_LOKY_CTRL_C = """
import os, signal
from cabench.backends import Backend, parallel_map

def blocked():
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])

def tasks():
    signal.raise_signal(signal.SIGINT)  # drawn as the map sends its first tasks, when loky starts its workers
    yield from [()] * 4

print(sorted(set(parallel_map(blocked, [()] * 4, Backend("loky", n_jobs=2)))), blocked())
try:
    list(parallel_map(os.getpid, tasks(), Backend("loky", n_jobs=2)))
    print("not raised")
except KeyboardInterrupt:
    print("raised", blocked())
def read(pid, name):  # another process (the other test worker's) can end between listing /proc and reading it
    try:
        return open(f"/proc/{pid}/{name}").read()
    except (FileNotFoundError, ProcessLookupError):
        return ""

trackers = [pid for pid in os.listdir("/proc") if pid.isdigit() and "resource_tracker" in read(pid, "cmdline")
            and read(pid, "stat").split()[3:4] == [str(os.getpid())]]
print(len(trackers), {e for pid in trackers for e in read(pid, "environ").split(chr(0))
                      if e.startswith("PYTHONWARNINGS")}, os.environ.get("PYTHONWARNINGS"))
"""


def test_loky_workers_never_get_the_terminals_ctrl_c_and_a_ctrl_c_as_they_start_is_raised():
    """Ctrl-C reaches the whole process group: a loky worker still importing when it came printed its traceback
    (17-49 lines under `run`'s or `plot`'s one line). The workers start with SIGINT blocked (a blocked signal stays
    blocked through exec), so only the cabench process gets it and ends them; its own mask comes back after, and a
    Ctrl-C while the workers start is raised as they have started, not lost. The resource trackers start with
    their warnings off (one cleaning up after a worker that ended abruptly warned under the one line that says
    so), this process's environment as it was."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    done = subprocess.run([sys.executable, "-c", _LOKY_CTRL_C], capture_output=True, text=True, timeout=SAFETY_S,
                          cwd=ROOT, env=environ, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[True] False", "raised False",  # and the resource trackers warn of nothing
                                        "2 {'PYTHONWARNINGS=ignore:resource_tracker:UserWarning'} None"]


def _sigint_disposition(queue) -> None:  # in a spawned process: the test module's imports are not there
    import signal

    queue.put(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)


def test_processes_started_for_a_local_dask_cluster_ignore_ctrl_c():
    """Ctrl-C reaches the whole process group: each Dask worker printed its own KeyboardInterrupt traceback (4-6 of
    them, 65-113 lines). Processes started while the cluster starts ignore
    SIGINT (the disposition survives spawn's exec), and the cabench process's own handler comes back after."""
    import multiprocessing

    from cabench.backends import _no_ctrl_c

    before = signal.getsignal(signal.SIGINT)
    context = multiprocessing.get_context("spawn")  # as Dask starts its workers
    queue = context.Queue()
    with _no_ctrl_c():
        child = context.Process(target=_sigint_disposition, args=(queue,))
        child.start()
    assert queue.get(timeout=SAFETY_S) is True
    child.join(SAFETY_S)
    assert signal.getsignal(signal.SIGINT) is before
    outside = context.Process(target=_sigint_disposition, args=(queue,))
    outside.start()
    assert queue.get(timeout=SAFETY_S) is False
    outside.join(SAFETY_S)
