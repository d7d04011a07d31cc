"""Answer checking of the live tasks on items written here in the public GSM8K and PIQA formats."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from cabench.errors import CabenchError
from cabench.live.tasks import Bound, choice_number, final_number, gsm8k_task, piqa_task, replay_task, template_task
from tests.conftest import spread_logs, write_dataset


def _jsonl(path, items):
    path.write_text("\n".join(json.dumps(i) for i in items) + "\n")
    return path


@pytest.fixture
def gsm8k(tmp_path):
    return gsm8k_task(_jsonl(tmp_path / "test.jsonl", [
        {"question": "Tom has 1,200 apples and buys 34 more. How many?", "answer": "1200 + 34 = <<1200+34=1234>>1234\n"
                                                                                 "#### 1,234"},
        {"question": "A pen costs $2.50; two pens?", "answer": "2 * 2.5 = 5\n#### 5"},
        {"question": "What is 10 - 13?", "answer": "#### -3"},
    ]))


@pytest.mark.parametrize("reply, item, correct", [
    ("The answer is 1,234.", 0, 1.0),                       # comma in the number, full stop after it
    ("1234 apples", 0, 1.0),                                # trailing unit
    ("He had 1200, bought 34, so 1200 + 34 = 1234.\nThe answer is 1234", 0, 1.0),  # CoT with several numbers
    ("1200 + 34 = 1235. The answer is 1234.", 0, 1.0),      # the stated answer wins over earlier numbers
    ("The answer is 1234. Check: 1200 + 34 = 1234, 12 apples each.", 0, 1.0),
    ("#### 1234", 0, 1.0),
    ("1200", 0, 0.0),
    ("Two pens cost $5.00", 1, 1.0),                        # dollar sign, decimals
    ("The answer is $5", 1, 1.0),
    ("5.5", 1, 0.0),
    ("The answer is -3.", 2, 1.0),                          # negative
    ("3", 2, 0.0),
    ("I do not know", 2, 0.0),
])
def test_gsm8k_answers(gsm8k, reply, item, correct):
    assert gsm8k.score(gsm8k.instances[item], reply) == correct


def test_gsm8k_gold_and_prompts(gsm8k):
    assert [i.answer for i in gsm8k.instances] == [Decimal(1234), Decimal(5), Decimal(-3)]
    assert "1,200 apples" in gsm8k.messages(gsm8k.instances[0], "direct")[0]["content"]
    assert "step by step" in gsm8k.messages(gsm8k.instances[0], "cot")[0]["content"]
    assert final_number("no digits") is None


@pytest.mark.parametrize("reply, chosen", [
    ("The answer is 2.", "2"),
    ("2", "2"),
    ("Solution 1", "1"),
    ("Solution 1 wastes water; solution 2 works. The answer is 2", "2"),  # CoT naming both
    ("1.", "1"),
    ("Both 1 and 2 could work", None),
    ("Answer: (1)", "1"),
    ("neither", None),
])
def test_piqa_choices(reply, chosen):
    assert choice_number(reply) == chosen


def test_piqa_inline_and_separate_labels(tmp_path):
    items = [{"goal": "Dry wet shoes", "sol1": "Put them in the oven at 250C", "sol2": "Stuff them with newspaper",
              "label": 1}, {"goal": "Open a jar", "sol1": "Tap the lid", "sol2": "Freeze it", "label": 0}]
    task = piqa_task(_jsonl(tmp_path / "valid.jsonl", items))
    assert [i.answer for i in task.instances] == ["2", "1"]
    assert task.score(task.instances[0], "The answer is 2.") == 1.0
    assert task.score(task.instances[1], "The answer is 2.") == 0.0
    (tmp_path / "valid-labels.lst").write_text("1\n0\n")
    bare = [{k: v for k, v in i.items() if k != "label"} for i in items]
    task = piqa_task(_jsonl(tmp_path / "bare.jsonl", bare), tmp_path / "valid-labels.lst")
    assert [i.answer for i in task.instances] == ["2", "1"]
    (tmp_path / "short.lst").write_text("1\n")
    with pytest.raises(CabenchError, match="1 labels for 2 PIQA items"):
        piqa_task(tmp_path / "bare.jsonl", tmp_path / "short.lst")


def test_template_task(tmp_path):
    path = _jsonl(tmp_path / "capitals.jsonl", [{"id": "fr", "country": "France", "capital": "Paris"},
                                                {"id": "jp", "country": "Japan", "capital": "Tokyo"}])
    task = template_task({"kind": "template", "path": str(path), "prompts": {"direct": "Capital of {country}?"},
                          "answer_field": "capital", "extract": r"capital is (\w+)"}, "task")
    assert task.messages(task.instances[1], "direct")[0]["content"] == "Capital of Japan?"
    assert task.score(task.instances[0], "The capital is paris.") == 1.0
    assert task.score(task.instances[0], "Paris") == 0.0  # the extraction regex finds nothing
    with pytest.raises(CabenchError, match="missing field 'planet'"):
        template_task({"path": str(path), "prompts": {"direct": "{planet}?"}, "answer_field": "capital"}, "task")


@pytest.mark.parametrize("change, words", [
    ({"prompts": {"direct": "{country} {}"}}, "task.prompts.direct: '{}' is not a field of the instance"),
    ({"prompts": {"direct": "{country.x}"}}, "task.prompts.direct: '{country.x}' is not a field"),
    ({"prompts": {"direct": "{country[0]}"}}, "task.prompts.direct: '{country[0]}' is not a field"),
    ({"prompts": {"direct": "Capital of {country"}}, "task.prompts.direct: not a template (expected '}'"),
    ({"prompts": {"direct": "{country:d}"}}, "task.prompts.direct: '{country:d}' has a conversion or format spec"),
    ({"prompts": {"direct": "{country!z}"}}, "task.prompts.direct: '{country!z}' has a conversion or format spec"),
    ({"prompts": {"direct": "{country!r:>9}"}}, "'{country!r:>9}' has a conversion or format spec"),
    ({"choices": 12}, "task.choices: expected a list of answers"),
    ({"choices": [["a"]]}, "task.choices: expected a list of answers"),
    ({"extract": 123}, "task.extract: expected text, got int"),
    ({"answer_field": ["capital"]}, "task.answer_field: expected text, got list"),
    ({"id_field": ["id"]}, "task.id_field: expected text, got list"),
])
def test_a_template_task_python_cannot_fill_is_refused_in_one_line(tmp_path, change, words):
    path = _jsonl(tmp_path / "capitals.jsonl", [{"id": "fr", "country": "France", "capital": "Paris"}])
    spec = {"path": str(path), "prompts": {"direct": "Capital of {country}?"}, "answer_field": "capital", **change}
    with pytest.raises(CabenchError) as caught:
        template_task(spec, "task")
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_literal_brace_in_a_template_is_written_doubled(tmp_path):
    path = _jsonl(tmp_path / "capitals.jsonl", [{"id": "fr", "country": "France", "capital": "Paris"}])
    task = template_task({"path": str(path), "prompts": {"direct": "{{json}} {country}"}, "answer_field": "capital"},
                         "task")
    assert task.messages(task.instances[0], "direct")[0]["content"] == "{json} France"


def test_replay_worst_case_is_the_largest_call_logged_for_the_configuration_asked(tmp_path):
    """Found by model (as the dataset spells it), temperature, max_tokens and prompting, whatever the
    configuration is named; the completion bounded by max_tokens too."""
    frame = spread_logs(3, 10, seed=2)
    frame["model"] = frame["config_id"].map({"cfg00": "GPT-2", "cfg01": "GPT-2", "cfg02": "Mistral-7B"})
    frame.loc[frame["config_id"] == "cfg01", "temperature"] = 1.0
    frame["tokens"] = frame["config_id"].map({"cfg00": 90.0, "cfg01": 80.0, "cfg02": 100.0})
    for config, most in (("cfg00", 140.0), ("cfg01", 95.0), ("cfg02", 151.0)):
        frame.loc[(frame["config_id"] == config) & (frame["instance_id"] == "q007"), "tokens"] = most
    task = replay_task(write_dataset(tmp_path / "logged", frame))
    instance = task.instances[0]
    assert task.worst_case(instance, "direct", 128, "Mistral-7B", 0.5) == Bound(151.0, 128.0, 151.0)
    assert task.worst_case(instance, "direct", 128, "GPT-2", 1.0) == Bound(95.0, 95.0, 95.0)
    assert task.worst_case(instance, "direct", 128, "GPT-2", 0.5) == Bound(140.0, 128.0, 140.0)


@pytest.mark.parametrize("gold", ["sNaN", "NaN", "Infinity", "-inf"])
def test_a_gsm8k_answer_that_is_no_finite_number_is_refused_on_load(tmp_path, gold):
    """``#### sNaN`` was read as a number: scoring the first paid reply then raised, the run stopped with a
    traceback before writing its spend, and each run again paid for the same call."""
    path = _jsonl(tmp_path / "t.jsonl", [{"question": "1 + 1?", "answer": "#### 2"},
                                          {"question": "2 + 2?", "answer": f"#### {gold}"}])
    with pytest.raises(CabenchError, match=r"line 2: the answer after '####' is not a number"):
        gsm8k_task(path)


def test_a_reply_that_is_no_finite_number_is_wrong_not_an_error(gsm8k):
    for reply in ("The answer is sNaN", "NaN", "#### Infinity"):
        assert final_number(reply) is None or final_number(reply).is_finite()
        assert gsm8k.score(gsm8k.instances[0], reply) == 0.0


@pytest.mark.parametrize("kind", ["gsm8k", "piqa", "template"])
def test_an_instance_id_given_twice_is_refused_naming_both_lines(tmp_path, kind):
    """Every call was asked the last row's question, and the answers counted as repeated evaluations of it."""
    items = {"gsm8k": [{"id": "same", "question": f"{i} + 2?", "answer": f"#### {i + 2}"} for i in range(3)],
             "piqa": [{"id": "same", "goal": f"g{i}", "sol1": "a", "sol2": "b", "label": 0} for i in range(3)],
             "template": [{"id": "same", "q": f"q{i}", "a": "x"} for i in range(3)]}[kind]
    items[0]["id"] = "other"
    path = _jsonl(tmp_path / "t.jsonl", items)
    build = {"gsm8k": lambda: gsm8k_task(path), "piqa": lambda: piqa_task(path),
             "template": lambda: template_task({"path": str(path), "prompts": {"direct": "{q}"}, "answer_field": "a"},
                                               "task")}[kind]
    with pytest.raises(CabenchError, match=r"t.jsonl: line 3: id 'same' is the id of line 2 too"):
        build()


def test_a_live_online_decision_between_configurations_evaluated_equally_often_names_them_all():
    """decision.json named the first configuration evaluated most, as if chosen, where several were evaluated most
    equally often (the config's order, not the run's choice)."""
    from cabench.live.session import online_decision

    assert online_decision([3, 9, 2], ["a", "b", "c"]) == {"configuration": "b"}
    assert online_decision([9, 3, 9], ["a", "b", "c"]) == {"configuration": "a", "tied": ["a", "c"]}
