"""``cabench live`` on the user's terms: costs in dollars from a price table, budgets in dollars, objectives by
name, against ``cabench serve`` on 127.0.0.1 (no other network).

The checks price every call here, from the test's own price table and the endpoint's own record of what it
generated; none calls the live package's pricing.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cabench.cli import app
from cabench.data.dataset import load_dataset
from cabench.errors import CabenchError
from cabench.live.config import load_live
from cabench.live.serve import ReplayEndpoint, serve_in_thread
from tests.conftest import spread_logs, write_dataset

pytest.importorskip("httpx")
RUNNER = CliRunner()
K = 4
MAX_TOKENS = 128  # spread_logs' max_new_tokens: what each configuration asks for
PROFILING = 3
MODELS = [f"model{c:02d}" for c in range(K)]


class BillingEndpoint(ReplayEndpoint):
    """``cabench serve``'s endpoint, keeping the usage of every reply it generated: its own bill."""

    def complete(self, body):
        response, delay = super().complete(body)
        self.billed.append((response["model"], dict(response["usage"])))
        return response, delay


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("data") / "four", spread_logs(K, 40, seed=11))


@pytest.fixture(scope="module")
def serve():
    started = []

    def start(dataset: Path, **options):
        endpoint = BillingEndpoint.load(dataset, **options)
        endpoint.billed = []
        server, _ = serve_in_thread(endpoint)
        started.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", endpoint
    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def write_config(folder: Path, dataset: Path, url: str, **extra) -> Path:
    raw = {"name": "dollars", "task": {"kind": "replay", "dataset": str(dataset)}, "configurations_from": str(dataset),
           "endpoint": {"base_url": url, "timeout_s": 5, "max_retries": 4, "backoff_s": 0.0, "max_backoff_s": 0.0,
                        "concurrency": 1, "max_failures": 50},
           "setting": "online", "method": "cohv-ucb", "profiling": {"instances": PROFILING}, "latency": "reported",
           "seed": 0, **extra}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{raw['name']}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def live(config: Path, out: Path, ok: bool = True) -> tuple[dict, dict | None]:
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"])
    if ok:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code in (0, 2) and len(result.stderr.strip().splitlines()) <= 1, result.output
    decision = out / "decision.json"
    return json.loads((out / "spend.json").read_text()), json.loads(decision.read_text()) if decision.exists() else None


def lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines() if line.strip()]


def dollars(price: dict, prompt: float, completion: float) -> float:
    """A call's dollars at ``price`` ($ per million tokens: input and output, or one blended rate)."""
    if "tokens" in price:
        return (prompt + completion) * price["tokens"] / 1e6
    return (prompt * price["input"] + completion * price["output"]) / 1e6


def worst_dollars(price: dict, most_tokens: float) -> float:
    """The dearest usage a replay call can report, by brute force: at most ``most_tokens`` in all (the
    configuration's largest logged call), completion tokens at most ``max_tokens``."""
    completions = np.linspace(0.0, min(MAX_TOKENS, most_tokens), 2001)
    return float(max(dollars(price, most_tokens - c, c) for c in completions))


def config_prices(dataset: Path, prices: dict) -> tuple[dict, dict]:
    """Each configuration's price and largest logged call."""
    frame = pd.read_csv(dataset / "logs.csv.gz")
    most = frame.groupby("config_id")["tokens"].max().to_dict()
    model = frame.drop_duplicates("config_id").set_index("config_id")["model"].to_dict()
    return {c: prices[model[c]] for c in most}, most


def check_budget_held(out: Path, spend: dict, budget: float, price_of: dict, most: dict, charge_failed: str) -> None:
    """The hard-budget rule in dollars, recomputed from the journal with the test's prices."""
    records = lines(out)
    assert spend["cost_unit"] == "usd" and spend["budget_usd"] == budget
    assert spend["spent_usd"] <= budget
    finished: dict[str, float] = {}
    open_starts: dict[str, list[float]] = {}
    for line in records:  # at every journal state: charged + the worst case of every attempt in flight <= budget
        if line.get("start"):
            assert line["worst"] == pytest.approx(worst_dollars(price_of[line["config"]], most[line["config"]]),
                                                  rel=1e-9)
            open_starts.setdefault(line["key"], []).append(line["worst"])
        else:
            if line.get("lost"):
                assert line["charged"] == pytest.approx(sum(open_starts[line["key"]]), rel=1e-12)
            open_starts.pop(line["key"], None)
            finished[line["key"]] = finished.get(line["key"], 0.0) + line["charged"]
        assert sum(finished.values()) + sum(sum(w) for w in open_starts.values()) <= budget * (1 + 1e-12)
    assert spend["spent_usd"] == pytest.approx(sum(finished.values()), rel=1e-9)
    for r in (r for r in records if not r.get("start") and not r.get("lost")):
        paid = dollars(price_of[r["config"]], r["prompt_tokens"], r["completion_tokens"]) if r["ok"] else 0.0
        failures = sum(1 for a in r["attempts"] if a["billable"] and a["status"] != "ok")  # 500s, without usage
        per_failure = r["worst"] if charge_failed == "worst-case" else 0.0
        assert r.get("cost", 0.0) == pytest.approx(paid, rel=1e-9)
        assert r["charged"] == pytest.approx(paid + failures * per_failure, rel=1e-9, abs=1e-15), r


CASES = st.fixed_dictionaries({
    "run": st.sampled_from([("online", "cohv-ucb", "deterministic"), ("online", "uniform", "deterministic"),
                            ("psi", "copsi", "deterministic"), ("psi", "copsi", "stochastic"),
                            ("psi", "uniform", "deterministic"), ("psi", "uniform", "stochastic")]),
    "prices": st.lists(st.one_of(
        st.tuples(st.floats(0.01, 60.0), st.floats(0.01, 60.0)).map(lambda p: {"input": p[0], "output": p[1]}),
        st.floats(0.01, 60.0).map(lambda p: {"tokens": p})), min_size=K, max_size=K),
    "factor": st.floats(1.5, 6.0),
    "faults": st.tuples(st.sampled_from([0.0, 0.1, 0.25]), st.sampled_from([0.0, 0.1, 0.25])),
    "charge_failed": st.sampled_from(["worst-case", "reported", "none"]),
    "concurrency": st.integers(1, 5),
    "cut": st.none() | st.floats(0.2, 0.9),
})
BINDING = {"prices": [{"input": 0.5, "output": 2.0}, {"tokens": 1.0}, {"input": 10.0, "output": 0.5},
                      {"input": 3.0, "output": 15.0}], "factor": 3.0, "faults": (0.1, 0.25),
           "charge_failed": "worst-case", "concurrency": 3}


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@example({**BINDING, "run": ("psi", "uniform", "stochastic"), "cut": None})  # spends to the budget
@example({**BINDING, "run": ("online", "cohv-ucb", "deterministic"), "cut": 0.6})  # failures bind, then resumed
@given(case=CASES)
def test_dollar_budget_is_never_exceeded(tmp_path_factory, dataset, serve, case):
    """Random prices, budgets, failures, concurrency and cost modes, online and identification, killed and
    resumed or not: every attempt is admitted at its worst case in dollars, every charge is the reply's usage at
    the price table's rates (worst case for failures under worst-case), and the spend stays within the budget,
    by the journal and by the endpoint's own bill."""
    setting, method, mode = case["run"]
    prices = dict(zip(MODELS, case["prices"]))
    price_of, most = config_prices(dataset, prices)
    budget = float(case["factor"] * PROFILING * sum(worst_dollars(price_of[c], most[c]) for c in price_of))
    url, endpoint = serve(dataset, faults={"429": case["faults"][0], "500": case["faults"][1]}, seed=7)
    folder = tmp_path_factory.mktemp("case")
    config = write_config(folder, dataset, url, setting=setting, method=method, cost_mode=mode, cost="usd",
                          prices=prices, budget={"usd": budget},
                          endpoint={"base_url": url, "max_retries": 4, "backoff_s": 0.0, "max_backoff_s": 0.0,
                                    "concurrency": case["concurrency"], "max_failures": 50,
                                    "charge_failed": case["charge_failed"]})
    out = folder / "run"
    spend, _ = live(config, out, ok=False)
    check_budget_held(out, spend, budget, price_of, most, case["charge_failed"])
    bill = sum(dollars(prices[model], u["prompt_tokens"], u["completion_tokens"]) for model, u in endpoint.billed)
    assert bill <= spend["spent_usd"] * (1 + 1e-9) + 1e-15  # every dollar the endpoint generated was charged
    starts = [i for i, line in enumerate(lines(out)) if line.get("start") and line["key"].startswith("e:")]
    if case["cut"] is not None and starts:  # killed with the call of that start line in flight, then resumed
        kept = (out / "calls.jsonl").read_text().splitlines()[:starts[int(case["cut"] * len(starts))] + 1]
        (out / "calls.jsonl").write_text("\n".join(kept) + "\n")
        spend, _ = live(config, out, ok=False)
        assert spend["lost_calls"] >= 1
        check_budget_held(out, spend, budget, price_of, most, case["charge_failed"])


def test_usd_budget_gives_the_b_of_its_rho(tmp_path, dataset, serve):
    """``budget: {usd: X}`` is the largest rho whose B = rho K cbar fits X after profiling, and a config
    stating that rho runs with the same B and makes the same decision."""
    url, _ = serve(dataset)
    prices = {m: {"input": 0.2 * (c + 1), "output": 1.5 * (K - c)} for c, m in enumerate(MODELS)}
    budget = 0.03
    stated = write_config(tmp_path / "usd", dataset, url, cost="usd", prices=prices, budget={"usd": budget})
    by_budget, decision = live(stated, tmp_path / "usd" / "run")
    records = [r for r in lines(tmp_path / "usd" / "run") if not r.get("start")]
    cbar = np.mean([np.mean([dollars(prices[r["model"]], r["prompt_tokens"], r["completion_tokens"])
                             for r in records if r["key"].startswith(f"p:{c}:")]) for c in range(K)])
    profiling = by_budget["profiling_usd"]
    rho = by_budget["rho"]
    assert by_budget["method_usd"] == pytest.approx(rho * K * cbar, rel=1e-12)
    assert by_budget["method_usd"] <= budget - profiling and rho * K * cbar == pytest.approx(budget - profiling,
                                                                                             rel=1e-12)
    by_rho_config = write_config(tmp_path / "rho", dataset, url, cost="usd", prices=prices, rho=rho)
    by_rho, decision_rho = live(by_rho_config, tmp_path / "rho" / "run")
    assert by_rho["method_usd"] == by_budget["method_usd"] and by_rho["rho"] == rho
    assert by_rho["profiling_usd"] == profiling and decision_rho == decision
    assert by_rho["budget_usd"] <= budget


@pytest.mark.parametrize("setting", ["online", "psi"])
def test_decision_names_the_objectives(tmp_path, dataset, serve, setting):
    """Estimates are keyed by objective name; the accuracy and latency estimates are the means of the told
    outcomes' rewards (latency normalised by the profiling latencies' 5th and 95th percentiles)."""
    url, _ = serve(dataset)
    config = write_config(tmp_path, dataset, url, setting=setting, method="cohv-ucb" if setting == "online" else
                          "copsi", objectives=["accuracy", "latency"], budget_tokens=6000)
    _, decision = live(config, tmp_path / "run")
    text = (tmp_path / "run" / "decision.json").read_text()
    assert decision["objectives"] == ["accuracy", "latency"] and "reward_" not in text
    assert "NaN" not in text and "Infinity" not in text
    if setting == "psi":
        assert set(decision["samples"]) == {f"cfg{c:02d}" for c in range(K)}
        return
    records = [r for r in lines(tmp_path / "run") if not r.get("start") and r["ok"]]
    lo, hi = np.percentile([r["latency_s"] for r in records if r["key"].startswith("p:")], [5, 95])
    for name, estimate in decision["estimates"].items():
        assert set(estimate) == {"pulls", "accuracy", "latency", "online_cost"}
        told = [r for r in records if r["key"].startswith("e:") and r["config"] == name]
        assert estimate["pulls"] == len(told) > 0
        assert estimate["accuracy"] == pytest.approx(np.mean([r["correct"] for r in told]), abs=1e-6)
        latency = np.mean([min(max((hi - r["latency_s"]) / (hi - lo), 0.0), 1.0) for r in told])
        assert estimate["latency"] == pytest.approx(latency, abs=1e-6)


@pytest.mark.parametrize("setting", ["online", "psi"])
def test_three_objectives_in_dollars_run_and_replay(tmp_path, dataset, serve, setting):
    """Accuracy, latency and dollars per call: the run decides, logs.csv keeps prompt and completion tokens and
    dollars, and the folder loads on the terms it declares, each call's cost its logged dollars."""
    url, _ = serve(dataset)
    prices = {m: {"input": 0.1, "output": 0.1 * 4 ** c} for c, m in enumerate(MODELS)}
    config = write_config(tmp_path, dataset, url, setting=setting, method="cohv-ucb" if setting == "online" else
                          "copsi", objectives=["accuracy", "latency", "cost"], cost="usd", prices=prices,
                          budget={"usd": 0.01})
    out = tmp_path / "run"
    spend, decision = live(config, out)
    assert decision["objectives"] == ["accuracy", "latency", "cost"] and decision["cost_unit"] == "usd"
    if setting == "online":
        assert all(set(e) == {"pulls", "accuracy", "latency", "cost", "online_cost"}
                   for e in decision["estimates"].values())
    logs = pd.read_csv(out / "logs.csv")
    assert {"prompt_tokens", "completion_tokens", "cost_usd"} <= set(logs.columns)
    assert np.allclose(logs["tokens"], logs["prompt_tokens"] + logs["completion_tokens"])
    want = [dollars(prices[m], p, c)
            for m, p, c in zip(logs["model"], logs["prompt_tokens"], logs["completion_tokens"])]
    assert np.allclose(logs["cost_usd"], want, rtol=1e-9, atol=0)
    meta = yaml.safe_load((out / "dataset.yaml").read_text())
    assert meta["objectives"] == ["accuracy", "latency", "cost"] and meta["cost"] == "usd"
    ds = load_dataset(out)  # the terms the folder declares
    assert [o.name for o in ds.norm.objectives] == ["accuracy", "latency", "cost"]
    assert ds.norm.cost_unit == "usd" and spend["spent_usd"] <= 0.01


def test_completion_and_total_token_counts_are_cost_units(tmp_path, dataset, serve):
    """``cost: completion`` charges the completion tokens (the cost unit completion_tokens), and reports the
    spend in tokens too; ``cost: total`` is the paper's tokens."""
    url, _ = serve(dataset)
    config = write_config(tmp_path, dataset, url, cost="completion", budget_tokens=5000)
    spend, _ = live(config, tmp_path / "run")
    records = [r for r in lines(tmp_path / "run") if not r.get("start")]
    assert spend["cost_unit"] == "completion_tokens" and spend["budget_completion_tokens"] == 5000
    assert spend["spent_completion_tokens"] == sum(r["completion_tokens"] for r in records) <= 5000
    assert spend["spent_tokens"] == sum(r["prompt_tokens"] + r["completion_tokens"] for r in records)
    assert spend["spent_tokens"] > spend["spent_completion_tokens"]
    assert load_live(write_config(tmp_path / "total", dataset, url, cost="total", rho=2)).terms.cost == "tokens"


BAD = {
    "usd without prices": ({"cost": "usd", "budget": {"usd": 1}}, "usd needs prices"),
    "a model without a price": ({"cost": "usd", "prices": {"model00": {"tokens": 1}}, "budget": {"usd": 1}},
                                "no price for model 'model01'"),
    "budget_tokens in dollars": ({"cost": "usd", "prices": {"*": {"tokens": 1}}, "budget_tokens": 100},
                                 "state budget: {usd: X}"),
    "budget in another unit": ({"cost": "usd", "prices": {"*": {"tokens": 1}}, "budget": {"tokens": 100}},
                               "the cost is in usd"),
    "two budgets": ({"budget": {"tokens": 100}, "budget_tokens": 100}, "give either budget_tokens"),
    "a column live does not measure": ({"objectives": ["accuracy", {"column": "bleu", "direction": "max"}],
                                        "budget_tokens": 100},
                                       "not measured by a live call"),
    "a reserved name": ({"objectives": ["accuracy", {"column": "tokens", "direction": "min", "name": "pulls"}],
                         "budget_tokens": 100}, "names another estimate"),
    "an unknown cost": ({"cost": "dollars", "budget_tokens": 100}, "is not one of total, completion"),
}


@pytest.mark.parametrize("label", sorted(BAD))
def test_bad_terms_are_one_line(tmp_path, dataset, label):
    change, words = BAD[label]
    config = write_config(tmp_path, dataset, "http://127.0.0.1:9/v1", **change)
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert words in result.stderr, result.stderr


def test_shipped_dollar_config_and_its_digest_across_processes():
    """The shipped dollar config loads; a run's identity is the same in another process (a resumed run is
    another process)."""
    root = Path(__file__).resolve().parents[2]
    path = root / "configs" / "live" / "piqa_dollars.yaml"
    cfg = load_live(path)
    assert cfg.terms.cost == "usd" and cfg.terms.names == ("accuracy", "latency", "cost")
    assert math.isclose(cfg.budget, 0.12)
    code = ("from cabench.live.config import load_live; from cabench.live.identity import config_digest; "
            f"print(config_digest(load_live({str(path)!r})))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    from cabench.live.identity import config_digest

    assert other.stdout.strip() == config_digest(cfg)  # (each process hashes text with its own random seed)


def test_a_budget_short_of_profiling_is_raised_in_place_keeping_the_calls_paid(tmp_path, dataset, serve):
    """A budget that does not cover profiling stopped the run with its profiling spend recorded as 0 and a folder
    that refused the raised budget, so what profiling paid was lost: the stop now says what profiling cost and
    would need, spend.json counts it as profiling's, and the same folder resumes with a raised budget, making no
    profiling call twice, until the method has called."""
    url, endpoint = serve(dataset)
    prices = {m: {"input": 1.0 + c, "output": 4.0} for c, m in enumerate(MODELS)}
    price_of, most = config_prices(dataset, prices)
    dearest = max(worst_dollars(price_of[c], most[c]) for c in price_of)
    out = tmp_path / "run"

    def attempt(budget: float):
        config = write_config(tmp_path, dataset, url, cost="usd", prices=prices, budget={"usd": budget})
        return RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"])

    short = attempt(2.5 * dearest)  # a few of the K x PROFILING profiling calls, never all
    lines_out = short.stderr.strip().splitlines()
    assert short.exit_code == 2 and len(lines_out) == 1, short.output
    assert "the budget does not cover profiling (4 configurations x 3 instances): " in lines_out[0]
    assert "at that rate profiling needs about $" in lines_out[0] and "re-run into the same folder" in lines_out[0]
    spend = json.loads((out / "spend.json").read_text())
    paid = [r for r in lines(out) if not r.get("start")]
    assert 0 < len(paid) < K * PROFILING and all(r["key"].startswith("p:") for r in paid)
    assert spend["profiling_usd"] == spend["spent_usd"] == pytest.approx(sum(r["charged"] for r in paid), rel=1e-12)
    assert spend["profiling_usd"] > 0 and f"{len(paid)} profiling calls cost $" in lines_out[0]
    billed = len(endpoint.billed)
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    lowered = attempt(2 * dearest)  # a lowered budget was taken, and spend.json then said more spent than budgeted
    assert lowered.exit_code == 2 and "and a run resumes only with a larger one" in lowered.stderr, lowered.output
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before and len(endpoint.billed) == billed
    raised = attempt(60 * PROFILING * K * dearest)
    assert raised.exit_code == 0, raised.output
    profiling = [r["key"] for r in lines(out) if not r.get("start") and r["key"].startswith("p:")]
    assert sorted(profiling) == sorted({f"p:{c}:{j}" for c in range(K) for j in range(PROFILING)})  # each once
    method = [r for r in lines(out) if not r.get("start") and r["key"].startswith("e:")]
    assert method and len(endpoint.billed) == billed + K * PROFILING - len(paid) + len(method)
    again = attempt(70 * PROFILING * K * dearest)  # the method has called: its budget is the run's
    assert again.exit_code == 2 and "holds this run with another budget, and its method has made calls" in \
        again.stderr, again.output  # only the budget differs: said so, not "another config"


def test_a_model_priced_at_nothing_is_refused_before_any_call(tmp_path, dataset):
    """A price of 0 for a model: every call of it free leaves the online cost bound lambda at 0, which a run found
    only after profiling was paid; and every fix (another price, another cost) then met a folder bound to the old
    config. It is refused as the config is read, naming the price."""
    prices = {m: {"input": 1.0, "output": 2.0} for m in MODELS}
    prices[MODELS[1]] = {"input": 0, "output": 0}
    config = write_config(tmp_path, dataset, "http://127.0.0.1:9/v1", cost="usd", prices=prices,
                          budget={"usd": 1.0})
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert (f"prices.{MODELS[1]}: every call of '{MODELS[1]}' (configurations[1]) would cost $0, which leaves the "
            "online cost bound lambda at 0") in result.stderr
    assert not (tmp_path / "run").exists()


def test_price_patterns_in_another_order_are_other_prices(tmp_path, dataset, serve):
    """A model's price is its own entry, else the first pattern that matches it. The folder's digest hashed the
    price table as a mapping, so swapping two patterns (halving some models' price) resumed silently, charging new
    calls at the new prices (1.9x the budget at the folder's prices). live.json now records each model's price."""
    url, endpoint = serve(dataset)
    # two patterns that both match model00, each pricing some model in either order: the order decides its price
    first = {"model0[01]": {"input": 2.0, "output": 8.0}, "model0[02]": {"input": 1.0, "output": 4.0},
             "*": {"input": 0.5, "output": 2.0}}
    swapped = {k: first[k] for k in ("model0[02]", "model0[01]", "*")}
    out = tmp_path / "run"
    config = write_config(tmp_path / "a", dataset, url, cost="usd", prices=first, budget={"usd": 1e-6})
    stopped = RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"])
    assert stopped.exit_code == 2, stopped.output  # a budget too small for profiling: raised in place below
    held = json.loads((out / "live.json").read_text())["prices"]
    assert held[MODELS[0]] == {"input": 2.0, "output": 8.0} and held[MODELS[2]] == {"input": 1.0, "output": 4.0}
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    billed = len(endpoint.billed)
    config = write_config(tmp_path / "b", dataset, url, cost="usd", prices=swapped, budget={"usd": 1e-6})
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"])
    assert result.exit_code == 2 and result.stderr == (
        f"error: {out}: holds this run with other prices for its models ({MODELS[0]}: was {{'input': 2.0, 'output': "
        "8.0}, now {'input': 1.0, 'output': 4.0}; a model's price is its own entry, else the first pattern that "
        "matches it, so the patterns' order counts); restore the prices, or pass another --out to start a new run\n")
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before and len(endpoint.billed) == billed
    config = write_config(tmp_path / "c", dataset, url, cost="usd", prices=first, budget={"usd": 1e-6})
    assert RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"]).exit_code == 2  # the same stop
    assert "other prices" not in RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"]).stderr
    other = write_config(tmp_path / "d", dataset, url, cost="usd", prices=swapped, budget={"usd": 1e-6},
                         method="cohv-ucb", seed=7)  # another config, at other prices too: named as another config
    result = RUNNER.invoke(app, ["live", str(other), "--out", str(out), "--quiet"])
    assert result.exit_code == 2 and "holds the run of another config" in result.stderr, result.output
    marker = json.loads((out / "live.json").read_text())
    del marker["prices"]  # a folder from before live.json recorded prices: they are recorded on its next run
    (out / "live.json").write_text(json.dumps(marker))
    assert RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"]).exit_code == 2  # the same stop
    assert json.loads((out / "live.json").read_text())["prices"] == held


def test_a_price_pattern_that_prices_none_of_the_configurations_is_refused_before_any_call(tmp_path, dataset):
    """'*0*' matches every configuration's model, so a pattern below it matching model00 prices none of them."""
    config = write_config(tmp_path, dataset, "http://127.0.0.1:9/v1", cost="usd", budget={"usd": 1.0},
                          prices={"*0*": {"input": 1.0, "output": 4.0}, f"{MODELS[0][:-1]}?": {"input": 2.0,
                                                                                              "output": 8.0}})
    with pytest.raises(CabenchError, match=rf"prices.{re.escape(MODELS[0][:-1])}\?: prices none of the models, "
                                           rf"though it matches '{MODELS[0]}': the pattern '\*0\*' above it"):
        load_live(config)


#: How a stop line says another model answered (then "prices dearer" or "does not price").
ANSWERED = "was answered by another model than the one asked, which the price table "


class SwappingEndpoint(BillingEndpoint):
    """Answers every method call (after profiling's) with another model's name, as a gateway's fallback does."""

    def complete(self, body):
        response, delay = super().complete(body)
        self.seen = getattr(self, "seen", 0) + 1
        if self.seen > K * PROFILING:
            response["model"] = self.served.format(asked=response["model"])
        return response, delay


def _swapped_run(tmp_path: Path, dataset: Path, endpoint: BillingEndpoint, served: str, prices: dict,
                 ok: bool = False, out: Path | None = None) -> tuple[dict, list[dict], Path]:
    """A live run in dollars (budget $0.02) against ``endpoint`` answering as ``served`` (``{asked}``: the asked
    model's name): spend.json, the method's finished calls, and the output folder."""
    endpoint.billed, endpoint.served = [], served
    server, _ = serve_in_thread(endpoint)
    out = out or tmp_path / served.replace("{asked}", "asked")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        config = write_config(tmp_path / f"c-{out.name}", dataset, url, cost="usd", prices=prices,
                              budget={"usd": 0.02})
        spend, _ = live(config, out, ok=ok)
    finally:
        server.shutdown()
        server.server_close()
    return spend, [r for r in lines(out) if not r.get("start") and r["key"].startswith("e:")], out


def test_a_reply_naming_another_model_is_recorded_and_charged_at_the_dearer_price(tmp_path, dataset):
    """A gateway answering with another model bills at its price: the calls were charged at the asked model's, 2.7-3.1
    times under the bill, and the answering model was recorded nowhere. It is recorded; where the price table prices
    it dearer, the reply is no outcome, charged its worst case, and marked overbilled when the usage costs more than
    that at the answering model's price (the run then makes no further call)."""
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}
    prices["*"] = {"input": 500.0, "output": 2000.0}  # a dear default: a version of the asked model is not it
    for served, dear in (("big-model", True), (MODELS[0], False), ("{asked}-2024-07-18", False),
                         ("{asked}-pro", True)):  # (a version of the asked model, as asked; '-pro' another model)
        endpoint = SwappingEndpoint.load(dataset)
        spend, method, _ = _swapped_run(tmp_path, dataset, endpoint, served, prices, ok=not dear)
        assert method and all(r["served_model"] == served.format(asked=r["model"]) for r in method
                              if r["model"] != served)
        assert (f"{ANSWERED}prices dearer" in spend.get("stop_reason", "")) == dear
        if dear:  # the first swapped call: charged its worst case, no outcome, and the bill above it recorded
            first = method[0]
            assert not first["ok"] and first["charged"] == first["worst"] and "prices dearer" in first["suspect"]
            billed = endpoint.billed[K * PROFILING][1]  # the first reply naming it
            at_served = dollars(prices.get(served, prices["*"]), billed["prompt_tokens"],  # ('*' prices '-pro')
                                billed["completion_tokens"])
            assert at_served > first["worst"] and first["overbilled_cost"] == pytest.approx(at_served, rel=1e-9)
            assert "at the answering model's price" in first["overbilled"] and len(method) == 1
            assert spend["stopped_by"] == "failures" and spend["spent_usd"] <= 0.02
            assert f"{ANSWERED}prices dearer" in spend["stop_reason"], spend
        else:  # a model the table prices no dearer: recorded, charged as asked, an outcome
            assert all(r["ok"] for r in method) and spend["spent_usd"] <= 0.02


def test_a_reply_naming_a_model_the_price_table_does_not_price_stops_the_run(tmp_path, dataset):
    """A gateway's fallback to a model the price table does not price was charged at the asked model's price and
    recorded only: its bill is unknown, so the budget held only if that model was no dearer. The reply is no
    outcome, charged its worst case, and the run makes no further call, saying which model to price; resumed in
    the folder, it makes none either."""
    prices = {m: {"input": 0.5, "output": 2.0} for m in MODELS}  # no pattern: 'mystery-model' has no price
    endpoint = SwappingEndpoint.load(dataset)
    spend, method, out = _swapped_run(tmp_path, dataset, endpoint, "mystery-model", prices)
    assert len(method) == 1, method  # the first reply naming it stops the run
    first = method[0]
    assert first["served_model"] == "mystery-model" and not first["ok"] and first["charged"] == first["worst"]
    assert "does not price" in first["suspect"] and "does not price" in first["overbilled"]
    assert spend["stopped_by"] == "failures" and spend["spent_usd"] <= 0.02 and spend["overbilled_calls"] == 1
    assert spend["stop_reason"] == (  # the whole line
        f"{first['config']} on {first['instance']} {ANSWERED}does not price ({first['overbilled']}); give that "
        "model a price in the config's prices, as the provider bills it (calls.jsonl records its name as "
        "served_model), so a further call could pass the budget, and none was made"), spend
    assert first["overbilled"] == ("the reply: reported usage, by a model the price table does not price: its "
                                   "bill is unknown") and first["overbilled_kind"] == "unpriced"
    assert "usage above the worst case" not in spend["stop_reason"]  # what it says of a dearer model only
    journal, fresh = (out / "calls.jsonl").read_text(), SwappingEndpoint.load(dataset)
    again, _, _ = _swapped_run(tmp_path, dataset, fresh, "mystery-model", prices, out=out)  # resumed: no call
    assert fresh.billed == [] and (out / "calls.jsonl").read_text() == journal and again["stopped_by"] == "failures"
    assert "does not price" in again["stop_reason"] and "records its name as served_model" in again["stop_reason"]


class SwappingUnbelievedEndpoint(SwappingEndpoint):
    """Answers with another model's name, as SwappingEndpoint does, and without the usage (or with zero usage) in
    those replies."""

    def complete(self, body):
        response, delay = super().complete(body)
        if response["model"] != body["model"]:
            if self.drop:
                response.pop("usage", None)
            else:
                response["usage"] = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        return response, delay


@pytest.mark.parametrize("drop", [True, False], ids=["no usage", "zero usage"])
def test_a_reply_naming_a_dearer_or_unpriced_model_stops_the_run_even_when_its_usage_is_not_believed(
        tmp_path, dataset, drop):
    """The served model was priced only where the reply's usage was believed: a reply without usage (or with usage
    not believed) naming a dearer or unpriced model was charged its worst case at the asked model's price and the
    run went on, up to max_failures such calls, each billed at the answering model's price. Such a reply now stops
    the run as one whose usage costs more at that price does."""
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}
    for served, said in (("big-model", "prices dearer"), ("mystery-model", "does not price")):
        endpoint = SwappingUnbelievedEndpoint.load(dataset)
        endpoint.drop = drop
        spend, method, _ = _swapped_run(tmp_path, dataset, endpoint, served, prices)
        assert len(method) == 1, (served, method)  # the first such reply stops the run
        first = method[0]
        assert first["served_model"] == served and not first["ok"] and first["charged"] == first["worst"]
        assert said in first["suspect"] and first["overbilled"], first
        assert spend["stopped_by"] == "failures" and spend["overbilled_calls"] == 1 and spend["spent_usd"] <= 0.02
        assert ANSWERED in spend["stop_reason"] and served not in spend["stop_reason"], spend


def test_a_version_of_the_asked_model_with_its_own_price_is_priced_by_it(tmp_path, dataset):
    """A version of the asked model was priced as asked whatever the price table said of it, its own entry too:
    gpt-4o-2024-05-13 at $5/$15 answering for gpt-4o at $2.5/$10 was charged at gpt-4o's price. A version's own
    entry prices it; a pattern matching the asked model's name too is passed over."""
    version = f"{MODELS[0]}-2024-07-18"
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, version: {"input": 500.0, "output": 2000.0},
              "*": {"input": 500.0, "output": 2000.0}}  # (the pattern prices no version: they are priced as asked)
    spend, method, _ = _swapped_run(tmp_path, dataset, SwappingEndpoint.load(dataset), "{asked}-2024-07-18", prices)
    own = [r for r in method if r["model"] == MODELS[0]]
    assert own and not own[0]["ok"] and "prices dearer" in own[0]["suspect"] and own[0] is method[-1]
    assert all(r["ok"] for r in method[:-1])  # the other models' versions: priced as asked (the '*' passed over)
    assert f"{ANSWERED}prices dearer" in spend["stop_reason"] and spend["spent_usd"] <= 0.02


def _failing_with_another_model(endpoint: BillingEndpoint, served: str, every: int = 2, write=None):
    """A server answering one in ``every`` method calls (after profiling's) with an HTTP 500 whose body names ``served``
    and reports the usage generated, as a gateway whose fallback generated and then failed (or as ``write(reply)``
    gives the status and the body's bytes, the reply naming ``served``); the rest as ``endpoint`` does."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen = [0]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            response, _ = endpoint.complete(body)
            seen[0] += 1
            status, data = 200, json.dumps(response).encode()
            if seen[0] > K * PROFILING and seen[0] % every == every - 1:
                if write is not None:
                    status, data = write({**response, "model": served.format(asked=body["model"])})
                else:
                    data = json.dumps({"error": {"message": "upstream failed"}, "usage": response["usage"],
                                       "model": served.format(asked=body["model"])}).encode()
                    status = 500
            declared = len(data) + (1000 if status == 200 and data.startswith(b"CUT") else 0)
            data = data.removeprefix(b"CUT")  # (the body announced longer than it is sent: cut short)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(declared))
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = declared != len(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


@pytest.mark.parametrize("mode", ["reported", "worst-case"])
def test_a_failed_attempt_naming_a_dearer_or_unpriced_model_stops_the_run(tmp_path, dataset, mode):
    """A failed attempt's body was read for its usage, never its model: a 500 reporting the usage of a model 1000
    times dearer was charged at the asked model's price, under charge_failed reported and worst-case alike (a bill
    430 times the budget, and nothing said). Where such an attempt may bill more at the answering model's price
    than it was charged, or that model has no price, the run makes no further call."""
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}
    for served, said in (("big-model", "prices dearer"), ("mystery-model", "does not price"),
                         ("{asked}-2024-07-18", None)):
        endpoint = BillingEndpoint.load(dataset)
        endpoint.billed = []
        server = _failing_with_another_model(endpoint, served)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/v1"
            out = tmp_path / f"{mode}-{served.replace('{asked}', 'asked')}"
            config = write_config(tmp_path / f"c-{out.name}", dataset, url, cost="usd", prices=prices,
                                  budget={"usd": 0.02}, endpoint={
                                      "base_url": url, "timeout_s": 5, "max_retries": 4, "backoff_s": 0.0,
                                      "max_backoff_s": 0.0, "concurrency": 1, "max_failures": 50,
                                      "charge_failed": mode})
            spend, _ = live(config, out, ok=said is None)
        finally:
            server.shutdown()
            server.server_close()
        method = [r for r in lines(out) if not r.get("start") and r["key"].startswith("e:")]
        if said is None:  # a version of the asked model: priced as asked, the run goes on to its budget
            assert not [r for r in method if r.get("overbilled")] and spend["stopped_by"] != "failures"
            assert {a.get("served_model") for r in method for a in r["attempts"] if a["status"] == "http 500"} == {
                f"{m}-2024-07-18" for m in {r["model"] for r in method if len(r["attempts"]) > 1}}  # recorded
            continue
        assert len(method) == 1, (served, method)  # the call with the first such attempt stops the run
        assert method[0]["overbilled"] and spend["stopped_by"] == "failures" and spend["spent_usd"] <= 0.02, method[0]
        assert method[0]["attempts"][0]["served_model"] == served, method[0]  # the failed attempt names it
        assert f"{ANSWERED}{said}" in spend["stop_reason"] and served not in spend["stop_reason"], spend


def _at_served(outcome, served_price, mode="worst-case", latency="measured", asked=(1.0, 10.0)):
    """The charge of ``outcome`` (a call of the asked model at ``asked`` $/M tokens, prompt and completion, bound
    by 100 prompt, 50 completion, 120 in all tokens) with every other model it names priced at ``served_price``
    ($/M tokens, or None: unpriced)."""
    from cabench.live.charges import at_served_price, charge
    from cabench.live.tariff import Tariff
    from cabench.live.tasks import Bound

    rate, bound = Tariff("usd", asked[0] / 1e6, asked[1] / 1e6), Bound(100.0, 50.0, 120.0)
    served = None if served_price is None else Tariff("usd", served_price[0] / 1e6, served_price[1] / 1e6)
    worst = rate.worst(bound)
    paid, _ = charge(outcome, 50, worst, rate, mode, latency, bound)
    priced = at_served_price(paid, outcome, rate, worst, bound,
                             lambda m: rate if m in (None, "asked") else served)
    return priced, rate, worst, bound


def test_a_reply_or_attempt_by_another_model_is_billed_by_what_it_reports_at_that_price():
    """One rule for replies and failed attempts naming another model: billed by their reported usage (a count above
    zero), else by their worst case, at the answering model's price; charged their worst case where that fits the
    worst case the call was admitted at, else overbilled; unpriced, overbilled. Each overbilled attempt's reported
    cost is counted once, at the answering model's price."""
    from cabench.live.client import Attempt, Outcome

    usage = {"prompt_tokens": 30, "completion_tokens": 20}
    # a model dearer on prompt tokens only, replying without usage: its worst case there ($1.5 x 100 + $2 x 20 per
    # M: the split that costs most at its price) is below the $0.00057 admitted: charged that, no outcome, no stop
    silent = Outcome(True, reply="4", usage=None, served_model="other", attempts=[Attempt("ok", 0.1)])
    paid, rate, worst, bound = _at_served(silent, (1.5, 2.0))
    assert worst == (70.0, 50.0) and rate.cost(*worst) == pytest.approx(0.00057)
    assert paid.usage is None and paid.charged == (worst,) and paid.overbilled == "" and "prices dearer" in paid.suspect
    # a model dearer on prompt tokens, its worst case at its price is the other split (100 prompt, 20 completion)
    paid, *_ = _at_served(silent, (6.0, 2.0))
    assert paid.overbilled_kind == "dearer" and paid.overbilled == (
        "the reply: no usage reported, its worst case costing $0.00064 at the answering model's price, above the "
        "worst case $0.00057") and paid.billed_over == 0.0  # (an estimate is no reported usage)
    # usage believed, no latency reported (latency: reported): priced by its usage, within the worst case
    believed = Outcome(True, reply="4", usage=usage, served_model="other", attempts=[Attempt("ok", 0.1)])
    paid, *_ = _at_served(believed, (2.0, 20.0), latency="reported")
    assert paid.usage is None and paid.overbilled == "" and paid.charged == (worst,)
    # a failed attempt within its worst case at that price: charged its worst case (reported: its usage before)
    failed = Outcome(True, reply="4", usage=usage, attempts=[Attempt("http 500", 0.1, True, usage, "other"),
                                                              Attempt("ok", 0.1)])
    paid, *_ = _at_served(failed, (2.0, 20.0), mode="reported")
    assert paid.charged == (worst, (30.0, 20.0)) and paid.overbilled == "" and paid.usage == (30.0, 20.0)
    # zero usage is no count to bill by (worst-case charges the attempt its worst case): the worst case at that
    # price, above the admitted one; under reported, the attempt is charged the nothing it reports
    zero = Outcome(True, reply="4", usage=usage, attempts=[
        Attempt("http 500", 0.1, True, {"prompt_tokens": 0, "completion_tokens": 0}, "other"), Attempt("ok", 0.1)])
    paid, *_ = _at_served(zero, (1000.0, 1000.0))
    assert paid.overbilled_kind == "dearer" and paid.overbilled.startswith("a failed attempt (http 500): no usage")
    paid, *_ = _at_served(zero, (1000.0, 1000.0), mode="reported")
    assert paid.overbilled == "" and paid.charged[0] == (0.0, 0.0)
    # two attempts above it, one of them above the asked worst case already: each counted once at that price
    big = {"prompt_tokens": 100, "completion_tokens": 50}
    twice = Outcome(False, error="HTTP 500", attempts=[Attempt("http 500", 0.1, True, big, "other"),
                                                        Attempt("http 500", 0.1, True, usage, "other")])
    paid, *_ = _at_served(twice, (1000.0, 1000.0), mode="reported")
    assert paid.billed_over == pytest.approx((150 + 50) * 1000.0 / 1e6) and paid.charged == (worst, worst)
    # a reply above the asked worst case from a dearer model: said and counted at the answering model's price
    over = Outcome(True, reply="4", usage=big, served_model="other", attempts=[Attempt("ok", 0.1)])
    paid, *_ = _at_served(over, (10.0, 100.0))
    assert paid.overbilled_kind == "dearer" and paid.billed_over == pytest.approx((100 * 10 + 50 * 100) / 1e6)
    # unpriced: overbilled, nothing counted; under none a failed attempt is charged nothing, and stays so
    paid, *_ = _at_served(over, None)
    assert paid.overbilled_kind == "unpriced" and paid.usage is None and paid.charged == (worst,)
    assert paid.billed_over == 0.0  # (its usage above the asked worst case: no bill at the asked price counted)
    paid, *_ = _at_served(Outcome(False, error="HTTP 500", attempts=[Attempt("http 500", 0.1, True, big, "other")]),
                          None, mode="none")
    assert paid.overbilled == "" and paid.charged == ((0.0, 0.0),)
    # the asked model (or a version priced as asked), and a cheaper one: unchanged
    for named, price in (("asked", None), ("other", (0.5, 5.0))):
        same = Outcome(True, reply="4", usage=usage, served_model=named, attempts=[Attempt("ok", 0.1)])
        paid, *_ = _at_served(same, price)
        assert paid.usage == (30.0, 20.0) and paid.overbilled == "" and paid.suspect == ""


def test_a_version_is_priced_by_its_own_entry_in_any_case_and_by_a_pattern_for_versions_only(tmp_path, dataset):
    """A version of the asked model is priced as asked, except by an entry of its own name (matched as versions are:
    in any case, spaces around) or by a pattern matching it but not the asked model (written for versions); a
    default pattern matching both (``*``, ``model0*``) prices it as asked."""
    from types import SimpleNamespace

    from cabench.live.caller import Caller
    from cabench.live.tariff import tariff

    asked = MODELS[0]
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS},
              f"{asked}-2024-05-13": {"input": 5.0, "output": 15.0}, "model0*": {"input": 9.0, "output": 9.0},
              "*-2024-08-*": {"input": 4.0, "output": 12.0},  # (after a pattern matching the asked model too)
              "*": {"input": 7.0, "output": 7.0}}
    cfg = load_live(write_config(tmp_path, dataset, "http://127.0.0.1:9/v1", cost="usd", prices=prices,
                                 budget={"usd": 1.0}))
    rate = tariff(cfg.terms, asked)
    caller = SimpleNamespace(cfg=cfg)
    for served, dollars in ((f"{asked}-2024-05-13", (5.0, 15.0)), (f" {asked.upper()}-2024-05-13 ", (5.0, 15.0)),
                            (f"{asked}-2024-08-06", (4.0, 12.0)), (f" {asked.upper()}-2024-08-06", (4.0, 12.0)),
                            (f"{asked}-2024-07-18", (0.5, 2.0)),
                            (asked.upper(), (0.5, 2.0)), (None, (0.5, 2.0)), (f"{asked}-pro", (9.0, 9.0)),
                            ("other-model", (7.0, 7.0))):
        got = Caller._priced(caller, served, asked, rate)
        assert (got.prompt * 1e6, got.completion * 1e6) == pytest.approx(dollars), served


def test_a_call_whose_failed_attempt_named_a_dearer_or_unpriced_model_is_not_asked_again(tmp_path, dataset):
    """The answering model was priced once the call had ended: a gateway failing every attempt with a model 1000
    times dearer was asked all max_retries + 1 times in one call, each retry admitted at the asked model's price
    ($1.34 reported against a $0.02 budget). The retry is refused where the attempt before it named a model whose
    bill the admitted worst case may not cover."""
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}
    for served in ("big-model", "mystery-model", "{asked}-2024-07-18"):
        endpoint = BillingEndpoint.load(dataset)
        endpoint.billed = []
        server = _failing_with_another_model(endpoint, served, every=1)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/v1"
            out = tmp_path / served.replace("{asked}", "asked")
            config = write_config(tmp_path / f"c-{out.name}", dataset, url, cost="usd", prices=prices,
                                  budget={"usd": 0.02}, endpoint={
                                      "base_url": url, "timeout_s": 5, "max_retries": 4, "backoff_s": 0.0,
                                      "max_backoff_s": 0.0, "concurrency": 1, "max_failures": 3,
                                      "charge_failed": "reported"})
            spend, _ = live(config, out, ok=False)
        finally:
            server.shutdown()
            server.server_close()
        method = [r for r in lines(out) if not r.get("start") and r["key"].startswith("e:")]
        if served.startswith("{asked}"):  # a version priced as asked: retried as any failed attempt is
            assert len(method[0]["attempts"]) == 5 and spend["stopped_by"] == "failures", method[0]
            continue
        assert len(method) == 1 and len(method[0]["attempts"]) == 1, method  # no retry, no further call
        assert method[0]["overbilled"] and spend["stopped_by"] == "failures", method[0]
        reported = endpoint.billed[K * PROFILING][1]  # the one attempt made
        bill = dollars(prices["big-model"], reported["prompt_tokens"], reported["completion_tokens"])
        assert spend["overbilled_reported_usd"] == (pytest.approx(bill, rel=1e-9) if served == "big-model" else 0.0)


class SwappingUnreadEndpoint(SwappingEndpoint):
    """Answers with another model's name, as SwappingEndpoint does, in a reply cabench cannot read (no choices, as a
    content filter answers), its usage reported."""

    def complete(self, body):
        response, delay = super().complete(body)
        if response["model"] != body["model"]:
            response["choices"] = []
        return response, delay


def test_an_unreadable_reply_naming_a_dearer_model_is_priced_at_its_price(tmp_path, dataset):
    """A 200 that could not be read (no choices) was charged the asked model's worst case with its model and usage
    thrown away: a model 1000 times dearer billed 67 times the budget over five such calls, and re-running to
    resume paid five more each time. Its model and usage are read as an error body's are, and it stops the run
    as any reply billed beyond its worst case at the answering model's price."""
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}
    endpoint = SwappingUnreadEndpoint.load(dataset)
    spend, method, _ = _swapped_run(tmp_path, dataset, endpoint, "big-model", prices)
    assert len(method) == 1 and method[0]["attempts"][0]["status"] == "malformed", method  # stopped at once
    first, reported = method[0], endpoint.billed[K * PROFILING][1]
    bill = dollars(prices["big-model"], reported["prompt_tokens"], reported["completion_tokens"])
    assert first["overbilled_kind"] == "dearer" and first["attempts"][0]["served_model"] == "big-model"
    assert spend["overbilled_reported_usd"] == pytest.approx(bill, rel=1e-9) and spend["spent_usd"] <= 0.02
    assert f"{ANSWERED}prices dearer" in spend["stop_reason"] and "big-model" not in spend["stop_reason"], spend


def test_a_version_of_another_priced_model_is_priced_as_that_model(tmp_path, dataset):
    """A dated version of another configuration's dearer model (model03-2024-07-18 where model03 is priced $5/$20)
    fell to the price table's default pattern ($0.5/$2): 853 replies taken as answers, a bill 9.3 times the budget.
    A version of a model the table prices by name is priced as that model."""
    from types import SimpleNamespace

    from cabench.live.caller import Caller
    from cabench.live.tariff import tariff

    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, MODELS[3]: {"input": 5.0, "output": 20.0},
              "*": {"input": 0.5, "output": 2.0}}
    cfg = load_live(write_config(tmp_path, dataset, "http://127.0.0.1:9/v1", cost="usd", prices=prices,
                                 budget={"usd": 1.0}))
    caller, rate = SimpleNamespace(cfg=cfg), tariff(cfg.terms, MODELS[0])
    for served, dollars_per_m in ((f"{MODELS[3]}-2024-07-18", (5.0, 20.0)), (f"{MODELS[3].upper()}-v2", (5.0, 20.0)),
                                  (f"{MODELS[3]}-pro", (0.5, 2.0)), (f"{MODELS[0]}-2024-07-18", (0.5, 2.0))):
        got = Caller._priced(caller, served, MODELS[0], rate)
        assert (got.prompt * 1e6, got.completion * 1e6) == pytest.approx(dollars_per_m), served


def test_the_calls_in_flight_when_a_call_is_overbilled_are_not_asked_again(tmp_path, dataset):
    """An overbilled call stopped new calls, but the calls in flight went on retrying: with four at once, three
    retries started after the stop, each answered by the dearer model (a bill 22 times the budget). Once a call is
    overbilled, each call in flight ends after the attempt under way. The endpoint holds the other calls' failed
    attempts until the journal records the overbilled call (so that they are in flight then); none is asked
    again."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}
    endpoint, out, seen, lock = BillingEndpoint.load(dataset), tmp_path / "out", [0], threading.Lock()
    endpoint.billed, gave_up = [], []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                seen[0] += 1
                n = seen[0]
            response, _ = endpoint.complete(body)
            status = 200
            if n == K * PROFILING + 1:  # the first method call: the dearer model, at once
                response["model"] = "big-model"
            elif n > K * PROFILING:  # the others: a failure, held until the overbilled call is journaled
                for _ in range(600):  # (a state awaited, its bound only so that a failure cannot hang the suite)
                    if (out / "calls.jsonl").is_file() and '"overbilled"' in (out / "calls.jsonl").read_text():
                        break
                    threading.Event().wait(0.05)
                else:
                    gave_up.append(n)
                status, response = 500, {"error": {"message": "upstream failed"}}
            data = json.dumps(response).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        config = write_config(tmp_path / "c", dataset, url, cost="usd", prices=prices, budget={"usd": 0.05},
                              setting="psi", method="uniform", endpoint={
                                  "base_url": url, "timeout_s": 60, "max_retries": 4, "backoff_s": 0.0,
                                  "max_backoff_s": 0.0, "concurrency": 4, "max_failures": 50})
        spend, _ = live(config, out, ok=False)
    finally:
        server.shutdown()
        server.server_close()
    method = [r for r in lines(out) if not r.get("start") and r["key"].startswith("e:")]
    assert sum(1 for r in method if r.get("overbilled")) == 1 and len(method) == 4, method  # the 3 held: failed
    assert not gave_up  # the held calls were let go once the journal recorded the overbilled call
    assert all(len(r["attempts"]) == 1 for r in method), method  # none of them asked again
    assert spend["stopped_by"] == "failures" and f"{ANSWERED}prices dearer" in spend["stop_reason"]


@pytest.mark.parametrize("how", ["stream", "byte order mark", "two values", "too large", "cut short"])
def test_a_reply_that_is_no_json_object_naming_a_dearer_model_stops_the_run(tmp_path, dataset, how):
    """A 200 whose body is no JSON cabench reads (a stream's data lines, a byte order mark before it, a second value
    after it; too large, or cut short) hid the dearer model that wrote it: charged the asked model's worst case,
    five such replies to a stop for failures, a bill 67 times the budget, and more on each resume. The model such
    a body names is read from its text (the first 64 KiB that arrived), so the reply is priced at that model."""
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}
    bodies = {"stream": lambda r: b"data: " + json.dumps(r).encode() + b"\n\ndata: [DONE]\n\n",
              "byte order mark": lambda r: "\ufeff".encode() + json.dumps(r).encode(),
              "two values": lambda r: json.dumps(r).encode() + b" {}",
              "too large": lambda r: json.dumps({**r, "padding": "x" * 9000}).encode(),  # max_reply_bytes 8192
              "cut short": lambda r: b"CUT" + json.dumps(r).encode()[:-20]}
    endpoint = BillingEndpoint.load(dataset)
    endpoint.billed = []
    server = _failing_with_another_model(endpoint, "big-model", every=1, write=lambda r: (200, bodies[how](r)))
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        config = write_config(tmp_path / "c", dataset, url, cost="usd", prices=prices, budget={"usd": 0.02},
                              endpoint={"base_url": url, "timeout_s": 5, "max_retries": 4, "backoff_s": 0.0,
                                        "max_backoff_s": 0.0, "concurrency": 1, "max_failures": 50,
                                        "max_reply_bytes": 8192})
        spend, _ = live(config, tmp_path / "out", ok=False)
    finally:
        server.shutdown()
        server.server_close()
    method = [r for r in lines(tmp_path / "out") if not r.get("start") and r["key"].startswith("e:")]
    status = how if how in ("too large", "cut short") else "malformed"
    assert len(method) == 1 and method[0]["attempts"][0]["status"] == status, method  # stopped at once
    assert method[0]["overbilled_kind"] == "dearer" and method[0]["attempts"][0]["served_model"] == "big-model"
    assert f"{ANSWERED}prices dearer" in spend["stop_reason"] and spend["spent_usd"] <= 0.02, spend


def test_usage_above_the_worst_case_in_an_unread_reply_is_overbilled_whatever_charge_failed_says():
    """An unread 200 is billed under every charge_failed, but its usage above the worst case was looked for only
    outside none, and a dearer or unpriced model's cost there was then taken off a sum that had not counted it
    (overbilled_reported_usd -4.00005)."""
    from cabench.live.charges import charge
    from cabench.live.client import Attempt, Outcome

    over = {"prompt_tokens": 100, "completion_tokens": 50}
    unread = Outcome(False, error="malformed", attempts=[Attempt("malformed", 0.1, True, over)])
    for mode in ("none", "reported", "worst-case"):
        paid, rate, worst, _ = _at_served(unread, None, mode=mode)  # (no model named: as asked)
        assert paid.overbilled_kind == "usage" and paid.billed_over == pytest.approx(rate.cost(100, 50)), mode
        assert paid == charge(unread, 50, worst, rate, mode)[0]
    named = Outcome(False, error="malformed", attempts=[Attempt("malformed", 0.1, True, over, "other")])
    for mode in ("none", "reported", "worst-case"):
        paid, *_ = _at_served(named, None, mode=mode)
        assert paid.overbilled_kind == "unpriced" and paid.billed_over == 0.0, mode


def test_a_model_named_by_other_json_than_text_is_priced_as_a_model_without_a_price(tmp_path, dataset):
    """A reply naming its model as a list or an object (["big-model"]) was read as naming none, so priced as asked:
    47 calls of a model 1000 times dearer, a bill 387 times the budget. What is no text naming a model, and not
    absent (null), is a model cabench cannot price, whatever default pattern the price table has: the run stops at
    the first such reply."""
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}

    class Listing(SwappingEndpoint):
        def complete(self, body):
            response, delay = super().complete(body)
            if response["model"] != body["model"]:
                response["model"] = self.named
            return response, delay

    prices["*"] = {"input": 0.5, "output": 2.0}  # a cheap default: a list is no model it can price
    for named in (["big-model"], {"id": "big-model"}, 7):
        endpoint = Listing.load(dataset)
        endpoint.named = named
        spend, method, _ = _swapped_run(tmp_path, dataset, endpoint, "big-model", prices,
                                        out=tmp_path / type(named).__name__)
        assert len(method) == 1 and method[0]["overbilled_kind"] == "unpriced", (named, method)
        assert method[0]["served_model"] == json.dumps(named) and spend["spent_usd"] <= 0.02


def test_an_error_page_quoting_a_model_names_none():
    """A proxy's error page (no JSON object) quoting an example request, {"model": "gpt-4o", ...}, was taken as a
    reply by a model the price table does not price, and the folder made no call again. Only a reply that arrived
    (a 200 cabench cannot read) is searched for the model its text names; an error body names one as a JSON
    object."""
    from cabench.live.client import _failed_body

    page = b'<html><body>502 Bad Gateway. Example: {"model": "gpt-4o", "messages": []}</body></html>'
    assert _failed_body(page) == (None, None)
    assert _failed_body(page, search=True) == (None, "gpt-4o")  # a 200's body: the model its text names
    assert _failed_body(b'{"model": "big-model", "usage": {"prompt_tokens": 1}}') == ({"prompt_tokens": 1},
                                                                                     "big-model")


def test_under_charge_failed_none_a_failed_attempt_by_a_dearer_model_is_asked_again(tmp_path, dataset):
    """charge_failed: none says failed attempts cost nothing, and such an attempt is charged nothing; its retry was
    refused all the same (a call lost where the retry would have answered). It is asked again."""
    prices = {**{m: {"input": 0.5, "output": 2.0} for m in MODELS}, "big-model": {"input": 500.0, "output": 2000.0}}
    endpoint = BillingEndpoint.load(dataset)
    endpoint.billed = []
    server = _failing_with_another_model(endpoint, "big-model")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        config = write_config(tmp_path / "c", dataset, url, cost="usd", prices=prices, budget={"usd": 0.02},
                              endpoint={"base_url": url, "timeout_s": 5, "max_retries": 4, "backoff_s": 0.0,
                                        "max_backoff_s": 0.0, "concurrency": 1, "max_failures": 50,
                                        "charge_failed": "none"})
        spend, _ = live(config, tmp_path / "out")
    finally:
        server.shutdown()
        server.server_close()
    method = [r for r in lines(tmp_path / "out") if not r.get("start") and r["key"].startswith("e:")]
    retried = [r for r in method if len(r["attempts"]) > 1]
    assert retried and all(r["ok"] and r["attempts"][0]["served_model"] == "big-model" for r in retried), method
    assert not any(r.get("overbilled") for r in method) and spend["stopped_by"] != "failures"
