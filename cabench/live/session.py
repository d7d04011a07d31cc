"""``cabench live`` and ``cabench collect``: calls to an endpoint under a hard token budget, journaled.

Data flow: task and configurations -> calls (:mod:`cabench.live.client`) ->
journal (``calls.jsonl``, one line per finished call, fsync'd) -> the policy
(:mod:`cabench.policy`) -> ``logs.csv`` / ``spend.json`` / ``decision.json``.

Budget: a call is made only if the tokens already spent, plus the worst case
of every call in flight, plus the worst case of this call fit the budget
(:meth:`Task.worst_case_tokens`). When the quick check fails, the call waits
for the calls before it and is decided on the exact spend, so the decision
does not depend on timing. Profiling (a few instances per configuration, as
in the paper) comes first and counts against the budget.

Resuming: every call has a key (its phase and position in the sequence of
asks). A re-run with the same config replays the journal: the policy asks the
same calls in the same order, and journaled calls are not made again.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import yaml

import cabench
from cabench.data.dataset import efficiency_reward
from cabench.errors import CabenchError
from cabench.live.client import ChatClient, Outcome
from cabench.live.config import Configuration, LiveConfig
from cabench.live.tasks import Instance, Task, gsm8k_task, piqa_task, replay_task, template_task
from cabench.policy import WAIT, OnlinePolicy, PsiPolicy
from cabench.quantize import quantize
from cabench.storage import folder_lock, write_atomic

LOG_COLUMNS = ("config_id", "model", "temperature", "max_new_tokens", "prompting", "instance_id", "correct",
               "latency_s", "tokens")


def build_task(cfg: LiveConfig) -> Task:
    kind = cfg.task["kind"]
    if kind == "gsm8k":
        return gsm8k_task(Path(cfg.task["path"]))
    if kind == "piqa":
        labels = cfg.task.get("labels")
        return piqa_task(Path(cfg.task["path"]), Path(labels) if labels else None)
    if kind == "replay":
        return replay_task(Path(cfg.task["dataset"]))
    return template_task(cfg.task, f"{cfg.source}: task")


def config_digest(cfg: LiveConfig) -> str:
    """What makes two live runs the same run (the endpoint's URL and concurrency may change on resume)."""
    data = asdict(cfg)
    data.pop("endpoint")
    data.pop("source")
    data.pop("output")
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


class Journal:
    """``calls.jsonl``: one JSON line per finished call, flushed and fsync'd before the call counts."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "calls.jsonl"
        self.done: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut by a kill: that call was not finished
                    self.done[record["key"]] = record
        self._lock = threading.Lock()
        self._fh = open(self.path, "a", encoding="utf-8")

    def record(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._fh.write(json.dumps(record) + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self.done[record["key"]] = record

    def close(self) -> None:
        self._fh.close()


class LogFile:
    """``logs.csv``: canonical rows of the successful calls, appended and fsync'd; rebuilt from the journal."""

    def __init__(self, folder: Path, records: list[dict[str, Any]]) -> None:
        self.path = folder / "logs.csv"
        self.seen: dict[tuple[str, str], int] = {}
        lines = [",".join(LOG_COLUMNS)]
        for record in records:
            if record.get("ok"):
                lines.append(self._line(record))
        write_atomic(self.path, "\n".join(lines) + "\n")
        self._lock = threading.Lock()
        self._fh = open(self.path, "a", encoding="utf-8")

    def _line(self, r: dict[str, Any]) -> str:
        key = (r["config"], r["instance"])
        n = self.seen.get(key, 0)
        self.seen[key] = n + 1
        instance = r["instance"] if n == 0 else f"{r['instance']}#{n + 1}"  # a repeated evaluation
        cells = [r["config"], r["model"], repr(float(r["temperature"])), str(int(r["max_tokens"])), r["prompting"],
                 instance, repr(float(r["correct"])), repr(float(r["latency_s"])), repr(float(r["tokens"]))]
        return ",".join(_csv_cell(c) for c in cells)

    def append(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._fh.write(self._line(record) + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def _csv_cell(text: str) -> str:
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if any(c in text for c in ',"\n') else text


class BudgetStop(Exception):
    """The next call does not fit the token budget."""


class Caller:
    """Makes calls concurrently under the budget, journals them, and hands results back in key order."""

    def __init__(self, cfg: LiveConfig, task: Task, client: ChatClient | None, journal: Journal, logs: LogFile,
                 budget: float | None, progress: Callable[[float], None]) -> None:
        self.cfg, self.task, self.client, self.journal, self.logs = cfg, task, client, journal, logs
        self.budget = budget
        self.spent = 0.0  # tokens of every finished call (made now or found in the journal)
        self.reserved = 0.0  # worst cases of the calls in flight
        self.in_flight: dict[Future, tuple[str, float]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.pool = ThreadPoolExecutor(max_workers=cfg.endpoint.concurrency)
        self.progress = progress
        self.made = 0

    def _body(self, config: Configuration, instance: Instance) -> dict[str, Any]:
        return {"model": config.model, "messages": self.task.messages(instance, config.prompting),
                "temperature": config.temperature, "max_tokens": config.max_tokens}

    def _call(self, key: str, config: Configuration, instance: Instance, occurrence: int) -> dict[str, Any]:
        assert self.client is not None
        outcome: Outcome = self.client.chat(self._body(config, instance))
        record: dict[str, Any] = {
            "key": key, "config": config.name, "model": config.model, "temperature": config.temperature,
            "max_tokens": config.max_tokens, "prompting": config.prompting, "instance": instance.id,
            "occurrence": occurrence, "ok": outcome.ok, "attempts": [asdict(a) for a in outcome.attempts],
            "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
        }
        if outcome.ok:
            prompt = float(outcome.prompt_tokens or 0)
            completion = float(outcome.completion_tokens or 0)
            tokens = completion if self.cfg.cost == "completion" else prompt + completion
            latency = outcome.latency_s
            if self.cfg.latency == "reported" and outcome.reported_latency_s is not None:
                latency = float(outcome.reported_latency_s)
            record.update({"correct": self.task.score(instance, outcome.reply), "latency_s": latency,
                           "measured_latency_s": outcome.latency_s, "prompt_tokens": prompt,
                           "completion_tokens": completion, "tokens": tokens, "reply": outcome.reply[:2000]})
            if tokens <= 0:
                record.update({"ok": False, "error": "the endpoint reported no token usage"})
        else:
            record.update({"error": outcome.error, "tokens": 0.0})
        return record

    def fits(self, worst: float) -> bool:
        return self.budget is None or self.spent + self.reserved + worst <= self.budget

    def submit(self, key: str, config: Configuration, instance: Instance, occurrence: int,
               retry_failed: bool = False) -> None:
        """Start (or take from the journal) one call; raise :class:`BudgetStop` if it cannot fit.

        ``retry_failed``: a call the journal records as failed is made again (profiling and collect,
        where every call is needed); the method's calls keep their journaled outcome, failed or not, so
        that a resumed run asks the same calls in the same order.
        """
        done = self.journal.done.get(key)
        if done is not None and (done.get("ok") or not retry_failed):
            if (done["config"], done["instance"]) != (config.name, instance.id):
                raise CabenchError(f"{self.journal.path}: call {key} was {done['config']} on {done['instance']}, "
                                   f"now {config.name} on {instance.id}; this folder holds another run")
            self.results[key] = done
            self._spend(done)
            return
        worst = self.task.worst_case_tokens(instance, config.prompting, config.max_tokens, config.name)
        if not self.fits(worst):
            self.drain()  # decide on the exact spend: independent of timing
            if not self.fits(worst):
                raise BudgetStop(key)
        if self.client is None:
            raise CabenchError("no endpoint to call")
        future = self.pool.submit(self._call, key, config, instance, occurrence)
        self.in_flight[future] = (key, worst)
        self.reserved += worst

    def wait_one(self) -> None:
        if not self.in_flight:
            return
        finished, _ = wait(list(self.in_flight), return_when=FIRST_COMPLETED)
        for future in finished:
            key, worst = self.in_flight.pop(future)
            self.reserved -= worst
            record = future.result()
            self.journal.record(record)
            if record.get("ok"):
                self.logs.append(record)
            self.made += 1
            self.results[key] = record
            self._spend(record)

    def drain(self) -> None:
        while self.in_flight:
            self.wait_one()

    def _spend(self, record: dict[str, Any]) -> None:
        self.spent += float(record.get("tokens") or 0.0)
        self.progress(self.spent)

    def take(self, key: str) -> dict[str, Any] | None:
        """The result of ``key`` if finished, else None."""
        return self.results.pop(key, None)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def run_session(cfg: LiveConfig, out: Path, quiet: bool = False, collect: bool = False) -> dict[str, Any]:
    """Run ``cabench live`` (or ``collect``) into ``out``; resumable. Returns ``spend.json``'s content."""
    out.mkdir(parents=True, exist_ok=True)
    with folder_lock(out):
        return _run_locked(cfg, out, quiet, collect)


def _identity_check(cfg: LiveConfig, out: Path) -> None:
    digest = config_digest(cfg)
    marker = out / "live.json"
    if marker.exists():
        held = json.loads(marker.read_text())
        if held.get("config_digest") != digest:
            raise CabenchError(f"{out}: holds the run of another config ({held.get('name')}, {held.get('source')}); "
                               "pass another --out to start a new run")
    else:
        write_atomic(marker, json.dumps({"name": cfg.name, "source": cfg.source, "config_digest": digest,
                                         "cabench_version": cabench.__version__}, indent=2) + "\n")


def _run_locked(cfg: LiveConfig, out: Path, quiet: bool, collect: bool) -> dict:
    _identity_check(cfg, out)
    task = build_task(cfg)
    journal = Journal(out)
    logs = LogFile(out, sorted(journal.done.values(), key=lambda r: _key_order(r["key"])))
    ids = [inst.id for inst in task.instances]
    by_id = {inst.id: inst for inst in task.instances}
    if cfg.profiling == "dataset-split":
        from cabench.data.dataset import load_dataset

        ds = load_dataset(cfg.task["dataset"])
        prof_ids, eval_ids = list(ds.profiling_ids), list(ds.evaluation_ids)
    else:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(cfg.profiling_seed)))
        perm = [ids[i] for i in rng.permutation(len(ids))]
        n_prof = int(cfg.profiling)
        if n_prof >= len(ids) and not collect:
            raise CabenchError(f"{cfg.source}: profiling.instances is {n_prof} but the task has {len(ids)} "
                               "instances; leave some for evaluation")
        prof_ids, eval_ids = sorted(perm[:n_prof]), sorted(perm[n_prof:])
    if cfg.evaluation is not None:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([cfg.seed, 11])))
        eval_ids = sorted(rng.choice(eval_ids, size=min(cfg.evaluation, len(eval_ids)), replace=False).tolist())
    client = ChatClient(cfg.endpoint, cfg.seed)
    budget = None if collect else cfg.budget_tokens
    bar = None
    if not quiet:
        from tqdm import tqdm

        bar = tqdm(total=budget, unit="tok", desc=f"{cfg.name} spend", leave=False, dynamic_ncols=True)

    def progress(spent: float) -> None:
        if bar is not None:
            bar.update(round(spent) - bar.n)  # tqdm redraws at most every mininterval

    caller = Caller(cfg, task, client, journal, logs, budget, progress)
    facts: dict[str, Any] = {"stopped_by": None}
    try:
        if collect:
            _collect(cfg, caller, by_id, sorted(set(prof_ids) | set(eval_ids)) if cfg.profiling else eval_ids)
            facts["stopped_by"] = "complete"
            result = _finish(cfg, out, caller, journal, facts, None, task, collect=True)
        else:
            profile = _profile(cfg, caller, by_id, prof_ids)
            facts.update(profile["facts"])
            decision = _method(cfg, caller, by_id, eval_ids, profile, facts)
            result = _finish(cfg, out, caller, journal, facts, decision, task)
    finally:
        caller.drain()
        caller.close()
        journal.close()
        logs.close()
        if client is not None:
            client.close()
        if bar is not None:
            bar.close()
    return result


def _key_order(key: str) -> tuple[int, tuple[int, ...]]:
    """Journal keys in the order of the run: profiling (or collect) calls, then the method's."""
    phase, _, rest = key.partition(":")
    return (1 if phase == "e" else 0, tuple(int(x) for x in rest.split(":")))


def _profile(cfg: LiveConfig, caller: Caller, by_id: dict[str, Instance], prof_ids: list[str]) -> dict[str, Any]:
    """Every configuration on the profiling instances: c_i, c_max, lambda and the latency percentiles."""
    k = len(cfg.configurations)
    try:
        keys = _grid(cfg, caller, by_id, prof_ids, "p")
    except BudgetStop:
        raise CabenchError(f"{cfg.source}: the budget does not cover profiling ({k} configurations x "
                           f"{len(prof_ids)} instances); raise budget_tokens or lower profiling.instances") from None
    records = {key: caller.take(key) for key in keys}
    failed = [key for key, r in records.items() if not r.get("ok")]
    if failed:
        first = records[failed[0]]
        raise CabenchError(f"{cfg.source}: {len(failed)} profiling calls failed (e.g. {first['config']} on "
                           f"{first['instance']}: {first.get('error')}); re-run to retry them after fixing the "
                           "endpoint") from None
    tokens = np.array([[records[f"p:{c}:{j}"]["tokens"] for j in range(len(prof_ids))] for c in range(k)], float)
    latency = np.array([[records[f"p:{c}:{j}"]["latency_s"] for j in range(len(prof_ids))] for c in range(k)], float)
    tau5, tau95 = float(np.percentile(latency, 5)), float(np.percentile(latency, 95))
    if not tau95 > tau5:
        raise CabenchError(f"{cfg.source}: the profiling latencies do not vary (5th = 95th percentile = {tau5:g} s); "
                           "profile more instances")
    c_max = float(tokens.max())
    lam = float(quantize(tokens.min() / c_max))
    profile_cost = tokens.mean(axis=1)
    spent = float(sum(r["tokens"] for r in records.values()))
    return {"profile_cost": profile_cost, "c_max": c_max, "lam": lam, "tau5": tau5, "tau95": tau95,
            "facts": {"profiling_tokens": spent, "profiling_instances": len(prof_ids), "c_max": c_max, "lambda": lam,
                      "tau5": tau5, "tau95": tau95,
                      "profile_cost": {c.name: float(v) for c, v in zip(cfg.configurations, profile_cost)}}}


def _method(cfg: LiveConfig, caller: Caller, by_id: dict[str, Instance], eval_ids: list[str], profile: dict,
            facts: dict[str, Any]) -> dict[str, Any]:
    """The method on the evaluation instances with what the budget leaves after profiling."""
    k = len(cfg.configurations)
    cost = profile["profile_cost"]
    if cfg.rho is not None:
        method_tokens = float(cfg.rho) * k * float(np.mean(cost))  # B = rho K cbar (SPEC §3)
        caller.budget = caller.spent + method_tokens
        rho = float(cfg.rho)
    else:
        method_tokens = float(cfg.budget_tokens) - caller.spent
        if method_tokens <= 0:
            raise CabenchError(f"{cfg.source}: profiling spent {caller.spent:.0f} of the {cfg.budget_tokens:.0f}-token "
                               "budget; nothing is left for the method")
        rho = method_tokens / (k * float(np.mean(cost)))
    facts["budget_tokens"] = caller.budget
    facts["method_tokens"] = method_tokens
    facts["rho"] = rho
    if cfg.setting == "online":
        c_max = profile["c_max"]
        budget = (float(cfg.rho) * k * float(np.mean(cost)) if cfg.rho is not None else method_tokens) / c_max
        policy: Any = OnlinePolicy(cfg.method, 2, budget, [float(c) / c_max for c in cost], profile["lam"], rho)
        charge = lambda tokens: float(quantize(min(tokens / c_max, 1.0)))  # noqa: E731  c~ (SPEC §2.3)
    else:
        top = float(cost.max())
        costs = [float(x) for x in quantize(cost / top)]
        budget = rho * sum(costs) if cfg.rho is not None else method_tokens / top
        try:
            policy = PsiPolicy(cfg.method, 2, costs, budget, cfg.cost_mode == "stochastic", rho)
        except CabenchError as exc:
            raise CabenchError(f"{cfg.source}: {exc}; raise the budget") from None
        charge = lambda tokens: float(quantize(tokens / top))  # noqa: E731
    order = _stream(cfg, eval_ids)
    asked = [0] * k
    queue: list[tuple[str, int]] = []  # asks not yet told, in order
    seq = 0
    stopped = False
    while True:
        if not stopped:
            arm = policy.ask()
            while arm is not None and arm != WAIT:
                index, occurrence = order(arm, asked[arm])
                key = f"e:{seq}"
                try:
                    caller.submit(key, cfg.configurations[arm], by_id[eval_ids[index]], occurrence)
                except BudgetStop:
                    stopped = True
                    facts["stopped_by"] = "token budget"
                    break
                asked[arm] += 1
                seq += 1
                queue.append((key, arm))
                if len(caller.in_flight) >= cfg.endpoint.concurrency:
                    break
                arm = policy.ask()
            if arm is None and not queue:
                facts["stopped_by"] = facts["stopped_by"] or "method"
                break
        if not queue:
            break
        while queue and queue[0][0] in caller.results:
            key, arm = queue.pop(0)
            record = caller.take(key)
            if record.get("ok"):
                reward = [float(quantize(record["correct"])),
                          float(quantize(efficiency_reward(np.array(record["latency_s"]), profile["tau5"],
                                                           profile["tau95"])))]
                policy.tell(arm, reward, charge(float(record["tokens"])))
            else:  # a failed call is not an outcome: ask the same configuration again, on its next instance
                policy.retract(arm)
        if queue and queue[0][0] not in caller.results:
            caller.wait_one()
    caller.drain()
    if cfg.setting == "online":
        chosen = policy.decision()
        return {"setting": "online", "method": cfg.method.name,
                "configuration": cfg.configurations[chosen].name,
                "estimates": {c.name: policy.estimates(i) for i, c in enumerate(cfg.configurations)}}
    if policy.returned is None:  # stopped by the token budget: finish the eliminations on what was seen
        policy.stop()
    return {"setting": "psi", "method": cfg.method.name,
            "pareto_set": [cfg.configurations[i].name for i in policy.returned],
            "removed": [cfg.configurations[i].name for i in policy.removed],
            "samples": {c.name: int(policy.n[i]) for i, c in enumerate(cfg.configurations)}}


def _stream(cfg: LiveConfig, eval_ids: list[str]) -> Callable[[int, int], tuple[int, int]]:
    """Which evaluation instance the n-th pull of an arm reads: (position in eval_ids, occurrence)."""
    n = len(eval_ids)
    if cfg.instance_order == "replay":  # the replay engine's bootstrap streams (SPEC §4)
        from cabench.streams import stream_index, stream_keys

        arm_ids = np.array([c.arm_id for c in cfg.configurations])
        keys = stream_keys(cfg.seed, np.array([cfg.repetition]), arm_ids)[0]
        return lambda arm, count: (int(stream_index(keys[arm:arm + 1], np.array([count]), n)[0]), 0)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([cfg.seed, 7])))
    orders = [rng.permutation(n) for _ in cfg.configurations]  # each configuration's own instance order
    return lambda arm, count: (int(orders[arm][count % n]), count // n)


def _grid(cfg: LiveConfig, caller: Caller, by_id: dict[str, Instance], ids: list[str], phase: str) -> list[str]:
    """Every configuration on every instance of ``ids`` (keys ``<phase>:<config>:<instance>``), all finished."""
    keys = []
    for j, iid in enumerate(ids):
        for c, config in enumerate(cfg.configurations):
            key = f"{phase}:{c}:{j}"
            caller.submit(key, config, by_id[iid], 0, retry_failed=True)
            keys.append(key)
            while len(caller.in_flight) >= cfg.endpoint.concurrency:
                caller.wait_one()
    caller.drain()
    return keys


def _collect(cfg: LiveConfig, caller: Caller, by_id: dict[str, Instance], ids: list[str]) -> None:
    for key in _grid(cfg, caller, by_id, ids, "c"):
        caller.take(key)


def _finish(cfg: LiveConfig, out: Path, caller: Caller, journal: Journal, facts: dict[str, Any],
            decision: dict[str, Any] | None, task: Task, collect: bool = False) -> dict[str, Any]:
    records = list(journal.done.values())
    attempts = [a for r in records for a in r.get("attempts", [])]
    spend = {
        "budget_tokens": facts.get("budget_tokens"),
        "spent_tokens": float(sum(float(r.get("tokens") or 0.0) for r in records)),
        "profiling_tokens": facts.get("profiling_tokens", 0.0),
        "calls": sum(1 for r in records if r.get("ok")),
        "failed_calls": sum(1 for r in records if not r.get("ok")),
        "attempts": len(attempts),
        "failed_attempts": sum(1 for a in attempts if a["status"] != "ok"),
        "calls_made_this_run": caller.made,
        "stopped_by": facts.get("stopped_by"),
        **{k: v for k, v in facts.items() if k not in ("stopped_by", "budget_tokens", "profiling_tokens")},
    }
    write_atomic(out / "spend.json", json.dumps(spend, indent=2) + "\n")
    if decision is not None:
        write_atomic(out / "decision.json", json.dumps(decision, indent=2) + "\n")
    meta = {
        "name": cfg.name, "description": f"{'Collected' if collect else 'Live'} evaluation of {len(cfg.configurations)}"
        f" configurations on task {task.name}",
        "provenance": {"format": "cabench live", "endpoint": cfg.endpoint.base_url, "task": dict(cfg.task),
                       "configurations": [asdict(c) for c in cfg.configurations], "config": cfg.source,
                       "cost": cfg.cost, "latency": cfg.latency, "cabench_version": cabench.__version__,
                       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
        "surrogate": False, "licence": "unspecified",
        "missing": "drop-instances",
    }
    rect = _rectangle(records, len(cfg.configurations))
    if rect >= 2:
        meta["split"] = {"profiling_size": max(1, rect // 2), "seed": 0}
    write_atomic(out / "dataset.yaml", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=88))
    return spend


def _rectangle(records: list[dict[str, Any]], k: int) -> int:
    """Instances every configuration has a successful first evaluation of."""
    by_instance: dict[str, set[str]] = {}
    for r in records:
        if r.get("ok") and r.get("occurrence", 0) == 0:
            by_instance.setdefault(r["instance"], set()).add(r["config"])
    return sum(1 for s in by_instance.values() if len(s) == k)
