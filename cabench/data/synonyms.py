"""Names that logs commonly give the canonical columns (SPEC §1), and the source column likely meant for one.

`cabench data import` reads the canonical names only, or what a mapping names. When a column is missing, its
messages point to the source column most likely meant: a column under a name that tools and spreadsheets commonly
use (``question_id`` for ``instance_id``, ``latencyMs`` for ``latency_s`` in milliseconds, ``total_tokens`` for
``tokens``), whose values fit (numbers for a number, 0 to 1 for a score). A measurement is pointed only to such a
name: a spelling likeness would point ``correct`` to ``is_incorrect``, ``tokens`` to ``maxTokens`` and ``cost_usd``
to ``cost_cents``. Configuration metadata may also be pointed to the column spelled most like it. The names are hints
only: nothing is read under them without a mapping.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
import pandas as pd

#: Canonical column -> names that logs commonly give it (compared as :func:`folded`), the likelier first.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "model": ("model_name", "model_id", "llm", "engine", "deployment", "checkpoint", "provider"),
    "temperature": ("temp", "sampling_temperature"),
    "max_new_tokens": ("max_tokens", "max_output_tokens", "max_completion_tokens", "max_gen_len", "max_gen_tokens",
                       "max_generation_tokens", "generation_limit", "gen_limit"),
    "prompting": ("prompt_style", "prompt_type", "prompt_strategy", "prompt_method", "prompting_method",
                  "prompt_format", "prompt_variant", "prompt_name", "template_name", "strategy"),
    "instance_id": ("question_id", "example_id", "sample_id", "item_id", "problem_id", "doc_id", "task_id",
                    "prompt_id", "row_id", "instance", "question_idx", "idx", "id"),
    "correct": ("is_correct", "passed", "pass", "correctness", "exact_match", "em", "acc", "accuracy", "score"),
    "latency_s": ("latency", "latency_sec", "latency_secs", "latency_seconds", "duration", "duration_s", "elapsed",
                  "elapsed_s", "response_time", "time_s", "seconds", "wall_time", "inference_runtime", "runtime"),
    "tokens": ("total_tokens", "num_tokens", "n_tokens", "token_count", "tokens_total", "total_token_count",
               "tokens_used", "usage_total_tokens"),
    "prompt_tokens": ("input_tokens", "num_input_tokens", "num_prompt_tokens", "n_prompt_tokens",
                      "prompt_token_count", "input_token_count"),
    "completion_tokens": ("output_tokens", "generated_tokens", "num_output_tokens", "num_completion_tokens",
                          "n_completion_tokens", "completion_token_count", "output_token_count"),
    "cost_usd": ("cost", "usd", "cost_dollars", "dollars", "price_usd", "total_cost", "cost_in_usd"),
}
#: Common names of latency in milliseconds: latency_s is read from them with ``scale: {latency_s: 0.001}``.
MILLISECONDS = ("latency_ms", "duration_ms", "elapsed_ms", "response_time_ms", "time_ms", "wall_time_ms",
                "e2e_latency_ms", "generation_time_ms", "inference_time_ms", "latency_milliseconds")
#: The least median a column named in milliseconds must have to be read as such (a median of 1.0 is seconds).
MS_MEDIAN = 20.0
#: Columns of numbers; the rest are text (a configuration's name and label, an instance's id).
NUMBERS = ("temperature", "max_new_tokens", "correct", "latency_s", "tokens", "prompt_tokens", "completion_tokens",
           "cost_usd")
#: What a call measured: pointed to a common name only, never to a spelling likeness.
MEASUREMENTS = ("correct", "latency_s", "tokens", "prompt_tokens", "completion_tokens", "cost_usd")
#: Parts of names of an instance's content (its prompt, answer, reference): never configuration metadata.
CONTENT = ("prompt", "question", "input", "text", "output", "response", "answer", "completion", "target",
           "reference", "gold", "expected", "context", "message")


#: The texts a score column may give as right or wrong (as JSON and spreadsheets write them), read as 1 and 0.
TRUTHS = {"true": 1.0, "True": 1.0, "TRUE": 1.0, "false": 0.0, "False": 0.0, "FALSE": 0.0}
#: Units written as symbols, as :func:`folded` spells them.
UNIT_SYMBOLS = {"¢": "cents", "µ": "u", "μ": "u", "€": "eur", "£": "gbp", "%": "pct", "$": "usd"}


def quoted(name: str) -> str:
    """A column name as a message quotes it, to be pasted into a mapping: ``'latency'``, or YAML's double-quoted
    form with its escapes where it holds a quote, a backslash or a character that does not print
    (``"Total\\nTokens"``)."""
    if name.isprintable() and "'" not in name and "\\" not in name:
        return f"'{name}'"
    return json.dumps(name, ensure_ascii=False)


class Meant(NamedTuple):
    """The source column (or columns, summed) likely meant for a canonical one, and the scale that reads it."""

    columns: tuple[str, ...]
    scale: float = 1.0

    def shown(self) -> str:
        """The hint's words: ``'question_id'``, ``'latencyMs' (milliseconds: scale 0.001)``, or a sum."""
        if len(self.columns) > 1:
            return "the sum of " + " and ".join(map(quoted, self.columns)) + " (a list maps a sum)"
        unit = " (milliseconds: scale 0.001)" if self.scale == 1e-3 else ""
        return f"{quoted(self.columns[0])}{unit}"

    def mapping(self, name: str) -> str:
        """The mapping that reads it: ``columns: {latency_s: 'latencyMs'}, scale: {latency_s: 0.001}``."""
        source = f"[{', '.join(map(quoted, self.columns))}]" if len(self.columns) > 1 else quoted(self.columns[0])
        scale = f", scale: {{{name}: {self.scale:g}}}" if self.scale != 1.0 else ""
        return f"columns: {{{name}: {source}}}{scale}"


def folded(name: object) -> str:
    """A column name as the hints compare it: camelCase split, lower case, every run of other characters than
    letters and digits one ``_`` (``Latency (ms)``, ``latencyMs`` and ``latency-ms`` are ``latency_ms``)."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name).strip())
    for symbol, word in UNIT_SYMBOLS.items():  # a unit written as a symbol stays a unit: 'Cost (¢)' is no cost in USD
        text = text.replace(symbol, f"_{word}_")
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def common_name_of(column: object) -> str | None:
    """The canonical column that ``column`` is a common name for (:data:`SYNONYMS`, :data:`MILLISECONDS`), else
    None."""
    key = folded(column)
    if key in MILLISECONDS:
        return "latency_s"
    return next((name for name, names in SYNONYMS.items() if key in names), None)


def _as_numbers(values: pd.Series) -> np.ndarray | None:
    """The values given as numbers (:data:`TRUTHS` as 1 and 0, as the import reads a score), or None where one is
    not a number; empty cells left out."""
    given = values.dropna()
    if not pd.api.types.is_numeric_dtype(given):  # text, or objects
        given = given.map(lambda v: TRUTHS.get(v, v) if isinstance(v, str) else v)
    numbers = pd.to_numeric(given, errors="coerce")
    return None if numbers.isna().any() else numbers.to_numpy(dtype=float)


def _fits(name: str, values: pd.Series) -> bool:
    """Whether ``values`` can be canonical column ``name``: no JSON arrays or objects; numbers for a number (0 or
    more; whole ones of 1 or more for a limit; 0 to 1, not all one value, for a score; a median of 20 or more for a
    column named in milliseconds); for instances, more than one id, some of them repeated (an instance's row of
    each configuration)."""
    if values.dtype == object and values.map(lambda v: isinstance(v, (list, dict, np.ndarray))).any():  # JSON
        # arrays, objects: no cell (a column of numbers holds none)
        return False
    if name == "instance_id":  # ids that repeat (an instance's row of each configuration), more than one
        return 1 < values.nunique() < values.notna().sum()
    if name not in NUMBERS:
        return True
    numbers = _as_numbers(values)
    if numbers is None or not len(numbers):
        return False
    if name == "correct":  # a score that tells rows apart (one the same on every row is no measurement)
        return bool(((numbers >= 0) & (numbers <= 1)).all()) and len(np.unique(numbers)) > 1
    if name == "max_new_tokens":  # a limit of 1 token or more, not a flag
        return values.dtype != bool and bool(((numbers == np.floor(numbers)) & (numbers >= 1)).all())
    if name == "latency_s" and folded(values.name) in MILLISECONDS:  # milliseconds by name, and by value
        return bool(np.median(numbers) >= MS_MEDIAN)
    return bool((numbers >= 0).all()) if name != "temperature" else True


def binary(values: pd.Series) -> bool:
    """Whether every given value is 0 or 1 (``true``/``false`` too), and there is one: a score of right or wrong."""
    numbers = _as_numbers(values)
    return numbers is not None and len(numbers) > 0 and bool(np.isin(numbers, (0.0, 1.0)).all())


#: The rows of a column of JSON objects whose fields :func:`nested_fields` lists: those every one of them has.
FIELDS_FROM = 200


def nested_fields(frame: pd.DataFrame) -> pd.DataFrame:
    """The fields of ``frame``'s columns of JSON objects, by their dotted paths (``usage.total_tokens``, as a mapping
    names them): each scalar field every one of the first :data:`FIELDS_FROM` objects of its column has (fields that
    vary by line, as per-token log-probabilities do, are left out), read from every row."""
    out: dict[str, pd.Series] = {}
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object:
            continue
        head = [v for v in values.head(FIELDS_FROM) if v is not None and not (isinstance(v, float) and np.isnan(v))]
        if not head or not all(isinstance(v, dict) for v in head):
            continue
        common = set.intersection(*(set(_leaves(v)) for v in head))
        for path in sorted(common):
            out[".".join((str(column), *path))] = values.map(lambda v, p=path: _field(v, p))
    return pd.DataFrame(out, index=frame.index)


def _leaves(value: dict, depth: int = 3) -> list[tuple[str, ...]]:
    """The paths to the scalar fields of a JSON object, ``depth`` levels deep at most."""
    paths: list[tuple[str, ...]] = []
    for key, inner in value.items():
        if isinstance(inner, dict):
            paths += [(str(key), *rest) for rest in _leaves(inner, depth - 1)] if depth > 1 else []
        elif not isinstance(inner, list):
            paths.append((str(key),))
    return paths


def _field(value: object, path: tuple[str, ...]) -> object:
    """The field at ``path`` of a JSON object, else None."""
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def likely_source(name: str, frame: pd.DataFrame, columns: Iterable[object]) -> Meant | None:
    """The column of ``frame``, among ``columns``, most likely meant for the canonical ``name``, else None.

    In order: a column named ``name`` but for case, spaces or punctuation; a common name (:data:`SYNONYMS`, in
    their order; for ``correct`` a 0/1 column first; :data:`MILLISECONDS` for ``latency_s``, with its scale); for
    ``tokens``, the sum of the prompt's and the completion's counts; for configuration metadata only, the column
    spelled most like it (:func:`difflib.get_close_matches`, cutoff 0.6) that is no common name of another
    canonical column and names no instance content (:data:`CONTENT`). Each candidate's values must fit
    (:func:`_fits`).
    """
    by_key: dict[str, str] = {}
    names = [str(c) for c in columns]
    for c in names:  # the first column of each folded name
        by_key.setdefault(folded(c), c)
    for c in names:  # a field of a JSON object by its own name too (doc.id: id), after every whole name
        if "." in c:
            by_key.setdefault(folded(c.rsplit(".", 1)[1]), c)

    def fitting(keys: Iterable[str]) -> list[str]:
        return [by_key[k] for k in keys if k in by_key and _fits(name, frame[by_key[k]])]

    same = fitting([name])
    if same:
        return Meant((same[0],))
    common = fitting(SYNONYMS.get(name, ()))
    if name == "correct":
        common.sort(key=lambda c: not binary(frame[c]))  # (a stable sort: the table's order within each)
    if common:
        return Meant((common[0],))
    if name == "latency_s" and (slow := fitting(MILLISECONDS)):
        return Meant((slow[0],), 1e-3)
    if name == "tokens":
        parts = [likely_source(part, frame, names) for part in ("prompt_tokens", "completion_tokens")]
        if all(p is not None and len(p.columns) == 1 for p in parts):
            return Meant(tuple(p.columns[0] for p in parts if p is not None))
    if name in MEASUREMENTS:
        return None
    others = [k for k in by_key if common_name_of(k) in (None, name) and k not in SYNONYMS
              and not any(part in k.split("_") for part in CONTENT)]
    for key in difflib.get_close_matches(name, others, n=3, cutoff=0.6):
        if _fits(name, frame[by_key[key]]):  # (a prompt's limit, max_input_tokens, names content: left out)
            return Meant((by_key[key],))
    return None
