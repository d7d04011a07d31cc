"""Live and collect configs: YAML in, a frozen :class:`LiveConfig` out, every problem in one line.

See ``configs/live/`` and the README section "Evaluating live" for the keys.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cabench import registry
from cabench.config import _arms, _budget, _Reader
from cabench.data.terms import COST_COLUMN, PAPER_TERMS, Terms, parse_terms, quality_not_first
from cabench.errors import CabenchError
from cabench.live.charges import CHARGE_FAILED
from cabench.live.client import VARIABLE_NAME, Endpoint
from cabench.live.tasks import PROMPTINGS, TASKS, replay_key
from cabench.methods.configured import OnlineMethod, PsiMethod, unused
from cabench.psi import COST_MODES
from cabench.units import COST_UNITS
from cabench.yamlio import load_config_file

TOP = {"name", "task", "endpoint", "configurations", "configurations_from", "arms", "setting", "method",
       "cost_mode", "budget_tokens", "budget", "rho", "profiling", "evaluation", "instance_order", "repetition",
       "cost", "objectives", "prices", "latency", "seed", "output"}
#: ``cost:`` values of live configs written before costs had units: the token count charged, as a cost unit.
TOKEN_COUNTS = {"total": "tokens", "completion": "completion_tokens"}
#: What a live call measures: the columns a live config's objectives may read.
LIVE_COLUMNS = ("correct", "latency_s", "tokens", "prompt_tokens", "completion_tokens", COST_COLUMN)
#: Keys of a configuration's estimates in ``decision.json`` beside its objectives.
ESTIMATE_KEYS = ("pulls", "online_cost")
ENDPOINT_KEYS = {"base_url", "api_key_env", "timeout_s", "max_retries", "backoff_s", "max_backoff_s", "concurrency",
                 "max_reply_bytes", "max_failures", "charge_failed"}
MAX_CONCURRENCY = 256
CONFIG_KEYS = {"name", "model", "temperature", "max_tokens", "prompting"}


@dataclass(frozen=True)
class Configuration:
    """One LLM configuration (an arm): what is sent to the endpoint."""

    name: str
    model: str
    temperature: float
    max_tokens: int
    prompting: str
    arm_id: int = -1  # its position in the dataset it was taken from (replay streams are keyed by it)


@dataclass(frozen=True)
class LiveConfig:
    name: str
    source: str
    task: dict[str, Any]
    endpoint: Endpoint
    configurations: tuple[Configuration, ...]
    setting: str = "online"
    method: Any = None  # OnlineMethod or PsiMethod
    cost_mode: str = "deterministic"
    budget: float | None = None  # the whole spend, profiling included, in terms.cost
    rho: float | None = None
    profiling: Any = 5  # a number of instances, or "dataset-split"
    profiling_seed: int = 0
    evaluation: int | None = None  # instances to evaluate on (a sample), None: every other instance
    instance_order: str = "permutation"
    repetition: int = 0
    terms: Terms = PAPER_TERMS  # objectives, cost unit, prices
    latency: str = "measured"
    seed: int = 0
    output: str | None = None


def _path(r: _Reader, value: Any, key: str, base: Path, folder: bool = False) -> str:
    text = r.text(value, key)
    path = Path(text).expanduser()
    if not path.is_absolute():
        here, beside = Path.cwd() / path, base / path
        path = here if here.exists() or not beside.exists() else beside
    if not (path.is_dir() if folder else path.exists()):
        raise r.fail(key, f"'{text}' not found")
    return str(path)


def _httpx_host(text: str, host: str) -> str | None:
    """``host``, or None when httpx refuses ``text`` as a URL (httpx missing: checked when the client starts). The
    import is apart from the check: an interrupt during the import reached ``except httpx.InvalidURL`` with httpx
    unbound, a traceback where Ctrl-C says "interrupted"."""
    try:
        import httpx
    except ImportError:
        return host
    try:
        httpx.URL(text)
    except httpx.InvalidURL:
        return None
    return host


def _base_url(r: _Reader, value: Any) -> str:
    """An http(s) URL with a host (and a port in 1..65535 if given); the error never echoes it (it may hold a
    key in its userinfo or query)."""
    text = r.text(value, "endpoint.base_url")
    if any(ch.isspace() for ch in text):  # never echoed: what follows a blank may be a key pasted after it
        raise r.fail("endpoint.base_url", "holds a space or another blank, which no URL has (a key pasted after "
                     "it?); give the URL alone, and the key in the variable endpoint.api_key_env names")
    try:
        parts = urlsplit(text)
        port = parts.port
        host = parts.hostname
    except ValueError:
        host = None
    if host and text.isprintable():
        host = _httpx_host(text, host)
    if (not text.startswith(("http://", "https://")) or not text.isprintable() or not host
            or (port is not None and not 1 <= port <= 65535)):
        shown = f"{urlsplit(text).scheme}://{host}/..." if host else "http://HOST[:PORT]/PATH"  # a path may hold a key
        raise r.fail("endpoint.base_url", f"not an http(s) URL with a host and a port in 1..65535 ({shown})")
    return text


def _key_variable(r: _Reader, value: Any) -> str:
    """The name of the environment variable that holds the key; anything else is refused without being shown (a key
    written here in place of its variable's name would be printed)."""
    if not isinstance(value, str) or not VARIABLE_NAME.fullmatch(value):
        raise r.fail("endpoint.api_key_env", "not the name of an environment variable (letters, digits and '_', "
                     "e.g. OPENAI_API_KEY): it names the variable that holds the key, not the key itself (the value "
                     "is not shown)")
    return value


def _label(r: _Reader, value: Any, key: str) -> str:
    """A run or configuration name: printable text on one line, without '/' (it names files and CSV rows)."""
    text = r.text(value, key)
    if "/" in text or not text.isprintable():
        raise r.fail(key, f"{text[:60]!r}: a name is printable text on one line, without '/'")
    return text


def _logged(dataset: str) -> tuple[Any, tuple[Configuration, ...]]:
    """A dataset's configurations (one row of its logs each) and, in that arm order, each as a
    :class:`Configuration` named by its ``config_id``."""
    from cabench.data.io import read_logs

    frame, _ = read_logs(Path(dataset))
    configs = frame.drop_duplicates("config_id").reset_index(drop=True)
    return configs, tuple(Configuration(str(c.config_id), str(c.model), float(c.temperature), int(c.max_new_tokens),
                                        str(c.prompting), pos) for pos, c in enumerate(configs.itertuples(index=False)))


def _configurations_from(r: _Reader, dataset: str, arms_raw: Any) -> tuple[Configuration, ...]:
    configs, every = _logged(dataset)
    _, arm_filter = _arms(r, arms_raw)
    return tuple(every[int(pos)] for pos in arm_filter.select(configs, f"{r.source}: arms"))


def _one_line(text: str) -> str:
    """A model name or prompting for a one-line message."""
    return text if text.isprintable() and len(text) <= 80 else repr(text[:80])


def _show(c: Configuration) -> str:
    """A configuration as a config lists it, on one line."""
    return (f"{{model: {_one_line(c.model)}, temperature: {c.temperature!r}, max_tokens: {c.max_tokens}, "
            f"prompting: {_one_line(c.prompting)}}}")


def _replayed(r: _Reader, wanted: Configuration, key: str, dataset: str,
              logged: tuple[Configuration, ...]) -> Configuration:
    """The configuration of the replay dataset that ``wanted`` names: the same temperature, ``max_tokens`` and
    prompting, and its model spelt the same or, when only one model matches, in another case. It keeps the
    dataset's facts (the model as the dataset spells it: what ``cabench serve`` matches), its position, and
    ``wanted``'s name if one was given (the dataset's ``config_id`` if not). Refused in one line, with the
    closest configuration when a model name is close, if the dataset has none such."""
    def picked_by(c: Configuration) -> tuple[str, float, int, str]:  # as cabench serve picks, the case aside
        return replay_key(c.model.casefold(), c.temperature, c.max_tokens, c.prompting)

    same = [c for c in logged if picked_by(c) == picked_by(wanted)]
    found = [c for c in same if c.model == wanted.model] or same
    if len({c.model for c in found}) > 1:
        spellings = " and ".join(sorted({c.model for c in found}))
        raise r.fail(key, f"{_show(wanted)}: model {_one_line(wanted.model)} matches {spellings} of {dataset} only "
                     "in case; spell it as the dataset does")
    if len(found) > 1:
        raise r.fail(key, f"{_show(wanted)} matches {' and '.join(c.name for c in found)} of {dataset}, which an "
                     "endpoint cannot tell apart; use configurations_from with arms to pick one")
    if not found:
        models = sorted({c.model for c in logged})
        near = set(difflib.get_close_matches(wanted.model.casefold(), [m.casefold() for m in models], n=3,
                                             cutoff=0.6))
        close = [c for c in logged if c.model.casefold() in near]
        if not close:
            shown = ", ".join(models[:12]) + (", ..." if len(models) > 12 else "")
            raise r.fail(key, f"{_show(wanted)} is not a configuration of {dataset}; no model there is like "
                         f"{_one_line(wanted.model)} (its models: {shown})")

        def distance(c: Configuration) -> tuple[float, ...]:
            differ = ((c.model.casefold() != wanted.model.casefold()) + (c.temperature != wanted.temperature)
                      + (c.max_tokens != wanted.max_tokens) + (c.prompting != wanted.prompting))
            return (differ, abs(c.temperature - wanted.temperature), abs(c.max_tokens - wanted.max_tokens))

        best = min(close, key=distance)  # ties: the first in the dataset
        raise r.fail(key, f"{_show(wanted)} is not a configuration of {dataset}; the closest is {_show(best)} "
                     f"({best.name})")
    c = found[0]
    return Configuration(wanted.name or c.name, c.model, c.temperature, c.max_tokens, c.prompting, c.arm_id)


def _terms(r: _Reader, raw: dict[str, Any], configurations: tuple[Configuration, ...]) -> Terms:
    """The declared objectives, cost unit and prices; ``cost: total|completion`` name the token count charged
    (``tokens``, ``completion_tokens``); dollars need a price for every configuration's model."""
    cost = r.text(raw.get("cost", "total"), "cost", (*TOKEN_COUNTS, *COST_UNITS))
    terms = parse_terms({**raw, "cost": TOKEN_COUNTS.get(cost, cost)}, r.fail)
    for pos, spec in enumerate(terms.objectives):
        if spec.column not in LIVE_COLUMNS:
            raise r.fail(f"objectives[{pos}].column", f"'{spec.column}' is not measured by a live call; a live "
                         f"objective reads one of {', '.join(LIVE_COLUMNS)}")
        if spec.name in ESTIMATE_KEYS:
            raise r.fail(f"objectives[{pos}].name", f"'{spec.name}' names another estimate in decision.json; give "
                         "the objective another name")
    if terms.cost == "usd":
        if not terms.prices:
            raise r.fail("cost", "usd needs prices: {<model or pattern>: {input: $/1M tokens, output: $/1M tokens}} "
                         "(an endpoint reports tokens, not dollars)")
        for pos, config in enumerate(configurations):
            price = terms.price(config.model)
            if price is None:
                raise r.fail("prices", f"no price for model '{config.model}' (configurations[{pos}]); add it, or a "
                             "pattern matching it")
            if not any(rate for rate in (price.input, price.output, price.tokens)):  # known before any call
                raise r.fail(f"prices.{price.pattern}", f"every call of '{config.model}' (configurations[{pos}]) "
                             "would cost $0, which leaves the online cost bound lambda at 0, so no budget can be "
                             "planned on it; give its price, or charge tokens (cost: tokens)")
        if shadowed := terms.shadowed(c.model for c in configurations):
            raise r.fail(*shadowed)
    return terms


def _budget_of(r: _Reader, raw: dict[str, Any], unit: str) -> dict[str, float]:
    """``budget`` (the whole spend, in the cost unit) or ``rho``; ``budget_tokens: N`` is ``budget: {unit: N}``
    for a cost in tokens or completion tokens."""
    if sum(k in raw for k in ("budget_tokens", "budget", "rho")) != 1:
        raise r.fail("budget_tokens" if "budget_tokens" in raw else "budget",
                     f"give either budget_tokens (or budget: {{{unit}: N}}: the whole spend, profiling included) or "
                     "rho (the method's budget as rho * K * mean profiling cost, on top of profiling)")
    if "rho" in raw:
        return {"rho": r.number(raw["rho"], "rho", positive=True, maximum=1e9)}
    if "budget_tokens" in raw:
        if unit == "usd":
            raise r.fail("budget_tokens", "the cost is in usd (cost: usd); state budget: {usd: X}")
        return {"budget": r.number(raw["budget_tokens"], "budget_tokens", positive=True, maximum=1e15)}
    stated, values = _budget(r, raw["budget"], False)
    if stated != unit:
        raise r.fail(f"budget.{stated}", f"the cost is in {unit} (cost: {unit}); state the budget in it, or declare "
                                         f"cost: {stated}")
    if len(values) != 1:
        raise r.fail(f"budget.{stated}", f"a live run has one budget, got {list(values)}")
    return {"budget": values[0]}


def parse_live(raw: Any, source: str, base: Path, overrides: dict[str, Any] | None = None,
               collect: bool = False) -> LiveConfig:
    r = _Reader(source)
    raw = dict(r.check_keys(raw, TOP, ""))
    for key, value in (overrides or {}).items():
        if key == "base_url":
            raw["endpoint"] = {**(raw.get("endpoint") or {}), "base_url": value}
        else:
            raw[key] = value
    name = _label(r, raw.get("name", Path(source).stem), "name")
    task = dict(r.check_keys(raw.get("task"), {"kind", "path", "labels", "dataset", "id_field", "prompts",
                                               "answer_field", "extract", "normaliser", "choices", "name"}, "task"))
    kind = r.text(task.get("kind"), "task.kind", tuple(TASKS))
    if kind in ("gsm8k", "piqa", "template"):
        task["path"] = _path(r, task.get("path"), "task.path", base)
    if kind == "piqa" and task.get("labels") is not None:
        task["labels"] = _path(r, task["labels"], "task.labels", base)
    if kind == "replay":
        task["dataset"] = _path(r, task.get("dataset"), "task.dataset", base, folder=True)
    spec = dict(r.check_keys(raw.get("endpoint") or {}, ENDPOINT_KEYS, "endpoint"))
    if "base_url" not in spec:
        raise r.fail("endpoint.base_url", "missing; give the server's URL (e.g. http://127.0.0.1:8000/v1) or "
                     "--base-url")
    endpoint = Endpoint(
        base_url=_base_url(r, spec["base_url"]),
        api_key_env=_key_variable(r, spec["api_key_env"]) if spec.get("api_key_env") else None,
        timeout_s=r.number(spec.get("timeout_s", 120.0), "endpoint.timeout_s", positive=True, maximum=3600),
        max_retries=r.number(spec.get("max_retries", 6), "endpoint.max_retries", integer=True, minimum=0,
                             maximum=100),
        backoff_s=r.number(spec.get("backoff_s", 0.5), "endpoint.backoff_s", minimum=0, maximum=600),
        max_backoff_s=r.number(spec.get("max_backoff_s", 30.0), "endpoint.max_backoff_s", minimum=0, maximum=3600),
        concurrency=r.number(spec.get("concurrency", 4), "endpoint.concurrency", integer=True, minimum=1,
                             maximum=MAX_CONCURRENCY),
        max_reply_bytes=r.number(spec.get("max_reply_bytes", 8 * 2**20), "endpoint.max_reply_bytes", integer=True,
                                 minimum=1024, maximum=2**31),
        max_failures=r.number(spec.get("max_failures", 5), "endpoint.max_failures", integer=True, minimum=1,
                              maximum=10**6),
        charge_failed=r.text(spec.get("charge_failed", "worst-case"), "endpoint.charge_failed", CHARGE_FAILED),
    )
    if ("configurations" in raw) == ("configurations_from" in raw):
        raise r.fail("configurations", "give either 'configurations' (a list) or 'configurations_from' (a "
                     "dataset folder whose configurations to use)")
    if "configurations_from" in raw:
        configured = _path(r, raw["configurations_from"], "configurations_from", base, folder=True)
        configurations = _configurations_from(r, configured, raw.get("arms"))
        if kind == "replay" and Path(configured).resolve() != Path(task["dataset"]).resolve():
            _, logged = _logged(task["dataset"])
            configurations = tuple(_replayed(r, c, f"configurations_from ({c.name})", task["dataset"], logged)
                                   for c in configurations)
    else:
        if "arms" in raw:
            raise r.fail("arms", "filters 'configurations_from'; list the configurations you want instead")
        items = []
        logged = _logged(task["dataset"])[1] if kind == "replay" else ()
        for pos, item in enumerate(r.sequence(raw["configurations"], "configurations", allow_scalar=False)):
            key = f"configurations[{pos}]"
            item = r.check_keys(item, CONFIG_KEYS, key)
            for need in ("model", "temperature", "max_tokens"):
                if need not in item:
                    raise r.fail(f"{key}.{need}", "missing")
            model = r.text(item["model"], f"{key}.model")
            temperature = r.number(item["temperature"], f"{key}.temperature", minimum=0, maximum=10)
            limit = r.number(item["max_tokens"], f"{key}.max_tokens", integer=True, positive=True, maximum=10**7)
            prompting = r.text(item.get("prompting", "direct"), f"{key}.prompting",
                               PROMPTINGS if kind in ("gsm8k", "piqa") else None)
            if kind == "replay":  # one of the dataset's configurations, named by its config_id unless named here
                label = _label(r, item["name"], f"{key}.name") if "name" in item else ""
                items.append(_replayed(r, Configuration(label, model, temperature, limit, prompting), key,
                                       task["dataset"], logged))
                continue
            # a model id's '/' (Qwen/Qwen2.5-1.5B-Instruct, as vLLM names models) written '--' in the derived name,
            # which names files and CSV rows
            derived = f"{model.replace('/', '--')}_t{temperature}_g{limit}_{prompting}"
            label = _label(r, item.get("name", derived), f"{key}.name")
            items.append(Configuration(label, model, temperature, limit, prompting))
        configurations = tuple(items)
    names = [c.name for c in configurations]
    if len(set(names)) != len(names):
        raise r.fail("configurations", f"two configurations are named '{next(n for n in names if names.count(n) > 1)}'")
    if len(configurations) < 2 and not collect:
        raise r.fail("configurations", "a method compares at least 2 configurations")
    terms = _terms(r, raw, configurations)
    out: dict[str, Any] = {}
    if collect:  # a stated budget would be ignored: collect pays for every configuration on every instance asked
        stated = next((k for k in ("budget_tokens", "budget", "rho") if k in raw), None)
        if stated is not None:
            raise r.fail(stated, "cabench collect evaluates every configuration on every instance asked (evaluation: "
                         "{instances: N} limits them) and keeps no budget; drop it, or run `cabench live` to spend a "
                         "budget")
    if not collect:
        setting = r.text(raw.get("setting", "online"), "setting", ("online", "psi"))
        method_raw = raw.get("method", registry.proposed(setting))
        method_spec = {"name": method_raw} if isinstance(method_raw, str) else dict(r.check_keys(
            method_raw, {"name", "s_r", "s_c", "eta", "alpha", "mode"} if setting == "online" else {"name"},
            "method"))
        method_name = r.text(method_spec.get("name"), "method.name",
                             registry.choices(str(method_spec.get("name")), setting))
        try:
            method = (OnlineMethod(**{**method_spec, "name": method_name}) if setting == "online"
                      else PsiMethod(method_name))
        except (TypeError, CabenchError) as exc:
            raise r.fail("method", str(exc)) from None
        if (refused := unused(method, [k for k in method_spec if k != "name"])) is not None:
            raise r.fail(f"method.{refused[0]}", refused[1])
        unfit = quality_not_first(terms, registry.quality_first([method.name], setting))
        if unfit:
            raise r.fail("method", unfit)
        out = {"setting": setting, "method": method,
               "cost_mode": r.text(raw.get("cost_mode", "deterministic"), "cost_mode", COST_MODES),
               **_budget_of(r, raw, terms.cost)}
        order = r.text(raw.get("instance_order", "permutation"), "instance_order", ("permutation", "replay"))
        if order == "replay" and kind != "replay":
            raise r.fail("instance_order", "'replay' follows the replay engine's streams; it needs task.kind: replay")
        out["instance_order"] = order
        out["repetition"] = r.number(raw.get("repetition", 0), "repetition", integer=True, minimum=0)
    profiling = raw.get("profiling", {"instances": 5} if not collect else {"instances": 0})
    if profiling == "dataset-split":
        if kind != "replay":
            raise r.fail("profiling", "'dataset-split' uses the replay dataset's profiling split; it needs "
                         "task.kind: replay")
        prof: Any = "dataset-split"
        prof_seed = 0
    else:
        spec = r.check_keys(profiling, {"instances", "seed"}, "profiling")
        prof = r.number(spec.get("instances", 5), "profiling.instances", integer=True, minimum=0 if collect else 1,
                        maximum=10**6)
        prof_seed = r.number(spec.get("seed", 0), "profiling.seed", integer=True, minimum=0)
    evaluation = raw.get("evaluation")
    if evaluation is not None:
        spec = r.check_keys(evaluation, {"instances"}, "evaluation")
        evaluation = r.number(spec.get("instances"), "evaluation.instances", integer=True, minimum=1, maximum=10**8)
    return LiveConfig(
        name=name, source=source, task=task, endpoint=endpoint, configurations=configurations,
        profiling=prof, profiling_seed=prof_seed, evaluation=evaluation,
        terms=terms,
        latency=r.text(raw.get("latency", "measured"), "latency", ("measured", "reported")),
        seed=r.number(raw.get("seed", 0), "seed", integer=True, minimum=0, maximum=2**63 - 1),
        output=r.text(raw["output"], "output") if raw.get("output") is not None else None, **out)


def load_live(path: str | Path, overrides: dict[str, Any] | None = None, collect: bool = False) -> LiveConfig:
    path = Path(path)
    return parse_live(load_config_file(path), str(path), path.parent, overrides, collect)
