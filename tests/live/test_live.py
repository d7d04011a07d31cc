"""``cabench serve``, ``live`` and ``collect`` end to end on 127.0.0.1 (no other network)."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.data.dataset import load_dataset
from cabench.errors import CabenchError
from cabench.live.serve import ReplayEndpoint, parse_faults, serve_in_thread
from cabench.online import OnlineMethod
from cabench.online.reference import reference_online
from cabench.problem import replay_problem
from cabench.psi import PsiMethod
from cabench.psi.reference import reference_psi
from cabench.streams import stream_keys
from tests.conftest import spread_logs, wait_for, write_dataset
from tests.live.hostile import ClientStop

pytest.importorskip("httpx")
RUNNER = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("data") / "six", spread_logs(6, 80, seed=3),
                         split={"profiling_size": 10, "seed": 0})


@pytest.fixture
def server(dataset):
    def start(**options):
        endpoint = ReplayEndpoint.load(dataset, **options)
        srv, _ = serve_in_thread(endpoint)
        started.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/v1", endpoint
    started: list = []
    yield start
    for srv in started:
        srv.shutdown()
        srv.server_close()


def live_config(tmp_path: Path, dataset: Path, base_url: str, **extra) -> Path:
    raw = {"name": "six_live", "task": {"kind": "replay", "dataset": str(dataset)},
           "configurations_from": str(dataset),
           "endpoint": {"base_url": base_url, "timeout_s": 5, "max_retries": 12, "backoff_s": 0.001,
                        "max_backoff_s": 0.01, "concurrency": 1},
           "setting": "online", "method": "cohv-ucb", "budget_tokens": 30000, "profiling": {"instances": 8},
           "latency": "reported", "seed": 0, **extra}
    path = tmp_path / f"{raw['name']}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def run_live(config: Path, out: Path, *extra: str):
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet", *extra])
    assert result.exit_code == 0, result.output
    return json.loads((out / "spend.json").read_text()), json.loads((out / "decision.json").read_text())


def journal(out: Path, starts: bool = False) -> list[dict]:
    """The finished calls of a run's journal (with ``starts``, the attempt starts too)."""
    lines = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in lines if starts or not r.get("start")]


def test_live_online_within_budget_and_describable(tmp_path, dataset, server):
    url, endpoint = server()
    spend, decision = run_live(live_config(tmp_path, dataset, url), tmp_path / "run")
    assert spend["spent_tokens"] <= spend["budget_tokens"] == 30000
    assert spend["calls"] == endpoint.requests and spend["failed_attempts"] == 0
    assert spend["profiling_tokens"] == pytest.approx(sum(r["tokens"] for r in journal(tmp_path / "run")
                                                          if r["key"].startswith("p:")))
    names = set(pd.read_csv(dataset / "logs.csv.gz")["config_id"])
    assert decision["configuration"] in names and set(decision["estimates"]) == names
    described = RUNNER.invoke(app, ["data", "describe", str(tmp_path / "run"), "--json"])
    assert described.exit_code == 0, described.output
    assert json.loads(described.stdout)["K"] == 6 and json.loads(described.stdout)["surrogate"] is False
    assert decision["surrogate"] is False


@pytest.mark.parametrize("said", [True, False], ids=["dataset.yaml says so", "a copy said to be real"])
def test_a_live_run_on_surrogate_answers_says_so_in_its_decision_and_its_output(tmp_path, said):
    """`cabench live` against `cabench serve` of the shipped surrogate logs: decision.json, read on its own, says its
    answers were surrogate, and so does the command's output (the run's dataset.yaml already did); also where the
    task replays a copy of them whose dataset.yaml calls them real."""
    from cabench.data.io import write_metadata

    ds = ROOT / "data" / "piqa"
    if not said:
        ds = tmp_path / "mine"
        ds.mkdir()
        (ds / "logs.csv.gz").write_bytes((ROOT / "data" / "piqa" / "logs.csv.gz").read_bytes())
        write_metadata({"name": "mine", "description": "ours", "provenance": "ours", "surrogate": False,
                        "licence": "CC0-1.0"}, ds / "dataset.yaml")
    ids = list(pd.unique(pd.read_csv(ds / "logs.csv.gz", usecols=["config_id"])["config_id"]))[::33][:4]
    srv, _ = serve_in_thread(ReplayEndpoint.load(ds))
    try:
        config = tmp_path / "piqa_live.yaml"
        config.write_text(yaml.safe_dump({
            "name": "piqa_four", "task": {"kind": "replay", "dataset": str(ds)}, "configurations_from": str(ds),
            "arms": {"config_ids": ids}, "setting": "online", "method": "cohv-ucb", "budget_tokens": 20000,
            "profiling": {"instances": 4}, "latency": "reported", "seed": 0,
            "endpoint": {"base_url": f"http://127.0.0.1:{srv.server_address[1]}/v1", "concurrency": 2}}))
        result = RUNNER.invoke(app, ["live", str(config), "--out", str(tmp_path / "run"), "--quiet"])
    finally:
        srv.shutdown()
        srv.server_close()
    assert result.exit_code == 0, result.output
    decision = json.loads((tmp_path / "run" / "decision.json").read_text())
    assert decision["surrogate"] is True and decision["configuration"] in ids
    assert result.stdout.splitlines()[-2] == (
        f"the endpoint replayed the SURROGATE logs of {ds}: surrogate logs calibrated to the paper's published "
        "statistics (not the paper's data), not real model outputs")


@pytest.mark.parametrize("again", [0, 2], ids=["once", "twice more while waiting"])
def test_an_interrupted_run_leaves_spend_json_saying_what_it_paid(tmp_path, dataset, server, monkeypatch, again):
    """Ctrl-C or SIGTERM after profiling: spend.json says the run was interrupted and what the journal charged (a
    resumed run interrupted kept the spend.json of the run before it, with fewer calls and tokens). A further
    Ctrl-C or SIGTERM while the calls in flight are waited for skipped spend.json; it is held off now."""
    import signal

    from cabench.live import session
    from cabench.live.caller import Caller

    url, _ = server()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    drain, pressed, waited = Caller.drain, [], []

    def pressed_again(self):  # while the stopping run waits for its calls in flight, ``again`` more signals arrive
        if self.stopping.is_set() and not waited:  # set: the calls in flight make no further attempt
            waited.append(True)
            for sig in (signal.SIGINT, signal.SIGTERM)[:again]:
                pressed.append(sig)
                os.kill(os.getpid(), sig)
        return drain(self)

    monkeypatch.setattr(session, "_method", interrupted)
    monkeypatch.setattr(Caller, "drain", pressed_again)
    result = RUNNER.invoke(app, ["live", str(live_config(tmp_path, dataset, url)), "--out", str(tmp_path / "run"),
                                 "--quiet"])
    assert result.exit_code == 130, result.output
    spend = json.loads((tmp_path / "run" / "spend.json").read_text())
    assert spend["stopped_by"] == "interrupted" and spend["calls"] == len(journal(tmp_path / "run")) > 0
    assert spend["spent_tokens"] == pytest.approx(sum(r["charged"] for r in journal(tmp_path / "run")))
    assert len(pressed) == again and waited == [True]
    paid = f"{spend['spent_tokens']:,.0f} tokens of the budget's {spend['budget_tokens']:,.0f} tokens"
    assert result.stderr == (f"interrupted: {spend['calls']} calls answered in this folder ({spend['calls']} made by "
                             f"this run), {paid} paid, as {tmp_path / 'run' / 'spend.json'} says; run the same "
                             "command again to resume: no call is paid twice\n"), result.stderr


def test_dataset_yaml_names_every_endpoint_called_and_only_those(tmp_path, dataset, server, monkeypatch):
    """A run interrupted after profiling and resumed against another endpoint names both, in the order called; a
    finished run re-run against a third calls nothing and changes neither the endpoints nor the date."""
    from cabench.live import session

    (first, _), (second, _), (third, idle) = server(), server(), server()
    config, out = live_config(tmp_path, dataset, first), tmp_path / "run"
    method = session._method

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "_method", interrupted)
    assert RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"]).exit_code == 130
    monkeypatch.setattr(session, "_method", method)

    def provenance() -> dict:
        return yaml.safe_load((out / "dataset.yaml").read_text())["provenance"]

    assert provenance()["endpoint"] == first and "endpoints" not in provenance()
    run_live(config, out, "--base-url", second)
    called = provenance()
    assert called["endpoint"] == first and called["endpoints"] == [first, second]
    meta = yaml.safe_load((out / "dataset.yaml").read_text())  # the calls dated long ago: a re-run must keep the date
    meta["provenance"]["date"] = called["date"] = "2000-01-01T00:00:00Z"
    (out / "dataset.yaml").write_text(yaml.safe_dump(meta))
    spend, _ = run_live(config, out, "--base-url", third)
    assert spend["calls_made_this_run"] == 0 and idle.requests == 0 and provenance() == called


def test_a_run_that_ends_without_a_decision_leaves_no_earlier_one(tmp_path, dataset, server, monkeypatch):
    """An interrupted run wrote spend.json and kept the decision.json an earlier run in the folder wrote: the two
    described different runs (31 pulls in the decision, 62 method calls in the journal)."""
    from cabench.live import session

    url, _ = server()
    config, out = live_config(tmp_path, dataset, url), tmp_path / "run"
    assert RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"]).exit_code == 0
    assert (out / "decision.json").is_file()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(session, "_method", interrupted)
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"])
    assert result.exit_code == 130, result.output
    assert json.loads((out / "spend.json").read_text())["stopped_by"] == "interrupted"
    assert not (out / "decision.json").exists()


@pytest.mark.parametrize("change", ["instances", "raises"])
def test_a_rerun_refused_before_any_call_leaves_a_finished_run_as_it_was(tmp_path, dataset, server, monkeypatch,
                                                                          change):
    """A finished run's method edited, then the same command again: refused, as the folder holds another run, and
    the refusal removed the finished run's decision.json and wrote spend.json anew as stopped by an error, though
    no call was made. So did a method that raises on its first decision. Both leave every file as it was now."""
    from cabench.live import session

    url, _ = server()
    config, out = live_config(tmp_path, dataset, url), tmp_path / "run"
    assert RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"]).exit_code == 0
    before = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
    assert {"decision.json", "spend.json", "calls.jsonl", "logs.csv"} <= set(before)
    if change == "instances":  # the method's calls ask other instances than the journal's: another run
        stream = session._stream

        def other_order(cfg, ids):
            order = stream(cfg, ids)
            return lambda arm, count: (len(ids) - 1 - order(arm, count)[0], order(arm, count)[1])
        monkeypatch.setattr(session, "_stream", other_order)
    else:
        def raises(*args, **kwargs):
            raise CabenchError("methods: mine raised ValueError: boom")
        monkeypatch.setattr(session, "_method", raises)
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert ("this folder holds another run (its method, the method's code or its config changed since): restore "
            "what changed to resume the calls paid here, or pass another --out to run anew" if change == "instances"
            else "boom") in result.stderr
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()} == before
    if change == "raises":  # a spend.json short of the journal's charges (a run killed before writing it) is
        spend = json.loads(before["spend.json"])  # written anew, saying every charge
        (out / "spend.json").write_text(json.dumps({**spend, "spent_tokens": spend["spent_tokens"] - 50}))
        assert RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"]).exit_code == 2
        again = json.loads((out / "spend.json").read_text())
        assert again["spent_tokens"] == spend["spent_tokens"] and again["stopped_by"] == "error"
        assert not (out / "decision.json").exists()


def test_the_same_config_reached_by_another_path_resumes_its_folder(tmp_path, dataset, server, monkeypatch):
    """A config whose task.dataset is relative, run again by another spelling of its path (from another folder, or
    absolute), was refused as "another config" naming the same file, and told to start anew: paying again for
    every call made."""
    url, _ = server()
    folder = tmp_path / "cfg"
    folder.mkdir()
    config = live_config(folder, dataset, url)
    raw = yaml.safe_load(config.read_text())
    raw["task"]["dataset"] = raw["configurations_from"] = os.path.relpath(dataset, folder)
    config.write_text(yaml.safe_dump(raw))
    out = tmp_path / "run"
    monkeypatch.chdir(tmp_path)
    first = RUNNER.invoke(app, ["live", "cfg/six_live.yaml", "--out", str(out), "--quiet"])
    assert first.exit_code == 0, first.output
    before = (out / "decision.json").read_bytes()
    for where, spelt in ((folder, "six_live.yaml"), (tmp_path / "run", str(config))):
        monkeypatch.chdir(where)
        again = RUNNER.invoke(app, ["live", spelt, "--out", str(out), "--quiet"])
        assert again.exit_code == 0, again.output
        assert json.loads((out / "spend.json").read_text())["calls_made_this_run"] == 0
        assert (out / "decision.json").read_bytes() == before
    from cabench.live.config import load_live
    from cabench.live.identity import config_digest

    monkeypatch.chdir(tmp_path)  # a folder keyed as before, by the task's paths as given, resumes too
    marker = json.loads((out / "live.json").read_text())
    legacy = config_digest(load_live("cfg/six_live.yaml"), as_given=True)
    assert legacy != marker["config_digest"]
    (out / "live.json").write_text(json.dumps({**marker, "config_digest": legacy}))
    assert RUNNER.invoke(app, ["live", "cfg/six_live.yaml", "--out", str(out), "--quiet"]).exit_code == 0
    assert json.loads((out / "live.json").read_text())["config_digest"] == marker["config_digest"]


@pytest.mark.parametrize("setting", ["online", "psi"])
def test_pulls_equal_the_replay_engines_on_its_streams(tmp_path, dataset, server, setting):
    """Live on the replay engine's instance sequence makes the replay engine's pulls."""
    url, _ = server()
    rho = 16.0 if setting == "online" else 12.0
    method = "cohv-ucb" if setting == "online" else "copsi"
    config = live_config(tmp_path, dataset, url, setting=setting, method=method, profiling="dataset-split",
                         rho=rho, instance_order="replay", repetition=3, seed=5, budget_tokens=None)
    raw = yaml.safe_load(config.read_text())
    del raw["budget_tokens"]
    config.write_text(yaml.safe_dump(raw))
    spend, decision = run_live(config, tmp_path / "run")
    ds = load_dataset(dataset)
    problem = replay_problem(ds, np.arange(ds.n_arms))
    keys = stream_keys(5, np.array([3]), problem.arm_ids)[0]
    names = list(problem.arm_names)
    calls = [r for r in journal(tmp_path / "run") if r["key"].startswith("e:")]
    live_arms = [names.index(r["config"]) for r in sorted(calls, key=lambda r: int(r["key"][2:]))]
    assert spend["spent_tokens"] <= spend["budget_tokens"]
    if setting == "online":
        ref = reference_online(problem, OnlineMethod("cohv-ucb"), rho, keys)
        if spend["stopped_by"] == "method":
            assert live_arms == ref["arms"]
        else:  # the hard token budget ended the run first: the same pulls up to there
            assert spend["stopped_by"] == "token budget" and live_arms == ref["arms"][:len(live_arms)]
            assert len(ref["arms"]) - len(live_arms) <= 3
        assert len(live_arms) > 50
    else:
        ref = reference_psi(problem, PsiMethod("copsi"), rho, keys)
        assert spend["stopped_by"] == "method"
        assert sorted(decision["pareto_set"]) == sorted(names[i] for i in ref["returned"])
        assert decision["removed"] == [names[i] for i in ref["removed"]]
        assert decision["samples"] == {names[i]: n for i, n in enumerate(ref["samples"])}


@pytest.mark.slow
def test_faults_are_retried_recorded_and_change_nothing(tmp_path, dataset, server):
    url, _ = server()
    clean_spend, clean = run_live(live_config(tmp_path, dataset, url), tmp_path / "clean")
    faulty_url, endpoint = server(faults=parse_faults("429=0.2,500=0.05,timeout=0.01"), hold_s=1.0, seed=1)
    config = live_config(tmp_path, dataset, faulty_url, endpoint={
        "base_url": faulty_url, "timeout_s": 0.5, "max_retries": 12, "backoff_s": 0.001, "max_backoff_s": 0.01,
        "concurrency": 1, "charge_failed": "none"})  # this endpoint bills no failed attempt
    spend, decision = run_live(config, tmp_path / "faulty")
    assert decision == clean
    assert spend["spent_tokens"] == clean_spend["spent_tokens"] and spend["calls"] == clean_spend["calls"]
    statuses = [a["status"] for r in journal(tmp_path / "faulty") for a in r["attempts"]]
    assert spend["failed_attempts"] == sum(s != "ok" for s in statuses) > 0.2 * spend["calls"]
    assert {"http 429", "http 500"} <= set(statuses)
    # every attempt the server saw is recorded, timeouts included; an attempt whose deadline passed before its request
    # reached the server (a loaded machine) is recorded as a timeout the server never saw
    timeouts = sum(s == "timeout" for s in statuses)
    assert spend["attempts"] == len(statuses) and endpoint.requests <= spend["attempts"] <= endpoint.requests + timeouts
    assert sum(s != "timeout" for s in statuses) <= endpoint.requests


def test_api_key_is_never_written(tmp_path, dataset, server, monkeypatch):
    url, _ = server()
    secret = "sk-cabench-test-7d1f0a"
    monkeypatch.setenv("CABENCH_TEST_KEY", secret)
    config = live_config(tmp_path, dataset, url)
    raw = yaml.safe_load(config.read_text())
    raw["endpoint"]["api_key_env"] = "CABENCH_TEST_KEY"
    config.write_text(yaml.safe_dump(raw))
    run_live(config, tmp_path / "run")
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    monkeypatch.delenv("CABENCH_TEST_KEY")
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(tmp_path / "other"), "--quiet"])
    assert result.exit_code == 2 and result.stderr == (  # naming the config's file, as every key of it is
        f"error: {config}: endpoint.api_key_env: the environment variable CABENCH_TEST_KEY is not set; export it (the "
        "key is never written anywhere)\n")
    assert not (tmp_path / "other").exists()  # refused before anything is written (README)


@pytest.mark.parametrize("written", ["sk-TESTKEY-1234567890abcdef", "a1b2c3d4e5f60718293a4b5c6d7e8f90",
                                     "AKIAIOSFODNN7EXAMPLE"])
def test_a_key_written_where_its_variables_name_goes_is_never_printed(tmp_path, dataset, server, monkeypatch, written):
    """A key written as endpoint.api_key_env (an easy slip) is refused without being shown: one not shaped as a
    variable's name at load, a hexadecimal one (a valid name) when it names no variable; nothing is called or
    written."""
    url, endpoint = server()
    monkeypatch.delenv(written, raising=False)
    config = live_config(tmp_path, dataset, url)
    raw = yaml.safe_load(config.read_text())
    raw["endpoint"]["api_key_env"] = written
    config.write_text(yaml.safe_dump(raw))
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert "endpoint.api_key_env" in result.stderr and written not in result.output
    assert written[:8] not in result.stderr and endpoint.requests == 0 and not (tmp_path / "run").exists()


def test_an_empty_base_url_is_refused_not_replaced_by_the_configs(tmp_path, dataset, server):
    """--base-url '' (a script's unset variable) never falls back to the config's endpoint: refused before any call."""
    url, endpoint = server()
    config = live_config(tmp_path, dataset, url)
    for command in ("live", "collect"):
        result = RUNNER.invoke(app, [command, str(config), "--out", str(tmp_path / command), "--base-url", " ",
                                     "--quiet"])
        assert result.exit_code == 2 and result.stderr.startswith("error: --base-url: empty"), result.output
        assert endpoint.requests == 0 and not (tmp_path / command).exists()


def test_a_config_the_task_cannot_meet_is_refused_before_the_folder_is_made(tmp_path, dataset, server):
    """profiling.instances beyond the task's instances is refused with nothing written, so the corrected config
    runs in the same --out folder (a folder holding the refused config's live.json would be another run's)."""
    url, _ = server()
    big = live_config(tmp_path, dataset, url, profiling={"instances": 5000})
    result = RUNNER.invoke(app, ["live", str(big), "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2 and "profiling.instances is 5000 but the task has" in result.stderr
    assert not (tmp_path / "run").exists()
    spend, _ = run_live(live_config(tmp_path, dataset, url), tmp_path / "run")
    assert spend["calls"] > 0


def test_listed_configurations_run_as_configurations_from_picks_them(tmp_path, dataset, server):
    """Two of the dataset's configurations listed by model (its case aside), temperature, max_tokens and
    prompting make the run that configurations_from with arms makes: the same calls, spend and decision; collect
    gets their logged rows."""
    url, _ = server()
    picked = live_config(tmp_path, dataset, url, name="picked", arms={"config_ids": ["cfg01", "cfg04"]})
    raw = {**yaml.safe_load(picked.read_text()), "name": "listed", "configurations": [
        {"model": "MODEL01", "temperature": 0.5, "max_tokens": 128, "prompting": "direct"},
        {"model": "model04", "temperature": 0.5, "max_tokens": 128}]}
    del raw["configurations_from"], raw["arms"]
    listed = tmp_path / "listed.yaml"
    listed.write_text(yaml.safe_dump(raw))
    runs = [run_live(config, tmp_path / config.stem) for config in (picked, listed)]
    assert runs[0][1] == runs[1][1] and runs[0][1]["configuration"] in ("cfg01", "cfg04")
    assert set(runs[1][1]["estimates"]) == {"cfg01", "cfg04"}
    assert {k: v for k, v in runs[0][0].items() if k != "calls_made_this_run"} == \
        {k: v for k, v in runs[1][0].items() if k != "calls_made_this_run"}
    calls = [[(r["key"], r["config"], r["model"], r["instance"], r["tokens"], r["correct"])
              for r in journal(tmp_path / name)] for name in ("picked", "listed")]
    assert calls[0] == calls[1] and {c[2] for c in calls[1]} == {"model01", "model04"}
    raw.update(name="grid", evaluation={"instances": 12}, profiling={"instances": 0})
    for key in ("budget_tokens", "budget", "rho"):  # collect keeps no budget (and refuses one)
        raw.pop(key, None)
    listed.write_text(yaml.safe_dump(raw))
    result = RUNNER.invoke(app, ["collect", str(listed), "--out", str(tmp_path / "grid"), "--quiet"])
    assert result.exit_code == 0, result.output
    got = pd.read_csv(tmp_path / "grid" / "logs.csv", dtype={"instance_id": str}).sort_values(
        ["config_id", "instance_id"], ignore_index=True)
    frame = pd.read_csv(dataset / "logs.csv.gz", dtype={"instance_id": str}).set_index(["config_id", "instance_id"])
    want = frame.loc[list(zip(got["config_id"], got["instance_id"]))]
    assert len(got) == 24 and list(got["config_id"].unique()) == ["cfg01", "cfg04"]
    assert list(got["model"].unique()) == ["model01", "model04"]
    assert np.array_equal(got["correct"].to_numpy(), want["correct"].to_numpy())
    assert np.array_equal(got["tokens"].to_numpy(), np.floor(want["tokens"].to_numpy()))  # served as integers


@pytest.mark.slow
def test_collect_reproduces_the_shipped_rows(tmp_path):
    ds = ROOT / "data" / "gsm8k"
    endpoint = ReplayEndpoint.load(ds)
    srv, _ = serve_in_thread(endpoint)
    try:
        frame = pd.read_csv(ds / "logs.csv.gz", dtype={"instance_id": str})
        ids = list(pd.unique(frame["config_id"]))[::17][:6]
        config = tmp_path / "collect.yaml"
        config.write_text(yaml.safe_dump({
            "name": "gsm8k_six", "task": {"kind": "replay", "dataset": str(ds)}, "configurations_from": str(ds),
            "arms": {"config_ids": ids}, "evaluation": {"instances": 50}, "profiling": {"instances": 0},
            "endpoint": {"base_url": f"http://127.0.0.1:{srv.server_address[1]}/v1", "concurrency": 8}}))
        result = RUNNER.invoke(app, ["collect", str(config), "--out", str(tmp_path / "six"), "--quiet"])
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[-2] == (  # as `live` says it (collect said nothing)
            f"the endpoint replayed the SURROGATE logs of {ds}: surrogate logs calibrated to the paper's published "
            "statistics (not the paper's data), not real model outputs")
        again = RUNNER.invoke(app, ["collect", str(config), "--out", str(tmp_path / "again"), "--quiet"])
        assert again.exit_code == 0, again.output
    finally:
        srv.shutdown()
        srv.server_close()
    got = pd.read_csv(tmp_path / "six" / "logs.csv", dtype={"instance_id": str})
    assert len(got) == 300 and got["config_id"].nunique() == 6 and got["instance_id"].nunique() == 50
    # eight calls in flight finish in any order; the file is written in the run's order (configuration, then
    # instance), the same rows each time (but the latency, measured here)
    again = pd.read_csv(tmp_path / "again" / "logs.csv", dtype={"instance_id": str})
    pd.testing.assert_frame_equal(got.drop(columns="latency_s"), again.drop(columns="latency_s"))
    assert list(got["config_id"]) == [c for c in ids for _ in range(50)]
    assert list(got["instance_id"][:50]) == list(got["instance_id"][50:100])
    want = frame.set_index(["config_id", "instance_id"]).loc[list(zip(got["config_id"], got["instance_id"]))]
    assert np.array_equal(got["correct"].to_numpy(), want["correct"].to_numpy())
    assert np.array_equal(got["tokens"].to_numpy(), want["tokens"].to_numpy())
    described = RUNNER.invoke(app, ["data", "describe", str(tmp_path / "six"), "--json"])
    assert described.exit_code == 0 and json.loads(described.stdout)["K"] == 6
    # the answers are the shipped surrogate logs' (it read "real logs"): the folder says so, as their own does
    assert json.loads(described.stdout)["surrogate"] is True
    meta = yaml.safe_load((tmp_path / "six" / "dataset.yaml").read_text())
    assert meta["surrogate"] is True and meta["description"].endswith(
        f"; the endpoint replays the SURROGATE logs of {ds}: these are NOT real model outputs")


@pytest.mark.parametrize("stated", [{"budget_tokens": 100}, {"budget": {"tokens": 100}}, {"rho": 2}])
def test_collect_refuses_a_budget_it_would_not_keep(tmp_path, stated):
    ds = ROOT / "data" / "gsm8k"
    config = tmp_path / "collect.yaml"
    config.write_text(yaml.safe_dump({
        "name": "budgeted", "task": {"kind": "replay", "dataset": str(ds)}, "configurations_from": str(ds),
        "evaluation": {"instances": 5}, **stated,
        "endpoint": {"base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "max_failures": 1}}))
    result = RUNNER.invoke(app, ["collect", str(config), "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert f"{config}: {next(iter(stated))}: cabench collect evaluates every configuration" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["collect", "live"])
def test_a_folder_that_is_not_a_live_runs_is_refused_untouched(tmp_path, command):
    """`collect --out` a dataset folder replaced its logs and dataset.yaml (132,001 rows became 6) with exit code 0,
    and `live --out` one rewrote its dataset.yaml beside a new logs.csv. A folder holding files but no live.json is
    refused in one line before anything is written into it (no lock file either)."""
    ds = ROOT / "data" / "gsm8k"
    folder = tmp_path / "mine"
    folder.mkdir()
    for name in ("logs.csv.gz", "dataset.yaml"):
        (folder / name).write_bytes((ds / name).read_bytes())
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "name": "into_a_dataset", "task": {"kind": "replay", "dataset": str(ds)}, "configurations_from": str(ds),
        "evaluation": {"instances": 5}, **({"budget_tokens": 10**6} if command == "live" else {}),
        "endpoint": {"base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "max_failures": 1}}))
    result = RUNNER.invoke(app, [command, str(config), "--out", str(folder), "--quiet"])
    assert result.exit_code == 2 and result.stderr == (
        f"error: {folder}: holds dataset.yaml, logs.csv.gz and no live.json, so it is not a live run's folder (a "
        "dataset?); nothing was written; pass --out a new or empty folder\n")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize("hidden", [".env", ".git"])
def test_a_folder_of_hidden_files_is_someones_and_refused(tmp_path, hidden):
    """Every hidden name was passed over as the lock or a write cut short: a clone or a home folder (``.git``,
    ``.env``) took a run's files. Only the lock and a cabench temporary file are a live run's own."""
    from cabench.live.session import _refuse_foreign

    folder = tmp_path / "mine"
    (folder / ".git").mkdir(parents=True) if hidden == ".git" else folder.mkdir()
    (folder / ".env").write_text("SECRET=1\n") if hidden == ".env" else (folder / ".git" / "config").write_text("x")
    with pytest.raises(CabenchError, match=rf"holds {hidden} and no live.json"):
        _refuse_foreign(folder)
    own = tmp_path / "own"
    own.mkdir()
    (own / ".cabench.lock").write_text("")
    (own / ".spend.json.k2j4.tmp").write_text("")
    _refuse_foreign(own)  # a run that stopped before its live.json


def _live_child(config: str, out: str) -> None:  # a forked process: the run a kill -9 interrupts
    from cabench.live.config import load_live
    from cabench.live.session import run_session

    run_session(load_live(config), Path(out), quiet=True)


def _lines(path: Path) -> int:
    """Lines a journal holds so far (0 before it exists)."""
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _worst(dataset: Path, config: str) -> float:
    """A replay call's worst case: the most tokens its configuration's log records."""
    frame = pd.read_csv(dataset / "logs.csv.gz", dtype={"instance_id": str})
    return float(frame.loc[frame["config_id"] == config, "tokens"].max())


@pytest.mark.slow
def test_kill_9_then_resume_never_pays_twice(tmp_path, dataset, server):
    """kill -9 at 10 random requests, each while the call is in flight (the endpoint stops the run's process
    when that request arrives: a state, not a time), resuming each time: within the budget at every kill,
    the lost calls charged their worst case, and no call whose outcome was journaled made again."""
    url, endpoint = server()
    stop, count = ClientStop(), endpoint.fault

    def fault() -> str | None:  # each request is counted, then the run stopped at the armed one
        kind = count()
        stop.request(endpoint.requests)
        return kind
    endpoint.fault = fault
    config = live_config(tmp_path, dataset, url)
    run_live(config, tmp_path / "whole")
    made_whole = endpoint.requests
    out = tmp_path / "killed"
    fork = multiprocessing.get_context("fork")
    rng = random.Random(0)
    kills, before = 0, endpoint.requests
    for _ in range(10):
        stop.arm(endpoint.requests + rng.randint(2, 12))
        child = fork.Process(target=_live_child, args=(str(config), str(out)))
        child.start()
        stop.started(child.pid)
        wait_for(stop.stopped.is_set, "the endpoint to stop the run", child)
        if stop.stopped.is_set():
            os.kill(child.pid, signal.SIGKILL)
            kills += 1
        child.join()
        records = journal(out, starts=True) if (out / "calls.jsonl").exists() else []
        finished = {r["key"] for r in records if not r.get("start")}
        open_worst = sum(r["worst"] for r in records if r.get("start") and r["key"] not in finished)
        assert sum(r.get("charged", 0) for r in records) + open_worst <= 30000  # within budget, even when killed
    spend, _ = run_live(config, out)
    records = journal(out)
    known = [r["key"] for r in records if not r.get("lost")]
    assert len(set(known)) == len(known)  # no call whose outcome was journaled is made twice
    lost = [r for r in records if r.get("lost")]
    assert spend["lost_calls"] == len(lost) == kills and spend["spent_tokens"] <= spend["budget_tokens"]
    assert spend["spent_tokens"] == pytest.approx(sum(r["charged"] for r in records))
    assert all(r["charged"] == r_worst for r, r_worst in zip(lost, [_worst(dataset, r["config"]) for r in lost]))
    asked = {r["key"]: (r["config"], r["instance"]) for r in records}
    whole = {r["key"]: (r["config"], r["instance"]) for r in journal(tmp_path / "whole")}
    assert all(whole[key] == call for key, call in asked.items() if key in whole)  # the same asks, in the same order
    made = endpoint.requests - before
    assert kills == 10 and made - made_whole <= kills  # at most the call in flight at each kill is made again
    print(f"kill -9: {kills} kills, {made} requests against {made_whole} uninterrupted")


def test_bad_live_configs_are_one_line(tmp_path, dataset):
    cases = {
        "budget_tokens": ({"rho": 4}, "give either budget_tokens"),
        "method": ({"method": "cohv"}, "did you mean 'cohv-ucb'"),
        "instance_order": ({"instance_order": "replay",
                            "task": {"kind": "gsm8k", "path": str(dataset / "dataset.yaml")}},
                           "needs task.kind: replay"),
        "endpoint": ({"endpoint": {"base_url": "ftp://x"}}, "not an http(s) URL"),
        "bad-host": ({"endpoint": {"base_url": "http://[::1]x:19001/v1"}}, "not an http(s) URL"),
    }
    for label, (change, words) in cases.items():
        config = live_config(tmp_path, dataset, "http://127.0.0.1:9/v1", name=f"bad-{label}", **change)
        result = RUNNER.invoke(app, ["live", str(config), "--out", str(tmp_path / label), "--quiet"])
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, (label, result.output)
        assert words in result.stderr, (label, result.stderr)


def test_a_configuration_whose_prompting_has_no_prompt_is_refused_before_anything(tmp_path):
    """A template task with a direct prompt only and a configuration prompting cot: refused in one line before any
    call and before the folder records the run (a paid profiling call came first, and the corrected config was then
    refused as another run of that folder)."""
    task = tmp_path / "t.jsonl"
    task.write_text("".join(json.dumps({"id": f"q{i}", "q": f"{i} plus {i}", "a": str(2 * i)}) + "\n"
                            for i in range(4)))
    raw = {"name": "mixed", "task": {"kind": "template", "path": str(task), "prompts": {"direct": "Q: {q}"},
                                     "answer_field": "a", "normaliser": "number"},
           "endpoint": {"base_url": "http://127.0.0.1:9/v1"}, "budget_tokens": 1000, "profiling": {"instances": 1},
           "configurations": [{"model": "a", "temperature": 0.0, "max_tokens": 8, "prompting": "direct"},
                              {"model": "b", "temperature": 0.0, "max_tokens": 8, "prompting": "cot"}]}
    (tmp_path / "mixed.yaml").write_text(yaml.safe_dump(raw))
    result = RUNNER.invoke(app, ["live", str(tmp_path / "mixed.yaml"), "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert "configurations[1].prompting: 'cot' has no prompt in task.prompts (it has direct)" in result.stderr
    assert not (tmp_path / "out" / "live.json").exists() and not (tmp_path / "out" / "calls.jsonl").exists()


@pytest.mark.slow
@pytest.mark.parametrize("method, budget, mode", [("copsi", 60000, "deterministic"), ("uniform", 20000, "stochastic")])
def test_token_budget_holds_with_calls_in_flight(tmp_path, dataset, server, method, budget, mode):
    """Six calls in flight decide as one at a time, and never overshoot the budget (Uniform spends all of
    its budget, so the hard limit binds there)."""
    url, _ = server(latency_scale=0.001)
    outcomes = []
    for concurrency in (1, 6):
        config = live_config(tmp_path, dataset, url, setting="psi", method=method, budget_tokens=budget,
                             cost_mode=mode, name=f"{method}{concurrency}",
                             endpoint={"base_url": url, "concurrency": concurrency})
        spend, decision = run_live(config, tmp_path / f"{method}{concurrency}")
        assert spend["spent_tokens"] <= budget, spend
        outcomes.append((decision, spend["spent_tokens"], spend["stopped_by"]))
    assert outcomes[0] == outcomes[1] and len(outcomes[0][0]["pareto_set"]) >= 1
    if method == "uniform":
        assert outcomes[0][2] == "token budget" and outcomes[0][1] > 0.95 * budget


def test_failed_profiling_is_retried_when_the_endpoint_is_back(tmp_path, dataset, server):
    """A dead endpoint stops profiling after max_failures calls (whichever configurations: it fails them all) in
    one line; re-running once it answers retries those calls."""
    config = live_config(tmp_path, dataset, "http://127.0.0.1:9/v1", endpoint={
        "base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "backoff_s": 0.0})
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2 and "5 calls in a row could not reach the endpoint (the last, " in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    finished = journal(tmp_path / "run")
    # the fifth, and at most the three in flight beside it (concurrency 4), not five rounds of every configuration
    assert 5 <= len(finished) <= 8 < 5 * len({r["config"] for r in finished})
    url, _ = server()
    spend, decision = run_live(config, tmp_path / "run", "--base-url", url)
    assert spend["calls"] > 48 and decision["configuration"]
    assert spend["failed_calls"] == 0  # the failed records were replaced by the retried calls


def test_a_full_disk_while_a_live_run_ends_keeps_its_end_files_as_they_were(tmp_path, dataset, server, monkeypatch):
    """spend.json, decision.json and dataset.yaml are replaced together: the same command again (which changes
    spend.json: no call is made this run) with no room for decision.json leaves all three as they were."""
    import hashlib
    import tempfile

    url, _ = server()
    config, out = live_config(tmp_path, dataset, url), tmp_path / "run"
    run_live(config, out)
    ends = ("spend.json", "decision.json", "dataset.yaml")
    before = {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in ends}
    mkstemp = tempfile.mkstemp

    def no_room(*args, **kwargs):
        if str(kwargs.get("prefix", "")).startswith(".decision.json."):
            raise OSError(28, os.strerror(28))
        return mkstemp(*args, **kwargs)
    monkeypatch.setattr(tempfile, "mkstemp", no_room)
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"])
    monkeypatch.undo()
    assert result.exit_code == 2 and f"{out / 'decision.json'}: No space left on device" in result.output
    assert {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in ends} == before
    spend, _ = run_live(config, out)
    assert spend["calls_made_this_run"] == 0


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (every write to it fails: disk full)")
@pytest.mark.parametrize("name", ["calls.jsonl", "logs.csv"])
def test_a_full_disk_while_a_live_run_appends_is_one_line_naming_the_file(tmp_path, dataset, server, monkeypatch,
                                                                          name):
    """A real full disk fails the append's write itself and leaves the line in the file object's buffer, so closing
    the file fails again: the run still stops in one line naming the file it could not append to, not 'output'."""
    import builtins

    import cabench.live.journal

    url, _ = server()
    config, out = live_config(tmp_path, dataset, url), tmp_path / "run"

    def full_for(path, mode="r", *args, **kwargs):
        if Path(path).name == name and "a" in mode:
            return builtins.open("/dev/full", mode, *args, **kwargs)
        return builtins.open(path, mode, *args, **kwargs)
    monkeypatch.setattr(cabench.live.journal, "open", full_for, raising=False)
    result = RUNNER.invoke(app, ["live", str(config), "--out", str(out), "--quiet"])
    monkeypatch.undo()
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {out / name}: No space left on device; nothing already written was changed (check the "
                     "path, its permissions and free space)"], lines


def test_an_online_budget_leaving_less_than_one_call_of_each_after_profiling_is_refused_keeping_the_calls(
        tmp_path, dataset, server):
    """A budget a little above profiling's cost left rho < 1 for CoHV-UCB, which then ran and decided without
    calling some configurations on any evaluation instance. It is refused in one line after profiling, whose calls
    are kept: the same folder with a larger budget resumes without paying them again."""
    url, _ = server()
    spend, _ = run_live(live_config(tmp_path, dataset, url), tmp_path / "full")
    profiling = spend["profiling_tokens"]
    small = live_config(tmp_path, dataset, url, name="small", budget_tokens=int(profiling) + 50)
    result = RUNNER.invoke(app, ["live", str(small), "--out", str(tmp_path / "small"), "--quiet"])
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"error: {small}: the budget leaves rho 0.0"), result.stderr
    assert result.stderr.endswith("less than one call of every configuration at their mean costs (rho 1), so some "
                                  "would never be evaluated; raise the budget and re-run into the same folder (the "
                                  "calls made are kept)\n")
    kept = json.loads((tmp_path / "small" / "spend.json").read_text())
    assert kept["profiling_tokens"] == profiling and kept["stopped_by"] == "error"
    made = len(journal(tmp_path / "small"))
    larger = live_config(tmp_path, dataset, url, name="small")  # the default budget, into the same folder
    again, _ = run_live(larger, tmp_path / "small")
    assert again["calls_made_this_run"] == again["calls"] - made and again["profiling_tokens"] == profiling


def test_configurations_the_budget_left_unevaluated_are_named_in_the_decision_and_the_output(tmp_path, dataset,
                                                                                             server):
    """At rho 1.02 the calls' own tokens (above their profiling means) ran the budget out within the method's first
    round: CoHV-UCB decided among five of the six configurations, and neither decision.json nor the output said so.
    Both name the one never called on an evaluation instance, as the journal shows it."""
    url, _ = server()
    raw = {**yaml.safe_load(live_config(tmp_path, dataset, url).read_text()), "name": "short", "rho": 1.02}
    del raw["budget_tokens"]
    short = tmp_path / "short.yaml"
    short.write_text(yaml.safe_dump(raw))
    result = RUNNER.invoke(app, ["live", str(short), "--out", str(tmp_path / "short"), "--quiet"])
    assert result.exit_code == 0, result.output
    decision = json.loads((tmp_path / "short" / "decision.json").read_text())
    called = {r["config"] for r in journal(tmp_path / "short") if r["key"].startswith("e:")}
    never = sorted(set(decision["estimates"]) - called)
    assert len(never) == 1 and decision["unpulled"] == never
    assert [name for name, e in decision["estimates"].items() if e["pulls"] == 0] == never
    assert (f"note: the budget ran out before the method evaluated 1 of 6 configurations on any evaluation instance "
            f"({never[0]}); the choice is among the others; a larger budget evaluates them") in result.stdout
    _, full = run_live(live_config(tmp_path, dataset, url), tmp_path / "full")  # the default budget: none left out
    assert full["unpulled"] == [] and min(e["pulls"] for e in full["estimates"].values()) > 0
