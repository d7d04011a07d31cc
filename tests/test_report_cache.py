"""Report sections kept between runs of ``cabench report`` (cabench/report_cache.py): reused only while every input
is unchanged, and the reports the same whether a section was kept or computed."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cabench.report as report
from cabench import recommend, report_cache
from cabench.cli import app
from cabench.html_report import write_reports
from tests.conftest import five_results


@pytest.fixture(scope="module")
def five(tmp_path_factory) -> Path:
    return five_results(tmp_path_factory.mktemp("kept_sections"), ["cohv-ucb", "uniform"])


@pytest.fixture
def root(tmp_path, five) -> Path:
    shutil.copytree(five, tmp_path / "root")
    return tmp_path / "root"


@pytest.fixture
def computed(monkeypatch) -> list[str]:
    """The folders whose findings the report computes (a kept section computes none)."""
    seen: list[str] = []
    real = report.findings

    def counted(e):
        seen.append(e.folder.name)
        return real(e)

    monkeypatch.setattr(report, "findings", counted)
    return seen


def _reports(root: Path) -> tuple[bytes, bytes]:
    md, page = write_reports(root)
    return md.read_bytes(), page.read_bytes()


def test_a_second_report_keeps_every_section_and_writes_the_same_files(root, computed):
    first = _reports(root)
    assert sorted(computed) == ["online", "psi"]
    stored = json.loads((root / report_cache.FILE).read_text())["sections"]
    assert len(stored) == 2 and all(set(s["section"]) == {"verdicts", "markdown", "html", "decision", "recommend"}
                                    for s in stored.values())
    computed.clear()
    assert _reports(root) == first and computed == []
    assert json.loads((root / report_cache.FILE).read_text())["sections"] == stored


def test_a_kept_report_matches_one_computed_without_kept_sections(root, five, tmp_path):
    _reports(root)
    kept = _reports(root)
    fresh = tmp_path / "fresh"
    shutil.copytree(five, fresh)
    assert _reports(fresh) == tuple(b.replace(str(root).encode(), str(fresh).encode()) for b in kept)


def test_a_changed_result_file_computes_that_section_again(root, computed):
    """Recompressed, ``selections.csv.gz`` holds the same rows in other bytes: its section is computed again (the
    key hashes the files as they are), the other one is kept."""
    first = _reports(root)
    path = root / "psi" / "selections.csv.gz"
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes()), compresslevel=1, mtime=1))
    computed.clear()
    assert _reports(root) == first and computed == ["psi"]


def test_another_code_version_computes_every_section_again(root, computed, monkeypatch):
    _reports(root)
    monkeypatch.setattr(report_cache, "code_version", lambda: "another")
    computed.clear()
    _reports(root)
    assert sorted(computed) == ["online", "psi"]


def test_a_damaged_store_counts_as_empty_and_is_rewritten(root, computed):
    first = _reports(root)
    (root / report_cache.FILE).write_text('{"sections": {"x": [1, 2')
    computed.clear()
    assert _reports(root) == first and sorted(computed) == ["online", "psi"]
    assert len(json.loads((root / report_cache.FILE).read_text())["sections"]) == 2


def test_a_section_edited_by_hand_is_computed_again(root, computed):
    first = _reports(root)
    store = json.loads((root / report_cache.FILE).read_text())
    key, entry = next(iter(store["sections"].items()))
    entry["section"]["markdown"] = [line.replace("0", "7") for line in entry["section"]["markdown"]]
    (root / report_cache.FILE).write_text(json.dumps(store))
    computed.clear()
    assert _reports(root) == first and len(computed) == 1  # that section alone, from the result files
    assert json.loads((root / report_cache.FILE).read_text())["sections"][key]["sha256"] == entry["sha256"]


@pytest.mark.parametrize("part, forged", [("verdicts", [{"claim": 1}]), ("decision", [1, 2]), ("markdown", 5),
                                          ("html", "not a mapping")])
def test_a_kept_section_of_other_types_computes_every_section_again(root, computed, part, forged):
    """A section rewritten by hand with fields of other types and its digest made to match does not render: the
    report computes every section again and writes what it writes without kept sections, and stores them."""
    first = _reports(root)
    store = json.loads((root / report_cache.FILE).read_text())
    before = json.loads(json.dumps(store))
    entry = next(iter(store["sections"].values()))
    entry["section"][part] = forged
    entry["sha256"] = report_cache._digest(entry["section"])
    (root / report_cache.FILE).write_text(json.dumps(store))
    computed.clear()
    assert _reports(root) == first and sorted(computed) == ["online", "psi"]
    assert json.loads((root / report_cache.FILE).read_text()) == before


def test_requirements_compute_every_section(root, computed):
    """Answers under --require are computed from the results each time; the kept sections stay as they were."""
    from cabench.constraints import parse_constraint

    _reports(root)
    before = (root / report_cache.FILE).read_bytes()
    computed.clear()
    write_reports(root, (parse_constraint("objective1>=0.5"),))
    assert sorted(computed) == ["online", "psi"] and (root / report_cache.FILE).read_bytes() == before


@pytest.fixture
def answered(monkeypatch) -> list[str]:
    """The folders whose answers recommend (or report) computes (:func:`cabench.recommend.experiment_answers`)."""
    seen: list[str] = []
    real = recommend.experiment_answers
    monkeypatch.setattr(recommend, "experiment_answers", lambda e: seen.append(e.folder.name) or real(e))
    return seen


@pytest.mark.parametrize("options", [[], ["--all"], ["--json"], ["--require", "objective1>=0.5"]])
def test_recommend_prints_the_answers_report_kept_as_it_would_compute_them(root, five, tmp_path, answered, options):
    """After ``cabench report``, ``cabench recommend`` reads each experiment's answers from its kept section and
    computes none; what it prints (the decisions, every row, JSON, under a requirement) is what it prints from the
    same results without a report."""
    _reports(root)
    answered.clear()
    kept = CliRunner().invoke(app, ["recommend", str(root), *options])
    assert kept.exit_code == 0, kept.output
    assert answered == []
    fresh = tmp_path / "fresh"
    shutil.copytree(five, fresh)
    computed = CliRunner().invoke(app, ["recommend", str(fresh), *options])
    assert computed.exit_code == 0, computed.output
    assert sorted(answered) == ["online", "psi"]
    assert kept.output == computed.output and "psi" in kept.output


def test_recommend_computes_the_answers_of_a_changed_result_file(root, answered):
    """A result file changed since the report (here recompressed: other bytes, the same rows): recommend computes
    that experiment's answers again and reads the other's."""
    _reports(root)
    before = CliRunner().invoke(app, ["recommend", str(root), "--json"]).output
    path = root / "psi" / "selections.csv.gz"
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes()), compresslevel=1, mtime=1))
    answered.clear()
    assert CliRunner().invoke(app, ["recommend", str(root), "--json"]).output == before
    assert answered == ["psi"]


@pytest.mark.parametrize("edit", ["none", "another experiment's", "a field missing", "not a mapping",
                                  "fields in another order", "another config hash", "another label",
                                  "a field of another type"])
def test_recommend_computes_answers_a_section_holds_in_another_form(root, answered, edit):
    """A section whose answers are missing, another experiment's (by label or config hash), short of a field, in
    another order, not a mapping or with a field that does not print (written by hand, its digest made to match) is
    not read: recommend computes that
    experiment's answers, printing what it prints without the section; the other experiment's are read."""
    _reports(root)
    before = CliRunner().invoke(app, ["recommend", str(root), "--json"]).output
    store = json.loads((root / report_cache.FILE).read_text())
    entries = store["sections"]
    psi, online = (next(v for v in entries.values() if v["section"]["recommend"]["setting"] == setting)
                   for setting in ("psi", "online"))
    answers = psi["section"]["recommend"]
    changed = {"none": None, "another experiment's": online["section"]["recommend"],
               "a field missing": {k: v for k, v in answers.items() if k != "not_run"}, "not a mapping": [answers],
               "fields in another order": dict(reversed(answers.items())),
               "another config hash": {**answers, "config_hash": "0" * 16},
               "another label": {**answers, "experiment": "other"},
               "a field of another type": {**answers, "decision": [1, 2]}}
    psi["section"]["recommend"] = changed[edit]
    psi["sha256"] = report_cache._digest(psi["section"])
    (root / report_cache.FILE).write_text(json.dumps(store))
    answered.clear()
    shown = CliRunner().invoke(app, ["recommend", str(root), "--json"])
    assert shown.exit_code == 0, shown.output
    assert shown.output == before and answered == ["psi"]
