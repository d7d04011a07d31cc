"""`cabench plan`: targets, where a curve meets its target, posterior draws from the profiling split only (swapping
every evaluation row's values leaves the plan unchanged), a plan that the true instance bears out, and the command."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench import budget_plan
from cabench.budget_plan import PlanSpec, config_profiling, format_plan, plan_config, plan_frame, write_plan
from cabench.cli import app
from cabench.config import parse_config
from cabench.data.dataset import Split, load_dataset, split_instances
from cabench.errors import CabenchError
from cabench.paper import SURROGATE_NOTE
from cabench.plan import build_problem
from cabench.planning.curves import metrics_at
from cabench.planning.draws import extrapolation, posterior_problem, profiling_of
from cabench.planning.search import Estimate, crossing, estimate
from cabench.planning.targets import Target, parse_target
from cabench.streams import stream_keys
from tests.conftest import spread_logs, write_dataset

RUNNER = CliRunner()
#: Five Gaussian arms (Pareto set: arms 0, 1, 2), unit costs, every gap at least 0.1: 100 profiling pulls per arm
#: (a difference's standard error 0.04) leave little doubt about how hard the instance is.
FIVE = {"synthetic": {"name": "five", "means": [[0.9, 0.2], [0.6, 0.6], [0.2, 0.9], [0.45, 0.4], [0.1, 0.7]],
                      "costs": [1, 1, 1, 1, 1], "noise": "gaussian", "sigma": 0.3}}


def test_targets_parse_and_refuse_in_one_line():
    assert parse_target("error<=0.1", "psi") == Target("error", 0.1)
    assert parse_target(" F1 >= 0.7 ", "psi") == Target("f1", 0.7)
    assert parse_target("share>=0.9", "online").text == "share>=0.9"
    for text, setting, words in [("error>=0.1", "psi", "bounded with <="), ("share>=0.9", "psi", "online setting"),
                                 ("f1>=0.7", "online", "psi setting"), ("error<=1", "psi", "(0, 1)"),
                                 ("regret<=3", "psi", "expected error<=D"), ("error<=-0.1", "psi", "(0, 1)"),
                                 ("f1>=nan", "psi", "(0, 1]"), ("error<=inf", "psi", "(0, 1)"),
                                 ("share>=-1", "online", "(0, 1]")]:
        with pytest.raises(CabenchError, match="--target") as exc:
            parse_target(text, setting)
        assert words in str(exc.value) and "\n" not in str(exc.value)


def test_crossing_interpolates_in_log_budget_from_the_last_miss():
    grid = np.array([1.0, 2.0, 4.0, 8.0])
    error = Target("error", 0.1)
    # 0.5 at 2, 0.05 at 4: the target is met 8/9 of the way from log 2 to log 4
    assert crossing(grid, np.array([0.9, 0.5, 0.05, 0.0]), error) == pytest.approx(2 ** (1 + 8 / 9))
    # met early then missed again: only the last run of met budgets counts
    assert crossing(grid, np.array([0.05, 0.5, 0.05, 0.0]), error) == pytest.approx(2 ** (1 + 8 / 9))
    assert crossing(grid, np.array([np.nan, 0.0, 0.0, 0.0]), error) == 2.0  # below 2 the method cannot run
    assert crossing(grid, np.array([0.0, 0.0, 0.0, 0.0]), error) == 1.0
    assert crossing(grid, np.array([0.9, 0.5, 0.05, 0.2]), error) == math.inf
    assert crossing(grid, np.array([0.2, 0.6, 0.7, 0.9]), Target("f1", 0.7)) == 4.0


def test_an_estimate_moves_the_draws_needs_to_the_extrapolated_level_and_never_beyond_the_grid():
    grid = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    error = Target("error", 0.1)

    def met_from(g: int) -> np.ndarray:  # a curve that meets the target from grid point g on
        return np.where(np.arange(5) >= g, 0.0, 1.0 if g == 0 else 0.5)

    draws = np.stack([met_from(1), met_from(1), met_from(1), met_from(2), met_from(3)])  # needs ~2, 2, 2, ~4, ~8
    needs = [crossing(grid, c, error) for c in draws]
    rows_need = crossing(grid, met_from(2), error)
    found = estimate(grid, met_from(2), draws, error, confidence=0.8, level=0.8, beyond=0.0)
    # level: the rows' own need (beyond 0); the draws' needs scaled by it over their median (the third of five)
    assert found.plugin == rows_need and found.rho == pytest.approx(needs[3] * rows_need / needs[2])
    assert found.reach == 1.0 and found.low == pytest.approx(needs[0] * rows_need / needs[2])
    assert found.scale == pytest.approx(rows_need / needs[2])  # a draw's budget to the evaluation split's
    farther = estimate(grid, met_from(2), draws, error, confidence=0.8, level=0.8, beyond=1.0)
    assert farther.rho == pytest.approx(needs[3] * (rows_need / needs[2]) ** 2)
    assert farther.scale == pytest.approx((rows_need / needs[2]) ** 2)
    assert math.isinf(estimate(grid, met_from(3), draws, error, 0.8, 0.8, 1.0).rho)  # about 56: beyond the grid


def test_an_estimate_never_plans_below_the_least_budget_the_method_runs_at():
    """Draws needing about 3.5 and 7 where the profiling rows meet the target at 2, the least budget the method runs
    at (below it, NaN): scaled by (2 / 3.5)^2, the draws' needs fell to about 1.1, a budget a run refuses (Uniform's
    80% interval began at rho 0.056, where `run` asks for rho 1 at least)."""
    grid = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    error = Target("error", 0.1)
    rows = np.array([np.nan, 0.0, 0.0, 0.0, 0.0])  # the profiling rows: met from 2, the method's least budget
    draws = np.stack([np.array([np.nan, 0.5, v, 0.0, 0.0]) for v in (0.0, 0.0, 0.5)])  # need 4, 4 and ~8
    found = estimate(grid, rows, draws, error, confidence=0.8, level=0.8, beyond=1.0)
    needs = [crossing(grid, c, error) for c in draws]
    assert found.scale == pytest.approx((2 / needs[0]) ** 2) and needs[0] * found.scale < 2.0
    assert found.low == 2.0 and found.rho == found.high == pytest.approx(needs[2] * found.scale)
    assert found.rho > 2.0


def _swapped(frame: pd.DataFrame, evaluation: set[str]) -> pd.DataFrame:
    """Every evaluation row's values moved to the next configuration (the last one's to the first)."""
    out = frame.copy()
    rows = out["instance_id"].isin(evaluation)
    configs = sorted(out["config_id"].unique())
    ahead = dict(zip(configs, configs[1:] + configs[:1]))
    values = ["correct", "latency_s", "tokens"]
    moved = out.loc[rows].assign(config_id=out.loc[rows, "config_id"].map(ahead))
    merged = out.loc[rows, ["config_id", "instance_id"]].merge(moved[["config_id", "instance_id", *values]],
                                                               on=["config_id", "instance_id"])
    out.loc[rows, values] = merged[values].to_numpy()
    return out


def test_the_plan_reads_no_row_of_the_evaluation_split(tmp_path):
    logs = spread_logs(5, n_instances=60)
    split = {"profiling_size": 25, "seed": 3}
    ids = np.array(sorted(logs["instance_id"].unique()), dtype=object)
    evaluation = set(ids[split_instances(ids, Split(**split))[1]])
    truths = []
    for name, frame in (("original", logs), ("swapped", _swapped(logs, evaluation))):
        folder = write_dataset(tmp_path / name / "logs", frame, split=split)
        cfg = parse_config({"name": "same", "dataset": str(folder), "setting": "psi", "rho": [10],
                            "methods": ["copsi-r", "psi-sr"]}, f"{name}.yaml")
        spec = PlanSpec((Target("error", 0.3), Target("f1", 0.9)), draws=3, repetitions=6, max_share=2.0)
        write_plan(plan_config(cfg, spec, quiet=True), tmp_path / f"{name}_plan", key="one request")
        truths.append(build_problem(cfg)[0].mu)  # the evaluation split's means: what the swap changed
    assert not np.allclose(truths[0], truths[1])
    for table in ("plan.csv", "plan_curves.csv"):
        original = (tmp_path / "original_plan" / table).read_text()
        assert original == (tmp_path / "swapped_plan" / table).read_text()
    assert (tmp_path / "original_plan" / "plan.png").stat().st_size > 10_000


def test_posterior_draws_of_epoch_logs_resample_whole_questions(tmp_path):
    """Epoch logs (--repeats epochs): three runs of each of 60 questions, alike (a question is right or wrong on
    every run). A draw takes questions with all their runs, and the variance of its means is that of 40 profiling
    and 20 evaluation questions, three times that of 120 and 60 independent runs."""
    base = spread_logs(3, n_instances=60)
    logs = pd.concat([base.assign(instance_id=base["instance_id"] + f"#{k}") for k in (1, 2, 3)], ignore_index=True)
    folder = write_dataset(tmp_path / "d", logs, split={"profiling_size": 40, "seed": 0})
    meta = yaml.safe_load((folder / "dataset.yaml").read_text())
    meta["provenance"] = {"repeats": {"policy": "epochs"}}
    (folder / "dataset.yaml").write_text(yaml.safe_dump(meta))
    profiling = profiling_of(load_dataset(folder), np.arange(3))
    assert (profiling.instances, profiling.population, profiling.population_questions) == (120, 60, 20)
    assert np.bincount(profiling.questions).tolist() == [3] * 40
    drawn = posterior_problem(profiling, seed=5, draw=1).sampler.rewards
    assert drawn.shape == (3, 60, 2)
    assert np.array_equal(drawn[:, 0::3], drawn[:, 1::3]) and np.array_equal(drawn[:, 0::3], drawn[:, 2::3])
    means = np.array([posterior_problem(profiling, seed=5, draw=d).mu[0, 0] for d in range(400)])
    sigma2 = profiling.rewards[0, :, 0].var()
    assert means.var() == pytest.approx(sigma2 * (1 / 40 + 1 / 20), rel=0.25)
    assert means.var() > 2 * sigma2 * (1 / 120 + 1 / 60)
    # SIMEX's ratio counts questions too: 40 profiled against 10 evaluated is 4, whatever the runs
    assert extrapolation(dataclasses.replace(profiling, population_questions=10)) == pytest.approx((1 - 4) / (1 + 4))


def test_posterior_draws_resample_whole_profiling_instances(tmp_path):
    folder = write_dataset(tmp_path / "d", spread_logs(4, n_instances=50), split={"profiling_size": 20, "seed": 0})
    ds = load_dataset(folder)
    profiling = profiling_of(ds, np.arange(4))
    assert profiling.population == 30 and profiling.rewards.shape == (4, 20, 2)
    drawn = posterior_problem(profiling, seed=5, draw=1)
    rewards = drawn.sampler.rewards  # [K, population, D]
    assert rewards.shape == (4, 30, 2)
    again = posterior_problem(profiling, seed=5, draw=1).sampler.rewards
    assert np.array_equal(rewards, again)
    assert not np.array_equal(rewards, posterior_problem(profiling, seed=5, draw=2).sampler.rewards)
    # each drawn instance is one profiling instance with its row of every configuration (and its costs)
    for q in range(30):
        hits = [p for p in range(20) if np.array_equal(rewards[:, q], profiling.rewards[:, p])
                and np.array_equal(drawn.sampler.costs[:, q], profiling.costs[:, p])]
        assert hits
    # over many draws the means centre on the profiling means (a bootstrap is unbiased for the mean) and spread as
    # the evaluation split's would, sigma^2 (1/n + 1/m): 20 profiling instances, then 30 of them
    drawn_means = np.array([posterior_problem(profiling, 0, d).mu for d in range(400)])
    assert np.allclose(drawn_means.mean(axis=0), profiling.rewards.mean(axis=1), atol=0.02)
    expected = profiling.rewards.var(axis=1) * (1 / 20 + 1 / 30)
    assert np.allclose(drawn_means.var(axis=0), expected, rtol=0.3)


def test_a_planned_budget_is_borne_out_by_the_instance_itself():
    cfg = parse_config({"dataset": FIVE, "setting": "psi", "rho": [10], "methods": ["psi-sr"],
                        "split": {"profiling_size": 100, "seed": 0}}, "five.yaml")
    target = Target("error", 0.2)
    found = plan_config(cfg, PlanSpec((target,), draws=8, repetitions=40, max_share=4.0), quiet=True)
    (row,) = found.rows
    assert math.isfinite(row.estimate.rho) and row.estimate.low <= row.estimate.high
    truth, _, _ = build_problem(cfg)
    keys = stream_keys(99, np.arange(300), truth.arm_ids)
    method = cfg.methods[0]
    at_plan = metrics_at(truth, method, row.estimate.rho, keys, "deterministic", 0.0)["error"]
    at_quarter = metrics_at(truth, method, row.estimate.rho / 4, keys, "deterministic", 0.0)["error"]
    assert at_plan <= 0.2 + 0.03 and at_quarter > 0.2  # within sampling error of the target, and not 4x too large
    # each draw's need, moved to the level extrapolated from the profiling rows' own need away from the draws' (lower)
    # median, as far again for a synthetic instance (draws at 2 sigma^2/n, the rows at sigma^2/n, the instance at 0):
    # the plan holds for 80% of them, and for fewer below it
    needs = np.sort(row.estimate.needs)
    median = needs[len(needs) // 2 - 1]
    moved = needs / median * row.estimate.plugin * (row.estimate.plugin / median)
    assert len(needs) == 8 and np.mean(moved <= row.estimate.rho * (1 + 1e-12)) >= 0.8 > np.mean(
        moved < row.estimate.rho * (1 - 1e-12))
    frame = plan_frame(found)
    assert frame.loc[0, "exhaustive_share"] == pytest.approx(row.estimate.rho / 100)  # 100 profiling pulls per arm
    assert frame.loc[0, "budget_tokens"] == pytest.approx(row.estimate.rho * 5)  # B = rho K cbar, unit costs


def test_an_online_share_target_is_planned_and_borne_out():
    cfg = parse_config({"dataset": FIVE, "setting": "online", "rho": [10], "methods": ["cohv-ucb"],
                        "split": {"profiling_size": 100, "seed": 2}}, "five_online.yaml")
    found = plan_config(cfg, PlanSpec((Target("share", 0.8),), draws=8, repetitions=20, epsilon=0.0,
                                      max_share=20.0), quiet=True)
    (row,) = found.rows
    assert math.isfinite(row.estimate.rho)
    truth, _, _ = build_problem(cfg)
    keys = stream_keys(7, np.arange(100), truth.arm_ids)
    assert metrics_at(truth, cfg.methods[0], row.estimate.rho, keys, None, 0.0)["share"] >= 0.8 - 0.1
    profiling = config_profiling(cfg)
    assert profiling.population is None and profiling.rewards.shape == (5, 100, 2)


def test_an_online_round_robin_is_not_planned(tmp_path):
    """A round robin's most-pulled configuration is its turn, not a preference: no share target is planned for it,
    and a config of round robins alone is refused in one line."""
    cfg = parse_config({"dataset": FIVE, "setting": "online", "rho": [10], "methods": ["cohv-ucb", "uniform"],
                        "split": {"profiling_size": 40, "seed": 2}}, "five_online.yaml")
    found = plan_config(cfg, PlanSpec((Target("share", 0.8),), draws=2, repetitions=4, max_share=2.0), quiet=True)
    assert [r.method for r in found.rows] == ["cohv-ucb"] and found.unplanned == ("uniform",)
    assert set(found.curves["method"]) == {"cohv-ucb"}
    assert "Uniform: a round robin, not planned" in format_plan(found)
    config = tmp_path / "rr.yaml"
    config.write_text(yaml.safe_dump({"name": "rr", "dataset": FIVE, "setting": "online", "rho": [10],
                                      "methods": ["uniform"], "output": str(tmp_path / "rr")}))
    result = RUNNER.invoke(app, ["plan", str(config), "--target", "share>=0.8", "--quiet"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "rr: methods: only round robins (uniform)" in result.output
    assert not (tmp_path / "rr_plan").exists()


def test_plan_command_prints_the_table_and_writes_its_files(tmp_path):
    config = tmp_path / "g5.yaml"
    config.write_text(yaml.safe_dump({"name": "g5", "dataset": FIVE, "setting": "psi", "rho": [10],
                                      "methods": ["copsi-r", "psi-sr"], "output": str(tmp_path / "results" / "g5")}))
    result = RUNNER.invoke(app, ["plan", str(config), "--target", "error<=0.2", "--target", "f1>=0.9",
                                 "--draws", "3", "--repetitions", "10", "--max-share", "3", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "CoPSI-R" in result.output and "PSI-SR" in result.output and "error<=0.2" in result.output
    assert "draws: the share of the drawn problems that reach the target within the grid" in result.output
    table = pd.read_csv(tmp_path / "results" / "g5_plan" / "plan.csv")
    assert len(table) == 4 and set(table["target"]) == {"error<=0.2", "f1>=0.9"}
    assert (table["rho_low"] <= table["rho_high"]).all()
    curves = pd.read_csv(tmp_path / "results" / "g5_plan" / "plan_curves.csv")
    assert np.allclose(curves["budget_tokens"], 5 * curves["rho"])  # B = rho K cbar with five unit costs
    bad = RUNNER.invoke(app, ["plan", str(config), "--target", "share>=0.9"])
    assert bad.exit_code == 2 and "online setting" in bad.output and len(bad.output.strip().splitlines()) == 1
    for share in ("inf", "1e308"):  # the grid's top overflowed: a traceback and exit 1
        bad = RUNNER.invoke(app, ["plan", str(config), "--target", "error<=0.2", "--max-share", share])
        assert bad.exit_code == 2 and "--max-share" in bad.output and len(bad.output.strip().splitlines()) == 1
    # NaN was said to be above the range ("less than or equal to 0.99"): it is no number, and each option says its
    # range
    for option, value, said in (("--confidence", "nan", "'nan' is not a number; give a number from 0.01 to 0.99"),
                                ("--epsilon", "NaN", "'NaN' is not a number; give a number from 0 to 1"),
                                ("--confidence", "1", "'1' is out of range; give a number from 0.01 to 0.99"),
                                ("--max-share", "0.5x", "'0.5x' is not a number; give one from 0.001 to 1000000")):
        bad = RUNNER.invoke(app, ["plan", str(config), "--target", "error<=0.2", option, value])
        assert bad.exit_code == 2 and len(bad.stderr.splitlines()) == 1, bad.stderr
        assert bad.stderr.startswith(f"error: Invalid value for '{option}': {said} (see `"), bad.stderr


def test_a_plan_of_a_dataset_moved_elsewhere_is_the_same_plan(tmp_path):
    """The plan's key held the dataset folder's path: the same plan asked of the project moved or copied was refused
    as another. It names the dataset by its content now: moved, the plan is written again; its logs changed, it is
    another plan."""
    logs = spread_logs(5, 60, seed=4)
    out = tmp_path / "p"
    for where in ("here", "there"):
        folder = write_dataset(tmp_path / where / "d", logs, split={"profiling_size": 30, "seed": 0})
        config = tmp_path / where / "c.yaml"
        config.write_text(yaml.safe_dump({"name": "moved", "dataset": str(folder), "setting": "psi", "rho": [10],
                                          "methods": ["psi-sr"], "output": str(tmp_path / where / "results")}))
        done = RUNNER.invoke(app, ["plan", str(config), "--target", "f1>=0.9", "--draws", "2", "--repetitions", "4",
                                   "--max-share", "2", "--quiet", "--out", str(out)])
        assert done.exit_code == 0, done.output
    write_dataset(tmp_path / "there" / "d", spread_logs(5, 60, seed=5), split={"profiling_size": 30, "seed": 0})
    other = RUNNER.invoke(app, ["plan", str(config), "--target", "f1>=0.9", "--draws", "2", "--repetitions", "4",
                                "--max-share", "2", "--quiet", "--out", str(out)])
    assert other.exit_code == 2 and "holds another plan" in other.output


def test_a_plan_asked_otherwise_is_never_replaced_without_force(tmp_path):
    config = tmp_path / "g5.yaml"
    config.write_text(yaml.safe_dump({"name": "g5", "dataset": FIVE, "setting": "psi", "rho": [10],
                                      "methods": ["psi-sr"], "output": str(tmp_path / "results" / "g5")}))
    small = ["--draws", "2", "--repetitions", "4", "--max-share", "2", "--quiet", "--out", str(tmp_path / "p")]
    plan = tmp_path / "p" / "plan.csv"

    def asked(*extra: str):
        return RUNNER.invoke(app, ["plan", str(config), *extra, *small])

    first = asked("--target", "f1>=0.9")
    assert first.exit_code == 0, first.output
    kept, key = plan.read_bytes(), pd.read_csv(plan)["plan_key"].iloc[0]
    again = asked("--target", "f1>=0.9")  # the same request: the same plan, written again
    assert again.exit_code == 0 and plan.read_bytes() == kept
    for other in (["--target", "error<=0.1"], ["--target", "f1>=0.9", "--seed", "7"]):
        refused = asked(*other)
        assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1, refused.output
        assert f"{plan}: holds another plan ({key}), not this one (" in refused.output and "--force" in refused.output
        assert plan.read_bytes() == kept  # nothing computed is lost
    replaced = asked("--target", "error<=0.1", "--force")
    assert replaced.exit_code == 0 and set(pd.read_csv(plan)["target"]) == {"error<=0.1"}
    plan.write_text("not,a plan\n1,2\n")
    foreign = asked("--target", "error<=0.1")
    assert foreign.exit_code == 2
    assert f"{plan}: not a plan cabench wrote (no plan_key could be read from it); " in foreign.output
    assert plan.read_text() == "not,a plan\n1,2\n"
    plan.unlink()  # a figure of the user's own where a plan would draw its own, and no plan.csv: kept
    (tmp_path / "p" / "plan.png").write_bytes(b"mine")
    figure = asked("--target", "error<=0.1")
    assert figure.exit_code == 2 and len(figure.output.strip().splitlines()) == 1, figure.output
    assert "holds plan_curves.csv and plan.png but no plan.csv" in figure.output and "--force" in figure.output
    assert (tmp_path / "p" / "plan.png").read_bytes() == b"mine" and not plan.exists()


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a config without `output` writes beside results/ in the working directory


def test_advise_takes_a_budget_or_targets_and_spends_the_plan(tmp_path):
    from cabench.advise_plan import Budget, targets_by_setting

    by_setting = {"online": ["cohv-ucb"], "psi": ["copsi-r"]}
    asked = targets_by_setting(None, ("error<=0.1", "share>=0.9"), by_setting)
    assert asked == {"psi": (Target("error", 0.1),), "online": (Target("share", 0.9),)}
    for budget, targets in ((Budget(1.0, "usd"), ("error<=0.1",)), (None, ())):
        with pytest.raises(CabenchError, match="one of the two"):
            targets_by_setting(budget, targets, by_setting)
    with pytest.raises(CabenchError, match="no method of the identification setting"):
        targets_by_setting(None, ("f1>=0.7",), {"online": ["cohv-ucb"]})
    folder = write_dataset(tmp_path / "five", spread_logs(5, n_instances=60), split={"profiling_size": 30, "seed": 0})
    result = RUNNER.invoke(app, ["advise", str(folder), "--target", "share>=0.6", "--methods", "cohv-ucb",
                                 "--repetitions", "4", "--out", str(tmp_path / "advice"), "--quiet"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("plan, online: CoHV-UCB share>=0.6 at "))
    planned = pd.read_csv(tmp_path / "advice" / "plan" / "five_online" / "plan.csv")
    spent = line.split("; spending ")[1].split(" ")[0]
    assert float(spent.replace(",", "")) >= planned.loc[0, "budget_tokens"]  # rounded up, never below the plan
    reverse = planned.loc[0, "rho_draws_median"] > planned.loc[0, "rho_profiling_rows"]
    assert ("the draws need more than the profiling rows" in line) == reverse, (line, reverse)
    assert (tmp_path / "advice" / "results" / f"five_online_{spent.replace(',', '')}tokens").is_dir()
    kept = (tmp_path / "advice" / "plan" / "five_online" / "plan.csv").read_bytes()
    other = RUNNER.invoke(app, ["advise", str(folder), "--target", "share>=0.7", "--methods", "cohv-ucb",
                                "--repetitions", "4", "--out", str(tmp_path / "advice"), "--quiet"])
    assert other.exit_code == 2 and "holds another plan" in other.output and "pass another --out" in other.output
    assert (tmp_path / "advice" / "plan" / "five_online" / "plan.csv").read_bytes() == kept


def test_a_plan_does_not_depend_on_the_backend_or_the_workers():
    from cabench.backends import Backend
    from cabench.budget_plan import plan_profiling

    cfg = parse_config({"dataset": FIVE, "setting": "psi", "rho": [10], "methods": ["copsi-r"]}, "five.yaml")
    profiling = config_profiling(cfg)
    spec = PlanSpec((Target("f1", 0.9),), draws=3, repetitions=8, max_share=2.0)
    alone, pooled = (plan_profiling(profiling, "psi", cfg.methods, ("deterministic",), spec, backend)
                     for backend in (Backend("sequential"), Backend("threading", 2)))
    pd.testing.assert_frame_equal(plan_frame(alone), plan_frame(pooled))
    pd.testing.assert_frame_equal(alone.curves, pooled.curves)


def test_the_plan_table_keeps_its_columns_apart_for_a_long_method_name(monkeypatch):
    """Accuracy-Cost-UCB (17 characters) ran into the cost mode column, which was 10 wide; a budget beyond the grid
    of eight digits ('> 84,084,843 tokens', 19 characters) ran into the target column, which was 18 wide."""
    cfg = parse_config({"dataset": FIVE, "setting": "online", "rho": [10], "methods": ["cohv-ucb", "acc-cost-ucb"],
                        "split": {"profiling_size": 40, "seed": 2}}, "five_online.yaml")
    found = plan_config(cfg, PlanSpec((Target("share", 0.8),), draws=2, repetitions=4, max_share=2.0), quiet=True)
    header, *rows = format_plan(found).splitlines()[1:4]
    assert header.startswith("  method             cost mode      target")
    assert rows[0].startswith("  CoHV-UCB           -              share>=0.8")
    assert rows[1].startswith("  Accuracy-Cost-UCB  -              share>=0.8")
    assert len({len(line) for line in (header, *rows)}) == 1  # every row as wide as the header
    beyond = Estimate(math.inf, math.inf, math.inf, 0.0)
    far = dataclasses.replace(found, rows=(dataclasses.replace(found.rows[0], estimate=beyond), *found.rows[1:]))
    monkeypatch.setattr(budget_plan, "amount", lambda value, unit: "84,084,843 tokens")  # the grid's top, say
    lines = format_plan(far).splitlines()
    header, first, second = lines[1:4]
    top = float(found.grid[-1]) / found.instances
    # an interval wholly beyond the grid is said once (it read '> X - > X'), its multiple a bound (it read '-')
    assert first.endswith(f"share>=0.8     > 84,084,843 tokens   > 84,084,843 tokens{f'> {top:.3g}':>14}     0%")
    assert len({len(line) for line in (header, first, second)}) == 1
    assert f"  > 84,084,843 tokens: not reached within the grid, whose largest budget is {top:.3g}x the exhaustive " \
           "evaluation (--max-share)" in lines


def test_a_plan_from_a_handful_of_profiling_instances_is_refused_in_one_line(tmp_path):
    """From one profiling instance every draw is that instance: the plan's interval was a point and every draw
    'reached' a target the run then missed by far. Fewer than 20 profiling instances are refused, naming the key."""
    folder = write_dataset(tmp_path / "d", spread_logs(4, n_instances=50), split={"profiling_size": 19, "seed": 0})
    cfg = parse_config({"name": "few", "dataset": str(folder), "setting": "psi", "rho": [10],
                        "methods": ["copsi-r"]}, "few.yaml")
    spec = PlanSpec((Target("f1", 0.7),), draws=2, repetitions=4, max_share=2.0)
    with pytest.raises(CabenchError) as exc:
        plan_config(cfg, spec, quiet=True)
    assert str(exc.value) == ("few: split.profiling_size: 19 profiling instances are too few to plan from (at least "
                              "20): the plan resamples them to see what they leave uncertain, and so few resample "
                              "into one another; profile on more, or run at a --budget")
    (tmp_path / "few.yaml").write_text(yaml.safe_dump({"name": "few", "dataset": str(folder), "setting": "psi",
                                                       "rho": [10], "methods": ["copsi-r"]}))
    result = RUNNER.invoke(app, ["plan", str(tmp_path / "few.yaml"), "--target", "f1>=0.7", "--out",
                                 str(tmp_path / "few_plan")])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "19 profiling instances" in result.stderr
    assert not (tmp_path / "few_plan").exists()
    folder = write_dataset(tmp_path / "e", spread_logs(4, n_instances=50), split={"profiling_size": 20, "seed": 0})
    cfg = parse_config({"name": "enough", "dataset": str(folder), "setting": "psi", "rho": [10],
                        "methods": ["copsi-r"]}, "enough.yaml")
    assert plan_config(cfg, spec, quiet=True).profiling.instances == 20


def test_the_plan_figure_title_fits_in_the_figure(tmp_path, monkeypatch):
    """A one-panel plan's title ('<name>: predicted from N profiling instances (D draws x R repetitions)') was one
    line wider than the 5.2-inch figure and cut off at both sides."""
    from matplotlib.figure import Figure

    from cabench.planning.figure import plan_figure

    boxes = []
    save = Figure.savefig

    def saved(fig, *args, **kwargs):
        save(fig, *args, **kwargs)
        boxes.append((fig._suptitle.get_window_extent(fig.canvas.get_renderer()), fig.bbox))

    monkeypatch.setattr(Figure, "savefig", saved)
    curves = pd.DataFrame({"method": "cohv-ucb", "cost_mode": "", "target": "share>=0.8", "rho": [1.0, 2.0],
                           "budget": [10.0, 20.0], "profiling": [0.5, 0.9], "low": [0.4, 0.8], "high": [0.6, 1.0]})
    title = "synthetic_online: predicted from 200 profiling instances (20 draws x 50 repetitions)"
    plan_figure(curves, {}, "tokens", None, title)
    (box, page), = boxes
    assert 0 <= box.x0 and box.x1 <= page.x1 and box.y1 <= page.y1


def test_a_plan_folder_that_is_a_file_is_refused_before_any_work(tmp_path, monkeypatch):
    config = tmp_path / "g5.yaml"
    config.write_text(yaml.safe_dump({"name": "g5", "dataset": FIVE, "setting": "psi", "rho": [10],
                                      "methods": ["psi-sr"], "output": str(tmp_path / "results" / "g5")}))
    (tmp_path / "taken").write_text("mine\n")

    def planned(*args, **kwargs):
        raise AssertionError("planned before the folder was checked")

    monkeypatch.setattr("cabench.budget_plan.plan_profiling", planned)
    for force in ([], ["--force"]):
        result = RUNNER.invoke(app, ["plan", str(config), "--target", "f1>=0.9", "--quiet", "--out",
                                     str(tmp_path / "taken"), *force])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert f"error: {tmp_path / 'taken'}: exists and is not a folder" in result.output
        assert (tmp_path / "taken").read_text() == "mine\n"


def test_a_tie_for_the_most_pulls_is_a_hit_only_where_every_tied_configuration_is_good():
    """At rho 1 CoHV-UCB makes its initial round only: every configuration pulled once in every repetition. The
    first is the best (the others' nu is under half of it): a hit for none at epsilon 0.1 (counting the first of
    the tied, as before, made it a hit for all, and a plan met at the initial round by the logs' order), and for
    all where epsilon admits every configuration."""
    from cabench.online import OnlineMethod
    from cabench.synthetic import SyntheticSpec, synthetic_problem

    problem = synthetic_problem(SyntheticSpec("tie", ((0.9, 0.9), (0.5, 0.5), (0.4, 0.6)), (1, 1, 1)))
    keys = stream_keys(0, np.arange(8), problem.arm_ids)
    assert problem.nu.argmax() == 0 and (problem.nu[1:] < 0.5 * problem.nu[0]).all()
    assert metrics_at(problem, OnlineMethod("cohv-ucb"), 1.0, keys, None, 0.1)["share"] == 0.0
    assert metrics_at(problem, OnlineMethod("cohv-ucb"), 1.0, keys, None, 0.99)["share"] == 1.0


def test_a_targets_curve_is_the_one_it_gets_when_asked_alone():
    """share>=0.5 asked with share>=0.95: the simulation runs on for the stricter target, but the looser one's column
    stops where it is met twice in a row, as when it is asked alone (later noise moved its plan)."""
    from cabench.online import OnlineMethod
    from cabench.planning.curves import metric_curve
    from cabench.synthetic import SyntheticSpec, synthetic_problem

    problem = synthetic_problem(SyntheticSpec("near", ((0.9, 0.5), (0.85, 0.52), (0.3, 0.3)), (1, 1, 1),
                                              noise="gaussian", sigma=0.3))
    keys = stream_keys(0, np.arange(6), problem.arm_ids)
    grid = np.sqrt(2.0) ** np.arange(0, 16)
    loose, strict = parse_target("share>=0.5", "online"), parse_target("share>=0.95", "online")
    alone = metric_curve(problem, OnlineMethod("cohv-ucb"), grid, keys, None, 0.0, (loose,))[:, 0]
    both = metric_curve(problem, OnlineMethod("cohv-ucb"), grid, keys, None, 0.0, (loose, strict))
    assert np.array_equal(both[:, 0], alone, equal_nan=True)
    stop = int(np.flatnonzero(loose.met(alone[:-1]) & loose.met(alone[1:]))[0]) + 1
    assert (alone[stop:] == alone[stop]).all() and not (both[stop:, 1] == both[stop, 1]).all()


def test_a_stricter_target_is_never_planned_below_a_looser_one():
    """Each target's level is extrapolated from its own needs, so share>=0.6 could be planned at 200 while share>=0.5
    was beyond the grid: each estimate is raised to every looser target's on the same metric, never lowered."""
    from cabench.budget_plan import no_less_than_looser

    targets = tuple(parse_target(t, "online") for t in ("share>=0.5", "share>=0.6", "share>=0.4"))
    errors = tuple(parse_target(t, "psi") for t in ("error<=0.2", "error<=0.1"))
    estimates = [Estimate(math.inf, 263.0, math.inf, 0.9), Estimate(201.0, 5.8, 356.0, 0.95),
                 Estimate(117.0, 83.0, 1328.0, 1.0)]
    raised = [no_less_than_looser(targets, estimates, t) for t in range(3)]
    assert [(e.rho, e.low, e.high) for e in raised] == [(math.inf, 263.0, math.inf), (math.inf, 263.0, math.inf),
                                                        (117.0, 83.0, 1328.0)]
    assert [e.reach for e in raised] == [0.9, 0.95, 1.0]  # what the draws reach stays each target's own
    plans = [Estimate(50.0, 40.0, 60.0, 1.0), Estimate(30.0, 20.0, 90.0, 1.0)]
    assert no_less_than_looser(errors, plans, 1) == Estimate(50.0, 40.0, 90.0, 1.0)
    assert no_less_than_looser(errors, plans, 0) == plans[0]


def test_a_plan_whose_draws_need_more_than_the_profiling_rows_says_so():
    """The extrapolation assumes a draw needs less than the profiling rows (its added sampling error widens the
    gaps). Where the draws need more, it carried the level below the profiling rows' own need unsaid (the shipped
    GSM8K subset, f1>=0.8: planned 41,539 tokens, F1 0.53 there on the evaluation split). plan.csv records both
    needs, and the table names the rows."""
    cfg = parse_config({"dataset": FIVE, "setting": "online", "rho": [10], "methods": ["cohv-ucb", "acc-cost-ucb"],
                        "split": {"profiling_size": 40, "seed": 2}}, "five_online.yaml")
    found = plan_config(cfg, PlanSpec((Target("share", 0.8),), draws=2, repetitions=4, max_share=2.0), quiet=True)
    usual = Estimate(40.0, 30.0, 60.0, 1.0, plugin=32.0, needs=(16.0, 20.0, 24.0, 28.0), scale=1.5)
    reverse = Estimate(20.0, 10.0, 40.0, 1.0, plugin=25.0, needs=(30.0, 40.0, 45.0, 50.0, 60.0), scale=0.5)
    rows = (dataclasses.replace(found.rows[0], estimate=usual), dataclasses.replace(found.rows[1], estimate=reverse))
    mixed = dataclasses.replace(found, rows=rows)
    note = [line for line in format_plan(mixed).splitlines() if "note:" in line]
    assert note == ["  note: for Accuracy-Cost-UCB share>=0.8, the draws need more than the profiling rows (plan.csv: "
                    "rho_draws_median, rho_profiling_rows), the reverse of what the extrapolation assumes, which then "
                    "carries the level below the profiling rows' need: the plan may fall short"]
    # a plan over two cost modes has a row per mode: the note names the row's mode (it named "CoPSI f1>=0.8" twice)
    modes = (dataclasses.replace(rows[1], cost_mode="deterministic"),
             dataclasses.replace(rows[1], cost_mode="stochastic", estimate=usual))
    note = [line for line in format_plan(dataclasses.replace(found, rows=modes)).splitlines() if "note:" in line]
    named = [line.split(", the draws")[0] for line in note]
    assert named == ["  note: for Accuracy-Cost-UCB (deterministic) share>=0.8"]
    frame = plan_frame(mixed)
    assert frame["rho_profiling_rows"].tolist() == [32.0, 25.0] and frame["rho_draws_median"].tolist() == [20.0, 45.0]
    usual_only = dataclasses.replace(found, rows=(rows[0],))
    assert "note:" not in format_plan(usual_only)
    # the profiling rows beyond the grid, the draws within it (a plan of 75 profiling instances: every draw met
    # share>=0.5 by rho 2.4, the rows never, the evaluation split by rho 16): the plan follows the rows, and says so
    beyond = Estimate(math.inf, math.inf, math.inf, 1.0, plugin=math.inf, needs=(2.0, 2.4, 3.0), scale=math.inf)
    some = Estimate(math.inf, math.inf, math.inf, 0.4, plugin=math.inf, needs=(2.0, 3.0, *[math.inf] * 3))
    for drawn, said in ((beyond, True), (some, False)):  # some: fewer than half the draws meet it
        lines = format_plan(dataclasses.replace(found, rows=(dataclasses.replace(rows[0], estimate=drawn),)))
        note = [line for line in lines.splitlines() if "note:" in line]
        assert note == ([
            "  note: for CoHV-UCB share>=0.8, the profiling rows do not reach the target within the grid though half "
            "or more of the draws do (plan.csv: rho_profiling_rows, rho_draws_median): the plan follows the rows, "
            "whose gaps are narrower than a draw's; the evaluation split may need far less, and a larger profiling "
            "split says more"] if said else []), drawn


def test_advise_says_when_its_plan_may_fall_short(tmp_path, monkeypatch):
    """advise prints the plan in one line: where the draws need more than the profiling rows (here made so), that
    line says the plan may fall short."""
    from cabench import advise_plan

    monkeypatch.setattr(advise_plan, "reversed_premise", lambda estimate: math.isfinite(estimate.rho))
    folder = write_dataset(tmp_path / "five", spread_logs(5, n_instances=60), split={"profiling_size": 30, "seed": 0})
    result = RUNNER.invoke(app, ["advise", str(folder), "--target", "share>=0.6", "--methods", "cohv-ucb",
                                 "--repetitions", "4", "--out", str(tmp_path / "advice"), "--quiet"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("plan, online: CoHV-UCB share>=0.6 at "))
    assert " (the draws need more than the profiling rows: the plan may fall short; see plan.csv); spending " in line
    monkeypatch.setattr(advise_plan, "reversed_premise", lambda estimate: False)
    monkeypatch.setattr(advise_plan, "rows_beyond_draws", lambda estimate: True)
    result = RUNNER.invoke(app, ["advise", str(folder), "--target", "share>=0.6", "--methods", "cohv-ucb",
                                 "--repetitions", "4", "--out", str(tmp_path / "again"), "--quiet"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("plan, online: CoHV-UCB share>=0.6 at "))
    assert (" (the profiling rows do not reach it within the grid though half or more of the draws do: the evaluation "
            "split may need far less; see plan.csv); spending ") in line


def test_a_cap_below_the_grids_first_budget_is_refused():
    """--max-share 0.001 of 800 instances capped the grid below rho = 1, which the grid planned all the same
    (1,812 tokens against a 1,450-token cap); now refused in one line naming the least cap."""
    cfg = parse_config({"dataset": FIVE, "setting": "online", "rho": [10], "methods": ["cohv-ucb"],
                        "split": {"profiling_size": 40, "seed": 2}}, "five_online.yaml")
    profiling = config_profiling(cfg)
    instances = profiling.population or profiling.instances
    with pytest.raises(CabenchError, match=r"give at least --max-share (\S+)$") as refused:
        plan_config(cfg, PlanSpec((Target("share", 0.8),), draws=2, repetitions=2, max_share=0.5 / instances),
                    quiet=True)
    least = float(str(refused.value).rsplit(" ", 1)[1])
    assert least * instances >= 1 and (least - 0.001 * least) * instances < 1  # enough, and hardly more
    for n in (3, 9, 49, 300, 900, 999):  # the cap named is itself enough (0.333 x 3 was refused)
        assert float(budget_plan.rounded_up(1 / n)) * n >= 1 and float(budget_plan.rounded_up(1 / n)) < 1.01 / n
    # a budget a float's noise above a step (B = rho K cbar = 0.0011000000000000003) is not rounded below itself:
    # advise gave $0.0011 for rho 1, which the run then refused
    for value, stated in ((0.0011000000000000003, 0.00111), (0.1 + 0.2, 0.301), (0.0011, 0.0011), (0.3, 0.3)):
        assert budget_plan.rounded_up(value) >= value and budget_plan.rounded_up(value) == pytest.approx(stated)


@pytest.mark.parametrize("surrogate", [True, False])
def test_a_plan_of_surrogate_logs_says_so_in_its_table_file_and_figure(tmp_path, monkeypatch, surrogate):
    """README: every figure and report of the surrogate logs says they are surrogate, the plan's table, plan.csv
    and plan.png too."""
    notes = []

    def figure(*args, **kwargs):
        notes.append(args[5] if len(args) > 5 else kwargs.get("note"))
        return b"png"

    monkeypatch.setattr(budget_plan, "plan_figure", figure)
    folder = write_dataset(tmp_path / "five", spread_logs(5, n_instances=60), surrogate=surrogate,
                           split={"profiling_size": 30, "seed": 0})
    config = tmp_path / "s.yaml"
    config.write_text(yaml.safe_dump({"name": "s", "dataset": str(folder), "setting": "psi", "rho": [10],
                                      "methods": ["copsi-r"], "output": str(tmp_path / "results" / "s")}))
    result = RUNNER.invoke(app, ["plan", str(config), "--target", "f1>=0.9", "--draws", "3", "--repetitions", "5",
                                 "--max-share", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("s (psi, surrogate logs): planned from 30" if surrogate else
                                    "s (psi): planned from 30")
    assert pd.read_csv(tmp_path / "results" / "s_plan" / "plan.csv")["surrogate"].tolist() == [surrogate]
    assert notes == [SURROGATE_NOTE if surrogate else None]


def test_the_plan_figure_writes_its_note_inside_the_image(monkeypatch):
    """The surrogate note goes below the panels, and the image is cut to hold it and the two-line budget label."""
    from matplotlib.figure import Figure

    from cabench.planning.figure import plan_figure

    seen = []
    save = Figure.savefig

    def saved(fig, *args, **kwargs):
        save(fig, *args, **kwargs)
        renderer = fig.canvas.get_renderer()
        notes = [t.get_window_extent(renderer) for t in fig.texts if t.get_text() == SURROGATE_NOTE]
        seen.append((notes, fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans), kwargs.get("bbox_inches")))

    monkeypatch.setattr(Figure, "savefig", saved)
    curves = pd.DataFrame({"method": "copsi", "cost_mode": "deterministic", "target": "f1>=0.8", "rho": [1.0, 2.0],
                           "budget": [10.0, 20.0], "profiling": [0.5, 0.9], "low": [0.4, 0.8], "high": [0.6, 1.0]})
    plan_figure(curves, {}, "tokens", 15.0, "g: predicted", SURROGATE_NOTE)
    (notes, box, cut), = seen
    assert len(notes) == 1 and cut == "tight"
    text = notes[0]
    # below the panels, and within what the image is cut to
    assert text.y1 < 0 and box.y0 <= text.y0 and text.x0 >= box.x0 and text.x1 <= box.x1
    seen.clear()
    plan_figure(curves, {}, "tokens", 15.0, "g: predicted")
    assert seen[0][0] == []  # real logs: no note


@pytest.mark.parametrize(("limits", "labels"), [
    ((1_500.0, 50_000.0), ["2\\times10^{3}", "5\\times10^{3}", "10^{4}", "2\\times10^{4}", "5\\times10^{4}"]),
    ((15_000.0, 9e7), ["10^{5}", "10^{6}", "10^{7}"]),
    ((1_100.0, 9_000.0), ["2\\times10^{3}", "5\\times10^{3}"]),
    ((3_142.0, 6_735.0), ["4\\times10^{3}", "5\\times10^{3}", "6\\times10^{3}"]),  # under half a decade
    ((3_000.0, 4_500.0), ["3\\times10^{3}", "4\\times10^{3}"]),
    ((3_100.0, 3_900.0), None),  # no two multiples of a power of ten: a few evenly spaced budgets
    ((1e-3, 1e12), None),  # fifteen decades: every few powers
])
def test_the_plan_figures_budget_axis_labels_ticks_apart(limits, labels):
    """plan.png's log budget axis spanning under two decades was labelled by matplotlib at 2, 3, 4 and 6 times a
    power of ten, labels running into one another; it is labelled at 1, 2 and 5 times a power of ten there, at the
    powers alone over wider spans, and no two labels overlap."""
    import matplotlib.pyplot as plt

    from cabench.planning.figure import _budget_ticks

    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    ax.set_xscale("log")
    ax.set_xlim(*limits)
    _budget_ticks(ax)
    fig.canvas.draw()
    shown = [t for t in [*ax.get_xticklabels(), *ax.get_xminorticklabels()]
             if t.get_text() and limits[0] <= t.get_position()[0] <= limits[1]]
    shown.sort(key=lambda t: t.get_position()[0])
    assert labels is None or [t.get_text().strip("$") for t in shown] == labels
    boxes = [t.get_window_extent() for t in shown]
    assert len(boxes) >= 2 and all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:])), [t.get_text() for t in shown]
    plt.close(fig)
    from cabench.planning.figure import _power_of_ten

    assert [_power_of_ten(v) for v in (0.0, 3200.0, 1e3)] == ["", "$3.2\\times10^{3}$", "$10^{3}$"]


def test_a_share_target_among_configurations_of_one_nu_is_said_to_say_nothing(tmp_path):
    """Configurations alike within epsilon (as near-copies of one another are) met a share target at the least
    budget, and the plan said so as of any other: whichever configuration a method pulls most is a hit."""
    frame = spread_logs(4, n_instances=60)
    first = frame[frame["config_id"] == "cfg00"].reset_index(drop=True)
    copies = pd.concat([first.assign(config_id=f"cfg{c:02d}", model=f"model{c:02d}",
                                     latency_s=first["latency_s"] * (1 + 0.005 * c)) for c in range(4)],
                       ignore_index=True)  # alike within 5%, not within 0.1%
    tied = parse_config({"dataset": str(write_dataset(tmp_path / "tied", copies)), "setting": "online",
                         "rho": [4], "methods": ["cohv-ucb"], "split": {"profiling_size": 30, "seed": 0}}, "t.yaml")
    spec = PlanSpec((Target("share", 0.8),), draws=2, repetitions=4, max_share=2.0)
    note = [line for line in format_plan(plan_config(tied, spec, quiet=True)).splitlines() if "nu on" in line]
    assert note == ["  note: every configuration's nu on the profiling rows is within 5% of the best's (--epsilon "
                    "0.05), so whichever one a method pulls most counts toward share: a share target is met at the "
                    "least budget the method runs at, and says nothing of the method; a smaller --epsilon asks more"]
    spread = parse_config({"dataset": str(write_dataset(tmp_path / "spread", frame)), "setting": "online",
                           "rho": [4], "methods": ["cohv-ucb"], "split": {"profiling_size": 30, "seed": 0}}, "t.yaml")
    assert "nu on" not in format_plan(plan_config(spread, spec, quiet=True))
    strict = dataclasses.replace(spec, epsilon=0.001)
    assert "nu on" not in format_plan(plan_config(tied, strict, quiet=True))
