"""Which config a live run folder belongs to: ``live.json`` holds the config's digest, and a run of another
config into the folder is refused in one line (a lowered budget too) — but for a raised budget while the method has
made no call (a run stopped because its budget did not cover profiling resumes with a larger one, keeping the
profiling calls paid)."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

import cabench
from cabench.data.terms import PAPER_TERMS
from cabench.errors import CabenchError
from cabench.jsonio import strict_dumps, strict_loads
from cabench.live.config import TOKEN_COUNTS, LiveConfig
from cabench.storage import write_atomic
from cabench.units import amount


def config_digest(cfg: LiveConfig, budget: bool = True, as_given: bool = False) -> str:
    """What makes two live runs the same run (the endpoint's URL and concurrency may change on resume).

    The task's files count by their real paths, however the config reached them (``../../data/piqa`` from one
    folder, the absolute path from another); with ``as_given``, by their paths as the config resolved them, as
    folders written before were keyed.

    The method counts by its name and parameters (its registry entry holds functions, whose text differs from
    one process to the next). A run on the paper's objectives with a cost in tokens is hashed as configs
    without declared terms were (``budget_tokens``, ``cost: total|completion``), so that its folder resumes
    across versions.
    """
    data = asdict(cfg)
    for key in ("endpoint", "source", "output", "terms"):
        data.pop(key)
    if not as_given:  # the paths the config resolved (cabench.live.config.parse_live), as real paths
        kind = data["task"].get("kind")
        resolved = {"replay": ("dataset",), "piqa": ("path", "labels")}.get(kind, ("path",) if kind in (
            "gsm8k", "template") else ())
        data["task"] = {k: os.path.realpath(v) if k in resolved and isinstance(v, str) else v
                        for k, v in data["task"].items()}
    if data["method"] is not None:
        data["method"].pop("entry", None)
    stated = data.pop("budget")
    if budget:
        data["budget_tokens"] = stated
    counts = {unit: name for name, unit in TOKEN_COUNTS.items()}
    terms = cfg.terms
    if terms.objectives == PAPER_TERMS.objectives and not terms.prices and terms.cost in counts:
        data["cost"] = counts[terms.cost]
    else:
        data["terms"] = terms.describe()
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def check_identity(cfg: LiveConfig, out: Path) -> None:
    """Write ``live.json`` into a new folder; refuse a folder that holds the run of another config."""
    digest, but_budget = config_digest(cfg), config_digest(cfg, budget=False)
    given, given_but_budget = config_digest(cfg, as_given=True), config_digest(cfg, budget=False, as_given=True)
    prices = resolved_prices(cfg)
    marker = out / "live.json"
    if marker.exists():
        try:
            held = json.loads(marker.read_text(encoding="utf-8"))
        except (ValueError, RecursionError):
            held = None
        if not isinstance(held, dict):
            raise CabenchError(f"{marker}: damaged (not the JSON object cabench writes); it names the config this "
                               "folder belongs to: restore it, or pass another --out to start a new run")
        same = held.get("config_digest") in (digest, given)  # (a folder keyed by its task's paths as given)
        if not same and held.get("digest_but_budget") not in (but_budget, given_but_budget):
            raise CabenchError(f"{out}: holds the run of another config ({held.get('name')}, {held.get('source')}); "
                               "pass another --out to start a new run")
        _check_prices(held, prices, out)
        if same:
            if ("prices" in held or not prices) and held.get("config_digest") == digest:
                return
            # a folder from before live.json recorded prices: they are recorded now, and checked from then on
        else:
            _check_budget(held, cfg, out)
    write_atomic(marker, strict_dumps({"name": cfg.name, "source": cfg.source, "config_digest": digest,
                                       "digest_but_budget": but_budget, "budget": cfg.budget,
                                       **({"prices": prices} if prices else {}),
                                       "cabench_version": cabench.__version__}, indent=2) + "\n")


def _check_budget(held: dict, cfg: LiveConfig, out: Path) -> None:
    """The same config but for its budget: refused once the method has called (its calls were chosen under the
    other), and unless the budget is raised."""
    if _method_called(out):
        raise CabenchError(f"{out}: holds this run with another budget, and its method has made calls chosen "
                           "under that budget, so it resumes only with the same one; restore the budget, or "
                           "pass another --out to start a new run")
    before = _held_budget(held, out, cfg)
    if before is not None and not (cfg.budget is not None and cfg.budget > before):
        now = "stated as rho" if cfg.budget is None else amount(cfg.budget, cfg.terms.cost)
        raise CabenchError(f"{out}: holds this run with a budget of {amount(before, cfg.terms.cost)}, and a run "
                           f"resumes only with a larger one (this config's is {now}); raise the budget, or pass "
                           "another --out to start a new run")


def resolved_prices(cfg: LiveConfig) -> dict[str, dict[str, float]]:
    """Each configuration's model and the price it is charged at (its own entry, else the first pattern matching it).
    The digest hashes the price table as a mapping, which loses the patterns' order, and the order decides a
    model's price: ``live.json`` records the prices themselves."""
    priced = ((c.model, cfg.terms.price(c.model)) for c in cfg.configurations) if cfg.terms.prices else ()
    return {model: {k: float(v) for k, v in price.describe().items()} for model, price in priced if price is not None}


def _check_prices(held: dict, prices: dict[str, dict[str, float]], out: Path) -> None:
    """Refuse a folder whose run charged its models at other prices (a folder from before ``live.json`` recorded
    them is checked by its digest alone)."""
    before = held.get("prices")
    if before is None or before == prices:
        return
    changed = next((m for m in sorted(set(before) | set(prices)) if before.get(m) != prices.get(m)), "")
    raise CabenchError(f"{out}: holds this run with other prices for its models ({changed}: was "
                       f"{before.get(changed)}, now {prices.get(changed)}; a model's price is its own entry, else the "
                       "first pattern that matches it, so the patterns' order counts); restore the prices, or pass "
                       "another --out to start a new run")


def _held_budget(held: dict, out: Path, cfg: LiveConfig) -> float | None:
    """The budget the folder's run was last given: ``live.json``'s, else (a folder written before it recorded one)
    ``spend.json``'s; None where neither says (a budget stated as rho)."""
    value = held.get("budget")
    if value is None and (out / "spend.json").is_file():
        try:
            value = strict_loads((out / "spend.json").read_text(encoding="utf-8")).get(f"budget_{cfg.terms.cost}")
        except (ValueError, RecursionError, AttributeError, OSError):
            value = None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _method_called(out: Path) -> bool:
    """Whether the journal of ``out`` records a call of the method (key ``e:``): its asks depend on the budget, so
    a run whose method has started never changes its budget."""
    journal = out / "calls.jsonl"
    if not journal.is_file():
        return False
    with journal.open("rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                continue  # a last line cut by a kill: the journal drops it on loading
            try:
                record = strict_loads(line)
            except (ValueError, RecursionError):
                return True  # a damaged journal: not a run to give another budget
            if not isinstance(record, dict) or str(record.get("key", "e:")).startswith("e:"):
                return True
    return False
