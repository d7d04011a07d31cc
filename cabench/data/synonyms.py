"""Names that logs commonly give the canonical columns (SPEC §1).

`cabench data import` reads the canonical names only, or what a mapping names. When a column is missing, its
messages point to the source column most likely meant. This module gives the names tools and spreadsheets
commonly use (``question_id`` for ``instance_id``, ``latency`` for ``latency_s``, ``total_tokens`` for
``tokens``). Without them, a spelling likeness pointed ``prompting`` to ``prompt_tokens`` and ``max_new_tokens``
to ``total_tokens``. The names are hints only: nothing is read under them without a mapping.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

#: Canonical column -> names that logs commonly give it (compared as :func:`folded`).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "model": ("model_name", "model_id", "llm", "engine", "deployment"),
    "temperature": ("temp", "sampling_temperature"),
    "max_new_tokens": ("max_tokens", "max_output_tokens", "max_completion_tokens", "max_gen_len", "max_gen_tokens",
                       "max_length", "generation_limit", "gen_limit"),
    "prompting": ("prompt_style", "prompt_type", "prompt_strategy", "prompt_template", "prompt_method", "strategy",
                  "prompt_format"),
    "instance_id": ("question_id", "example_id", "sample_id", "item_id", "problem_id", "doc_id", "task_id",
                    "prompt_id", "instance", "question_idx", "idx", "id"),
    "correct": ("is_correct", "accuracy", "acc", "score", "exact_match", "em", "passed", "pass", "success"),
    "latency_s": ("latency", "latency_sec", "latency_secs", "latency_seconds", "duration", "duration_s",
                  "elapsed", "elapsed_s", "response_time", "time_s", "seconds", "wall_time"),
    "tokens": ("total_tokens", "num_tokens", "n_tokens", "token_count", "tokens_total", "usage_total_tokens"),
    "prompt_tokens": ("input_tokens", "num_input_tokens", "n_prompt_tokens"),
    "completion_tokens": ("output_tokens", "generated_tokens", "num_output_tokens", "n_completion_tokens"),
    "cost_usd": ("cost", "usd", "cost_dollars", "dollars", "price_usd", "total_cost"),
}


def folded(name: object) -> str:
    """A column name as the hints compare it: lower case, runs of spaces, hyphens and dots as one ``_``."""
    return re.sub(r"[\s\-.]+", "_", str(name).strip().lower())


def common_name_of(column: object) -> str | None:
    """The canonical column that ``column`` is a common name for (:data:`SYNONYMS`), else None."""
    key = folded(column)
    return next((name for name, names in SYNONYMS.items() if key in names), None)


def likely_source(name: str, columns: Iterable[object]) -> str | None:
    """The source column most likely meant for the canonical ``name``, else None.

    First a column under a name logs commonly give ``name``, in :data:`SYNONYMS`' order. Else the column spelled
    most like it (:func:`difflib.get_close_matches`, cutoff 0.6), leaving out the columns that are a common name
    of another canonical column: ``prompt_tokens`` is no guess for ``prompting``.
    """
    shown = {folded(c): str(c) for c in reversed(list(columns))}  # the first column of each folded name
    for synonym in SYNONYMS.get(name, ()):
        if synonym in shown:
            return shown[synonym]
    others = [key for key in shown if common_name_of(key) in (None, name) and key not in SYNONYMS]
    near = difflib.get_close_matches(folded(name), others, n=1, cutoff=0.6)
    return shown[near[0]] if near else None
