"""``promptfoo``: the JSON written by ``promptfoo eval -o results.json``.

The file holds ``results`` with ``prompts`` and ``results``: one entry per
(provider, prompt, test) with ``provider`` (``{id, label}``), ``prompt``
(``{raw, label}``), ``promptIdx``, ``testIdx``, ``success``, ``score``,
``latencyMs``, ``failureReason`` (0 none, 1 a failed assertion, 2 an error) and
``response.tokenUsage`` (``total``, ``prompt``, ``completion``); ``config``
carries the providers' settings. A configuration is a (provider, prompt) pair.
Fields:

=================  ==========================================================
canonical column   source
=================  ==========================================================
model              the provider's ``label``, else its ``id``
temperature,       ``config.providers[].config`` ``temperature`` /
max_new_tokens     ``max_tokens`` of that provider (matched by label, else id),
                   else ``--set``; providers of one id without labels and
                   with different settings cannot be told apart (refused)
prompting          the prompt's ``label`` (``display`` in older files); a
                   prompt without one (promptfoo then labels it with its raw
                   template) is ``prompt<n>``, ``n`` its position among the
                   file's prompts (``results.prompts``, in older files
                   ``results.table.head.prompts``, first), with the
                   template's SHA-256 in the provenance; a result without a
                   label, ``prompt<promptIdx>``
instance_id        the test the result ran: its ``testIdx``; a test run again
                   by ``promptfoo eval --repeat N`` (which gives each repeat a
                   testIdx of its own, and records no repeat number) is the
                   same instance, named by its first ``testIdx`` (below)
correct            ``success`` (the test's assertions passed)
latency_s          ``latencyMs`` / 1000; a cached response (``response.cached``)
                   timed the cache, not a call, and is treated as not
                   measured (counted apart: ``cached_rows``)
tokens             ``response.tokenUsage.total``, else ``prompt + completion``
                   (a negative count is refused)
prompt_tokens,     ``response.tokenUsage.prompt`` and ``completion`` (a price
completion_tokens  table's input and output), when every result the import
                   keeps (after ``--failed`` and ``--unmeasured``) has both
cost_usd           ``cost`` (the dollars promptfoo priced the call at),
                   when every result the import keeps (after ``--failed``
                   and ``--unmeasured``) has one above 0 (promptfoo records
                   0 for a provider it has no price for)
failed             ``failureReason`` 2 (the provider call errored)
=================  ==========================================================

Repeats. promptfoo numbers every run of a test with a new ``testIdx`` (a test's
repeats in increasing ``testIdx``) and keeps the test itself in ``testCase``
(vars, assertions, description): results of one configuration whose
``testCase`` is the same are runs of one test, as promptfoo's own per-test
repeat pass rate groups them. They are read as one instance run several times,
which the import refuses unless ``--repeats first``, ``latest`` or ``epochs``
(ordered by ``testIdx``) says what to keep. Tests written alike (a test file
with a row twice, a test equal to one of another's var combinations) ask the
same question and are read as one test. A file whose results record no
``testIdx`` (older promptfoo, results version 2) has its instances told apart
by that same test content (``testCase``, else ``vars`` and ``description``),
numbered 0, 1, ... in the order the file first gives each, and its repeats
ordered by their place in the file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cabench.data.readers.common import (
    REPEAT,
    Read,
    ReadOptions,
    check,
    duration,
    field_at,
    json_file,
    need,
    number,
    token_count,
    token_split,
)
from cabench.data.schema import unprintable
from cabench.errors import CabenchError

_ERROR = 2  # promptfoo's ResultFailureReason.ERROR
#: promptfoo's other output formats (``promptfoo eval -o``), by file suffix.
_OTHER_OUTPUTS = {".csv": "CSV", ".yaml": "YAML", ".yml": "YAML", ".html": "HTML", ".xml": "XML", ".txt": "text"}
_LABELS = ("label", "display")  # a prompt's name; older promptfoo (results version 2) calls it display
#: Why a promptfoo file holds a test twice for one configuration, said where the import refuses it: a file with
#: ``testIdx``, and one without (older promptfoo).
REPEATS_WHY = ("results of one provider and prompt with the same testCase are runs of one test (promptfoo eval "
               "--repeat gives each run a testIdx of its own); ")
REPEATS_WHY_UNNUMBERED = ("results of one provider and prompt with the same test (testCase, else vars and "
                          "description) are runs of one test (promptfoo eval --repeat; the file has no testIdx); ")


def _provider_settings(config: Any) -> dict[str, dict[str, Any] | None]:
    """Provider id/label -> its ``config`` mapping, from the eval's config; ``None`` for a name that several
    providers with different settings share (two providers of one id without labels)."""
    out: dict[str, dict[str, Any] | None] = {}
    providers = config.get("providers") if isinstance(config, dict) else None
    if isinstance(providers, dict):  # {id: options}
        providers = [{"id": k, **(v if isinstance(v, dict) else {})} for k, v in providers.items()]
    for item in providers if isinstance(providers, list) else []:
        if isinstance(item, dict):
            config = item.get("config")
            settings: dict[str, Any] = config if isinstance(config, dict) else {}
            for key in ("id", "label"):
                name = item.get(key)
                if isinstance(name, str) and name:  # promptfoo writes an empty label for a provider without one
                    out[name] = settings if out.get(name, settings) == settings else None
    return out


def _tokens(item: dict[str, Any], where: str) -> float | None:
    """``response.tokenUsage.total``, else ``prompt + completion`` (a negative count is refused)."""
    tokens = token_count(item, "response.tokenUsage.total", where)
    if tokens is None or tokens == 0:
        parts = [token_count(item, f"response.tokenUsage.{k}", where) for k in ("prompt", "completion")]
        tokens = None if parts[0] is None or parts[1] is None else parts[0] + parts[1]
    return tokens


def _dollars(item: dict[str, Any], where: str) -> float | None:
    """``cost``: what promptfoo priced the call at, in dollars (a negative one is refused)."""
    value = number(item, "cost", where)
    if value is not None and value < 0:
        raise CabenchError(f"{where}: 'cost' is {value:g}, a negative price; a damaged file")
    return value


def _test_of(item: dict[str, Any], where: str) -> str | None:
    """The test a result ran, as text that is equal for its repeats: its ``testCase``, else its ``vars`` and
    ``description``; ``None`` when the result records neither."""
    case = field_at(item, "testCase", dict, where)
    if case is None:
        if item.get("vars") is None:
            return None
        case = {"vars": item["vars"], "description": item.get("description")}
    try:
        text = json.dumps(case, sort_keys=True)
    except RecursionError:
        raise CabenchError(f"{where}: 'testCase' nested too deeply to read; a damaged or hostile file") from None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _instances(rows: list[dict[str, Any]], tests: list[int | None], keys: list[str | None],
               source: Path) -> str | None:
    """Each row's ``instance_id`` (the first ``testIdx`` of its test in its configuration, or the test's number in a
    file without ``testIdx``) and its rank among its test's runs (``REPEAT``: the ``testIdx``); why a configuration
    ran a test more than once, if one did."""
    indexed = [t is not None for t in tests]
    if not all(indexed):
        if any(indexed):
            n = indexed.index(False)
            raise CabenchError(f"{source}: results.results[{n}]: missing field 'testIdx' (other results of the file "
                               "have one)")
        seen: dict[str, int] = {}
        for n, (row, key) in enumerate(zip(rows, keys)):
            if key is None:
                raise CabenchError(f"{source}: results.results[{n}]: records neither 'testIdx' nor the test it ran "
                                   "('testCase' or 'vars'); cannot tell its instance")
            row["instance_id"] = str(seen.setdefault(key, len(seen)))
        repeated = len({(row["model"], row["prompting"], key) for row, key in zip(rows, keys)}) < len(rows)
        return REPEATS_WHY_UNNUMBERED if repeated else None
    numbers = [t for t in tests if t is not None]
    groups = [(row["model"], row["prompting"], key if key is not None else f"testIdx {test}")
              for row, test, key in zip(rows, numbers, keys)]
    first: dict[tuple[Any, ...], int] = {}
    for group, test in zip(groups, numbers):
        first[group] = min(first.get(group, test), test)
    for row, group, test in zip(rows, groups, numbers):
        row["instance_id"], row[REPEAT] = str(first[group]), test
    return REPEATS_WHY if len(first) < len(rows) else None


class _Prompts:
    """Names of the prompts: a label given in the config, else ``prompt<n>`` by position, with the template's hash."""

    def __init__(self, listed: Any) -> None:
        templates = [p for p in listed if isinstance(p, dict)] if isinstance(listed, list) else []
        self.raw = {p["raw"] for p in templates if isinstance(p.get("raw"), str)}
        self.order: dict[str, int] = {}
        for p in templates:
            text = next((p[k] for k in _LABELS if isinstance(p.get(k), str)), p.get("raw"))
            if isinstance(text, str):
                self.order.setdefault(text, len(self.order))
        self.hashes: dict[str, str] = {}

    def name(self, item: dict[str, Any], where: str) -> str | None:
        """The ``prompting`` of a result whose ``prompt`` is ``{raw, label}`` (``raw``: the rendered prompt;
        promptfoo labels a prompt without a label with its template; older versions call the label ``display``),
        ``None`` without a label."""
        label = next((v for v in (field_at(item, f"prompt.{k}", str, where) for k in _LABELS) if v is not None), None)
        if label is None:
            return None
        if label.strip() and label not in self.raw and label != item["prompt"].get("raw") and not unprintable(label):
            return label
        name = f"prompt{self.order.setdefault(label, len(self.order))}"
        self.hashes[name] = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()
        return name


def _other_output(source: Path) -> None:
    """Refuse, by its name, another of promptfoo's output formats (``-o results.csv``, ``.yaml``, ``.html``, ``.xml``,
    ``.txt``) that does not hold JSON: not a cut or damaged results file, but one cabench does not read."""
    kind = _OTHER_OUTPUTS.get(source.suffix.lower())
    if kind is None:
        return
    try:
        with open(source, "rb") as fh:
            if fh.read(64).lstrip().startswith(b"{"):
                return
    except OSError:
        return  # json_file names the error
    raise CabenchError(f"{source}: promptfoo's {kind} output (by its name), which cabench does not read; export the "
                       "stored eval as JSON, without running it again (`promptfoo export eval <evalId> -o "
                       "results.json`; `promptfoo list evals` lists the evals)")


def read_promptfoo(source: Path, options: ReadOptions) -> Read:
    """Canonical rows of a promptfoo results file (see the module docstring)."""
    if source.is_dir():
        raise CabenchError(f"{source}: a folder; give the file written by promptfoo eval -o results.json")
    if options.metric is not None:
        raise CabenchError("--metric: promptfoo results are scored by their assertions (success); drop --metric")
    _other_output(source)
    doc = json_file(source, "promptfoo results file", "export the stored eval as one document, without running it "
                    "again: `promptfoo export eval <evalId> -o results.json`")
    body = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise CabenchError(f"{source}: not a promptfoo results file; expected results.results (a list), as "
                           "written by promptfoo eval -o results.json")
    settings = _provider_settings(doc.get("config"))
    listed = body.get("prompts")
    if listed is None and isinstance(body.get("table"), dict):  # results version 2 lists them in table.head.prompts
        listed = field_at(body["table"], "head.prompts", list, f"{source}: results.table")
    prompts = _Prompts(listed)
    rows: list[dict[str, Any]] = []
    tests: list[int | None] = []
    cached = 0  # results answered from promptfoo's cache
    keys: list[str | None] = []
    for n, item in enumerate(body["results"]):
        where = f"{source}: results.results[{n}]"
        if not isinstance(item, dict):
            raise CabenchError(f"{where}: expected an object")
        provider = need(item, "provider", (dict, str), where)
        if isinstance(provider, str):
            provider = {"id": provider}
        label, ident = (field_at(provider, key, str, f"{where}: provider") for key in ("label", "id"))
        name = label or ident
        if not name:
            raise CabenchError(f"{where}: provider has neither 'label' nor 'id'")
        key = label if label in settings else ident
        generation = settings.get(key or "", {})
        if generation is None:
            raise CabenchError(f"{where}: provider '{name}': config.providers has several providers '{key}' with "
                               "different settings and no label to tell their results apart; give each a label in "
                               "the promptfoo config")
        prompt_idx = field_at(item, "promptIdx", int, where)
        prompting = prompts.name(item, where) if isinstance(item.get("prompt"), dict) else None
        prompting = prompting or (f"prompt{prompt_idx}" if prompt_idx is not None else None)
        tests.append(field_at(item, "testIdx", int, where))
        if tests[-1] is not None and tests[-1] < 0:
            raise CabenchError(f"{where}: 'testIdx' is {tests[-1]}, a negative test number; a damaged file")
        keys.append(_test_of(item, where))
        success = need(item, "success", bool, where)
        failed = item.get("failureReason") == _ERROR
        tokens = _tokens(item, where)
        prompt, completion = (token_count(item, f"response.tokenUsage.{k}", where) for k in ("prompt", "completion"))
        parts = (None, None) if prompt is None or completion is None else (prompt, completion)
        latency = duration(item, "latencyMs", where)
        if field_at(item, "response", dict, where, {}).get("cached"):
            latency = None
            cached += 1
        rows.append({"model": name, "temperature": generation.get("temperature"),
                     "max_new_tokens": generation.get("max_tokens"), "prompting": prompting,
                     "correct": float(success) if not failed else 0.0,
                     "latency_s": None if latency is None else latency / 1000.0, "tokens": tokens,
                     "prompt_tokens": parts[0], "completion_tokens": parts[1],
                     "cost_usd": _dollars(item, where), "failed": failed, "file": source, "position": n})
        for key in ("temperature", "max_new_tokens"):
            if rows[-1][key] is not None:
                check(rows[-1][key], (int, float), f"{source}: config.providers {name}: '{key}'")
    if not rows:
        raise CabenchError(f"{source}: results.results is empty")
    split, unsplit = token_split([r["tokens"] for r in rows], [r["prompt_tokens"] for r in rows])
    if not split:
        for r in rows:
            del r["prompt_tokens"], r["completion_tokens"]
    priced = any(r["cost_usd"] for r in rows)
    if not priced:  # promptfoo priced nothing (0 is what it records for a provider it has no price for)
        for r in rows:
            del r["cost_usd"]
    why = _instances(rows, tests, keys, source)
    info: dict[str, Any] = {"repeats_why": why} if why else {}
    if unsplit:
        info["parts_unsplit"] = True
    if priced and not all(r["cost_usd"] for r in rows):  # kept if every call the import keeps has its cost
        info["costs_unpriced"] = True  # (:func:`cabench.data.importer.priced_calls`)
    if cached:  # their latency is blank as not measured, not because the tool times nothing
        info["cached_rows"] = cached
    if prompts.hashes:
        info["prompt_sha256"] = dict(sorted(prompts.hashes.items()))
    return Read(rows, [source], info, at="results.results[{}]")
