"""Methods of your own (module:object) run from YAML and appear in the figures and the report."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.errors import CabenchError

RUNNER = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def examples(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    yield
    sys.modules.pop("my_methods", None)


@pytest.mark.slow
@pytest.mark.parametrize("setting, method, base", [("psi", "my_methods:front_loaded", "copsi"),
                                                    ("online", "my_methods:sqrt_cost_ucb", "cohv-ucb")])
def test_user_method_runs_from_yaml_and_is_reported(tmp_path, examples, setting, method, base):
    cfg = {"name": f"mine_{setting}", "dataset": str(ROOT / "data" / "piqa"), "setting": setting,
           "rho": [200, 800] if setting == "psi" else [4, 8], "methods": [base, method], "repetitions": 6,
           "seed": 0, "n_jobs": 1, "output": str(tmp_path / "out")}
    if setting == "psi":
        cfg.update({"arms": "paper-subset", "cost_modes": ["deterministic"]})
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    result = RUNNER.invoke(app, ["run", str(tmp_path / "c.yaml"), "--quiet"])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert set(summary["method"]) == {base, method} and (summary["status"] == "ok").all()
    if setting == "psi":
        share = summary.set_index(["method", "rho"])["spend_share"]
        assert share[(method, 200)] > share[("copsi", 200)]  # it spends what CoPSI leaves
    assert RUNNER.invoke(app, ["plot", str(tmp_path / "out"), "--format", "png"]).exit_code == 0
    assert RUNNER.invoke(app, ["report", str(tmp_path / "out")]).exit_code == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    label = "Front-loaded SR" if setting == "psi" else "sqrt-cost HV-UCB"
    beyond = report.split("## Beyond the paper", 1)  # its own section, after the paper's experiments
    assert len(beyond) == 2 and f"the paper does not have: {label}" in beyond[1]
    assert f"## Experiment `mine_{setting}`" in beyond[1]
    if setting == "psi":  # a paired table at every budget: one row per (rho, other method)
        table = [line for line in beyond[1].splitlines() if line.startswith(("| 200 |", "| 800 |"))]
        assert len(table) == 2 and all(label in line for line in table)
    captions = pd.read_csv(tmp_path / "out" / "figures.csv")
    assert len(captions) >= 1 and any((tmp_path / "out" / "figures").glob("*.png"))


def test_unknown_user_method_is_one_line(tmp_path, examples):
    cfg = {"name": "bad", "dataset": str(ROOT / "data" / "piqa"), "setting": "online", "rho": [4],
           "methods": ["my_methods:nothing_here"], "repetitions": 2, "output": str(tmp_path / "out")}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    result = RUNNER.invoke(app, ["run", str(tmp_path / "c.yaml"), "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "has no 'nothing_here'" in result.stderr
    shutil.rmtree(tmp_path / "out", ignore_errors=True)
    cfg["methods"] = ["tests.plugins_hostile.online:unset"]  # there, but None: not said to be missing
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    result = RUNNER.invoke(app, ["run", str(tmp_path / "c.yaml"), "--quiet"])
    assert result.exit_code == 2 and "'tests.plugins_hostile.online:unset' is not callable" in result.stderr


def test_user_schedule_and_index_decide_alike_in_engine_and_policy(examples):
    """The batched engines and the per-pull policies call a user method alike, so they decide alike."""
    import numpy as np

    from cabench.data.arms import PRESETS
    from cabench.data.dataset import load_dataset
    from cabench.online import OnlineMethod, run_online
    from cabench.online.reference import reference_online
    from cabench.problem import replay_problem
    from cabench.psi import PsiMethod, run_psi
    from cabench.psi.reference import reference_psi
    from cabench.streams import stream_keys

    ds = load_dataset(ROOT / "data" / "piqa")
    problem = replay_problem(ds, PRESETS["paper-subset"].select(ds.configs))
    keys = stream_keys(0, np.arange(3), problem.arm_ids)
    method = PsiMethod("my_methods:front_loaded")
    result = run_psi(problem, method, 300, keys)
    for r in range(3):
        ref = reference_psi(problem, method, 300, keys[r])
        assert np.flatnonzero(result.returned[r]).tolist() == ref["returned"]
        assert result.samples[r].tolist() == ref["samples"] and result.removed[r].tolist() == ref["removed"]
    online = OnlineMethod("my_methods:sqrt_cost_ucb")
    batched = run_online(problem, online, 4, keys, record_arms=True)
    for r in range(3):
        arms = batched.arms_pulled[:, r]
        assert arms[arms >= 0].tolist() == reference_online(problem, online, 4, keys[r])["arms"]


def test_results_show_a_method_of_your_own_as_its_run_recorded_without_importing_it(tmp_path, examples, monkeypatch):
    """config.yaml records the display name; reading the results never imports the module it names (a results
    folder may come from someone else), on the path or not."""
    import subprocess

    from cabench.methods import lookup
    from cabench.recommend import format_decisions, recommend

    cfg = {"name": "mine", "dataset": str(ROOT / "data" / "piqa"), "setting": "online", "rho": [4],
           "methods": ["my_methods:sqrt_cost_ucb", "uniform"], "repetitions": 2, "output": str(tmp_path / "out")}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    assert RUNNER.invoke(app, ["run", str(tmp_path / "c.yaml"), "--quiet"]).exit_code == 0
    meta = yaml.safe_load((tmp_path / "out" / "config.yaml").read_text())
    assert meta["methods_shown"] == {"my_methods:sqrt_cost_ucb": {"display": "sqrt-cost HV-UCB", "prefers": True}}

    monkeypatch.setattr(lookup, "_SHOWN", {})
    monkeypatch.setattr(lookup, "load_user", lambda name: pytest.fail(f"imported {name} to read results"))
    assert "pay for " in format_decisions(recommend(tmp_path / "out"))
    assert lookup.describe("my_methods:sqrt_cost_ucb").display == "sqrt-cost HV-UCB"
    fresh = subprocess.run([sys.executable, "-m", "cabench.cli", "recommend", str(tmp_path / "out")], cwd=tmp_path,
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert fresh.returncode == 0 and "sqrt-cost HV-UCB exploits " in fresh.stdout, fresh.stdout + fresh.stderr


def test_editing_a_module_a_method_imports_recomputes_its_cells(tmp_path, monkeypatch):
    """The cells of ``mine_index:index`` were reused, as up to date, after an edit of ``mine_helper``, which the
    index imports: the key hashes the modules of your own a method imports, at any depth (not numpy's, nor
    cabench's); a module importing none of your own hashes as its source alone, as before."""
    import hashlib

    from cabench.methods.spec import own_imports, source_digest

    home = tmp_path / "code"
    (home / "mine_pkg").mkdir(parents=True)
    (home / "mine_pkg" / "__init__.py").write_text("")
    (home / "mine_pkg" / "weights.py").write_text("WEIGHT = 1.0\n")
    (home / "mine_helper.py").write_text("from mine_pkg import weights\n\n\n"
                                         "def score(n, upper, lower_cost):\n"
                                         "    return weights.WEIGHT * upper[..., 0] * upper[..., 1] / lower_cost\n")
    (home / "mine_broken").mkdir()  # an optional import that fails: found, never run while hashing
    (home / "mine_broken" / "__init__.py").write_text("raise RuntimeError('needs a GPU')\n")
    (home / "mine_broken" / "sub.py").write_text("X = 1\n")
    (home / "mine_index.py").write_text("import numpy as np\n\nimport mine_helper\n\ntry:\n"
                                        "    import mine_broken.sub\nexcept RuntimeError:\n    pass\n\n\n"
                                        "def index(n, upper, lower_cost):\n"
                                        "    return mine_helper.score(n, upper, lower_cost)\n")
    (home / "mine_alone.py").write_text("import numpy as np\n\n\ndef index(n, upper, lower_cost):\n"
                                        "    return np.asarray(upper[..., 0] / lower_cost)\n")
    monkeypatch.syspath_prepend(str(home))
    cfg = {"name": "helpers", "setting": "online", "repetitions": 4, "seed": 0, "rho": [6], "n_jobs": 1,
           "dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7]], "costs": [10, 20, 15]}},
           "methods": ["mine_index:index"], "output": str(tmp_path / "out")}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))

    def run() -> tuple[str, bytes]:
        for name in ("mine_index", "mine_helper", "mine_pkg", "mine_pkg.weights", "mine_alone", "mine_broken"):
            sys.modules.pop(name, None)  # as a new process would import them
        result = RUNNER.invoke(app, ["run", str(tmp_path / "c.yaml")])
        assert result.exit_code == 0, result.output
        return result.output, (tmp_path / "out" / "runs.csv").read_bytes()

    assert set(own_imports("mine_index")) == {"mine_helper", "mine_pkg", "mine_pkg.weights", "mine_broken.sub"}
    first, runs = run()
    assert "nothing written" in run()[0]  # nothing edited: every cell reused
    digest = source_digest("mine_index")
    recorded = yaml.safe_load((tmp_path / "out" / "config.yaml").read_text())
    assert recorded["methods_source"] == {"mine_index:index": digest}  # which code made the folder
    shutil.copytree(tmp_path / "out", tmp_path / "both" / "before")
    (home / "mine_pkg" / "weights.py").write_text("WEIGHT = -1.0\n")  # two imports down
    # this process still runs the old weights: refused, never keyed by the new text (a notebook's second run stored
    # the old code's results under the new code's key, reused by every later run)
    with pytest.raises(CabenchError, match="^mine_pkg.weights: its source .*weights.py changed since this process "
                                           r"imported it, .*; start a new process, or importlib.reload\(mine_pkg"):
        source_digest("mine_index")
    importlib.reload(sys.modules["mine_pkg.weights"])  # the code on disk runs: keyed by it
    assert source_digest("mine_index") != digest and sys.modules["mine_pkg.weights"].WEIGHT == -1.0
    again, changed = run()
    assert "nothing written" not in again and changed != runs
    # the same config, so the same config_hash: two folders of it are refused together, saying why they differ
    shutil.copytree(tmp_path / "out", tmp_path / "both" / "after")
    refused = RUNNER.invoke(app, ["recommend", str(tmp_path / "both")])
    assert refused.exit_code == 2 and "with different rows (run with other code of mine_index:index: its source " \
        "recorded in config.yaml differs); remove one copy, or run one again under another name (--name)" \
        in refused.stderr, refused.stderr
    alone = (home / "mine_alone.py").read_bytes()
    assert own_imports("mine_alone") == {} and source_digest("mine_alone") == hashlib.sha256(alone).hexdigest()


def test_a_method_recorded_under_two_displays_in_one_folder_is_shown_by_its_name(tmp_path, examples, monkeypatch):
    """Two experiments of one module:object recorded 'sqrt-cost HV-UCB' and another display (renamed between runs):
    reports over both showed every experiment's under the display read last."""
    from cabench.methods import lookup
    from cabench.results import ResultSet

    for name in ("mine", "mine2"):
        cfg = {"name": name, "dataset": str(ROOT / "data" / "piqa"), "setting": "online", "rho": [4],
               "methods": ["my_methods:sqrt_cost_ucb", "uniform"], "repetitions": 2,
               "output": str(tmp_path / "out" / name)}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(cfg))
        assert RUNNER.invoke(app, ["run", str(tmp_path / f"{name}.yaml"), "--quiet"]).exit_code == 0
    record = tmp_path / "out" / "mine2" / "config.yaml"
    record.write_text(record.read_text().replace("display: sqrt-cost HV-UCB", "display: renamed rule")
                      .replace("prefers: true", "prefers: false"))  # (a round robin of its own, say)
    monkeypatch.setattr(lookup, "_SHOWN", {})
    monkeypatch.setattr(lookup, "_RESOLVED", {})
    ResultSet(tmp_path / "out" / "mine2")
    assert lookup.describe("my_methods:sqrt_cost_ucb").display == "renamed rule"  # alone: its own
    ResultSet(tmp_path / "out")
    together = lookup.describe("my_methods:sqrt_cost_ucb")
    assert together.display == "my_methods:sqrt_cost_ucb" and not together.prefers  # together: its name
    ResultSet(tmp_path / "out" / "mine")
    assert lookup.describe("my_methods:sqrt_cost_ucb").display == "sqrt-cost HV-UCB"


def test_a_module_edited_between_reading_a_config_and_running_it_is_refused(tmp_path, monkeypatch):
    """Reading the config imports the method's module; an edit before the run was keyed as the code that ran (the
    first digest was taken at the run), storing the old code's results under the new code's key."""
    from cabench.config import load_config
    from cabench.runner import run_experiment

    home = tmp_path / "code"
    home.mkdir()
    (home / "mine_edited.py").write_text("def index(n, upper, lower_cost):\n    return upper[..., 0] / lower_cost\n")
    monkeypatch.syspath_prepend(str(home))
    sys.modules.pop("mine_edited", None)
    cfg = {"name": "edited", "setting": "online", "repetitions": 2, "seed": 0, "rho": [4], "n_jobs": 1,
           "dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7]], "costs": [10, 20, 15]}},
           "methods": ["mine_edited:index"], "output": str(tmp_path / "out")}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    loaded = load_config(tmp_path / "c.yaml")  # imports mine_edited
    (home / "mine_edited.py").write_text("def index(n, upper, lower_cost):\n"
                                         "    return upper[..., 1] / lower_cost  # edited\n")
    with pytest.raises(CabenchError, match="^mine_edited: its source .*mine_edited.py changed since this process "
                                           "imported it"):
        run_experiment(loaded, quiet=True)
    assert not (tmp_path / "out" / "runs.csv").exists()
    importlib.reload(sys.modules["mine_edited"])
    run_experiment(load_config(tmp_path / "c.yaml"), quiet=True)  # the code on disk runs, keyed by it
    assert (tmp_path / "out" / "runs.csv").exists()
    sys.modules.pop("mine_edited", None)


def test_a_helper_reloaded_under_a_module_that_imported_from_it_is_refused_and_a_touch_is_not(tmp_path, monkeypatch):
    """`from mine_sign import sign`, mine_sign edited and reloaded: the index still ran the old sign while its cells
    were keyed by the new text. A file touched, its text the same, was refused as edited."""
    import os

    from cabench.methods.spec import source_digest

    home = tmp_path / "code"
    home.mkdir()
    (home / "mine_sign.py").write_text("def sign(x):\n    return x\n\n\ndef make():\n"
                                       "    def sign(x):\n        return 2 * x\n    return sign\n")
    # a wrapper of sign (functools.wraps) and a function named sign made by a factory: neither is a stale sign
    (home / "mine_signed.py").write_text("import functools\n\nfrom mine_sign import make, sign\n\n"
                                         "logged = functools.wraps(sign)(lambda x: sign(x))\ndoubled = make()\n\n\n"
                                         "def index(n, upper, lower_cost):\n"
                                         "    return sign(upper[..., 0]) / lower_cost\n")
    monkeypatch.syspath_prepend(str(home))
    for name in ("mine_sign", "mine_signed"):
        sys.modules.pop(name, None)
    importlib.import_module("mine_signed")
    digest = source_digest("mine_signed")
    stat = (home / "mine_signed.py").stat()
    os.utime(home / "mine_signed.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # touched only
    assert source_digest("mine_signed") == digest
    (home / "mine_sign.py").write_text("def sign(x):\n    return -x\n\n\ndef make():\n"
                                       "    def sign(x):\n        return 2 * x\n    return sign\n")
    importlib.reload(sys.modules["mine_sign"])
    with pytest.raises(CabenchError, match=r"^mine_signed: holds mine_sign.sign as it was before mine_sign was "
                                           r"loaded again, .*; importlib.reload\(mine_signed\) too"):
        source_digest("mine_signed")
    importlib.reload(sys.modules["mine_signed"])
    assert source_digest("mine_signed") != digest
    # a class imported by name (from mine_sign import Scaled), its method's code edited and mine_sign reloaded
    (home / "mine_sign.py").write_text("class Scaled:\n    def __call__(self, x):\n        return x\n")
    (home / "mine_signed.py").write_text("from mine_sign import Scaled\n\nscaled = Scaled()\n")
    for name in ("mine_sign", "mine_signed"):
        sys.modules.pop(name, None)
    importlib.import_module("mine_signed")
    digest = source_digest("mine_signed")
    (home / "mine_sign.py").write_text("class Scaled:\n    def __call__(self, x):\n        return 2 * x\n")
    importlib.reload(sys.modules["mine_sign"])
    with pytest.raises(CabenchError, match=r"^mine_signed: holds mine_sign.Scaled as it was before mine_sign was "):
        source_digest("mine_signed")
    importlib.reload(sys.modules["mine_signed"])
    assert source_digest("mine_signed") != digest
    for name in ("mine_sign", "mine_signed"):
        sys.modules.pop(name, None)


def test_a_callable_objects_settings_changed_in_one_process_recompute_its_cells(tmp_path, monkeypatch):
    """docs/methods.md has a sweep in one process pass its settings as a callable object's parameters; the cells'
    key held the module's source alone, so changing ``obj.power``, or putting a new object in its place, reused the
    first setting's cells under the new display name. The object's attributes (not its display) key its cells."""
    from cabench.config import load_config
    from cabench.runner import run_experiment

    home = tmp_path / "code"
    home.mkdir()
    (home / "mine_swept.py").write_text(
        "import functools\n\n\nclass Scaled:\n    def __init__(self, power=1.0):\n        self.power = power\n"
        "        self.display = f'Scaled p={power}'\n        self.tags = {'x', 'y', 'z', 'w'}\n\n"
        "    def __call__(self, n, upper, lower_cost):\n"
        "        return upper[..., 0] * upper[..., 1] / lower_cost ** self.power\n\n\n"
        "def scaled(n, upper, lower_cost, power=1.0):\n    return upper[..., 0] * upper[..., 1] / lower_cost ** power\n"
        "\n\nswept = Scaled(0.5)\npartial = functools.partial(scaled, power=0.5)\n")
    monkeypatch.syspath_prepend(str(home))
    sys.modules.pop("mine_swept", None)
    import mine_swept

    cfg = {"name": "swept", "setting": "online", "repetitions": 6, "seed": 0, "rho": [6], "n_jobs": 1,
           "dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7], [0.8, 0.2]],
                                     "costs": [10, 40, 15, 5]}},
           "methods": ["mine_swept:swept", "mine_swept:partial"], "output": str(tmp_path / "out")}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))

    def pulls() -> dict[str, list[int]]:
        run_experiment(load_config(tmp_path / "c.yaml"), quiet=True)
        runs = pd.read_csv(tmp_path / "out" / "selections.csv.gz")
        return {m: group.sort_values(["rep", "config_id"])["pulls"].tolist() for m, group in runs.groupby("method")}

    def alone(power: float) -> list[int]:  # the setting run on its own, in a folder of its own
        out = tmp_path / f"alone{power}"
        run_experiment(dataclasses.replace(load_config(tmp_path / "c.yaml"), output=str(out)), quiet=True)
        runs = pd.read_csv(out / "selections.csv.gz")
        return runs[runs["method"] == "mine_swept:swept"].sort_values(["rep", "config_id"])["pulls"].tolist()

    first = pulls()
    mine_swept.swept.power, mine_swept.swept.display = 4.0, "Scaled p=4.0"
    changed = pulls()
    assert changed["mine_swept:swept"] != first["mine_swept:swept"]
    assert changed["mine_swept:partial"] == first["mine_swept:partial"]  # (its settings as they were: reused)
    assert changed["mine_swept:swept"] == alone(4.0)
    mine_swept.swept = mine_swept.Scaled(0.5)  # a new object of the first setting: the first cells again
    mine_swept.partial = functools.partial(mine_swept.scaled, power=4.0)
    again = pulls()
    assert again["mine_swept:swept"] == first["mine_swept:swept"]
    assert again["mine_swept:partial"] == changed["mine_swept:swept"]  # the same rule at power 4
    mine_swept.partial = functools.partial(mine_swept.scaled, power=0.5)  # (as the module's file makes it)
    from cabench.methods.user import held_settings  # the same settings read alike in another process (a set's
    code = "import mine_swept; from cabench.methods.user import held_settings; print(held_settings(mine_swept.swept))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,  # order too)
                           env={**os.environ, "PYTHONPATH": str(home), "PYTHONHASHSEED": "7"}).stdout
    assert other == f"{held_settings(mine_swept.Scaled(0.5))}\n" and "power" in other and "display" not in other
    sys.modules.pop("mine_swept", None)


def _sweep_home(tmp_path: Path, monkeypatch, name: str, text: str):
    """A module of your own, ``name``, written under ``tmp_path`` and imported, and a config running its methods."""
    home = tmp_path / "code"
    home.mkdir(exist_ok=True)
    (home / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(home))
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def _online_pulls(tmp_path: Path, methods: list[str], out: str, n_jobs: int = 1, echo=None,
                  rho: tuple[float, ...] = (6,)) -> dict[str, list[int]]:
    from cabench.config import parse_config
    from cabench.runner import run_experiment

    cfg = {"name": "swept", "setting": "online", "repetitions": 6, "seed": 0, "rho": list(rho), "n_jobs": n_jobs,
           "chunk_size": 3, "dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7], [0.8, 0.2]],
                                                      "costs": [10, 40, 15, 5]}},
           "methods": methods, "output": str(tmp_path / out)}
    run_experiment(parse_config(cfg, "c.yaml"), quiet=True, **({"echo": echo} if echo else {}))
    runs = pd.read_csv(tmp_path / out / "selections.csv.gz")
    return {m: g.sort_values(["rho", "rep", "config_id"])["pulls"].tolist() for m, g in runs.groupby("method")}


SWEPT = """import dataclasses


POWER = 0.5


def by_global(n, upper, lower_cost):
    return upper[..., 0] * upper[..., 1] / lower_cost ** POWER


def make(power):
    def index(n, upper, lower_cost):
        return upper[..., 0] * upper[..., 1] / lower_cost ** power
    return index


closure = make(0.5)


class ByClass:
    power = 0.5

    def __call__(self, n, upper, lower_cost):
        return upper[..., 0] * upper[..., 1] / lower_cost ** self.power


by_class = ByClass()


@dataclasses.dataclass
class Settings:
    power: float = 0.5

    def __call__(self, n, upper, lower_cost):
        return upper[..., 0] * upper[..., 1] / lower_cost ** self.power


plain_dataclass = Settings()
"""


def test_settings_a_sweep_changes_in_one_process_recompute_the_cells_of_a_function_or_object(tmp_path, monkeypatch):
    """A module global read by the index (SHARE = 0.9 set in a notebook), a factory's new closure, a class attribute:
    each reused the first setting's cells. Each now keys its cells and runs as a fresh process would; a plain
    (unhashable) dataclass instance runs (it ended in a traceback from a cache of the compiled index)."""
    mine = _sweep_home(tmp_path, monkeypatch, "mine_sweep", SWEPT)
    methods = [f"mine_sweep:{n}" for n in ("by_global", "closure", "by_class", "plain_dataclass")]
    first = _online_pulls(tmp_path, methods, "out")
    assert len({str(p) for p in first.values()}) == 1  # one rule, four ways of holding its setting
    for n, (name, change) in enumerate([("closure", lambda: setattr(mine, "closure", mine.make(4.0))),
                                        ("by_class", lambda: setattr(mine.ByClass, "power", 4.0)),
                                        ("plain_dataclass", lambda: setattr(mine.plain_dataclass, "power", 4.0)),
                                        ("by_global", lambda: setattr(mine, "POWER", 4.0))]):
        change()  # one setting at a time: its own method's cells run again, as in a folder of their own
        changed = _online_pulls(tmp_path, methods, "out")
        assert changed == _online_pulls(tmp_path, methods, f"fresh{n}"), name
        assert changed[f"mine_sweep:{name}"] != first[f"mine_sweep:{name}"], name
    mine.POWER, mine.closure, mine.ByClass.power, mine.plain_dataclass.power = 0.5, mine.make(0.5), 0.5, 0.5
    assert _online_pulls(tmp_path, methods, "out") == first
    sys.modules.pop("mine_sweep", None)


def test_a_module_reloaded_while_worker_processes_hold_the_old_one_runs_as_its_key_says(tmp_path, monkeypatch):
    """With n_jobs 2, a module edited and reloaded as the refusal says (importlib.reload) ran in loky's workers as
    they had imported it, its old code's results stored under the new code's key, which every later process
    reused. The workers' code is checked against the key; cells they cannot run as keyed run here, said."""
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)  # workers started now, with the module on their path
    mine = _sweep_home(tmp_path, monkeypatch, "mine_reload", SWEPT)
    first = _online_pulls(tmp_path, ["mine_reload:by_global"], "out", n_jobs=2)
    path = Path(mine.__file__)
    path.write_text(SWEPT.replace("POWER = 0.5", "POWER = 4.0"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    importlib.reload(mine)
    said: list[str] = []
    changed = _online_pulls(tmp_path, ["mine_reload:by_global"], "out", n_jobs=2, echo=said.append)
    assert any("this worker runs other code or settings for it than the process that keyed its cells" in line
               and "run in this process instead" in line for line in said), said
    fresh = _online_pulls(tmp_path, ["mine_reload:by_global"], "fresh", n_jobs=1)
    assert changed == fresh != first
    sys.modules.pop("mine_reload", None)


def test_a_method_of_a_module_without_a_source_file_is_keyed_by_its_code(tmp_path):
    """A notebook's methods (``__main__`` with no file, code run by exec) were keyed by the module's repr, the same
    for every edit and every notebook: a second, other method reused the first's cells."""
    import types

    def notebook(text: str):
        module = types.ModuleType("mine_notebook")
        sys.modules["mine_notebook"] = module  # (as a notebook's __main__ is)
        exec(compile(text, "<cell>", "exec"), module.__dict__)
        return module

    notebook(SWEPT)
    first = _online_pulls(tmp_path, ["mine_notebook:by_global"], "out")
    notebook(SWEPT.replace("** POWER", "** (4 * POWER)"))  # the cell edited and run again
    changed = _online_pulls(tmp_path, ["mine_notebook:by_global"], "out")
    assert changed != first and changed == _online_pulls(tmp_path, ["mine_notebook:by_global"], "fresh")
    sys.modules.pop("mine_notebook", None)


def test_a_method_a_module_runs_by_exec_from_another_file_is_keyed_by_its_code(tmp_path, monkeypatch):
    """A module reading its rules from a file by exec into its own globals was keyed by its own file alone: the rules
    edited, a run into the same folder reused the cells of the old rules ("2 reused, 0 to run")."""
    rules = tmp_path / "code" / "rules.txt"
    rules.parent.mkdir()
    rules.write_text("def by_rule(n, upper, lower_cost):\n"
                     "    return upper[..., 0] * upper[..., 1] / lower_cost ** 0.5\n")
    module = _sweep_home(tmp_path, monkeypatch, "mine_execd", (
        "import os\n\nwith open(os.path.join(os.path.dirname(__file__), 'rules.txt')) as f:\n"
        "    exec(compile(f.read(), f.name, 'exec'), globals())\n"))
    first = _online_pulls(tmp_path, ["mine_execd:by_rule"], "out")
    rules.write_text(rules.read_text().replace("** 0.5", "** 3.0"))
    importlib.reload(module)
    changed = _online_pulls(tmp_path, ["mine_execd:by_rule"], "out")
    assert changed != first and changed == _online_pulls(tmp_path, ["mine_execd:by_rule"], "fresh")
    sys.modules.pop("mine_execd", None)


def test_a_method_compiled_with_numbas_own_cache_is_refused(tmp_path, monkeypatch):
    """numba's cache=True keys its files by the function's own source: a helper's constant edited, cabench recomputed
    the cells (their key changed) with numba's old compiled code, and stored its results under the new key."""
    from cabench.errors import CabenchError

    _sweep_home(tmp_path, monkeypatch, "mine_cached", SWEPT + "\n\nimport numba\n\n"
                "cached = numba.njit(cache=True)(by_global)\nplain = numba.njit(by_global)\n"
                "import functools\n\npartly = functools.partial(cached)\n\n\n"
                "def through(n, upper, lower_cost):\n    return cached(n, upper, lower_cost)\n\n\n"
                "calling = numba.njit(through)\n\n\n"
                "def deeper(n, upper, lower_cost):\n    return through(n, upper, lower_cost)\n")
    for name in ("cached", "partly"):
        with pytest.raises(CabenchError, match=f"'mine_cached:{name}' is compiled with numba's cache=True, whose "
                                               "cache files are keyed by the function's own source"):
            _online_pulls(tmp_path, [f"mine_cached:{name}"], "out")
    for name in ("calling", "deeper"):  # a helper it calls, compiled with cache=True, runs its old code as well
        with pytest.raises(CabenchError, match=f"'mine_cached:{name}' calls 'cached', compiled with numba's "
                                               "cache=True, whose cache files are keyed by the function's own source"):
            _online_pulls(tmp_path, [f"mine_cached:{name}"], "out")
    # registered by the decorator while its module loads, before a helper defined below it exists: checked again
    # when it runs; a library's function compiled so is no helper of the method's own (its source is its version)
    _sweep_home(tmp_path, monkeypatch, "mine_decorated", (
        "import numba\nimport numpy as np\n\nfrom cabench.methods.index import index_method\n\n\n"
        "@index_method('mine-below')\ndef below(n, upper, lower_cost):\n    return helper(upper, lower_cost)\n\n\n"
        "@numba.njit(cache=True)\ndef helper(upper, lower_cost):\n    return upper[..., 0] / lower_cost\n"))
    with pytest.raises(CabenchError, match="'mine-below' calls 'helper', compiled with numba's cache=True"):
        _online_pulls(tmp_path, ["mine-below"], "below")
    library = tmp_path / "code" / "mine_library.py"
    library.write_text("import numba\n\n\n@numba.njit(cache=True)\ndef ratio(upper, lower_cost):\n"
                       "    return upper[..., 0] / lower_cost\n")
    _sweep_home(tmp_path, monkeypatch, "mine_uses_library", (
        "from mine_library import ratio\n\n\ndef using(n, upper, lower_cost):\n    return ratio(upper, lower_cost)\n"))
    assert _online_pulls(tmp_path, ["mine_uses_library:using"], "library")  # runs
    for module in ("mine_decorated", "mine_library", "mine_uses_library"):
        sys.modules.pop(module, None)
    assert _online_pulls(tmp_path, ["mine_cached:plain"], "plain")  # compiled without numba's cache: runs
    sys.modules.pop("mine_cached", None)


def test_workers_started_before_a_module_was_on_the_path_leave_its_cells_to_this_process(tmp_path, monkeypatch):
    """A notebook's run started loky's workers; a folder put on sys.path after it, its method run with n_jobs 2
    ended in joblib's BrokenProcessPool (the workers cannot import the module). Its cells run here, said."""
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)
    _online_pulls(tmp_path, ["cohv-ucb"], "builtin", n_jobs=2)  # the workers start, without the folder on their path
    _sweep_home(tmp_path, monkeypatch, "mine_late", SWEPT)
    said: list[str] = []
    late = _online_pulls(tmp_path, ["mine_late:by_global"], "out", n_jobs=2, echo=said.append)
    assert any("the worker processes cannot import a method of your own" in line
               and "run in this process instead" in line for line in said), said
    assert late == _online_pulls(tmp_path, ["mine_late:by_global"], "fresh", n_jobs=1)
    sys.modules.pop("mine_late", None)


def test_methods_of_your_own_run_in_the_workers_at_every_budget_and_as_compiled_functions(tmp_path, monkeypatch):
    """Each worker checks a method of your own against its cell's key: keyed by the method's name alone, a cell at
    another budget (its n_init another) was taken for other code, and every cell ran in the main process. A numba
    @njit index function ended in a traceback while its settings were read."""
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)
    _sweep_home(tmp_path, monkeypatch, "mine_budgets", SWEPT + "\n\nimport numba\n\ncompiled = numba.njit(by_global)\n")
    methods = ["mine_budgets:by_global", "mine_budgets:by_class", "mine_budgets:compiled"]
    said: list[str] = []
    parallel = _online_pulls(tmp_path, methods, "two", n_jobs=2, echo=said.append, rho=(6, 20))
    assert not [line for line in said if "warning" in line], said
    assert parallel == _online_pulls(tmp_path, methods, "one", n_jobs=1, rho=(6, 20))
    assert parallel["mine_budgets:compiled"] == parallel["mine_budgets:by_global"]
    sys.modules.pop("mine_budgets", None)


def test_settings_read_alike_only_where_they_are_alike():
    """A date, a Decimal: objects without attributes of their own were keyed by their class alone."""
    import datetime
    import decimal

    import numpy as np

    from cabench.methods.user import _canonical

    assert _canonical(datetime.date(2024, 1, 1)) != _canonical(datetime.date(2025, 1, 1))
    assert _canonical(decimal.Decimal("0.5")) != _canonical(decimal.Decimal("0.9"))
    assert _canonical(datetime.date(2024, 1, 1)) == _canonical(datetime.date(2024, 1, 1))
    assert _canonical(np.random.default_rng(1)) != _canonical(np.random.default_rng(2))  # (their state)
    assert _canonical(np.random.default_rng(1)) == _canonical(np.random.default_rng(1))
    assert _canonical(np.ma.masked_array([1, 2], [0, 1])) != _canonical(np.ma.masked_array([1, 2], [1, 0]))


def test_an_object_holding_a_token_runs_in_the_workers_and_its_cells_are_reused(tmp_path, monkeypatch):
    """A callable object holding a token (object()) was keyed by the token's repr, its address: different in every
    worker, so every parallel run left its cells to the main process, and no other process reused them."""
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)
    _sweep_home(tmp_path, monkeypatch, "mine_locked", SWEPT + "\n\nclass Locked(ByClass):\n"
                "    def __init__(self):\n        self.token = object()\n\n\nlocked = Locked()\n")
    said: list[str] = []
    first = _online_pulls(tmp_path, ["mine_locked:locked"], "out", n_jobs=2, echo=said.append)
    assert not [line for line in said if "warning" in line], said
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import mine_locked; "
            "from cabench.methods.user import held_settings; print(held_settings(mine_locked.locked))")
    other = subprocess.run([sys.executable, "-c", code, str(tmp_path / "code")], capture_output=True, text=True,
                           check=True).stdout
    from cabench.methods.user import held_settings

    assert other == f"{held_settings(sys.modules['mine_locked'].locked)}\n" and "token" in other and "0x" not in other
    assert first == _online_pulls(tmp_path, ["mine_locked:locked"], "fresh", n_jobs=1)
    sys.modules.pop("mine_locked", None)


def test_a_schedules_settings_changed_in_one_process_recompute_its_cells(tmp_path, monkeypatch):
    """An identification schedule of your own held no settings in its cells' key (it is wrapped for the phase
    loop), so a global it reads set anew in a notebook reused the first value's cells, and with n_jobs 2 the
    workers ran the value on disk under the same key."""
    from cabench.config import parse_config
    from cabench.runner import run_experiment

    mine = _sweep_home(tmp_path, monkeypatch, "mine_schedule", (
        "import numpy as np\n\nSHARE = 0.5\n\n\ndef phases(budget, l_k, spend, level, active_costs, k_active):\n"
        "    share = 1.0 if k_active == 2 else SHARE\n"
        "    return level + np.floor(np.maximum(budget - spend, 0.0) * share / active_costs.sum(axis=1))"
        ".astype(np.int64)\n"))

    def samples(out: str, n_jobs: int = 1) -> list[int]:
        cfg = {"name": "phased", "setting": "psi", "repetitions": 6, "seed": 0, "rho": [40], "n_jobs": n_jobs,
               "dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7], [0.8, 0.2], [0.4, 0.4]],
                                         "costs": [10, 40, 15, 5, 20]}},
               "methods": ["mine_schedule:phases"], "output": str(tmp_path / out)}
        run_experiment(parse_config(cfg, "c.yaml"), quiet=True)
        return pd.read_csv(tmp_path / out / "selections.csv.gz").sort_values(
            ["cost_mode", "rep", "config_id"])["samples"].tolist()

    first = samples("out")
    mine.SHARE = 0.9
    changed = samples("out")
    assert changed != first and changed == samples("fresh")
    sys.modules.pop("mine_schedule", None)


HELPED = """import numpy as np

SHARE = 0.5
mean = 3.0  # a global named as an attribute the index reads (np.mean): no setting of it


def weight(lower_cost):
    return lower_cost ** SHARE


def make(power):
    def index(n, upper, lower_cost):
        if "x" in {"a", "b", "c", "d", "e"}:  # (a constant set: its own order follows the string hashing)
            return upper[..., 0]
        return np.mean(upper, axis=-1) * upper[..., 1] / weight(lower_cost) ** power
    return index


closure = make(1.0)
"""


def test_a_global_read_through_a_helper_keys_the_cells_alike_in_every_process(tmp_path, monkeypatch):
    """The globals a method reads through a helper of its module key its cells; its key is the same in every
    process (a constant set in its code was written in its own order, which the string hashing sets), so the
    workers run its cells, and no attribute name (np.mean) is taken for a global."""
    from joblib.externals.loky import get_reusable_executor

    from cabench.methods.user import held_settings

    get_reusable_executor().shutdown(wait=True)
    mine = _sweep_home(tmp_path, monkeypatch, "mine_helped", HELPED)
    assert "SHARE" in held_settings(mine.closure) and "mean" not in held_settings(mine.closure).split("globals")[1]
    keys = {subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import mine_helped; "
                            "from cabench.methods.user import held_settings; print(held_settings(mine_helped.closure))",
                            str(tmp_path / "code")], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert keys == {f"{held_settings(mine.closure)}\n"}
    said: list[str] = []
    first = _online_pulls(tmp_path, ["mine_helped:closure"], "out", n_jobs=2, echo=said.append)
    assert not [line for line in said if "warning" in line], said
    mine.SHARE = 4.0
    changed = _online_pulls(tmp_path, ["mine_helped:closure"], "out")
    assert changed != first and changed == _online_pulls(tmp_path, ["mine_helped:closure"], "fresh")
    sys.modules.pop("mine_helped", None)


def test_a_notebooks_method_runs_in_this_process_as_keyed_when_the_workers_cannot_import_it(tmp_path):
    """A method defined where there is no file (a notebook's cell) is keyed by its code, and the workers cannot
    import it by its name: its cells run in this process, said, as they would with n_jobs 1."""
    import types

    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)
    module = types.ModuleType("mine_cells")
    sys.modules["mine_cells"] = module
    exec(compile(HELPED, "<cell>", "exec"), module.__dict__)
    said: list[str] = []
    parallel = _online_pulls(tmp_path, ["mine_cells:closure"], "out", n_jobs=2, echo=said.append, rho=(6, 20))
    assert [line for line in said if "warning" in line] == [
        "swept: warning: the worker processes cannot import a method of your own (defined in a notebook, or its "
        "module put on the path after they started): 4 cells run in this process instead, as their keys say"], said
    assert parallel == _online_pulls(tmp_path, ["mine_cells:closure"], "one", rho=(6, 20))
    sys.modules.pop("mine_cells", None)


def test_a_scripts_own_method_runs_in_the_workers(tmp_path):
    """A method defined in the script that runs the experiment (``__main__:index``) was keyed by the script's file,
    which a worker's __main__ is not: every parallel cell ran in the main process, said as other code."""
    script = tmp_path / "sweep.py"
    script.write_text(
        "import pandas as pd\n\nfrom cabench.config import parse_config\nfrom cabench.runner import run_experiment\n"
        "\nSHARE = 0.5\n\n\ndef index(n, upper, lower_cost):\n"
        "    return upper[..., 0] * upper[..., 1] / lower_cost ** SHARE\n\n\n"
        "if __name__ == '__main__':\n    pulls = []\n    for jobs in (2, 1):\n"
        "        cfg = {'name': 'script', 'setting': 'online', 'repetitions': 6, 'seed': 0, 'rho': [6, 20], "
        "'n_jobs': jobs, 'dataset': {'synthetic': {'means': [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7]], "
        "'costs': [10, 40, 15]}}, 'methods': ['__main__:index'], 'output': f'out{jobs}'}\n"
        "        run_experiment(parse_config(cfg, 'c.yaml'), quiet=True)\n"
        "        pulls.append(pd.read_csv(f'out{jobs}/selections.csv.gz').sort_values(['rho', 'rep', 'config_id'])"
        "['pulls'].tolist())\n    print('same' if pulls[0] == pulls[1] else 'differ')\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "same" and "warning" not in done.stdout + done.stderr, done.stdout


def test_settings_of_loggers_paths_classes_and_odd_globals_read_alike_in_a_worker(tmp_path):
    """Keys that differed between the main process and a worker given the method by value (cloudpickle): a class's
    functions hashed in its dict's order, which the worker rebuilds sorted; a logger keyed with every logger of the
    process; a path with the hash it caches. A global whose __getattr__ raises ended the run in a traceback, and a
    global read in a class the method uses was not keyed."""
    import logging
    import pathlib
    import types

    from joblib.externals.loky.backend.reduction import dumps

    from cabench.methods.user import _canonical, held_settings

    module = types.ModuleType("mine_odd")
    sys.modules["mine_odd"] = module
    text = (
        "import logging, pathlib\n\nSHARE = 0.5\n\n\nclass Odd:\n    def __getattr__(self, name):\n"
        "        raise KeyError(name)\n\n\nodd = Odd()\n\n\nclass Weights:\n    @staticmethod\n    def of(c):\n"
        "        return c ** SHARE\n\n\nclass Rule:\n    def __init__(self):\n"
        "        self.log = logging.getLogger('mine')\n"
        "        self.where = pathlib.Path('/tmp/x')\n\n    def zeta(self, u):\n        return u\n\n"
        "    def __call__(self, n, upper, lower_cost):\n        odd\n"
        "        return self.zeta(upper[..., 0]) / Weights.of(lower_cost)\n\n"
        "    def alpha(self):\n        return 1\n\n\n"
        "rule = Rule()\n")
    exec(compile(text, "<cell>", "exec"), module.__dict__)
    hash(module.rule.where)  # (a path caches its hash once hashed)
    held = held_settings(module.rule)
    copy = pickle.loads(dumps(module.rule))  # as a worker gets it: its class rebuilt
    assert held_settings(copy) == held and "logger:mine" in held and "path:'/tmp/x'" in held
    script = tmp_path / "rule.py"  # a script's class, as a worker rebuilds it (its dict in another order)
    script.write_text(text.replace("        odd\n", "") + "\n\nif __name__ == '__main__':\n    import joblib\n"
                      "    from cabench.methods.user import held_settings\n"
                      "    there = joblib.Parallel(n_jobs=2, backend='loky')(joblib.delayed(held_settings)(rule) "
                      "for _ in 'x')\n    print(there == [held_settings(rule)])\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "True", done.stdout + done.stderr
    assert _canonical(logging.getLogger("mine")) == "logger:mine"
    assert _canonical(pathlib.Path("/tmp/x")) == _canonical(pathlib.Path("/tmp") / "x")
    module.SHARE = 0.9  # read in Weights.of, a class the method uses
    assert held_settings(module.rule) != held
    sys.modules.pop("mine_odd", None)
