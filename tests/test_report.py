"""REPORT.md as Markdown: every table keeps its columns (a ``|`` in a dataset's title or a configuration's name, and
the ``|P*|`` of Table 1's header, are escaped) and names holding backticks stay whole code spans; a report file of the
user's own is never replaced without --force."""

from __future__ import annotations

import html
import re

import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.config import load_config, parse_config
from cabench.report import build_report
from cabench.report_cells import code
from cabench.runner import run_experiment
from tests.conftest import DATA, ROOT, tiny_logs, write_dataset

RUNNER = CliRunner()

NAMES = ["plain", "pipe|name", "tick`name`"]


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row, split at the ``|`` that are not escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _tables(text: str) -> list[list[str]]:
    """The tables of ``text``, each as its lines."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_tables_keep_their_columns_and_names_their_code_spans(tmp_path):
    frame = tiny_logs(len(NAMES), 30)
    frame["config_id"] = frame["config_id"].map({f"cfg{i}": name for i, name in enumerate(NAMES)})
    data = write_dataset(tmp_path / "named", frame, split={"profiling_size": 10})
    meta = yaml.safe_load((data / "dataset.yaml").read_text())
    (data / "dataset.yaml").write_text(yaml.safe_dump({**meta, "title": "Mine | v2"}))
    config = tmp_path / "online.yaml"
    config.write_text(yaml.safe_dump({"name": "named_online", "dataset": str(data), "setting": "online",
                                      "rho": [4, 8], "methods": ["cohv-ucb", "uniform"], "repetitions": 3,
                                      "backend": "sequential", "output": str(tmp_path / "root" / "online")}))
    run_experiment(load_config(config), quiet=True)
    text = build_report(tmp_path / "root")
    tables = _tables(text)
    assert len(tables) == 7  # scorecard, decisions, overview, Table 1, summary, configurations, comparisons
    for table in tables:
        header, rule, *rows = table
        assert len(_cells(rule)) == len(_cells(header)), header
        assert all(len(_cells(row)) == len(_cells(header)) for row in rows), header
    table1 = next(t for t in tables if t[0].startswith("| data |"))
    assert _cells(table1[0])[6] == "\\|P*\\|"
    assert _cells(table1[2])[:3] == ["Mine \\| v2", "logs", "3"]
    overview = next(t for t in tables if t[0].startswith("| experiment | setting |"))
    assert _cells(overview[2])[:4] == ["`named_online`", "online", "Mine \\| v2", "3"]
    shown = {_cells(row)[0] for row in next(t for t in tables if t[0].startswith("| configuration |"))[2:]}
    assert code("tick`name`") == "`` tick`name` ``"
    for name in shown:  # every configuration is one whole code span, its backticks inside
        assert name.replace("\\|", "|") in {code(n) for n in NAMES}
    count, front, best = re.search(r"true Pareto set of these arms \((\d)\): (.*); max-ν arm: (.*)", text).groups()
    assert len(front.split(", ")) == int(count) >= 2
    assert set(front.split(", ")) | {best} <= {code(n) for n in NAMES}


def _user_results(tmp_path, root_name: str = "root"):
    data = write_dataset(tmp_path / "mine", tiny_logs(3, 30), split={"profiling_size": 10})
    for setting, methods in (("online", ["cohv-ucb", "uniform"]), ("psi", ["copsi-r", "uniform"])):
        config = tmp_path / f"{setting}.yaml"
        config.write_text(yaml.safe_dump({"name": f"mine_{setting}", "dataset": str(data), "setting": setting,
                                          "rho": [6, 12], "methods": methods, "repetitions": 3,
                                          "backend": "sequential", "output": str(tmp_path / root_name / setting)}))
        run_experiment(load_config(config), quiet=True)
    return tmp_path / root_name


def test_beyond_the_paper_speaks_of_the_papers_experiments_only_where_there_are_some(tmp_path):
    """A user's own experiments on their own logs are listed in order after "The data": the report put them
    "Beyond the paper" under the paper's "Table 1", and REPORT.html tagged them so. Beside an experiment of the
    paper's (or one on its data), the paper's words come back."""
    root = _user_results(tmp_path)
    text = build_report(root)
    assert "Beyond the paper" not in text and "Table 1" not in text and "\n## The data\n" in text
    order = [text.index(f"## {h}") for h in ("The data", "Experiment `mine_online`", "Experiment `mine_psi`")]
    assert order == sorted(order)
    assert RUNNER.invoke(app, ["report", str(root)]).exit_code == 0
    assert "beyond the paper" not in (root / "REPORT.html").read_text().lower()
    cfg = load_config(ROOT / "configs" / "gsm8k_psi_quick.yaml",
                      overrides={"repetitions": 2, "rho": [200], "output": str(root / "paper")})
    run_experiment(cfg, quiet=True)
    text = build_report(root)
    beyond = text[text.index("## Beyond the paper"):]
    assert "## Experiment `mine_psi`" in beyond and "## Experiment `mine_online`" not in beyond
    assert RUNNER.invoke(app, ["report", str(root)]).exit_code == 0  # mine_psi's section kept, its tag not
    assert (root / "REPORT.html").read_text().count('<span class="tag">beyond the paper</span>') == 1
    assert "\n## Table 1: the data\n" in text
    assert "These results are kept apart from the paper's experiments above and from its figures." in text


def test_figures_drawn_without_png_are_embedded_as_svg_or_said_to_be_pdf_only(tmp_path):
    """REPORT.md embedded PNG figures only: after `plot --format svg` it showed none (REPORT.html showed the SVGs),
    and after `plot --format pdf` neither report said why it had no figures."""
    from cabench.html_report import write_reports
    from cabench.plots import plot

    root = _user_results(tmp_path)
    plot(root, ["pdf"])
    md, html = write_reports(root)
    note = "4 figure(s) of figures.csv are drawn as PDF only, which a report does not embed"
    assert note in md.read_text() and "![" not in md.read_text()
    assert 'id="pdf-only-figures">4 figure(s) of figures.csv are drawn as PDF only' in html.read_text()
    plot(root, ["svg"])
    md, html = write_reports(root)
    embedded = re.findall(r"!\[[^]]*\]\((figures/[^)]*)\)", md.read_text())
    assert sorted(embedded) == [f"figures/mine_{name}.svg" for name in
                                ("online_landscape", "online_regret", "psi_identification", "psi_landscape")]
    assert "PDF only" not in md.read_text() and "pdf-only-figures" not in html.read_text()
    assert html.read_text().count("data:image/svg+xml;base64,") == 4


def test_a_report_file_cabench_did_not_write_is_never_replaced_without_force(tmp_path):
    """A REPORT.md or REPORT.html of the user's own in a results folder: refused in one line before any work, kept
    byte for byte; --force replaces it; a report cabench wrote is replaced as always."""
    raw = {"name": "mine", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["uniform"],
           "repetitions": 2, "output": str(tmp_path / "res" / "mine")}
    run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    root = tmp_path / "res"
    for name, own in (("REPORT.md", "# my notes\n"), ("REPORT.html", "<html><title>mine</title></html>")):
        (root / name).write_text(own)
        done = RUNNER.invoke(app, ["report", str(root)])
        assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1, done.output
        assert f"{root / name}: not a report cabench wrote" in done.output and "--force" in done.output
        assert (root / name).read_text() == own and not (root / "report_sections.json").exists()
        (root / name).unlink()
    (root / "REPORT.md").write_text("# my notes\n")
    assert RUNNER.invoke(app, ["report", str(root), "--force"]).exit_code == 0
    assert (root / "REPORT.md").read_text().startswith("# cabench report\n")
    again = RUNNER.invoke(app, ["report", str(root)])  # its own reports: replaced without a word
    assert again.exit_code == 0, again.output
    # notes added to a report cabench wrote (it began with its mark, so it was taken for its own and replaced)
    for name, edit in (("REPORT.md", lambda t: t + "MY NOTES\n"), ("REPORT.md", lambda t: t.replace("\n", "\nx\n", 3)),
                       ("REPORT.html", lambda t: t.replace("</body>", "<p>mine</p></body>"))):
        kept = (root / name).read_text()
        (root / name).write_text(edit(kept))
        edited = (root / name).read_bytes()
        done = RUNNER.invoke(app, ["report", str(root)])
        assert done.exit_code == 2 and len(done.stderr.strip().splitlines()) == 1, done.output
        assert f"{root / name}: edited since cabench wrote it" in done.stderr and "--force" in done.stderr
        assert (root / name).read_bytes() == edited
        assert RUNNER.invoke(app, ["report", str(root), "--force"]).exit_code == 0
        assert (root / name).read_text() == kept


def test_an_experiment_stopped_before_its_tables_is_named_not_silently_left_out(tmp_path):
    """A first run stopped before it wrote runs.csv leaves only its cells: the reports and recommend name the folder
    (recommend on standard error, so --json stays one document); the finished experiment is reported as usual."""
    import json
    import shutil

    root = tmp_path / "res"
    for name in ("done", "stopped"):
        raw = {"name": name, "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["uniform"],
               "repetitions": 2, "output": str(root / name)}
        run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    for path in (root / "stopped").iterdir():  # as an interrupted first run leaves it: cells only
        if path.name != "cells":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    note = ("Not finished, so left out: stopped (cells but no runs.csv: a run stopped before it wrote its tables; run "
            "its config again to finish it).")
    assert RUNNER.invoke(app, ["report", str(root)]).exit_code == 0
    md = (root / "REPORT.md").read_text()
    assert "1 experiment found below this folder;" in md and note in md and "## Experiment `done`" in md
    assert f'<p class="note" id="unfinished">{note}</p>' in (root / "REPORT.html").read_text()
    done = RUNNER.invoke(app, ["recommend", str(root), "--json"])
    assert done.exit_code == 0 and done.stderr.strip() == note
    assert [i["experiment"] for i in json.loads(done.stdout)] == ["done"]
    # the stopped folder alone: each command said "no results below this folder; run `cabench run CONFIG` first"
    alone = root / "stopped"
    for command in ("report", "recommend", "plot"):
        said = RUNNER.invoke(app, [command, str(alone)])
        assert said.exit_code == 2 and said.stderr == (
            f"error: {alone}: no finished results below this folder. Not finished, so left out: this folder (cells "
            "but no runs.csv: a run stopped before it wrote its tables; run its config again to finish it).\n"), \
            said.output


def test_a_budget_not_run_is_said_in_both_reports_as_summary_csv_says_it(tmp_path):
    """CoPSI-R cannot run at rho 1 on 4 arms: REPORT.md lists it under the experiment and REPORT.html says it
    under the summary table, each with the reason summary.csv records as its status."""
    import html as html_text

    import pandas as pd

    from cabench.html_report import write_reports

    data = write_dataset(tmp_path / "four", tiny_logs(4, 20), split={"profiling_size": 10})
    cfg = parse_config({"name": "skip", "dataset": str(data), "setting": "psi", "methods": ["copsi-r", "uniform"],
                        "rho": [1, 8], "repetitions": 2, "backend": "sequential",
                        "output": str(tmp_path / "root" / "skip")}, "t.yaml")
    run_experiment(cfg, quiet=True)
    summary = pd.read_csv(tmp_path / "root" / "skip" / "summary.csv")
    [status] = summary.loc[summary["status"] != "ok", "status"]
    assert status.startswith("not run: rho 1 is too small for CoPSI-R on 4 arms")
    line = f"not run: CoPSI-R at ρ=1 ({status.removeprefix('not run: ')})"
    write_reports(tmp_path / "root")
    assert f"- {line}\n" in (tmp_path / "root" / "REPORT.md").read_text()
    page = (tmp_path / "root" / "REPORT.html").read_text()
    assert re.findall(r'<p class="not-run">([^<]*)</p>', page) == [html_text.escape(line, quote=True)]


def test_hostile_names_stay_text_in_report_md(tmp_path):
    """A name with a backtick broke out of the single-backtick span of its heading and scorecard row, and captions
    carried names raw: ``<img src=x onerror=...>`` became an element in Markdown viewers that pass HTML through.
    Rendered by markdown-it (CommonMark, HTML allowed), REPORT.md holds no element of the names."""
    markdown_it = pytest.importorskip("markdown_it")
    from cabench.report_cells import inert_html

    assert inert_html("p < 0.05 and a<b, `<i>` <i>x</i> ``a`<b>`` `<u>") == (
        "p < 0.05 and a&lt;b, `<i>` &lt;i>x&lt;/i> ``a`<b>`` `&lt;u>")
    hostile = ["q`<img src=x onerror=alert(1)>`", "<svg onload=alert(2)>"]
    for n, name in enumerate(hostile):
        config = tmp_path / f"h{n}.yaml"
        config.write_text(yaml.safe_dump({
            "name": name, "setting": "online", "rho": [4], "methods": ["cohv-ucb"], "repetitions": 2,
            "dataset": {"synthetic": {"means": [[0.9, 0.2], [0.5, 0.6], [0.2, 0.9]], "costs": [1.0, 2.0, 3.0]}},
            "output": str(tmp_path / "root" / f"e{n}")}))
        run_experiment(load_config(config), quiet=True)
    text = build_report(tmp_path / "root")
    assert all(code(name) in text for name in hostile)
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<img" not in html and "<svg" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 2 and html.count("&lt;svg onload=alert(2)&gt;") >= 2


def test_an_experiment_of_one_method_and_one_budget_says_it_has_nothing_to_compare_or_test(tmp_path):
    """One method at one budget (what `advise` runs): REPORT.md's Verdicts heading stood empty at the end of the
    section, and REPORT.html introduced comparisons "against each other method" with none below; both now say so."""
    from tests.conftest import FIVE

    cfg = parse_config({"name": "alone", "dataset": FIVE, "setting": "psi", "rho": [30], "methods": ["copsi-r"],
                        "repetitions": 4, "output": str(tmp_path / "alone")}, "alone.yaml")
    run_experiment(cfg, quiet=True)
    assert RUNNER.invoke(app, ["report", str(tmp_path)]).exit_code == 0
    md = (tmp_path / "REPORT.md").read_text()
    section = md[md.index("## Experiment `alone`"):]
    assert "### Paired comparisons\n\nNo other method to compare with.\n" in section
    assert ("### Verdicts\n\nNo claim is tested on this experiment: each compares methods or budgets that it does "
            "not run.\n") in section
    html = (tmp_path / "REPORT.html").read_text()
    assert "<p>No other method to compare with.</p>" in html and "against each other method" not in html


def test_evaluation_calls_dearer_than_every_profiling_call_are_said_to_be_charged_c_max(tmp_path):
    """Online selection charges a call min(cost, c_max) (the paper's normalised cost): where an evaluation call costs
    more than every profiling call, the spends shown ("spent 100% of B") understate what such calls cost, which
    recommend, REPORT.md and REPORT.html now say beside the online experiment (identification charges costs
    unclipped: nothing to say there)."""
    from cabench.data.dataset import load_dataset

    frame = tiny_logs(3, 20, seed=0)
    frame["tokens"] = 100
    plain = write_dataset(tmp_path / "plain", frame, split={"profiling_size": 8, "seed": 0})
    evaluation = set(load_dataset(plain).evaluation_ids)
    dear = (frame["config_id"] == "cfg2") & frame["instance_id"].isin(evaluation)
    frame.loc[dear[dear].index[:5], "tokens"] = 1000  # five of cfg2's evaluation calls
    folder = write_dataset(tmp_path / "dear", frame, split={"profiling_size": 8, "seed": 0})
    for setting in ("online", "psi"):
        cfg = parse_config({"name": f"dear_{setting}", "dataset": str(folder), "setting": setting, "rho": [4],
                            "methods": ["cohv-ucb"] if setting == "online" else ["copsi-r"], "repetitions": 4,
                            "output": str(tmp_path / "results" / setting)}, "dear.yaml")
        run_experiment(cfg, quiet=True)
    note = ("5 of the dataset's evaluation calls (of any of its configurations, this experiment's or not) cost more "
            "than its dearest profiling call, c_max = 100 tokens; a "
            "replay charges each c_max (a call's normalised cost is min(cost / c_max, 1)), so the spends shown "
            "understate what such calls cost")
    assert RUNNER.invoke(app, ["report", str(tmp_path / "results")]).exit_code == 0
    md = (tmp_path / "results" / "REPORT.md").read_text()
    online, psi = md.index("## Experiment `dear_online`"), md.index("## Experiment `dear_psi`")
    assert md.count(note) == 1 and (online < md.index(note) < psi or psi < online < md.index(note))
    html = (tmp_path / "results" / "REPORT.html").read_text()
    escaped = note.replace("'", "&#39;")
    assert html.count(f'<p class="clipped">{escaped}.</p>') == 1
    shown = RUNNER.invoke(app, ["recommend", str(tmp_path / "results")])
    assert shown.exit_code == 0 and shown.stdout.count(f"  note: {note}\n") == 1
    assert shown.stdout.index("dear_online") < shown.stdout.index(note)


def test_a_title_or_caption_is_shown_as_written_by_a_markdown_viewer():
    """A dataset title holding '[click](http://...)' or '![x](http://.../p.png)' made REPORT.md show live links and
    fetch a remote image, its ']' ended the alt text of the report's own figures, and '&amp;' read as '&'. Rendered
    by a CommonMark parser (markdown-it-py, as editors and hosting sites render Markdown), it is text as written."""
    from markdown_it import MarkdownIt

    from cabench.report_cells import inert_html, md_text

    title = "T] [click](http://evil.example/) ![x](http://evil.example/p.png) a_b *c* &amp; `t` 1\\2 <img src=x>"
    line = inert_html(f"**{md_text(title)}.**\n\n![{md_text(title)}](figures/f.png)\n")
    page = MarkdownIt("commonmark").render(line)
    assert page.count("<img") == 1 and 'src="figures/f.png"' in page  # the report's own figure, no other
    assert "<a " not in page and "<em>" not in page and "<code>" not in page
    shown = MarkdownIt("commonmark").render(inert_html(md_text(title)))
    assert shown == f"<p>{html.escape(title, quote=False)}</p>\n"


def test_a_dataset_title_with_markdown_is_text_wherever_the_report_writes_it(tmp_path):
    """The whole REPORT.md of an experiment on logs whose dataset.yaml title holds a link and a remote image, as a
    CommonMark parser renders it: no link, no image, the title's text shown as written."""
    from markdown_it import MarkdownIt

    from cabench.config import parse_config
    from cabench.data.io import write_metadata
    from cabench.report import write_report
    from cabench.runner import run_experiment
    from tests.conftest import tiny_logs, write_dataset

    folder = write_dataset(tmp_path / "hostile", tiny_logs(), split={"profiling_size": 5, "seed": 0})
    meta = yaml.safe_load((folder / "dataset.yaml").read_text())
    title = "T] [click](http://evil.example/) ![x](http://evil.example/p.png)"
    write_metadata({**meta, "title": title}, folder / "dataset.yaml")
    run_experiment(parse_config({"name": "h", "dataset": str(folder), "setting": "online", "rho": [4],
                                 "methods": ["cohv-ucb"], "repetitions": 2, "output": str(tmp_path / "r" / "h")},
                                "h.yaml"), quiet=True)
    page = MarkdownIt("commonmark").enable("table").render(write_report(tmp_path / "r").read_text())
    assert "evil.example" in page and "<a " not in page and "<img" not in page
    assert page.count(html.escape(title, quote=False)) >= 3  # the experiment's data line, the table of data, ...
