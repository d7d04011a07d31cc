"""Tasks for live evaluation: instances, prompts per prompting style, and answer checking.

A task turns an instance into chat messages (``direct`` or ``cot``), scores a
reply (1 correct, 0 not), and bounds the tokens a call can cost. Task files
are read from local paths; nothing is downloaded.

- ``gsm8k``: JSONL with ``question`` and ``answer`` ending in ``#### <number>``
  (the public format); numeric exact match of the final answer.
- ``piqa``: JSONL with ``goal``, ``sol1``, ``sol2`` and ``label`` (0 or 1), or
  the labels in a separate file (one per line, as published); choice 1 or 2.
- ``replay``: the instances of a cabench dataset, answered by ``cabench serve``
  as the logged configurations were (for demos and tests).
- ``template``: a user task in YAML: a JSONL file, a prompt template per
  prompting style with ``{field}`` slots, the answer field, an extraction
  regex and a normaliser (``text``, ``number`` or ``choice``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from cabench.data.readers.common import json_lines
from cabench.errors import CabenchError

PROMPTINGS = ("direct", "cot")
_NUMBER = re.compile(r"-?\$?\s?\d[\d,]*(?:\.\d+)?")
_PER_MESSAGE = 16  # chat-template tokens a message may add around its text


@dataclass(frozen=True)
class Bound:
    """Upper bounds of a call's prompt, completion and total tokens (the total may be below the parts' sum)."""

    prompt: float
    completion: float
    total: float


@dataclass(frozen=True)
class Instance:
    id: str
    fields: dict[str, Any]
    answer: Any


def _read_jsonl(path: Path, what: str) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise CabenchError(f"{path}: {what} file not found (tasks are read from local files)")
    out = list(json_lines(path))
    if not out:
        raise CabenchError(f"{path}: no instances")
    return out


def _distinct(instances: list[Instance], lines: list[int], path: Path) -> tuple[Instance, ...]:
    """``instances`` once each: an id given twice is refused naming both lines (a call would be asked the last
    one's question, and its answers counted as repeated evaluations of one instance)."""
    first: dict[str, int] = {}
    for instance, line in zip(instances, lines):
        if instance.id in first:
            raise CabenchError(f"{path}: line {line}: id '{instance.id}' is the id of line {first[instance.id]} too; "
                               "give each instance its own id")
        first[instance.id] = line
    return tuple(instances)


def _field(item: dict[str, Any], key: str, path: Path, line: int) -> Any:
    if key not in item or item[key] is None:
        raise CabenchError(f"{path}: line {line}: missing field '{key}'")
    return item[key]


def number_value(text: str) -> Decimal | None:
    """A number written in text: ``$1,234.50`` -> 1234.50; ``None`` when it is not one."""
    cleaned = text.replace(",", "").replace("$", "").replace(" ", "").rstrip(".")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None  # NaN, sNaN and Infinity are no answer (sNaN raises when compared)


def final_number(reply: str) -> Decimal | None:
    """The final numeric answer of a reply: after ``####`` or "answer is", else the last number."""
    for marker in (r"####\s*(.*)", r"answer is[:\s]*(.*)", r"Answer:\s*(.*)"):
        found = re.findall(marker, reply, flags=re.IGNORECASE)
        if found:
            numbers = _NUMBER.findall(found[-1])
            if numbers:
                return number_value(numbers[0])
    numbers = _NUMBER.findall(reply)
    return number_value(numbers[-1]) if numbers else None


def choice_number(reply: str, choices: tuple[str, ...] = ("1", "2")) -> str | None:
    """The chosen option of a reply: after "answer is" / "Solution", else the only option named."""
    alternatives = "|".join(re.escape(c) for c in choices)
    for pattern in (rf"answer is[:\s]*(?:solution\s*)?\(?({alternatives})\b", rf"solution\s*({alternatives})\b",
                    rf"answer[:\s]*\(?({alternatives})\b"):
        found = re.findall(pattern, reply, flags=re.IGNORECASE)
        if found:
            return found[-1]
    named = set(re.findall(rf"(?<![\w.])({alternatives})(?![\w])", reply))
    return named.pop() if len(named) == 1 else None


@dataclass(frozen=True)
class Task:
    """Instances plus prompts and scoring (see the module docstring)."""

    name: str
    instances: tuple[Instance, ...]
    templates: dict[str, str] = field(default_factory=dict)
    normaliser: str = "text"
    extract: str | None = None
    choices: tuple[str, ...] = ()
    replay: Any = None  # the Dataset of a replay task

    def messages(self, instance: Instance, prompting: str) -> list[dict[str, str]]:
        if self.replay is not None:
            return [{"role": "system", "content": f"cabench replay; prompting: {prompting}"},
                    {"role": "user", "content": f"cabench replay instance: {instance.id}"}]
        if prompting not in self.templates:
            raise CabenchError(f"task {self.name}: no prompt for prompting '{prompting}'; it has "
                               f"{', '.join(self.templates)}")
        return [{"role": "user", "content": self.templates[prompting].format(**instance.fields)}]

    def score(self, instance: Instance, reply: str) -> float:
        if self.replay is not None:
            return replayed_score(instance.id, reply)
        text = reply
        if self.extract:
            found = re.findall(self.extract, reply, flags=re.IGNORECASE | re.DOTALL)
            if not found:
                return 0.0
            text = found[-1] if isinstance(found[-1], str) else found[-1][0]
        if self.normaliser == "number":
            got = final_number(text)
            want = number_value(str(instance.answer))
            return 1.0 if got is not None and want is not None and got == want else 0.0
        if self.normaliser == "choice":
            return 1.0 if choice_number(text, self.choices) == str(instance.answer) else 0.0
        return 1.0 if text.strip().lower() == str(instance.answer).strip().lower() else 0.0

    def worst_case(self, instance: Instance, prompting: str, max_tokens: int, model: str,
                   temperature: float) -> Bound:
        """Upper bounds of a call's tokens: the prompt's bytes (a byte-level token is at least one byte) plus
        the template's per-message tokens, the generation limit, and their sum; for a replay task, the most
        tokens the log of the configuration asked for (as ``cabench serve`` picks it) records bound the total
        and each part."""
        if self.replay is not None:
            total = float(self.replay.max_tokens[replay_key(model, temperature, max_tokens, prompting)])
            return Bound(total, min(float(max_tokens), total), total)
        prompt = sum(len(m["content"].encode("utf-8")) + _PER_MESSAGE for m in self.messages(instance, prompting))
        return Bound(float(prompt), float(max_tokens), float(prompt + max_tokens))


#: How a replayed answer with partial credit begins, before the score.
_PARTIAL = "answer {} scoring "


def replay_answer(instance_id: str, score: float) -> str:
    """What ``cabench serve`` answers on a replay instance with the logged ``score``: ``answer q1`` where it is 1,
    ``not the answer to q1`` where 0, and ``answer q1 scoring 0.6`` for partial credit (a judge's grade), which
    :meth:`Task.score` reads back as logged."""
    score = float(score)
    if score == 1.0:
        return f"answer {instance_id}"
    return f"not the answer to {instance_id}" if score == 0.0 else f"{_PARTIAL.format(instance_id)}{score!r}"


def replayed_score(instance_id: str, reply: str) -> float:
    """The score a reply of :func:`replay_answer` gives (0 for any other text, or a score outside [0, 1])."""
    reply = reply.strip()
    if reply == replay_answer(instance_id, 1.0):
        return 1.0
    partial = _PARTIAL.format(instance_id)
    if not reply.startswith(partial):
        return 0.0
    try:
        score = float(reply[len(partial):])
    except ValueError:
        return 0.0
    return score if 0.0 <= score <= 1.0 else 0.0


GSM8K_PROMPTS = {
    "direct": "Solve the math word problem. Reply with the final number only.\n\nQuestion: {question}\nAnswer:",
    "cot": "Solve the math word problem step by step. End with a line 'The answer is N'.\n\nQuestion: {question}",
}
PIQA_PROMPTS = {
    "direct": "Goal: {goal}\nSolution 1: {sol1}\nSolution 2: {sol2}\nWhich solution achieves the goal? Reply with "
              "1 or 2 only.",
    "cot": "Goal: {goal}\nSolution 1: {sol1}\nSolution 2: {sol2}\nWhich solution achieves the goal? Think step by "
           "step, then end with 'The answer is 1' or 'The answer is 2'.",
}


def gsm8k_task(path: Path) -> Task:
    out, lines = [], []
    for n, (line, item) in enumerate(_read_jsonl(path, "GSM8K")):
        answer = str(_field(item, "answer", path, line))
        if "####" not in answer:
            raise CabenchError(f"{path}: line {line}: 'answer' does not end with '#### <number>'")
        gold = number_value(answer.rsplit("####", 1)[1].strip())
        if gold is None:
            raise CabenchError(f"{path}: line {line}: the answer after '####' is not a number")
        out.append(Instance(str(item.get("id", n)), {"question": str(_field(item, "question", path, line))}, gold))
        lines.append(line)
    return Task("gsm8k", _distinct(out, lines, path), GSM8K_PROMPTS, "number")


def piqa_task(path: Path, labels: Path | None = None) -> Task:
    rows = _read_jsonl(path, "PIQA")
    label_list = None
    if labels is not None:
        if not labels.is_file():
            raise CabenchError(f"{labels}: PIQA labels file not found")
        label_list = [x.strip() for x in labels.read_text().splitlines() if x.strip()]
        if len(label_list) != len(rows):
            raise CabenchError(f"{labels}: {len(label_list)} labels for {len(rows)} PIQA items")
    out, lines = [], []
    for n, (line, item) in enumerate(rows):
        label = label_list[n] if label_list is not None else _field(item, "label", path, line)
        if str(label) not in ("0", "1"):
            raise CabenchError(f"{path}: line {line}: label {label!r} is not 0 or 1")
        fields = {k: str(_field(item, k, path, line)) for k in ("goal", "sol1", "sol2")}
        out.append(Instance(str(item.get("id", n)), fields, str(int(label) + 1)))
        lines.append(line)
    return Task("piqa", _distinct(out, lines, path), PIQA_PROMPTS, "choice", choices=("1", "2"))


def replay_key(model: str, temperature: float, max_tokens: int, prompting: str) -> tuple[str, float, int, str]:
    """What identifies a logged configuration in a request: model, temperature (rounded to 9 digits),
    ``max_tokens`` and prompting."""
    return str(model), round(float(temperature), 9), int(max_tokens), str(prompting)


@dataclass(frozen=True)
class ReplaySource:
    """What a replay task knows of its dataset: instances and each configuration's largest logged call, by
    :func:`replay_key`."""

    ids: tuple[str, ...]
    max_tokens: dict[tuple[str, float, int, str], float]
    surrogate: bool = False  # the dataset's logs are surrogate (not real model outputs): so are the answers served


def replay_task(dataset: Path) -> Task:
    from cabench.data.io import read_logs
    from cabench.data.surrogate import folder_is_surrogate

    frame, _ = read_logs(dataset)
    surrogate = folder_is_surrogate(dataset, frame)  # as `serve` answers from the folder
    ids = tuple(sorted(frame["instance_id"].unique()))
    most = frame.groupby("config_id", sort=False)["tokens"].max()
    facts = frame.drop_duplicates("config_id").set_index("config_id")
    source = ReplaySource(ids, {replay_key(c.model, c.temperature, c.max_new_tokens, c.prompting): float(most[i])
                                for i, c in facts.iterrows()}, surrogate)
    return Task("replay", tuple(Instance(i, {}, None) for i in ids), replay=source)


def template_task(spec: dict[str, Any], where: str) -> Task:
    """A user task from YAML (``path``, ``prompts``, ``answer_field``, ``extract``, ``normaliser``, ``choices``)."""
    known = {"kind", "path", "id_field", "prompts", "answer_field", "extract", "normaliser", "choices", "name"}
    for key in spec:
        if key not in known:
            raise CabenchError(f"{where}.{key}: unknown key; a template task has {', '.join(sorted(known))}")
    for key in ("path", "prompts", "answer_field"):
        if key not in spec:
            raise CabenchError(f"{where}.{key}: missing")
    prompts = spec["prompts"]
    if not isinstance(prompts, dict) or not prompts or not all(isinstance(v, str) for v in prompts.values()):
        raise CabenchError(f"{where}.prompts: expected a mapping of prompting style to template text")
    slots = {style: _slots(text, f"{where}.prompts.{style}") for style, text in prompts.items()}
    normaliser = spec.get("normaliser", "text")
    if normaliser not in ("text", "number", "choice"):
        raise CabenchError(f"{where}.normaliser: '{normaliser}' is not text, number or choice")
    for key in ("answer_field", "id_field", "extract"):
        if key in spec and not isinstance(spec[key], str):
            raise CabenchError(f"{where}.{key}: expected text, got {type(spec[key]).__name__}")
    choices = spec.get("choices", ())
    if not isinstance(choices, (list, tuple)) or not all(
            isinstance(c, (str, int, float)) and not isinstance(c, bool) for c in choices):
        raise CabenchError(f"{where}.choices: expected a list of answers (text or numbers)")
    if spec.get("extract") is not None:
        try:
            re.compile(spec["extract"])
        except re.error as exc:
            raise CabenchError(f"{where}.extract: not a regular expression ({exc})") from None
    path = Path(spec["path"])
    out, lines = [], []
    for n, (line, item) in enumerate(_read_jsonl(path, "task")):
        ident = str(item.get(spec.get("id_field", "id"), n))
        answer = _field(item, spec["answer_field"], path, line)
        for names in slots.values():
            for slot in names:
                _field(item, slot, path, line)
        out.append(Instance(ident, {k: str(v) for k, v in item.items()}, answer))
        lines.append(line)
    return Task(str(spec.get("name", path.stem)), _distinct(out, lines, path), dict(prompts), normaliser,
                spec.get("extract"),
                tuple(str(c) for c in choices))


def _slots(template: str, where: str) -> list[str]:
    """The fields a prompt template fills (``{question}``); refused in one line: a template Python's ``format``
    cannot read (``{q``), a field without a name (``{}``), one reaching into a field (``{q.x}``, ``{q[0]}``), or
    one with a conversion or format spec (``{q!r}``, ``{q:d}``: fields are text, filled as written, and a spec
    could fail on the first paid call)."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise CabenchError(f"{where}: not a template ({exc}); write a literal brace as {{{{ or }}}}") from None
    names = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or (spec and "{" in spec):
            raise CabenchError(f"{where}: '{{{name}}}' is not a field of the instance; name one as {{question}} "
                               "(a literal brace is {{ or }})")
        if spec or conversion:
            shown = f"{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
            raise CabenchError(f"{where}: '{shown}' has a conversion or format spec; fields are filled as written, "
                               f"so write {{{name}}}")
        names.append(name)
    return names


def _gsm8k(spec: dict[str, Any], where: str) -> Task:
    return gsm8k_task(Path(spec["path"]))


def _piqa(spec: dict[str, Any], where: str) -> Task:
    labels = spec.get("labels")
    return piqa_task(Path(spec["path"]), Path(labels) if labels else None)


def _replay(spec: dict[str, Any], where: str) -> Task:
    return replay_task(Path(spec["dataset"]))


TASKS: dict[str, Callable[[dict[str, Any], str], Task]] = {
    "gsm8k": _gsm8k, "piqa": _piqa, "replay": _replay, "template": template_task}
"""Task kinds of a live config's ``task.kind``: each builds its :class:`Task` from the ``task`` mapping."""


def build_task(spec: dict[str, Any], where: str) -> Task:
    """The task a live config's ``task`` mapping (already checked by :mod:`cabench.live.config`) names."""
    return TASKS[spec["kind"]](spec, where)
