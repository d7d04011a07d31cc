"""YAML as cabench reads it: libyaml's parser where it reads a document, the Python reader's message where not."""

from __future__ import annotations

import pytest
import yaml

from cabench.yamlio import Loader, load_yaml
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
