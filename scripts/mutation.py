"""Mutation check: does the test suite catch deliberate wrong edits?

Each mutant is one wrong edit of the package, applied in a temporary copy of the
repository; the tests that guard that code run against the copy, and the mutant
is *caught* when they fail. Usage: ``python scripts/mutation.py [--only NAME]``
(``make mutation``). Prints one line per mutant and the score; exits 1 if any
mutant survives.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTANTS = [
    # the four edits an earlier review found passing every test
    Mutant("nu from the profiling cost", "cabench/problem.py",
           "return self.hv / self.mu_cost", "return self.hv / (self.profile_cost / self.c_max)",
           ("tests/online/test_engine.py", "tests/test_golden_values.py")),
    Mutant("T_B without the +1", "cabench/online/engine.py",
           "math.ceil(budget / lam) + 1", "math.ceil(budget / lam)",
           ("tests/online/test_engine.py", "tests/test_golden_values.py")),
    Mutant("PSI-SR with L_{K,lambda}", "cabench/methods/elimination.py",
           "float(costs.min()) if self.cost_aware else 1.0", "float(costs.min())",
           ("tests/psi/test_engine.py", "tests/test_golden_values.py")),
    Mutant("realised identification cost over c_max", "cabench/data/normalisation.py",
           "return quantize(self.psi_units(cost))", "return quantize(self.online_units(cost))",
           ("tests/psi/test_engine.py",)),
    # our own
    Mutant("CoHV-UCB ignores the cost", "cabench/methods/index.py",
           "return hypervolume(upper) / lower_cost  # Algorithm 1 line 7", "return hypervolume(upper)",
           ("tests/online/test_engine.py", "tests/test_golden_values.py")),
    Mutant("cost LCB truncated at lambda", "cabench/online/engine.py",
           "np.maximum(lam / 2.0, cost_sum / n - s_c * root)", "np.maximum(lam, cost_sum / n - s_c * root)",
           ("tests/online/test_engine.py", "tests/test_golden_values.py")),
    Mutant("ties removed to the last arm", "cabench/pareto.py",
           "return np.where(use_dominated, tied_dominated, tied).argmax(axis=-1)",
           "return gamma.shape[-1] - 1 - np.where(use_dominated, tied_dominated, tied)[..., ::-1].argmax(axis=-1)",
           ("tests/psi/test_engine.py", "tests/test_pareto.py")),
    Mutant("efficiency reward not clipped at 1", "cabench/data/normalisation.py",
           "(1.0 / self.best - 1.0 / self.worst), 0.0, 1.0)", "(1.0 / self.best - 1.0 / self.worst), 0.0, 2.0)",
           ("tests/data/test_dataset.py",)),
    Mutant("Wilson centre without z^2", "cabench/stats.py",
           "centre = (p + z * z / (2 * n)) / denom", "centre = (p + z / (2 * n)) / denom",
           ("tests/test_stats.py",)),
    Mutant("split seed ignored", "cabench/data/dataset.py",
           "np.random.SeedSequence(int(split.seed))", "np.random.SeedSequence(0)",
           ("tests/data/test_dataset.py",)),
    Mutant("uniform budget from unquantised costs", "cabench/data/normalisation.py",
           "return float(rho) * float(self.psi_profile_cost().sum())",
           "return self.budget_tokens(rho) / float(self.profile_cost.max())",
           ("tests/psi/test_engine.py",)),
    Mutant("cell key without the code hash", "cabench/cell_keys.py",
           '"code": code_hash(), ', "",
           ("tests/test_results.py::test_editing_an_engine_source_reuses_no_cell",)),
    Mutant("exact true set counted as a subset", "cabench/recommend.py",
           "float(np.sum(set_of == truth))",
           "float(np.sum(~(returned.member[at] & ~returned.sets[truth]).any(axis=1)))",
           ("tests/test_results.py::test_recommend_json_names_configurations_of_the_data",)),
    Mutant("conflicting copies of an experiment read once", "cabench/results.py",
           "elif seen.runs.equals(exp.runs) and seen.selections.equals(exp.selections):", "else:",
           ("tests/test_results.py::test_same_experiment_twice_is_read_once_and_conflicting_copies_are_refused",)),
    Mutant("reports pool experiments of one dataset", "cabench/report.py",
           "    for e in res.experiments:\n        if e not in beyond:\n"
           "            lines += experiment_section(e, c.found[e.label], c.under.get(e.label))",
           "    for e in res.experiments[:1]:\n        e.runs = pd.concat([x.runs for x in res.experiments "
           "if x.setting == e.setting])\n        lines += experiment_section(e, findings(e))",
           ("tests/test_results.py::test_two_experiments_under_one_root_are_reported_separately",)),
    Mutant("policy's cost LCB floored at lambda", "cabench/policy.py",
           "lower_cost = max(self.lam / 2.0,", "lower_cost = max(self.lam,",
           ("tests/online/test_engine.py",)),
    Mutant("policy eliminates on the last tie", "cabench/methods/elimination.py",
           "p.leave(([i for i in tied if dominated[i]] or tied)[0], dominated)",
           "p.leave(([i for i in tied if dominated[i]] or tied)[-1], dominated)",
           ("tests/psi/test_engine.py",)),
    Mutant("CoPSI-R spends the whole room at once", "cabench/methods/elimination.py",
           "np.maximum(room, 0.0) * phase_share(k_active) / total", "np.maximum(room, 0.0) / total",
           ("tests/test_golden_values.py",)),
    Mutant("EGE-SH rounds not sized by B / R", "cabench/methods/halving.py",
           "np.floor(samples.budget / (rounds * active_cost))", "np.floor(samples.budget / active_cost)",
           ("tests/test_golden_values.py",)),
    Mutant("per-pull round robin restarts at the first arm", "cabench/methods/round_robin.py",
           "start = 0 if policy.last is None else (policy.last + 1) % policy.k", "start = 0",
           ("tests/online/test_engine.py",)),
    Mutant("numbers keep their thousands commas", "cabench/live/tasks.py",
           'cleaned = text.replace(",", "")', "cleaned = text",
           ("tests/live/test_tasks.py",)),
    Mutant("Inspect latency includes waiting", "cabench/data/readers/inspect_logs.py",
           'latency = number(sample, "working_time", where)', 'latency = number(sample, "total_time", where)',
           ("tests/data/test_tool_readers.py",)),
    Mutant("live budget ignores calls in flight", "cabench/live/caller.py",
           "self.spent + self.reserved + worst > self.budget", "self.spent + worst > self.budget",
           ("tests/live/test_live.py::test_token_budget_holds_with_calls_in_flight",)),
    Mutant("negative usage believed", "cabench/live/charges.py",
           "if number is None or not math.isfinite(number) or number < 0 or number != math.floor(number):",
           "if number is None or not math.isfinite(number) or number != math.floor(number):",
           ("tests/live/test_live_hostile.py",)),
    Mutant("deadline per read, not per attempt", "cabench/live/deadline.py",
           "return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))",
           "return self._inner.read(max_bytes, timeout)",
           ("tests/live/test_live_hostile.py",)),
    Mutant("a resume forgets the journaled charges", "cabench/live/caller.py",
           "self.spent = journal.total_charged()", "self.spent = 0.0",
           ("tests/live/test_live_hostile.py::test_resume_counts_every_journaled_charge_before_new_calls",)),
    Mutant("a call lost to a kill costs nothing", "cabench/live/journal.py",
           '"charged": float(sum(s["worst"] for s in starts)),', '"charged": 0.0,',
           ("tests/live/test_live_hostile.py",)),
    Mutant("a live call's dollar worst case fills the cheaper side", "cabench/live/tariff.py",
           "if self.completion >= self.prompt:", "if self.completion < self.prompt:",
           ("tests/live/test_live_dollars.py::test_dollar_budget_is_never_exceeded",)),
    Mutant("dollars per call with the input price on completion tokens", "cabench/data/terms.py",
           '(("input", "prompt_tokens"), ("output", "completion_tokens")',
           '(("input", "completion_tokens"), ("output", "prompt_tokens")',
           ("tests/data/test_terms.py",)),
    Mutant("a stated budget overruns by a rounding", "cabench/data/normalisation.py",
           "        while self.budget(rho) > budget:", "        while False:",
           ("tests/data/test_terms.py",)),
]


def run(mutant: Mutant, workdir: Path) -> tuple[bool, float]:
    copy = workdir / "repo"
    if copy.exists():
        shutil.rmtree(copy)
    skip_top = {".venv", ".git", "results", "results-quick", "results-synthetic", "bench"}
    skip_any = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info")

    def ignore(folder: str, names: list[str]) -> set[str]:
        top = skip_top & set(names) if Path(folder) == ROOT else set()
        return top | set(skip_any(folder, names))

    shutil.copytree(ROOT, copy, ignore=ignore)
    target = copy / mutant.path
    text = target.read_text()
    if text.count(mutant.old) != 1:
        raise SystemExit(f"{mutant.name}: the text to replace is not found once in {mutant.path}; update the mutant")
    target.write_text(text.replace(mutant.old, mutant.new))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *mutant.tests],
                          cwd=copy, env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True)
    return done.returncode != 0, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the mutants whose name contains this text")
    args = parser.parse_args()
    chosen = [m for m in MUTANTS if not args.only or args.only in m.name]
    caught = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in chosen:
            ok, seconds = run(m, Path(tmp))
            caught += ok
            print(f"{'caught  ' if ok else 'SURVIVED'} {m.name:<42} {seconds:6.1f} s  ({', '.join(m.tests)})",
                  flush=True)
    print(f"mutation score: {caught}/{len(chosen)} caught")
    return 0 if caught == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
