"""``bfcl``: a Berkeley Function-Calling Leaderboard results folder (one date
folder of the public results repository, or the ``result/`` and ``score/``
folders BFCL v4 writes, whose files sit in category subfolders such as
``non_live/`` and ``agentic/memory/kv/``) with ``result/<model>/**/*_result.json``
(JSON lines: ``id``, ``latency`` in seconds, ``input_token_count``,
``output_token_count``) and ``score/<model>/<category>_score.json`` (or named as the
result file, ``BFCL_v3_<category>_score.json``; first
line the summary ``correct_count``/``total_count``, then one line per failed
entry whose ``id`` is the 1-based position in the result file, so an id below
1 or beyond the result file's last line is refused, or in v4 the entry's own
``id``, refused when no entry of the result file has it; the score file is
looked for beside the result file's subfolder, then by its name anywhere
below the model's score folder); the earliest
folders name them ``result-BFCL/`` and ``score-BFCL/``. Older folders number
result lines with ``idx`` (0-based) instead of ``id``. Result files without a
score file (categories the leaderboard does not score) are skipped and listed.
Fields:

=================  ==========================================================
canonical column   source
=================  ==========================================================
config_id, model   the model folder name
prompting          ``fc`` when the name marks native function calling
                   (``-FC``), else ``prompt``
temperature,       not in the files: ``--set``, else the leaderboard handlers'
max_new_tokens     defaults (0.001, 1000; recorded as ``metadata_defaults``)
instance_id        ``id`` of the result line, else ``<category>_<idx>``
correct            0 when listed in the score file's failed entries, else 1
latency_s          ``latency``; in the multi-turn categories, where it is a
                   list (of lists: per turn, per step), their sum
tokens             ``input_token_count + output_token_count``, each summed
                   alike (a negative count is refused; one of the two
                   missing leaves the entry unmeasured)
=================  ==========================================================

An entry without latency or token counts (a call that timed out) is not
measured: the import leaves it out and says so (``--unmeasured``), and the
instance is then a hole (``--missing``). A model none of whose entries has them
cannot be replayed (cabench charges tokens and scores latency); it is left out
and recorded.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cabench.data.readers.common import Read, ReadOptions, duration, json_lines, need, token_count
from cabench.data.schema import shown
from cabench.errors import CabenchError

BFCL_DEFAULTS = {"temperature": 0.001, "max_new_tokens": 1000}
_RESULT = re.compile(r"^(?:gorilla_openfunctions_v1_test_|BFCL_v\d+_)?(?P<category>.+)_result\.json$")


def _total(item: dict[str, Any], key: str, where: tuple[str, int], read: Any) -> float | None:
    """A result line's ``key`` (``read``: :func:`duration` or :func:`token_count`): a number, or in BFCL v4's multi-turn
    categories a list (of lists) of them, one per turn and step, which is the entry's total."""
    value = item.get(key)
    if not isinstance(value, list):
        return read(item, key, where)
    flat: list[float | None] = []
    stack: list[Any] = [value]
    while stack:
        part = stack.pop()
        if isinstance(part, list):
            stack.extend(part)
        else:
            flat.append(read({key: part}, key, where))
    return None if not flat or None in flat else float(sum(v for v in flat if v is not None))


def _failed_positions(score_path: Path, score: list[tuple[int, dict[str, Any]]], ids: list[Any],
                      result: str) -> set[int]:
    """0-based positions of the failed entries a score file lists: its ids are 1-based positions in ``result``, or
    (BFCL v4) the ids of its entries (``ids``, in file order)."""
    failed = set()
    entries = len(ids)
    where = {str(i): pos for pos, i in enumerate(ids) if isinstance(i, str)}
    for line, entry in score[1:]:
        position = entry.get("id")
        if isinstance(position, str) and position in where:  # v4: the entry's own id
            failed.add(where[position])
            continue
        if isinstance(position, bool) or not isinstance(position, int):
            raise CabenchError(f"{score_path}: line {line}: 'id' is {shown(position)}, neither a position in nor the "
                               f"id of an entry of {result}; a damaged or mismatched score file")
        if not 1 <= position <= entries:
            raise CabenchError(f"{score_path}: line {line}: failed entry id {position} is outside 1..{entries}, "
                               f"the positions of the {entries} entries of {result}; a damaged or mismatched "
                               "score file")
        failed.add(position - 1)
    return failed


def _score_file(scores: Path, result: Path, category: str) -> Path | None:
    """The score file of the result file ``result`` (relative to its model folder) in the model's score folder
    ``scores``: named after it, in the same subfolder or (BFCL v4 files some categories one folder up) anywhere below
    ``scores`` where exactly one file has that name; else the earlier layouts' ``<category>_score.json``."""
    name = result.name.replace("_result.json", "_score.json")
    beside = scores / result.parent / name
    if beside.is_file():
        return beside
    found = sorted(scores.rglob(name)) if scores.is_dir() else []
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise CabenchError(f"{scores}: {len(found)} score files named {name} ({found[0]}, {found[1]}), none beside "
                           f"its result file {result}; keep the one that scores it")
    earlier = scores / f"{category}_score.json"
    return earlier if earlier.is_file() else None


def read_bfcl(folder: Path, options: ReadOptions) -> Read:
    """Canonical rows of a BFCL results folder (see the module docstring), and what was left out."""
    results = next((folder / n for n in ("result", "result-BFCL") if (folder / n).is_dir()), folder / "result")
    scores = next((folder / n for n in ("score", "score-BFCL") if (folder / n).is_dir()), folder / "score")
    if not results.is_dir() or not scores.is_dir():
        raise CabenchError(f"{folder}: not a BFCL results folder; expected result/<model>/ and score/<model>/ "
                           "(one date folder of the leaderboard's results repository)")
    rows: list[dict[str, Any]] = []
    files: list[Path] = []
    unmeasured: dict[str, int] = {}
    unscored: list[str] = []
    models = sorted(p for p in results.iterdir() if p.is_dir())
    if not models:
        raise CabenchError(f"{results}: no model folders")
    for model_dir in models:
        model = model_dir.name
        model_rows, missing = [], 0
        for path in sorted(model_dir.rglob("*_result.json"), key=lambda p: p.relative_to(model_dir).parts):
            match = _RESULT.match(path.name)
            category = match.group("category") if match else path.stem
            score_path = _score_file(scores / model, path.relative_to(model_dir), category)
            if score_path is None:
                unscored.append(str(path.relative_to(folder)))  # not part of the leaderboard's score
                continue
            lines = list(json_lines(path))
            score = list(json_lines(score_path))
            summary = score[0][1] if score else {}
            if "total_count" not in summary or "correct_count" not in summary:
                raise CabenchError(f"{score_path}: line 1: expected the summary with correct_count and total_count")
            failed = _failed_positions(score_path, score, [item.get("id") for _, item in lines], path.name)
            if summary["total_count"] != len(lines) or summary["correct_count"] != len(lines) - len(failed):
                raise CabenchError(
                    f"{score_path}: the summary ({shown(summary['correct_count'])}/{shown(summary['total_count'])}) "
                    f"does not match {path.name} ({len(lines) - len(failed)}/{len(lines)} after the failed entries)")
            files += [path, score_path]
            for pos, (line, item) in enumerate(lines):
                where = (str(path), line)
                if "id" in item:
                    instance = str(need(item, "id", (str, int), where))
                elif isinstance(item.get("idx"), int) and not isinstance(item["idx"], bool):
                    instance = f"{category}_{item['idx']}"  # the older layout numbers entries by position
                else:
                    raise CabenchError(f"{path}: line {line}: neither 'id' nor an integer 'idx'")
                latency = _total(item, "latency", where, duration)
                parts = [_total(item, part, where, token_count) for part in ("input_token_count", "output_token_count")]
                tokens = None if None in parts else sum(p for p in parts if p is not None)  # one missing: unknown
                if latency is None or latency <= 0 or tokens is None or tokens <= 0:
                    missing += 1
                    latency = tokens = None  # not measured: the import leaves it out, saying so (--unmeasured)
                model_rows.append({"config_id": model, "model": model,
                                   "prompting": "fc" if re.search(r"-FC(\b|-|$)", model) else "prompt",
                                   "instance_id": instance, "correct": 0 if pos in failed else 1,
                                   "latency_s": latency, "tokens": tokens,
                                   "file": path, "position": line})
        if missing and missing == len(model_rows):  # nothing of it to replay
            unmeasured[model] = missing
        else:
            rows += model_rows
    if not rows and not files:
        example = f", e.g. for {unscored[0]}" if unscored else ""
        raise CabenchError(f"{folder}: no result file has a score file (looked for score/<model>/<category>_score.json "
                           f"and score/<model>/<result name>_score.json{example}); unscored categories are not part of "
                           "the leaderboard's score")
    if not rows and unmeasured:
        raise CabenchError(f"{folder}: no model has latency and token counts on any entry (e.g. "
                           f"{next(iter(unmeasured))}, none of whose entries records them)")
    if not rows:
        raise CabenchError(f"{folder}: its scored result files hold no entry (e.g. {files[0]})")
    if options.metric is not None:
        raise CabenchError("--metric: a BFCL folder has one score per entry (its score files); drop --metric")
    info = {"read_models": len(models),
            "dropped_configurations": {m: f"no latency or token count on any of its {n} entries"
                                       for m, n in unmeasured.items()},
            "metadata_defaults": dict(BFCL_DEFAULTS), "unscored_files": unscored}
    return Read(rows, files, info)
