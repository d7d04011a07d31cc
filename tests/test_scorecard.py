"""The scorecard: REPORT.md opens with every claim the report tests, its verdict, the tested quantity with its 95%
interval, and for each claim that does not hold a reason citing a number found in the results files; the paper
table says whether each published number lies in our interval."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cabench import registry
from cabench.analysis import comparisons, verdicts
from cabench.config import load_config
from cabench.report import build_report
from cabench.results import ResultSet
from cabench.runner import run_experiment
from tests.conftest import ROOT, built_once, copied

#: Three of the quick configs (online, subset identification, realised costs) with fewer repetitions: seconds.
QUICK = {"gsm8k_online_quick": 10, "gsm8k_psi_quick": 20, "gsm8k_psi_stochastic_quick": 20}
STATES = {"holds": "holds", "fails": "does not hold", "inconclusive": "inconclusive", "n/a": "not tested"}
NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def quick_results(factory: pytest.TempPathFactory) -> Path:
    """The quick results, run once in the test session (the browser, scorecard and requirement tests read them;
    each works on a copy of its own)."""
    def build(root: Path) -> None:
        for name, reps in QUICK.items():
            cfg = load_config(ROOT / "configs" / f"{name}.yaml",
                              overrides={"output": str(root / name), "repetitions": reps})
            run_experiment(cfg, quiet=True)

    return built_once(factory, "quick_results", build)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return copied(quick_results(tmp_path_factory), tmp_path_factory.mktemp("scorecard"))


@pytest.fixture(scope="module")
def report(root) -> str:
    return build_report(root)


def md_table(text: str, heading: str) -> pd.DataFrame:
    """The first Markdown table after ``heading``, as text cells."""
    lines = text[text.index(heading):].splitlines()
    rows = list(itertools.takewhile(lambda ln: ln.startswith("|"),
                                    itertools.dropwhile(lambda ln: not ln.startswith("|"), lines)))
    cells = [[c.strip() for c in ln.strip("|").split(" | ")] for ln in rows]
    return pd.DataFrame(cells[2:], columns=cells[0])


def file_numbers(folder: Path, name: str) -> np.ndarray:
    """Every finite number in a result file (cells of any column)."""
    frame = pd.read_csv(folder / name)
    values = pd.to_numeric(frame.stack(), errors="coerce").to_numpy(float)
    return values[np.isfinite(values)]


def cited_numbers_found(reason: str, folder: Path) -> bool:
    """Whether each results file the reason cites (summary.csv, arms.csv, dataset.csv) holds, at its printed
    precision, a number the reason gives before citing it (one with decimals, or of three digits or more)."""
    start, found = 0, []
    for cite in re.finditer(r"(summary|arms|dataset)\.csv", reason):
        values = file_numbers(folder, cite.group(0))
        hits = False
        for token in NUMBER.findall(reason[start:cite.start()]):
            text = token.replace(",", "")
            digits = len(text.split(".")[1].split("e")[0]) if "." in text else 0
            if digits or len(text.lstrip("+-")) >= 3:
                hits = hits or bool(np.any(np.abs(values - float(text)) <= 0.5 * 10 ** -digits + 1e-12))
        found.append(hits)
        start = cite.end()
    return bool(found) and all(found)


def test_report_opens_with_the_scorecard(report):
    assert report.splitlines()[:3] == ["# cabench report", "", "## Scorecard"]
    first_experiment = report.index("## Experiment `")
    assert report.index("## Scorecard") < report.index("| experiment | claim | verdict |") < first_experiment


def test_every_tested_claim_is_in_the_scorecard_with_a_measured_reason(root, report):
    card = md_table(report, "## Scorecard")
    assert list(card.columns) == ["experiment", "claim", "verdict", "tested quantity [95% CI]", "why it does not hold"]
    tested = 0
    failing = 0
    for e in ResultSet(root).experiments:
        for v in verdicts(e, comparisons(e)):
            tested += 1
            row = card[(card["experiment"] == f"`{e.label}`") & (card["claim"] == v.claim)]
            assert len(row) == 1, (e.label, v.claim)
            row = row.iloc[0]
            assert row["verdict"] == STATES[v.state]
            assert row["tested quantity [95% CI]"] == v.quantity
            if v.state != "n/a":
                assert re.search(r"\[(95% CI )?[-+]?[\d.]+(e[-+]?\d+)?, [-+]?[\d.]+", v.quantity), v.quantity
            reason = row["why it does not hold"]
            if v.state == "fails":
                failing += 1
                assert reason.endswith(".") and cited_numbers_found(reason, e.folder), reason
            else:
                assert reason == "—"
    assert len(card) == tested and failing >= 2  # the quick results have claims that do not hold


def test_lowest_regret_names_its_closest_comparison_and_the_share_of_repetitions(root, report):
    runs = pd.read_csv(root / "gsm8k_online_quick" / "runs.csv")
    last = runs[runs["rho"] == runs["rho"].max()].pivot(index="rep", columns="method", values="regret_hv")
    card = md_table(report, "## Scorecard")
    quantity = card.loc[card["claim"].str.startswith("CoHV-UCB has the lowest mean R_HV"),
                        "tested quantity [95% CI]"].iloc[0]
    # the closest comparison is the one whose mean paired difference is the least favourable to CoHV-UCB
    diffs = {m: (last["cohv-ucb"] - last[m]).mean() for m in last.columns if m != "cohv-ucb"}
    closest = max(diffs, key=lambda m: diffs[m])
    shown = {"hv-ucb": "HV-UCB", "acc-cost-ucb": "Accuracy-Cost-UCB", "uniform": "Uniform"}[closest]
    diff = (last["cohv-ucb"] - last[closest]).mean()
    lower = 100 * (last["cohv-ucb"] < last[closest]).mean()
    assert quantity.startswith(f"mean paired difference of R_HV, CoHV-UCB minus {shown}: {diff:+.4g} [95% CI ")
    assert f"; CoHV-UCB lower in {lower:.0f}% of repetitions, {shown} in {100 - lower:.0f}%" in quantity
    # the reason cites the winner's and CoHV-UCB's rows of summary.csv at the largest budget
    summary = pd.read_csv(root / "gsm8k_online_quick" / "summary.csv")
    top = summary[summary["rho"] == summary["rho"].max()].set_index("method")
    winner = top["regret_hv"].idxmin()
    assert winner != "cohv-ucb"  # the claim does not hold on these results
    name = {"hv-ucb": "HV-UCB", "acc-cost-ucb": "Accuracy-Cost-UCB", "uniform": "Uniform"}[winner]
    reason = card.loc[card["claim"].str.startswith("CoHV-UCB has the lowest mean R_HV"), "why it does not hold"].iloc[0]
    assert reason.startswith(f"{name}'s mean R_HV is {top.loc[winner, 'regret_hv']:.2f} against "
                             f"{top.loc['cohv-ucb', 'regret_hv']:.2f} (the 95% interval of the paired difference lies "
                             f"at or above 0) and it puts {top.loc[winner, 'frac_optimal']:.3f} of its pulls on the "
                             f"max-ν configuration against CoHV-UCB's {top.loc['cohv-ucb', 'frac_optimal']:.3f} "
                             "(summary.csv)")


def _interval(cell: str) -> tuple[float, float]:
    low, high = re.search(r"our 95% CI ([-+\d.]+)%? to ([-+\d.]+)%?", cell).groups()
    return float(low), float(high)


def test_paper_table_has_a_match_column_that_follows_our_intervals(root, report):
    table = md_table(report, "## The paper's numbers beside ours")
    assert list(table.columns)[-3:] == ["ours", "ours at", "match"]
    assert len(table) > 20
    for _, row in table.iterrows():
        word = row["match"].split(" (")[0]
        assert word in ("yes", "no", "direction only", "n/a"), row["match"]
        if word == "n/a":
            continue
        low, high = _interval(row["match"])
        paper = float(row["paper"].rstrip("%"))
        slack = 0.006 * max(1.0, abs(paper))  # the interval is printed rounded
        if word == "yes":
            assert low - slack <= paper <= high + slack, row.to_dict()
        else:
            assert paper < low + slack or paper > high - slack, row.to_dict()
            signed = row["quantity"].startswith("reduction") or row["quantity"].endswith("gain")
            side = low > 0 if paper > 0 else high < 0  # our whole interval on the paper's side of 0
            assert (word == "direction only") == (signed and side), row.to_dict()
    # one row by hand: Uniform's R_HV at rho=32, mean ± 1.96 standard errors over the repetitions
    runs = pd.read_csv(root / "gsm8k_online_quick" / "runs.csv")
    values = runs[(runs["method"] == "uniform") & (runs["rho"] == 32)]["regret_hv"].to_numpy()
    half = 1.959963984540054 * values.std(ddof=1) / math.sqrt(len(values))
    row = table[(table["quantity"] == "R_HV") & (table["method"] == "Uniform")].iloc[0]
    assert _interval(row["match"]) == pytest.approx((values.mean() - half, values.mean() + half), abs=0.006)
    assert row["match"].startswith("yes" if abs(values.mean() - 169.45) <= half else "no")


@pytest.mark.parametrize("reps", [1, 2])
def test_a_claim_on_fewer_than_five_repetitions_is_inconclusive_and_says_why(tmp_path, reps):
    """Over two repetitions a percentile bootstrap interval is the two differences' range, so 'significantly below'
    held whenever both had one sign; over one, the report showed '± 0.00' and '[+nan, +nan]'. Now no claim holds
    or fails on fewer than five repetitions, the intervals say why there are none, and one repetition has no ±."""
    from cabench.config import parse_config
    from cabench.stats import MIN_PAIRED, bootstrap_mean_ci
    from cabench.summaries import format_summary
    from tests.conftest import FIVE

    assert MIN_PAIRED == 5 and all(math.isnan(x) for x in bootstrap_mean_ci(np.array([-65.7, -0.63, -3.0, -1.0])))
    assert all(math.isfinite(x) for x in bootstrap_mean_ci(np.array([-65.7, -0.63, -3.0, -1.0, -2.0])))
    for setting, methods in (("online", ["cohv-ucb", "hv-ucb", "uniform"]), ("psi", ["copsi-r", "psi-sr"])):
        cfg = parse_config({"name": f"few_{setting}", "dataset": FIVE, "setting": setting, "rho": [30, 60],
                            "methods": methods, "repetitions": reps, "output": str(tmp_path / setting)}, "f.yaml")
        run_experiment(cfg, quiet=True)
    report = build_report(tmp_path)
    card = md_table(report, "## Scorecard")
    assert len(card) and set(card["verdict"]) <= {"inconclusive", "not tested"}, card["verdict"].tolist()
    assert "nan" not in report and "n/a: fewer than 5 repetitions" in report
    assert ("(one repetition)" in report) == (reps == 1)
    assert reps > 1 or not re.search(r"\| [-+\d.]+ ± 0\.0+ \|", report)  # no "± 0.00" from one repetition
    summary = ResultSet(tmp_path).experiments[0].summary()
    printed = format_summary(summary)
    assert ("± n/a" in printed) == (reps == 1)


def test_a_claim_does_not_hold_only_where_its_interval_rules_it_out(root):
    """"does not hold" needs the 95% interval of the tested difference to exclude the claimed direction; a
    difference against the claim whose interval spans 0 is inconclusive, as one for it is (these results have one
    of each paired kind: CoPSI's error above PSI-SR's with realised costs, +0.05 [-0.1, 0.2], and its F1 below)."""
    against = set()
    for e in ResultSet(root).experiments:
        for v in verdicts(e, comparisons(e)):
            if v.state == "n/a":  # two methods that never err (or both always find the true set): not compared
                assert v.estimate == v.low == v.high == 0.0 and v.quantity.endswith("nothing to compare"), v
                continue
            if v.kind in ("error-below", "error-falls", "lowest-regret"):  # the claim: a negative difference
                ruled_out, opposite = v.low >= 0, v.estimate > 0
            elif v.kind == "f1-above":  # the claim: a positive difference
                ruled_out, opposite = v.high <= 0, v.estimate < 0
            else:
                continue
            assert (v.state == "fails") == ruled_out, v  # the interval shown is the one that decides
            if opposite and not ruled_out:
                assert v.state == "inconclusive", v
                against.add(v.kind)
    assert against == {"error-below", "f1-above"}
    online = [v for e in ResultSet(root).experiments for v in verdicts(e, comparisons(e))
              if v.kind == "lowest-regret"]
    assert [v.state for v in online] == ["fails"] and online[0].low > 0  # HV-UCB's regret is significantly lower


def test_a_number_of_the_papers_largest_budget_is_not_matched_at_another(root, report):
    """The quick subset grid ends at ρ=2000, the paper's at 5000: its 'largest budget' numbers are shown beside ours
    at 2000 but not matched ('no' compared two budgets); at the paper's own end budget they are."""
    from cabench.paper_match import other_budget, paper_rows

    rows = [r for r in paper_rows(ResultSet(root)) if r["rho"] == "max" and r["metric"].startswith("psi_error")]
    assert rows and {(r["where"], r["match"], r["paper_rho"]) for r in rows} == {
        ("ρ=2000", "other budget", "5000"), ("ρ=1000", "other budget", "5000")}
    table = md_table(report, "## The paper's numbers beside ours")
    assert (table["match"] == "n/a (the paper's number is at ρ=5000, ours at ρ=2000)").sum() == sum(
        r["where"] == "ρ=2000" for r in rows) > 0
    assert other_budget("psi-subset", "max", "ρ=5000") == "" and other_budget("psi-subset", "min", "ρ=20") == ""
    assert other_budget("psi-full", "200", "ρ=200 not in this experiment's grid") == ""  # not measured at all
    assert other_budget("online", "max", "ρ=16") == "32"


def test_the_paper_table_shows_an_experiment_name_as_written(root):
    """A paper experiment run under a name holding Markdown (--name '*bold* [l](x)'): every table of REPORT.md shows
    names as code spans, but the paper's table wrote it bare, so a viewer showed bold text and a link."""
    from cabench.paper_match import paper_rows
    from cabench.report import _paper_section

    name = "*bold* `x` [l](y)"
    row = {**paper_rows(ResultSet(root))[0], "experiment": name}
    line = _paper_section([row])[-2]
    assert line.startswith("| `` *bold* `x` [l](y) `` | ") or line.startswith("| ``*bold* `x` [l](y)`` | "), line


def test_an_online_answer_exploited_in_few_repetitions_is_flagged_where_it_is_given(root):
    """HV-UCB, the method of lowest mean R_HV at ρ=32, exploits its most frequent configuration in 3 of these 10
    repetitions: the answer is given, and recommend and both reports say it is a weak one, as they
    say of an identification answer returned in half of the repetitions or fewer."""
    from cabench.html_report import write_reports
    from cabench.recommend import format_decisions, recommend

    folder = copied(root, root.parent / "weak-online")
    runs = pd.read_csv(folder / "gsm8k_online_quick" / "runs.csv")
    item = next(i for i in recommend(folder) if i["experiment"] == "gsm8k_online")
    d = item["decision"]
    top = runs[(runs["method"] == d["method"]) & (runs["rho"] == runs["rho"].max())]
    share = top["exploited"].value_counts().iloc[0] / len(top)
    assert d["configuration"]["share"] == share <= 0.5 and not d["tied"] and not d["same_nu"]
    said = (f"no configuration was exploited in most repetitions ({round(100 * share)}% chose it): this budget is "
            "short of settling on one configuration")
    assert f"\n    {said}\n" in format_decisions([item])
    md, html = (p.read_text() for p in write_reports(folder))
    assert md.count(said) == 1 and html.count(said[0].upper() + said[1:]) == 1


def test_the_lowest_regret_verdict_shows_the_comparison_that_rules_the_claim_out(root):
    """One method's R_HV significantly below CoHV-UCB's (a small difference, its interval above 0) and another's
    above it on average by more, within the noise: "does not hold" rests on the first, and the tested quantity and
    reason name it (they named the method of the largest mean difference, whose interval spanned 0)."""
    e = next(x for x in ResultSet(root).experiments if x.label == "gsm8k_online")
    rows = [dict(r) for r in comparisons(e)]
    regret = [r for r in rows if r["metric"] == "regret_hv"]
    assert len(regret) == 3
    sure, noisy, other = regret  # three methods compared with CoHV-UCB
    sure.update(diff=2.0, low=0.5, high=3.5)
    noisy.update(diff=30.0, low=-5.0, high=60.0)
    other.update(diff=-10.0, low=-20.0, high=-1.0)
    (v,) = [v for v in verdicts(e, rows) if v.kind == "lowest-regret"]
    assert v.state == "fails" and v.versus == sure["other"] and (v.estimate, v.low, v.high) == (2.0, 0.5, 3.5)
    assert "(the one that rules the claim out of 3 comparisons; " in v.quantity
    assert v.reason.startswith(f"{registry.display(sure['other'])}'s mean R_HV is ")
    noisy.update(low=1.0)  # two rule it out: the one that does so most clearly
    (v,) = [v for v in verdicts(e, rows) if v.kind == "lowest-regret"]
    assert v.versus == noisy["other"] and v.low == 1.0
    sure.update(low=-0.5)
    noisy.update(low=-5.0)  # none rules it out, none shows it: inconclusive, the least favourable shown
    (v,) = [v for v in verdicts(e, rows) if v.kind == "lowest-regret"]
    assert v.state == "inconclusive" and v.versus == noisy["other"] and "(the closest of 3 comparisons; " in v.quantity


@pytest.mark.parametrize("dip, state", [(0.01, "fails"), (0.5, "n/a")])
def test_regret_growth_is_fitted_from_a_real_fall_only(root, dip, state):
    """The quick online regret, CoHV-UCB's, grows from ρ=2 (curvature above 0: does not hold). Set at ρ=2 to its
    ρ=8 values plus a share of their mean: 1% more is no fall to speak of, and the whole curve is fitted as before;
    50% more is a fall, and growth is measured from ρ=8 on, where one budget is too few to fit."""
    e = copied_experiment(root, "gsm8k_online")
    e.summary()  # read (and checked against runs.csv) before the runs are changed in memory
    runs = e.runs
    base = runs["method"] == "cohv-ucb"
    at2, at8 = base & (runs["rho"] == 2), base & (runs["rho"] == 8)
    runs.loc[at2, "regret_hv"] = runs.loc[at8, "regret_hv"].to_numpy() * (1 + dip)
    (v,) = [v for v in verdicts(e, comparisons(e)) if v.kind == "log-growth"]
    assert v.state == state, v
    assert v.quantity.startswith("the mean R_HV falls from ") == (state == "n/a")


def test_regret_growth_on_fewer_repetitions_than_a_test_needs_gives_no_interval(root):
    """The fit's 95% bootstrap interval came from 2 repetitions (three distinct resamples) where every paired test
    says 'n/a: fewer than 5 repetitions': the growth claim says so too, and is inconclusive."""
    e = copied_experiment(root, "gsm8k_online")
    e.summary()
    e.runs = e.runs[e.runs["rep"] < 2].reset_index(drop=True)
    (v,) = [v for v in verdicts(e, comparisons(e)) if v.kind == "log-growth"]
    assert v.state == "inconclusive" and not np.isfinite(v.low) and not np.isfinite(v.high), v
    assert "curvature " in v.quantity and v.quantity.count("[n/a: fewer than 5 repetitions]") == 2, v.quantity


def copied_experiment(root: Path, label: str):
    """An experiment of the quick results, read afresh (its tables may be changed in memory)."""
    return next(x for x in ResultSet(root).experiments if x.label == label)


def test_a_regret_that_falls_to_the_largest_budget_does_not_grow(root):
    """CoHV-UCB's R_HV set to three and two times its ρ=32 values at ρ=2 and ρ=8: it falls to the largest budget,
    which the claim of growth at most logarithmic in B allows: holds, saying so (the curvature of a falling convex
    curve had read as growth)."""
    e = copied_experiment(root, "gsm8k_online")
    e.summary()
    runs = e.runs
    base = runs["method"] == "cohv-ucb"
    last = runs.loc[base & (runs["rho"] == 32), "regret_hv"].to_numpy()
    for rho, times in ((2, 3.0), (8, 2.0)):
        runs.loc[base & (runs["rho"] == rho), "regret_hv"] = last * times
    (v,) = [v for v in verdicts(e, comparisons(e)) if v.kind == "log-growth"]
    assert v.state == "holds" and v.quantity.endswith(", the largest budget, falling at every budget: it does not "
                                                      "grow"), v
    assert v.estimate == pytest.approx(2 * last.mean()) and 0 < v.low <= v.estimate <= v.high
    runs.loc[base & (runs["rho"] == 8), "regret_hv"] = last * 5.0  # lowest at the largest, but rising between
    (v,) = [v for v in verdicts(e, comparisons(e)) if v.kind == "log-growth"]
    assert v.state == "n/a" and "rising between" in v.quantity, v


def test_a_fall_within_the_noise_is_no_fall(root):
    """At ρ=2 three times ρ=8's regret in half the repetitions and a fifth of it in the others: a mean fall of
    more than a tenth, but one the repetitions do not agree on (its interval spans 0): the whole curve is fitted."""
    e = copied_experiment(root, "gsm8k_online")
    e.summary()
    runs = e.runs
    base = runs["method"] == "cohv-ucb"
    at8 = runs.loc[base & (runs["rho"] == 8)].sort_values("rep")
    times = np.where(at8["rep"].to_numpy() % 2 == 0, 3.0, 0.2)
    runs.loc[at8.index, "regret_hv"] = at8["regret_hv"].to_numpy()  # (unchanged)
    at2 = runs.loc[base & (runs["rho"] == 2)].sort_values("rep").index
    runs.loc[at2, "regret_hv"] = at8["regret_hv"].to_numpy() * times
    fall = runs.loc[at2, "regret_hv"].to_numpy() - at8["regret_hv"].to_numpy()
    assert fall.mean() >= 0.1 * at8["regret_hv"].mean()
    (v,) = [v for v in verdicts(e, comparisons(e)) if v.kind == "log-growth"]
    assert not v.quantity.startswith("the mean R_HV falls from ") and v.state in ("fails", "inconclusive"), v


def test_an_error_that_rises_from_none_does_not_hold(root):
    """CoPSI's error 0 at the smallest budget and 1 at the largest: the claim that it falls is ruled out, not
    untested (only an error of 0 at both budgets leaves nothing to fall)."""
    def errs(first: int, last: int):
        e = copied_experiment(root, "gsm8k_psi")  # (afresh: an experiment keeps its tables by cell once read)
        e.summary()
        runs = e.runs
        copsi = (runs["method"] == "copsi") & (runs["cost_mode"] == "deterministic")
        grid = sorted(runs.loc[copsi, "rho"].unique())
        runs.loc[copsi & (runs["rho"] == grid[0]), "error"] = first
        runs.loc[copsi & (runs["rho"] == grid[-1]), "error"] = last
        (v,) = [v for v in verdicts(e, comparisons(e)) if v.kind == "error-falls"]
        return v

    v = errs(0, 1)
    assert v.state == "fails" and v.estimate == 1.0, v
    v = errs(0, 0)
    assert v.state == "n/a" and v.quantity.endswith("no repetition errs at either budget: nothing to fall"), v


def test_trajectory_numbers_of_another_budget_are_not_matched(root):
    """The paper's trajectory ends are at ρ=32; trajectories recorded at ρ=8 were matched against them (and could
    say "yes")."""
    from cabench.paper_match import other_budget, paper_rows

    rows = [r for r in paper_rows(ResultSet(root)) if r["metric"] in ("traj_cum", "traj_ma")]
    assert rows and all(r["where"] == "ρ=32" and r["match"] != "other budget" for r in rows)  # recorded at 32
    assert other_budget("online", "32", "ρ=8") == "32" and other_budget("online", "32", "ρ=32") == ""


def test_a_weak_online_answer_of_several_configurations_says_so():
    """Configurations exploited equally often (or of the same ν) are one answer: their shares add up, and the note
    says how many chose one of them ("30% chose it" was said of two)."""
    from cabench.answers import weak_online

    one = {"configuration": {"config_id": "a", "share": 0.3}, "tied": [], "same_nu": []}
    assert weak_online(one).startswith("no configuration was exploited in most repetitions (30% chose it): ")
    two = {**one, "tied": [{"config_id": "b", "share": 0.3}]}
    assert weak_online(two) == ""  # 60% chose one of them: most repetitions
    three = {**one, "configuration": {"config_id": "a", "share": 0.2}, "tied": [{"config_id": "b", "share": 0.2}],
             "same_nu": [{"config_id": "c", "share": 0.05}]}
    assert "(45% chose one of these 3): " in weak_online(three)


def _psi_cells(e, method: str, mode: str = "deterministic", rho: float | None = None):
    """The rows of ``e``'s runs of ``method`` (cost ``mode``) at ``rho`` (its largest budget by default)."""
    runs = e.runs
    rho = max(e.rho_grid) if rho is None else rho
    return (runs["method"] == method) & (runs["cost_mode"] == mode) & (runs["rho"] == rho)


def test_two_methods_that_err_in_every_repetition_are_not_compared(root):
    """Both err in every repetition at the largest budget: no repetition tells them apart, as when neither errs:
    not tested (it read "does not hold", with spend shares for its reason); with an arm of classification gap 0
    (arms.csv's -0.0 among them) the verdict names it, and a claim that then does not hold gives it as the reason
    (no budget classifies such an arm reliably), the gap printed as 0."""
    def verdicts_of(tie: bool, once_right: bool, errors: tuple[float, float] = (1, 1)) -> tuple[list, str]:
        e = copied_experiment(root, "gsm8k_psi")  # (afresh: an experiment keeps its tables by cell once read)
        e.summary()
        for method, share in zip(("copsi", "psi-sr"), errors):  # the first share of the repetitions err
            cells = _psi_cells(e, method)
            e.runs.loc[cells, "error"] = (e.runs.loc[cells, "rep"] % 10 < 10 * share).astype(int)
        if once_right:  # PSI-SR right once, CoPSI never: its error is not below
            e.runs.loc[e.runs.index[_psi_cells(e, "psi-sr")][0], "error"] = 0
        if tie:
            e.arms.loc[e.arms.index[3], "gamma"] = -0.0
        return verdicts(e, comparisons(e)), f"{e.k} arms has a classification gap γ of eq. (1) of 0 (arms.csv: " \
            f"{e.arms.loc[e.arms.index[3], 'config_id']}), on the boundary of the Pareto set, which no budget " \
            "classifies reliably"

    found, _ = verdicts_of(tie=False, once_right=False)
    v = next(v for v in found if v.kind == "error-below" and v.versus == "psi-sr")
    assert v.state == "n/a" and v.quantity.endswith("; both err in every repetition at this budget: nothing to "
                                                    "compare"), v
    found, boundary = verdicts_of(tie=True, once_right=False)
    v = next(v for v in found if v.kind == "error-below" and v.versus == "psi-sr")
    assert v.state == "n/a" and v.quantity.endswith(f"at this budget (1 of the {boundary}): nothing to compare"), v
    found, boundary = verdicts_of(tie=True, once_right=True)
    v = next(v for v in found if v.kind == "error-below" and v.versus == "psi-sr")
    assert v.state == "fails" and v.reason.endswith(f"; 1 of the {boundary}, so both err in most repetitions."), v
    falls = next(v for v in found if v.kind == "error-falls")
    assert falls.state != "fails" or falls.reason.startswith(f"1 of the {boundary};"), falls  # the gap said once
    found, boundary = verdicts_of(tie=True, once_right=False, errors=(0.3, 0.1))  # most repetitions right
    v = next(v for v in found if v.kind == "error-below" and v.versus == "psi-sr")
    assert v.state == "fails" and v.reason.endswith(f"; 1 of the {boundary}."), v  # not "both err in most"
    assert "so both err in most repetitions" not in v.reason and "spent" in v.reason, v
    found, _ = verdicts_of(tie=False, once_right=False, errors=(0.9, 0.9))  # both err in the same repetitions
    v = next(v for v in found if v.kind == "error-below" and v.versus == "psi-sr")
    reps = QUICK["gsm8k_psi_quick"]  # of which those with rep % 10 < 9 err
    assert v.state == "fails" and v.reason.endswith(f"; both err in the same {reps * 9 // 10} of the {reps} "
                                                    "repetitions, so none tells them apart at this budget."), v
    assert "spent" not in v.reason, v  # (it cited the spend shares)


def test_realised_costs_that_change_no_outcome_say_so_and_neither_erring_is_not_tested(root):
    """Realised costs beside profiling costs: no error in either mode is not tested (there was nothing to change);
    the same outcome in every repetition holds, saying so (the test could not have told otherwise)."""
    def realised(error) -> tuple:
        e = copied_experiment(root, "gsm8k_psi_stochastic")  # (afresh: tables are kept by cell once read)
        e.summary()
        for mode in ("deterministic", "stochastic"):
            cells = _psi_cells(e, "copsi", mode)
            e.runs.loc[cells, "error"] = error(e.runs.loc[cells, "rep"])
        return next(v for v in verdicts(e, comparisons(e)) if v.kind == "realised-costs"), int(cells.sum())

    v, _ = realised(lambda rep: 0)
    assert v.state == "n/a" and v.quantity.endswith("neither cost mode errs at this budget: nothing to compare"), v
    v, n = realised(lambda rep: rep % 2)
    assert v.state == "holds" and v.quantity.endswith(f"the same outcome in every one of the {n} repetitions"), v
    v, _ = realised(lambda rep: 1)  # both modes err in every repetition: as little to compare as neither erring
    assert v.state == "n/a" and v.quantity.endswith("; both cost modes err in every repetition at this budget: "
                                                    "nothing to compare"), v


@pytest.mark.parametrize("x, n, text", [(1 / 500, 500, "1 of 500"), (499 / 500, 500, "499 of 500"),
                                         (0.0, 500, "0%"), (1.0, 20, "100%"), (0.42, 100, "42%"), (1 / 100, 100, "1%")])
def test_a_share_that_would_round_to_none_or_all_is_a_count(x, n, text):
    from cabench.analysis import _share

    assert _share(x, n) == text
    # with its noun: "1 of 500 repetitions", "42% of repetitions" (it read "1 of 500 of repetitions")
    assert _share(x, n, "repetitions") == (f"{text} repetitions" if " of " in text else f"{text} of repetitions")


def test_each_experiments_verdicts_are_worded_as_the_scorecard_words_them(report):
    """The verdict list under each experiment says "not tested" where the scorecard does (it said "n/a")."""
    from cabench.report_cells import mark

    assert [mark(state) for state in STATES] == ["**holds**", "**does not hold**", "**inconclusive**", "not tested"]
    section = report[report.index("### Verdicts"):]
    states = re.findall(r"^- .*: (\*\*[a-z ]+\*\*|not tested|n/a)(?: — why: .*)?$", section, flags=re.M)
    assert "not tested" in states and set(states) <= {mark(state) for state in STATES}, states


def test_a_lowest_mean_carried_by_a_few_repetitions_says_so(root):
    """CoHV-UCB's R_HV far below every other method's in 4 of 10 repetitions and just above in the other 6: its
    mean is significantly lowest (holds), and the verdict says it is lower in under half of the repetitions
    (on the full results it was lower than HV-UCB in 42 of 100, the median favouring HV-UCB, without a word)."""
    def lowest(lead: float, elsewhere: float = -1.0):
        e = copied_experiment(root, "gsm8k_online")  # (afresh: tables are kept by cell once read)
        e.summary()
        runs = e.runs
        at = runs["rho"] == max(e.rho_grid)
        base = runs.loc[at & (runs["method"] == "cohv-ucb")].set_index("rep")["regret_hv"]
        for method in runs.loc[at, "method"].unique():
            if method != "cohv-ucb":
                mine = runs.index[at & (runs["method"] == method)]
                reps = runs.loc[mine, "rep"]
                runs.loc[mine, "regret_hv"] = base.loc[reps].to_numpy() + np.where(reps < 4, lead, elsewhere)
        return next(v for v in verdicts(e, comparisons(e)) if v.kind == "lowest-regret")

    v = lowest(1000.0)
    assert v.state == "holds" and v.quantity.endswith(
        "; CoHV-UCB is lower in under half of the repetitions than HV-UCB (40% against HV-UCB's 60%), "
        "Accuracy-Cost-UCB (40% against Accuracy-Cost-UCB's 60%), Uniform (40% against Uniform's 60%): its lower "
        "mean rests on a few repetitions with large differences"), v
    v = lowest(-1000.0)  # lower in none: the claim is ruled out, and nothing more is said
    assert v.state == "fails" and "in under half of the repetitions" not in v.quantity, v
    v = lowest(1000.0, elsewhere=0.0)  # equal in the other 6: lower in 40%, higher in none: no lead of a few
    assert v.state == "holds" and "in under half of the repetitions" not in v.quantity, v


def test_a_reduction_undefined_in_many_resamples_has_no_interval_rather_than_a_point():
    """PSI-SR errs in 1 of 500 repetitions, CoPSI in none: the reduction of P(error) is 100%, but about 37% of the
    paired resamples leave that repetition out, where the ratio is 0/0. Those were dropped, and the rest gave a 95%
    interval of 100% to 100%, a certainty one repetition does not give. There is no interval now, and the match
    cell says why; a baseline erring in 21 of 500 keeps its interval."""
    from cabench.paper_match import _paired_bootstrap
    from cabench.report import match_text

    reduction = lambda a, b: 100 * (1 - a / b)  # noqa: E731
    never, once = np.zeros(500), np.zeros(500)
    once[7] = 1
    drawn = np.random.default_rng(0).integers(0, 500, size=(2000, 500))
    left_out = float((drawn != 7).all(axis=1).mean())  # the resamples without the one error
    assert 0.3 < left_out < 0.45
    low, high, why = _paired_bootstrap(never, once, reduction)
    assert math.isnan(low) and math.isnan(high)
    assert why == (f"the baseline's mean is 0 in {100 * left_out:.0f}% of the paired bootstrap resamples, where the "
                   "ratio is undefined")
    row = {"match": "n/a", "no_interval": why, "kind": "reduction", "paper": "9.8"}
    assert match_text(row) == f"n/a (no 95% interval: {why})"
    often = np.zeros(500)
    often[:21] = 1
    assert _paired_bootstrap(never, often, reduction) == (100.0, 100.0, "")
    assert match_text({"match": "n/a", "kind": "reduction", "paper": "9.8"}) == "n/a"  # not measured


def test_a_paper_row_without_an_interval_carries_why_to_its_match_cell(root, monkeypatch):
    """The reason a reduction or gain has no interval reaches the row (and so both reports' match cell); a value
    row, and a measured one with its interval, carry none."""
    from cabench import paper_match
    from cabench.report import match_text

    monkeypatch.setattr(paper_match, "_paired_bootstrap", lambda a, b, statistic: (math.nan, math.nan, "a reason"))
    rows = paper_match.paper_rows(ResultSet(root))
    relative = [r for r in rows if r["kind"] != "value" and r["ours"] is not None and r["match"] != "other budget"]
    assert relative and all(r["no_interval"] == "a reason" for r in relative)
    assert {match_text(r) for r in relative} == {"n/a (no 95% interval: a reason)"}
    assert all(r["no_interval"] == "" for r in rows if r["kind"] == "value")


def test_methods_making_the_same_pulls_leave_the_lowest_regret_claim_untested(tmp_path):
    """With every configuration's cost alike, HV-UCB makes CoHV-UCB's pulls: the lowest-regret claim read "does not
    hold", its reason "1057012.55 against 1057012.55"; identification said "nothing to compare" in the same case."""
    from cabench.config import parse_config

    cfg = parse_config({"name": "alike", "setting": "online", "rho": [2, 4, 8], "repetitions": 6, "seed": 0,
                        "methods": ["cohv-ucb", "hv-ucb"], "output": str(tmp_path / "alike"),
                        "dataset": {"synthetic": {"means": [[0.5, 0.5], [0.7, 0.3], [0.3, 0.8], [0.2, 0.2]],
                                                  "costs": [10, 10, 10, 10]}}}, "alike.yaml")
    run_experiment(cfg, quiet=True)
    (e,) = ResultSet(tmp_path).experiments
    runs = e.runs[e.runs["rho"] == 8.0].sort_values(["method", "rep"])
    assert (runs[runs["method"] == "cohv-ucb"]["regret_hv"].to_numpy()
            == runs[runs["method"] == "hv-ucb"]["regret_hv"].to_numpy()).all()  # (the premise: the same pulls)
    (lowest,) = [v for v in verdicts(e, comparisons(e)) if v.kind == "lowest-regret"]
    assert lowest.state == "n/a" and lowest.quantity.endswith(
        "the same R_HV as every other method in every repetition: nothing to compare"), lowest
