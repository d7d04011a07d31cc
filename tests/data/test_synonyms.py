"""The source column an import's hints point to for a missing canonical column (cabench.data.synonyms)."""

from __future__ import annotations

import pytest

from cabench.data.synonyms import SYNONYMS, common_name_of, folded, likely_source


@pytest.mark.parametrize(("name", "header", "meant"), [
    ("instance_id", ["model", "question_id", "correct"], "question_id"),
    ("instance_id", ["Question ID", "id"], "Question ID"),  # case, spaces: the first name in SYNONYMS' order
    ("max_new_tokens", ["total_tokens", "max_tokens"], "max_tokens"),
    ("latency_s", ["latency", "prompt_tokens"], "latency"),
    ("tokens", ["total_tokens"], "total_tokens"),
    ("cost_usd", ["Total-Cost"], "Total-Cost"),
    ("temperature", ["temprature"], "temprature"),  # a misspelling: the closest spelling
    ("prompting", ["prompt_tokens", "completion_tokens"], None),  # a token count is no prompting
    ("max_new_tokens", ["total_tokens", "input_tokens"], None),  # nor is a count of tokens spent
    ("prompting", ["latency"], None),
])
def test_the_column_likely_meant(name, header, meant):
    assert likely_source(name, header) == meant


def test_a_common_name_belongs_to_one_canonical_column_only():
    """Each name maps back to one canonical column, so a hint never offers one column for two."""
    seen = [n for names in SYNONYMS.values() for n in names]
    assert len(seen) == len(set(seen)) and not set(seen) & set(SYNONYMS)
    assert all(common_name_of(n) == name for name, names in SYNONYMS.items() for n in names)
    assert common_name_of(" Latency ") == "latency_s" and common_name_of("latency_s") is None
    assert folded(" Max-New.Tokens ") == "max_new_tokens"
