"""YAML as cabench reads it: libyaml's parser where it reads a document, the Python reader's message where not."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from cabench.yamlio import Loader, dump_yaml, load_yaml
from tests.conftest import ROOT

SHIPPED = sorted([*(ROOT / "configs").rglob("*.yaml"), *(ROOT / "data").rglob("*.yaml")])


def test_shipped_yaml_reads_as_the_python_reader_reads_it():
    assert len(SHIPPED) >= 20
    for path in SHIPPED:
        text = path.read_text()
        assert load_yaml(text) == yaml.load(text, Loader=Loader), path  # noqa: S506 - a SafeLoader subclass


def test_yaml_12_numbers_read_as_numbers_and_quoted_ones_as_text():
    text = "a: 1e9\nb: 1e-3\nc: '1e5'\nd: 253592126e722573\ne: '253592126e722573'\n"
    assert load_yaml(text) == yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
    assert load_yaml(text) == {"a": 1e9, "b": 1e-3, "c": "1e5", "d": 253592126e722573, "e": "253592126e722573"}


@pytest.mark.parametrize("text", ["a: [1, 2", "a: b: c", "a:\n\t- 1", "a: 1\na: 2", "- x\ny: 1", "a: *missing",
                                  "a: \udc80"])
def test_an_error_is_the_python_readers_message(text):
    with pytest.raises(yaml.YAMLError) as python:
        yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
    with pytest.raises(yaml.YAMLError) as ours:
        load_yaml(text)
    assert str(ours.value) == str(python.value)


# --- YAML 1.2 core integers and booleans (PyYAML reads YAML 1.1) -----------------------------------------------

READINGS = [  # (text, what cabench reads, what a YAML 1.1 reader reads)
    ("010", 10, 8), ("-010", -10, -8), ("08", 8, "08"), ("0o10", 8, "0o10"), ("0x10", 16, 16), ("0x1F", 31, 31),
    ("+7", 7, 7), ("0", 0, 0), ("1_000", 1000, 1000), ("-0x10", "-0x10", -16), ("0b101", "0b101", 5),
    ("1:30", "1:30", 90), ("1:30.5", "1:30.5", 90.5), ("0o", "0o", "0o"), ("0x", "0x", "0x"),
    ("yes", "yes", True), ("no", "no", False), ("on", "on", True), ("off", "off", False), ("Yes", "Yes", True),
    ("OFF", "OFF", False), ("y", "y", "y"), ("tRue", "tRue", "tRue"),
    ("true", True, True), ("True", True, True), ("TRUE", True, True),
    ("false", False, False), ("False", False, False), ("FALSE", False, False),
    ("1e9", 1e9, "1e9"), ("1.5", 1.5, 1.5), (".5", 0.5, 0.5), ("1.", 1.0, 1.0), ("-.inf", -math.inf, -math.inf),
    ("~", None, None), ("null", None, None),
]


def _same(a, b) -> bool:
    """Equal and of the same types throughout (``1 == True`` and ``1 == 1.0`` are not the same reading)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("text, ours, theirs", READINGS, ids=[r[0] for r in READINGS])
def test_integers_and_booleans_read_as_yaml_12_core_does(text, ours, theirs):
    document = f"a: {text}\nb: [{text}]\n"
    for read in (load_yaml(document), yaml.load(document, Loader=Loader)):  # noqa: S506 - a SafeLoader subclass
        assert _same(read, {"a": ours, "b": [ours]}), (text, read)
    assert _same(yaml.safe_load(document)["a"], theirs)  # the YAML 1.1 reading the loader departs from


@pytest.mark.parametrize("text", [r[0] for r in READINGS] + ["2024-01-01", "253592126e722573", "", " 010", "null"])
def test_dump_quotes_every_string_either_reading_would_misread(text):
    """A string written by ``dump_yaml`` reads back as that string by cabench and by a YAML 1.1 reader, as a value,
    as a key and in a list."""
    data = {"value": text, text: [text, 1, True]}
    written = dump_yaml(data)
    assert _same(load_yaml(written), data), written
    assert _same(yaml.safe_load(written), data), written


def test_dump_writes_numbers_booleans_and_null_that_both_readings_read_back():
    data = {"seed": 10, "negative": -8, "big": 2**70, "rho": [0.5, 1e-3, 1e20, -math.inf], "on": True, "off": False,
            "none": None, "nested": {"repetitions": 16, "flags": [True, False]}}
    written = dump_yaml(data)
    assert "'on': true" in written and "seed: 10\n" in written
    assert _same(load_yaml(written), data) and _same(yaml.safe_load(written), data), written


def test_experiment_config_reads_yaml_12_integers_and_keeps_yes_as_text(tmp_path):
    """``seed: 010`` was 8 in config.yaml; ``name: yes`` read as True and was refused."""
    from cabench.config import load_config

    (tmp_path / "c.yaml").write_text(
        "name: yes\nsetting: online\nrho: [1e1, 0x10, 2.5]\nmethods: [cohv-ucb]\nseed: 010\nrepetitions: 0o10\n"
        "chunk_size: 0x20\noutput: off\n"
        "dataset: {synthetic: {means: [[0.5, 0.5], [0.6, 0.4]], costs: [010, 0o20]}}\n")
    cfg = load_config(tmp_path / "c.yaml")
    assert (cfg.name, cfg.seed, cfg.repetitions, cfg.chunk_size, cfg.rho) == ("yes", 10, 8, 32, (10.0, 16.0, 2.5))
    assert cfg.synthetic.costs == (10, 16) and Path(cfg.output).name == "off"


def test_a_run_records_the_yaml_12_reading_in_config_yaml_for_any_reader(tmp_path):
    from tests.test_torture import cli

    (tmp_path / "c.yaml").write_text(
        "name: yes\nsetting: online\nrho: [2]\nmethods: [uniform]\nseed: 010\nrepetitions: 2\nbackend: sequential\n"
        f"output: {tmp_path / 'out'}\n"
        "dataset: {synthetic: {means: [[0.5, 0.5], [0.6, 0.4]], costs: [10, 20]}}\n")
    result = cli("run", tmp_path / "c.yaml", "--quiet")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out" / "config.yaml").read_text()
    for meta in (load_yaml(text), yaml.safe_load(text)):
        assert (meta["name"], meta["seed"]) == ("yes", 10), text
