"""Trajectories averaged over repetitions (cabench.summaries.aggregate_trajectories) against pandas' group-by,
computed here with numpy's mean and standard deviation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cabench.summaries import aggregate_trajectories


def _by_groupby(per_rep: pd.DataFrame, window: int) -> pd.DataFrame:
    rows = []
    for (method, rho, point), g in per_rep.groupby(["method", "rho", "point"], sort=False):
        row = {"dataset": "d", "method": method, "rho": rho, "point": point, "spend": g["spend"].iloc[0]}
        for column in ("cum_regret", "moving_avg"):
            v = g[column].to_numpy()
            v = v[~np.isnan(v)]
            row[f"{column}_mean"] = v.mean() if len(v) else math.nan
            row[f"{column}_se"] = (v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else 0.0) if len(v) else math.nan
        rows.append({**row, "n_reps": int(g["moving_avg"].notna().sum()), "window": window})
    return pd.DataFrame(rows)


def test_trajectories_are_pandas_groups_in_the_order_met():
    """Methods and budgets interleaved, rows of a group scattered and out of order, a moving average empty for some
    repetitions and for every repetition at a point: the same rows, in the order grouping meets them, to the bit."""
    rng = np.random.default_rng(7)
    n = 3_000
    per_rep = pd.DataFrame({"method": rng.choice(["uniform", "cohv-ucb", "hv-ucb"], n),
                            "rho": rng.choice([8.0, 2.0], n), "point": rng.integers(0, 40, n),
                            "rep": rng.integers(0, 9, n), "spend": rng.random(n) * 1e4,
                            "cum_regret": rng.random(n) * 50,
                            "moving_avg": np.where(rng.random(n) < 0.3, np.nan, rng.random(n))})
    per_rep.loc[per_rep["point"] == 0, "moving_avg"] = np.nan
    got = aggregate_trajectories(per_rep, "d", 20)
    expected = _by_groupby(per_rep, 20)
    assert len(got) == len(expected) == per_rep.groupby(["method", "rho", "point"]).ngroups
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got["moving_avg_mean"][got["point"] == 0].isna().all() and (got["n_reps"][got["point"] == 0] == 0).all()
    first = per_rep.iloc[0]
    assert tuple(got.iloc[0][["method", "rho", "point"]]) == (first["method"], first["rho"], first["point"])


def test_the_printed_table_makes_room_for_a_long_method_name():
    """A method of one's own shown by a name over the column's width pushed its row's numbers out of line."""
    from cabench.summaries import format_summary

    long = "my_rules:front_loaded_successive_rejects"
    psi = pd.DataFrame({"method": ["copsi", long], "cost_mode": "deterministic", "rho": [20.0, 20.0],
                        "budget": [1000.0, 1000.0], "error": 0.1, "error_low": 0.05, "error_high": 0.2, "f1": 0.9,
                        "size": 3.0, "spend_share": 0.99, "status": "ok"})
    online = pd.DataFrame({"method": ["cohv-ucb", long], "rho": [20.0, 20.0], "budget": [1000.0, 1000.0],
                           "regret_hv": 1.5, "regret_hv_se": 0.1, "regret_std": 2.5, "regret_std_se": 0.2, "n": 5,
                           "spend_share": 0.99, "status": "ok"})
    for table in (psi, online):
        lines = format_summary(table).splitlines()
        ends = {line.index(token) + len(token.rstrip()) for line, token in zip(lines, (" rho", " 20 ", " 20 "))}
        assert len(lines) == 3 and len(ends) == 1 and lines[2].startswith(long + " "), lines


def test_a_long_cost_units_budget_column_keeps_apart_from_rho():
    """'B (completion tokens)' is wider than the budget column: the header read 'rhoB (completion tokens)'."""
    from cabench.summaries import format_summary

    psi = pd.DataFrame({"method": "copsi", "cost_mode": "deterministic", "rho": [35.96, 143.9],
                        "budget": [100000.0, 400000.0], "error": 0.1, "error_low": 0.05, "error_high": 0.2,
                        "f1": 0.9, "size": 3.0, "spend_share": 0.99, "status": "ok"})
    for table in (psi, psi.drop(columns=["cost_mode", "error", "error_low", "error_high", "f1", "size"]).assign(
            regret_hv=1.5, regret_hv_se=0.1, regret_std=2.5, regret_std_se=0.2, n=5)):
        lines = format_summary(table, "completion_tokens").splitlines()
        assert "rho  B (completion tokens)" in lines[0], lines
        end = lines[0].index("B (completion tokens)") + len("B (completion tokens)")  # budgets end under the header
        assert [line[end - 6:end] for line in lines[1:]] == ["100000", "400000"], lines


def test_dollar_budgets_in_the_printed_table_read_as_written():
    """A budget of $0.00004 printed as 4e-05 in the run's table, beside budgets of 0.0004 and 0.004."""
    from cabench.summaries import format_summary

    psi = pd.DataFrame({"method": "copsi", "cost_mode": "deterministic", "rho": [1.0, 10.0, 100.0],
                        "budget": [4e-05, 0.0004, 0.004], "error": 0.1, "error_low": 0.05, "error_high": 0.2,
                        "f1": 0.9, "size": 3.0, "spend_share": 0.99, "status": "ok"})
    lines = format_summary(psi, "usd").splitlines()
    assert [line.split()[3] for line in lines[1:]] == ["0.00004", "0.0004", "0.004"], lines
    assert "B (USD)" in lines[0] and "e-0" not in "\n".join(lines)
    assert format_summary(psi.assign(budget=[1234.5678, 5.0, 1e-9]), "usd").splitlines()[1].split()[3] == "1235"


def test_the_unpulled_line_says_how_many_a_repetition_left():
    from cabench.summaries import unpulled_text

    row = {"reps_unpulled": 9, "n": 20, "unpulled_max": 1}
    assert unpulled_text(row, "online") == ("9 of 20 repetitions left a configuration never pulled (the budget ran out "
                                            "within the first round)")
    assert unpulled_text({**row, "unpulled_max": 2}, "psi") == (
        "9 of 20 repetitions left configurations never sampled, up to 2 in one (the budget ran out within the first "
        "round)")
