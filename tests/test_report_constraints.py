"""`cabench report --require`: both reports state the requirements at the top and, per experiment, answer under
them — the same answer and the same shares as `recommend --require` on the quick results, the known constrained
answers of a synthetic instance (shares counted again from selections.csv), one clear sentence when nothing
qualifies — and, without requirements, say exactly what they said before."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from cabench.cli import app
from tests.conftest import five_results
from tests.test_html_report import Node, Tree, rows
from tests.test_scorecard import md_table, quick_results

RUNNER = CliRunner()
QUICK_REQUIRES = ("accuracy>=0.05", "latency<=2500ms")


def _report(root: Path, *requires: str) -> tuple[str, Node]:
    """``cabench report ROOT --require ...``: REPORT.md's text and REPORT.html's tree."""
    result = RUNNER.invoke(app, ["report", str(root), *(x for r in requires for x in ("--require", r))])
    assert result.exit_code == 0, result.output
    return (root / "REPORT.md").read_text(), Tree((root / "REPORT.html").read_text()).root


def _md_part(md: str, label: str) -> str:
    """The part 'Under your requirements' of one experiment in REPORT.md."""
    section = md[md.index(f"## Experiment `{label}`"):]
    part = section[section.index("### Under your requirements"):]
    return part[:part.index("### Summary")]


def _html_part(page: Node, label: str) -> Node:
    (section,) = page.all("section", data_experiment=label)
    (part,) = section.all("section", **{"class": "under"})
    return part


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> Path:
    """The quick results (online, subset identification, realised costs) in a folder of their own."""
    root = tmp_path_factory.mktemp("quick_required")
    shutil.copytree(quick_results(tmp_path_factory), root, dirs_exist_ok=True)
    return root


def test_the_report_names_the_answer_and_the_shares_recommend_gives(quick):
    recommended = RUNNER.invoke(app, ["recommend", str(quick), "--json",
                                      *(x for r in QUICK_REQUIRES for x in ("--require", r))])
    assert recommended.exit_code == 0, recommended.output
    md, page = _report(quick, *QUICK_REQUIRES)
    top = "Requirements (--require): accuracy >= 0.05, latency <= 2.5 s, on the per-call means"
    assert md.splitlines()[2].startswith(f"**{top}") and page.by_id("requirements").text.startswith(top)
    items = json.loads(recommended.stdout)
    assert {i["setting"] for i in items} == {"online", "psi"}
    for item in items:
        c, label, psi = item["constrained"], item["experiment"], item["setting"] == "psi"
        assert 0 < len(c["qualifying"]) < item["K"] and c["answer"]
        part, html = _md_part(md, label), _html_part(page, label)
        assert f"{len(c['qualifying'])} of {item['K']} configurations satisf" in part
        named = (f"(P* ∩ F, {len(c['answer'])}): {', '.join(c['answer'])}." if psi
                 else f"Pay for {c['answer'][0]}: the largest ν among them.")
        assert named in part and named in html.text
        assert html.attrs["data-answer"] == "|".join(c["answer"])
        members = md_table(part, "| configuration |")
        assert list(members["configuration"]) == c["answer"]
        arms = pd.read_csv(quick / f"{label}_quick" / "arms.csv").set_index("config_id")
        for name, shown in zip(members["configuration"], members["accuracy per call"]):  # real units per call
            mean, half = arms.loc[name, "accuracy"], arms.loc[name, "accuracy_ci"]
            assert arms.loc[name, "accuracy_high"] == pytest.approx(mean + half)  # the normal interval: shown as ±
            assert shown == f"{mean:.3f} ± {half:.3f}"
        preferring = [f for f in c["found"] if f["method"] not in item["no_preference"]]
        share = "returned ∩ F is P* ∩ F" if psi else "most-pulled qualifying is it"
        table = md_table(part, "| method |")
        assert list(table[share]) == [f"{100 * f['share']:.0f}%" for f in preferring]
        assert list(table["ρ"]) == [f"{f['rho']:g}" for f in preferring]
        (found,) = html.all("table", id=f"under-found-{html.attrs['id'].removeprefix('under-')}")
        cells = {(r.attrs["data-method"], float(r.attrs["data-rho"]), r.attrs["data-mode"] or None):
                 float(r.all("td")[5 if psi else 4].attrs["data-value"]) for r in rows(found)}
        assert cells == pytest.approx({(f["method"], f["rho"], f["cost_mode"]): f["share"] for f in preferring})
        ran = [r for r in item["results"] if r["method"] not in item["no_preference"]]
        assert len(preferring) == len(ran) > 0  # every method with a preference at every budget (and cost mode)


def test_without_requirements_the_reports_are_the_same_less_the_parts_they_add(quick, tmp_path):
    def unsigned(text: str) -> str:  # each file's last line signs its own text
        return re.sub(r"<!-- cabench sha256:[0-9a-f]{64} -->\n\Z", "", text)

    shutil.copytree(quick, tmp_path / "plain")
    plain_md, _ = _report(tmp_path / "plain")
    plain_md = unsigned(plain_md)
    plain_html = unsigned((tmp_path / "plain" / "REPORT.html").read_text())
    assert "requirements" not in plain_md.lower() and 'id="requirements"' not in plain_html
    assert 'class="under"' not in plain_html
    required_md, _ = _report(quick, *QUICK_REQUIRES)
    required_md = unsigned(required_md)
    required_html = unsigned((quick / "REPORT.html").read_text())
    lines = required_md.splitlines(keepends=True)
    assert lines[2].startswith("**Requirements (--require):") and lines[3] == "\n"
    stripped = re.sub(r"### Under your requirements\n.*?(?=### Summary)", "", "".join(lines[:2] + lines[4:]),
                      flags=re.S)
    assert stripped == plain_md
    stripped = re.sub(r'\n *<p id="requirements">.*?</p>|\n *<section class="under".*?</section>', "",
                      required_html, flags=re.S)
    assert stripped == plain_html


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    return five_results(tmp_path_factory.mktemp("required_five"), ["cohv-ucb", "uniform"])


def _psi_shares(folder: Path, qualifying: set[str], answer: set[str]) -> dict[tuple[str, float], float]:
    """Per (method, rho): the share of repetitions whose returned set restricted to ``qualifying`` is ``answer``,
    counted run by run from selections.csv."""
    sel = pd.read_csv(next(folder.glob("selections.csv*")))
    out: dict[tuple[str, float], list[bool]] = {}
    for (method, rho, _), g in sel.groupby(["method", "rho", "rep"]):
        returned = {n for n, r in zip(g["config_id"], g["returned"]) if r == 1 and n in qualifying}
        out.setdefault((method, rho), []).append(returned == answer)
    return {k: float(np.mean(v)) for k, v in out.items()}


def _online_shares(folder: Path, qualifying: list[str], answer: str) -> dict[float, float]:
    """Per rho, CoHV-UCB's share of repetitions whose most-pulled qualifying arm (ties to the first) is ``answer``."""
    sel = pd.read_csv(next(folder.glob("selections.csv*")))
    sel = sel[sel["method"] == "cohv-ucb"]
    out: dict[float, list[bool]] = {}
    for (rho, _), g in sel.groupby(["rho", "rep"]):
        pulls = dict(zip(g["config_id"], g["pulls"]))
        best = max(qualifying, key=lambda n: (pulls[n], -qualifying.index(n)))
        out.setdefault(rho, []).append(best == answer)
    return {k: float(np.mean(v)) for k, v in out.items()}


def test_the_known_constrained_answers_of_a_synthetic_instance_appear_in_the_report(synthetic):
    md, page = _report(synthetic, "objective1<=0.55")
    online, psi = _md_part(md, "five_online"), _md_part(md, "five_psi")
    assert "3 of 5 configurations satisfy objective1 <= 0.55: arm2, arm3, arm4." in online
    assert "Pay for arm3: the largest ν among them." in online and "Uniform: a round robin" in online
    assert "The true Pareto set restricted to them (P* ∩ F, 1): arm2." in psi
    assert "(a filtered answer never holds them): arm3." in psi
    assert _html_part(page, "five_online").attrs["data-answer"] == "arm3"
    assert _html_part(page, "five_psi").attrs["data-answer"] == "arm2"
    assert list(md_table(psi, "| configuration |")["configuration"]) == ["arm2"]
    assert list(md_table(online, "| configuration |")["configuration"]) == ["arm3"]
    table = md_table(psi, "| method |")
    shares = _psi_shares(synthetic / "psi", {"arm2", "arm3", "arm4"}, {"arm2"})
    assert {(m, float(r)): s for m, r, s in zip(table["method"], table["ρ"], table["returned ∩ F is P* ∩ F"])} == {
        (name, rho): f"{100 * shares[method, rho]:.0f}%" for method, name in (("copsi-r", "CoPSI-R"),
                                                                            ("psi-sr", "PSI-SR"))
        for rho in (30.0, 100.0)}
    assert max(shares.values()) > 0
    table = md_table(online, "| method |")
    assert list(table["method"]) == ["CoHV-UCB"]  # the round robin has no preference to count
    share = _online_shares(synthetic / "online", ["arm2", "arm3", "arm4"], "arm3")[30.0]
    assert table["most-pulled qualifying is it"].iloc[0] == f"{100 * share:.0f}%"


def test_an_impossible_requirement_is_said_in_one_sentence(synthetic):
    md, page = _report(synthetic, "objective1>=0.95", "objective2>=0.5")
    sentence = ("No configuration satisfies objective1 >= 0.95, objective2 >= 0.5: none of the 5 configurations "
                "qualifies, so there is no answer under these requirements.")
    for label in ("five_online", "five_psi"):
        part = _md_part(md, label)
        assert sentence in part and "|" not in part
        html = _html_part(page, label)
        assert html.attrs["data-qualifying"] == "0" and sentence in html.text and not html.all("table")


def test_a_measure_some_experiments_lack_is_said_there_and_one_all_lack_is_an_error(synthetic, quick, tmp_path):
    shutil.copytree(synthetic / "psi", tmp_path / "five_psi")
    shutil.copytree(quick / "gsm8k_psi_quick", tmp_path / "gsm8k_psi")
    md, _ = _report(tmp_path, "latency<=2s")
    assert "The requirements cannot be applied to this experiment: --require latency<=2s: the experiment's " \
           "configurations have no latency" in _md_part(md, "five_psi")
    assert "configurations satisf" in _md_part(md, "gsm8k_psi")
    bad = RUNNER.invoke(app, ["report", str(synthetic), "--require", "latency<=2s"])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1 and "have no latency" in bad.output
    assert "(experiment five_online; none of the 2 experiments can take every requirement)" in bad.output


@pytest.mark.parametrize("setting", ["psi", "online"])
def test_names_with_commas_or_quotes_are_quoted_in_the_sentences(setting):
    """A configuration named `tiny, cot` is one name in every list the part 'Under your requirements' writes, as
    recommend and the decision table show it."""
    from types import SimpleNamespace

    from cabench.constraints import ConstrainedAnswer
    from cabench.report_requirements import requirement_sentences

    names = ("tiny, cot", 'frontier "pro"', "plain")
    a = ConstrainedAnswer(constraints=("accuracy >= 0.5",), qualifying=names, borderline=(names[0],),
                          answer=names[:1] if setting == "online" else names[:2],
                          pareto_within=names if setting == "psi" else names[:1], found=(),
                          true_within=names[:2] if setting == "psi" else names[:1])
    text = " ".join(requirement_sentences(SimpleNamespace(k=5, setting=setting), a))
    assert '3 of 5 configurations satisfy accuracy >= 0.5: "tiny, cot", "frontier \\"pro\\"", plain.' in text
    assert 'crosses a bound): "tiny, cot".' in text
    if setting == "online":
        assert 'Pay for "tiny, cot": the largest ν' in text
    else:
        assert '(P* ∩ F, 2): "tiny, cot", "frontier \\"pro\\"". ' in text and "requirement (a filtered answer " \
            "never holds them): plain." in text
