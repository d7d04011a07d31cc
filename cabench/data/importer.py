"""``cabench data import``: your own logs to a canonical dataset folder.

A mapping YAML names, for each canonical column (SPEC §1), the source column
that holds it or a list of source columns summed into it (``columns``) or a
constant (``constants``), optional unit factors (``scale``, e.g.
``latency_s: 0.001`` for milliseconds), further numeric source columns to keep
(``extra_columns``) and the ``dataset`` metadata. Without a ``config_id``
column, the id is built from the configuration metadata. The rows are
validated exactly like the loader; ``data import`` then warns when the folder
would still not load on its declared objectives and split (:func:`unloadable`).
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

import cabench
from cabench.data.dataset import Split, declared_split, declared_terms, file_digest, load_dataset, question_of
from cabench.data.holes import (
    REPEATS_FIX,
    check_policy,
    failed_calls,
    fill_holes,
    placed,
    resolve_repeats,
    unmeasured_rows,
)
from cabench.data.io import (
    META_NAME,
    check_dataset_keys,
    check_missing,
    check_only_dataset_files,
    check_title,
    is_dataset,
    is_dataset_name,
    no_header,
    write_logs,
    write_metadata,
)
from cabench.data.readers import READERS, SPLIT_FORMATS, ReadOptions, read_source
from cabench.data.readers.common import STARTED, VARIANT
from cabench.data.schema import (
    COLUMNS,
    CONFIG_COLUMNS,
    COST_SOURCES,
    IDENTITY_COLUMNS,
    MEASURE_COLUMNS,
    OPTIONAL_COLUMNS,
    check_extra_columns,
    check_identity_text,
    kept_columns,
    shown,
    unit_warnings,
    validate_logs,
)
from cabench.data.surrogate import held as surrogate_rows
from cabench.data.synonyms import TRUTHS, binary, common_name_of, likely_source, nested_fields, quoted
from cabench.errors import CabenchError, did_you_mean
from cabench.storage import new_folders, publish_folder, remove_empty, staging_folder
from cabench.yamlio import Loader, load_config_file, load_yaml

MAPPING_KEYS = ("columns", "constants", "scale", "extra_columns", "dataset")
#: The columns a mapping may name: the canonical ones and the optional ones.
MAPPED = (*COLUMNS, *OPTIONAL_COLUMNS)
#: What a call measured (its answer's score, time, tokens, dollars): a mapping constant never replaces them.
MEASURED = ("correct", *MEASURE_COLUMNS, *OPTIONAL_COLUMNS)
#: Columns a mapping may fill with the sum of several source columns.
SUMMABLE = ("latency_s", "tokens", *OPTIONAL_COLUMNS)


def _recording(name: str, frame: pd.DataFrame, columns: dict[str, Any], fmt: str) -> list[str]:
    """The source columns that record the measurement ``name`` where no mapping column gives it: its own column, or
    those an import derives it from (``latency_ms`` for ``latency_s``, the two token counts for ``tokens``)."""
    if name in columns:
        return []
    if name in frame:
        return [name]
    if name == "latency_s" and fmt == "canonical" and "latency_ms" in frame:
        return ["latency_ms"]
    parts = [columns.get(part) for part in ("prompt_tokens", "completion_tokens")]
    if name == "tokens" and all(isinstance(part, str) and part in frame for part in parts):
        return [str(part) for part in parts]
    return []


def _mapping(path: Path) -> dict[str, Any]:
    raw = load_config_file(path, "mapping")
    if not isinstance(raw, dict):
        raise CabenchError(f"{path}: expected a mapping with keys {', '.join(MAPPING_KEYS)}")
    for key in raw:
        if key not in MAPPING_KEYS:
            raise CabenchError(f"{path}: {key}: unknown key" + did_you_mean(str(key), MAPPING_KEYS))
    for key in ("columns", "constants", "scale", "dataset"):
        value = raw.get(key) or {}
        if not isinstance(value, dict):
            raise CabenchError(f"{path}: {key}: expected a mapping")
        for name in value if key in ("columns", "constants", "scale") else ():
            if name not in MAPPED:
                hint = did_you_mean(str(name), MAPPED, f"; canonical columns: {', '.join(MAPPED)}")
                raise CabenchError(f"{path}: {key}.{name}: not a canonical column{hint}")
            item = value[name]
            if key == "columns":
                _check_source(item, name, path)
            if key == "constants" and (item is None or isinstance(item, (list, dict))):
                raise CabenchError(f"{path}: constants.{name}: expected one value (text or number), got {item!r}")
            if key == "constants" and name not in IDENTITY_COLUMNS and not _is_number(item):
                raise CabenchError(f"{path}: constants.{name}: expected a number, got {shown(item)}")
            if key == "scale" and name in IDENTITY_COLUMNS:  # a factor would make every cell of it empty
                raise CabenchError(f"{path}: scale.{name}: {name} is text (a name or an id), not a number; scale "
                                   "applies to measurements and counts only")
        raw[key] = value
    _names_as_written(raw["constants"], path)
    raw["extra_columns"] = check_extra_columns(raw.get("extra_columns"), f"{path}: extra_columns")
    if "extra_columns" in raw["dataset"]:
        raise CabenchError(f"{path}: dataset.extra_columns: give extra_columns at the top of the mapping, where the "
                           "import keeps and validates them")
    _check_dataset_part(raw["dataset"], path)
    return raw


def _check_dataset_part(part: dict[str, Any], path: Path) -> None:
    """The mapping's ``dataset`` part, checked as the loader checks a ``dataset.yaml`` (its keys, split, terms and
    ``missing``), each error naming ``dataset.KEY`` of the mapping: an import never writes a dataset it cannot
    load."""
    where = f"{path}: dataset."
    check_dataset_keys(part, where)
    declared_split(part, path.parent, where)
    declared_terms(part, path.parent, where)
    check_missing(part, where)
    check_title(part, where)
    _with_notes({}, part.get("provenance"), path)


def surrogate_source(files: Sequence[Path]) -> Path | None:
    """The dataset folder of surrogate logs (its ``dataset.yaml`` says ``surrogate: true``, as the shipped GSM8K and
    PIQA logs' do) that a source file lies in, if any: logs imported from it are surrogate too (they read as real
    logs, and their figures and reports lost the label)."""
    for path in files:
        meta = path.resolve().parent / META_NAME
        try:
            if meta.is_file() and (load_yaml(meta.read_text()) or {}).get("surrogate") is True:
                return meta.parent  # (where the file is: a link to the shipped logs names their folder)
        except (OSError, UnicodeDecodeError, ValueError, AttributeError, yaml.YAMLError):
            continue  # not a dataset.yaml cabench can read: no surrogate folder
    return None


def _with_notes(record: dict[str, Any], notes: Any, path: Path | None) -> dict[str, Any]:
    """The import's ``provenance`` record with the mapping's own ``dataset.provenance`` notes beside it: a note
    never replaces what the import records (its sources, options, what it dropped), and one that would is refused
    naming the key."""
    if notes is None:
        return record
    if not isinstance(notes, dict):
        raise CabenchError(f"{path}: dataset.provenance: expected a mapping of your notes (note: ...), got "
                           f"{shown(notes)}")
    for key in notes:
        if key in RECORDED or key in record:
            raise CabenchError(f"{path}: dataset.provenance.{key}: the import records {key} itself; give your "
                               "note another key")
    return {**record, **notes}


#: What a tool's reader reports having left out or assumed, recorded in ``provenance`` when it has something to say.
READER_FACTS = ("dropped_configurations", "skipped_runs", "unscored_files", "empty_files", "other_splits",
                "other_entries", "other_metrics", "latency_fields", "prompt_sha256", "last_call_tokens",
                "costs_left_out", "parts_left_out")
#: Every key the import may write in ``provenance`` (a note of the mapping may not take one).
RECORDED = ("format", "sources", "options", "ignored_columns", "derived", "filled", "replaced", "metric", "repeats",
            "failed_calls", "unmeasured", "holes", "rows", *READER_FACTS, "metadata_defaults", "cabench_version",
            "imported")


def _names_as_written(constants: dict[str, Any], path: Path) -> None:
    """Name constants (``model: 1.10``) that YAML reads as numbers or booleans, as the text the mapping holds."""
    if not any(name in IDENTITY_COLUMNS and not isinstance(value, str) for name, value in constants.items()):
        return
    for key_node, value_node in yaml.compose(path.read_text(), Loader=Loader).value:
        if key_node.value == "constants":
            for name_node, text_node in value_node.value:
                if name_node.value in IDENTITY_COLUMNS and not isinstance(constants.get(name_node.value), str):
                    constants[name_node.value] = text_node.value


def _check_source(item: Any, name: str, path: Path) -> None:
    """A mapped column's source: one source column, or for a number (``SUMMABLE``) a list of columns to sum."""
    parts = item if isinstance(item, list) and name in SUMMABLE else [item]
    if not parts or not all(isinstance(part, (str, int)) and not isinstance(part, bool) for part in parts):
        summed = f", or a list of source columns to sum ({', '.join(SUMMABLE)})" if name in SUMMABLE else ""
        raise CabenchError(f"{path}: columns.{name}: expected the name of one source column{summed}, got "
                           f"{shown(item)}")
    again = next((p for n, p in enumerate(parts) if p in parts[:n]), None)
    if again is not None:  # summed twice, the count would double
        raise CabenchError(f"{path}: columns.{name}: lists {again!r} twice; list each column once")


#: A number as a log's cell writes it: digits with an optional sign, point and exponent.
DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def parse_settings(items: list[str], flag: str = "--set") -> dict[str, Any]:
    """``--set key=value`` (or ``--override``) items as constants (values read as YAML scalars: 256 is a number;
    a name or id is the text given: ``model=1.10`` stays ``1.10``)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CabenchError(f"{flag} {item}: expected key=value, e.g. {flag} prompting=cot")
        if key not in MAPPED:
            hint = did_you_mean(key, MAPPED, f"; canonical columns: {', '.join(MAPPED)}")
            raise CabenchError(f"{flag} {item}: '{key}' is not a canonical column{hint}")
        try:
            parsed = load_yaml(value) if value.strip() else None
        except yaml.YAMLError:
            parsed = value
        if parsed is None or isinstance(parsed, (list, dict)):
            raise CabenchError(f"{flag} {item}: expected one value (text or number)")
        if key in out:  # the last would have won without a word
            raise CabenchError(f"{flag} {item}: '{key}' is given twice; give it once")
        if (key not in IDENTITY_COLUMNS and isinstance(parsed, (int, float)) and not isinstance(parsed, bool)
                and not DECIMAL.fullmatch(value.strip())):  # YAML reads 0x10 as 16 and 1_0 as 10; a CSV cell does not
            raise CabenchError(f"{flag} {item}: expected a decimal number (such as 0.7, 256 or 1e3), as a log's "
                               "cell gives it")
        out[key] = value.strip() if key in IDENTITY_COLUMNS and not isinstance(parsed, str) else parsed
    return out


FORMATS = ("canonical", *READERS)


def _strip_names(canonical: pd.DataFrame, echo: Callable[[str], None]) -> None:
    """Remove the spaces around names and ids (in place), saying so per column: a configuration ``'gpt-4 '`` beside
    ``'gpt-4'`` prints alike in every table, and an instance ``' q7'`` would be another instance than ``'q7'``;
    names and ids are compared, and written, without them."""
    for name in IDENTITY_COLUMNS:
        if name not in canonical:
            continue
        values = canonical[name]  # (spaces only: a tab or a line break in a name is refused as unprintable)
        try:
            kinds = [v for v in pd.unique(values) if type(v) is str and v != v.strip(" ")]  # each name once
        except TypeError:  # a list or an object where text belongs: refused as such by the validation
            continue
        if not kinds:
            continue
        spaced = values.isin(kinds).to_numpy()
        first = str(values[spaced].iloc[0])
        canonical[name] = values.astype(object).where(~spaced, values[spaced].astype(str).str.strip(" "))
        echo(f"{name}: removed the spaces around {len(kinds)} {'value' if len(kinds) == 1 else 'values'} (e.g. "
             f"{first!r} read as {first.strip(' ')!r}); names and ids are compared without them")


def _named_alike(columns: Iterable[Any], names: Iterable[str]) -> tuple[str, str] | None:
    """The first of the source's ``columns`` named as one of ``names`` but for case or spaces (``Correct``,
    ``' model '``), with the name it would have; None where there is none."""
    wanted = set(names)
    return next(((str(c), str(c).strip().lower()) for c in columns
                 if str(c).strip().lower() in wanted and str(c) not in wanted), None)


def _rename_or_map(alike: str, name: str, how: str = "") -> str:
    """What to do with a source column ``alike`` named as ``name`` but for case or spaces: rename it, or map it
    (``how``: the mapping that reads it, by default ``columns: {name: alike}``)."""
    return (f"the logs have {quoted(alike)}, which differs in case or spaces: rename it {name}, or map it (--mapping, "
            f"{how or f'columns: {{{name}: {quoted(alike)}}}'})")


def _check_scores(canonical: pd.DataFrame, given_in: str | None, read_from: Any, echo: Callable[[str], None]) -> None:
    """Warn of scores that measure nothing, however given (``given_in``: ``--set correct``, a mapping constant,
    ``--override``; or read from the logs' column, ``read_from`` where another name): the same on every row, or
    fractions the same on every row of each configuration (a configuration's accuracy repeated, not each instance's
    score)."""
    mapped = isinstance(read_from, str) and read_from != "correct"
    by = given_in or (f"correct (read from {quoted(read_from)})" if mapped else "column 'correct'")
    scores = pd.to_numeric(canonical["correct"], errors="coerce")
    if not scores.notna().any():
        return
    if scores.notna().all() and scores.nunique() == 1:  # one score: accuracy ranks nothing
        echo(f"warning: {by}: every row scores {scores.iloc[0]:g}, so accuracy tells no configuration from another; "
             "map the logs' score column to correct (--mapping), or declare objectives without accuracy")
        return
    per = scores.groupby(canonical["config_id"]).nunique()
    fractional = bool(((scores % 1) != 0).any())
    if fractional and (per <= 1).all() and scores.groupby(canonical["config_id"]).size().min() > 1:
        first = str(per.index[0])
        value = scores[canonical["config_id"].astype(str) == first].iloc[0]
        echo(f"warning: {by}: one score on every row of each configuration ({value:g} for '{first}'): a "
             "configuration's accuracy repeated, not each instance's score; map the per-instance score to correct "
             "(--mapping)")


def _parts_warnings(logs: pd.DataFrame, place: Callable[[int], str]) -> list[str]:
    """A line where a table's ``tokens`` is not ``prompt_tokens + completion_tokens`` (the first such row named): a
    token budget charges the one, a price table the others, and the two would disagree without a word."""
    if not {"tokens", "prompt_tokens", "completion_tokens"} <= set(logs.columns):
        return []
    tokens, prompt, completion = (logs[c].to_numpy(dtype=float) for c in ("tokens", "prompt_tokens",
                                                                          "completion_tokens"))
    off = np.flatnonzero(~np.isclose(tokens, prompt + completion, rtol=1e-9, atol=1e-9))
    if not len(off):
        return []
    row = int(off[0])
    return [f"tokens is not prompt_tokens + completion_tokens on {len(off)} of {len(logs)} rows (the first at "
            f"{place(row)}: {tokens[row]:g} against {prompt[row]:g} + {completion[row]:g}); a token budget counts "
            "tokens and a price table prices the two parts, so budgets in tokens and in dollars see calls of other "
            "sizes (tokens a provider counts apart, as reasoning, belong in the completion)"]


def split_calls(canonical: pd.DataFrame, place: Callable[[int], str]) -> tuple[pd.DataFrame, str | None]:
    """A tool's prompt and completion tokens that some calls read lack: kept where every call left after
    ``--failed`` and ``--unmeasured`` has both (a failed call without them, dropped, takes no call's split away),
    else left out, with where the first call kept without them was read."""
    lacking = np.flatnonzero(canonical[["prompt_tokens", "completion_tokens"]].isna().any(axis=1).to_numpy())
    if not len(lacking):
        return canonical, None
    said = f"{placed(canonical, place)(int(lacking[0]))} records no input and output tokens"
    return canonical.drop(columns=["prompt_tokens", "completion_tokens"]), said


def priced_calls(canonical: pd.DataFrame, place: Callable[[int], str]) -> tuple[pd.DataFrame, str | None]:
    """A tool's dollars (``cost_usd``) that some calls read lack or record as 0: kept where every call left after
    ``--failed`` and ``--unmeasured`` has them above 0 (a failed call the tool did not price, dropped, takes no
    call's dollars away), else left out, with where the first call kept without them was read."""
    costs = pd.to_numeric(canonical["cost_usd"], errors="coerce").to_numpy(dtype=float)
    lacking = np.flatnonzero(~(costs > 0))
    if not len(lacking):
        return canonical, None
    row = int(lacking[0])
    said = f"{placed(canonical, place)(row)} records {'no cost' if np.isnan(costs[row]) else 'a cost of 0'}"
    return canonical.drop(columns=["cost_usd"]), said


def _check_costs(canonical: pd.DataFrame, frame: pd.DataFrame, given_at: dict[str, str], columns: dict[str, Any],
                 echo: Callable[[str], None]) -> None:
    """Warn of costs that are no call's own: read from a column named as a generation limit (``maxTokens`` mapped to
    tokens), or one cost on every row of each configuration while configurations cost differently (a limit or a
    configuration's average repeated, where each call's count varies with its question; the stochastic-cost
    experiments then draw no spread). One cost on every row of the logs (``--set tokens=1``: the budget counts
    calls) is no warning. Each warning names the unread column likely meant, where there is one."""
    read = _sources(columns)
    unread = [c for c in frame.columns if c not in COLUMNS and str(c) not in read]
    warned: set[str] = set()  # the source columns a warning named: one warning for one cause
    for name in COST_SOURCES:
        if name not in canonical:
            continue
        origin = columns.get(name)
        origin_columns = {str(c) for c in origin} if isinstance(origin, list) else {str(origin or name)}
        if origin_columns & warned:
            continue
        costs = pd.to_numeric(canonical[name], errors="coerce")
        source = origin if isinstance(origin, str) and origin != name else None
        summed = " and ".join(map(quoted, map(str, origin))) if isinstance(origin, list) else ""
        by = given_at.get(name) or (f"{name} (read from {quoted(source)})" if source else
                                    f"{name} (the sum of {summed})" if summed else f"column '{name}'")

        def hint(name: str = name) -> str:  # the column likely meant: looked for only when a warning says it
            meant = likely_source(name, frame, unread)
            return f"; did you mean {meant.shown()}?" if meant else ""

        if source and common_name_of(source) == "max_new_tokens":
            echo(f"warning: {by}: {quoted(source)} names a generation limit (max_new_tokens), not what a call "
                 f"used; map the column of what each call used to {name} (--mapping){hint()}")
            warned |= origin_columns
            continue
        per = costs.groupby(canonical["config_id"])
        if costs.notna().all() and costs.nunique() > 1 and (per.nunique() <= 1).all() and per.size().max() > 1:
            first = str(per.size().index[0])
            value = costs[canonical["config_id"].astype(str) == first].iloc[0]
            echo(f"warning: {by}: one cost on every row of each configuration ({value:g} for '{first}'): every call "
                 "of a configuration is charged alike, as a generation limit, a configuration's average or a flat "
                 f"price per call would be; where the logs record what each call used, map that column to {name} "
                 f"(--mapping){hint()}")
            warned |= origin_columns


def _one_instance(where: str, value: Any, frame: pd.DataFrame, columns: dict[str, Any]) -> str:
    """Why logs of one instance id on every row (``value``, where known) are refused, at ``where``, with the source
    column likely meant among those not read already."""
    read = _sources(columns)
    header = [str(c) for c in frame.columns if c not in COLUMNS and str(c) not in read]
    ids = likely_source("instance_id", frame, header)
    one = f"one instance id ({shown(value)})" if value is not None else "one instance_id"
    return (f"{where}: {one} on every row makes the logs one instance, evaluated again and again; map the logs' "
            "column of instance ids to instance_id (--mapping)" + (f"; did you mean {ids.shown()}?" if ids else ""))


def _refuse_one_instance(canonical: pd.DataFrame, frame: pd.DataFrame, columns: dict[str, Any], filled: int,
                         source: Path, mapping_path: Path | None) -> None:
    """Refuse logs whose instance_id, however given, is one value on every row while some configuration has several
    rows: one instance evaluated again and again (``--repeats epochs`` would keep it), which no replay can split
    into profiling and evaluation. ``filled``: the rows ``--set instance_id`` filled. (A constant given for the
    whole column is refused where it is given; one row per configuration, as one instance kept.)"""
    ids = canonical["instance_id"]
    if len(ids) < 2 or ids.isna().any() or ids.astype(str).nunique() != 1 or \
            canonical["config_id"].astype(str).nunique() == len(ids):
        return
    read_from = columns.get("instance_id")
    where = ("--set instance_id (filling the logs' empty instance_id cells)" if filled else
             f"{mapping_path}: columns.instance_id ({quoted(read_from)})" if isinstance(read_from, str)
             and read_from != "instance_id" and mapping_path is not None else f"{source}: column 'instance_id'")
    raise CabenchError(_one_instance(where, ids.iloc[0], frame, columns))


def _settings_unread(canonical: pd.DataFrame, frame: pd.DataFrame, columns: dict[str, Any],
                     extra: tuple[str, ...]) -> list[str]:
    """The unread source columns that tell apart the rows of every (configuration, instance) pair the logs give
    more than once, and take few values over the logs (an empty cell a value too): a setting (a model's path, where
    a configuration column was read from the wrong source and two configurations merged), or a run's (its id or
    seed, where the runs are repeats). A run's time or id of its own row is no such column."""
    pairs = canonical[["config_id", "instance_id"]].astype(str)
    repeated = pairs.duplicated(keep=False).to_numpy()
    if not repeated.any():
        return []
    groups = pairs[repeated].groupby(["config_id", "instance_id"], sort=False).ngroup().to_numpy()
    rows = pairs.index[repeated]

    def text(values: pd.Series) -> pd.Series:  # cells as text, an empty one "" (a value that differs too)
        return values.astype(object).where(values.notna(), "").astype(str)

    named = []
    for c in _ignored(frame, columns, extra):
        cells = frame.loc[rows, c]
        if cells.dtype == object and cells.map(lambda v: isinstance(v, (dict, list))).any():  # (a mapping reads
            # no array or object; a column of numbers holds none)
            continue
        if (pd.Series(text(cells).to_numpy()).groupby(groups).nunique() > 1).all() and \
                text(frame[c]).nunique() <= len(frame) / 2:
            named.append(c)
    return named


def _named_as_source(message: str, columns: dict[str, Any]) -> str:
    """``message`` (a value the validation refused in ``column 'correct'``) naming the source column a mapping reads
    the canonical one from: ``column 'num_correct' (mapped to correct)``."""
    for name, src in columns.items():
        if isinstance(src, str) and src != name and f"column '{name}'" in message:
            return message.replace(f"column '{name}'", f"column {quoted(src)} (mapped to {name})", 1)
    return message


def _listed(names: Iterable[str]) -> list[str]:
    """Column names as a one-line message lists them: as written, or quoted (:func:`quoted`) where they hold a comma
    or a character that does not print (a line break: ``"Total\\nTokens"``)."""
    return [quoted(n) if "," in n or not n.isprintable() else n for n in names]


def _no_header(frame: pd.DataFrame) -> str:
    """Why the canonical columns may all seem absent, and what to do: a first line that is no header (a comment, a
    spreadsheet's ``sep=,``); else nothing."""
    first = str(frame.columns[0]) if len(frame.columns) else ""
    headed = any(str(c).strip().lower() in COLUMNS for c in frame.columns)  # a header, whatever its first name
    if not headed and no_header(first):
        line = ",".join("" if str(c).startswith("Unnamed: ") else str(c) for c in frame.columns)  # as written
        line = line if len(line) <= 40 else f"{line[:37]}..."
        return f"the file's first line ({line!r}) is no header of columns: remove it"
    return ""


def _refuse_lacking(frame: pd.DataFrame, columns: dict[str, Any], lacking: list[str], costless: bool,
                    where: str) -> None:
    """Refuse logs that lack the canonical columns ``lacking`` (and a cost column, where ``costless``) in one
    message naming every one, each with the source column likely meant (:func:`likely_source`) among those the
    import does not read already. A constant is offered for configuration metadata only: a score or an instance
    id the same on every row measures nothing."""
    if lacking and (headless := _no_header(frame)):
        raise CabenchError(f"{where}: {lacking[0]}: no such column; {headless}")
    alike = _named_alike(frame.columns, [*lacking, *(COST_SOURCES if costless else ())])
    if alike is not None and len(lacking) + costless == 1:  # the one column, named but for case or spaces
        said = f"{alike[1]}: no such column" if alike[1] in lacking else "no cost column"
        raise CabenchError(f"{where}: {said}; {_rename_or_map(*alike)}")
    read = _sources(columns)
    fields = nested_fields(frame)  # a JSON object's fields, by the dotted paths a mapping names them by
    frame = pd.concat([frame, fields.drop(columns=[c for c in fields.columns if c in frame.columns])], axis=1)
    header = [str(c) for c in frame.columns if c not in COLUMNS and str(c) not in read]  # (canonical ones are read)
    named = [(name, likely_source(name, frame, header)) for name in lacking]
    taken = {c for _, meant in named if meant is not None for c in meant.columns}
    costs = f"{', '.join(COST_SOURCES[:-1])} or {COST_SOURCES[-1]}"
    cost = next(((name, meant) for name in COST_SOURCES if (meant := likely_source(name, frame, header))
                 and not taken & set(meant.columns)), None) if costless else None
    named += [cost] if cost is not None else []  # the cost source likely meant, else all three named as one
    settable = [name for name in lacking if name not in ("correct", "instance_id")]
    if not named:
        raise CabenchError(f"{where}: no cost column; the logs need {costs} to charge a call: map a source column "
                           "to one of them (--mapping)")
    if len(named) == 1 and not (costless and cost is None):  # one column: as a mapping for it would be refused
        name, meant = named[0]
        hint = f"; did you mean {meant.shown()}?" if meant else ""
        if name not in lacking:  # the cost source likely meant
            raise CabenchError(f"{where}: no cost column; map a source column to {name} (--mapping){hint}")
        constant = f" or give a constant (--set {name}=...)" if settable else ""
        raise CabenchError(f"{where}: {name}: no such column; map a source column to it (--mapping){constant}{hint}")
    said = f"no column{'s' if len(named) > 1 else ''} " + ", ".join(
        name + (f" (did you mean {meant.shown()}?)" if meant else "") for name, meant in named)
    said += f" and no cost column ({costs})" if costless and cost is None else ""
    constants_too = (f" or give {'constants' if len(settable) > 1 else 'a constant'} "
                     f"({' '.join(f'--set {name}=...' for name in settable)})" if settable else "")
    unset = [n for n in ("instance_id", "correct") if n in lacking]
    scored = "" if not (unset and settable) else " (instance_id and correct from columns)" if len(unset) > 1 else \
        f" ({unset[0]}{', the score,' if unset == ['correct'] else ''} from a column)"
    raise CabenchError(f"{where}: {said}; map source columns to them (--mapping){scored}{constants_too}")


def _is_number(value: Any) -> bool:
    """Whether a constant is a number (or text that reads as one: ``"0.7"``); NaN is not."""
    try:
        return float(value) == float(value)
    except (TypeError, ValueError):
        return False


def _text(value: Any, integer: bool) -> str:
    """A metadata value as id text that does not depend on the file type it came from (1 == 1.0 == "1")."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if integer and number.is_integer():
        return str(int(number))
    return repr(number) if number == number else str(value)


def config_ids(canonical: pd.DataFrame) -> pd.Series:
    """``<model>_t<temperature>_g<max_new_tokens>_<prompting>`` for rows without a ``config_id``."""
    def text(column: str, integer: bool) -> pd.Series:
        codes, uniques = pd.factorize(canonical[column])  # one conversion per distinct value
        table = np.array([_text(u, integer) for u in uniques] + ["nan"], dtype=object)
        return pd.Series(table[codes], index=canonical.index)

    return (canonical["model"].astype(str) + "_t" + text("temperature", False) + "_g" + text("max_new_tokens", True)
            + "_" + canonical["prompting"].astype(str))


def _check_metadata(canonical: pd.DataFrame, fmt: str, source: Path) -> None:
    """The configuration columns the source does not record are asked for with ``--set``, all in one line."""
    lacking: dict[str, str] = {}
    for name in CONFIG_COLUMNS:
        empty = canonical[name].isna()
        if empty.any():
            models = sorted(set(canonical.loc[empty, "model"].astype(str)))
            lacking[name] = ", ".join(models[:3]) + (f" and {len(models) - 3} more" if len(models) > 3 else "")
    if len(lacking) == 1:
        ((name, shown),) = lacking.items()
        raise CabenchError(f"{source}: {name}: the {fmt} source does not record it for {shown}; give it with "
                           f"--set {name}=VALUE (or a mapping constant)")
    if lacking:
        said = "; ".join(f"{name} for {shown}" for name, shown in lacking.items())
        raise CabenchError(f"{source}: the {fmt} source does not record {said}; give them with "
                           f"{' '.join(f'--set {name}=VALUE' for name in lacking)} (or mapping constants)")


def _counted(counts: dict[str, int], what: str) -> str:
    """``{'valid': 2, 'train': 1}`` of ``what`` as ``3 <what> (valid 2, train 1)``."""
    return f"{sum(counts.values())} {what} ({', '.join(f'{name} {n}' for name, n in counts.items())})"


def profiling_split(instances: int, declared: Any, where: str, echo: Callable[[str], None],
                    runs: int | None = None) -> dict[str, int] | None:
    """The split ``dataset.yaml`` gets at import: none when one is ``declared`` (refused, naming ``where``, when it
    leaves no instance to evaluate) or when the default fits (:class:`Split`'s profiling size, with as many
    instances left to evaluate), else half the instances for profiling, said in one line (SPEC §2.1). ``runs``: the
    logs' instance count when ``instances`` counts questions (``--repeats epochs``, each question's runs on one
    side of the split)."""
    default = Split().profiling_size
    unit = "instances" if runs is None else "questions"
    if declared is not None:
        size = declared.get("profiling_size", default) if isinstance(declared, dict) else None
        if isinstance(size, int) and size >= instances:
            raise CabenchError(f"{where}: profiling_size is {size} but the logs have {instances} {unit}; leave "
                               "at least one for evaluation")
        return None
    if instances >= 2 * default:
        return None
    size = max(1, instances // 2)
    runs_said = "" if runs is None else f"; each question's runs <id>#k ({runs} instances) on one side"
    echo(f"profiling split: {size} of {instances} {unit} (half; the default {default} needs at least "
         f"{2 * default}){runs_said}, recorded in dataset.yaml's split")
    return {"profiling_size": size, "seed": 0}


def _source_column(frame: pd.DataFrame, src: Any, role: str, source: Path) -> Any:
    """The source column ``src`` (its ``role`` says what it is for), refused in one line if the source lacks it."""
    if src in frame.columns:
        return src
    hint = did_you_mean(str(src), map(str, frame.columns), f"; it has {', '.join(map(str, frame.columns))}")
    raise CabenchError(f"{source}: no column '{src}' ({role}){hint}")


def _mapped(frame: pd.DataFrame, src: Any, name: str, source: Path, mapping_path: Path | None,
            place: Callable[[int], str]) -> pd.Series:
    """The values of canonical column ``name``: one source column, or the row-by-row sum of a list of them.

    A number column's cells must be numbers or empty (not measured); each part of a sum must be a number >= 0,
    and a part left empty leaves the sum empty (refused, or for a measurement dropped as not measured).
    """
    if not isinstance(src, list):
        column = _source_column(frame, src, f"mapped to {name} in {mapping_path}", source)
        values = _truths(frame[column]) if name == "correct" else frame[column]
        if name not in IDENTITY_COLUMNS:
            role = "" if column == name else f" (mapped to {name} in {mapping_path})"
            hint = ("; a latency or token count not measured is an empty cell or 0" if name in MEASURE_COLUMNS else
                    "; token counts and costs are numbers >= 0" if name in OPTIONAL_COLUMNS else "")
            # a renamed column's negative cell named here, as the file holds it (the loader would name the
            # canonical column and its value scaled)
            _numbers(values, column, role, source, place, hint, no_truth=name in MEASURE_COLUMNS,
                     at_least_zero=bool(role) and name in (*MEASURE_COLUMNS, *OPTIONAL_COLUMNS))
        return values
    total = pd.Series(0.0, index=frame.index)
    summed = f"a part of {name}" + (f" in {mapping_path}" if mapping_path else "")
    for part in src:
        values = frame[_source_column(frame, part, summed, source)]
        total = total + _numbers(values, part, f" ({summed})", source, place,
                                "; the parts of a sum are counts or costs", at_least_zero=True, no_truth=True)
    return total


#: Texts a score may be written as, read as pandas reads a CSV column of them all: a JSON string "true", or a CSV
#: column mixing "true" with 0 and 1, scores as a CSV column of true and false does.


def _truths(values: pd.Series) -> pd.Series:
    """A score column with its ``true``/``false`` texts (:data:`~cabench.data.synonyms.TRUTHS`, as the hints read
    them) as 1 and 0, the rest as they are."""
    if values.dtype != object and not pd.api.types.is_string_dtype(values):
        return values
    truth = values.map(lambda v: TRUTHS.get(v) if isinstance(v, str) else None)
    return values if truth.isna().all() else values.where(truth.isna(), truth).infer_objects()


def _numbers(values: pd.Series, column: Any, role: str, source: Path, place: Callable[[int], str], hint: str,
            at_least_zero: bool = False, no_truth: bool = False) -> pd.Series:
    """A source column's cells as numbers (an empty cell is NaN), refusing the first that is not a number
    (``timeout``, ``1.2e3ms``, ``NaN``; with ``no_truth``, a measurement or a count, a JSON ``true`` or ``false``,
    which reads as 1 or 0), or with ``at_least_zero`` a negative one, in one line naming ``source``, the ``column``
    and its ``role``, where it was read (``place``) and the value."""
    parsed = pd.to_numeric(values, errors="coerce")
    if isinstance(parsed.dtype, pd.api.extensions.ExtensionDtype):  # nullable Int64, Float64: NaN for pd.NA
        parsed = parsed.astype(float)
    bad = (parsed.isna() & values.notna()).to_numpy().copy()
    if no_truth and (values.dtype == bool or values.dtype == object):  # (numbers read as numbers hold none)
        bad |= np.array([isinstance(v, (bool, np.bool_)) for v in values], dtype=bool)
    if at_least_zero:
        bad |= (parsed < 0).to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        negative = at_least_zero and bool(parsed.iloc[row] < 0)
        raise CabenchError(f"{source}: column '{column}'{role} is not a number{' >= 0' if negative else ''} "
                           f"at {place(row)} ({shown(values.iloc[row])}){hint}")
    return parsed


def _sources(columns: dict[str, Any]) -> set[str]:
    """The source columns a mapping's ``columns`` read (each alone, or a part of a sum)."""
    return {str(part) for src in columns.values() for part in (src if isinstance(src, list) else [src])}


def _ignored(frame: pd.DataFrame, columns: dict[str, Any], extra: tuple[str, ...]) -> list[str]:
    """The source columns the import leaves out: neither mapped (alone or in a sum) nor kept as extra columns, nor
    a JSON object some of whose fields are (``usage`` where ``usage.total_tokens`` is mapped)."""
    used = _sources(columns) | set(extra)

    def read_within(column: str) -> bool:
        return (any(u.startswith(f"{column}.") for u in used) and frame[column].dtype == object
                and any(isinstance(v, dict) for v in frame[column]))

    return [str(c) for c in frame.columns if str(c) not in used and not read_within(c)]


def _refuse_overlap(out: Path, sources: list[Path]) -> None:
    """Refuse an ``--out`` that is, holds or lies inside a source: writing the dataset there would replace it."""
    target = out.resolve()
    for source in sources:
        path = source.resolve()
        relation = ("is" if target == path else "holds" if path.is_relative_to(target)
                    else "lies inside" if target.is_relative_to(path) else None)
        if relation:
            raise CabenchError(f"--out {out}: {relation} the source {source}; write the dataset to a folder outside "
                               "the files it is read from")


def _given(canonical: pd.DataFrame, frame: pd.DataFrame, columns: dict[str, Any], mapped: dict[str, Any],
           settings: dict[str, Any], overrides: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Apply ``--set`` to the source's ``columns`` (filling only their empty cells) and count what ``--set``
    filled and ``--override`` replaced (rows where the source, or the column the mapping names, recorded a
    value), for the provenance."""
    record: dict[str, dict[str, int]] = {}
    for name, value in settings.items():
        if name in columns:
            empty = canonical[name].isna()
            canonical.loc[empty, name] = value
            record.setdefault("filled", {})[name] = int(empty.sum())
    for name in overrides:
        src = mapped.get(name, name)
        if isinstance(src, str) and src in frame.columns:
            record.setdefault("replaced", {})[name] = int(frame[src].notna().sum())
    return record


def _measured_throughout(frame: pd.DataFrame, columns: list[str]) -> bool:
    """Whether every row of ``frame`` gives the source ``columns`` as numbers summing to more than 0: a column the
    import derives only then (a missing or 0 count would make the row unmeasured, and the logs' holes an error, where
    leaving the column out reads them as they are)."""
    if any(c not in frame for c in columns):
        return False
    values = pd.DataFrame({c: pd.to_numeric(frame[c], errors="coerce") for c in columns})
    return bool(values.notna().all().all() and (values.sum(axis=1) > 0).all())


def import_time() -> datetime.datetime:
    """When an import ran, as ``dataset.yaml`` records it: now (UTC), or ``SOURCE_DATE_EPOCH`` (seconds since
    1970, the reproducible-builds convention) where that is set to a whole number, so that the same logs imported
    again give the same bytes."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
    return datetime.datetime.now(datetime.UTC)


def import_logs(source: Path, mapping_path: Path | None, out: Path, force: bool = False,
                settings: dict[str, Any] | None = None, fmt: str = "canonical", missing: str = "error",
                failed: str = "incorrect", metric: str | None = None, echo=None, *,
                overrides: dict[str, Any] | None = None, split: str | None = None, repeats: str = "refuse",
                unmeasured: str = "drop") -> Path:
    """Read, map, validate and write ``source`` as a dataset folder ``out``.

    ``fmt`` is ``canonical`` (a table) or a tool's format (:data:`READERS`).
    Columns that already have their canonical names need no mapping; a mapping
    only renames, sums, adds constants and scales. ``settings`` (``--set
    key=value``) give metadata the source lacks: a constant column, or the
    empty cells of a column it has; ``overrides`` (``--override``) replace a
    column whatever the source recorded. ``metric`` (``NAME[.KEY]``) picks the
    score a tool's logs are read from, ``split`` a HELM run's instances. The
    rows then follow the cell policies (:mod:`cabench.data.holes`): a
    configuration's repeated runs ``repeats``, a tool's failed calls
    ``failed``, rows without a score, latency or token count ``unmeasured``,
    and the holes that leaves ``missing``. Logs with too few instances for the
    default profiling split get a proportional one in ``dataset.yaml``. An
    existing ``out`` is refused unless ``force``, and an ``out`` that is,
    holds or lies inside the source or the mapping always; the folder is
    written in full beside ``out`` and then moved into place atomically, so an
    interrupted import never leaves a partial dataset or loses the old one. A
    name or id that is not printable one-line text, and a (configuration,
    instance) pair read twice, are refused naming the file and row (line,
    entry) they were read from. ``dataset.yaml`` records the provenance:
    format, sources and their SHA-256, options, what was filled, replaced or
    dropped, row counts, cabench version and date. ``echo`` receives one line
    per thing the import dropped or assumed.
    """
    echo = echo or (lambda line: None)
    settings, overrides = settings or {}, overrides or {}
    _refuse_overlap(out, [source] + ([mapping_path] if mapping_path is not None else []))
    if out.is_symlink():  # replaced, the link would become a folder and the one it names keep the old dataset
        raise CabenchError(f"{out}: a link (to {os.readlink(out)}); pass the folder itself as --out")
    if out.exists() and not out.is_dir():
        raise CabenchError(f"{out}: exists and is not a folder; pass --out with a new dataset folder")
    if out.is_dir() and any(out.iterdir()):  # --force replaces a dataset, and nothing an import does not write
        if not force:
            raise CabenchError(f"{out}: folder exists and is not empty; pass another --out, or --force to replace "
                               "it (the old folder is replaced only once the new one is complete)")
        if not is_dataset(out):
            raise CabenchError(f"{out}: not a cabench dataset (it has no {META_NAME}); --force replaces only a "
                               "dataset folder: pass another --out")
        check_only_dataset_files(out, "--force")
    if fmt not in FORMATS:
        raise CabenchError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}" + did_you_mean(fmt, FORMATS))
    for flag, value in (("--failed", failed), ("--missing", missing), ("--repeats", repeats),
                        ("--unmeasured", unmeasured)):
        check_policy(flag, value)
    if split is not None and fmt not in SPLIT_FORMATS:
        raise CabenchError(f"--split: only {', '.join(SPLIT_FORMATS)} sources record each instance's split; drop "
                           "--split")
    both = sorted(set(settings) & set(overrides))
    if both:
        raise CabenchError(f"--set and --override both give {both[0]}; keep one (--set fills what the source lacks, "
                           "--override replaces what it recorded)")
    for flag, values in (("--set", settings), ("--override", overrides)):
        for name, value in values.items():
            if name not in IDENTITY_COLUMNS and not _is_number(value):
                raise CabenchError(f"{flag} {name}={value}: expected a number")
    mapping = _mapping(mapping_path) if mapping_path is not None else {k: {} for k in MAPPING_KEYS}
    extra: tuple[str, ...] = tuple(mapping["extra_columns"] or ())
    options = ReadOptions(metric, split or "test")
    names = [src for name, src in mapping["columns"].items() if name in IDENTITY_COLUMNS and isinstance(src, str)]
    fields = [part for src in mapping["columns"].values() for part in (src if isinstance(src, list) else [src])
              if isinstance(part, str)] + list(extra)  # (nested ones read out of JSON lines by their paths)
    read = read_source(source, fmt, options, (*IDENTITY_COLUMNS, *names), fields)
    frame, files, place, info = read.frame, read.files, read.place, read.info
    empty: np.ndarray = np.flatnonzero(frame.isna().all(axis=1).to_numpy()) if len(frame.columns) else np.zeros(0, int)
    if len(empty):  # a spreadsheet's row of commas: no configuration, no instance, nothing measured
        more = f" ({len(empty) - 1} more such row{'s' if len(empty) > 2 else ''})" if len(empty) > 1 else ""
        raise CabenchError(f"{source}: {place(int(empty[0]))} is empty (every cell){more}; remove the empty rows")
    echo(f"read {len(frame)} rows from {len(files)} file{'s' if len(files) != 1 else ''} ({fmt})")
    if frame.empty:  # an empty file said "model: no such column" (JSON lines) or "no columns to parse" (CSV)
        raise CabenchError(f"{source}: no rows; a log needs one row per (configuration, instance)")
    columns = {k: v for k, v in mapping["columns"].items() if k not in overrides}  # --override replaces a column
    for name in MAPPED:  # canonical names need no mapping
        if name not in columns and name not in mapping["constants"] and name not in overrides and name in frame:
            columns[name] = name
    given_as = [(name, f"{mapping_path}: constants.{name}", "a constant") for name in mapping["constants"]]
    given_as += [(name, f"--set {name}", "--set") for name in settings]  # --set fills empty cells of a column only
    for name, given_in, what in given_as:  # neither turns the logs' measurements into one value, unsaid
        source_columns = _recording(name, frame, columns, fmt) if name in MEASURED and name not in overrides else []
        derived_from = name not in frame  # the import would compute it from them
        if not source_columns or (what == "--set" and not derived_from):
            continue  # nothing recorded; or a column of its own, whose empty cells --set fills
        held = frame[source_columns].notna().all(axis=1)
        if held.any():
            shown = ("column " if len(source_columns) == 1 else "columns ") + " and ".join(
                f"'{c}'" for c in source_columns)
            keep = (f"the import derives {name} from them" if derived_from else
                    f"--set {name}=... fills empty cells only")
            raise CabenchError(f"{given_in}: the logs record {name} ({shown}, {int(held.sum())} of {len(frame)} rows); "
                               f"{what} would replace every recorded value: remove it ({keep}), or pass --override "
                               f"{name}=... to replace them")
    constants = {**mapping["constants"], **{k: v for k, v in settings.items() if k not in columns}, **overrides}
    given_at = {name: where for name, where, _ in given_as} | {k: f"--override {k}" for k in overrides}  # (the last
    # of them wins, as in constants)
    derived: dict[str, Any] = {}  # columns the import computes from others (provenance.derived)
    parts = [columns.get(part) for part in ("prompt_tokens", "completion_tokens")]
    if "tokens" not in columns and "tokens" not in constants and all(isinstance(part, str) for part in parts):
        if _measured_throughout(frame, [str(part) for part in parts]):  # total tokens (the cost) from its counts
            columns["tokens"] = derived["tokens"] = parts
            echo(f"tokens: the sum of {parts[0]} and {parts[1]} (the logs have no tokens column)")
        else:
            echo(f"tokens: not summed from {parts[0]} and {parts[1]}, which some rows lack (map tokens to their "
                 "sum to read them, and rows without it are unmeasured)")
    scale = mapping["scale"]
    if ("latency_s" not in columns and "latency_s" not in constants and "latency_s" not in scale
            and "latency_ms" in frame and fmt == "canonical"):  # milliseconds, as many tools log them
        if _measured_throughout(frame, ["latency_ms"]):
            columns["latency_s"], scale = "latency_ms", {**scale, "latency_s": 1e-3}
            derived["latency_s"] = "latency_ms / 1000"
            echo("latency_s: latency_ms / 1000 (the logs have no latency_s column)")
        else:
            echo("latency_s: not read from latency_ms, which some rows lack or give as 0 (map latency_s to it with "
                 "scale latency_s: 0.001 to read it, and rows without it are unmeasured)")
    if "instance_id" in constants and "instance_id" not in columns:  # one instance: nothing to tell apart
        raise CabenchError(_one_instance(given_at["instance_id"], None, frame, columns))
    both = sorted(set(columns) & set(constants))
    if both:
        raise CabenchError(f"{mapping_path}: {both[0]} is given both as a column and as a constant; keep one")
    lacking = [name for name in MAPPED if name not in columns and name not in constants and name in COLUMNS
               and name != "config_id" and name not in MEASURE_COLUMNS]
    costless = fmt == "canonical" and not any(c in columns or c in constants for c in COST_SOURCES)
    if lacking or costless:
        mapped_by = f"{source} (mapped by {mapping_path})" if mapping_path else str(source)  # the logs lack them
        _refuse_lacking(frame, columns, lacking, costless, mapped_by)
    canonical = pd.DataFrame(index=frame.index)
    for name in MAPPED:
        if name in columns:
            canonical[name] = _mapped(frame, columns[name], name, source, mapping_path, place)
        elif name in constants:
            canonical[name] = constants[name]
    _strip_names(canonical, echo)
    given = _given(canonical, frame, columns, mapping["columns"], settings, overrides)
    for name, filled in (given.get("filled") or {}).items():
        if not filled:  # the source gives the column on every row: --set changed nothing
            replace = ("the logs' values are kept" if name in ("correct", "instance_id") else  # (one for all: none)
                       f"`cabench data import --override {name}=...` replaces the logs' values")
            echo(f"warning: --set {name}: the logs give {name} on every row, so nothing was filled (--set fills "
                 f"empty cells only; {replace})")
        elif name in MEASURED:  # a measurement given to rows that have none: said, as --override's are
            echo(f"--set {name}: gave {settings[name]} to the {filled} row{'s' if filled != 1 else ''} recording no "
                 f"{name} (without it they are unmeasured: --unmeasured)")
    unfilled = "correct" in columns and not (given.get("filled") or {}).get("correct")  # --set gave no score
    score = None if given_at.get("correct") == "--set correct" and unfilled else given_at.get("correct")
    for name, replaced in (given.get("replaced") or {}).items():
        echo(f"--override {name}: replaced the value the logs record on {replaced} row{'s' if replaced != 1 else ''}")
    defaults = {k: v for k, v in (info.get("metadata_defaults") or {}).items() if k not in {**settings, **overrides}}
    for name, value in defaults.items():  # what the reader assumes the source's tool uses, where nothing was given
        canonical.loc[canonical[name].isna(), name] = value
    if defaults:
        echo(f"assumed (the logs do not say; --set to give them): {', '.join(f'{k}={v}' for k, v in defaults.items())}")
    for name in extra:
        canonical[name] = frame[_source_column(frame, name, f"kept by extra_columns in {mapping_path}", source)]
    for name, factor in scale.items():
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 < factor < 1e300:
            raise CabenchError(f"{mapping_path}: scale.{name}: expected a positive finite number, got {factor!r:.40}")
        if name not in canonical:
            raise CabenchError(f"{mapping_path}: scale.{name}: the source has no {name}; map a column to it or "
                               "remove the factor")
        canonical[name] = pd.to_numeric(canonical[name], errors="coerce") * factor
    if fmt != "canonical":
        _check_metadata(canonical, fmt, source)
    if "config_id" not in canonical or canonical["config_id"].isna().all():
        canonical["config_id"] = config_ids(canonical)
        if VARIANT in frame and frame[VARIANT].astype(bool).any():  # settings the metadata columns do not hold
            variant = frame.loc[canonical.index, VARIANT].fillna("").astype(str)
            canonical["config_id"] = canonical["config_id"].where(variant == "", canonical["config_id"] + "_" + variant)
            echo(f"configurations told apart by settings beyond model, temperature, generation limit and prompting: "
                 f"{', '.join(sorted(set(variant[variant != ''])))}")
        alike = _named_alike(frame.columns, ["config_id"])
        if fmt == "canonical" and alike is not None:  # named but for case or spaces: the ids are derived instead
            echo("warning: config_id: derived from model, temperature, max_new_tokens and prompting, though "
                 + _rename_or_map(*alike))
    _check_scores(canonical, score, columns.get("correct"), echo)
    _check_costs(canonical, frame, given_at, columns, echo)
    _refuse_one_instance(canonical, frame, columns, (given.get("filled") or {}).get("instance_id", 0), source,
                         mapping_path)
    label = f"{source} (mapped by {mapping_path})" if mapping_path else str(source)
    check_identity_text(canonical, label, place)
    dropped: dict[str, Any] = {}
    differing = _settings_unread(canonical, frame, columns, extra) if fmt == "canonical" and repeats == "refuse" else []
    settings_said = (f"the rows differ in {', '.join(map(quoted, differing))}, which the import does not read: a "
                     "setting of the configuration (map a configuration column to it, --mapping), or a run's, "
                     "where the rows are repeated runs; " if differing else "")
    canonical, dropped["repeats"] = resolve_repeats(canonical, repeats, read.order, label, place,
                                                    info.get("repeats_why", "") + settings_said + REPEATS_FIX)
    if dropped["repeats"]:
        timed = STARTED in frame and pd.to_numeric(frame[STARTED], errors="coerce").notna().any()
        echo(f"repeated runs: {dropped['repeats']['pairs']} (configuration, instance) pairs read more than once, "
             + ("numbered as epochs (--repeats epochs)" if repeats == "epochs" else f"the {repeats} run kept"
                + ("" if timed else " (the logs record no run times: runs are ordered as read, by file path, then "
                                     "by place in the file)")))
    configurations = list(dict.fromkeys(canonical["config_id"].astype(str)))  # before rows are dropped
    if fmt != "canonical":
        failed_rows = frame.loc[canonical.index, "failed"].astype(bool)
        canonical, dropped["failed_calls"] = failed_calls(canonical, failed_rows, failed, echo)
    canonical, dropped["unmeasured"] = unmeasured_rows(canonical, unmeasured, label, place, echo,
                                                       cached=int(info.get("cached_rows") or 0))
    if info.get("costs_unpriced"):
        canonical, info["costs_left_out"] = priced_calls(canonical, place)
    if info.get("parts_unsplit"):
        canonical, info["parts_left_out"] = split_calls(canonical, place)
    for name, why in (info.get("dropped_configurations") or {}).items():
        echo(f"dropped configuration {name}: {why}")
    for run, why in (info.get("skipped_runs") or {}).items():
        echo(f"skipped run {run}: {why}")
    for path in info.get("empty_files") or []:
        echo(f"skipped {path}: it holds no sample")
    if isinstance(info.get("metric"), list) and len(info["metric"]) > 1:  # (logs of several tasks: a scorer each)
        echo(f"scores from {len(info['metric'])} scorers ({', '.join(info['metric'])}): each row's correct is its "
             "own scorer's, so an accuracy mixes them (recorded in dataset.yaml's provenance.metric)")
    if info.get("unscored_files"):
        unscored = info["unscored_files"]
        echo(f"left out: {len(unscored)} result file{'s' if len(unscored) > 1 else ''} without a score file, "
             f"e.g. {unscored[0]} (unscored categories are not part of the leaderboard's score)")
    found = surrogate_rows(canonical)  # before --missing drops rows: the shipped ones beside fewer of one's own
    canonical, holes = fill_holes(canonical, missing, label, configurations)
    if holes.get("configurations"):  # a warning: said even where the steps are not (advise --quiet)
        gone = holes["configurations"]
        named = "; ".join(f"{name} ({why})" for name, why in list(gone.items())[:5])
        more = f"; and {len(gone) - 5} more" if len(gone) > 5 else ""
        echo(f"warning: dropped {len(gone)} configuration{'s' if len(gone) > 1 else ''} with missing instances "
             f"(--missing drop-configs): {named}{more}")
    elif holes:
        echo(f"dropped {holes['instances_dropped']} instances some configuration lacks (--missing drop-instances)")
    try:
        valid = validate_logs(canonical[kept_columns(canonical.columns, extra)], label, extra, placed(canonical, place))
    except CabenchError as exc:  # a value refused, named by the column the logs give it in
        raise CabenchError(_named_as_source(str(exc), columns)) from None
    instances = valid["instance_id"].nunique()
    echo(f"kept {valid['config_id'].nunique()} configurations x {instances} instances")
    if instances < 2:
        raise CabenchError(f"{label}: {instances} instance kept; a dataset needs at least 2 (one to profile the "
                           "configurations on, one to evaluate them on)")
    # a column --override replaced (its canonical name, or the source column the mapping reads it from) is recorded
    # as replaced (provenance.replaced), not as one left unread
    overridden = {src for name in overrides for given in (name, mapping["columns"].get(name))
                  for src in ([given] if isinstance(given, str) else given or [])}
    ignored = [c for c in _ignored(frame, columns, extra) if c not in overridden] if fmt == "canonical" else []
    if ignored:  # extra_columns keeps numeric columns only: the hint names those it could keep
        unread = [name for name in (*MEASURE_COLUMNS, *OPTIONAL_COLUMNS) if name not in valid]
        # 'latencyMs' for latency_s: a measurement under a common name (never a spelling likeness), not an extra
        fields = nested_fields(frame[ignored])  # and the fields of a JSON object left unread (timing.latency)
        wide = pd.concat([frame, fields.drop(columns=[c for c in fields.columns if c in frame.columns])], axis=1)
        meant = {name: m for name in unread if (m := likely_source(name, wide, [*ignored, *fields.columns]))
                 is not None and _named_alike(ignored, [name]) is None}
        src = columns.get("correct")  # a score of right or wrong beside a score of fractions read as correct
        other = [c for c in ignored if common_name_of(c) == "correct" and binary(frame[c])]
        other = other if isinstance(src, str) and src in frame and not binary(frame[src]) else []
        kept = {c for m in meant.values() for c in m.columns} | set(other[:1])
        numeric = [c for c in ignored if c in frame and pd.api.types.is_numeric_dtype(frame[c]) and c not in kept]
        echo(f"ignored source columns: {', '.join(_listed(ignored))}"
             + (f" (keep {', '.join(_listed(numeric))} with extra_columns in the mapping)" if numeric else ""))
        if other:
            echo(f"warning: correct: read from {quoted(str(src))}, whose scores are not all 0 or 1, though the logs "
                 f"also have {quoted(other[0])} (0 or 1 on every row), a common name for it: map correct to it if that "
                 f"is the score (--mapping, columns: {{correct: {quoted(other[0])}}})")
        for name, m in meant.items():
            seconds = f"; scale: {{{name}: 0.001}} if it is in milliseconds" if name == "latency_s" and \
                m.scale == 1.0 else ""
            echo(f"warning: {name}: not read, though the logs have {m.shown()}, a common name for it: map it "
                 f"(--mapping, {m.mapping(name)}{seconds})")
        for name in (*MEASURE_COLUMNS, *OPTIONAL_COLUMNS, "latency_ms"):  # a measurement named but for case or spaces
            alike = _named_alike(ignored, [name])
            target = "latency_s" if name == "latency_ms" else name  # milliseconds are read as latency_s
            if alike is None or target in valid:
                continue
            how = (f"columns: {{latency_s: {quoted(alike[0])}}}, scale: {{latency_s: 0.001}}" if name == "latency_ms"
                   else "")
            echo(f"warning: {target}: not read, though {_rename_or_map(*alike, how)}")
    for warning in unit_warnings(valid) if fmt == "canonical" else []:  # a tool's reader converts its own units
        echo(f"warning: {warning}")
    for warning in _parts_warnings(valid, placed(canonical, place)) if fmt == "canonical" else []:
        echo(f"warning: {warning}")
    if info.get("other_splits"):
        echo(f"left out: {_counted(info['other_splits'], 'rows of other splits than --split ' + options.split)}; "
             "--split all keeps them")
    for why, n in (info.get("other_entries") or {}).items():
        echo(f"left out: {n} {why}")
    if info.get("other_metrics"):
        echo(f"left out: {_counted(info['other_metrics'], 'lines of other metrics than --metric ' + str(metric))}")
    if info.get("last_call_tokens"):
        n = info["last_call_tokens"]
        echo(f"warning: tokens of {n} sample{'s' if n != 1 else ''} read are {'their' if n != 1 else 'its'} final "
             "model call's (output.usage): the log gives no model_usage of the model for them (or its tokens were "
             "all the scoring's), and a sample of several model calls (tools, agents) cost more")
    if info.get("parts_left_out"):
        echo(f"prompt_tokens, completion_tokens: not kept, as not every call kept records both "
             f"({info['parts_left_out']}); a price table then needs one blended rate on the total ({{tokens: $/1M}})")
    if info.get("costs_left_out"):
        echo(f"cost_usd: not kept, as not every measured call has a cost above 0 ({info['costs_left_out']}); give "
             "prices to cost calls in dollars")
    latency_from = info.get("latency_fields") or {}
    if len(latency_from) > 1:  # (Every Eval Ever: generation_time_ms where a line has it, else latency_ms)
        counts = ", ".join(f"{k} {n}" for k, n in sorted(latency_from.items()))
        echo(f"warning: the latencies come from {len(latency_from)} fields ({counts}), each line's first that it "
             "has, and the fields may time different things (a converter's latency_ms is waiting time, not the "
             "model's)")
    epochs = (dropped["repeats"] or {}).get("policy") == "epochs"
    questions = valid["instance_id"].astype(str).map(question_of).nunique() if epochs else instances
    split_at_import = profiling_split(questions, mapping["dataset"].get("split"), f"{mapping_path}: dataset.split",
                                      echo, instances if epochs else None)
    tool_options = {"failed": failed, "metric": metric, **({"split": options.split} if fmt in SPLIT_FORMATS else {})}
    reader_facts = {**{key: info.get(key) for key in READER_FACTS},
                    "metadata_defaults": defaults}
    provenance = {
        "format": fmt, "sources": [{"path": str(p.resolve()), "sha256": file_digest(p)} for p in files],
        "options": {"mapping": str(mapping_path.resolve()) if mapping_path else None, "set": settings,
                    "override": overrides, "missing": missing, "repeats": repeats, "unmeasured": unmeasured,
                    **(tool_options if fmt != "canonical" else {})},
        **({"ignored_columns": ignored} if ignored else {}), **({"derived": derived} if derived else {}), **given,
        **{key: value for key, value in {"metric": info.get("metric"), **dropped, "holes": holes}.items() if value},
        "rows": {"read": int(len(frame)), "kept": int(len(valid)), "dropped": int(len(frame) - len(valid))},
        **{key: value for key, value in reader_facts.items() if value},  # what the reader left out or assumed
        "cabench_version": cabench.__version__,
        "imported": import_time().strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    given_part = {key: value for key, value in mapping["dataset"].items() if key != "provenance"}
    provenance = _with_notes(provenance, mapping["dataset"].get("provenance"), mapping_path)
    folder, surrogate_of = surrogate_source(files), None
    if folder is not None:
        surrogate_of = provenance["surrogate_source"] = str(folder.resolve())
        echo(f"the logs are read from {folder}, a folder of surrogate logs (its dataset.yaml): the dataset is "
             "marked surrogate")
    elif found is not None:  # rows of the shipped surrogate logs, known by their values
        surrogate_of = provenance["surrogate_source"] = found.describe()
        echo(f"{source} holds the rows of {found.held} of the {found.configurations} configurations of the surrogate "
             f"logs of {found.name} shipped with cabench: the dataset is marked surrogate")
    if given_part.get("surrogate") is True and surrogate_of is None:  # reports: calibrated to the paper's statistics
        raise CabenchError(f"{mapping_path}: dataset.surrogate: an import holds real logs (surrogate: false); "
                           "surrogate logs are the ones scripts/make_surrogate_logs.py writes (logs read from their "
                           "folder, or a copy of them, are marked surrogate by the import)")
    if "tokens" not in valid and "cost" not in given_part:  # the paper's cost, tokens, is not in the logs
        unit = "usd" if "cost_usd" in valid else "completion_tokens" if "completion_tokens" in valid else None
        if unit is not None:
            given_part["cost"] = unit
            echo(f"cost: {unit}, declared in dataset.yaml (the logs have {'cost_usd' if unit == 'usd' else unit} and "
                 "no tokens column, the paper's cost; a mapping's dataset: part declares another)")
    meta = {"name": out.name, "description": f"Imported from {source.name}", "provenance": provenance,
            "surrogate": False, "licence": "unspecified", **given_part}
    if surrogate_of is not None:  # whatever the mapping says, with its description
        meta.update(surrogate=True, description=f"{str(meta['description']).rstrip('. ')}: the SURROGATE logs of "
                                                f"{surrogate_of}, NOT real model outputs")
    meta = {**meta,
            **({"split": split_at_import} if split_at_import else {}),
            **({"extra_columns": list(extra)} if extra else {})}
    if not isinstance(meta["surrogate"], bool):
        raise CabenchError(f"{mapping_path}: dataset.surrogate: expected true or false")
    if not is_dataset_name(meta.get("name")):
        named = f"{mapping_path}: dataset.name" if "name" in mapping["dataset"] else f"--out {out}: the folder name"
        raise CabenchError(f"{named}: expected a non-empty text on one line without '/', got {meta.get('name')!r}")
    staged, made = None, new_folders(out.parent)
    try:
        staged = staging_folder(out)
        write_logs(valid, staged / "logs.csv.gz", extra=extra)
        write_metadata(meta, staged / "dataset.yaml")
        publish_folder(staged, out)
    except OSError as exc:
        if staged is not None:  # what was written of the new dataset: on a full disk, room the user needs
            shutil.rmtree(staged, ignore_errors=True)
        remove_empty(made)
        raise CabenchError(f"{out}: cannot write the dataset ({exc.strerror}); a dataset already "
                           "there is kept; make room, or pass --out with a writable place") from None
    return out


def unloadable(folder: Path) -> str:
    """Why ``folder``, as written, cannot be loaded on the objectives and split its ``dataset.yaml`` declares (the
    paper's where it declares none), or "" when it loads. An import keeps such a dataset: declaring other
    objectives (``objectives: [accuracy, cost]``) or a larger split may make it usable, so this is a warning."""
    try:
        load_dataset(folder)
    except CabenchError as exc:
        return str(exc)
    return ""
