"""Ctrl-C and SIGTERM while a compiled kernel runs in this process (:mod:`cabench.interrupts`): recorded, and raised
as KeyboardInterrupt once the kernel call returns, never inside it; at once elsewhere."""

from __future__ import annotations

import signal
import threading

import pytest

from cabench.cells import run_cell
from cabench.config import parse_config
from cabench.interrupts import handling, in_kernel
from cabench.kernels import blocks, gaps, online, streams
from cabench.plan import build_problem, plan_cells, with_budgets
from tests.conftest import DATA, SAFETY_S

SYNTHETIC = {"means": [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7], [0.2, 0.2]], "costs": [10, 20, 15, 12]}
REPLAY_PSI = {"dataset": str(DATA / "piqa"), "arms": {"preset": "paper-subset"}, "setting": "psi", "rho": [20]}
SYNTHETIC_PSI = {"dataset": {"synthetic": SYNTHETIC}, "setting": "psi", "rho": [60]}

#: Each kernel called from Python by the engines, and an experiment whose cells call it.
KERNEL_CALLS = [
    (online, "online_loop", {"dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["cohv-ucb"]}),
    (streams, "uniforms", {"dataset": {"synthetic": {**SYNTHETIC, "noise": "gaussian", "sigma": 0.1}},
                           "setting": "online", "rho": [4], "methods": ["cohv-ucb"]}),
    (streams, "replay_sample", {**REPLAY_PSI, "methods": ["copsi"], "cost_modes": ["stochastic"]}),
    (blocks, "replay_bring_up", {**REPLAY_PSI, "methods": ["copsi"], "cost_modes": ["deterministic"]}),
    (gaps, "_leave", {**REPLAY_PSI, "methods": ["copsi"], "cost_modes": ["deterministic"]}),
    (gaps, "_all_pairs", {**REPLAY_PSI, "methods": ["ege-sh"], "cost_modes": ["deterministic"]}),
    (streams, "bernoulli_sample", {**SYNTHETIC_PSI, "methods": ["copsi"], "cost_modes": ["stochastic"]}),
    (blocks, "plan", {**SYNTHETIC_PSI, "methods": ["copsi"], "cost_modes": ["deterministic"]}),
    (blocks, "add", {**SYNTHETIC_PSI, "methods": ["copsi"], "cost_modes": ["deterministic"]}),
    (streams, "replay_spent", {**{k: v for k, v in REPLAY_PSI.items() if k != "rho"}, "cost": "usd",
                               "prices": {"*": {"tokens": 0.2}}, "budget": {"usd": [0.05]}, "methods": ["copsi"],
                               "cost_modes": ["deterministic"]}),
]


def _cells(raw):
    cfg = parse_config({"name": "k", "repetitions": 2, "output": "unused", **raw}, "k.yaml")
    problem, _, _ = build_problem(cfg)
    cfg = with_budgets(cfg, problem)
    for cell in plan_cells(cfg):
        run_cell(problem, cfg.setting, cfg.seed, cell)


@pytest.mark.parametrize("module, name, raw", KERNEL_CALLS, ids=[name for _, name, _ in KERNEL_CALLS])
def test_ctrl_c_as_a_kernel_is_called_is_raised_when_it_returns(monkeypatch, module, name, raw):
    """SIGINT handled just before the engine's first call of a kernel (in Python, as it would be in numba's callback
    when the kernel returns): the call runs to its end, once, and then the cell stops with KeyboardInterrupt."""
    _cells(raw)  # compiled (or loaded) before the kernel's name is replaced: compiled callers keep the kernel itself
    kernel, calls, returned = getattr(module, name), [], []

    def called(*args):
        calls.append(name)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)
        result = kernel(*args)
        returned.append(name)
        return result

    monkeypatch.setattr(module, name, called)
    with handling(signal.SIGINT), pytest.raises(KeyboardInterrupt):
        _cells(raw)
    assert calls == returned == [name]


def test_a_signal_waits_for_the_outermost_kernel_call_and_only_in_the_main_thread():
    before = signal.getsignal(signal.SIGINT)
    order = []
    with handling(signal.SIGINT):
        with pytest.raises(KeyboardInterrupt), in_kernel:
            with in_kernel:
                signal.raise_signal(signal.SIGINT)
                order.append("inner returned")
            order.append("outer returned")
        assert order == ["inner returned", "outer returned"]
        with pytest.raises(KeyboardInterrupt):  # outside a kernel call: at once
            signal.raise_signal(signal.SIGINT)
            order.append("not reached")
        held = threading.Event()

        def in_a_thread():  # a worker thread's kernel call holds nothing of the main thread's
            with in_kernel:
                held.set()
                done.wait()

        done = threading.Event()
        thread = threading.Thread(target=in_a_thread)
        thread.start()
        assert held.wait(SAFETY_S)  # a state: the thread holds its kernel call (the limit ends a hang only)
        try:
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)
                order.append("not reached")
        finally:
            done.set()
            thread.join()
        with in_kernel:  # nothing left recorded
            order.append("clean")
    assert order == ["inner returned", "outer returned", "clean"]
    assert signal.getsignal(signal.SIGINT) is before


def test_an_ignored_ctrl_c_stays_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with handling(signal.SIGINT, signal.SIGTERM):
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_signal_while_a_command_loads_what_it_needs_is_one_line_and_exit_130(tmp_path):
    """A SIGTERM in the first second of `cabench run` landed while the command imported the runner, before its
    errors are handled: typer turned the interrupt into a silent exit 130. It says "interrupted" now."""
    import subprocess
    import sys

    script = (
        "import builtins, signal\n"
        "real = builtins.__import__\n"
        "def hooked(name, *args, **kwargs):\n"
        "    if name == 'cabench.runner':\n"
        "        builtins.__import__ = real\n"
        "        signal.raise_signal(signal.SIGTERM)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = hooked\n"
        f"import sys; sys.argv = ['cabench', 'run', {str(tmp_path / 'none.yaml')!r}]\n"
        "from cabench.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=SAFETY_S)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "interrupted\n")


def test_ctrl_c_while_the_command_line_loads_is_one_line_and_exit_130():
    """The console script's entry (`cabench.__main__`) loads the command line itself: a SIGINT raised as typer is
    imported (the moment a Ctrl-C in the first few tenths of a second lands) says "interrupted", no traceback."""
    import subprocess
    import sys

    script = (
        "import builtins, signal\n"
        "real = builtins.__import__\n"
        "def hooked(name, *args, **kwargs):\n"
        "    if name == 'typer':\n"
        "        builtins.__import__ = real\n"
        "        signal.raise_signal(signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = hooked\n"
        "import sys; sys.argv = ['cabench', '--version']\n"
        "from cabench.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=SAFETY_S)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "interrupted\n")
