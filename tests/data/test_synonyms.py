"""The source column an import's hints point to for a missing canonical column (cabench.data.synonyms)."""

from __future__ import annotations

import pandas as pd
import pytest

from cabench.data.synonyms import MILLISECONDS, SYNONYMS, Meant, common_name_of, folded, likely_source

#: Eight rows of columns as logs name and fill them: (values, the rows cycling through them).
VALUES = {
    "model": ["a", "b"], "mode": ["chat"], "checkpoint": ["m1", "m2"], "question_id": [1, 2, 3, 4],
    "Question ID": ["q1", "q2", "q3", "q4"], "id": [7, 8, 9, 10], "questionId": [1, 2, 3, 4],
    "instance-id": ["x1", "x2", "x3", "x4"], "Max New Tokens": [256], "total_tokens": [100, 120],
    "max_tokens": [256], "maxTokens": [1024], "tokensUsed": [90, 95], "max_input_tokens": [4096],
    "latency": [1.5, 2.0], "latencyMs": [1500, 2000], "Latency (ms)": [1500, 2000], "Total-Cost": [0.01, 0.02],
    "cost_cents": [1, 2], "temprature": [0.5], "template": ["chatml"], "prompt": ["Q1?", "Q2?", "Q3?", "Q4?"],
    "prompt_tokens": [50, 60], "completion_tokens": [10, 20], "input_tokens": [50, 60], "output_tokens": [10, 20],
    "is_incorrect": [0, 1], "accuracy": [0.5, 0.667], "passed": [1, 0], "score": [0.64, 0.49],
    "pass": ["true", "false"], "exact_match": [0.25, 0.5], "acc": [1, 0], "correct_answer": ["B", "C"],
    "num_correct": [3, 5],
}
FRAME = pd.DataFrame({name: [v[i % len(v)] for i in range(8)] for name, v in VALUES.items()})


@pytest.mark.parametrize(("name", "header", "meant"), [
    ("instance_id", ["model", "question_id", "passed"], Meant(("question_id",))),
    ("instance_id", ["Question ID", "id"], Meant(("Question ID",))),  # case, spaces: the first name in order
    ("instance_id", ["questionId"], Meant(("questionId",))),  # camelCase
    ("instance_id", ["instance-id", "id"], Meant(("instance-id",))),  # the name itself, but for punctuation
    ("max_new_tokens", ["Max New Tokens", "max_tokens"], Meant(("Max New Tokens",))),
    ("max_new_tokens", ["total_tokens", "max_tokens"], Meant(("max_tokens",))),
    ("latency_s", ["latency", "prompt_tokens"], Meant(("latency",))),
    ("latency_s", ["latencyMs"], Meant(("latencyMs",), 1e-3)),  # milliseconds, with their scale
    ("latency_s", ["Latency (ms)"], Meant(("Latency (ms)",), 1e-3)),
    ("tokens", ["total_tokens", "input_tokens", "output_tokens"], Meant(("total_tokens",))),
    ("tokens", ["maxTokens", "tokensUsed"], Meant(("tokensUsed",))),  # a limit is no count of tokens spent
    ("tokens", ["input_tokens", "output_tokens"], Meant(("input_tokens", "output_tokens"))),  # their sum
    ("cost_usd", ["Total-Cost"], Meant(("Total-Cost",))),
    ("cost_usd", ["cost_cents"], None),  # another unit: no likeness of spelling for a measurement
    ("correct", ["is_incorrect"], None),  # the opposite
    ("correct", ["accuracy", "passed"], Meant(("passed",))),  # right or wrong before a running mean
    ("correct", ["score", "pass"], Meant(("pass",))),  # true/false before a fraction
    ("correct", ["score"], Meant(("score",))),
    ("correct", ["exact_match", "acc"], Meant(("acc",))),  # 0/1 first, whatever the table's order
    ("correct", ["correct_answer", "num_correct"], None),  # an answer's letter, a count above 1
    ("temperature", ["temprature"], Meant(("temprature",))),  # a misspelling: the closest spelling
    ("temperature", ["template"], None),  # text is no temperature
    ("model", ["mode", "checkpoint"], Meant(("checkpoint",))),
    ("prompting", ["prompt_tokens", "completion_tokens"], None),  # a token count is no prompting
    ("prompting", ["prompt", "latency"], None),  # nor is the prompt's text
    ("max_new_tokens", ["total_tokens", "input_tokens"], None),  # nor a count of tokens spent
    ("max_new_tokens", ["max_input_tokens"], None),  # nor the prompt's limit
])
def test_the_column_likely_meant(name, header, meant):
    assert likely_source(name, FRAME, header) == meant


def test_a_common_name_belongs_to_one_canonical_column_only():
    """Each name maps back to one canonical column, so a hint never offers one column for two."""
    seen = [n for names in SYNONYMS.values() for n in names] + list(MILLISECONDS)
    assert len(seen) == len(set(seen)) and not set(seen) & set(SYNONYMS)
    assert all(common_name_of(n) == name for name, names in SYNONYMS.items() for n in names)
    assert common_name_of(" Latency ") == "latency_s" and common_name_of("latency_s") is None
    assert common_name_of("latencyMs") == "latency_s"
    assert [folded(n) for n in (" Max-New.Tokens ", "latencyMs", "Latency (ms)", "tokensUsed")] == [
        "max_new_tokens", "latency_ms", "latency_ms", "tokens_used"]
    assert Meant(("latencyMs",), 1e-3).mapping("latency_s") == (
        "columns: {latency_s: 'latencyMs'}, scale: {latency_s: 0.001}")
    assert Meant(("a", "b")).shown() == "the sum of 'a' and 'b' (a list maps a sum)"


@pytest.mark.parametrize(("name", "column", "values", "meant"), [
    ("instance_id", "id", [f"uuid-{i}" for i in range(8)], False),  # different on every row: a row's id
    ("instance_id", "question_id", [[0], [1]] * 4, False),  # JSON arrays (a cell of lists was a traceback)
    ("instance_id", "question_id", [{"q": 0}, {"q": 1}] * 4, False),
    ("correct", "is_correct", [1] * 8, False),  # one score for every row measures nothing
    ("correct", "accuracy", [0.5, 0.7] * 4, True),
    ("cost_usd", "Cost (¢)", [1, 2] * 4, False),  # a unit written as a symbol stays a unit
    ("latency_s", "Latency (µs)", [1.5e6, 2e6] * 4, False),
    ("latency_s", "durationMs", [1.0, 1.2] * 4, False),  # named in milliseconds, holding seconds
    ("latency_s", "durationMs", [1000.0, 1200.0] * 4, True),
    ("max_new_tokens", "max_tokens", [-1] * 8, False),  # "no limit"
    ("max_new_tokens", "max_tokens", [True, False] * 4, False),  # a flag
    ("max_new_tokens", "max_tokens", [256.0] * 8, True),
    ("latency_s", "latency", pd.array([1.5, None] * 4, dtype="Float64"), True),  # nullable, with a missing value
    ("correct", "passed", [None] * 8, False),  # an empty column is no score
])
def test_a_column_is_meant_only_where_its_values_fit(name, column, values, meant):
    frame = pd.DataFrame({column: values})
    assert (likely_source(name, frame, [column]) is not None) is meant


def test_a_name_that_does_not_print_is_quoted_as_yaml_reads_it_back():
    """A wrapped spreadsheet header ('Latency\\n(ms)') was shown as Python writes it, which YAML's single quotes do
    not read back: the mapping the hint gave named no column."""
    import yaml

    from cabench.data.synonyms import quoted

    for name in ("Latency\n(ms)", "Latency\\ms", "it's", "Cost\x0b"):
        assert yaml.safe_load(f"columns: {{latency_s: {quoted(name)}}}")["columns"]["latency_s"] == name
    assert quoted("latency") == "'latency'"
    assert yaml.safe_load("{" + Meant(("a\nb",), 1e-3).mapping("latency_s") + "}") == {
        "columns": {"latency_s": "a\nb"}, "scale": {"latency_s": 0.001}}


def test_the_fields_of_json_objects_are_candidates_by_their_dotted_paths():
    """JSON lines nest their measurements ({"usage": {"total_tokens": 65}}): the hints named none of them, though a
    mapping reads a field by its path. Fields every object has are listed (per-token keys that vary by line are
    not), and a field is known by its own name too (doc.id is an id)."""
    from cabench.data.synonyms import nested_fields

    frame = pd.DataFrame({
        "doc": [{"id": f"q{i % 4}", "meta": {"split": "test"}} for i in range(8)],
        "usage": [{"total_tokens": 60 + i, "detail": [1, 2]} for i in range(8)],
        "logprobs": [{f"tok{i}": -0.5} for i in range(8)],
        "model": ["a"] * 4 + ["b"] * 4,
    })
    fields = nested_fields(frame)
    assert list(fields.columns) == ["doc.id", "doc.meta.split", "usage.total_tokens"]
    assert fields["usage.total_tokens"].tolist() == list(range(60, 68))
    header = ["doc", "usage", "logprobs", "model", *fields.columns]
    wide = pd.concat([frame, fields], axis=1)
    assert likely_source("instance_id", wide, header) == Meant(("doc.id",))
    assert likely_source("tokens", wide, header) == Meant(("usage.total_tokens",))
    assert likely_source("instance_id", frame, ["doc", "model"]) is None  # an object is no id


def test_binary_needs_a_value():
    """An all-empty column counted as "0 or 1 on every row", and the warning pointed to it."""
    from cabench.data.synonyms import binary

    assert binary(pd.Series([0, 1, None])) and not binary(pd.Series([None, None])) and not binary(pd.Series([0.5]))
