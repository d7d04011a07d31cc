"""What the layers above the methods ask the registry, answered from the methods' specs."""

from __future__ import annotations

import pytest

from cabench import registry
from cabench.methods.lookup import get
from cabench.methods.spec import Spec, user_style
from cabench.methods.styles import BUILT_IN, USER
from cabench.synthetic import SyntheticSpec, synthetic_problem


def test_settings_list_the_papers_methods_first():
    assert registry.names("online")[:4] == ("cohv-ucb", "hv-ucb", "acc-cost-ucb", "uniform")
    assert registry.names("psi")[:5] == ("copsi", "psi-sr", "uniform", "copsi-r", "ege-sh")
    assert [registry.origin(m) for m in registry.names("psi")[:5]] == ["paper"] * 3 + ["beyond"] * 2


@pytest.mark.parametrize("setting, methods, base", [
    ("online", ["uniform", "hv-ucb", "cohv-ucb"], "cohv-ucb"),
    ("online", ["uniform", "hv-ucb"], "uniform"),
    ("psi", ["psi-sr", "copsi", "copsi-r"], "copsi-r"),
    ("psi", ["uniform", "copsi"], "copsi"),
    ("psi", ["ege-sh", "mine:schedule"], "ege-sh"),
])
def test_comparison_base(setting, methods, base):
    assert registry.comparison_base(setting, methods) == base


def test_roles_and_parameters_come_from_the_specs():
    assert (registry.proposed("online"), registry.proposed("psi")) == ("cohv-ucb", "copsi")
    assert registry.spec("cohv-ucb", "online").tunable == ("s_r", "s_c", "eta")
    assert registry.spec("uniform", "online").tunable == ()  # round robin ignores the radii
    assert [p.name for p in registry.parameters("online")] == ["s_r", "s_c", "eta", "alpha", "mode"]
    assert registry.parameters("psi") == ()
    assert registry.choices("nowhere:thing", "psi") is None and "copsi" in registry.choices("copsi", "psi")


def test_a_method_that_cannot_be_loaded_is_shown_by_its_name():
    assert registry.display("no_such_module:index") == "no_such_module:index"
    assert registry.style("no_such_module:index") in USER
    assert registry.origin("no_such_module:index") == "user"
    assert registry.display("ege-sh") == "EGE-SH" and registry.style("copsi") == ("#ff7f0e", "P")


def test_skip_names_the_smallest_workable_budget():
    problem = synthetic_problem(SyntheticSpec("s", ((0.5, 0.5), (0.6, 0.4), (0.4, 0.6)), (4.0, 2.0, 1.0)))
    assert get("cohv-ucb", "online").skip(problem, 1) is None
    assert get("uniform", "online").skip(problem, 0.5) == ("rho 0.5 cannot pay one initial pull of every arm; the "
                                                          "smallest workable rho is 1")
    # c~ = (1, 0.5, 0.25), B~ = 1.75 rho: CoPSI needs L C_1 = 2.4667 * 1.75 = 4.3167, i.e. rho >= 2.4667
    assert get("copsi", "psi").skip(problem, 2.5) is None and get("copsi-r", "psi").skip(problem, 2.5) is None
    for name, smallest in [("copsi", "2.467"), ("copsi-r", "2.467"), ("psi-sr", "1.834"), ("uniform", "1"),
                           ("ege-sh", "2")]:  # PSI-SR: cbar L_{3,1} 3 = 1.75 * 1.8333; EGE-SH: 2 rounds
        reason = get(name, "psi").skip(problem, 0.9)
        assert reason.endswith(f"the smallest workable rho is {smallest}"), reason
        assert reason.startswith(f"rho 0.9 is too small for {registry.display(name)} on 3 arms")


def test_methods_of_ones_own_in_one_figure_each_have_a_colour_of_their_own(monkeypatch):
    """Styles are chosen by name among USER: four methods of one's own drew in two colour-and-marker pairs (mm:copy_cohv
    with mm:long_idx, mm:md_idx with mm:hv_copy, among 3 styles). USER now holds 72 pairs of 12 colours, no two alike
    and none a built-in method's; within a figure (distinct_styles) every method has a colour no other has: the first
    keeps its own, a later one whose colour is taken moves to the next free colour of USER, its marker kept (one whose
    decorator gave only a marker too); outside, each has its own again."""
    assert len(set(USER)) == len(USER) == 72
    assert not {c for c, _ in USER} & {c for _, c, _ in BUILT_IN.values()}
    assert not {m for _, m in USER} & {m for _, _, m in BUILT_IN.values()}
    order = list(dict.fromkeys(c for c, _ in USER))  # USER's colours, in its order
    assert len(order) == 12
    mine = [f"mine{i}:index" for i in range(40)]
    alone = {name: registry.style(name) for name in mine}
    clash = next((a, b) for a in mine for b in mine if a < b and alone[a][0] == alone[b][0])  # a shared colour
    names = [*clash, "cohv-ucb", *(n for n in mine[:10] if n not in clash)]
    with registry.distinct_styles(names):
        inside = [registry.style(name) for name in names]
    assert len({c for c, _ in inside}) == len(names) and inside[0] == alone[clash[0]]
    assert inside[2] == ("#d62728", "o")  # a built-in method's own
    start = order.index(alone[clash[1]][0])  # the second meets only the first: the colour after its own
    assert inside[1] == (order[(start + 1) % 12], alone[clash[1]][1])
    assert [registry.style(name) for name in names] == [alone[n] if n in alone else ("#d62728", "o") for n in names]
    with registry.distinct_styles(mine[:20]):  # past 12 colours: no two alike in colour and marker together
        assert len({registry.style(name) for name in mine[:20]}) == 20
    # a decorator that gave a marker alone: its colour is still chosen among USER's, and moved when taken
    spec = registry.spec
    shown = user_style("mine_marked:index", marker="x", color=None)
    monkeypatch.setattr(registry, "spec", lambda name, setting=None: (
        Spec(name, "online", "user", shown=user_style(name, marker="x")) if name == "mine_marked:index"
        else spec(name, setting)))
    twin = next(n for n in mine if alone[n][0] == shown.color)
    with registry.distinct_styles([twin, "mine_marked:index"]):
        assert registry.style("mine_marked:index") == (order[(order.index(shown.color) + 1) % 12], "x")
