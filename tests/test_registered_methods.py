"""Methods registered through the decorators, from a module of their own (tests/methods_extra/rules.py):
once that module is imported they are methods like the built-in ones — configs name them, the batched
engines run them (in joblib's process workers too), the ask/tell policies run them, and both decide alike."""

from __future__ import annotations

import joblib
import numpy as np
import pytest

from cabench import registry
from cabench.config import parse_config
from cabench.errors import CabenchError
from cabench.methods.index import index_method
from cabench.methods.spec import source_digest, user_style
from cabench.online import OnlineMethod, run_online
from cabench.online.reference import reference_online
from cabench.psi import PsiMethod, run_psi
from cabench.psi.reference import reference_psi
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem
from tests.conftest import DATA
from tests.methods_extra import rules

SPEC = SyntheticSpec("registered", means=((0.9, 0.2), (0.6, 0.6), (0.2, 0.9), (0.5, 0.45), (0.15, 0.8)),
                     costs=(1.0, 2.0, 1.5, 0.8, 1.2), noise="gaussian", sigma=0.5, cost_spread=0.3)
PROBLEM = synthetic_problem(SPEC)
KEYS = stream_keys(7, np.arange(4), PROBLEM.arm_ids)


def test_a_config_naming_a_decorated_function_gets_the_method_it_was_registered_as(tmp_path):
    """A config names a decorated function as module:object: it ran as a bare function, its display, style and
    quality_first dropped (a quality-per-cost index ran on latency first, where acc-cost-ucb is refused)."""
    raw = {"dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4]], "costs": [1, 2]}}, "setting": "online",
           "rho": [4], "methods": ["tests.methods_extra.rules:sqrt_cost_ucb"]}
    entry = parse_config(raw, "c.yaml").methods[0].entry
    assert entry.spec.name == "tests.methods_extra.rules:sqrt_cost_ucb" and entry.spec.display == "sqrt-cost HV-UCB"
    # its colour and marker are its name's in this process too, as plot and report show it from config.yaml
    named = user_style("tests.methods_extra.rules:sqrt_cost_ucb")
    assert registry.style("tests.methods_extra.rules:sqrt_cost_ucb") == (named.color, named.marker) != ("#444444", "8")
    from cabench.plan import build_problem

    quality = {**raw, "dataset": str(DATA / "piqa"), "methods": ["tests.methods_extra.rules:acc_sqrt_cost_ucb"],
               "objectives": ["latency", "accuracy"]}
    with pytest.raises(CabenchError, match="tests.methods_extra.rules:acc_sqrt_cost_ucb divides the first "
                                           "objective's optimistic mean by the cost"):
        build_problem(parse_config(quality, "c.yaml"))
    build_problem(parse_config({**quality, "objectives": ["accuracy", "latency"]}, "c.yaml"))  # quality first


def test_registered_like_a_built_in():
    assert registry.names("online")[-1] == "sqrt-cost-ucb" and registry.names("psi")[-1] == "half-left"
    spec = registry.spec("sqrt-cost-ucb")
    assert (spec.display, spec.origin, spec.tunable) == ("sqrt-cost HV-UCB", "user", ("s_r", "s_c", "eta"))
    assert registry.style("sqrt-cost-ucb") == ("#444444", "8")
    assert registry.display("half-left") == "Half of what is left"
    cfg = parse_config({"dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4]], "costs": [1, 2]}},
                        "setting": "online", "rho": [4], "methods": [{"name": "sqrt-cost-ucb", "s_r": 0.1}]}, "c.yaml")
    assert cfg.methods[0] == OnlineMethod("sqrt-cost-ucb", s_r=0.1)
    # editing the module recomputes every cached cell that ran it
    assert OnlineMethod("sqrt-cost-ucb").entry.source_digest() == source_digest(rules.__name__)
    assert OnlineMethod("cohv-ucb").entry.source_digest() is None  # a built-in's code is in every key


@pytest.mark.parametrize("rho", [3, 20])
def test_index_method_decides_alike_in_the_engine_and_the_policy(rho):
    method = OnlineMethod("sqrt-cost-ucb")
    batched = run_online(PROBLEM, method, rho, KEYS, record_arms=True)
    cohv = run_online(PROBLEM, OnlineMethod("cohv-ucb"), rho, KEYS, record_arms=True)
    assert not np.array_equal(batched.counts, cohv.counts)  # its own index, not a built-in's
    for r in range(len(KEYS)):
        arms = batched.arms_pulled[:, r]
        assert arms[arms >= 0].tolist() == reference_online(PROBLEM, method, rho, KEYS[r])["arms"]


@pytest.mark.parametrize("mode", ["deterministic", "stochastic"])
def test_schedule_decides_alike_in_the_engine_and_the_policy(mode):
    method = PsiMethod("half-left")
    batched = run_psi(PROBLEM, method, 40, KEYS, mode)
    copsi = run_psi(PROBLEM, PsiMethod("copsi"), 40, KEYS, mode)
    assert (batched.spend > copsi.spend).all()  # it spends what CoPSI leaves
    for r in range(len(KEYS)):
        ref = reference_psi(PROBLEM, method, 40, KEYS[r], mode)
        assert np.flatnonzero(batched.returned[r]).tolist() == ref["returned"]
        assert batched.removed[r].tolist() == ref["removed"] and batched.accepted[r].tolist() == ref["accepted"]
        assert batched.samples[r].tolist() == ref["samples"] and batched.spend[r] == ref["spend"]


def test_registered_methods_run_in_process_workers():
    methods = [(run_online, OnlineMethod("sqrt-cost-ucb"), 6), (run_psi, PsiMethod("half-left"), 40)]
    with joblib.Parallel(n_jobs=2, backend="loky") as parallel:
        remote = parallel(joblib.delayed(run)(PROBLEM, m, rho, KEYS) for run, m, rho in methods)
    for (run, m, rho), far in zip(methods, remote):
        near = run(PROBLEM, m, rho, KEYS)
        assert np.array_equal(far.spend, near.spend)


def test_a_name_is_registered_once():
    with pytest.raises(CabenchError, match="'cohv-ucb' is already the online method CoHV-UCB"):
        index_method("cohv-ucb")(rules.sqrt_cost_ucb)
    # a built-in's name in the other setting too: run's table showed CoPSI's rows under the index's display name
    with pytest.raises(CabenchError, match="'copsi' is already the psi method CoPSI; give yours another name"):
        index_method("copsi", display="Sneaky index")(rules.sqrt_cost_ucb)
    with pytest.raises(CabenchError, match="a name with ':' is a module:object"):
        index_method("mine:index")(rules.sqrt_cost_ucb)
    with pytest.raises(CabenchError, match="takes \\(n\\), but an online index function is called as index"):
        index_method("one-argument")(lambda n: n)


@pytest.fixture
def registered_here(monkeypatch):
    """Methods a test registers stay in that test (the table is restored after it)."""
    from cabench.methods import spec

    monkeypatch.setattr(spec, "_TABLE", dict(spec._TABLE))


def test_one_name_in_both_settings_is_refused_unless_one_module_shows_it_alike(registered_here):
    """An online and an identification method of one's own under one name: run's table showed the identification
    method's rows under the online one's display (tables find a display by name alone)."""
    from cabench.methods.elimination import schedule

    index_method("twin", display="Twin online")(rules.sqrt_cost_ucb)
    with pytest.raises(CabenchError, match="'twin' is already the online method Twin online; give yours another"):
        schedule("twin", display="Twin identification")(rules.half_left)
    index_method("pair", display="Pair")(rules.sqrt_cost_ucb)
    schedule("pair", display="Pair")(rules.half_left)  # one module, one display: shown alike in both settings


def test_per_pull_index_of_ones_own_is_checked(registered_here):
    """A decorated method's own per-pull index is user code too: NaN from it is one line naming the method,
    and a sound one decides as the batched index does."""
    from cabench.methods.user import UserMethodError

    def of_one(n, upper, lower_cost):
        return upper[0] * upper[1] / np.sqrt(lower_cost)

    index_method("sqrt-cost-of-one", of_one=of_one)(rules.sqrt_cost_ucb)
    index_method("nan-of-one", of_one=lambda n, upper, lower_cost: float("nan"))(rules.sqrt_cost_ucb)
    for name in ("sqrt-cost-of-one", "sqrt-cost-ucb"):
        assert reference_online(PROBLEM, OnlineMethod(name), 5, KEYS[0])["arms"] == \
            reference_online(PROBLEM, OnlineMethod("sqrt-cost-ucb"), 5, KEYS[0])["arms"]
    with pytest.raises(UserMethodError, match="nan-of-one returned nan"):
        reference_online(PROBLEM, OnlineMethod("nan-of-one"), 5, KEYS[0])
