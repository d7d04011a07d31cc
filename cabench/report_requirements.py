"""What the reports say of each experiment under the user's requirements (``--require``,
:mod:`cabench.constraints`): which configurations qualify, the configuration or restricted Pareto set among them with
its real units, and how often each method's answer restricted to them is it — in sentences and tables both
renderings share, and as REPORT.md lines."""

from __future__ import annotations

from collections.abc import Iterable

from cabench import registry
from cabench.constraints import EVERY_ONE, ConstrainedAnswer, Constraint, Found
from cabench.record import measure_columns, objective_columns
from cabench.report_cells import (
    Cell,
    Table,
    listed,
    measurement,
    method_name,
    quoted_name,
    sentence,
    shown,
    texts,
    unit_formats,
)
from cabench.results import Experiment
from cabench.units import LABELS, amount, percent, value_label


def requirements_sentence(constraints: tuple[Constraint, ...], experiments: Iterable[Experiment] = ()) -> str:
    """What the top of both reports says of the requirements (a normalised objective named as a column whose means
    per call some experiment records says so: :meth:`~cabench.constraints.Constraint.describe`)."""
    own = {m for e in experiments for m in measure_columns(e.arms)}
    return (f"Requirements (--require): {', '.join(c.describe(own) for c in constraints)}, on the per-call means over "
            "the evaluation instances. Each experiment answers under them in its part 'Under your requirements'; "
            "its decision, summary and verdicts do not use them.")


def _names(names: tuple[str, ...]) -> str:
    return listed(names) or "(empty)"


def requirement_sentences(e: Experiment, a: ConstrainedAnswer | str) -> list[str]:
    """The answer under the requirements in sentences: which configurations qualify and which straddle a bound, the
    configuration (online) or restricted Pareto set (identification), what the table of methods counts; one clear
    sentence when no configuration qualifies."""
    if isinstance(a, str):
        return [f"The requirements cannot be applied to this experiment: {a}."]
    near = (f" Borderline, qualifying or not (their 95% interval crosses a bound): {listed(a.borderline)}."
            if a.borderline else "")
    if not a.qualifying:
        return [f"No configuration satisfies {', '.join(a.constraints)}: none of the {e.k} configurations qualifies, "
                f"so there is no answer under these requirements.{near}"]
    n = len(a.qualifying)
    which = (f"all {n} configurations satisfy {', '.join(a.constraints)}" if n == e.k else
             f"{n} of {e.k} configurations satisf{'ies' if n == 1 else 'y'} {', '.join(a.constraints)}: "
             f"{listed(a.qualifying)}")
    lines = [sentence(which) + near]
    if a.undecided:
        lines.append(sentence(a.undecided))
    elif e.setting == "online" and len(a.answer) > 1:
        lines.append(f"Pay for any of {_names(a.answer)}: they share the largest ν among them. The table of methods "
                     "counts, per method and budget, the repetitions whose most-pulled qualifying configuration is "
                     "one of them.")
    elif e.setting == "online":
        lines.append(f"Pay for {quoted_name(a.answer[0])}: the largest ν among them. The table of methods counts, per "
                     "method and budget, the repetitions whose most-pulled qualifying configuration is it (qualifying "
                     "configurations tied for the most pulls are no answer; the most frequent answer then lists "
                     "them).")
    if a.every_one and found_rows(e, a):
        lines.append(sentence(EVERY_ONE))
    if e.setting == "psi":
        lines.append(f"The true Pareto set restricted to them (P* ∩ F, {len(a.answer)}): {_names(a.answer)}. The "
                     "table of methods counts, per method, cost mode and budget, the repetitions whose returned set "
                     "restricted to them is exactly this set.")
        if a.only_within:
            lines.append("Also Pareto among the qualifying configurations only, because what dominates them fails a "
                         f"requirement (a filtered answer never holds them): {listed(a.only_within)}.")
    idle = sorted({registry.display(f.method) for f in a.found if not _prefers(e, f.method)})
    if idle:
        lines.append(f"{', '.join(idle)}: a round robin, no preference (left out of the table).")
    return lines


def _prefers(e: Experiment, method: str) -> bool:
    return e.setting == "psi" or registry.prefers(method, "online")


def found_rows(e: Experiment, a: ConstrainedAnswer) -> list[Found]:
    """The rows of ``a.found`` the report shows: those of methods with a preference (online, a round robin pulls
    every affordable configuration in turn, whatever their rewards)."""
    return [f for f in a.found if _prefers(e, f.method)]


def modal_text(f: Found) -> str:
    """The most frequent restricted answer and its share, or how many tie for it."""
    if f.modal_tied:
        return f"{f.modal_tied + 1} answers tied ({percent(f.modal_share)} each)"
    return f"{_names(f.modal)} ({percent(f.modal_share)})"


def requirement_tables(e: Experiment, a: ConstrainedAnswer) -> tuple[Table, Table]:
    """The answer's configurations (real units per call, normalised objectives, c_i, ν) and, per method, budget
    (and cost mode), the share of repetitions whose answer restricted to the qualifying configurations is it, and
    their most frequent restricted answer."""
    arms = e.arms.assign(config_id=e.arms["config_id"].astype(str)).set_index("config_id")
    objectives = objective_columns(e.arms)
    units = unit_formats(e.arms)
    real = list(units)

    def member(name: str) -> list[Cell]:
        r = arms.loc[name]
        return [(name, name), *((measurement(r, c, units[c][1]), r[c]) for c in real),
                *(shown("{:.3f}", r[c]) for c in objectives), (amount(r["profile_cost"], e.cost_unit),
                                                               r["profile_cost"]), shown("{:.4g}", r["nu"])]

    psi = e.setting == "psi"
    found = [[(method_name(f.method), f.method), *([(str(f.cost_mode), f.cost_mode)] if psi else []),
              shown("{:g}", f.rho), (amount(f.budget, e.cost_unit), f.budget), shown("{}", f.repetitions),
              (percent(f.share), f.share), (modal_text(f), f.modal_share)]
             for f in found_rows(e, a)]
    return ((["configuration", *(f"{units[c][0]} per call" for c in real),
              *(value_label(c[3:]) for c in objectives), f"c_i ({LABELS[e.cost_unit]})", "ν"],
             [member(name) for name in a.answer]),
            (["method", *(["cost mode"] if psi else []), "ρ", "B", "repetitions",
              "returned ∩ F is P* ∩ F" if psi else "most-pulled qualifying is it", "most frequent (share)"], found))


def requirement_lines(e: Experiment, a: ConstrainedAnswer | str | None) -> list[str]:
    if a is None:
        return []
    lines = ["### Under your requirements", ""] + [x for line in requirement_sentences(e, a) for x in (line, "")]
    if isinstance(a, str) or not a.qualifying:
        return lines
    for table in requirement_tables(e, a):
        lines += texts(table) if table[1] else []
    return lines
