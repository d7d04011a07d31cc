"""Hostile result folders: cabench's own files read back exactly as written, and plot, report and
recommend total on damaged ones (one line naming the file and key or column, exit 2, nothing touched)."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from cabench.recommend import recommendations_json
from cabench.runner import _joined, csv_records
from cabench.storage import compressed, to_csv
from cabench.yamlio import load_yaml
from tests.conftest import tiny_logs, write_dataset
from tests.test_torture import checksums, cli, one_line_error

SYNTHETIC = {"dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7]], "costs": [10, 20, 15]}},
             "setting": "online", "rho": [2, 4], "methods": ["cohv-ucb", "uniform"], "repetitions": 3,
             "backend": "sequential"}
#: Configuration names that must survive every file: a comma, a quote, mathtext, a number, a missing value.
NAMES = ["a,b", 'say "hi"', r"m$\frac$", "1e3", "NaN"]


def _write_config(folder: Path, raw: dict, out: Path) -> Path:
    path = folder / f"{out.name}.yaml"
    path.write_text(yaml.safe_dump({**raw, "output": str(out)}, sort_keys=False))
    return path


def _strict_json(text: str):
    def refuse(constant: str):
        raise ValueError(f"not strict JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def _reads_everywhere(root: Path) -> list[dict]:
    """plot, report and recommend succeed on ``root``; recommend's strict JSON is returned."""
    for command in (("plot", root, "--format", "png"), ("report", root)):
        result = cli(*command)
        assert result.exit_code == 0, result.output
    result = cli("recommend", root, "--json")
    assert result.exit_code == 0, result.output
    return _strict_json(result.stdout)


# --- names and hashes that YAML would read as numbers -------------------------------------------------------

@pytest.mark.parametrize("word", ["253592126e722573", "1e5", "1e3"])
def test_number_like_name_and_hash_round_trip(tmp_path, monkeypatch, word):
    """A config hash or experiment name such as 253592126e722573 used to read back as inf or 1e5 as 100000.0."""
    monkeypatch.setattr("cabench.runner.config_hash", lambda identity: word)
    root = tmp_path / "root"
    config = _write_config(tmp_path, SYNTHETIC, root / word)
    assert cli("run", config, "--name", word, "--quiet").exit_code == 0
    meta = load_yaml((root / word / "config.yaml").read_text())
    assert (meta["name"], meta["config_hash"]) == (word, word)
    [item] = _reads_everywhere(root)
    assert (item["experiment"], item["config_hash"]) == (word, word)
    resumed = cli("run", config, "--name", word)
    assert resumed.exit_code == 0 and "(4 reused, 0 to run)" in resumed.stdout, resumed.output


def test_folder_written_by_an_older_cabench_is_read_as_written_and_resumes(tmp_path, monkeypatch):
    """An older cabench wrote YAML 1.1: the hash and name below unquoted, which YAML 1.2 reads as numbers."""
    word = "253592126e722573"
    monkeypatch.setattr("cabench.runner.config_hash", lambda identity: word)
    root = tmp_path / "root"
    config = _write_config(tmp_path, SYNTHETIC, root / "1e5")
    with monkeypatch.context() as older:
        older.setattr("cabench.runner.dump_yaml", lambda data, width: yaml.safe_dump(data, sort_keys=False,
                                                                                      width=width))
        assert cli("run", config, "--name", "1e5", "--quiet").exit_code == 0
    text = (root / "1e5" / "config.yaml").read_text()
    assert f"config_hash: {word}\n" in text and load_yaml(text)["config_hash"] == float("inf")
    [item] = _reads_everywhere(root)
    assert (item["experiment"], item["config_hash"]) == ("1e5", word)
    resumed = cli("run", config, "--name", "1e5")
    assert resumed.exit_code == 0 and "(4 reused, 0 to run)" in resumed.stdout, resumed.output
    meta = load_yaml((root / "1e5" / "config.yaml").read_text())
    assert (meta["name"], meta["config_hash"]) == ("1e5", word)


@pytest.mark.parametrize("name", ["0o10", "08"])
def test_folder_whose_name_an_older_cabench_left_unquoted_an_integer_to_yaml_12_is_read_as_written(tmp_path,
                                                                                                monkeypatch, name):
    """YAML 1.1 reads ``0o10`` and ``08`` as text, so an older cabench wrote them unquoted; YAML 1.2 reads them as
    the integers 8: where the readings differ the file is an older one, and its YAML 1.1 reading stands."""
    from cabench.results import read_record

    root = tmp_path / "root"
    config = _write_config(tmp_path, SYNTHETIC, root / "older")
    with monkeypatch.context() as older:
        older.setattr("cabench.runner.dump_yaml", lambda data, width: yaml.safe_dump(data, sort_keys=False,
                                                                                      width=width))
        assert cli("run", config, "--name", name, "--quiet").exit_code == 0
    text = (root / name / "config.yaml").read_text()
    assert f"name: {name}\n" in text and load_yaml(text)["name"] == 8
    assert read_record(root / name / "config.yaml")["name"] == name
    [item] = _reads_everywhere(root)
    assert item["experiment"] == name
    resumed = cli("run", config, "--name", name)
    assert resumed.exit_code == 0 and "(4 reused, 0 to run)" in resumed.stdout, resumed.output
    assert load_yaml((root / name / "config.yaml").read_text())["name"] == name  # rewritten quoted


# --- experiment names ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["two\nlines", "tab\there", "nul\x00", "bell\x07", "line\u2028separator", "a/b"],
                         ids=["newline", "tab", "nul", "bell", "line separator", "slash"])
def test_experiment_name_is_printable_one_line_text(tmp_path, name):
    out = tmp_path / "out"
    config = _write_config(tmp_path, SYNTHETIC, out)
    one_line_error(cli("run", config, "--name", name), "name (from --name): ")
    config.write_text(yaml.safe_dump({**SYNTHETIC, "name": name, "output": str(out)}))
    one_line_error(cli("run", config), "name: ")
    assert not out.exists()


# --- configuration names through cell files, figures and recommend -------------------------------------------

def test_joined_cell_files_keep_quoted_fields_whole(tmp_path):
    """Cell files were joined line by line: a quoted name holding a newline was cut into two rows."""
    names = ["a,b", 'say "hi"', "two\nlines", '"\n"', "plain", ""]
    frames = [pd.DataFrame({"config_id": names[:3], "pulls": [1, 2, 3]}),
              pd.DataFrame({"config_id": names[3:], "pulls": [4, 5, 6]})]
    paths = []
    for i, frame in enumerate(frames):
        paths.append(tmp_path / f"cell{i}.csv")
        paths[-1].write_bytes(to_csv(frame).encode())
    joined = _joined(paths, 'exp,"1"', "253592126e722573")
    assert csv_records(to_csv(frames[0])) == ["config_id,pulls", '"a,b",1', '"say ""hi""",2', '"two\nlines",3']
    back = pd.read_csv(io.StringIO(joined), dtype=str, keep_default_na=False)
    assert list(back["config_id"]) == names and list(back["pulls"]) == ["1", "2", "3", "4", "5", "6"]
    assert set(back["experiment"]) == {'exp,"1"'} and set(back["config_hash"]) == {"253592126e722573"}


def test_cell_tables_parsed_as_one_text_are_the_frames_concatenated(tmp_path):
    """Cell tables stacked as one text and parsed once give pandas' concatenation of each parsed alone: the same
    values and types where a column is whole numbers in one cell and not in another, empty in one, or a quoted name
    holds a newline; tables whose headers differ are parsed one by one."""
    from cabench.results import read_csv
    from cabench.runner import _stacked

    frames = [pd.DataFrame({"config_id": ["a,b", "two\nlines"], "rep": [0, 1], "spend": [3.0, 4.5],
                            "regret_hv": [1.0, np.nan], "samples": [2, 3]}),
              pd.DataFrame({"config_id": ["", "plain"], "rep": [2, 3], "spend": [7.0, 8.0],
                            "regret_hv": [np.nan, np.nan], "samples": [2.5, 1e300]})]
    paths = []
    for i, frame in enumerate(frames):
        paths.append(tmp_path / f"cell{i}.csv.gz")
        paths[-1].write_bytes(compressed(to_csv(frame)))
    stacked, concatenated = _stacked(paths), pd.concat([read_csv(p) for p in paths], ignore_index=True)
    assert stacked.equals(concatenated) and list(stacked.dtypes) == list(concatenated.dtypes)
    assert list(stacked["config_id"]) == ["a,b", "two\nlines", "", "plain"] and stacked["samples"].dtype == float
    assert to_csv(stacked) == to_csv(concatenated)
    other = tmp_path / "other.csv.gz"
    other.write_bytes(compressed(to_csv(frames[1].rename(columns={"samples": "pulls"}))))
    mixed = _stacked([paths[0], other])
    assert mixed.equals(pd.concat([read_csv(paths[0]), read_csv(other)], ignore_index=True))
    assert mixed["pulls"].isna().sum() == 2 and mixed["samples"].isna().sum() == 2


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> Path:
    """A dataset whose configuration names hold a comma, a quote, mathtext, a number and a missing value."""
    frame = tiny_logs(len(NAMES), 30)
    frame["config_id"] = frame["config_id"].map(dict(zip([f"cfg{i}" for i in range(len(NAMES))], NAMES)))
    return write_dataset(tmp_path_factory.mktemp("data") / "named", frame, split={"profiling_size": 10})


@pytest.fixture(scope="module")
def named_psi(tmp_path_factory, named) -> Path:
    """A finished identification experiment on :func:`named`, its results root."""
    root = tmp_path_factory.mktemp("psi")
    raw = {"name": "names", "dataset": str(named), "setting": "psi", "rho": [5, 20], "methods": ["copsi", "uniform"],
           "repetitions": 4, "backend": "sequential"}
    assert cli("run", _write_config(root.parent, raw, root / "names"), "--quiet").exit_code == 0
    return root


def test_a_pipe_or_backticks_in_names_never_split_a_markdown_table(tmp_path):
    names = ["a|b", "x `y`", "plain"]
    frame = tiny_logs(3, 30, seed=4)
    frame["config_id"] = frame["config_id"].map(dict(zip(["cfg0", "cfg1", "cfg2"], names)))
    data = write_dataset(tmp_path / "piped", frame, split={"profiling_size": 10})
    raw = {"name": "piped", "dataset": str(data), "setting": "online", "rho": [5], "methods": ["cohv-ucb"],
           "repetitions": 3, "backend": "sequential"}
    assert cli("run", _write_config(tmp_path, raw, tmp_path / "root" / "piped"), "--quiet").exit_code == 0
    assert cli("report", tmp_path / "root").exit_code == 0
    text = (tmp_path / "root" / "REPORT.md").read_text()
    table = [line for line in text.split("## Decisions", 1)[1].split("\n\n")[2].splitlines()[2:]]
    [row] = table
    assert len(re.split(r"(?<!\\)\|", row)) == 7  # five cells between six unescaped pipes
    exploited = pd.read_csv(tmp_path / "root" / "piped" / "runs.csv")["exploited"].mode()[0]
    fenced = {"a|b": "`a\\|b`", "x `y`": "`` x `y` ``", "plain": "`plain`"}[exploited]
    assert f"pay for {fenced}" in row


def test_configuration_names_survive_selections_plot_and_recommend(named_psi):
    exp = named_psi / "names"
    selections = pd.read_csv(exp / "selections.csv.gz", dtype=str, keep_default_na=False)
    assert set(selections["config_id"]) == set(NAMES) and len(selections) == 2 * 2 * 4 * len(NAMES)
    [item] = _reads_everywhere(named_psi)
    recommended = {c["config_id"] for r in item["results"] for c in r["configurations"]}
    assert recommended <= set(NAMES) and set(item["true_pareto_set"]) <= set(NAMES)
    assert item["max_nu"]["config_id"] in NAMES
    assert {p.name for p in (named_psi / "figures").iterdir()} == {"names_landscape.png", "names_identification.png"}


def test_mathtext_in_names_is_drawn_as_written(tmp_path, named):
    """A configuration named m$\\frac$ crashed matplotlib's mathtext in `data landscape` and `plot`."""
    result = cli("data", "landscape", named, "-o", tmp_path / "landscape.png")
    assert result.exit_code == 0 and (tmp_path / "landscape.png").stat().st_size > 10_000, result.output


# --- damaged result files ------------------------------------------------------------------------------------

def _edit_yaml(folder: Path, key: str, value: object) -> None:
    meta = load_yaml((folder / "config.yaml").read_text())
    meta[key] = value
    (folder / "config.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))


def _edit_csv(folder: Path, name: str, column: str, value: str, row: int = 0) -> None:
    frame = pd.read_csv(folder / name, dtype=str, keep_default_na=False)
    frame.loc[row, column] = value
    frame.to_csv(folder / name, index=False)


def _cut(path: Path, size: int) -> None:
    path.write_bytes(path.read_bytes()[:size])


def _pareto_of(folder: Path, row: int) -> bool:
    return bool(pd.read_csv(folder / "arms.csv")["pareto"].iloc[row])


def _repeat_a_repetition(folder: Path) -> None:
    """Copy one run's row over another repetition of the same method and budget: the row count still fits."""
    frame = pd.read_csv(folder / "runs.csv", dtype=str, keep_default_na=False)
    first = frame.iloc[0]
    other = frame.index[(frame["method"] == first["method"]) & (frame["rho"] == first["rho"])
                        & (frame["rep"] != first["rep"])][0]
    frame.loc[other] = first
    frame.to_csv(folder / "runs.csv", index=False)


def _move_optimal(folder: Path) -> None:
    """Mark another configuration than the one of the largest nu as optimal (still exactly one)."""
    frame = pd.read_csv(folder / "arms.csv", dtype=str, keep_default_na=False)
    frame["optimal"] = ["1" if n == (int(frame["optimal"].astype(int).idxmax()) + 1) % len(frame) else "0"
                        for n in range(len(frame))]
    frame.to_csv(folder / "arms.csv", index=False)


def _one_pull_more(folder: Path) -> None:
    """One pull more, in selections.csv.gz, for a configuration of the first run pulled at least twice less than
    its most pulled one: its most pulled configuration and its unpulled ones stay as they were."""
    frame = pd.read_csv(folder / "selections.csv.gz", dtype=str, keep_default_na=False)
    pulls = frame["pulls"].astype(int)
    first = (frame[["method", "rho", "rep"]] == frame.loc[0, ["method", "rho", "rep"]]).all(axis=1)
    row = next(n for n in frame.index[first] if 1 <= pulls[n] < pulls[first].max() - 1)
    frame.loc[row, "pulls"] = str(pulls[row] + 1)
    frame.to_csv(folder / "selections.csv.gz", index=False)


DAMAGE = [  # (label, damage, file, words in the error)
    ("rho a string", lambda f: _edit_yaml(f, "rho", "abc"), "config.yaml", "key 'rho'"),
    ("methods a number", lambda f: _edit_yaml(f, "methods", 5), "config.yaml", "key 'methods'"),
    ("methods without names", lambda f: _edit_yaml(f, "methods", [1, 2]), "config.yaml", "key 'methods'"),
    ("repetitions text", lambda f: _edit_yaml(f, "repetitions", "many"), "config.yaml", "key 'repetitions'"),
    ("name a list", lambda f: _edit_yaml(f, "name", ["a"]), "config.yaml", "key 'name'"),
    ("objectives a number", lambda f: _edit_yaml(f, "objectives", 3), "config.yaml", "key 'objectives'"),
    ("dataset_info a list", lambda f: _edit_yaml(f, "dataset_info", [1]), "config.yaml", "key 'dataset_info'"),
    ("infeasible a number", lambda f: _edit_yaml(f, "infeasible", 3), "config.yaml", "key 'infeasible'"),
    ("no optimal arm", lambda f: _edit_csv(f, "arms.csv", "optimal", "0"), "arms.csv", "column 'optimal'"),
    ("optimal text", lambda f: _edit_csv(f, "arms.csv", "optimal", "yes"), "arms.csv", "column 'optimal'"),
    ("objective mean text", lambda f: _edit_csv(f, "arms.csv", "mu_objective1", "high"), "arms.csv",
     "column 'mu_objective1'"),
    ("arm listed twice", lambda f: _edit_csv(f, "arms.csv", "config_id", "arm1"), "arms.csv", "column 'config_id'"),
    ("exploited unknown configuration", lambda f: _edit_csv(f, "runs.csv", "exploited", "ghost"), "runs.csv",
     "column 'exploited'"),
    ("unknown method", lambda f: _edit_csv(f, "runs.csv", "method", "ghost"), "runs.csv", "column 'method'"),
    ("setting differs from config.yaml", lambda f: _edit_csv(f, "runs.csv", "setting", "psi"), "runs.csv",
     "column 'setting'"),
    ("regret infinite", lambda f: _edit_csv(f, "runs.csv", "regret_hv", "inf"), "runs.csv", "column 'regret_hv'"),
    ("objective mean empty", lambda f: _edit_csv(f, "arms.csv", "mu_objective1", ""), "arms.csv",
     "column 'mu_objective1': empty or NaN"),
    ("regret nan", lambda f: _edit_csv(f, "runs.csv", "regret_hv", "nan"), "runs.csv",
     "line 2, column 'regret_hv': empty or NaN (a cut or damaged file)"),
    ("budget zero", lambda f: _edit_csv(f, "runs.csv", "budget_tokens", "0"), "runs.csv", "column 'budget_tokens'"),
    ("share text", lambda f: _edit_csv(f, "runs.csv", "frac_optimal", "x"), "runs.csv", "column 'frac_optimal'"),
    ("dataset K text", lambda f: _edit_csv(f, "dataset.csv", "K", "many"), "dataset.csv", "column 'K'"),
    ("selection of an unknown configuration", lambda f: _edit_csv(f, "selections.csv.gz", "config_id", "ghost"),
     "selections.csv.gz", "column 'config_id'"),
    ("a negative count of pulls", lambda f: _edit_csv(f, "selections.csv.gz", "pulls", "-3"),  # (read as given)
     "selections.csv.gz", "line 2, column 'pulls': -3 is not a count (a whole number, 0 or more)"),
    ("selections cut short", lambda f: _cut(f / "selections.csv.gz", 100), "selections.csv.gz",
     "unreadable result file"),
    ("a repetition twice", lambda f: _repeat_a_repetition(f), "runs.csv", "appears twice"),
    ("a Pareto flag edited", lambda f: _edit_csv(f, "arms.csv", "pareto", "0" if _pareto_of(f, 0) else "1"),
     "arms.csv", "line 2, column 'pareto': "),
    ("another experiment's row", lambda f: _edit_csv(f, "runs.csv", "config_hash", "deadbeefdeadbeef", row=1),
     "runs.csv", "line 3, column 'config_hash': 'deadbeefdeadbeef' is another experiment's, in a folder of "),
    ("name edited in config.yaml", lambda f: _edit_yaml(f, "name", "other"), "runs.csv",
     "line 2, column 'experiment': 'exp' is not the experiment config.yaml names ('other'; one of the two was edited)"),
    ("nu edited", lambda f: _edit_csv(f, "arms.csv", "nu", "99"), "arms.csv",
     "line 2, column 'nu': 99.0 is not hv / mu_c"),
    ("optimal moved", _move_optimal, "arms.csv",
     "column 'optimal': 0 does not mark the first configuration of the largest nu"),
    ("delta edited", lambda f: _edit_csv(f, "arms.csv", "delta", "5"), "arms.csv",
     "line 2, column 'delta': 5.0 is not the largest nu less this configuration's"),
]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished online experiment on a synthetic instance (copied before each damage)."""
    folder = tmp_path_factory.mktemp("online")
    assert cli("run", _write_config(folder, {**SYNTHETIC, "name": "exp"}, folder / "exp"), "--quiet").exit_code == 0
    return folder / "exp"


def _one_line_everywhere(root: Path, where: str, words: str, draws: bool | None = None) -> None:
    """plot, report and recommend each say one line naming ``where`` and holding ``words``; nothing changes.
    Figures never read ``selections.csv.gz``: damaged (or ``draws``: found at odds with it), it stops report and
    recommend, and plot draws."""
    before = checksums(root)
    plot = ("plot", root, "--format", "png")
    draws = where.endswith("selections.csv.gz: ") if draws is None else draws
    for command in (() if draws else (plot,)) + (("report", root), ("recommend", root, "--json")):
        result = cli(*command)
        one_line_error(result, where)
        assert words in result.stderr, result.stderr
    assert checksums(root) == before
    if draws:
        assert cli(*plot).exit_code == 0 and (root / "figures.csv").is_file()


def test_deleted_trajectories_are_one_line_for_plot_report_recommend(tmp_path):
    """config.yaml records trajectories at rho 4, and trajectories.csv is gone: each command says so in one line
    (plot drew the other figures and removed the trajectory figure, and the report never mentioned it)."""
    folder = tmp_path / "root"
    config = _write_config(tmp_path, {**SYNTHETIC, "name": "exp", "trajectories": {"rho": 4, "points": 10}},
                           folder / "exp")
    assert cli("run", config, "--quiet").exit_code == 0
    (folder / "exp" / "trajectories.csv").unlink()
    _one_line_everywhere(folder, f"{folder / 'exp' / 'trajectories.csv'}: ",
                         "missing, though config.yaml records trajectories at rho 4")


@pytest.mark.parametrize("label, damage, name, words", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_damaged_results_are_one_line_for_plot_report_recommend(tmp_path, finished, label, damage, name, words):
    shutil.copytree(finished, tmp_path / "root" / "exp")
    damage(tmp_path / "root" / "exp")
    _one_line_everywhere(tmp_path / "root", f"{tmp_path / 'root' / 'exp' / name}: ", words)


@pytest.mark.parametrize("column, value", [("returned", "2"), ("cost_mode", "sideways")])
def test_damaged_identification_results_are_one_line(tmp_path, named_psi, column, value):
    shutil.copytree(named_psi / "names", tmp_path / "root" / "names")
    name = "selections.csv.gz" if column == "returned" else "runs.csv"
    _edit_csv(tmp_path / "root" / "names", name, column, value)
    _one_line_everywhere(tmp_path / "root", f"{tmp_path / 'root' / 'names' / name}: ", f"line 2, column '{column}'")


def test_a_pull_more_in_selections_than_runs_csv_counts_is_one_line(tmp_path, finished):
    """One pull more for a configuration in selections.csv.gz (the most pulled one unchanged): the pulls the
    answers count are not the run's total that runs.csv records."""
    shutil.copytree(finished, tmp_path / "root" / "exp")
    _one_pull_more(tmp_path / "root" / "exp")
    _one_line_everywhere(tmp_path / "root", f"{tmp_path / 'root' / 'exp' / 'runs.csv'}: ",
                         "line 2, column 'pulls': ", draws=True)


def test_a_returned_set_other_than_its_size_is_one_line(tmp_path, named_psi):
    """A configuration's returned flag flipped in selections.csv.gz: the set the answers count is not the size
    runs.csv records (nor what its error and F1 were scored on)."""
    shutil.copytree(named_psi / "names", tmp_path / "root" / "names")
    folder = tmp_path / "root" / "names"
    was = pd.read_csv(folder / "selections.csv.gz")["returned"].iloc[0]
    _edit_csv(folder, "selections.csv.gz", "returned", str(1 - int(was)))
    _one_line_everywhere(tmp_path / "root", f"{folder / 'runs.csv'}: ", "line 2, column 'size': ", draws=True)


@pytest.mark.parametrize("column", ["latency_s", "tokens_ci", "accuracy_low"])
def test_text_in_a_per_call_mean_of_arms_csv_is_one_line(tmp_path, named_psi, column):
    """The per-call means in real units and their intervals are read where a decision is stated: text there ended
    recommend and report in float()'s traceback (exit 1)."""
    shutil.copytree(named_psi / "names", tmp_path / "root" / "names")
    assert column in pd.read_csv(tmp_path / "root" / "names" / "arms.csv").columns
    _edit_csv(tmp_path / "root" / "names", "arms.csv", column, "fast", row=1)
    _one_line_everywhere(tmp_path / "root", f"{tmp_path / 'root' / 'names' / 'arms.csv'}: ",
                         f"line 3, column '{column}': 'fast' is not a number")


def test_a_users_figures_csv_or_report_sections_json_is_never_replaced(tmp_path, finished):
    """Beside a results folder, a user's own figures.csv was rebuilt over by plot (as a damaged index) and a user's
    report_sections.json replaced by report, exit 0. Each is now refused in one line, the file as it was; report
    --force replaces what it writes, as for REPORT.md."""
    root = tmp_path / "root"
    shutil.copytree(finished, root / "exp")
    (root / "figures.csv").write_text("my,own,index\n")
    result = cli("plot", root, "--format", "png")
    one_line_error(result, f"{root / 'figures.csv'}: not a figure index cabench wrote (it does not begin with "
                           "'stem,'); move it, or plot into another folder")
    assert (root / "figures.csv").read_text() == "my,own,index\n" and not (root / "figures").exists()
    (root / "figures.csv").unlink()
    assert cli("plot", root, "--format", "png").exit_code == 0
    (root / "report_sections.json").write_text('{"my": "notes"}')
    one_line_error(cli("report", root), f"{root / 'report_sections.json'}: not the reports' cache cabench wrote "
                                         "(it does not begin with '{\"sections\":'); move it, or pass --force to "
                                         "replace it")
    assert (root / "report_sections.json").read_text() == '{"my": "notes"}'
    assert not (root / "REPORT.md").exists()
    assert cli("report", root, "--force").exit_code == 0
    assert (root / "report_sections.json").read_text().startswith('{"sections":')


def test_damaged_figure_index_is_one_line_for_report(tmp_path, finished):
    shutil.copytree(finished, tmp_path / "root" / "exp")
    (tmp_path / "root" / "figures.csv").write_text("a,b\n1,2\n")
    one_line_error(cli("report", tmp_path / "root"), f"{tmp_path / 'root' / 'figures.csv'}: column 'stem'")


# --- strict JSON ---------------------------------------------------------------------------------------------

def test_recommend_json_is_strict():
    """recommend --json printed Infinity and NaN, which JSON does not have."""
    text = recommendations_json([{"nu": float("inf"), "share": np.float64("nan"), "n": np.int64(3),
                                  "pareto": np.bool_(True), "rows": [{"cost": -np.inf}]}])
    assert _strict_json(text) == [{"nu": None, "share": None, "n": 3, "pareto": True, "rows": [{"cost": None}]}]
    assert not re.search(r"\b(Infinity|NaN)\b", text)


def test_config_nested_too_deeply_is_one_line(tmp_path):
    """100,000 nested lists in a config: one line naming the file, not a RecursionError traceback."""
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 100_000)
    one_line_error(cli("run", path), "deep.yaml: malformed YAML: nested too deeply")


@pytest.mark.parametrize("damage", ["summary value", "summary deleted", "runs value"])
def test_a_summary_that_runs_csv_does_not_back_is_refused(tmp_path, named_psi, damage):
    """The reports compute their numbers from runs.csv and cite summary.csv for them: with summary.csv deleted or
    edited, or a runs.csv value edited, they went on citing a file that said otherwise (exit 0)."""
    root = tmp_path / "root"
    shutil.copytree(named_psi, root)
    folder = root / "names"
    assert cli("recommend", root).exit_code == 0
    if damage == "summary value":
        summary = pd.read_csv(folder / "summary.csv")
        summary.loc[0, "spend_share"] = 0.111
        (folder / "summary.csv").write_text(summary.to_csv(index=False))
    elif damage == "summary deleted":
        (folder / "summary.csv").unlink()
    else:
        runs = (folder / "runs.csv").read_text().splitlines()
        header = runs[0].split(",")
        row = runs[1].split(",")
        row[header.index("f1")] = "0.5" if row[header.index("f1")] != "0.5" else "0.25"
        (folder / "runs.csv").write_text("\n".join([runs[0], ",".join(row), *runs[2:]]) + "\n")
    before = checksums(root)
    for command in ("recommend", "report"):
        said = {"summary deleted": "missing (deleted?)",
                "summary value": "does not say what runs.csv says (line 2, column 'spend_share': 0.111, where "
                                 "runs.csv gives ",
                "runs value": "does not say what runs.csv says (line 2, column 'f1': "}[damage]
        one_line_error(cli(command, root), f"{folder / 'summary.csv'}: {said}")
    assert checksums(root) == before


@pytest.mark.parametrize("edit, words", [
    (("seed: 0", "seed: 7"), "config.yaml: seed 7, but runs.csv's rows have seed 0 (one of the two was edited)"),
    (("s_r: 0.01", "s_r: 0.5"), "config.yaml: cohv-ucb's s_r is 0.5, but runs.csv's rows have 0.01"),
    (("mode: experimental", "mode: theory"), "config.yaml: cohv-ucb's mode is theory, but runs.csv's rows have "
                                             "experimental"),
    (("seed: 0", "seed: abc"), "config.yaml: seed abc, but runs.csv's rows have seed 0"),  # no traceback
    (("s_r: 0.01", "s_r: null"), "config.yaml: cohv-ucb's s_r is None, but runs.csv's rows have 0.01")])
def test_a_config_yaml_edited_against_runs_csv_is_one_line(tmp_path, edit, words):
    """config.yaml's seed or a method's parameters edited by hand: the report stated "seed 7" and "s_r=0.5,
    mode=theory" over rows that every one recorded seed 0, s_r 0.01, experimental. Both record them; a
    disagreement is refused in one line by plot, report and recommend."""
    folder = tmp_path / "root"
    config = _write_config(tmp_path, {**SYNTHETIC, "name": "exp", "methods": ["cohv-ucb"], "seed": 0}, folder / "exp")
    assert cli("run", config, "--quiet").exit_code == 0
    path = folder / "exp" / "config.yaml"
    text = path.read_text()
    assert text.count(edit[0]) == 1
    path.write_text(text.replace(*edit))
    _one_line_everywhere(folder, f"{path}: ", words.removeprefix("config.yaml: "))


def test_a_surrogate_label_edited_out_of_config_yaml_is_one_line(tmp_path):
    """``dataset_info.surrogate: true`` edited to false in config.yaml: recommend and the reports, which label
    surrogate results by it, dropped the label, though dataset.csv (the same run's) says surrogate. Refused in one
    line by plot, report and recommend."""
    from tests.conftest import ROOT

    folder = tmp_path / "root"
    raw = {"name": "exp", "dataset": str(ROOT / "data" / "gsm8k"), "arms": {"preset": "paper-subset"},
           "setting": "psi", "rho": [20], "methods": ["uniform"], "repetitions": 2, "backend": "sequential"}
    assert cli("run", _write_config(tmp_path, raw, folder / "exp"), "--quiet").exit_code == 0
    path = folder / "exp" / "config.yaml"
    text = path.read_text()
    assert text.count("  surrogate: true\n") == 1
    path.write_text(text.replace("  surrogate: true\n", "  surrogate: false\n"))
    _one_line_everywhere(folder, f"{path}: ", "dataset_info.surrogate is false, but dataset.csv says surrogate True "
                                              "(one of the two was edited)")
    path.write_text(text.replace("  surrogate: true\n", ""))  # the line taken out: dataset.csv still says so
    said = cli("recommend", folder)
    assert said.exit_code == 0 and said.stdout.startswith("exp (psi, GSM8K, surrogate logs, K=14;"), said.output
    path.write_text(text)  # config.yaml says surrogate, dataset.csv's cell blanked: the report's data table too
    table = pd.read_csv(folder / "exp" / "dataset.csv", dtype=str, keep_default_na=False)
    table.assign(surrogate="").to_csv(folder / "exp" / "dataset.csv", index=False)
    assert cli("report", folder).exit_code == 0
    data = next(part for part in (folder / "REPORT.md").read_text().split("\n## ")
                if part.splitlines()[0].lower().endswith("the data"))
    assert "| surrogate |" in data and "| logs |" not in data, data


@pytest.mark.parametrize("command", ["recommend", "report", "plot"])
def test_a_results_path_that_is_a_file_says_so(tmp_path, command):
    """Given a file of a results folder (runs.csv), the commands said 'results folder not found' of a path that
    exists."""
    (tmp_path / "runs.csv").write_text("method,rho\n")
    one_line_error(cli(command, tmp_path / "runs.csv"), "runs.csv: a file, not a results folder; give the folder "
                                                        "that holds it")
    one_line_error(cli(command, tmp_path / "gone"), "gone: results folder not found")


def test_an_exploited_configuration_selections_do_not_back_is_refused(tmp_path, finished):
    """runs.csv's exploited, edited to another configuration of arms.csv, would be counted by recommend and both
    reports as that run's answer: it is checked against the pulls selections.csv.gz records (report and recommend
    read them; the figures do not)."""
    shutil.copytree(finished, tmp_path / "root" / "exp")
    runs = pd.read_csv(tmp_path / "root" / "exp" / "runs.csv")
    other = next(a for a in pd.read_csv(tmp_path / "root" / "exp" / "arms.csv")["config_id"]
                 if a != runs.loc[1, "exploited"])
    _edit_csv(tmp_path / "root" / "exp", "runs.csv", "exploited", other, row=1)
    before = checksums(tmp_path / "root")
    for command in (("report", tmp_path / "root"), ("recommend", tmp_path / "root", "--json")):
        result = cli(*command)
        one_line_error(result, f"{tmp_path / 'root' / 'exp' / 'runs.csv'}: ")
        assert (f"line 3, column 'exploited': '{other}' is not the configuration selections.csv.gz says the run "
                "pulled most") in result.stderr
    assert checksums(tmp_path / "root") == before
