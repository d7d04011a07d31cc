"""REPORT.html in a real browser: headless Chromium opens the page of the quick results with no console message,
and the scorecard and the decision tables read from the rendered page agree with summary.csv, runs.csv,
selections.csv and arms.csv; a figure drawn from results that changed since is never embedded."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import yaml

from cabench import registry
from cabench.config import load_config
from cabench.html_report import plotly_text, write_reports
from cabench.plots import plot_results
from cabench.runner import run_experiment
from tests.conftest import SAFETY_S, built_once, five_results, tiny_logs, write_dataset
from tests.test_scorecard import quick_results

pytestmark = pytest.mark.slow  # a browser, and figures drawn: about half a minute

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag, self.attrs, self.children, self.parts = tag, attrs, [], []

    @property
    def text(self) -> str:
        return "".join(self.parts + [c.text for c in self.children]).strip()

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        found = [c for c in self.children if (tag is None or c.tag == tag)
                 and all(c.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]
        return found + [n for c in self.children for n in c.all(tag, **attrs)]

    def by_id(self, ident: str) -> Node:
        (node,) = self.all(id=ident)
        return node


class Tree(HTMLParser):
    """The rendered DOM as nested :class:`Node` objects (the standard library has no DOM parser)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        while len(self.stack) > 1 and self.stack.pop().tag != tag:
            pass

    def handle_data(self, data):
        self.stack[-1].parts.append(data)


def rows(table: Node) -> list[Node]:
    return table.all("tbody")[0].all("tr")


def dumped(page: Path) -> tuple[str, str]:
    """The DOM Chromium holds once the page has loaded and its scripts ran, as HTML, and Chromium's log."""
    done = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr",
                           "--v=0", "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=SAFETY_S)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def render(page: Path) -> tuple[Node, str]:
    """The DOM Chromium holds once the page has loaded and its scripts ran, and Chromium's log."""
    dom, log = dumped(page)
    return Tree(dom).root, log


def _reported(folder: Path, quick: Path) -> None:
    """The quick results with their reports, and where Chromium is installed the DOM it holds of REPORT.html
    and its log (``dom.html``, ``chromium.log`` beside the results)."""
    shutil.copytree(quick, folder / "results")
    write_reports(folder / "results")
    if CHROMIUM is not None:
        dom, log = dumped(folder / "results" / "REPORT.html")
        (folder / "dom.html").write_text(dom)
        (folder / "chromium.log").write_text(log)


@pytest.fixture(scope="module")
def reported(tmp_path_factory) -> Path:
    """:func:`_reported`, built once in the test session (tests read it; a test that changes it copies it)."""
    quick = quick_results(tmp_path_factory)
    return built_once(tmp_path_factory, "html_report", lambda folder: _reported(folder, quick))


@pytest.fixture(scope="module")
def root(reported) -> Path:
    return reported / "results"


@pytest.fixture(scope="module")
def page(reported) -> tuple[Node, str]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium); the browser test needs it")
    return Tree((reported / "dom.html").read_text()).root, (reported / "chromium.log").read_text()


def _summary(root: Path, label: str) -> pd.DataFrame:
    return pd.read_csv(root / f"{label}_quick" / "summary.csv")


def _at(s: pd.DataFrame, method: str, rho: float, mode: str | None = None) -> pd.Series:
    rows = s[(s["method"] == method) & (s["rho"] == rho)]
    return (rows if mode is None else rows[rows["cost_mode"] == mode]).iloc[0]


def test_long_names_wrap_so_the_verdicts_and_decisions_stay_in_view(tmp_path):
    """An experiment and configurations named in 100-odd characters took most of the width: the scorecard's tested
    quantity and the whole decision were cut off at the right, reachable only by scrolling each table sideways.
    Names wrap now, so the scorecard and the decisions fit the page (measured by Chromium, laid out at 1400 px)."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium); the browser test needs it")
    frame = tiny_logs(n_configs=3, n_instances=40)
    frame["config_id"] = frame["config_id"] + "-" + "x" * 120  # one word, too long for any column
    data = write_dataset(tmp_path / "data", frame, split={"profiling_size": 15})
    name = "experiment" * 11
    run_experiment(load_config_text(tmp_path, {"name": name, "dataset": str(data), "setting": "online",
                                               "rho": [2, 4, 8], "methods": ["cohv-ucb", "uniform"],
                                               "repetitions": 4, "output": str(tmp_path / "res" / "x")}), quiet=True)
    write_reports(tmp_path / "res")
    page = (tmp_path / "res" / "REPORT.html").read_text()
    measure = ("<script>window.addEventListener('load', () => { document.body.dataset.widths = JSON.stringify("
               "['#scorecard table', '#decisions-table'].map(s => { const t = document.querySelector(s); "
               "return [t.scrollWidth, t.clientWidth]; })); });</script></body>")
    (tmp_path / "measured.html").write_text(page.replace("</body>", measure))
    done = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--window-size=1400,1000",
                           "--virtual-time-budget=5000", "--dump-dom", (tmp_path / "measured.html").as_uri()],
                          capture_output=True, text=True, timeout=SAFETY_S)
    found = re.search(r'data-widths="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    widths = json.loads(html.unescape(found.group(1)))
    assert all(0 < scroll <= client + 1 for scroll, client in widths), widths


def load_config_text(folder: Path, raw: dict):
    """A config as ``cabench run`` reads it, from ``raw`` written to ``folder/c.yaml``."""
    (folder / "c.yaml").write_text(yaml.safe_dump(raw))
    return load_config(folder / "c.yaml")


def test_page_opens_with_no_console_message_and_nothing_fetched(page):
    dom, log = page
    assert [line for line in log.splitlines() if "CONSOLE" in line] == []
    assert dom.all("section")[0].attrs["id"] == "scorecard"  # the scorecard comes first
    for node in dom.all():
        for attribute in ("src", "href"):
            assert not node.attrs.get(attribute, "").startswith(("http:", "https:", "//")), node.attrs
    assert len(dom.all("script")) == 2 + len(dom.all("section", **{"class": "experiment"}))


def test_scorecard_read_from_the_page_agrees_with_summary_csv(root, page):
    dom, _ = page
    card = rows(dom.by_id("scorecard-table"))
    assert len(card) == 12
    words = {"holds": "holds", "fails": "does not hold", "inconclusive": "inconclusive", "n/a": "not tested"}
    for row in card:
        label, kind, state = row.attrs["data-experiment"], row.attrs["data-kind"], row.attrs["data-state"]
        cells = row.all("td")
        assert cells[2].text == words[state]
        assert (cells[4].text != "—") == (state == "fails")
        estimate, low, high = (float(row.attrs[f"data-{k}"]) for k in ("estimate", "low", "high"))
        assert low <= estimate + 1e-12 and estimate <= high + 1e-12
        s = _summary(root, label)
        top = s["rho"].max()
        if kind == "error-falls":
            grid = sorted(s.loc[s["method"] == "copsi", "rho"])
            expected = _at(s, "copsi", grid[-1])["error"] - _at(s, "copsi", grid[0])["error"]
        elif kind == "error-below":
            expected = (_at(s, "copsi", top, "deterministic")["error"]
                        - _at(s, row.attrs["data-versus"], top, "deterministic")["error"])
        elif kind == "f1-above":
            expected = (_at(s, "copsi", top, "deterministic")["f1"]
                        - _at(s, row.attrs["data-versus"], top, "deterministic")["f1"])
        elif kind == "realised-costs":
            expected = _at(s, "copsi", top, "stochastic")["error"] - _at(s, "copsi", top, "deterministic")["error"]
        elif kind == "lowest-regret":
            for method in s["method"].unique():  # the means the claim is decided on
                assert f"{registry.display(method)} {_at(s, method, top)['regret_hv']:.2f}" in cells[3].text
            expected = _at(s, "cohv-ucb", top)["regret_hv"] - _at(s, row.attrs["data-versus"], top)["regret_hv"]
        else:
            assert kind == "log-growth"
            g = s[s["method"] == "cohv-ucb"].sort_values("rho")
            x = np.log2(g["budget_tokens"].to_numpy())
            expected = np.polyfit(x - x.mean(), g["regret_hv"].to_numpy(), 2)[0]  # curvature of the mean curve
        assert estimate == pytest.approx(expected, abs=1e-9), (label, kind)


def _online_decision(root: Path) -> tuple[str, str, float]:
    """The method with the lowest mean R_HV at the largest budget (round robins have no preference), its most
    exploited configuration (ties to the first name) and the share of repetitions it was."""
    s = _summary(root, "gsm8k_online")
    top = s[(s["rho"] == s["rho"].max()) & s["method"].map(lambda m: registry.prefers(m, "online"))]
    method = top.sort_values("regret_hv").iloc[0]["method"]
    runs = pd.read_csv(root / "gsm8k_online_quick" / "runs.csv")
    last = runs[(runs["method"] == method) & (runs["rho"] == s["rho"].max())]
    counts = last["exploited"].value_counts()
    name = sorted(counts[counts == counts.max()].index)[0]
    return method, name, counts.max() / len(last)


def _psi_decision(root: Path, label: str) -> tuple[str, list[str], dict[str, float]]:
    """The method with the lowest error (then the highest F1) at the largest budget, deterministic costs, the set
    it returns most often, and the share of repetitions each method returns exactly that set."""
    s = _summary(root, label)
    top = s[(s["rho"] == s["rho"].max()) & (s["cost_mode"] == "deterministic")]
    method = top.sort_values(["error", "f1"], ascending=[True, False]).iloc[0]["method"]
    sel = pd.read_csv(next((root / f"{label}_quick").glob("selections.csv*")))  # plain or compressed
    sel = sel[(sel["rho"] == s["rho"].max()) & (sel["cost_mode"] == "deterministic")]
    sets = {(m, rep): tuple(sorted(g.loc[g["returned"] == 1, "config_id"])) for (m, rep), g in
            sel.groupby(["method", "rep"])}
    mine = pd.Series([v for (m, _), v in sets.items() if m == method]).value_counts()
    chosen = sorted(mine[mine == mine.max()].index)[0]
    shares = {m: float(np.mean([v == chosen for (mm, _), v in sets.items() if mm == m])) for m in top["method"]}
    return method, list(chosen), shares


def _check_real_units(row: Node, arms: pd.DataFrame) -> None:
    name = row.attrs["data-config"]
    assert row.all("td")[0].text == name
    for measure in ("accuracy", "latency_s", "tokens"):
        assert float(row.attrs[f"data-{measure.replace('_', '-')}"]) == pytest.approx(arms.loc[name, measure])
    mean, half = arms.loc[name, "accuracy"], arms.loc[name, "accuracy_ci"]
    assert arms.loc[name, "accuracy_low"] == pytest.approx(mean - half)  # the normal interval: shown as ±
    assert row.all("td")[1].text == f"{mean:.3f} ± {half:.3f}"


def test_decisions_read_from_the_page_agree_with_the_result_files(root, page):
    dom, _ = page
    sections = {s.attrs["data-experiment"]: s for s in dom.all("section", **{"class": "experiment"})}
    assert set(sections) == {"gsm8k_online", "gsm8k_psi", "gsm8k_psi_stochastic"}

    method, name, share = _online_decision(root)
    section = sections["gsm8k_online"]
    table = section.by_id(f"decision-{section.attrs['id']}")
    assert table.attrs["data-method"] == method and table.attrs["data-rho"] == "32"
    arms = pd.read_csv(root / "gsm8k_online_quick" / "arms.csv").set_index("config_id")
    [row] = rows(table)
    assert row.attrs["data-config"] == name
    _check_real_units(row, arms)
    found = {r.attrs["data-method"]: float(r.attrs["data-share"])
             for r in rows(section.by_id(f"found-{section.attrs['id']}"))}
    assert found[method] == pytest.approx(share)

    for label in ("gsm8k_psi", "gsm8k_psi_stochastic"):
        method, chosen, shares = _psi_decision(root, label)
        section = sections[label]
        table = section.by_id(f"decision-{section.attrs['id']}")
        assert table.attrs["data-method"] == method
        arms = pd.read_csv(root / f"{label}_quick" / "arms.csv").set_index("config_id")
        assert sorted(r.attrs["data-config"] for r in rows(table)) == chosen
        for row in rows(table):
            _check_real_units(row, arms)
        found = {r.attrs["data-method"]: float(r.attrs["data-share"])
                 for r in rows(section.by_id(f"found-{section.attrs['id']}"))}
        assert found == pytest.approx(shares)


def _expected_overview(root: Path) -> dict[str, tuple[str, list[str], str, str]]:
    """Per experiment, from the result files: the method deciding, the configurations it answers, the largest
    budget in tokens and how often (``k of n repetitions``, and for identification how often the exact true set)."""
    out = {}
    for label in ("gsm8k_online", "gsm8k_psi", "gsm8k_psi_stochastic"):
        s = _summary(root, label)
        runs = pd.read_csv(root / f"{label}_quick" / "runs.csv")
        n = int(runs["rep"].nunique())
        if label == "gsm8k_online":
            method, name, share = _online_decision(root)
            names, often = [name], f"{round(share * n)} of {n} repetitions" + (
                f"; no configuration was exploited in most repetitions ({round(100 * share)}% chose it): this budget "
                "is short of settling on one configuration" if share <= 0.5 else "")  # a weak answer
            budget = _at(s, method, s["rho"].max())["budget_tokens"]
        else:
            method, names, shares = _psi_decision(root, label)
            arms = pd.read_csv(root / f"{label}_quick" / "arms.csv")
            truth = tuple(sorted(arms.loc[arms["pareto"] == 1, "config_id"]))
            sel = pd.read_csv(next((root / f"{label}_quick").glob("selections.csv*")))
            sel = sel[(sel["rho"] == s["rho"].max()) & (sel["cost_mode"] == "deterministic")
                      & (sel["method"] == method)]
            exact = sum(tuple(sorted(g.loc[g["returned"] == 1, "config_id"])) == truth
                        for _, g in sel.groupby("rep"))
            often = f"{round(shares[method] * n)} of {n} repetitions (the exact true set in {exact})" + (
                "; no set came back in most repetitions" if shares[method] <= 0.5 else "")  # a weak answer
            budget = _at(s, method, s["rho"].max(), "deterministic")["budget_tokens"]
        out[label] = (registry.display(method), names, f"{budget:,.0f} tokens", often)
    return out


def test_decisions_overview_of_both_reports_agrees_with_the_result_files(root):
    """REPORT.md's Decisions table (no browser needed): one row per experiment, each from the result files."""
    text = (root / "REPORT.md").read_text()
    assert text.index("## Scorecard") < text.index("## Decisions") < text.index("## Experiment ")
    part = text.split("## Decisions", 1)[1].split("\n\n")[2]  # the sentence, then the table
    table = {cells[0].strip("`"): cells[1:] for cells in
             ([c.strip() for c in line.strip("|").split(" | ")] for line in part.splitlines()[2:])}
    expected = _expected_overview(root)
    assert set(table) == set(expected)
    for label, (by, names, budget, often) in expected.items():
        answer, shown_by, at, shown_often = table[label]
        listed = ", ".join(f"`{n}`" for n in names)
        assert answer == (f"pay for {listed}" if label == "gsm8k_online"
                          else f"the Pareto set of {len(names)}: {listed}"), label
        assert (shown_by, shown_often) == (by, often), label
        assert at.startswith(f"B = {budget} (ρ "), label


def test_decisions_overview_read_from_the_page_agrees_with_the_result_files(root, page):
    dom, _ = page
    overview = {r.attrs["data-experiment"]: r for r in rows(dom.by_id("decisions-table"))}
    for label, (by, names, budget, often) in _expected_overview(root).items():
        row = overview.pop(label)
        assert row.attrs["data-names"].split("; ") == names and row.attrs["data-more"] == "0"
        cells = [c.text for c in row.all("td")]
        assert [c.text for c in row.all("code")] == names
        assert cells[2:] == [by, cells[3], often] and cells[3].startswith(f"B = {budget} (ρ ")
    assert overview == {}


def test_every_configuration_is_in_its_table_and_on_hover_in_the_front(root, page):
    dom, _ = page
    for section in dom.all("section", **{"class": "experiment"}):
        anchor, label = section.attrs["id"], section.attrs["data-experiment"]
        arms = pd.read_csv(root / f"{label}_quick" / "arms.csv")
        listed = [r.attrs["data-config"] for r in rows(section.by_id(f"configurations-{anchor}"))]
        assert listed == list(arms["config_id"])
        plot = section.by_id(f"front-{anchor}")
        assert "js-plotly-plot" in plot.attrs["class"] and plot.all("svg")  # plotly drew it
        figure = json.loads(section.by_id(f"front-data-{anchor}").text)
        go.Figure(figure)  # every property one plotly knows (its validators raise on any other)
        hover = [h.split("<br>")[0] for trace in figure["data"] for h in trace.get("hovertext") or []]
        assert set(arms["config_id"]) <= set(hover)
        pareto = next(t for t in figure["data"] if t["name"] == "true Pareto set")
        assert sorted(h.split("<br>")[0] for h in pareto["hovertext"]) == sorted(arms.loc[arms["pareto"] == 1,
                                                                                          "config_id"])


def _embedded(root: Path) -> tuple[set[str], set[str]]:
    """The figure stems REPORT.md and REPORT.html embed."""
    md, page = (root / "REPORT.md").read_text(), (root / "REPORT.html").read_text()
    stems = {line.split("](")[1].rstrip(")")[:-4] for line in md.splitlines() if line.startswith("![")}
    tree = Tree(page).root
    return stems, {f.attrs["data-stem"] for f in tree.all("figure") if f.all("img")[0].attrs["src"].startswith(
        "data:image/png;base64,")}


def test_a_figure_older_than_its_results_is_never_embedded(tmp_path, root):
    shutil.copytree(root / "gsm8k_psi_quick", tmp_path / "gsm8k_psi_quick")
    plot_results(tmp_path, ["png"])
    write_reports(tmp_path)
    md, html = _embedded(tmp_path)
    mine = {"figures/gsm8k_psi_landscape", "figures/gsm8k_psi_identification"}
    assert mine <= md and md == html
    config = tmp_path / "gsm8k_psi_quick" / "config.yaml"
    config.write_text(config.read_text() + "# edited after the figures were drawn\n")  # the results changed
    write_reports(tmp_path)
    md, html = _embedded(tmp_path)
    assert not md & mine and not html & mine
    assert "left out: drawn from results that have changed since" in (tmp_path / "REPORT.md").read_text()


#: Configuration names a page must show as text, never run or parse: markup, a script end, a quote, a comma.
HOSTILE = ["</script><script>console.log(1)</script>", "<b>bold</b>", 'say "hi"', "a,b", "NaN"]


def test_configuration_names_are_shown_as_written(tmp_path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium); the browser test needs it")
    frame = tiny_logs(len(HOSTILE), 30)
    frame["config_id"] = frame["config_id"].map({f"cfg{i}": name for i, name in enumerate(HOSTILE)})
    data = write_dataset(tmp_path / "named", frame, split={"profiling_size": 10})
    for setting, rho in (("online", [2, 4, 8]), ("psi", [5, 20])):
        methods = ["cohv-ucb", "uniform"] if setting == "online" else ["copsi", "uniform"]
        config = tmp_path / f"{setting}.yaml"
        config.write_text(yaml.safe_dump({"name": f"names_{setting}", "dataset": str(data), "setting": setting,
                                          "rho": rho, "methods": methods, "repetitions": 3, "backend": "sequential",
                                          "output": str(tmp_path / "root" / setting)}))
        run_experiment(load_config(config), quiet=True)
    write_reports(tmp_path / "root")
    dom, log = render(tmp_path / "root" / "REPORT.html")
    assert [line for line in log.splitlines() if "CONSOLE" in line] == []
    for section in dom.all("section", **{"class": "experiment"}):
        table = section.by_id(f"configurations-{section.attrs['id']}")
        assert [r.all("td")[0].text for r in rows(table)] == HOSTILE
        assert not table.all("b")
        hover = json.loads(section.by_id(f"front-data-{section.attrs['id']}").text)
        assert {h.split("<br>")[0] for t in hover["data"] for h in t.get("hovertext") or []} == {
            plotly_text(name) for name in HOSTILE}
    # as plotly.js decodes entities (numeric ones, and amp, lt, gt among the named; not quot): each name as written
    entity = r"&(#\d+|#x[0-9a-fA-F]+|amp|lt|gt);"
    assert {re.sub(entity, lambda m: html.unescape(m[0]), plotly_text(n)) for n in HOSTILE} == set(HOSTILE)


def test_every_experiment_gets_an_id_of_its_own():
    """'run', 'run 2' and 'run!' gave 'run 2' and 'run!' the same id, so the page drew one's Pareto front in the
    other's section and its links led there."""
    from cabench.html_report import _anchors

    labels = ["run", "run 2", "run!", "run-2", "", "!"]
    anchors = _anchors(labels)
    assert len(set(anchors.values())) == len(labels)
    assert anchors["run"] == "exp-run" and anchors["run 2"] == "exp-run-2" and anchors["run!"] == "exp-run-3"
    assert all(re.fullmatch(r"exp-[A-Za-z0-9_-]+", a) for a in anchors.values())
    assert _anchors(labels) == anchors  # the same page gives the same ids


def test_the_tables_name_the_normalised_means_as_the_axes_do(root):
    """The configurations' tables of both reports headed accuracy's normalised mean "accuracy (normalised)" where
    the figures' and the Pareto front's axes say "mean accuracy" (the share of correct answers itself): every
    header says it as the axes do."""
    from cabench.results import ResultSet

    html_text, md_text = ((root / name).read_text() for name in ("REPORT.html", "REPORT.md"))
    for text in (html_text, md_text):
        assert "accuracy (normalised)" not in text and "efficiency (normalised)" not in text
    experiments = len(ResultSet(root).experiments)  # each with its decision's table and its configurations'
    assert html_text.count('<th scope="col">mean accuracy</th><th scope="col">mean efficiency</th>') == 2 * experiments
    assert md_text.count("| mean accuracy | mean efficiency |") == experiments


def test_objective_names_are_text_in_the_pareto_front(tmp_path_factory):
    """plotly reads axis titles and hover text as markup: an objective named with a link (a dataset.yaml can name
    its objectives) became a working link on the page. Names are escaped there, as every other text is."""
    from cabench.html_report import _front
    from cabench.results import ResultSet

    e = next(x for x in ResultSet(quick_results(tmp_path_factory)).experiments if x.setting == "psi")
    front = _front(e, [])  # accuracy and efficiency: their normalised means are what they name, on axes and hover
    axes = front["layout"]
    assert (axes["yaxis"]["title"]["text"], axes["xaxis"]["title"]["text"]) == ("mean accuracy", "mean efficiency")
    assert all("<br>mean accuracy: " in t and "<br>mean efficiency: " in t and "(normalised)" not in t
               for trace in front["data"] for t in trace.get("hovertext", []))
    hostile = "<a href='https://example.invalid/'>acc</a>"
    e.arms = e.arms.rename(columns={"mu_accuracy": f"mu_{hostile}"})
    figure = _front(e, [])
    escaped = html.escape(hostile, quote=False)  # plotly decodes &lt; and &gt;, not &quot;
    assert figure["layout"]["yaxis"]["title"]["text"] == f"{escaped} (normalised, ↑ better)"
    texts = [t for trace in figure["data"] for t in trace.get("hovertext", [])]
    assert texts and all(f"<br>{escaped} (normalised): " in t and hostile not in t for t in texts)


def test_hover_says_values_are_normalised_and_names_every_configuration_at_a_point(tmp_path_factory):
    """The hover box showed "latency: 0.090, cost: 0.019" (normalised, larger is better) beside "latency (s): 7.13"
    with nothing to tell them apart; and of two configurations with identical means only the one drawn on top was
    ever named. Each value says what it is (normalised, or the mean it is), and a point names every configuration
    drawn there."""
    from cabench.html_report import _front
    from cabench.results import ResultSet

    e = next(x for x in ResultSet(quick_results(tmp_path_factory)).experiments if x.setting == "psi")
    arms = e.arms.copy()
    twin = arms.iloc[[0]].assign(config_id="twin of the first")
    e.arms = pd.concat([arms, twin], ignore_index=True)
    figure = _front(e, [])
    texts = {t.split("<br>")[0]: t for trace in figure["data"] for t in trace.get("hovertext", [])}
    first = str(arms["config_id"].iloc[0])
    assert texts[first].endswith("<br>at the same point: twin of the first")
    assert texts["twin of the first"].endswith(f"<br>at the same point: {first}")
    assert all("at the same point" not in t for name, t in texts.items() if name not in (first, "twin of the first"))
    # each value says what it is: accuracy's and efficiency's normalised means are what they name (their mean);
    # another objective's says it is normalised (test_objective_names_are_text_in_the_pareto_front)
    assert e.objectives == ["accuracy", "efficiency"]
    assert all("<br>mean accuracy: " in t and "<br>mean efficiency: " in t for t in texts.values())


def test_the_surrogate_note_comes_first_and_every_front_plot_carries_it(root, tmp_path):
    """The note that the logs are surrogate came after the scorecard and the decisions, and the interactive Pareto
    fronts (whose own 'download as PNG' exports them) had none; on real logs neither is there."""
    import json
    import re

    from cabench.paper import SURROGATE_NOTE

    def fronts(page: str) -> list[dict]:
        return [json.loads(html.unescape(text)) for text in re.findall(
            r'<script type="application/json" id="front-data-[^"]+">(.*?)</script>', page, flags=re.S)]

    page = (root / "REPORT.html").read_text()
    assert page.index('id="surrogate-note"') < page.index('<section id="scorecard">')
    assert fronts(page) and all(f["layout"]["annotations"][0]["text"] == f"<i>{SURROGATE_NOTE}</i>"
                                for f in fronts(page))
    real = tmp_path / "real"
    five_results(real, ["cohv-ucb", "uniform"])
    write_reports(real)
    page = (real / "REPORT.html").read_text()
    assert 'id="surrogate-note"' not in page
    assert fronts(page) and not any("annotations" in f["layout"] for f in fronts(page))


def test_a_gap_of_minus_zero_reads_0_in_the_configurations_table(tmp_path_factory):
    """arms.csv holds -0.0 for some gaps γ (a difference rounded to nothing), and the table showed '-0'."""
    from cabench.html_report import _configurations
    from cabench.results import ResultSet

    e = next(x for x in ResultSet(quick_results(tmp_path_factory)).experiments if x.setting == "psi")
    e.arms = e.arms.assign(gamma=[-0.0, *e.arms["gamma"].iloc[1:]])
    table = _configurations(e, [])
    column = table["header"].index("γ")
    assert table["rows"][0]["cells"][column]["text"] == "0"


def test_the_spent_column_sorts_by_the_amount_it_shows_first(tmp_path_factory):
    """The cells read '780,057 tokens (100.0%)' but sorted by the share, so sorted they looked unsorted."""
    from cabench.report import summary_table
    from cabench.results import ResultSet

    for e in ResultSet(quick_results(tmp_path_factory)).experiments:
        header, rows = summary_table(e, e.summary())
        cells = [r[header.index("spent")] for r in rows]
        shown = [float(re.match(r"[\d,.]+", text).group().replace(",", "")) for text, _ in cells]
        assert [value for _, value in cells] == pytest.approx(shown, abs=0.5) and max(shown) > 100, e.label


def test_the_paper_tables_budgets_sort_by_rho_and_its_numbers_by_value(root):
    """The budget columns sorted 'ρ=128' before 'ρ=32' (as text); each now sorts by its ρ, the grid's smallest and
    largest before and after every number (as JavaScript's parseFloat reads -Infinity and Infinity)."""
    table = Tree((root / "REPORT.html").read_text()).root.by_id("paper-table")
    budgets, ours = [], 0
    for row in rows(table):
        cells = row.all("td")
        for cell in (cells[3], cells[6]):
            text, value = cell.text, cell.attrs["data-value"]
            if text.startswith("ρ="):
                assert float(value) == float(text[2:]), text
                budgets.append(float(value))
            elif text:
                assert value == {"smallest": "-Infinity", "largest": "Infinity"}[text]
        if re.fullmatch(r"-?[\d.]+%?|[+-][\d.]+", cells[5].text):  # a number measured
            assert float(cells[5].attrs["data-value"]) == pytest.approx(float(cells[5].text.rstrip("%")), abs=0.05)
            ours += 1
    assert len(set(budgets)) >= 3 and ours >= 5


def test_a_share_of_one_repetition_in_hundreds_is_never_shown_as_none_or_all():
    """1 of 200 repetitions was shown as "0%" in the decision's sentence and table (and 499 of 500 as "100%"), where
    REPORT.md and recommend say "1 of 200": a share that is neither none nor all is never shown as either."""
    from cabench.html_report import _share

    shown = {v: _share(v)["text"] for v in (0.0, 1 / 200, 0.004999, 0.006, 0.5, 0.994, 499 / 500, 1.0)}
    assert shown == {0.0: "0%", 1 / 200: "<1%", 0.004999: "<1%", 0.006: "1%", 0.5: "50%", 0.994: "99%",
                     499 / 500: ">99%", 1.0: "100%"}
    assert _share(1 / 200)["value"] == repr(0.005)


def test_sorting_reads_a_name_that_begins_with_a_number_as_text_in_its_natural_order(tmp_path):
    """The sort read '7b-chat-01' as the number 7: names beginning with digits compared equal, and a descending sort
    left them ascending. Numbers sort as numbers where the whole value is one, text in its natural order."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium); the browser test needs it")
    script = (Path(__file__).resolve().parents[1] / "cabench" / "templates" / "report.js").read_text()
    script = script.split("// Pareto fronts")[0]  # the sorting alone (no plotly here)
    values = ["7b-chat-10", "7b-chat-02", "cfg10", "7b-chat-01", "cfg2", "1e-05", "0.5", "12"]
    body = "".join(f'<tr><td data-value="{v}">{v}</td></tr>' for v in values)
    clicks = ("<script>window.addEventListener('load', () => { const th = document.querySelector('th'); "
              "const order = () => [...document.querySelectorAll('td')].map(c => c.textContent); th.click(); "
              "const up = order(); th.click(); document.body.dataset.orders = JSON.stringify([up, order()]); });"
              "</script>")
    (tmp_path / "sorted.html").write_text(f'<html><body><table class="sortable"><thead><tr><th>name</th></tr></thead>'
                                          f"<tbody>{body}</tbody></table><script>{script}</script>{clicks}</body>"
                                          "</html>")
    dom, log = dumped(tmp_path / "sorted.html")
    found = re.search(r'data-orders="([^"]*)"', dom)
    assert found, log[-2000:]
    up, down = json.loads(html.unescape(found.group(1)))
    texts = ["7b-chat-01", "7b-chat-02", "7b-chat-10", "cfg2", "cfg10"]
    assert [v for v in up if v in texts] == texts and [v for v in down if v in texts] == texts[::-1]
    assert [v for v in up if v not in texts] == ["1e-05", "0.5", "12"]  # numbers as numbers


def test_a_column_of_yours_never_names_an_attribute_of_the_page(tmp_path):
    """The decision table named each row's data- attributes after the measures, and a column of one's own is named
    anything: 'j onmouseover=alert(1) x' wrote an event handler into REPORT.html. Such a column is shown as text."""
    column = "j onmouseover=alert(1) x"
    frame = tiny_logs(n_configs=3, n_instances=40)
    frame[column] = np.round(np.random.default_rng(0).uniform(0, 1, len(frame)), 2)
    data = write_dataset(tmp_path / "data", frame, gz=False, split={"profiling_size": 15})
    (data / "dataset.yaml").write_text((data / "dataset.yaml").read_text() + f"extra_columns: ['{column}']\n")
    run_experiment(load_config_text(tmp_path, {"name": "x", "dataset": str(data), "setting": "online", "rho": [2, 4],
                                               "objectives": ["accuracy", {"column": column, "direction": "min"}],
                                               "methods": ["cohv-ucb"], "repetitions": 3,
                                               "output": str(tmp_path / "res" / "x")}), quiet=True)
    write_reports(tmp_path / "res")
    page = (tmp_path / "res" / "REPORT.html").read_text()
    nodes = Tree(page).root.all()
    assert not [n.attrs for n in nodes if any(k.startswith("on") for k in n.attrs)]  # no handler, anywhere
    assert any(html.escape(column, quote=False) in n.text for n in nodes)  # the column is there, as text
