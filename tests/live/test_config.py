"""Live configs: configurations listed by hand on a ``replay`` task are the dataset's own."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.errors import CabenchError
from cabench.live.config import Configuration, load_live
from tests.conftest import spread_logs, write_dataset

RUNNER = CliRunner()
#: (config_id, model, temperature, max_new_tokens, prompting) of the dataset's configurations, in arm order
LOGGED = [("gpt-2_t0.5_g128_direct", "GPT-2", 0.5, 128, "direct"),
          ("gpt-2_t1.0_g256_cot", "GPT-2", 1.0, 256, "cot"),
          ("mistral-7b_t0.5_g128_direct", "Mistral-7B", 0.5, 128, "direct"),
          ("mistral-7b_t1.0_g256_cot", "Mistral-7B", 1.0, 256, "cot")]


def logged_dataset(folder: Path, configurations: list[tuple[str, str, float, int, str]]) -> Path:
    frame = spread_logs(len(configurations), 20, seed=4)
    for c, (config_id, model, temperature, limit, prompting) in enumerate(configurations):
        rows = frame["config_id"] == f"cfg{c:02d}"
        frame.loc[rows, ["config_id", "model", "max_new_tokens", "prompting"]] = [config_id, model, limit,
                                                                                  prompting]
        frame.loc[rows, "temperature"] = temperature
    return write_dataset(folder, frame)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return logged_dataset(tmp_path_factory.mktemp("data") / "two_models", LOGGED)


def config_file(tmp_path: Path, dataset: Path, configurations: list[dict] | None = None, **extra) -> Path:
    raw = {"name": "listed", "task": {"kind": "replay", "dataset": str(dataset)},
           "endpoint": {"base_url": "http://127.0.0.1:9/v1"}, "budget_tokens": 10000, **extra}
    if configurations is not None:
        raw["configurations"] = configurations
    path = tmp_path / "listed.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def listed(model: str, temperature: float, max_tokens: int, prompting: str, **extra) -> dict:
    return {"model": model, "temperature": temperature, "max_tokens": max_tokens, "prompting": prompting, **extra}


def test_listed_replay_configurations_are_the_datasets_own(tmp_path, dataset):
    """Named by config_id (or their own name), the model as the dataset spells it, the dataset's position:
    an unnamed one is the configuration configurations_from gives."""
    config = config_file(tmp_path, dataset, [listed("gpt-2", 1, 256, "cot"),
                                             listed("Mistral-7B", 0.5, 128, "direct", name="mistral")])
    cfg = load_live(config)
    assert cfg.configurations == (Configuration("gpt-2_t1.0_g256_cot", "GPT-2", 1.0, 256, "cot", 1),
                                  Configuration("mistral", "Mistral-7B", 0.5, 128, "direct", 2))
    whole = load_live(config_file(tmp_path, dataset, configurations_from=str(dataset)))
    assert cfg.configurations[0] == whole.configurations[1]
    assert whole.source == str(tmp_path / "listed.yaml")  # the config file, not the folder it takes them from


@pytest.mark.parametrize("item, message", [
    (listed("Mistral-7B", 0.7, 128, "direct"),
     "{model: Mistral-7B, temperature: 0.7, max_tokens: 128, prompting: direct} is not a configuration of DATA; "
     "the closest is {model: Mistral-7B, temperature: 0.5, max_tokens: 128, prompting: direct} "
     "(mistral-7b_t0.5_g128_direct)"),
    (listed("GPT-2", 0.9, 128, "cot"),  # two differ in two facts: the nearer temperature
     "{model: GPT-2, temperature: 0.9, max_tokens: 128, prompting: cot} is not a configuration of DATA; "
     "the closest is {model: GPT-2, temperature: 1.0, max_tokens: 256, prompting: cot} (gpt-2_t1.0_g256_cot)"),
    (listed("mistrel-7b", 1.0, 256, "cot"),
     "{model: mistrel-7b, temperature: 1.0, max_tokens: 256, prompting: cot} is not a configuration of DATA; "
     "the closest is {model: Mistral-7B, temperature: 1.0, max_tokens: 256, prompting: cot} "
     "(mistral-7b_t1.0_g256_cot)"),
    (listed("Qwen2.5-1.5B", 0.5, 128, "direct"),
     "{model: Qwen2.5-1.5B, temperature: 0.5, max_tokens: 128, prompting: direct} is not a configuration of DATA; "
     "no model there is like Qwen2.5-1.5B (its models: GPT-2, Mistral-7B)"),
])
@pytest.mark.parametrize("command", ["live", "collect"])
def test_a_configuration_the_dataset_lacks_is_refused_in_one_line(tmp_path, dataset, item, message, command):
    """Before any call (nothing is written), exit 2, naming the file, the key and the configuration."""
    config = config_file(tmp_path, dataset, [listed("GPT-2", 0.5, 128, "direct"), item])
    result = RUNNER.invoke(app, [command, str(config), "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {config}: configurations[1]: {message.replace('DATA', str(dataset))}\n"
    assert not (tmp_path / "out").exists()


def test_a_model_in_another_case_must_be_spelt_exactly_when_the_dataset_has_both(tmp_path):
    data = logged_dataset(tmp_path / "cased", [("upper", "GPT-2", 0.5, 128, "direct"),
                                               ("lower", "gpt-2", 0.5, 128, "direct")])
    cfg = load_live(config_file(tmp_path, data, [listed("gpt-2", 0.5, 128, "direct"),
                                                 listed("GPT-2", 0.5, 128, "direct")]))
    assert [(c.name, c.model, c.arm_id) for c in cfg.configurations] == [("lower", "gpt-2", 1), ("upper", "GPT-2", 0)]
    config = config_file(tmp_path, data, [listed("GPT-2", 0.5, 128, "direct"), listed("Gpt-2", 0.5, 128, "direct")])
    with pytest.raises(CabenchError) as refused:
        load_live(config)
    assert str(refused.value) == (f"{config}: configurations[1]: {{model: Gpt-2, temperature: 0.5, max_tokens: 128, "
                                  f"prompting: direct}}: model Gpt-2 matches GPT-2 and gpt-2 of {data} only in case; "
                                  "spell it as the dataset does")


def test_configurations_the_endpoint_cannot_tell_apart_are_refused(tmp_path):
    data = logged_dataset(tmp_path / "twins", [("first", "GPT-2", 0.5, 128, "direct"),
                                               ("second", "GPT-2", 0.5, 128, "direct"),
                                               ("other", "GPT-2", 1.0, 128, "direct")])
    config = config_file(tmp_path, data, [listed("GPT-2", 1.0, 128, "direct"), listed("GPT-2", 0.5, 128, "direct")])
    with pytest.raises(CabenchError) as refused:
        load_live(config)
    assert str(refused.value) == (f"{config}: configurations[1]: {{model: GPT-2, temperature: 0.5, max_tokens: 128, "
                                  f"prompting: direct}} matches first and second of {data}, which an endpoint cannot "
                                  "tell apart; use configurations_from with arms to pick one")


def test_configurations_from_another_dataset_must_be_in_the_replayed_one(tmp_path, dataset):
    other = logged_dataset(tmp_path / "other", [LOGGED[0], ("gpt-2_t0.0_g128_direct", "GPT-2", 0.0, 128, "direct")])
    config = config_file(tmp_path, dataset, configurations_from=str(other))
    with pytest.raises(CabenchError) as refused:
        load_live(config)
    assert str(refused.value) == (
        f"{config}: configurations_from (gpt-2_t0.0_g128_direct): {{model: GPT-2, temperature: 0.0, max_tokens: 128, "
        f"prompting: direct}} is not a configuration of {dataset}; the closest is {{model: GPT-2, temperature: 0.5, "
        "max_tokens: 128, prompting: direct} (gpt-2_t0.5_g128_direct)")
    same = logged_dataset(tmp_path / "same", LOGGED[2:])
    assert [(c.name, c.arm_id) for c in load_live(config_file(tmp_path, dataset, configurations_from=str(same))
                                                  ).configurations] == [(LOGGED[2][0], 2), (LOGGED[3][0], 3)]


def test_a_live_method_given_a_parameter_it_does_not_use_is_refused(tmp_path, dataset):
    """As in an experiment config: `uniform` takes none of Algorithm 1's parameters; `cohv-ucb` keeps its own."""
    config = config_file(tmp_path, dataset, configurations_from=str(dataset), method={"name": "uniform", "eta": 0.1})
    with pytest.raises(CabenchError) as info:
        load_live(config)
    assert str(info.value) == (f"{config}: method.eta: uniform does not use eta (it uses none of the parameters); "
                               "remove it")
    kept = config_file(tmp_path, dataset, configurations_from=str(dataset), method={"name": "cohv-ucb", "eta": 0.1})
    assert load_live(kept).method.eta == 0.1


def test_accuracy_cost_ucb_live_needs_accuracy_first(tmp_path, dataset):
    """Accuracy-Cost-UCB reads the first objective as the accuracy (SPEC §5): live, as in experiments, another first
    objective is refused for it."""
    config = config_file(tmp_path, dataset, configurations_from=str(dataset), method="acc-cost-ucb",
                         objectives=["latency", "accuracy"])
    with pytest.raises(CabenchError, match="method: acc-cost-ucb divides .* the first objective is 'latency'"):
        load_live(config)
    assert load_live(config_file(tmp_path, dataset, configurations_from=str(dataset), method="acc-cost-ucb",
                                 objectives=["accuracy", "latency"])).method.name == "acc-cost-ucb"


def test_ctrl_c_while_httpx_is_imported_stays_an_interrupt(monkeypatch):
    """An interrupt during ``import httpx`` reached ``except httpx.InvalidURL`` with httpx unbound: an
    UnboundLocalError traceback and exit 1 where Ctrl-C says "interrupted"."""
    import builtins
    import sys

    from cabench.live.config import _httpx_host

    real = builtins.__import__

    def interrupted(name, *args, **kwargs):
        if name == "httpx":
            raise KeyboardInterrupt
        return real(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "httpx", raising=False)
    monkeypatch.setattr(builtins, "__import__", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _httpx_host("http://127.0.0.1:9/v1", "127.0.0.1")
    monkeypatch.setattr(builtins, "__import__", real)
    assert _httpx_host("http://127.0.0.1:9/v1", "127.0.0.1") == "127.0.0.1"
    assert _httpx_host("http://[::1/v1", "x") is None


def test_the_readme_live_example_loads_with_model_ids_holding_a_slash(tmp_path):
    """README's "Evaluating live" config, Hugging Face model ids (as vLLM names models) and no `name:`: the name
    derived from the model held its '/', and the example was refused ("a name is printable text on one line,
    without '/'"). The derived name writes it '--'; a name given with '/' is still refused."""
    import re

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    example = re.search(r"```yaml\n# my_gsm8k.yaml\n(.*?)```", readme, flags=re.S)
    assert example is not None
    raw = yaml.safe_load(example.group(1))
    (tmp_path / "gsm8k").mkdir()
    (tmp_path / "gsm8k" / "test.jsonl").write_text("".join(
        f'{{"question": "What is {i} + 1?", "answer": "#### {i + 1}"}}\n' for i in range(30)))
    raw["task"]["path"] = str(tmp_path / "gsm8k" / "test.jsonl")
    (tmp_path / "my_gsm8k.yaml").write_text(yaml.safe_dump(raw))
    cfg = load_live(tmp_path / "my_gsm8k.yaml")
    assert [c.name for c in cfg.configurations] == ["Qwen--Qwen2.5-1.5B-Instruct_t0.0_g256_direct",
                                                    "Qwen--Qwen2.5-1.5B-Instruct_t0.7_g512_cot"]
    assert {c.model for c in cfg.configurations} == {"Qwen/Qwen2.5-1.5B-Instruct"}  # sent as written
    raw["configurations"][0]["name"] = "Qwen/first"
    (tmp_path / "named.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(CabenchError, match=r"configurations\[0\]\.name: 'Qwen/first': a name is printable text"):
        load_live(tmp_path / "named.yaml")
