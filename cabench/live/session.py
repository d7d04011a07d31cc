"""``cabench live`` and ``cabench collect``: calls to an endpoint under a hard budget, journaled.

Data flow: task and configurations -> calls (:mod:`cabench.live.client`) ->
journal (``calls.jsonl``, one line per finished call, fsync'd) -> the policy
(:mod:`cabench.policy`) -> ``logs.csv`` / ``spend.json`` / ``decision.json``.

Budget: calls are made through :class:`cabench.live.caller.Caller`, which
admits every attempt at its worst case against a hard budget in the declared
cost unit (tokens, completion tokens or dollars from a price table) and charges
what :mod:`cabench.live.charges` says (validated usage, worst case for suspect
and, by default, failed calls). Profiling (a few instances per configuration,
as in the paper) comes first, counts against the budget and fits the
normalisation of the declared objectives and costs.

Resuming: every call has a key (its phase and position in the sequence of
asks). A re-run with the same config replays the journal: the policy asks the
same calls in the same order, and journaled calls are not made again.
"""

from __future__ import annotations

import datetime
import json
import math
import signal
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import yaml

import cabench
from cabench.data.normalisation import Normalisation, fit_normalisation
from cabench.errors import CabenchError, Interrupted, first_three
from cabench.interrupts import signals_set
from cabench.jsonio import strict_dumps
from cabench.live.caller import BudgetStop, Caller, FailureStop, next_step
from cabench.live.client import ChatClient, public_url
from cabench.live.config import LIVE_COLUMNS, MAX_CONCURRENCY, LiveConfig
from cabench.live.identity import check_identity
from cabench.live.journal import Journal, LogFile
from cabench.live.tasks import Instance, Task, build_task
from cabench.methods.user import UserMethodError
from cabench.policy import WAIT, OnlinePolicy, PsiPolicy
from cabench.storage import LOCK_NAME, TEMPORARY, folder_lock, replaced_together
from cabench.units import LABELS, amount
from cabench.yamlio import dump_yaml, load_yaml


def run_session(cfg: LiveConfig, out: Path, quiet: bool = False, collect: bool = False) -> dict[str, Any]:
    """Run ``cabench live`` (or ``collect``) into ``out``; resumable. Returns ``spend.json``'s content."""
    _refuse_foreign(out)
    task = build_task(cfg.task, f"{cfg.source}: task")
    if task.replay is None:  # every configuration's prompting has a prompt, before the folder records this run
        for i, c in enumerate(cfg.configurations):
            if c.prompting not in task.templates:
                raise CabenchError(f"{cfg.source}: configurations[{i}].prompting: '{c.prompting}' has no prompt in "
                                   f"task.prompts (it has {', '.join(task.templates) or 'none'}); add one")
    split = _split(cfg, [inst.id for inst in task.instances], collect)  # the config's instances fit the task
    if not collect:
        rehearse(cfg)  # a method of one's own that fails, before profiling pays for its calls
    try:  # its key checked before anything is written, the folder made
        client = ChatClient(cfg.endpoint, cfg.seed)
    except CabenchError as exc:  # a key of the config's endpoint: named with the config's file, as any key is
        raise (CabenchError(f"{cfg.source}: {exc}") if str(exc).startswith("endpoint.") else exc) from None
    try:
        out.mkdir(parents=True, exist_ok=True)
        with folder_lock(out):
            return _run_locked(cfg, out, quiet, collect, task, client, split)
    except BaseException:
        client.close()  # (closing an httpx client again does nothing)
        raise


#: The most decisions :func:`rehearse` asks a method for.
REHEARSAL_ASKS = 500


def rehearse(cfg: LiveConfig) -> None:
    """Run a method of your own (``module:object``) on made-up outcomes before any call is paid for: one that
    raises, returns what its loop cannot use, or (online) whose index of an arm depends on the other arms, is
    refused in one line now, not after profiling spent its share of the budget. Every configuration gets its own
    fixed reward and cost; the method is asked until it ends, or :data:`REHEARSAL_ASKS` times. A built-in is not
    rehearsed."""
    method = cfg.method
    if method is None or method.entry.source is None:
        return
    k, d = len(cfg.configurations), len(cfg.terms.objectives)
    rng = np.random.default_rng(0)
    costs = [float(c) for c in rng.uniform(0.2, 1.0, k)]
    costs[int(np.argmax(costs))] = 1.0  # (costs over the largest, as profiling makes them)
    means = rng.uniform(0.1, 0.9, (k, d))
    try:
        policy: Any
        if cfg.setting == "online":
            method.entry.check_arm_by_arm(d)
            policy = OnlinePolicy(method, d, 8.0 * sum(costs), costs, min(costs), 8.0)
        else:
            method.entry.check_repeatable()
            policy = PsiPolicy(method, d, costs, 8.0 * sum(costs), cfg.cost_mode == "stochastic", 8.0)
        for _ in range(REHEARSAL_ASKS):
            arm = policy.ask()
            if arm is None or arm == WAIT:
                break
            policy.tell(arm, [float(x) for x in means[arm]], costs[arm])
    except UserMethodError as exc:
        raise CabenchError(f"{cfg.source}: method: {exc} (on made-up outcomes, before any call was made)") from None
    except (CabenchError, ValueError):  # the made-up budget or costs do not suit it: the run's own will decide
        return


def _refuse_foreign(out: Path) -> None:
    """Refuse, before anything is written into it, a folder that holds files but no ``live.json``: not a live
    run's (a dataset folder, results, anything else). A run wrote its ``logs.csv`` and ``dataset.yaml`` over a
    dataset's own, with exit code 0."""
    if not out.is_dir() or (out / "live.json").exists():
        return
    held = sorted(p.name for p in out.iterdir() if not _own(p.name))
    if held:
        raise CabenchError(f"{out}: holds {first_three(held)} and no live.json, so it is not a live run's folder "
                           "(a dataset?); nothing was written; pass --out a new or empty folder")


def _own(name: str) -> bool:
    """Whether a file of that name is one a live run leaves behind before its ``live.json``: the folder's lock, or
    a write cut short (``.NAME.XXXX.tmp``). Any other, hidden or not (``.git``, ``.env``), is someone's."""
    return name == LOCK_NAME or (name.startswith(".") and name.endswith(TEMPORARY))


def _run_locked(cfg: LiveConfig, out: Path, quiet: bool, collect: bool, task: Task, client: ChatClient,
                split: tuple[list[str], list[str]]) -> dict:
    check_identity(cfg, out)  # (run_session closes the client on an error)
    by_id = {inst.id: inst for inst in task.instances}
    prof_ids, eval_ids = split
    journal = Journal(out)
    usd = cfg.terms.cost == "usd"
    logs = LogFile(out, list(journal.done.values()), usd, _key_order)
    budget = None if collect else cfg.budget
    bar = None
    if not quiet:
        from tqdm import tqdm

        bar = tqdm(total=budget, unit="USD" if usd else "tok", desc=f"{cfg.name} spend", leave=False,
                   dynamic_ncols=True)

    def progress(spent: float) -> None:
        if bar is not None:
            bar.update((spent if usd else round(spent)) - bar.n)  # tqdm redraws at most every mininterval

    caller = Caller(cfg, task, client, journal, logs, budget, progress)
    facts: dict[str, Any] = {"stopped_by": None}
    decision = None
    try:
        try:
            if collect:
                _collect(cfg, caller, by_id, sorted(set(prof_ids) | set(eval_ids)) if cfg.profiling else eval_ids)
                facts["stopped_by"] = "complete"
            else:
                profile = _profile(cfg, caller, by_id, prof_ids)
                facts.update(profile["facts"])
                decision = _method(cfg, caller, by_id, eval_ids, profile, facts)
        except (CabenchError, FailureStop) as exc:  # the files say how far the run got, then the one line
            caller.drain()
            said: BaseException = exc  # the one line: the run's own, or said for the run
            if isinstance(exc, UserMethodError):  # (a live config has one method: nothing to remove it from)
                fix = (f"fix the method ({cfg.source}: method) and run the same command again: the calls made are "
                       "kept, and none is paid again")
                said = CabenchError(f"{str(exc).removesuffix('; fix the method or remove it from methods')}; {fix}")
            elif isinstance(exc, FailureStop):
                said = CabenchError(f"{cfg.name}: stopped: {exc}; {next_step(bool(caller.overbilled))}")
            if not caller.made and _accounted(out, journal, cfg.terms.cost):
                raise said from None  # no call made, every charge in spend.json: an earlier run's files stand
            facts["stopped_by"] = "failures" if caller.failure_stop else "error"
            facts["stop_reason"] = str(exc if isinstance(exc, FailureStop) else said)
            _finish(cfg, out, caller, journal, facts, None, task, collect)
            if said is exc:
                raise
            raise said from None
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: spend.json says what was paid (an earlier run's would stay)
            facts["stopped_by"] = "interrupted"
            facts["stop_reason"] = "interrupted; re-run to resume"
            caller.stop()  # the calls in flight end after their current attempt
            with _interrupts_held():  # a further Ctrl-C while they end: their charges still reach spend.json
                caller.drain()
                spend = _finish(cfg, out, caller, journal, facts, None, task, collect)
            raise Interrupted(_interrupted(out, spend, bool(caller.overbilled))) from None
        caller.drain()
        if caller.failure_stop:  # the method did not end: no decision (a resumed run ends it), an earlier removed
            facts["stopped_by"] = "failures"
            facts["stop_reason"] = caller.failure_stop
            decision = None
        result = _finish(cfg, out, caller, journal, facts, decision, task, collect)
    finally:
        caller.drain()
        caller.close()
        journal.close()
        logs.close()
        client.close()
        if bar is not None:
            bar.close()
    _refuse_untrustworthy(cfg, out, journal, result, collect)
    return result


def _interrupted(out: Path, spend: dict[str, Any], overbilled: bool) -> str:
    """What an interrupted run says: what the folder has paid, where that is written, and how to go on."""
    unit = spend["cost_unit"]
    budget = spend.get(f"budget_{unit}")
    paid = amount(spend[f"spent_{unit}"], unit) + (f" of the budget's {amount(budget, unit)}" if budget else "")
    then = next_step(True) if overbilled else "run the same command again to resume: no call is paid twice"
    return (f"interrupted: {spend['calls']} calls answered in this folder ({spend['calls_made_this_run']} made by this "
            f"run), {paid} paid, as {out / 'spend.json'} says; {then}")


def _interrupts_held() -> Any:
    """Hold Ctrl-C and SIGTERM off while a stopping run waits for its calls in flight (each now ends after the
    attempt under way, within ``timeout_s``) and writes ``spend.json``: a further one is noted, not raised, so
    neither step is cut short between a call's charge and its record. Only in the main thread."""
    return signals_set(lambda *_: None, signal.SIGINT, signal.SIGTERM)


def _split(cfg: LiveConfig, ids: list[str], collect: bool) -> tuple[list[str], list[str]]:
    """The profiling and evaluation instances."""
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
    return prof_ids, eval_ids


def _refuse_untrustworthy(cfg: LiveConfig, out: Path, journal: Journal, spend: dict[str, Any],
                          collect: bool) -> None:
    """After the files are written: one line (exit 2) when the run stopped on failures, when the endpoint's
    claims were not believed, or when ``collect`` could not make every call."""
    if spend["stopped_by"] == "failures":
        raise CabenchError(f"{cfg.name}: stopped: {spend['stop_reason']}; {out}/spend.json has the spend; "
                           f"{next_step(bool(spend.get('overbilled_calls')))}")
    suspect = [r for r in journal.records if r.get("suspect")]
    if suspect:
        raise CabenchError(f"{cfg.name}: {len(suspect)} calls had replies or usage that could not be believed (e.g. "
                           f"{suspect[0]['config']} on {suspect[0]['instance']}: {suspect[0]['suspect'][:160]}); "
                           f"each was charged its worst case; {out}/calls.jsonl lists them")
    failed = [r for r in journal.done.values() if not r.get("ok")]
    if collect and failed:
        raise CabenchError(f"{cfg.name}: {len(failed)} of {len(journal.done)} calls failed (e.g. {failed[0]['config']} "
                           f"on {failed[0]['instance']}: {str(failed[0].get('error'))[:160]}); re-run to retry them")


def _key_order(key: str) -> tuple[int, tuple[int, ...]]:
    """Journal keys in the order of the run: profiling (or collect) calls, then the method's."""
    phase, _, rest = key.partition(":")
    return (1 if phase == "e" else 0, tuple(int(x) for x in rest.split(":")))


def _profile(cfg: LiveConfig, caller: Caller, by_id: dict[str, Instance], prof_ids: list[str]) -> dict[str, Any]:
    """Every configuration on the profiling instances: the normalisation of the declared objectives and costs
    (c_i, c_max, lambda in the cost unit, the objectives' bounds)."""
    k = len(cfg.configurations)
    _refuse_a_call_past_the_budget(cfg, caller, [by_id[i] for i in prof_ids])
    try:
        keys = _grid(cfg, caller, by_id, prof_ids, "p")
    except BudgetStop:
        caller.drain()
        unit = cfg.terms.cost
        made = sum(1 for key in caller.journal.done if key.startswith("p:"))
        paid = caller.journal.charged_for("p:")
        calls = [r for key, r in caller.journal.done.items() if key.startswith("p:") and not r.get("lost")]
        if calls and not any(r.get("ok") for r in calls):  # the charges of failed calls ran the budget out
            first = calls[0]
            raise CabenchError(
                f"{cfg.source}: every one of the {len(calls)} profiling calls made failed (e.g. {first['config']} "
                f"on {first['instance']}: {str(first.get('error'))[:160]}), and their charges "
                f"({amount(paid, unit)}: failed attempts as endpoint.charge_failed: {cfg.endpoint.charge_failed} says, "
                "replies without a usage count at their worst case) left too little of the "
                "budget for the next; fix the endpoint (or the key) and re-run into the same folder with a larger "
                "budget") from None
        need = (f"; at that rate profiling needs about {amount(paid * k * len(prof_ids) / made, unit)}, plus the "
                "worst case of its last call (a call starts only while its worst case, the prompt and the generation "
                "limit, fits in what is left)" if made else "")
        raise CabenchError(f"{cfg.source}: the budget does not cover profiling ({k} configurations x "
                           f"{len(prof_ids)} instances): {made} profiling calls cost {amount(paid, unit)}{need}; "
                           "raise the budget and re-run into the same folder (the calls made are kept), or lower "
                           "profiling.instances") from None
    records = {key: caller.take(key) for key in keys}  # _grid returns once every call has finished
    failed = [key for key, r in records.items() if not r["ok"]]
    if failed:
        first = records[failed[0]]
        then = ("re-run to retry them after fixing the endpoint" if not caller.overbilled
                else f"{caller.overbilled}; {next_step(True)}")  # a folder with an overbilled call calls no more
        raise CabenchError(f"{cfg.source}: {len(failed)} profiling calls failed (e.g. {first['config']} on "
                           f"{first['instance']}: {first.get('error')}); {then}") from None
    columns = {col: np.array([[records[f"p:{c}:{j}"][col] for j in range(len(prof_ids))] for c in range(k)],
                             dtype=np.float64) for col in LIVE_COLUMNS}
    norm = fit_normalisation(columns, cfg.source, "profile more instances", cfg.terms)
    return {"norm": norm,  # profiling's charges, failed and lost attempts included
            "facts": {**_profiling_spend(cfg, caller.journal),
                      "profiling_instances": len(prof_ids), "c_max": norm.c_max, "lambda": norm.lam,
                      "tau5": norm.tau5, "tau95": norm.tau95,
                      "profile_cost": {c.name: float(v) for c, v in zip(cfg.configurations, norm.profile_cost)}}}


def _refuse_a_call_past_the_budget(cfg: LiveConfig, caller: Caller, instances: list[Instance]) -> None:
    """Before any profiling call: refuse a budget that one profiling call's worst case alone exceeds (its prompt's
    bound and its max_tokens in the cost unit), naming the configuration; no number of instances makes it fit."""
    if caller.budget is None:
        return
    unit = cfg.terms.cost
    for config in cfg.configurations:
        worst = max(caller.worst_case(config, instance)[2] for instance in instances)
        if worst > caller.budget:
            said = [amount(worst, unit), amount(caller.budget, unit)]
            for digits in (6, 9, 12, 17):  # rounded alike (52.6 tokens against 53 said "53 > 53"): more digits
                if said[0] != said[1]:
                    break
                said = [f"${v:.{digits}g}" if unit == "usd" else f"{v:,.{digits}g} {LABELS[unit]}"
                        for v in (worst, caller.budget)]
            raise CabenchError(
                f"{cfg.source}: a call of {config.name} may cost up to {said[0]} (its prompt's bound and "
                f"its max_tokens at its {'price' if unit == 'usd' else 'tokens'}), more than the whole budget of "
                f"{said[1]}: no call of it can start; raise the budget well above that, or lower its max_tokens")


def _profiling_spend(cfg: LiveConfig, journal: Journal) -> dict[str, float]:
    """What profiling's calls were charged so far (failed and lost attempts included), in the cost unit and in
    tokens: ``spend.json`` says it whether profiling finished or not."""
    return {f"profiling_{cfg.terms.cost}": journal.charged_for("p:"),
            "profiling_tokens": journal.charged_for("p:", tokens=True)}


ASK_WINDOW = MAX_CONCURRENCY
"""Asks outstanding before the oldest is told: ask ``e:s`` only after ``e:(s - ASK_WINDOW)`` was told. A
constant (the largest ``concurrency``), so the sequence of asks and tells depends neither on timing nor on
the concurrency a run is resumed with."""


def call_limit(method_budget: float, norm: Normalisation) -> int:
    """The most calls the method may make (asks, failed ones included): twice what its budget ``B`` buys at the
    cheapest profiling call's cost ``lambda c_max`` — the floor of the online methods' cost bound is half of it
    (``lambda / 2``; SPEC §5). Calls whose reported cost is 0 (an endpoint counting no
    completion tokens under ``cost: completion``, or a price of 0) spend none of the budget, and were made
    without end; the calls the budget pays for at their profiling costs are far fewer."""
    return max(1, math.ceil(2.0 * method_budget / (norm.lam * norm.c_max)))


def _method(cfg: LiveConfig, caller: Caller, by_id: dict[str, Instance], eval_ids: list[str], profile: dict,
            facts: dict[str, Any]) -> dict[str, Any]:
    """The method on the evaluation instances with what the budget leaves after profiling."""
    k = len(cfg.configurations)
    norm: Normalisation = profile["norm"]
    unit = cfg.terms.cost
    profiling = facts[f"profiling_{unit}"]
    # rho from what profiling's calls cost, not the worst cases of calls a kill cut off (remade since): so a resumed
    # run asks what the uninterrupted one asks, and the lost charges only make the budget stop it sooner
    rho = _rho(cfg, norm, caller.journal.charged_for("p:", lost=False))
    method_budget = norm.budget(rho)  # B = rho K cbar (SPEC §3), in the cost unit
    if caller.budget is None:  # stated as rho: profiling plus B
        caller.budget = profiling + method_budget
    facts[f"budget_{unit}"] = caller.budget
    facts[f"method_{unit}"] = method_budget
    facts["rho"] = rho
    if cfg.setting == "online" and rho < 1:  # (identification's policy refuses its own too small budget below)
        raise CabenchError(f"{cfg.source}: the budget leaves rho {rho:.3g} for the method after profiling "
                           f"({amount(method_budget, unit)}): less than one call of every configuration at their mean "
                           "costs (rho 1), so some would never be evaluated; raise the budget and re-run into the "
                           "same folder (the calls made are kept)")
    if cfg.setting == "online":
        policy: Any = OnlinePolicy(cfg.method, norm.n_objectives, float(norm.online_units(method_budget)),
                                   [float(c) for c in norm.online_units(norm.profile_cost)], norm.lam, rho)
        charge = norm.online_cost
    else:
        costs = [float(x) for x in norm.psi_profile_cost()]
        budget = norm.psi_budget(rho)
        try:
            policy = PsiPolicy(cfg.method, norm.n_objectives, costs, budget, cfg.cost_mode == "stochastic", rho)
        except UserMethodError:
            raise
        except CabenchError as exc:
            raise CabenchError(f"{cfg.source}: {exc}; raise the budget") from None
        charge = norm.psi_cost
    order = _stream(cfg, eval_ids)
    asked = [0] * k
    queue: list[tuple[str, int]] = []  # asks not yet told, in order
    stopped = False
    limit = call_limit(method_budget, norm)
    while True:
        arm = WAIT if stopped or len(queue) >= ASK_WINDOW else policy.ask()
        if arm is None and not queue:
            facts["stopped_by"] = facts["stopped_by"] or "method"
            break
        if arm is not None and arm != WAIT and sum(asked) >= limit:  # calls that cost (almost) nothing
            stopped = True
            facts["stopped_by"], facts["call_limit"] = "call limit", limit
            continue
        if arm is not None and arm != WAIT:
            index, occurrence = order(arm, asked[arm])
            key = f"e:{sum(asked)}"
            while len(caller.in_flight) >= cfg.endpoint.concurrency:
                caller.wait_one()
            try:
                caller.submit(key, cfg.configurations[arm], by_id[eval_ids[index]], occurrence)
            except (BudgetStop, FailureStop) as stop:
                stopped = True
                facts["stopped_by"] = (f"{'dollar' if unit == 'usd' else 'token'} budget"
                                       if isinstance(stop, BudgetStop) else "failures")
                continue
            asked[arm] += 1
            queue.append((key, arm))
            continue
        if not queue:
            break
        key, arm = queue.pop(0)  # the oldest ask is told next, whatever finished first: order is timing-free
        while key not in caller.results:
            caller.wait_one()
        record = caller.take(key)
        if record["ok"]:
            policy.tell(arm, [float(r) for r in norm.rewards(record)], float(charge(float(record["cost"]))))
        else:  # a failed call is not an outcome: ask the same configuration again, on its next instance
            policy.retract(arm)
    caller.drain()
    names = [o.name for o in norm.objectives]
    # the configurations the method never evaluated (the budget ran out within its first round): it chose among the
    # others, as runs.csv's ``unpulled`` counts them in a replay
    unpulled = [c.name for c, n in zip(cfg.configurations, policy.n) if int(n) == 0]
    if cfg.setting == "online":
        return {"setting": "online", "method": cfg.method.name, "objectives": names, "cost_unit": unit,
                **online_decision(policy.n, [c.name for c in cfg.configurations]), "unpulled": unpulled,
                "estimates": {c.name: _estimates(policy.estimates(i), names) for i, c in
                              enumerate(cfg.configurations)}}
    if policy.returned is None:  # stopped by the budget: finish the eliminations on what was seen
        policy.stop()
    return {"setting": "psi", "method": cfg.method.name, "objectives": names, "cost_unit": unit,
            "pareto_set": [cfg.configurations[i].name for i in policy.returned],
            "removed": [cfg.configurations[i].name for i in policy.removed],
            "samples": {c.name: int(policy.n[i]) for i, c in enumerate(cfg.configurations)}, "unpulled": unpulled}


def online_decision(pulls: Sequence[int], names: Sequence[str]) -> dict[str, Any]:
    """``configuration``: the most evaluated (the first of several); ``tied``, where several were evaluated most,
    equally often: all of them, as the run does not choose between them."""
    most = max(pulls)
    tied = [name for name, n in zip(names, pulls) if n == most]
    return {"configuration": tied[0], **({"tied": tied} if len(tied) > 1 else {})}


def _rho(cfg: LiveConfig, norm: Normalisation, profiling: float) -> float:
    """``rho`` as stated, or the largest whose ``B = rho K cbar`` fits what the stated budget leaves after
    profiling (:meth:`Normalisation.rho`): a stated budget and its rho give the same ``B``."""
    if cfg.rho is not None:
        return float(cfg.rho)
    budget = float(cfg.budget or 0.0)
    if budget - profiling <= 0:
        raise CabenchError(f"{cfg.source}: profiling spent {amount(profiling, cfg.terms.cost)} of the budget of "
                           f"{amount(budget, cfg.terms.cost)}; nothing is left for the method")
    return norm.rho(budget - profiling)


def _estimates(raw: dict[str, float], names: list[str]) -> dict[str, float]:
    """A configuration's estimates keyed by objective name: pulls, each objective's mean reward, and the mean
    online cost ``c~`` charged (SPEC §2.3)."""
    return {"pulls": raw["pulls"], **{name: raw[f"reward_{j}"] for j, name in enumerate(names)},
            "online_cost": raw["cost"]}


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


def _called_where(out: Path, endpoint: str, made: int) -> tuple[list[str], str]:
    """The endpoints the folder's calls were made against, in the order first called (the folder's earlier
    ``dataset.yaml`` says those before this run; ``endpoint`` joins them where this run made a call), and the date of
    the last run that made one: a re-run that calls nothing (a finished run, another ``--base-url``) changes
    neither."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        before = load_yaml((out / "dataset.yaml").read_text(encoding="utf-8"))["provenance"]
        held = before.get("endpoints") or [before["endpoint"]]
        endpoints, date = [str(e) for e in held], str(before["date"])
    except (OSError, ValueError, yaml.YAMLError, KeyError, TypeError, AttributeError):  # the first run, or damaged
        endpoints, date = [], now
    if made or not endpoints:
        date = now
        endpoints += [] if endpoint in endpoints else [endpoint]
    return endpoints, date


def _finish(cfg: LiveConfig, out: Path, caller: Caller, journal: Journal, facts: dict[str, Any],
            decision: dict[str, Any] | None, task: Task, collect: bool = False) -> dict[str, Any]:
    records = list(journal.done.values())
    attempts = [a for r in journal.records for a in r.get("attempts", [])]
    unit = cfg.terms.cost
    # profiling's charges so far, where a run stopped before profiling said them (collecting makes no profiling call)
    paid = {} if collect else _profiling_spend(cfg, journal)
    spends = (f"budget_{unit}", f"spent_{unit}", f"profiling_{unit}", "spent_tokens", "profiling_tokens")
    spend = {
        "cost_unit": unit,
        f"budget_{unit}": facts.get(f"budget_{unit}", None if collect else cfg.budget),
        f"spent_{unit}": journal.total_charged(),
        f"profiling_{unit}": facts.get(f"profiling_{unit}", paid.get(f"profiling_{unit}", 0.0)),
        "spent_tokens": journal.total_charged(tokens=True),
        "profiling_tokens": facts.get("profiling_tokens", paid.get("profiling_tokens", 0.0)),
        "calls": sum(1 for r in records if r.get("ok")),
        "failed_calls": sum(1 for r in records if not r.get("ok")),
        "suspect_calls": sum(1 for r in journal.records if r.get("suspect")),
        "lost_calls": sum(1 for r in journal.records if r.get("lost")),
        "overbilled_calls": sum(1 for r in journal.records if r.get("overbilled")),
        # what the endpoint reported for those calls' overbilled attempts, which a provider bills
        f"overbilled_reported_{unit}": float(sum(r.get("overbilled_cost", 0.0) for r in journal.records
                                                 if r.get("overbilled"))),
        "attempts": len(attempts),
        "failed_attempts": sum(1 for a in attempts if a.get("status") != "ok"),
        "calls_made_this_run": caller.made,
        "stopped_by": facts.get("stopped_by"),
        **{k: v for k, v in facts.items() if k != "stopped_by" and k not in spends},
    }
    recorded = public_url(cfg.endpoint.base_url)
    # the key redacted, from the path too (a gateway may take it there), also where an older cabench recorded it
    hidden = caller.client.redact if caller.client else str
    endpoints, date = _called_where(out, hidden(recorded), caller.made)
    endpoints = list(dict.fromkeys(map(hidden, endpoints)))
    surrogate = task.replay is not None and task.replay.surrogate  # answers replayed from surrogate logs
    meta = {
        "name": cfg.name, "description": f"{'Collected' if collect else 'Live'} evaluation of {len(cfg.configurations)}"
        f" configurations on task {task.name}" + (
            f"; the endpoint replays the SURROGATE logs of {cfg.task['dataset']}: these are NOT real model outputs"
            if surrogate else ""),
        "provenance": {"format": "cabench live", "endpoint": endpoints[0],
                       **({"endpoints": endpoints} if len(endpoints) > 1 else {}), "task": dict(cfg.task),
                       "configurations": [asdict(c) for c in cfg.configurations], "config": cfg.source,
                       "cost": cfg.terms.cost, "latency": cfg.latency, "cabench_version": cabench.__version__,
                       "date": date},
        "surrogate": surrogate, "licence": "unspecified",
        "missing": "drop-instances",
        **({} if cfg.terms.is_paper else cfg.terms.describe()),  # `run` replays the folder on the same terms
    }
    rect = _rectangle(records, len(cfg.configurations))
    if rect >= 2:
        meta["split"] = {"profiling_size": max(1, rect // 2), "seed": 0}
    with replaced_together() as files:  # a full disk while writing any leaves the three as they were
        files.write(out / "spend.json", strict_dumps(spend, indent=2) + "\n")
        if decision is not None:  # a decision read on its own says whether its answers were surrogate
            files.write(out / "decision.json", strict_dumps({**decision, "surrogate": surrogate}, indent=2) + "\n")
        else:  # an earlier run's decision would stand beside this run's spend and journal
            files.remove(out / "decision.json")
        files.write(out / "dataset.yaml", dump_yaml(meta))
    return spend


def _accounted(out: Path, journal: Journal, unit: str) -> bool:
    """Whether the folder's ``spend.json`` (an earlier run's) already says every charge its journal holds: then a
    run refused before making any call (the folder holding another run, a method that raises) leaves it, and that
    run's ``decision.json``, as they were."""
    try:
        spend = json.loads((out / "spend.json").read_text(encoding="utf-8"))
        return bool(spend[f"spent_{unit}"] == journal.total_charged()
                    and spend["spent_tokens"] == journal.total_charged(tokens=True))
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or damaged: written anew
        return False


def _rectangle(records: list[dict[str, Any]], k: int) -> int:
    """Instances every configuration has a successful first evaluation of."""
    by_instance: dict[str, set[str]] = {}
    for r in records:
        if r.get("ok") and r.get("occurrence", 0) == 0:
            by_instance.setdefault(r["instance"], set()).add(r["config"])
    return sum(1 for s in by_instance.values() if len(s) == k)
